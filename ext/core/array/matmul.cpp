#include "array/matmul.h"

#include "errors.h"

namespace hrx::matmul {

std::optional<Array> call(const CallEnv& env, Input& ia, Input& ib, const Array* out, const std::string& mode_s,
                          const std::string& round_s) {
    const std::string op = "matmul";
    if (ia.kind == Input::Kind::Scalar || ib.kind == Input::Kind::Scalar)
        fail(ErrorKind::Message, "matmul: Input operand does not have enough dimensions (scalars cannot be "
                                 "matrix-multiplied; use multiply)");
    Context cx;
    Input* args[2] = {&ia, &ib};
    for (Input* x : args)
        if (x->kind == Input::Kind::Device) note_array(cx, *x->device, op);
    if (out) note_array(cx, *out, op);
    finish_context(cx, env);
    const DType ta = ia.dtype, tb = ib.dtype;
    // Shapes before host data is uploaded: every refusal comes first.
    Dims sa = ia.shape(), sb = ib.shape();
    const std::string shapes = " (shapes " + shape_str(sa) + " and " + shape_str(sb) + ")";
    if (sa.empty() || sb.empty())
        fail(ErrorKind::Message, "matmul: Input operand does not have enough dimensions" + shapes);
    if (!mode_s.empty() && mode_s != "bf16" && mode_s != "bfp16")
        fail(ErrorKind::Message, "matmul: compute must be None, 'bf16' or 'bfp16', got '" + mode_s + "'");
    if (round_s != "floor" && round_s != "even")
        fail(ErrorKind::Message, "matmul: rounding must be 'floor' or 'even', got '" + round_s + "'");
    // 1-d operands: NumPy's promotion to a row / column, removed afterwards.
    const bool a1 = sa.size() == 1, b1 = sb.size() == 1;
    if (a1) sa.insert(sa.begin(), 1);
    if (b1) {
        sb.push_back(1);
        if (tb == DType::BFP16)
            fail(ErrorKind::Message, "matmul: a 1-d bfp16 right operand cannot be a column (its blocks run along it)");
    }
    const int64_t m = sa[sa.size() - 2], k = sa[sa.size() - 1];
    const int64_t k2 = sb[sb.size() - 2], n = sb[sb.size() - 1];
    if (k != k2)
        fail(ErrorKind::Message, "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
                                 "signature (n?,k),(k,m?)->(n?,m?) (size " +
                                     std::to_string(k2) + " is different from " + std::to_string(k) + ")" + shapes);
    Dims ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
    const Dims* batch_shapes[2] = {&ba, &bb};
    Dims shape = broadcast_shapes(batch_shapes, "matmul: the batch dimensions" + shapes);
    shape.push_back(m);
    shape.push_back(n);
    const bool bfp_in = ta == DType::BFP16 || tb == DType::BFP16;
    auto npu_type = [](DType t) { return t == DType::BFloat16 || t == DType::BFP16; };
    MatmulMode mode = MatmulMode::Natural;
    if (mode_s == "bfp16" || bfp_in)
        mode = MatmulMode::Bfp16;
    else if (mode_s == "bf16")
        mode = MatmulMode::Bf16;
    DType rdt;
    if (mode == MatmulMode::Natural) {
        rdt = promote_types(ta, tb);
        if (rdt == DType::BFloat16) {
            mode = MatmulMode::Bf16;
            rdt = DType::Float32;
        }
    } else {
        rdt = DType::Float32;
    }
    if (mode == MatmulMode::Bfp16 && k % 8 != 0)
        fail(ErrorKind::Message, "matmul(compute='bfp16'): K = " + std::to_string(k) +
                                     " is not a multiple of 8 (bfp16 blocks run along K)" + shapes);
    // Host data goes to the operation's placement (cx.placement).
    const Placement& pa = ia.device ? ia.device->placement() : cx.placement;
    const Placement& pb = ib.device ? ib.device->placement() : cx.placement;
    const bool on_npu = pa.npu_bindable() && pb.npu_bindable() && npu_type(ta) && npu_type(tb);
    const Lane lane = on_npu ? Lane::Npu : Lane::Compute;
    Dims rshape = shape;  // the user-visible result shape
    if (a1) rshape.erase(rshape.end() - 2);
    if (b1) rshape.erase(rshape.end() - 1);
    RuntimeCore& rt = *cx.rt;
    Placement place = cx.placement;
    if (on_npu && !place.npu_bindable()) place = pa;
    if (!on_npu && !place.gpu_bindable()) place = pa;
    if (out) {
        if (out->shape != rshape)
            fail(ErrorKind::Message, "matmul: output operand has shape " + shape_str(out->shape) + ", expected " +
                                         shape_str(rshape) + shapes);
        if (!can_cast(rdt, out->dtype, Casting::SameKind))
            fail(ErrorKind::Type, "Cannot cast ufunc 'matmul' output from " + np_dtype_str(rdt) + " to " +
                                      np_dtype_str(out->dtype) + " with casting rule 'same_kind'");
        place = out->placement();
        check_writable(*out, op);
        check_device_use(*out, Access::Write, op);
    }
    // Everything the submissions would refuse, before anything is allocated.
    for (Input* x : args)
        if (x->device) preflight_read(*x->device, lane, op);
    check_lane_placement(place, "the result's placement " + place.repr(), lane, op);
    for (Input* x : args) upload(std::span<Input>(x, 1), cx, env, op);
    Array a = ia.array(), b = ib.array();
    if (a1) {
        a.shape.insert(a.shape.begin(), 1);
        a.strides.insert(a.strides.begin(), 0);
    }
    if (b1) {
        b.shape.push_back(1);
        b.strides.push_back(dtype_itemsize(b.dtype));
    }
    std::optional<Array> result;
    Array target;  // what the task writes (C-contiguous, dtype rdt, full 2-d shape)
    if (out) {
        const bool direct = out->dtype == rdt && out->c_contiguous() && !may_overlap(*out, a) && !may_overlap(*out, b);
        if (direct) {
            target = *out;
            target.shape = shape;
            target.strides = contiguous_strides(shape, rdt);
        } else {
            target = make_array(rt, out->placement(), shape, rdt, op);
        }
    } else {
        target = make_array(rt, place, shape, rdt, op);
        Array v = target;
        v.shape = rshape;
        v.strides = contiguous_strides(rshape, rdt);
        result = v;
    }
    TaskSpec t = matmul_task(a, b, target, lane, mode, round_s == "even", op);
    submit(rt, t);
    if (out && target.base != out->base) {
        Array src = target;
        src.shape = rshape;
        src.strides = contiguous_strides(rshape, rdt);
        TaskSpec c = copy_task(*out, Operand::of(src), op);
        submit(rt, c);
    }
    return result;
}

}  // namespace hrx::matmul
