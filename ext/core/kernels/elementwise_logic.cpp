// Inner loops of the logical and bitwise ops and the shifts.
#include <cstdint>
#include <type_traits>

#include "kernels/elementwise_impl.h"

namespace hrx::kernels::ew {

namespace {

// Logical ops take any numeric operand as its truth value (NaN is true).
template <class T> struct LAndOp : ToBool<T> { static bool f(T a, T b) noexcept { return (a != 0) && (b != 0); } };
template <class T> struct LOrOp : ToBool<T> { static bool f(T a, T b) noexcept { return (a != 0) || (b != 0); } };
template <class T> struct LXorOp : ToBool<T> { static bool f(T a, T b) noexcept { return (a != 0) != (b != 0); } };

template <class T> struct BAndOp : Same2<T> { static T f(T a, T b) noexcept { return static_cast<T>(a & b); } };
template <class T> struct BOrOp : Same2<T> { static T f(T a, T b) noexcept { return static_cast<T>(a | b); } };
template <class T> struct BXorOp : Same2<T> { static T f(T a, T b) noexcept { return static_cast<T>(a ^ b); } };

// NumPy's shifts: a count outside [0, bits) (a negative count included, as
// it converts to a huge unsigned one) shifts everything out, leaving 0, or -1
// for a right shift of a negative number.
template <class T> struct LShiftOp : Same2<T> {
    static T f(T a, T b) noexcept {
        using U = std::make_unsigned_t<T>;
        const auto n = static_cast<U>(b);
        if (n >= sizeof(T) * 8) return 0;
        return static_cast<T>(static_cast<wrap_t<T>>(a) << n);
    }
};
template <class T> struct RShiftOp : Same2<T> {
    static T f(T a, T b) noexcept {
        using U = std::make_unsigned_t<T>;
        const auto n = static_cast<U>(b);
        if (n >= sizeof(T) * 8) {
            if constexpr (std::is_signed_v<T>) return a < 0 ? T(-1) : T(0);
            else return 0;
        }
        return static_cast<T>(a >> n);  // arithmetic for signed types (C++20)
    }
};

}  // namespace

InnerLoop find_logic_loop(Ufunc op, const UfuncLoop& loop) noexcept {
    const DType t = compute_dtype(loop.in[0]);
    constexpr unsigned kAll = kBool | kInts | kFloats;
    switch (op) {
        case Ufunc::LogicalAnd: return pick2<LAndOp, kAll>(t);
        case Ufunc::LogicalOr: return pick2<LOrOp, kAll>(t);
        case Ufunc::LogicalXor: return pick2<LXorOp, kAll>(t);
        case Ufunc::BitwiseAnd: return pick2<BAndOp, kBool | kInts>(t);
        case Ufunc::BitwiseOr: return pick2<BOrOp, kBool | kInts>(t);
        case Ufunc::BitwiseXor: return pick2<BXorOp, kBool | kInts>(t);
        case Ufunc::LeftShift: return pick2<LShiftOp, kInts>(t);
        case Ufunc::RightShift: return pick2<RShiftOp, kInts>(t);
        default: return nullptr;
    }
}

}  // namespace hrx::kernels::ew
