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
#include <vector>

#include <pthread.h>


namespace hrx::kernels {

namespace {

std::size_t configured_threads() noexcept {
    // A pool the size of a many-core host's, whatever this one has (tests).
    if (const char* env = std::getenv("HRXARRAY_POOL_THREADS")) {
        char* end = nullptr;
        const long v = std::strtol(env, &end, 10);
        if (end != env && *end == '\0' && v > 0 && v <= 1024) return static_cast<std::size_t>(v);
    }
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

// Note [Claims, not check-ins]
// A job's whole state is one 64-bit word: a generation tag (16 bits), the
// item count (24 bits) and the next unclaimed item (24 bits). A thread claims
// item i by a compare-and-swap of that word from next = i to i + 1; a claim
// can only succeed while the job it names is the current one, so whoever
// claims an item reads the job's function after the claim and it is still
// live (the job cannot end before that item is done). The caller claims
// items like any worker and then waits only for the claimed items to finish
// (`done_`), never for every worker to wake up and check in. Before, the
// caller waited for all T - 1 workers to pass through each job: on a loaded
// 2-core host a worker without a CPU held a 64^3 tile matmul that the caller
// had long finished for a whole scheduler slice (0.8 ms instead of 7 us),
// and on 16 cores each job waited for 15 wake-ups. A worker that wakes after
// the job ended finds nothing to claim and goes back to waiting. The word
// holding exactly the claimable item is all a claim needs, so an old value
// seen again after the tag wraps still names a real, unclaimed item. Jobs of
// more than 2^24 - 1 items run as several jobs.

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
        for (std::size_t base = 0; base < items; base += kMaxItems) {
            const std::size_t n = std::min(kMaxItems, items - base);
            if (base == 0 && n == items) {
                job(n, fn);
            } else {
                const std::function<void(std::size_t)> part = [&](std::size_t i) { fn(base + i); };
                job(n, part);
            }
        }
    }

private:
    static constexpr std::size_t kMaxItems = (std::size_t{1} << 24) - 1;
    static std::uint64_t tag(std::uint64_t s) noexcept { return s >> 48; }
    static std::size_t count(std::uint64_t s) noexcept { return static_cast<std::size_t>((s >> 24) & kMaxItems); }
    static std::size_t next(std::uint64_t s) noexcept { return static_cast<std::size_t>(s & kMaxItems); }
    static bool claimable(std::uint64_t s) noexcept { return next(s) < count(s); }

    void job(std::size_t items, const std::function<void(std::size_t)>& fn) {
        fn_ = &fn;
        done_.store(0, std::memory_order_relaxed);
        {
            // Under the mutex, so a worker between its check and its wait
            // cannot miss the notification.
            std::lock_guard<std::mutex> lock(mu_);
            const std::uint64_t t = (tag(state_.load(std::memory_order_relaxed)) + 1) & 0xffff;
            state_.store((t << 48) | (static_cast<std::uint64_t>(items) << 24), std::memory_order_release);
        }
        cv_.notify_all();
        claim_and_run();
        auto finished = [&] { return done_.load(std::memory_order_acquire) == items; };
        if (!spin_until(finished)) {
            std::unique_lock<std::mutex> lock(mu_);
            done_cv_.wait(lock, finished);
        }
        fn_ = nullptr;
    }

    // Claims and runs items of the current job until none is left.
    void claim_and_run() {
        std::uint64_t s = state_.load(std::memory_order_acquire);
        while (claimable(s)) {
            if (!state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel, std::memory_order_acquire))
                continue;
            const std::size_t items = count(s);
            (*fn_)(next(s));
            if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == items) {
                std::lock_guard<std::mutex> lock(mu_);
                done_cv_.notify_one();
            }
            s = state_.load(std::memory_order_acquire);
        }
    }

    void worker() {
        auto work = [this] { return claimable(state_.load(std::memory_order_acquire)); };
        for (;;) {
            if (!spin_until(work)) {
                std::unique_lock<std::mutex> lock(mu_);
                cv_.wait(lock, work);
            }
            claim_and_run();
        }
    }

    const std::size_t threads_;
    std::mutex busy_;
    std::mutex mu_;
    std::condition_variable cv_, done_cv_;
    const std::function<void(std::size_t)>* fn_ = nullptr;
    std::atomic<std::uint64_t> state_{0};
    std::atomic<std::size_t> done_{0};
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

PoolProbe pool_probe(std::size_t items, std::size_t item_us) {
    std::vector<std::atomic<int>> runs(items);
    std::atomic<std::size_t> finished{0};
    std::mutex mu;
    std::vector<std::thread::id> ids;
    pool_run(items, [&](std::size_t i) {
        {
            std::lock_guard<std::mutex> lock(mu);
            const auto me = std::this_thread::get_id();
            if (std::find(ids.begin(), ids.end(), me) == ids.end()) ids.push_back(me);
        }
        std::this_thread::sleep_for(std::chrono::microseconds(item_us));
        runs[i].fetch_add(1, std::memory_order_relaxed);
        finished.fetch_add(1, std::memory_order_release);
    });
    const bool all_finished = finished.load(std::memory_order_acquire) == items;
    bool once = true;
    for (const auto& r : runs) once = once && r.load(std::memory_order_relaxed) == 1;
    return {once, all_finished, ids.size()};
}

}  // namespace hrx::kernels
