// Loom programs on the emulated devices: a specialised kernel.def or
// pipeline.def planned once into an executable form, queried for its
// launch program, constant block and binding footprints, and run over
// device memory (reference loom.md §4, §5).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common.h"
#include "loom/frontend.h"

namespace hrx::loom {

// The host launch program's result (loom.md §5.2).
struct LaunchConfig {
    std::array<int64_t, 3> workgroups{1, 1, 1};
    std::array<int64_t, 3> workgroup_size{1, 1, 1};
    std::array<int64_t, 3> cluster_size{1, 1, 1};
    int64_t subgroup_size = 0;
    uint64_t workgroup_storage_bytes = 0;
};

// Note [Emulator size limits]: what the emulator refuses to size, whatever
// the program says, so that a hostile or mistaken size is a clear error
// instead of an allocation failure, an overflow or a silently empty launch.
// Scratch follows gfx1151 and the XDNA2 core (64 KiB of LDS per workgroup,
// 64 KiB of data memory per core): one buffer.alloca holds at most
// kMaxAllocaBytes, a workgroup's allocas together at most that much, and a
// work-item's (or stage firing's) private allocas too. Sizes the planner
// can evaluate are checked when the program is planned (SUBRANGE/002 for a
// negative size, EMULATOR/005 over a limit), the rest when the alloca runs
// (ExecutionError naming the op and the size). A vector type holds at
// most kMaxVectorElems elements, each extent at least one. A launch's work-items per
// dimension (workgroups x workgroup_size) fit HSA's 32-bit grid size, and
// all of them together an int64.
// The interpreter runs many work-items (firings) at once, each with its own
// copy of private scratch: programs with private allocas run at most
// kScratchLanes per batch, and one alloca's copies together stay under
// kMaxBatchScratch (only a workgroup wider than kScratchLanes can reach it).
inline constexpr uint64_t kMaxAllocaBytes = uint64_t{64} << 10;
inline constexpr int64_t kScratchLanes = 1024;
inline constexpr uint64_t kMaxBatchScratch = kMaxAllocaBytes * kScratchLanes;
inline constexpr int64_t kMaxGridDimItems = int64_t{0xFFFFFFFF};
// A vector value holds at most this many elements per lane (the widest
// the built-in programs use is 64; registers hold a batch's lanes of it).
inline constexpr int64_t kMaxVectorElems = 4096;

// What is wrong with a launch's geometry ("" when nothing): a non-positive
// workgroup size, a negative workgroup count, more work-items in a
// dimension than kMaxGridDimItems or more in all than an int64 holds.
std::string launch_geometry_problem(const std::array<int64_t, 3>& workgroups, const std::array<int64_t, 3>& workgroup_size);

// Whether the emulator runs op `name` (its handler table, the pipeline driver,
// or a definition the planner walks); the op catalogue's "executed" column
// (loom/catalogue.h, Note [Op catalogue]).
bool op_executed(const std::string& name);

// One argument of a signature.
struct Param {
    std::string name;            // without '%'
    bool is_buffer = false;
    // A view-typed device parameter (`%x: view<...>`): bound like a buffer
    // (one binding), seen by the body as a view over it from byte 0, its
    // footprint the view type's extent. `type` is then its element type.
    bool is_view = false;
    ScalarKind type = ScalarKind::None;
    // Scalars of a GPU device signature: their place in the constant block.
    uint64_t byte_offset = 0;
    uint64_t byte_length = 0;
    uint64_t byte_alignment = 0;
};

// What the code may touch through one buffer binding (for KernelContract).
struct Footprint {
    uint64_t bytes = 0;          // minimum extent covering every view and access
    uint64_t alignment = 1;      // from buffer.assume.alignment (1 when none)
    Access access = Access::Read;
    std::string layout;          // diagnostic label, e.g. "view<[%n]xf32>"
    bool used = false;           // the code views it or passes it on (else HRX refuses it at load)
    // Some view's extent has no range the planner derives (Note [Footprint
    // ranges] in loom/plan.cpp): `bytes` covers the views it could
    // evaluate; the binding's own span bounds the rest.
    bool bounded = false;
};

// Note [The gfx1151 float atomic max caveat]: HRX (hrx-runtime.md §1.3): on
// gfx1151 a floating-point atomic max does not update coherent backing
// (Stream::allocate_shared); the remedy is an integer compare-and-swap loop
// over the float's bits. The emulator does what the hardware does: a float
// atomic max (view.atomic.rmw/reduce <maxnumf> or <maximumf>) through a
// binding on coherent backing leaves that memory unchanged, in every mode
// (the rmw still returns the value it read), and checked mode reports it
// (ExecutionError naming the line, the binding and the remedy) before any
// lane runs it. The decision is per binding: other bindings of the same
// dispatch, and every other atomic, are unaffected.
//
// Which memory is coherent for the GPU follows the project's visibility
// facts, not a placement name: a binding is coherent when its handle's
// backing was requested with a coherent GPU attachment
// (BackingDesc::gpu_coherent), the backing for which the host and the GPU
// exchange bytes with no cache operation and are mutually atomic at system
// scope (provider/emulated/provider.cpp: side, atomic_reach). That is every
// HostVisible buffer (allocate_shared; also what allocation_profiles with
// coherent_gpu=True yields) and a Shared alias adopted from one, whose GPU
// attachment is still that allocation. GpuLocal and Shared allocations are
// cacheable system memory (they need explicit cache maintenance), so the max
// works there, as it does in workgroup memory.
//
// Only max: HRX names float atomic max alone and says other operations are
// unaffected. memory-fabric.md's suggestion to treat float min too as
// unqualified rests on libamdf having no float atomics at all and on a report
// about integer atomicMin on discrete GPUs without PCIe atomics, neither of
// which is evidence about gfx1151's float min on its own fabric; dropping min
// updates without evidence would make correct programs fail only here.

// One bound buffer as the program sees it.
struct MemorySpan {
    uint8_t* data = nullptr;
    uint64_t size = 0;           // bytes of the bound view
    uint64_t address = 0;        // absolute device address (alignment checks)
    bool coherent = false;       // on coherent backing (Note [The gfx1151 float atomic max caveat])
};

struct ExecOptions {
    bool checked = false;        // loom.md §4.4 checked mode
    bool interpret = false;      // run the interpreter even where native code is attached (tests, benches)
};

class Program {
public:
    // Plan `spec` (throws CompileError with EMULATOR/nnn diagnostics for
    // valid Loom the emulator does not run).
    static std::shared_ptr<const Program> plan(const Specialized& spec);
    virtual ~Program() = default;

