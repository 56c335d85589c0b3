// hx.random's kernels: Philox4x32-10 and the distributions drawn from it
// (Note [Random streams] in random.h).
#include "kernels/random.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/pool.h"

namespace hrx::kernels {

namespace {

// The multipliers and Weyl key increments of the Philox paper (section 5).
constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
constexpr double kTwoM53 = 1.0 / 9007199254740992.0;  // 2^-53
constexpr double kTwoM52 = 2.0 * kTwoM53;
constexpr float kTwoM24 = 1.0f / 16777216.0f;
// Elements per pool item: a multiple of 4 so every item starts on a block.
constexpr int64_t kChunk = int64_t{1} << 15;

Philox4x32 block(uint64_t key, uint64_t slot, uint32_t attempt) noexcept {
    const uint32_t c[4] = {static_cast<uint32_t>(slot), static_cast<uint32_t>(slot >> 32), attempt, 0};
    return philox4x32_10(c, static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32));
}

uint64_t word64(const uint32_t* b, int half) noexcept {
    return (uint64_t{b[2 * half]} << 32) | b[2 * half + 1];
}

// Attempt 0 of kRun consecutive slots at once: the same rounds as
// philox4x32_10, laid out lane by lane so that the compiler vectorises them
// (integer arithmetic: every path gives the same bits).
constexpr int kRun = 64;
using Run = uint32_t[kRun][4];

inline __attribute__((always_inline)) void philox_run_impl(uint64_t key, uint64_t slot0, Run& out) noexcept {
    alignas(64) uint32_t x0[kRun], x1[kRun], x2[kRun], x3[kRun];
    for (int l = 0; l < kRun; ++l) {
        const uint64_t s = slot0 + static_cast<uint64_t>(l);
        x0[l] = static_cast<uint32_t>(s);
        x1[l] = static_cast<uint32_t>(s >> 32);
        x2[l] = 0;
        x3[l] = 0;
    }
    uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
    for (int round = 0; round < 10; ++round) {
        if (round > 0) {
            k0 += kW0;
            k1 += kW1;
        }
        for (int l = 0; l < kRun; ++l) {
            const uint64_t p0 = uint64_t{kM0} * x0[l];
            const uint64_t p1 = uint64_t{kM1} * x2[l];
            const uint32_t y0 = static_cast<uint32_t>(p1 >> 32) ^ x1[l] ^ k0;
            const uint32_t y2 = static_cast<uint32_t>(p0 >> 32) ^ x3[l] ^ k1;
            x1[l] = static_cast<uint32_t>(p1);
            x3[l] = static_cast<uint32_t>(p0);
            x0[l] = y0;
            x2[l] = y2;
        }
    }
    for (int l = 0; l < kRun; ++l) {
        out[l][0] = x0[l];
        out[l][1] = x1[l];
        out[l][2] = x2[l];
        out[l][3] = x3[l];
    }
}

// The logarithm of a positive normal double times 2^(-extra): x = m * 2^e with
// m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(f) with f = (m-1)/(m+1), |f| <=
// 0.172, so twelve odd terms of the series reach double precision. Branch-free
// and without integer-to-double conversions, so loops over it vectorise; the
// exponent becomes a double exactly through the 2^52 trick.
inline __attribute__((always_inline)) double log_normal(double x, double extra) noexcept {
    uint64_t bits;
    std::memcpy(&bits, &x, 8);
    const uint64_t mbits = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1022} << 52);
    const uint64_t ebits = uint64_t{0x4330000000000000} | (bits >> 52);
    double m0, e0;
    std::memcpy(&m0, &mbits, 8);
    std::memcpy(&e0, &ebits, 8);
    e0 = e0 - 4503599627370496.0 - 1022.0 + extra;  // exact integers
    // Arithmetic on bit patterns instead of branches (times 1 and minus 0 are
    // exact), so that the loop has no control flow to stop vectorisation.
    // m0 < sqrt(1/2), compared as bit patterns (both in [0.5, 1)).
    const uint64_t low = mbits < uint64_t{0x3FE6A09E667F3BCD} ? 1 : 0;
    const uint64_t scale_bits = (uint64_t{1023} + low) << 52, shift_bits = low * uint64_t{0x3FF0000000000000};
    double scale, shift;
    std::memcpy(&scale, &scale_bits, 8);
    std::memcpy(&shift, &shift_bits, 8);
    const double m = m0 * scale;   // m0 * 2 or m0 * 1
    const double de = e0 - shift;  // e0 - 1 or e0 - 0
    const double f = (m - 1.0) / (m + 1.0);
    const double f2 = f * f;
    double p = 1.0 / 23.0;
