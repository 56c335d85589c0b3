#include "array/searching.h"

#include "array/sorting.h"
#include "errors.h"
#include "provider/array_ops.h"

namespace hrx {

TaskSpec searchsorted_task(const Array& x1, const Array& x2, const Array* sorter, bool right, DType common,
                           const Array& out, const std::string& name) {
    check_sortable(common, name);
    TaskSpec t = sorter ? compute_task({&x1, &x2, sorter}, {&out}, name, "searchsorted")
                        : compute_task({&x1, &x2}, {&out}, name, "searchsorted");
    if (out.size() == 0) {
        nothing_to_do(t);
        return t;
    }
    auto op = std::make_shared<provider::SearchSortedOp>();
    op->x1 = tensor_of(t, x1);
    op->x2 = tensor_of(t, x2);
    op->has_sorter = sorter != nullptr;
    if (sorter) op->sorter = tensor_of(t, *sorter);
    op->out = tensor_of(t, out, Access::Write);
    op->right = right;
    op->common = common;
    t.array = std::move(op);
    return t;
}

TaskSpec nonzero_task(const Array& in, const Array& out, std::shared_ptr<int64_t> count, const std::string& name) {
    TaskSpec t = compute_task({&in}, {&out}, name, "nonzero");
    auto op = std::make_shared<provider::NonzeroOp>();
    op->in = tensor_of(t, in);
    op->out = tensor_of(t, out, Access::Write);
    op->count = std::move(count);
    t.array = std::move(op);
    return t;
}

}  // namespace hrx

namespace hrx::searching {

namespace {

void same_runtime(const Array& a, const Array& b, const std::string& op) {
    if (&runtime_of(a) != &runtime_of(b))
        fail(ErrorKind::Message, op + ": " + a.describe() + " and " + b.describe() + " belong to different runtimes");
}

}  // namespace

Array searchsorted(const Array& x1, const Array& x2, const Array* sorter, bool right, const std::string& op) {
    if (x1.ndim() != 1) fail(ErrorKind::Message, op + ": x1 must be 1-dimensional, got shape " + shape_str(x1.shape));
    same_runtime(x1, x2, op);
    if (sorter) {
        check_comparable(*sorter, op);
        same_runtime(x1, *sorter, op);
        if (!dtype_is_integer(sorter->dtype))
            fail(ErrorKind::Type, op + ": sorter must be an integer array, got " + dtype_name(sorter->dtype));
        if (sorter->shape != x1.shape)
            fail(ErrorKind::Message, op + ": sorter must have x1's shape " + shape_str(x1.shape) + ", got " +
                                         shape_str(sorter->shape));
    }
    const DType common = promote_types(x1.dtype, x2.dtype);
    RuntimeCore& rt = runtime_of(x1);
    Array out = make_array(rt, x1.placement(), x2.shape, DType::Int64, op);
    TaskSpec t = searchsorted_task(x1, x2, sorter, right, common, out, op);
    submit(rt, t);
    return out;
}

std::vector<Array> nonzero(const Array& in, const std::string& op) {
    if (in.ndim() == 0)
        fail(ErrorKind::Message, op + ": calling nonzero on 0-d arrays is not allowed (NumPy 2, the array API); "
                                      "use hx.reshape(x, (1,)) first");
    RuntimeCore& rt = runtime_of(in);
    Array out = make_array(rt, in.placement(), Dims{in.ndim(), in.size()}, DType::Int64, op);
    auto count = std::make_shared<int64_t>(0);
    TaskSpec t = nonzero_task(in, out, count, op);
    run_now(rt, t);
    std::vector<Array> parts;
    for (int d = 0; d < in.ndim(); ++d) parts.push_back(head(out, d, *count));
    return parts;
}

}  // namespace hrx::searching
