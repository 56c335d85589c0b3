// Inner loops of the complex64/complex128 ufuncs.
//
// Note [Complex numerics]: the arithmetic is written out on the parts, in
// the formulas NumPy's loops use, and never through std::complex's operators:
// GCC's complex multiply and divide follow C99 Annex G (__mulsc3 recovers
// infinities from NaN results, division is not Smith's), which would give
// other bits than NumPy for non-finite and badly scaled operands.
// - multiply: (ar*br - ai*bi, ar*bi + ai*br); square is multiply(a, a). NumPy's
//   SIMD loops fuse these multiply-adds on hosts with FMA, so NumPy's own bits
//   depend on the host there; hrxarray's do not (tests/test_complex.py compares
//   with the unfused formula).
// - divide: Smith's algorithm as in NumPy's loops (scale by the larger part
//   of the divisor; a zero divisor divides each part by |br|, giving inf/NaN).
// - absolute: the C library's hypot, as NumPy's scalar loop (NumPy's SIMD
//   loop scales differently and can differ by an ULP; glibc's double hypot
//   differs between x86-64 and arm64 by an ULP too); sign: z/|z| with NumPy
//   2's cases for inf and NaN.
// - power: NumPy's npy_cpow: 1 for a zero exponent, 0 or NaN for a zero base,
//   exponentiation by squaring for integral real exponents below 100 in
//   magnitude (a reciprocal by divide for negative ones), the C library's
//   cpow otherwise.
// - reciprocal: NumPy's formula (1/z scaled by the larger part).
// - exp, log, sqrt, sin, cos, tan, tanh (but for the array API's infinite
//   real parts), sinh, cosh and the inverse
//   trigonometric and hyperbolic functions: the C library's cexp, clog, csqrt,
//   csin, ..., casinh, cacosh, catanh (through libstdc++'s std:: overloads,
//   which call them), as NumPy's npymath does; log1p and expm1 use NumPy's own formulas
//   (log(hypot(re+1, im)) + i atan2(im, re+1); expm1(re)cos(im) - 2 sin(im/2)^2
//   + i exp(re) sin(im)) on the C library's real functions.
// As for the real transcendental loops (Note [Elementwise numerics]), the C
// library may round differently from NumPy's build by an ULP; the exact
// operations (everything above but the C library calls) are bit-exact.
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>

#include "kernels/elementwise_impl.h"

