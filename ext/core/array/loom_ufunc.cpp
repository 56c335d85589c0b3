#include "array/loom_ufunc.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string_view>

#include "errors.h"
#include "provider/array_ops.h"
#include "kernels/elementwise.h"
#include "loom/ir.h"
#include "loom/plan.h"
#include "runtime/kernel.h"
#include "runtime/runtime.h"

namespace hrx::loom_ufunc {

// What one (provider, count, constants, checked) needs (Note [Loom ufunc launches]).
struct Launch {
    // The loaded code as a kernel: a call whose operands all bind as they are
    // submits its dispatch on the lane's provider queue; a staged call invokes
    // its program around the staging (Note [Loom ufunc launches]).
    std::shared_ptr<Kernel> kernel;
    std::vector<DType> dtypes;  // the definition's, for the task
    uint64_t alignment = 1;  // the strictest binding alignment the footprints ask
};

namespace {

const loom::Program& program_of(const Artifact& a, const std::string& who) {
    if (!a.program || !a.program->is_gpu())
        fail(ErrorKind::Message, who + ": '" + a.name + "' is not a Loom GPU kernel");
    return *a.program;
}

std::string names_of(const std::vector<std::string>& names) {
    if (names.empty()) return "none";
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "'" : ", '") + n + "'";
    return s;
}

// The constant block: %count, then the call's scalars (their names already checked).
std::vector<uint8_t> pack(const Definition& def, int64_t count, std::span<const NamedScalar> scalars) {
    std::vector<uint8_t> block(def.constant_bytes, 0);
    const auto put = [&](const loom::Param& p, const ScalarArg& v) {
        store_constant(block.data(), p, loom_scalar_bits(v, p, def.who));
    };
    ScalarArg c;
    c.i = count;
    put(*def.slots[0], c);
    for (size_t k = 1; k < def.slots.size(); ++k)
        for (const NamedScalar& s : scalars)
            if (s.name == def.slots[k]->name) put(*def.slots[k], s.value);
    return block;
}

std::shared_ptr<const Launch> make_launch(provider::Provider& provider, const Definition& def, int64_t count,
                                          const std::vector<uint8_t>& constants, bool checked) {
    const loom::Program& p = *def.artifact.program;
    ScalarArg c;
    c.i = count;
    const loom::LaunchConfig launch = p.launch_config(loom_workload_bits(def.artifact, {c}, def.who));
    if (const std::string bad = loom::launch_geometry_problem(launch.workgroups, launch.workgroup_size); !bad.empty())
        fail(ErrorKind::Message, def.who + ": count=" + std::to_string(count) + ": " + bad);
    // Each operand is bound as count elements of its dtype: the code may not reach beyond them.
    const KernelContract need = loom_contract_for(def.artifact, constants);
    auto l = std::make_shared<Launch>();
    for (size_t i = 0; i < need.bindings.size(); ++i) {
        const uint64_t have = static_cast<uint64_t>(count) * static_cast<uint64_t>(dtype_itemsize(def.dtypes[i]));
        if (need.bindings[i].bytes > have)
            fail(ErrorKind::Contract, def.who + ": buffer " + std::to_string(i) + " of the kernel spans " +
                                          std::to_string(need.bindings[i].bytes) + " bytes at count=" +
                                          std::to_string(count) + ", more than its " + std::to_string(count) +
                                          " elements (" + std::to_string(have) + " bytes)");
        l->alignment = std::max(l->alignment, need.bindings[i].alignment);
    }
    l->kernel = std::make_shared<Kernel>();
    l->kernel->engine = Engine::Gpu;
    l->kernel->name = def.artifact.symbol;
    l->kernel->program = loom_run(provider, Engine::Gpu, def.artifact.program, constants, launch, checked);
    l->dtypes = def.dtypes;
    return l;
}

std::shared_ptr<const Launch> launch_for(provider::Provider& provider, const Definition& def, int64_t count,
                                         const std::vector<uint8_t>& constants, bool checked) {
    // Loaded code is the provider's: the key names it (a definition serves every runtime).
    const void* loader = &provider;
    // The key's bytes on the stack (a string only when the launch is new or not the last one).
    const size_t len = sizeof loader + sizeof count + 1 + constants.size();
    char small[64];
    std::string big;
    char* k = small;
    if (len > sizeof small) {
        big.resize(len);
        k = big.data();
    }
    std::memcpy(k, &loader, sizeof loader);
    std::memcpy(k + sizeof loader, &count, sizeof count);
    k[sizeof loader + sizeof count] = checked ? 1 : 0;
    if (!constants.empty()) std::memcpy(k + sizeof loader + sizeof count + 1, constants.data(), constants.size());
    const std::string_view key(k, len);
    {
        std::lock_guard<std::mutex> lock(def.mu);
        if (def.last && def.last_key == key) return def.last;
        if (auto it = def.launches.find(std::string(key)); it != def.launches.end()) {
            def.last_key = key;
            def.last = it->second;
            return it->second;
        }
    }
    auto l = make_launch(provider, def, count, constants, checked);
    std::lock_guard<std::mutex> lock(def.mu);
    if (def.launches.size() >= 64) def.launches.clear();
    def.launches.emplace(std::string(key), l);
    def.last_key = key;
    def.last = l;
    return l;
}

// `a` as an operand bound by t's use number `use` (pushed for it).
provider::ArrayArg use_arg(const TaskSpec& t, size_t use, const Array& a) {
    provider::ArrayArg x;
    x.binding = static_cast<int32_t>(use);
    x.offset = static_cast<uint64_t>(a.data() - t.uses[use].view.data());
    x.dtype = a.dtype;
    x.strides = a.strides;
    return x;
}

bool aligned(const Array& a, uint64_t alignment) {
    return reinterpret_cast<uintptr_t>(a.data()) % alignment == 0;
}

}  // namespace

