// BF16 x BF16 -> FP32 products (see matmul.h for the numerics contract).
//
// Every path computes each output element as acc = fma(a[i,k], b[k,j], acc)
// for k = 1, 0, 3, 2, ... from acc = +0 (matmul.h), under DAZ|FTZ and
// round-to-nearest;
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

#include <complex>

#include "kernels/amx.h"
#include "kernels/cpu_features.h"
#include "kernels/fpenv.h"
#include "kernels/gemm.h"
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

// ------------------------------------------------------------ portable bodies

inline float widen(std::uint16_t h) noexcept {
    const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

// k for each step of an 8-long product: pairs in ascending order, the odd
// index of a pair first (matmul.h).
constexpr int kPairOrder8[8] = {1, 0, 3, 2, 5, 4, 7, 6};

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
            for (const int k : kPairOrder8) {
                const float x = af[i * 8 + k];
                for (int j = 0; j < 8; ++j) {
                    acc[i * 8 + j] = std::fma(x, bf[k * 8 + j], acc[i * 8 + j]);
                }
            }
        }
        std::memcpy(c, acc, sizeof acc);
    }
}

using Mm8Fn = void (*)(const std::uint16_t*, const std::uint16_t*, float*, std::size_t) noexcept;

void mm8_portable(const std::uint16_t* a, const std::uint16_t* b, float* c,
                  std::size_t count) noexcept {
    mm8_body(a, b, c, count);
}
// ------------------------------------------------------------ x86 paths

#ifdef HRX_MM_X86
HRX_TARGET("avx2,fma")
void mm8_avx2(const std::uint16_t* a, const std::uint16_t* b, float* c, std::size_t count) noexcept {
    mm8_body(a, b, c, count);
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
            for (const int k : kPairOrder8) {
                acc = _mm512_fmadd_ps(_mm512_maskz_permutexvar_ps(0xFFFF, idx[k], ar), bk[k], acc);
            }
            _mm512_storeu_ps(c + 16 * q, acc);
        }
    }
}

#endif

// ------------------------------------------------------------ dispatch

struct Dispatch {
    Mm8Fn mm8 = &mm8_portable;  // the 8x8 batch kernel (matmul_kernel_path names the GEMM's path)
};

const Dispatch& dispatch() noexcept {
    static const Dispatch d = [] {
        Dispatch r;
#ifdef HRX_MM_X86
        const std::string_view best = best_kernel_path();
        if (best == "amx_bf16" || best == "avx512_bf16" || best == "avx512") {
            r.mm8 = &mm8_avx512;
        } else if (best == "avx2") {
            r.mm8 = &mm8_avx2;
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
            FpEnv env(true);
            const std::size_t lo = it * kMm8Chunk;
            const std::size_t cnt = std::min(kMm8Chunk, count - lo);
            fn(a + 64 * lo, b + 64 * lo, c + 64 * lo, cnt);
        });
        return;
    }
    FpEnv env(true);
    fn(a, b, c, count);
}

// complex64/complex128 products (no BLAS, no vector path): c[i, j] is the
// sum over k in ascending order, from +0, of a[i, k] * b[k, j] with NumPy's
// unfused complex multiply (elementwise_complex.cpp's formula), each step
// rounded, so the result depends on nothing but the values. Rows are
// independent and split over the pool for large products.
template <class T>
void matmul_complex(const void* a, const void* b, void* c, std::size_t batch, std::size_t m, std::size_t k,
                    std::size_t n, const std::int64_t* ia, const std::int64_t* ib, bool threaded) {
    using C = std::complex<T>;
    const C* A = static_cast<const C*>(a);
    const C* B = static_cast<const C*>(b);
    C* Cm = static_cast<C*>(c);
    auto rows = [&](std::size_t lo, std::size_t hi) {
        FpEnv env(false);
        for (std::size_t r = lo; r < hi; ++r) {
            const std::size_t bt = r / m, i = r % m;
            const C* arow = A + (ia ? static_cast<std::size_t>(ia[bt]) : bt) * m * k + i * k;
            const C* bm = B + (ib ? static_cast<std::size_t>(ib[bt]) : bt) * k * n;
            T* re = reinterpret_cast<T*>(Cm + bt * m * n + i * n);
            for (std::size_t j = 0; j < 2 * n; ++j) re[j] = T(0);
            for (std::size_t kk = 0; kk < k; ++kk) {
                const T xr = arow[kk].real(), xi = arow[kk].imag();
                const T* brow = reinterpret_cast<const T*>(bm + kk * n);
                for (std::size_t j = 0; j < n; ++j) {
                    const T yr = brow[2 * j], yi = brow[2 * j + 1];
                    re[2 * j] = re[2 * j] + (xr * yr - xi * yi);
                    re[2 * j + 1] = re[2 * j + 1] + (xr * yi + xi * yr);
                }
            }
        }
    };
    const std::size_t total = batch * m;
    const std::size_t items = threaded && total * k * n >= (std::size_t{1} << 18) ? std::min<std::size_t>(total, 64) : 1;
    if (items <= 1) return rows(0, total);
    pool_run(items, [&](std::size_t it) { rows(total * it / items, total * (it + 1) / items); });
}

