// Sorting as array-layer tasks (kernels/sort.h): sort and argsort along an
// axis, on the GPU compute lane like every array operation (Note [Lanes of
// array operations] in ops.h), plus the pieces searching.cpp, set.cpp and
// statistical.cpp share: the axis-last view (the task skeleton, compute_task, is ops.h's).
#pragma once
#include <initializer_list>
#include <string>

#include "array/ops.h"

namespace hrx {

// `a` viewed with dimension `axis` moved last (no copy).
Array axis_last(const Array& a, int axis);

// Refuses (UnsupportedError, before anything is submitted) the dtypes the
// sort kernels cannot order: the block dtypes (bfp16).
void check_sortable(DType dt, const std::string& name);
// The refusals of an array that sorting, searching, set and cumulative
// functions read: bfp16 (TypeError naming `op`: its values have no order to
// compare by), then check_element_operand's for a read.
void check_comparable(const Array& a, const std::string& op);
// The first k elements of row `row` of a 2-d array (or of a 1-d array for
// row 0), as a 1-d view: the data-dependent part of a result allocated at
// its largest size.
Array head(const Array& a, int64_t row, int64_t k);

// out = sort(in) along `axis` (indices: the stable argsort, out int64; else
// the sorted values, out in's dtype), ascending or descending, stable.
// out is a fresh C-contiguous array of in's shape.
TaskSpec sort_task(const Array& in, int axis, bool descending, bool indices, const Array& out,
                   const std::string& name);

}  // namespace hrx

namespace hrx::sorting {

// The stable sort (indices: the int64 argsort) of `in` along the normalised
// `axis` (Note [Axes]), ascending or descending, as a new array.
Array sort(const Array& in, int axis, bool descending, bool indices, const std::string& op);

}  // namespace hrx::sorting
