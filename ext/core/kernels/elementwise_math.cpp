// Inner loops of sqrt, the transcendental ufuncs and the array API's other
// float functions (arctan2, copysign, hypot, logaddexp, nextafter, signbit). These call the C
// library's float and double functions (expf for float32, exp for float64,
// and expf for float16/bfloat16, computed in float32), so results can differ
// from NumPy's own SIMD implementations by a few units in the last place
// (tests/test_elementwise_kernels.py measures by how much); sqrt is correctly
// rounded everywhere and so bit-exact.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#include "kernels/elementwise_impl.h"

namespace hrx::kernels::ew {

namespace {

#define HRX_MATH_OP(Name, fn)                                  \
    template <class T> struct Name {                           \
        using A = T;                                           \
        using R = T;                                           \
        static constexpr bool kScalar = true;                  \
        static T f(T a) noexcept { return std::fn(a); }        \
    };
HRX_MATH_OP(ExpOp, exp)
HRX_MATH_OP(LogOp, log)
HRX_MATH_OP(Log1pOp, log1p)
HRX_MATH_OP(Expm1Op, expm1)
HRX_MATH_OP(SinOp, sin)
HRX_MATH_OP(CosOp, cos)
HRX_MATH_OP(TanOp, tan)
HRX_MATH_OP(TanhOp, tanh)
HRX_MATH_OP(SinhOp, sinh)
HRX_MATH_OP(CoshOp, cosh)
HRX_MATH_OP(AsinOp, asin)
HRX_MATH_OP(AcosOp, acos)
HRX_MATH_OP(AtanOp, atan)
HRX_MATH_OP(AsinhOp, asinh)
HRX_MATH_OP(AcoshOp, acosh)
HRX_MATH_OP(AtanhOp, atanh)
HRX_MATH_OP(Log2Op, log2)
HRX_MATH_OP(Log10Op, log10)
#undef HRX_MATH_OP

// nextafter is exact; glibc's is plain bit stepping on every host.
#define HRX_MATH_OP2(Name, fn)                                  \
    template <class T> struct Name : Sig2<T, T, T> {            \
        static constexpr bool kScalar = true;                   \
        static T f(T a, T b) noexcept { return std::fn(a, b); } \
    };
HRX_MATH_OP2(Atan2Op, atan2)
HRX_MATH_OP2(NextafterOp, nextafter)
#undef HRX_MATH_OP2

// NumPy's npy_logaddexp: equal arguments (infinities of one sign included)
// give x + ln 2, otherwise the larger plus log1p(exp(-|x - y|)); a NaN
// difference is returned as it is.
template <class T> struct LogaddexpOp : Sig2<T, T, T> {
    static constexpr bool kScalar = true;
    static T f(T x, T y) noexcept {
        if (x == y) return x + T(0.693147180559945309417232121458176568);
        const T d = x - y;
        if (d > 0) return x + std::log1p(std::exp(-d));
        if (d <= 0) return y + std::log1p(std::exp(d));
        return d;
    }
};

// copysign and signbit only move the sign bit: exact, so vectorised.
template <class T> struct CopysignOp : Sig2<T, T, T> {
    static T f(T a, T b) noexcept { return std::copysign(a, b); }
};
template <class T> struct SignbitOp : Sig1<T, bool> {
    static bool f(T a) noexcept { return std::signbit(a); }
};

// hypot without the C library: glibc's double hypot has an FMA variant on
// x86-64 and so differs from arm64's by an ULP (Note [Elementwise
// numerics]: same bits on every host). float: the squares are exact in
// double, so one double sum and sqrt rounded to float (the way glibc's hypotf
// does it). double: sqrt of the scaled sum of squares, then one Newton step
// whose residual h*h - x*x - y*y is computed exactly with Dekker's products
// (Veltkamp splitting, no FMA). Measured against Python's math.hypot over
// 600k inputs of every magnitude: the same bits, but for an ULP on some
// subnormal results (the rescaling rounds them twice).
inline void two_prod(double a, double b, double& p, double& e) noexcept {
    constexpr double kSplit = 134217729.0;  // 2^27 + 1
    p = a * b;
    const double ca = kSplit * a, cb = kSplit * b;
    const double ah = ca - (ca - a), al = a - ah;
    const double bh = cb - (cb - b), bl = b - bh;
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}

inline double hypot_exact(double x, double y) noexcept {
    x = std::fabs(x);
    y = std::fabs(y);
    if (std::isinf(x) || std::isinf(y)) return std::numeric_limits<double>::infinity();
    if (x != x || y != y) return x + y;
    if (x < y) std::swap(x, y);
    if (y == 0 || y < x * 0x1p-60) return x;
    double scale = 1.0;
    if (x > 0x1p+500) {
        scale = 0x1p+600;
        x *= 0x1p-600;
        y *= 0x1p-600;
    } else if (x < 0x1p-500) {
        scale = 0x1p-600;
        x *= 0x1p+600;
        y *= 0x1p+600;
    }
    double h = std::sqrt(x * x + y * y);
    double hh, hl, xx, xl, yy, yl;
    two_prod(h, h, hh, hl);
    two_prod(x, x, xx, xl);
    two_prod(y, y, yy, yl);
    const double resid = ((hh - xx) - yy) + ((hl - xl) - yl);
    h -= resid / (2.0 * h);
    return h * scale;
}

template <class T> struct HypotOp : Sig2<T, T, T> {
    static constexpr bool kScalar = true;
    static T f(T a, T b) noexcept {
        if constexpr (std::is_same_v<T, float>) {
            if (std::isinf(a) || std::isinf(b)) return std::numeric_limits<float>::infinity();
            const double da = a, db = b;
            return static_cast<float>(std::sqrt(da * da + db * db));
        } else {
            return hypot_exact(a, b);
        }
    }
};

// float16/bfloat16 loops compute in float32 (Note [Compute types]), but the
// step must be one of the 16-bit format: a (exactly a 16-bit value) goes back
// to its bits, steps there, and widens again, which the driver's rounding
// then leaves unchanged.
template <bool Bf16> struct NextafterHalfOp : Sig2<float, float, float> {
    static constexpr bool kScalar = true;
    static float f(float a, float b) noexcept {
        if (a != a || b != b) return a + b;
        if (a == b) return b;
        std::uint16_t bits;
        if (a == 0) {
            bits = b > 0 ? 0x0001 : 0x8001;
        } else {
            bits = Bf16 ? float_to_bhalf(a) : float_to_half(a);
            const bool away = (b > a) == (a > 0);
            bits = static_cast<std::uint16_t>(away ? bits + 1 : bits - 1);
        }
        return Bf16 ? bhalf_to_float(bits) : half_to_float(bits);
    }
};

// sqrt is one correctly rounded instruction, but std::sqrt must also set
// errno for negative inputs, and that call keeps compilers from vectorising
// it (GCC ignores no-math-errno per function). The contiguous loops use the
// vector instructions directly; every path gives the IEEE result (NaN for
// x < 0), so they agree bit for bit.
template <class T>
void sqrt_scalar(const T* a, T* o, std::int64_t n) noexcept {
    for (std::int64_t i = 0; i < n; ++i) o[i] = std::sqrt(a[i]);
}

#if defined(__x86_64__) || defined(_M_X64)
void sqrt_contig(const float* a, float* o, std::int64_t n) noexcept {
    std::int64_t i = 0;
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(o + i, _mm_sqrt_ps(_mm_loadu_ps(a + i)));
    sqrt_scalar(a + i, o + i, n - i);
}
void sqrt_contig(const double* a, double* o, std::int64_t n) noexcept {
    std::int64_t i = 0;
    for (; i + 2 <= n; i += 2) _mm_storeu_pd(o + i, _mm_sqrt_pd(_mm_loadu_pd(a + i)));
    sqrt_scalar(a + i, o + i, n - i);
}
#elif defined(__aarch64__)
void sqrt_contig(const float* a, float* o, std::int64_t n) noexcept {
    std::int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(o + i, vsqrtq_f32(vld1q_f32(a + i)));
    sqrt_scalar(a + i, o + i, n - i);
}
void sqrt_contig(const double* a, double* o, std::int64_t n) noexcept {
    std::int64_t i = 0;
    for (; i + 2 <= n; i += 2) vst1q_f64(o + i, vsqrtq_f64(vld1q_f64(a + i)));
    sqrt_scalar(a + i, o + i, n - i);
}
#else
template <class T>
void sqrt_contig(const T* a, T* o, std::int64_t n) noexcept {
    sqrt_scalar(a, o, n);
}
#endif

#ifdef HRX_EW_AVX2
__attribute__((target("avx2"))) void sqrt_contig_avx2(const float* a, float* o, std::int64_t n) noexcept {
    std::int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(o + i, _mm256_sqrt_ps(_mm256_loadu_ps(a + i)));
    sqrt_scalar(a + i, o + i, n - i);
}
__attribute__((target("avx2"))) void sqrt_contig_avx2(const double* a, double* o, std::int64_t n) noexcept {
    std::int64_t i = 0;
    for (; i + 4 <= n; i += 4) _mm256_storeu_pd(o + i, _mm256_sqrt_pd(_mm256_loadu_pd(a + i)));
    sqrt_scalar(a + i, o + i, n - i);
}
#endif

template <class T>
void sqrt_loop(char* const* args, const std::int64_t* s, std::int64_t n) {
    char* pa = args[0];
    char* po = args[1];
    if (s[0] == sizeof(T) && s[1] == sizeof(T) && aligned_for<T>(pa) && aligned_for<T>(po)) {
        const T* a = reinterpret_cast<const T*>(pa);
        T* o = reinterpret_cast<T*>(po);
#ifdef HRX_EW_AVX2
        if (avx2_loops()) return sqrt_contig_avx2(a, o, n);
#endif
        return sqrt_contig(a, o, n);
    }
    for (std::int64_t i = 0; i < n; ++i, pa += s[0], po += s[1]) store<T>(po, std::sqrt(load<T>(pa)));
}

}  // namespace

InnerLoop find_math_loop(Ufunc op, const UfuncLoop& loop) noexcept {
    const DType t = compute_dtype(loop.in[0]);
    switch (op) {
        case Ufunc::Exp: return pick1<ExpOp, kFloats>(t);
        case Ufunc::Log: return pick1<LogOp, kFloats>(t);
        case Ufunc::Log1p: return pick1<Log1pOp, kFloats>(t);
        case Ufunc::Expm1: return pick1<Expm1Op, kFloats>(t);
        case Ufunc::Sqrt:
            return t == DType::Float32 ? &sqrt_loop<float> : (t == DType::Float64 ? &sqrt_loop<double> : nullptr);
        case Ufunc::Sin: return pick1<SinOp, kFloats>(t);
        case Ufunc::Cos: return pick1<CosOp, kFloats>(t);
        case Ufunc::Tan: return pick1<TanOp, kFloats>(t);
        case Ufunc::Tanh: return pick1<TanhOp, kFloats>(t);
        case Ufunc::Sinh: return pick1<SinhOp, kFloats>(t);
        case Ufunc::Cosh: return pick1<CoshOp, kFloats>(t);
        case Ufunc::Arcsin: return pick1<AsinOp, kFloats>(t);
        case Ufunc::Arccos: return pick1<AcosOp, kFloats>(t);
        case Ufunc::Arctan: return pick1<AtanOp, kFloats>(t);
        case Ufunc::Arcsinh: return pick1<AsinhOp, kFloats>(t);
        case Ufunc::Arccosh: return pick1<AcoshOp, kFloats>(t);
        case Ufunc::Arctanh: return pick1<AtanhOp, kFloats>(t);
        case Ufunc::Log2: return pick1<Log2Op, kFloats>(t);
        case Ufunc::Log10: return pick1<Log10Op, kFloats>(t);
        case Ufunc::Arctan2: return pick2<Atan2Op, kFloats>(t);
        case Ufunc::Logaddexp: return pick2<LogaddexpOp, kFloats>(t);
        case Ufunc::Copysign: return pick2<CopysignOp, kFloats>(t);
        case Ufunc::Signbit: return pick1<SignbitOp, kFloats>(t);
        case Ufunc::Hypot: return pick2<HypotOp, kFloats>(t);
        case Ufunc::Nextafter:
            if (loop.in[0] == DType::Float16) return &binary_loop<NextafterHalfOp<false>>;
            if (loop.in[0] == DType::BFloat16) return &binary_loop<NextafterHalfOp<true>>;
            return pick2<NextafterOp, kFloats>(t);
        default: return nullptr;
    }
}

}  // namespace hrx::kernels::ew
