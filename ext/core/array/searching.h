// searchsorted and nonzero as array-layer tasks (kernels/sort.h).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "array/ops.h"

namespace hrx {

// out (int64, x2's shape) = insertion points of x2 into the 1-d x1 (through
// `sorter` when not null), both compared as `common` (NumPy's result type),
// in the sort order of Note [Sort order] (NaNs last).
TaskSpec searchsorted_task(const Array& x1, const Array& x2, const Array* sorter, bool right, DType common,
                           const Array& out, const std::string& name);

// The C-order indices of in's nonzero elements: row d of `out` (int64,
// (ndim, stride)) gets the indices along axis d; *count their number, set
// when the task has run (the caller waits for it: the result's shape
// depends on the data).
TaskSpec nonzero_task(const Array& in, const Array& out, std::shared_ptr<int64_t> count, const std::string& name);

}  // namespace hrx

namespace hrx::searching {

// Insertion points (int64, x2's shape) of x2 into the sorted 1-d x1 (through
// `sorter`, an integer array of x1's shape, when not null) as a new array;
// x1 and x2 come checked (check_comparable), sorter is checked here after
// x1's shape and runtime. Errors name `op`.
Array searchsorted(const Array& x1, const Array& x2, const Array* sorter, bool right, const std::string& op);

// The indices of in's nonzero elements, one int64 array per axis; waits for
// the count (the result's shape depends on the data).
std::vector<Array> nonzero(const Array& in, const std::string& op);

}  // namespace hrx::searching
