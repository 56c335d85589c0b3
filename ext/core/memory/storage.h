// Storage and buffer handles.
//
// Note [Storage and handles]: one StorageState per backing allocation holds
// everything HRX says aliases share: lifetime, host-guard state, device-use
// leases, poison and visibility state. A Buffer is one handle on it with its
// own placement (an adopted alias is Shared while its source is GpuLocal).
// Every state change happens under the state's mutex, except the two a lane
// makes on every operation (Note [Device leases end without the lock] in
// storage.cpp; Note [Visibility read without the lock] in
// visibility_state.h); waits use its condition variable, so a host guard
// blocked on device work wakes when a lease drops.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common.h"
#include "memory/owner.h"
#include "memory/placement.h"
#include "memory/visibility_state.h"
#include "provider/provider.h"

namespace hrx {

class MemoryBudget;

// A snapshot of the guard state, for diagnostics and tests.
struct GuardSnapshot {
    int host_readers = 0;
    bool host_writer = false;
    int host_leases = 0;
    int writable_host_leases = 0;
    int device_readers = 0;
    int device_writers = 0;
    bool external = false;
};

class StorageState {
public:
    // `readonly`: memory whose owner forbids writes (a DLPack import without
    // write permission); every write through any handle is refused.
    // `owner` is the runtime that allocated or imported the memory.
    StorageState(std::shared_ptr<StorageOwner> owner, std::unique_ptr<provider::Memory> memory,
                 Engine initial_writer, uint64_t id, std::shared_ptr<MemoryBudget> budget,
                 bool readonly = false);
    ~StorageState();
    StorageState(const StorageState&) = delete;
    StorageState& operator=(const StorageState&) = delete;

    uint64_t id() const { return id_; }
    uint64_t bytes() const { return bytes_; }
    uint8_t* data() const { return memory_->host_pointer(); }
    const provider::Memory& memory() const { return *memory_; }
    const std::shared_ptr<StorageOwner>& owner() const { return owner_; }
    bool readonly() const { return readonly_; }
    // ValueError (Message) naming `who` when `writes` and the storage is read-only.
    void check_writable(bool writes, const std::string& who) const;

    // Host mapping guards (HRX §1.8). `who` names the operation and buffer
    // for messages. Blocking variants wait for conflicting device use; the
    // caller must not hold the GIL.
    void acquire_host(bool write, bool wait, const std::string& who);
    void release_host(bool write);
    // Host leases (DLPack exports, zero-copy views) coexist with each other
    // and with read guards; a writable lease also blocks device reads.
    // `label` names the lease in the Busy messages of device work it blocks
    // ("DLPack export (versioned, writable) of ..."). With `wait`, conflicting
    // device use (pending writers; pending readers too for a writable lease)
    // is waited for (the caller must not hold the GIL); without, it is Busy.
    // Returns the lease's id for release_host_lease.
    // `label` must be a static string; `who` is only read to build error messages.
    uint64_t acquire_host_lease(bool writable, std::string_view who, const char* label = "host lease",
                                bool wait = false);
    void release_host_lease(uint64_t id);
    // Whether a lease of this kind could be taken now without waiting for
    // device use (host-side conflicts and poison are not considered).
    bool host_lease_would_wait(bool writable) const;

    // Device-use leases: taken by the runtime at dispatch, dropped at retirement.
    void acquire_device_use(Access access);
    // As acquire_device_use, but Busy (changing nothing) when the binding
    // conflicts with a live host guard or lease, and DeviceLost when the
    // storage is poisoned (checked first).
    void acquire_device_use_checked(Access access, const std::string& who);
    void release_device_use(Access access);
    // Busy when binding the storage for `access` conflicts with a live host
    // guard or lease; the runtime calls it when a graph is submitted.
    void check_device_binding(Access access, const std::string& who) const;

    // Poison (HRX: a failed region poisons every storage its graph used).
    void poison(const std::string& message);
    std::optional<std::string> poison_message() const;
    bool poisoned() const { return poisoned_.load(std::memory_order_acquire); }
    void throw_if_poisoned(const std::string& who) const;
    // Quarantined storage keeps its live bytes and budget charge for ever.
    void quarantine();

