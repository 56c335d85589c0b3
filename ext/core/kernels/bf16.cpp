// The loops are written so that GCC and Clang vectorise them at -O3 (the NaN
// test becomes a compare and blend). On x86 the same source is compiled again
// for AVX2 and for AVX-512 through per-function target attributes, and the
// first call picks the widest one best_kernel_path() allows, so the library
// still runs on any x86-64 (and builds unchanged on arm64). VCVTNEPS2BF16 is
// not used: it treats fp32 subnormal inputs as zero, while the contract (and
// ml_dtypes) keeps them as bf16 subnormals.
#include "kernels/bf16.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "kernels/cpu_features.h"
#include "kernels/pool.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HRX_BF16_X86 1
#define HRX_TARGET(t) __attribute__((target(t)))
#endif

namespace hrx::kernels {

namespace {

[[gnu::always_inline]] inline void f32_to_bf16_body(const float* __restrict src,
                                                    std::uint16_t* __restrict dst,
                                                    std::size_t n) noexcept {
    for (std::size_t i = 0; i < n; ++i) {
        std::uint32_t bits;
        std::memcpy(&bits, src + i, sizeof bits);
        dst[i] = f32_bits_to_bf16(bits);
    }
}

[[gnu::always_inline]] inline void bf16_to_f32_body(const std::uint16_t* __restrict src,
                                                    float* __restrict dst,
                                                    std::size_t n) noexcept {
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t bits = bf16_to_f32_bits(src[i]);
        std::memcpy(dst + i, &bits, sizeof bits);
    }
}

#ifdef HRX_BF16_X86
HRX_TARGET("avx2,fma")
void f32_to_bf16_avx2(const float* src, std::uint16_t* dst, std::size_t n) noexcept {
    f32_to_bf16_body(src, dst, n);
}
HRX_TARGET("avx2,fma")
void bf16_to_f32_avx2(const std::uint16_t* src, float* dst, std::size_t n) noexcept {
    bf16_to_f32_body(src, dst, n);
}
HRX_TARGET("avx2,fma,avx512f,avx512bw,avx512vl,prefer-vector-width=512")
void f32_to_bf16_avx512(const float* src, std::uint16_t* dst, std::size_t n) noexcept {
    f32_to_bf16_body(src, dst, n);
}
HRX_TARGET("avx2,fma,avx512f,avx512bw,avx512vl,prefer-vector-width=512")
void bf16_to_f32_avx512(const std::uint16_t* src, float* dst, std::size_t n) noexcept {
    bf16_to_f32_body(src, dst, n);
}
#endif

using ToBf16 = void (*)(const float*, std::uint16_t*, std::size_t) noexcept;
using ToF32 = void (*)(const std::uint16_t*, float*, std::size_t) noexcept;

struct Dispatch {
    const char* path = "portable";
    ToBf16 to_bf16 = &portable::f32_to_bf16;
    ToF32 to_f32 = &portable::bf16_to_f32;
};

const Dispatch& dispatch() noexcept {
    static const Dispatch d = [] {
        Dispatch r;
#ifdef HRX_BF16_X86
        const std::string_view best = best_kernel_path();
        if (best == "amx_bf16" || best == "avx512_bf16" || best == "avx512") {
            r = {"avx512", &f32_to_bf16_avx512, &bf16_to_f32_avx512};
        } else if (best == "avx2") {
            r = {"avx2", &f32_to_bf16_avx2, &bf16_to_f32_avx2};
        }
#endif
        return r;
    }();
    return d;
}

}  // namespace

namespace portable {
void f32_to_bf16(const float* src, std::uint16_t* dst, std::size_t n) noexcept {
    f32_to_bf16_body(src, dst, n);
}
void bf16_to_f32(const std::uint16_t* src, float* dst, std::size_t n) noexcept {
    bf16_to_f32_body(src, dst, n);
}
}  // namespace portable

namespace {
// Large conversions are split over the kernels' pool: one core cannot keep a
// DRAM-sized conversion at memory bandwidth (to_bfloat16 reached 0.6x of a
// 2-thread np.copyto alone). Elements are independent, so chunks give the
// same bytes as one pass.
constexpr std::size_t kSplitChunk = 1u << 16;

template <class S, class D>
void split(void (*fn)(const S*, D*, std::size_t) noexcept, const S* src, D* dst, std::size_t n) noexcept {
    if (n < 16 * kSplitChunk || pool_threads() < 2) {
        fn(src, dst, n);
        return;
    }
    pool_run((n + kSplitChunk - 1) / kSplitChunk, [&](std::size_t it) {
        const std::size_t lo = it * kSplitChunk;
        fn(src + lo, dst + lo, std::min(kSplitChunk, n - lo));
    });
}
}  // namespace

void f32_to_bf16(const float* src, std::uint16_t* dst, std::size_t n) noexcept {
    split(dispatch().to_bf16, src, dst, n);
}

void bf16_to_f32(const std::uint16_t* src, float* dst, std::size_t n) noexcept {
    split(dispatch().to_f32, src, dst, n);
}

const char* bf16_kernel_path() noexcept { return dispatch().path; }

}  // namespace hrx::kernels
