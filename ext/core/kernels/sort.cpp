// Stable sorts, binary search, grouping and nonzero over order-preserving
// integer keys (Note [Sort order] in sort.h).
//
// Note [Radix sort]: long rows sort with a least-significant-digit radix sort
// (8-bit digits for 1- and 2-byte keys, 11-bit digits for wider ones: three
// passes for 32-bit keys). Each pass splits the row into one chunk per pool
// thread; every thread counts its chunk's digits, the counts are turned into
// write offsets bucket by bucket and thread by thread, and every thread
// scatters its chunk. Chunk t's elements of a bucket land before chunk
// t+1's, so each pass, and the sort, is stable whatever the thread count,
// and the result never depends on it. A pass whose digit is the same for
// every key is skipped. Short rows use a comparison sort of the same keys.
#include "kernels/sort.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "errors.h"
#if defined(__linux__)
#include <sys/mman.h>
#endif
#include "kernels/pool.h"

namespace hrx::kernels {
namespace {

enum class Kind : std::uint8_t { Bool, Unsigned, Signed, Float };

// Below this many elements a row sorts by comparison (a radix pass costs a
// 2048-entry histogram), and runs on one thread.
constexpr std::size_t kRadixMin = 256;
constexpr std::size_t kParallelMin = std::size_t{1} << 17;
// Bucket length (elements) past which a bucket is split again before its LSD passes (about L2's size in keys).
constexpr std::size_t kInCache = std::size_t{1} << 16;

template <class K>
constexpr K kSign = static_cast<K>(K{1} << (sizeof(K) * 8 - 1));

// How one dtype's bits become keys: the kind and, for floats, the bits of +inf.
template <class K>
struct Keys {
    Kind kind;
    K inf;
    bool descending;