#pragma GCC unroll 11
    for (int k = 10; k >= 0; --k) p = p * f2 + 1.0 / static_cast<double>(2 * k + 1);
    const double logm = 2.0 * f * p;
    constexpr double kLn2Hi = 0x1.62e42fee00000p-1, kLn2Lo = 0x1.a39ef35793c76p-33;
    return de * kLn2Hi + (de * kLn2Lo + logm);
}

// q = -2 log(s) / s for the polar method, s in (0, 1).
inline __attribute__((always_inline)) void polar_q_impl(const double* s, double* q, int n) noexcept {
    for (int l = 0; l < n; ++l) q[l] = -2.0 * log_normal(s[l], 0.0) / s[l];
}
// Vector clones of the two hot loops. Integer arithmetic, IEEE +, -, *, /
// and nothing contracted (-ffp-contract=off): every clone gives the bits of
// the portable build.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HRX_RANDOM_X86 1
#define HRX_RANDOM_AVX512 __attribute__((target("avx2,avx512f,avx512bw,avx512vl")))
enum class Isa : uint8_t { Portable, Avx2, Avx512 };
Isa isa() noexcept {
    static const Isa v = [] {
        const std::string_view best = best_kernel_path();
        if (best == "avx512" || best == "avx512_bf16" || best == "amx_bf16") return Isa::Avx512;
        return best == "avx2" ? Isa::Avx2 : Isa::Portable;
    }();
    return v;
}
HRX_RANDOM_AVX512 void philox_run_avx512(uint64_t key, uint64_t slot0, Run& out) noexcept {
    philox_run_impl(key, slot0, out);
}
__attribute__((target("avx2"))) void philox_run_avx2(uint64_t key, uint64_t slot0, Run& out) noexcept {
    philox_run_impl(key, slot0, out);
}
HRX_RANDOM_AVX512 void polar_q_avx512(const double* s, double* q, int n) noexcept { polar_q_impl(s, q, n); }
__attribute__((target("avx2"))) void polar_q_avx2(const double* s, double* q, int n) noexcept { polar_q_impl(s, q, n); }
#endif

void philox_run(uint64_t key, uint64_t slot0, Run& out) noexcept {
#ifdef HRX_RANDOM_X86
    switch (isa()) {
        case Isa::Avx512: return philox_run_avx512(key, slot0, out);
        case Isa::Avx2: return philox_run_avx2(key, slot0, out);
        case Isa::Portable: break;
    }
#endif
    philox_run_impl(key, slot0, out);
}

void polar_q(const double* s, double* q, int n) noexcept {
#ifdef HRX_RANDOM_X86
    switch (isa()) {
        case Isa::Avx512: return polar_q_avx512(s, q, n);
        case Isa::Avx2: return polar_q_avx2(s, q, n);
        case Isa::Portable: break;
    }
#endif
    polar_q_impl(s, q, n);
}

// fn(i, block words) for every slot i in [s_lo, s_hi), attempt 0, a run at a time.
template <class Fn>
void for_blocks(uint64_t key, uint64_t counter, int64_t s_lo, int64_t s_hi, const Fn& fn) noexcept {
    Run run;
    for (int64_t s = s_lo; s < s_hi; s += kRun) {
        philox_run(key, counter + static_cast<uint64_t>(s), run);
        const int64_t m = std::min<int64_t>(kRun, s_hi - s);
        for (int64_t l = 0; l < m; ++l) fn(s + l, run[l]);
    }
}

template <class Fn>
void chunked(int64_t n, const Fn& fn) noexcept {
    const int64_t items = (n + kChunk - 1) / kChunk;
    pool_run(static_cast<std::size_t>(items), [&](std::size_t it) {
        const int64_t lo = static_cast<int64_t>(it) * kChunk;
        fn(lo, std::min(n, lo + kChunk));
    });
}

// Values per block: elements [lo, hi) of a chunk use the slots [lo/per, ceil(hi/per)).
template <int Per, class Fn>
void chunked_slots(uint64_t key, uint64_t counter, int64_t n, const Fn& fn) noexcept {
    chunked(n, [&](int64_t lo, int64_t hi) {
        for_blocks(key, counter, lo / Per, (hi + Per - 1) / Per, [&](int64_t slot, const uint32_t* b) {
            const int64_t first = slot * Per;
            fn(slot, b, first, std::min<int64_t>(Per, hi - first));
        });
    });
}

