// The kernels' shared thread pool: the calling thread plus a fixed set of
// workers run the items of one job at a time. Every kernel family (matmul,
// elementwise, reductions) splits large calls over it; the lanes of every
// runtime share it, so the process never runs more compute threads than the
// machine (or HRXARRAY_NUM_THREADS) allows.
#pragma once
#include <cstddef>
#include <functional>

namespace hrx::kernels {

/// Threads a job may use, the caller included: min(online CPUs,
/// HRXARRAY_NUM_THREADS if set to a positive integer), at least 1. Read once.
/// HRXARRAY_POOL_THREADS=n (1..1024; for tests) makes the pool exactly n
/// threads, more than the host's CPUs too, so that a many-core host's
/// hand-offs run on this one.
std::size_t pool_threads() noexcept;

/// Threads for a job of `work` units when one thread's share should be at
/// least `per_thread` units (below that, handing a share over costs more than
/// computing it): floor(work / per_thread), between 1 and `most`.
inline std::size_t threads_for(double work, double per_thread, std::size_t most) noexcept {
    const double t = work / per_thread;
    if (!(t >= 2.0) || most < 2) return 1;
    return t >= static_cast<double>(most) ? most : static_cast<std::size_t>(t);
}

/// Runs fn(item) for every item < items, each exactly once, and returns when
/// all have finished. A caller arriving while another job runs (another lane,
/// another Python thread) runs its items inline instead of waiting, so a
/// kernel never blocks on another kernel. Items are handed out in ascending
/// order. If the pool cannot be created (thread creation failed) every item
/// runs inline. fn must not throw.
void pool_run(std::size_t items, const std::function<void(std::size_t)>& fn) noexcept;

/// What pool_probe saw: every item ran exactly once, all had finished when
/// pool_run returned, and how many distinct threads ran items.
struct PoolProbe {
    bool each_once;
    bool all_finished_at_return;
    std::size_t threads_used;
};

/// Runs `items` items of `item_us` microseconds each (sleeping, so that every
/// pool thread gets a CPU even on a small host) through pool_run and reports
/// what happened: the pool's contract as a test sees it.
PoolProbe pool_probe(std::size_t items, std::size_t item_us);

}  // namespace hrx::kernels