    K key(K b) const {
        K k;
        switch (kind) {
            case Kind::Bool: k = b != 0; break;
            case Kind::Unsigned: k = b; break;
            case Kind::Signed: k = b ^ kSign<K>; break;
            default: {
                // Negative: every bit flipped, else the sign bit set. Branch-free, because
                // the sign of real data is a coin toss that a branch mispredicts half the time.
                const K neg = static_cast<K>(K{0} - (b >> (sizeof(K) * 8 - 1)));
                k = static_cast<K>(b ^ (neg | kSign<K>));
                const K mag = b & static_cast<K>(~kSign<K>);
                if (mag > inf) k = static_cast<K>(~K{0});  // every NaN: one key, after +inf
                else if (mag == 0) k = kSign<K>;            // -0.0 sorts as 0.0
            }
        }
        return descending ? static_cast<K>(~k) : k;
    }
    // Whether key() loses the element's bits (a NaN payload or sign, -0.0),
    // so that a sort must carry the elements instead of rebuilding them.
    bool lossy(K b) const {
        if (kind == Kind::Bool) return b > 1;
        if (kind != Kind::Float) return false;
        const K mag = b & static_cast<K>(~kSign<K>);
        return mag > inf || (mag == 0 && b != 0);
    }
    // The bits of a key that key() did not lose.
    K value(K k) const {
        if (descending) k = static_cast<K>(~k);
        switch (kind) {
            case Kind::Bool:
            case Kind::Unsigned: return k;
            case Kind::Signed: return k ^ kSign<K>;
            default: {
                // The inverse of key()'s flip, as branch-free.
                const K pos = static_cast<K>(k >> (sizeof(K) * 8 - 1));
                return static_cast<K>(k ^ (static_cast<K>(pos - K{1}) | kSign<K>));
            }
        }
    }
    bool is_nan_key(K k) const {
        return kind == Kind::Float && (descending ? k == 0 : k == static_cast<K>(~K{0}));
    }
};

template <class K>
Keys<K> keys_of(DType dt, bool descending) {
    switch (dt) {
        case DType::Bool: return {Kind::Bool, 0, descending};
        case DType::Int8:
        case DType::Int16:
        case DType::Int32:
        case DType::Int64: return {Kind::Signed, 0, descending};
        case DType::Float16: return {Kind::Float, static_cast<K>(0x7c00u), descending};
        case DType::BFloat16: return {Kind::Float, static_cast<K>(0x7f80u), descending};
        case DType::Float32: return {Kind::Float, static_cast<K>(0x7f800000u), descending};
        case DType::Float64: return {Kind::Float, static_cast<K>(0x7ff0000000000000ull), descending};
        default: return {Kind::Unsigned, 0, descending};
    }
}

// The scratch memory of the last long sort, kept for the next one: a fresh
// row-sized array costs a page fault and the kernel's zeroing of every page,
// which for 16 M float32 takes as long as a pass of the sort itself. At most
// one block of at most kKeepMax bytes is kept (the largest recently freed).
struct ScratchCache {
    static constexpr std::size_t kKeepMax = std::size_t{256} << 20;
    std::mutex mu;
    void* p = nullptr;
    std::size_t bytes = 0;
};

ScratchCache& scratch_cache() {
    // Never destroyed: a lane thread may still finish a sort while the process exits.
    static ScratchCache* cache = new ScratchCache;
    return *cache;
}

// A row-sized scratch array in 2 MiB pages where the kernel allows (Linux
// transparent huge pages on request): the top-bits pass scatters into 2048
// places at once, and with 4 KiB pages most of those stores miss the TLB.
template <class K>
class BigScratch {
public:
    explicit BigScratch(std::size_t n) {
        constexpr std::size_t kHuge = std::size_t{2} << 20;
        bytes_ = (std::max<std::size_t>(n * sizeof(K), 1) + kHuge - 1) / kHuge * kHuge;
        ScratchCache& c = scratch_cache();
        {
            std::lock_guard<std::mutex> lock(c.mu);
            if (c.p && c.bytes >= bytes_) {
                p_ = static_cast<K*>(c.p);
                bytes_ = c.bytes;
                c.p = nullptr;
                return;
            }
        }
        p_ = static_cast<K*>(std::aligned_alloc(kHuge, bytes_));
        if (!p_) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
        madvise(p_, bytes_, MADV_HUGEPAGE);  // advice only: without it the pages are small
#endif
    }
    ~BigScratch() {
        ScratchCache& c = scratch_cache();
        void* drop = p_;
        if (bytes_ <= ScratchCache::kKeepMax) {
            std::lock_guard<std::mutex> lock(c.mu);
            if (!c.p || c.bytes < bytes_) {
                drop = c.p;
                c.p = p_;
                c.bytes = bytes_;
            }
        }
        std::free(drop);
    }
    BigScratch(const BigScratch&) = delete;
    BigScratch& operator=(const BigScratch&) = delete;
    K* data() const { return p_; }

private:
    K* p_;
    std::size_t bytes_;
};

void run(std::size_t threads, const std::function<void(std::size_t)>& fn) {
    if (threads <= 1) fn(0);
    else pool_run(threads, fn);
}

// The digit counts of n keys (local copies, so that the stores into the
// counts cannot be taken to alias the loop's pointers).
template <class K, std::size_t kBuckets>
void count_digits(const K* __restrict src, std::size_t n, int shift, std::size_t* __restrict h) {
    constexpr K kMask = static_cast<K>(kBuckets - 1);
    for (std::size_t i = 0; i < n; ++i) ++h[(src[i] >> shift) & kMask];
}

template <class K, class I, std::size_t kBuckets, bool kIdx>
void scatter(const K* __restrict src, const I* __restrict isrc, std::size_t n, int shift, std::size_t* __restrict h,
             K* __restrict dst, I* __restrict idst) {
    constexpr K kMask = static_cast<K>(kBuckets - 1);
    for (std::size_t i = 0; i < n; ++i) {
        const K k = src[i];
        const std::size_t at = h[(k >> shift) & kMask]++;
        dst[at] = k;
        if constexpr (kIdx) idst[at] = isrc[i];
    }
}

// Stable sort of a[0, n) (carrying ia when kIdx) by the low `bits` bits of
// the keys, with b/ib as scratch, on the calling thread; the result ends in a.
template <class K, class I, bool kIdx>
void lsd_low(K* __restrict a, K* __restrict b, I* __restrict ia, I* __restrict ib, std::size_t n, int bits) {
    if (n < 2) return;
    if (n <= 32) {
        for (std::size_t i = 1; i < n; ++i) {
            const K k = a[i];
            I v{};
            if constexpr (kIdx) v = ia[i];
            std::size_t j = i;
            for (; j > 0 && a[j - 1] > k; --j) {
                a[j] = a[j - 1];
                if constexpr (kIdx) ia[j] = ia[j - 1];
            }
            a[j] = k;
            if constexpr (kIdx) ia[j] = v;
        }
        return;
    }
    constexpr int kDigit = 8;
    constexpr std::size_t kB = std::size_t{1} << kDigit;
    K* src = a;
    K* dst = b;
    I* is = ia;
    I* id = ib;
    // Every pass's digit counts from one read of the row (the passes only reorder it).
    constexpr int kMaxPasses = static_cast<int>(sizeof(K)) * 8 / kDigit;
    const int passes = (bits + kDigit - 1) / kDigit;
    std::size_t hist[kMaxPasses][kB];
    std::fill(&hist[0][0], &hist[0][0] + passes * kB, std::size_t{0});
    for (std::size_t i = 0; i < n; ++i)
        for (int p = 0; p < passes; ++p) ++hist[p][(a[i] >> (p * kDigit)) & (kB - 1)];
    for (int p = 0; p < passes; ++p) {
        const int shift = p * kDigit;
        std::size_t* h = hist[p];
        std::size_t running = 0;
        bool trivial = false;
        for (std::size_t d = 0; d < kB; ++d) {
            trivial = trivial || h[d] == n;
            const std::size_t c = h[d];
            h[d] = running;
            running += c;
        }
        if (trivial) continue;
        scatter<K, I, kB, kIdx>(src, is, n, shift, h, dst, id);
        std::swap(src, dst);
        std::swap(is, id);
    }
    if (src != a) {
        std::memcpy(a, src, n * sizeof(K));
        if constexpr (kIdx) std::memcpy(ia, is, n * sizeof(I));
    }
}

// The first step of msd_lsd_sort: a stable parallel scatter of src (and
// isrc, when not null) by the top 11 bits of the keys into dst (idst);
// returns the 2049 bucket starts. With `kk`, src holds elements, whose keys
// are computed on the fly (and scattered), so the elements need no key pass
// of their own and src is only read; then an element whose key loses its
// bits (Keys::lossy) stops the split before anything is written, and the
// result is empty.
template <class K, class I>
std::vector<std::size_t> msd_split(const Keys<K>* kk, const K* src, const I* isrc, std::size_t n,
                                   std::size_t threads, K* dst, I* idst) {
    constexpr int kShift = static_cast<int>(sizeof(K)) * 8 - 11;
    constexpr std::size_t kBuckets = std::size_t{1} << 11;
    const std::size_t chunk = (n + threads - 1) / threads;
    std::vector<std::size_t> hist(threads * kBuckets);
    std::atomic<bool> lossy{false};
    run(threads, [&](std::size_t t) {
        const std::size_t begin = std::min(n, t * chunk), end = std::min(n, (t + 1) * chunk);
        std::size_t* h = hist.data() + t * kBuckets;
        if (kk) {
            const Keys<K> k = *kk;
            bool any = false;
            for (std::size_t i = begin; i < end; ++i) {
                ++h[k.key(src[i]) >> kShift];
                any |= k.lossy(src[i]);
            }
            if (any) lossy = true;
        } else {
            count_digits<K, kBuckets>(src + begin, end - begin, kShift, h);
        }
    });
    if (lossy) return {};  // the keys cannot rebuild the elements: the caller sorts another way
    std::vector<std::size_t> start(kBuckets + 1);
    std::size_t running = 0;
    for (std::size_t b = 0; b < kBuckets; ++b) {
        start[b] = running;
        for (std::size_t t = 0; t < threads; ++t) {
            const std::size_t c = hist[t * kBuckets + b];
            hist[t * kBuckets + b] = running;
            running += c;
        }
    }
    start[kBuckets] = n;
    run(threads, [&](std::size_t t) {
        const std::size_t begin = std::min(n, t * chunk), end = std::min(n, (t + 1) * chunk);
        std::size_t* h = hist.data() + t * kBuckets;
        if (kk) {
            const Keys<K> k = *kk;
            for (std::size_t i = begin; i < end; ++i) {
                const K key = k.key(src[i]);
                dst[h[key >> kShift]++] = key;
            }
        } else if (isrc) scatter<K, I, kBuckets, true>(src + begin, isrc + begin, end - begin, kShift, h, dst, idst);
        else scatter<K, I, kBuckets, false>(src + begin, nullptr, end - begin, kShift, h, dst, nullptr);
    });
    return start;
}

// Note [Radix sort] for wide keys: one parallel pass on the top 11 bits
// splits the row into buckets small enough to stay in cache, then each
// bucket sorts on its remaining low bits with 8-bit LSD passes, buckets in
// parallel. Stable (both steps are), result in keys/idx.
template <class K, class I>
void msd_lsd_sort(K* keys, K* ktmp, I* idx, I* itmp, std::size_t n, std::size_t threads) {
    constexpr int kShift = static_cast<int>(sizeof(K)) * 8 - 11;
    constexpr std::size_t kBuckets = std::size_t{1} << 11;
    const std::vector<std::size_t> start = msd_split<K, I>(nullptr, keys, idx, n, threads, ktmp, itmp);
    // The buckets now sit in the scratch arrays; each sorts there and moves home.
    auto bucket = [&](std::size_t b) {
        const std::size_t lo = start[b], len = start[b + 1] - lo;
        if (len == 0) return;
        if (idx) {
            lsd_low<K, I, true>(ktmp + lo, keys + lo, itmp + lo, idx + lo, len, kShift);
            std::memcpy(idx + lo, itmp + lo, len * sizeof(I));
        } else {
            lsd_low<K, I, false>(ktmp + lo, keys + lo, nullptr, nullptr, len, kShift);
        }
        std::memcpy(keys + lo, ktmp + lo, len * sizeof(K));
    };
    if (threads <= 1) {
        for (std::size_t b = 0; b < kBuckets; ++b) bucket(b);
    } else {
        pool_run(kBuckets, bucket);
    }
}

// Radix sorts keys[0, n) (carrying idx when not null) using the same-sized
// scratch arrays; returns true when the result ended in the scratch arrays.
template <class K, class I>
bool radix_sort(K* keys, K* ktmp, I* idx, I* itmp, std::size_t n, std::size_t threads) {
    if constexpr (sizeof(K) >= 4) {
        if (n >= (std::size_t{1} << 16)) {
            msd_lsd_sort(keys, ktmp, idx, itmp, n, threads);
            return false;
        }
    }
    constexpr int kDigit = 8;
    constexpr std::size_t kBuckets = std::size_t{1} << kDigit;
    constexpr int kPasses = (static_cast<int>(sizeof(K)) * 8 + kDigit - 1) / kDigit;
    const std::size_t chunk = (n + threads - 1) / threads;
    std::vector<std::size_t> hist(threads * kBuckets);
    K* src = keys;
    K* dst = ktmp;
    I* isrc = idx;
    I* idst = itmp;
    for (int p = 0; p < kPasses; ++p) {
        const int shift = p * kDigit;
        std::fill(hist.begin(), hist.end(), 0);
        run(threads, [&, src, shift](std::size_t t) {
            count_digits<K, kBuckets>(src + t * chunk, std::min(n, (t + 1) * chunk) - std::min(n, t * chunk), shift,
                                      hist.data() + t * kBuckets);
        });
        bool trivial = false;
        std::size_t running = 0;
        for (std::size_t b = 0; b < kBuckets; ++b) {
            const std::size_t before = running;
            for (std::size_t t = 0; t < threads; ++t) {
                const std::size_t c = hist[t * kBuckets + b];
                hist[t * kBuckets + b] = running;
                running += c;
            }
            if (running - before == n) trivial = true;
        }
        if (trivial) continue;
        run(threads, [&, src, dst, isrc, idst, shift](std::size_t t) {
            const std::size_t begin = std::min(n, t * chunk), end = std::min(n, (t + 1) * chunk);
            std::size_t* h = hist.data() + t * kBuckets;
            if (isrc) scatter<K, I, kBuckets, true>(src + begin, isrc + begin, end - begin, shift, h, dst, idst);
            else scatter<K, I, kBuckets, false>(src + begin, nullptr, end - begin, shift, h, dst, nullptr);
        });
        std::swap(src, dst);
        std::swap(isrc, idst);
    }
    return src != keys;
}

// Sorts the row `from` of wide elements into `row` (may be `from`) when
// their keys rebuild them (no lossy element; false otherwise, row untouched), as msd_lsd_sort but with the keys made
// on the fly from the elements, the buckets sorted in per-thread scratch and
// written out as elements: one row-sized scratch array instead of three, and
// no separate copy, key or value passes.
template <class K>
bool sort_wide(const Keys<K>& kk, const K* from, K* row, std::size_t n, std::size_t threads) {
    constexpr int kShift = static_cast<int>(sizeof(K)) * 8 - 11;
    constexpr std::size_t kBuckets = std::size_t{1} << 11;
    BigScratch<K> tmp(n);
    const std::vector<std::size_t> start =
        msd_split<K, std::uint32_t>(&kk, from, nullptr, n, threads, tmp.data(), nullptr);
    if (start.empty()) return false;
    const std::size_t workers = std::max<std::size_t>(threads, 1);
    std::vector<std::vector<K>> scratch(workers);
    // One item per worker, each taking buckets in turn, so that each keeps its own scratch.
    std::atomic<std::size_t> next{0};
    run(workers, [&](std::size_t w) {
        std::vector<K>& sc = scratch[w];
        for (std::size_t b = next++; b < kBuckets; b = next++) {
            const std::size_t lo = start[b], len = start[b + 1] - lo;
            if (len == 0) continue;
            if (sc.size() < len) sc.resize(len);
            K* keys = tmp.data() + lo;
            if (len > kInCache) {
                // Past the cache (real data crowds into a few exponents): split once
                // more on the next 8 bits, so that the LSD passes run in cache.
                std::size_t h[257] = {};
                count_digits<K, 256>(keys, len, kShift - 8, h + 1);
                for (std::size_t d = 1; d <= 256; ++d) h[d] += h[d - 1];
                std::size_t at[256];
                std::copy(h, h + 256, at);
                scatter<K, std::uint32_t, 256, false>(keys, nullptr, len, kShift - 8, at, sc.data(), nullptr);
                for (std::size_t d = 0; d < 256; ++d)
                    lsd_low<K, std::uint32_t, false>(sc.data() + h[d], keys + h[d], nullptr, nullptr,
                                                     h[d + 1] - h[d], kShift - 8);
                for (std::size_t i = 0; i < len; ++i) row[lo + i] = kk.value(sc[i]);
                continue;
            }
            lsd_low<K, std::uint32_t, false>(keys, sc.data(), nullptr, nullptr, len, kShift);
            for (std::size_t i = 0; i < len; ++i) row[lo + i] = kk.value(keys[i]);
        }
    });
    return true;
}

// keys[i] = key(row[i]) over `threads` chunks; whether any element was lossy.
template <class K>
bool make_keys(const Keys<K>& kk, const K* row, K* keys, std::size_t n, std::size_t threads) {
    std::vector<char> lossy(threads, 0);
    const std::size_t chunk = (n + threads - 1) / threads;
    run(threads, [&](std::size_t t) {
        bool any = false;
        const std::size_t end = std::min(n, (t + 1) * chunk);
        for (std::size_t i = t * chunk; i < end; ++i) {
            keys[i] = kk.key(row[i]);
            any |= kk.lossy(row[i]);
        }
        lossy[t] = any;
    });
    return std::any_of(lossy.begin(), lossy.end(), [](char c) { return c != 0; });
}

// The stable sorting permutation of keys[0, n) into perm (keys are reordered
// too, into `keys` or its scratch; returns where the sorted keys are).
template <class K, class I>
const K* sort_perm(K* keys, std::vector<K>& ktmp, I* perm, std::vector<I>& itmp, std::size_t n,
                   std::size_t threads) {
    std::iota(perm, perm + n, I{0});
    if (n < kRadixMin) {
        std::stable_sort(perm, perm + n, [keys](I a, I b) { return keys[a] < keys[b]; });
        ktmp.resize(n);
        for (std::size_t i = 0; i < n; ++i) ktmp[i] = keys[perm[i]];
        return ktmp.data();
    }
    ktmp.resize(n);
    itmp.resize(n);
    if (radix_sort(keys, ktmp.data(), perm, itmp.data(), n, threads)) {
        std::memcpy(perm, itmp.data(), n * sizeof(I));
        return ktmp.data();
    }
    return keys;
}

template <class K>
struct RowScratch {
    std::vector<K> keys, ktmp, copy;
    std::vector<std::uint32_t> perm32, tmp32;
    std::vector<std::uint64_t> perm64, tmp64;
};

// The stable permutation of one row into out (int64) or, for the values path,
// applied to the row in place.
template <class K, class I>
void permute_row(const Keys<K>& kk, K* row, const K* in, std::int64_t* out, std::size_t n, std::size_t threads,
                 RowScratch<K>& s, std::vector<I>& perm, std::vector<I>& tmp) {
    perm.resize(n);
    sort_perm(s.keys.data(), s.ktmp, perm.data(), tmp, n, threads);
    if (out) {
        for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::int64_t>(perm[i]);
    } else {
        s.copy.assign(in, in + n);
        for (std::size_t i = 0; i < n; ++i) row[i] = s.copy[perm[i]];
    }
    (void)kk;
}

// Sorts one row in place (out null) or writes its argsort into out.
template <class K>
void sort_one(const Keys<K>& kk, const K* from, K* row, std::int64_t* out, std::size_t n, std::size_t threads,
              RowScratch<K>& s) {
    if (n == 0) return;
    if constexpr (sizeof(K) >= 4) {
        if (!out && n >= (std::size_t{1} << 16) && sort_wide(kk, from, row, n, threads)) return;
    }
    if (!out && from != row) std::memcpy(row, from, n * sizeof(K));
    s.keys.resize(n);
    const bool lossy = make_keys(kk, row, s.keys.data(), n, threads);
    if (!out && !lossy) {
        // The keys rebuild the elements: sort the keys alone.
        K* sorted = s.keys.data();
        if (n < kRadixMin) {
            std::sort(sorted, sorted + n);
        } else {
            s.ktmp.resize(n);
            if (radix_sort<K, std::uint32_t>(s.keys.data(), s.ktmp.data(), nullptr, nullptr, n, threads))
                sorted = s.ktmp.data();
        }
        const std::size_t chunk = (n + threads - 1) / threads;
        run(threads, [&](std::size_t t) {
            const std::size_t end = std::min(n, (t + 1) * chunk);
            for (std::size_t i = t * chunk; i < end; ++i) row[i] = kk.value(sorted[i]);
        });
        return;
    }
    if (n <= 0xffffffffu) permute_row(kk, row, row, out, n, threads, s, s.perm32, s.tmp32);
    else permute_row(kk, row, row, out, n, threads, s, s.perm64, s.tmp64);
}

template <class K>
void sort_rows_t(DType dt, const K* src, K* data, std::int64_t* out, std::int64_t rows, std::int64_t n,
                 bool descending) {
    const Keys<K> kk = keys_of<K>(dt, descending);
    const std::size_t un = static_cast<std::size_t>(n);
    const std::size_t threads = pool_threads();
    auto row_out = [&](std::int64_t r) { return out ? out + r * n : nullptr; };
    if (rows <= 0 || n <= 0) return;
    if (un >= kParallelMin || rows == 1 || threads == 1) {
        RowScratch<K> s;
        const std::size_t t = un >= kParallelMin ? threads : 1;
        for (std::int64_t r = 0; r < rows; ++r) sort_one(kk, src + r * n, data + r * n, row_out(r), un, t, s);
        return;
    }
    // Many shorter rows: one block of rows per thread, each with its own scratch.
    const std::size_t blocks = std::min<std::size_t>(threads, static_cast<std::size_t>(rows));
    const std::int64_t per = (rows + static_cast<std::int64_t>(blocks) - 1) / static_cast<std::int64_t>(blocks);
    pool_run(blocks, [&](std::size_t b) {
        RowScratch<K> s;
        const std::int64_t end = std::min(rows, (static_cast<std::int64_t>(b) + 1) * per);
        for (std::int64_t r = static_cast<std::int64_t>(b) * per; r < end; ++r)
            sort_one(kk, src + r * n, data + r * n, row_out(r), un, 1, s);
    });
}

template <class Fn>
void by_width(DType dt, Fn&& fn) {
    switch (dtype_itemsize(dt)) {
        case 1: fn(std::uint8_t{}); break;
        case 2: fn(std::uint16_t{}); break;
        case 4: fn(std::uint32_t{}); break;
        case 8: fn(std::uint64_t{}); break;
        default: fail(ErrorKind::Message, std::string("sort: unsupported dtype ") + dtype_name(dt));
    }
}

// Note [Complex order]: NumPy orders complex numbers lexicographically by
// (real, imaginary) part, with every element holding a NaN after the others,
// in its own order: R + Rj < R + nanj < nan + Rj < nan + nanj (R + nanj
// among themselves by the real part, nan + Rj by the imaginary part). Each
// element gets the key (class, primary, secondary) built from the integer
// keys of its parts (Note [Sort order]: -0.0 equals 0.0, the same bits on
// every host), compared as a tuple. These sorts compare (a stable merge sort
// of a permutation): complex keys are two or three words wide, so a radix
// sort would need as many passes as they have bytes.
template <class K>
struct ComplexKey {
    K primary, secondary;
    std::uint8_t cls;  // 0: no NaN, 1: imaginary NaN, 2: real NaN, 3: both
    bool operator<(const ComplexKey& o) const {
        if (cls != o.cls) return cls < o.cls;
        return primary != o.primary ? primary < o.primary : secondary < o.secondary;
    }
    bool operator==(const ComplexKey& o) const = default;
};

// The key of the complex element at z (its real part's bits, then its imaginary part's).
template <class K>
ComplexKey<K> complex_key(const Keys<K>& part, const K* z) {
    const K re = part.key(z[0]), im = part.key(z[1]);
    const bool re_nan = part.is_nan_key(re), im_nan = part.is_nan_key(im);
    if (!re_nan && !im_nan) return {re, im, 0};
    if (!re_nan) return {re, 0, 1};
    if (!im_nan) return {im, 0, 2};
    return {0, 0, 3};
}

template <class K>
Keys<K> complex_part_keys(DType dt) {
    return keys_of<K>(complex_part(dt), false);
}

// The stable sorting permutation of the n complex elements at z (2n words) into perm.
template <class K, class I>
void complex_perm(const Keys<K>& part, const K* z, std::size_t n, bool descending, std::vector<ComplexKey<K>>& keys,
                  I* perm) {
    keys.resize(n);
    for (std::size_t i = 0; i < n; ++i) keys[i] = complex_key(part, z + 2 * i);
    std::iota(perm, perm + n, I{0});
    const ComplexKey<K>* k = keys.data();
    if (descending) std::stable_sort(perm, perm + n, [k](I a, I b) { return k[b] < k[a]; });
    else std::stable_sort(perm, perm + n, [k](I a, I b) { return k[a] < k[b]; });
}

template <class K>
void complex_sort_rows_t(DType dt, const K* src, K* data, std::int64_t* out, std::int64_t rows, std::int64_t n,
                         bool descending) {
    if (rows <= 0 || n <= 0) return;
    const Keys<K> part = complex_part_keys<K>(dt);
    const std::size_t un = static_cast<std::size_t>(n);
    auto sort_block = [&](std::int64_t begin, std::int64_t end) {
        std::vector<ComplexKey<K>> keys;
        std::vector<std::int64_t> perm(un);
        std::vector<K> copy;
        for (std::int64_t r = begin; r < end; ++r) {
            const K* row = src + 2 * r * n;
            std::int64_t* p = out ? out + r * n : perm.data();
            complex_perm(part, row, un, descending, keys, p);
            if (out) continue;
            copy.assign(row, row + 2 * un);  // src may be data
            K* dst = data + 2 * r * n;
            for (std::size_t i = 0; i < un; ++i) {
                dst[2 * i] = copy[2 * static_cast<std::size_t>(p[i])];
                dst[2 * i + 1] = copy[2 * static_cast<std::size_t>(p[i]) + 1];
            }
        }
    };
    const std::size_t blocks = std::min<std::size_t>(pool_threads(), static_cast<std::size_t>(rows));
    if (blocks <= 1) return sort_block(0, rows);
    const std::int64_t per = (rows + static_cast<std::int64_t>(blocks) - 1) / static_cast<std::int64_t>(blocks);
    pool_run(blocks, [&](std::size_t b) {
        sort_block(std::min(rows, static_cast<std::int64_t>(b) * per),
                   std::min(rows, (static_cast<std::int64_t>(b) + 1) * per));
    });
}

// Runs fn with the word type of one part of the complex dtype dt.
template <class Fn>
void by_part_width(DType dt, Fn&& fn) {
    if (dt == DType::Complex64) fn(std::uint32_t{});
    else fn(std::uint64_t{});
}

}  // namespace

void sort_rows(DType dt, const std::uint8_t* src, std::uint8_t* data, std::int64_t rows, std::int64_t n,
               bool descending) {
    if (dtype_is_complex(dt)) {
        return by_part_width(dt, [&](auto k) {
            using K = decltype(k);
            complex_sort_rows_t<K>(dt, reinterpret_cast<const K*>(src), reinterpret_cast<K*>(data), nullptr, rows, n,
                                   descending);
        });
    }
    by_width(dt, [&](auto k) {
        using K = decltype(k);
        sort_rows_t<K>(dt, reinterpret_cast<const K*>(src), reinterpret_cast<K*>(data), nullptr, rows, n, descending);
    });
}

void argsort_rows(DType dt, const std::uint8_t* data, std::int64_t* out, std::int64_t rows, std::int64_t n,
                  bool descending) {
    if (dtype_is_complex(dt)) {
        return by_part_width(dt, [&](auto k) {
            using K = decltype(k);
            const K* z = reinterpret_cast<const K*>(data);
            complex_sort_rows_t<K>(dt, z, nullptr, out, rows, n, descending);
        });
    }
    by_width(dt, [&](auto k) {
        using K = decltype(k);
        // The argsort path only reads the row.
        K* keys = reinterpret_cast<K*>(const_cast<std::uint8_t*>(data));
        sort_rows_t<K>(dt, keys, keys, out, rows, n, descending);
    });
}

namespace {

// search_sorted over any key type: key_of(base, i) is the key of element i at base.
template <class KeyOf>
void search_keys(const KeyOf& key_of, const std::uint8_t* sorted, std::int64_t n, const std::int64_t* sorter,
                 const std::uint8_t* needles, std::int64_t m, bool right, std::int64_t* out) {
    using Key = decltype(key_of(sorted, 0));
    std::vector<Key> keys(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        std::int64_t j = i;
        if (sorter) {
            j = sorter[i];
            if (j < 0 || j >= n)
                fail(ErrorKind::Data, "sorter index " + std::to_string(j) + " is out of bounds for x1 of size " +
                                          std::to_string(n));
        }
        keys[static_cast<std::size_t>(i)] = key_of(sorted, j);
    }
    for (std::int64_t i = 0; i < m; ++i) {
        const Key key = key_of(needles, i);
        const auto it = right ? std::upper_bound(keys.begin(), keys.end(), key)
                              : std::lower_bound(keys.begin(), keys.end(), key);
        out[i] = it - keys.begin();
    }
}

// The groups of n elements (or rows) visited in the sorted order perm:
// starts(i) says whether sorted element i (0 < i < n) starts a new group,
// emit(g, j) records element j as group g's value (its first occurrence
// under a stable sort); index, counts (per group) and inverse (per element)
// may be null. Returns the number of groups.
template <class Starts, class Emit>
std::int64_t group_sorted(const std::uint64_t* perm, std::size_t n, const Starts& starts, const Emit& emit,
                          std::int64_t* index, std::int64_t* inverse, std::int64_t* counts) {
    std::int64_t groups = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= n; ++i) {
        if (i > 0 && (i == n || starts(i))) {
            emit(groups, perm[start]);
            if (index) index[groups] = static_cast<std::int64_t>(perm[start]);
            if (counts) counts[groups] = static_cast<std::int64_t>(i - start);
            ++groups;
            start = i;
        }
        if (inverse && i < n) inverse[perm[i]] = groups;
    }
    return groups;
}

// Whether sorted key i starts a group after key i - 1 in unique_groups:
// is_nan(key) tells the keys of NaN-holding elements, which group together
// when equal_nan (NumPy's rule for complex: every NaN-holding element is one
// value) and stay alone otherwise.
template <class Key, class IsNan>
bool starts_group(const Key* sk, std::size_t i, bool equal_nan, const IsNan& is_nan) {
    return is_nan(sk[i]) ? !equal_nan || !is_nan(sk[i - 1]) : sk[i] != sk[i - 1];
}

// unique_rows over any element key: keys are rows x m keys, row by row.
template <class Key, class IsNan>
std::int64_t group_rows(const std::vector<Key>& keys, std::size_t rows, std::size_t m, const IsNan& is_nan,
                        std::size_t itemsize, const std::uint8_t* data, std::uint8_t* values, std::int64_t* index,
                        std::int64_t* inverse, std::int64_t* counts) {
    std::vector<char> has_nan(rows, 0);
    for (std::size_t r = 0; r < rows; ++r)
        has_nan[r] = std::any_of(keys.begin() + r * m, keys.begin() + (r + 1) * m, is_nan);
    std::vector<std::uint64_t> perm(rows);
    std::iota(perm.begin(), perm.end(), std::uint64_t{0});
    const Key* k = keys.data();
    std::stable_sort(perm.begin(), perm.end(), [k, m](std::uint64_t a, std::uint64_t b) {
        return std::lexicographical_compare(k + a * m, k + (a + 1) * m, k + b * m, k + (b + 1) * m);
    });
    // A NaN equals nothing, so a row holding one is a group of its own (NumPy compares rows field by field).
    const auto starts = [&](std::size_t i) {
        const std::uint64_t a = perm[i - 1], b = perm[i];
        return has_nan[b] != 0 || !std::equal(k + a * m, k + (a + 1) * m, k + b * m);
    };
    const std::size_t row_bytes = m * itemsize;
    const auto emit = [&](std::int64_t g, std::uint64_t j) {
        if (values) std::memcpy(values + static_cast<std::size_t>(g) * row_bytes, data + j * row_bytes, row_bytes);
    };
    return group_sorted(perm.data(), rows, starts, emit, index, inverse, counts);
}

template <class K>
struct ComplexElem {
    K re, im;
};

}  // namespace

