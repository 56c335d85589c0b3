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
// (lookup16, the table lookups: fmath.h.)
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

// Lanes of a where m is all ones, of b where it is zero (bit operations: a
// mask shared by several selects became lane-by-lane code in GCC 12).
template <class V> HRX_FMATH_VI V blend(U<V> m, V a, V b) { return from_bits<V>((bits(a) & m) | (bits(b) & ~m)); }
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
    // Masks used more than once are integer lanes for blend (Note at blend).
    const U<V> swap = ay > ax ? U<V>{} + ~0ULL : U<V>{} + 0;
    const V n = blend(swap, ax, ay), d = blend(swap, ay, ax);
    V th = n / d;
    th = d == 0.0 ? splat<V>(0.0) : th;       // atan2(+-0, +-0)
    th = n == kInf64 ? splat<V>(1.0) : th;    // both infinite: pi/4
    V sc = splat<V>(1.0);
    sc = d >= 0x1p512 ? splat<V>(0x1p-600) : sc;
    sc = d < 0x1p-512 ? splat<V>(0x1p600) : sc;
    const V ns = n * sc, ds = d * sc;
    V p, pe;
    two_prod(th, ds, p, pe);
    const U<V> tiny = th < 0x1p-300 ? U<V>{} + ~0ULL : U<V>{} + 0;
    V tl = blend(tiny, splat<V>(0.0), ((ns - p) - pe) / ds);
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
    wh = blend(tiny, th, wh);  // atan t = t there (and the residuals could be subnormal)
    wl = blend(tiny, splat<V>(0.0), wl);
    V bh, bl;
    fast_two_sum(splat<V>(kPio2Hi), -wh, bh, bl);
    bl = bl + (kPio2Lo - wl);
    wh = blend(swap, bh, wh);
    wl = blend(swap, bl, wl);
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
// sqrt lane by lane (correctly rounded, so any instruction gives the same
// bits). GCC has no generic vector sqrt (std::sqrt sets errno, so it stays
// scalar); on x86-64 the whole register is one instruction in inline
// assembly: d8 is only instantiated in the AVX-512 clones and d4 in the AVX2
// ones, which is what makes vsqrtpd on a zmm or ymm register valid there.
// (The earlier loop of 2-lane sqrtpd with its shuffles was 25 of asin's
// instructions.)
template <class V> HRX_FMATH_VI V vsqrt(V w) {
    if constexpr (std::is_same_v<V, double>) {
        return __builtin_sqrt(w);
    } else {
        V r;
#if defined(__x86_64__) && defined(__GNUC__)
        if constexpr (sizeof(V) == 64 || sizeof(V) == 32) {
            __asm__("vsqrtpd %1, %0" : "=v"(r) : "v"(w));
        } else {
            r = __builtin_ia32_sqrtpd(w);
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
template <class V> HRX_FMATH_VI void asin_parts(V a, V& sh, V& tail, U<V>& big) {
    big = a > 0.5 ? U<V>{} + ~0ULL : U<V>{} + 0;
    const V w = (1.0 - a) * 0.5;
    const V z = blend(big, w, a * a);
    const V r = vsqrt(w > 0.0 ? w : splat<V>(0.0));
    V q, qe;
    two_sqr(r, q, qe);
    V rl = ((w - q) - qe) / (r + r);
    rl = r > 0.0 ? rl : splat<V>(0.0);
    sh = blend(big, r, a);
    const V sl = blend(big, rl, splat<V>(0.0));
    tail = sl + sh * z * asin_poly(z);
}
template <class V> HRX_FMATH_VI V asin64(V x) {
    const V a = fabs(x);
    V sh, tail;
    U<V> big;
    asin_parts(a, sh, tail, big);
    V h, l;
    two_sum(splat<V>(kPio2Hi), -(sh + sh), h, l);
    const V rb = h + (l + (kPio2Lo - (tail + tail)));
    const V r = copysign(blend(big, rb, sh + tail), x);
    const V res = a > 1.0 ? splat<V>(kNaN64) : r;
    return x != x ? x : res;
}
template <class V> HRX_FMATH_VI V acos64(V x) {
    const V a = fabs(x);
    V sh, tail;
    U<V> big;
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
    V r = blend(big, neg ? rp : s2 + t2, rm);
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

// ---------------------------------------------------------------- erf
// |x| < 1/2: erf x = c x + c x z P(z), z = x^2, c = 2/sqrt(pi) double-double,
// c x by Dekker's product, P the Taylor series to z^12 (truncation below
// 2^-57). 1/2 <= |x| < 6: erf(c_i + h) = E_i + h P_i(h) about the nearest of
// 44 centres c_i = 0.5625 + i/8 (|h| <= 1/16, h exact by Sterbenz), E_i a
// double-double and P_i the Taylor coefficients to h^12 (truncation below
// 2^-64), all computed to 270 bits (Hermite polynomials times e^-c^2, in
// Python's decimal) and gathered per lane. h P_i(h) is below a tenth of the
// result, so its rounding adds ~0.1 ulp to the final rounding. From 5.95 on,
// erf rounds to 1.
alignas(64) constexpr double kErfHi[44] = {0x1.25b8a88b6dd7fp-1, 0x1.569243d2b3a9bp-1, 0x1.7fb9bfaed8078p-1, 0x1.a1551a16aaeafp-1, 0x1.bbef0fbde6221p-1, 0x1.d0580b2cfd249p-1, 0x1.df85ea8db188ep-1, 0x1.ea7730ed0bbb9p-1, 0x1.f21c9f12f0677p-1, 0x1.f74a6d9a38383p-1, 0x1.fab0dd89d1309p-1, 0x1.fcdacca0bfb73p-1, 0x1.fe307f2b503d0p-1, 0x1.fefcce6813974p-1, 0x1.ff733814af88cp-1, 0x1.ffb5bdf67fe6fp-1, 0x1.ffd9f78c7524ap-1, 0x1.ffed167b12ac2p-1, 0x1.fff6dee89352ep-1, 0x1.fffbb8f1049c6p-1, 0x1.fffe0e0140857p-1, 0x1.ffff2436a21dcp-1, 0x1.ffffa1de8c582p-1, 0x1.ffffd8e1a2f22p-1, 0x1.fffff039f9e8fp-1, 0x1.fffff9d446cccp-1, 0x1.fffffda86faa9p-1, 0x1.ffffff233ee1dp-1, 0x1.ffffffb127525p-1, 0x1.ffffffe4aed5ep-1, 0x1.fffffff6d1e56p-1, 0x1.fffffffd01f89p-1, 0x1.ffffffff0dd2bp-1, 0x1.ffffffffb5be5p-1, 0x1.ffffffffe9eb0p-1, 0x1.fffffffff9a1bp-1, 0x1.fffffffffe380p-1, 0x1.ffffffffff845p-1, 0x1.ffffffffffdf8p-1, 0x1.fffffffffff7bp-1, 0x1.fffffffffffdfp-1, 0x1.ffffffffffff8p-1, 0x1.ffffffffffffep-1, 0x1.0000000000000p+0};
alignas(64) constexpr double kErfLo[44] = {0x1.9534a3b5bd215p-55, 0x1.8eef7012e8df5p-56, 0x1.66cf14bcad032p-56, 0x1.a558a46df5f67p-57, -0x1.322c1148e0d48p-55, 0x1.4fca6318dfee9p-55, -0x1.f71e8254d11a9p-55, 0x1.2c5bd7ce1388bp-55, -0x1.7efe429672266p-58, 0x1.c33a329423946p-55, -0x1.ae61bd9db1babp-55, -0x1.2c33d88729e43p-55, -0x1.8a555000387f8p-57, -0x1.b27cf5025d1c8p-58, 0x1.0a87238cea4f9p-56, 0x1.4e830346f6e7fp-62, 0x1.04ed6ff98e45dp-55, -0x1.ddc0ce3ed8fcbp-55, 0x1.b96c0ba13851dp-55, 0x1.d2c6266b51f27p-56, -0x1.6aa36f86c14ddp-57, -0x1.3607959a29d36p-55, 0x1.832540129302ap-55, -0x1.c10adf6b19989p-55, -0x1.9d1bcd6174e99p-55, -0x1.bb06bab98bc7ep-57, -0x1.d230252d68f25p-56, 0x1.db123ed17221dp-55, 0x1.504f382db4102p-55, 0x1.389c0f32ad0f4p-59, -0x1.64d969b4be4c4p-55, -0x1.35e8e39884f62p-56, 0x1.0df73e7d2fc98p-55, -0x1.729d6819c7f34p-56, -0x1.ea527e0bef1ecp-58, -0x1.6a87270d2450ep-57, 0x1.7ce07114e4fe0p-55, 0x1.b0edc5a89ab8fp-56, -0x1.dcf8b10ff973bp-55, 0x1.00fa07f7fb612p-55, 0x1.5669e670f914bp-56, 0x1.0160ef15c497dp-56, 0x1.59ab24e589a30p-56, -0x1.a6d7d18831888p-55};
// kErfTaylor[k][i]: the h^(k+1) coefficient of erf(c_i + h), c_i = 0.5625 + i/8.
alignas(64) constexpr double kErfTaylor[12][44] = {
    {0x1.a5074e2157620p-1, 0x1.681ff24b4ab04p-1, 0x1.2a8dcede3673bp-1, 0x1.dfca26f5bbf88p-2, 0x1.75a91a7f4d2edp-2, 0x1.1a0dc51a9934dp-2, 0x1.9cb5bd549b111p-3, 0x1.24a7b84d38971p-3, 0x1.92470a61b6965p-4, 0x1.0bf97e95f2a64p-4, 0x1.5a08e85af27e0p-5, 0x1.b1160991ff737p-6, 0x1.06ae13b0d3255p-6, 0x1.34d7dbc76d7e5p-7, 0x1.5ff2750fe7820p-8, 0x1.84ba3004a50d0p-9, 0x1.a024365f771bdp-10, 0x1.afc85e0f82e12p-11, 0x1.b23a5a23e4210p-12, 0x1.a740684026555p-13, 0x1.8fdc1b2dcf7b9p-14, 0x1.6e2367dc27f95p-15, 0x1.44f21e49054f2p-16, 0x1.1783ceac28910p-17, 0x1.d21397ead99cbp-19, 0x1.789fb715aae95p-20, 0x1.26f9df8519bd7p-21, 0x1.bfd7555a3bd68p-23, 0x1.4980cb3c80949p-24, 0x1.d5f3a8dea7357p-26, 0x1.44d26de513197p-27, 0x1.b334fac4b9f99p-29, 0x1.1a94ff571654fp-30, 0x1.63ac6b4edc88ep-32, 0x1.b1e5acf351d87p-34, 0x1.0084ff125639dp-35, 0x1.25f9ee0b923dcp-37, 0x1.46897d4b69fc6p-39, 0x1.5f8b87a31bd85p-41, 0x1.6ed2f2515e933p-43, 0x1.72fd93e036cdcp-45, 0x1.6ba91ac734786p-47, 0x1.5982008db1304p-49, 0x1.3e296303b2297p-51},
    {-0x1.d9a837e5824e4p-2, -0x1.ef2bed2786b25p-2, -0x1.e5267029187c0p-2, -0x1.c1cd84866038fp-2, -0x1.8d03ac274201cp-2, -0x1.4ef05a0f95eebp-2, -0x1.0ed7443f85c33p-2, -0x1.a4b118ef01593p-3, -0x1.3a47801c56a57p-3, -0x1.c435059d09788p-4, -0x1.399812926bc23p-4, -0x1.a38d59456f77dp-5, -0x1.0ee3844e59be7p-5, -0x1.51cc18621fc23p-6, -0x1.96f0575a63ae5p-7, -0x1.d9c2ea85a927dp-8, -0x1.0a9732d5284ddp-8, -0x1.221a9f326bef4p-9, -0x1.315107613c673p-10, -0x1.36d34c8f1c26ap-11, -0x1.322484cf12daap-12, -0x1.23c436c36fdabp-13, -0x1.0d18811478659p-14, -0x1.e06a8b37e5b93p-16, -0x1.9f19734d29cf9p-17, -0x1.5b333cc7f98f1p-18, -0x1.1926290adc888p-19, -0x1.b8d7f804d2e73p-21, -0x1.4ea6ce697296fp-22, -0x1.ebfb14c9170c0p-24, -0x1.5e32de7af8977p-25, -0x1.e2cec6323e50ep-27, -0x1.4251f33f5578fp-28, -0x1.a0ce0dc06a706p-30, -0x1.05042a0a5f3c3p-31, -0x1.3ca42adaa26f6p-33, -0x1.74105146a5162p-35, -0x1.a77a4e7dcd735p-37, -0x1.d2e55024a0fb5p-39, -0x1.f2a6c1669c902p-41, -0x1.01f450d1e61b1p-42, -0x1.028a39099f4d9p-44, -0x1.f610e8cde57a1p-47, -0x1.d8456ef97c759p-49},
    {-0x1.9c41d1d5fae55p-4, -0x1.a4254557d722fp-7, 0x1.fe0796bb9d05ap-5, 0x1.e4c9975da0987p-4, 0x1.3954778d6a0dfp-3, 0x1.5648b5dc47417p-3, 0x1.5066cda84bba9p-3, 0x1.319c7a75f9187p-3, 0x1.0453f90d3bd35p-3, 0x1.a3687c1eaf1adp-4, 0x1.4140efb719cb0p-4, 0x1.d5bd91b6b0123p-5, 0x1.48b127f8ed8a5p-5, 0x1.b925a99886bb7p-6, 0x1.1c5a643f04363p-6, 0x1.60898536e104ap-7, 0x1.a4bf47a43042ap-8, 0x1.e3c9aab90bcf4p-9, 0x1.0c243329a9ca1p-9, 0x1.1eb6e14974a25p-10, 0x1.27dc1bc6cfef5p-11, 0x1.26bf00867a835p-12, 0x1.1b964d438f622p-13, 0x1.07978c7b8496bp-14, 0x1.d982bd41d8954p-16, 0x1.9b12fdbf90f62p-17, 0x1.5900c02d97304p-18, 0x1.17f93e5149289p-19, 0x1.b771d9b6f07b8p-21, 0x1.4d9228525f449p-22, 0x1.e9e05b3c8f38ap-24, 0x1.5c027d5bba36ap-25, 0x1.de6bc1f75bb9bp-27, 0x1.3e380dd7593a5p-28, 0x1.99ac8fd63c66cp-30, 0x1.fe73513c67bf8p-32, 0x1.33cde4f35d941p-33, 0x1.67543695dcc12p-35, 0x1.9612cc225df4bp-37, 0x1.bc42ba38a13f8p-39, 0x1.d68fb81b2ed89p-41, 0x1.e292863e1795ep-43, 0x1.df2dac2f2d47fp-45, 0x1.ccb92e6c24c8dp-47},
    {0x1.75bebc1b18d1cp-3, 0x1.532415c267962p-3, 0x1.0fa23021ad0acp-3, 0x1.747e31bf47af3p-4, 0x1.88e0f7b183fc6p-5, 0x1.40fbaba44504cp-7, -0x1.419fa10b6ed7dp-6, -0x1.3db5bed47faf6p-5, -0x1.8a7c6a239217bp-5, -0x1.9647a30b16824p-5, -0x1.7535a61a4193dp-5, -0x1.3b35dcbc80146p-5, -0x1.f155b4e7d8c3bp-6, -0x1.71e7d408c8c6fp-6, -0x1.04f5caaf2196fp-6, -0x1.5eb1c899f0b70p-7, -0x1.c23802d8a5bb7p-8, -0x1.14b1b98141f21p-8, -0x1.4630116262084p-9, -0x1.714eb8cc0947fp-10, -0x1.9202f465eb421p-11, -0x1.a51fb50b15f22p-12, -0x1.a8d7851f26bf0p-13, -0x1.9d039884f8be5p-14, -0x1.8320fc4836be5p-15, -0x1.5e06923144d70p-16, -0x1.3166de6a8c640p-17, -0x1.013b0457d08fap-18, -0x1.a26c653fad5b8p-20, -0x1.48b536addac5fp-21, -0x1.f2f6fa7db5b1dp-23, -0x1.6df4d024fffbep-24, -0x1.036b5fd1c4158p-25, -0x1.638bc4fb02cbap-27, -0x1.d72344378e114p-29, -0x1.2dd9aa5a2bee4p-30, -0x1.760fe7b666392p-32, -0x1.c05c1e2fc7105p-34, -0x1.03ee5f38b9b49p-35, -0x1.2391e135afab8p-37, -0x1.3c706aa4d2517p-39, -0x1.4c4e690fbe215p-41, -0x1.51b17f95fcc91p-43, -0x1.4c1aa8cf10b54p-45},
    {-0x1.6410ad9332666p-7, -0x1.558b4c55a835cp-5, -0x1.fa21ebca76761p-5, -0x1.1d1f00109e42ap-4, -0x1.0f7c15f75ee13p-4, -0x1.c0db89d0a41a4p-5, -0x1.3f41761d5a941p-5, -0x1.7019bda6c2fddp-6, -0x1.075c088031ee3p-7, 0x1.6981061dfbb09p-9, 0x1.374c88c7e6abdp-7, 0x1.9d76b0a0535c7p-7, 0x1.aa2c0753d569ap-7, 0x1.7ea58080a81efp-7, 0x1.382a146afb9d2p-7, 0x1.d854f73e74c87p-8, 0x1.4f40070668329p-8, 0x1.c1c19b9e63d70p-9, 0x1.1e84d1022e8cbp-9, 0x1.5bec08c01b1d7p-10, 0x1.93b4c9746835fp-11, 0x1.c0825378fda08p-12, 0x1.ddd6df9b6852dp-13, 0x1.e8d1145e94a54p-14, 0x1.e0a1cb1d071f3p-15, 0x1.c6a071925631dp-16, 0x1.9dfcc328729e0p-17, 0x1.6b245d7e1d829p-18, 0x1.3302bb89379dep-19, 0x1.f48ccf23a68e2p-21, 0x1.899dcace485ebp-22, 0x1.2aaf7c205b9eap-23, 0x1.b58f1385def96p-25, 0x1.35753ad4c5875p-26, 0x1.a6be9a123435bp-28, 0x1.16ef6b93944a8p-29, 0x1.63a70fd66d485p-31, 0x1.b639419fedf8ep-33, 0x1.04f2f71e2e96bp-34, 0x1.2c6c24550f64fp-36, 0x1.4e6479565838ep-38, 0x1.67e6e5ac60fd1p-40, 0x1.76996ddc975d7p-42, 0x1.7918b6b83c0fbp-44},
    {-0x1.7df8890b11fa7p-5, -0x1.1b7ad5b777f1bp-5, -0x1.31546d5c4edb4p-6, -0x1.47654175ceb42p-9, 0x1.5e22cfa1aab51p-7, 0x1.388c3ec056942p-6, 0x1.6d1d724baaae4p-6, 0x1.59d3aa402c32ep-6, 0x1.16f9c9c127b80p-6, 0x1.7e8755da47040p-7, 0x1.a40709e010e77p-8, 0x1.14c887a83a0e6p-9, -0x1.bbf7e2795837bp-11, -0x1.46eb9d203e071p-9, -0x1.95cab93aa68d2p-9, -0x1.897719a9d257ep-9, -0x1.4c9a2c9dccd04p-9, -0x1.feac3dbeb5124p-10, -0x1.6b41872716325p-10, -0x1.e4621d82dad12p-11, -0x1.30e9e6142fe9bp-11, -0x1.6c3dbfe0cbe4ap-12, -0x1.9e52b7aac1644p-13, -0x1.c1f7251172a87p-14, -0x1.d384223047b9cp-15, -0x1.d178cb0388a82p-16, -0x1.bcab1ed5ec38dp-17, -0x1.98077548c6950p-18, -0x1.67f42e5264333p-19, -0x1.3183b6134cf04p-20, -0x1.f34b7eef3c9b1p-22, -0x1.8902edfbfefd6p-23, -0x1.2a2347efb2135p-24, -0x1.b41f33cafccc9p-26, -0x1.33aacb4bf6ce3p-27, -0x1.a2d58e9b2278bp-29, -0x1.1324f6fb6decfp-30, -0x1.5cfd7eb9c1025p-32, -0x1.ab7099f99e01bp-34, -0x1.f9a3c1b0e1479p-36, -0x1.20e9eb8375e6dp-37, -0x1.3f00d80a59edbp-39, -0x1.546155a7f71dap-41, -0x1.5f07365cc71f3p-43},
    {0x1.4a54816d3608ap-7, 0x1.1201d3bd0e758p-6, 0x1.37e5469efb7a6p-6, 0x1.1a817c594b8cbp-6, 0x1.9ad28c5557c22p-7, 0x1.aecb7463cf446p-8, 0x1.e377f5703f7ffp-11, -0x1.b324eab9c87a9p-9, -0x1.74c2fc9bdfe97p-8, -0x1.9be731fdab95dp-8, -0x1.6dc078888efa7p-8, -0x1.117f42cc6e9f4p-8, -0x1.5478d784d271cp-9, -0x1.403333682fa5ep-10, -0x1.d2fd90fe62928p-13, 0x1.88cdc8b807c97p-12, 0x1.4f7a50b5bc019p-11, 0x1.63e88178b0e49p-11, 0x1.36edde582b265p-11, 0x1.e1b7b564b0e79p-12, 0x1.555b9d5fb4825p-12, 0x1.c1dd1438378dfp-13, 0x1.165b2034fcab2p-13, 0x1.458b9e0854d68p-14, 0x1.696daf6422bd4p-15, 0x1.7e29d33ac92b6p-16, 0x1.81cd74a57ce17p-17, 0x1.7492048ab3cebp-18, 0x1.58b4adafb958ep-19, 0x1.31efde2215f01p-20, 0x1.04be030272d14p-21, 0x1.ab2ab1b338249p-23, 0x1.508db866ffe00p-24, 0x1.fe694e371a659p-26, 0x1.74b732e7ceaa7p-27, 0x1.06389b9748f25p-28, 0x1.63a31a36b815cp-30, 0x1.d11578959ba45p-32, 0x1.2554b8f609fd1p-33, 0x1.6502546ab341ap-35, 0x1.a35b9d2fcac80p-37, 0x1.db88ee63eb28bp-39, 0x1.0456ed89c4f25p-40, 0x1.134d070b5921ep-42},
    {0x1.18f36eb18f3d7p-7, 0x1.2995e3a88a890p-8, 0x1.097966e2e87e3p-13, -0x1.cb8acd699cca6p-9, -0x1.704ec5d29fc83p-8, -0x1.8bca53327e075p-8, -0x1.4cc916ad63c27p-8, -0x1.b4774d37d0dd7p-9, -0x1.760c522bd5bebp-10, 0x1.3a95ae0a75546p-13, 0x1.2ee6d200993afp-10, 0x1.9b477bdad8e0bp-10, 0x1.8eae08cdf9547p-10, 0x1.3b37d5bd14a40p-10, 0x1.9f50fb94c0b82p-11, 0x1.b325a11c1f45ap-12, 0x1.18b04eb90c73ap-13, -0x1.4441c86c93f7ap-15, -0x1.f7870ebc38e66p-14, -0x1.24564b69716a0p-13, -0x1.055983c4ac7abp-13, -0x1.94c36a9d7c0f6p-14, -0x1.1b75c33326751p-14, -0x1.6eb05572453f5p-15, -0x1.bb6e2d311a919p-16, -0x1.f9203429ba9ffp-17, -0x1.106e95b6bf43dp-17, -0x1.17506c7b39df8p-18, -0x1.10f5767962c5ap-19, -0x1.fd9eeb0f18631p-21, -0x1.c73bd2257171ep-22, -0x1.85abe0ff1ba49p-23, -0x1.3ffea93467fbfp-24, -0x1.f8af0121a5e7cp-26, -0x1.7e7eab6578e6ap-27, -0x1.16cdd9ebd5c76p-28, -0x1.8724ca89a96d5p-30, -0x1.082f9e9d1bf57p-31, -0x1.57c8752774563p-33, -0x1.af22316e181c7p-35, -0x1.04a1357d2538ap-36, -0x1.2fe58b79ed432p-38, -0x1.55d62c910e918p-40, -0x1.730a22eae78b0p-42},
    {-0x1.8d661c030e173p-9, -0x1.0294c3e93cdb0p-8, -0x1.e82ab020887a7p-9, -0x1.57b72bf874db6p-9, -0x1.23360304f19bap-10, 0x1.4add4a8239f4bp-12, 0x1.553ef0d12719fp-10, 0x1.c01377485a844p-10, 0x1.a3cdb656adb43p-10, 0x1.319f780e962d7p-10, 0x1.44f175e22a161p-11, 0x1.1d219fb0e1bc9p-13, -0x1.92946556037e5p-13, -0x1.6be130822dbdfp-12, -0x1.7d7378074399bp-12, -0x1.381548f692740p-12, -0x1.a4c3880c0ea6ap-13, -0x1.c8ceebc5fc50cp-14, -0x1.51ecfdc37801ep-15, 0x1.bf8e3b47f3cc9p-20, 0x1.68e6c75a5d068p-16, 0x1.bf0aab116ca42p-16, 0x1.91a253c42f4e8p-16, 0x1.33045cf65279ep-16, 0x1.a4fcb0ea87efbp-17, 0x1.094dadeee395cp-17, 0x1.379625a71385fp-18, 0x1.57e94a4c5f5a5p-19, 0x1.66ca44250dd07p-20, 0x1.63414459ae298p-21, 0x1.4edda838439f6p-22, 0x1.2d32f7c3621ecp-23, 0x1.02ff87b2e2577p-24, 0x1.aa77274dab3dbp-26, 0x1.50959f2daae3bp-27, 0x1.fdd861b55c502p-29, 0x1.72e290891e5dep-30, 0x1.0354ceadad8afp-31, 0x1.5cd182c967665p-33, 0x1.c388dd1764f21p-35, 0x1.196579f27dd9bp-36, 0x1.51dbeae22a581p-38, 0x1.86ead99977305p-40, 0x1.b4091041f5829p-42},
    {-0x1.3628ede23de1dp-10, -0x1.159644a564e28p-12, 0x1.318270c11b2d8p-11, 0x1.24493dca8b643p-10, 0x1.43ca3fcdf057ap-10, 0x1.05ce4abd0ff4fp-10, 0x1.26240f5597ee0p-11, 0x1.a5db5f627b4cdp-14, -0x1.02c3c1ab0b16dp-12, -0x1.b88dd51a4f7afp-12, -0x1.c2fb051c92966p-12, -0x1.5bb59d3ca6abfp-12, -0x1.90f27ae615128p-13, -0x1.03d4bcdafe930p-14, 0x1.cc0c9cba01378p-16, 0x1.2b1fd05559d5ap-14, 0x1.4b7b82a86e254p-14, 0x1.125b77a79fcb6p-14, 0x1.711d817e07bc3p-15, 0x1.8f55a9be0e03dp-16, 0x1.2d4a50d2829b7p-17, 0x1.6bdbd2f94d9afp-23, -0x1.020b498059edbp-18, -0x1.42c8adf1cd1fdp-18, -0x1.1c940c531c53bp-18, -0x1.a771cf3589991p-19, -0x1.1970a5b67012cp-19, -0x1.5709711f3cabcp-20, -0x1.84ee0ad7abf19p-21, -0x1.9dda81c133f08p-22, -0x1.9fc860b474229p-23, -0x1.8c141c67361ccp-24, -0x1.66e54eb04652dp-25, -0x1.3616fe99f19f3p-26, -0x1.ffed4b859bd78p-28, -0x1.945781eff3c56p-29, -0x1.31fc02f5342e7p-30, -0x1.bc2dfa2690a64p-32, -0x1.3580a8444f948p-33, -0x1.9e65df1db0f56p-35, -0x1.0ab824e9a83c6p-36, -0x1.4a49e1ac4c62ep-38, -0x1.89aba61a64c46p-40, -0x1.c3d456b2c9ab3p-42},
    {0x1.438eb2b3c46d1p-11, 0x1.63daf9b385638p-11, 0x1.12652e433d763p-11, 0x1.f556774c6a909p-13, -0x1.dcb97a9e067eep-15, -0x1.183f198a0ba0dp-12, -0x1.6bbf0fffb70d1p-12, -0x1.40d9c429b88a4p-12, -0x1.92892013c6fc1p-13, -0x1.037f168a8e0c6p-14, 0x1.523035ed39813p-15, 0x1.8ca373c577165p-14, 0x1.b076b7853882ep-14, 0x1.55848476c7d88p-14, 0x1.92a3a2947141ep-15, 0x1.1ed31cd6fe717p-16, -0x1.0bc762b1be79cp-18, -0x1.da7be990bb4aep-17, -0x1.0ae90d500cdaap-16, -0x1.b3b76e620315ap-17, -0x1.1de08b5647c04p-17, -0x1.2b32e8d43f559p-18, -0x1.ade63f3082a14p-20, 0x1.91109b80a7a7ep-27, 0x1.7469913f4f763p-21, 0x1.b8fd1c29c263fp-21, 0x1.74761c833476cp-21, 0x1.0a0f9569482a8p-21, 0x1.53b60652920e7p-22, 0x1.8da7d30642544p-23, 0x1.b0d686a25ff7cp-24, 0x1.b9fa6fbb9a95ap-25, 0x1.a9ea2195c4985p-26, 0x1.84fddf4c674dcp-27, 0x1.51c7f99f8fda3p-28, 0x1.178f3905f3e13p-29, 0x1.b9e8b0e7fa322p-31, 0x1.4e11efdc68123p-32, 0x1.e3be72b1c25e0p-34, 0x1.4fcd27877d440p-35, 0x1.bf68355f5f78ap-37, 0x1.1e432d67585a3p-38, 0x1.6011e175fb0fcp-40, 0x1.a06b4f4c53482p-42},
    {0x1.fd3c13df9426fp-14, -0x1.3beeb4a38da7cp-15, -0x1.4dc9bd651794dp-13, -0x1.b09ec5c7fe756p-13, -0x1.735e26c243666p-13, -0x1.9cd1a9b1691d3p-14, -0x1.320cf628b824bp-17, 0x1.e720d9229b5e6p-15, 0x1.6e7b2690fe5bcp-14, 0x1.53fc5e85f1d16p-14, 0x1.bc7b6663f109ap-15, 0x1.4a9b743f9c2bcp-16, -0x1.b2906ef1a5f9dp-18, -0x1.5492bf34225ddp-16, -0x1.7c1278765d4e1p-16, -0x1.29cf594067066p-16, -0x1.589d6f7acee55p-17, -0x1.e0199701a7ae1p-19, 0x1.a85b1e116e0b9p-21, 0x1.713c79eee77a2p-19, 0x1.9110cc775c8c4p-19, 0x1.3a74027955778p-19, 0x1.89bb0c09c8515p-20, 0x1.83a9b773281acp-21, 0x1.ef4b543f81f48p-23, -0x1.cc850aaad7c6cp-26, -0x1.0864cff42cecep-23, -0x1.1a9b85dff4dd8p-23, -0x1.c09edf21f7464p-24, -0x1.303d957dd368ap-24, -0x1.72370fa7af349p-25, -0x1.9db63fb19c969p-26, -0x1.ae3b864bd9186p-27, -0x1.a3ddc50633d2cp-28, -0x1.82ba5720b0440p-29, -0x1.519498e66ae8cp-30, -0x1.18235c2036ed3p-31, -0x1.bb101d235f656p-33, -0x1.4e86bace0629ap-34, -0x1.e3109bcb1f5c0p-36, -0x1.4df5a83c09a69p-37, -0x1.ba9e4d5413bf6p-39, -0x1.196bad9c990a0p-40, -0x1.579f5a4e42676p-42},
};
template <class V> HRX_FMATH_VI V gather(const double* t, U<V> j) {
    if constexpr (std::is_same_v<V, double>) {
        return t[j];
    } else {
        V r;
#if defined(__x86_64__) && defined(__GNUC__)
        // Loads are exact, so the hardware gather gives the lane loads' bits;
        // GCC 12 did not emit it and loaded lane by lane (3 tables, 72 scalar
        // moves per 8 pow lanes). d8 only exists in the AVX-512 clones and d4
        // in the AVX2 ones (as vsqrt).
        if constexpr (sizeof(V) == 64) {
            __asm__("kxnorw %%k0, %%k0, %%k1\n\t"
                    "vpxorq %0, %0, %0\n\t"
                    "vgatherqpd (%1,%2,8), %0%{%%k1%}"
                    : "=&v"(r) : "r"(t), "v"(j) : "k1", "memory");
            return r;
        } else if constexpr (sizeof(V) == 32) {
            V m;
            __asm__("vpcmpeqd %1, %1, %1\n\t"
                    "vxorpd %0, %0, %0\n\t"
                    "vgatherqpd %1, (%2,%3,8), %0"
                    : "=&x"(r), "=&x"(m) : "r"(t), "x"(j) : "memory");
            return r;
        }
#endif
#pragma GCC unroll 8
        for (unsigned k = 0; k < sizeof(V) / sizeof(double); ++k) r[k] = t[j[k]];
        return r;
    }
}
constexpr double kTwoOverSqrtPiHi = 0x1.20dd750429b6dp+0;
constexpr double kTwoOverSqrtPiLo = 0x1.1ae3a914fed80p-56;
template <class V> HRX_FMATH_VI V erf64(V x) {
    const V a = fabs(x);
    const V z = a * a;
    V p = splat<V>(erf_taylor_coef(13));
#pragma GCC unroll 13
    for (int n = 12; n >= 1; --n) p = p * z + kErfC.c[n];
    V ch, ce;
    two_prod(a, splat<V>(kTwoOverSqrtPiHi), ch, ce);
    V small = ch + (ce + (a * kTwoOverSqrtPiLo + ch * (z * p)));
    small = a < 0x1p-900 ? a * kTwoOverSqrtPiHi : small;
    const V kd = clamp((a - 0.5625) * 8.0, 0.0, 43.0) + kRound;
    const U<V> j = bits(kd) & 63;
    const V h = a - (0.5625 + (kd - kRound) * 0.125);
    V q = gather<V>(kErfTaylor[11], j);
#pragma GCC unroll 11
    for (int k = 10; k >= 0; --k) q = q * h + gather<V>(kErfTaylor[k], j);
    const V mid = gather<V>(kErfHi, j) + (gather<V>(kErfLo, j) + h * q);
    V r = a < 0.5 ? small : mid;
    r = a >= 5.95 ? splat<V>(1.0) : r;  // erfc(5.921) = 2^-54
    return x != x ? x : copysign(r, x);
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

// log x = lh + ll for a positive finite x (subnormals included).
// A comparison as 0/1 integer lanes. Spelled as the comparison's own mask
// (-1 or 0 per lane) and 1: GCC 12 compiled `c ? 1 : 0` with a double
// comparison and integer values lane by lane (88 scalar compares in pow64).
template <class V, class M> HRX_FMATH_VI U<V> as01(M m) {
    if constexpr (std::is_same_v<V, double>) return m ? 1 : 0;
    else return (U<V>)m & 1;
}
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
    const V zres = y < 0.0 ? splat<V>(kInf64) : splat<V>(0.0);  // 0^y; inf^y is the other one
    res = ax == 0.0 ? zres : res;
    res = ax == kInf64 ? from_bits<V>(bits(zres) ^ 0x7ff0000000000000ULL) : res;
    // y an odd integer / not an integer, by its magnitude's range.
    // As 0/1 integer lanes, one select per comparison (selects sharing a
    // mask became lane-by-lane code): below 2^51 by kRound, [2^51, 2^52)
    // (ulp 1/2) and [2^52, 2^53) (ulp 1) by the low bits, even beyond.
    const U<V> one = U<V>{} + 1, zero = U<V>{} + 0;
    const V kd2 = clamp(y, -0x1p51, 0x1p51) + kRound;
    const U<V> eq = as01<V>((kd2 - kRound) == y);
    const U<V> r51 = as01<V>(ay < 0x1p51), r52 = as01<V>(ay < 0x1p52), r53 = as01<V>(ay < 0x1p53);
    const U<V> yb = bits(y), b0 = yb & 1, b1 = (yb >> 1) & 1;
    const U<V> m5152 = r52 & (r51 ^ 1), m5253 = r53 & (r52 ^ 1);
    const U<V> odd = (bits(kd2) & eq & r51) | (b1 & (b0 ^ 1) & m5152) | (b0 & m5253);
    const U<V> nonint = ((eq ^ 1) & r51) | (b0 & m5152);
    const U<V> xs = bits(x) >> 63;
    res = (odd & xs) != 0 ? -res : res;
    // Masks combined as 0/1 integer lanes, one select each (nested selects
    // became lane-by-lane compares: 245 scalar instructions per 8 lanes).
    res = (as01<V>(x < 0.0) & as01<V>(x > -kInf64) & nonint) != 0 ? splat<V>(kNaN64) : res;
    res = y != y ? from_bits<V>(bits(y) | 0x0008000000000000ULL) : res;  // quieted, x's first (as pow_f)
    res = x != x ? from_bits<V>(bits(x) | 0x0008000000000000ULL) : res;
    res = y == 2.0 ? x * x : res;  // x**2 == x * x, bit for bit
    // (-1)^+-inf, 1^y and x^0 are 1; |x| < 1 with y = +-inf and |x| > 1: the
    // generic path (y clamped to 2^900) gives 0 or inf.
    const U<V> is1 = (as01<V>(ay == kInf64) & as01<V>(x == -1.0)) | as01<V>(x == 1.0) | as01<V>(y == 0.0);
    res = is1 != 0 ? splat<V>(1.0) : res;
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
// sinh, cosh: a = |x| = n ln2 + r (Cody-Waite, |r| <= 0.347), e^r = C + S
// with C and S its even and odd Taylor parts to r^9 (truncation below 2^-36
// relative), so e^-r = C - S without a division: e^a / 2 = 2^(n-1) (C + S),
// e^-a / 2 = 2^(-n-1) (C - S) (a clamped to 100: float overflows well
// before, 2^-101 stays a normal double). sinh below 1 by Taylor to x^11
// (truncation below 2^-32). Errors a few 2^-53 relative before the one
// rounding to float (sinh's difference loses at most a factor 1.16 for
// a >= 1). The division they replace cost a third of the time.
template <class V> HRX_FMATH_VI void exp_halves(V a, V& up, V& down) {
    a = a < 100.0 ? a : splat<V>(100.0);
    const V kd = a * kLog2e + kRound;
    const V n = kd - kRound;
    const V r = (a - n * kLn2Hi) - n * kLn2Lo;
    const V z = r * r;
    const V c = 1.0 + z * ((0.5 + z * (1.0 / 24.0)) + (z * z) * ((1.0 / 720.0) + z * (1.0 / 40320.0)));
    const V s = r + r * (z * ((1.0 / 6.0 + z * (1.0 / 120.0)) + (z * z) * ((1.0 / 5040.0) + z * (1.0 / 362880.0))));
    const U<V> nb = bits(kd);
    up = (c + s) * from_bits<V>((nb + 1022) << 52);    // 2^(n-1)
    down = (c - s) * from_bits<V>((1022 - nb) << 52);  // 2^(-n-1)
}
template <class V> HRX_FMATH_VI F<V> sinh_f(F<V> xf) {
    const V x = widen<V>(xf), a = fabs(x);
    const V z = a * a;
    const V p = (1.0 / 6.0 + z * (1.0 / 120.0)) + (z * z) * ((1.0 / 5040.0 + z * (1.0 / 362880.0)) +
                                                          z * z * (1.0 / 39916800.0));
    V up, down;
    exp_halves(a, up, down);
    const V r = a < 1.0 ? a + a * z * p : up - down;
    return xf != xf ? xf : narrow<V>(copysign(r, x));
}
template <class V> HRX_FMATH_VI F<V> cosh_f(F<V> xf) {
    const V a = fabs(widen<V>(xf));
    V up, down;
    exp_halves(a, up, down);
    const V r = up + down;
    return xf != xf ? xf : narrow<V>(r);
}
// atan2 of floats in plain double: t = min/max of |y|, |x| (one division,
// exact to 2^-53), atan t by atan_unit_d (fmath.h, float atan's), then
// pi/2 - w and pi - w (results above pi/4: no cancellation); the special
// values as atan2_64's.
template <class V> HRX_FMATH_VI F<V> atan2_f(F<V> yf, F<V> xf) {
    const V y = widen<V>(yf), x = widen<V>(xf);
    const V ay = fabs(y), ax = fabs(x);
    const auto swap = ay > ax;
    const V n = swap ? ax : ay, d = swap ? ay : ax;
    V t = n / d;
    t = d == 0.0 ? splat<V>(0.0) : t;
    t = n == kInf64 ? splat<V>(1.0) : t;
    V w = atan_unit_d(t);
    w = swap ? kPio2Hi - w : w;
    const auto neg = bits(x) >= 0x8000000000000000ULL;
    w = neg ? kPiHi - w : w;
    const F<V> r = narrow<V>(copysign(w, y));
    return yf != yf ? yf : (xf != xf ? xf : r);
}
// ln x and e^x sized for pow_f: log_d's reduction with the atanh series to
// s^13 (truncation below 2^-39 relative);
// exp_d's reduction with Taylor to r^8 (below 2^-32 relative). With |y ln x|
// <= 104 (beyond, the float result over- or underflows) the product's error
// stays below 2^-32 of the result: 0.5 + 2^-8 ulp at most after rounding.
template <class V> HRX_FMATH_VI V log_pf(V x) {
    const U<V> u = bits(x);
    const U<V> e = (u + 0x00095f619980c433ULL) >> 52;
    const V m = from_bits<V>(u - ((e - 1023) << 52));
    const V k = (from_bits<V>(e | 0x4330000000000000ULL) - 0x1p52) - 1023.0;
    const V f = m - 1.0;
    const V s = f / (2.0 + f);
    const V z = s * s, z2 = z * z;
    const V p = ((2.0 / 3.0 + z * (2.0 / 5.0)) + z2 * (2.0 / 7.0 + z * (2.0 / 9.0))) +
                (z2 * z2) * (2.0 / 11.0 + z * (2.0 / 13.0));
    return k * kLn2Hi + ((k * kLn2Lo + s * z * p) + 2.0 * s);
}
template <class V> HRX_FMATH_VI V exp_pf(V x) {
    x = clamp(x, -708.0, 709.0);
    const V kd = x * kLog2e + kRound;
    const V n = kd - kRound;
    const V r = (x - n * kLn2Hi) - n * kLn2Lo;
    const V r2 = r * r, r4 = r2 * r2;
    const V q = ((0.5 + r * (1.0 / 6.0)) + r2 * (1.0 / 24.0 + r * (1.0 / 120.0))) +
                r4 * ((1.0 / 720.0 + r * (1.0 / 5040.0)) + r2 * (1.0 / 40320.0));
    return (1.0 + (r + r2 * q)) * pow2_of(kd);
}
template <class V> HRX_FMATH_VI F<V> pow_f(F<V> xf, F<V> yf) {
    using UF_ = UF<V>;
    const V x = widen<V>(xf), y = widen<V>(yf);
    const V ax = fabs(x);
    V lx = log_pf(bits(ax) - 1 < 0x7fefffffffffffffULL ? ax : splat<V>(1.0));
    lx = ax == 0.0 ? splat<V>(-1e300) : lx;  // |x|^y then over- or underflows as it should
    lx = ax == kInf ? splat<V>(1e300) : lx;
    F<V> r = narrow<V>(exp_pf(y * lx));
    // y an odd integer: |y| < 2^24 (floats beyond are even), y + kRound - kRound == y, bit 0 of kd.
    // (integer 0/1 lanes from one select per comparison: GCC 12 turned the
    // earlier selects on a shared mask into lane-by-lane code)
    const V kd = clamp(y, -0x1p24, 0x1p24) + kRound;
    const U<V> eq = as01<V>((kd - kRound) == y);
    const U<V> small = as01<V>(fabs(y) < 0x1p24);
    const U<V> odd = bits(kd) & eq;  // bit 0: y = +-2^24 is even
    const U<V> nonint = (eq ^ 1) & small;
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
    // A NaN operand gives it, quieted, x's first (no x + y: the compiler may
    // swap the operands of +, and which NaN's payload wins would then differ).
    r = yf != yf ? from_fbits<V>(fbits<V>(yf) | 0x00400000u) : r;
    r = xf != xf ? from_fbits<V>(fbits<V>(xf) | 0x00400000u) : r;
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
