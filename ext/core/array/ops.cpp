#include "array/ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "errors.h"
#include "kernels/bf16.h"
#include "kernels/bfp16.h"
#include "provider/array_ops.h"
#include "runtime/blocking.h"
#include "runtime/runtime.h"

namespace hrx {

TaskSpec compute_task(std::initializer_list<const Array*> reads, std::initializer_list<const Array*> writes,
                      const std::string& name, const std::string& label) {
    TaskSpec t;
    t.op = name;
    t.label = label;
    t.lane = Lane::Compute;
    for (const Array* a : reads) {
        check_lane_binding(*a, t.lane, name);
        t.uses.push_back(a->use(Access::Read));
    }
    for (const Array* a : writes) {
        check_writable(*a, name);
        check_lane_binding(*a, t.lane, name);
        t.uses.push_back(a->use(Access::Write));
        if (!t.written) t.written = a->base;
    }
    return t;
}

using kernels::StridedArg;

void nothing_to_do(TaskSpec& t) {
    static const auto empty = std::make_shared<const provider::EmptyOp>();
    t.array = empty;
}

provider::Tensor tensor_of(const TaskSpec& t, const Array& a, Access access) {
    provider::Tensor x;
    x.shape = a.shape;
    x.at.dtype = a.dtype;
    x.at.strides = a.strides;
    const uint8_t* first = a.data();
    const auto [lo, hi] = a.extent();
    for (size_t i = 0; i < t.uses.size(); ++i) {
        const Use& u = t.uses[i];
        if (u.view.buffer != a.buffer() || lo < u.view.offset || hi > u.view.offset + u.view.length) continue;
        if (access_writes(access) && !access_writes(u.access)) continue;
        x.at.binding = static_cast<int32_t>(i);
        x.at.offset = static_cast<uint64_t>(first - u.view.data());
        return x;
    }
    fail(ErrorKind::Message, t.op + ": internal error: an operand is not among the dispatch's bindings");
}

const Dims& Operand::shape() const {
    static const Dims scalar_shape{};
    return scalar ? scalar_shape : arr().shape;
}

Array make_array(RuntimeCore& rt, const Placement& placement, const Dims& shape, DType dtype,
                 const std::string& op) {
    checked_size(shape, dtype, op);
    Array a;
    a.shape = shape;
    a.dtype = dtype;
    a.strides = contiguous_strides(shape, dtype);
    const int64_t bytes = a.nbytes();
    std::shared_ptr<Buffer> buffer;
    try {
        buffer = rt.allocate(static_cast<uint64_t>(std::max<int64_t>(bytes, 1)), placement);
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::OutOfMemory) throw;
        fail(e.kind(), op + " of shape " + shape_str(shape) + ", " + dtype_name(dtype) + ": " + e.what());
    }
    a.base = std::make_shared<ArrayBase>(std::move(buffer), false);
    return a;
}

RuntimeCore& runtime_of(const Array& a) { return runtime_of(*a.base->storage()->owner()); }

Placement host_visible() {
    Placement p;
    p.kind = PlacementKind::HostVisible;
    return p;
}

namespace {
// An emptied uses vector for this thread's next elementwise task: submit_task
// hands back the room of a finished operation's uses (Note [Pooled task
// storage] in runtime/task.cpp), so the per-operation path allocates none.
thread_local std::vector<Use> t_spare_uses;
}  // namespace

std::shared_ptr<CompletionState> submit(RuntimeCore& rt, TaskSpec& task) {
    for (;;) {
        auto c = rt.submit_task(task.lane, task.uses, task.op, task.label, task.kernel, task.array);
        if (c) {
            if (task.written) task.written->add_writer(c);
            if (task.uses.capacity() > t_spare_uses.capacity()) {
                task.uses.clear();
                t_spare_uses.swap(task.uses);
            }
            return c;
        }
        BlockingWait wait;
        rt.scheduler().wait_for_room(static_cast<size_t>(rt.options().max_submissions));
    }
}

void run_now(RuntimeCore& rt, TaskSpec& task, std::initializer_list<const Array*> also_written) {
    auto c = submit(rt, task);
    for (const Array* a : also_written) a->base->add_writer(c);
    wait_succeeded(*c);
}

