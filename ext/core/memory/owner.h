// What storage needs from the layers above it, as interfaces that memory/
// owns and the runtime implements: memory/ includes nothing of runtime/.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace hrx {

class StorageState;

// The owner of a storage (the runtime that allocated or imported it):
// statistics and the fork rule of Note [Fork] (runtime/scheduler.cpp).
class StorageOwner {
public:
    virtual ~StorageOwner() = default;
    // True in a fork child of the process that made the owner: its lanes do
    // not exist here, and its counters' mutexes may be held for ever.
    virtual bool forked() const noexcept = 0;
    // Throws Unsupported naming `op` when forked().
    virtual void check_not_forked(const std::string& op) const = 0;
    virtual void count_free(uint64_t bytes) = 0;
    virtual void count_maintenance(uint64_t bytes) = 0;
};

// Note [Lane threads never wait] (runtime/scheduler.h): a storage wait for
// device use on a thread that runs device regions may wait for work that
// cannot finish while it blocks. That layer installs its LaneWaits on the
// thread while a region runs; storage asks it before every such wait.
class LaneWaits {
public:
    // How often such a wait checks again that it can end (later
    // submissions may take leases the wait then depends on).
    static constexpr std::chrono::milliseconds kRecheck{20};
    // Throws Busy naming `op` when a device use of `storage` cannot end
    // while the running region waits; returns otherwise.
    virtual void refuse_stuck_wait(const std::string& op, const StorageState* storage) = 0;

protected:
    ~LaneWaits() = default;
};

// The LaneWaits of the region this thread is running, or null.
LaneWaits* lane_waits_here() noexcept;
void set_lane_waits_here(LaneWaits* waits) noexcept;

}  // namespace hrx
