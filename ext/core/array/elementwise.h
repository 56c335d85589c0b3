// Elementwise functions (the ufuncs: hx.add, hx.exp, ...) over operands the
// binding described (operands.h): NEP 50 weak scalars, loop resolution with
// dtype=, NumPy's broadcasting of the inputs and where=, out= checks, then one
// task on the GPU compute lane. Every check runs before anything is
// allocated or uploaded, so a refused call changes nothing.
//
// This is the per-operation path (`hx.add(x, y, out=z)`): fixed-size operand
// storage, no heap allocation when every operand is a device array.
#pragma once
#include <optional>
#include <span>
#include <string>

#include "array/operands.h"
#include "kernels/elementwise.h"

namespace hrx::elementwise {

// Where the function applies: everywhere (where=True), nowhere (where=False:
// out, or a fresh result, is left as it is), or where `mask` (a boolean array) holds.
struct Where {
    enum class Kind : uint8_t { All, Nowhere, Mask };
    Kind kind = Kind::All;
    Input* mask = nullptr;
};

// out = op(inputs...) (1 to 3 inputs). `dtype` (optional) picks the loop
// whose inputs the operands cast to same_kind and whose output is that dtype;
// `out` (optional) must have the broadcast shape and take the result with a
// same_kind cast. Returns the new result, or nothing when writing into out.
// Errors name the ufunc as NumPy's do.
std::optional<Array> call(const CallEnv& env, kernels::Ufunc op, std::span<Input> inputs, const Array* out,
                          const DType* dtype, const Where& where);

// Whether `op` is a comparison (its weak integers compare exactly).
bool is_comparison(kernels::Ufunc op);

}  // namespace hrx::elementwise
