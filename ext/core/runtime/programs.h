// The built-in programs of the emulated devices (HRX's Loom fixtures): NPU
// artifacts `copy`, `gemm`, `batched_gemm` and GPU kernels `transform_i32`,
// `euler_bf16`, `add_f32`: their configurations, binding contracts and load
// rules. Their device code is their Loom source, shipped in the package
// (src/hrxarray/programs/*.loom) and embedded (runtime/builtin_sources.h),
// which the provider compiles and runs (Provider::load_program).
//
// Note [Built-in program semantics]
//   NPU copy          config copy.packets (≥ 1, default 1); bindings
//                     src READ, dst WRITE of packets·4096 bytes: dst = src.
//   NPU gemm          config gemm.bfp16 (0 or 1, default 1), gemm.rounding
//                     (0 floor, 1 even; default 0); bindings lhs READ 128 B,
//                     rhs READ 128 B, output WRITE 256 B (one row-major 8×8
//                     problem, see below).
//   NPU batched_gemm  config gemm.batch (1..=16384, default 1) and the two
//                     keys above; the same three bindings holding `batch`
//                     consecutive problems (batch·128, batch·128, batch·256 bytes).
//   GPU transform_i32 config elements (required); in READ, out WRITE, int32:
//                     out[i] = in[i]·3 + 7 with two's-complement wraparound.
//   GPU euler_bf16    config elements (required), dt (float, default 1.0,
//                     rounded to float32); x READ_WRITE bf16, v READ bf16:
//                     x[i] = bf16_rne(f32(x[i]) + f32(dt·f32(v[i]))), i.e. the
//                     product and the sum are each rounded to float32, then
//                     the sum to bfloat16 (round to nearest even, NaN → qNaN).
//   GPU add_f32       config elements (required), delta (float, default 1.0,
//                     rounded to float32); C READ_WRITE float32:
//                     C[i] = f32(C[i] + delta).
// The 8×8 matmul is hrxarray.numerics.matmul's kernel (kernels/matmul.h):
// C[i][j] starts as a float32 +0.0 and takes, for k = 1, 0, 3, 2, 5, 4, 7, 6
// in this order (VDPBF16PS's pairs, Note [Paired k order] in
// kernels/gemm.h), one fused multiply-add acc ← rne(acc + A[i][k]·B[k][j]) of the BF16
// inputs widened exactly to float32. There are no denormals (the NPU flushes
// them): subnormal inputs count as zero and every subnormal result (each
// partial sum) becomes a zero of the same sign. (Until issue 4 the loop also
// flushed each *product* before adding it; now a product below 2^-126 still
// counts when the sum it joins is normal, as in an FMA datapath. The two
// differ only there.) Integer-valued inputs give exact results, as HRX's own
// checks require.
// gemm.bfp16 = 1, the default, is HRX's fixture numerics: the NPU's BFP path
// (aie_api's bf16 mmul emulated with bfp16ebs8; HRX's gemm fixtures encode
// both operands with a bfp16ebs8 schema before vector.mma). Before the
// product, A is quantised in 8-value blocks along its rows and B along its
// columns (K is the blocked axis of both), with
// hrxarray.numerics.bfp16_quantize semantics and gemm.rounding's mantissa
// rounding (floor, mlir-aie's reference, by default; even = AMD Quark). The
// quantised values are exact bf16 again and go through the same product. The
// input buffers are not modified. A block holding NaN or Inf has no bfp16
// encoding: the invocation fails its data check (ExecutionError chained to a
// ValueError naming the element) and poisons only the output binding; the
// inputs stay usable (Note [Data checks are not device faults]). The result
// has the bits of hrxarray.numerics.matmul(a, b, compute="bfp16"). For the
// integer and small-power-of-two data of HRX's fixtures both modes give the
// same, exact, results; gemm.bfp16 = 0 is the plain-BF16 opt-in.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/runtime.h"

