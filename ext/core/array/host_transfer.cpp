#include "array/host_transfer.h"

#include <algorithm>

#include "array/creation.h"
#include "errors.h"
#include "runtime/blocking.h"
#include "runtime/runtime.h"

namespace hrx::host_transfer {

namespace {

// Host copies of at least this many bytes let other Python threads run
// meanwhile; smaller ones finish sooner than handing the GIL over would.
constexpr int64_t kReleaseBytes = int64_t{1} << 16;

}  // namespace

Array upload(RuntimeCore& rt, const Placement& placement, const HostBlock& block, const std::string& op,
             std::optional<DType> dtype) {
    if (block.strides.size() != block.shape.size())
        fail(ErrorKind::Message, op + ": the host block's shape and strides differ in length");
    const DType target = dtype.value_or(block.dtype);
    const bool gpu_local = placement.kind == PlacementKind::GpuLocal;
    Array dst = make_array(rt, gpu_local ? host_visible() : placement, block.shape, target, op);
    {
        std::optional<BlockingWait> wait;  // the guard of the fresh array never waits: only the copy takes time
        if (dst.nbytes() >= kReleaseBytes) wait.emplace();
        write_from_host(dst, block.data, block.strides, block.dtype, op);
    }
    if (!gpu_local) return dst;
    Array dev = make_array(rt, placement, block.shape, target, op);
    TaskSpec t = copy_task(dev, Operand::of(dst), op);
    submit(rt, t);
    return dev;
}

DType host_dtype(DType own, std::optional<DType> requested, const std::string& op) {
    const DType want = requested.value_or(own == DType::BFP16 ? DType::Float32 : own);
    if (want == DType::BFP16)
        fail(ErrorKind::Type, op + ": NumPy has no bfp16 dtype; use x.blocks() for the raw blocks");
    return want;
}

Array download(const Array& a, const std::string& op) {
    if (a.placement().host_mapped()) return a;
    Array staging = make_array(runtime_of(a), host_visible(), a.shape, a.dtype, op);
    TaskSpec t = copy_task(staging, Operand::of(a), op);
    submit(runtime_of(a), t);
    return staging;
}

void read(const Array& src, uint8_t* dst, DType dst_dtype, const std::string& op) {
    // The read guard waits for host writers (map_write) of other threads.
    BlockingWait wait;
    read_to_host(src, dst, dst_dtype, op);
}

void to_host(const Array& self, std::optional<DType> requested,
             const std::function<uint8_t*(const Dims& shape, DType dtype)>& allocate, const std::string& op) {
    wait_ready(self);
    const DType want = host_dtype(self.dtype, requested, op);
    const Array a = download(self, op);
    wait_ready(a);
    uint8_t* dst = allocate(a.shape, want);
    read(a, dst, want, op + " of " + a.describe());
}

HostLease::~HostLease() { state_->release_host_lease(id_); }

uint64_t take_lease(const Array& a, bool writable, std::string_view op, const char* label) {
    auto& st = *a.base->storage();
    if (st.host_lease_would_wait(writable)) {
        BlockingWait wait;
        return st.acquire_host_lease(writable, op, label, true);
    }
    return st.acquire_host_lease(writable, op, label, false);
}

LeasedCopy leased_copy(const Array& a, const std::string& op, std::string_view who, const char* label) {
    LeasedCopy c;
    c.array = creation::convert(a, a.dtype, host_visible(), op);
    wait_ready(c.array);
    c.lease = c.array.base->storage()->acquire_host_lease(true, who, label);
    return c;
}

void check_view(const Array& a, const std::string& op) {
    if (!a.placement().host_mapped())
        fail(ErrorKind::Message, op + ": GpuLocal memory is not host mapped; copy it (copy=None or True) instead");
    if (a.dtype == DType::BFP16) fail(ErrorKind::Message, op + ": bfp16 blocks decode to float32, which needs a copy");
}

HostView view(const Array& a, const std::string& op) {
    HostView v;
    // The lease object exists only once the lease does: a refused lease (a
    // live write guard, poison) throws before there is anything to give back.
    const uint64_t id = take_lease(a, false, op, "zero-copy NumPy view (read-only)");
    v.lease = std::make_unique<HostLease>(a.base->storage(), id);
    const auto [first, end] = a.extent();
    v.data = a.base->storage()->data() + first;
    v.bytes = std::max<uint64_t>(end - first, 1);
    v.offset = a.offset - static_cast<int64_t>(first);
    return v;
}

}  // namespace hrx::host_transfer