namespace hrx::kernels::ew {

namespace {

template <class C> using CSame2 = Sig2<C, C, C>;
template <class C> using CSame1 = Sig1<C, C>;
template <class C> using CToBool2 = Sig2<C, C, bool>;
template <class C> using CToBool1 = Sig1<C, bool>;

template <class C> inline bool truth(C z) noexcept { return z.real() != 0 || z.imag() != 0; }

template <class C> struct CAddOp : CSame2<C> {
    static C f(C a, C b) noexcept { return C(a.real() + b.real(), a.imag() + b.imag()); }
};
template <class C> struct CSubOp : CSame2<C> {
    static C f(C a, C b) noexcept { return C(a.real() - b.real(), a.imag() - b.imag()); }
};
template <class C> struct CMulOp : CSame2<C> {
    static C f(C a, C b) noexcept { return cmul(a, b); }
};
template <class C> struct CDivOp : CSame2<C> {
    static C f(C a, C b) noexcept { return cdiv(a, b); }
};

template <class C> struct CPowOp : CSame2<C> {
    static constexpr bool kScalar = true;
    static C f(C a, C b) noexcept {
        using T = typename C::value_type;
        const T ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
        if (br == 0 && bi == 0) return C(1, 0);
        if (ar == 0 && ai == 0) {
            if (br > 0) return C(0, 0);
            return C(std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::quiet_NaN());
        }
        if (bi == 0 && br == std::trunc(br) && std::fabs(br) < 100) {
            auto n = static_cast<std::int64_t>(br);
            if (n == 1) return a;
            if (n == 2) return cmul(a, a);
            if (n == 3) return cmul(a, cmul(a, a));
            if (n < 0) n = -n;
            C acc(1, 0), p = a;
            std::int64_t mask = 1;
            while (true) {
                if (n & mask) acc = cmul(acc, p);
                mask <<= 1;
                if (n < mask) break;
                p = cmul(p, p);
            }
            return br < 0 ? cdiv(C(1, 0), acc) : acc;
        }
        return std::pow(a, b);
    }
};

template <class C> struct CEqOp : CToBool2<C> {
    static bool f(C a, C b) noexcept { return a.real() == b.real() && a.imag() == b.imag(); }
};
template <class C> struct CNeOp : CToBool2<C> {
    static bool f(C a, C b) noexcept { return a.real() != b.real() || a.imag() != b.imag(); }
};
template <class C> struct CLAndOp : CToBool2<C> {
    static bool f(C a, C b) noexcept { return truth(a) && truth(b); }
};
template <class C> struct CLOrOp : CToBool2<C> {
    static bool f(C a, C b) noexcept { return truth(a) || truth(b); }
};
template <class C> struct CLXorOp : CToBool2<C> {
    static bool f(C a, C b) noexcept { return truth(a) != truth(b); }
};

template <class C> struct CNegOp : CSame1<C> {
    static C f(C a) noexcept { return C(-a.real(), -a.imag()); }
};
template <class C> struct CPosOp : CSame1<C> {
    static C f(C a) noexcept { return a; }
};
template <class C> struct CConjOp : CSame1<C> {
    static C f(C a) noexcept { return C(a.real(), -a.imag()); }
};
template <class C> struct CSquareOp : CSame1<C> {
    static C f(C a) noexcept { return cmul(a, a); }
};
template <class C> struct CAbsOp : Sig1<C, typename C::value_type> {
    static constexpr bool kScalar = true;
    static typename C::value_type f(C a) noexcept { return std::hypot(a.real(), a.imag()); }
};
template <class C> struct CSignOp : CSame1<C> {
    static constexpr bool kScalar = true;
    static C f(C a) noexcept {
        using T = typename C::value_type;
        const T r = a.real(), i = a.imag();
        const T m = std::hypot(r, i);
        const T nan = std::numeric_limits<T>::quiet_NaN();
        if (std::isnan(m)) return C(nan, nan);
        if (std::isinf(m)) {
            if (std::isinf(r)) return std::isinf(i) ? C(nan, nan) : C(r > 0 ? T(1) : T(-1), T(0));
            return C(T(0), i > 0 ? T(1) : T(-1));
        }
        if (m == 0) return C(T(0), T(0));
        return C(r / m, i / m);
    }
};
// NumPy's complex reciprocal: Smith's scaling by the larger part.
template <class C> struct CReciprocalOp : CSame1<C> {
    static C f(C a) noexcept {
        using T = typename C::value_type;
        const T ar = a.real(), ai = a.imag();
        if (std::fabs(ai) <= std::fabs(ar)) {
            const T r = ai / ar, d = ar + ai * r;
            return C(T(1) / d, -r / d);
        }
        const T r = ar / ai, d = ar * r + ai;
        return C(r / d, T(-1) / d);
    }
};
template <class C> struct CLNotOp : CToBool1<C> {
    static bool f(C a) noexcept { return !truth(a); }
};
template <class C> struct CIsNanOp : CToBool1<C> {
    static bool f(C a) noexcept { return a.real() != a.real() || a.imag() != a.imag(); }
};
template <class C> struct CIsInfOp : CToBool1<C> {
    static bool f(C a) noexcept {
        using T = typename C::value_type;
        constexpr T inf = std::numeric_limits<T>::infinity();
        return std::fabs(a.real()) == inf || std::fabs(a.imag()) == inf;
    }
};
// Each part rounded half to even, as NumPy's complex rint.
template <class C> struct CRintOp : CSame1<C> {
    static C f(C a) noexcept { return C(std::nearbyint(a.real()), std::nearbyint(a.imag())); }
};
template <class C> struct CIsFiniteOp : CToBool1<C> {
    static bool f(C a) noexcept { return a.real() - a.real() == 0 && a.imag() - a.imag() == 0; }
};

#define HRX_CMATH_OP(Name, expr)                    \
    template <class C> struct Name : CSame1<C> {    \
        static constexpr bool kScalar = true;       \
        static C f(C z) noexcept { return expr; }   \
    };
HRX_CMATH_OP(CExpOp, std::exp(z))
HRX_CMATH_OP(CLogOp, std::log(z))
HRX_CMATH_OP(CSqrtOp, std::sqrt(z))
HRX_CMATH_OP(CSinOp, std::sin(z))
HRX_CMATH_OP(CCosOp, std::cos(z))
HRX_CMATH_OP(CTanOp, std::tan(z))
HRX_CMATH_OP(CSinhOp, std::sinh(z))
HRX_CMATH_OP(CCoshOp, std::cosh(z))
HRX_CMATH_OP(CAsinOp, std::asin(z))
HRX_CMATH_OP(CAcosOp, std::acos(z))
HRX_CMATH_OP(CAtanOp, std::atan(z))
HRX_CMATH_OP(CAsinhOp, std::asinh(z))
HRX_CMATH_OP(CAcoshOp, std::acosh(z))
HRX_CMATH_OP(CAtanhOp, std::atanh(z))
HRX_CMATH_OP(CLog1pOp, C(std::log(std::hypot(z.real() + 1, z.imag())), std::atan2(z.imag(), z.real() + 1)))
// NumPy's complex log2/log10: the complex log with both parts scaled by
// log2(e) (log10(e)).
template <class C, int Base> struct CLogBaseOp : CSame1<C> {
    static constexpr bool kScalar = true;
    static C f(C z) noexcept {
        using T = typename C::value_type;
        const T k = Base == 2 ? T(1.442695040888963407359924681001892137) : T(0.434294481903251827651128918916605082);
        const C l = std::log(z);
        return C(l.real() * k, l.imag() * k);
    }
};
template <class C> using CLog2Op = CLogBaseOp<C, 2>;
template <class C> using CLog10Op = CLogBaseOp<C, 10>;
#undef HRX_CMATH_OP

// Non-finite real parts take the array API's special cases (NumPy's formula
// gives NaN parts for most of them): +inf with a zero imaginary part stays
// (+inf, that zero), -inf gives -1 + 0j times cis(imag), NaN with a zero
// imaginary part keeps the zero, and a zero gives +0 (also for -0).
template <class C> struct CExpm1Op : CSame1<C> {
    static constexpr bool kScalar = true;
    static C f(C z) noexcept {
        using T = typename C::value_type;
        const T re = z.real(), im = z.imag();
        constexpr T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
        if (std::isinf(re)) {
            if (re > 0) {
                if (im == 0) return C(inf, im);
                if (!std::isfinite(im)) return C(inf, nan);
                return C(inf * std::cos(im), inf * std::sin(im));
            }
            if (std::isnan(im)) return C(-1, 0);
            if (std::isinf(im)) return C(-1, std::copysign(T(0), im));
            return C(-1, T(0) * std::sin(im));
        }
        if (std::isnan(re)) return im == 0 ? C(nan, im) : C(nan, nan);
        if (re == 0 && im == 0) return C(T(0), im);  // +0 even for -0 (NumPy's formula gives -0)
        const T s = std::sin(z.imag() / 2);
        return C(std::expm1(z.real()) * std::cos(z.imag()) - T(2) * s * s, std::exp(z.real()) * std::sin(z.imag()));
    }
};

// The C library's ctanh, except that an infinite real part with a finite
// imaginary one gives (+-1, zero with the imaginary part's sign): the array
// API's case (glibc takes the zero's sign from sin(2 imag) when |imag| > 1).
template <class C> struct CTanhOp : CSame1<C> {
    static constexpr bool kScalar = true;
    static C f(C z) noexcept {
        using T = typename C::value_type;
        if (std::isinf(z.real()) && std::isfinite(z.imag()))
            return C(std::copysign(T(1), z.real()), std::copysign(T(0), z.imag()));
        return std::tanh(z);
    }
};

template <template <class> class Op, bool Binary>
InnerLoop cpick(DType t) noexcept {
    if (t == DType::Complex64) {
        if constexpr (Binary) return &binary_loop<Op<std::complex<float>>>;
        else return &unary_loop<Op<std::complex<float>>>;
    }
    if (t == DType::Complex128) {
        if constexpr (Binary) return &binary_loop<Op<std::complex<double>>>;
        else return &unary_loop<Op<std::complex<double>>>;
    }
    return nullptr;
}

}  // namespace

InnerLoop find_complex_loop(Ufunc op, const UfuncLoop& loop) noexcept {
    const DType t = loop.in[0];
    if (!dtype_is_complex(t)) return nullptr;
    switch (op) {
        case Ufunc::Add: return cpick<CAddOp, true>(t);
        case Ufunc::Subtract: return cpick<CSubOp, true>(t);
        case Ufunc::Multiply: return cpick<CMulOp, true>(t);
        case Ufunc::Divide: return cpick<CDivOp, true>(t);
        case Ufunc::Power: return cpick<CPowOp, true>(t);
        case Ufunc::Equal: return cpick<CEqOp, true>(t);
        case Ufunc::NotEqual: return cpick<CNeOp, true>(t);
        case Ufunc::LogicalAnd: return cpick<CLAndOp, true>(t);
        case Ufunc::LogicalOr: return cpick<CLOrOp, true>(t);
        case Ufunc::LogicalXor: return cpick<CLXorOp, true>(t);
        case Ufunc::Negative: return cpick<CNegOp, false>(t);
        case Ufunc::Positive: return cpick<CPosOp, false>(t);
        case Ufunc::Conjugate: return cpick<CConjOp, false>(t);
        case Ufunc::Absolute: return cpick<CAbsOp, false>(t);
        case Ufunc::Sign: return cpick<CSignOp, false>(t);
        case Ufunc::Square: return cpick<CSquareOp, false>(t);
        case Ufunc::Exp: return cpick<CExpOp, false>(t);
        case Ufunc::Log: return cpick<CLogOp, false>(t);
        case Ufunc::Log1p: return cpick<CLog1pOp, false>(t);
        case Ufunc::Expm1: return cpick<CExpm1Op, false>(t);
        case Ufunc::Sqrt: return cpick<CSqrtOp, false>(t);
        case Ufunc::Sin: return cpick<CSinOp, false>(t);
        case Ufunc::Cos: return cpick<CCosOp, false>(t);
        case Ufunc::Tan: return cpick<CTanOp, false>(t);
        case Ufunc::Tanh: return cpick<CTanhOp, false>(t);
        case Ufunc::Sinh: return cpick<CSinhOp, false>(t);
        case Ufunc::Cosh: return cpick<CCoshOp, false>(t);
        case Ufunc::Arcsin: return cpick<CAsinOp, false>(t);
        case Ufunc::Arccos: return cpick<CAcosOp, false>(t);
        case Ufunc::Arctan: return cpick<CAtanOp, false>(t);
        case Ufunc::Arcsinh: return cpick<CAsinhOp, false>(t);
        case Ufunc::Arccosh: return cpick<CAcoshOp, false>(t);
        case Ufunc::Arctanh: return cpick<CAtanhOp, false>(t);
        case Ufunc::Reciprocal: return cpick<CReciprocalOp, false>(t);
        case Ufunc::Rint: return cpick<CRintOp, false>(t);
        case Ufunc::Log2: return cpick<CLog2Op, false>(t);
        case Ufunc::Log10: return cpick<CLog10Op, false>(t);
        case Ufunc::LogicalNot: return cpick<CLNotOp, false>(t);
        case Ufunc::Isnan: return cpick<CIsNanOp, false>(t);
        case Ufunc::Isinf: return cpick<CIsInfOp, false>(t);
        case Ufunc::Isfinite: return cpick<CIsFiniteOp, false>(t);
        default: return nullptr;
    }
}

}  // namespace hrx::kernels::ew
