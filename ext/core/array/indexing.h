// Advanced indexing (kernels/indexing.h): integer-array gathers and
// scatters, boolean-mask compress and isin, as whole operations (the checks,
// the bounds and counts the host waits for, the result, the submission) and
// as the array-layer tasks they submit, and the layout rules that place their
// results (NumPy's, which the array API follows).
//
// Note [Advanced index layout]: the caller applies the basic part of a key
// (integers, slices, None) as a view `v` and hands over the axes of v that
// integer index arrays index (a boolean mask is its nonzero indices, one
// array per mask dimension, or a compress). The index arrays broadcast
// together to the index shape B. The result is v's other axes, in order,
// with B inserted where the first advanced entry of the key stood when the
// advanced entries (index arrays, and integers, which count as 0-d index
// arrays here) are adjacent in the key, else in front: x[:, [0, 1], 0] is
// (n0, 2), x[[0, 1], :, 0] is (2, n1).
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "array/ops.h"
#include "kernels/indexing.h"

namespace hrx {

// Where an advanced index places its result (Note [Advanced index layout]).
struct IndexLayout {
    Dims bshape;            // the index arrays broadcast together
    Dims result;            // the result shape
    std::vector<int> rest;  // the axes of v not indexed, in order
    int insert_at = 0;      // where bshape starts in `result`
};

// The layout of indexing v at `axes` (distinct, ascending) with index arrays
// of `index_shapes`; `adjacent` and `first` (the result dimensions the key
// makes before its first advanced entry) decide where B goes. IndexError
// naming `op` when the index arrays do not broadcast together.
IndexLayout index_layout(const Dims& vshape, const std::vector<int>& axes, const std::vector<Dims>& index_shapes,
                         bool adjacent, int first, const std::string& op);

// *range = (least, greatest) of the integer array `idx` (any integer dtype),
// set when the task has run; the caller waits for it and checks bounds with
// check_index_bounds before the gather or scatter is submitted. Not for
// empty arrays.
TaskSpec index_range_task(const Array& idx, std::shared_ptr<std::pair<int64_t, int64_t>> range,
                          const std::string& name);
// IndexError "index 5 is out of bounds for axis 0 with size 3" (NumPy's text,
// `axis` of the indexed array as the caller's key numbers it) when the range
// leaves [-extent, extent).
void check_index_bounds(std::pair<int64_t, int64_t> range, int64_t extent, int axis, const std::string& op);

// out (layout.result, C-contiguous, v's dtype) = v indexed by `indices` at
// `axes` with `mode` on the compute lane.
TaskSpec gather_task(const Array& v, const std::vector<int>& axes, const std::vector<Array>& indices,
                     const IndexLayout& layout, kernels::IndexMode mode, const Array& out, const std::string& name);

// v indexed by `indices` at `axes` = values (already v's dtype and
// broadcastable to layout.result by NumPy's assignment rule; it must not
// overlap v), a write of v on the compute lane; repeated indices: the last
// in C order of B wins.
TaskSpec scatter_task(const Array& v, const std::vector<int>& axes, const std::vector<Array>& indices,
                      const IndexLayout& layout, const Array& values, const std::string& name);

// *count = the number of true elements of the bool `mask` (set when the task
// has run: the caller waits for it to size the compress's result).
TaskSpec mask_count_task(const Array& mask, std::shared_ptr<int64_t> count, const std::string& name);
// out = the elements (sub-blocks) of v where `mask` (bool, covering the axes
// [axis, axis + mask.ndim) of v) is true, in C order; out's shape is v's
// with those axes replaced by one of `count` elements at `insert_at`.
TaskSpec compress_task(const Array& v, int axis, const Array& mask, int insert_at, const Array& out,
                       const std::string& name);

// out (bool, x1's shape) = whether each element of x1 is in x2, compared as
// `common` (NumPy's result type), negated when invert.
TaskSpec isin_task(const Array& x1, const Array& x2, DType common, bool invert, const Array& out,
                   const std::string& name);

}  // namespace hrx

// The operations behind x[...] with index arrays and masks (hrxarray/_indexing.py
// applies a key's basic part as a view first) and isin. Every check runs
// before anything is allocated or submitted; each array argument gets
// check_element_operand's refusals in argument order. Errors name `op`.
namespace hrx::indexing {

// x indexed at `axes` (distinct, ascending axes of x) by integer index
// arrays (x's runtime; IndexError for other dtypes, as NumPy) broadcast
// together, as a new array (Note [Advanced index layout]; `key_axes` number
// the axes as the caller's key does, for messages). `mode` is 'raise' (the
// indices' bounds are checked first, waiting for them), 'wrap' or 'clip'.
Array get(const Array& x, const std::vector<int>& axes, const std::vector<Array>& indices,
          const std::vector<int>& key_axes, bool adjacent, int first, const std::string& mode, const std::string& op);

// x indexed as in get() = values (a DeviceArray of x's dtype and runtime,
// broadcast by NumPy's assignment rule), asynchronously, after the bounds
// check; repeated indices: the last in C order wins. Values and indices
// that overlap x are copied first (NumPy reads before it writes).
void set(const Array& x, const std::vector<int>& axes, const std::vector<Array>& indices,
         const std::vector<int>& key_axes, bool adjacent, int first, const Array& values, const std::string& op);

// The elements of x where the bool `mask` (over x's axes from `axis`) is
// true, as a new array; waits for the mask's count (the result's shape
// depends on the data).
Array mask_get(const Array& x, int axis, const Array& mask, int key_axis, bool adjacent, int first,
               const std::string& op);

// Whether each element of x1 is in x2 (bool, x1's shape), negated when invert.
Array isin(const Array& x1, const Array& x2, bool invert, const std::string& op);

}  // namespace hrx::indexing