bool dtype_of(loom::ScalarKind kind, DType* out) {
    using K = loom::ScalarKind;
    switch (kind) {
        case K::I1: *out = DType::Bool; return true;
        case K::I8: *out = DType::Int8; return true;
        case K::I16: *out = DType::Int16; return true;
        case K::I32: *out = DType::Int32; return true;
        case K::I64: *out = DType::Int64; return true;
        case K::F16: *out = DType::Float16; return true;
        case K::BF16: *out = DType::BFloat16; return true;
        case K::F32: *out = DType::Float32; return true;
        case K::F64: *out = DType::Float64; return true;
        default: return false;
    }
}

std::shared_ptr<Definition> define(const Artifact& artifact, std::optional<int> nin, std::optional<int> nout) {
    auto def = std::make_shared<Definition>();
    def->who = "loom.ufunc('" + artifact.symbol + "')";
    const std::string& who = def->who;
    const loom::Program& p = program_of(artifact, who);
    const auto& work = p.workload_params();
    if (work.size() != 1 || work[0].is_buffer || work[0].type != loom::ScalarKind::Index)
        fail(ErrorKind::Message, who + ": the kernel's workload signature must be (%count: index)");
    const auto& params = p.device_params();
    if (params.empty() || params[0].is_buffer || params[0].name != "count" || params[0].type != loom::ScalarKind::Index)
        fail(ErrorKind::Message, who + ": the device signature must start with %count: index");
    size_t buffers = 0;
    for (size_t i = 1; i < params.size(); ++i) {
        if (params[i].is_buffer) {
            ++buffers;
        } else {
            if (buffers)
                fail(ErrorKind::Message, who + ": every scalar must come before the buffers in the device signature");
            def->scalars.push_back(params[i].name);
        }
    }
    def->artifact = artifact;
    def->constant_bytes = p.constant_byte_length();
    for (const auto& d : params)
        if (!d.is_buffer) {
            check_constant_slot(d, def->constant_bytes, who);
            def->slots.push_back(&d);
        }
    // The accesses do not depend on the constants: probe with count = 1 and zeros.
    std::map<std::string, ScalarArg> probe;
    ScalarArg one;
    one.i = 1;
    probe["count"] = one;
    for (size_t i = 1; i < params.size(); ++i)
        if (!params[i].is_buffer) {
            ScalarArg z;
            z.is_float = loom::scalar_is_float(params[i].type);
            probe[params[i].name] = z;
        }
    const KernelContract c = loom_contract_for(artifact, loom_pack_constants(artifact, probe, who));
    std::vector<bool> writes;
    std::string accesses;
    for (const auto& b : c.bindings) {
        writes.push_back(access_writes(b.access));
        accesses += std::string(accesses.empty() ? "" : ", ") + access_name(b.access);
    }
    const int n = static_cast<int>(writes.size());
    if (!nin && !nout) {
        int first = 0;
        while (first < n && !writes[static_cast<size_t>(first)]) ++first;
        nin = first;
    }
    if (!nin) nin = n - *nout;
    if (!nout) nout = n - *nin;
    if (*nin < 0 || *nout < 1 || *nin + *nout != n)
        fail(ErrorKind::Message, who + ": the kernel has " + std::to_string(n) + " buffers; nin=" +
                                     std::to_string(*nin) + " and nout=" + std::to_string(*nout) +
                                     " do not split them into inputs and at least one output");
    for (int i = 0; i < n; ++i)
        if (writes[static_cast<size_t>(i)] != (i >= *nin))
            fail(ErrorKind::Message, who + ": the inputs (the first " + std::to_string(*nin) +
                                         " buffers) must be read-only and the outputs written; accesses are [" +
                                         accesses + "]");
    for (loom::ScalarKind k : loom_binding_elements(artifact)) {
        DType t{};
        if (!dtype_of(k, &t))
            fail(ErrorKind::Message, who + ": every buffer must be viewed with an element type (array dtypes: "
                                           "i1, i8-i64, f16, bf16, f32, f64)");
        def->dtypes.push_back(t);
    }
    def->nin = *nin;
    def->nout = *nout;
    return def;
}

