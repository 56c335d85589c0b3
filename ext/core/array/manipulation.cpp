#include "array/manipulation.h"

#include <utility>

#include "array/sorting.h"
#include "errors.h"
#include "provider/array_ops.h"

namespace hrx {

Dims gather_shape(const Array& in, const std::vector<std::vector<int64_t>>& index, const std::string& op) {
    if (static_cast<int>(index.size()) != in.ndim())
        fail(ErrorKind::Message, op + ": " + std::to_string(index.size()) + " index tables for " +
                                     std::to_string(in.ndim()) + " axes");
    Dims shape = in.shape;
    for (size_t d = 0; d < index.size(); ++d) {
        if (index[d].empty() && in.shape[d] != 0) continue;
        shape[d] = static_cast<int64_t>(index[d].size());
        for (const int64_t i : index[d])
            if (i < 0 || i >= in.shape[d])
                fail(ErrorKind::Message, op + ": index " + std::to_string(i) + " is out of bounds for axis " +
                                             std::to_string(d) + " with size " + std::to_string(in.shape[d]));
    }
    return shape;
}

TaskSpec gather_task(const Array& in, std::vector<std::vector<int64_t>> index, const Array& out,
                     const std::string& name) {
    TaskSpec t = compute_task({&in}, {&out}, name, "gather");
    if (out.size() == 0) {
        nothing_to_do(t);
        return t;
    }
    // One outer-gather dispatch (Note [Array operations are dispatches]); its
    // index tables become byte offsets in place on the lane (no second copy
    // of a table as long as a repeat's result, and no work on the caller's thread).
    auto op = std::make_shared<provider::OuterGatherOp>();
    op->in = tensor_of(t, in);
    op->out = tensor_of(t, out, Access::Write);
    op->index = std::move(index);
    t.array = std::move(op);
    return t;
}

TaskSpec triangle_task(const Array& in, int64_t k, bool lower, const Array& out, const std::string& name) {
    TaskSpec t = compute_task({&in}, {&out}, name, lower ? "tril" : "triu");
    if (out.size() == 0) {
        nothing_to_do(t);
        return t;
    }
    auto op = std::make_shared<provider::TriangleOp>();
    op->in = tensor_of(t, in);
    op->out = tensor_of(t, out, Access::Write);
    op->k = k;
    op->lower = lower;
    t.array = std::move(op);
    return t;
}

}  // namespace hrx

namespace hrx::manipulation {

Array gather(const Array& in, std::vector<std::vector<int64_t>> index, const std::string& op) {
    const Dims shape = gather_shape(in, index, op);
    RuntimeCore& rt = runtime_of(in);
    Array out = make_array(rt, in.placement(), shape, in.dtype, op);
    TaskSpec t = gather_task(in, std::move(index), out, op);
    submit(rt, t);
    return out;
}

Array triangle(const Array& in, int64_t k, bool lower, const std::string& op) {
    if (in.ndim() < 2)
        fail(ErrorKind::Message, op + ": x must have at least 2 dimensions, got shape " + shape_str(in.shape));
    RuntimeCore& rt = runtime_of(in);
    Array out = make_array(rt, in.placement(), in.shape, in.dtype, op);
    TaskSpec t = triangle_task(in, k, lower, out, op);
    submit(rt, t);
    return out;
}

}  // namespace hrx::manipulation
