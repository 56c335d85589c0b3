// The bf16 GEMM on AMX tiles (internal to the kernels library; matmul.h
// documents the numerics).
//
// Note [AMX tiles]
// TDPBF16PS multiplies a 16 x 32 bf16 tile of A by a 32 x 16 tile of B (held
// as 16 rows of 16 (k, k+1) pairs) into a 16 x 16 fp32 tile of C. Intel's SDM
// defines its numerics (DAZ, FTZ and nearest-even whatever MXCSR says) as:
// for each output, the even-k products and the odd-k products of the tile's
// pairs each form one fp32 FMA chain from +0, in ascending k; the two chain
// values are added, and that sum is added to C. No packing of the operands
// turns this into Note [Paired k order]'s single chain, so the tile path has
// its own documented order (matmul.h): K runs in chunks of 32 (16 pairs;
// the last chunk has the rest, on a tile configuration of exactly that many
// pairs), and per chunk c <- c + (even chain + odd chain), c from +0. An odd
// K's zero pad is the last step of the odd chain. A C block is 2 x 2 tiles
// (32 x 32). Since the devices' matmul must give the same bits on every host,
// this order is an opt-in (matmul_bf16_tile); products the tiles do not take
// (no AMX, or too small) run the same steps as fp32 FMAs on gemm.cpp's driver
// (KOrder::Tile), which tests check against the model bit for bit.
//
// The same driver also runs on a software model of the tile unit
// (TileUnit::Model, the SDM's definition, scalar and slow), which is how
// machines without AMX test the packing, the blocking and the tile
// configurations. amx_usable() runs the hardware against the model once, on
// operands that reach subnormals and products below FLT_MIN, and keeps AMX off
// if any bit differs: the hardware path either computes what the model (and
// the documentation) says, or does not run.
#pragma once
#include <cstddef>
#include <cstdint>

namespace hrx::kernels::detail {

enum class TileUnit { Hardware, Model };

/// Whether TileUnit::Hardware runs in this process: the CPU has AMX BF16,
/// Linux granted the tile state (cpu_features().amx_permitted), HRXARRAY_AMX
/// is not "0", and the hardware reproduced the model's results bit for bit
/// once; or HRXARRAY_AMX is "model", which makes TileUnit::Hardware run on the
/// model on any CPU (how tests see what a CPU with AMX does). Decided at the
/// first call.
bool amx_usable() noexcept;

/// Whether TileUnit::Hardware is the model (HRXARRAY_AMX=model).
bool amx_is_model() noexcept;

/// c[t] = a[ia[t]] @ b[ib[t]] with matmul_bf16's layout and conventions and
/// the tile order above, on the hardware tiles (only if amx_usable()) or on
/// the model. threaded: allow splitting large products over the pool.
void gemm_bf16_amx(TileUnit unit, const std::uint16_t* a, const std::uint16_t* b, float* c,
                   std::size_t batch, std::size_t m, std::size_t k, std::size_t n,
                   const std::int64_t* ia, const std::int64_t* ib, bool threaded) noexcept;

}  // namespace hrx::kernels::detail
