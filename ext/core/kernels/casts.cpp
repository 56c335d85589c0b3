// Casts between the numeric dtypes: the scalar conversions every kernel
// family uses on the fly, the strided cast table, and copy_cast.
//
// Note [Cast semantics]: each pair gives what NumPy's astype(casting="unsafe")
// gives, with ml_dtypes for bfloat16, except where NumPy has no defined
// answer:
// - to bool: x != 0 (NaN is true); from bool: 0 or 1.
// - integer -> integer wraps (two's complement), integer -> float32/float64 is
//   the C conversion (round to nearest even).
// - every conversion to float16 or bfloat16 rounds once, to nearest even,
//   from the exact source value: float64 -> float16 (as NumPy) and float64 or
//   int64 -> bfloat16 (as ml_dtypes 0.7) do not pass through a rounded
//   float32. (They pass through float32 rounded to odd instead, which keeps
//   the single rounding exact.) Overflow gives +-inf.
// - float16/bfloat16 -> anything goes through float32, which is exact.
// - float -> integer truncates toward zero; NaN, +-inf and values whose
//   truncation the target cannot hold give 0. That is ml_dtypes' rule for
//   bfloat16. NumPy leaves these casts to the C compiler (undefined
//   behaviour; on x86-64 it gives INT_MIN patterns or wrapped values,
//   differently for contiguous and strided arrays), so for float16, float32
//   and float64 sources they differ from NumPy there, by design.
// - complex -> real keeps the real part (NumPy, without its ComplexWarning),
//   then converts it as above; complex -> bool is "either part nonzero";
//   real -> complex converts to the part type with a +0 imaginary part;
//   complex64 <-> complex128 converts each part.
// - NaN payloads are not preserved bit for bit: float -> bfloat16 gives the
//   quiet NaN 0x7FC0 with the sign (as ml_dtypes), float16 conversions quiet
//   a signalling NaN (as the F16C instructions do).
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "kernels/bf16.h"
#include "kernels/bfp16.h"
#include "kernels/cpu_features.h"
#include "kernels/elementwise.h"
#include "kernels/elementwise_impl.h"
#include "kernels/nditer.h"
#include "kernels/pool.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HRX_HALF_X86 1
#include <immintrin.h>
#endif

