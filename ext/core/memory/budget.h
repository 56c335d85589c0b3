// Memory budgets (HRX MemoryBudget, MemoryReservation; hrx-runtime.md §2.7):
// storage gives its charge back here, the runtime charges allocations and
// NPU images.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace hrx {

// A byte budget shared by every runtime that is given it (HRX MemoryBudget).
class MemoryBudget {
public:
    explicit MemoryBudget(uint64_t limit);
    uint64_t limit() const { return limit_; }
    uint64_t used() const;
    // ValueError when n exceeds the whole budget, Busy when it cannot fit now.
    // Zero bytes always fit (HRX allows zero-byte reservations).
    void reserve(uint64_t n, const std::string& who);
    void release(uint64_t n);

private:
    uint64_t limit_;
    mutable std::mutex mu_;
    uint64_t used_ = 0;
};

// Bytes reserved from a MemoryBudget (HRX MemoryReservation), given back
// once: by release() or by the destructor, unless keep_forever() was called
// first (a quarantined owner keeps its charge until the process exits,
// hrx-runtime.md §2.7). The NPU image charge of a loaded kernel and the
// Python BudgetReservation are these.
class MemoryReservation {
public:
    // Reserves `bytes` (errors as MemoryBudget::reserve, nothing reserved then).
    MemoryReservation(std::shared_ptr<MemoryBudget> budget, uint64_t bytes, const std::string& who);
    ~MemoryReservation() { release(); }
    MemoryReservation(const MemoryReservation&) = delete;
    MemoryReservation& operator=(const MemoryReservation&) = delete;
    uint64_t bytes() const { return bytes_; }
    bool active() const { return active_.load(std::memory_order_acquire); }
    void release();
    void keep_forever() { active_.store(false, std::memory_order_release); }

private:
    std::shared_ptr<MemoryBudget> budget_;
    uint64_t bytes_;
    std::atomic<bool> active_{true};
};

}  // namespace hrx
