// BF16 x BF16 -> FP32 products (see matmul.h for the numerics contract).
//
// Every path computes each output element as acc = fma(a[i,k], b[k,j], acc)
// for k = 0, 1, ..., K-1 from acc = +0, under DAZ|FTZ and round-to-nearest;
// the paths differ only in how many elements they carry at once, so their
// results are bit-identical. The portable bodies are plain C++ (std::fma is
// an instruction on arm64 and on x86 with FMA; on baseline x86-64 it is a
// libm call, slow but exact); on x86 the same bodies are compiled again for
// AVX2+FMA, and the AVX-512 path adds hand-written register-blocked kernels.
#include "kernels/matmul.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/pool.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HRX_MM_X86 1
#define HRX_TARGET(t) __attribute__((target(t)))
#include <immintrin.h>
#endif
#if defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
#define HRX_MM_ARM64 1
#endif

namespace hrx::kernels {

namespace {

// ------------------------------------------------------------ FP environment

// DAZ|FTZ and round-to-nearest for the lifetime of the object on this thread;
// the previous control word is restored on destruction.
class NoDenormals {
public:
    NoDenormals() noexcept {
#if defined(HRX_MM_X86)
        saved_ = _mm_getcsr();
        // 0x8000 FTZ, 0x0040 DAZ; clearing 0x6000 selects round-to-nearest.
        _mm_setcsr((saved_ & ~0x6000u) | 0x8040u);
#elif defined(HRX_MM_ARM64)
        saved_ = __builtin_aarch64_get_fpcr64();
        // Bit 24 FZ; bits 23:22 RMode = 00 (nearest).
        __builtin_aarch64_set_fpcr64((saved_ & ~(3ull << 22)) | (1ull << 24));
#endif
    }
    ~NoDenormals() {
#if defined(HRX_MM_X86)
        _mm_setcsr(saved_);
#elif defined(HRX_MM_ARM64)
        __builtin_aarch64_set_fpcr64(saved_);
#endif
    }
    NoDenormals(const NoDenormals&) = delete;
    NoDenormals& operator=(const NoDenormals&) = delete;

private:
#if defined(HRX_MM_X86)
    unsigned saved_ = 0;
#elif defined(HRX_MM_ARM64)
    unsigned long long saved_ = 0;
#endif
};

// ------------------------------------------------------------ portable bodies

inline float widen(std::uint16_t h) noexcept {
    const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

[[gnu::always_inline]] inline void mm8_body(const std::uint16_t* __restrict a,
                                            const std::uint16_t* __restrict b,
                                            float* __restrict c, std::size_t count) noexcept {
    for (std::size_t t = 0; t < count; ++t, a += 64, b += 64, c += 64) {
        float af[64], bf[64], acc[64];
        for (int i = 0; i < 64; ++i) {
            af[i] = widen(a[i]);
            bf[i] = widen(b[i]);
            acc[i] = 0.0f;
        }
        for (int i = 0; i < 8; ++i) {
            for (int k = 0; k < 8; ++k) {
                const float x = af[i * 8 + k];
                for (int j = 0; j < 8; ++j) {
                    acc[i * 8 + j] = std::fma(x, bf[k * 8 + j], acc[i * 8 + j]);
                }
            }
        }
        std::memcpy(c, acc, sizeof acc);
    }
}

// Columns per panel of the general product: b[:, j0:j0+kPanel] is widened to
// fp32 once (k x kPanel floats, zero-padded) and reused for every row.
constexpr std::size_t kPanel = 64;

// One work item of the general product: output matrix c (m x n), panel
// starting at column j0. panel is scratch for k * kPanel floats.
[[gnu::always_inline]] inline void gemm_item_body(const std::uint16_t* __restrict a,
                                                  const std::uint16_t* __restrict b,
                                                  float* __restrict c, std::size_t m,
                                                  std::size_t k, std::size_t n, std::size_t j0,
                                                  float* __restrict panel) noexcept {
    const std::size_t w = std::min(kPanel, n - j0);
    for (std::size_t kk = 0; kk < k; ++kk) {
        for (std::size_t j = 0; j < w; ++j) panel[kk * kPanel + j] = widen(b[kk * n + j0 + j]);
    }
    float acc[kPanel];
    for (std::size_t i = 0; i < m; ++i) {
        for (std::size_t j = 0; j < kPanel; ++j) acc[j] = 0.0f;
        for (std::size_t kk = 0; kk < k; ++kk) {
            const float x = widen(a[i * k + kk]);
            const float* p = panel + kk * kPanel;
            for (std::size_t j = 0; j < w; ++j) acc[j] = std::fma(x, p[j], acc[j]);
        }
        std::memcpy(c + i * n + j0, acc, w * sizeof(float));
    }
}

using Mm8Fn = void (*)(const std::uint16_t*, const std::uint16_t*, float*, std::size_t) noexcept;
using GemmItemFn = void (*)(const std::uint16_t*, const std::uint16_t*, float*, std::size_t,
                            std::size_t, std::size_t, std::size_t, float*) noexcept;

void mm8_portable(const std::uint16_t* a, const std::uint16_t* b, float* c,
                  std::size_t count) noexcept {
    mm8_body(a, b, c, count);
}
void gemm_item_portable(const std::uint16_t* a, const std::uint16_t* b, float* c, std::size_t m,
                        std::size_t k, std::size_t n, std::size_t j0, float* panel) noexcept {
    gemm_item_body(a, b, c, m, k, n, j0, panel);
}

// ------------------------------------------------------------ x86 paths

#ifdef HRX_MM_X86
HRX_TARGET("avx2,fma")
void mm8_avx2(const std::uint16_t* a, const std::uint16_t* b, float* c, std::size_t count) noexcept {
    mm8_body(a, b, c, count);
}
HRX_TARGET("avx2,fma")
void gemm_item_avx2(const std::uint16_t* a, const std::uint16_t* b, float* c, std::size_t m,
                    std::size_t k, std::size_t n, std::size_t j0, float* panel) noexcept {
    gemm_item_body(a, b, c, m, k, n, j0, panel);
}

#define HRX_AVX512 "avx2,fma,avx512f,avx512bw,avx512vl,avx512dq"

// 8 bf16 at p widened to 8 floats.
HRX_TARGET(HRX_AVX512)
inline __m256 widen8(const std::uint16_t* p) noexcept {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

// 16 bf16 widened to 16 floats. (The maskz forms avoid GCC 12's false
// -Wmaybe-uninitialized on _mm512_undefined_epi32 in the unmasked ones.)
HRX_TARGET(HRX_AVX512)
inline __m512 widen16(__m256i h) noexcept {
    const __m512i w = _mm512_maskz_cvtepu16_epi32(0xFFFF, h);
    return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xFFFF, w, 16));
}

// One 8x8 product per iteration. Each zmm accumulator holds two rows of C
// (i, i+1); per k it takes [A[i,k] x8, A[i+1,k] x8] (a lane permute of the
// widened rows i, i+1 of A) times [B[k,:], B[k,:]].
HRX_TARGET(HRX_AVX512)
void mm8_avx512(const std::uint16_t* a, const std::uint16_t* b, float* c,
                std::size_t count) noexcept {
    __m512i idx[8];
    for (int k = 0; k < 8; ++k) {
        idx[k] = _mm512_mask_blend_epi32(0xFF00, _mm512_set1_epi32(k), _mm512_set1_epi32(8 + k));
    }
    for (std::size_t t = 0; t < count; ++t, a += 64, b += 64, c += 64) {
        __m512 bk[8];
        for (int k = 0; k < 8; ++k) {
            const __m256 r = widen8(b + 8 * k);
            bk[k] = _mm512_maskz_broadcast_f32x8(0xFFFF, r);
        }
        for (int q = 0; q < 4; ++q) {
            const __m512 ar = widen16(
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 16 * q)));
            __m512 acc = _mm512_setzero_ps();
            for (int k = 0; k < 8; ++k) {
                acc = _mm512_fmadd_ps(_mm512_maskz_permutexvar_ps(0xFFFF, idx[k], ar), bk[k], acc);
            }
            _mm512_storeu_ps(c + 16 * q, acc);
        }
    }
}