Dims broadcast_shapes(std::span<const Dims* const> shapes, const std::string& op) {
    size_t nd = 0;
    for (auto* s : shapes) nd = std::max(nd, s->size());
    Dims out(nd, 1);
    for (auto* s : shapes) {
        const size_t pad = nd - s->size();
        for (size_t i = 0; i < s->size(); ++i) {
            const int64_t d = (*s)[i];
            int64_t& o = out[pad + i];
            if (d == o || d == 1) continue;
            if (o == 1) {
                o = d;
                continue;
            }
            std::string list;
            for (auto* t : shapes) list += (list.empty() ? "" : " ") + shape_str(*t);
            fail(ErrorKind::Message, op + ": operands could not be broadcast together with shapes " + list +
                                         " (sizes " + std::to_string(o) + " and " + std::to_string(d) +
                                         " in dimension " + std::to_string(pad + i) + " of the result)");
        }
    }
    return out;
}

Dims broadcast_strides(const Array& a, const Dims& shape) {
    Dims s(shape.size(), 0);
    const size_t pad = shape.size() - a.shape.size();
    for (size_t i = 0; i < a.shape.size(); ++i) s[pad + i] = a.shape[i] == 1 ? 0 : a.strides[i];
    return s;
}

namespace {

bool lane_can_bind(const Placement& p, Lane lane) {
    switch (lane) {
        case Lane::Upload:
        case Lane::Compute:
        case Lane::Download:
            return p.gpu_bindable();
        case Lane::Npu:
            return p.npu_bindable();
        case Lane::Host:
            return p.host_mapped();
    }
    return false;
}

}  // namespace

void check_lane_binding(const Array& a, Lane lane, const std::string& op) {
    // The description is for the message only: formatting it for every
    // operand of every operation cost ~2 us of an elementwise call's ~3.
    if (!lane_can_bind(a.placement(), lane)) check_lane_placement(a.placement(), a.describe(), lane, op);
}

void check_lane_placement(const Placement& p, const std::string& what, Lane lane, const std::string& op) {
    if (lane_can_bind(p, lane)) return;
    switch (lane) {
        case Lane::Upload:
        case Lane::Compute:
        case Lane::Download:
            if (!p.gpu_bindable())
                fail(ErrorKind::Unsupported,
                     op + ": " + what + " is NPU-local memory, which the GPU cannot bind (the " + lane_name(lane) +
                         " lane runs on the GPU); move it with x.to(hx.Shared(npu)) first");
            break;
        case Lane::Npu:
            if (!p.npu_bindable()) fail(ErrorKind::Unsupported, op + ": " + what + " is not NPU-bindable memory");
            break;
        case Lane::Host:
            if (!p.host_mapped()) fail(ErrorKind::Unsupported, op + ": " + what + " is not host mapped");
            break;
    }
}

void check_device_use(const Array& a, Access access, const std::string& op) {
    const auto& st = *a.base->storage();
    if (st.poisoned()) st.throw_if_poisoned(op);
    st.check_device_binding(access, op);
}

void check_reads(std::span<const Array* const> arrays, const std::string& op) {
    const RuntimeCore* rt = nullptr;
    for (const Array* a : arrays) {
        if (rt && rt != &runtime_of(*a)) fail(ErrorKind::Message, op + ": operands belong to different runtimes");
        rt = &runtime_of(*a);
        check_device_use(*a, Access::Read, op);
    }
}

void check_element_operand(const Array& a, Access access, const std::string& op) {
    if (a.dtype == DType::BFP16)
        fail(ErrorKind::Type, op + ": bfp16 arrays have no elements to index or rearrange one by one (they live in "
                                   "blocks of 8); convert with astype(hx.float32) first");
    check_lane_binding(a, Lane::Compute, op);
    if (access == Access::Write) check_writable(a, op);
    check_device_use(a, access, op);
}

