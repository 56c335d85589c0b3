// Data-movement kernels of the manipulation and creation functions: an outer
// gather (every output axis picks input positions from its own table) and the
// triangle mask of tril/triu. Byte copies only, so every dtype (bfp16 aside)
// moves bit for bit, on every host.
#pragma once
#include <cstdint>

namespace hrx::kernels {

// out[j0, ..., jn-1] = *(in + offsets[0][j0] + ... + offsets[n-1][jn-1]),
// out C-contiguous of `shape` with `itemsize`-byte elements. offsets[k] holds
// shape[k] byte offsets (index times the input's stride along k, already
// checked in range by the caller). Large calls are split over the pool by
// rows of the last axis.
void gather_outer(int ndim, const std::int64_t* shape, const std::int64_t* const* offsets, const std::uint8_t* in,
                  std::uint8_t* out, int itemsize);

// tril (lower) or triu of `batch` m x n matrices: matrix b of `in` starts at
// in + batch_offsets[b] with byte strides (row_stride, col_stride); `out`
// holds the results C-contiguous. Kept elements (j <= i + k for tril,
// j >= i + k for triu) are copied, the others zeroed, in one pass.
void copy_triangle(const std::uint8_t* in, const std::int64_t* batch_offsets, std::int64_t batch, std::int64_t m,
                   std::int64_t n, std::int64_t row_stride, std::int64_t col_stride, std::uint8_t* out, int itemsize,
                   std::int64_t k, bool lower);

}  // namespace hrx::kernels
