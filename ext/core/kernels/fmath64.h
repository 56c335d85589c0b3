// hrx::fmath's double kernels: exp, exp2, expm1, log, log2, log10, log1p, tanh,
// atan, sin, cos and tan of doubles, written once as templates over a GCC
// vector of doubles (Note [fmath vector kernels] in fmath.h) so that the
// scalar double functions (fmath64.cpp, the Loom interpreter's f64) and the
// `_f64` array forms (fmath.cpp, at each clone's width) run the same code and
// give the same bits on every host. Accuracy: Note [float64 kernels] below.
#pragma once
#include "kernels/fmath.h"

namespace hrx::fmath::detail {

// Note [float64 kernels]
// ~~~~~~~~~~~~~~~~~~~~~~
// A double result within 1 ulp needs a few bits more than double in the
// places where an error would reach the result unattenuated, and this host
// and the baseline have no FMA we may use (Note [fmath vector kernels]). So
// those places are double-double: Knuth's two-sum, Dekker's fast two-sum and
// Dekker's product with Veltkamp's splitting (exact a*b = p + e from IEEE
// multiplications and additions only); the rest (polynomial tails, whose
// error is scaled down by the size of the term) is plain double. Each kernel
// ends with one rounding of hi + lo, where lo carries the terms below hi's
// ulp; its error is that rounding (0.5 ulp) plus a few hundredths of an ulp.
//   exp, exp2: x = (16 m + j) ln2/16 + r (exp2: x = m + j/16 + t exactly,
//     r = t ln2), |r| <= ln2/32, n ln2/16 exact (ln2's head has 32 bits);
//     e^x = 2^m 2^(j/16) e^r with 2^(j/16) a double-double from a 16-entry
//     table (one two-register permute on AVX-512) and E = e^r - 1 (Taylor to
//     r^8) in plain double: |E| < 0.022 scales its rounding down, so
//     T + (Tlo + T E) rounds once; then 2^m as two powers of two (the first
//     product exact, so a subnormal result rounds once more: up to 0.75 ulp).
//   expm1 (and tanh): x = n ln2 + r, |r| <= ln2/2, r = rh + rl by two-sum;
//     e^r - 1 = r + r^2/2 + r^3 q(r) (Taylor to r^13, truncation 4e-18) with
//     r^2 exact, so e^r - 1 is a double-double E; expm1 = 2^n E + (2^n - 1),
//     2^n - 1 exact by two-sum (exp's path beyond x = 41). A table here
//     (tried) was slower: lanes near 0 still need this path.
//   log, log2, log10, log1p: x = 2^k (1 + f), 1 + f in [sqrt(1/2), sqrt(2));
//     log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)), s = f / (2 + f), R the
//     atanh series to s^20; f - f^2/2 is exact (Dekker's square, fast
//     two-sum), so the log is a double-double L; log = k ln2 + L, log2 =
//     k + L log2e, log10 = k log10(2) + L log10(e), the constants
//     double-double. log1p: 1 + x = u + c by two-sum, log(u) + c/u.
//   tanh: E / (E + 2) for E = expm1(2|x|) kept double-double, divided with
//     one division and a residual from Dekker's product.
//   atan: t = min(|x|, 1/|x|), c = round(8t)/8 (1/|x| only to choose c, in
//     float), u = (t - c)/(1 + tc) formed as (1 - c|x|)/(|x| + c) above 1,
//     the numerator and denominator double-double; atan(c) from a
//     double-double table of 8 values (selects); the atan series of u to u^15.
//   sin, cos, tan: |x| < 2^20: x - n pi/2 with pi/2 in four parts (33, 33, 33
//     and 53 bits; n times each of the first three is exact), the reduced r a
//     double-double good to 2^-70 relative even for the x closest to a
//     multiple of pi/2 (their r is near 2^-55); sin and cos by Taylor to
//     r^17 and r^18 with r^2 exact, and sin's r^3/6 double-double (exact
//     cube, 1/6 as hi + lo); tan = sin / cos divided as tanh.
//     Larger |x|: exact Payne-Hanek reduction with 192 bits of 2/pi in
//     64-bit integers (fmath64.cpp), then the same polynomials.
//   asin, acos: |x| <= 1/2: s = |x|, asin s = s + s z P(z), z = s^2 (Taylor
//     to s^49, truncation below 2^-58); above: z = (1 - |x|)/2 exactly, s =
//     sqrt z as a double-double (residual by Dekker's square), asin |x| =
//     pi/2 - 2 asin s, acos x = 2 asin s or pi - 2 asin s; pi/2 and pi
//     double-double. The error is the final rounding plus below 0.2 ulp.
//   atan2: t = min/max of |y|, |x| as a double-double quotient, atan's table
//     and series (as atan), then pi/2 - w and pi - w as double-doubles.
//   sinh, cosh: |x| < 1 (sinh) Taylor to x^19; up to 22 (e^a -+ e^-a)/2 with
//     e^a double-double from exp_core and e^-a its reciprocal with one
//     residual step; beyond, e^a / 2 scaled by two powers of two.
// Special values (+-0, subnormals, +-inf, NaN, the overflow and underflow
// thresholds) follow C99 Annex F as NumPy's loops do; a NaN input is returned
// as it is. Measured: bench/math_accuracy_f64.py (the Note [Loom math
// accuracy] in fmath.cpp has the figures).
// Speed (2026-12-05, Xeon with AVX-512, one thread, 2 M doubles in
// uniform(0.01, 10)): the AVX-512 array forms take 1.1 (exp), 2.5 (expm1),
// 2.1 (log), 2.5-3 (log2, log1p), 3.5 (atan), 3.7 (sin), 3.2-4.5 (tanh) and
// 4-5 (tan) ns per value, 3 to 8 times faster than glibc's functions called
// per value, but 1.7 to 3 times slower than NumPy's float64 loops (AVX-512
// with FMA and tables, which we may not use: FMA would change the bits
// between hosts) except sin and cos, where NumPy calls the C library and we
// are 2 to 4 times faster (bench/math_ufuncs_f64.py). Tried and dropped:
// expm1/tanh on exp's table (slower: lanes near 0 still need the Taylor
// path), log's 1/(2 + f) from a float reciprocal and Newton steps (slower).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
namespace v {

// ---------------------------------------------------------------- exact sums and products
// s + e = a + b exactly (Knuth); any magnitudes.
template <class V> HRX_FMATH_VI void two_sum(V a, V b, V& s, V& e) {
    s = a + b;
    const V bb = s - a;
    e = (a - (s - bb)) + (b - bb);
}
// s + e = a + b exactly when |a| >= |b| or a == 0 (Dekker).
template <class V> HRX_FMATH_VI void fast_two_sum(V a, V b, V& s, V& e) {
    s = a + b;
    e = b - (s - a);
}
// a = hi + lo with hi of 26 bits and lo of 27 (Veltkamp), |a| < 2^995.
template <class V> HRX_FMATH_VI void split(V a, V& hi, V& lo) {
    const V c = a * 134217729.0;  // 2^27 + 1
    hi = c - (c - a);
    lo = a - hi;
}
// p + e = a * b exactly (Dekker), |a|, |b| < 2^995 and no underflow.
template <class V> HRX_FMATH_VI void two_prod(V a, V b, V& p, V& e) {
    V ah, al, bh, bl;
    split(a, ah, al);
    split(b, bh, bl);
    p = a * b;
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}
template <class V> HRX_FMATH_VI void two_sqr(V a, V& p, V& e) {
    V ah, al;
    split(a, ah, al);
    p = a * a;
    e = ((ah * ah - p) + 2.0 * (ah * al)) + al * al;
}
// |a| with the sign of s.
template <class V> HRX_FMATH_VI V copysign(V a, V s) {
    return from_bits<V>((bits(a) & 0x7fffffffffffffffULL) | (bits(s) & 0x8000000000000000ULL));
}
constexpr double kInf64 = std::numeric_limits<double>::infinity();
constexpr double kNaN64 = std::numeric_limits<double>::quiet_NaN();

// ---------------------------------------------------------------- exp family
constexpr double kLn2Hi64 = 0x1.62e42fee00000p-1;  // 32 bits: n * kLn2Hi64 exact for |n| < 2^21
constexpr double kLn2Lo64 = 0x1.a39ef35793c76p-33;

// x = n ln2 + (rh + rl), kd = n + kRound; e^r - 1 = eh + el (double-double).
template <class V> HRX_FMATH_VI void exp_core(V x, V& kd, V& eh, V& el) {
    kd = x * kLog2e + kRound;
    const V n = kd - kRound;
    const V a = x - n * kLn2Hi64;  // exact: n * kLn2Hi64 is, and a is within a factor 2 of it (or n = 0)
    V rh, rl;
    two_sum(a, -(n * kLn2Lo64), rh, rl);  // n * kLn2Lo64's rounding is below 2^-76
    V p, pe;
    two_sqr(rh, p, pe);
    // r^3 (1/3! + r/4! + ... + r^10/13!)
    V q = splat<V>(1.0 / 6227020800.0);
    q = q * rh + 1.0 / 479001600.0;
    q = q * rh + 1.0 / 39916800.0;
    q = q * rh + 1.0 / 3628800.0;
    q = q * rh + 1.0 / 362880.0;
    q = q * rh + 1.0 / 40320.0;
    q = q * rh + 1.0 / 5040.0;
    q = q * rh + 1.0 / 720.0;
    q = q * rh + 1.0 / 120.0;
    q = q * rh + 1.0 / 24.0;
    q = q * rh + 1.0 / 6.0;
    V e1;
    fast_two_sum(rh, 0.5 * p, eh, e1);
    // e^(rh + rl) - 1 = (e^rh - 1) + rl e^rh, e^rh ~ 1 + rh
    el = e1 + (rl + (0.5 * pe + (rh * rl + (rh * p) * q)));
}
// 2^n for n in [-1022, 1023] held in kd.
template <class V> HRX_FMATH_VI V pow2_kd(V kd) { return from_bits<V>((bits(kd) - 0x4338000000000000ULL + 1023) << 52); }
// y * 2^n for n in [-1100, 1100] held in kd, as two exact powers of two
// (y * 2^n1 is exact for y near 1, so a subnormal result rounds once more).
template <class V> HRX_FMATH_VI V scale_kd(V y, V kd) {
    const U<V> nb = bits(kd) - (0x4338000000000000ULL - 2048);  // n + 2048
    const U<V> n1b = nb >> 1;                                   // floor(n/2) + 1024
    const V s1 = from_bits<V>((n1b - 1) << 52);
    const V s2 = from_bits<V>((nb - n1b - 1) << 52);
    return (y * s1) * s2;
}

// 2^(j/16) = kExp2J16Hi[j] + kExp2J16Lo[j].
alignas(64) constexpr double kExp2J16Hi[16] = {
    0x1.0000000000000p+0, 0x1.0b5586cf9890fp+0, 0x1.172b83c7d517bp+0, 0x1.2387a6e756238p+0,
    0x1.306fe0a31b715p+0, 0x1.3dea64c123422p+0, 0x1.4bfdad5362a27p+0, 0x1.5ab07dd485429p+0,
    0x1.6a09e667f3bcdp+0, 0x1.7a11473eb0187p+0, 0x1.8ace5422aa0dbp+0, 0x1.9c49182a3f090p+0,
    0x1.ae89f995ad3adp+0, 0x1.c199bdd85529cp+0, 0x1.d5818dcfba487p+0, 0x1.ea4afa2a490dap+0};
alignas(64) constexpr double kExp2J16Lo[16] = {
    0x0.0p+0, 0x1.8a62e4adc610bp-54, -0x1.19041b9d78a76p-55, 0x1.9b07eb6c70573p-54,
    0x1.6f46ad23182e4p-55, 0x1.ada0911f09ebcp-55, 0x1.d4397afec42e2p-56, 0x1.6324c054647adp-54,
    -0x1.bdd3413b26456p-54, -0x1.41577ee04992fp-55, 0x1.6e9f156864b27p-54, 0x1.c7c46b071f2bep-56,
    0x1.7a1cd345dcc81p-54, 0x1.11065895048ddp-55, 0x1.2ed02d75b3707p-55, -0x1.e9c23179c2893p-54};
// t[j] per lane for j < 16: one two-register permute on AVX-512 (vpermt2pd),
// lane loads elsewhere; the value does not depend on how.
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
// e^x: x = (16 m + j) ln2/16 + r, |r| <= ln2/32, e^x = 2^m 2^(j/16) e^r with
// 2^(j/16) double-double from the table and e^r - 1 = E in plain double
// (|E| < 0.022, so its rounding reaches the result scaled down 45 times):
// 2^m (T + (Tlo + T E)), rounded once before the scaling.
// 2^(n/16) e^r for n held in kd = n + kRound (n >> 4 in [-1080, 1025]) and
// |r| <= ln2/32: 2^m (T + (Tlo + T E)), E = e^r - 1 in plain double (|E| <
// 0.022, so its rounding reaches the result scaled down 45 times), rounded
// once before the scaling by two normal powers of two (the first product
// exact, so a subnormal result rounds once more).
template <class V> HRX_FMATH_VI V exp_tab(V kd, V r) {
    V p = splat<V>(1.0 / 40320.0);
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    const V e = r + (r * r) * p;
    const U<V> nu = bits(kd) - 0x4338000000000000ULL;  // n (two's complement)
    const U<V> j = nu & 15;
    const V t = lookup16<V>(kExp2J16Hi, j);
    const V y = t + (lookup16<V>(kExp2J16Lo, j) + t * e);
    const U<V> mb = ((nu + (4096ULL << 4)) >> 4) - 2048;  // m + 2048, m = n >> 4
    const U<V> m1b = mb >> 1;                             // floor(m/2) + 1024
    const V s1 = from_bits<V>((m1b - 1) << 52);
    const V s2 = from_bits<V>((mb - m1b - 1) << 52);
    return (y * s1) * s2;
}
// e^x: x = n ln2/16 + r.
template <class V> HRX_FMATH_VI V exp64(V x) {
    const V c = clamp(x, -746.0, 710.0);
    const V kd = c * 0x1.71547652b82fep+4 + kRound;  // 16 / ln2
    const V n = kd - kRound;
    const V r = (c - n * (kLn2Hi64 / 16)) - n * (kLn2Lo64 / 16);  // the first product and difference exact
    const V res = exp_tab(kd, r);
    return x != x ? x : res;
}
// 2^x: x = n/16 + t exactly, r = t ln2 (its rounding is below 2^-58 of the result).
template <class V> HRX_FMATH_VI V exp2_64(V x) {
    const V c = clamp(x, -1080.0, 1025.0);
    const V kd = c * 16.0 + kRound;
    const V r = (c - (kd - kRound) * 0.0625) * kLn2;
    const V res = exp_tab(kd, r);
    return x != x ? x : res;
}

// e^x - 1 = hi + lo (double-double) from exp_core's n and e^r - 1, for
// n <= 64 (2^n normal): 2^n (e^r - 1) + (2^n - 1), 2^n - 1 by two-sum.
template <class V> HRX_FMATH_VI void expm1_dd(V kd, V eh, V el, V& hi, V& lo) {
    const V s = pow2_kd(kd);
    V b, cc, e;
    two_sum(s, splat<V>(-1.0), b, cc);  // 2^n - 1 = b + cc exactly
    two_sum(s * eh, b, hi, e);
    lo = (e + cc) + s * el;
}
template <class V> HRX_FMATH_VI V expm1_64(V x) {
    const V c = clamp(x, -40.0, 710.0);  // expm1(-40) rounds to -1
    V kd, eh, el, hi, lo, s, t;
    exp_core(c, kd, eh, el);
    expm1_dd(kd, eh, el, hi, lo);
    // beyond 41 (n > 58) the -1 is below 2^-58 of the result: exp's path, which reaches 2^1024.
    fast_two_sum(splat<V>(1.0), eh, s, t);
    const V big = scale_kd(s + (t + el), kd);
    const V r = c > 41.0 ? big : hi + lo;
    return x != x ? x : copysign(r, x);  // expm1 has x's sign (and keeps -0)
}

// ---------------------------------------------------------------- log family
// log(1 + f) = lh + ll for f in [sqrt(1/2) - 1, sqrt(2) - 1], and rm ~ 1/(1 + f)
// (log1p's correction).
template <class V> HRX_FMATH_VI void log_poly(V f, V& lh, V& ll, V& rm) {
    const V d = 1.0 / (2.0 + f);
    const V s = f * d;
    const V z = s * s;
    const V p = log_series(z);
    V ff, ffe, l1;
    two_sqr(f, ff, ffe);
    const V hf = 0.5 * ff;
    fast_two_sum(f, -hf, lh, l1);
    ll = l1 + (s * (hf + z * p) - 0.5 * ffe);
    rm = (2.0 * d) * ((1.0 - s) + z);  // 2d / (1 + s) = 1 / (1 + f), to s^3
}
// x = 2^k (1 + f) for a positive finite x (subnormals included): returns k and f (exact).
template <class V> HRX_FMATH_VI V log_reduce(V x, V& f) {
    const auto sub = x < 0x1p-1022;
    const V xs = sub ? x * 0x1p52 : x;
    const U<V> u = bits(xs);
    const U<V> e = (u + 0x00095f619980c433ULL) >> 52;  // biased exponent of the reduced form
    const V m = from_bits<V>(u - ((e - 1023) << 52));
    const V k = (from_bits<V>(e | 0x4330000000000000ULL) - 0x1p52) - 1023.0;
    f = m - 1.0;
    return sub ? k - 52.0 : k;
}
template <class V> HRX_FMATH_VI V log_core(V x, V& lh, V& ll, V& rm) {
    V f;
    const V k = log_reduce(x, f);
    log_poly(f, lh, ll, rm);
    return k;
}
// The argument log_core may take, and the special results.
// (Selects test one comparison each and pick constants where they can:
// GCC 12 evaluates combined masks lane by lane, Note [fmath vector kernels].)
template <class V> HRX_FMATH_VI V log_arg64(V x) {
    // positive finite: bits in [1, 0x7fefffffffffffff]
    return bits(x) - 1 < 0x7fefffffffffffffULL ? x : splat<V>(1.0);
}
template <class V> HRX_FMATH_VI V log_special(V x, V r) {
    r = x == 0.0 ? splat<V>(-kInf64) : r;
    r = x < 0.0 ? splat<V>(kNaN64) : r;
    r = x == kInf64 ? splat<V>(kInf64) : r;
    return x != x ? x : r;
}
// k ln2 + (lh + ll) + tail, rounded once.
template <class V> HRX_FMATH_VI V log_sum(V k, V lh, V ll) {
    V a, b;
    fast_two_sum(k * kLn2Hi64, lh, a, b);
    return a + (b + (ll + k * kLn2Lo64));
}
template <class V> HRX_FMATH_VI V log64(V x) {
    V lh, ll, rm;
    const V k = log_core(log_arg64(x), lh, ll, rm);
    return log_special(x, log_sum(k, lh, ll));
}
constexpr double kLog2eLo = 0x1.777d0ffda0d24p-56;
constexpr double kLog10e = 0x1.bcb7b1526e50ep-2;
constexpr double kLog10eLo = 0x1.95355baaafad3p-57;
constexpr double kLog10_2Hi = 0x1.3441350800000p-2;  // 32 bits: k * kLog10_2Hi exact
constexpr double kLog10_2Lo = 0x1.f79fef311f12bp-34;
template <class V> HRX_FMATH_VI V log2_64(V x) {
    V lh, ll, rm;
    const V k = log_core(log_arg64(x), lh, ll, rm);
    V p, pe, a, b;
    two_prod(lh, splat<V>(kLog2e), p, pe);
    fast_two_sum(k, p, a, b);
    return log_special(x, a + (b + (pe + (lh * kLog2eLo + ll * kLog2e))));
}
template <class V> HRX_FMATH_VI V log10_64(V x) {
    V lh, ll, rm;
    const V k = log_core(log_arg64(x), lh, ll, rm);
    V p, pe, a, b;
    two_prod(lh, splat<V>(kLog10e), p, pe);
    fast_two_sum(k * kLog10_2Hi, p, a, b);
    return log_special(x, a + (b + ((pe + k * kLog10_2Lo) + (lh * kLog10eLo + ll * kLog10e))));
}
template <class V> HRX_FMATH_VI V log1p64(V x) {
    V u, c;
    two_sum(splat<V>(1.0), x, u, c);
    V f;
    V k = log_reduce(log_arg64(u), f);
    // x near 0 (k = 0): f = x exactly, no correction
    const auto near0 = fabs(x - 0.0607) < 0.353;  // (-0.2923, 0.4137): 1 + x in [sqrt(1/2), sqrt(2))
    f = near0 ? x : f;
    k = near0 ? splat<V>(0.0) : k;
    c = near0 ? splat<V>(0.0) : c;
    V lh, ll, rm;
    log_poly(f, lh, ll, rm);
    // c / u = c 2^-k / (1 + f); k >= -53 here, and beyond 1022 (2^-k not
    // normal) c 2^-1022 is still below 2^-50 while the result is above 700.
    const V kc = clamp(k, -100.0, 1022.0);
    const V sk = from_bits<V>(((0x4338000000000000ULL + 1023) - bits(kc + kRound)) << 52);  // 2^-k
    V a, b;
    fast_two_sum(k * kLn2Hi64, lh, a, b);
    // log1p has x's sign (and keeps -0); then u's specials: u == 0 (x = -1),
    // u < 0 (x < -1, -inf), u = inf, and a NaN x returned as it is.
    const V r = copysign(a + (b + ((ll + k * kLn2Lo64) + (c * sk) * rm)), x);
    return log_special(u, r);
}

// ---------------------------------------------------------------- tanh
// n / d for double-doubles (nh + nl) / (dh + dl), |nl| and |dl| within
// about an ulp of nh and dh (first order in dl / dh), rounded once.
template <class V> HRX_FMATH_VI V dd_div(V nh, V nl, V dh, V dl) {
    const V rd = 1.0 / dh;
    const V q = nh * rd;
    V p, pe;
    two_prod(q, dh, p, pe);
    return q + ((((nh - p) - pe) + nl) - q * dl) * rd;
}
template <class V> HRX_FMATH_VI V tanh64(V x) {
    const V a = fabs(x);
    V hi, lo, kd, eh, el;
    exp_core(a < 20.0 ? a + a : splat<V>(40.0), kd, eh, el);  // tanh(20) rounds to 1
    expm1_dd(kd, eh, el, hi, lo);
    fast_two_sum(hi, lo, hi, lo);  // dd_div's operands are normalised
    V dh, dt;
    two_sum(hi, splat<V>(2.0), dh, dt);
    const V r = dd_div(hi, lo, dh, dt + lo);
    return x != x ? x : copysign(r, x);
}

// ---------------------------------------------------------------- atan
alignas(64) constexpr double kAtanHi[16] = {0.0,
                               0x1.fd5ba9aac2f6ep-4,
                               0x1.f5b75f92c80ddp-3,
                               0x1.6f61941e4def1p-2,
                               0x1.dac670561bb4fp-2,
                               0x1.1e00babdefeb4p-1,
                               0x1.4978fa3269ee1p-1,
                               0x1.700a7c5784634p-1,
                               0x1.921fb54442d18p-1};
alignas(64) constexpr double kAtanLo[16] = {0.0,
                               -0x1.cd37686760c17p-59,
                               0x1.8ab6e3cf7afbdp-57,
                               -0x1.c63aae6f6e918p-56,
                               0x1.a2b7f222f65e2p-56,
                               -0x1.928df287a668fp-58,
                               0x1.2419a87f2a458p-56,
                               -0x1.8c34d25aadef6p-56,
                               0x1.1a62633145c07p-55};
constexpr double kPio2Hi = 0x1.921fb54442d18p+0;
constexpr double kPio2Lo = 0x1.1a62633145c07p-54;
// atan(c) + atan(u) = wh + wl for u = (nh + nl) / (dh + dl) (normalised
// double-doubles, |u| <= 1/16) and atan(c) = ah + al: u divided with one
// residual (Dekker's product), then the atan series to u^15.
template <class V> HRX_FMATH_VI void atan_tail(V nh, V nl, V dh, V dl, V ah, V al, V& wh, V& wl) {
    const V rd = 1.0 / dh;
    const V uh = nh * rd;
    V p, pe;
    two_prod(uh, dh, p, pe);
    const V ul = ((((nh - p) - pe) + nl) - uh * dl) * rd;
    const V z = uh * uh;
    V q = splat<V>(-1.0 / 15.0);
    q = q * z + 1.0 / 13.0;
    q = q * z - 1.0 / 11.0;
    q = q * z + 1.0 / 9.0;
    q = q * z - 1.0 / 7.0;
    q = q * z + 1.0 / 5.0;
    q = q * z - 1.0 / 3.0;
    fast_two_sum(ah, uh, wh, wl);
    wl = wl + (al + (ul + uh * z * q));
}
template <class V> HRX_FMATH_VI V atan64(V x) {
    const V a = clamp(fabs(x), 0.0, 0x1p60);  // beyond 2^60 atan rounds to pi/2
    const auto big = a > 1.0;
    // t = min(a, 1/a) only chooses c: the float reciprocal is near enough.
    const V tr = widen<V>(narrow<V>(splat<V>(1.0)) / narrow<V>(big ? a : splat<V>(1.0)));
    const V t = big ? tr : a;
    const V kd = t * 8.0 + kRound;
    const V c = (kd - kRound) * 0.125;
    const U<V> j = bits(kd) & 15;
    const V ah = lookup16<V>(kAtanHi, j), al = lookup16<V>(kAtanLo, j);  // atan(j/8), j <= 8
    // u = (t - c) / (1 + t c): (a - c) / (1 + a c) below 1, (1 - a c) / (a + c) above.
    V xh, xl;
    split(a, xh, xl);
    const V ph = xh * c, pl = xl * c;  // exact: c has at most 4 bits
    V nh, nl, dh, dl, s1, e1;
    fast_two_sum(splat<V>(1.0), ph, s1, e1);  // 1 + a c (a, c <= 1)
    V s2, e2;
    fast_two_sum(a, c, s2, e2);  // a + c (a >= 1 >= c)
    nh = big ? 1.0 - ph : a - c;  // both exact (Sterbenz, or c's 3 fraction bits)
    nl = big ? -pl : splat<V>(0.0);
    dh = big ? s2 : s1;
    dl = big ? e2 : e1 + pl;
    fast_two_sum(nh, nl, nh, nl);  // nh or dh alone had only xh's 26 bits
    fast_two_sum(dh, dl, dh, dl);
    V wh, wl;
    atan_tail(nh, nl, dh, dl, ah, al, wh, wl);
    V bh, bl;
    fast_two_sum(splat<V>(kPio2Hi), -wh, bh, bl);
    bl = bl + (kPio2Lo - wl);
    const V r = big ? bh + bl : wh + wl;
    return x != x ? x : copysign(r, x);
}

// ---------------------------------------------------------------- atan2
constexpr double kPiHi = 0x1.921fb54442d18p+1;
constexpr double kPiLo = 0x1.1a62633145c07p-53;
// atan2(y, x): t = min(|y|, |x|) / max(|y|, |x|) <= 1 as th + tl (tl from
// the exact residual of the division, computed on operands scaled by a
// common power of two so Dekker's product neither overflows nor underflows;
// th < 2^-300 needs no tl), atan t = atan c + atan u as atan64 (t <= 1:
// u = (t - c) / (1 + t c), t - c exact by Sterbenz), then pi/2 - w where
// |y| > |x| and pi - w where x has its sign bit set, each as a double-double;
// the sign of y last. The special values (zeros, infinities) fall out of the
// same path with t = 0 (0/0) or 1 (inf/inf), as C99 Annex F and NumPy have them.
template <class V> HRX_FMATH_VI V atan2_64(V y, V x) {
    const V ay = fabs(y), ax = fabs(x);
    const auto swap = ay > ax;
    const V n = swap ? ax : ay, d = swap ? ay : ax;
    V th = n / d;
    th = d == 0.0 ? splat<V>(0.0) : th;       // atan2(+-0, +-0)
    th = n == kInf64 ? splat<V>(1.0) : th;    // both infinite: pi/4
    V sc = splat<V>(1.0);
    sc = d >= 0x1p512 ? splat<V>(0x1p-600) : sc;
    sc = d < 0x1p-512 ? splat<V>(0x1p600) : sc;
    const V ns = n * sc, ds = d * sc;
    V p, pe;
    two_prod(th, ds, p, pe);
    V tl = ((ns - p) - pe) / ds;
    tl = th < 0x1p-300 ? splat<V>(0.0) : tl;
    tl = th == 1.0 ? splat<V>(0.0) : tl;
    const V kd = th * 8.0 + kRound;
    const V c = (kd - kRound) * 0.125;
    const U<V> j = bits(kd) & 15;
    const V ah = lookup16<V>(kAtanHi, j), al = lookup16<V>(kAtanLo, j);
    V nh, nl, dh, dl, th_h, th_l;
    fast_two_sum(th - c, tl, nh, nl);  // th - c exact
    split(th, th_h, th_l);
    fast_two_sum(splat<V>(1.0), th_h * c, dh, dl);  // the products exact: c has at most 4 bits
    dl = dl + (th_l * c + tl * c);
    fast_two_sum(dh, dl, dh, dl);
    V wh, wl;
    atan_tail(nh, nl, dh, dl, ah, al, wh, wl);
    wh = th < 0x1p-300 ? th : wh;  // atan t = t there (and the residuals could be subnormal)
    wl = th < 0x1p-300 ? splat<V>(0.0) : wl;
    V bh, bl;
    fast_two_sum(splat<V>(kPio2Hi), -wh, bh, bl);
    bl = bl + (kPio2Lo - wl);
    wh = swap ? bh : wh;
    wl = swap ? bl : wl;
    V ch, cl;
    fast_two_sum(splat<V>(kPiHi), -wh, ch, cl);
    cl = cl + (kPiLo - wl);
    const auto neg = bits(x) >= 0x8000000000000000ULL;  // sign bit set: -0 too
    const V r = neg ? ch + cl : wh + wl;
    const V res = copysign(r, y);
    return y != y ? y : (x != x ? x : res);
}

// ---------------------------------------------------------------- asin, acos
// The correctly rounded square root of w >= 0 per lane (so the same bits on
// every host): SSE2's sqrtpd two lanes at a time on x86-64 (std::sqrt's
// errno path keeps GCC from vectorising it), the lanes one by one elsewhere.
template <class V> HRX_FMATH_VI V vsqrt(V w) {
    if constexpr (std::is_same_v<V, double>) {
        return __builtin_sqrt(w);
    } else {
        V r;
#if defined(__x86_64__) && defined(__GNUC__)
        constexpr unsigned L = sizeof(V) / sizeof(double);
#pragma GCC unroll 4
        for (unsigned k = 0; k < L; k += 2) {
            d2 h = {w[k], w[k + 1]};
            h = __builtin_ia32_sqrtpd(h);
            r[k] = h[0];
            r[k + 1] = h[1];
        }
#else
        for (unsigned k = 0; k < sizeof(V) / sizeof(double); ++k) r[k] = __builtin_sqrt(w[k]);
#endif
        return r;
    }
}
// asin s = s + s z P(z), z = s^2 <= 1/4: the Taylor coefficients
// (2n)! / (4^n n!^2 (2n + 1)) to n = 24 (truncation below 2^-58 of s).
constexpr double asin_coef(int n) {
    double c = 1.0;
    for (int i = 1; i <= n; ++i) c = c * (2 * i - 1) / (2 * i);
    return c / (2 * n + 1);
}
// The coefficients as a table: a loop calling asin_coef that GCC did not
// unroll computed them per element, 100 ns a value.
struct AsinCoefs {
    double c[25];
    constexpr AsinCoefs() : c{} {
        for (int k = 0; k <= 24; ++k) c[k] = asin_coef(k);
    }
};
inline constexpr AsinCoefs kAsinC{};
// sum c[k + 1] z^k for k < 24 in Estrin's scheme (pairs, then pairs of
// pairs by z^2, z^4, z^8, z^16): a dependency chain of 6 steps instead of
// Horner's 24, which kept the vector units waiting.
template <class V> HRX_FMATH_VI V asin_poly(V z) {
    V a[12];
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) a[i] = kAsinC.c[2 * i + 1] + z * kAsinC.c[2 * i + 2];
    const V z2 = z * z, z4 = z2 * z2, z8 = z4 * z4, z16 = z8 * z8;
    V b[6];
#pragma GCC unroll 6
    for (int i = 0; i < 6; ++i) b[i] = a[2 * i] + z2 * a[2 * i + 1];
    const V d0 = b[0] + z4 * b[1], d1 = b[2] + z4 * b[3], d2 = b[4] + z4 * b[5];
    return (d0 + z8 * d1) + z16 * d2;
}
// The same series to z^11 (truncation below 2^-33 of s for z <= 1/4), for
// the float kernels.
template <class V> HRX_FMATH_VI V asin_poly_f(V z) {
    V a[6];
#pragma GCC unroll 6
    for (int i = 0; i < 6; ++i) a[i] = kAsinC.c[2 * i + 1] + z * kAsinC.c[2 * i + 2];
    const V z2 = z * z, z4 = z2 * z2, z8 = z4 * z4;
    return ((a[0] + z2 * a[1]) + z4 * (a[2] + z2 * a[3])) + z8 * (a[4] + z2 * a[5]);
}
// |x| <= 1/2: s = |x|, z = s^2; above: z = (1 - |x|)/2 (exact) and s = sqrt z
// as sh + sl (the residual z - sh^2 exact by Dekker's square), with
// asin |x| = pi/2 - 2 asin s and acos |x| = 2 asin s. tail = sl + s z P(z).
template <class V> HRX_FMATH_VI void asin_parts(V a, V& sh, V& tail, decltype(V{} > V{})& big) {
    big = a > 0.5;
    const V w = (1.0 - a) * 0.5;
    const V z = big ? w : a * a;
    const V r = vsqrt(w > 0.0 ? w : splat<V>(0.0));
    V q, qe;
    two_sqr(r, q, qe);
    V rl = ((w - q) - qe) / (r + r);
    rl = r > 0.0 ? rl : splat<V>(0.0);
    sh = big ? r : a;
    const V sl = big ? rl : splat<V>(0.0);
    tail = sl + sh * z * asin_poly(z);
}
template <class V> HRX_FMATH_VI V asin64(V x) {
    const V a = fabs(x);
    V sh, tail;
    decltype(V{} > V{}) big;
    asin_parts(a, sh, tail, big);
    V h, l;
    two_sum(splat<V>(kPio2Hi), -(sh + sh), h, l);
    const V rb = h + (l + (kPio2Lo - (tail + tail)));
    V r = big ? rb : sh + tail;
    r = a > 1.0 ? splat<V>(kNaN64) : r;
    const V res = copysign(r, x);
    return x != x ? x : (a > 1.0 ? r : res);
}
template <class V> HRX_FMATH_VI V acos64(V x) {
    const V a = fabs(x);
    V sh, tail;
    decltype(V{} > V{}) big;
    asin_parts(a, sh, tail, big);
    // |x| <= 1/2: pi/2 -+ asin |x|; x > 1/2: 2 asin s; x < -1/2: pi - 2 asin s.
    const auto neg = x < 0.0;
    const V s2 = sh + sh, t2 = tail + tail;
    V mh, ml;
    two_sum(splat<V>(kPio2Hi), neg ? sh : -sh, mh, ml);
    const V rm = mh + (ml + (kPio2Lo + (neg ? tail : -tail)));
    V ph, pl;
    two_sum(splat<V>(kPiHi), -s2, ph, pl);
    const V rp = ph + (pl + (kPiLo - t2));
    V r = big ? (neg ? rp : s2 + t2) : rm;
    r = a > 1.0 ? splat<V>(kNaN64) : r;
    return x != x ? x : r;
}

// ---------------------------------------------------------------- sinh, cosh
// |x| < 1: sinh by Taylor, a + a z P(z) (to a^19, truncation below 2^-58);
// cosh and 1 <= |x| <= 22 (sinh): (e^a -+ e^-a) / 2 with e^a = 2^n (1 + E)
// double-double from exp_core and e^-a its reciprocal with one residual
// step (Dekker's product); beyond 22 (e^-2a below 2^-63) e^a / 2 scaled by two
// powers of two, which reaches 2^1024 (sinh and cosh overflow past 710.47).
// One exp_core for both paths: a clamped to 711; below 22.5 (n <= 33) e^a =
// 2^n (1 + E) as a double-double and its reciprocal, beyond e^a / 2 by
// scale_kd (the lanes of the other path compute garbage, not selected).
template <class V> HRX_FMATH_VI void exp_pair(V a, V& eh, V& el, V& rh, V& rl, V& big) {
    V kd, e0, e1, s, t;
    exp_core(clamp(a, 0.0, 711.0), kd, e0, e1);
    fast_two_sum(splat<V>(1.0), e0, s, t);
    t = t + e1;
    big = scale_kd(s + t, kd - 1.0);
    const V p2 = pow2_kd(kd);
    fast_two_sum(s * p2, t * p2, eh, el);
    rh = 1.0 / eh;
    V p, pe;
    two_prod(rh, eh, p, pe);
    rl = rh * (((1.0 - p) - pe) - el * rh);
}
template <class V> HRX_FMATH_VI V sinh64(V x) {
    const V a = fabs(x);
    const V z = a * a;
    V p = splat<V>(1.0 / 121645100408832000.0);  // 1/19!
    p = p * z + 1.0 / 355687428096000.0;
    p = p * z + 1.0 / 1307674368000.0;
    p = p * z + 1.0 / 6227020800.0;
    p = p * z + 1.0 / 39916800.0;
    p = p * z + 1.0 / 362880.0;
    p = p * z + 1.0 / 5040.0;
    p = p * z + 1.0 / 120.0;
    p = p * z + 1.0 / 6.0;
    const V small = a + a * z * p;
    V eh, el, rh, rl, big;
    exp_pair(a, eh, el, rh, rl, big);
    V h, l;
    two_sum(eh, -rh, h, l);
    const V mid = 0.5 * (h + (l + (el - rl)));
    V r = a < 1.0 ? small : mid;
    r = a > 22.0 ? big : r;
    return x != x ? x : copysign(r, x);
}
template <class V> HRX_FMATH_VI V cosh64(V x) {
    const V a = fabs(x);
    V eh, el, rh, rl, big;
    exp_pair(a, eh, el, rh, rl, big);
    V h, l;
    two_sum(eh, rh, h, l);
    V r = 0.5 * (h + (l + (el + rl)));
    r = a > 22.0 ? big : r;
    return x != x ? x : r;
}

// ---------------------------------------------------------------- pow
// x^y = e^(y log|x|) with log|x| = L a double-double good to about 2^-70
// relative (so y L, |y L| <= 746, is good to 2^-60 absolute: 0.02 ulp of the
// result): |x| = 2^k m, m in [sqrt(1/2), sqrt(2)), c = j/128 the nearest
// 128th (j in [90, 182]), invc = 1/c rounded, m invc = 1 + r exactly
// (Dekker's product; |r| < 2^-7.4), log m = -log(invc) + log1p(r) with
// -log(invc) a double-double from the table (exact values, computed to 200
// bits) and log1p(r) = r - r^2/2 (double-double) + r^3 P(r) (Taylor to r^11).
// j = 128 (m near 1) has invc = 1 and no table term, so L stays relatively
// accurate as x nears 1. Then y L = Ph + Pl (Dekker's product) and e^(Ph +
// Pl) by exp64's table path with Pl added to the reduced argument. The sign
// (odd integer y) and the special cases (C99 Annex F, NumPy's) by selects;
// x**2 is x * x.
alignas(64) constexpr double kPowInvC[93] = {
    0x1.6c16c16c16c17p+0, 0x1.6816816816817p+0, 0x1.642c8590b2164p+0, 0x1.6058160581606p+0,
    0x1.5c9882b931057p+0, 0x1.58ed2308158edp+0, 0x1.5555555555555p+0, 0x1.51d07eae2f815p+0,
    0x1.4e5e0a72f0539p+0, 0x1.4afd6a052bf5bp+0, 0x1.47ae147ae147bp+0, 0x1.446f86562d9fbp+0,
    0x1.4141414141414p+0, 0x1.3e22cbce4a902p+0, 0x1.3b13b13b13b14p+0, 0x1.3813813813814p+0,
    0x1.3521cfb2b78c1p+0, 0x1.323e34a2b10bfp+0, 0x1.2f684bda12f68p+0, 0x1.2c9fb4d812ca0p+0,
    0x1.29e4129e4129ep+0, 0x1.27350b8812735p+0, 0x1.2492492492492p+0, 0x1.21fb78121fb78p+0,
    0x1.1f7047dc11f70p+0, 0x1.1cf06ada2811dp+0, 0x1.1a7b9611a7b96p+0, 0x1.1811811811812p+0,
    0x1.15b1e5f75270dp+0, 0x1.135c81135c811p+0, 0x1.1111111111111p+0, 0x1.0ecf56be69c90p+0,
    0x1.0c9714fbcda3bp+0, 0x1.0a6810a6810a7p+0, 0x1.0842108421084p+0, 0x1.0624dd2f1a9fcp+0,
    0x1.0410410410410p+0, 0x1.0204081020408p+0, 0x1.0000000000000p+0, 0x1.fc07f01fc07f0p-1,
    0x1.f81f81f81f820p-1, 0x1.f44659e4a4271p-1, 0x1.f07c1f07c1f08p-1, 0x1.ecc07b301ecc0p-1,
    0x1.e9131abf0b767p-1, 0x1.e573ac901e574p-1, 0x1.e1e1e1e1e1e1ep-1, 0x1.de5d6e3f8868ap-1,
    0x1.dae6076b981dbp-1, 0x1.d77b654b82c34p-1, 0x1.d41d41d41d41dp-1, 0x1.d0cb58f6ec074p-1,
    0x1.cd85689039b0bp-1, 0x1.ca4b3055ee191p-1, 0x1.c71c71c71c71cp-1, 0x1.c3f8f01c3f8f0p-1,
    0x1.c0e070381c0e0p-1, 0x1.bdd2b899406f7p-1, 0x1.bacf914c1bad0p-1, 0x1.b7d6c3dda338bp-1,
    0x1.b4e81b4e81b4fp-1, 0x1.b2036406c80d9p-1, 0x1.af286bca1af28p-1, 0x1.ac5701ac5701bp-1,
    0x1.a98ef606a63bep-1, 0x1.a6d01a6d01a6dp-1, 0x1.a41a41a41a41ap-1, 0x1.a16d3f97a4b02p-1,
    0x1.9ec8e951033d9p-1, 0x1.9c2d14ee4a102p-1, 0x1.999999999999ap-1, 0x1.970e4f80cb872p-1,
    0x1.948b0fcd6e9e0p-1, 0x1.920fb49d0e229p-1, 0x1.8f9c18f9c18fap-1, 0x1.8d3018d3018d3p-1,
    0x1.8acb90f6bf3aap-1, 0x1.886e5f0abb04ap-1, 0x1.8618618618618p-1, 0x1.83c977ab2beddp-1,
    0x1.8181818181818p-1, 0x1.7f405fd017f40p-1, 0x1.7d05f417d05f4p-1, 0x1.7ad2208e0ecc3p-1,
    0x1.78a4c8178a4c8p-1, 0x1.767dce434a9b1p-1, 0x1.745d1745d1746p-1, 0x1.724287f46debcp-1,
    0x1.702e05c0b8170p-1, 0x1.6e1f76b4337c7p-1, 0x1.6c16c16c16c17p-1, 0x1.6a13cd1537290p-1,
    0x1.6816816816817p-1};
alignas(64) constexpr double kPowLogCHi[93] = {
    -0x1.68ac83e9c6a15p-2, -0x1.5d5bddf595f31p-2, -0x1.522ae0738a3d7p-2, -0x1.4718dc271c41cp-2,
    -0x1.3c25277333183p-2, -0x1.314f1e1d35ce3p-2, -0x1.269621134db91p-2, -0x1.1bf99635a6b95p-2,
    -0x1.1178e8227e47ap-2, -0x1.07138604d5864p-2, -0x1.f991c6cb3b37ap-3, -0x1.e530effe71013p-3,
    -0x1.d1037f2655e7bp-3, -0x1.bd087383bd8aap-3, -0x1.a93ed3c8ad9e5p-3, -0x1.95a5adcf70182p-3,
    -0x1.823c16551a3c0p-3, -0x1.6f0128b756ab9p-3, -0x1.5bf406b543db0p-3, -0x1.4913d8333b563p-3,
    -0x1.365fcb0159014p-3, -0x1.23d712a49c201p-3, -0x1.1178e8227e47ap-3, -0x1.fe89139dbd565p-4,
    -0x1.da7276384469ep-4, -0x1.b6ac88dad5b1dp-4, -0x1.9335e5d594988p-4, -0x1.700d30aeac0e8p-4,
    -0x1.4d3115d207eacp-4, -0x1.2aa04a44717a1p-4, -0x1.08598b59e3a06p-4, -0x1.ccb73cdddb2d0p-5,
    -0x1.894aa149fb34bp-5, -0x1.466aed42de3f9p-5, -0x1.0415d89e74440p-5, -0x1.8492528c8cac5p-6,
    -0x1.0205658935837p-6, -0x1.010157588de69p-7, 0x0p+0, 0x1.fe02a6b106799p-8,
    0x1.fc0a8b0fc03c4p-7, 0x1.7b91b07d5b126p-6, 0x1.f829b0e7832f8p-6, 0x1.39e87b9febd68p-5,
    0x1.77458f632dcffp-5, 0x1.b42dd711971b9p-5, 0x1.f0a30c01162a8p-5, 0x1.16536eea37ae3p-4,
    0x1.341d7961bd1d0p-4, 0x1.51b073f06183cp-4, 0x1.6f0d28ae56b4ep-4, 0x1.8c345d6319b23p-4,
    0x1.a926d3a4ad562p-4, 0x1.c5e548f5bc743p-4, 0x1.e27076e2af2eap-4, 0x1.fec9131dbeabcp-4,
    0x1.0d77e7cd08e5bp-3, 0x1.1b72ad52f67a2p-3, 0x1.29552f81ff521p-3, 0x1.371fc201e8f75p-3,
    0x1.44d2b6ccb7d1cp-3, 0x1.526e5e3a1b438p-3, 0x1.5ff3070a793d6p-3, 0x1.6d60fe719d21bp-3,
    0x1.7ab890210d907p-3, 0x1.87fa06520c911p-3, 0x1.9525a9cf456b6p-3, 0x1.a23bc1fe2b561p-3,
    0x1.af3c94e80bff3p-3, 0x1.bc286742d8cd4p-3, 0x1.c8ff7c79a9a20p-3, 0x1.d5c216b4fbb94p-3,
    0x1.e27076e2af2e8p-3, 0x1.ef0adcbdc5935p-3, 0x1.fb9186d5e3e29p-3, 0x1.0402594b4d041p-2,
    0x1.0a324e27390e2p-2, 0x1.1058bf9ae4ad4p-2, 0x1.1675cababa60fp-2, 0x1.1c898c16999fbp-2,
    0x1.22941fbcf7966p-2, 0x1.2895a13de86a4p-2, 0x1.2e8e2bae11d31p-2, 0x1.347dd9a987d56p-2,
    0x1.3a64c556945eap-2, 0x1.404308686a7e4p-2, 0x1.4618bc21c5ec2p-2, 0x1.4be5f957778a1p-2,
    0x1.51aad872df82ep-2, 0x1.5767717455a6cp-2, 0x1.5d1bdbf5809cap-2, 0x1.62c82f2b9c796p-2,
    0x1.686c81e9b14adp-2};
alignas(64) constexpr double kPowLogCLo[93] = {
    0x1.acd8a9145ff44p-57, -0x1.d5f75b9a23ae4p-59, -0x1.3840b263acb43p-56, -0x1.d8fb4c14c56eep-56,
    -0x1.152d81af5713ap-56, -0x1.22966f61a3c23p-56, -0x1.e0efadd9db02ap-56, 0x1.e9575c2124912p-56,
    -0x1.b8ce2d07f1cb7p-56, 0x1.24e912b16ec8bp-60, -0x1.ecca0cdf30143p-58, 0x1.f7627ef82f3f0p-57,
    0x1.3f3adb7b71cbcp-58, 0x1.1165504ad749ep-59, -0x1.bcafa9de97202p-57, -0x1.8a16283fdbd1cp-57,
    -0x1.6dcd318f4187ep-57, 0x1.37967087859b9p-59, 0x1.1f5b44c0df7f7p-61, 0x1.0d5604930f137p-58,
    -0x1.bea08d2dca256p-57, -0x1.51c7e9efae297p-57, 0x1.0e63a5f01c693p-58, 0x1.ac9f4215f9394p-58,
    -0x1.401fa71733017p-58, 0x1.002bf768e52d0p-58, 0x1.478a85704ccb7p-58, -0x1.a36a677b4c8b2p-59,
    -0x1.da7d0b1e10b2fp-60, -0x1.aea2c72d05c08p-58, 0x1.dd7009902bf32p-58, 0x1.e48fb0500efd5p-59,
    0x1.2ba0b44cfaee5p-59, 0x1.9badefe942718p-60, -0x1.c05cf1d753621p-59, 0x1.d192d0619fa68p-60,
    -0x1.27c8e8416e717p-60, -0x1.46662d417cecep-62, 0x0p+0, -0x1.e44b7e3711e7fp-67,
    -0x1.83092c5964281p-62, -0x1.6d80ab38e9430p-62, 0x1.33e3f04f1ef25p-60, -0x1.5bfa937f551b7p-59,
    0x1.8d3ca87b92968p-63, 0x1.0a34531f67db5p-59, 0x1.85f325c5bbacdp-59, 0x1.2189705cf74cap-58,
    -0x1.3599f227becbbp-58, -0x1.5b61c65e5741ap-58, -0x1.20db323097324p-59, -0x1.294d2f5668495p-58,
    -0x1.d7a16eab1e2adp-59, 0x1.2eb0bf7c0b0d9p-59, -0x1.61578001e015ap-60, -0x1.5746b9981b36cp-58,
    0x1.9a5dc5e9030adp-57, -0x1.fbe7ee5c69946p-57, 0x1.301771c407dc0p-57, 0x1.e6cb62af18a02p-62,
    0x1.7d3d950f87e23p-59, -0x1.546ff8a470d3ap-57, -0x1.bc60efafc6f6cp-58, 0x1.d551d97132e87p-57,
    -0x1.1072534a57e7dp-57, -0x1.9f7fdbfa08d9ap-57, -0x1.26fb3e2b1d1dap-57, 0x1.24dc46c1ea664p-57,
    0x1.a3398064df33ep-57, 0x1.cfce744870f57p-58, -0x1.4f689f8434011p-57, -0x1.a37794d03657dp-58,
    -0x1.61578001e015ep-59, 0x1.e8637950dc20dp-57, 0x1.355519b0de535p-57, -0x1.08ec217a5022dp-57,
    0x1.bdcfde8061c03p-56, 0x1.3f415699663ecp-63, 0x1.ce63eab883727p-61, 0x1.9f1a39d500e3cp-56,
    -0x1.dbd7ac258a2bdp-58, 0x1.7ad24c13f040fp-56, -0x1.1e99b72bd7bf2p-57, -0x1.16ea62c048cfbp-56,
    0x1.cbcd735d03424p-60, -0x1.f79f6c1059cdbp-57, -0x1.7a42642661c62p-61, -0x1.4b366b609027ap-58,
    -0x1.d8db0a7cc1543p-56, -0x1.fb2a49af933e8p-57, -0x1.7dc9c7c23801fp-56, -0x1.090a0dd59fe35p-58,
    0x1.710af840538e3p-56};

template <class V> HRX_FMATH_VI V gather(const double* t, U<V> j) {
    if constexpr (std::is_same_v<V, double>) {
        return t[j];
    } else {
        V r;
#pragma GCC unroll 8
        for (unsigned k = 0; k < sizeof(V) / sizeof(double); ++k) r[k] = t[j[k]];
        return r;
    }
}
// log x = lh + ll for a positive finite x (subnormals included).
template <class V> HRX_FMATH_VI void log_pow(V x, V& lh, V& ll) {
    const auto sub = x < 0x1p-1022;
    const V xs = sub ? x * 0x1p52 : x;
    const U<V> u = bits(xs);
    const U<V> e = (u + 0x00095f619980c433ULL) >> 52;
    const V m = from_bits<V>(u - ((e - 1023) << 52));
    V k = (from_bits<V>(e | 0x4330000000000000ULL) - 0x1p52) - 1023.0;
    k = sub ? k - 52.0 : k;
    const V jd = m * 128.0 + kRound;
    const U<V> j = (bits(jd) & 0xff) - 90;
    const V invc = gather<V>(kPowInvC, j);
    V p, pe, rh, rl;
    two_prod(m, invc, p, pe);
    fast_two_sum(p - 1.0, pe, rh, rl);  // p - 1 exact (Sterbenz)
    V q, qe;
    two_sqr(rh, q, qe);
    V a, b;
    fast_two_sum(rh, -0.5 * q, a, b);
    V P = splat<V>(1.0 / 11.0);
    P = P * rh - 1.0 / 10.0;
    P = P * rh + 1.0 / 9.0;
    P = P * rh - 1.0 / 8.0;
    P = P * rh + 1.0 / 7.0;
    P = P * rh - 1.0 / 6.0;
    P = P * rh + 1.0 / 5.0;
    P = P * rh - 1.0 / 4.0;
    P = P * rh + 1.0 / 3.0;
    const V tail = b + ((rl - rh * rl) - 0.5 * qe) + (rh * q) * P;
    // k ln2 + T + (a + tail)
    V s1, e1, s2, e2;
    fast_two_sum(k * kLn2Hi64, gather<V>(kPowLogCHi, j), s1, e1);
    two_sum(s1, a, s2, e2);
    const V lo = ((e1 + e2) + (gather<V>(kPowLogCLo, j) + k * kLn2Lo64)) + tail;
    fast_two_sum(s2, lo, lh, ll);
}
template <class V> HRX_FMATH_VI V pow64(V x, V y) {
    const V ax = fabs(x), ay = fabs(y);
    V lh, ll;
    log_pow(bits(ax) - 1 < 0x7fefffffffffffffULL ? ax : splat<V>(1.0), lh, ll);
    const V yc = ay < 0x1p900 ? y : copysign(splat<V>(0x1p900), y);
    V ph, pe;
    two_prod(yc, lh, ph, pe);
    const V pl = pe + yc * ll;
    const V c = clamp(ph, -746.0, 710.0);
    const V kd = c * 0x1.71547652b82fep+4 + kRound;  // 16 / ln2
    const V n = kd - kRound;
    const V r = ((c - n * (kLn2Hi64 / 16)) - n * (kLn2Lo64 / 16)) + pl;
    V res = exp_tab(kd, r);
    res = ph > 710.0 ? splat<V>(kInf64) : res;
    res = ph < -746.0 ? splat<V>(0.0) : res;
    // |x| = 0 or inf: 0 or inf by the sign of y (times the sign below)
    res = ax == 0.0 ? (y < 0.0 ? splat<V>(kInf64) : splat<V>(0.0)) : res;
    res = ax == kInf64 ? (y < 0.0 ? splat<V>(0.0) : splat<V>(kInf64)) : res;
    // y an odd integer / not an integer, by its magnitude's range.
    const V kd2 = (ay < 0x1p51 ? y : splat<V>(0.0)) + kRound;
    const U<V> yb = bits(y);
    U<V> odd = (kd2 - kRound) == y ? bits(kd2) & 1 : U<V>{} + 0;
    U<V> nonint = (kd2 - kRound) == y ? U<V>{} + 0 : U<V>{} + 1;
    odd = ay < 0x1p51 ? odd : ((yb & 1) != 0 ? U<V>{} + 0 : (yb >> 1) & 1);  // [2^51, 2^52): ulp 1/2
    nonint = ay < 0x1p51 ? nonint : yb & 1;
    odd = ay < 0x1p52 ? odd : yb & 1;  // [2^52, 2^53): ulp 1
    nonint = ay < 0x1p52 ? nonint : U<V>{} + 0;
    odd = ay < 0x1p53 ? odd : U<V>{} + 0;  // beyond: even
    const U<V> xs = bits(x) >> 63;
    res = (odd & xs) != 0 ? -res : res;
    res = x < 0.0 ? (x == -kInf64 ? res : (nonint != 0 ? splat<V>(kNaN64) : res)) : res;
    res = x != x ? x + y : res;
    res = y != y ? x + y : res;
    res = y == 2.0 ? x * x : res;  // x**2 == x * x, bit for bit
    res = ay == kInf64 ? (x == -1.0 ? splat<V>(1.0) : res) : res;
    // |x| < 1 with y = +-inf and |x| > 1: the generic path (y clamped to 2^900) gives 0 or inf
    res = x == 1.0 ? splat<V>(1.0) : res;
    res = y == 0.0 ? splat<V>(1.0) : res;
    return res;
}

// ---------------------------------------------------------------- sin, cos, tan
constexpr double kTrigFast64 = 0x1p20;
// x - n pi/2 = rh + rl for |x| < kTrigFast64; kd = n + kRound.
template <class V> HRX_FMATH_VI void reduce_pio2_64(V x, V& kd, V& rh, V& rl) {
    kd = x * 0x1.45f306dc9c883p-1 + kRound;
    const V n = kd - kRound;
    const V a = x - n * 0x1.921fb54400000p+0;  // exact
    V b, e1, c, e2;
    two_sum(a, -(n * 0x1.0b4611a600000p-34), b, e1);
    two_sum(b, -(n * 0x1.3198a2e000000p-69), c, e2);
    fast_two_sum(c, (e1 + e2) - n * 0x1.b839a252049c1p-104, rh, rl);
}
// sin and cos of r = rh + rl, |r| <= pi/4 (+ a little), as double-doubles.
template <class V> HRX_FMATH_VI void sincos_dd(V rh, V rl, V& sh, V& sl, V& ch, V& cl) {
    V zh, ze;
    two_sqr(rh, zh, ze);
    const V z = zh;
    // (sin r - r + r^3/6) / r^5, Taylor to r^17
    V ps = splat<V>(-1.0 / 355687428096000.0);
    ps = ps * z + 1.0 / 1307674368000.0;
    ps = ps * z - 1.0 / 6227020800.0;
    ps = ps * z + 1.0 / 39916800.0;
    ps = ps * z - 1.0 / 362880.0;
    ps = ps * z + 1.0 / 5040.0;
    ps = ps * z - 1.0 / 120.0;
    // (cos r - 1 + r^2/2) / r^4, Taylor to r^18
    V pc = splat<V>(-1.0 / 6402373705728000.0);
    pc = pc * z + 1.0 / 20922789888000.0;
    pc = pc * z - 1.0 / 87178291200.0;
    pc = pc * z + 1.0 / 479001600.0;
    pc = pc * z - 1.0 / 3628800.0;
    pc = pc * z + 1.0 / 40320.0;
    pc = pc * z - 1.0 / 720.0;
    pc = pc * z + 1.0 / 24.0;
    // sin(rh + rl) = sin rh + rl cos rh, with rh^3/6 double-double (r^3 from
    // the exact square, times 1/6 as a double-double): in plain double its
    // rounding alone reached 0.2 ulp of sin near pi/4.
    V c3, c3e, d, de, dh, dl;
    two_prod(rh, zh, c3, c3e);
    c3e = c3e + rh * ze;
    two_prod(c3, splat<V>(0x1.5555555555555p-3), d, de);
    de = de + (c3e * 0x1.5555555555555p-3 + c3 * 0x1.5555555555555p-57);
    fast_two_sum(rh, -d, dh, dl);
    fast_two_sum(dh, dl + ((rl * (1.0 - 0.5 * z) - de) - (rh * (z * z)) * ps), sh, sl);
    const V hz = 0.5 * zh;
    V t;
    fast_two_sum(splat<V>(1.0), -hz, ch, t);
    // cos(rh + rl) = cos rh - rl sin rh
    fast_two_sum(ch, (t - 0.5 * ze) + ((z * z) * pc - rh * rl), ch, cl);
}
// Quadrant q's sin (cos: q + 1) of r.
template <class V> HRX_FMATH_VI V sin_quadrant(U<V> q, V rh, V rl) {
    V sh, sl, ch, cl;
    sincos_dd(rh, rl, sh, sl, ch, cl);
    const V w = (q & 1) != 0 ? ch + cl : sh + sl;
    return (q & 2) != 0 ? -w : w;
}
template <class V> HRX_FMATH_VI V tan_quadrant(U<V> q, V rh, V rl) {
    V sh, sl, ch, cl;
    sincos_dd(rh, rl, sh, sl, ch, cl);
    const auto odd = (q & 1) != 0;
    const V t = dd_div(odd ? ch : sh, odd ? cl : sl, odd ? sh : ch, odd ? sl : cl);
    return odd ? -t : t;
}
// For |x| < kTrigFast64; other lanes are the caller's (fmath64.cpp's *_big).
template <class V> HRX_FMATH_VI V sin64_fast(V x) {
    V kd, rh, rl;
    reduce_pio2_64(x, kd, rh, rl);
    const V r = sin_quadrant<V>(bits(kd) & 3, rh, rl);
    return x == 0.0 ? x : r;  // keeps -0
}
template <class V> HRX_FMATH_VI V cos64_fast(V x) {
    V kd, rh, rl;
    reduce_pio2_64(x, kd, rh, rl);
    return sin_quadrant<V>((bits(kd) + 1) & 3, rh, rl);
}
template <class V> HRX_FMATH_VI V tan64_fast(V x) {
    V kd, rh, rl;
    reduce_pio2_64(x, kd, rh, rl);
    const V r = tan_quadrant<V>(bits(kd) & 3, rh, rl);
    return x == 0.0 ? x : r;
}

}  // namespace v

