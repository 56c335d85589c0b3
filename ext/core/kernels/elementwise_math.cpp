// Inner loops of sqrt and the transcendental ufuncs. These call the C
// library's float and double functions (expf for float32, exp for float64,
// and expf for float16/bfloat16, computed in float32), so results can differ
// from NumPy's own SIMD implementations by a few units in the last place
// (tests/test_elementwise_kernels.py measures by how much); sqrt is correctly
// rounded everywhere and so bit-exact.
#include <cmath>
#include <cstdint>
#include <type_traits>

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
#undef HRX_MATH_OP

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
        default: return nullptr;
    }
}

}  // namespace hrx::kernels::ew
