#include "memory/foreign.h"

#include <atomic>
#include <utility>

namespace hrx {

ForeignMemory::ForeignMemory(uint8_t* data, uint64_t bytes, BackingDesc backing, std::function<void()> release)
    : data_(data), bytes_(bytes), backing_(backing), release_(std::move(release)) {}

ForeignMemory::~ForeignMemory() {
    // Destructors must not throw; a release action that does is a bug in the
    // importer, and the pages are then left to their producer.
    if (!release_) return;
    auto release = std::move(release_);
    release_ = nullptr;
    try {
        release();
    } catch (...) {
    }
}

void ForeignMemory::cache_control(HostCacheOp, uint64_t, uint64_t) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

}  // namespace hrx