// Rows of the general product in blocks of R, against a packed fp32 panel of
// kPanel = 64 columns held as 4 zmm accumulators per row.
template <int R>
HRX_TARGET(HRX_AVX512)
inline void gemm_rows_avx512(const std::uint16_t* a, float* c, std::size_t k, std::size_t n,
                             std::size_t w, const float* panel) noexcept {
    __m512 acc[R][4];
    for (int r = 0; r < R; ++r)
        for (int q = 0; q < 4; ++q) acc[r][q] = _mm512_setzero_ps();
    for (std::size_t kk = 0; kk < k; ++kk) {
        const float* p = panel + kk * kPanel;
        const __m512 p0 = _mm512_load_ps(p), p1 = _mm512_load_ps(p + 16),
                     p2 = _mm512_load_ps(p + 32), p3 = _mm512_load_ps(p + 48);
        for (int r = 0; r < R; ++r) {
            const __m512 x = _mm512_set1_ps(widen(a[r * k + kk]));
            acc[r][0] = _mm512_fmadd_ps(x, p0, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(x, p1, acc[r][1]);
            acc[r][2] = _mm512_fmadd_ps(x, p2, acc[r][2]);
            acc[r][3] = _mm512_fmadd_ps(x, p3, acc[r][3]);
        }
    }
    for (int r = 0; r < R; ++r) {
        for (int q = 0; q < 4; ++q) {
            const std::size_t lo = 16 * static_cast<std::size_t>(q);
            if (lo >= w) break;
            const std::size_t cnt = std::min<std::size_t>(16, w - lo);
            const __mmask16 mask = static_cast<__mmask16>((1u << cnt) - 1u);
            _mm512_mask_storeu_ps(c + r * n + lo, mask, acc[r][q]);
        }
    }
}

HRX_TARGET(HRX_AVX512)
void gemm_item_avx512(const std::uint16_t* a, const std::uint16_t* b, float* c, std::size_t m,
                      std::size_t k, std::size_t n, std::size_t j0, float* panel) noexcept {
    const std::size_t w = std::min(kPanel, n - j0);
    for (std::size_t kk = 0; kk < k; ++kk) {
        float* p = panel + kk * kPanel;
        const std::uint16_t* src = b + kk * n + j0;
        if (w == kPanel) {
            for (int q = 0; q < 4; ++q) {
                const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 16 * q));
                _mm512_store_ps(p + 16 * q, widen16(h));
            }
        } else {
            for (std::size_t j = 0; j < kPanel; ++j) p[j] = j < w ? widen(src[j]) : 0.0f;
        }
    }
    std::size_t i = 0;
    for (; i + 6 <= m; i += 6) gemm_rows_avx512<6>(a + i * k, c + i * n + j0, k, n, w, panel);
    switch (m - i) {
        case 5: gemm_rows_avx512<5>(a + i * k, c + i * n + j0, k, n, w, panel); break;
        case 4: gemm_rows_avx512<4>(a + i * k, c + i * n + j0, k, n, w, panel); break;
        case 3: gemm_rows_avx512<3>(a + i * k, c + i * n + j0, k, n, w, panel); break;
        case 2: gemm_rows_avx512<2>(a + i * k, c + i * n + j0, k, n, w, panel); break;
        case 1: gemm_rows_avx512<1>(a + i * k, c + i * n + j0, k, n, w, panel); break;
        default: break;
    }
}
#endif

