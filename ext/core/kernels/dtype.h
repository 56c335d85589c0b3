// The element types of hrxarray's arrays, shared by the kernels, the array
// layer and the bindings: NumPy's numeric dtypes, ml_dtypes' bfloat16 and the
// NPU's bfp16ebs8 block format.
//
// Note [Promotion]: promote_types is NumPy 2's np.result_type for two array
// dtypes, with the bfloat16 rules ml_dtypes registers (bf16 with bool, int8
// or uint8 stays bf16; with int16/uint16 or float16 it becomes float32; with
// wider integers float64). complex64 and complex128 follow NumPy: a complex
// dtype with any other numeric one is the complex dtype whose float part
// holds both (complex64 with bool, int8/16, uint8/16, float16, bfloat16 and
// float32; complex128 otherwise). Safe casting is "promotion gives the target",
// exactly as in NumPy. tests/test_dtypes.py checks both tables against NumPy
// with ml_dtypes imported. BFP16 takes part in neither: it is a storage
// format converted with astype, not an arithmetic type.
#pragma once
#include <cstdint>
#include <string_view>

namespace hrx {

enum class DType : std::uint8_t {
    Bool,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Float16,
    BFloat16,
    Float32,
    Float64,
    Complex64,   // two float32: real, imaginary
    Complex128,  // two float64
    BFP16,  // bfp16ebs8 blocks: 8 values of the last axis in 9 bytes
};
inline constexpr int kDTypeCount = 16;
// The element types arithmetic is defined on (every dtype but BFP16).
inline constexpr int kNumericDTypeCount = 15;

enum class DTypeKind : std::uint8_t { Bool, Signed, Unsigned, Float, Complex, Block };

struct DTypeInfo {
    const char* name;   // NumPy's name: "float32", "bfloat16", "bfp16"
    char code;          // NumPy's type character; bfloat16 is 'E' (ml_dtypes), bfp16 'V'
    std::uint8_t itemsize;  // bytes per element; 9 for BFP16 (bytes per block)
    DTypeKind kind;
};

const DTypeInfo& dtype_info(DType t) noexcept;
inline const char* dtype_name(DType t) noexcept { return dtype_info(t).name; }
inline int dtype_itemsize(DType t) noexcept { return dtype_info(t).itemsize; }
inline bool dtype_is_float(DType t) noexcept { return dtype_info(t).kind == DTypeKind::Float; }
inline bool dtype_is_complex(DType t) noexcept { return dtype_info(t).kind == DTypeKind::Complex; }
// The dtype of one part (real or imaginary) of a complex dtype.
inline DType complex_part(DType t) noexcept { return t == DType::Complex64 ? DType::Float32 : DType::Float64; }
inline bool dtype_is_integer(DType t) noexcept {
    const DTypeKind k = dtype_info(t).kind;
    return k == DTypeKind::Signed || k == DTypeKind::Unsigned;
}
// The dtype named `name` ("float32", "int64", "bool", "bfloat16", "bfp16", ...); false if none.
bool dtype_from_name(std::string_view name, DType* out) noexcept;

// NumPy's result_type of two numeric dtypes (Note [Promotion]). Both must be
// numeric (not BFP16).
DType promote_types(DType a, DType b) noexcept;

enum class Casting : std::uint8_t { No, Equiv, Safe, SameKind, Unsafe };
// NumPy's np.can_cast(from, to, casting) for numeric dtypes. "same_kind"
// allows safe casts and casts within bool < integer < float < complex where the target's
// kind is not lower (unsigned to signed is the same kind, signed to unsigned is
// not).
bool can_cast(DType from, DType to, Casting casting) noexcept;

}  // namespace hrx