void check_assignable(const Dims& src, const Dims& dst, const std::string& op) {
    // NumPy's assignment rule: leading length-1 axes of the source may go
    // beyond the destination's; the rest broadcasts (1 -> n) or matches.
    size_t extra = src.size() > dst.size() ? src.size() - dst.size() : 0;
    bool ok = true;
    for (size_t i = 0; i < extra; ++i) ok = ok && src[i] == 1;
    const size_t n = src.size() - extra, pad = dst.size() - n;
    for (size_t i = 0; i < n && ok; ++i) ok = src[extra + i] == dst[pad + i] || src[extra + i] == 1;
    if (!ok)
        fail(ErrorKind::Message,
             op + ": could not broadcast input array from shape " + shape_str(src) + " into shape " + shape_str(dst));
}

void check_writable(const Array& a, const std::string& op) {
    if (a.base->readonly())
        fail(ErrorKind::Message, op + ": the output " + a.describe() +
                                     " is a read-only import (its producer exported it READ_ONLY, or through a "
                                     "legacy DLPack capsule, which cannot say writable); device work cannot write "
                                     "it; work on a writable copy (x.copy(), or hx.from_dlpack(obj, copy=True))");
}

namespace {

// An array resolved to raw memory, for the host transfers on the calling thread.
struct ArgPlan {
    uint8_t* data = nullptr;
    DType dtype = DType::Float32;
    Dims strides;
    bool scalar = false;
    alignas(16) uint8_t value[16] = {};

    StridedArg arg() const { return StridedArg{scalar ? const_cast<uint8_t*>(value) : data, dtype, strides.data()}; }
};

ArgPlan plan_array(const Array& a) {
    ArgPlan p;
    p.dtype = a.dtype;
    p.data = a.data();
    p.strides = a.strides;
    return p;
}

// Without the leading length-1 axes that go beyond `ndim` (check_assignable allows them).
Array trim_leading_ones(const Array& a, size_t ndim) {
    Array v = a;
    while (v.shape.size() > ndim && v.shape[0] == 1) {
        v.shape.erase(v.shape.begin());
        v.strides.erase(v.strides.begin());
    }
    return v;
}

// The bfp16 row codec (kernels/bfp16.h) over an array's shape and strides.
void encode_rows(const float* src, const Array& dst_desc, uint8_t* dst, bool even, const std::string& what) {
    kernels::bfp16_encode_rows(src, dst_desc.ndim(), dst_desc.shape.data(), dst_desc.strides.data(), dst,
                               even ? kernels::BfpRounding::even : kernels::BfpRounding::floor, what);
}

void decode_rows(const Array& src_desc, const uint8_t* src, float* dst) {
    kernels::bfp16_decode_rows(src, src_desc.ndim(), src_desc.shape.data(), src_desc.strides.data(), dst);
}

// Binds `a` as the next of t's uses, with `access`, and points `arg` at its
// element [0, ...]: the binding's index and the byte offset in its range.
void bind_arg(TaskSpec& t, const Array& a, Access access, provider::ArrayArg& arg) {
    t.uses.push_back(a.use(access));
    arg.binding = static_cast<int32_t>(t.uses.size() - 1);
    arg.offset = static_cast<uint64_t>(a.data() - t.uses.back().view.data());
    arg.dtype = a.dtype;
}

}  // namespace

Lane copy_lane(const Placement& d, const Placement* s, const std::string& op) {
    if (!s) {
        if (d.gpu_bindable()) return Lane::Compute;
        return Lane::Host;  // NpuLocal: the host fills it
    }
    if (d.gpu_bindable() && s->gpu_bindable()) {
        if (s->host_mapped() && !d.host_mapped()) return Lane::Upload;
        if (d.host_mapped() && !s->host_mapped()) return Lane::Download;
        return Lane::Compute;
    }
    if (d.host_mapped() && s->host_mapped()) return Lane::Host;
    fail(ErrorKind::Unsupported, op + ": no engine binds both " + s->repr() + " and " + d.repr() +
                                     " memory (GPU-local and NPU-local); copy through Shared memory");
}

