// Private to the elementwise/cast/reduction kernels (elementwise*.cpp,
// casts.cpp, reduce.cpp): storage types, element loads and stores, the inner
// loop and cast function types, and the loop templates every kernel family
// instantiates. Nothing outside ext/core/kernels includes this.
//
// Note [Compute types]: every loop runs on a "compute type": the C++ type of
// its dtype, except that float16 and bfloat16 loops run on float (the driver
// widens their inputs and rounds the result once, see Note [Elementwise
// numerics] in elementwise.h). Where is the one exception: it only moves
// values, so its float16/bfloat16 loops copy the 16-bit patterns unchanged.
// Bool is computed as C++ bool but stored as one byte; a stored byte other
// than 0 counts as true.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <complex>
#include <limits>
#include <type_traits>

#include "kernels/dtype.h"
#include "kernels/elementwise.h"

namespace hrx::kernels::ew {

// float16 and bfloat16 elements as their bit patterns; distinct types so that
// the cast templates can tell them apart from uint16.
struct Half {
    std::uint16_t bits;
};
struct BHalf {
    std::uint16_t bits;
};

// The storage type of each dtype.
template <DType D> struct StorageOf;
template <> struct StorageOf<DType::Bool> { using type = bool; };
template <> struct StorageOf<DType::Int8> { using type = std::int8_t; };
template <> struct StorageOf<DType::Int16> { using type = std::int16_t; };
template <> struct StorageOf<DType::Int32> { using type = std::int32_t; };
template <> struct StorageOf<DType::Int64> { using type = std::int64_t; };
template <> struct StorageOf<DType::UInt8> { using type = std::uint8_t; };
template <> struct StorageOf<DType::UInt16> { using type = std::uint16_t; };
template <> struct StorageOf<DType::UInt32> { using type = std::uint32_t; };
template <> struct StorageOf<DType::UInt64> { using type = std::uint64_t; };
template <> struct StorageOf<DType::Float16> { using type = Half; };
template <> struct StorageOf<DType::BFloat16> { using type = BHalf; };
template <> struct StorageOf<DType::Float32> { using type = float; };
template <> struct StorageOf<DType::Float64> { using type = double; };
// std::complex<T> is laid out as T[2] {real, imaginary}, as NumPy's complex.
template <> struct StorageOf<DType::Complex64> { using type = std::complex<float>; };
template <> struct StorageOf<DType::Complex128> { using type = std::complex<double>; };
template <DType D> using storage_t = typename StorageOf<D>::type;

// Raw memory type of a compute type in contiguous loops: bool is read as a
// byte so that a stored 2 is still true (and never an invalid bool).
template <class T> struct Raw { using type = T; };
template <> struct Raw<bool> { using type = std::uint8_t; };
template <class T> using raw_t = typename Raw<T>::type;

template <class T> inline constexpr bool is_complex_v = false;
template <class T> inline constexpr bool is_complex_v<std::complex<T>> = true;

template <class T> inline T from_raw(raw_t<T> v) noexcept {
    if constexpr (std::is_same_v<T, bool>) return v != 0;
    else return v;
}
template <class T> inline raw_t<T> to_raw(T v) noexcept { return static_cast<raw_t<T>>(v); }

// The operand and result types of a binary loop's op (A, B -> R): Same2<T> for
// T x T -> T (arithmetic, bitwise), ToBool<T, U> for T x U -> bool
// (comparisons, logical ops). Shared by the elementwise_*.cpp loop files.
template <class T>
struct Same2 {
    using A = T;
    using B = T;
    using R = T;
};
template <class T, class U = T>
struct ToBool {
    using A = T;
    using B = U;
    using R = bool;
};

// NumPy's complex multiply and divide (Note [Complex numerics] in
// elementwise_complex.cpp), shared by the elementwise loops and reductions.
template <class C> inline C cmul(C a, C b) noexcept {
    return C(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
}

template <class C> inline C cdiv(C a, C b) noexcept {
    using T = typename C::value_type;
    const T ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
    const T abs_br = std::fabs(br), abs_bi = std::fabs(bi);
    if (abs_br >= abs_bi) {
        if (abs_br == 0 && abs_bi == 0) return C(ar / abs_br, ai / abs_br);
        const T rat = bi / br;
        const T scl = T(1) / (br + bi * rat);
        return C((ar + ai * rat) * scl, (ai - ar * rat) * scl);
    }
    const T rat = br / bi;
    const T scl = T(1) / (bi + br * rat);
    return C((ar * rat + ai) * scl, (ai * rat - ar) * scl);
}

// Unaligned-safe element access (strided operands may sit anywhere).
template <class T> inline T load(const char* p) noexcept {
    raw_t<T> v;
    std::memcpy(&v, p, sizeof v);
    return from_raw<T>(v);
}
template <class T> inline void store(char* p, T v) noexcept {
    const raw_t<T> r = to_raw<T>(v);
    std::memcpy(p, &r, sizeof r);
}

template <class T> inline bool aligned_for(const char* p) noexcept {
    return reinterpret_cast<std::uintptr_t>(p) % alignof(raw_t<T>) == 0;
}

// The dtype a loop dtype is computed in (Note [Compute types]).
constexpr DType compute_dtype(DType t) noexcept {
    return (t == DType::Float16 || t == DType::BFloat16) ? DType::Float32 : t;
}

// One inner loop over n elements: args holds the nin inputs then the output,
// steps their byte strides. Inputs and output are of the loop's compute types.
using InnerLoop = void (*)(char* const* args, const std::int64_t* steps, std::int64_t n);

// dst[i] = src[i] converted, n elements with byte strides ss and ds. src and
// dst never overlap.
using CastFn = void (*)(const char* src, std::int64_t ss, char* dst, std::int64_t ds, std::int64_t n);

// The cast from -> to with copy_cast's semantics; nullptr for BFP16.
CastFn cast_fn(DType from, DType to) noexcept;

// Scalar float16/bfloat16 conversions (casts.cpp): widening is exact,
// narrowing rounds to nearest even (Note [Cast semantics] in casts.cpp).
float half_to_float(std::uint16_t h) noexcept;
std::uint16_t float_to_half(float f) noexcept;
float bhalf_to_float(std::uint16_t h) noexcept;
std::uint16_t float_to_bhalf(float f) noexcept;
// float64 -> float32 rounded to odd, for a second rounding that stays exact.
float round_to_odd_f32(double d) noexcept;

// The loops of each kernel family for one (op, loop) pair of the ufunc table;
// nullptr when the family does not implement it. Called once per table entry.
InnerLoop find_arith_loop(Ufunc op, const UfuncLoop& loop) noexcept;
InnerLoop find_compare_loop(Ufunc op, const UfuncLoop& loop) noexcept;
InnerLoop find_logic_loop(Ufunc op, const UfuncLoop& loop) noexcept;
InnerLoop find_unary_loop(Ufunc op, const UfuncLoop& loop) noexcept;
InnerLoop find_math_loop(Ufunc op, const UfuncLoop& loop) noexcept;
InnerLoop find_complex_loop(Ufunc op, const UfuncLoop& loop) noexcept;

// ---------------------------------------------------------------------------
// Loop templates. F names its types (A, B inputs, R result) and computes
// R f(A, B) (or R f(A) for unary ops). The contiguous branches are the ones
// the compiler vectorises; the zero-stride branches cover "array op scalar".

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HRX_EW_AVX2 1
#endif

// Whether the contiguous loops take their AVX2 clones: x86 with AVX2 usable
// (best_kernel_path() is not "portable"). Decided once.
bool avx2_loops() noexcept;

// Ops that only call out (the C library's transcendentals) gain nothing from
// a vector clone; they say so with `static constexpr bool kScalar = true`.
template <class F>
constexpr bool vector_clone() noexcept {
    if constexpr (requires { F::kScalar; }) return !F::kScalar;
    else return true;
}

// The contiguous body of binary_loop: s[0]/s[1] are the element size or 0.
template <class F>
[[gnu::always_inline]] inline void binary_contig(const raw_t<typename F::A>* a, const raw_t<typename F::B>* b,
                                                 raw_t<typename F::R>* o, bool step_a, bool step_b,
                                                 std::int64_t n) noexcept {
    using A = typename F::A;
    using B = typename F::B;
    using R = typename F::R;
    if (step_a && step_b) {
        for (std::int64_t i = 0; i < n; ++i) o[i] = to_raw<R>(F::f(from_raw<A>(a[i]), from_raw<B>(b[i])));
    } else if (step_a) {
        const B y = from_raw<B>(b[0]);
        for (std::int64_t i = 0; i < n; ++i) o[i] = to_raw<R>(F::f(from_raw<A>(a[i]), y));
    } else if (step_b) {
        const A x = from_raw<A>(a[0]);
        for (std::int64_t i = 0; i < n; ++i) o[i] = to_raw<R>(F::f(x, from_raw<B>(b[i])));
    } else {
        const R v = F::f(from_raw<A>(a[0]), from_raw<B>(b[0]));
        for (std::int64_t i = 0; i < n; ++i) o[i] = to_raw<R>(v);
    }
}

template <class F>
[[gnu::always_inline]] inline void unary_contig(const raw_t<typename F::A>* a, raw_t<typename F::R>* o,
                                                std::int64_t n) noexcept {
    for (std::int64_t i = 0; i < n; ++i) o[i] = to_raw<typename F::R>(F::f(from_raw<typename F::A>(a[i])));
}

#ifdef HRX_EW_AVX2
// The same source compiled for AVX2 (without FMA, so nothing contracts and
// results stay those of the portable build).
template <class F>
__attribute__((target("avx2"))) void binary_contig_avx2(const raw_t<typename F::A>* a, const raw_t<typename F::B>* b,
                                                        raw_t<typename F::R>* o, bool step_a, bool step_b,
                                                        std::int64_t n) noexcept {
    binary_contig<F>(a, b, o, step_a, step_b, n);
}
template <class F>
__attribute__((target("avx2"))) void unary_contig_avx2(const raw_t<typename F::A>* a, raw_t<typename F::R>* o,
                                                       std::int64_t n) noexcept {
    unary_contig<F>(a, o, n);
}
#endif

template <class F>
void binary_loop(char* const* args, const std::int64_t* s, std::int64_t n) {
    using A = typename F::A;
    using B = typename F::B;
    using R = typename F::R;
    char* pa = args[0];
    char* pb = args[1];
    char* po = args[2];
    constexpr std::int64_t sa = sizeof(raw_t<A>), sb = sizeof(raw_t<B>), so = sizeof(raw_t<R>);
    const bool aligned = aligned_for<A>(pa) && aligned_for<B>(pb) && aligned_for<R>(po);
    if (aligned && s[2] == so && (s[0] == sa || s[0] == 0) && (s[1] == sb || s[1] == 0)) {
        const auto* a = reinterpret_cast<const raw_t<A>*>(pa);
        const auto* b = reinterpret_cast<const raw_t<B>*>(pb);
        auto* o = reinterpret_cast<raw_t<R>*>(po);
#ifdef HRX_EW_AVX2
        if constexpr (vector_clone<F>()) {
            if (n >= 16 && avx2_loops()) return binary_contig_avx2<F>(a, b, o, s[0] != 0, s[1] != 0, n);
        }
#endif
        binary_contig<F>(a, b, o, s[0] != 0, s[1] != 0, n);
        return;
    }
    for (std::int64_t i = 0; i < n; ++i, pa += s[0], pb += s[1], po += s[2]) {
        store<R>(po, F::f(load<A>(pa), load<B>(pb)));
    }
}

template <class F>
void unary_loop(char* const* args, const std::int64_t* s, std::int64_t n) {
    using A = typename F::A;
    using R = typename F::R;
    char* pa = args[0];
    char* po = args[1];
    if (s[0] == sizeof(raw_t<A>) && s[1] == sizeof(raw_t<R>) && aligned_for<A>(pa) && aligned_for<R>(po)) {
        const auto* a = reinterpret_cast<const raw_t<A>*>(pa);
        auto* o = reinterpret_cast<raw_t<R>*>(po);
#ifdef HRX_EW_AVX2
        if constexpr (vector_clone<F>()) {
            if (n >= 16 && avx2_loops()) return unary_contig_avx2<F>(a, o, n);
        }
#endif
        unary_contig<F>(a, o, n);
        return;
    }
    for (std::int64_t i = 0; i < n; ++i, pa += s[0], po += s[1]) store<R>(po, F::f(load<A>(pa)));
}

// A binary float loop whose contiguous case (either operand may be a
// broadcast scalar, stride 0) goes to an array form Array(a, b, out, n) of
// hrx::fmath (vectorised, the same bits as Op's per-element function, which
// the other layouts use). A scalar operand is repeated into a small buffer.
template <class Op, class T, void (*Array)(const T*, const T*, T*, std::size_t) noexcept>
void array2_loop(char* const* args, const std::int64_t* s, std::int64_t n) {
    constexpr std::int64_t z = sizeof(T);
    if (aligned_for<T>(args[0]) && aligned_for<T>(args[1]) && aligned_for<T>(args[2]) && s[2] == z &&
        (s[0] == z || s[0] == 0) && (s[1] == z || s[1] == 0)) {
        const T* a = reinterpret_cast<const T*>(args[0]);
        const T* b = reinterpret_cast<const T*>(args[1]);
        T* o = reinterpret_cast<T*>(args[2]);
        if (s[0] != 0 && s[1] != 0) return Array(a, b, o, static_cast<std::size_t>(n));
        constexpr std::int64_t kChunk = 256;
        alignas(64) T rep[kChunk];
        const T v = s[0] == 0 ? a[0] : b[0];
        for (std::int64_t k = 0; k < kChunk; ++k) rep[k] = v;
        for (std::int64_t i = 0; i < n; i += kChunk) {
            const std::int64_t m = n - i < kChunk ? n - i : kChunk;
            Array(s[0] == 0 ? rep : a + i, s[1] == 0 ? rep : b + i, o + i, static_cast<std::size_t>(m));
        }
        return;
    }
    binary_loop<Op>(args, s, n);
}

// The types of an op (Note [Compute types]): inputs A (and B), result R.
template <class A_, class B_, class R_> struct Sig2 {
    using A = A_;
    using B = B_;
    using R = R_;
};
template <class A_, class R_> struct Sig1 {
    using A = A_;
    using R = R_;
};

// Kinds of compute types an op template is instantiated for.
enum : unsigned { kBool = 1, kInts = 2, kFloats = 4, kComplex = 8 };

// &Loop<Op<T>> for compute dtype t if t's kind is in K, else nullptr. Loop is
// binary_loop or unary_loop; Op<T> has A = B = T.
template <template <class> class Op, unsigned K, bool Binary>
InnerLoop pick(DType t) noexcept {
#define HRX_PICK(D, T, KIND)                                                        \
    case DType::D:                                                                  \
        if constexpr ((K & KIND) != 0) {                                            \
            if constexpr (Binary) return &binary_loop<Op<T>>;                       \
            else return &unary_loop<Op<T>>;                                         \
        }                                                                           \
        break;
    switch (t) {
        HRX_PICK(Bool, bool, kBool)
        HRX_PICK(Int8, std::int8_t, kInts)
        HRX_PICK(Int16, std::int16_t, kInts)
        HRX_PICK(Int32, std::int32_t, kInts)
        HRX_PICK(Int64, std::int64_t, kInts)
        HRX_PICK(UInt8, std::uint8_t, kInts)
        HRX_PICK(UInt16, std::uint16_t, kInts)
        HRX_PICK(UInt32, std::uint32_t, kInts)
        HRX_PICK(UInt64, std::uint64_t, kInts)
        HRX_PICK(Float32, float, kFloats)
        HRX_PICK(Float64, double, kFloats)
        HRX_PICK(Complex64, std::complex<float>, kComplex)
        HRX_PICK(Complex128, std::complex<double>, kComplex)
        default: break;
    }
#undef HRX_PICK
    return nullptr;
}

template <template <class> class Op, unsigned K> InnerLoop pick2(DType t) noexcept { return pick<Op, K, true>(t); }
template <template <class> class Op, unsigned K> InnerLoop pick1(DType t) noexcept { return pick<Op, K, false>(t); }

// Integer arithmetic that wraps (two's complement) without signed overflow:
// narrow types are widened to unsigned int first, so that uint16 * uint16
// cannot overflow int either.
template <class T>
using wrap_t = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
template <class T> inline T wrap_add(T a, T b) noexcept { return static_cast<T>(static_cast<wrap_t<T>>(a) + static_cast<wrap_t<T>>(b)); }
template <class T> inline T wrap_sub(T a, T b) noexcept { return static_cast<T>(static_cast<wrap_t<T>>(a) - static_cast<wrap_t<T>>(b)); }
template <class T> inline T wrap_mul(T a, T b) noexcept { return static_cast<T>(static_cast<wrap_t<T>>(a) * static_cast<wrap_t<T>>(b)); }

}  // namespace hrx::kernels::ew