// ---------------------------------------------------------------- float kernels on fmath64's
// atan2 of floats: the float64 kernel (within 1 ulp of double) on the
// widened inputs, rounded once to float: within 0.5 + 2^-28 float ulp. asin,
// acos, sinh, cosh: the float64 kernels' reductions in plain double with
// shorter polynomials (errors a few 2^-53), rounded once. pow: e^(y ln|x|) from fmath.h's double cores (the
// product's error, |y ln x| <= 104 times a few 2^-53, is below 2^-43 of the
// result), rounded once, then the sign and NumPy's (C99's) special cases.
namespace v {
// asin, acos: asin64's reduction in plain double with asin_poly_f (error a
// few 2^-53 relative, then one rounding to float).
template <class V> HRX_FMATH_VI void asin_fd(V a, V& r, decltype(V{} > V{})& big) {
    big = a > 0.5;
    const V w = (1.0 - a) * 0.5;
    const V z = big ? w : a * a;
    const V s = big ? vsqrt(w > 0.0 ? w : splat<V>(0.0)) : a;
    r = s + s * z * asin_poly_f(z);
}
template <class V> HRX_FMATH_VI F<V> asin_f(F<V> xf) {
    const V x = widen<V>(xf), a = fabs(x);
    V r;
    decltype(V{} > V{}) big;
    asin_fd(a, r, big);
    r = big ? kPio2Hi - (r + r) : r;
    r = a > 1.0 ? splat<V>(kNaN64) : copysign(r, x);
    return xf != xf ? xf : narrow<V>(r);
}
template <class V> HRX_FMATH_VI F<V> acos_f(F<V> xf) {
    const V x = widen<V>(xf), a = fabs(x);
    V r;
    decltype(V{} > V{}) big;
    asin_fd(a, r, big);
    const V r2 = r + r;
    const V rb = x < 0.0 ? kPiHi - r2 : r2;
    r = big ? rb : kPio2Hi - copysign(r, x);
    r = a > 1.0 ? splat<V>(kNaN64) : r;
    return xf != xf ? xf : narrow<V>(r);
}
// sinh, cosh: e = e^|x| by exp_d (clamped, so float infinities come from the
// rounding), (e -+ 1/e) / 2; sinh below 1 by Taylor to x^11 (truncation
// below 2^-32).
template <class V> HRX_FMATH_VI F<V> sinh_f(F<V> xf) {
    const V x = widen<V>(xf), a = fabs(x);
    const V z = a * a;
    const V p = (1.0 / 6.0 + z * (1.0 / 120.0)) + (z * z) * ((1.0 / 5040.0 + z * (1.0 / 362880.0)) +
                                                          z * z * (1.0 / 39916800.0));
    const V e = exp_d(a);
    const V r = a < 1.0 ? a + a * z * p : 0.5 * (e - 1.0 / e);
    return xf != xf ? xf : narrow<V>(copysign(r, x));
}
template <class V> HRX_FMATH_VI F<V> cosh_f(F<V> xf) {
    const V a = fabs(widen<V>(xf));
    const V e = exp_d(a);
    const V r = 0.5 * (e + 1.0 / e);
    return xf != xf ? xf : narrow<V>(r);
}
// atan2 of floats in plain double: t = min/max of |y|, |x| (one division,
// exact to 2^-53), atan t as atan_f (atan c from kAtanJ8, the series of
// u = (t - c) / (1 + t c) to u^13), then pi/2 - w and pi - w (results above
// pi/4: no cancellation); the special values as atan2_64's.
template <class V> HRX_FMATH_VI F<V> atan2_f(F<V> yf, F<V> xf) {
    const V y = widen<V>(yf), x = widen<V>(xf);
    const V ay = fabs(y), ax = fabs(x);
    const auto swap = ay > ax;
    const V n = swap ? ax : ay, d = swap ? ay : ax;
    V t = n / d;
    t = d == 0.0 ? splat<V>(0.0) : t;
    t = n == kInf64 ? splat<V>(1.0) : t;
    const V kd = t * 8.0 + kRound;
    const V c = (kd - kRound) * 0.125;
    const U<V> j = bits(kd) & 15;
    V at = splat<V>(0.0);
#pragma GCC unroll 8
    for (unsigned k = 1; k <= 8; ++k) at = j == k ? splat<V>(kAtanJ8[k]) : at;
    const V u = (t - c) / (1.0 + t * c);
    const V z = u * u;
    V p = splat<V>(1.0 / 13.0);
    p = p * z - 1.0 / 11.0;
    p = p * z + 1.0 / 9.0;
    p = p * z - 1.0 / 7.0;
    p = p * z + 1.0 / 5.0;
    p = p * z - 1.0 / 3.0;
    V w = at + (u + u * z * p);
    w = swap ? kPio2Hi - w : w;
    const auto neg = bits(x) >= 0x8000000000000000ULL;
    w = neg ? kPiHi - w : w;
    const F<V> r = narrow<V>(copysign(w, y));
    return yf != yf ? yf : (xf != xf ? xf : r);
}
template <class V> HRX_FMATH_VI F<V> pow_f(F<V> xf, F<V> yf) {
    using UF_ = UF<V>;
    const V x = widen<V>(xf), y = widen<V>(yf);
    const V ax = fabs(x);
    V lx = log_d(bits(ax) - 1 < 0x7fefffffffffffffULL ? ax : splat<V>(1.0));
    lx = ax == 0.0 ? splat<V>(-1e300) : lx;  // |x|^y then over- or underflows as it should
    lx = ax == kInf ? splat<V>(1e300) : lx;
    F<V> r = narrow<V>(exp_d(y * lx));
    // y an odd integer: |y| < 2^24 (floats beyond are even), y + kRound - kRound == y, bit 0 of kd.
    const auto small = fabs(y) < 0x1p24;
    const V kd = (small ? y : splat<V>(0.0)) + kRound;
    const V n = kd - kRound;
    U<V> odd = bits(kd) & 1;
    odd = n == y ? odd : U<V>{} + 0;
    U<V> nonint = n == y ? U<V>{} + 0 : U<V>{} + 1;
    nonint = small ? nonint : U<V>{} + 0;
    UF_ oddf, nonintf;
    if constexpr (std::is_same_v<V, double>) {
        oddf = static_cast<std::uint32_t>(odd);
        nonintf = static_cast<std::uint32_t>(nonint);
    } else {
        oddf = __builtin_convertvector(odd, UF_);
        nonintf = __builtin_convertvector(nonint, UF_);
    }
    const UF_ xs = fbits<V>(xf) >> 31;  // x's sign bit (-0 too)
    r = (oddf & xs) != 0 ? -r : r;
    // finite x < 0 and y not an integer: NaN (-0 and -inf follow the sign rule above)
    const F<V> qnan = from_fbits<V>(UF_{} + 0x7fc00000u);
    r = xf < 0.0f ? (xf == -std::numeric_limits<float>::infinity() ? r : (nonintf != 0 ? qnan : r)) : r;
    r = xf != xf ? xf + yf : r;
    r = yf != yf ? xf + yf : r;
    r = yf == 2.0f ? xf * xf : r;  // x**2 == x * x, bit for bit
    const F<V> one = from_fbits<V>(UF_{} + 0x3f800000u);
    const UF_ yb = fbits<V>(yf) & 0x7fffffffu;
    r = yb == 0x7f800000u ? (xf == -1.0f ? one : r) : r;
    r = xf == 1.0f ? one : r;
    r = yf == 0.0f ? one : r;
    return r;
}
}  // namespace v

#pragma GCC diagnostic pop

// sin, cos, tan of a double with !(|x| < kTrigFast64) (inf and NaN too):
// the exact reduction (fmath64.cpp).
double sin_big64(double x);
double cos_big64(double x);
double tan_big64(double x);

}  // namespace hrx::fmath::detail
