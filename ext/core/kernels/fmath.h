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
//     They use the host's vector units (AVX-512 and AVX2 clones on x86-64
//     hosts that have them; the float functions computed in double, Note
//     [fmath vector kernels], run 8 lanes per operation, those computed in
//     float, Note [float kernels in float], 16) and give the same bits as
//     the scalar functions.
//
// Numerics: Note [Loom math accuracy] in fmath.cpp. float results are within
// 1 ulp of the correctly rounded value (most are correctly rounded), the same
// on every host; double exp, exp2, expm1, log, log2, log10, log1p, tanh, atan, sin,
// cos, tan, asin, acos, atan2, sinh and cosh are fmath64.h's kernels (within 1
// ulp, the same on every host),
// the other double results come from the C library except where noted.
// float16/bfloat16 callers compute in float and round the result once.
#pragma once
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

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

// Note [fmath vector kernels]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Every double kernel below is written once, as a template over a GCC vector
// type (vector_size: 2, 4 or 8 doubles), from lane-wise IEEE operations
// only: +, -, *, /, compares and selects, and integer bit operations on the
// doubles' bits. The scalar functions run it with V = double, the array
// forms (fmath.cpp) at each clone's native width: 2 lanes on the baseline
// (SSE2), 4 with AVX2, 8 with AVX-512 (wider than native, GCC 12 evaluates
// the selects lane by lane). A lane's result does not depend on the
// vector width or the instruction set: each operation is correctly rounded
// and -ffp-contract=off keeps a * b + c two roundings on every clone (FMA is
// not used anywhere: a fused polynomial would change the bits between a
// baseline without FMA and the clones with it). So the interpreter (scalar),
// native code and the ufuncs (array forms) give the same bits on every host,
// and the vectorised loops are those same kernels, not a second
// implementation. GCC's auto-vectoriser handled the scalar loops of exp, log,
// expm1, sin, cos and tanh about as fast as these, but not tan (a division
// chosen by quadrant), atan or log1p (then the C library's); spelled out,
// every kernel is vector code on every clone. Checked (2026-12-05) over 4 M
// float bit patterns (random signs, exponents and mantissas, plus the special
// values) for exp, exp2, expm1, log, log2, log10, log1p, sin, cos, tan,
// tanh, atan, logistic and silu: the scalar functions and the baseline, AVX2
// and AVX-512 array forms give the same bits, and so does an arm64 build
// (GCC 12 cross compiler, run under qemu-aarch64).
// Since 2026-12-05 exp, expm1, log, log2, log10 and log1p are float
// kernels instead (Note [float exp in float], Note [float kernels in
// float]), and sin, cos and tan evaluate sin_short/cos_short, polynomials
// sized for a float result. bench/math_accuracy.py rechecks the agreement
// over 10^7 random bit patterns per function by building each kernel at the
// clones' widths and instruction sets (bench/fmath_clones.cpp), against the
// ufunc and the Loom interpreter (the scalar functions): no bit differs
// (2026-12-05, this Xeon with AVX-512).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"  // the wide types live only inside inlined code
// Masks are not combined (&&, ||, & or |): GCC 12 lowers such selects lane
// by lane; chains of selects on one comparison each stay vector code. The
// same holds for nested selects (c1 ? (c2 ? a : b) : b), for several selects
// of one value (merged into one select on an OR), and for `c ? 1 : 0` with a
// double comparison and integer lanes; combine conditions as 0/1 integer
// lanes from the comparison's own mask (as01 in fmath64.h) and select once.
// Check the clones' code after a change (objdump -d of fmath.o: scalar
// vucomisd/vpinsrq/vpextrq in a _avx512 loop mean a select went lane by
// lane; float64 pow had 245 such instructions per 8 lanes until 2026-12-05).
#define HRX_FMATH_VI [[gnu::always_inline]] inline
namespace v {
typedef double d2 __attribute__((vector_size(16)));
typedef std::uint64_t u2 __attribute__((vector_size(16)));
typedef float f2 __attribute__((vector_size(8)));
typedef std::uint32_t uf2 __attribute__((vector_size(8)));
typedef double d4 __attribute__((vector_size(32)));
typedef std::uint64_t u4 __attribute__((vector_size(32)));
typedef float f4 __attribute__((vector_size(16)));
typedef std::uint32_t uf4 __attribute__((vector_size(16)));
typedef double d8 __attribute__((vector_size(64)));
typedef std::uint64_t u8 __attribute__((vector_size(64)));
typedef float f8 __attribute__((vector_size(32)));
typedef std::uint32_t uf8 __attribute__((vector_size(32)));
template <class V> struct traits;
template <> struct traits<d2> { using U = u2; using F = f2; using UF = uf2; };
template <> struct traits<d4> { using U = u4; using F = f4; using UF = uf4; };
template <> struct traits<d8> { using U = u8; using F = f8; using UF = uf8; };
template <> struct traits<double> { using U = std::uint64_t; using F = float; using UF = std::uint32_t; };
// Float vectors of a whole register (exp_ff's lanes, Note [float exp in float]).
typedef float f16 __attribute__((vector_size(64)));
typedef std::int32_t si4 __attribute__((vector_size(16)));
typedef std::int32_t si8 __attribute__((vector_size(32)));
typedef std::int32_t si16 __attribute__((vector_size(64)));
typedef std::int32_t si2 __attribute__((vector_size(8)));
template <class V> using U = typename traits<V>::U;
// Bits of a double (vector) and back; V = double is the scalar instance.
template <class V> HRX_FMATH_VI U<V> bits(V x) {
    if constexpr (std::is_same_v<V, double>) return std::bit_cast<std::uint64_t>(x);
    else return (U<V>)x;
}
template <class V> HRX_FMATH_VI V from_bits(U<V> u) {
    if constexpr (std::is_same_v<V, double>) return std::bit_cast<double>(u);
    else return (V)u;
}

template <class V> HRX_FMATH_VI V splat(double c) { return V{} + c; }  // c != -0
template <class V> HRX_FMATH_VI V fabs(V x) { return from_bits<V>(bits(x) & 0x7fffffffffffffffULL); }
template <class V> HRX_FMATH_VI V clamp(V x, double lo, double hi) {
    x = x < splat<V>(lo) ? splat<V>(lo) : x;
    return x > splat<V>(hi) ? splat<V>(hi) : x;
}
// 2^n for the integer n held in kd = n + kRound (|n| < 1023).
template <class V> HRX_FMATH_VI V pow2_of(V kd) { return from_bits<V>((bits(kd) + 1023) << 52); }

// e^r - 1 for |r| <= 0.35: Taylor to r^13 (the rest is below 2^-56
// relative), r + r^2 (c2 + c3 r + ... + c13 r^11) with the inner polynomial
// in Estrin's scheme, whose shorter dependency chains keep vector units busy.
template <class V> HRX_FMATH_VI V expm1_poly(V r) {
    const V r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
    const V a = 1.0 / 2.0 + r * (1.0 / 6.0);
    const V b = 1.0 / 24.0 + r * (1.0 / 120.0);
    const V c = 1.0 / 720.0 + r * (1.0 / 5040.0);
    const V d = 1.0 / 40320.0 + r * (1.0 / 362880.0);
    const V e = 1.0 / 3628800.0 + r * (1.0 / 39916800.0);
    const V f = 1.0 / 479001600.0 + r * (1.0 / 6227020800.0);
    const V p = (a + r2 * b) + r4 * (c + r2 * d) + r8 * (e + r2 * f);
    return r + r2 * p;
}

// e^x for x in [-708, 709] (clamped); Cody-Waite reduction by ln 2.
template <class V> HRX_FMATH_VI V exp_d(V x) {
    x = clamp(x, -708.0, 709.0);
    const V kd = x * kLog2e + kRound;
    const V n = kd - kRound;
    const V r = (x - n * kLn2Hi) - n * kLn2Lo;
    return (1.0 + expm1_poly(r)) * pow2_of(kd);
}

// 2^t for t in [-1020, 1020] (clamped); t - n is exact.
template <class V> HRX_FMATH_VI V exp2_d(V t) {
    t = clamp(t, -1020.0, 1020.0);
    const V kd = t + kRound;
    const V n = kd - kRound;
    return (1.0 + expm1_poly((t - n) * kLn2)) * pow2_of(kd);
}

// e^x - 1 for x in [-708, 709], accurate relative to the result near 0.
template <class V> HRX_FMATH_VI V expm1_d(V x) {
    x = clamp(x, -708.0, 709.0);
    const V kd = x * kLog2e + kRound;
    const V n = kd - kRound;
    const V r = (x - n * kLn2Hi) - n * kLn2Lo;
    const V s = pow2_of(kd);
    return s * expm1_poly(r) + (s - 1.0);
}

// 2/3 + 2/5 z + ... + 2/21 z^9 in Horner's scheme: log(1 + f) = 2 atanh(s)
// with s = f / (2 + f), z = s^2 (the float64 kernels' log_poly shares it).
template <class V> HRX_FMATH_VI V log_series(V z) {
    V p = splat<V>(2.0 / 21.0);
    p = p * z + 2.0 / 19.0;
    p = p * z + 2.0 / 17.0;
    p = p * z + 2.0 / 15.0;
    p = p * z + 2.0 / 13.0;
    p = p * z + 2.0 / 11.0;
    p = p * z + 2.0 / 9.0;
    p = p * z + 2.0 / 7.0;
    p = p * z + 2.0 / 5.0;
    p = p * z + 2.0 / 3.0;
    return p;
}

// ln x for a positive finite double (special values are the caller's).
// x = 2^k * m with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(f / (2 + f)).
template <class V> HRX_FMATH_VI V log_d(V x) {
    const U<V> u = bits(x);
    const U<V> e = (u + 0x00095f619980c433ULL) >> 52;  // biased exponent of the reduced form
    const V m = from_bits<V>(u - ((e - 1023) << 52));
    const V k = (from_bits<V>(e | 0x4330000000000000ULL) - 0x1p52) - 1023.0;
    const V f = m - 1.0;
    const V s = f / (2.0 + f);
    const V z = s * s;
    const V p = log_series(z);
    return k * kLn2Hi + ((k * kLn2Lo + s * z * p) + 2.0 * s);
}

// sin r and cos r for |r| <= pi/4 (Taylor; truncation below 2^-57).
template <class V> HRX_FMATH_VI V sin_poly(V r) {
    const V z = r * r;
    V p = splat<V>(1.0 / 6227020800.0) - z * (1.0 / 1307674368000.0);  // 1/13! - z/15!
    p = p * z - 1.0 / 39916800.0;
    p = p * z + 1.0 / 362880.0;
    p = p * z - 1.0 / 5040.0;
    p = p * z + 1.0 / 120.0;
    p = p * z - 1.0 / 6.0;
    return r + r * z * p;
}
template <class V> HRX_FMATH_VI V cos_poly(V r) {
    const V z = r * r;
    V p = z * (1.0 / 20922789888000.0) - 1.0 / 87178291200.0;  // z/16! - 1/14!
    p = p * z + 1.0 / 479001600.0;
    p = p * z - 1.0 / 3628800.0;
    p = p * z + 1.0 / 40320.0;
    p = p * z - 1.0 / 720.0;
    p = p * z + 1.0 / 24.0;
    return (1.0 - 0.5 * z) + (z * z) * p;
}

// sin r and cos r for |r| <= pi/4 to float's needs: Taylor to r^9 and r^10
// (truncation below 2^-28 relative, so the float rounding of the double
// result is within 0.5 + 2^-4 ulp). The float sin, cos and tan use these.
template <class V> HRX_FMATH_VI V sin_short(V r) {
    const V z = r * r;
    V p = splat<V>(1.0 / 362880.0);
    p = p * z - 1.0 / 5040.0;
    p = p * z + 1.0 / 120.0;
    p = p * z - 1.0 / 6.0;
    return r + r * z * p;
}
template <class V> HRX_FMATH_VI V cos_short(V r) {
    const V z = r * r;
    V p = splat<V>(-1.0 / 3628800.0);
    p = p * z + 1.0 / 40320.0;
    p = p * z - 1.0 / 720.0;
    p = p * z + 1.0 / 24.0;
    return (1.0 - 0.5 * z) + (z * z) * p;
}

// x - n*pi/2 for |x| < 2^19 (floats): three-part pi/2, each n*Ci exact.
template <class V> HRX_FMATH_VI V reduce_pio2(V x, V& kd) {
    kd = x * 0x1.45f306dc9c883p-1 + kRound;
    const V n = kd - kRound;
    return ((x - n * 0x1.921fb54400000p+0) - n * 0x1.0b4611a600000p-34) - n * 0x1.3198a2e037073p-69;
}
// Bit 0 and 1 of the quadrant n held in kd, as lane masks.
template <class V> HRX_FMATH_VI U<V> quadrant(V kd) { return bits(kd) & 3; }
}  // namespace v

