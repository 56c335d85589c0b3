// Loom artifacts: compiling a specialised kernel.def / pipeline.def into an
// hrx::Artifact (the one artifact type, built-in programs included), their
// contracts, constant blocks and workloads, and HRX's
// Runtime::load_gpu_kernel. NPU loading stays load_npu_artifact's
// (programs.cpp), which runs Loom plans through the same Artifact.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>

#include "errors.h"
#include "kernels/elementwise.h"
#include "loom/frontend.h"
#include "loom/plan.h"
#include "runtime/programs.h"

namespace hrx {

namespace {

uint64_t count_ops(const std::vector<loom::Op>& ops) {
    uint64_t n = 0;
    for (const auto& op : ops) {
        ++n;
        for (const auto& r : op.regions) n += count_ops(r.ops);
    }
    return n;
}

std::string arg_str(const ScalarArg& a) {
    if (a.is_float) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", a.f);
        return buf;
    }
    return a.is_unsigned ? std::to_string(a.u) : std::to_string(a.i);
}

// `a` as the raw bits of a value of `type` in `bits` bits (two's complement
// for integers, the IEEE pattern for floats), or Message naming `what()`
// (made only then: a launch packs its scalars on every call).
template <class What>
uint64_t scalar_bits_of(const ScalarArg& a, loom::ScalarKind type, int bits, const What& what) {
    using K = loom::ScalarKind;
    const auto bad = [&](const std::string& why) -> uint64_t {
        fail(ErrorKind::Message, what() + " = " + arg_str(a) + " " + why);
    };
    if (loom::scalar_is_float(type)) {
        const double d = a.is_float ? a.f : a.is_unsigned ? static_cast<double>(a.u) : static_cast<double>(a.i);
        if (type == K::F64) return std::bit_cast<uint64_t>(d);
        if (std::isfinite(d) && std::fabs(d) > static_cast<double>(std::numeric_limits<float>::max()) &&
            type == K::F32)
            return bad("is out of range for f32");
        if (type == K::F32) return std::bit_cast<uint32_t>(static_cast<float>(d));
        if (type == K::F16 || type == K::BF16) {
            // The array layer's casts, so a scalar rounds as an array element does.
            uint16_t out = 0;
            kernels::copy_cast(0, nullptr,
                               kernels::StridedArg{reinterpret_cast<uint8_t*>(const_cast<double*>(&d)), DType::Float64,
                                                   nullptr},
                               kernels::StridedArg{reinterpret_cast<uint8_t*>(&out),
                                                   type == K::F16 ? DType::Float16 : DType::BFloat16, nullptr});
            if (std::isfinite(d) && (out & 0x7fffu) == (type == K::F16 ? 0x7c00u : 0x7f80u))
                return bad(std::string("is out of range for ") + loom::scalar_name(type));
            return out;
        }
        return bad(std::string("cannot be passed as ") + loom::scalar_name(type) + " (not supported by the emulator)");
    }
    if (a.is_float) return bad(std::string("must be an integer for ") + loom::scalar_name(type));
    // index is signed, offset unsigned; iN carries either reading (signedness lives on the ops).
    const bool allow_neg = type != K::Offset;
    const bool allow_unsigned_top = type != K::Index;
    if (bits >= 64) {
        if (a.is_unsigned && !allow_unsigned_top) return bad("is out of range for " + std::string(loom::scalar_name(type)));
        if (!a.is_unsigned && a.i < 0 && !allow_neg) return bad("is negative, but offsets are unsigned");
        return a.is_unsigned ? a.u : static_cast<uint64_t>(a.i);
    }
    if (type == K::I1) bits = 1;
    const int64_t lo = allow_neg ? (type == K::I1 ? 0 : -(int64_t{1} << (bits - 1))) : 0;
    const int64_t hi = allow_unsigned_top ? (int64_t{1} << bits) - 1 : (int64_t{1} << (bits - 1)) - 1;
    if (a.is_unsigned || a.i < lo || a.i > hi)
        return bad("is out of range for " + std::string(loom::scalar_name(type)) + " (" + std::to_string(bits) +
                   " bits: " + std::to_string(lo) + "..=" + std::to_string(hi) + ")");
    return static_cast<uint64_t>(a.i) & ((uint64_t{1} << bits) - 1);
}

const loom::Program& program_of(const Artifact& a, const std::string& who) {
    if (!a.program) fail(ErrorKind::Message, who + ": artifact '" + a.name + "' is a built-in program, not a Loom artifact");
    return *a.program;
}

std::string device_scalar_names(const loom::Program& p) {
    std::string s;
    for (const auto& d : p.device_params())
        if (!d.is_buffer) s += (s.empty() ? "" : ", ") + d.name;
    return s.empty() ? "none" : s;
}

std::string triple(const std::array<int64_t, 3>& v) {
    return "(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) + ")";
}

