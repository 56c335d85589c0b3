// Sorting kernels of the emulated devices: stable sorts of contiguous rows,
// the order-preserving key transform they sort on, binary search and the
// grouping behind unique. The array layer (array/sorting.cpp, searching.cpp,
// set.cpp) moves data into and out of the contiguous rows these take.
//
// Note [Sort order]: every dtype sorts by an unsigned key of its own width
// whose integer order is NumPy's sort order: integers by value, floats by
// value with -0.0 equal to 0.0 and every NaN after +inf (NaNs equal to each
// other). Descending order is the complement of the key, so NaNs come first
// there (as flipping NumPy's ascending sort of the flipped input gives).
// Every sort is stable: equal keys keep their input order, descending too.
// Keys are integers, so results are the same bits on every host.
#pragma once
#include <cstdint>

#include "kernels/dtype.h"

namespace hrx::kernels {

// Sorts `rows` rows of `n` contiguous elements each (rows back to back) of
// `src` into `data` (src may be data: in place; otherwise they must not
// overlap). Bool, integer and float dtypes (not BFP16). Large rows use a
// parallel radix sort over the kernel pool, many rows run in parallel.
void sort_rows(DType dt, const std::uint8_t* src, std::uint8_t* data, std::int64_t rows, std::int64_t n,
               bool descending);

// The stable sorting permutation of each row of `data` (as sort_rows) into
// `out` (rows x n int64, indices within the row).
void argsort_rows(DType dt, const std::uint8_t* data, std::int64_t* out, std::int64_t rows, std::int64_t n,
                  bool descending);

// For each of the `m` contiguous `needles`, the insertion point into the
// ascending `n` contiguous `sorted` elements (both of dtype dt) that keeps
// them sorted: the first (right=false) or last (right=true) such position.
// With `sorter` (n indices, may be null) the sorted sequence is
// sorted[sorter[i]]; an index outside [0, n) throws a Data error.
void search_sorted(DType dt, const std::uint8_t* sorted, std::int64_t n, const std::int64_t* sorter,
                   const std::uint8_t* needles, std::int64_t m, bool right, std::int64_t* out);

// Groups the `n` contiguous elements of `data` into their distinct values,
// in sort order: values (dt, first element of each group), index (int64, the
// first occurrence in data), counts (int64) get one entry per group and
// inverse (int64, n entries) the group of each element; any of them may be
// null. NaNs form one group when equal_nan, one group each otherwise (the
// array API's rule). Returns the number of groups.
std::int64_t unique_groups(DType dt, const std::uint8_t* data, std::int64_t n, bool equal_nan, std::uint8_t* values,
                           std::int64_t* index, std::int64_t* inverse, std::int64_t* counts);

// Groups the `rows` rows of `m` contiguous elements each (rows back to back)
// of `data` into their distinct rows, ordered lexicographically by their
// elements in sort order (NumPy's unique(axis=)): values get one row (m
// elements of dt) per group, index/counts one int64 per group and inverse
// (rows entries) the group of each row, as unique_groups; any may be null.
// A row holding a NaN equals no other row. Returns the number of groups.
std::int64_t unique_rows(DType dt, const std::uint8_t* data, std::int64_t rows, std::int64_t m,
                         std::uint8_t* values, std::int64_t* index, std::int64_t* inverse, std::int64_t* counts);

// The C-order multi-indices of the nonzero elements (a nonzero byte for bool,
// NaN counts as nonzero) of the contiguous array of `shape` at `data`: row d
// of `out` (ndim rows of `stride` int64 each, stride >= the count) gets the
// indices along axis d. Returns the count.
std::int64_t nonzero_indices(DType dt, const std::uint8_t* data, int ndim, const std::int64_t* shape,
                             std::int64_t* out, std::int64_t stride);

}  // namespace hrx::kernels
