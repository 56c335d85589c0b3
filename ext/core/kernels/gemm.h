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
// workspace) and are loaded again, which neither reorders nor re-rounds
// anything: every element still sees one accumulator, from zero, one step per
// k in ascending order. The blocking, the vector width and the thread split
// therefore never change a result, which is what lets the AVX-512 and the
// portable paths agree bit for bit.
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

/// "avx512", "avx2" or "portable": the path gemm(vector=true) takes here.
const char* gemm_path() noexcept;

}  // namespace hrx::kernels::detail
