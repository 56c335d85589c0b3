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
    V wh, wl;
    fast_two_sum(ah, uh, wh, wl);
    wl = wl + (al + (ul + uh * z * q));
    V bh, bl;
    fast_two_sum(splat<V>(kPio2Hi), -wh, bh, bl);
    bl = bl + (kPio2Lo - wl);
    const V r = big ? bh + bl : wh + wl;
    return x != x ? x : copysign(r, x);
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
#pragma GCC diagnostic pop

// sin, cos, tan of a double with !(|x| < kTrigFast64) (inf and NaN too):
// the exact reduction (fmath64.cpp).
double sin_big64(double x);
double cos_big64(double x);
double tan_big64(double x);

}  // namespace hrx::fmath::detail
