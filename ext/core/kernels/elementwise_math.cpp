// Inner loops of sqrt, the transcendental ufuncs and the array API's other
// float functions (arctan2, copysign, hypot, logaddexp, nextafter, signbit),
// and NumPy's cbrt, exp2, logaddexp2 and heaviside.
// The transcendentals are hrx::fmath's (kernels/fmath.h), the implementation
// Loom kernels use too: float32 (and float16/bfloat16, computed in float32)
// within 1 ulp of the correctly rounded result and the same on every host,
// float64 fmath64.h's kernels where they exist (the rest the C library's,
// Note [Elementwise numerics]). Contiguous float32 and float64 loops call
// fmath's vectorised array forms (arctan2 too; power's float32 loop in
// elementwise_arith.cpp likewise). sqrt is correctly rounded
// everywhere and so bit-exact.
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
#include "kernels/fmath.h"

namespace hrx::kernels::ew {

namespace {

#define HRX_MATH_OP(Name, fn)                                  \
    template <class T> struct Name {                           \
        using A = T;                                           \
        using R = T;                                           \
        static constexpr bool kScalar = true;                  \
        static T f(T a) noexcept { return fmath::fn(a); }      \
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
HRX_MATH_OP(CbrtOp, cbrt)
HRX_MATH_OP(Exp2Op, exp2)
#undef HRX_MATH_OP

// A contiguous float32 loop goes to fmath's array form (vectorised, the
// same bits as the per-element function the other layouts use).
template <template <class> class Op, void (*Array)(const float*, float*, std::size_t) noexcept>
void f32_array_loop(char* const* args, const std::int64_t* s, std::int64_t n) {
    if (s[0] == sizeof(float) && s[1] == sizeof(float) && aligned_for<float>(args[0]) && aligned_for<float>(args[1]))
        return Array(reinterpret_cast<const float*>(args[0]), reinterpret_cast<float*>(args[1]), static_cast<std::size_t>(n));
    unary_loop<Op<float>>(args, s, n);
}
// float64: the functions with fmath64.h's vector kernels go to their array
// forms the same way (F64Array names them).
// `has` is spelled out: comparing a function's address with nullptr is not a
// constant expression for every compiler setting (the sanitizer builds).
template <template <class> class Op> struct F64Array {
    static constexpr bool has = false;
    static constexpr void (*fn)(const double*, double*, std::size_t) noexcept = nullptr;
};
#define HRX_MATH_F64(Op, fn_)                                                       \
    template <> struct F64Array<Op> {                                               \
        static constexpr bool has = true;                                           \
        static constexpr void (*fn)(const double*, double*, std::size_t) noexcept = fn_; \
    };
HRX_MATH_F64(ExpOp, fmath::exp_f64)
HRX_MATH_F64(LogOp, fmath::log_f64)
HRX_MATH_F64(Log1pOp, fmath::log1p_f64)
HRX_MATH_F64(Expm1Op, fmath::expm1_f64)
HRX_MATH_F64(SinOp, fmath::sin_f64)
HRX_MATH_F64(CosOp, fmath::cos_f64)
HRX_MATH_F64(TanOp, fmath::tan_f64)
HRX_MATH_F64(TanhOp, fmath::tanh_f64)
HRX_MATH_F64(AtanOp, fmath::atan_f64)
HRX_MATH_F64(Log2Op, fmath::log2_f64)
HRX_MATH_F64(Log10Op, fmath::log10_f64)
HRX_MATH_F64(Exp2Op, fmath::exp2_f64)
HRX_MATH_F64(CoshOp, fmath::cosh_f64)
HRX_MATH_F64(SinhOp, fmath::sinh_f64)
HRX_MATH_F64(AcosOp, fmath::acos_f64)
HRX_MATH_F64(AsinOp, fmath::asin_f64)
#undef HRX_MATH_F64
template <template <class> class Op>
void f64_array_loop(char* const* args, const std::int64_t* s, std::int64_t n) {
    if (s[0] == sizeof(double) && s[1] == sizeof(double) && aligned_for<double>(args[0]) &&
        aligned_for<double>(args[1]))
        return F64Array<Op>::fn(reinterpret_cast<const double*>(args[0]), reinterpret_cast<double*>(args[1]),
                                static_cast<std::size_t>(n));
    unary_loop<Op<double>>(args, s, n);
}
template <template <class> class Op, void (*Array)(const float*, float*, std::size_t) noexcept>
InnerLoop fmath1(DType t) noexcept {
    if constexpr (F64Array<Op>::has)
        if (t == DType::Float64) return &f64_array_loop<Op>;
    return t == DType::Float32 ? &f32_array_loop<Op, Array> : pick1<Op, kFloats>(t);
}

// nextafter is exact; glibc's is plain bit stepping on every host.
#define HRX_MATH_OP2(Name, fn)                                  \
    template <class T> struct Name : Sig2<T, T, T> {            \
        static constexpr bool kScalar = true;                   \
        static T f(T a, T b) noexcept { return fn(a, b); }      \
    };
HRX_MATH_OP2(Atan2Op, fmath::atan2)
HRX_MATH_OP2(NextafterOp, std::nextafter)
#undef HRX_MATH_OP2

// NumPy's npy_logaddexp: equal arguments (infinities of one sign included)
// give x + ln 2, otherwise the larger plus log1p(exp(-|x - y|)); a NaN
// difference is returned as it is.
template <class T> struct LogaddexpOp : Sig2<T, T, T> {
    static constexpr bool kScalar = true;
    static T f(T x, T y) noexcept {
        if (x == y) return x + T(0.693147180559945309417232121458176568);
        const T d = x - y;
        if (d > 0) return x + fmath::log1p(fmath::exp(-d));
        if (d <= 0) return y + fmath::log1p(fmath::exp(d));
        return d;
    }
};

// NumPy's npy_logaddexp2: log2(2^x + 2^y) by the same steps as logaddexp,
// with exp2 and log2(1 + v) = log1p(v) / ln 2.
template <class T> struct Logaddexp2Op : Sig2<T, T, T> {
    static constexpr bool kScalar = true;
    static T f(T x, T y) noexcept {
        constexpr T kLog2e = T(1.442695040888963407359924681001892137);
        if (x == y) return x + T(1);
        const T d = x - y;
        if (d > 0) return x + kLog2e * fmath::log1p(fmath::exp2(-d));
        if (d <= 0) return y + kLog2e * fmath::log1p(fmath::exp2(d));
        return d;
    }
};

// NumPy's heaviside: 0 below zero, 1 above, h0 at (either) zero, and the
// default NaN for a NaN x (h0 is returned as it is, NaN included).
template <class T> struct HeavisideOp : Sig2<T, T, T> {
    static T f(T x, T h0) noexcept {
        if (x != x) return std::numeric_limits<T>::quiet_NaN();
        if (x == 0) return h0;
        return x < 0 ? T(0) : T(1);
    }
};

// copysign and signbit only move the sign bit: exact, so vectorised.
template <class T> struct CopysignOp : Sig2<T, T, T> {
    static T f(T a, T b) noexcept { return std::copysign(a, b); }
};
template <class T> struct SignbitOp : Sig1<T, bool> {
    static bool f(T a) noexcept { return std::signbit(a); }
};

// hypot is fmath's: float from the exact double sum of squares, double
// without the C library (glibc's double hypot differs between x86-64 and
// arm64 by an ulp).
template <class T> struct HypotOp : Sig2<T, T, T> {
    static constexpr bool kScalar = true;
    static T f(T a, T b) noexcept { return fmath::hypot(a, b); }
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
        case Ufunc::Exp: return fmath1<ExpOp, fmath::exp_f32>(t);
        case Ufunc::Log: return fmath1<LogOp, fmath::log_f32>(t);
        case Ufunc::Log1p: return fmath1<Log1pOp, fmath::log1p_f32>(t);
        case Ufunc::Expm1: return fmath1<Expm1Op, fmath::expm1_f32>(t);
        case Ufunc::Sqrt:
            return t == DType::Float32 ? &sqrt_loop<float> : (t == DType::Float64 ? &sqrt_loop<double> : nullptr);
        case Ufunc::Sin: return fmath1<SinOp, fmath::sin_f32>(t);
        case Ufunc::Cos: return fmath1<CosOp, fmath::cos_f32>(t);
        case Ufunc::Tan: return fmath1<TanOp, fmath::tan_f32>(t);
        case Ufunc::Tanh: return fmath1<TanhOp, fmath::tanh_f32>(t);
        case Ufunc::Sinh: return fmath1<SinhOp, fmath::sinh_f32>(t);
        case Ufunc::Cosh: return fmath1<CoshOp, fmath::cosh_f32>(t);
        case Ufunc::Arcsin: return fmath1<AsinOp, fmath::asin_f32>(t);
        case Ufunc::Arccos: return fmath1<AcosOp, fmath::acos_f32>(t);
        case Ufunc::Arctan: return fmath1<AtanOp, fmath::atan_f32>(t);
        case Ufunc::Arcsinh: return fmath1<AsinhOp, fmath::asinh_f32>(t);
        case Ufunc::Arccosh: return fmath1<AcoshOp, fmath::acosh_f32>(t);
        case Ufunc::Arctanh: return fmath1<AtanhOp, fmath::atanh_f32>(t);
        case Ufunc::Log2: return fmath1<Log2Op, fmath::log2_f32>(t);
        case Ufunc::Log10: return fmath1<Log10Op, fmath::log10_f32>(t);
        case Ufunc::Cbrt: return fmath1<CbrtOp, fmath::cbrt_f32>(t);
        case Ufunc::Exp2: return fmath1<Exp2Op, fmath::exp2_f32>(t);
        case Ufunc::Logaddexp2: return pick2<Logaddexp2Op, kFloats>(t);
        case Ufunc::Heaviside: return pick2<HeavisideOp, kFloats>(t);
        case Ufunc::Arctan2:
            if (t == DType::Float32) return &array2_loop<Atan2Op<float>, float, fmath::atan2_f32>;
            if (t == DType::Float64) return &array2_loop<Atan2Op<double>, double, fmath::atan2_f64>;
            return pick2<Atan2Op, kFloats>(t);
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
