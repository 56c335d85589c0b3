// DLPack export and import: the negotiation, validation, host leases and
// managed tensors behind DeviceArray.__dlpack__ and hx.from_dlpack. The
// bindings (bind_array.cpp, bind_dlpack.cpp) parse the Python arguments,
// read and rename capsules and wrap the results; every decision is made here.
//
// Note [DLPack ownership]: an export takes a host lease on the storage and
// keeps (keep) the StorageState alive from the managed tensor; the managed
// tensor's deleter drops both and is pure C++ (no Python, no GIL), so any
// consumer may call it from any thread, even after interpreter shutdown. The
// capsule destructor (bind_dlpack.cpp) calls that deleter only while the
// capsule still has its unused name. An import renames the producer's capsule
// to "used_..." and hands the managed tensor to a ForeignMemory, whose release
// action calls the producer's deleter exactly once, with the GIL held, when
// the storage dies; after interpreter shutdown it skips the call (the
// producer's deleter may touch Python, as NumPy's does).
//
// Note [Read-only DLPack exports]: a zero-copy export holds a host lease
// until the consumer's deleter runs. A writable lease must also stop device
// reads (the consumer may write while the device reads), which froze the
// source for every consumer, JAX's immutable arrays included (issue 28). A
// read-only export holds a read lease instead: device reads of the source
// proceed, device writes (and host write guards) raise BusyError naming the
// export and how to end it. An export is read-only when the storage is (a
// read-only import), when the user asked for it (x.readonly_export(): a
// versioned capsule with READ_ONLY, for consumers that honour the flag), or
// when the consumer never writes: JAX, whose arrays are immutable, asks for a
// legacy capsule, which cannot carry the flag, so DeviceArray.__dlpack__
// (_array.py) tells by the module that called it. Every other legacy export
// of read-only data is refused: the consumer could not know it must not
// write.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "array/array.h"
#include "memory/dlpack_abi.h"

namespace hrx {

class RuntimeCore;

// --- export ------------------------------------------------------------------

// What the consumer asked __dlpack__ for, parsed from its Python arguments.
struct DlpackExportRequest {
    bool versioned = false;                    // max_version's major is 1 or newer
    std::optional<dlpack::DLDevice> device;    // dl_device; none: the array's own
    int copy = -1;                             // -1: as needed, 0: never, 1: always
    std::optional<int64_t> stream;             // none: None
    bool readonly_requested = false;           // x.readonly_export()
    bool never_writes = false;                 // the consumer never writes (JAX)
};

// An export's managed tensor (DLManagedTensorVersioned when versioned, else
// DLManagedTensor), owned until release(): destroying an unreleased one runs
// its deleter, which gives the host lease back.
class DlpackExport {
public:
    DlpackExport(void* managed, bool versioned) : managed_(managed), versioned_(versioned) {}
    DlpackExport(DlpackExport&& o) noexcept : managed_(o.managed_), versioned_(o.versioned_) { o.managed_ = nullptr; }
    DlpackExport(const DlpackExport&) = delete;
    DlpackExport& operator=(const DlpackExport&) = delete;
    DlpackExport& operator=(DlpackExport&&) = delete;
    ~DlpackExport();
    bool versioned() const { return versioned_; }
    void* get() const { return managed_; }
    // Hands the managed tensor on (to a capsule, then its consumer).
    void* release() {
        void* m = managed_;
        managed_ = nullptr;
        return m;
    }

private:
    void* managed_;
    bool versioned_;
};

// The device __dlpack_device__ names for `a`: kDLCPU for host-mapped
// placements, kDLROCM (the runtime's GPU) for GpuLocal.
dlpack::DLDevice dlpack_device(const Array& a);

// Negotiates and makes `a`'s export (Note [Read-only DLPack exports]): checks
// the request (BufferError for devices, copies and read-only data a capsule
// cannot carry; ValueError for streams), waits for `a`'s pending writers, then
// takes the lease (or makes the copy, IS_COPIED) the managed tensor holds.
DlpackExport dlpack_export(const Array& a, const DlpackExportRequest& r);

// --- import ------------------------------------------------------------------

// A producer's tensor, validated for a zero-copy import (dlpack_plan_import).
struct DlpackImportPlan {
    uint8_t* data = nullptr;       // the producer's data pointer
    uint64_t offset = 0;           // element [0, ...] at data + offset
    uint64_t bytes = 0;            // from there to the end of the extent (0: empty)
    std::vector<int64_t> shape;
    std::vector<int64_t> strides;  // in elements
    std::string dtype;             // hrxarray's name ("float32", "bfloat16", ...)
    bool readonly = false;
};

// Every check of a zero-copy import of `t` (from a versioned capsule with
// `flags`, or a legacy one), before anything is taken: BufferError for a
// non-CPU device, an unsupported dtype or negative strides; ValueError for an
// unsupported ndim or an extent that overflows. A legacy capsule cannot say
// writable, so its tensor is read-only, as NumPy imports it.
DlpackImportPlan dlpack_plan_import(const dlpack::DLTensor& t, bool versioned, uint64_t flags);

// The storage of an import: HostVisible memory of `runtime` over the planned
// extent, calling `release` (the producer's deleter) once when it dies.
struct DlpackImport {
    std::shared_ptr<Buffer> buffer;
    uint64_t offset = 0;
    std::vector<int64_t> shape;
    std::vector<int64_t> strides;  // in elements
    std::string dtype;
    bool readonly = false;
};
DlpackImport dlpack_import(RuntimeCore& runtime, DlpackImportPlan plan, std::function<void()> release);

}  // namespace hrx
