#include "array/reductions.h"

#include "errors.h"

namespace hrx::reductions {

using kernels::Ufunc;
using kernels::UfuncInfo;

namespace {

// out without keepdims -> a view with the reduced axes reinserted (extent 1, stride 0).
Array keepdims_view(const Array& a, const std::vector<bool>& reduced) {
    Array v = a;
    v.shape.clear();
    v.strides.clear();
    size_t j = 0;
    for (size_t i = 0; i < reduced.size(); ++i) {
        if (reduced[i]) {
            v.shape.push_back(1);
            v.strides.push_back(0);
        } else {
            v.shape.push_back(a.shape[j]);
            v.strides.push_back(a.strides[j]);
            ++j;
        }
    }
    return v;
}

Array drop_reduced(const Array& a, const std::vector<bool>& reduced) {
    Array v = a;
    v.shape.clear();
    v.strides.clear();
    for (size_t i = 0; i < reduced.size(); ++i)
        if (!reduced[i]) {
            v.shape.push_back(a.shape[i]);
            v.strides.push_back(a.strides[i]);
        }
    return v;
}

std::vector<bool> reduced_axes(const std::vector<int64_t>* axes, int ndim, const std::string& op) {
    if (!axes) return std::vector<bool>(static_cast<size_t>(ndim), true);
    return axes_mask(*axes, ndim, op);
}

// The operand's dtype, refused when it has no arithmetic.
DType check_input(const Input& x, const std::string& op) {
    if (x.dtype == DType::BFP16)
        fail(ErrorKind::Type, op + ": bfp16 arrays have no arithmetic; convert with astype(hx.float32)");
    return x.dtype;
}

// The array to reduce: a device array once its refusals are checked (the
// caller then allocates the result), host data uploaded to the default placement.
const Array& input_array(const CallEnv& env, Input& x, const std::string& op) {
    if (x.kind == Input::Kind::Host) {
        Context cx;
        upload(std::span<Input>(&x, 1), cx, env, op);
    } else {
        preflight_read(*x.device, Lane::Compute, op);
    }
    return x.array();
}

// Complex numbers have no order: maximum/minimum (max, min) and the bitwise
// reductions have no complex loop, so they are refused before anything runs.
void refuse_unordered(Ufunc u, const std::string& op, DType t) {
    const bool ok = u == Ufunc::Add || u == Ufunc::Multiply || u == Ufunc::LogicalAnd || u == Ufunc::LogicalOr ||
                    u == Ufunc::LogicalXor;
    if (!ok)
        fail(ErrorKind::Type,
             op + ": not defined for complex dtypes (" + dtype_name(t) + "): complex numbers are not ordered");
}

}  // namespace

std::optional<Array> reduce(const CallEnv& env, Ufunc u, Input& x, const std::vector<int64_t>* axes, DType acc,
                            DType odt, const Array* out, bool keepdims, double divisor, const std::string& op) {
    const UfuncInfo& info = kernels::ufunc_info(u);
    if (!info.has_reduce)
        fail(ErrorKind::Message, op + ": reduce only supported for binary functions with a reduction");
    const DType in_dtype = check_input(x, op);
    const Dims& in_shape = x.shape();
    const std::vector<bool> mask = reduced_axes(axes, static_cast<int>(in_shape.size()), op);
    if (dtype_is_complex(acc) || dtype_is_complex(in_dtype))
        refuse_unordered(u, op, dtype_is_complex(in_dtype) ? in_dtype : acc);
    Dims kshape = in_shape;
    bool empty_reduction = false;
    int64_t size = 1;
    for (size_t i = 0; i < mask.size(); ++i) {
        size *= in_shape[i];
        if (mask[i]) {
            empty_reduction = empty_reduction || in_shape[i] == 0;
            kshape[i] = 1;
        }
    }
    if (empty_reduction && info.identity == kernels::Identity::None && size == 0)
        fail(ErrorKind::Message, op + ": zero-size array to reduction operation " + info.name + " which has no identity");
    Array kout;
    if (out) {
        const Dims want = keepdims ? kshape : drop_reduced(Array{nullptr, 0, kshape, kshape, odt}, mask).shape;
        if (out->shape != want)
            fail(ErrorKind::Message,
                 op + ": output parameter has shape " + shape_str(out->shape) + ", expected " + shape_str(want));
        if (!can_cast(odt, out->dtype, Casting::SameKind))
            fail(ErrorKind::Type, op + ": cannot cast the result from " + dtype_name(odt) + " to " +
                                      dtype_name(out->dtype) + " with casting rule 'same_kind'");
        check_writable(*out, op);
        check_device_use(*out, Access::Write, op);
        kout = keepdims ? *out : keepdims_view(*out, mask);
    }
    const Array& in = input_array(env, x, op);
    RuntimeCore& rt = runtime_of(in);
    std::optional<Array> result;
    if (!out) {
        kout = make_array(rt, in.placement(), kshape, odt, op);
        result = keepdims ? kout : drop_reduced(kout, mask);
    }
    TaskSpec t = reduce_task(u, acc, in, mask, kout, divisor, op);
    submit(rt, t);
    return result;
}

Array arg_reduce(const CallEnv& env, Input& x, const int64_t* axis, bool max, bool keepdims, const std::string& op) {
    const DType in_dtype = check_input(x, op);
    const Dims& in_shape = x.shape();
    const int ndim = static_cast<int>(in_shape.size());
    if (dtype_is_complex(in_dtype)) refuse_unordered(Ufunc::Maximum, op, in_dtype);
    int ax = -1;
    std::vector<bool> mask(static_cast<size_t>(ndim), true);
    if (axis) {
        const std::vector<int64_t> one{*axis};
        mask = reduced_axes(&one, ndim, op);
        for (size_t i = 0; i < mask.size(); ++i)
            if (mask[i]) ax = static_cast<int>(i);
    }
    for (int64_t d : in_shape)
        if (d == 0) fail(ErrorKind::Message, op + ": attempt to get " + op + " of an empty sequence");
    Dims kshape = in_shape;
    for (size_t i = 0; i < mask.size(); ++i)
        if (mask[i]) kshape[i] = 1;
    const Array& in = input_array(env, x, op);
    RuntimeCore& rt = runtime_of(in);
    Array kout = make_array(rt, in.placement(), kshape, DType::Int64, op);
    TaskSpec t = arg_reduce_task(max, in, ax, kout, op);
    submit(rt, t);
    return keepdims ? kout : drop_reduced(kout, mask);
}

}  // namespace hrx::reductions
