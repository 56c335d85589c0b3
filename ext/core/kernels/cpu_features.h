// What the host CPU (and its operating system) lets the emulated devices'
// kernels use. The kernels dispatch at run time on best_kernel_path(), so one
// wheel runs everywhere; `python -m hrxarray doctor` reports the same facts.
#pragma once
#include <string>

namespace hrx::kernels {

// Instruction-set facts as the CPU reports them (cpuid), plus the two
// operating-system facts without which some of them cannot be used. A CPU bit
// alone is not permission to execute: see os_avx512 and amx_permitted, and use
// best_kernel_path() to choose code.
struct CpuFeatures {
    // "x86_64", "aarch64", ... from the compiler's target macros.
    std::string arch;
    // Marketing name from cpuid 0x80000002..4 on x86 (trimmed); "" elsewhere.
    std::string brand;
    bool avx2 = false;
    bool fma = false;
    bool avx512f = false;
    bool avx512bw = false;
    bool avx512vl = false;
    // VCVTNE2PS2BF16 / VDPBF16PS: native fp32->bf16 rounding and bf16 dots.
    bool avx512_bf16 = false;
    bool amx_tile = false;
    bool amx_bf16 = false;
    // Linux grants AMX tile data state per process on request
    // (arch_prctl ARCH_REQ_XCOMP_PERM); without the grant the first tile
    // instruction kills the process with SIGILL, so the CPU bits do not suffice.
    bool amx_permitted = false;
    // XCR0 says the OS saves opmask and zmm state on context switches; without
    // it AVX-512 instructions fault even where the CPU has them.
    bool os_avx512 = false;
};

// Detected once, on first call, thread-safely. Never throws: if detection
// cannot run, every flag is false and the kernels take the portable path.
const CpuFeatures& cpu_features() noexcept;

// The fastest kernel family usable in this process: "amx_bf16",
// "avx512_bf16", "avx512", "avx2" or "portable". Each x86 path implies the
// ones after it except "portable", which needs nothing. The returned string
// is static.
const char* best_kernel_path() noexcept;

}  // namespace hrx::kernels
