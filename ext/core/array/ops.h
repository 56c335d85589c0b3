// Array operations as runtime tasks: each builds one TaskSpec (lane, uses,
// and the dispatch: a provider ArrayOp description or a loaded kernel) that
// is submitted with submit() below by the core operation that
// owns the whole call (elementwise.h, reductions.h, matmul.h, indexing.h,
// sorting.h, ...: checks, allocation, submission, waits); the bindings only
// parse, call and wrap. A description names its operands by binding (an
// index into the task's uses, which keep the buffers alive until
// retirement) and holds everything else by value.
//
// Note [Lanes of array operations]: elementwise functions, reductions, casts
// and copies between GPU-bindable placements run on the GPU compute lane;
// copies from host-mapped memory into GpuLocal on the upload lane and back
// on the download lane (HRX's transfer lanes); copies that involve NpuLocal
// storage (which the GPU cannot bind) between host-mapped placements on the
// host lane; matmul of NPU-bindable bf16/bfp16 operands on the NPU lane.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "array/array.h"
#include "kernels/elementwise.h"
#include "runtime/graph.h"

namespace hrx {

class RuntimeCore;
struct Kernel;

struct TaskSpec {
    Lane lane = Lane::Compute;
    std::vector<Use> uses;
    // One of the two: the operation is one dispatch of this loaded kernel
    // over `uses` (its bindings, in order) on the lane's provider queue, as a
    // graph's kernel entry is (kernel_task; fault injection and traces see it),
    std::shared_ptr<Kernel> kernel;
    // or of an array operation the provider supplies, over `uses` (Note
    // [Array operations are dispatches] in provider/provider.h).
    std::shared_ptr<const provider::ArrayOp> array;
    // The base whose writer list gets the task's completion.
    std::shared_ptr<ArrayBase> written;
    std::string op;     // the operation, as failure messages name it
    std::string label;  // its short name in traces: "matmul", "exp", "add.reduce", "copy", "astype"
};

// An operand of an elementwise operation: an array, or a scalar already
// converted to `dtype` (its bytes in `value`). An array operand either owns a
// copy of its Array or refers to one the caller keeps alive until the task
// is built (the per-operation path avoids the copy; tasks never keep `ref`).
struct Operand {
    bool scalar = false;
    const Array* ref = nullptr;
    Array own;
    DType dtype = DType::Float64;
    alignas(16) uint8_t value[16] = {};  // complex128 is the widest