    virtual bool is_gpu() const = 0;
    virtual const Specialized& specialized() const = 0;
    // GPU kernels: workload and device signatures; NPU: launch bindings.
    virtual const std::vector<Param>& workload_params() const = 0;
    virtual const std::vector<Param>& device_params() const = 0;
    virtual uint64_t constant_byte_length() const = 0;
    // Evaluate the launch-config region (GPU only); workload values as raw
    // 64-bit slots (loom.md §5.2). Throws Message on bad counts or values.
    virtual LaunchConfig launch_config(const std::vector<uint64_t>& workload_bits) const = 0;
    // Per buffer binding, in signature order. `constants` (GPU) gives the
    // device scalars that dynamic view extents depend on; throws Message
    // naming the binding when an extent needs a scalar it was not given.
    virtual std::vector<Footprint> footprints(const std::vector<uint8_t>& constants) const = 0;
    // Run one dispatch (GPU: every workgroup of `launch`) or one pipeline
    // invocation (NPU) over `bindings` (one per buffer parameter, in order).
    // Checked-mode findings and out-of-bounds accesses throw Error
    // (Execution) naming the source line and the lane/workgroup.
    virtual void run(const std::vector<MemorySpan>& bindings, const std::vector<uint8_t>& constants,
                     const LaunchConfig& launch, const ExecOptions& options) const = 0;

    // The native executor (Note [Native Loom executor], loom/codegen.h):
    // the LLVM IR text generated when the program was planned ("" when the
    // generator refused it, and for pipelines), and why not.
    virtual const std::string& native_ir() const = 0;
    virtual const std::string& native_reason() const = 0;
    // Runs later dispatches (checked mode aside) through the compiled entry
    // `i32 loom_wg(ctx*, err*, i64 first_wg, i64 n_wg)` at `entry`, which
    // the caller keeps alive for as long as the program lives. Refused
    // (Message) when the program has no native IR.
    virtual void attach_native(uint64_t entry) const = 0;
    virtual bool native_attached() const = 0;
    // Records why the IR did not become native code (the compiler failed or
    // is missing): native_reason() says so from then on.
    virtual void refuse_native(const std::string& why) const = 0;
};

}  // namespace hrx::loom