// The workload read from the contract's constants: each workload argument
// needs a device scalar of the same name and type (the host and the device
// both needing the count is the usual reason a value sits in both).
std::optional<std::vector<uint64_t>> workload_from_constants(const loom::Program& p,
                                                             const std::vector<uint8_t>& constants) {
    std::vector<uint64_t> bits;
    for (const auto& w : p.workload_params()) {
        const loom::Param* match = nullptr;
        for (const auto& d : p.device_params())
            if (!d.is_buffer && d.name == w.name && d.type == w.type) match = &d;
        if (!match || match->byte_offset + match->byte_length > constants.size() || match->byte_length > 8)
            return std::nullopt;
        uint64_t v = 0;
        std::memcpy(&v, constants.data() + match->byte_offset, match->byte_length);
        const int nbits = static_cast<int>(match->byte_length * 8);
        // A narrower carrier holds a signed index: sign-extend it into the 64-bit slot.
        if (nbits < 64 && (w.type == loom::ScalarKind::Index || loom::scalar_is_int(w.type)) && (v >> (nbits - 1)) & 1)
            v |= ~uint64_t{0} << nbits;
        bits.push_back(v);
    }
    return bits;
}

}  // namespace

Artifact compile_loom_artifact(std::shared_ptr<const loom::Module> module, const std::string& symbol,
                               const std::string& target, const std::map<std::string, std::string>& config) {
    if (target != loom::kGpuTarget && target != loom::kNpuTarget)
        fail(ErrorKind::Message, "loom.compile: unknown target '" + target + "' (the emulator compiles for '" +
                                     loom::kGpuTarget + "' and '" + loom::kNpuTarget + "')");
    loom::Specialization spec{symbol, target, config};
    const loom::Specialized sp = loom::specialize(std::move(module), spec);
    auto program = loom::Program::plan(sp);
    Artifact a;
    a.target = target;
    a.symbol = symbol;
    a.name = symbol;
    for (const auto& [key, value] : program->specialized().config)
        a.config[key] = loom::scalar_is_float(value.type) ? ConfigValue::real(value.f) : ConfigValue::integer(value.i);
    a.canonical_config = sp.canonical_config;
    // An image-size model: a header plus a few instruction words per op.
    uint64_t ops = 0;
    if (sp.root)
        for (const auto& r : sp.root->regions) ops += count_ops(r.ops);
    a.bytes = 4096 + 16 * ops;
    a.program = std::move(program);
    return a;
}

uint64_t loom_scalar_bits(const ScalarArg& value, const loom::Param& param, const std::string& who) {
    return scalar_bits_of(value, param.type, static_cast<int>(param.byte_length * 8), [&] {
        return who + ": device scalar '" + param.name + "' (" + loom::scalar_name(param.type) + ")";
    });
}

std::vector<uint8_t> loom_pack_constants(const Artifact& artifact, const std::map<std::string, ScalarArg>& scalars,
                                         const std::string& who) {
    return loom_pack_constants(program_of(artifact, who), artifact.symbol, scalars, who);
}