namespace hrx::kernels {

namespace ew {
namespace {

std::uint32_t bits_of(float f) noexcept {
    std::uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
}
float float_of(std::uint32_t b) noexcept {
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
}

// float32 -> float16 bits, round to nearest even; identical to F16C's
// VCVTPS2PH (a NaN keeps its sign and top payload bits and becomes quiet).
std::uint16_t f32_bits_to_f16(std::uint32_t x) noexcept {
    const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
    const std::uint32_t a = x & 0x7FFFFFFFu;
    if (a >= 0x7F800000u) {
        if (a == 0x7F800000u) return sign | 0x7C00u;
        return static_cast<std::uint16_t>(sign | 0x7E00u | ((a >> 13) & 0x3FFu));
    }
    if (a >= 0x477FF000u) return sign | 0x7C00u;  // >= 65520 rounds past 65504
    if (a >= 0x38800000u) {                       // a float16 normal
        std::uint32_t h = (a >> 13) - (112u << 10);
        const std::uint32_t rem = a & 0x1FFFu;
        h += (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ? 1u : 0u;
        return static_cast<std::uint16_t>(sign | h);
    }
    if (a <= 0x33000000u) return sign;  // <= 2^-25: rounds to (signed) zero
    // A float16 subnormal: the value in units of 2^-24 is m * 2^(e - 126).
    const std::uint32_t e = a >> 23;
    const std::uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
    const std::uint32_t shift = 126u - e;  // 14..24
    std::uint32_t r = m >> shift;
    const std::uint32_t rem = m & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
    r += (rem > halfway || (rem == halfway && (r & 1u))) ? 1u : 0u;
    return static_cast<std::uint16_t>(sign | r);
}

// float16 bits -> float32, exact; a NaN becomes quiet (as VCVTPH2PS).
std::uint32_t f16_to_f32_bits(std::uint16_t h) noexcept {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 0x1F) return sign | 0x7F800000u | (m ? 0x400000u | (m << 13) : 0u);
    if (e != 0) return sign | ((e + 112u) << 23) | (m << 13);
    if (m == 0) return sign;
    return sign | bits_of(static_cast<float>(m) * 0x1p-24f);  // exact: m < 2^10
}

}  // namespace

float half_to_float(std::uint16_t h) noexcept { return float_of(f16_to_f32_bits(h)); }
std::uint16_t float_to_half(float f) noexcept { return f32_bits_to_f16(bits_of(f)); }
float bhalf_to_float(std::uint16_t h) noexcept { return float_of(bf16_to_f32_bits(h)); }
std::uint16_t float_to_bhalf(float f) noexcept { return f32_bits_to_bf16(bits_of(f)); }

// float64 -> float32 rounded to odd: truncated toward zero, with the last bit
// set when inexact. Rounding that once more to a format with at least two
// bits less precision (float16, bfloat16) gives the correctly rounded result
// of the float64 value, which a plain float32 rounding would not.
float round_to_odd_f32(double d) noexcept {
    const float f = static_cast<float>(d);
    if (static_cast<double>(f) == d || d != d) return f;
    std::uint32_t b = bits_of(f);
    if (std::fabs(static_cast<double>(f)) > std::fabs(d)) --b;  // back toward zero (works across binades)
    return float_of(b | 1u);
}

namespace {

// ---------------------------------------------------------------------------
// Scalar conversions (Note [Cast semantics]).

template <class I>
I float_to_int(double v) noexcept {
    const double t = std::trunc(v);
    constexpr bool wide = sizeof(I) == 8;
    bool ok;
    if constexpr (std::is_signed_v<I>) {
        ok = wide ? (t >= -0x1p63 && t < 0x1p63)
                  : (t >= static_cast<double>(std::numeric_limits<I>::min()) &&
                     t <= static_cast<double>(std::numeric_limits<I>::max()));
    } else {
        ok = wide ? (t >= 0.0 && t < 0x1p64) : (t >= 0.0 && t <= static_cast<double>(std::numeric_limits<I>::max()));
    }
    return ok ? static_cast<I>(t) : I(0);  // NaN fails every comparison
}

// An integer as a double that rounds correctly to bfloat16 through
// round_to_odd_f32: exact below 2^53, and above that the dropped low bits
// are folded into a sticky bit far below bfloat16's rounding position.
template <class I>
double int_for_bhalf(I v) noexcept {
    if constexpr (sizeof(I) < 8) {
        return static_cast<double>(v);
    } else {
        const bool neg = std::is_signed_v<I> && v < 0;
        std::uint64_t m = neg ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
        if (m >= (std::uint64_t{1} << 53)) {
            m = (m >> 11) | ((m & 0x7FFu) != 0 ? 1u : 0u);
            const double d = std::ldexp(static_cast<double>(m), 11);
            return neg ? -d : d;
        }
        const double d = static_cast<double>(m);
        return neg ? -d : d;
    }
}

template <class To, class From>
inline To convert(From v) noexcept {
    if constexpr (std::is_same_v<To, From>) {
        return v;
    } else if constexpr (is_complex_v<From> && std::is_same_v<To, bool>) {
        return v.real() != 0 || v.imag() != 0;
    } else if constexpr (is_complex_v<From> && is_complex_v<To>) {
        using P = typename To::value_type;
        return To(static_cast<P>(v.real()), static_cast<P>(v.imag()));
    } else if constexpr (is_complex_v<From>) {
        return convert<To>(v.real());
    } else if constexpr (is_complex_v<To>) {
        using P = typename To::value_type;
        return To(convert<P>(v), P(0));
    } else if constexpr (std::is_same_v<From, Half>) {
        return convert<To>(half_to_float(v.bits));
    } else if constexpr (std::is_same_v<From, BHalf>) {
        return convert<To>(bhalf_to_float(v.bits));
    } else if constexpr (std::is_same_v<To, bool>) {
        return v != 0;
    } else if constexpr (std::is_same_v<From, bool>) {
        return convert<To>(static_cast<std::uint8_t>(v ? 1 : 0));
    } else if constexpr (std::is_same_v<To, Half>) {
        if constexpr (std::is_same_v<From, double>) return Half{float_to_half(round_to_odd_f32(v))};
        else return Half{float_to_half(static_cast<float>(v))};  // integers below 2^24 are exact
    } else if constexpr (std::is_same_v<To, BHalf>) {
        if constexpr (std::is_same_v<From, float>) return BHalf{float_to_bhalf(v)};
        else if constexpr (std::is_same_v<From, double>) return BHalf{float_to_bhalf(round_to_odd_f32(v))};
        else if constexpr (sizeof(From) <= 2) return BHalf{float_to_bhalf(static_cast<float>(v))};
        else return BHalf{float_to_bhalf(round_to_odd_f32(int_for_bhalf(v)))};
    } else if constexpr (std::is_floating_point_v<To>) {
        return static_cast<To>(v);
    } else if constexpr (std::is_floating_point_v<From>) {
        return float_to_int<To>(static_cast<double>(v));
    } else {
        return static_cast<To>(v);  // integer -> integer: modular since C++20
    }
}

template <class From, class To>
void cast_loop(const char* src, std::int64_t ss, char* dst, std::int64_t ds, std::int64_t n) {
    if (ss == sizeof(raw_t<From>) && ds == sizeof(raw_t<To>) && aligned_for<From>(src) && aligned_for<To>(dst)) {
        const auto* s = reinterpret_cast<const raw_t<From>*>(src);
        auto* d = reinterpret_cast<raw_t<To>*>(dst);
        for (std::int64_t i = 0; i < n; ++i) d[i] = to_raw<To>(convert<To>(from_raw<From>(s[i])));
        return;
    }
    for (std::int64_t i = 0; i < n; ++i, src += ss, dst += ds) store<To>(dst, convert<To>(load<From>(src)));
}

template <std::size_t Size>
void copy_loop(const char* src, std::int64_t ss, char* dst, std::int64_t ds, std::int64_t n) {
    if (ss == static_cast<std::int64_t>(Size) && ds == static_cast<std::int64_t>(Size)) {
        std::memcpy(dst, src, static_cast<std::size_t>(n) * Size);
        return;
    }
    for (std::int64_t i = 0; i < n; ++i, src += ss, dst += ds) std::memcpy(dst, src, Size);
}

// ---------------------------------------------------------------------------
// Vector paths for the float16/bfloat16 <-> float32 conversions that every
// float16/bfloat16 loop runs (Note [Compute types]).

std::atomic<bool> g_force_portable{false};

using HalfDown = void (*)(const float*, std::uint16_t*, std::int64_t);
using HalfUp = void (*)(const std::uint16_t*, float*, std::int64_t);

void f32_to_f16_portable(const float* s, std::uint16_t* d, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) d[i] = float_to_half(s[i]);
}
void f16_to_f32_portable(const std::uint16_t* s, float* d, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) d[i] = half_to_float(s[i]);
}

#ifdef HRX_HALF_X86
__attribute__((target("avx2,f16c"))) void f32_to_f16_f16c(const float* s, std::uint16_t* d, std::int64_t n) {
    std::int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(s + i);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    }
    for (; i < n; ++i) d[i] = _cvtss_sh(s[i], _MM_FROUND_TO_NEAREST_INT);
}
__attribute__((target("avx2,f16c"))) void f16_to_f32_f16c(const std::uint16_t* s, float* d, std::int64_t n) {
    std::int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
        _mm256_storeu_ps(d + i, _mm256_cvtph_ps(h));
    }
    for (; i < n; ++i) d[i] = _cvtsh_ss(s[i]);
}
#endif

