// hrx::fmath: the one implementation of the float math functions that the
// Loom interpreter, the hx ufuncs (kernels/elementwise_math.cpp) and a native
// code generator share, so a kernel gives the same bits whichever executor
// runs it and whichever x86-64 or arm64 host it runs on.
//
// API (plain functions, no templates):
//   - scalar functions overloaded on float and double, one per operation:
//     exp, exp2, expm1, log, log2, log10, log1p, sqrt, rsqrt, cbrt, sin, cos,
//     tan, sinturns, costurns (sin/cos of 2*pi*x), asin, acos, atan, sinh,
//     cosh, tanh, asinh, acosh, atanh, erf, erfc, logistic, silu, softplus,
//     gelu_erf, gelu_tanh, gelu_logistic(x, scale), sign, round (ties away),
//     roundeven, trunc, floor, ceil; binary pow, atan2, hypot, fmod,
//     copysign, minimum/maximum (NaN propagates), minnum/maxnum (a NaN
//     operand yields the other), clamp_ordered/clamp_number/clamp_ieee
//     (value, lower, upper) and fma.
//   - array forms over contiguous memory, y[i] = f(x[i]) for i < n:
//     `void exp_f32(const float* x, float* y, std::size_t n)` and so on for
//     every unary function above (`gelu_logistic_f32` takes the scale after
//     n), `_f64` for double; binary ones take (a, b, y, n). y may equal x.
//     They use the host's vector units (an AVX2 clone on x86-64 hosts that
//     have it) and give the same bits as the scalar functions.
//
// Numerics: Note [Loom math accuracy] in fmath.cpp. float results are within
// 1 ulp of the correctly rounded value (most are correctly rounded), the same
// on every host; double results come from the C library except where noted.
// float16/bfloat16 callers compute in float and round the result once.
#pragma once
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace hrx::fmath {

// ---------------------------------------------------------------- cores
// Double-precision building blocks for the float functions: branch-free (so
// loops over them vectorise), accurate to a few 1e-16 relative, and built only
// from IEEE operations, so their bits do not depend on the host or its libm.
// This header must be compiled with -ffp-contract=off (the project default):
// a fused a*b+c would change the bits on hosts that have FMA.
namespace detail {

inline double sel(bool c, double a, double b) { return c ? a : b; }
inline double clampd(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }

constexpr double kRound = 0x1.8p52;  // t + kRound - kRound rounds |t| < 2^51 to an integer
constexpr double kLn2Hi = 0x1.62e42fee00000p-1;  // 32 bits: n * kLn2Hi is exact for |n| < 2^21
constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
constexpr double kLog2e = 0x1.71547652b82fep+0;
constexpr double kLn2 = 0x1.62e42fefa39efp-1;

// 2^n for the integer n held in kd = n + kRound (|n| < 1023).
inline double pow2_of(double kd) {
    return std::bit_cast<double>((std::bit_cast<std::uint64_t>(kd) + 1023) << 52);
}

// e^r - 1 for |r| <= 0.35: Taylor to r^13 (the rest is below 2^-56
// relative), r + r^2 (c2 + c3 r + ... + c13 r^11) with the inner polynomial
// in Estrin's scheme, whose shorter dependency chains keep vector units busy.
inline double expm1_poly(double r) {
    const double r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
    const double a = 1.0 / 2.0 + r * (1.0 / 6.0);
    const double b = 1.0 / 24.0 + r * (1.0 / 120.0);
    const double c = 1.0 / 720.0 + r * (1.0 / 5040.0);
    const double d = 1.0 / 40320.0 + r * (1.0 / 362880.0);
    const double e = 1.0 / 3628800.0 + r * (1.0 / 39916800.0);
    const double f = 1.0 / 479001600.0 + r * (1.0 / 6227020800.0);
    const double p = (a + r2 * b) + r4 * (c + r2 * d) + r8 * (e + r2 * f);
    return r + r2 * p;
}

// e^x for x in [-708, 709] (clamped); Cody-Waite reduction by ln 2.
inline double exp_d(double x) {
    x = clampd(x, -708.0, 709.0);
    const double kd = x * kLog2e + kRound;
    const double n = kd - kRound;
    const double r = (x - n * kLn2Hi) - n * kLn2Lo;
    return (1.0 + expm1_poly(r)) * pow2_of(kd);
}

// 2^t for t in [-1020, 1020] (clamped); t - n is exact.
inline double exp2_d(double t) {
    t = clampd(t, -1020.0, 1020.0);
    const double kd = t + kRound;
    const double n = kd - kRound;
    return (1.0 + expm1_poly((t - n) * kLn2)) * pow2_of(kd);
}

// e^x - 1 for x in [-708, 709], accurate relative to the result near 0.
inline double expm1_d(double x) {
    x = clampd(x, -708.0, 709.0);
    const double kd = x * kLog2e + kRound;
    const double n = kd - kRound;
    const double r = (x - n * kLn2Hi) - n * kLn2Lo;
    const double s = pow2_of(kd);
    return s * expm1_poly(r) + (s - 1.0);
}

// ln x for a positive finite double (special values are the caller's).
// x = 2^k * m with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(f / (2 + f)).
inline double log_d(double x) {
    const std::uint64_t u = std::bit_cast<std::uint64_t>(x);
    const std::uint64_t e = (u + 0x00095f619980c433ULL) >> 52;  // biased exponent of the reduced form
    const double m = std::bit_cast<double>(u - ((e - 1023) << 52));
    const double k = (std::bit_cast<double>(e | 0x4330000000000000ULL) - 0x1p52) - 1023.0;
    const double f = m - 1.0;
    const double s = f / (2.0 + f);
    const double z = s * s;
    double p = 2.0 / 21.0;
    p = p * z + 2.0 / 19.0;
    p = p * z + 2.0 / 17.0;
    p = p * z + 2.0 / 15.0;
    p = p * z + 2.0 / 13.0;
    p = p * z + 2.0 / 11.0;
    p = p * z + 2.0 / 9.0;
    p = p * z + 2.0 / 7.0;
    p = p * z + 2.0 / 5.0;
    p = p * z + 2.0 / 3.0;
    return k * kLn2Hi + ((k * kLn2Lo + s * z * p) + 2.0 * s);
}

// sin r and cos r for |r| <= pi/4 (Taylor; truncation below 2^-57).
inline double sin_poly(double r) {
    const double z = r * r;
    double p = -1.0 / 1307674368000.0;  // -1/15!
    p = p * z + 1.0 / 6227020800.0;
    p = p * z - 1.0 / 39916800.0;
    p = p * z + 1.0 / 362880.0;
    p = p * z - 1.0 / 5040.0;
    p = p * z + 1.0 / 120.0;
    p = p * z - 1.0 / 6.0;
    return r + r * z * p;
}
inline double cos_poly(double r) {
    const double z = r * r;
    double p = 1.0 / 20922789888000.0;  // 1/16!
    p = p * z - 1.0 / 87178291200.0;
    p = p * z + 1.0 / 479001600.0;
    p = p * z - 1.0 / 3628800.0;
    p = p * z + 1.0 / 40320.0;
    p = p * z - 1.0 / 720.0;
    p = p * z + 1.0 / 24.0;
    return (1.0 - 0.5 * z) + (z * z) * p;
}

// x - n*pi/2 for |x| < 2^19 (floats): three-part pi/2, each n*Ci exact.
inline double reduce_pio2(double x, double& kd) {
    kd = x * 0x1.45f306dc9c883p-1 + kRound;
    const double n = kd - kRound;
    return ((x - n * 0x1.921fb54400000p+0) - n * 0x1.0b4611a600000p-34) - n * 0x1.3198a2e037073p-69;
}
inline unsigned quadrant(double kd) { return static_cast<unsigned>(std::bit_cast<std::uint64_t>(kd)) & 3u; }

// sin/cos of a float beyond the fast reduction's range (and inf/NaN), in fmath.cpp.
float sin_big(float x);
float cos_big(float x);
constexpr float kTrigFast = 0x1p19f;

// erf x for |x| <= 1: 2/sqrt(pi) * sum (-1)^n x^(2n+1) / (n! (2n+1)), n <= 17
// (the first omitted term is below 1e-16).
constexpr double erf_taylor_coef(int n) {
    double f = 1.0;
    for (int i = 2; i <= n; ++i) f *= i;
    return (n % 2 ? -1.0 : 1.0) / (f * (2 * n + 1));
}
inline double erf_small(double x) {
    const double z = x * x;
    double p = erf_taylor_coef(17);
#pragma GCC unroll 20
    for (int n = 16; n >= 0; --n) p = p * z + erf_taylor_coef(n);
    return 0x1.20dd750429b6dp+0 * (x * p);
}

// erfc(z) e^(z^2) for z in [1, 4]: a Chebyshev series in t = (2z - 5) / 3,
// fitted to 1e-17 (26 terms), summed by Clenshaw's recurrence.
constexpr double kErfcxA[26] = {
    0x1.f4957d364d198p-3,  -0x1.165205361f2fdp-3, 0x1.23ec403b6e0e6p-5,  -0x1.231d388285ac6p-7, 0x1.15aa8393bd269p-9,
    -0x1.fcfa3d136cf44p-12, 0x1.c1f0511e0acc5p-14, -0x1.80d018509d70bp-16, 0x1.3f3a7c241b614p-18, -0x1.016d995d7d059p-20,
    0x1.94598f5e8c4c6p-23, -0x1.35c7d47cddb00p-25, 0x1.cfb11216353e2p-28, -0x1.5372db95306cep-30, 0x1.e6ad46919f740p-33,
    -0x1.55fcf934d04cbp-35, 0x1.d7917a82fd6f2p-38, -0x1.3f426b84a596ep-40, 0x1.a8d08b6466e36p-43, -0x1.15f140f20b709p-45,
    0x1.65e3a235ff064p-48, -0x1.c5bdbe09c13b6p-51, 0x1.1b5cb89f19bd7p-53, -0x1.5cd730f198f41p-56, 0x1.a74d5e4a9f970p-59,
    -0x1.f049aa84e2d30p-62};
template <int N> inline double chebyshev(const double (&c)[N], double t) {
    double b = 0.0, b1 = 0.0;
#pragma GCC unroll 32
    for (int k = N - 1; k >= 1; --k) {
        const double nb = (2.0 * t) * b - b1 + c[k];
        b1 = b;
        b = nb;
    }
    return t * b - b1 + c[0];
}
inline double erfcx_mid(double z) { return chebyshev(kErfcxA, (2.0 * z - 5.0) / 3.0); }
double erf_d(double x);
double erfc_d(double x);
double logistic_d(double x);

}  // namespace detail

// ---------------------------------------------------------------- exact ops
// Correctly rounded or exact by definition: identical on every host.
inline float sqrt(float x) { return std::sqrt(x); }
inline double sqrt(double x) { return std::sqrt(x); }
inline float sign(float x) { return x > 0 ? 1.0f : (x < 0 ? -1.0f : x); }  // keeps -0 and NaN
inline double sign(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : x); }
inline float round(float x) { return std::round(x); }
inline double round(double x) { return std::round(x); }
inline float roundeven(float x) { return std::nearbyint(x); }  // the default rounding mode is nearest-even
inline double roundeven(double x) { return std::nearbyint(x); }
inline float trunc(float x) { return std::trunc(x); }
inline double trunc(double x) { return std::trunc(x); }
inline float floor(float x) { return std::floor(x); }
inline double floor(double x) { return std::floor(x); }
inline float ceil(float x) { return std::ceil(x); }
inline double ceil(double x) { return std::ceil(x); }
inline float fmod(float a, float b) { return std::fmod(a, b); }
inline double fmod(double a, double b) { return std::fmod(a, b); }
inline float copysign(float a, float b) { return std::copysign(a, b); }
inline double copysign(double a, double b) { return std::copysign(a, b); }
inline float fma(float a, float b, float c) { return std::fma(a, b, c); }
inline double fma(double a, double b, double c) { return std::fma(a, b, c); }