void search_sorted(DType dt, const std::uint8_t* sorted, std::int64_t n, const std::int64_t* sorter,
                   const std::uint8_t* needles, std::int64_t m, bool right, std::int64_t* out) {
    if (dtype_is_complex(dt)) {
        return by_part_width(dt, [&](auto k) {
            using K = decltype(k);
            const Keys<K> part = complex_part_keys<K>(dt);
            const auto key_of = [&part](const std::uint8_t* base, std::int64_t i) {
                return complex_key(part, reinterpret_cast<const K*>(base) + 2 * i);
            };
            search_keys(key_of, sorted, n, sorter, needles, m, right, out);
        });
    }
    by_width(dt, [&](auto k) {
        using K = decltype(k);
        const Keys<K> kk = keys_of<K>(dt, false);
        const auto key_of = [&kk](const std::uint8_t* base, std::int64_t i) {
            return kk.key(reinterpret_cast<const K*>(base)[i]);
        };
        search_keys(key_of, sorted, n, sorter, needles, m, right, out);
    });
}

std::int64_t unique_groups(DType dt, const std::uint8_t* data, std::int64_t n, bool equal_nan, std::uint8_t* values,
                           std::int64_t* index, std::int64_t* inverse, std::int64_t* counts) {
    std::int64_t groups = 0;
    const std::size_t un = static_cast<std::size_t>(n);
    if (dtype_is_complex(dt)) {
        by_part_width(dt, [&](auto k) {
            using K = decltype(k);
            using E = ComplexElem<K>;
            const Keys<K> part = complex_part_keys<K>(dt);
            std::vector<ComplexKey<K>> keys, sk(un);
            std::vector<std::uint64_t> perm(un);
            complex_perm(part, reinterpret_cast<const K*>(data), un, false, keys, perm.data());
            for (std::size_t i = 0; i < un; ++i) sk[i] = keys[perm[i]];
            const auto is_nan = [](const ComplexKey<K>& key) { return key.cls != 0; };
            const E* x = reinterpret_cast<const E*>(data);
            E* vals = reinterpret_cast<E*>(values);
            groups = group_sorted(
                perm.data(), un, [&](std::size_t i) { return starts_group(sk.data(), i, equal_nan, is_nan); },
                [&](std::int64_t g, std::uint64_t j) {
                    if (vals) vals[g] = x[j];
                },
                index, inverse, counts);
        });
        return groups;
    }
    by_width(dt, [&](auto k) {
        using K = decltype(k);
        const Keys<K> kk = keys_of<K>(dt, false);
        const K* x = reinterpret_cast<const K*>(data);
        const std::size_t threads = un >= kParallelMin ? pool_threads() : 1;
        std::vector<K> keys(un), ktmp;
        make_keys(kk, x, keys.data(), un, threads);
        std::vector<std::uint64_t> perm(un), itmp;
        const K* sk = sort_perm(keys.data(), ktmp, perm.data(), itmp, un, threads);
        const auto is_nan = [&kk](K key) { return kk.is_nan_key(key); };
        K* vals = reinterpret_cast<K*>(values);
        groups = group_sorted(
            perm.data(), un, [&](std::size_t i) { return starts_group(sk, i, equal_nan, is_nan); },
            [&](std::int64_t g, std::uint64_t j) {
                if (vals) vals[g] = x[j];
            },
            index, inverse, counts);
    });
    return groups;
}

