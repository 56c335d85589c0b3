// Timeouts as callers give them: seconds as a double, or none for "no limit".
//
// Note [Timeouts]: std::chrono turns a double duration into the clock's
// integer nanoseconds, which overflows past about 292 years (undefined; in
// practice a deadline in the past): wait(timeout=inf) returned False at once
// and result(timeout=1e10) raised TimeoutError at once. A Deadline keeps the
// time left as a double and hands out waits of at most a day, so a timeout
// too large for the clock (inf included) simply waits. A negative timeout
// means "do not wait", as in concurrent.futures and threading.Event.wait;
// NaN is refused where the timeout enters (bindings), never seen here.
#pragma once
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>

namespace hrx {

class Deadline {
public:
    explicit Deadline(std::optional<double> seconds)
        : start_(std::chrono::steady_clock::now()), unbounded_(!seconds), seconds_(seconds ? *seconds : 0.0) {}

    bool unbounded() const { return unbounded_; }
    bool passed() const { return !unbounded_ && !(left() > 0); }

    // The next wait: what is left, but at most a day (never overflows).
    std::chrono::nanoseconds slice() const {
        constexpr double kDay = 86400.0;
        const double l = unbounded_ ? kDay : left();
        const double s = l > kDay ? kDay : l > 0 ? l : 0.0;
        return std::chrono::nanoseconds(static_cast<int64_t>(s * 1e9));
    }

    // Waits on `cv` until `done()` or the deadline; the result of done().
    template <class Done>
    bool wait(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, Done done) const {
        while (!done()) {
            if (passed()) return false;
            cv.wait_for(lock, slice());
        }
        return true;
    }

private:
    double left() const {
        return seconds_ - std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }

    std::chrono::steady_clock::time_point start_;
    bool unbounded_;
    double seconds_;
};

}  // namespace hrx
