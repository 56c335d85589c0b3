// Cumulative sums and products as array-layer tasks (kernels/scan.h).
#pragma once
#include <string>

#include "array/ops.h"

namespace hrx {

// out = the cumulative sum (or product) of `in` along `axis`, in out's dtype
// (in is cast to it first, as NumPy's accumulate casts its input). With
// include_initial out is one longer along axis and starts with the identity.
TaskSpec cumulative_task(const Array& in, int axis, bool product, bool include_initial, const Array& out,
                         const std::string& name);

}  // namespace hrx

namespace hrx::statistical {

// The cumulative sum (or product) of `in` along the normalised `axis` in
// `dtype` (TypeError naming `op` for bfp16) as a new array, one longer along
// axis with include_initial.
Array cumulative(const Array& in, int axis, bool product, DType dtype, bool include_initial, const std::string& op);

}  // namespace hrx::statistical