struct HalfPaths {
    HalfDown down = &f32_to_f16_portable;
    HalfUp up = &f16_to_f32_portable;
    const char* name = "portable";
};

const HalfPaths& half_paths() noexcept {
    static const HalfPaths p = [] {
        HalfPaths r;
#ifdef HRX_HALF_X86
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c") &&
            std::string_view(best_kernel_path()) != "portable") {
            r = {&f32_to_f16_f16c, &f16_to_f32_f16c, "f16c"};
        }
#endif
        return r;
    }();
    return p;
}

bool contiguous_pair(const char* src, std::int64_t ss, std::int64_t sz_s, char* dst, std::int64_t ds,
                     std::int64_t sz_d) noexcept {
    return ss == sz_s && ds == sz_d && reinterpret_cast<std::uintptr_t>(src) % static_cast<std::uintptr_t>(sz_s) == 0 &&
           reinterpret_cast<std::uintptr_t>(dst) % static_cast<std::uintptr_t>(sz_d) == 0;
}

void cast_f32_f16(const char* src, std::int64_t ss, char* dst, std::int64_t ds, std::int64_t n) {
    if (contiguous_pair(src, ss, 4, dst, ds, 2)) {
        const HalfDown f = g_force_portable.load(std::memory_order_relaxed) ? &f32_to_f16_portable : half_paths().down;
        f(reinterpret_cast<const float*>(src), reinterpret_cast<std::uint16_t*>(dst), n);
        return;
    }
    cast_loop<float, Half>(src, ss, dst, ds, n);
}
void cast_f16_f32(const char* src, std::int64_t ss, char* dst, std::int64_t ds, std::int64_t n) {
    if (contiguous_pair(src, ss, 2, dst, ds, 4)) {
        const HalfUp f = g_force_portable.load(std::memory_order_relaxed) ? &f16_to_f32_portable : half_paths().up;
        f(reinterpret_cast<const std::uint16_t*>(src), reinterpret_cast<float*>(dst), n);
        return;
    }
    cast_loop<Half, float>(src, ss, dst, ds, n);
}
void cast_f32_bf16(const char* src, std::int64_t ss, char* dst, std::int64_t ds, std::int64_t n) {
    if (contiguous_pair(src, ss, 4, dst, ds, 2)) {
        auto* s = reinterpret_cast<const float*>(src);
        auto* d = reinterpret_cast<std::uint16_t*>(dst);
        if (g_force_portable.load(std::memory_order_relaxed)) portable::f32_to_bf16(s, d, static_cast<std::size_t>(n));
        else f32_to_bf16(s, d, static_cast<std::size_t>(n));
        return;
    }
    cast_loop<float, BHalf>(src, ss, dst, ds, n);
}
void cast_bf16_f32(const char* src, std::int64_t ss, char* dst, std::int64_t ds, std::int64_t n) {
    if (contiguous_pair(src, ss, 2, dst, ds, 4)) {
        auto* s = reinterpret_cast<const std::uint16_t*>(src);
        auto* d = reinterpret_cast<float*>(dst);
        if (g_force_portable.load(std::memory_order_relaxed)) portable::bf16_to_f32(s, d, static_cast<std::size_t>(n));
        else bf16_to_f32(s, d, static_cast<std::size_t>(n));
        return;
    }
    cast_loop<BHalf, float>(src, ss, dst, ds, n);
}

