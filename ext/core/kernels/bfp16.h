// bfp16ebs8, the XDNA2 NPU's block floating-point format, on host memory
// (numerics.md A1, DESIGN.md "Numerics"). A block holds 8 consecutive values
// of the last axis in 9 bytes [E, m0 .. m7]: E is the largest biased fp32
// exponent field of the 8 inputs, each m is an int8 (two's complement, no
// hidden bit) and the value it stands for is m * 2^(E - 133).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace hrx::kernels {

inline constexpr std::size_t kBfp16BlockValues = 8;
inline constexpr std::size_t kBfp16BlockBytes = 9;

/// How a mantissa is rounded when a block is encoded.
enum class BfpRounding {
    /// m = floor(x / 2^(E-133)): mlir-aie's host reference (helper.h's
    /// floatToBfp16 and bfp.py), i.e. what mlir-aie says the NPU computes.
    /// Never overflows; tiny negatives become -1, tiny positives 0.
    floor,
    /// m = x / 2^(E-133) rounded half to even (AMD Quark's BFP16). If a
    /// mantissa rounds to 128, E grows by one and the whole block is rounded
    /// again at the doubled scale (except at E = 254, see below).
    even,
};
// In either rounding, a block with E = 254 (its largest magnitude lies in
// [2^127, 2^128), float32's top binade) has its mantissas saturated to [-127, 127]:
// m = +-128 there would stand for +-2^128, which float32 cannot hold, so the
// block would decode to +-Inf. This is hrxarray's choice; the sources say
// nothing about this corner (mlir-aie's floor reference gives -2^128 there).

/// Encodes nblocks blocks: src holds 8 * nblocks floats, dst receives
/// 9 * nblocks bytes. fp32 subnormal inputs (and -0) encode as mantissa 0;
/// a block of zeros and subnormals gets E = 0. Inputs must be finite (check
/// with bfp16_first_nonfinite_block): for a block with NaN or Inf the bytes
/// written are unspecified (but the call is still safe). No overlap.
void bfp16_encode(const float* src, std::uint8_t* dst, std::size_t nblocks,
                  BfpRounding rounding) noexcept;

/// Decodes nblocks blocks (9 * nblocks bytes) into 8 * nblocks floats:
/// dst = m * 2^(E - 133), computed exactly (E < 7 gives fp32 subnormals).
/// Any byte pattern is accepted; E = 255 with |m| >= 64, and E = 254 with
/// m = -128, overflow to +-Inf (the encoder writes neither). No overlap.
void bfp16_decode(const std::uint8_t* src, float* dst, std::size_t nblocks) noexcept;

/// The path bfp16_encode and bfp16_decode take in this process: "avx512" or
/// "portable" (chosen once from best_kernel_path()). Static string.
const char* bfp16_kernel_path() noexcept;

/// The same codec on the portable path whatever the CPU; the paths give
/// identical bytes and floats, and tests compare them.
namespace portable {
void bfp16_encode(const float* src, std::uint8_t* dst, std::size_t nblocks,
                  BfpRounding rounding) noexcept;
void bfp16_decode(const std::uint8_t* src, float* dst, std::size_t nblocks) noexcept;
}  // namespace portable

/// Index of the first block of src (8 * nblocks floats) holding a NaN or an
/// Inf, or -1 when every value is finite.
std::ptrdiff_t bfp16_first_nonfinite_block(const float* src, std::size_t nblocks) noexcept;

/// Index of the first NaN or Inf among src's 8 * nblocks floats, or -1.
std::ptrdiff_t bfp16_first_nonfinite(const float* src, std::size_t nblocks) noexcept;

/// The refusal of every encoder of device data: throws an hrx::Error of kind
/// Data (a data check of the operation, not a device fault: Note [Data checks
/// are not device faults] in errors.h), "`what`: bfp16ebs8 has no encoding
/// for NaN or Inf: `element` = nan", `element` naming the value
/// ("element (1, 2)", "lhs element (0, 3, 5)"), `value` being it. An empty
/// `what` (a task the runtime names itself) leaves out its prefix.
[[noreturn]] void bfp16_unencodable(const std::string& what, const std::string& element, float value);

/// "element (1, 2)" (after `operand` and a space when it is not empty): the
/// C-order index `flat` of an array of `shape`, as refusals name an element.
std::string element_name(int ndim, const std::int64_t* shape, std::int64_t flat, const char* operand = "");

/// The rows of a bfp16 array of `shape` (ndim >= 1; the last axis holds
/// shape[ndim-1] / 8 blocks), whose leading axes step by `strides` bytes,
/// from (encode) or to (decode) contiguous float32 rows of `shape`. Encoding
/// refuses a NaN or Inf with bfp16_unencodable(what, element_name(...)).
void bfp16_encode_rows(const float* src, int ndim, const std::int64_t* shape, const std::int64_t* strides,
                       std::uint8_t* dst, BfpRounding rounding, const std::string& what);
void bfp16_decode_rows(const std::uint8_t* src, int ndim, const std::int64_t* shape, const std::int64_t* strides,
                       float* dst) noexcept;

}  // namespace hrx::kernels
