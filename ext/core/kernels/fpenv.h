// Scoped floating-point environments for the matmul kernels (internal).
// A kernel that promises particular numerics sets the control word itself on
// every thread it computes on, because the caller's (or a pool worker's) mode
// is whatever the last library left there.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HRX_FPENV_X86 1
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
#define HRX_FPENV_ARM64 1
#endif

namespace hrx::kernels {

/// Round-to-nearest-even for the lifetime of the object on this thread, and
/// either no denormals (flush_denormals: DAZ|FTZ on x86, FPCR.FZ on arm64,
/// the NPU's datapath) or full IEEE gradual underflow. The previous control
/// word is restored on destruction.
class FpEnv {
public:
    explicit FpEnv(bool flush_denormals) noexcept {
#if defined(HRX_FPENV_X86)
        saved_ = _mm_getcsr();
        // 0x8000 FTZ, 0x0040 DAZ; clearing 0x6000 selects round-to-nearest.
        const unsigned base = saved_ & ~(0x6000u | 0x8040u);
        _mm_setcsr(flush_denormals ? (base | 0x8040u) : base);
#elif defined(HRX_FPENV_ARM64)
        saved_ = __builtin_aarch64_get_fpcr64();
        // Bit 24 FZ; bits 23:22 RMode = 00 (nearest).
        const unsigned long long base = saved_ & ~((3ull << 22) | (1ull << 24));
        __builtin_aarch64_set_fpcr64(flush_denormals ? (base | (1ull << 24)) : base);
#else
        (void)flush_denormals;
#endif
    }
    ~FpEnv() {
#if defined(HRX_FPENV_X86)
        _mm_setcsr(saved_);
#elif defined(HRX_FPENV_ARM64)
        __builtin_aarch64_set_fpcr64(saved_);
#endif
    }
    FpEnv(const FpEnv&) = delete;
    FpEnv& operator=(const FpEnv&) = delete;

private:
#if defined(HRX_FPENV_X86)
    unsigned saved_ = 0;
#elif defined(HRX_FPENV_ARM64)
    unsigned long long saved_ = 0;
#endif
};

}  // namespace hrx::kernels
