// The built-in programs' runtime side: configurations, contracts and the
// load rules (semantics in Note [Built-in program semantics], programs.h).
// Their device code is their Loom source (runtime/builtin_sources.h), which
// the provider's load_program compiles with the validated configuration.
#include "runtime/programs.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <optional>

#include "errors.h"
#include "runtime/builtin_sources.h"
#include "loom/plan.h"

namespace hrx {

namespace {

constexpr int64_t kIsizeMax = std::numeric_limits<int64_t>::max();
constexpr uint64_t kCopyPacketBytes = 4096;
constexpr uint64_t kGemmInputBytes = 64 * 2;    // 8×8 bf16
constexpr uint64_t kGemmOutputBytes = 64 * 4;   // 8×8 fp32
constexpr int64_t kMaxGemmBatch = 16384;
// HRX's own contracts for these programs declare 4-byte alignment (u32 words);
// the emulated bodies need no more.
constexpr uint64_t kNpuAlignment = 4;
constexpr int kMaxColumns = 8;

// --- configuration --------------------------------------------------------------

std::string value_str(const ConfigValue& v) {
    if (v.is_int) return std::to_string(v.i);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v.f);
    return buf;
}

void check_keys(const std::string& who, const KernelConfig& config, std::initializer_list<const char*> known) {
    for (const auto& [key, value] : config) {
        bool ok = false;
        for (const char* k : known) ok = ok || key == k;
        if (ok) continue;
        std::string list;
        for (const char* k : known) list += std::string(list.empty() ? "'" : ", '") + k + "'";
        fail(ErrorKind::Message, who + ": unknown config key '" + key + "'" +
                                     (list.empty() ? " (the program takes no configuration)"
                                                   : " (known keys: " + list + ")"));
    }
}

int64_t int_key(const std::string& who, const KernelConfig& config, const char* key, std::optional<int64_t> dflt,
                int64_t lo, int64_t hi) {
    auto it = config.find(key);
    if (it == config.end()) {
        if (!dflt) fail(ErrorKind::Message, who + ": config key '" + std::string(key) + "' is required");
        return *dflt;
    }
    const ConfigValue& v = it->second;
    if (!v.is_int)
        fail(ErrorKind::Message, who + ": config key '" + std::string(key) + "' must be an integer, got " + value_str(v));
    if (v.i < lo || v.i > hi)
        fail(ErrorKind::Message, who + ": config key '" + std::string(key) + "' = " + value_str(v) +
                                     " is out of range " + std::to_string(lo) + "..=" + std::to_string(hi));
    return v.i;
}

float float_key(const std::string& who, const KernelConfig& config, const char* key, double dflt) {
    auto it = config.find(key);
    const ConfigValue v = it == config.end() ? ConfigValue::real(dflt) : it->second;
    if (!std::isfinite(v.f) || std::fabs(v.f) > static_cast<double>(std::numeric_limits<float>::max()))
        fail(ErrorKind::Message, who + ": config key '" + std::string(key) + "' = " + value_str(v) +
                                     " is not a finite float32 value");
    return static_cast<float>(v.f);
}

BindingContract binding(uint64_t bytes, uint64_t alignment, Access access, std::string layout) {
    return BindingContract{bytes, alignment, access, std::move(layout)};
}

// --- NPU programs ------------------------------------------------------------------

struct NpuSpec {
    KernelContract contract;
    uint64_t image_bytes = 0;
};

NpuSpec npu_spec(const std::string& name, const KernelConfig& config, const std::string& who) {
    NpuSpec s;
    if (name == "copy") {
        check_keys(who, config, {"copy.packets"});
        const auto packets = static_cast<uint64_t>(
            int_key(who, config, "copy.packets", 1, 1, kIsizeMax / static_cast<int64_t>(kCopyPacketBytes)));
        const uint64_t n = packets * kCopyPacketBytes;
        s.contract.bindings = {binding(n, kNpuAlignment, Access::Read, "src: " + std::to_string(packets) + "x4096 B"),
                               binding(n, kNpuAlignment, Access::Write, "dst: " + std::to_string(packets) + "x4096 B")};
        s.image_bytes = 4096 + 64 * packets;
    } else if (name == "gemm" || name == "batched_gemm") {
        uint64_t batch = 1;
        if (name != "gemm") {
            check_keys(who, config, {"gemm.batch", "gemm.bfp16", "gemm.rounding"});
            batch = static_cast<uint64_t>(int_key(who, config, "gemm.batch", 1, 1, kMaxGemmBatch));
        }
        if (name == "gemm") check_keys(who, config, {"gemm.bfp16", "gemm.rounding"});
        int_key(who, config, "gemm.bfp16", 1, 0, 1);
        int_key(who, config, "gemm.rounding", 0, 0, 1);
        const std::string shape = batch == 1 ? "8x8" : std::to_string(batch) + "x8x8";
        s.contract.bindings = {binding(batch * kGemmInputBytes, kNpuAlignment, Access::Read, "lhs: " + shape + " bf16"),
                               binding(batch * kGemmInputBytes, kNpuAlignment, Access::Read, "rhs: " + shape + " bf16"),
                               binding(batch * kGemmOutputBytes, kNpuAlignment, Access::Write,
                                       "output: " + shape + " f32")};
        s.image_bytes = 8192 + 16 * batch;
    } else {
        fail(ErrorKind::Message, who + ": unknown NPU program '" + name +
                                     "' (built-in programs: 'copy', 'batched_gemm', 'gemm')");
    }
    return s;
}

// --- GPU kernels -------------------------------------------------------------------

std::string gpu_who(const std::string& name) { return "kernels.gpu('" + name + "')"; }

// A configuration value in Loom spelling (a float with the digits that
// round-trip its float32).
std::string loom_spelling(const ConfigValue& v) {
    char buf[64];
    if (v.is_int)
        std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v.i));
    else
        std::snprintf(buf, sizeof buf, "%.9e", static_cast<double>(static_cast<float>(v.f)));
    return buf;
}

