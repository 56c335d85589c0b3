// Cumulative sums and products of the emulated devices.
//
// Note [Scan order]: a scan is sequential along its row, s_i = s_(i-1) op x_i,
// each step rounded to the dtype, as NumPy's add.accumulate and cumsum are
// (not pairwise): float16 and bfloat16 steps compute in float32 and round
// once per step (NumPy's half loops, ml_dtypes'); integers wrap; bool sums
// are logical or, bool products logical and. Rows are independent, so large
// calls split rows over the kernel pool without changing any bit.
#pragma once
#include <cstdint>

#include "kernels/dtype.h"

namespace hrx::kernels {

// dst row r, element i = the scan of src row r up to i, for `rows` rows of n
// elements of dtype dt; rows start `src_row` / `dst_row` bytes apart and are
// contiguous. dst may be src (in place).
void scan_rows(DType dt, bool product, const std::uint8_t* src, std::int64_t src_row, std::uint8_t* dst,
               std::int64_t dst_row, std::int64_t rows, std::int64_t n);

}  // namespace hrx::kernels
