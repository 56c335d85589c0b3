#include "kernels/pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace hrx::kernels {

namespace {

std::size_t configured_threads() noexcept {
    unsigned hw = std::thread::hardware_concurrency();
    std::size_t n = hw ? hw : 1;
    if (const char* env = std::getenv("HRXARRAY_NUM_THREADS")) {
        char* end = nullptr;
        const long v = std::strtol(env, &end, 10);
        if (end != env && v > 0) n = std::min<std::size_t>(n, static_cast<std::size_t>(v));
    }
    return std::max<std::size_t>(n, 1);
}

// The pool is never destroyed (its threads block forever once the process
// has nothing left to do), which keeps interpreter exit simple.
class Pool {
public:
    explicit Pool(std::size_t threads) : threads_(threads) {
        for (std::size_t w = 1; w < threads_; ++w) std::thread([this] { worker(); }).detach();
    }

    std::size_t threads() const noexcept { return threads_; }

    void run(std::size_t items, const std::function<void(std::size_t)>& fn) {
        std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
        if (!busy.owns_lock() || threads_ < 2 || items < 2) {
            for (std::size_t i = 0; i < items; ++i) fn(i);
            return;
        }
        {
            std::lock_guard<std::mutex> lock(mu_);
            fn_ = &fn;
            items_ = items;
            next_.store(0);
            active_ = threads_ - 1;
            ++generation_;
        }
        cv_.notify_all();
        drain();
        std::unique_lock<std::mutex> lock(mu_);
        done_cv_.wait(lock, [this] { return active_ == 0; });
        fn_ = nullptr;
    }

private:
    void drain() {
        for (std::size_t i; (i = next_.fetch_add(1)) < items_;) (*fn_)(i);
    }

    void worker() {
        std::uint64_t seen = 0;
        for (;;) {
            {
                std::unique_lock<std::mutex> lock(mu_);
                cv_.wait(lock, [&] { return generation_ != seen; });
                seen = generation_;
            }
            drain();
            std::lock_guard<std::mutex> lock(mu_);
            if (--active_ == 0) done_cv_.notify_one();
        }
    }

    const std::size_t threads_;
    std::mutex busy_;
    std::mutex mu_;
    std::condition_variable cv_, done_cv_;
    const std::function<void(std::size_t)>* fn_ = nullptr;
    std::size_t items_ = 0;
    std::atomic<std::size_t> next_{0};
    std::size_t active_ = 0;
    std::uint64_t generation_ = 0;
};

Pool* pool() noexcept {
    static Pool* p = [] () -> Pool* {
        try {
            return new Pool(configured_threads());
        } catch (...) {
            return nullptr;
        }
    }();
    return p;
}

}  // namespace

std::size_t pool_threads() noexcept {
    Pool* p = pool();
    return p ? p->threads() : 1;
}

void pool_run(std::size_t items, const std::function<void(std::size_t)>& fn) noexcept {
    Pool* p = pool();
    if (p) {
        try {
            p->run(items, fn);
            return;
        } catch (...) {
            // Locking failed (system error): fall through and run inline;
            // items already done run again, which kernels tolerate because
            // every item writes only its own outputs.
        }
    }
    for (std::size_t i = 0; i < items; ++i) fn(i);
}

}  // namespace hrx::kernels
