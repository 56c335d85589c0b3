// The built-in programs of the emulated devices; semantics in
// Note [Built-in program semantics] (programs.h).
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
#include "kernels/bf16.h"
#include "kernels/bfp16.h"
#include "kernels/matmul.h"
#include "kernels/pool.h"
#include "provider/emulated/loom_program.h"

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

// --- numerics -----------------------------------------------------------------

inline float bf16_value(uint16_t h) { return std::bit_cast<float>(kernels::bf16_to_f32_bits(h)); }
inline uint16_t bf16_round(float f) { return kernels::f32_bits_to_bf16(std::bit_cast<uint32_t>(f)); }

// bfp16ebs8 quantisation of `count` 8x8 bf16 problems in place, as the NPU's
// BFP path feeds its mmul: A in blocks along its rows, B along its columns
// (K is the blocked axis of both). Every bfp16 value has at most 8
// significant bits, so it is exactly a bf16 again. A block holding NaN or
// Inf has no encoding: that fails the operation (a Data error naming the
// element as (problem, row, column) of its binding), not the device.
void quantise_bfp16(uint16_t* a, uint16_t* b, uint64_t count, kernels::BfpRounding rounding) {
    float f[64], q[64];
    uint8_t blocks[8 * kernels::kBfp16BlockBytes];
    for (uint64_t p = 0; p < 2 * count; ++p) {
        const bool is_b = p >= count;
        uint16_t* m = (is_b ? b : a) + 64 * (is_b ? p - count : p);
        for (int i = 0; i < 8; ++i)
            for (int j = 0; j < 8; ++j) f[i * 8 + j] = bf16_value(is_b ? m[j * 8 + i] : m[i * 8 + j]);
        if (const std::ptrdiff_t bad = kernels::bfp16_first_nonfinite(f, 8); bad >= 0) {
            // f holds A's rows, or B's columns: B's element is (bad % 8, bad / 8).
            const auto line = std::to_string(bad / 8), at = std::to_string(bad % 8);
            kernels::bfp16_unencodable("gemm.bfp16", std::string(is_b ? "rhs" : "lhs") + " element (" +
                                                         std::to_string(is_b ? p - count : p) + ", " +
                                                         (is_b ? at + ", " + line : line + ", " + at) + ")",
                                       f[bad]);
        }
        kernels::bfp16_encode(f, blocks, 8, rounding);
        kernels::bfp16_decode(blocks, q, 8);
        for (int i = 0; i < 8; ++i)
            for (int j = 0; j < 8; ++j) (is_b ? m[j * 8 + i] : m[i * 8 + j]) = bf16_round(q[i * 8 + j]);
    }
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
        int_key(who, config, "gemm.bfp16", 0, 0, 1);
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

std::function<void(const std::vector<BufferView>&)> npu_run(const Artifact& a) {
    const KernelContract c = artifact_contract(a);
    if (a.name == "copy") {
        const uint64_t n = c.bindings[0].bytes;
        return [n](const std::vector<BufferView>& v) { std::memcpy(v[1].data(), v[0].data(), n); };
    }
    const uint64_t batch = c.bindings[0].bytes / kGemmInputBytes;
    const auto key = [&](const char* k) {
        auto it = a.config.find(k);
        return it == a.config.end() ? 0 : it->second.i;
    };
    const bool bfp16 = key("gemm.bfp16") != 0;
    const auto rounding = key("gemm.rounding") ? kernels::BfpRounding::even : kernels::BfpRounding::floor;
    return [batch, bfp16, rounding](const std::vector<BufferView>& v) {
        const auto* a = reinterpret_cast<const uint16_t*>(v[0].data());
        const auto* b = reinterpret_cast<const uint16_t*>(v[1].data());
        auto* out = reinterpret_cast<float*>(v[2].data());
        if (!bfp16) {
            kernels::matmul_bf16_8x8_batched(a, b, out, batch);
            return;
        }
        // The inputs are READ bindings: quantise copies.
        std::vector<uint16_t> qa(a, a + 64 * batch), qb(b, b + 64 * batch);
        quantise_bfp16(qa.data(), qb.data(), batch, rounding);
        kernels::matmul_bf16_8x8_batched(qa.data(), qb.data(), out, batch);
    };
}

// --- GPU kernels -------------------------------------------------------------------

std::string gpu_who(const std::string& name) { return "kernels.gpu('" + name + "')"; }

// Runs body(lo, hi) over [0, n) in chunks, split over the kernels' pool when
// n is large. Every element is computed by the same expression whichever
// chunk it falls in, so the split never changes a result.
template <class Body>
void elementwise(uint64_t n, const Body& body) {
    constexpr uint64_t kChunk = 1u << 16;
    if (n < 4 * kChunk || kernels::pool_threads() < 2) {
        body(uint64_t{0}, n);
        return;
    }
    kernels::pool_run((n + kChunk - 1) / kChunk, [&](std::size_t it) {
        const uint64_t lo = it * kChunk;
        body(lo, std::min(n, lo + kChunk));
    });
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
        a.config["gemm.bfp16"] = ConfigValue::integer(int_key(who, config, "gemm.bfp16", 0, 0, 1));
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
    if (name == "transform_i32") {
        check_keys(who, config, {"elements"});
        const auto n = static_cast<uint64_t>(int_key(who, config, "elements", std::nullopt, 1, kIsizeMax / 4));
        k->contract.bindings = {binding(4 * n, 4, Access::Read, "in: " + std::to_string(n) + " i32"),
                                binding(4 * n, 4, Access::Write, "out: " + std::to_string(n) + " i32")};
        k->run = [n](const std::vector<BufferView>& v) {
            const auto* in = reinterpret_cast<const uint32_t*>(v[0].data());
            auto* out = reinterpret_cast<uint32_t*>(v[1].data());
            elementwise(n, [in, out](uint64_t lo, uint64_t hi) {
                for (uint64_t i = lo; i < hi; ++i) out[i] = in[i] * 3u + 7u;  // wraps modulo 2^32
            });
        };
    } else if (name == "euler_bf16") {
        check_keys(who, config, {"elements", "dt"});
        const auto n = static_cast<uint64_t>(int_key(who, config, "elements", std::nullopt, 1, kIsizeMax / 2));
        const float dt = float_key(who, config, "dt", 1.0);
        k->contract.bindings = {binding(2 * n, 2, Access::ReadWrite, "x: " + std::to_string(n) + " bf16"),
                                binding(2 * n, 2, Access::Read, "v: " + std::to_string(n) + " bf16")};
        k->run = [n, dt](const std::vector<BufferView>& v) {
            auto* x = reinterpret_cast<uint16_t*>(v[0].data());
            const auto* vel = reinterpret_cast<const uint16_t*>(v[1].data());
            elementwise(n, [x, vel, dt](uint64_t lo, uint64_t hi) {
                for (uint64_t i = lo; i < hi; ++i) {
                    // Separate roundings of the product and the sum (CMakeLists.txt turns
                    // FP contraction off), branch-free so that it vectorises.
                    const float step = dt * bf16_value(vel[i]);
                    const float sum = bf16_value(x[i]) + step;
                    x[i] = bf16_round(sum);
                }
            });
        };
    } else {
        check_keys(who, config, {"elements", "delta"});
        const auto n = static_cast<uint64_t>(int_key(who, config, "elements", std::nullopt, 1, kIsizeMax / 4));
        const float delta = float_key(who, config, "delta", 1.0);
        k->contract.bindings = {binding(4 * n, 4, Access::ReadWrite, "C: " + std::to_string(n) + " f32")};
        k->run = [n, delta](const std::vector<BufferView>& v) {
            auto* c = reinterpret_cast<float*>(v[0].data());
            elementwise(n, [c, delta](uint64_t lo, uint64_t hi) {
                for (uint64_t i = lo; i < hi; ++i) c[i] = c[i] + delta;
            });
        };
    }
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
    k->run = artifact.program ? loom_run(artifact.program, {}, loom::LaunchConfig{}, npu.runtime->options().checked)
                              : npu_run(artifact);
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
