#include "kernels/indexing.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "errors.h"
#include "kernels/pool.h"

namespace hrx::kernels {
namespace {

// Index positions per pool item: large enough that scheduling is noise,
// small enough that two threads share a 16 M gather evenly.
constexpr std::int64_t kChunk = std::int64_t{1} << 16;

struct alignas(16) Bytes16 {
    std::uint64_t lo, hi;
};

// The unsigned integer type (or pair of them) of an element of N bytes:
// elements are moved as opaque bits, whatever their dtype.
template <int N>
struct ItemOf {
    using type = std::conditional_t<
        N == 1, std::uint8_t,
        std::conditional_t<N == 2, std::uint16_t,
                           std::conditional_t<N == 4, std::uint32_t, std::conditional_t<N == 8, std::uint64_t, Bytes16>>>>;
};

// Normalises index i for an axis of e elements; false when it is out of
// bounds in Raise mode (Wrap and Clip never fail; the array layer refuses
// them on empty axes).
inline bool fix_index(std::int64_t& i, std::int64_t e, IndexMode mode) {
    switch (mode) {
        case IndexMode::Raise:
            if (i < 0) i += e;
            return static_cast<std::uint64_t>(i) < static_cast<std::uint64_t>(e);
        case IndexMode::Wrap:
            i %= e;
            if (i < 0) i += e;
            return true;
        case IndexMode::Clip:
            i = i < 0 ? 0 : (i >= e ? e - 1 : i);
            return true;
    }
    return false;
}

template <class T>
void copy_block_t(int m, const std::int64_t* shape, const std::uint8_t* src, const std::int64_t* ss, std::uint8_t* dst,
                  const std::int64_t* ds) {
    const std::int64_t n = shape[0];
    if (m == 1) {
        const std::int64_t a = ss[0], b = ds[0];
        for (std::int64_t i = 0; i < n; ++i) {
            T v;
            std::memcpy(&v, src + i * a, sizeof(T));
            std::memcpy(dst + i * b, &v, sizeof(T));
        }
        return;
    }
    for (std::int64_t i = 0; i < n; ++i) copy_block_t<T>(m - 1, shape + 1, src + i * ss[0], ss + 1, dst + i * ds[0], ds + 1);
}

template <class T>
void copy_item(const std::uint8_t* src, std::uint8_t* dst) {
    T v;
    std::memcpy(&v, src, sizeof(T));
    std::memcpy(dst, &v, sizeof(T));
}

// The common x[idx] and take: one index array, one element per position.
// Everything the loop reads lives in locals, so that the stores cannot make
// the compiler reload it; the in-range test comes first so that Wrap pays
// its division only for indices that need it.
template <class T, IndexMode Mode>
bool gather_elements(const IndexArg& ix, std::int64_t s, std::int64_t r, const std::uint8_t* src, std::uint8_t* dst,
                     std::int64_t p0, std::int64_t p1) {
    const std::int64_t* idx = ix.data;
    const std::int64_t e = ix.extent, step = ix.step;
    constexpr std::int64_t ahead = 128;
    for (std::int64_t q = p0; q < p1; ++q) {
        // Random indices miss every cache: asking for the element a few
        // positions ahead keeps more misses in flight than the loads alone.
        if (q + ahead < p1) {
            const auto j = static_cast<std::uint64_t>(idx[(q + ahead) * s]);
            if (j < static_cast<std::uint64_t>(e)) __builtin_prefetch(src + static_cast<std::int64_t>(j) * step);
        }
        std::int64_t i = idx[q * s];
        if (static_cast<std::uint64_t>(i) >= static_cast<std::uint64_t>(e)) [[unlikely]] {
            if (!fix_index(i, e, Mode)) return false;
        }
        T v;
        std::memcpy(&v, src + i * step, sizeof(T));
        std::memcpy(dst + q * r, &v, sizeof(T));
    }
    return true;
}

// Positions [p0, p1) of a gather (Scatter: of a scatter); false when an
// index was out of bounds (nothing written from that position on).
template <class T, bool Scatter>
bool run_positions(const GatherPlan& p, const std::uint8_t* a, std::uint8_t* b, std::int64_t p0, std::int64_t p1) {
    // Gather: a is the indexed source, b the dense rows. Scatter: a holds
    // the rows (values), b is the indexed destination.
    auto move = [&](std::int64_t indexed, std::int64_t row) {
        const std::uint8_t* from = Scatter ? a + row : a + indexed;
        std::uint8_t* to = Scatter ? b + indexed : b + row;
        if (p.m == 0)
            copy_item<T>(from, to);
        else
            copy_block_t<T>(p.m, p.sub_shape, from, p.sub_src, to, p.sub_dst);
    };
    if (p.nb <= 1 && p.k == 1) {
        const IndexArg& ix = p.idx[0];
        const std::int64_t s = p.nb ? ix.strides[0] : 0, r = p.nb ? p.row_strides[0] : 0;
        if (p.m == 0 && !Scatter) {
            switch (p.mode) {
                case IndexMode::Raise: return gather_elements<T, IndexMode::Raise>(ix, s, r, a, b, p0, p1);
                case IndexMode::Wrap: return gather_elements<T, IndexMode::Wrap>(ix, s, r, a, b, p0, p1);
                case IndexMode::Clip: return gather_elements<T, IndexMode::Clip>(ix, s, r, a, b, p0, p1);
            }
        }
        for (std::int64_t q = p0; q < p1; ++q) {
            std::int64_t i = ix.data[q * s];
            if (!fix_index(i, ix.extent, p.mode)) return false;
            move(i * ix.step, q * r);
        }
        return true;
    }
    std::int64_t coord[64] = {};
    std::int64_t rest = p0;
    for (int d = p.nb - 1; d >= 0; --d) {
        coord[d] = p.bshape[d] ? rest % p.bshape[d] : 0;
        rest = p.bshape[d] ? rest / p.bshape[d] : 0;
    }
    for (std::int64_t q = p0; q < p1; ++q) {
        std::int64_t off = 0, row = 0;
        for (int d = 0; d < p.nb; ++d) row += coord[d] * p.row_strides[d];
        for (int j = 0; j < p.k; ++j) {
            const IndexArg& ix = p.idx[j];
            std::int64_t e = 0;
            for (int d = 0; d < p.nb; ++d) e += coord[d] * ix.strides[d];
            std::int64_t i = ix.data[e];
            if (!fix_index(i, ix.extent, p.mode)) return false;
            off += i * ix.step;
        }
        move(off, row);
        for (int d = p.nb - 1; d >= 0; --d) {
            if (++coord[d] < p.bshape[d]) break;
            coord[d] = 0;
        }
    }
    return true;
}

template <bool Scatter>
bool run_range(const GatherPlan& p, const std::uint8_t* a, std::uint8_t* b, std::int64_t p0, std::int64_t p1) {
    switch (p.itemsize) {
        case 1: return run_positions<ItemOf<1>::type, Scatter>(p, a, b, p0, p1);
        case 2: return run_positions<ItemOf<2>::type, Scatter>(p, a, b, p0, p1);
        case 4: return run_positions<ItemOf<4>::type, Scatter>(p, a, b, p0, p1);
        case 8: return run_positions<ItemOf<8>::type, Scatter>(p, a, b, p0, p1);
        default: return run_positions<ItemOf<16>::type, Scatter>(p, a, b, p0, p1);
    }
}

std::int64_t positions(const GatherPlan& p) {
    std::int64_t n = 1;
    for (int d = 0; d < p.nb; ++d) n *= p.bshape[d];
    return n;
}

[[noreturn]] void fail_bounds() {
    fail(ErrorKind::Data, "an index is out of bounds (the index array changed after its bounds were checked)");
}

void copy_row(int m, const std::int64_t* shape, const std::int64_t* ss, const std::int64_t* ds, int itemsize,
              const std::uint8_t* src, std::uint8_t* dst) {
    switch (itemsize) {
        case 1: return m ? copy_block_t<ItemOf<1>::type>(m, shape, src, ss, dst, ds) : copy_item<ItemOf<1>::type>(src, dst);
        case 2: return m ? copy_block_t<ItemOf<2>::type>(m, shape, src, ss, dst, ds) : copy_item<ItemOf<2>::type>(src, dst);
        case 4: return m ? copy_block_t<ItemOf<4>::type>(m, shape, src, ss, dst, ds) : copy_item<ItemOf<4>::type>(src, dst);
        case 8: return m ? copy_block_t<ItemOf<8>::type>(m, shape, src, ss, dst, ds) : copy_item<ItemOf<8>::type>(src, dst);
        default:
            return m ? copy_block_t<ItemOf<16>::type>(m, shape, src, ss, dst, ds) : copy_item<ItemOf<16>::type>(src, dst);
    }
}

template <class T>
void compress_block_1d(const std::uint8_t* mask, std::int64_t i0, std::int64_t i1, std::int64_t step,
                       std::int64_t row_stride, const std::uint8_t* src, std::uint8_t* dst) {
    std::int64_t r = 0;
    for (std::int64_t i = i0; i < i1; ++i) {
        copy_item<T>(src + i * step, dst + r * row_stride);
        r += mask[i] != 0;
    }
}

template <class T>
void range_of(const T* x, std::int64_t n, std::int64_t* lo, std::int64_t* hi) {
    T a = x[0], b = x[0];
    for (std::int64_t i = 1; i < n; ++i) {
        a = std::min(a, x[i]);
        b = std::max(b, x[i]);
    }
    constexpr auto top = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    auto wide = [&](T v) -> std::int64_t {
        if constexpr (std::is_unsigned_v<T>)
            return static_cast<std::uint64_t>(v) > top ? std::numeric_limits<std::int64_t>::max()
                                                        : static_cast<std::int64_t>(v);
        else
            return static_cast<std::int64_t>(v);
    };
    *lo = wide(a);
    *hi = wide(b);
}

}  // namespace

void gather(const GatherPlan& plan, const std::uint8_t* src, std::uint8_t* dst) {
    const std::int64_t n = positions(plan);
    const auto items = static_cast<std::size_t>((n + kChunk - 1) / kChunk);
    std::atomic<bool> bad{false};
    pool_run(items, [&](std::size_t it) {
        const std::int64_t p0 = static_cast<std::int64_t>(it) * kChunk;
        if (!run_range<false>(plan, src, dst, p0, std::min(n, p0 + kChunk))) bad = true;
    });
    if (bad) fail_bounds();
}

void scatter(const GatherPlan& plan, const std::uint8_t* values, std::uint8_t* dst) {
    if (!run_range<true>(plan, values, dst, 0, positions(plan))) fail_bounds();
}

void index_range(DType dt, const std::uint8_t* data, std::int64_t n, std::int64_t* lo, std::int64_t* hi) {
    const auto items = static_cast<std::size_t>((n + kChunk * 4 - 1) / (kChunk * 4));
    std::vector<std::int64_t> los(items), his(items);
    pool_run(items, [&](std::size_t it) {
        const std::int64_t i0 = static_cast<std::int64_t>(it) * kChunk * 4, len = std::min(n - i0, kChunk * 4);
        std::int64_t* l = &los[it];
        std::int64_t* h = &his[it];
        switch (dt) {
            case DType::Int8: return range_of(reinterpret_cast<const std::int8_t*>(data) + i0, len, l, h);
            case DType::Int16: return range_of(reinterpret_cast<const std::int16_t*>(data) + i0, len, l, h);
            case DType::Int32: return range_of(reinterpret_cast<const std::int32_t*>(data) + i0, len, l, h);
            case DType::UInt8: return range_of(data + i0, len, l, h);
            case DType::UInt16: return range_of(reinterpret_cast<const std::uint16_t*>(data) + i0, len, l, h);
            case DType::UInt32: return range_of(reinterpret_cast<const std::uint32_t*>(data) + i0, len, l, h);
            case DType::UInt64: return range_of(reinterpret_cast<const std::uint64_t*>(data) + i0, len, l, h);
            default: return range_of(reinterpret_cast<const std::int64_t*>(data) + i0, len, l, h);
        }
    });
    *lo = *std::min_element(los.begin(), los.end());
    *hi = *std::max_element(his.begin(), his.end());
}

std::int64_t mask_count(const std::uint8_t* mask, std::int64_t n) {
    const auto items = static_cast<std::size_t>((n + kChunk * 4 - 1) / (kChunk * 4));
    std::vector<std::int64_t> counts(items);
    pool_run(items, [&](std::size_t it) {
        const std::int64_t i0 = static_cast<std::int64_t>(it) * kChunk * 4, i1 = std::min(n, i0 + kChunk * 4);
        std::int64_t c = 0;
        for (std::int64_t i = i0; i < i1; ++i) c += mask[i] != 0;
        counts[it] = c;
    });
    std::int64_t total = 0;
    for (std::int64_t c : counts) total += c;
    return total;
}

void compress(const std::uint8_t* mask, int kdims, const std::int64_t* mshape, const std::int64_t* msteps,
              std::int64_t rows, std::int64_t row_stride, int m, const std::int64_t* sub_shape,
              const std::int64_t* sub_src, const std::int64_t* sub_dst, int itemsize, const std::uint8_t* src,
              std::uint8_t* dst) {
    std::int64_t n = 1;
    for (int d = 0; d < kdims; ++d) n *= mshape[d];
    const auto items = static_cast<std::size_t>((n + kChunk - 1) / kChunk);
    std::vector<std::int64_t> first(items + 1, 0);
    pool_run(items, [&](std::size_t it) {
        const std::int64_t i0 = static_cast<std::int64_t>(it) * kChunk, i1 = std::min(n, i0 + kChunk);
        std::int64_t c = 0;
        for (std::int64_t i = i0; i < i1; ++i) c += mask[i] != 0;
        first[it + 1] = c;
    });
    for (std::size_t it = 0; it < items; ++it) first[it + 1] += first[it];
    if (first[items] != rows)
        fail(ErrorKind::Data, "the mask changed after its count was taken (" + std::to_string(first[items]) +
                                  " set, " + std::to_string(rows) + " expected)");
    pool_run(items, [&](std::size_t it) {
        const std::int64_t i0 = static_cast<std::int64_t>(it) * kChunk, i1 = std::min(n, i0 + kChunk);
        std::uint8_t* out = dst + first[it] * row_stride;
        if (first[it + 1] == first[it]) return;
        if (kdims == 1 && m == 0) {
            // Branch-free up to the block's last set element: every element
            // is written to the next slot, which advances only where the
            // mask is set, so no write lands past the block's own rows.
            std::int64_t last = i1 - 1;
            while (!mask[last]) --last;
            switch (itemsize) {
                case 1: compress_block_1d<ItemOf<1>::type>(mask, i0, last + 1, msteps[0], row_stride, src, out); break;
                case 2: compress_block_1d<ItemOf<2>::type>(mask, i0, last + 1, msteps[0], row_stride, src, out); break;
                case 4: compress_block_1d<ItemOf<4>::type>(mask, i0, last + 1, msteps[0], row_stride, src, out); break;
                case 8: compress_block_1d<ItemOf<8>::type>(mask, i0, last + 1, msteps[0], row_stride, src, out); break;
                default: compress_block_1d<ItemOf<16>::type>(mask, i0, last + 1, msteps[0], row_stride, src, out); break;
            }
            return;
        }
        std::int64_t coord[64] = {};
        std::int64_t rest = i0;
        for (int d = kdims - 1; d >= 0; --d) {
            coord[d] = rest % mshape[d];
            rest /= mshape[d];
        }
        for (std::int64_t i = i0; i < i1; ++i) {
            if (mask[i]) {
                std::int64_t off = 0;
                for (int d = 0; d < kdims; ++d) off += coord[d] * msteps[d];
                copy_row(m, sub_shape, sub_src, sub_dst, itemsize, src + off, out);
                out += row_stride;
            }
            for (int d = kdims - 1; d >= 0; --d) {
                if (++coord[d] < mshape[d]) break;
                coord[d] = 0;
            }
        }
    });
}

}  // namespace hrx::kernels