// The table, in DType order (BFP16 excluded).
template <class From>
constexpr CastFn row_for(DType to) noexcept {
    switch (to) {
        case DType::Bool: return &cast_loop<From, bool>;
        case DType::Int8: return &cast_loop<From, std::int8_t>;
        case DType::Int16: return &cast_loop<From, std::int16_t>;
        case DType::Int32: return &cast_loop<From, std::int32_t>;
        case DType::Int64: return &cast_loop<From, std::int64_t>;
        case DType::UInt8: return &cast_loop<From, std::uint8_t>;
        case DType::UInt16: return &cast_loop<From, std::uint16_t>;
        case DType::UInt32: return &cast_loop<From, std::uint32_t>;
        case DType::UInt64: return &cast_loop<From, std::uint64_t>;
        case DType::Float16: return &cast_loop<From, Half>;
        case DType::BFloat16: return &cast_loop<From, BHalf>;
        case DType::Float32: return &cast_loop<From, float>;
        case DType::Float64: return &cast_loop<From, double>;
        case DType::Complex64: return &cast_loop<From, std::complex<float>>;
        case DType::Complex128: return &cast_loop<From, std::complex<double>>;
        default: return nullptr;
    }
}

constexpr int itemsize_of(DType t) noexcept {
    switch (t) {
        case DType::Bool: case DType::Int8: case DType::UInt8: return 1;
        case DType::Int16: case DType::UInt16: case DType::Float16: case DType::BFloat16: return 2;
        case DType::Int32: case DType::UInt32: case DType::Float32: return 4;
        case DType::Complex128: return 16;
        default: return 8;
    }
}

constexpr CastFn make_cast(DType from, DType to) noexcept {
    if (from == to) {
        switch (itemsize_of(from)) {
            case 1: return &copy_loop<1>;
            case 2: return &copy_loop<2>;
            case 4: return &copy_loop<4>;
            case 8: return &copy_loop<8>;
            default: return &copy_loop<16>;
        }
    }
    if (from == DType::Float32 && to == DType::Float16) return &cast_f32_f16;
    if (from == DType::Float16 && to == DType::Float32) return &cast_f16_f32;
    if (from == DType::Float32 && to == DType::BFloat16) return &cast_f32_bf16;
    if (from == DType::BFloat16 && to == DType::Float32) return &cast_bf16_f32;
    switch (from) {
        case DType::Bool: return row_for<bool>(to);
        case DType::Int8: return row_for<std::int8_t>(to);
        case DType::Int16: return row_for<std::int16_t>(to);
        case DType::Int32: return row_for<std::int32_t>(to);
        case DType::Int64: return row_for<std::int64_t>(to);
        case DType::UInt8: return row_for<std::uint8_t>(to);
        case DType::UInt16: return row_for<std::uint16_t>(to);
        case DType::UInt32: return row_for<std::uint32_t>(to);
        case DType::UInt64: return row_for<std::uint64_t>(to);
        case DType::Float16: return row_for<Half>(to);
        case DType::BFloat16: return row_for<BHalf>(to);
        case DType::Float32: return row_for<float>(to);
        case DType::Float64: return row_for<double>(to);
        case DType::Complex64: return row_for<std::complex<float>>(to);
        case DType::Complex128: return row_for<std::complex<double>>(to);
        default: return nullptr;
    }
}