std::optional<std::vector<Array>> call(const CallEnv& env, const Definition& def, std::span<Input> inputs,
                                       std::span<const Array* const> outs, std::span<const NamedScalar> scalars,
                                       const DType* dtype) {
    const std::string& who = def.who;
    const size_t nin = static_cast<size_t>(def.nin);
    const size_t nout = static_cast<size_t>(def.nout);
    if (inputs.size() != nin)
        fail(ErrorKind::Type, who + ": takes " + std::to_string(nin) + " input(s), got " + std::to_string(inputs.size()));
    if (!outs.empty() && outs.size() != nout)
        fail(ErrorKind::Message, who + ": out must hold " + std::to_string(nout) + " array(s), got " +
                                     std::to_string(outs.size()));
    // The scalars by name: the call's own errors before the constant block's.
    for (const NamedScalar& s : scalars) {
        if (s.name == "count") fail(ErrorKind::Type, who + ": count is the element count of the operands, not an argument");
        bool known = false;
        for (const auto& n : def.scalars) known = known || n == s.name;
        if (!known) fail(ErrorKind::Type, who + ": unknown scalar '" + s.name + "' (scalars: " + names_of(def.scalars) + ")");
    }
    for (const auto& n : def.scalars) {
        bool given = false;
        for (const NamedScalar& s : scalars) given = given || s.name == n;
        if (!given) fail(ErrorKind::Type, who + ": missing scalar '" + n + "'");
    }
    if (dtype)
        for (size_t j = 0; j < nout; ++j)
            if (*dtype != def.dtypes[nin + j])
                fail(ErrorKind::Type, "No loop matching the specified signature and casting was found for ufunc " +
                                          who + " (its one loop gives " + dtype_name(def.dtypes[nin + j]) +
                                          ", dtype=" + dtype_name(*dtype) + ")");

    Context cx;
    for (const Array* o : outs) note_array(cx, *o, who);
    for (const Input& in : inputs)
        if (in.kind == Input::Kind::Device) note_array(cx, *in.device, who);
    finish_context(cx, env);
    // Note [Weak scalars of a one-loop ufunc]: NEP 50 with one loop. A
    // Python number takes no part in choosing the loop (there is one); it
    // must reach the loop's type by a same_kind cast from its kind (bool,
    // int64, float64, complex128: resolve_weak with no typed operand), and
    // its value is then converted to the loop's type directly, as NumPy
    // converts a Python scalar operand to the loop's descriptor (never
    // through the other operands' dtype first).
    // Fixed storage for the usual few operands here and below: a call's allocations are most of
    // what it costs beyond hx.add's (Note [Loom ufunc launches]).
    constexpr size_t kFew = 8;
    bool none_small[kFew] = {};
    std::unique_ptr<bool[]> none_big(nin > kFew ? new bool[nin]() : nullptr);
    resolve_weak(inputs, nin > kFew ? none_big.get() : none_small, false);
    for (size_t i = 0; i < nin; ++i) {
        const DType want = def.dtypes[i];
        if (inputs[i].dtype == DType::BFP16)
            fail(ErrorKind::Type, who + ": bfp16 arrays are a block storage format without elementwise "
                                        "arithmetic; convert with x.astype(hx.float32) first");
        if (inputs[i].dtype != want && !can_cast(inputs[i].dtype, want, Casting::SameKind))
            fail(ErrorKind::Type, who + ": cannot cast input " + std::to_string(i) + " from " +
                                      dtype_name(inputs[i].dtype) + " to " + dtype_name(want) +
                                      " with casting rule 'same_kind'");
        if (inputs[i].kind == Input::Kind::Scalar && inputs[i].scalar.weak) inputs[i].dtype = want;
    }
    // NumPy's rule: the inputs broadcast to out's shape, never out to theirs.
    const Dims* shapes_small[kFew];
    std::vector<const Dims*> shapes_many;
    const size_t nshapes = inputs.size() + outs.size();
    if (nshapes > kFew) shapes_many.resize(nshapes);
    const Dims** shapes = nshapes > kFew ? shapes_many.data() : shapes_small;
    size_t ns = 0;
    for (const Input& in : inputs) shapes[ns++] = &in.shape();
    for (const Array* o : outs) shapes[ns++] = &o->shape;
    const Dims shape = broadcast_shapes(std::span<const Dims* const>(shapes, nshapes), who);
    for (size_t j = 0; j < outs.size(); ++j) {
        const Array& o = *outs[j];
        if (o.shape != shape)
            fail(ErrorKind::Message, who + ": out has shape " + shape_str(o.shape) + ", the operands broadcast to " +
                                         shape_str(shape));
        if (o.dtype != def.dtypes[nin + j])
            fail(ErrorKind::Type, who + ": out must be " + dtype_name(def.dtypes[nin + j]) + ", got " +
                                      dtype_name(o.dtype));
    }
    const int64_t count = checked_size(shape, def.dtypes[0], who);
    const std::vector<uint8_t> constants = pack(def, count, scalars);
    // Fixed storage for the usual few inputs (no allocation per call).
    Operand small_ops[4];
    std::vector<Operand> many_ops(nin > 4 ? nin : 0);
    const std::span<Operand> operands = nin > 4 ? std::span<Operand>(many_ops) : std::span<Operand>(small_ops, nin);
    for (size_t i = 0; i < nin; ++i)
        if (inputs[i].kind == Input::Kind::Scalar) operands[i] = to_operand(inputs[i], who);
    std::shared_ptr<const Launch> launch;
    if (count) launch = launch_for(cx.rt->provider(), def, count, constants, cx.rt->options().checked);
    for (const Input& in : inputs)
        if (in.kind == Input::Kind::Device) preflight_read(*in.device, Lane::Compute, who);
    for (const Array* o : outs) {
        check_writable(*o, who);
        check_lane_binding(*o, Lane::Compute, who);
        check_device_use(*o, Access::Write, who);
    }
    if (outs.empty())
        check_lane_placement(cx.placement, "the result's placement " + cx.placement.repr(), Lane::Compute, who);

    upload(inputs, cx, env, who);
    for (size_t i = 0; i < nin; ++i)
        if (inputs[i].kind != Input::Kind::Scalar) operands[i] = Operand::borrow(inputs[i].array());
    std::optional<std::vector<Array>> results;
    const Array* written_small[kFew];
    std::vector<const Array*> written_many(nout > kFew ? nout : 0);
    const Array** written = nout > kFew ? written_many.data() : written_small;
    for (size_t j = 0; j < outs.size(); ++j) written[j] = outs[j];
    if (outs.empty()) {
        results.emplace();
        for (size_t j = 0; j < nout; ++j)
            results->push_back(make_array(*cx.rt, cx.placement, shape, def.dtypes[nin + j], who));
        for (size_t j = 0; j < nout; ++j) written[j] = &(*results)[j];
    }
    if (!count) return results;

    TaskSpec t;
    t.op = who;
    t.label = def.artifact.symbol;
    t.lane = Lane::Compute;
    t.uses.reserve(nin + nout);
    const uint64_t alignment = launch->alignment;
    auto in_direct = [&](size_t i) {
        const Array& a = operands[i].arr();
        return a.dtype == def.dtypes[i] && a.shape == shape && a.c_contiguous() && aligned(a, alignment);
    };
    auto out_direct = [&](size_t j) {
        const Array& o = *written[j];
        bool alone = true;
        for (size_t i = 0; i < nin; ++i)
            alone = alone && (operands[i].scalar || !may_overlap(operands[i].arr(), o));
        for (size_t k = 0; k < j; ++k) alone = alone && !may_overlap(*written[k], o);
        return alone && o.c_contiguous() && aligned(o, alignment);
    };
    // Uses are the bindings, in order: inputs (scalars have none), then outputs.
    bool direct = true;
    for (size_t i = 0; i < nin; ++i) {
        if (operands[i].scalar) {
            direct = false;
            continue;
        }
        const Array& a = operands[i].arr();
        check_lane_binding(a, t.lane, who);
        t.uses.push_back(a.use(Access::Read));
        direct = direct && in_direct(i);
    }
    for (size_t j = 0; j < nout; ++j) {
        t.uses.push_back(written[j]->use(Access::Write));
        direct = direct && out_direct(j);
    }
    t.written = written[0]->base;
    if (direct) {
        // All operands bound as they are: one dispatch of the loaded kernel.
        t.kernel = launch->kernel;
    } else {
        // Else one staged invocation (Note [Loom ufunc operands]); only such
        // a call allocates its description.
        auto staged = std::make_shared<provider::StagedInvokeOp>();
        staged->program = launch->kernel->program;
        staged->shape = shape;
        staged->count = count;
        staged->nin = nin;
        staged->alignment = alignment;
        staged->bindings.resize(nin + nout);
        size_t use = 0;
        for (size_t i = 0; i < nin; ++i) {
            provider::StagedInvokeOp::Binding& b = staged->bindings[i];
            b.dtype = def.dtypes[i];
            const Operand& o = operands[i];
            if (o.scalar) {
                b.at.dtype = o.dtype;
                std::memcpy(b.at.value, o.value, sizeof b.at.value);
                b.at.strides.assign(shape.size(), 0);
                continue;
            }
            const Array& a = o.arr();
            b.at = use_arg(t, use++, a);
            b.direct = in_direct(i);
            if (!b.direct) b.at.strides = broadcast_strides(a, shape);
        }
        for (size_t j = 0; j < nout; ++j) {
            provider::StagedInvokeOp::Binding& b = staged->bindings[nin + j];
            b.dtype = def.dtypes[nin + j];
            b.at = use_arg(t, use++, *written[j]);
            b.direct = out_direct(j);
        }
        t.array = std::move(staged);
    }
    auto c = submit(*cx.rt, t);
    for (size_t j = 1; j < nout; ++j) written[j]->base->add_writer(c);
    return results;
}

}  // namespace hrx::loom_ufunc