Lane check_copy_shapes(const Placement& dst_place, const Dims& dst_shape, DType dst_dtype, const Placement& src_place,
                       const Dims& src_shape, DType src_dtype, const std::string& op) {
    check_assignable(src_shape, dst_shape, op);
    if (src_dtype == DType::BFP16 || dst_dtype == DType::BFP16) {
        const size_t extra = src_shape.size() > dst_shape.size() ? src_shape.size() - dst_shape.size() : 0;
        if (!std::equal(src_shape.begin() + extra, src_shape.end(), dst_shape.begin(), dst_shape.end()))
            fail(ErrorKind::Message, op + ": bfp16 conversions need equal shapes (no broadcasting), got " +
                                         shape_str(src_shape) + " and " + shape_str(dst_shape));
    }
    return copy_lane(dst_place, &src_place, op);
}

Lane check_copy(const Placement& dst_place, const Dims& dst_shape, DType dst_dtype, const Operand& src,
                const std::string& op) {
    if (src.scalar) return copy_lane(dst_place, nullptr, op);
    const Array& s = src.arr();
    const Lane lane = check_copy_shapes(dst_place, dst_shape, dst_dtype, s.placement(), s.shape, s.dtype, op);
    check_lane_binding(s, lane, op);
    check_device_use(s, Access::Read, op);
    return lane;
}

TaskSpec ufunc_task(kernels::Ufunc op, const kernels::UfuncLoop& loop, std::span<const Operand> inputs,
                    const Array& out, const Operand* where, const std::string& name) {
    TaskSpec t;
    t.op = name;
    t.label = kernels::ufunc_info(op).name;
    t.lane = Lane::Compute;
    check_writable(out, name);
    check_lane_binding(out, t.lane, name);
    // One elementwise dispatch (Note [Array operations are dispatches]): each
    // array operand is a binding (its use, in t.uses order) with the byte
    // offset of its element [0, ...] in the used range. The record and the
    // uses vector are a finished operation's when this thread has one (Note
    // [Pooled task storage] in runtime/task.cpp).
    std::shared_ptr<provider::ElementwiseOp> e = spare_elementwise_op();
    t.uses.swap(t_spare_uses);
    t.uses.clear();
    t.uses.reserve(inputs.size() + 2);
    e->op = op;
    e->loop = loop;
    e->shape = out.shape;
    // Each array's byte range is worked out once and serves its use, its
    // offset and the overlap test against out (may_overlap's rule).
    const auto [out_first, out_end] = out.extent();
    const StorageState* out_storage = out.base->storage().get();
    const auto bind = [&](const Array& a, uint64_t first, uint64_t end, Access access, provider::ArrayArg& arg) {
        t.uses.push_back(Use{BufferView{a.base->buffer(), first, end - first}, access});
        arg.binding = static_cast<int32_t>(t.uses.size() - 1);
        arg.offset = static_cast<uint64_t>(a.offset) - first;
        arg.dtype = a.dtype;
    };
    // `identical_ok`: an input laid out exactly as out is read in place (NumPy's overlap rule).
    const auto operand = [&](const Operand& o, provider::ArrayArg& arg, bool identical_ok) {
        arg.dtype = o.dtype;
        if (o.scalar) {
            std::memcpy(arg.value, o.value, sizeof arg.value);
            arg.strides.assign(out.shape.size(), 0);
            return;
        }
        const Array& a = o.arr();
        check_lane_binding(a, t.lane, name);
        const auto [first, end] = a.extent();
        bind(a, first, end, Access::Read, arg);
        arg.strides = broadcast_strides(a, out.shape);
        const bool overlaps = a.base->storage().get() == out_storage && first < out_end && out_first < end;
        arg.stage = overlaps && !(identical_ok && same_layout(a, out));
    };
    for (const auto& o : inputs) {
        operand(o, e->in[e->nin], true);
        ++e->nin;
    }
    if (where) {
        e->has_where = true;
        operand(*where, e->where, false);
    }
    e->out.strides = out.strides;
    bind(out, out_first, out_end, Access::Write, e->out);
    t.written = out.base;
    if (out.size() == 0) {
        nothing_to_do(t);
        return t;
    }
    t.array = std::move(e);
    return t;
}

