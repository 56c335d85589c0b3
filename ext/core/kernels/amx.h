// The bf16 GEMM on AMX tiles (internal to the kernels library; matmul.h
// documents the numerics).
//
// Note [AMX tiles]
// TDPBF16PS multiplies a 16 x 32 bf16 tile of A by a 32 x 16 tile of B (held
// as 16 rows of 16 (k, k+1) pairs) into a 16 x 16 fp32 tile of C. Intel
// defines each output as one fp32 chain over the pairs in ascending order,
// taking the pair's low (even-slot) element first, with input denormals
// treated as zero and outputs flushed, whatever MXCSR says. Note [Paired k
// order] wants the odd k of each pair first, so both operands are packed with
// the two halves of every pair swapped: the low slot holds k = 2q + 1 (0 past
// an odd K, which is the contract's 0 * 0 pad step) and the high slot k = 2q.
// A C block is 2 x 2 tiles (32 x 32); K runs in chunks of 16 pairs, and a
// last shorter chunk runs with a tile configuration of exactly that many
// pairs, because padding the chunk with zero pairs would add 0 * 0 steps,
// which turn a -0 accumulator into +0.
//
// Whether the hardware fuses each step like an FMA (it only matters for
// products below FLT_MIN) is not documented; amx_usable() runs the tile path
// against the portable one on such operands once and keeps AMX off if any bit
// differs, so AMX never changes a result. The same driver also runs on a
// software model of the tile unit (TileUnit::Model: Intel's definition, one
// FMA per step), which is how machines without AMX test the packing, the
// blocking and the tile configurations; the model is slow (scalar).
#pragma once
#include <cstddef>
#include <cstdint>

namespace hrx::kernels::detail {

enum class TileUnit { Hardware, Model };

/// Whether the hardware tile path may run in this process: the CPU has AMX
/// BF16, Linux granted the tile state (cpu_features().amx_permitted),
/// HRXARRAY_AMX is not "0", and the path reproduced the portable results bit
/// for bit once. Decided at the first call.
bool amx_usable() noexcept;

/// c[t] = a[ia[t]] @ b[ib[t]] with matmul_bf16's layout, conventions and
/// numerics (matmul.h), on the hardware tiles (only if amx_usable()) or on
/// the model. threaded: allow splitting large products over the pool.
void gemm_bf16_amx(TileUnit unit, const std::uint16_t* a, const std::uint16_t* b, float* c,
                   std::size_t batch, std::size_t m, std::size_t k, std::size_t n,
                   const std::int64_t* ia, const std::int64_t* ib, bool threaded) noexcept;

}  // namespace hrx::kernels::detail
