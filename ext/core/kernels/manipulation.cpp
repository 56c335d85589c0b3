#include "kernels/manipulation.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/pool.h"

namespace hrx::kernels {
namespace {

// The innermost axis with the item size fixed at compile time: a fixed-size
// memcpy is one load and one store.
template <int N>
void gather_row(const std::uint8_t* in, std::uint8_t* out, const std::int64_t* off, std::int64_t n) {
    for (std::int64_t j = 0; j < n; ++j) std::memcpy(out + j * N, in + off[j], N);
}

void gather_row_any(const std::uint8_t* in, std::uint8_t* out, const std::int64_t* off, std::int64_t n, int item) {
    switch (item) {
        case 1: return gather_row<1>(in, out, off, n);
        case 2: return gather_row<2>(in, out, off, n);
        case 4: return gather_row<4>(in, out, off, n);
        case 8: return gather_row<8>(in, out, off, n);
        case 16: return gather_row<16>(in, out, off, n);
        default:
            for (std::int64_t j = 0; j < n; ++j)
                std::memcpy(out + j * item, in + off[j], static_cast<std::size_t>(item));
    }
}

// A run of the last axis whose input elements are adjacent: one memcpy.
struct Run {
    std::int64_t at;      // first output position
    std::int64_t offset;  // its input byte offset
    std::int64_t length;  // elements
};

// The last axis' table as runs, when they are long enough on average to beat
// the element loop (roll, tile, pad and identity tables are a few runs).
std::vector<Run> runs_of(const std::int64_t* off, std::int64_t n, int item) {
    std::vector<Run> runs;
    for (std::int64_t j = 0; j < n; ++j) {
        if (!runs.empty() && off[j] == runs.back().offset + runs.back().length * item) {
            ++runs.back().length;
            continue;
        }
        if (static_cast<std::int64_t>(runs.size()) * 8 > n) return {};
        runs.push_back(Run{j, off[j], 1});
    }
    return runs;
}

// Rows [first, last) of the leading axes (flattened), each a full last axis.
void gather_rows(int ndim, const std::int64_t* shape, const std::int64_t* const* offsets, const std::vector<Run>& runs,
                 const std::uint8_t* in, std::uint8_t* out, int item, std::int64_t first, std::int64_t last) {
    const int lead = ndim - 1;
    const std::int64_t n = shape[lead];
    std::vector<std::int64_t> pos(static_cast<std::size_t>(lead), 0);
    std::int64_t rest = first;
    for (int d = lead - 1; d >= 0; --d) {
        pos[static_cast<std::size_t>(d)] = rest % shape[d];
        rest /= shape[d];
    }
    for (std::int64_t r = first; r < last; ++r) {
        std::int64_t base = 0;
        for (int d = 0; d < lead; ++d) base += offsets[d][pos[static_cast<std::size_t>(d)]];
        std::uint8_t* row = out + r * n * item;
        if (runs.empty()) {
            gather_row_any(in + base, row, offsets[lead], n, item);
        } else {
            for (const Run& run : runs)
                std::memcpy(row + run.at * item, in + base + run.offset, static_cast<std::size_t>(run.length * item));
        }
        for (int d = lead - 1; d >= 0; --d) {
            if (++pos[static_cast<std::size_t>(d)] < shape[d]) break;
            pos[static_cast<std::size_t>(d)] = 0;
        }
    }
}

constexpr std::int64_t kChunkBytes = std::int64_t{1} << 20;

}  // namespace

void gather_outer(int ndim, const std::int64_t* shape, const std::int64_t* const* offsets, const std::uint8_t* in,
                  std::uint8_t* out, int itemsize) {
    if (ndim == 0) {
        std::memcpy(out, in, static_cast<std::size_t>(itemsize));
        return;
    }
    std::int64_t rows = 1;
    for (int d = 0; d < ndim - 1; ++d) rows *= shape[d];
    const std::int64_t row_bytes = std::max<std::int64_t>(shape[ndim - 1] * itemsize, 1);
    if (rows == 0 || shape[ndim - 1] == 0) return;
    const std::vector<Run> runs = runs_of(offsets[ndim - 1], shape[ndim - 1], itemsize);
    const std::int64_t per_chunk = std::max<std::int64_t>(kChunkBytes / row_bytes, 1);
    const std::int64_t chunks = (rows + per_chunk - 1) / per_chunk;
    if (chunks == 1) {
        gather_rows(ndim, shape, offsets, runs, in, out, itemsize, 0, rows);
        return;
    }
    pool_run(static_cast<std::size_t>(chunks), [&](std::size_t c) {
        const std::int64_t first = static_cast<std::int64_t>(c) * per_chunk;
        gather_rows(ndim, shape, offsets, runs, in, out, itemsize, first, std::min(rows, first + per_chunk));
    });
}

void copy_triangle(const std::uint8_t* in, const std::int64_t* batch_offsets, std::int64_t batch, std::int64_t m,
                   std::int64_t n, std::int64_t row_stride, std::int64_t col_stride, std::uint8_t* out, int itemsize,
                   std::int64_t k, bool lower) {
    const auto item = static_cast<std::size_t>(itemsize);
    const std::int64_t rows = batch * m;
    // Diagonals beyond the matrix keep or drop whole rows alike; clamping keeps i + k in int64.
    const std::int64_t kk = std::clamp<std::int64_t>(k, -n - m, n + m);
    auto run = [&](std::int64_t first, std::int64_t last) {
        for (std::int64_t r = first; r < last; ++r) {
            const std::int64_t i = r % m;
            const std::uint8_t* src = in + batch_offsets[r / m] + i * row_stride;
            std::uint8_t* dst = out + r * n * itemsize;
            // tril keeps columns [0, i + k], triu keeps [i + k, n).
            const std::int64_t from = lower ? 0 : std::clamp<std::int64_t>(i + kk, 0, n);
            const std::int64_t to = lower ? std::clamp<std::int64_t>(i + kk + 1, 0, n) : n;
            if (from > 0) std::memset(dst, 0, static_cast<std::size_t>(from) * item);
            if (to < n) std::memset(dst + to * itemsize, 0, static_cast<std::size_t>(n - to) * item);
            if (to <= from) continue;
            if (col_stride == itemsize) {
                std::memcpy(dst + from * itemsize, src + from * col_stride, static_cast<std::size_t>(to - from) * item);
                continue;
            }
            for (std::int64_t j = from; j < to; ++j) std::memcpy(dst + j * itemsize, src + j * col_stride, item);
        }
    };
    const std::int64_t per_chunk = std::max<std::int64_t>(kChunkBytes / std::max<std::int64_t>(n * itemsize, 1), 1);
    const std::int64_t chunks = (rows + per_chunk - 1) / per_chunk;
    if (chunks <= 1) {
        run(0, rows);
        return;
    }
    pool_run(static_cast<std::size_t>(chunks), [&](std::size_t c) {
        const std::int64_t first = static_cast<std::int64_t>(c) * per_chunk;
        run(first, std::min(rows, first + per_chunk));
    });
}

}  // namespace hrx::kernels
