// Inner loops of the exact unary ufuncs: negative, positive, absolute, sign,
// square, floor, ceil, trunc, rint, logical_not, invert, isnan, isinf,
// isfinite.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/elementwise_impl.h"

namespace hrx::kernels::ew {

namespace {

template <class T>
struct Same1 {
    using A = T;
    using R = T;
};
template <class T>
struct ToBool1 {
    using A = T;
    using R = bool;
};

template <class T> struct NegOp : Same1<T> {
    static T f(T a) noexcept {
        if constexpr (std::is_integral_v<T>) return wrap_sub(T(0), a);
        else return -a;
    }
};
template <class T> struct PosOp : Same1<T> {
    static T f(T a) noexcept { return a; }
};
template <class T> struct AbsOp : Same1<T> {
    static T f(T a) noexcept {
        if constexpr (std::is_floating_point_v<T>) return std::fabs(a);
        else if constexpr (std::is_signed_v<T>) return a < 0 ? wrap_sub(T(0), a) : a;  // abs(MIN) wraps to MIN
        else return a;
    }
};
// NumPy's sign: NaN stays NaN, and zero of either sign gives +0.
template <class T> struct SignOp : Same1<T> {
    static T f(T a) noexcept {
        if constexpr (std::is_floating_point_v<T>) return a > 0 ? T(1) : (a < 0 ? T(-1) : (a == 0 ? T(0) : a));
        else if constexpr (std::is_signed_v<T>) return static_cast<T>((a > 0) - (a < 0));
        else return static_cast<T>(a > 0);
    }
};
// ml_dtypes' bfloat16 sign keeps a zero as it is (-0 stays -0).
struct SignKeepZeroOp : Same1<float> {
    static float f(float a) noexcept { return (a != a || a == 0) ? a : (a < 0 ? -1.0f : 1.0f); }
};
template <class T> struct SquareOp : Same1<T> {
    static T f(T a) noexcept {
        if constexpr (std::is_integral_v<T>) return wrap_mul(a, a);
        else return a * a;
    }
};
// floor/ceil/trunc keep integers (and bools) as they are.
template <class T> struct FloorOp : Same1<T> {
    static T f(T a) noexcept {
        if constexpr (std::is_floating_point_v<T>) return std::floor(a);
        else return a;
    }
};
template <class T> struct CeilOp : Same1<T> {
    static T f(T a) noexcept {
        if constexpr (std::is_floating_point_v<T>) return std::ceil(a);
        else return a;
    }
};
template <class T> struct TruncOp : Same1<T> {
    static T f(T a) noexcept {
        if constexpr (std::is_floating_point_v<T>) return std::trunc(a);
        else return a;
    }
};
// Round half to even (the default rounding mode, which nothing here changes).
template <class T> struct RintOp : Same1<T> {
    static T f(T a) noexcept { return std::nearbyint(a); }
};
// NumPy's reciprocal: 1/x; for integers 1.0/x truncated (1 and -1 are
// their own reciprocals, everything else gives 0; 1/0, which NumPy leaves to
// the C compiler's float -> int conversion of inf, gives 0 by Note [Cast
// semantics]'s rule).
template <class T> struct ReciprocalOp : Same1<T> {
    static T f(T a) noexcept {
        if constexpr (std::is_floating_point_v<T>) return T(1) / a;
        else if constexpr (std::is_signed_v<T>) return (a == 1 || a == -1) ? a : T(0);
        else return a == 1 ? T(1) : T(0);
    }
};
template <class T> struct LNotOp : ToBool1<T> {
    static bool f(T a) noexcept { return !(a != 0); }
};
template <class T> struct InvertOp : Same1<T> {
    static T f(T a) noexcept {
        if constexpr (std::is_same_v<T, bool>) return !a;
        else return static_cast<T>(~a);
    }
};
template <class T> struct IsNanOp : ToBool1<T> {
    static bool f(T a) noexcept {
        if constexpr (std::is_floating_point_v<T>) return a != a;
        else return false;
    }
};
template <class T> struct IsInfOp : ToBool1<T> {
    static bool f(T a) noexcept {
        if constexpr (std::is_floating_point_v<T>) return std::fabs(a) == std::numeric_limits<T>::infinity();
        else return false;
    }
};
template <class T> struct IsFiniteOp : ToBool1<T> {
    static bool f(T a) noexcept {
        // a - a is 0 for finite a and NaN for inf or NaN: one vector compare.
        if constexpr (std::is_floating_point_v<T>) return a - a == 0;
        else return true;
    }
};

}  // namespace

InnerLoop find_unary_loop(Ufunc op, const UfuncLoop& loop) noexcept {
    const DType t = compute_dtype(loop.in[0]);
    constexpr unsigned kAll = kBool | kInts | kFloats;
    switch (op) {
        case Ufunc::Negative: return pick1<NegOp, kInts | kFloats>(t);
        case Ufunc::Positive: return pick1<PosOp, kInts | kFloats>(t);
        case Ufunc::Conjugate: return pick1<PosOp, kInts | kFloats>(t);
        case Ufunc::Reciprocal: return pick1<ReciprocalOp, kInts | kFloats>(t);  // real numbers are their own conjugate
        case Ufunc::Absolute: return pick1<AbsOp, kAll>(t);
        case Ufunc::Sign:
            return loop.in[0] == DType::BFloat16 ? &unary_loop<SignKeepZeroOp> : pick1<SignOp, kInts | kFloats>(t);
        case Ufunc::Square: return pick1<SquareOp, kInts | kFloats>(t);
        case Ufunc::Floor: return pick1<FloorOp, kAll>(t);
        case Ufunc::Ceil: return pick1<CeilOp, kAll>(t);
        case Ufunc::Trunc: return pick1<TruncOp, kAll>(t);
        case Ufunc::Rint: return pick1<RintOp, kFloats>(t);
        case Ufunc::LogicalNot: return pick1<LNotOp, kAll>(t);
        case Ufunc::Invert: return pick1<InvertOp, kBool | kInts>(t);
        case Ufunc::Isnan: return pick1<IsNanOp, kAll>(t);
        case Ufunc::Isinf: return pick1<IsInfOp, kAll>(t);
        case Ufunc::Isfinite: return pick1<IsFiniteOp, kAll>(t);
        default: return nullptr;
    }
}

}  // namespace hrx::kernels::ew