template <class T>
void uniform_into(uint64_t key, uint64_t counter, int64_t n, double a, double b, T* out) noexcept {
    if constexpr (sizeof(T) == 8) {
        chunked_slots<2>(key, counter, n, [&](int64_t, const uint32_t* w, int64_t i, int64_t m) {
            for (int h = 0; h < m; ++h) out[i + h] = a + b * (static_cast<double>(static_cast<int64_t>(word64(w, h) >> 11)) * kTwoM53);
        });
    } else {
        chunked_slots<4>(key, counter, n, [&](int64_t, const uint32_t* w, int64_t i, int64_t m) {
            for (int h = 0; h < m; ++h) {
                const float u = static_cast<float>(w[h] >> 8) * kTwoM24;
                out[i + h] = static_cast<T>(a + b * static_cast<double>(u));
            }
        });
    }
}

template <class T>
void normal_into(uint64_t key, uint64_t counter, int64_t n, double a, double b, T* out) noexcept {
    chunked(n, [&](int64_t lo, int64_t hi) {
        Run run;
        alignas(64) double u[kRun], v[kRun], s[kRun], q[kRun];
        for (int64_t s0 = lo / 2; s0 < (hi + 1) / 2; s0 += kRun) {
            const uint64_t slot0 = counter + static_cast<uint64_t>(s0);
            philox_run(key, slot0, run);
            const int m = static_cast<int>(std::min<int64_t>(kRun, (hi + 1) / 2 - s0));
            for (int l = 0; l < m; ++l) {
                const uint32_t* w = run[l];
                Philox4x32 again;
                for (uint32_t attempt = 1;; ++attempt) {
                    u[l] = static_cast<double>(static_cast<int64_t>(word64(w, 0) >> 11)) * kTwoM52 - 1.0;
                    v[l] = static_cast<double>(static_cast<int64_t>(word64(w, 1) >> 11)) * kTwoM52 - 1.0;
                    s[l] = u[l] * u[l] + v[l] * v[l];
                    if (s[l] > 0.0 && s[l] < 1.0) break;
                    again = block(key, slot0 + static_cast<uint64_t>(l), attempt);
                    w = again.v;
                }
            }
            polar_q(s, q, m);
            for (int l = 0; l < m; ++l) {
                const double f = std::sqrt(q[l]);
                const int64_t i = 2 * (s0 + l);
                out[i] = static_cast<T>(a + b * (u[l] * f));
                if (i + 1 < hi) out[i + 1] = static_cast<T>(a + b * (v[l] * f));
            }
        }
    });
}

// Lemire's multiply-and-reject over `range` values (0: all 2^64) for value
// `lane` of its slot: ranges up to 2^32 take word `lane` (of 4) of the slot's
// attempts 0, 1, ...; wider ones 64-bit half `lane` (of 2).
template <bool Narrow>
uint64_t bounded(uint64_t key, uint64_t slot, int lane, const uint32_t* w, uint64_t range, uint64_t threshold) noexcept {
    Philox4x32 again;
    for (uint32_t attempt = 1;; ++attempt) {
        if constexpr (Narrow) {
            const uint64_t m = uint64_t{w[lane]} * range;
            if (static_cast<uint32_t>(m) >= threshold) return m >> 32;
        } else {
            const uint64_t x = word64(w, lane);
            if (range == 0) return x;
            const unsigned __int128 m = static_cast<unsigned __int128>(x) * range;
            if (static_cast<uint64_t>(m) >= threshold) return static_cast<uint64_t>(m >> 64);
        }
        again = block(key, slot, attempt);
        w = again.v;
    }
}

bool narrow_range(uint64_t range) noexcept { return range != 0 && range <= (uint64_t{1} << 32); }

// (2^w - range) mod range for w = 32 (narrow) or 64: the low products below
// it are the ones that would make some results more likely than others.
uint64_t threshold_of(uint64_t range, bool narrow) noexcept {
    if (narrow) return range == (uint64_t{1} << 32) ? 0 : (uint64_t{1} << 32) % range;
    return range == 0 ? 0 : (0 - range) % range;
}

// low[e] + r, r uniform in [0, range[e]); e = i with `each`, else 0 (one
// range for all, its threshold computed once).
template <class T, bool Narrow>
void integers_into(uint64_t key, uint64_t counter, int64_t n, const uint64_t* low, const uint64_t* range, bool each,
                   T* out) noexcept {
    if (n == 0) return;
    const uint64_t thr0 = threshold_of(range[0], Narrow);
    chunked_slots<Narrow ? 4 : 2>(key, counter, n, [&](int64_t slot, const uint32_t* w, int64_t i, int64_t m) {
        for (int h = 0; h < m; ++h) {
            const int64_t e = each ? i + h : 0;
            const uint64_t thr = each ? threshold_of(range[e], Narrow) : thr0;
            out[i + h] = static_cast<T>(
                low[e] + bounded<Narrow>(key, counter + static_cast<uint64_t>(slot), h, w, range[e], thr));
        }
    });
}