TaskSpec copy_task(const Array& dst, const Operand& src_in, const std::string& name, bool bfp16_even) {
    TaskSpec t;
    t.op = name;
    // A dtype conversion is NumPy's astype; the rest (fills from a scalar included) are copies.
    t.label = !src_in.scalar && src_in.dtype != dst.dtype ? "astype" : "copy";
    check_writable(dst, name);
    t.lane = check_copy(dst.placement(), dst.shape, dst.dtype, src_in, name);
    check_lane_binding(dst, t.lane, name);
    const Operand src =
        src_in.scalar || src_in.arr().ndim() <= dst.ndim() ? src_in : Operand::of(trim_leading_ones(src_in.arr(), dst.shape.size()));
    t.written = dst.base;
    if (dst.size() == 0 || (!src.scalar && same_layout(src.arr(), dst))) {
        if (!src.scalar) t.uses.push_back(src.arr().use(Access::Read));
        t.uses.push_back(dst.use(Access::Write));
        nothing_to_do(t);
        return t;
    }
    // One copy-cast dispatch (Note [Array operations are dispatches]); a
    // source overlapping dst is staged by the provider (NumPy's overlap rule).
    auto c = std::make_shared<provider::CopyCastOp>();
    c->shape = dst.shape;
    c->bfp16_even = bfp16_even;
    t.uses.reserve(2);
    if (src.scalar) {
        c->src.dtype = src.dtype;
        std::memcpy(c->src.value, src.value, sizeof c->src.value);
        c->src.strides.assign(dst.shape.size(), 0);
    } else {
        const Array& a = src.arr();
        bind_arg(t, a, Access::Read, c->src);
        // bfp16 conversions keep the shape (check_copy): the blocks' own strides.
        c->src.strides = a.dtype == DType::BFP16 ? a.strides : broadcast_strides(a, dst.shape);
        c->src.stage = may_overlap(a, dst);
    }
    c->dst.strides = dst.strides;
    bind_arg(t, dst, Access::Write, c->dst);
    t.array = std::move(c);
    return t;
}

namespace {

// The common head of the reduction dispatches: compute lane, `in` and `out`
// bound there, `out` writable and written.
TaskSpec reduction_head(const Array& in, const Array& out, const std::string& name) {
    TaskSpec t;
    t.op = t.label = name;
    t.lane = Lane::Compute;
    check_lane_binding(in, t.lane, name);
    check_writable(out, name);
    check_lane_binding(out, t.lane, name);
    t.written = out.base;
    return t;
}

}  // namespace

TaskSpec reduce_task(kernels::Ufunc op, DType acc, const Array& in, const std::vector<bool>& reduce, const Array& out,
                     double divisor, const std::string& name) {
    TaskSpec t = reduction_head(in, out, name);
    if (out.size() == 0) {
        t.uses.push_back(in.use(Access::Read));
        t.uses.push_back(out.use(Access::Write));
        nothing_to_do(t);
        return t;
    }
    // One reduce dispatch (Note [Array operations are dispatches]); an input
    // overlapping the output is staged by the provider.
    auto r = std::make_shared<provider::ReduceOp>();
    r->op = op;
    r->acc = acc;
    r->shape = in.shape;
    r->divisor = divisor;
    t.uses.reserve(2);
    bind_arg(t, in, Access::Read, r->in);
    r->in.strides = in.strides;
    r->in.stage = may_overlap(in, out);
    // keepdims layout: reduced dimensions of out get stride 0.
    r->out.strides = out.strides;
    for (size_t i = 0; i < reduce.size(); ++i)
        if (reduce[i]) {
            r->reduce |= uint64_t{1} << i;
            r->out.strides[i] = 0;
        }
    bind_arg(t, out, Access::Write, r->out);
    t.array = std::move(r);
    return t;
}

TaskSpec arg_reduce_task(bool max, const Array& in, int axis, const Array& out, const std::string& name) {
    TaskSpec t = reduction_head(in, out, name);
    // One arg-reduce dispatch (Note [Array operations are dispatches]).
    auto r = std::make_shared<provider::ArgReduceOp>();
    r->max = max;
    r->axis = axis;
    r->shape = in.shape;
    t.uses.reserve(2);
    bind_arg(t, in, Access::Read, r->in);
    r->in.strides = in.strides;
    r->in.stage = may_overlap(in, out);
    r->out.strides = out.strides;
    if (axis < 0)
        std::fill(r->out.strides.begin(), r->out.strides.end(), 0);
    else
        r->out.strides[static_cast<size_t>(axis)] = 0;
    bind_arg(t, out, Access::Write, r->out);
    t.array = std::move(r);
    return t;
}

