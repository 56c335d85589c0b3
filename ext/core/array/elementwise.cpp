#include "array/elementwise.h"

#include "errors.h"

namespace hrx::elementwise {

using kernels::Ufunc;
using kernels::UfuncInfo;
using kernels::UfuncLoop;

namespace {

std::string type_list(std::span<const DType> ts) {
    std::string s;
    for (DType t : ts) s += (s.empty() ? "" : ", ") + std::string(dtype_name(t));
    return s;
}

// The loop of `op` for inputs `ins` whose output is `want` (dtype=): the
// natural loop when it gives `want`, else the first loop with input dtype
// `want` that every input reaches by a same_kind cast.
const UfuncLoop& loop_for_dtype(Ufunc op, std::span<const DType> ins, DType want, const std::string& name) {
    const UfuncLoop* natural = kernels::resolve_loop(op, ins.data());
    if (natural && natural->out == want) return *natural;
    const UfuncInfo& info = kernels::ufunc_info(op);
    for (int i = 0; i < info.nloops; ++i) {
        const UfuncLoop& l = info.loops[i];
        if (l.in[0] != want) continue;
        bool ok = true;
        for (int k = 0; k < info.nin; ++k) ok = ok && can_cast(ins[static_cast<size_t>(k)], l.in[k], Casting::SameKind);
        if (ok) return l;
    }
    fail(ErrorKind::Type, "No loop matching the specified signature and casting was found for ufunc " + name +
                              " (inputs " + type_list(ins) + ", dtype=" + dtype_name(want) + ")");
}

const UfuncLoop& resolve(Ufunc op, std::span<const DType> ins, const DType* dtype, const std::string& name) {
    if (dtype) return loop_for_dtype(op, ins, *dtype, name);
    const UfuncLoop* loop = kernels::resolve_loop(op, ins.data());
    if (!loop)
        fail(ErrorKind::Type, "ufunc '" + name + "' not supported for the input types (" + type_list(ins) +
                                  "), and the inputs could not be safely coerced to any supported types");
    return *loop;
}

}  // namespace

bool is_comparison(Ufunc op) {
    return op == Ufunc::Equal || op == Ufunc::NotEqual || op == Ufunc::Less || op == Ufunc::LessEqual ||
           op == Ufunc::Greater || op == Ufunc::GreaterEqual;
}

std::optional<Array> call(const CallEnv& env, Ufunc op, std::span<Input> inputs, const Array* out,
                          const DType* dtype, const Where& where) {
    const std::string name = kernels::ufunc_info(op).name;
    const size_t n = inputs.size();
    Context cx;
    if (out) note_array(cx, *out, name);
    for (const Input& in : inputs)
        if (in.kind == Input::Kind::Device) note_array(cx, *in.device, name);
    Input* mask = where.kind == Where::Kind::Mask ? where.mask : nullptr;
    if (mask) {
        if (mask->kind == Input::Kind::Device) note_array(cx, *mask->device, name);
        if (mask->kind == Input::Kind::Scalar || mask->dtype != DType::Bool)
            fail(ErrorKind::Type, name + ": where must be a boolean array (got " +
                                      (mask->kind == Input::Kind::Scalar ? std::string("a scalar")
                                                                         : std::string(dtype_name(mask->dtype))) +
                                      ")");
    }
    finish_context(cx, env);
    const bool mask_in[3] = {op != Ufunc::Where, true, true};  // where(cond, x, y): cond takes no part
    resolve_weak(inputs, mask_in, is_comparison(op));
    DType ins[3] = {};
    for (size_t i = 0; i < n; ++i) {
        if (inputs[i].dtype == DType::BFP16)
            fail(ErrorKind::Type, name + ": bfp16 arrays are a block storage format without elementwise "
                                         "arithmetic; convert with x.astype(hx.float32) first");
        ins[i] = inputs[i].dtype;
    }
    if (op == Ufunc::Where) ins[0] = DType::Bool;
    const UfuncLoop& loop = resolve(op, std::span<const DType>(ins, n), dtype, name);
    const Dims* shapes[4];
    size_t nshapes = 0;
    bool any_host = mask && mask->kind == Input::Kind::Host;
    for (const Input& in : inputs) {
        shapes[nshapes++] = &in.shape();
        any_host = any_host || in.kind == Input::Kind::Host;
    }
    if (mask) shapes[nshapes++] = &mask->shape();
    const Dims shape = broadcast_shapes(std::span<const Dims* const>(shapes, nshapes), name);
    if (out) {
        if (out->shape != shape)
            fail(ErrorKind::Message, "non-broadcastable output operand with shape " + shape_str(out->shape) +
                                         " doesn't match the broadcast shape " + shape_str(shape) + " (" + name + ")");
        if (!can_cast(loop.out, out->dtype, Casting::SameKind))
            fail(ErrorKind::Type, "Cannot cast ufunc '" + name + "' output from " + np_dtype_str(loop.out) + " to " +
                                      np_dtype_str(out->dtype) + " with casting rule 'same_kind'");
    }
    Operand operands[3];
    for (size_t i = 0; i < n; ++i)
        if (inputs[i].kind == Input::Kind::Scalar) operands[i] = to_operand(inputs[i], name);
    if (!out || any_host) {
        // Everything the submission would refuse, before anything is
        // allocated (a failed call changes nothing); with out= and device
        // operands only, the submission's own checks come first anyway.
        for (const Input& in : inputs)
            if (in.kind == Input::Kind::Device) preflight_read(*in.device, Lane::Compute, name);
        if (mask && mask->kind == Input::Kind::Device) preflight_read(*mask->device, Lane::Compute, name);
        if (out) {
            check_writable(*out, name);
            check_lane_binding(*out, Lane::Compute, name);
            check_device_use(*out, Access::Write, name);
        } else {
            check_lane_placement(cx.placement, "the result's placement " + cx.placement.repr(), Lane::Compute, name);
        }
    }
    upload(inputs, cx, env, name);
    if (mask) upload(std::span<Input>(mask, 1), cx, env, name);
    for (size_t i = 0; i < n; ++i)
        if (inputs[i].kind != Input::Kind::Scalar) operands[i] = to_operand(inputs[i], name);
    Operand where_op;
    if (mask) where_op = Operand::borrow(mask->array());
    std::optional<Array> result;
    if (!out) {
        result = make_array(*cx.rt, cx.placement, shape, loop.out, name);
        out = &*result;
    }
    if (where.kind == Where::Kind::Nowhere) return result;
    TaskSpec t = ufunc_task(op, loop, std::span<const Operand>(operands, n), *out, mask ? &where_op : nullptr, name);
    submit(*cx.rt, t);
    return result;
}

}  // namespace hrx::elementwise