std::vector<uint8_t> loom_pack_constants(const loom::Program& p, const std::string& symbol,
                                         const std::map<std::string, ScalarArg>& scalars, const std::string& who) {
    for (const auto& [name, value] : scalars) {
        bool known = false;
        for (const auto& d : p.device_params()) known = known || (!d.is_buffer && d.name == name);
        if (!known)
            fail(ErrorKind::Message, who + ": unknown device scalar '" + name + "' (device scalars of @" +
                                         symbol + ": " + device_scalar_names(p) + ")");
    }
    std::vector<uint8_t> block(p.constant_byte_length(), 0);
    for (const auto& d : p.device_params()) {
        if (d.is_buffer) continue;
        auto it = scalars.find(d.name);
        if (it == scalars.end())
            fail(ErrorKind::Message, who + ": device scalar '" + d.name + "' (" + loom::scalar_name(d.type) +
                                         ") is required (device scalars of @" + symbol + ": " +
                                         device_scalar_names(p) + ")");
        const int bits = static_cast<int>(d.byte_length * 8);
        const uint64_t v = scalar_bits_of(it->second, d.type, bits, [&] {
            return who + ": device scalar '" + d.name + "' (" + loom::scalar_name(d.type) + ")";
        });
        check_constant_slot(d, block.size(), who);
        store_constant(block.data(), d, v);
    }
    return block;
}

void check_constant_slot(const loom::Param& d, size_t size, const std::string& who) {
    if (d.byte_offset + d.byte_length > size || d.byte_length > 8)
        fail(ErrorKind::Message, who + ": device scalar '" + d.name + "' lies outside the constant block");
}

void store_constant(uint8_t* block, const loom::Param& d, uint64_t bits) {
    std::memcpy(block + d.byte_offset, &bits, d.byte_length);  // little-endian, as the device ABI
}

std::vector<uint64_t> loom_workload_bits(const Artifact& artifact, const std::vector<ScalarArg>& workload,
                                         const std::string& who) {
    const loom::Program& p = program_of(artifact, who);
    if (!p.is_gpu()) fail(ErrorKind::Message, who + ": @" + artifact.symbol + " is an NPU pipeline; it has no launch program");
    const auto& params = p.workload_params();
    if (workload.size() != params.size()) {
        std::string names;
        for (const auto& w : params) names += (names.empty() ? "%" : ", %") + w.name;
        fail(ErrorKind::Message, who + ": @" + artifact.symbol + " takes " + std::to_string(params.size()) +
                                     " workload argument(s) (" + (names.empty() ? "none" : names) + "), got " +
                                     std::to_string(workload.size()));
    }
    std::vector<uint64_t> bits;
    for (size_t i = 0; i < params.size(); ++i) {
        const int nbits = loom::scalar_bits(params[i].type);
        uint64_t v = scalar_bits_of(workload[i], params[i].type, nbits, [&] {
            return who + ": workload argument %" + params[i].name + " (" + loom::scalar_name(params[i].type) + ")";
        });
        // Signed values occupy their slot in two's complement (loom.md §5.2).
        if (nbits < 64 && params[i].type != loom::ScalarKind::Offset && !workload[i].is_float && workload[i].i < 0)
            v |= ~uint64_t{0} << nbits;
        bits.push_back(v);
    }
    return bits;
}

std::string loom_scalar_call(const Artifact& artifact) {
    std::string s;
    for (const auto& d : program_of(artifact, "contract_for").device_params())
        if (!d.is_buffer) s += (s.empty() ? "" : ", ") + d.name + "=...";
    return s;
}

namespace {

void find_views(const std::vector<loom::Op>& ops, std::map<loom::ValueId, size_t>& binding_of,
                std::vector<loom::ScalarKind>& out) {
    for (const auto& op : ops) {
        if (op.name.rfind("buffer.assume.", 0) == 0) {
            for (size_t i = 0; i < op.operands.size() && i < op.results.size(); ++i)
                if (auto it = binding_of.find(op.operands[i]); it != binding_of.end()) binding_of[op.results[i]] = it->second;
        } else if (op.name == "buffer.view" && !op.operands.empty() && !op.result_types.empty()) {
            if (auto it = binding_of.find(op.operands[0]);
                it != binding_of.end() && out[it->second] == loom::ScalarKind::None)
                out[it->second] = op.result_types[0].elem;
        }
        for (const auto& r : op.regions) find_views(r.ops, binding_of, out);
    }
}

}  // namespace

