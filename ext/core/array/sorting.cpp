#include "array/sorting.h"

#include <memory>

#include "provider/array_ops.h"

namespace hrx {

Array axis_last(const Array& a, int axis) {
    Array v = a;
    const auto ax = static_cast<size_t>(axis);
    v.shape.erase(v.shape.begin() + ax);
    v.strides.erase(v.strides.begin() + ax);
    v.shape.push_back(a.shape[ax]);
    v.strides.push_back(a.strides[ax]);
    return v;
}

void check_sortable(DType dt, const std::string& name) {
    if (dtype_info(dt).kind == DTypeKind::Block)
        fail(ErrorKind::Unsupported, name + ": " + dtype_name(dt) +
                                         " cannot be sorted (blocks share exponents; convert to float32 first)");
}

void check_comparable(const Array& a, const std::string& op) {
    if (a.dtype == DType::BFP16)
        fail(ErrorKind::Type, op + ": bfp16 arrays cannot be compared; convert with astype(hx.float32)");
    check_element_operand(a, Access::Read, op);
}

Array head(const Array& a, int64_t row, int64_t k) {
    Array v = a;
    v.offset += row * a.strides[0] * (a.ndim() > 1 ? 1 : 0);
    v.shape = Dims{k};
    v.strides = Dims{a.strides.back()};
    return v;
}

TaskSpec sort_task(const Array& in, int axis, bool descending, bool indices, const Array& out,
                   const std::string& name) {
    check_sortable(in.dtype, name);
    TaskSpec t = compute_task({&in}, {&out}, name, indices ? "argsort" : "sort");
    if (out.size() == 0) {
        nothing_to_do(t);
        return t;
    }
    // One sort dispatch (Note [Array operations are dispatches]) over the
    // rows along `axis`, moved last in views of in and out.
    auto op = std::make_shared<provider::SortOp>();
    op->src = tensor_of(t, axis_last(in, axis));
    op->dst = tensor_of(t, axis_last(out, axis), Access::Write);
    op->descending = descending;
    op->indices = indices;
    t.array = std::move(op);
    return t;
}

}  // namespace hrx

namespace hrx::sorting {

Array sort(const Array& in, int axis, bool descending, bool indices, const std::string& op) {
    RuntimeCore& rt = runtime_of(in);
    Array out = make_array(rt, in.placement(), in.shape, indices ? DType::Int64 : in.dtype, op);
    TaskSpec t = sort_task(in, axis, descending, indices, out, op);
    submit(rt, t);
    return out;
}

}  // namespace hrx::sorting