    // Visibility: make the bytes visible to `engine`, performing and counting
    // whole-allocation maintenance when needed. Returns the bytes maintained.
    uint64_t make_visible(Engine engine);
    void mark_written(Engine engine);
    // Checked mode: raise when `engine` would read bytes not yet made visible
    // to it, i.e. when a transition was skipped. Always checks when asked
    // directly; the runtime calls it only in checked mode.
    void check_engine_access(Engine engine, Access access, const std::string& who) const;
    Engine last_writer() const;
    uint8_t visible_mask() const;
    bool needs_host_maintenance() const;
    // A dma-buf import for more consumers; kept alive with the storage.
    const provider::Memory& add_import(std::unique_ptr<provider::Memory> alias);

    GuardSnapshot guards() const;
    // Note [Write version]: counts the writes submitted to the storage (device
    // work when its use lease is taken at submission, host write guards and
    // writable leases when they end), so (id, write_version) names the bytes without reading
    // them (Dask's tokens). Conservative: any write anywhere in the allocation
    // changes it.
    uint64_t write_version() const { return write_version_.load(std::memory_order_acquire); }
    void note_write() { write_version_.fetch_add(1, std::memory_order_acq_rel); }
    void host_cache_control(HostCacheOp op, uint64_t offset, uint64_t length);

private:
    // One wait (under `lock`) for device use conflicting with `write` to
    // drop; the caller re-checks.
    void wait_for_device_use(std::unique_lock<std::mutex>& lock, bool write, const std::string& who);
    uint64_t make_visible_locked(Engine engine);
    bool host_conflict_locked(bool write, std::string* why) const;
    bool device_conflict_locked(bool write) const;
    void check_device_binding_locked(Access access, const std::string& who) const;

    std::shared_ptr<StorageOwner> owner_;
    std::unique_ptr<provider::Memory> memory_;
    std::vector<std::unique_ptr<provider::Memory>> imports_;
    uint64_t id_;
    uint64_t bytes_;
    std::shared_ptr<MemoryBudget> budget_;
    const bool readonly_;

    mutable std::mutex mu_;
    std::condition_variable changed_;
    int host_readers_ = 0;
    bool host_writer_ = false;
    int host_leases_ = 0;
    int writable_host_leases_ = 0;
    struct LeaseInfo {
        uint64_t id;
        bool writable;
        const char* label;
    };
    std::vector<LeaseInfo> leases_;
    uint64_t next_lease_ = 1;
    // Raised under mu_, lowered without it (Note [Device leases end without the lock]).
    std::atomic<int> device_readers_{0};
    std::atomic<int> device_writers_{0};
    std::atomic<int> device_waiters_{0};  // threads in wait_for_device_use
    bool external_ = false;
    std::optional<std::string> poison_;
    std::atomic<bool> poisoned_{false};  // poison_ is set, readable without mu_
    std::atomic<uint64_t> write_version_{0};
    bool quarantined_ = false;
    bool needs_maintenance_ = true;
    VisibilityState visibility_;
};

// One handle on a storage (HRX execution::Buffer). Cheap to copy; copies are
// aliases of the same storage.
class Buffer {
public:
    Buffer(std::shared_ptr<StorageState> state, Placement placement, BackingDesc backing)
        : state_(std::move(state)), placement_(std::move(placement)), backing_(backing) {}

    const std::shared_ptr<StorageState>& state() const { return state_; }
    const Placement& placement() const { return placement_; }
    const BackingDesc& backing() const { return backing_; }
    uint64_t nbytes() const { return state_->bytes(); }
    // "Buffer#3 (Shared(npu:0), 4096 bytes)": every message names its buffer.
    std::string describe() const;
    // Throws Unsupported for placements the host cannot map; `op` names the
    // operation and this buffer.
    void require_host_mapped(const std::string& op) const;

private:
    std::shared_ptr<StorageState> state_;
    Placement placement_;
    BackingDesc backing_;
};

// A window on a buffer (HRX BufferView); keeping it alive keeps the storage alive.
struct BufferView {
    std::shared_ptr<Buffer> buffer;
    uint64_t offset = 0;
    uint64_t length = 0;
    uint8_t* data() const { return buffer->state()->data() + offset; }
    bool overlaps(const BufferView& o) const {
        return buffer->state() == o.buffer->state() && offset < o.offset + o.length && o.offset < offset + length;
    }
};

}  // namespace hrx