// The scalar double cores: the kernels' V = double instance.
inline double pow2_of(double kd) { return v::pow2_of(kd); }
inline double expm1_poly(double r) { return v::expm1_poly(r); }
inline double exp_d(double x) { return v::exp_d(x); }
inline double exp2_d(double t) { return v::exp2_d(t); }
inline double expm1_d(double x) { return v::expm1_d(x); }
inline double log_d(double x) { return v::log_d(x); }
inline double sin_poly(double r) { return v::sin_poly(r); }
inline double cos_poly(double r) { return v::cos_poly(r); }
inline double reduce_pio2(double x, double& kd) { return v::reduce_pio2(x, kd); }
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
// minimum/maximum: a NaN operand gives the first NaN, quieted (a + a, then b + b): what a + b gives on
// x86 when the compiler keeps the operands' order, spelled so that no compiler (GCC here, LLVM in
// native Loom code, which spells it the same way) can change the payload by commuting them.
inline float minimum(float a, float b) { return a != a ? a + a : b != b ? b + b : detail::min_num_(a, b); }
inline double minimum(double a, double b) { return a != a ? a + a : b != b ? b + b : detail::min_num_(a, b); }
inline float maximum(float a, float b) { return a != a ? a + a : b != b ? b + b : detail::max_num_(a, b); }
inline double maximum(double a, double b) { return a != a ? a + a : b != b ? b + b : detail::max_num_(a, b); }
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
// Each is a kernel over a vector of floats (detail::v, Note [fmath vector
// kernels]): widen to double, one branch-free double kernel, round once,
// then the special values by selects. The scalar function is lane 0 of the
// instance for V = double (plain scalar code); the array forms run the
// clone's native vector width.
namespace detail::v {
template <class V> using F = typename traits<V>::F;
template <class V> using UF = typename traits<V>::UF;
template <class V> HRX_FMATH_VI V widen(F<V> x) {
    if constexpr (std::is_same_v<V, double>) {
        return static_cast<double>(x);
    } else {
#if defined(__x86_64__) && defined(__GNUC__)
        // GCC 12 converts 8 floats as two halves (extract, two vcvtps2pd,
        // insert); one vcvtps2pd ymm -> zmm is exact the same. d8 only exists
        // in the AVX-512 clones (as vsqrt in fmath64.h).
        if constexpr (sizeof(V) == 64) {
            V r;
            __asm__("vcvtps2pd %1, %0" : "=v"(r) : "v"(x));
            return r;
        }
#endif
        return __builtin_convertvector(x, V);
    }
}
template <class V> HRX_FMATH_VI F<V> narrow(V x) {
    if constexpr (std::is_same_v<V, double>) return static_cast<float>(x);
    else return __builtin_convertvector(x, F<V>);
}
template <class V> HRX_FMATH_VI UF<V> fbits(F<V> x) {
    if constexpr (std::is_same_v<V, double>) return std::bit_cast<std::uint32_t>(x);
    else return (UF<V>)x;
}
template <class V> HRX_FMATH_VI F<V> from_fbits(UF<V> u) {
    if constexpr (std::is_same_v<V, double>) return std::bit_cast<float>(u);
    else return (F<V>)u;
}
// |r| with the sign of s (floats), as std::copysign.
template <class V> HRX_FMATH_VI F<V> copysignf(F<V> r, F<V> s) {
    return from_fbits<V>((fbits<V>(r) & 0x7fffffffu) | (fbits<V>(s) & 0x80000000u));
}
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Note [float exp in float]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// exp is the one hot function computed in float rather than double: softmax,
// attention and the exp ufunc spend their time in it, and float lanes are
// twice as many per vector (16 on AVX-512) with a shorter polynomial. Cody-
// Waite reduction x = n ln2 + r (n * kHi is exact: n has at most 8 bits, kHi
// 16; x - n * kHi is exact), |r| <= 0.35, e^r = 1 + (r + r^2 q(r)) with q the
// Taylor terms to r^7 (truncation 5e-9 relative), then 2^n as two exact
// power-of-two factors (n in [-150, 128] does not fit one normal float): the
// first product is exact, the second rounds once, so subnormal results are
// rounded once too. Only IEEE float operations (-ffp-contract=off), so every
// vector width and the scalar instance give the same bits. Checked
// exhaustively (2026-12-05, every float in [-105, 90] and every 4096th bit
// pattern outside it) against the float-rounded glibc double exp: at most
// 1 ulp (e.g. exp(2^-24) = 1 where the correctly rounded value is 1 + 2^-23).
template <class T> struct fexp_int;
template <> struct fexp_int<float> { using I = std::int32_t; };
template <> struct fexp_int<f2> { using I = si2; };
template <> struct fexp_int<f4> { using I = si4; };
template <> struct fexp_int<f8> { using I = si8; };
template <> struct fexp_int<f16> { using I = si16; };
template <class T> HRX_FMATH_VI T exp_ff(T x) {
    using I = typename fexp_int<T>::I;
    constexpr float kShift = 0x1.8p23f;  // kd - kShift rounds x log2 e to the integer n
    T c = x < -104.0f ? T{} - 104.0f : x;
    c = c > 89.0f ? T{} + 89.0f : c;
    const T kd = c * 0x1.715476p+0f + kShift;
    const T n = kd - kShift;
    const T r = (c - n * 0x1.62e4p-1f) - n * 0x1.7f7d1cp-20f;
    T q = T{} + (1.0f / 5040.0f);
    q = q * r + (1.0f / 720.0f);
    q = q * r + (1.0f / 120.0f);
    q = q * r + (1.0f / 24.0f);
    q = q * r + (1.0f / 6.0f);
    q = q * r + 0.5f;
    const T p = 1.0f + (r + (r * r) * q);
    I ni;
    __builtin_memcpy(&ni, &kd, sizeof ni);
    ni = ni - 0x4B400000;  // the low bits of kd's bits hold n
    const I n1 = ni >> 1, n2 = ni - n1;
    const I b1 = (n1 + 127) << 23, b2 = (n2 + 127) << 23;
    T s1, s2;
    __builtin_memcpy(&s1, &b1, sizeof s1);
    __builtin_memcpy(&s2, &b2, sizeof s2);
    const T res = (p * s1) * s2;
    return x != x ? x : res;
}
// Note [float kernels in float]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// log, log2, log10, log1p and expm1 compute in float too (tanh did until
// Note [float tanh in double])
// (2026-12-05), on whole registers as exp_ff (16 lanes on AVX-512, 8 with
// AVX2, 4 on the baseline), with the roundings that matter carried as float
// pairs (TwoSum, Dekker products by 12-bit halves) so the result stays below
// 1 ulp from the exact value: measured max 0.82 (log), 0.78 (log2), 0.74
// (log10), 0.83 (log1p), 0.73 (expm1), 0.69 (tanh) over 10^7 random bit
// patterns plus a dense sweep each, against long double
// (bench/results/math_accuracy.json). Only IEEE float operations and integer
// bit operations, no FMA: every vector width and the scalar instance
// (T = float) give the same bits. Single-thread kernel time on this Xeon
// (AVX-512, 2026-12-05, 64 K floats in cache): log 0.51 ns/value against
// 1.64 for the double kernel it replaces, log2 0.68 (1.69), log1p 0.63
// (1.70), expm1 0.95 (1.26), tanh 1.37 (1.69). A float-pair sin/cos/tan
// (double reduction, float polynomials) was measured too and dropped: 1.2
// ns against 1.0 for the double kernel with float-sized polynomials
// (sin_short), tan 1.9 against 1.65; atan with one division instead of two
// (a float division picks c) was slower as well (1.86 against 1.71).
template <class T> using fint = typename fexp_int<T>::I;
template <class T> HRX_FMATH_VI fint<T> ibits(T x) { fint<T> i; __builtin_memcpy(&i, &x, sizeof i); return i; }
template <class T> HRX_FMATH_VI T ifrom(fint<T> i) { T x; __builtin_memcpy(&x, &i, sizeof x); return x; }
template <class T> HRX_FMATH_VI T i2f(fint<T> i) {
    if constexpr (std::is_same_v<T, float>) return static_cast<float>(i);
    else return __builtin_convertvector(i, T);
}
template <class T> HRX_FMATH_VI T fsplat(float c) { return T{} + c; }
template <class T> HRX_FMATH_VI T fabsf_(T x) { return ifrom<T>(ibits(x) & 0x7fffffff); }
// s + e = a + b exactly (Knuth's TwoSum: no condition on the magnitudes).
template <class T> HRX_FMATH_VI T two_sum(T a, T b, T& e) {
    const T s = a + b, bb = s - a;
    e = (a - (s - bb)) + (b - bb);
    return s;
}

// x = 2^k (1 + f) with 1 + f in [sqrt(1/2), sqrt 2) for a positive finite
// float (subnormals scaled by 2^23 first); log(1 + f) = f - hfsq + r with
// hfsq = f^2 / 2 and r = s (hfsq + R), s = f / (2 + f), R = 2 atanh(s) / s - 2
// by its Taylor series to s^8 (|s| <= 0.1716: the rest is below 2^-33
// relative). log(1 + f) = 2s + sR and f - 2s = s f = hfsq - s hfsq give it.
template <class T> struct flog_parts { T k, f, hfsq, r; };
template <class T> HRX_FMATH_VI flog_parts<T> flog_reduce(T x) {
    using I = fint<T>;
    const I u0 = ibits(x);
    const auto sub = u0 < 0x00800000;
    const I u = sub ? ibits<T>(x * 0x1p23f) : u0;
    const I t = u - 0x3f3504f3;  // the bits of sqrt(1/2): t >> 23 is k
    const I kq = t >> 23;
    flog_parts<T> p;
    p.k = i2f<T>(sub ? kq - 23 : kq);
    p.f = ifrom<T>(u - (kq << 23)) - 1.0f;  // exact: 1 + f is in [0.7, 1.42]
    const T s = p.f / (2.0f + p.f);
    const T z = s * s, w = z * z;
    const T R = z * ((2.0f / 3.0f) + w * (2.0f / 7.0f)) + w * ((2.0f / 5.0f) + w * (2.0f / 9.0f));
    p.hfsq = 0.5f * p.f * p.f;
    p.r = s * (p.hfsq + R);
    return p;
}
// The special values are picked by integer compares of the bits, one per
// select, each select with its own value: GCC 12 merges two selects of the
// same value (x != x ? x and x == inf ? x, say) into one select on an OR of
// the masks, which it then evaluates lane by lane.
template <class T> HRX_FMATH_VI auto isnan_i(T x) { return (ibits(x) & 0x7fffffff) > 0x7f800000; }
// A positive finite argument for flog_reduce (others compute log 1, for the selects of flog_finish).
template <class T> HRX_FMATH_VI T flog_arg(T x) {
    const fint<T> one = fint<T>{} + 0x3f800000;
    fint<T> a = ibits(x);
    a = a > 0 ? a : one;  // +0 and every negative (sign bit set) give 1
    return ifrom<T>(a < 0x7f800000 ? a : one);
}
// The special values: log(x < 0) = NaN, log +-0 = -inf, log inf = inf, NaN stays.
template <class T> HRX_FMATH_VI T flog_finish(T x, T res) {
    const fint<T> u = ibits(x);
    fint<T> r = ibits(res);
    r = u < 0 ? fint<T>{} + 0x7fc00000 : r;
    r = (u & 0x7fffffff) == 0 ? fint<T>{} + static_cast<std::int32_t>(0xff800000u) : r;
    r = u == 0x7f800000 ? fint<T>{} + 0x7f800000 : r;
    r = isnan_i(x) ? u : r;
    return ifrom<T>(r);
}
constexpr float kLn2Hif = 0x1.62e4p-1f;  // 15 bits: k * kLn2Hif is exact
constexpr float kLn2Lof = 0x1.7f7d1cp-20f;
template <class T> HRX_FMATH_VI T log_ff(T x) {
    const flog_parts<T> p = flog_reduce(flog_arg(x));
    const T res = p.k * kLn2Hif - ((p.hfsq - (p.r + p.k * kLn2Lof)) - p.f);
    return flog_finish(x, res);
}
// log2 and log10: log(1 + f) as hi + lo with hi's low 12 bits clear, so
// hi * C_hi (C_hi: 12 bits) is exact; k C + hi C_hi is summed with its error.
template <class T> HRX_FMATH_VI T log_scaled_ff(T x, float chi, float clo, float khi, float klo) {
    const flog_parts<T> p = flog_reduce(flog_arg(x));
    const T hi = ifrom<T>(ibits<T>(p.f - p.hfsq) & static_cast<std::int32_t>(0xfffff000u));
    const T lo = ((p.f - hi) - p.hfsq) + p.r;
    const T kh = p.k * khi;  // exact (k: 8 bits, khi: 12 bits)
    T e;
    const T w = two_sum<T>(kh, hi * chi, e);
    const T res = w + ((e + p.k * klo) + (lo * chi + (hi + lo) * clo));
    return flog_finish(x, res);
}
template <class T> HRX_FMATH_VI T log2_ff(T x) {
    return log_scaled_ff(x, 0x1.714p+0f, 0x1.47652cp-12f, 1.0f, 0.0f);
}
template <class T> HRX_FMATH_VI T log10_ff(T x) {
    return log_scaled_ff(x, 0x1.bcap-2f, 0x1.7b1526p-14f, 0x1.344p-2f, 0x1.3509f8p-18f);
}
// log1p: u = 1 + x rounds with an error c (exact by TwoSum); log(u + c) =
// log u + c / u to 2^-48 relative. |x| < 2^-24 gives u = 1, c = x: x itself.
template <class T> HRX_FMATH_VI T log1p_ff(T x) {
    T c;
    const T u = two_sum<T>(fsplat<T>(1.0f), x, c);
    const T a = flog_arg(u);
    const flog_parts<T> p = flog_reduce(a);
    const T cu = c / a;
    const T res = p.k * kLn2Hif - ((p.hfsq - (p.r + (p.k * kLn2Lof + cu))) - p.f);
    using I = fint<T>;
    const I ux = ibits(x), uu = ibits(u);
    I r = ibits(res);
    r = uu < 0 ? I{} + 0x7fc00000 : r;  // x < -1 (1 + x is exact there, so negative)
    r = uu == 0 ? I{} + static_cast<std::int32_t>(0xff800000u) : r;  // x = -1
    r = ux == 0x7f800000 ? I{} + 0x7f800000 : r;
    r = (ux & 0x7fffffff) == 0 ? (ux & static_cast<std::int32_t>(0x80000000u)) : r;  // keeps -0
    r = isnan_i(x) ? ux : r;
    return ifrom<T>(r);
}
// a * b = p + e exactly (Dekker: 12-bit halves by masking, exact products).
template <class T> HRX_FMATH_VI T two_prod(T a, T b, T& e) {
    const T p = a * b;
    const T ah = ifrom<T>(ibits(a) & static_cast<std::int32_t>(0xfffff000u)), al = a - ah;
    const T bh = ifrom<T>(ibits(b) & static_cast<std::int32_t>(0xfffff000u)), bl = b - bh;
    e = (((ah * bh - p) + ah * bl) + al * bh) + al * bl;
    return p;
}
// e^x - 1 as hi + lo (lo a few ulps of hi) for x in [-20, 41.5] (n <= 60);
// also p = e^r - 1 and n, for expm1_ff's path beyond.
template <class T> HRX_FMATH_VI T expm1_pair(T x, T& lo, T& p_out, fint<T>& n_out) {
    using I = fint<T>;
    constexpr float kShift = 0x1.8p23f;
    const T kd = x * 0x1.715476p+0f + kShift;
    const T n = kd - kShift;
    const T rh = x - n * kLn2Hif;  // exact
    T cr;
    const T r = two_sum<T>(rh, -(n * kLn2Lof), cr);
    T q = fsplat<T>(1.0f / 40320.0f);
    q = q * r + (1.0f / 5040.0f);
    q = q * r + (1.0f / 720.0f);
    q = q * r + (1.0f / 120.0f);
    q = q * r + (1.0f / 24.0f);
    q = q * r + (1.0f / 6.0f);  // q: (e^r - 1 - r - r^2/2) / r^3
    T rre;
    const T rr = two_prod(r, r, rre);  // r^2 / 2 exactly, as 0.5 rr + 0.5 rre
    const T plo = 0.5f * rre + ((rr * r) * q + (cr + cr * r));
    const T pl = 0.5f * rr + plo;  // p = r + pl
    const I ni = ibits(kd) - 0x4B400000;
    const I nc = ni < 60 ? ni : I{} + 60;
    const T s = ifrom<T>((nc + 127) << 23);
    const T sm1 = s - 1.0f;
    const T e0 = n >= 0.0f ? (s - sm1) - 1.0f : s - (sm1 + 1.0f);  // exact error of s - 1
    T e1;
    const T t1 = two_sum<T>(sm1, s * r, e1);
    lo = s * (0.5f * rr) + (s * plo + (e1 + e0));
    p_out = r + pl;
    n_out = ni;
    return t1;
}
// expm1: x = n ln2 + r as exp_ff, with r's rounding error cr kept (TwoSum);
// e^(r + cr) - 1 = r + r^2/2 + (r^3 q(r) + cr (1 + r)), q the Taylor terms
// to r^8 (the rest is below 2^-31 relative), r^2 exact as a pair
// (two_prod). Then 2^n (1 + p) - 1 = (2^n - 1) + 2^n r + 2^n (...), summed
// with the errors of the first sum and of 2^n - 1 (expm1_pair). n > 60
// (where -1 is below 2^-60 relative): (1 + p) 2^n1 2^n2 as exp_ff.
template <class T> HRX_FMATH_VI T expm1_ff(T x) {
    using I = fint<T>;
    T c = x < -20.0f ? fsplat<T>(-20.0f) : x;  // expm1 is -1 in float below -17.4
    c = c > 89.0f ? fsplat<T>(89.0f) : c;
    T lo, p;
    I ni;
    const T hi = expm1_pair(c, lo, p, ni);
    const T small = hi + lo;
    const I n1 = ni >> 1, n2 = ni - n1;
    const T big = ((1.0f + p) * ifrom<T>((n1 + 127) << 23)) * ifrom<T>((n2 + 127) << 23);
    T res = ni > 60 ? big : small;
    res = (ibits(x) & 0x7fffffff) == 0 ? ifrom<T>(ibits(x) & static_cast<std::int32_t>(0x80000000u)) : res;  // -0
    return isnan_i(x) ? x : res;
}
// e^a - 1 in double for tanh_f (Note [float tanh in double]): a = n ln2 +
// r (Cody-Waite), e^r - 1 by Taylor to r^9 (Estrin; truncation below 2^-37
// relative), e^a - 1 = 2^n p + (2^n - 1) with 2^n - 1 exact (0 <= n <= 29).
template <class V> HRX_FMATH_VI V expm1_short(V a) {
    const V kd = a * kLog2e + kRound;
    const V n = kd - kRound;
    const V r = (a - n * kLn2Hi) - n * kLn2Lo;
    const V r2 = r * r, r4 = r2 * r2;
    const V q = ((0.5 + r * (1.0 / 6.0)) + r2 * (1.0 / 24.0 + r * (1.0 / 120.0))) +
                r4 * ((1.0 / 720.0 + r * (1.0 / 5040.0)) + r2 * (1.0 / 40320.0 + r * (1.0 / 362880.0)));
    const V s = pow2_of(kd);
    return s * (r + r2 * q) + (s - 1.0);
}
// Note [float tanh in double]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// tanh was a float kernel with float pairs (TwoSum, Dekker products and a
// corrected division, removed) to stay within 1 ulp. In double it
// needs none of that: tanh |x| = E / (E + 2) with E = expm1_short(2|x|), |x|
// clamped to 10 (tanh is 1 in float from 9.01), one division; the error is a
// few 2^-37 relative before the rounding to float (max 0.5000 ulp measured,
// against 0.69 for the float one), and the sign is copied back (+-0 stay). On this
// Xeon (AVX-512, one thread, in cache) it takes 1.2 ns a value against 1.35.
// The same in double for expm1 was slower than expm1_ff (1.04 against 0.89
// ns), so expm1 stays in float (2026-12-05).
template <class V> HRX_FMATH_VI F<V> tanh_f(F<V> xf) {
    V a = fabs(widen<V>(xf));
    a = a < 10.0 ? a : splat<V>(10.0);
    const V e = expm1_short(a + a);
    const F<V> r = copysignf<V>(narrow<V>(e / (e + 2.0)), xf);
    return xf != xf ? xf : r;
}
template <class V> HRX_FMATH_VI F<V> exp_f(F<V> x) { return exp_ff<F<V>>(x); }
template <class V> HRX_FMATH_VI F<V> exp2_f(F<V> x) {
    const F<V> r = narrow<V>(exp2_d(widen<V>(x)));
    return x != x ? x : r;
}
template <class V> HRX_FMATH_VI F<V> logistic_f(F<V> x) {
    const F<V> r = narrow<V>(1.0 / (1.0 + exp_d(-widen<V>(x))));
    return x != x ? x : r;
}
template <class V> HRX_FMATH_VI F<V> silu_f(F<V> x) {
    const V d = widen<V>(x);
    const F<V> r = narrow<V>(d / (1.0 + exp_d(-d)));
    const F<V> mz = from_fbits<V>(UF<V>{} + 0x80000000u);  // -0
    return x != x ? x : (x < -200.0f ? mz : r);
}
// sin (shift 0), cos (shift 1: cos x = sin(x + pi/2)) and tan for
// |x| < kTrigFast (other lanes are the caller's): the double reduction, then
// sin_short/cos_short, rounded once.
template <class V> HRX_FMATH_VI F<V> sincos_f(F<V> x, unsigned shift) {
    V kd;
    const V r = reduce_pio2(widen<V>(x), kd);
    const U<V> q = quadrant(kd) + shift;
    const V s = sin_short(r), c = cos_short(r);
    const V w = (q & 1) != 0 ? c : s;
    const F<V> r2 = narrow<V>((q & 2) != 0 ? -w : w);
    return shift == 0 ? (x == 0 ? x : r2) : r2;  // sin(-0) is -0, which r + r z p turns into +0
}
template <class V> HRX_FMATH_VI F<V> sin_fast(F<V> x) { return sincos_f<V>(x, 0); }
template <class V> HRX_FMATH_VI F<V> cos_fast(F<V> x) { return sincos_f<V>(x, 1); }
template <class V> HRX_FMATH_VI F<V> tan_fast(F<V> x) {
    V kd;
    const V r = reduce_pio2(widen<V>(x), kd);
    const U<V> odd = quadrant(kd) & 1;
    const V s = sin_short(r), c = cos_short(r);
    const F<V> t = narrow<V>(odd != 0 ? -c / s : s / c);
    return x == 0 ? x : t;
}
// atan: t = min(|x|, 1/|x|) (one division), c = round(8t)/8 and
// atan t = atan c + atan u with u = (t - c) / (1 + t c), |u| <= 1/16, whose
// series to u^13 is within 2^-55 relative; atan(j/8) comes from a table by
// selects. |x| > 1 gives pi/2 - atan(1/|x|). Error a few 1e-16 relative.
// t[j] per lane for a table of up to 16 doubles (64-byte aligned, 16
// entries readable): one two-register permute on AVX-512, loads by lane
// elsewhere. Exact: every host gives the same bits.
template <class V> HRX_FMATH_VI V lookup16(const double* t, U<V> j) {
    if constexpr (std::is_same_v<V, double>) {
        return t[j];
    } else if constexpr (sizeof(V) == 64) {
        V a, b;
        __builtin_memcpy(&a, t, sizeof a);
        __builtin_memcpy(&b, t + 8, sizeof b);
        return __builtin_shuffle(a, b, j);
    } else {
        V r;
#pragma GCC unroll 8
        for (unsigned k = 0; k < sizeof(V) / sizeof(double); ++k) r[k] = t[j[k]];
        return r;
    }
}
alignas(64) constexpr double kAtanJ8[16] = {0.0,
                               0x1.fd5ba9aac2f6ep-4,
                               0x1.f5b75f92c80ddp-3,
                               0x1.6f61941e4def1p-2,
                               0x1.dac670561bb4fp-2,
                               0x1.1e00babdefeb4p-1,
                               0x1.4978fa3269ee1p-1,
                               0x1.700a7c5784634p-1,
                               0x1.921fb54442d18p-1};
// atan t for t in [0, 1] in double (float atan and atan2 share it).
// atan c + atan u for u = num / den, c = j/8: the table value and the
// series of u to u^9 (|u| <= 1/16: the rest is below 2^-43 of u).
template <class V> HRX_FMATH_VI V atan_tail(V num, V den, U<V> j) {
    const V at = lookup16<V>(kAtanJ8, j);  // j <= 8
    const V u = num / den;
    const V z = u * u;
    const V p = (-1.0 / 3.0 + z * (1.0 / 5.0)) + (z * z) * (-1.0 / 7.0 + z * (1.0 / 9.0));
    return at + (u + u * z * p);
}
template <class V> HRX_FMATH_VI V atan_unit_d(V t) {
    const V kd = t * 8.0 + kRound;
    const V c = (kd - kRound) * 0.125;
    const U<V> j = bits(kd) & 15;
    return atan_tail(t - c, 1.0 + t * c, j);
}
// atan |x| with one division: |x| <= 1: c = round(8|x|)/8, u = (|x| - c) /
// (1 + c|x|); above: c = round(8/|x|)/8 counted by comparisons with the
// midpoints 8/(k - 1/2) (their rounding only moves |u| a hair past 1/16),
// u = (1/|x| - c) / (1 + c/|x|) = (1 - c|x|) / (|x| + c), and pi/2 - the sum.
constexpr double kAtanMid[8] = {16.0, 16.0 / 3, 16.0 / 5, 16.0 / 7, 16.0 / 9, 16.0 / 11, 16.0 / 13, 16.0 / 15};
template <class V> HRX_FMATH_VI F<V> atan_f(F<V> x) {
    const V a = fabs(widen<V>(x));
    const auto big = a > 1.0;
    const V kd = a * 8.0 + kRound;  // |x| <= 1
    U<V> jb = U<V>{} + 0;
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) jb = a < kAtanMid[k] ? jb + 1 : jb;
    const U<V> j = big ? jb : bits(kd) & 15;
    const V c = (from_bits<V>(j | 0x4338000000000000ULL) - kRound) * 0.125;  // j exactly, by kRound's bits
    const V ab = a < 0x1p60 ? a : splat<V>(0x1p60);  // inf: c = 0 and 0 * inf would be NaN
    const V w = atan_tail(big ? 1.0 - c * ab : a - c, big ? ab + c : 1.0 + a * c, j);
    const V res = big ? 0x1.921fb54442d18p+0 - w : w;
    const F<V> r = copysignf<V>(narrow<V>(res), x);
    return x != x ? x : r;
}
// erf: |x| < 1 by erf_small's Taylor series, up to 4 by 1 - e^(-z^2)
// erfcx(z) (kErfcxA's Chebyshev series by Clenshaw's recurrence), 1 beyond
// (erf(4) rounds to 1 in float); both computed, the lane picks one.
struct ErfCoefs {
    double c[18];
    constexpr ErfCoefs() : c{} {
        for (int n = 0; n <= 17; ++n) c[n] = erf_taylor_coef(n);
    }
};
inline constexpr ErfCoefs kErfC{};
template <class V> HRX_FMATH_VI V erf_small_v(V x) {
    const V z = x * x;
    V p = splat<V>(kErfC.c[17]);
#pragma GCC unroll 20
    for (int n = 16; n >= 0; --n) p = p * z + kErfC.c[n];
    return 0x1.20dd750429b6dp+0 * (x * p);
}
template <class V> HRX_FMATH_VI V erfcx_mid_v(V z) {
    const V t = (2.0 * z - 5.0) / 3.0;
    V b = splat<V>(0.0), b1 = splat<V>(0.0);
#pragma GCC unroll 32
    for (int k = 25; k >= 1; --k) {
        const V nb = (2.0 * t) * b - b1 + kErfcxA[k];
        b1 = b;
        b = nb;
    }
    return t * b - b1 + kErfcxA[0];
}
template <class V> HRX_FMATH_VI F<V> erf_f(F<V> x) {
    const V a = fabs(widen<V>(x));
    const V s = erf_small_v(a < 1.0 ? a : splat<V>(1.0));
    V z = a < 1.0 ? splat<V>(1.0) : a;
    z = z > 4.0 ? splat<V>(4.0) : z;
    const V big = 1.0 - exp_d(-(z * z)) * erfcx_mid_v(z);
    const F<V> r = copysignf<V>(narrow<V>(a < 1.0 ? s : big), x);
    return x != x ? x : r;
}
}  // namespace detail::v
#pragma GCC diagnostic pop

