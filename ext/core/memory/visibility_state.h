// Per-storage visibility state (HRX §2.4): which engine wrote last and which
// engines already see those bytes. The runtime asks it before a region runs
// and before a host guard is granted; it answers with the cache maintenance
// to perform. Tracking is allocation-wide, as HRX does for shared storage.
#pragma once
#include <atomic>
#include <cstdint>
#include <optional>

#include "common.h"
#include "memory/visibility.h"

namespace hrx {

// Note [Visibility read without the lock]: the state is one atomic word
// (last writer, visible mask). Changes happen under the owning storage's
// mutex, which orders each read-modify-write and the cache maintenance that
// goes with it; reads may come from anywhere. So a lane that finds the bytes
// already visible to its engine (make_visible), or finds itself already the
// only engine that sees them after a write (mark_written), changes nothing
// and takes no lock: in a loop of array operations on the same arrays that
// is every operation, and the lane no longer meets the submitter (which
// takes the storage's mutex for the use lease) on that mutex. A skipped
// change is one the locked path would have made a no-op too, so every
// interleaving is one the locked code allowed.
class VisibilityState {
public:
    // New storage starts written by its initialiser and visible to it only.
    explicit VisibilityState(Engine initial_writer) { mark_written(initial_writer); }

    Engine last_writer() const { return static_cast<Engine>(word_.load(std::memory_order_acquire) >> 8); }
    bool visible_to(Engine e) const { return (visible_mask() & bit(e)) != 0; }
    uint8_t visible_mask() const { return static_cast<uint8_t>(word_.load(std::memory_order_acquire) & 0xffu); }
    // True when `e` wrote last and no other engine has been made to see it:
    // mark_written(e) would change nothing.
    bool written_by_only(Engine e) const { return word_.load(std::memory_order_acquire) == pack(e, bit(e)); }

    // The maintenance that makes the bytes visible to `consumer`, or nothing
    // when they already are. HRX flushes when the host wrote last or the
    // consumer is the (non-coherent) NPU, and invalidates otherwise.
    std::optional<HostCacheOp> transition_for(Engine consumer) const {
        if (visible_to(consumer)) return std::nullopt;
        if (last_writer() == Engine::Host || consumer == Engine::Npu) return HostCacheOp::Flush;
        return HostCacheOp::Invalidate;
    }

    // The changes: under the owner's mutex (Note [Visibility read without the lock]).
    void mark_visible(Engine e) {
        word_.store(static_cast<uint16_t>(word_.load(std::memory_order_relaxed) | bit(e)), std::memory_order_release);
    }

    // After a write every other engine's view is stale.
    void mark_written(Engine e) { word_.store(pack(e, bit(e)), std::memory_order_release); }

private:
    static uint8_t bit(Engine e) { return static_cast<uint8_t>(1u << static_cast<unsigned>(e)); }
    static uint16_t pack(Engine writer, uint8_t visible) {
        return static_cast<uint16_t>((static_cast<unsigned>(writer) << 8) | visible);
    }
    std::atomic<uint16_t> word_{0};  // last writer << 8 | visible mask
};

}  // namespace hrx
