// Matrix products (hx.matmul, the @ operator): NumPy's matmul shapes (1-d
// operands as a row / column, broadcast batch dimensions), the compute mode
// and rounding options, the result dtype, and the lane: the NPU for
// NPU-bindable bfloat16/bfp16 operands, the GPU compute lane otherwise (Note
// [Lanes of array operations] in ops.h). Every refusal comes before host data
// is uploaded or the result allocated.
#pragma once
#include <optional>
#include <string>

#include "array/operands.h"

namespace hrx::matmul {

// a @ b (into `out` when given: NumPy's result shape, a same_kind cast).
// `compute` is "" (natural), "bf16" or "bfp16"; `rounding` "floor" or "even"
// (bfp16 quantisation). Returns the new result, or nothing when writing into out.
std::optional<Array> call(const CallEnv& env, Input& a, Input& b, const Array* out, const std::string& compute,
                          const std::string& rounding);

}  // namespace hrx::matmul