// ------------------------------------------------------------ dispatch

struct Dispatch {
    const char* path = "portable";
    Mm8Fn mm8 = &mm8_portable;
    GemmItemFn gemm_item = &gemm_item_portable;
};

const Dispatch& dispatch() noexcept {
    static const Dispatch d = [] {
        Dispatch r;
#ifdef HRX_MM_X86
        const std::string_view best = best_kernel_path();
        if (best == "amx_bf16" || best == "avx512_bf16" || best == "avx512") {
            r = {"avx512", &mm8_avx512, &gemm_item_avx512};
        } else if (best == "avx2") {
            r = {"avx2", &mm8_avx2, &gemm_item_avx2};
        }
#endif
        return r;
    }();
    return d;
}

// Matrices per work item of the batched 8x8 product (64 KiB of A and B).
constexpr std::size_t kMm8Chunk = 256;

void run_mm8(Mm8Fn fn, const std::uint16_t* a, const std::uint16_t* b, float* c,
             std::size_t count, bool threaded) {
    const std::size_t items = (count + kMm8Chunk - 1) / kMm8Chunk;
    if (threaded && items >= 8) {
        // Items are handed out in ascending order, so each thread streams
        // through nearby memory.
        pool_run(items, [&](std::size_t it) {
            NoDenormals env;
            const std::size_t lo = it * kMm8Chunk;
            const std::size_t cnt = std::min(kMm8Chunk, count - lo);
            fn(a + 64 * lo, b + 64 * lo, c + 64 * lo, cnt);
        });
        return;
    }
    NoDenormals env;
    fn(a, b, c, count);
}

