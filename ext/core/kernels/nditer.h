// Private to the elementwise kernels: the strided N-d iteration they share.
// A layout merges the operands' dimensions as far as their strides allow, so
// that a contiguous array (in any dimension order) becomes one row, and then
// hands out rows of the innermost dimension over any range of the flat
// iteration space, which is how large calls are split over the pool.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace hrx::kernels::ew {

inline constexpr int kMaxOps = 5;
// NumPy's own limit (NPY_MAXDIMS in NumPy 2).
inline constexpr int kMaxDims = 64;

struct NdLayout {
    int ndim = 0;  // >= 1 after nd_layout
    int nops = 0;
    std::int64_t size = 0;
    std::int64_t shape[kMaxDims];
    std::int64_t strides[kMaxOps][kMaxDims];
};

// Builds the layout of `nops` operands over shape[ndim] (strides[op][d] in
// bytes). Dimensions of extent 1 are dropped, the rest are ordered so that the
// stride of operand `key` decreases in magnitude (a transposed operand then
// walks memory in order) and adjacent dimensions that every operand walks as
// one are merged. The caller has checked that no extent is 0.
inline void nd_layout(NdLayout& L, int ndim, const std::int64_t* shape, int nops,
                      const std::int64_t* const* strides, int key) noexcept {
    L.nops = nops;
    L.size = 1;
    int order[kMaxDims];
    int n = 0;
    for (int d = 0; d < ndim; ++d) {
        L.size *= shape[d];
        if (shape[d] != 1) order[n++] = d;
    }
    // Insertion sort, stable: equal strides keep C order.
    for (int i = 1; i < n; ++i) {
        const int d = order[i];
        const std::int64_t s = std::llabs(strides[key][d]);
        int j = i;
        while (j > 0 && std::llabs(strides[key][order[j - 1]]) < s) {
            order[j] = order[j - 1];
            --j;
        }
        order[j] = d;
    }
    int m = 0;
    for (int i = 0; i < n; ++i) {
        const int d = order[i];
        if (m > 0) {
            // Merge d into the previous (outer) dimension if, for every
            // operand, stepping the outer one equals stepping d shape[d] times.
            bool merge = true;
            for (int op = 0; op < nops && merge; ++op)
                merge = L.strides[op][m - 1] == strides[op][d] * shape[d];
            if (merge) {
                L.shape[m - 1] *= shape[d];
                for (int op = 0; op < nops; ++op) L.strides[op][m - 1] = strides[op][d];
                continue;
            }
        }
        L.shape[m] = shape[d];
        for (int op = 0; op < nops; ++op) L.strides[op][m] = strides[op][d];
        ++m;
    }
    if (m == 0) {
        L.shape[0] = 1;
        for (int op = 0; op < nops; ++op) L.strides[op][0] = 0;
        m = 1;
    }
    L.ndim = m;
}

// Calls row(ptrs, steps, n) for the runs of the innermost dimension that
// cover flat indices [begin, end) of the layout, in order; ptrs[op] points at
// the run's first element of each operand, steps[op] is its inner stride.
template <class Row>
void nd_rows(const NdLayout& L, char* const* base, std::int64_t begin, std::int64_t end, Row&& row) {
    const int nd = L.ndim, in = nd - 1, nops = L.nops;
    std::int64_t idx[kMaxDims];
    std::int64_t rem = begin;
    for (int d = in; d >= 0; --d) {
        idx[d] = rem % L.shape[d];
        rem /= L.shape[d];
    }
    char* p[kMaxOps];
    std::int64_t steps[kMaxOps];
    for (int op = 0; op < nops; ++op) {
        p[op] = base[op];
        for (int d = 0; d < nd; ++d) p[op] += idx[d] * L.strides[op][d];
        steps[op] = L.strides[op][in];
    }
    std::int64_t left = end - begin;
    while (left > 0) {
        const std::int64_t n = std::min(L.shape[in] - idx[in], left);
        row(static_cast<char* const*>(p), static_cast<const std::int64_t*>(steps), n);
        left -= n;
        if (left == 0) break;
        for (int op = 0; op < nops; ++op) p[op] += n * steps[op];
        idx[in] += n;
        for (int d = in; d > 0 && idx[d] == L.shape[d]; --d) {
            idx[d] = 0;
            ++idx[d - 1];
            for (int op = 0; op < nops; ++op) p[op] += L.strides[op][d - 1] - L.shape[d] * L.strides[op][d];
        }
    }
}

}  // namespace hrx::kernels::ew