namespace detail {
// min/max with -0 < +0 (C's fmin/fmax leave the zero to the host).
template <class T> inline T min_num_(T a, T b) {
    if (a != a) return b;
    if (b != b) return a;
    return (a < b || (a == b && std::signbit(a))) ? a : b;
}
template <class T> inline T max_num_(T a, T b) {
    if (a != a) return b;
    if (b != b) return a;
    return (a > b || (a == b && !std::signbit(a))) ? a : b;
}
}  // namespace detail
inline float minnum(float a, float b) { return detail::min_num_(a, b); }
inline double minnum(double a, double b) { return detail::min_num_(a, b); }
inline float maxnum(float a, float b) { return detail::max_num_(a, b); }
inline double maxnum(double a, double b) { return detail::max_num_(a, b); }
inline float minimum(float a, float b) { return a != a || b != b ? a + b : detail::min_num_(a, b); }
inline double minimum(double a, double b) { return a != a || b != b ? a + b : detail::min_num_(a, b); }
inline float maximum(float a, float b) { return a != a || b != b ? a + b : detail::max_num_(a, b); }
inline double maximum(double a, double b) { return a != a || b != b ? a + b : detail::max_num_(a, b); }
// clampf<ordered>: compare-and-select, a NaN comparison is false (so a NaN
// value stays, NaN bounds are ignored); <number>: minnum(maxnum(x, lo), hi);
// <ieee>: minimum(maximum(x, lo), hi), NaN propagates.
inline float clamp_ordered(float x, float lo, float hi) { const float r = x < lo ? lo : x; return r > hi ? hi : r; }
inline double clamp_ordered(double x, double lo, double hi) { const double r = x < lo ? lo : x; return r > hi ? hi : r; }
inline float clamp_number(float x, float lo, float hi) { return minnum(maxnum(x, lo), hi); }
inline double clamp_number(double x, double lo, double hi) { return minnum(maxnum(x, lo), hi); }
inline float clamp_ieee(float x, float lo, float hi) { return minimum(maximum(x, lo), hi); }
inline double clamp_ieee(double x, double lo, double hi) { return minimum(maximum(x, lo), hi); }

