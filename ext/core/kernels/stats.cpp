#include "kernels/stats.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "errors.h"
#include "kernels/cpu_features.h"
#include "kernels/elementwise_impl.h"
#include "kernels/pool.h"

namespace hrx::kernels {
namespace {

// Elements per chunk of a split count: large enough that each chunk's
// private histogram costs little next to its elements.
constexpr std::int64_t kChunk = 1 << 16;

// The chunks of an n-element count split over the pool: one when the
// private histograms would cost more than the elements (few elements per bin).
std::int64_t count_chunks(std::int64_t n, std::int64_t nbins) {
    const std::int64_t threads = static_cast<std::int64_t>(pool_threads());
    if (threads <= 1 || n < 2 * kChunk || nbins > n / 8) return 1;
    return std::min<std::int64_t>(threads * 2, (n + kChunk - 1) / kChunk);
}

// Counts of the bins `bin_of(i)` returns (a negative bin is skipped) for i < n,
// split as count_chunks says and added in chunk order (exact: integers).
template <typename BinOf>
void count_split(std::int64_t n, std::int64_t nbins, std::int64_t* counts, const BinOf& bin_of) {
    std::fill(counts, counts + nbins, std::int64_t{0});
    const std::int64_t chunks = count_chunks(n, nbins);
    if (chunks == 1) {
        for (std::int64_t i = 0; i < n; ++i) {
            const std::int64_t b = bin_of(i);
            if (b >= 0) ++counts[b];
        }
        return;
    }
    std::vector<std::vector<std::int64_t>> part(static_cast<size_t>(chunks));
    const std::int64_t step = (n + chunks - 1) / chunks;
    pool_run(static_cast<size_t>(chunks), [&](size_t c) {
        std::vector<std::int64_t>& h = part[c];
        h.assign(static_cast<size_t>(nbins), 0);
        const std::int64_t lo = static_cast<std::int64_t>(c) * step, hi = std::min(n, lo + step);
        for (std::int64_t i = lo; i < hi; ++i) {
            const std::int64_t b = bin_of(i);
            if (b >= 0) ++h[static_cast<size_t>(b)];
        }
    });
    for (const auto& h : part)
        for (std::int64_t b = 0; b < nbins; ++b) counts[b] += h[static_cast<size_t>(b)];
}

// Runs fn(lo, hi) over [0, n) in pieces of at least `grain`, over the pool.
template <typename Fn>
void split_range(std::int64_t n, std::int64_t grain, const Fn& fn) {
    const std::int64_t threads = static_cast<std::int64_t>(pool_threads());
    const std::int64_t pieces = std::max<std::int64_t>(1, std::min(threads * 4, n / std::max<std::int64_t>(grain, 1)));
    if (pieces == 1) {
        fn(std::int64_t{0}, n);
        return;
    }
    const std::int64_t step = (n + pieces - 1) / pieces;
    pool_run(static_cast<size_t>(pieces), [&](size_t p) {
        const std::int64_t lo = static_cast<std::int64_t>(p) * step;
        if (lo < n) fn(lo, std::min(n, lo + step));
    });
}

// numpy.histogram's bin of one value: on uniform bins its computed index,
// then the corrections against the edges; otherwise the last edge <= x.
template <typename T>
std::int64_t bin_of(T x, const T* edges, std::int64_t nbins, const UniformBins* u, T first, T last, T denom) {
    if (u) {
        if (!(x >= first && x <= last)) return -1;  // outside, or NaN
        const T d = static_cast<T>(x - first);
        std::int64_t i = u->wide ? static_cast<std::int64_t>((static_cast<double>(d) / u->denom) * static_cast<double>(nbins))
                                 : static_cast<std::int64_t>(static_cast<T>(static_cast<T>(d / denom) * static_cast<T>(nbins)));
        if (i == nbins) --i;
        if (x < edges[i]) --i;
        if (i != nbins - 1 && x >= edges[i + 1]) ++i;
        return i;
    }
    if (!(x >= edges[0] && x <= edges[nbins])) return -1;
    if (x == edges[nbins]) return nbins - 1;
    // The last edge <= x: edges[i] <= x < edges[i + 1] (upper bound - 1).
    const T* at = std::upper_bound(edges, edges + nbins + 1, x);
    return static_cast<std::int64_t>(at - edges) - 1;
}

template <typename T>
void bins_typed(const T* data, std::int64_t n, const T* edges, std::int64_t nbins, const UniformBins* u,
                std::int64_t* bin) {
    const T first = static_cast<T>(u ? u->first : 0), last = static_cast<T>(u ? u->last : 0);
    const T denom = static_cast<T>(u ? u->denom : 1);
    split_range(n, kChunk, [&](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t i = lo; i < hi; ++i) bin[i] = bin_of(data[i], edges, nbins, u, first, last, denom);
    });
}

template <typename Acc>
void add_block(const std::vector<double>& block, std::int64_t nbins, Acc* out) {
    for (std::int64_t b = 0; b < nbins; ++b) {
        // NumPy's astype(ntype): float64 to the accumulator, integers truncated.
        out[b] = static_cast<Acc>(out[b] + static_cast<Acc>(block[static_cast<size_t>(b)]));
    }
}

// NumPy's mean of the middle slice: a sum from +0.0 (so -0.0 gives +0.0), then / count.
template <typename T>
T middle_mean(T lo, T hi, bool odd) {
    if (odd) return static_cast<T>(T(0) + hi);
    return static_cast<T>(static_cast<T>(static_cast<T>(T(0) + lo) + hi) / static_cast<T>(2));
}

// The median of a short row: a scratch copy, partitioned.
template <typename T>
T median_by_partition(const T* r, std::int64_t n, std::vector<T>& scratch) {
    scratch.assign(r, r + n);
    const std::int64_t k = n / 2;
    std::nth_element(scratch.begin(), scratch.begin() + k, scratch.end());
    const T hi = scratch[static_cast<size_t>(k)];
    const T lo = n % 2 ? hi : *std::max_element(scratch.begin(), scratch.begin() + k);
    return middle_mean(lo, hi, n % 2 != 0);
}

// Note [Radix selection]: a long row's middle values are found without
// copying it: one pass counts the elements of each of 65,536 buckets of
// their order-preserving keys (the top 16 bits: sign, exponent and leading
// mantissa bits; NaNs are counted apart), the buckets holding ranks n/2 - 1
// and n/2 are read off the counts, and a second pass gathers only those
// buckets' elements to partition. The values are exact order statistics, so
// the result is the partition's, bit for bit.
template <typename T>
struct KeyOf;
template <>
struct KeyOf<float> {
    using U = std::uint32_t;
};
template <>
struct KeyOf<double> {
    using U = std::uint64_t;
};

template <typename T>
typename KeyOf<T>::U order_key(T v) {
    using U = typename KeyOf<T>::U;
    U u;
    std::memcpy(&u, &v, sizeof u);
    constexpr U sign = U(1) << (sizeof(U) * 8 - 1);
    return (u & sign) ? U(~u) : U(u | sign);
}

template <typename T>
T median_by_radix(const T* r, std::int64_t n, std::vector<T>& scratch) {
    constexpr int shift = static_cast<int>(sizeof(T) * 8) - 16;
    std::vector<std::uint32_t> hist(65536, 0);
    for (std::int64_t i = 0; i < n; ++i) {
        if (std::isnan(r[i])) return std::numeric_limits<T>::quiet_NaN();
        ++hist[static_cast<size_t>(order_key(r[i]) >> shift)];
    }
    const std::int64_t k = n / 2, k1 = n % 2 ? k : k - 1;
    // The bucket holding rank `want`, and the ranks below it.
    auto locate = [&](std::int64_t want, std::int64_t* below) {
        std::int64_t acc = 0;
        for (std::uint32_t b = 0;; ++b) {
            if (acc + hist[b] > want) {
                *below = acc;
                return b;
            }
            acc += hist[b];
        }
    };
    std::int64_t below_hi = 0, below_lo = 0;
    const std::uint32_t bhi = locate(k, &below_hi), blo = locate(k1, &below_lo);
    scratch.clear();
    scratch.reserve(static_cast<size_t>(hist[blo] + (blo != bhi ? hist[bhi] : 0)));
    for (std::int64_t i = 0; i < n; ++i) {
        const std::uint32_t b = static_cast<std::uint32_t>(order_key(r[i]) >> shift);
        if (b == blo || b == bhi) scratch.push_back(r[i]);
    }
    // Bucket blo's elements first (ranks from below_lo), then bhi's.
    const auto split = std::partition(scratch.begin(), scratch.end(), [&](T v) {
        return static_cast<std::uint32_t>(order_key(v) >> shift) == blo;
    });
    auto select = [](auto first, auto last, std::int64_t rank) {
        std::nth_element(first, first + rank, last);
        return *(first + rank);
    };
    const T lo = select(scratch.begin(), split, k1 - below_lo);
    if (n % 2) return middle_mean(lo, lo, true);
    const T hi = blo == bhi ? select(scratch.begin(), split, k - below_lo) : select(split, scratch.end(), k - below_hi);
    return middle_mean(lo, hi, false);
}

template <typename T>
T median_of(const T* r, std::int64_t n, std::vector<T>& scratch) {
    if (n >= (1 << 14)) return median_by_radix(r, n, scratch);
    for (std::int64_t i = 0; i < n; ++i)
        if (std::isnan(r[i])) return std::numeric_limits<T>::quiet_NaN();
    return median_by_partition(r, n, scratch);
}

template <typename T>
void median_typed(const T* data, std::int64_t rows, std::int64_t n, T* out, bool skip_nan) {
    // nanmedian: a row holding NaNs gives the median of its numbers (a copy of them), NaN when it has none.
    auto row_median = [n, skip_nan](const T* r, std::vector<T>& scratch, std::vector<T>& numbers) -> T {
        std::int64_t i = 0;
        if (skip_nan) {
            while (i < n && !std::isnan(r[i])) ++i;
            if (i < n) {
                numbers.assign(r, r + i);
                for (++i; i < n; ++i)
                    if (!std::isnan(r[i])) numbers.push_back(r[i]);
                if (numbers.empty()) return std::numeric_limits<T>::quiet_NaN();
                return median_of(numbers.data(), static_cast<std::int64_t>(numbers.size()), scratch);
            }
        }
        return median_of(r, n, scratch);
    };
    if (rows == 1) {
        std::vector<T> scratch, numbers;
        out[0] = row_median(data, scratch, numbers);
        return;
    }
    split_range(rows, std::max<std::int64_t>(1, kChunk / std::max<std::int64_t>(n, 1)), [&](std::int64_t lo, std::int64_t hi) {
        std::vector<T> scratch, numbers;
        for (std::int64_t r = lo; r < hi; ++r) out[r] = row_median(data + r * n, scratch, numbers);
    });
}

// Float32 and Float64 sum in double; Int64 in uint64 (wrapping, no UB).
template <typename T>
struct SumOf {
    using type = double;
};
template <>
struct SumOf<std::int64_t> {
    using type = std::uint64_t;
};

// Outputs [0, cnt) of a block whose every tap lies inside a, from `base` (a
// at the block's first output's tap 0): tiles of 32 outputs keep their sums
// in registers over all taps. The same source compiled for AVX-512, AVX2 and
// the portable ISA (one rounding per product and per sum in every lane, no
// fused multiply-adds: Note [Sliding dot order]), so every path gives the
// same bits.
#define HRX_CORRELATE_BLOCK(NAME, ATTR, T, S)                                                         \
    ATTR void NAME(const T* base, const S* vs, std::int64_t m, std::int64_t cnt, T* out) {           \
        std::int64_t i0 = 0;                                                                          \
        for (; i0 + 32 <= cnt; i0 += 32) {                                                            \
            S acc[32] = {};                                                                           \
            for (std::int64_t j = 0; j < m; ++j) {                                                    \
                const S w = vs[j];                                                                    \
                const T* x = base + i0 + j;                                                           \
                for (int t = 0; t < 32; ++t) acc[t] = static_cast<S>(acc[t] + static_cast<S>(x[t]) * w); \
            }                                                                                         \
            for (int t = 0; t < 32; ++t) out[i0 + t] = static_cast<T>(acc[t]);                       \
        }                                                                                             \
        for (; i0 < cnt; ++i0) {                                                                      \
            S acc = 0;                                                                                \
            for (std::int64_t j = 0; j < m; ++j) acc = static_cast<S>(acc + static_cast<S>(base[i0 + j]) * vs[j]); \
            out[i0] = static_cast<T>(acc);                                                            \
        }                                                                                             \
    }

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HRX_STATS_X86 1
#define HRX_CORRELATE_VARIANTS(T, S, SUFFIX)                                                          \
    HRX_CORRELATE_BLOCK(block_portable_##SUFFIX, , T, S)                                              \
    HRX_CORRELATE_BLOCK(block_avx2_##SUFFIX, __attribute__((target("avx2"))), T, S)                   \
    HRX_CORRELATE_BLOCK(block_avx512_##SUFFIX, __attribute__((target("avx2,avx512f,avx512dq,avx512vl"))), T, S)
#else
#define HRX_STATS_X86 0
#define HRX_CORRELATE_VARIANTS(T, S, SUFFIX)                                                          \
    HRX_CORRELATE_BLOCK(block_portable_##SUFFIX, , T, S)                                              \
    constexpr auto block_avx2_##SUFFIX = block_portable_##SUFFIX;                                     \
    constexpr auto block_avx512_##SUFFIX = block_portable_##SUFFIX;
#endif

HRX_CORRELATE_VARIANTS(float, double, f32)
HRX_CORRELATE_VARIANTS(double, double, f64)
HRX_CORRELATE_VARIANTS(std::int64_t, std::uint64_t, i64)

template <typename T, typename S>
using BlockFn = void (*)(const T*, const S*, std::int64_t, std::int64_t, T*);

// The block kernel of the best ISA this process may use (cpu_features.h).
template <typename T, typename S>
BlockFn<T, S> pick_block(BlockFn<T, S> portable, BlockFn<T, S> avx2, BlockFn<T, S> avx512) {
    const std::string_view path = best_kernel_path();
    if (!HRX_STATS_X86 || path == "portable") return portable;
    if (path == "avx2") return avx2;
    return avx512;
}

BlockFn<float, double> block_fn(const float*) {
    return pick_block<float, double>(block_portable_f32, block_avx2_f32, block_avx512_f32);
}
BlockFn<double, double> block_fn(const double*) {
    return pick_block<double, double>(block_portable_f64, block_avx2_f64, block_avx512_f64);
}
BlockFn<std::int64_t, std::uint64_t> block_fn(const std::int64_t*) {
    return pick_block<std::int64_t, std::uint64_t>(block_portable_i64, block_avx2_i64, block_avx512_i64);
}

template <typename T>
void correlate_typed(const T* a, std::int64_t n, const T* v, std::int64_t m, std::int64_t left, T* out,
                     std::int64_t len) {
    using S = typename SumOf<T>::type;
    // One output over the taps inside a (Note [Sliding dot order]).
    auto edge = [&](std::int64_t k) {
        const std::int64_t s = k - left;  // a index of tap 0
        const std::int64_t jlo = std::max<std::int64_t>(0, -s), jhi = std::min<std::int64_t>(m, n - s);
        S acc = 0;
        for (std::int64_t j = jlo; j < jhi; ++j) acc = static_cast<S>(acc + static_cast<S>(a[s + j]) * static_cast<S>(v[j]));
        out[k] = static_cast<T>(acc);
    };
    // Outputs whose every tap lies inside a: [left, left + n - m], clipped to [0, len).
    const std::int64_t full_lo = std::min(len, std::max<std::int64_t>(0, left));
    const std::int64_t full_hi = std::max(full_lo, std::min(len, left + n - m + 1));
    for (std::int64_t k = 0; k < full_lo; ++k) edge(k);
    for (std::int64_t k = full_hi; k < len; ++k) edge(k);
    constexpr std::int64_t B = 1024;
    std::vector<S> vs(static_cast<size_t>(m));
    for (std::int64_t j = 0; j < m; ++j) vs[static_cast<size_t>(j)] = static_cast<S>(v[j]);
    const auto block = block_fn(a);
    const std::int64_t blocks = (full_hi - full_lo + B - 1) / B;
    // Pieces of at least ~2 M products: below that a handoff to a busy pool costs more than it saves.
    split_range(blocks, std::max<std::int64_t>(1, (std::int64_t{1} << 21) / (B * m)), [&](std::int64_t b0, std::int64_t b1) {
        for (std::int64_t b = b0; b < b1; ++b) {
            const std::int64_t k0 = full_lo + b * B, cnt = std::min(B, full_hi - k0);
            block(a + (k0 - left), vs.data(), m, cnt, out + k0);
        }
    });
}

[[noreturn]] void bad_dtype(const char* what, DType dt) {
    fail(ErrorKind::Message, std::string(what) + ": unsupported dtype " + dtype_name(dt));
}

}  // namespace

void int_range(const std::int64_t* x, std::int64_t n, std::int64_t* lo, std::int64_t* hi) {
    std::int64_t mn = x[0], mx = x[0];
    for (std::int64_t i = 1; i < n; ++i) {
        mn = std::min(mn, x[i]);
        mx = std::max(mx, x[i]);
    }
    *lo = mn;
    *hi = mx;
}

void bincount_grown(const std::int64_t* x, const double* w, std::int64_t n, std::int64_t cap, GrownCounts& r) {
    r = GrownCounts{};
    if (n == 0) return;
    if (w) {  // sequential in element order: NumPy's bits
        std::vector<double>& h = r.sums;
        h.assign(1024, 0.0);
        double* sums = h.data();
        std::int64_t lo = x[0], hi = -1, size = 1024;
        for (std::int64_t i = 0; i < n; ++i) {
            const std::int64_t v = x[i];
            if (static_cast<std::uint64_t>(v) >= static_cast<std::uint64_t>(size)) {  // negative, or beyond the vector
                lo = std::min(lo, v);
                if (v < 0) continue;
                if (v > cap) {
                    r.fits = false;
                    return;
                }
                size = std::max<std::int64_t>(v + 1, size * 2);
                h.resize(static_cast<size_t>(size), 0.0);
                sums = h.data();
            }
            hi = std::max(hi, v);
            sums[v] += w[i];
        }
        h.resize(static_cast<size_t>(hi + 1));
        r.lo = lo;
        return;
    }
    const std::int64_t chunks = count_chunks(n, 0);
    const std::int64_t step = (n + chunks - 1) / chunks;
    struct Part {
        std::vector<std::int64_t> h;
        std::int64_t lo = 0, hi = -1;
        bool fits = true;
    };
    std::vector<Part> parts(static_cast<size_t>(chunks));
    pool_run(static_cast<size_t>(chunks), [&](size_t c) {
        Part& p = parts[c];
        const std::int64_t b = static_cast<std::int64_t>(c) * step, e = std::min(n, b + step);
        if (b >= e) return;
        std::int64_t lo = x[b], hi = -1;
        std::vector<std::int64_t>& h = p.h;
        for (std::int64_t i = b; i < e; ++i) {
            const std::int64_t v = x[i];
            lo = std::min(lo, v);
            if (v < 0) continue;
            if (v > hi) {
                if (v > cap) {
                    p.fits = false;
                    return;
                }
                hi = v;
                if (v >= static_cast<std::int64_t>(h.size()))
                    h.resize(static_cast<size_t>(std::max<std::int64_t>(v + 1, static_cast<std::int64_t>(h.size()) * 2)), 0);
            }
            ++h[static_cast<size_t>(v)];
        }
        p.lo = lo;
        p.hi = hi;
    });
    std::int64_t hi = -1;
    r.lo = x[0];
    for (const Part& p : parts) {
        if (!p.fits) {
            r.fits = false;
            return;
        }
        r.lo = std::min(r.lo, p.lo);
        hi = std::max(hi, p.hi);
    }
    r.counts.assign(static_cast<size_t>(hi + 1), 0);
    for (const Part& p : parts)
        for (std::int64_t b = 0; b <= std::min<std::int64_t>(p.hi, hi); ++b) r.counts[static_cast<size_t>(b)] += p.h[static_cast<size_t>(b)];
}

void bincount(const std::int64_t* x, std::int64_t n, std::int64_t nbins, std::int64_t* counts) {
    count_split(n, nbins, counts, [x](std::int64_t i) { return x[i]; });
}

void bincount_weighted(const std::int64_t* x, const double* w, std::int64_t n, std::int64_t nbins, double* sums) {
    std::fill(sums, sums + nbins, 0.0);
    for (std::int64_t i = 0; i < n; ++i) sums[x[i]] += w[i];
}

void histogram_bins(DType ct, const std::uint8_t* data, std::int64_t n, const std::uint8_t* edges, std::int64_t nbins,
                    const UniformBins* uniform, std::int64_t* bin) {
    switch (ct) {
        case DType::Float32:
            return bins_typed(reinterpret_cast<const float*>(data), n, reinterpret_cast<const float*>(edges), nbins,
                              uniform, bin);
        case DType::Float64:
            return bins_typed(reinterpret_cast<const double*>(data), n, reinterpret_cast<const double*>(edges), nbins,
                              uniform, bin);
        default: bad_dtype("histogram", ct);
    }
}

void histogram_counts(DType ct, const std::uint8_t* data, std::int64_t n, const std::uint8_t* edges,
                      std::int64_t nbins, const UniformBins* u, std::int64_t* counts) {
    auto run = [&](auto* x, auto* e) {
        using T = std::remove_const_t<std::remove_pointer_t<decltype(x)>>;
        const T first = static_cast<T>(u ? u->first : 0), last = static_cast<T>(u ? u->last : 0);
        const T denom = static_cast<T>(u ? u->denom : 1);
        count_split(n, nbins, counts, [&](std::int64_t i) { return bin_of(x[i], e, nbins, u, first, last, denom); });
    };
    switch (ct) {
        case DType::Float32:
            return run(reinterpret_cast<const float*>(data), reinterpret_cast<const float*>(edges));
        case DType::Float64:
            return run(reinterpret_cast<const double*>(data), reinterpret_cast<const double*>(edges));
        default: bad_dtype("histogram", ct);
    }
}

void count_bins(const std::int64_t* bin, std::int64_t n, std::int64_t nbins, std::int64_t* counts) {
    count_split(n, nbins, counts, [bin](std::int64_t i) { return bin[i]; });
}

void histogram_weighted(const std::int64_t* bin, const double* w, std::int64_t n, std::int64_t nbins, DType acc,
                        std::uint8_t* out) {
    if (acc != DType::Float32 && acc != DType::Float64 && acc != DType::Int64) bad_dtype("histogram", acc);
    std::memset(out, 0, static_cast<size_t>(nbins * dtype_itemsize(acc)));
    constexpr std::int64_t block_size = 65536;  // numpy.histogram's BLOCK
    std::vector<double> block(static_cast<size_t>(nbins));
    for (std::int64_t lo = 0; lo < n; lo += block_size) {
        std::fill(block.begin(), block.end(), 0.0);
        const std::int64_t hi = std::min(n, lo + block_size);
        for (std::int64_t i = lo; i < hi; ++i)
            if (bin[i] >= 0) block[static_cast<size_t>(bin[i])] += w[i];
        if (acc == DType::Float32) add_block(block, nbins, reinterpret_cast<float*>(out));
        else if (acc == DType::Float64) add_block(block, nbins, reinterpret_cast<double*>(out));
        else add_block(block, nbins, reinterpret_cast<std::int64_t*>(out));
    }
}

void median_rows(DType dt, const std::uint8_t* data, std::int64_t rows, std::int64_t n, std::uint8_t* out,
                 bool skip_nan) {
    switch (dt) {
        case DType::Float32:
            return median_typed(reinterpret_cast<const float*>(data), rows, n, reinterpret_cast<float*>(out),
                                skip_nan);
        case DType::Float64:
            return median_typed(reinterpret_cast<const double*>(data), rows, n, reinterpret_cast<double*>(out),
                                skip_nan);
        default: bad_dtype("median", dt);
    }
}

void correlate(DType dt, const std::uint8_t* a, std::int64_t n, const std::uint8_t* v, std::int64_t m,
               std::int64_t left, std::uint8_t* out, std::int64_t len) {
    switch (dt) {
        case DType::Float32:
            return correlate_typed(reinterpret_cast<const float*>(a), n, reinterpret_cast<const float*>(v), m, left,
                                   reinterpret_cast<float*>(out), len);
        case DType::Float64:
            return correlate_typed(reinterpret_cast<const double*>(a), n, reinterpret_cast<const double*>(v), m, left,
                                   reinterpret_cast<double*>(out), len);
        case DType::Int64:
            return correlate_typed(reinterpret_cast<const std::int64_t*>(a), n,
                                   reinterpret_cast<const std::int64_t*>(v), m, left,
                                   reinterpret_cast<std::int64_t*>(out), len);
        default: bad_dtype("correlate", dt);
    }
}

}  // namespace hrx::kernels

namespace hrx::kernels {
namespace {

template <AtOp op, typename T>
T apply_at(T x, T y) {
    if constexpr (std::is_integral_v<T>) {
        // Wrapping arithmetic without overflow UB (no promotion of narrow types to int).
        using U = std::conditional_t<(sizeof(T) < 8), std::uint32_t, std::uint64_t>;
        switch (op) {
            case AtOp::Add: return static_cast<T>(static_cast<U>(static_cast<U>(x) + static_cast<U>(y)));
            case AtOp::Subtract: return static_cast<T>(static_cast<U>(static_cast<U>(x) - static_cast<U>(y)));
            case AtOp::Multiply: return static_cast<T>(static_cast<U>(static_cast<U>(x) * static_cast<U>(y)));
            case AtOp::Minimum: return y < x ? y : x;
            case AtOp::Maximum: return y > x ? y : x;
        }
    } else {
        switch (op) {
            case AtOp::Add: return static_cast<T>(x + y);
            case AtOp::Subtract: return static_cast<T>(x - y);
            case AtOp::Multiply: return static_cast<T>(x * y);
            // NumPy's: in1 < in2 || isnan(in1) ? in1 : in2 (> for maximum); equal zeros give in2.
            case AtOp::Minimum: return (x < y || std::isnan(x)) ? x : y;
            case AtOp::Maximum: return (x > y || std::isnan(x)) ? x : y;
        }
    }
    return x;
}

template <AtOp op, typename T>
void at_loop(std::uint8_t* a, int ndim, const std::int64_t* shape, const std::int64_t* strides,
              std::int64_t size, const std::int64_t* pos, const T* vals, std::int64_t n) {
    const bool dense = [&] {
        std::int64_t expect = static_cast<std::int64_t>(sizeof(T));
        for (int d = ndim - 1; d >= 0; --d) {
            if (shape[d] != 1 && strides[d] != expect) return false;
            expect *= shape[d];
        }
        return true;
    }();
    for (std::int64_t i = 0; i < n; ++i) {
        std::int64_t p = pos[i] < 0 ? pos[i] + size : pos[i];
        std::int64_t off = 0;
        if (dense) {
            off = p * static_cast<std::int64_t>(sizeof(T));
        } else {
            for (int d = ndim - 1; d >= 0; --d) {
                off += (p % shape[d]) * strides[d];
                p /= shape[d];
            }
        }
        T cur;
        std::memcpy(&cur, a + off, sizeof(T));
        cur = apply_at<op>(cur, vals[i]);
        std::memcpy(a + off, &cur, sizeof(T));
    }
}

// The op as a template argument: no per-element dispatch in the update loop.
template <typename T>
void at_typed(AtOp op, std::uint8_t* a, int ndim, const std::int64_t* shape, const std::int64_t* strides,
              std::int64_t size, const std::int64_t* pos, const T* vals, std::int64_t n) {
    switch (op) {
        case AtOp::Add: return at_loop<AtOp::Add>(a, ndim, shape, strides, size, pos, vals, n);
        case AtOp::Subtract: return at_loop<AtOp::Subtract>(a, ndim, shape, strides, size, pos, vals, n);
        case AtOp::Multiply: return at_loop<AtOp::Multiply>(a, ndim, shape, strides, size, pos, vals, n);
        case AtOp::Minimum: return at_loop<AtOp::Minimum>(a, ndim, shape, strides, size, pos, vals, n);
        case AtOp::Maximum: return at_loop<AtOp::Maximum>(a, ndim, shape, strides, size, pos, vals, n);
    }
}

// Compute types with no C++ arithmetic of their own: bool (uint8 0/1) and float16 (its bits).
struct AtBool {
    std::uint8_t v;
};
struct AtHalf {
    std::uint16_t v;
};

template <AtOp op, typename C>
C apply_mixed(C x, C y) {
    if constexpr (std::is_same_v<C, AtBool>) {
        // NumPy's bool loops: add and maximum are or, multiply and minimum are and (subtract has none).
        const bool either = x.v || y.v, both = x.v && y.v;
        return C{static_cast<std::uint8_t>(op == AtOp::Add || op == AtOp::Maximum ? either : both)};
    } else if constexpr (std::is_same_v<C, AtHalf>) {
        // NumPy's float16 loops compute in float32 and round once; its float16 minimum/maximum keep the
        // first operand when the two are equal (in1 <= in2 || isnan(in1)), unlike float32's.
        const float fx = ew::half_to_float(x.v), fy = ew::half_to_float(y.v);
        if constexpr (op == AtOp::Minimum) return (fx <= fy || std::isnan(fx)) ? x : y;
        if constexpr (op == AtOp::Maximum) return (fx >= fy || std::isnan(fx)) ? x : y;
        return C{ew::float_to_half(apply_at<op>(fx, fy))};
    } else {
        return apply_at<op>(x, y);
    }
}

// Note [ufunc.at in a wider type]: NumPy's ufunc.at runs the ufunc's loop for
// (a's dtype, the values' dtype) with unsafe casting: each update reads
// a[p] cast to the loop's type ct, applies the op there and casts the result
// back to a's dtype, so a repeated position sees every earlier update rounded
// to a's dtype (np.add.at on float16 with float64 values adds in float64 and
// rounds each sum once to float16). The casts are copy_cast's
// (Note [Cast semantics] in casts.cpp), one element at a time.
template <AtOp op, typename C>
void at_mixed(DType dt, DType ct, std::uint8_t* a, int ndim, const std::int64_t* shape, const std::int64_t* strides,
              std::int64_t size, const std::int64_t* pos, const C* vals, std::int64_t n) {
    const ew::CastFn load = ew::cast_fn(dt, ct), store = ew::cast_fn(ct, dt);
    if (!load || !store) bad_dtype("ufunc.at", dt);
    for (std::int64_t i = 0; i < n; ++i) {
        std::int64_t p = pos[i] < 0 ? pos[i] + size : pos[i];
        std::int64_t off = 0;
        for (int d = ndim - 1; d >= 0; --d) {
            off += (p % shape[d]) * strides[d];
            p /= shape[d];
        }
        C cur;
        load(reinterpret_cast<const char*>(a + off), 0, reinterpret_cast<char*>(&cur), 0, 1);
        cur = apply_mixed<op>(cur, vals[i]);
        store(reinterpret_cast<const char*>(&cur), 0, reinterpret_cast<char*>(a + off), 0, 1);
    }
}

template <typename C>
void at_mixed_typed(AtOp op, DType dt, DType ct, std::uint8_t* a, int ndim, const std::int64_t* shape,
                    const std::int64_t* strides, std::int64_t size, const std::int64_t* pos, const std::uint8_t* v,
                    std::int64_t n) {
    const C* vals = reinterpret_cast<const C*>(v);
    switch (op) {
        case AtOp::Add: return at_mixed<AtOp::Add>(dt, ct, a, ndim, shape, strides, size, pos, vals, n);
        case AtOp::Subtract: return at_mixed<AtOp::Subtract>(dt, ct, a, ndim, shape, strides, size, pos, vals, n);
        case AtOp::Multiply: return at_mixed<AtOp::Multiply>(dt, ct, a, ndim, shape, strides, size, pos, vals, n);
        case AtOp::Minimum: return at_mixed<AtOp::Minimum>(dt, ct, a, ndim, shape, strides, size, pos, vals, n);
        case AtOp::Maximum: return at_mixed<AtOp::Maximum>(dt, ct, a, ndim, shape, strides, size, pos, vals, n);
    }
}

// run(T{}) for the C type T of a numeric dtype (float32/64 and the integers).
template <typename Run>
void with_numeric_type(DType t, Run&& run) {
    switch (t) {
        case DType::Float32: return run(float{});
        case DType::Float64: return run(double{});
        case DType::Int8: return run(std::int8_t{});
        case DType::Int16: return run(std::int16_t{});
        case DType::Int32: return run(std::int32_t{});
        case DType::Int64: return run(std::int64_t{});
        case DType::UInt8: return run(std::uint8_t{});
        case DType::UInt16: return run(std::uint16_t{});
        case DType::UInt32: return run(std::uint32_t{});
        case DType::UInt64: return run(std::uint64_t{});
        default: bad_dtype("ufunc.at", t);
    }
}

}  // namespace

void ufunc_at(AtOp op, DType dt, DType ct, std::uint8_t* a, int ndim, const std::int64_t* shape,
              const std::int64_t* strides, std::int64_t size, const std::int64_t* pos, const std::uint8_t* vals,
              std::int64_t n) {
    if (dt != ct || dt == DType::Bool || dt == DType::Float16) {
        auto run = [&](auto tag) {
            at_mixed_typed<decltype(tag)>(op, dt, ct, a, ndim, shape, strides, size, pos, vals, n);
        };
        if (ct == DType::Bool) return run(AtBool{});
        if (ct == DType::Float16) return run(AtHalf{});
        return with_numeric_type(ct, run);
    }
    with_numeric_type(dt, [&](auto tag) {
        using T = decltype(tag);
        at_typed<T>(op, a, ndim, shape, strides, size, pos, reinterpret_cast<const T*>(vals), n);
    });
}

}  // namespace hrx::kernels