std::vector<uint8_t> dense_copy(const Array& a, DType dt) {
    return kernels::dense_copy(a.ndim(), a.shape.data(), StridedArg{a.data(), a.dtype, a.strides.data()}, dt);
}

TaskSpec matmul_task(const Array& a, const Array& b, const Array& out, Lane lane, MatmulMode mode, bool bfp16_even,
                     const std::string& name) {
    TaskSpec t;
    t.op = name;
    t.label = "matmul";
    t.lane = lane;
    check_writable(out, name);
    for (const Array* x : {&a, &b, &out}) check_lane_binding(*x, t.lane, name);
    t.written = out.base;
    if (out.size() == 0) {
        t.uses.push_back(a.use(Access::Read));
        t.uses.push_back(b.use(Access::Read));
        t.uses.push_back(out.use(Access::Write));
        nothing_to_do(t);
        return t;
    }
    // One matmul dispatch (Note [Array operations are dispatches]): on the
    // NPU lane it is the NPU's gemm, on the compute lane the GPU's.
    auto m = std::make_shared<provider::MatmulOp>();
    m->mode = mode;
    m->bfp16_even = bfp16_even;
    m->a_shape = a.shape;
    m->b_shape = b.shape;
    m->out_shape = out.shape;
    t.uses.reserve(3);
    bind_arg(t, a, Access::Read, m->a);
    m->a.strides = a.strides;
    bind_arg(t, b, Access::Read, m->b);
    m->b.strides = b.strides;
    bind_arg(t, out, Access::Write, m->out);
    m->out.strides = out.strides;
    t.array = std::move(m);
    return t;
}

void write_from_host(const Array& dst, const uint8_t* src, const Dims& src_strides, DType src_dtype,
                     const std::string& op) {
    dst.buffer()->require_host_mapped(op);
    auto& st = *dst.base->storage();
    st.acquire_host(true, true, op);
    try {
        if (dst.size() > 0) {
            StridedArg s{const_cast<uint8_t*>(src), src_dtype, src_strides.data()};
            if (dst.dtype == DType::BFP16) {
                std::vector<float> rows(static_cast<size_t>(dst.size()));
                Dims dense = contiguous_strides(dst.shape, DType::Float32);
                kernels::copy_cast(dst.ndim(), dst.shape.data(), s,
                                   StridedArg{reinterpret_cast<uint8_t*>(rows.data()), DType::Float32, dense.data()});
                encode_rows(rows.data(), dst, dst.data(), false, op);
            } else {
                ArgPlan d = plan_array(dst);
                kernels::copy_cast(dst.ndim(), dst.shape.data(), s, d.arg());
            }
        }
    } catch (...) {
        st.release_host(true);
        throw;
    }
    st.release_host(true);
}

void read_to_host(const Array& src, uint8_t* dst, DType dst_dtype, const std::string& op) {
    src.buffer()->require_host_mapped(op);
    auto& st = *src.base->storage();
    st.acquire_host(false, true, op);
    try {
        if (src.size() > 0) {
            Dims dense = contiguous_strides(src.shape, dst_dtype);
            StridedArg d{dst, dst_dtype, dense.data()};
            if (src.dtype == DType::BFP16) {
                if (dst_dtype == DType::Float32) {
                    decode_rows(src, src.data(), reinterpret_cast<float*>(dst));
                } else {
                    std::vector<float> rows(static_cast<size_t>(src.size()));
                    decode_rows(src, src.data(), rows.data());
                    Dims fd = contiguous_strides(src.shape, DType::Float32);
                    kernels::copy_cast(src.ndim(), src.shape.data(),
                                       StridedArg{reinterpret_cast<uint8_t*>(rows.data()), DType::Float32, fd.data()},
                                       d);
                }
            } else {
                ArgPlan s = plan_array(src);
                kernels::copy_cast(src.ndim(), src.shape.data(), s.arg(), d);
            }
        }
    } catch (...) {
        st.release_host(false);
        throw;
    }
    st.release_host(false);
}

}  // namespace hrx
