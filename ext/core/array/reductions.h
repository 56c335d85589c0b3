// Reductions (ufunc.reduce and the statistical functions built on it: sum,
// prod, max, min, mean, any, all...) and argmax/argmin: the reduced axes,
// keepdims, the accumulator and result dtypes the caller resolved, out=
// checks, the refusals of complex (unordered) and empty reductions; one task
// on the GPU compute lane. A host operand is uploaded to the default
// placement once every check has passed.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "array/operands.h"
#include "kernels/elementwise.h"

namespace hrx::reductions {

// Reduce `x` with the binary ufunc `op` over `axes` (nullptr: all; not yet
// normalised), accumulating in `acc`, the result in `odt` (scaled by 1/divisor
// when divisor is not 0: mean). `out` (optional) has the result's shape
// (keepdims or not) and takes it with a same_kind cast. Returns the new
// result, or nothing when writing into out. Errors name `name`.
std::optional<Array> reduce(const CallEnv& env, kernels::Ufunc op, Input& x, const std::vector<int64_t>* axes,
                            DType acc, DType odt, const Array* out, bool keepdims, double divisor,
                            const std::string& name);

// argmax (max) or argmin of `x` over `axis` (nullptr: the flattened array) as a new int64 array.
Array arg_reduce(const CallEnv& env, Input& x, const int64_t* axis, bool max, bool keepdims, const std::string& name);

}  // namespace hrx::reductions
