// Set kernels of the emulated devices: membership (isin). unique lives with
// the sorts (kernels/sort.h unique_groups).
#pragma once
#include <cstdint>

#include "kernels/dtype.h"

namespace hrx::kernels {

// out[i] (bool) = whether x[i] equals one of the `m` elements of `table`
// (negated when invert), for the `n` contiguous elements of x; both of dtype
// dt: bool, an integer dtype, float32, float64, complex64 or complex128 (the
// array layer widens float16 and bfloat16 to float32, exactly). NaN equals
// nothing; -0.0 equals 0.0. The table is sorted once, then every element is
// a binary search, in parallel over the kernel pool.
void isin(DType dt, const std::uint8_t* x, std::int64_t n, const std::uint8_t* table, std::int64_t m, bool invert,
          std::uint8_t* out);

}  // namespace hrx::kernels
