// Indexing kernels of the emulated devices: gathers and scatters through
// integer index arrays, the compress of a boolean mask, and the range of an
// index array (for the bounds check before a gather or scatter runs). The
// array layer (array/indexing.cpp) lays the operands out: the indexed axes
// first, then the rest (a "sub-block" copied whole per index position).
#pragma once
#include <cstdint>

#include "kernels/dtype.h"

namespace hrx::kernels {

// What an index outside [-extent, extent) does: Raise fails the kernel
// (kind Data; the array layer checks bounds before submitting, so this only
// keeps memory safe), Wrap takes it modulo extent, Clip clamps it (NumPy's
// take modes). In Raise mode negative indices count from the end.
enum class IndexMode : std::uint8_t { Raise, Wrap, Clip };

// One int64 index array broadcast over the index shape: element at
// `strides` (in elements, 0 on broadcast dimensions), indexing an axis of
// `extent` elements that are `step` bytes apart in the source.
struct IndexArg {
    const std::int64_t* data;
    const std::int64_t* strides;
    std::int64_t extent;
    std::int64_t step;
};

// The loop of a gather (or scatter): for every position of the index shape
// (`nb` dimensions), the source element offset is the sum over the `k`
// index arrays of index * step; the destination row of that position is at
// `row_strides` (bytes per index dimension). A sub-block of `m` dimensions
// (`sub_shape`, strides `sub_src` in the indexed array and `sub_dst` in the
// other) is copied per position; m == 0 copies one element of `itemsize`.
struct GatherPlan {
    int nb = 0;
    const std::int64_t* bshape = nullptr;
    int k = 0;
    const IndexArg* idx = nullptr;
    const std::int64_t* row_strides = nullptr;
    int m = 0;
    const std::int64_t* sub_shape = nullptr;
    const std::int64_t* sub_src = nullptr;
    const std::int64_t* sub_dst = nullptr;
    int itemsize = 1;
    IndexMode mode = IndexMode::Raise;
};

// dst rows = src at the indexed positions; parallel over the kernel pool.
void gather(const GatherPlan& plan, const std::uint8_t* src, std::uint8_t* dst);
// The indexed positions of dst = the rows of `values` (plan.row_strides and
// sub_src address `values`, sub_dst and the index steps address dst), in
// C order of the index shape on one thread, so that of repeated indices
// the last write wins, as NumPy's assignment does.
void scatter(const GatherPlan& plan, const std::uint8_t* values, std::uint8_t* dst);

// The least and greatest of the `n` contiguous integers of dtype dt at
// `data` (n > 0), as int64 (uint64 values beyond int64 saturate).
void index_range(DType dt, const std::uint8_t* data, std::int64_t n, std::int64_t* lo, std::int64_t* hi);

// The number of nonzero bytes among the `n` contiguous bool bytes at `mask`.
std::int64_t mask_count(const std::uint8_t* mask, std::int64_t n);

// The rows of src where the contiguous `mask` (n bytes, C order over the
// `kdims` mask dimensions of `mshape`, each `msteps` bytes apart in src) is
// nonzero, in order, to dst rows `row_stride` bytes apart, each a sub-block
// as in GatherPlan (m, sub_shape, sub_src, sub_dst, itemsize). `rows` is the
// number of dst rows: a mask with another count fails (kind Data). Parallel:
// block counts, their prefix sum, then every block writes its own rows.
void compress(const std::uint8_t* mask, int kdims, const std::int64_t* mshape, const std::int64_t* msteps,
              std::int64_t rows, std::int64_t row_stride, int m, const std::int64_t* sub_shape,
              const std::int64_t* sub_src, const std::int64_t* sub_dst, int itemsize, const std::uint8_t* src,
              std::uint8_t* dst);

}  // namespace hrx::kernels