namespace hrx {

namespace loom {
class Program;
struct Module;
struct LaunchConfig;
struct Param;
enum class ScalarKind : uint8_t;
}  // namespace loom

// The exact XDNA deployment target of the Strix Halo NPU5.
inline constexpr const char* kStrixHaloNpuTarget = "amd.xdna.strix_halo.17f0_11";

// One configuration value: an integer or a float (Loom specialisation key).
struct ConfigValue {
    bool is_int = true;
    int64_t i = 0;
    double f = 0.0;
    static ConfigValue integer(int64_t v) { return {true, v, static_cast<double>(v)}; }
    static ConfigValue real(double v) { return {false, 0, v}; }
};
using KernelConfig = std::map<std::string, ConfigValue>;

// A compiled program for one target (HRX loom::Artifact): a built-in NPU
// program, or a Loom kernel.def / pipeline.def (then `program` is its plan).
// `config` holds every key of the program, defaults filled in.
struct Artifact {
    std::string target;
    std::string symbol;
    uint64_t bytes = 0;  // image size, charged to the memory budget at load
    std::string name;
    KernelConfig config;
    std::shared_ptr<const loom::Program> program;  // Loom artifacts only
    // Loom artifacts: the canonical config text ("key=value;...").
    std::string canonical_config;
};

// The Python GpuKernel and NpuKernel objects are these types (held by
// std::shared_ptr, so they cast to std::shared_ptr<Kernel>).
struct GpuKernel : Kernel {};
struct NpuKernel : Kernel {
    int columns = 0;
};

// HRX Target::new, at every place a target string enters: the exact XDNA
// deployment target, or a bare AMDGPU architecture key ("gfx" and 3-4
// lowercase hex digits). A feature suffix is Message `expected a bare AMDGPU
// target, found feature-suffixed name "gfx1151:xnack-"`, anything else
// Message `invalid AMDGPU target "..."`, each after `who`. A valid target
// of the wrong engine or device is refused later, where it is loaded
// (Unsupported).
void validate_target(const std::string& target, const std::string& who);

// NPU program `name` ("copy", "gemm", "batched_gemm") with `config`, compiled
// for `target` (validate_target). Unknown names, unknown keys and
// out-of-range values → Message.
Artifact make_npu_artifact(const std::string& name, const KernelConfig& config,
                           const std::string& target = kStrixHaloNpuTarget);

// The contract the artifact's code needs (its exact bindings, no constants).
// Loom GPU kernels whose extents depend on device scalars: Message pointing
// at loom_contract_for.
KernelContract artifact_contract(const Artifact& artifact);


// HRX Module::compile for the emulator: specialise `symbol` of `module` for
// `target` (loom::kGpuTarget or loom::kNpuTarget) with `config` (key → Loom
// spelling) and plan it. loom::CompileError for Loom's refusals.
Artifact compile_loom_artifact(std::shared_ptr<const loom::Module> module, const std::string& symbol,
                               const std::string& target, const std::map<std::string, std::string>& config);

// One device scalar or workload value given by the caller: an integer (the
// Python int, when it fits 64 bits signed or unsigned) or a float.
struct ScalarArg {
    bool is_float = false;
    bool is_unsigned = false;  // `u` holds an integer above INT64_MAX
    int64_t i = 0;
    uint64_t u = 0;
    double f = 0.0;
};

// The constant block of a Loom GPU kernel: every device scalar, by name, in
// signature order at the program's offsets (index carrier per the target
// facts). Message for missing, unknown, mistyped or out-of-range values.
std::vector<uint8_t> loom_pack_constants(const Artifact& artifact, const std::map<std::string, ScalarArg>& scalars,
                                         const std::string& who);
// The same for a planned program whose symbol is `symbol` (built-ins).
std::vector<uint8_t> loom_pack_constants(const loom::Program& program, const std::string& symbol,
                                         const std::map<std::string, ScalarArg>& scalars, const std::string& who);
// One device scalar's bits as loom_pack_constants stores them (its
// byte_length's worth, little-endian), or Message naming `who` and the scalar.
uint64_t loom_scalar_bits(const ScalarArg& value, const loom::Param& param, const std::string& who);
// The one packing step of every constant block (loom_pack_constants and
// hx.loom.ufunc's per-call block): Message naming `who` when the scalar's
// slot lies outside a block of `size` bytes (check once, at planning), and
// the store of its bits at that slot (little-endian, as the device ABI).
void check_constant_slot(const loom::Param& param, size_t size, const std::string& who);
void store_constant(uint8_t* block, const loom::Param& param, uint64_t bits);
// The workload as raw 64-bit slots (loom.md §5.2), checked per parameter type.
std::vector<uint64_t> loom_workload_bits(const Artifact& artifact, const std::vector<ScalarArg>& workload,
                                         const std::string& who);
// "count=..., delta=..." for a GPU kernel's device scalars (messages).
std::string loom_scalar_call(const Artifact& artifact);
// The element type of each buffer binding, in order: that of the first
// buffer.view of it (through buffer.assume.* refinements) in the root's
// body; ScalarKind::None when the code never views it.
std::vector<loom::ScalarKind> loom_binding_elements(const Artifact& artifact);
// The artifact's loom.artifact_manifest (loom.md §5.3, details mode) as JSON
// text: kind, schema_version, mode, artifact, targets and one function with
// its interface, parameters and execution facts. Message for built-ins.
std::string loom_manifest_json(const Artifact& artifact);
// The contract of a Loom artifact given the constant block (GPU) or none (NPU).
KernelContract loom_contract_for(const Artifact& artifact, const std::vector<uint8_t>& constants);

// The Contract check of loading: `contract` has `need`'s binding count and
// covers each binding (extent, alignment, access). `op` leads the message.
void check_contract_covers(const KernelContract& need, const KernelContract& contract, const std::string& op);

// The loaded code of a Loom plan, loaded by `provider` (Provider::load_program
// with ProgramImage::planned): one dispatch of `launch`, or one pipeline
// invocation, with `constants`; `checked` selects loom.md §4.4's checked
// mode; each binding's Span says whether it is on coherent backing
// (Note [The gfx1151 float atomic max caveat]).
std::shared_ptr<const provider::Executable> loom_run(provider::Provider& provider, Engine engine,
                                                     std::shared_ptr<const loom::Program> program,
                                                     std::vector<uint8_t> constants, const loom::LaunchConfig& launch,
                                                     bool checked);

// HRX Runtime::load_gpu_kernel for a Loom GPU artifact: `grid` in
// workgroups, `block` in work-items. Unsupported for artifacts of another
// target or engine; Message "GPU metadata does not match contract" when the
// binding count or constant length differ from the artifact's, or when
// block (and grid, when the workload is known: `workload`, else the
// contract's constants of device scalars named and typed as the workload
// arguments) differ from the launch program's; Contract when `contract`
// does not cover the code's footprints. Runs under `checked` (loom.md §4.4)
// when the runtime was created with it.
std::shared_ptr<GpuKernel> load_gpu_kernel(const GpuDevice& gpu, const Artifact& artifact,
                                           const std::array<int64_t, 3>& grid, const std::array<int64_t, 3>& block,
                                           const KernelContract& contract,
                                           const std::optional<std::vector<ScalarArg>>& workload);

// GPU kernel `name` ("transform_i32", "euler_bf16", "add_f32") with `config`,
// loaded on `gpu` (its runtime owns it, as HRX's Runtime::load_gpu_kernel):
// contract and run. Errors as make_npu_artifact.
std::shared_ptr<GpuKernel> make_gpu_kernel(const GpuDevice& gpu, const std::string& name, const KernelConfig& config);

// HRX NpuDevice::load_artifact: validates `contract` (Message), then requires
// the exact device target, columns in 1..=8 and no constants (Unsupported
// "XDNA requires an exact device profile, 1..=8 columns, and buffer-only
// bindings"), then that `contract` covers what the code accesses (Contract:
// same binding count, each binding at least the program's extent and
// alignment, access including the program's). Then it reserves the image
// bytes from the runtime's memory budget (Message/Busy as MemoryBudget); the
// charge is released when the returned kernel is destroyed, unless a graph
// that ran it was quarantined (then never).
std::shared_ptr<NpuKernel> load_npu_artifact(const NpuDevice& npu, const Artifact& artifact, int64_t columns,
                                             const KernelContract& contract);


}  // namespace hrx
