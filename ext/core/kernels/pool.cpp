#include "kernels/pool.h"

#include "poll.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <pthread.h>


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

// How long a worker (or a caller waiting for workers) polls before it blocks.
// Waking a thread blocked on a condition variable costs 20-70 us on a
// virtual machine, more than a whole 256^3 matmul; kernels arrive in bursts,
// so a short poll after each job keeps the next one's hand-off cheap.
constexpr std::chrono::microseconds kSpin{200};

// Polls pred for up to kSpin without yielding (the pool's threads are the
// ones with work); true if it became true.
template <class Pred>
bool spin_until(Pred pred) {
    return poll_until(kSpin, /*yield=*/false, pred);
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
            active_.store(threads_ - 1);
            generation_.fetch_add(1, std::memory_order_release);
        }
        cv_.notify_all();
        drain();
        if (!spin_until([this] { return active_.load(std::memory_order_acquire) == 0; })) {
            std::unique_lock<std::mutex> lock(mu_);
            done_cv_.wait(lock, [this] { return active_.load() == 0; });
        }
        fn_ = nullptr;
    }

private:
    void drain() {
        for (std::size_t i; (i = next_.fetch_add(1)) < items_;) (*fn_)(i);
    }

    void worker() {
        std::uint64_t seen = 0;
        for (;;) {
            if (!spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; })) {
                std::unique_lock<std::mutex> lock(mu_);
                cv_.wait(lock, [&] { return generation_.load() != seen; });
            }
            seen = generation_.load(std::memory_order_acquire);
            drain();
            if (active_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                // Under the mutex, so a caller between its check and its wait
                // cannot miss the notification.
                std::lock_guard<std::mutex> lock(mu_);
                done_cv_.notify_one();
            }
        }
    }

    const std::size_t threads_;
    std::mutex busy_;
    std::mutex mu_;
    std::condition_variable cv_, done_cv_;
    const std::function<void(std::size_t)>* fn_ = nullptr;
    std::size_t items_ = 0;
    std::atomic<std::size_t> next_{0};
    std::atomic<std::size_t> active_{0};
    std::atomic<std::uint64_t> generation_{0};
};

// A fork child has none of the pool's threads, so a job there would wait for
// ever for its workers (runtime/scheduler.cpp, Note [Fork]). The child
// forgets the pool (leaked: its mutexes may have been held at the fork) and
// its next job builds a new one. The creation lock is held across fork() so
// that the child never inherits it locked.
std::atomic<Pool*> g_pool{nullptr};
std::atomic<bool> g_pool_failed{false};
std::mutex g_pool_create;

void lock_pool_creation() { g_pool_create.lock(); }
void unlock_pool_creation() { g_pool_create.unlock(); }
void forget_pool_in_child() {
    g_pool.store(nullptr, std::memory_order_relaxed);
    g_pool_failed.store(false, std::memory_order_relaxed);
    g_pool_create.unlock();
}

Pool* pool() noexcept {
    Pool* p = g_pool.load(std::memory_order_acquire);
    if (p || g_pool_failed.load(std::memory_order_relaxed)) return p;
    try {
        static const bool watching =
            pthread_atfork(&lock_pool_creation, &unlock_pool_creation, &forget_pool_in_child) == 0;
        (void)watching;
        std::lock_guard<std::mutex> lock(g_pool_create);
        p = g_pool.load(std::memory_order_relaxed);
        if (!p) {
            p = new Pool(configured_threads());
            g_pool.store(p, std::memory_order_release);
        }
        return p;
    } catch (...) {
        g_pool_failed.store(true, std::memory_order_relaxed);
        return nullptr;
    }
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