using CastTable = std::array<std::array<CastFn, kNumericDTypeCount>, kNumericDTypeCount>;
constexpr CastTable kCasts = [] {
    CastTable t{};
    for (int a = 0; a < kNumericDTypeCount; ++a)
        for (int b = 0; b < kNumericDTypeCount; ++b) t[a][b] = make_cast(static_cast<DType>(a), static_cast<DType>(b));
    return t;
}();

}  // namespace

CastFn cast_fn(DType from, DType to) noexcept {
    const int a = static_cast<int>(from), b = static_cast<int>(to);
    if (a >= kNumericDTypeCount || b >= kNumericDTypeCount) return nullptr;
    return kCasts[a][b];
}

}  // namespace ew

// ---------------------------------------------------------------------------

namespace {
// From this many elements a cast is split over the pool; below it waking the
// workers costs more than it saves (see ufunc_run).
constexpr std::int64_t kParallelMin = std::int64_t{1} << 20;
}  // namespace

void copy_cast(int ndim, const std::int64_t* shape, const StridedArg& src, const StridedArg& dst) {
    std::int64_t size = 1;
    for (int d = 0; d < ndim; ++d) size *= shape[d];
    if (size == 0) return;
    const ew::CastFn fn = ew::cast_fn(src.dtype, dst.dtype);
    if (fn == nullptr) throw std::invalid_argument("copy_cast: only numeric dtypes can be cast here");
    if (size == 1) {
        fn(reinterpret_cast<const char*>(src.data), 0, reinterpret_cast<char*>(dst.data), 0, 1);
        return;
    }
    ew::NdLayout L;
    const std::int64_t* strides[2] = {src.strides, dst.strides};
    ew::nd_layout(L, ndim, shape, 2, strides, 1);
    char* base[2] = {reinterpret_cast<char*>(src.data), reinterpret_cast<char*>(dst.data)};
    auto row = [fn](char* const* p, const std::int64_t* s, std::int64_t n) { fn(p[0], s[0], p[1], s[1], n); };
    const std::size_t threads = pool_threads();
    if (size < kParallelMin || threads < 2) {
        ew::nd_rows(L, base, 0, size, row);
        return;
    }
    const std::int64_t items = static_cast<std::int64_t>(threads) * 4;
    pool_run(static_cast<std::size_t>(items), [&](std::size_t i) {
        const std::int64_t b = size * static_cast<std::int64_t>(i) / items;
        const std::int64_t e = size * static_cast<std::int64_t>(i + 1) / items;
        ew::nd_rows(L, base, b, e, row);
    });
}

void force_portable_half_casts(bool on) noexcept { ew::g_force_portable.store(on); }

const char* half_cast_path() noexcept {
    return ew::g_force_portable.load() ? "portable" : ew::half_paths().name;
}

std::vector<std::uint8_t> dense_copy(int ndim, const std::int64_t* shape, const StridedArg& src, DType dt) {
    const auto c_strides = [&](std::int64_t item) {
        std::vector<std::int64_t> st(static_cast<std::size_t>(ndim));
        for (int i = ndim; i-- > 0;) {
            st[static_cast<std::size_t>(i)] = item;
            item *= std::max<std::int64_t>(shape[i], 1);
        }
        return st;
    };
    std::int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= shape[i];
    std::vector<std::uint8_t> out(static_cast<std::size_t>(std::max<std::int64_t>(n * dtype_itemsize(dt), 1)));
    const std::vector<std::int64_t> dense = c_strides(dtype_itemsize(dt));
    const StridedArg dst{out.data(), dt, dense.data()};
    if (src.dtype != DType::BFP16) {
        copy_cast(ndim, shape, src, dst);
        return out;
    }
    std::vector<float> rows(static_cast<std::size_t>(n));
    bfp16_decode_rows(src.data, ndim, shape, src.strides, rows.data());
    const std::vector<std::int64_t> fd = c_strides(sizeof(float));
    copy_cast(ndim, shape, StridedArg{reinterpret_cast<std::uint8_t*>(rows.data()), DType::Float32, fd.data()}, dst);
    return out;
}

}  // namespace hrx::kernels
