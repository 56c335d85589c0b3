// BF16 x BF16 -> FP32 matrix products on host memory: the NPU's matmul
// contract (DESIGN.md "Numerics") and what hrxarray.numerics.matmul runs.
// bf16 operands travel as their raw 16-bit patterns (uint16_t).
//
// Numerics, identical on every host CPU and code path (tests compare them
// bit for bit):
// - Each output element is its own fp32 accumulator, starting at +0.0, and
//   takes the K products one fused multiply-add per step,
//   acc <- round_nearest_even(acc + a[i,k] * b[k,j]), with k in the order
//   1, 0, 3, 2, 5, 4, ...: pairs ascending, the odd index of a pair first;
//   after an odd K, one more step adds 0 * 0 (Note [Paired k order] in
//   gemm.h). A bf16 x bf16 product has at most 16 significant bits, so it is
//   exact in fp32 unless it lies below FLT_MIN; the fusion only matters there.
// - No denormals (the AIE-ML datapath has none): subnormal operands count as
//   zero and subnormal results are flushed to zero (x86 MXCSR DAZ|FTZ, arm64
//   FPCR.FZ, set for the duration of the call on every thread that computes
//   and restored afterwards; rounding is forced to nearest even as well).
// - Consequently integer-valued inputs give exact results as long as every
//   partial sum stays below 2^24 in magnitude.
// - NaN and Inf propagate as IEEE arithmetic says, but which NaN (sign and
//   payload) comes out of a NaN operand is unspecified and may differ
//   between paths.
// The order is VDPBF16PS's: where the CPU has AVX512-BF16 (and the
// instruction passes a check against the FMA model at first use) the general
// product runs on it, at about twice the fp32 FMA rate on Zen 5; everywhere
// else the same steps are fp32 FMAs. AMX's TDPBF16PS cannot take these steps
// (Note [AMX tiles] in amx.h), so the tiles never serve matmul_bf16: an
// emulated device computes the same bits on every host.
//
// The tile order is an opt-in of its own, matmul_bf16_tile: TDPBF16PS's
// order, per chunk of 32 k (the last one shorter) the even-k and the odd-k
// products each chain from +0 by FMAs in ascending k (an odd K's 0 * 0 pad
// last in the odd chain), and acc <- acc + (even chain + odd chain), from
// acc = +0, under the same DAZ|FTZ and nearest-even rules. Within the same
// error bound as the pair order, not bit-identical to it; identical on every
// host: where the CPU has AMX-BF16, Linux grants the tile state and the tiles
// reproduced the software model of the tile unit at first use, products of at
// least 32 x 64 x 32 run on the tiles (HRXARRAY_AMX=0 keeps them off), and
// everything else runs as fp32 FMAs in that order. HRXARRAY_AMX=model puts the
// software model (matmul_bf16_amx_model) where the tiles would be, on any CPU:
// how tests see what a CPU with AMX computes.
//
// The general product is a packed, register-blocked GEMM (Note [Blocked
// GEMM] in gemm.h): operands packed as bf16 pairs (VDPBF16PS) or widened to
// fp32, 8 x 32 register tiles, K in blocks whose partial sums pass through C
// unchanged.
//
// Large calls are split over a small thread pool (the calling thread plus
// workers); HRXARRAY_NUM_THREADS (read once) caps the total, default: the
// number of online CPUs. Splitting never changes a result, since every output
// element is computed by one thread in the order above.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/dtype.h"