inline float exp(float x) { return detail::v::exp_f<double>(x); }
inline float exp2(float x) { return detail::v::exp2_f<double>(x); }
inline float log(float x) { return detail::v::log_ff(x); }
inline float log2(float x) { return detail::v::log2_ff(x); }
inline float log10(float x) { return detail::v::log10_ff(x); }
inline float expm1(float x) { return detail::v::expm1_ff(x); }
inline float log1p(float x) { return detail::v::log1p_ff(x); }
inline float atan(float x) { return detail::v::atan_f<double>(x); }
inline float rsqrt(float x) { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(x))); }
inline float logistic(float x) { return detail::v::logistic_f<double>(x); }
inline float silu(float x) { return detail::v::silu_f<double>(x); }
inline float tanh(float x) { return detail::v::tanh_f<double>(x); }
inline float erf(float x) { return detail::v::erf_f<double>(x); }
inline float sin(float x) {
    if (!(std::fabs(x) < detail::kTrigFast)) return detail::sin_big(x);
    return detail::v::sin_fast<double>(x);
}
inline float cos(float x) {
    if (!(std::fabs(x) < detail::kTrigFast)) return detail::cos_big(x);
    return detail::v::cos_fast<double>(x);
}
float tan_big(float x);
inline float tan(float x) {
    if (!(std::fabs(x) < detail::kTrigFast)) return tan_big(x);
    return detail::v::tan_fast<double>(x);
}

// ---------------------------------------------------------------- the rest (fmath.cpp)
float cbrt(float x);
float sinturns(float x);
float costurns(float x);
float asin(float x);
float acos(float x);
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