// Note [Built-ins load as planned programs]
// A built-in program loads the way a Loom artifact does: its Loom source
// (runtime/builtin_sources.h) is compiled and planned here by the frontend,
// and the provider receives the planned program with its launch and
// constant block (ProgramImage::planned), so programs have one path into
// every provider. An NPU program's keys are its Loom config keys; a GPU
// kernel's `elements` is its workload and its %count, and every other key
// the device scalar of that name (dt, delta). Reals are the float32 values
// the configuration spells (loom_spelling). The program runs in checked
// mode (loom.md §4.4) on a runtime created with it.
std::shared_ptr<const provider::Executable> load_builtin(const RuntimeCore& runtime, Engine engine,
                                                         const std::string& target, const std::string& name,
                                                         const KernelConfig& config) {
    const std::string who = "load_program('" + name + "')";
    std::map<std::string, std::string> spelled;
    std::map<std::string, ScalarArg> scalars;
    std::vector<uint64_t> workload;
    for (const auto& [key, v] : config) {
        if (engine == Engine::Npu) {
            spelled[key] = loom_spelling(v);
            continue;
        }
        ScalarArg a;
        if (v.is_int) {
            a.i = v.i;
        } else {
            a.is_float = true;
            a.f = static_cast<double>(static_cast<float>(v.f));
        }
        if (key == "elements") {
            workload = {static_cast<uint64_t>(v.i)};
            scalars["count"] = a;
        } else {
            scalars[key] = a;
        }
    }
    const loom::ParsedModule parsed = loom::parse_module(std::string(builtin_source(name).text));
    loom::Specialization spec{name, target, spelled};
    std::shared_ptr<const loom::Program> plan = loom::Program::plan(loom::specialize(parsed.module, spec));
    loom::LaunchConfig launch;
    std::vector<uint8_t> constants;
    if (plan->is_gpu()) {
        launch = plan->launch_config(workload);
        constants = loom_pack_constants(*plan, name, scalars, who);
    }
    return loom_run(runtime.provider(), engine, std::move(plan), std::move(constants), launch,
                    runtime.options().checked);
}

}  // namespace

