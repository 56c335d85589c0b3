// Fault injection (tests and failure drills): one armed message that the
// next matching dispatch throws as a device fault would (hrx-runtime.md's
// failure rules then apply: its storages are poisoned and quarantined).
#pragma once
#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace hrx {

// Arming (a Python thread) and taking (a lane) may race, so the message is
// only touched under the mutex; the flag lets take() skip it, which keeps
// the per-dispatch cost one atomic load.
class FaultSlot {
public:
    // Arms `message` for the next take() of `key` ("" matches any key). Busy
    // naming `target` when one is armed already.
    void arm(const std::string& message, const std::string& target, std::string key = {});
    // The armed message when `key` matches, disarming it; else nothing.
    std::optional<std::string> take(std::string_view key = {}) {
        if (!armed_.load(std::memory_order_acquire)) return std::nullopt;
        return take_slow(key);
    }

private:
    std::optional<std::string> take_slow(std::string_view key);
    std::atomic<bool> armed_{false};
    std::mutex mu_;
    std::optional<std::string> message_;
    std::string key_;
};

}  // namespace hrx
