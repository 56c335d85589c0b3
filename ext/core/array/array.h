// Device arrays: a typed, strided window on a Buffer, plus the pending device
// writes that produce its bytes.
//
// Note [Arrays and their base]: every array that views one allocation shares
// one ArrayBase: the Buffer handle, whether the bytes may be written by device
// work (a read-only DLPack import may not), and the completions of the device
// operations that write it. Host access and ready() wait for those writers
// and surface the first failure as ExecutionError; the ordering of device work
// among itself is the runtime's (hazards between submissions), and host guards
// still wait for device-use leases, so a stale writer list can make waits
// longer, never unsafe. A writer that failed stays on the list: every later
// wait on the array reports it (its storage is poisoned anyway).
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dims.h"
#include "kernels/dtype.h"
#include "memory/storage.h"
#include "runtime/graph.h"
#include "runtime/scheduler.h"

namespace hrx {

// NumPy's limit on dimensions.
inline constexpr int kMaxDims = 64;

class ArrayBase {
public:
    ArrayBase(std::shared_ptr<Buffer> buffer, bool readonly) : buffer_(std::move(buffer)), readonly_(readonly) {}
    const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
    const std::shared_ptr<StorageState>& storage() const { return buffer_->state(); }
    bool readonly() const { return readonly_; }

    // Records a device operation that writes (part of) the allocation;
    // writers that finished successfully are dropped on the way.
    void add_writer(std::shared_ptr<CompletionState> c);
    // The writers not yet known to have succeeded.
    std::vector<std::shared_ptr<CompletionState>> writers() const;
    // True when no writer is pending (a failed one counts as done).
    bool ready() const;
    // True when every writer finished successfully (waits need not look further).
    bool settled_ok() const;
    // Waits for every writer (the caller has released the GIL) and returns
    // the outcome of the first that failed or was cancelled, if any.
    std::optional<CompletionState::Outcome> wait_writers() const;

private:
    std::shared_ptr<Buffer> buffer_;
    bool readonly_;
    mutable std::mutex mu_;
    std::vector<std::shared_ptr<CompletionState>> writers_;
};

// An array: element [i0, ..., in-1] lives at byte offset + sum(ik * strides[k])
// of the base's buffer. Strides are in bytes and may be zero or negative.
// BFP16 arrays hold blocks of 8 values of the last axis in 9 bytes; their last
// axis is always dense (strides.back() is 9, the bytes per block, and its
// length a multiple of 8); only the leading axes are strided.
struct Array {
    std::shared_ptr<ArrayBase> base;
    int64_t offset = 0;
    Dims shape;
    Dims strides;
    DType dtype = DType::Float32;

    int ndim() const { return static_cast<int>(shape.size()); }
    int64_t size() const;
    // Bytes the elements occupy when packed (size * itemsize; 9 per 8 for BFP16).
    int64_t nbytes() const;
    const std::shared_ptr<Buffer>& buffer() const { return base->buffer(); }
    const Placement& placement() const { return base->buffer()->placement(); }
    uint8_t* data() const { return base->storage()->data() + offset; }
    // The byte range [first, end) of the buffer the elements touch; (offset,
    // offset) for an empty array.
    std::pair<uint64_t, uint64_t> extent() const;
    // As extent(), but nullopt when the layout's range overflows or starts
    // before byte 0 (validation of layouts built from user input).
    std::optional<std::pair<uint64_t, uint64_t>> checked_extent() const;
    bool c_contiguous() const;
    // The runtime use (view over the extent) for hazards and leases.
    Use use(Access access) const;
    // "float32 array of shape (2, 3) on Buffer#4 (Shared(npu:0), 24 bytes)".
    std::string describe() const;
};

// Waits for the writers of `a`'s base (a BlockingWait when one is pending)
// and throws the first failure as a TaskFailure (Note [Failed outcomes reach
// the caller] in runtime/scheduler.h): what host access, DLPack export,
// block_until_ready and data-dependent results wait on.
void wait_ready(const Array& a);

// The C-contiguous byte strides of `shape` for `dtype` (BFP16: blocks along the last axis).
Dims contiguous_strides(const Dims& shape, DType dtype);
// Product of the shape; ValueError naming `op` when it overflows int64 or a dimension is negative.
int64_t checked_size(const Dims& shape, DType dtype, const std::string& op);
// Note [Axes]: every function that takes an axis normalises it here, as
// NumPy does: -ndim <= axis < ndim counts from the end; anything else is an
// AxisError (ErrorKind::Axis) naming the operation, never a wrap-around.
// The binding reports Python integers beyond int64 through fail_axis with
// their own text, so the message always shows the value the caller gave.
int normalize_axis(int64_t axis, int ndim, const std::string& op);
[[noreturn]] void fail_axis(const std::string& axis, int ndim, const std::string& op);
// One flag per dimension, set for the normalised `axes`; ValueError for a repeated axis.
std::vector<bool> axes_mask(const std::vector<int64_t>& axes, int ndim, const std::string& op);
// "(2, 3)" / "(5,)" / "()".
std::string shape_str(const Dims& shape);
// A view of src's storage with a layout the caller gives (x.view, NumPy's
// stride tricks): byte offset into the buffer, shape and byte strides, and a
// dtype. ValueError naming `op` when the lengths differ, a stride is not a
// multiple of the item size, the offset is negative, or an element lies
// outside the buffer.
Array view_of(const Array& src, int64_t offset, Dims shape, Dims strides, DType dtype, const std::string& op);
// A view of C-contiguous src's elements, from its first, with `shape` in C
// order (reshape without a copy); view_of's checks, naming `op`.
Array contiguous_view(const Array& src, Dims shape, const std::string& op);
// Whether two arrays may touch the same bytes (same storage, overlapping extents).
bool may_overlap(const Array& a, const Array& b);
// Whether two arrays address exactly the same elements in the same order.
bool same_layout(const Array& a, const Array& b);

}  // namespace hrx