// ---------------------------------------------------------------- hot float functions
// Inline and branch-free so that loops over them vectorise.
inline float exp(float x) {
    const float r = static_cast<float>(detail::exp_d(x));
    return x != x ? x : r;
}
inline float exp2(float x) {
    const float r = static_cast<float>(detail::exp2_d(x));
    return x != x ? x : r;
}
// log, log2, log10: one log_d of the positive finite argument (floats widen
// to normal doubles, subnormals included), then the special values.
namespace detail {
inline double log_arg(float x) {
    const double d = x;
    return d > 0 && d < std::numeric_limits<double>::infinity() ? d : 1.0;
}
inline float log_finish(float x, double v) {
    double r = x == 0 ? -std::numeric_limits<double>::infinity() : v;
    r = x < 0 ? std::numeric_limits<double>::quiet_NaN() : r;
    r = x == std::numeric_limits<float>::infinity() || x != x ? static_cast<double>(x) : r;
    return static_cast<float>(r);
}
}  // namespace detail
inline float log(float x) { return detail::log_finish(x, detail::log_d(detail::log_arg(x))); }
inline float log2(float x) { return detail::log_finish(x, detail::log_d(detail::log_arg(x)) * detail::kLog2e); }
inline float log10(float x) { return detail::log_finish(x, detail::log_d(detail::log_arg(x)) * 0x1.bcb7b1526e50ep-2); }
inline float rsqrt(float x) { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(x))); }
inline float logistic(float x) {
    const float r = static_cast<float>(1.0 / (1.0 + detail::exp_d(-static_cast<double>(x))));
    return x != x ? x : r;
}
inline float silu(float x) {
    const double d = x;
    const float r = static_cast<float>(d / (1.0 + detail::exp_d(-d)));
    return x != x ? x : (d < -200.0 ? -0.0f : r);
}
inline float tanh(float x) {
    const double a = std::fabs(static_cast<double>(x));
    const double u = detail::expm1_d(2.0 * (a < 20.0 ? a : 20.0));
    const float r = std::copysign(static_cast<float>(u / (u + 2.0)), x);
    return x != x ? x : r;
}
inline float erf(float x) {
    const double a = std::fabs(static_cast<double>(x));
    const double s = detail::erf_small(a < 1.0 ? a : 1.0);
    const double z = a < 1.0 ? 1.0 : (a > 4.0 ? 4.0 : a);
    const double big = 1.0 - detail::exp_d(-(z * z)) * detail::erfcx_mid(z);
    const float r = std::copysign(static_cast<float>(a < 1.0 ? s : big), x);
    return x != x ? x : r;
}
inline float sin(float x) {
    if (!(std::fabs(x) < detail::kTrigFast)) return detail::sin_big(x);
    double kd;
    const double r = detail::reduce_pio2(x, kd);
    const unsigned q = detail::quadrant(kd);
    const double s = detail::sin_poly(r), c = detail::cos_poly(r);
    const double v = (q & 1) ? c : s;
    const float r2 = static_cast<float>((q & 2) ? -v : v);
    return x == 0 ? x : r2;  // sin(-0) is -0, which the polynomial's r + r z p turns into +0
}
inline float cos(float x) {
    if (!(std::fabs(x) < detail::kTrigFast)) return detail::cos_big(x);
    double kd;
    const double r = detail::reduce_pio2(x, kd);
    const unsigned q = detail::quadrant(kd);
    const double s = detail::sin_poly(r), c = detail::cos_poly(r);
    const double v = (q & 1) ? s : c;
    return static_cast<float>(((q + 1) & 2) ? -v : v);
}

