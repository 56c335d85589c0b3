// Per-storage visibility state (HRX §2.4): which engine wrote last and which
// engines already see those bytes. The runtime asks it before a region runs
// and before a host guard is granted; it answers with the cache maintenance
// to perform. Tracking is allocation-wide, as HRX does for shared storage.
#pragma once
#include <cstdint>
#include <optional>

#include "common.h"
#include "memory/visibility.h"

namespace hrx {

class VisibilityState {
public:
    // New storage starts written by its initialiser and visible to it only.
    explicit VisibilityState(Engine initial_writer) { mark_written(initial_writer); }

    Engine last_writer() const { return last_writer_; }
    bool visible_to(Engine e) const { return (visible_ & bit(e)) != 0; }
    uint8_t visible_mask() const { return visible_; }

    // The maintenance that makes the bytes visible to `consumer`, or nothing
    // when they already are. HRX flushes when the host wrote last or the
    // consumer is the (non-coherent) NPU, and invalidates otherwise.
    std::optional<HostCacheOp> transition_for(Engine consumer) const {
        if (visible_to(consumer)) return std::nullopt;
        if (last_writer_ == Engine::Host || consumer == Engine::Npu) return HostCacheOp::Flush;
        return HostCacheOp::Invalidate;
    }

    void mark_visible(Engine e) { visible_ |= bit(e); }

    // After a write every other engine's view is stale.
    void mark_written(Engine e) {
        last_writer_ = e;
        visible_ = bit(e);
    }

private:
    static uint8_t bit(Engine e) { return static_cast<uint8_t>(1u << static_cast<unsigned>(e)); }
    Engine last_writer_ = Engine::Host;
    uint8_t visible_ = 0;
};

}  // namespace hrx
