#include "array/set.h"

#include "array/sorting.h"
#include "provider/array_ops.h"

namespace hrx {

namespace {

// The four results of a unique dispatch (Note [Array operations are dispatches]).
void bind_results(const TaskSpec& t, provider::UniqueOp& op, const Array& values, const Array& index,
                  const Array& inverse, const Array& counts) {
    op.values = tensor_of(t, values, Access::Write);
    op.index = tensor_of(t, index, Access::Write);
    op.inverse = tensor_of(t, inverse, Access::Write);
    op.counts = tensor_of(t, counts, Access::Write);
}

}  // namespace

TaskSpec unique_task(const Array& in, bool equal_nan, const Array& values, const Array& index,
                     const Array& inverse, const Array& counts, std::shared_ptr<int64_t> count,
                     const std::string& name) {
    check_sortable(in.dtype, name);
    TaskSpec t = compute_task({&in}, {&values, &index, &inverse, &counts}, name, "unique");
    auto op = std::make_shared<provider::UniqueOp>(false);
    op->in = tensor_of(t, in);
    op->equal_nan = equal_nan;
    bind_results(t, *op, values, index, inverse, counts);
    op->count = std::move(count);
    t.array = std::move(op);
    return t;
}

TaskSpec unique_axis_task(const Array& in, int axis, const Array& values, const Array& index, const Array& inverse,
                          const Array& counts, std::shared_ptr<int64_t> count, const std::string& name) {
    check_sortable(in.dtype, name);
    TaskSpec t = compute_task({&in}, {&values, &index, &inverse, &counts}, name, "unique");
    // `in` with `axis` first (no copy): its C order is the sub-arrays back to back.
    Array rows = in;
    const auto ax = static_cast<size_t>(axis);
    rows.shape.erase(rows.shape.begin() + axis);
    rows.strides.erase(rows.strides.begin() + axis);
    rows.shape.insert(rows.shape.begin(), in.shape[ax]);
    rows.strides.insert(rows.strides.begin(), in.strides[ax]);
    auto op = std::make_shared<provider::UniqueOp>(true);
    op->in = tensor_of(t, rows);
    bind_results(t, *op, values, index, inverse, counts);
    op->count = std::move(count);
    t.array = std::move(op);
    return t;
}

}  // namespace hrx

namespace hrx::set {

Unique unique(const Array& in, bool equal_nan, const std::string& op) {
    RuntimeCore& rt = runtime_of(in);
    const Dims flat{in.size()};
    Array values = make_array(rt, in.placement(), flat, in.dtype, op);
    Array index = make_array(rt, in.placement(), flat, DType::Int64, op);
    Array inverse = make_array(rt, in.placement(), in.shape, DType::Int64, op);
    Array counts = make_array(rt, in.placement(), flat, DType::Int64, op);
    auto count = std::make_shared<int64_t>(0);
    TaskSpec t = unique_task(in, equal_nan, values, index, inverse, counts, count, op);
    run_now(rt, t, {&index, &inverse, &counts});
    const int64_t k = *count;
    return {head(values, 0, k), head(index, 0, k), inverse, head(counts, 0, k)};
}

Unique unique_axis(const Array& in, int axis, const std::string& op) {
    RuntimeCore& rt = runtime_of(in);
    Dims moved = in.shape;
    moved.erase(moved.begin() + axis);
    moved.insert(moved.begin(), in.shape[static_cast<size_t>(axis)]);
    const Dims rows{moved[0]};
    Array values = make_array(rt, in.placement(), moved, in.dtype, op);
    Array index = make_array(rt, in.placement(), rows, DType::Int64, op);
    Array inverse = make_array(rt, in.placement(), rows, DType::Int64, op);
    Array counts = make_array(rt, in.placement(), rows, DType::Int64, op);
    auto count = std::make_shared<int64_t>(0);
    TaskSpec t = unique_axis_task(in, axis, values, index, inverse, counts, count, op);
    run_now(rt, t, {&index, &inverse, &counts});
    const int64_t k = *count;
    Array distinct = values;
    distinct.shape[0] = k;
    return {distinct, head(index, 0, k), inverse, head(counts, 0, k)};
}

}  // namespace hrx::set