namespace hrx::kernels {

/// c[n] = a[n] @ b[n] for count independent 8x8 matrices, all row-major and
/// densely packed: a and b hold 64 * count bf16, c receives 64 * count
/// floats. c must not overlap a or b.
void matmul_bf16_8x8_batched(const std::uint16_t* a, const std::uint16_t* b, float* c,
                             std::size_t count) noexcept;

/// Batched general product c[t] = a[ia[t]] @ b[ib[t]] for t < batch, where
/// a[s] is the row-major m x k matrix at a + s * m * k, b[s] the row-major
/// k x n matrix at b + s * k * n and c[t] the m x n matrix at c + t * m * n.
/// ia / ib may be nullptr, meaning the identity (ia[t] = t); this is how a
/// caller expresses broadcasting without copies. k may be 0 (c becomes +0).
/// c must not overlap a or b.
void matmul_bf16(const std::uint16_t* a, const std::uint16_t* b, float* c, std::size_t batch,
                 std::size_t m, std::size_t k, std::size_t n, const std::int64_t* ia,
                 const std::int64_t* ib) noexcept;

/// Batched general product for the array layer's matmul on the GPU compute
/// lane, c[t] = a[ia[t]] @ b[ib[t]] with matmul_bf16's layout and broadcast
/// convention (row-major dense operands, ia / ib nullptr = identity, k = 0
/// gives zeros, any of batch, m, n = 0 does nothing; c must not overlap a or
/// b). Pairs (in -> out) and their numerics:
/// - bool -> bool: c[i,j] = OR_k (a[i,k] AND b[k,j]), NumPy's bool matmul;
///   any nonzero byte counts as true, outputs are 0 or 1.
/// - each integer type -> itself: the exact sum of products reduced modulo
///   2^bits (two's-complement wraparound), which is NumPy's result.
/// - float16 -> float16: inputs widened exactly to fp32, accumulated as for
///   float32 below, and the fp32 sum rounded once to float16 (nearest even,
///   overflow to Inf).
/// - bfloat16 -> float32: exactly matmul_bf16's numerics (header comment).
/// - float32 -> float32: per element and per block of 384 consecutive k (from
///   k = 0), one fp32 accumulator from +0 taking one fused multiply-add per k
///   in ascending order; the blocks' partial sums are added in ascending
///   order, each addition rounded (Note [Blocked accumulation] in gemm.cpp:
///   error ~ sqrt(384) + sqrt(K / 384) ulps instead of sqrt(K)). Round to
///   nearest even, normal IEEE arithmetic (denormals kept: DAZ/FTZ are
///   cleared for the call).
/// - float64 -> float64: the same in fp64.
/// - complex64 -> complex64, complex128 -> complex128: per element a sum over
///   k in ascending order from +0 of NumPy's unfused complex products, each
///   step rounded (no FMA; NumPy's BLAS cgemm/zgemm sums in another order).
/// NaN payloads and signs of NaN results are unspecified. The result never
/// depends on the thread count or the code path. Other pairs are not
/// supported (matmul_typed_supported says which) and write nothing.
void matmul_typed(hrx::DType in, hrx::DType out, const void* a, const void* b, void* c,
                  std::size_t batch, std::size_t m, std::size_t k, std::size_t n,
                  const std::int64_t* ia, const std::int64_t* ib) noexcept;

/// Matrix-vector product y = A @ x for float32 or float64 (t), with
/// matmul_typed's numerics and bits, reading A in place: element (i, j) of
/// the m x k matrix is a[i * rs + j * cs] (element strides, rs == 1 or
/// cs == 1: row-major or a transposed view), x dense (k), y dense (m).
/// Returns false (writing nothing) for other dtypes or strides.
bool matvec_typed(hrx::DType t, const void* a, std::size_t rs, std::size_t cs, const void* x, void* y,
                  std::size_t m, std::size_t k) noexcept;

/// matmul_bf16 in the tile order (header comment) instead of the pair order:
/// same layout and conventions, the bits of matmul_bf16_amx_model on every
/// host, on the AMX tiles where they may run.
void matmul_bf16_tile(const std::uint16_t* a, const std::uint16_t* b, float* c, std::size_t batch,
                      std::size_t m, std::size_t k, std::size_t n, const std::int64_t* ia,
                      const std::int64_t* ib) noexcept;

/// The AMX tile driver of matmul_bf16_tile (its packing, blocking, tile
/// configurations and TDPBF16PS order) run on a software model of the tile
/// unit (Intel's SDM definition) on any CPU: how the tile path is tested
/// without AMX hardware, and the reference the hardware and the FMA path of
/// the tile order are checked against. Any shape; scalar, so slow.
void matmul_bf16_amx_model(const std::uint16_t* a, const std::uint16_t* b, float* c,
                           std::size_t batch, std::size_t m, std::size_t k, std::size_t n,
                           const std::int64_t* ia, const std::int64_t* ib) noexcept;

/// Whether matmul_typed implements in -> out.
bool matmul_typed_supported(hrx::DType in, hrx::DType out) noexcept;

/// The path the general bf16 product takes in this process: "avx512_bf16"
/// (VDPBF16PS), "avx512", "avx2" or "portable" (chosen once from
/// best_kernel_path()). Static string.
const char* matmul_kernel_path() noexcept;

/// The path large products of matmul_bf16_tile take in this process:
/// "amx_bf16" (the tiles), "amx_model" (HRXARRAY_AMX=model), "avx512",
/// "avx2" or "portable" (fp32 FMAs in the tile order). Static string.
const char* matmul_tile_kernel_path() noexcept;

/// Threads a large call uses (the caller included): min(online CPUs,
/// HRXARRAY_NUM_THREADS if set to a positive integer), at least 1.
std::size_t matmul_num_threads() noexcept;

/// The same products on the portable path, single-threaded, whatever the
/// CPU; the results are bit-identical to the dispatched ones.
namespace portable {
void matmul_bf16_8x8_batched(const std::uint16_t* a, const std::uint16_t* b, float* c,
                             std::size_t count) noexcept;
void matmul_bf16(const std::uint16_t* a, const std::uint16_t* b, float* c, std::size_t batch,
                 std::size_t m, std::size_t k, std::size_t n, const std::int64_t* ia,
                 const std::int64_t* ib) noexcept;
void matmul_typed(hrx::DType in, hrx::DType out, const void* a, const void* b, void* c,
                  std::size_t batch, std::size_t m, std::size_t k, std::size_t n,
                  const std::int64_t* ia, const std::int64_t* ib) noexcept;
bool matvec_typed(hrx::DType t, const void* a, std::size_t rs, std::size_t cs, const void* x, void* y,
                  std::size_t m, std::size_t k) noexcept;
void matmul_bf16_tile(const std::uint16_t* a, const std::uint16_t* b, float* c, std::size_t batch,
                      std::size_t m, std::size_t k, std::size_t n, const std::int64_t* ia,
                      const std::int64_t* ib) noexcept;
}  // namespace portable

}  // namespace hrx::kernels