void run_gemm(GemmItemFn fn, const std::uint16_t* a, const std::uint16_t* b, float* c,
              std::size_t batch, std::size_t m, std::size_t k, std::size_t n,
              const std::int64_t* ia, const std::int64_t* ib, bool threaded) {
    if (batch == 0 || m == 0 || n == 0) return;
    if (k == 0) {
        std::fill(c, c + batch * m * n, 0.0f);
        return;
    }
    const std::size_t panels = (n + kPanel - 1) / kPanel;
    const std::size_t items = batch * panels;
    auto item = [&](std::size_t it) {
        thread_local std::vector<float> scratch;
        if (scratch.size() < k * kPanel + 16) scratch.resize(k * kPanel + 16);
        // 64-byte aligned start inside the scratch vector.
        float* panel = scratch.data();
        panel += (16 - (reinterpret_cast<std::uintptr_t>(panel) / sizeof(float)) % 16) % 16;
        NoDenormals env;
        const std::size_t t = it / panels, p = it % panels;
        const std::size_t sa = ia ? static_cast<std::size_t>(ia[t]) : t;
        const std::size_t sb = ib ? static_cast<std::size_t>(ib[t]) : t;
        fn(a + sa * m * k, b + sb * k * n, c + t * m * n, m, k, n, p * kPanel, panel);
    };
    const double flops = 2.0 * static_cast<double>(batch) * m * k * n;
    if (threaded && flops > 2e6) {
        pool_run(items, item);
        return;
    }
    for (std::size_t it = 0; it < items; ++it) item(it);
}

}  // namespace

void matmul_bf16_8x8_batched(const std::uint16_t* a, const std::uint16_t* b, float* c,
                             std::size_t count) noexcept {
    run_mm8(dispatch().mm8, a, b, c, count, true);
}

void matmul_bf16(const std::uint16_t* a, const std::uint16_t* b, float* c, std::size_t batch,
                 std::size_t m, std::size_t k, std::size_t n, const std::int64_t* ia,
                 const std::int64_t* ib) noexcept {
    if (m == 8 && k == 8 && n == 8 && ia == nullptr && ib == nullptr) {
        run_mm8(dispatch().mm8, a, b, c, batch, true);
        return;
    }
    run_gemm(dispatch().gemm_item, a, b, c, batch, m, k, n, ia, ib, true);
}

const char* matmul_kernel_path() noexcept { return dispatch().path; }

std::size_t matmul_num_threads() noexcept { return pool_threads(); }

namespace portable {
void matmul_bf16_8x8_batched(const std::uint16_t* a, const std::uint16_t* b, float* c,
                             std::size_t count) noexcept {
    run_mm8(&mm8_portable, a, b, c, count, false);
}
void matmul_bf16(const std::uint16_t* a, const std::uint16_t* b, float* c, std::size_t batch,
                 std::size_t m, std::size_t k, std::size_t n, const std::int64_t* ia,
                 const std::int64_t* ib) noexcept {
    run_gemm(&gemm_item_portable, a, b, c, batch, m, k, n, ia, ib, false);
}
}  // namespace portable

}  // namespace hrx::kernels
