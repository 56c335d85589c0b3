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
std::size_t pool_threads() noexcept;

/// Runs fn(item) for every item < items, each exactly once, and returns when
/// all have finished. A caller arriving while another job runs (another lane,
/// another Python thread) runs its items inline instead of waiting, so a
/// kernel never blocks on another kernel. Items are handed out in ascending
/// order. If the pool cannot be created (thread creation failed) every item
/// runs inline. fn must not throw.
void pool_run(std::size_t items, const std::function<void(std::size_t)>& fn) noexcept;

}  // namespace hrx::kernels
