// The scalar double functions of hrx::fmath that run fmath64.h's kernels
// (their V = double instance, so the Loom interpreter's f64 gives the bits of
// the `_f64` array forms), and the large-argument reduction of sin, cos and
// tan of doubles. Numerics: Note [float64 kernels] in fmath64.h.
#include "kernels/fmath64.h"

namespace hrx::fmath {

namespace detail {

namespace {

// 2/pi to 1408 bits after the binary point, most significant first, behind
// one zero word so windows may start up to 63 bits before the point.
constexpr std::uint64_t kTwoOverPi64[23] = {
    0,                     0xa2f9836e4e441529ULL, 0xfc2757d1f534ddc0ULL, 0xdb6295993c439041ULL, 0xfe5163abdebbc561ULL,
    0xb7246e3a424dd2e0ULL, 0x06492eea09d1921cULL, 0xfe1deb1cb129a73eULL, 0xe88235f52ebb4484ULL, 0xe99c7026b45f7e41ULL,
    0x3991d639835339f4ULL, 0x9c845f8bbdf9283bULL, 0x1ff897ffde05980fULL, 0xef2f118b5a0a6d1fULL, 0x6d367ecf27cb09b7ULL,
    0x4f463f669e5fea2dULL, 0x7527bac7ebe5f17bULL, 0x3d0739f78a5292eaULL, 0x6bfb5fb11f8d5d08ULL, 0x56033046fc7b6babULL,
    0xf0cfbc209af4361dULL, 0xa9e391615ee61b08ULL, 0x6599855f14a06840ULL};

// The 64 bits of 2/pi starting at bit i after the point (i >= -63).
std::uint64_t two_over_pi_word(int i) {
    const int j = i + 63;  // bit index in kTwoOverPi64, 0 = MSB of word 0
    const int w = j / 64, sh = j % 64;
    auto word = [](int k) { return k < 23 ? kTwoOverPi64[k] : std::uint64_t{0}; };
    return sh ? (word(w) << sh) | (word(w + 1) >> (64 - sh)) : word(w);
}

// |x| (finite, >= 2^20) = m 2^e, m < 2^53, reduced exactly: |x| - q pi/2 =
// rh + rl with |r| <= pi/4. m * (192 bits of 2/pi from bit e - 1) mod 2^192
// is (|x| 2/pi mod 4) scaled by 2^190: its top two bits are the quadrant and
// the rest the fraction, read as a signed number so that a fraction above one
// half rounds the quadrant up. The bits of 2/pi beyond the window add less
// than 2^-137 to the fraction; the closest double to a multiple of pi/2 has
// a fraction near 2^-62, so 128 bits of it leave r good to 2^-60 relative.
unsigned reduce_big64(double ax, double& rh, double& rl) {
    const std::uint64_t u = std::bit_cast<std::uint64_t>(ax);
    const std::uint64_t m = (u & 0x000fffffffffffffULL) | 0x0010000000000000ULL;
    const int e = static_cast<int>(u >> 52) - 1075;
    const std::uint64_t w2 = two_over_pi_word(e - 1), w1 = two_over_pi_word(e + 63),
                        w0 = two_over_pi_word(e + 127);
    using u128 = unsigned __int128;
    const u128 p0 = static_cast<u128>(m) * w0;
    const u128 p1 = static_cast<u128>(m) * w1 + static_cast<std::uint64_t>(p0 >> 64);
    const std::uint64_t r2 = static_cast<std::uint64_t>(p1 >> 64) + m * w2;
    const std::uint64_t r1 = static_cast<std::uint64_t>(p1), r0 = static_cast<std::uint64_t>(p0);
    unsigned q = static_cast<unsigned>(r2 >> 62);
    // The 128 fraction bits after the quadrant, as a signed fraction of 2^128.
    const u128 fu = (static_cast<u128>((r2 << 2) | (r1 >> 62)) << 64) | ((r1 << 2) | (r0 >> 62));
    const auto f = static_cast<__int128>(fu);
    if (f < 0) ++q;
    // f / 2 in [-2^126, 2^126): its double and the (exact) rest.
    const __int128 h = f >> 1;
    const double fh = static_cast<double>(h);
    const double fl = static_cast<double>(h - static_cast<__int128>(fh));
    // (fh + fl) 2^-127 (pi/2), double-double.
    double p, pe, s, t;
    v::two_prod(fh * 0x1p-127, v::kPio2Hi, p, pe);
    v::fast_two_sum(p, pe + (fh * 0x1p-127 * v::kPio2Lo + fl * 0x1p-127 * v::kPio2Hi), s, t);
    rh = s;
    rl = t;
    return q & 3;
}

}  // namespace

double sin_big64(double x) {
    if (x != x) return x;
    if (std::isinf(x)) return std::numeric_limits<double>::quiet_NaN();
    double rh, rl;
    const unsigned q = reduce_big64(std::fabs(x), rh, rl);
    const double s = v::sin_quadrant<double>(q, rh, rl);
    return x < 0 ? -s : s;
}
double cos_big64(double x) {
    if (x != x) return x;
    if (std::isinf(x)) return std::numeric_limits<double>::quiet_NaN();
    double rh, rl;
    const unsigned q = reduce_big64(std::fabs(x), rh, rl);
    return v::sin_quadrant<double>((q + 1) & 3, rh, rl);
}
double tan_big64(double x) {
    if (x != x) return x;
    if (std::isinf(x)) return std::numeric_limits<double>::quiet_NaN();
    double rh, rl;
    const unsigned q = reduce_big64(std::fabs(x), rh, rl);
    const double t = v::tan_quadrant<double>(q, rh, rl);
    return x < 0 ? -t : t;
}

}  // namespace detail

double exp(double x) { return detail::v::exp64(x); }
double exp2(double x) { return detail::v::exp2_64(x); }
double expm1(double x) { return detail::v::expm1_64(x); }
double log(double x) { return detail::v::log64(x); }
double log2(double x) { return detail::v::log2_64(x); }
double log10(double x) { return detail::v::log10_64(x); }
double log1p(double x) { return detail::v::log1p64(x); }
double tanh(double x) { return detail::v::tanh64(x); }
double atan(double x) { return detail::v::atan64(x); }
double sin(double x) {
    if (!(std::fabs(x) < detail::v::kTrigFast64)) return detail::sin_big64(x);
    return detail::v::sin64_fast(x);
}
double cos(double x) {
    if (!(std::fabs(x) < detail::v::kTrigFast64)) return detail::cos_big64(x);
    return detail::v::cos64_fast(x);
}
double tan(double x) {
    if (!(std::fabs(x) < detail::v::kTrigFast64)) return detail::tan_big64(x);
    return detail::v::tan64_fast(x);
}

}  // namespace hrx::fmath