std::vector<loom::ScalarKind> loom_binding_elements(const Artifact& artifact) {
    const loom::Program& p = program_of(artifact, "binding_elements");
    const loom::Op* root = p.specialized().root;
    std::vector<loom::ScalarKind> out;
    if (!root || root->regions.empty()) return out;
    // kernel.def: {launch config, body (device signature)}; pipeline.def: {body (spec args, then bindings)}.
    const loom::Region& body = root->regions.back();
    size_t first = 0;
    if (const loom::Attr* spec = root->attr("spec_args"); spec && !p.is_gpu()) first = static_cast<size_t>(spec->i);
    std::map<loom::ValueId, size_t> binding_of;
    size_t buffer = 0;
    const auto& params = p.device_params();
    for (size_t i = first, k = 0; i < body.args.size() && k < params.size(); ++i, ++k)
        if (params[k].is_buffer) binding_of[body.args[i]] = buffer++;
    out.assign(buffer, loom::ScalarKind::None);
    find_views(body.ops, binding_of, out);
    return out;
}

namespace {

// The contract the code needs under `constants`. `for_load`: a binding whose
// footprint is bounded by its own span (Note [Footprint ranges]) needs only
// the bytes the planner could derive (at least one), since a hand-written
// contract states the rest; contract_for cannot, and says so.
KernelContract contract_needed(const Artifact& artifact, const std::vector<uint8_t>& constants, bool for_load) {
    const loom::Program& p = program_of(artifact, "contract_for");
    if (p.is_gpu() && constants.size() != p.constant_byte_length() && !constants.empty())
        fail(ErrorKind::Message, "contract_for: the constant block of @" + artifact.symbol + " has " +
                                     std::to_string(p.constant_byte_length()) + " bytes, got " +
                                     std::to_string(constants.size()));
    std::vector<std::string> names;
    for (const auto& d : p.device_params())
        if (d.is_buffer) names.push_back(d.name);
    KernelContract c;
    for (const auto& f : p.footprints(constants)) {
        const size_t i = c.bindings.size();
        const std::string which = "binding " + std::to_string(i) + " (%" + (i < names.size() ? names[i] : "?") + ") of @" +
                                  artifact.symbol;
        if (!f.used)
            fail(ErrorKind::Message, "launch buffer lists must contain only used bindings: " + which +
                                         " is never used by its code (HRX's native image validator rejects the "
                                         "compiler's relocation of an unused binding); remove it from the signature");
        if (f.bounded && !for_load)
            fail(ErrorKind::Message, "contract_for: the extent of " + which + " (" + f.layout +
                                         ") depends on values the planner cannot bound (a loop variable, a loaded "
                                         "value, or a launch the constants do not fix); pass a hand-written "
                                         "KernelContract to the loading call (accesses are bounds-checked against "
                                         "the bound span)");
        if (f.bounded) {
            c.bindings.push_back({std::max<uint64_t>(f.bytes, 1), f.alignment, f.access, f.layout});
            continue;
        }
        if (f.bytes == 0)
            fail(ErrorKind::Message, "invalid kernel binding extent or alignment: " + which + " spans 0 bytes" +
                                         (f.layout.empty() ? std::string(" (the code only passes it to calls, which "
                                                                         "give it no extent; view it in the root)")
                                                           : " as " + f.layout + " under these constants") +
                                         "; HRX refuses zero-length bindings");
        c.bindings.push_back({f.bytes, f.alignment, f.access, f.layout});
    }
    if (p.is_gpu()) c.constants = constants;
    c.validate();
    return c;
}

}  // namespace

namespace {

// A JSON value of the manifest: objects keep their keys in insertion order.
struct Json {
    enum class Kind { Int, Str, List, Obj } kind = Kind::Obj;
    int64_t i = 0;
    std::string s;
    std::vector<Json> items;
    std::vector<std::pair<std::string, Json>> fields;