std::int64_t unique_rows(DType dt, const std::uint8_t* data, std::int64_t rows, std::int64_t m,
                         std::uint8_t* values, std::int64_t* index, std::int64_t* inverse, std::int64_t* counts) {
    std::int64_t groups = 0;
    const std::size_t ur = static_cast<std::size_t>(rows), um = static_cast<std::size_t>(m);
    const std::size_t itemsize = dtype_itemsize(dt);
    if (dtype_is_complex(dt)) {
        by_part_width(dt, [&](auto k) {
            using K = decltype(k);
            const Keys<K> part = complex_part_keys<K>(dt);
            const K* z = reinterpret_cast<const K*>(data);
            std::vector<ComplexKey<K>> keys(ur * um);
            for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = complex_key(part, z + 2 * i);
            groups = group_rows(keys, ur, um, [](const ComplexKey<K>& key) { return key.cls != 0; }, itemsize, data,
                                values, index, inverse, counts);
        });
        return groups;
    }
    by_width(dt, [&](auto k) {
        using K = decltype(k);
        const Keys<K> kk = keys_of<K>(dt, false);
        const K* x = reinterpret_cast<const K*>(data);
        std::vector<K> keys(ur * um);
        for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = kk.key(x[i]);
        groups = group_rows(keys, ur, um, [&kk](K key) { return kk.is_nan_key(key); }, itemsize, data, values, index,
                            inverse, counts);
    });
    return groups;
}