// ---------------------------------------------------------------- the rest (fmath.cpp)
float expm1(float x);
float log1p(float x);
float cbrt(float x);
float tan(float x);
float sinturns(float x);
float costurns(float x);
float asin(float x);
float acos(float x);
float atan(float x);
float sinh(float x);
float cosh(float x);
float asinh(float x);
float acosh(float x);
float atanh(float x);
float erfc(float x);
float softplus(float x);
float gelu_erf(float x);
float gelu_tanh(float x);
float gelu_logistic(float x, double scale);
float pow(float a, float b);
float atan2(float y, float x);
float hypot(float a, float b);

double exp(double x);
double exp2(double x);
double expm1(double x);
double log(double x);
double log2(double x);
double log10(double x);
double log1p(double x);
double rsqrt(double x);
double cbrt(double x);
double sin(double x);
double cos(double x);
double tan(double x);
double sinturns(double x);
double costurns(double x);
double asin(double x);
double acos(double x);
double atan(double x);
double sinh(double x);
double cosh(double x);
double tanh(double x);
double asinh(double x);
double acosh(double x);
double atanh(double x);
double erf(double x);
double erfc(double x);
double logistic(double x);
double silu(double x);
double softplus(double x);
double gelu_erf(double x);
double gelu_tanh(double x);
double gelu_logistic(double x, double scale);
double pow(double a, double b);
double atan2(double y, double x);
double hypot(double a, double b);