void validate_target(const std::string& target, const std::string& who) {
    if (target == kStrixHaloNpuTarget) return;
    // Rust's {:?} of the key, as HRX's messages show it.
    std::string quoted = "\"";
    for (char c : target) quoted += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    quoted += "\"";
    if (target.find(':') != std::string::npos)
        fail(ErrorKind::Message, who + ": expected a bare AMDGPU target, found feature-suffixed name " + quoted);
    const bool gfx = target.rfind("gfx", 0) == 0 && target.size() >= 6 && target.size() <= 7 &&
                     std::all_of(target.begin() + 3, target.end(),
                                 [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
    if (!gfx)
        fail(ErrorKind::Message, who + ": invalid AMDGPU target " + quoted + " (targets are '" + kStrixHaloNpuTarget +
                                     "' or a bare AMDGPU architecture: 'gfx' and 3-4 lowercase hex digits, such as "
                                     "'gfx1151')");
}

Artifact make_npu_artifact(const std::string& name, const KernelConfig& config, const std::string& target) {
    const std::string who = "kernels.npu('" + name + "')";
    validate_target(target, who);
    NpuSpec s = npu_spec(name, config, who);
    Artifact a;
    a.target = target;
    a.symbol = name;
    a.bytes = s.image_bytes;
    a.name = name;
    a.config = config;
    if (name == "copy") a.config["copy.packets"] = ConfigValue::integer(int_key(who, config, "copy.packets", 1, 1, kIsizeMax));
    if (name == "batched_gemm") a.config["gemm.batch"] = ConfigValue::integer(int_key(who, config, "gemm.batch", 1, 1, kMaxGemmBatch));
    if (name == "gemm" || name == "batched_gemm") {
        a.config["gemm.bfp16"] = ConfigValue::integer(int_key(who, config, "gemm.bfp16", 1, 0, 1));
        a.config["gemm.rounding"] = ConfigValue::integer(int_key(who, config, "gemm.rounding", 0, 0, 1));
    }
    return a;
}

KernelContract artifact_contract(const Artifact& artifact) {
    if (artifact.program) {
        try {
            return loom_contract_for(artifact, {});
        } catch (const Error& e) {
            if (e.kind() != ErrorKind::Message || !artifact.program->is_gpu()) throw;
            fail(ErrorKind::Message, "artifact '" + artifact.name + "': " + e.what() +
                                         "; its extents depend on device scalars: use .contract_for(" +
                                         loom_scalar_call(artifact) + ")");
        }
    }
    return npu_spec(artifact.name, artifact.config, "artifact '" + artifact.name + "'").contract;
}

std::shared_ptr<GpuKernel> make_gpu_kernel(const GpuDevice& gpu, const std::string& name, const KernelConfig& config) {
    const std::string who = gpu_who(name);
    auto k = std::make_shared<GpuKernel>();
    k->engine = Engine::Gpu;
    k->name = name;
    k->runtime = gpu.runtime;
    if (name != "transform_i32" && name != "euler_bf16" && name != "add_f32")
        fail(ErrorKind::Message, who + ": unknown GPU kernel '" + name +
                                     "' (built-in kernels: 'add_f32', 'euler_bf16', 'transform_i32')");
    // Every key with its default applied: the provider's image holds them all.
    KernelConfig full;
    if (name == "transform_i32") {
        check_keys(who, config, {"elements"});
        const auto n = static_cast<uint64_t>(int_key(who, config, "elements", std::nullopt, 1, kIsizeMax / 4));
        k->contract.bindings = {binding(4 * n, 4, Access::Read, "in: " + std::to_string(n) + " i32"),
                                binding(4 * n, 4, Access::Write, "out: " + std::to_string(n) + " i32")};
        full["elements"] = ConfigValue::integer(static_cast<int64_t>(n));
    } else if (name == "euler_bf16") {
        check_keys(who, config, {"elements", "dt"});
        const auto n = static_cast<uint64_t>(int_key(who, config, "elements", std::nullopt, 1, kIsizeMax / 2));
        k->contract.bindings = {binding(2 * n, 2, Access::ReadWrite, "x: " + std::to_string(n) + " bf16"),
                                binding(2 * n, 2, Access::Read, "v: " + std::to_string(n) + " bf16")};
        full["elements"] = ConfigValue::integer(static_cast<int64_t>(n));
        full["dt"] = ConfigValue::real(float_key(who, config, "dt", 1.0));
    } else {
        check_keys(who, config, {"elements", "delta"});
        const auto n = static_cast<uint64_t>(int_key(who, config, "elements", std::nullopt, 1, kIsizeMax / 4));
        k->contract.bindings = {binding(4 * n, 4, Access::ReadWrite, "C: " + std::to_string(n) + " f32")};
        full["elements"] = ConfigValue::integer(static_cast<int64_t>(n));
        full["delta"] = ConfigValue::real(float_key(who, config, "delta", 1.0));
    }
    k->program = load_builtin(*gpu.runtime, Engine::Gpu, gpu.runtime->endpoint(Engine::Gpu, gpu.index).target, name, full);
    k->contract.validate();
    return k;
}

std::shared_ptr<NpuKernel> load_npu_artifact(const NpuDevice& npu, const Artifact& artifact, int64_t columns,
                                             const KernelContract& contract) {
    const std::string op = "load_artifact('" + artifact.name + "')";
    contract.validate();
    const auto& ep = npu.runtime->endpoint(Engine::Npu, npu.index);
    const char* unsupported = "XDNA requires an exact device profile, 1..=8 columns, and buffer-only bindings";
    if (artifact.target != ep.target)
        fail(ErrorKind::Unsupported, op + ": " + unsupported + ": the artifact targets '" + artifact.target +
                                         "', npu:" + std::to_string(npu.index) + " is '" + ep.target + "'");
    if (columns < 1 || columns > std::min(kMaxColumns, ep.columns))
        fail(ErrorKind::Unsupported, op + ": " + unsupported + ": columns = " + std::to_string(columns));
    if (!contract.constants.empty())
        fail(ErrorKind::Unsupported, op + ": " + unsupported + ": the contract has " +
                                         std::to_string(contract.constants.size()) + " constant bytes");
    // The emulated code accesses exactly its own contract: the caller's must cover it.
    check_contract_covers(artifact_contract(artifact), contract, op);

    auto k = std::make_shared<NpuKernel>();
    k->engine = Engine::Npu;
    k->name = artifact.name;
    k->contract = contract;
    k->runtime = npu.runtime;
    k->npu_index = npu.index;
    k->image_bytes = artifact.bytes;
    k->columns = static_cast<int>(columns);
    k->program = artifact.program ? loom_run(npu.runtime->provider(), Engine::Npu, artifact.program, {},
                                             loom::LaunchConfig{}, npu.runtime->options().checked)
                                  : load_builtin(*npu.runtime, Engine::Npu, artifact.target, artifact.name,
                                                 artifact.config);
    if (const auto& budget = npu.runtime->options().memory_budget)
        k->image_charge = std::make_shared<MemoryReservation>(
            budget, artifact.bytes, op + " image of " + std::to_string(artifact.bytes) + " bytes");
    return k;
}

void check_contract_covers(const KernelContract& need, const KernelContract& contract, const std::string& op) {
    if (contract.bindings.size() != need.bindings.size())
        fail(ErrorKind::Contract, op + ": kernel binding count mismatch: the program has " +
                                      std::to_string(need.bindings.size()) + " bindings, the contract " +
                                      std::to_string(contract.bindings.size()));
    for (size_t i = 0; i < need.bindings.size(); ++i) {
        const auto& have = contract.bindings[i];
        const auto& want = need.bindings[i];
        const auto bits = [](Access a) { return static_cast<uint8_t>(a); };
        if (have.bytes < want.bytes || have.alignment < want.alignment ||
            (bits(have.access) & bits(want.access)) != bits(want.access))
            fail(ErrorKind::Contract,
                 op + ": the contract does not cover the program's binding " + std::to_string(i) + " (" + want.layout +
                     "): the program needs " + std::to_string(want.bytes) + " bytes, alignment " +
                     std::to_string(want.alignment) + ", " + access_name(want.access) + "; the contract gives " +
                     std::to_string(have.bytes) + " bytes, alignment " + std::to_string(have.alignment) + ", " +
                     access_name(have.access));
    }
}

}  // namespace hrx
