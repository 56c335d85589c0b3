// The RAII owners of the two kinds of lease a caller takes by hand on a
// buffer's storage: a host mapping guard (Buffer.map_read/map_write) and a
// device-use lease (tests and diagnostics; the runtime takes the same leases
// at dispatch). Note [Guards are the memory layer's]: the bindings hold these
// objects and wrap them; taking and giving back the lease is here, beside the
// storage rules it follows (memory/storage.h), and each guard gives its lease
// back exactly once: on release() or when destroyed.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "memory/storage.h"

namespace hrx {

class HostMapping {
public:
    // Maps `buffer` for the host: refusals and waits are
    // StorageState::acquire_host's (a wait blocks the calling thread: callers
    // holding an interpreter lock release it first). Unsupported for
    // placements the host cannot map.
    static std::unique_ptr<HostMapping> acquire(std::shared_ptr<Buffer> buffer, bool write, bool wait);
    ~HostMapping() { release(); }
    HostMapping(const HostMapping&) = delete;
    HostMapping& operator=(const HostMapping&) = delete;

    // Idempotent; dropping a write guard marks the host as the last writer.
    void release() {
        if (active_.exchange(false)) buffer_->state()->release_host(write_);
    }
    bool active() const { return active_.load(); }
    bool writable() const { return write_; }
    const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
    // The mapped bytes; Message once released.
    uint8_t* data() const;

private:
    HostMapping(std::shared_ptr<Buffer> b, bool w) : buffer_(std::move(b)), write_(w) {}
    std::shared_ptr<Buffer> buffer_;
    bool write_ = false;
    std::atomic<bool> active_{true};
};

class DeviceLease {
public:
    // A device-use lease on `buffer`'s storage, as a dispatch takes.
    static std::unique_ptr<DeviceLease> acquire(const Buffer& buffer, Access access);
    ~DeviceLease() { release(); }
    DeviceLease(const DeviceLease&) = delete;
    DeviceLease& operator=(const DeviceLease&) = delete;

    // Idempotent; waiting host guards wake.
    void release() {
        if (active_.exchange(false)) state_->release_device_use(access_);
    }
    bool active() const { return active_.load(); }

private:
    DeviceLease(std::shared_ptr<StorageState> s, Access a) : state_(std::move(s)), access_(a) {}
    std::shared_ptr<StorageState> state_;
    Access access_;
    std::atomic<bool> active_{true};
};

// The view [offset, offset+length) of `buffer` (to its end when length is
// empty), and the sub-view of `view` relative to its start: Message naming
// `op` when out of bounds, for any offset and length (Note [Checked arithmetic]).
BufferView view_of(const std::shared_ptr<Buffer>& buffer, int64_t offset, std::optional<int64_t> length);
BufferView slice_of(const BufferView& view, int64_t offset, std::optional<int64_t> length);

}  // namespace hrx
