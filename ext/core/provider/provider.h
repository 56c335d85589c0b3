// The device-provider interface: the one seam between the runtime and the
// devices. It is shaped like libamdf (endpoints, memory create/import/map,
// host cache control, pair-visibility queries, queues) so that a native
// provider over the HRX bundle can be added beside the emulated one without
// the runtime changing. The runtime talks only to this interface.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common.h"
#include "dims.h"
#include "kernels/elementwise.h"
#include "memory/visibility.h"

namespace hrx::loom {
class Program;
struct LaunchConfig;
}  // namespace hrx::loom

namespace hrx::provider {

// A device the provider can open (libamdf endpoint).
struct EndpointInfo {
    Engine engine = Engine::Gpu;
    int ordinal = 0;
    std::string name;
    std::string target;  // "gfx1151" or "amd.xdna.strix_halo.17f0_11"
    int columns = 0;     // NPU array columns; 0 for the GPU
};

// One allocation profile for a consumer set (libamdf memory profile).
struct ProfileInfo {
    uint32_t ordinal = 0;
    std::string name;
    uint64_t maximum_bytes = 0;
    uint64_t byte_granularity = 1;
};

// One backing store, owned by whoever holds the unique_ptr. Imports (dma-buf
// aliases) borrow the source's pages: the caller keeps the source alive.
class Memory {
public:
    virtual ~Memory() = default;
    virtual uint8_t* host_pointer() const = 0;
    virtual uint64_t size() const = 0;
    virtual const BackingDesc& backing() const = 0;
    // Runs a host cache operation over the line cover of [offset, offset+length).
    virtual void cache_control(HostCacheOp op, uint64_t offset, uint64_t length) = 0;
};

// A byte range of device memory as a dispatch sees it.
struct Span {
    uint8_t* data = nullptr;
    uint64_t length = 0;
    // On backing the GPU reaches coherently (HRX's allocate_shared), where
    // Note [The gfx1151 float atomic max caveat] (loom/plan.h)
    // applies.
    bool coherent = false;
};

// A program image the provider loads for one engine: a Loom program the
// frontend compiled and planned (a Loom artifact, hx.loom.compile, or a
// built-in, Note [Built-ins load as planned programs]), as the emulated
// provider's image of it: the planned program, the constant block its GPU
// kernel is loaded with, and the launch (null for NPU pipelines). A native
// provider would receive the program's device binary here.
struct ProgramImage {
    Engine engine = Engine::Gpu;
    bool checked = false;  // Loom: loom.md §4.4's checked mode
    std::shared_ptr<const loom::Program> planned;
    std::vector<uint8_t> constants;
    std::shared_ptr<const loom::LaunchConfig> launch;
};

// A loaded program: device code the engine's queue invokes over bindings
// that the runtime has already checked against the program's contract.
class Executable {
public:
    virtual ~Executable() = default;
    // One invocation over `count` bindings in signature order. Throws for a
    // failed invocation (a Data error for a kernel's own data check).
    virtual void invoke(const Span* bindings, size_t count) const = 0;
};

// Note [Array operations are dispatches]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The array layer's operations reach a device the way kernels do: as a
// dispatch on the lane's queue, over bindings the runtime has leased and
// made visible, so fault injection, traces, statistics and a native
// provider see them. The dispatch names an operation the provider supplies
// (pocl runs its built-in kernels through the same device op as user
// kernels) and carries its parameters: which binding each operand lies in,
// at what byte offset, with what strides, or an inline scalar. The emulated
// provider runs them with the kernels library (provider/emulated/array_ops.cpp);
// a native one would launch its device code for the same description.
// Every array operation is one (the runtime runs no closures). The
// families: elementwise functions (the ufuncs), copies and casts (bfp16
// encoding and decoding included), reductions and arg-reductions, and
// matmul (the GPU's, and the NPU's bf16/bfp16 gemm on the NPU lane) here;
// indexing, sorting, searching, sets, scans, rearrangements, random draws,
// the statistics, linalg (the host's LAPACK), hx.loom.ufunc's staged
// invocations, hx.fft (a host function the queue runs in order, NumPy's
// pocketfft) and the empty operation of a zero-size result in
// provider/array_ops.h, which only the array layer and the emulated
// provider include. An operation whose answer the host needs before it
// goes on (a bound, a count that sizes a result) writes it to a host slot
// its description points to, as a native queue returns a small result
// block with its completion.
// An operand that overlaps the output without being it is marked `stage`:
// the provider reads it through a dense copy made before anything is
// written (NumPy's overlap rule), so no family stages on its own. Fault
// injection reaches them as it reaches kernels: Runtime._inject_fault arms
// the next dispatch with a given trace label (runtime/fault.h).

// An operand of an array operation.
struct ArrayArg {
    int32_t binding = -1;  // index into the dispatch's bindings; -1: the scalar in `value`
    uint64_t offset = 0;   // bytes from the binding's start to element [0, ...]
    DType dtype = DType::Float32;
    Dims strides;          // bytes per step along each axis (0 where broadcast)
    // Overlaps the output without being it: the provider reads it through a
    // contiguous copy made before the operation.
    bool stage = false;
    alignas(16) uint8_t value[16] = {};  // complex128 is the widest scalar
};

// The description of one array operation; `family` says which of the
// structs below it is.
struct ArrayOp {
    enum class Family : uint8_t {
        Elementwise, CopyCast, Reduce, ArgReduce, Matmul,
        // provider/array_ops.h
        IndexRange, IndexGather, IndexScatter, MaskCount, Compress, IsIn,
        Sort, SearchSorted, Nonzero, Unique, UniqueRows, Cumulative,
        OuterGather, Triangle, Random,
        Bincount, Histogram, Median, Correlate, UfuncAt, HostWrite,
        Fft, Linalg, StagedInvoke, Empty,
    };
    const Family family;

protected:
    explicit ArrayOp(Family f) : family(f) {}
};

// out = op(in...) over `shape` with `loop`'s casts (kernels::ufunc_run's
// contract); elements where `where` is false keep their value.
struct ElementwiseOp : ArrayOp {
    ElementwiseOp() : ArrayOp(Family::Elementwise) {}
    kernels::Ufunc op = kernels::Ufunc::Add;
    kernels::UfuncLoop loop{};
    Dims shape;
    ArrayArg in[3];
    size_t nin = 0;
    ArrayArg out;
    bool has_where = false;
    ArrayArg where;
};

// dst = src over `shape` (src broadcast by its strides, or the scalar in its
// value), cast to dst's dtype (kernels::copy_cast's conversions). A bfp16
// side goes through float32 rows: both operands then have `shape` without
// broadcasting, and a bfp16 operand's strides are its blocks' (the last
// axis's stride unused); encoding rounds to even when `bfp16_even`, else
// down (mlir-aie's reference), and refuses NaN and Inf with a Data error.
struct CopyCastOp : ArrayOp {
    CopyCastOp() : ArrayOp(Family::CopyCast) {}
    Dims shape;
    ArrayArg src;
    ArrayArg dst;
    bool bfp16_even = false;
};

// An operand with its own shape (the operations of provider/array_ops.h,
// whose operands do not share one): `at.strides` are its byte strides.
struct Tensor {
    ArrayArg at;
    Dims shape;
};

// out = `op` reduced over the axes whose bit is set in `reduce` (bit d: axis
// d; arrays have at most 64 axes), accumulating in `acc`
// and divided by `divisor` when nonzero (kernels::reduce_run's contract): out
// has in's ndim with stride 0 on every reduced axis.
struct ReduceOp : ArrayOp {
    ReduceOp() : ArrayOp(Family::Reduce) {}
    kernels::Ufunc op = kernels::Ufunc::Add;
    DType acc = DType::Float64;
    Dims shape;  // in's
    uint64_t reduce = 0;
    double divisor = 0;
    ArrayArg in;
    ArrayArg out;
};

// int64 out = the index of the first maximum (`max`) or minimum along `axis`
// (-1: over everything in C order), kernels::arg_reduce_run's contract.
struct ArgReduceOp : ArrayOp {
    ArgReduceOp() : ArrayOp(Family::ArgReduce) {}
    bool max = true;
    int axis = -1;
    Dims shape;  // in's
    ArrayArg in;
    ArrayArg out;
};

// out (..., m, n) = a (..., m, k) @ b (..., k, n), the batch axes of a and b
// broadcast to out's as NumPy does. Natural multiplies in out's dtype
// (kernels::matmul_typed: integers wrap, floats accumulate in their own
// precision); Bf16 rounds both operands to bfloat16 and accumulates in
// float32 as the NPU does (kernels::matmul_bf16, out float32); Bfp16 first
// quantises both operands to bfp16ebs8 along k (k a multiple of 8; rounding
// to even when `bfp16_even`, a NaN or Inf a Data error), then as Bf16.
struct MatmulOp : ArrayOp {
    MatmulOp() : ArrayOp(Family::Matmul) {}
    enum class Mode : uint8_t { Natural, Bf16, Bfp16 } mode = Mode::Natural;
    bool bfp16_even = false;
    Dims a_shape, b_shape, out_shape;
    ArrayArg a, b, out;
};

// One unit of queue work (libamdf's fills, copies and dispatch packets).
// Spans point into memory the caller keeps alive until the dispatch has
// finished; `bindings` into an array the caller owns.
struct Dispatch {
    enum class Kind : uint8_t { Fill, Copy, Invoke, Array };
    Kind kind = Kind::Fill;
    Span dst;                             // Fill, Copy
    Span src;                             // Copy (length == dst.length)
    uint8_t byte = 0;                     // Fill
    const Executable* program = nullptr;  // Invoke
    const ArrayOp* array = nullptr;       // Array (Note [Array operations are dispatches])
    const Span* bindings = nullptr;       // Invoke, Array
    size_t binding_count = 0;             // Invoke, Array
};

// An ordered stream of work on one engine (Engine::Host: the CPU's, for
// array operations between host-mapped memories no device binds). The runtime's lane worker hands
// its queue each dispatch of a region and waits for it; the emulated queue
// runs a dispatch on the submitting thread, a native one on the device.
class Queue {
public:
    virtual ~Queue() = default;
    virtual Engine engine() const = 0;
    // Enqueues `dispatch`. Failures surface here or from synchronize().
    virtual void submit(const Dispatch& dispatch) = 0;
    // Waits until everything submitted has finished.
    virtual void synchronize() = 0;
};

class Provider {
public:
    virtual ~Provider() = default;
    virtual std::string name() const = 0;  // "emulated" or "native"
    virtual std::vector<EndpointInfo> endpoints() const = 0;
    // Profiles that can serve the backing; empty when none admits all consumers.
    virtual std::vector<ProfileInfo> query_profiles(const BackingDesc& want) const = 0;
    // Zero-filled, 64-byte aligned. Throws std::bad_alloc when memory runs out.
    virtual std::unique_ptr<Memory> create_memory(const BackingDesc& want, uint64_t bytes) = 0;
    // Export `source` and import it for the consumers of `want` (dma-buf path).
    virtual std::unique_ptr<Memory> import_memory(const Memory& source, const BackingDesc& want) = 0;
    // Pair query for a backing (existing or prospective). Throws Message when a
    // device site was not admitted to the backing.
    virtual VisibilityFacts pair_info(const BackingDesc& backing, const Site& producer,
                                      const Site& consumer) const = 0;
    // The host mapping's recipe for publishing host writes (release) or
    // acquiring device writes, toward the backing's device consumers.
    virtual CacheTransition host_recipe(const BackingDesc& backing, bool release) const = 0;
    virtual std::unique_ptr<Queue> create_queue(Engine engine, int ordinal) = 0;
    // Loads `image` for its engine (Message when the provider cannot).
    virtual std::shared_ptr<const Executable> load_program(const ProgramImage& image) = 0;
};

std::shared_ptr<Provider> make_emulated_provider();

}  // namespace hrx::provider