    static Operand of(const Array& a) {
        Operand o;
        o.own = a;
        o.dtype = a.dtype;
        return o;
    }
    static Operand borrow(const Array& a) {
        Operand o;
        o.ref = &a;
        o.dtype = a.dtype;
        return o;
    }
    const Array& arr() const { return ref ? *ref : own; }
    const Dims& shape() const;
};

// A new C-contiguous array of a fresh (zero-filled) allocation. ValueError
// for bad shapes; allocation errors as RuntimeCore::allocate. Zero-size arrays
// get a one-byte allocation (a buffer is never empty).
Array make_array(RuntimeCore& rt, const Placement& placement, const Dims& shape, DType dtype,
                 const std::string& op);

// The runtime an array's storage belongs to.
RuntimeCore& runtime_of(const Array& a);
// HostVisible memory: where host data is staged for GpuLocal arrays and back.
Placement host_visible();

// Submits a task with RuntimeCore::submit_task, waiting (a BlockingWait,
// Note [Blocking waits of core code]) while the runtime is full, and records
// the completion as a writer of the written base.
std::shared_ptr<CompletionState> submit(RuntimeCore& rt, TaskSpec& task);
// Submits a task whose answer the host needs before it goes on (a bound, a
// count that sizes a result), records its completion as a writer of
// `also_written` too, and waits for it (wait_succeeded: a failure throws
// TaskFailure).
void run_now(RuntimeCore& rt, TaskSpec& task, std::initializer_list<const Array*> also_written = {});

// NumPy's broadcast of shapes; ValueError naming `op` and the shapes.
Dims broadcast_shapes(std::span<const Dims* const> shapes, const std::string& op);
// The byte strides of `a` broadcast to `shape` (0 on broadcast dimensions).
Dims broadcast_strides(const Array& a, const Dims& shape);

// Refusals shared by every task: `a` must be bindable on `lane` and, if the
// task writes it, writable. UnsupportedError / ValueError naming `op`.
void check_lane_binding(const Array& a, Lane lane, const std::string& op);
// The same for memory of placement `p` (`what` names it in the message), before it is allocated.
void check_lane_placement(const Placement& p, const std::string& what, Lane lane, const std::string& op);
void check_writable(const Array& a, const std::string& op);
// The refusals a submission would meet for `a` used with `access` (DeviceLost
// for poisoned storage, Busy for a conflicting host guard or lease), checked
// without taking anything. Operations run it before allocating their result,
// so that a refused call allocates nothing (a failed call changes nothing;
// a guard taken by another thread in between still fails the submission).
void check_device_use(const Array& a, Access access, const std::string& op);
// check_device_use for reads of every array, which must share one runtime
// (ValueError naming `op` otherwise): the refusals of an operation composed
// in Python, checked before its first step allocates anything.
void check_reads(std::span<const Array* const> arrays, const std::string& op);

// The refusals of an array that a compute-lane task reads (or writes) element
// by element, as gathers, scatters and rearrangements do: bfp16 arrays have no
// addressable elements (TypeError), then check_lane_binding, check_writable
// for writes and check_device_use, all naming `op`.
void check_element_operand(const Array& a, Access access, const std::string& op);

// NumPy's rule for dst[...] = src: src broadcasts to dst's shape, and may
// have extra leading length-1 axes. ValueError naming `op` and both shapes
// ("could not broadcast input array from shape (2,) into shape (3,)").
void check_assignable(const Dims& src, const Dims& dst, const std::string& op);
// The lane of a copy into `dst` memory from `src` memory (nullptr: a fill),
// Note [Lanes of array operations]; Unsupported when no engine binds both.
Lane copy_lane(const Placement& dst, const Placement* src, const std::string& op);
// The shape rules of a copy (check_assignable; bfp16 conversions keep the
// shape) and its lane, from placements, shapes and dtypes alone.
Lane check_copy_shapes(const Placement& dst_place, const Dims& dst_shape, DType dst_dtype, const Placement& src_place,
                       const Dims& src_shape, DType src_dtype, const std::string& op);
// Everything copy_task checks that does not need the destination to exist
// (shapes, bfp16's equal-shape rule, the lane, src's bindings and storage):
// callers run it before allocating the destination. Returns the lane.
Lane check_copy(const Placement& dst_place, const Dims& dst_shape, DType dst_dtype, const Operand& src,
                const std::string& op);

// out = op(inputs...) over out.shape (inputs broadcast to it) on the compute
// lane, with the loop's casts; `where` (optional bool operand) masks the
// update. Inputs that overlap `out` in any way other than identically are
// copied first inside the task (NumPy's overlap rule).
TaskSpec ufunc_task(kernels::Ufunc op, const kernels::UfuncLoop& loop, std::span<const Operand> inputs,
                    const Array& out, const Operand* where, const std::string& name);

// dst[...] = src broadcast to dst.shape (check_assignable), cast to dst.dtype
// (BFP16 encodes with `rounding` or decodes); the lane follows Note [Lanes of
// array operations]: one copy-cast dispatch (Note [Array operations are
// dispatches] in provider/provider.h), which reads a src overlapping dst
// through a staged copy (NumPy's overlap rule).
TaskSpec copy_task(const Array& dst, const Operand& src, const std::string& name, bool bfp16_even = false);

// Reduction of `in` over the dimensions flagged in `reduce` into `out`
// (keepdims layout: out.ndim == in.ndim, extent 1 on reduced dimensions):
// one reduce dispatch, as arg_reduce_task's is one arg-reduce dispatch.
TaskSpec reduce_task(kernels::Ufunc op, DType acc, const Array& in, const std::vector<bool>& reduce,
                     const Array& out, double divisor, const std::string& name);
// argmax/argmin over `axis` (-1: flattened) into int64 `out` (keepdims layout).
TaskSpec arg_reduce_task(bool max, const Array& in, int axis, const Array& out, const std::string& name);

// A compute-lane task that reads `reads` and writes `writes` (checked
// bindable and writable); `written` is the first written array's base (the
// caller records the completion on the others).
TaskSpec compute_task(std::initializer_list<const Array*> reads, std::initializer_list<const Array*> writes,
                      const std::string& name, const std::string& label);

// Makes t an operation with nothing to do (a zero-size result): an empty
// dispatch that only orders t's uses.
void nothing_to_do(TaskSpec& t);

// `a` as a dispatch operand (provider::Tensor: its shape, strides and the
// byte offset of its element [0, ...] in one of t's uses that covers it, a
// writing one when `access` writes), for the operations of
// provider/array_ops.h; t's uses are already in place (compute_task).
provider::Tensor tensor_of(const TaskSpec& t, const Array& a, Access access = Access::Read);

// A dense row-major copy of `a` in dtype `dt` (any numeric; BFP16 decodes),
// on the calling thread (inside a task).
std::vector<uint8_t> dense_copy(const Array& a, DType dt);

// How a matmul multiplies (provider::MatmulOp says how each mode computes).
using MatmulMode = provider::MatmulOp::Mode;

// Batched matmul c = a @ b with a: (..., m, k), b: (..., k, n), out: (..., m, n)
// (batch dimensions already broadcast in out's shape; a and b broadcast to
// them, as NumPy does) on `lane` (Npu or Compute): one matmul dispatch (Note
// [Array operations are dispatches] in provider/provider.h). out must be
// C-contiguous or is written through a temporary.
TaskSpec matmul_task(const Array& a, const Array& b, const Array& out, Lane lane, MatmulMode mode, bool bfp16_even,
                     const std::string& name);

// One invocation of a loaded kernel (built-in or Loom) over `arrays`, one
// C-contiguous array per binding, its bytes the binding's view, on the
// kernel's engine lane (GPU: compute, NPU: npu) with a use of each binding's
// access, after the checks a graph makes (check_kernel_use) and the array
// layer's refusals. The caller records the completion on every written base.
TaskSpec kernel_task(std::shared_ptr<Kernel> kernel, const std::vector<Array>& arrays, const std::string& name);
// kernel_task submitted, after checking that every array belongs to the
// kernel's runtime (ValueError naming `name`); the arrays its bindings write
// get the completion as a writer. What hx.loom.function runs.
void run_kernel(std::shared_ptr<Kernel> kernel, const std::vector<Array>& arrays, const std::string& name);

// Host transfers on the calling thread (the caller has released the GIL and
// waited for the array's writers). write_from_host copies a strided host
// block of `src_dtype` into host-mapped `dst` under a host write guard;
// read_to_host copies host-mapped `src` into a C-contiguous host block of
// `dst_dtype` under a read guard (BFP16 decodes to float32).
void write_from_host(const Array& dst, const uint8_t* src, const Dims& src_strides, DType src_dtype,
                     const std::string& op);
void read_to_host(const Array& src, uint8_t* dst, DType dst_dtype, const std::string& op);

}  // namespace hrx