    static Json num(int64_t v) { Json j; j.kind = Kind::Int; j.i = v; return j; }
    static Json str(std::string v) { Json j; j.kind = Kind::Str; j.s = std::move(v); return j; }
    static Json list(std::vector<Json> v) { Json j; j.kind = Kind::List; j.items = std::move(v); return j; }
    Json& set(std::string key, Json v) {
        fields.emplace_back(std::move(key), std::move(v));
        return *this;
    }
    static void quote(const std::string& v, std::string& out) {
        out += '"';
        for (const char c : v) {
            if (c == '"' || c == '\\') {
                out += '\\';
                out += c;
            } else if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
                out += buf;
            } else {
                out += c;
            }
        }
        out += '"';
    }
    void write(std::string& out) const {
        switch (kind) {
            case Kind::Int: out += std::to_string(i); break;
            case Kind::Str: quote(s, out); break;
            case Kind::List:
                out += '[';
                for (size_t k = 0; k < items.size(); ++k) {
                    if (k) out += ", ";
                    items[k].write(out);
                }
                out += ']';
                break;
            case Kind::Obj:
                out += '{';
                for (size_t k = 0; k < fields.size(); ++k) {
                    if (k) out += ", ";
                    quote(fields[k].first, out);
                    out += ": ";
                    fields[k].second.write(out);
                }
                out += '}';
                break;
        }
    }
};

}  // namespace

std::string loom_manifest_json(const Artifact& a) {
    const loom::Program& p = program_of(a, "Artifact.manifest");
    const loom::TargetFacts& facts = p.specialized().facts;
    const bool gpu = p.is_gpu();
    Json target;
    target.set("name", Json::str(a.target)).set("family", Json::str(gpu ? "amdgpu" : "aie2p"));
    if (gpu) {
        target.set("processor", Json::str(a.target))
            .set("subgroup_size", Json::num(facts.subgroup_size))
            .set("index_bits", Json::num(facts.index_bits))
            .set("offset_bits", Json::num(facts.offset_bits));
    } else {
        target.set("profile", Json::str(a.target));
    }
    std::vector<Json> params;
    int64_t binding = 0;
    const auto& device = p.device_params();
    for (size_t i = 0; i < device.size(); ++i) {
        const loom::Param& d = device[i];
        Json e;
        e.set("name", Json::str(d.name))
            .set("kind", Json::str(d.is_buffer ? "pointer" : "constant"))
            .set("type", Json::str(d.is_buffer ? "buffer" : loom::scalar_name(d.type)))
            .set("index", Json::num(d.is_buffer ? binding++ : static_cast<int64_t>(i)));
        if (!d.is_buffer)
            e.set("byte_offset", Json::num(static_cast<int64_t>(d.byte_offset)))
                .set("byte_length", Json::num(static_cast<int64_t>(d.byte_length)))
                .set("byte_alignment", Json::num(static_cast<int64_t>(d.byte_alignment)));
        params.push_back(std::move(e));
    }
    Json interface;
    interface.set("parameter_count", Json::num(static_cast<int64_t>(device.size())))
        .set("binding_count", Json::num(binding))
        .set("constant_byte_length", Json::num(static_cast<int64_t>(p.constant_byte_length())));
    Json fn;
    fn.set("name", Json::str(a.symbol))
        .set("source_name", Json::str(a.symbol))
        .set("targets", Json::list({Json::str(a.target)}))
        .set("interface", std::move(interface))
        .set("parameters", Json::list(std::move(params)));
    if (gpu) {
        Json exec;
        // The workgroup size is a fact of the artifact only when no workload value decides it.
        if (p.workload_params().empty()) {
            const auto ws = p.launch_config({}).workgroup_size;
            exec.set("workgroup_size", Json::list({Json::num(ws[0]), Json::num(ws[1]), Json::num(ws[2])}));
        }
        if (facts.subgroup_size > 0) exec.set("subgroup_size", Json::num(facts.subgroup_size));
        fn.set("execution", std::move(exec));
    }
    Json art;
    art.set("format", Json::str(gpu ? "amdgpu-hsaco" : "xdna-image"))
        .set("name", Json::str(a.symbol))
        .set("byte_length", Json::num(static_cast<int64_t>(a.bytes)));
    Json m;
    m.set("kind", Json::str("loom.artifact_manifest"))
        .set("schema_version", Json::num(1))
        .set("mode", Json::str("details"))
        .set("artifact", std::move(art))
        .set("targets", Json::list({std::move(target)}))
        .set("functions", Json::list({std::move(fn)}));
    std::string out;
    m.write(out);
    return out;
}

