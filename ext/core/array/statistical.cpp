#include "array/statistical.h"

#include <memory>

#include "array/sorting.h"
#include "provider/array_ops.h"

namespace hrx {

TaskSpec cumulative_task(const Array& in, int axis, bool product, bool include_initial, const Array& out,
                         const std::string& name) {
    TaskSpec t = compute_task({&in}, {&out}, name, product ? "cumulative_prod" : "cumulative_sum");
    if (out.size() == 0) {
        nothing_to_do(t);
        return t;
    }
    // One scan dispatch (Note [Array operations are dispatches]) over the
    // rows along `axis`, moved last in views of in and out.
    auto op = std::make_shared<provider::CumulativeOp>();
    op->src = tensor_of(t, axis_last(in, axis));
    op->dst = tensor_of(t, axis_last(out, axis), Access::Write);
    op->product = product;
    op->include_initial = include_initial;
    t.array = std::move(op);
    return t;
}

}  // namespace hrx

namespace hrx::statistical {

Array cumulative(const Array& in, int axis, bool product, DType dtype, bool include_initial, const std::string& op) {
    if (dtype == DType::BFP16) fail(ErrorKind::Type, op + ": dtype bfp16 has no arithmetic");
    Dims shape = in.shape;
    shape[static_cast<size_t>(axis)] += include_initial ? 1 : 0;
    RuntimeCore& rt = runtime_of(in);
    Array out = make_array(rt, in.placement(), shape, dtype, op);
    TaskSpec t = cumulative_task(in, axis, product, include_initial, out, op);
    submit(rt, t);
    return out;
}

}  // namespace hrx::statistical