template <class T>
void integers_typed(uint64_t key, uint64_t counter, int64_t n, const uint64_t* low, const uint64_t* range, bool each,
                    bool narrow, T* out) noexcept {
    if (narrow)
        integers_into<T, true>(key, counter, n, low, range, each, out);
    else
        integers_into<T, false>(key, counter, n, low, range, each, out);
}

void integers_any(DType dtype, uint64_t key, uint64_t counter, int64_t n, const uint64_t* low, const uint64_t* range,
                  bool each, bool narrow, void* out) noexcept {
    switch (dtype_itemsize(dtype)) {
        case 1: integers_typed(key, counter, n, low, range, each, narrow, static_cast<uint8_t*>(out)); break;
        case 2: integers_typed(key, counter, n, low, range, each, narrow, static_cast<uint16_t*>(out)); break;
        case 4: integers_typed(key, counter, n, low, range, each, narrow, static_cast<uint32_t*>(out)); break;
        default: integers_typed(key, counter, n, low, range, each, narrow, static_cast<uint64_t*>(out)); break;
    }
}

}  // namespace

Philox4x32 philox4x32_10(const uint32_t c[4], uint32_t k0, uint32_t k1) noexcept {
    uint32_t x0 = c[0], x1 = c[1], x2 = c[2], x3 = c[3];
    for (int round = 0; round < 10; ++round) {
        if (round > 0) {
            k0 += kW0;
            k1 += kW1;
        }
        const uint64_t p0 = uint64_t{kM0} * x0;
        const uint64_t p1 = uint64_t{kM1} * x2;
        const uint32_t y0 = static_cast<uint32_t>(p1 >> 32) ^ x1 ^ k0;
        const uint32_t y2 = static_cast<uint32_t>(p0 >> 32) ^ x3 ^ k1;
        x1 = static_cast<uint32_t>(p1);
        x3 = static_cast<uint32_t>(p0);
        x0 = y0;
        x2 = y2;
    }
    return Philox4x32{{x0, x1, x2, x3}};
}

double random_log(double x) noexcept {
    uint64_t bits;
    std::memcpy(&bits, &x, 8);
    if (((bits >> 52) & 0x7ff) == 0) return log_normal(x * 18014398509481984.0, -54.0);  // subnormal: times 2^54
    return log_normal(x, 0.0);
}

uint64_t random_integer_blocks(bool narrow, int64_t n) noexcept {
    const uint64_t per = narrow ? 4 : 2;
    return (static_cast<uint64_t>(n) + per - 1) / per;
}

uint64_t random_real_blocks(RandomDist dist, DType dtype, int64_t n) noexcept {
    const uint64_t per = dist == RandomDist::Uniform && dtype == DType::Float32 ? 4 : 2;
    return (static_cast<uint64_t>(n) + per - 1) / per;
}

void random_real(RandomDist dist, DType dtype, uint64_t key, uint64_t counter, int64_t n, double a, double b,
                 void* out) noexcept {
    if (dist == RandomDist::Uniform) {
        if (dtype == DType::Float32)
            uniform_into(key, counter, n, a, b, static_cast<float*>(out));
        else
            uniform_into(key, counter, n, a, b, static_cast<double*>(out));
    } else {
        if (dtype == DType::Float32)
            normal_into(key, counter, n, a, b, static_cast<float*>(out));
        else
            normal_into(key, counter, n, a, b, static_cast<double*>(out));
    }
}

void random_integers(DType dtype, uint64_t key, uint64_t counter, int64_t n, uint64_t low, uint64_t range,
                     void* out) noexcept {
    integers_any(dtype, key, counter, n, &low, &range, false, narrow_range(range), out);
}

bool random_integers_narrow(const uint64_t* range, int64_t n) noexcept {
    return std::all_of(range, range + n, narrow_range);
}

void random_integers_each(DType dtype, uint64_t key, uint64_t counter, int64_t n, const uint64_t* low,
                          const uint64_t* range, void* out) noexcept {
    integers_any(dtype, key, counter, n, low, range, true, random_integers_narrow(range, n), out);
}

void random_choice_cdf(uint64_t key, uint64_t counter, int64_t n, const double* cdf, int64_t cdf_len,
                       int64_t* out) noexcept {
    chunked_slots<2>(key, counter, n, [&](int64_t, const uint32_t* w, int64_t i, int64_t m) {
        for (int h = 0; h < m; ++h) {
            const double u = static_cast<double>(static_cast<int64_t>(word64(w, h) >> 11)) * kTwoM53;
            const int64_t j = std::upper_bound(cdf, cdf + cdf_len, u) - cdf;
            out[i + h] = std::min(j, cdf_len - 1);
        }
    });
}

