// Inner loops of the binary arithmetic ufuncs: add, subtract, multiply,
// divide, floor_divide, remainder, power, maximum, minimum.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/elementwise_impl.h"

namespace hrx::kernels::ew {

namespace {

template <class T> struct AddOp : Same2<T> {
    static T f(T a, T b) noexcept {
        if constexpr (std::is_integral_v<T>) return wrap_add(a, b);
        else return a + b;
    }
};
template <class T> struct SubOp : Same2<T> {
    static T f(T a, T b) noexcept {
        if constexpr (std::is_integral_v<T>) return wrap_sub(a, b);
        else return a - b;
    }
};
template <class T> struct MulOp : Same2<T> {
    static T f(T a, T b) noexcept {
        if constexpr (std::is_integral_v<T>) return wrap_mul(a, b);
        else return a * b;
    }
};
template <class T> struct DivOp : Same2<T> {
    static T f(T a, T b) noexcept { return a / b; }
};
// NumPy's bool loops of add/multiply/maximum/minimum are or/and.
template <class T> struct OrOp : Same2<T> {
    static T f(T a, T b) noexcept { return a || b; }
};
template <class T> struct AndOp : Same2<T> {
    static T f(T a, T b) noexcept { return a && b; }
};

// Python's floor division and modulo on integers; NumPy gives 0 for a zero
// divisor, and MIN // -1 wraps to MIN (its remainder is 0).
template <class T> T int_floor_divide(T a, T b) noexcept {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
        if (b == -1) return wrap_sub(T(0), a);
        T q = static_cast<T>(a / b);
        if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
        return q;
    } else {
        return static_cast<T>(a / b);
    }
}
template <class T> T int_remainder(T a, T b) noexcept {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
        if (b == -1) return 0;
        T r = static_cast<T>(a % b);
        if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
        return r;
    } else {
        return static_cast<T>(a % b);
    }
}

// Python's divmod on floats, the rule NumPy's npy_divmod implements: the
// remainder takes the divisor's sign, and the quotient (a - mod) / b is
// snapped to the nearest integer so that div * b + mod stays close to a.
template <class T> T float_divmod(T a, T b, T* mod_out) noexcept {
    T mod = std::fmod(a, b);
    T div = (a - mod) / b;
    if (mod != 0) {
        if ((b < 0) != (mod < 0)) {
            mod += b;
            div -= T(1);
        }
    } else {
        mod = std::copysign(T(0), b);
    }
    T fl;
    if (div != 0) {
        fl = std::floor(div);
        if (div - fl > T(0.5)) fl += T(1);
    } else {
        fl = std::copysign(T(0), a / b);
    }
    *mod_out = mod;
    return fl;
}

template <class T> struct FloorDivOp : Same2<T> {
    static T f(T a, T b) noexcept {
        if constexpr (std::is_integral_v<T>) {
            return int_floor_divide(a, b);
        } else {
            if (b == 0) return a / b;  // +-inf or NaN, as IEEE division
            // The array API's special cases: inf // 2 is inf, -1 // inf is -0
            // (NumPy's divmod gives NaN and -1 there).
            if (std::isinf(a) || std::isinf(b)) return std::floor(a / b);
            T mod;
            return float_divmod(a, b, &mod);
        }
    }
};
template <class T> struct RemainderOp : Same2<T> {
    static T f(T a, T b) noexcept {
        if constexpr (std::is_integral_v<T>) {
            return int_remainder(a, b);
        } else {
            if (b == 0) return std::fmod(a, b);  // NaN
            T mod;
            float_divmod(a, b, &mod);
            return mod;
        }
    }
};

// Exponentiation by squaring, wrapping like repeated multiplication. The
// driver has already refused negative exponents (check_exponents), so one
// here can only be a masked-out element: its result is never stored.
template <class T> struct PowerOp : Same2<T> {
    static T f(T a, T b) noexcept {
        if constexpr (std::is_integral_v<T>) {
            if constexpr (std::is_signed_v<T>) {
                if (b < 0) return 0;
            }
            using W = wrap_t<T>;
            W base = static_cast<W>(a), r = 1;
            auto e = static_cast<std::make_unsigned_t<T>>(b);
            while (e != 0) {
                if (e & 1u) r = static_cast<W>(r * base);
                base = static_cast<W>(base * base);
                e = static_cast<decltype(e)>(e >> 1);
            }
            return static_cast<T>(r);
        } else {
            // Small integer exponents multiply, as NumPy's float loops do for
            // 2: x**2 is then the one rounding of the exact square, bit-equal
            // to x * x (the C library's powf, which its vector variant may
            // replace, missed that by an ulp) and several times faster. The
            // float cube is exact-square-times-x in double, rounded to double
            // and then to float: within 1 ulp, like the rest of the float math.
            if (b == 2) return a * a;
            if constexpr (std::is_same_v<T, float>) {
                if (b == 3) {
                    const double d = a;
                    return static_cast<float>(d * d * d);
                }
            }
            return std::pow(a, b);
        }
    }
};

// maximum/minimum propagate NaN (the first one when both are). When the
// operands compare equal (+0 and -0) NumPy's float32/float64 loops and
// ml_dtypes' bfloat16 loop return the second, NumPy's float16 loop the first;
// the Ge/Le variants below are the float16 ones.
template <class T> struct MaxOp : Same2<T> {
    static T f(T a, T b) noexcept {
        if constexpr (std::is_floating_point_v<T>) return (a > b || a != a) ? a : b;
        else return a > b ? a : b;
    }
};
template <class T> struct MinOp : Same2<T> {
    static T f(T a, T b) noexcept {
        if constexpr (std::is_floating_point_v<T>) return (a < b || a != a) ? a : b;
        else return a < b ? a : b;
    }
};
template <class T> struct MaxGeOp : Same2<T> {
    static T f(T a, T b) noexcept { return (a >= b || a != a) ? a : b; }
};
template <class T> struct MinLeOp : Same2<T> {
    static T f(T a, T b) noexcept { return (a <= b || a != a) ? a : b; }
};

}  // namespace

InnerLoop find_arith_loop(Ufunc op, const UfuncLoop& loop) noexcept {
    const DType t = compute_dtype(loop.in[0]);
    const bool is_bool = t == DType::Bool;
    const bool f16 = loop.in[0] == DType::Float16;
    switch (op) {
        case Ufunc::Add: return is_bool ? &binary_loop<OrOp<bool>> : pick2<AddOp, kInts | kFloats>(t);
        case Ufunc::Subtract: return pick2<SubOp, kInts | kFloats>(t);
        case Ufunc::Multiply: return is_bool ? &binary_loop<AndOp<bool>> : pick2<MulOp, kInts | kFloats>(t);
        case Ufunc::Divide: return pick2<DivOp, kFloats>(t);
        case Ufunc::FloorDivide: return pick2<FloorDivOp, kInts | kFloats>(t);
        case Ufunc::Remainder: return pick2<RemainderOp, kInts | kFloats>(t);
        case Ufunc::Power: return pick2<PowerOp, kInts | kFloats>(t);
        case Ufunc::Maximum:
            if (is_bool) return &binary_loop<OrOp<bool>>;
            return f16 ? &binary_loop<MaxGeOp<float>> : pick2<MaxOp, kInts | kFloats>(t);
        case Ufunc::Minimum:
            if (is_bool) return &binary_loop<AndOp<bool>>;
            return f16 ? &binary_loop<MinLeOp<float>> : pick2<MinOp, kInts | kFloats>(t);
        default: return nullptr;
    }
}

}  // namespace hrx::kernels::ew
