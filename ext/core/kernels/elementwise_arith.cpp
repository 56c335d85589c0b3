// Inner loops of the binary arithmetic ufuncs: add, subtract, multiply,
// divide, floor_divide, remainder, power, maximum, minimum, and NumPy's fmax,
// fmin, fmod, gcd and lcm.
#include <cmath>
#include <cstdint>
#include <functional>
#include <type_traits>

#include "kernels/elementwise_impl.h"
#include "kernels/fmath.h"

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
            // hrx::fmath's pow (the Loom executors' too): x**2 is x * x, the
            // one rounding of the exact square (NumPy's loops do the same),
            // the rest within 1 ulp (fmath's vector kernels, whose array forms
            // the contiguous loops call), NumPy's special cases.
            return fmath::pow(a, b);
        }
    }
};

// Float power: a contiguous x**2 with a scalar exponent (x ** 2, the common
// case) is the plain square loop, which the compiler vectorises: the bits of
// fmath::pow's own x**2 branch (x * x) without computing e^(2 ln|x|) first.
// Everything else goes to fmath's pow array form (array2_loop).
template <class T, void (*Array)(const T*, const T*, T*, std::size_t) noexcept>
void power_float_loop(char* const* args, const std::int64_t* s, std::int64_t n) {
    constexpr std::int64_t z = sizeof(T);
    if (s[1] == 0 && s[0] == z && s[2] == z && aligned_for<T>(args[0]) && aligned_for<T>(args[1]) &&
        aligned_for<T>(args[2]) && *reinterpret_cast<const T*>(args[1]) == T(2)) {
        const T* a = reinterpret_cast<const T*>(args[0]);
        T* o = reinterpret_cast<T*>(args[2]);
        for (std::int64_t i = 0; i < n; ++i) o[i] = a[i] * a[i];
        return;
    }
    array2_loop<PowerOp<T>, T, Array>(args, s, n);
}

// maximum/minimum propagate NaN (the first one when both are); fmax/fmin
// ignore it: a NaN operand yields the other (the first NaN when both are).
// When the operands compare equal (+0 and -0) NumPy's float32/float64 loops
// and ml_dtypes' bfloat16 loop return the second, NumPy's float16 loop the
// first (the OrEqual variants). NumPy's own scalar and vector float64 fmax
// loops disagree on signed zeros, so no rule matches both. One template:
// `a` wins when it compares `Cmp` to b (or equal, OrEqual), or by the NaN rule
// (`a` is NaN for maximum/minimum, `b` is NaN for fmax/fmin).
template <class T, class Cmp, bool OrEqual, bool IgnoreNaN> struct ExtremeOp : Same2<T> {
    static T f(T a, T b) noexcept {
        const bool wins = Cmp{}(a, b) || (OrEqual && a == b);
        if constexpr (std::is_floating_point_v<T>) return (wins || (IgnoreNaN ? b != b : a != a)) ? a : b;
        else return wins ? a : b;
    }
};
template <class T> using MaxOp = ExtremeOp<T, std::greater<>, false, false>;
template <class T> using MinOp = ExtremeOp<T, std::less<>, false, false>;
template <class T> using MaxGeOp = ExtremeOp<T, std::greater<>, true, false>;
template <class T> using MinLeOp = ExtremeOp<T, std::less<>, true, false>;
template <class T> using FmaxOp = ExtremeOp<T, std::greater<>, false, true>;
template <class T> using FminOp = ExtremeOp<T, std::less<>, false, true>;
template <class T> using FmaxGeOp = ExtremeOp<T, std::greater<>, true, true>;
template <class T> using FminLeOp = ExtremeOp<T, std::less<>, true, true>;

// C's fmod: the remainder has the dividend's sign. Exact for floats (so the
// same on every host); integers give 0 for a zero divisor as NumPy does, and
// MIN fmod -1 is 0 rather than the overflow trap.
template <class T> struct FmodOp : Same2<T> {
    static T f(T a, T b) noexcept {
        if constexpr (std::is_integral_v<T>) {
            if (b == 0) return 0;
            if constexpr (std::is_signed_v<T>) {
                if (b == -1) return 0;
            }
            return static_cast<T>(a % b);
        } else {
            return std::fmod(a, b);
        }
    }
};

// gcd and lcm of the magnitudes, computed unsigned and wrapped back to T as
// NumPy's loops do: gcd(MIN, MIN) is MIN, and lcm wraps on overflow.
template <class T> std::make_unsigned_t<T> magnitude(T a) noexcept {
    using U = std::make_unsigned_t<T>;
    if constexpr (std::is_signed_v<T>) return a < 0 ? static_cast<U>(U(0) - static_cast<U>(a)) : static_cast<U>(a);
    else return a;
}
template <class U> U gcd_unsigned(U a, U b) noexcept {
    while (b != 0) {
        const U r = static_cast<U>(a % b);
        a = b;
        b = r;
    }
    return a;
}
template <class T> struct GcdOp : Same2<T> {
    static T f(T a, T b) noexcept { return static_cast<T>(gcd_unsigned(magnitude(a), magnitude(b))); }
};
template <class T> struct LcmOp : Same2<T> {
    static T f(T a, T b) noexcept {
        using U = std::make_unsigned_t<T>;
        const U x = magnitude(a), y = magnitude(b), g = gcd_unsigned(x, y);
        if (g == 0) return 0;
        // |a / g * b| = (|a| / g) |b| reduced modulo 2^bits, which is what
        // NumPy's loops give (checked against NumPy 2 for every integer type).
        using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
        return static_cast<T>(static_cast<U>(static_cast<W>(x / g) * static_cast<W>(y)));
    }
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
        case Ufunc::Power:
            if (t == DType::Float32) return &power_float_loop<float, fmath::pow_f32>;
            if (t == DType::Float64) return &power_float_loop<double, fmath::pow_f64>;
            return pick2<PowerOp, kInts | kFloats>(t);
        case Ufunc::Maximum:
            if (is_bool) return &binary_loop<OrOp<bool>>;
            return f16 ? &binary_loop<MaxGeOp<float>> : pick2<MaxOp, kInts | kFloats>(t);
        case Ufunc::Minimum:
            if (is_bool) return &binary_loop<AndOp<bool>>;
            return f16 ? &binary_loop<MinLeOp<float>> : pick2<MinOp, kInts | kFloats>(t);
        case Ufunc::Fmax:
            if (is_bool) return &binary_loop<OrOp<bool>>;
            return f16 ? &binary_loop<FmaxGeOp<float>> : pick2<FmaxOp, kInts | kFloats>(t);
        case Ufunc::Fmin:
            if (is_bool) return &binary_loop<AndOp<bool>>;
            return f16 ? &binary_loop<FminLeOp<float>> : pick2<FminOp, kInts | kFloats>(t);
        case Ufunc::Fmod: return pick2<FmodOp, kInts | kFloats>(t);
        case Ufunc::Gcd: return pick2<GcdOp, kInts>(t);
        case Ufunc::Lcm: return pick2<LcmOp, kInts>(t);
        default: return nullptr;
    }
}

}  // namespace hrx::kernels::ew
