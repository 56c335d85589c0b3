// Host transfer: host memory into new arrays (upload), arrays back into host
// memory (download and read), and zero-copy host views under a lease. The
// binding describes host data (a NumPy array it keeps alive for the call) as
// a HostBlock; these functions never touch Python, and their blocking steps
// run inside BlockingWait scopes (Note [Blocking waits of core code]).
//
// GpuLocal memory is not host mapped: an upload writes a HostVisible staging
// array on the calling thread and copies it into GpuLocal memory on the
// upload lane; a download copies into a HostVisible array on the download
// lane (Note [Lanes of array operations] in array/ops.h).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "array/ops.h"

namespace hrx::host_transfer {

// Host memory holding an n-dimensional block: element [i0, ...] at data +
// sum(ik * strides[k]) (byte strides, any sign).
struct HostBlock {
    const uint8_t* data = nullptr;
    Dims shape;
    Dims strides;
    DType dtype = DType::Float64;
};

// A new array of `placement` on `rt` holding `block` converted to `dtype`
// (the block's own when absent). The host copy happens now (the caller keeps
// the block alive until the call returns); for GpuLocal the upload-lane copy
// is pending in the result's writers. ValueError naming `op` for bad shapes,
// allocation errors as make_array.
Array upload(RuntimeCore& rt, const Placement& placement, const HostBlock& block, const std::string& op,
             std::optional<DType> dtype = std::nullopt);

// The dtype a host copy of an array of `own` dtype gets: `requested` when
// given, else own (bfp16 decodes to float32). TypeError naming `op` for a
// bfp16 request (NumPy has no such dtype).
DType host_dtype(DType own, std::optional<DType> requested, const std::string& op);
// `a` itself when host mapped, else a HostVisible copy submitted on the
// download lane: the caller waits for its writers before reading it.
Array download(const Array& a, const std::string& op);
// Copies host-mapped `src` (its writers waited for) into the C-contiguous
// host memory `dst` of `dst_dtype`, under a host read guard.
void read(const Array& src, uint8_t* dst, DType dst_dtype, const std::string& op);
// The whole host copy of `a` (to_numpy): waits for its producer, downloads
// it when it is not host mapped, and reads it, converted to host_dtype(own,
// requested), into the C-contiguous memory `allocate(shape, dtype)` returns
// (called once, on the calling thread, after the waits).
void to_host(const Array& a, std::optional<DType> requested,
             const std::function<uint8_t*(const Dims& shape, DType dtype)>& allocate, const std::string& op);

// A host lease on an array's storage (memory/storage.h),
// given back when the object is destroyed.
class HostLease {
public:
    HostLease(std::shared_ptr<StorageState> state, uint64_t id) : state_(std::move(state)), id_(id) {}
    ~HostLease();
    HostLease(const HostLease&) = delete;
    HostLease& operator=(const HostLease&) = delete;

private:
    std::shared_ptr<StorageState> state_;
    uint64_t id_;
};

// Takes a host lease on `a`'s storage, waiting (a BlockingWait) while device
// work uses it; the refusals of StorageState::acquire_host_lease. Returns its id.
uint64_t take_lease(const Array& a, bool writable, std::string_view op, const char* label);

// A private, writable, C-contiguous HostVisible copy of `a` (its checks come
// before it is allocated), waited for, under a writable host lease taken for
// `who` with `label` (a static string): what a copying DLPack export
// (IS_COPIED) hands its consumer, whose deleter gives the lease back.
struct LeasedCopy {
    Array array;
    uint64_t lease = 0;
};
LeasedCopy leased_copy(const Array& a, const std::string& op, std::string_view who, const char* label);

// A read-only zero-copy window on an array's bytes: [data, data + bytes)
// covers its extent, element 0 at data + offset; the lease lives as long as
// the window's owner keeps it.
struct HostView {
    std::unique_ptr<HostLease> lease;
    const uint8_t* data = nullptr;
    uint64_t bytes = 0;
    int64_t offset = 0;
};
// The refusals of a zero-copy view (GpuLocal memory, bfp16 blocks), checked
// before the caller waits for the array's writers.
void check_view(const Array& a, const std::string& op);
// The view of `a` (checked, its writers waited for) under a read lease.
HostView view(const Array& a, const std::string& op);

}  // namespace hrx::host_transfer
