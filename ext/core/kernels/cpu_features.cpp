#include "kernels/cpu_features.h"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__x86_64__) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace hrx::kernels {
namespace {

// Everything cpu_features() exposes, plus the one OS fact that only the path
// choice needs: AVX2 code also faults unless the OS saves ymm state.
struct Detected {
    CpuFeatures features;
    bool os_avx = false;
};

constexpr const char* compiled_arch() {
#if defined(__x86_64__)
    return "x86_64";
#elif defined(__aarch64__)
    return "aarch64";
#elif defined(__i386__)
    return "x86";
#elif defined(__arm__)
    return "arm";
#elif defined(__riscv) && __riscv_xlen == 64
    return "riscv64";
#elif defined(__powerpc64__)
    return "ppc64";
#elif defined(__s390x__)
    return "s390x";
#else
    return "unknown";
#endif
}

#if defined(__x86_64__)

struct CpuidRegs {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

// __get_cpuid_count checks the leaf against the maximum first, so asking for
// a leaf the CPU lacks yields zeros instead of the highest leaf's data (which
// is what the raw instruction returns on Intel).
CpuidRegs cpuid(unsigned leaf, unsigned subleaf) {
    CpuidRegs r;
    if (!__get_cpuid_count(leaf, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx)) {
        r = CpuidRegs{};
    }
    return r;
}

bool bit(unsigned reg, unsigned n) { return ((reg >> n) & 1u) != 0; }

// Inline asm rather than _xgetbv() so this file needs no -mxsave: it must be
// callable on any x86-64, and only runs after OSXSAVE says it is legal.
std::uint64_t xgetbv0() {
    std::uint32_t lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0u));
    return (std::uint64_t{hi} << 32) | lo;
}

std::string brand_string() {
    if (cpuid(0x80000000u, 0).eax < 0x80000004u) {
        return {};
    }
    char text[49] = {};
    for (unsigned i = 0; i < 3; ++i) {
        const CpuidRegs r = cpuid(0x80000002u + i, 0);
        const unsigned words[4] = {r.eax, r.ebx, r.ecx, r.edx};
        std::memcpy(text + 16 * i, words, sizeof words);
    }
    // Vendors pad the 48 bytes with leading spaces (older Intel) or NULs.
    std::string s(text);
    const auto first = s.find_first_not_of(' ');
    if (first == std::string::npos) {
        return {};
    }
    const auto last = s.find_last_not_of(' ');
    return s.substr(first, last - first + 1);
}

// Linux keeps AMX tile data (8 KiB per thread) out of every signal frame and
// context switch until a process asks for it; the kernel refuses when the
// sigaltstack of any thread is too small or the feature is not enabled.
bool request_amx_permission() {
#if defined(__linux__)
    constexpr long kArchReqXcompPerm = 0x1023;
    constexpr long kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
    return false;
#endif
}

void detect_x86(Detected& d) {
    CpuFeatures& f = d.features;
    f.brand = brand_string();

    const unsigned max_leaf = cpuid(0, 0).eax;
    if (max_leaf < 1) {
        return;
    }
    const CpuidRegs l1 = cpuid(1, 0);
    f.fma = bit(l1.ecx, 12);
    const bool osxsave = bit(l1.ecx, 27);
    const bool avx = bit(l1.ecx, 28);

    if (max_leaf >= 7) {
        const CpuidRegs l7 = cpuid(7, 0);
        f.avx2 = bit(l7.ebx, 5);
        f.avx512f = bit(l7.ebx, 16);
        f.avx512bw = bit(l7.ebx, 30);
        f.avx512vl = bit(l7.ebx, 31);
        f.amx_bf16 = bit(l7.edx, 22);
        f.amx_tile = bit(l7.edx, 24);
        // Subleaf 1 exists only when subleaf 0 reports it in EAX.
        if (l7.eax >= 1) {
            f.avx512_bf16 = bit(cpuid(7, 1).eax, 5);
        }
    }

    // Without OSXSAVE, xgetbv raises #UD and no extended state is saved.
    if (osxsave) {
        const std::uint64_t xcr0 = xgetbv0();
        constexpr std::uint64_t kSseYmm = (1u << 1) | (1u << 2);
        constexpr std::uint64_t kOpmaskZmm = (1u << 5) | (1u << 6) | (1u << 7);
        constexpr std::uint64_t kTileCfgData = (1u << 17) | (1u << 18);
        d.os_avx = avx && (xcr0 & kSseYmm) == kSseYmm;
        f.os_avx512 = d.os_avx && (xcr0 & kOpmaskZmm) == kOpmaskZmm;
        // Asking without CPU support would only fail; skipping it also keeps
        // the syscall out of strace output on machines where it cannot help.
        if (f.amx_tile && (xcr0 & kTileCfgData) == kTileCfgData) {
            f.amx_permitted = request_amx_permission();
        }
    }
}

#endif  // __x86_64__

Detected detect() noexcept {
    Detected d;
    try {
        d.features.arch = compiled_arch();
#if defined(__x86_64__)
        detect_x86(d);
#endif
    } catch (...) {
        // Only allocation can throw here; a machine that cannot allocate a
        // brand string gets the portable kernels rather than a crash. The
        // arch names fit the small-string buffer, so this cannot throw.
        d = Detected{};
        d.features.arch = compiled_arch();
    }
    return d;
}

const Detected& detected() noexcept {
    static const Detected d = detect();
    return d;
}

}  // namespace

const CpuFeatures& cpu_features() noexcept { return detected().features; }

const char* best_kernel_path() noexcept {
    const Detected& d = detected();
    const CpuFeatures& f = d.features;
    // A kernel written for one path may use the instructions of every path
    // below it (AMX kernels pack operands with AVX512-BF16, AVX-512 kernels
    // handle tails with AVX2), so each condition includes the previous one.
    const bool avx2 = d.os_avx && f.avx2 && f.fma;
    const bool avx512 = avx2 && f.os_avx512 && f.avx512f && f.avx512bw && f.avx512vl;
    const bool avx512_bf16 = avx512 && f.avx512_bf16;
    const bool amx = avx512_bf16 && f.amx_tile && f.amx_bf16 && f.amx_permitted;
    if (amx) return "amx_bf16";
    if (avx512_bf16) return "avx512_bf16";
    if (avx512) return "avx512";
    if (avx2) return "avx2";
    return "portable";
}

}  // namespace hrx::kernels
