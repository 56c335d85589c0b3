// The packed, register-blocked GEMM behind matmul_bf16 and matmul_typed
// (internal to the kernels library; matmul.h documents the numerics).
//
// Note [Blocked GEMM]
// Operands are packed into the accumulator type (fp32 for bf16/f16/f32, fp64,
// uint32 for the narrow integers and bool, uint64 for 64-bit integers): A in
// micro-panels of kMR rows (for each k, kMR consecutive values), B in
// micro-panels of NR columns (for each k, NR values), zero-padded at the
// edges. A micro-kernel keeps a kMR x NR tile of C in registers and, for
// k = p0, p0+1, ..., takes one multiply-add per element per k. K is cut into
// blocks of kKc; between blocks the partial sums go through C (or a
// workspace). The bf16 orders load them again as the accumulator, which
// neither reorders nor re-rounds anything: every element sees one
// accumulator, from zero, one step per k (Note [Paired k order]). The
// floating types in ascending order sum each block from zero and add it to C
// (Note [Blocked accumulation] in gemm.cpp); the block edges are multiples of
// kKc on every path. The vector width and the thread split therefore never
// change a result, which is what lets the AVX-512 and the portable paths
// agree bit for bit. The opt-in tile order of bf16 (Note [AMX tiles] in amx.h) runs on the
// same driver: K blocks start on its 32-k chunk edges, so a chunk's two chains
// live in the micro-kernel and only the accumulator passes through C.
//
// Note [Paired k order]
// bf16 products take k in pairs: 1, 0, 3, 2, ..., each step one fp32 FMA
// under DAZ|FTZ, and after an odd K one more step with 0 * 0 (the zero pad of
// the last pair; it changes nothing but a flushed -0 accumulator, to +0).
// That is what VDPBF16PS computes, acc <- fma(a0, b0, fma(a1, b1, acc)) per
// lane (Intel's definition; checked against this model on the CPU at first
// use). On Zen 5 it runs at twice the fp32 FMA rate (64 FLOP/instruction
// at 2/cycle: 441 vs 237 GFLOP/s per core); on the Intel Xeon hosts (AVX512-
// BF16 and AMX) at a quarter of it (0.5/cycle, latency ~8.6, against 2 FMAs/
// cycle at 3.5 GHz: 112 vs 223 GFLOP/s per core, 2026-12-05), so the kit is
// chosen per CPU by timing (Note [bf16 kit choice] in gemm.cpp). The
// VDPBF16PS kit packs A as 32-bit (k, k+1) pairs per row and B as pairs
// per column (Kit::kgroup = 2, panels half as long) and the micro-kernel is
// one VDPBF16PS per pair and 16 outputs; the other kits keep fp32 panels and
// take the same steps as two FMAs. Every K block is even, so a pair never
// straddles one, and the block length never changes the paired bits.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/dtype.h"

namespace hrx::kernels::detail {

/// Whether gemm() implements the (in, out) pair.
bool gemm_supported(DType in, DType out) noexcept;

/// c[t] = a[ia[t]] @ b[ib[t]] (matmul.h's convention) for a supported pair.
/// vector: allow the AVX-512/AVX2 paths when the CPU has them (else portable code);
/// threaded: allow splitting over the pool.
void gemm(DType in, DType out, const void* a, const void* b, void* c, std::size_t batch,
          std::size_t m, std::size_t k, std::size_t n, const std::int64_t* ia,
          const std::int64_t* ib, bool vector, bool threaded) noexcept;

/// Whether gemv() implements dtype t (float32, float64).
bool gemv_supported(DType t) noexcept;

/// y = A @ x for the m x k matrix A whose element (i, j) is a[i * rs + j * cs]
/// (element strides; cs == 1 or rs == 1), x dense (k) and y dense (m): the
/// bits gemm() gives for the same product (Note [Matrix-vector] in gemm.cpp).
void gemv(DType t, const void* a, std::size_t rs, std::size_t cs, const void* x, void* y, std::size_t m,
          std::size_t k, bool vector, bool threaded) noexcept;

/// Operands for the first-use checks of the VDPBF16PS and AMX paths: a
/// deterministic xorshift64 stream, and bf16 patterns whose exponents lie
/// close together (mode 0), near the bottom of the range with subnormals and
/// products below FLT_MIN (mode 1), or anywhere, Inf and NaN included (2).
struct CheckOperands {
    std::uint64_t s;
    std::uint64_t next() noexcept {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return s;
    }
    std::uint16_t bf16(unsigned mode) noexcept {
        const auto x = static_cast<std::uint16_t>(next());
        const unsigned e = mode == 0   ? 110u + static_cast<unsigned>(next() % 36u)
                           : mode == 1 ? static_cast<unsigned>(next() % 70u)
                                       : static_cast<unsigned>(next() % 256u);
        return static_cast<std::uint16_t>((x & 0x807Fu) | (e << 7));
    }
};

/// "avx512_bf16", "avx512", "avx2" or "portable": the path gemm(vector=true)
/// takes here for bf16 (the others stop at "avx512"). The AMX tiles never
/// serve gemm(): their order is not Note [Paired k order]'s.
const char* gemm_path() noexcept;

/// c[t] = a[ia[t]] @ b[ib[t]] (matmul.h's convention) for bf16 -> fp32 in the
/// tile order of Note [AMX tiles] (amx.h): on the AMX tiles when amx_usable()
/// and the product is at least 32 x 64 x 32 (and vector), else as fp32 FMAs
/// in the same order on the blocked driver. Every path gives the software tile
/// model's bits.
void gemm_bf16_tile(const std::uint16_t* a, const std::uint16_t* b, float* c, std::size_t batch,
                    std::size_t m, std::size_t k, std::size_t n, const std::int64_t* ia,
                    const std::int64_t* ib, bool vector, bool threaded) noexcept;

/// The path gemm_bf16_tile(vector=true) takes for large products here:
/// "amx_bf16" (the hardware tiles), "amx_model" (HRXARRAY_AMX=model: the
/// software model of the tile unit), "avx512", "avx2" or "portable" (FMAs).
const char* gemm_tile_path() noexcept;

}  // namespace hrx::kernels::detail
