// Inner loops of the comparisons and of where.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/elementwise_impl.h"

namespace hrx::kernels::ew {

namespace {

template <class T> struct EqOp : ToBool<T> { static bool f(T a, T b) noexcept { return a == b; } };
template <class T> struct NeOp : ToBool<T> { static bool f(T a, T b) noexcept { return a != b; } };
template <class T> struct LtOp : ToBool<T> { static bool f(T a, T b) noexcept { return a < b; } };
template <class T> struct LeOp : ToBool<T> { static bool f(T a, T b) noexcept { return a <= b; } };
template <class T> struct GtOp : ToBool<T> { static bool f(T a, T b) noexcept { return a > b; } };
template <class T> struct GeOp : ToBool<T> { static bool f(T a, T b) noexcept { return a >= b; } };

// int64 against uint64, exactly: -1 for a < b, 0 for equal, 1 for a > b.
inline int cmp_mixed(std::int64_t a, std::uint64_t b) noexcept {
    if (a < 0) return -1;
    const auto ua = static_cast<std::uint64_t>(a);
    return ua < b ? -1 : (ua > b ? 1 : 0);
}

// Op(a, b) with a int64 and b uint64 (Signed first) or the other way round.
template <class Cmp, bool SignedFirst>
struct MixedOp {
    using A = std::conditional_t<SignedFirst, std::int64_t, std::uint64_t>;
    using B = std::conditional_t<SignedFirst, std::uint64_t, std::int64_t>;
    using R = bool;
    static bool f(A a, B b) noexcept {
        if constexpr (SignedFirst) return Cmp::test(cmp_mixed(a, b));
        else return Cmp::test(-cmp_mixed(b, a));
    }
};
struct CEq { static bool test(int c) noexcept { return c == 0; } };
struct CNe { static bool test(int c) noexcept { return c != 0; } };
struct CLt { static bool test(int c) noexcept { return c < 0; } };
struct CLe { static bool test(int c) noexcept { return c <= 0; } };
struct CGt { static bool test(int c) noexcept { return c > 0; } };
struct CGe { static bool test(int c) noexcept { return c >= 0; } };

template <class Cmp>
InnerLoop mixed(const UfuncLoop& loop) noexcept {
    return loop.in[0] == DType::Int64 ? &binary_loop<MixedOp<Cmp, true>> : &binary_loop<MixedOp<Cmp, false>>;
}

// complex128's bit pattern (moved, never computed on).
struct Bytes16 {
    std::uint64_t lo, hi;
};

// where(c, x, y): moves bit patterns, so one loop per item size serves every
// dtype (Note [Compute types]).
template <class T>
void where_loop(char* const* args, const std::int64_t* s, std::int64_t n) {
    const char* pc = args[0];
    const char* px = args[1];
    const char* py = args[2];
    char* po = args[3];
    if (s[0] == 1 && s[1] == sizeof(T) && s[2] == sizeof(T) && s[3] == sizeof(T) && aligned_for<T>(px) &&
        aligned_for<T>(py) && aligned_for<T>(po)) {
        const auto* c = reinterpret_cast<const std::uint8_t*>(pc);
        const T* x = reinterpret_cast<const T*>(px);
        const T* y = reinterpret_cast<const T*>(py);
        T* o = reinterpret_cast<T*>(po);
        for (std::int64_t i = 0; i < n; ++i) o[i] = c[i] ? x[i] : y[i];
        return;
    }
    for (std::int64_t i = 0; i < n; ++i, pc += s[0], px += s[1], py += s[2], po += s[3])
        std::memcpy(po, *pc ? px : py, sizeof(T));
}

}  // namespace

InnerLoop find_compare_loop(Ufunc op, const UfuncLoop& loop) noexcept {
    const DType t = compute_dtype(loop.in[0]);
    const bool mix = loop.in[0] != loop.in[1];
    constexpr unsigned kAll = kBool | kInts | kFloats;
    switch (op) {
        case Ufunc::Equal: return mix ? mixed<CEq>(loop) : pick2<EqOp, kAll>(t);
        case Ufunc::NotEqual: return mix ? mixed<CNe>(loop) : pick2<NeOp, kAll>(t);
        case Ufunc::Less: return mix ? mixed<CLt>(loop) : pick2<LtOp, kAll>(t);
        case Ufunc::LessEqual: return mix ? mixed<CLe>(loop) : pick2<LeOp, kAll>(t);
        case Ufunc::Greater: return mix ? mixed<CGt>(loop) : pick2<GtOp, kAll>(t);
        case Ufunc::GreaterEqual: return mix ? mixed<CGe>(loop) : pick2<GeOp, kAll>(t);
        case Ufunc::Where:
            switch (dtype_itemsize(loop.out)) {
                case 1: return &where_loop<std::uint8_t>;
                case 2: return &where_loop<std::uint16_t>;
                case 4: return &where_loop<std::uint32_t>;
                case 8: return &where_loop<std::uint64_t>;
                default: return &where_loop<Bytes16>;
            }
        default: return nullptr;
    }
}

}  // namespace hrx::kernels::ew
