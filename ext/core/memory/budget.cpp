#include "memory/budget.h"

#include <algorithm>

#include "errors.h"

namespace hrx {

MemoryBudget::MemoryBudget(uint64_t limit) : limit_(limit) {
    if (limit == 0) fail(ErrorKind::Message, "MemoryBudget: the limit must be at least 1 byte");
}

uint64_t MemoryBudget::used() const {
    std::lock_guard<std::mutex> lock(mu_);
    return used_;
}

void MemoryBudget::reserve(uint64_t n, const std::string& who) {
    std::lock_guard<std::mutex> lock(mu_);
    if (n > limit_)
        fail(ErrorKind::Message, who + ": " + std::to_string(n) + " bytes exceed the whole memory budget of " +
                                     std::to_string(limit_) + " bytes");
    if (n > limit_ - used_)
        fail(ErrorKind::Busy, who + ": memory budget exhausted: " + std::to_string(n) + " bytes requested, " +
                                  std::to_string(limit_ - used_) + " of " + std::to_string(limit_) + " free");
    used_ += n;
}

void MemoryBudget::release(uint64_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    used_ -= std::min(n, used_);
}

MemoryReservation::MemoryReservation(std::shared_ptr<MemoryBudget> budget, uint64_t bytes, const std::string& who)
    : budget_(std::move(budget)), bytes_(bytes) {
    budget_->reserve(bytes_, who);
}

void MemoryReservation::release() {
    if (active_.exchange(false, std::memory_order_acq_rel)) budget_->release(bytes_);
}

}  // namespace hrx
