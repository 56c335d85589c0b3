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

// Zeroes, in each of `batch` C-contiguous m x n matrices at `data`, the
// elements that tril (lower) or triu (upper) with diagonal offset k drops:
// above the k-th diagonal (j > i + k) for tril, below it (j < i + k) for triu.
void zero_triangle(std::uint8_t* data, std::int64_t batch, std::int64_t m, std::int64_t n, int itemsize,
                   std::int64_t k, bool lower);

}  // namespace hrx::kernels
