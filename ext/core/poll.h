// Bounded polling before blocking. The kernels' pool workers, the lanes and
// the completion waiters all poll a condition for a short while before they
// block on a condition variable: waking a blocked thread costs tens of
// microseconds on a virtual machine, more than the work they wait for.
#pragma once
#include <chrono>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace hrx {

// One spin-wait hint to the CPU (lets a sibling hardware thread run).
inline void cpu_pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

// Polls done() for up to `limit`, pausing between checks; every 64 checks it
// looks at the clock and, when `yield` is set, gives the CPU to any other
// runnable thread on it. True once done() held, false when `limit` passed.
template <class Done>
bool poll_until(std::chrono::microseconds limit, bool yield, Done done) noexcept {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (unsigned i = 1;; ++i) {
        if (done()) return true;
        cpu_pause();
        if (i % 64 == 0) {
            if (std::chrono::steady_clock::now() > deadline) return false;
            if (yield) std::this_thread::yield();
        }
    }
}

}  // namespace hrx