bool complex_typed(hrx::DType in, hrx::DType out, const void* a, const void* b, void* c, std::size_t batch,
                   std::size_t m, std::size_t k, std::size_t n, const std::int64_t* ia, const std::int64_t* ib,
                   bool threaded) {
    if (in != out) return in == DType::Complex64 || in == DType::Complex128;  // unsupported: write nothing
    if (in == DType::Complex64) matmul_complex<float>(a, b, c, batch, m, k, n, ia, ib, threaded);
    else if (in == DType::Complex128) matmul_complex<double>(a, b, c, batch, m, k, n, ia, ib, threaded);
    else return false;
    return true;
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
    detail::gemm(DType::BFloat16, DType::Float32, a, b, c, batch, m, k, n, ia, ib, true, true);
}

void matmul_typed(hrx::DType in, hrx::DType out, const void* a, const void* b, void* c,
                  std::size_t batch, std::size_t m, std::size_t k, std::size_t n,
                  const std::int64_t* ia, const std::int64_t* ib) noexcept {
    if (in == DType::BFloat16 && out == DType::Float32) {
        matmul_bf16(static_cast<const std::uint16_t*>(a), static_cast<const std::uint16_t*>(b),
                    static_cast<float*>(c), batch, m, k, n, ia, ib);
        return;
    }
    if (complex_typed(in, out, a, b, c, batch, m, k, n, ia, ib, true)) return;
    detail::gemm(in, out, a, b, c, batch, m, k, n, ia, ib, true, true);
}

void matmul_bf16_tile(const std::uint16_t* a, const std::uint16_t* b, float* c, std::size_t batch,
                      std::size_t m, std::size_t k, std::size_t n, const std::int64_t* ia,
                      const std::int64_t* ib) noexcept {
    detail::gemm_bf16_tile(a, b, c, batch, m, k, n, ia, ib, true, true);
}

bool matvec_typed(hrx::DType t, const void* a, std::size_t rs, std::size_t cs, const void* x, void* y,
                  std::size_t m, std::size_t k) noexcept {
    if (!detail::gemv_supported(t) || (rs != 1 && cs != 1)) return false;
    detail::gemv(t, a, rs, cs, x, y, m, k, true, true);
    return true;
}

void matmul_bf16_amx_model(const std::uint16_t* a, const std::uint16_t* b, float* c,
                           std::size_t batch, std::size_t m, std::size_t k, std::size_t n,
                           const std::int64_t* ia, const std::int64_t* ib) noexcept {
    detail::gemm_bf16_amx(detail::TileUnit::Model, a, b, c, batch, m, k, n, ia, ib, true);
}

bool matmul_typed_supported(hrx::DType in, hrx::DType out) noexcept {
    if (dtype_is_complex(in)) return in == out;
    return detail::gemm_supported(in, out);
}

const char* matmul_kernel_path() noexcept { return detail::gemm_path(); }

const char* matmul_tile_kernel_path() noexcept { return detail::gemm_tile_path(); }

std::size_t matmul_num_threads() noexcept { return pool_threads(); }

namespace portable {
void matmul_bf16_8x8_batched(const std::uint16_t* a, const std::uint16_t* b, float* c,
                             std::size_t count) noexcept {
    run_mm8(&mm8_portable, a, b, c, count, false);
}
void matmul_bf16(const std::uint16_t* a, const std::uint16_t* b, float* c, std::size_t batch,
                 std::size_t m, std::size_t k, std::size_t n, const std::int64_t* ia,
                 const std::int64_t* ib) noexcept {
    detail::gemm(DType::BFloat16, DType::Float32, a, b, c, batch, m, k, n, ia, ib, false, false);
}
void matmul_typed(hrx::DType in, hrx::DType out, const void* a, const void* b, void* c,
                  std::size_t batch, std::size_t m, std::size_t k, std::size_t n,
                  const std::int64_t* ia, const std::int64_t* ib) noexcept {
    if (in == DType::BFloat16 && out == DType::Float32) {
        portable::matmul_bf16(static_cast<const std::uint16_t*>(a),
                              static_cast<const std::uint16_t*>(b), static_cast<float*>(c), batch,
                              m, k, n, ia, ib);
        return;
    }
    if (complex_typed(in, out, a, b, c, batch, m, k, n, ia, ib, false)) return;
    detail::gemm(in, out, a, b, c, batch, m, k, n, ia, ib, false, false);
}
bool matvec_typed(hrx::DType t, const void* a, std::size_t rs, std::size_t cs, const void* x, void* y,
                  std::size_t m, std::size_t k) noexcept {
    if (!detail::gemv_supported(t) || (rs != 1 && cs != 1)) return false;
    detail::gemv(t, a, rs, cs, x, y, m, k, false, false);
    return true;
}
void matmul_bf16_tile(const std::uint16_t* a, const std::uint16_t* b, float* c, std::size_t batch,
                      std::size_t m, std::size_t k, std::size_t n, const std::int64_t* ia,
                      const std::int64_t* ib) noexcept {
    detail::gemm_bf16_tile(a, b, c, batch, m, k, n, ia, ib, false, false);
}
}  // namespace portable

}  // namespace hrx::kernels
