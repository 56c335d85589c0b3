// bfloat16 <-> float32 conversion on host memory: the conversions the emulated
// devices use, and what hrxarray.numerics exposes. bf16 values travel as their
// raw 16-bit patterns (uint16_t), the upper half of an IEEE binary32.
#pragma once
#include <cstddef>
#include <cstdint>

namespace hrx::kernels {

/// One float32 -> bf16, round to nearest even (ml_dtypes, torch and Quark
/// agree on this, numerics.md A2). Overflow rounds to +-Inf, bf16 subnormals
/// are kept, and a NaN becomes the canonical quiet NaN 0x7FC0 with its sign
/// (as ml_dtypes does; the payload is dropped).
inline std::uint16_t f32_bits_to_bf16(std::uint32_t bits) noexcept {
    if ((bits & 0x7FFFFFFFu) > 0x7F800000u) {
        return static_cast<std::uint16_t>(((bits >> 16) & 0x8000u) | 0x7FC0u);
    }
    const std::uint32_t round = 0x7FFFu + ((bits >> 16) & 1u);
    return static_cast<std::uint16_t>((bits + round) >> 16);
}

/// One bf16 -> float32: an exact widening; NaN payloads are kept.
inline std::uint32_t bf16_to_f32_bits(std::uint16_t h) noexcept {
    return static_cast<std::uint32_t>(h) << 16;
}

/// dst[i] = f32_bits_to_bf16(src[i]) for i < n. src and dst must not overlap.
/// Runs the widest vector path this CPU allows (see bf16_kernel_path()).
void f32_to_bf16(const float* src, std::uint16_t* dst, std::size_t n) noexcept;

/// dst[i] = bf16 src[i] widened to float32, for i < n. No overlap.
void bf16_to_f32(const std::uint16_t* src, float* dst, std::size_t n) noexcept;

/// The path f32_to_bf16 and bf16_to_f32 take in this process: "avx512",
/// "avx2" or "portable" (chosen once from best_kernel_path()). Static string.
const char* bf16_kernel_path() noexcept;

/// The same conversions on the portable path whatever the CPU, so that tests
/// can compare paths. Results are identical by construction (same source).
namespace portable {
void f32_to_bf16(const float* src, std::uint16_t* dst, std::size_t n) noexcept;
void bf16_to_f32(const std::uint16_t* src, float* dst, std::size_t n) noexcept;
}  // namespace portable

}  // namespace hrx::kernels