KernelContract loom_contract_for(const Artifact& artifact, const std::vector<uint8_t>& constants) {
    return contract_needed(artifact, constants, false);
}

std::shared_ptr<GpuKernel> load_gpu_kernel(const GpuDevice& gpu, const Artifact& artifact,
                                           const std::array<int64_t, 3>& grid, const std::array<int64_t, 3>& block,
                                           const KernelContract& contract,
                                           const std::optional<std::vector<ScalarArg>>& workload) {
    const std::string op = "load_gpu_kernel('" + artifact.name + "')";
    contract.validate();
    const auto& ep = gpu.runtime->endpoint(Engine::Gpu, gpu.index);
    if (artifact.target != ep.target || !artifact.program || !artifact.program->is_gpu())
        fail(ErrorKind::Unsupported, op + ": the artifact is " +
                                         (artifact.program && artifact.program->is_gpu() ? "a GPU kernel"
                                                                                         : "not a GPU kernel") +
                                         " for '" + artifact.target + "', gpu:" + std::to_string(gpu.index) + " is '" +
                                         ep.target + "'");
    const loom::Program& p = *artifact.program;
    for (int d = 0; d < 3; ++d)
        if (grid[d] < 1 || block[d] < 1)
            fail(ErrorKind::Message, op + ": grid " + triple(grid) + " and block " + triple(block) +
                                         " must be positive in every dimension");
    if (const std::string bad = loom::launch_geometry_problem(grid, block); !bad.empty()) fail(ErrorKind::Message, op + ": " + bad);
    const char* mismatch = ": GPU metadata does not match contract: ";
    size_t buffers = 0;
    for (const auto& d : p.device_params()) buffers += d.is_buffer ? 1 : 0;
    if (contract.bindings.size() != buffers)
        fail(ErrorKind::Message, op + mismatch + "the kernel has " + std::to_string(buffers) +
                                     " buffer bindings, the contract " + std::to_string(contract.bindings.size()));
    if (contract.constants.size() != p.constant_byte_length())
        fail(ErrorKind::Message, op + mismatch + "the kernel's constant block is " +
                                     std::to_string(p.constant_byte_length()) + " bytes, the contract's " +
                                     std::to_string(contract.constants.size()));

    std::optional<std::vector<uint64_t>> bits;
    if (workload)
        bits = loom_workload_bits(artifact, *workload, op);
    else
        bits = workload_from_constants(p, contract.constants);
    loom::LaunchConfig launch;
    if (bits) {
        launch = p.launch_config(*bits);
        if (block != launch.workgroup_size)
            fail(ErrorKind::Message, op + mismatch + "block " + triple(block) +
                                         " differs from the launch program's workgroup_size " +
                                         triple(launch.workgroup_size));
        if (grid != launch.workgroups)
            fail(ErrorKind::Message, op + mismatch + "grid " + triple(grid) +
                                         " differs from the launch program's workgroups " + triple(launch.workgroups));
    } else {
        launch.subgroup_size = p.specialized().facts.subgroup_size;
    }
    launch.workgroups = grid;
    launch.workgroup_size = block;

    // The code's own footprints under these constants: the contract must cover them.
    const KernelContract need = contract_needed(artifact, contract.constants, true);
    check_contract_covers(need, contract, op);

    auto k = std::make_shared<GpuKernel>();
    k->engine = Engine::Gpu;
    k->name = artifact.name;
    k->runtime = gpu.runtime;
    k->contract = contract;
    k->program = loom_run(gpu.runtime->provider(), Engine::Gpu, artifact.program, contract.constants, launch,
                          gpu.runtime->options().checked);
    return k;
}

std::shared_ptr<const provider::Executable> loom_run(provider::Provider& provider, Engine engine,
                                                     std::shared_ptr<const loom::Program> program,
                                                     std::vector<uint8_t> constants, const loom::LaunchConfig& launch,
                                                     bool checked) {
    provider::ProgramImage image;
    image.engine = engine;
    image.checked = checked;
    image.planned = std::move(program);
    image.constants = std::move(constants);
    image.launch = std::make_shared<const loom::LaunchConfig>(launch);
    return provider.load_program(image);
}

}  // namespace hrx