// ---------------------------------------------------------------- array forms
#define HRX_FMATH_ARRAY1(name)                                          \
    void name##_f32(const float* x, float* y, std::size_t n) noexcept;  \
    void name##_f64(const double* x, double* y, std::size_t n) noexcept;
#define HRX_FMATH_ARRAY2(name)                                                          \
    void name##_f32(const float* a, const float* b, float* y, std::size_t n) noexcept;  \
    void name##_f64(const double* a, const double* b, double* y, std::size_t n) noexcept;
#define HRX_FMATH_UNARY_LIST(X)                                                                              \
    X(exp) X(exp2) X(expm1) X(log) X(log2) X(log10) X(log1p) X(sqrt) X(rsqrt) X(cbrt) X(sin) X(cos) X(tan) \
    X(sinturns) X(costurns) X(asin) X(acos) X(atan) X(sinh) X(cosh) X(tanh) X(asinh) X(acosh) X(atanh)     \
    X(erf) X(erfc) X(logistic) X(silu) X(softplus) X(gelu_erf) X(gelu_tanh)
#define HRX_FMATH_BINARY_LIST(X) X(pow) X(atan2) X(hypot)
HRX_FMATH_UNARY_LIST(HRX_FMATH_ARRAY1)
HRX_FMATH_BINARY_LIST(HRX_FMATH_ARRAY2)
void gelu_logistic_f32(const float* x, float* y, std::size_t n, double scale) noexcept;
void gelu_logistic_f64(const double* x, double* y, std::size_t n, double scale) noexcept;
#undef HRX_FMATH_ARRAY1
#undef HRX_FMATH_ARRAY2

}  // namespace hrx::fmath
