// Manipulation and creation functions that move data (kernels/manipulation.h)
// as compute-lane tasks. Views (flip, moveaxis, broadcast_to, ...) need no
// task: the Python layer builds them from strides.
//
// Note [Outer gathers]: repeat, roll, tile and the non-constant modes of pad
// all pick, along each axis independently, which input position feeds each
// output position; one index table per axis (empty: the identity) describes
// any of them, and a single pass over the output moves the data.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "array/ops.h"

namespace hrx {

// Checks the index tables of a gather from `in` (one per axis; empty keeps
// the axis): ValueError naming `op` for a wrong count or an index out of
// range. Returns the output shape.
Dims gather_shape(const Array& in, const std::vector<std::vector<int64_t>>& index, const std::string& op);

// out[j0, ...] = in[index[0][j0], ...] (Note [Outer gathers]); out is a fresh
// C-contiguous array of in's dtype and gather_shape's shape.
TaskSpec gather_task(const Array& in, std::vector<std::vector<int64_t>> index, const Array& out,
                     const std::string& name);

// out = tril(in, k) (lower) or triu(in, k) over the last two axes; out is a
// fresh C-contiguous array of in's shape and dtype.
TaskSpec triangle_task(const Array& in, int64_t k, bool lower, const Array& out, const std::string& name);

}  // namespace hrx

namespace hrx::manipulation {

// A new array (in's placement and dtype) gathered from `in` by the index
// tables (Note [Outer gathers]; checked by gather_shape), asynchronously.
Array gather(const Array& in, std::vector<std::vector<int64_t>> index, const std::string& op);

// tril(in, k) (lower) or triu(in, k) of the last two axes as a new array;
// ValueError naming `op` when `in` has fewer than 2 dimensions.
Array triangle(const Array& in, int64_t k, bool lower, const std::string& op);

}  // namespace hrx::manipulation