namespace {

// Floyd's algorithm: draw j of k takes t uniform in [0, n - k + j] (slot j,
// value lane 0) and keeps t, or n - k + j when t was kept already; exactly k
// distinct indices, every k-subset equally likely. Their order comes from one
// more 64-bit key each (slots k, k+1, ... in the order they were kept).
bool sample_sparse(uint64_t key, uint64_t counter, int64_t n, int64_t k, bool sorted, int64_t* out) noexcept {
    std::vector<std::pair<uint64_t, int64_t>> keys;
    std::unordered_set<int64_t> kept;
    try {
        keys.reserve(static_cast<std::size_t>(k));
        kept.reserve(static_cast<std::size_t>(k));
        for (int64_t j = 0; j < k; ++j) {
            const uint64_t range = static_cast<uint64_t>(n - k + j + 1);
            const uint64_t slot = counter + static_cast<uint64_t>(j);
            const Philox4x32 b = block(key, slot, 0);
            const uint64_t t = narrow_range(range)
                                   ? bounded<true>(key, slot, 0, b.v, range, threshold_of(range, true))
                                   : bounded<false>(key, slot, 0, b.v, range, threshold_of(range, false));
            const int64_t pick = kept.insert(static_cast<int64_t>(t)).second ? static_cast<int64_t>(t) : n - k + j;
            if (pick != static_cast<int64_t>(t)) kept.insert(pick);
            keys.push_back({0, pick});
        }
    } catch (const std::bad_alloc&) {
        return false;
    }
    for (int64_t j = 0; j < k; ++j) {
        const Philox4x32 b = block(key, counter + static_cast<uint64_t>(k + j), 0);
        keys[static_cast<std::size_t>(j)].first = word64(b.v, 0);
    }
    std::sort(keys.begin(), keys.end());
    for (int64_t i = 0; i < k; ++i) out[i] = keys[static_cast<std::size_t>(i)].second;
    if (sorted) std::sort(out, out + k);
    return true;
}

// Floyd's k draws (and k keys) instead of n keys where k is small against n.
bool sparse_sample(int64_t n, int64_t k, bool weighted) noexcept { return !weighted && k <= n / 16; }

}  // namespace

uint64_t random_sample_blocks(int64_t n, int64_t k, bool weighted) noexcept {
    return static_cast<uint64_t>(sparse_sample(n, k, weighted) ? 2 * k : n);
}

bool random_sample(uint64_t key, uint64_t counter, int64_t n, int64_t k, const double* weights, bool sorted,
                   int64_t* out) noexcept {
    if (sparse_sample(n, k, weights != nullptr)) return sample_sparse(key, counter, n, k, sorted, out);
    std::vector<std::pair<uint64_t, int64_t>> keys;
    try {
        keys.resize(static_cast<std::size_t>(n));
    } catch (const std::bad_alloc&) {
        return false;
    }
    chunked_slots<1>(key, counter, n, [&](int64_t i, const uint32_t* w, int64_t, int64_t) {
        uint64_t kbits = word64(w, 0);
        if (weights) {
            // Exponential keys -log(u)/w, u in (0, 1]; non-negative doubles
            // order as their bit patterns (0.0 - log: never -0.0).
            const double u = static_cast<double>(static_cast<int64_t>((kbits >> 11) + 1)) * kTwoM53;
            const double wt = weights[i];
            const double e = wt > 0.0 ? (0.0 - random_log(u)) / wt : HUGE_VAL;
            std::memcpy(&kbits, &e, 8);
        }
        keys[static_cast<std::size_t>(i)] = {kbits, i};
    });
    if (k < n) std::nth_element(keys.begin(), keys.begin() + k, keys.end());
    std::sort(keys.begin(), keys.begin() + k);
    for (int64_t i = 0; i < k; ++i) out[i] = keys[static_cast<std::size_t>(i)].second;
    if (sorted) std::sort(out, out + k);
    return true;
}

void gather_rows(const uint8_t* src, std::size_t row_bytes, const int64_t* idx, int64_t k, uint8_t* dst) noexcept {
    chunked(k, [&](int64_t lo, int64_t hi) {
        for (int64_t r = lo; r < hi; ++r)
            std::memcpy(dst + static_cast<std::size_t>(r) * row_bytes, src + static_cast<std::size_t>(idx[r]) * row_bytes,
                        row_bytes);
    });
}

}  // namespace hrx::kernels