std::int64_t nonzero_indices(DType dt, const std::uint8_t* data, int ndim, const std::int64_t* shape,
                             std::int64_t* out, std::int64_t stride) {
    std::int64_t count = 0;
    // A complex element is nonzero when either part is; each part is a float,
    // and -0.0 is zero (masking the sign bit).
    const int parts = dtype_is_complex(dt) ? 2 : 1;
    const bool is_float = parts == 2 || dtype_is_float(dt);
    auto scan = [&](auto k) {
        using K = decltype(k);
        const K keep = is_float ? static_cast<K>(~kSign<K>) : static_cast<K>(~K{0});
        const K* x = reinterpret_cast<const K*>(data);
        std::int64_t total = 1;
        for (int d = 0; d < ndim; ++d) total *= shape[d];
        std::vector<std::int64_t> idx(static_cast<std::size_t>(ndim), 0);
        for (std::int64_t i = 0; i < total; ++i) {
            K bits = 0;
            for (int p = 0; p < parts; ++p) bits |= static_cast<K>(x[i * parts + p] & keep);
            if (bits != 0) {
                for (int d = 0; d < ndim; ++d) out[d * stride + count] = idx[static_cast<std::size_t>(d)];
                ++count;
            }
            for (int d = ndim - 1; d >= 0; --d) {
                if (++idx[static_cast<std::size_t>(d)] < shape[d]) break;
                idx[static_cast<std::size_t>(d)] = 0;
            }
        }
    };
    switch (dtype_itemsize(dt) / parts) {
        case 1: scan(std::uint8_t{}); break;
        case 2: scan(std::uint16_t{}); break;
        case 4: scan(std::uint32_t{}); break;
        case 8: scan(std::uint64_t{}); break;
        default: fail(ErrorKind::Message, std::string("nonzero: unsupported dtype ") + dtype_name(dt));
    }
    return count;
}

}  // namespace hrx::kernels
