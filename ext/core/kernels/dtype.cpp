#include "kernels/dtype.h"

namespace hrx {

namespace {

constexpr DTypeInfo kInfo[kDTypeCount] = {
    {"bool", '?', 1, DTypeKind::Bool},         {"int8", 'b', 1, DTypeKind::Signed},
    {"int16", 'h', 2, DTypeKind::Signed},      {"int32", 'i', 4, DTypeKind::Signed},
    {"int64", 'l', 8, DTypeKind::Signed},      {"uint8", 'B', 1, DTypeKind::Unsigned},
    {"uint16", 'H', 2, DTypeKind::Unsigned},   {"uint32", 'I', 4, DTypeKind::Unsigned},
    {"uint64", 'L', 8, DTypeKind::Unsigned},   {"float16", 'e', 2, DTypeKind::Float},
    {"bfloat16", 'E', 2, DTypeKind::Float},    {"float32", 'f', 4, DTypeKind::Float},
    {"float64", 'd', 8, DTypeKind::Float},     {"complex64", 'F', 8, DTypeKind::Complex},
    {"complex128", 'D', 16, DTypeKind::Complex}, {"bfp16", 'V', 9, DTypeKind::Block},
};

// NumPy 2.x np.result_type(row, column) with ml_dtypes' bfloat16; the order
// of rows and columns is the DType order.
using D = DType;
constexpr D b = D::Bool, i1 = D::Int8, i2 = D::Int16, i4 = D::Int32, i8 = D::Int64, u1 = D::UInt8,
            u2 = D::UInt16, u4 = D::UInt32, u8 = D::UInt64, f2 = D::Float16, bf = D::BFloat16,
            f4 = D::Float32, f8 = D::Float64, c8 = D::Complex64, c16 = D::Complex128;
constexpr D kPromote[kNumericDTypeCount][kNumericDTypeCount] = {
    //        b   i1  i2  i4  i8  u1  u2  u4  u8  f2  bf  f4  f8  c8   c16
    /* b  */ {b, i1, i2, i4, i8, u1, u2, u4, u8, f2, bf, f4, f8, c8, c16},
    /* i1 */ {i1, i1, i2, i4, i8, i2, i4, i8, f8, f2, bf, f4, f8, c8, c16},
    /* i2 */ {i2, i2, i2, i4, i8, i2, i4, i8, f8, f4, f4, f4, f8, c8, c16},
    /* i4 */ {i4, i4, i4, i4, i8, i4, i4, i8, f8, f8, f8, f8, f8, c16, c16},
    /* i8 */ {i8, i8, i8, i8, i8, i8, i8, i8, f8, f8, f8, f8, f8, c16, c16},
    /* u1 */ {u1, i2, i2, i4, i8, u1, u2, u4, u8, f2, bf, f4, f8, c8, c16},
    /* u2 */ {u2, i4, i4, i4, i8, u2, u2, u4, u8, f4, f4, f4, f8, c8, c16},
    /* u4 */ {u4, i8, i8, i8, i8, u4, u4, u4, u8, f8, f8, f8, f8, c16, c16},
    /* u8 */ {u8, f8, f8, f8, f8, u8, u8, u8, u8, f8, f8, f8, f8, c16, c16},
    /* f2 */ {f2, f2, f4, f8, f8, f2, f4, f8, f8, f2, f4, f4, f8, c8, c16},
    /* bf */ {bf, bf, f4, f8, f8, bf, f4, f8, f8, f4, bf, f4, f8, c8, c16},
    /* f4 */ {f4, f4, f4, f8, f8, f4, f4, f8, f8, f4, f4, f4, f8, c8, c16},
    /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, c16, c16},
    /* c8 */ {c8, c8, c8, c16, c16, c8, c8, c16, c16, c8, c8, c8, c16, c8, c16},
    /* c16*/ {c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16},
};

int kind_rank(DTypeKind k) {
    switch (k) {
        case DTypeKind::Bool: return 0;
        case DTypeKind::Unsigned: return 1;
        case DTypeKind::Signed: return 2;
        case DTypeKind::Float: return 3;
        case DTypeKind::Complex: return 4;
        case DTypeKind::Block: return 5;
    }
    return 5;
}

}  // namespace

const DTypeInfo& dtype_info(DType t) noexcept { return kInfo[static_cast<int>(t)]; }

bool dtype_from_name(std::string_view name, DType* out) noexcept {
    for (int i = 0; i < kDTypeCount; ++i)
        if (name == kInfo[i].name) {
            *out = static_cast<DType>(i);
            return true;
        }
    return false;
}

DType promote_types(DType a, DType c) noexcept { return kPromote[static_cast<int>(a)][static_cast<int>(c)]; }

bool can_cast(DType from, DType to, Casting casting) noexcept {
    if (from == to) return true;
    if (from == DType::BFP16 || to == DType::BFP16) return casting == Casting::Unsafe;
    switch (casting) {
        case Casting::No:
        case Casting::Equiv: return false;
        case Casting::Safe: return promote_types(from, to) == to;
        case Casting::SameKind:
            return promote_types(from, to) == to ||
                   kind_rank(dtype_info(from).kind) <= kind_rank(dtype_info(to).kind);
        case Casting::Unsafe: return true;
    }
    return false;
}

}  // namespace hrx
