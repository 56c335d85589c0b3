// The packed, register-blocked GEMM (Note [Blocked GEMM] in gemm.h).
//
// One driver serves every element type. A "family" names the input element
// S, the packed accumulator type T, the output element O, the per-k
// operation (fused multiply-add, wrapping multiply-add, or OR of ANDs for
// bool) and the floating-point environment. The driver only moves blocks
// around; the per-element work lives in three function kinds (pack A, pack B,
// micro-kernel) of which each family has a portable and, on x86, an AVX-512
// version. Both versions of a micro-kernel perform the same operations on
// every element in the same order, so they agree bit for bit.
#include "kernels/gemm.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/amx.h"
#include "kernels/cpu_features.h"
#include "kernels/fpenv.h"
#include "kernels/pool.h"
#include "kernels/scratch.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HRX_GEMM_X86 1
#define HRX_TARGET(t) __attribute__((target(t)))
#define HRX_AVX512 "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq"
#include <immintrin.h>
#endif

namespace hrx::kernels::detail {

namespace {

// Rows of a micro-tile; columns are kNV vectors (32 fp32/uint32, 16 fp64/uint64).
constexpr std::size_t kMR = 8;
constexpr std::size_t kNV = 2;
// K per block: a 32-column B micro-panel of kKc values is 48 KiB as fp32 and
// 24 KiB as bf16 pairs (the L1 is 48 KiB); every row panel of the A block
// streams past it. Even, so that a bf16 pair never straddles two blocks.
constexpr std::size_t kKc = 384;
static_assert(kKc % 2 == 0, "Note [Paired k order]");
// Rows of A per work item (its packed block, kMcMax x kKc, lives in L2).
constexpr std::size_t kMcMax = 192;
// Packed B per column chunk (shared by the threads, meant to stay in L3;
// Scratch keeps twice this per thread).
constexpr std::size_t kBChunkBytes = 8u << 20;

template <class T>
constexpr std::size_t lanes() {
    return 64 / sizeof(T);
}
template <class T>
constexpr std::size_t nr() {
    return kNV * lanes<T>();
}

// HRXARRAY_GEMM_KIT (read once; for tests and benchmarks): "dp" or "fma"
// picks the bf16 kit without timing them (Note [bf16 kit choice]); "avx2"
// keeps the GEMM and matrix-vector kernels at AVX2 on an AVX-512 host, so
// that its kernels' bits can be checked there too.
std::string_view gemm_kit_env() noexcept {
    static const std::string_view v = [] {
        const char* env = std::getenv("HRXARRAY_GEMM_KIT");
        return std::string_view(env ? env : "");
    }();
    return v;
}

// ------------------------------------------------------------ element conversions

inline float bf16_to_float(std::uint16_t h) noexcept {
    return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16);
}

inline float half_to_float(std::uint16_t h) noexcept {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t e = (h >> 10) & 0x1Fu, man = h & 0x3FFu;
    if (e == 0) {
        // Zero or subnormal: man * 2^-24, a normal fp32 (or zero), exact.
        const float v = static_cast<float>(man) * 0x1p-24f;
        return std::bit_cast<float>(std::bit_cast<std::uint32_t>(v) | sign);
    }
    if (e == 31) return std::bit_cast<float>(sign | 0x7F800000u | (man << 13));
    return std::bit_cast<float>(sign | ((e + 112u) << 23) | (man << 13));
}

// Round to nearest even, subnormals kept, overflow to Inf; NaN becomes a
// quiet NaN keeping the sign and the top payload bits (what VCVTPS2PH does).
inline std::uint16_t float_to_half(float f) noexcept {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
    const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
    const std::uint32_t ax = x & 0x7FFFFFFFu;
    if (ax > 0x7F800000u) return static_cast<std::uint16_t>(sign | 0x7E00u | ((ax & 0x7FFFFFu) >> 13));
    if (ax >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // >= 65520 rounds to Inf
    if (ax < 0x38800000u) {  // below 2^-14: an fp16 subnormal (or zero)
        if (ax <= 0x33000000u) return sign;  // <= 2^-25: rounds to zero (2^-25 ties to even)
        const std::uint32_t m = (ax & 0x7FFFFFu) | 0x800000u;
        const std::uint32_t shift = 126u - (ax >> 23);  // 14..24
        std::uint32_t r = m >> shift;
        const std::uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (r & 1u))) ++r;
        return static_cast<std::uint16_t>(sign | r);
    }
    std::uint32_t h = (((ax >> 23) - 112u) << 10) | ((ax >> 13) & 0x3FFu);
    const std::uint32_t rem = ax & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
    return static_cast<std::uint16_t>(sign | h);
}

// ------------------------------------------------------------ families

enum class Op { Fma, MulAdd, OrAnd };
enum class Env { None, Ieee, NoDenormals };
// The order in which an output takes its K steps: ascending k; bf16 pairs,
// odd index first (Note [Paired k order]); or the AMX tile order, chains per
// chunk of 32 k (Note [AMX tiles] in amx.h).
enum class KOrder { Ascending, Paired, Tile };

// Note [Blocked accumulation]: the floating families in ascending order
// (float16, float32, float64) sum each K block of kKc products in its own
// accumulator from +0 (one FMA per k, ascending) and add the block's partial
// to the running sum (one rounded addition per block, blocks ascending). A
// single chain over all of K loses about sqrt(K) ulps: 6.1e-5 relative for
// X.T @ X with K = 10^6 float32, against NumPy's 1.5e-6 (issue 28); blocks
// of kKc bring it to sqrt(kKc) + sqrt(K / kKc) ulps. The block edges are
// multiples of kKc on every path (the driver's K blocks, matvec's too), so
// the AVX-512, AVX2 and portable kernels still agree bit for bit. The bf16
// orders (paired, tile) keep their single chain: they are the NPU's and the
// AMX's contracts. Integer and bool families are exact, so either way.
constexpr bool blocked_accumulation(Op op, KOrder order) {
    return op == Op::Fma && order == KOrder::Ascending;
}

// k per chunk of the tile order (16 pairs, one TDPBF16PS).
constexpr std::size_t kTileK = 32;
static_assert(kKc % kTileK == 0, "a K block starts on a chunk edge of the tile order");

struct InBf16 {
    using S = std::uint16_t;
    using T = float;
    static T cv(S s) noexcept { return bf16_to_float(s); }
};
struct InF16 {
    using S = std::uint16_t;
    using T = float;
    static T cv(S s) noexcept { return half_to_float(s); }
};
template <class X, class Y = X>
struct InCast {
    using S = X;
    using T = Y;
    // Integers: any extension gives the same low bits, which is all a
    // wrapping product keeps.
    static T cv(S s) noexcept { return static_cast<T>(s); }
};
struct InBool {
    using S = std::uint8_t;
    using T = std::uint32_t;
    static T cv(S s) noexcept { return s != 0; }
};

template <class T>
struct OutSame {
    using O = T;
    static constexpr bool direct = true;
    static O cv(T t) noexcept { return t; }
};
struct OutF16 {
    using O = std::uint16_t;
    static constexpr bool direct = false;
    static O cv(float t) noexcept { return float_to_half(t); }
};
template <class X>
struct OutTrunc {
    using O = X;
    static constexpr bool direct = false;
    // C++20: conversion to a narrower (signed) integer is modular.
    template <class T>
    static O cv(T t) noexcept {
        return static_cast<O>(t);
    }
};
// Same width as the accumulator (int32 in uint32, int64 in uint64): the
// micro-kernels write the output directly; the bits are the modular result.
template <class X>
struct OutBits {
    using O = X;
    static constexpr bool direct = true;
};
struct OutBool {
    using O = std::uint8_t;
    static constexpr bool direct = false;
    static O cv(std::uint32_t t) noexcept { return t != 0; }
};

template <class In_, class Out_, Op kOp, Env kEnv,
          KOrder kOrder = std::is_same_v<In_, InBf16> ? KOrder::Paired : KOrder::Ascending>
struct Family {
    using In = In_;
    using Out = Out_;
    using S = typename In::S;
    using T = typename In::T;
    using O = typename Out::O;
    static constexpr Op op = kOp;
    static constexpr Env env = kEnv;
    // bf16 products take k in pairs, odd index first (Note [Paired k order]),
    // unless they ask for the tile order.
    static constexpr KOrder order = kOrder;
    static constexpr bool paired = kOrder == KOrder::Paired;
};

// Sets the family's floating-point environment on this thread.
template <Env E>
struct EnvGuard {
    FpEnv env{E == Env::NoDenormals};
};
template <>
struct EnvGuard<Env::None> {};

// ------------------------------------------------------------ kits

template <class T, class S>
struct Kit {
    // c (ldc apart rows) = [c +] ap-panel x bp-panel over kc steps, rows x ncols stored.
    using Micro = void (*)(std::size_t kc, const T* ap, const T* bp, T* c, std::size_t ldc,
                           std::size_t ncols, bool load_c) noexcept;
    // Rows x kc of a (lda apart) into row panels of kMR (zero-padded).
    using PackA = void (*)(const S* a, std::size_t lda, std::size_t rows, std::size_t kc,
                           T* dst) noexcept;
    // kc x cols of b (ldb apart) into column panels of NR (zero-padded).
    using PackB = void (*)(const S* b, std::size_t ldb, std::size_t kc, std::size_t cols,
                           T* dst) noexcept;
    Micro micro[kMR + 1] = {};
    PackA pack_a = nullptr;
    PackB pack_b = nullptr;
    // Values of k per packed step: 1, or 2 for the VDPBF16PS kit, whose
    // panels hold (k, k+1) pairs in one 32-bit slot and so are half as long.
    std::size_t kgroup = 1;
    // K per block (even: Note [Paired k order]).
    std::size_t kc = kKc;
};

// ------------------------------------------------------------ portable kernels

template <class T, Op kOp>
inline T step(T a, T b, T acc) noexcept {
    if constexpr (kOp == Op::Fma) {
        return std::fma(a, b, acc);
    } else if constexpr (kOp == Op::MulAdd) {
        return static_cast<T>(acc + a * b);  // unsigned: wraps
    } else {
        return acc | (a & b);
    }
}

template <class T, Op kOp, int R, KOrder kOrder>
[[gnu::always_inline]] inline void micro_body(std::size_t kc, const T* __restrict ap, const T* __restrict bp,
                    T* __restrict c, std::size_t ldc, std::size_t ncols, bool load_c) noexcept {
    constexpr std::size_t NR = nr<T>();
    constexpr bool kPaired = kOrder == KOrder::Paired;
    // Note [Blocked accumulation]: each K block's partial starts from +0 and is added to c at the end.
    constexpr bool kBlocked = blocked_accumulation(kOp, kOrder);
    T acc[R][NR];
    for (int r = 0; r < R; ++r)
        for (std::size_t j = 0; j < NR; ++j) acc[r][j] = load_c && !kBlocked && j < ncols ? c[r * ldc + j] : T(0);
    if constexpr (kOrder == KOrder::Tile) {
        // Per chunk of kTileK k (a block starts on a chunk edge, so the last
        // chunk of K is the only short one): the even-k and the odd-k
        // products chain apart from +0, then acc <- acc + (even + odd). After
        // an odd K the pad 0 * 0 is the odd chain's last step.
        // Rows in groups of kG keep both chains of a group in registers.
        constexpr int kG = R < 4 ? R : 4;
        for (std::size_t k0 = 0; k0 < kc; k0 += kTileK) {
            const std::size_t k1 = std::min(kc, k0 + kTileK);
            for (int g = 0; g < R; g += kG) {
                T even[kG][NR] = {}, odd[kG][NR] = {};
                for (std::size_t kk = k0; kk < k1; kk += 2) {
                    const bool pad = kk + 1 >= kc;
                    const T* b0 = bp + kk * NR;
                    const T* b1 = bp + (pad ? kk : kk + 1) * NR;
                    for (int r = 0; r < kG && g + r < R; ++r) {
                        const T x0 = ap[kk * kMR + g + r];
                        const T x1 = pad ? T(0) : ap[(kk + 1) * kMR + g + r];
                        for (std::size_t j = 0; j < NR; ++j) {
                            even[r][j] = step<T, kOp>(x0, b0[j], even[r][j]);
                            odd[r][j] = step<T, kOp>(x1, pad ? T(0) : b1[j], odd[r][j]);
                        }
                    }
                }
                for (int r = 0; r < kG && g + r < R; ++r)
                    for (std::size_t j = 0; j < NR; ++j) acc[g + r][j] = acc[g + r][j] + (even[r][j] + odd[r][j]);
            }
        }
        for (int r = 0; r < R; ++r)
            for (std::size_t j = 0; j < ncols; ++j) c[r * ldc + j] = acc[r][j];
        return;
    }
    // Paired (Note [Paired k order]): step s takes k = s ^ 1, and k = kc
    // (after an odd K) is the zero pad. (No lambda here: it would not get
    // micro_avx2's target attribute, and std::fma would become a call.)
    const std::size_t steps = kPaired ? (kc + 1) & ~std::size_t{1} : kc;
    for (std::size_t s = 0; s < steps; ++s) {
        const std::size_t kk = kPaired ? s ^ 1u : s;
        const bool pad = kPaired && kk >= kc;
        const T* b = bp + kk * NR;
        for (int r = 0; r < R; ++r) {
            const T x = pad ? T(0) : ap[kk * kMR + r];
            for (std::size_t j = 0; j < NR; ++j) acc[r][j] = step<T, kOp>(x, pad ? T(0) : b[j], acc[r][j]);
        }
    }
    for (int r = 0; r < R; ++r)
        for (std::size_t j = 0; j < ncols; ++j)
            c[r * ldc + j] = kBlocked && load_c ? T(c[r * ldc + j] + acc[r][j]) : acc[r][j];
}

template <class T, Op kOp, int R, KOrder kOrder>
void micro_portable(std::size_t kc, const T* ap, const T* bp, T* c, std::size_t ldc,
                    std::size_t ncols, bool load_c) noexcept {
    micro_body<T, kOp, R, kOrder>(kc, ap, bp, c, ldc, ncols, load_c);
}

template <class In>
void pack_a_portable(const typename In::S* a, std::size_t lda, std::size_t rows, std::size_t kc,
                     typename In::T* dst) noexcept {
    using T = typename In::T;
    for (std::size_t i0 = 0; i0 < rows; i0 += kMR, dst += kMR * kc) {
        const std::size_t r = std::min(kMR, rows - i0);
        for (std::size_t t = 0; t < kMR; ++t) {
            if (t < r) {
                const auto* src = a + (i0 + t) * lda;
                for (std::size_t k = 0; k < kc; ++k) dst[k * kMR + t] = In::cv(src[k]);
            } else {
                for (std::size_t k = 0; k < kc; ++k) dst[k * kMR + t] = T(0);
            }
        }
    }
}

template <class In>
void pack_b_portable(const typename In::S* b, std::size_t ldb, std::size_t kc, std::size_t cols,
                     typename In::T* dst) noexcept {
    using T = typename In::T;
    constexpr std::size_t NR = nr<T>();
    for (std::size_t j0 = 0; j0 < cols; j0 += NR, dst += kc * NR) {
        const std::size_t w = std::min(NR, cols - j0);
        for (std::size_t k = 0; k < kc; ++k) {
            const auto* src = b + k * ldb + j0;
            T* d = dst + k * NR;
            for (std::size_t j = 0; j < w; ++j) d[j] = In::cv(src[j]);
            for (std::size_t j = w; j < NR; ++j) d[j] = T(0);
        }
    }
}

template <class T, Op kOp, KOrder kOrder, int... R>
constexpr void fill_micro_portable(typename Kit<T, T>::Micro* out, std::integer_sequence<int, R...>) {
    ((out[R + 1] = &micro_portable<T, kOp, R + 1, kOrder>), ...);
}

template <class F>
const Kit<typename F::T, typename F::S>& kit_portable() noexcept {
    static const Kit<typename F::T, typename F::S> k = [] {
        Kit<typename F::T, typename F::S> r;
        using M = typename Kit<typename F::T, typename F::S>::Micro;
        M tmp[kMR + 1] = {};
        fill_micro_portable<typename F::T, F::op, F::order>(tmp, std::make_integer_sequence<int, kMR>{});
        for (std::size_t i = 0; i <= kMR; ++i) r.micro[i] = tmp[i];
        r.pack_a = &pack_a_portable<typename F::In>;
        r.pack_b = &pack_b_portable<typename F::In>;
        return r;
    }();
    return k;
}

// ------------------------------------------------------------ AVX2 kernels

#ifdef HRX_GEMM_X86
// The portable micro-kernel compiled for AVX2+FMA: std::fma becomes one
// instruction instead of a libm call; the arithmetic is the same.
template <class T, Op kOp, int R, KOrder kOrder>
HRX_TARGET("avx2,fma")
void micro_avx2(std::size_t kc, const T* ap, const T* bp, T* c, std::size_t ldc, std::size_t ncols,
                bool load_c) noexcept {
    micro_body<T, kOp, R, kOrder>(kc, ap, bp, c, ldc, ncols, load_c);
}

template <class T, Op kOp, KOrder kOrder, int... R>
constexpr void fill_micro_avx2(typename Kit<T, T>::Micro* out, std::integer_sequence<int, R...>) {
    ((out[R + 1] = &micro_avx2<T, kOp, R + 1, kOrder>), ...);
}

// One ymm of T (float or double) with what micro_fma_avx2 needs.
template <class T>
struct Ymm;
template <>
struct Ymm<float> {
    using V = __m256;
    HRX_TARGET("avx2,fma") static V zero() noexcept { return _mm256_setzero_ps(); }
    HRX_TARGET("avx2,fma") static V load(const float* p) noexcept { return _mm256_loadu_ps(p); }
    HRX_TARGET("avx2,fma") static void store(float* p, V v) noexcept { _mm256_storeu_ps(p, v); }
    HRX_TARGET("avx2,fma") static V set1(float x) noexcept { return _mm256_set1_ps(x); }
    HRX_TARGET("avx2,fma") static V fma(V a, V b, V acc) noexcept { return _mm256_fmadd_ps(a, b, acc); }
    HRX_TARGET("avx2,fma") static V add(V a, V b) noexcept { return _mm256_add_ps(a, b); }
};
template <>
struct Ymm<double> {
    using V = __m256d;
    HRX_TARGET("avx2,fma") static V zero() noexcept { return _mm256_setzero_pd(); }
    HRX_TARGET("avx2,fma") static V load(const double* p) noexcept { return _mm256_loadu_pd(p); }
    HRX_TARGET("avx2,fma") static void store(double* p, V v) noexcept { _mm256_storeu_pd(p, v); }
    HRX_TARGET("avx2,fma") static V set1(double x) noexcept { return _mm256_set1_pd(x); }
    HRX_TARGET("avx2,fma") static V fma(V a, V b, V acc) noexcept { return _mm256_fmadd_pd(a, b, acc); }
    HRX_TARGET("avx2,fma") static V add(V a, V b) noexcept { return _mm256_add_pd(a, b); }
};

// The FMA families (ascending or paired) on AVX2: micro_body's R x NR tile
// is 4R ymm, more than the 16 registers, so the tile is taken two rows at a
// time (8 accumulators, the 4 B vectors of a step loaded once per row pair;
// the B micro-panel stays in L1 between the passes). Each element takes the
// same steps in the same order as in micro_body, so the bits are the same.
template <class T, int R, KOrder kOrder>
HRX_TARGET("avx2,fma")
void micro_fma_avx2(std::size_t kc, const T* __restrict ap, const T* __restrict bp, T* __restrict c,
                    std::size_t ldc, std::size_t ncols, bool load_c) noexcept {
    using Y = Ymm<T>;
    using V = typename Y::V;
    constexpr std::size_t L = 32 / sizeof(T), NR = nr<T>(), NV = NR / L;
    static_assert(NV == 4, "a row of the tile is four ymm");
    constexpr bool kPaired = kOrder == KOrder::Paired;
    constexpr bool kBlocked = blocked_accumulation(Op::Fma, kOrder);
    const std::size_t steps = kPaired ? (kc + 1) & ~std::size_t{1} : kc;
    const bool full = ncols == NR;
    for (int r0 = 0; r0 < R; r0 += 2) {
        const bool two = r0 + 1 < R;
        alignas(32) T edge[2][NR];
        V acc[2][NV];
        for (int r = 0; r < 2; ++r) {
            const T* cr = c + static_cast<std::size_t>(r0 + r) * ldc;
            if (load_c && !kBlocked && (r == 0 || two)) {
                if (!full) {
                    for (std::size_t j = 0; j < NR; ++j) edge[r][j] = j < ncols ? cr[j] : T(0);
                    cr = edge[r];
                }
                for (std::size_t v = 0; v < NV; ++v) acc[r][v] = Y::load(cr + v * L);
            } else {
                for (std::size_t v = 0; v < NV; ++v) acc[r][v] = Y::zero();
            }
        }
        for (std::size_t s = 0; s < steps; ++s) {
            const std::size_t kk = kPaired ? (s ^ 1u) : s;
            if (kPaired && kk >= kc) {
                // The pad step 0 * 0 of an odd K (Note [Paired k order]).
                const V z = Y::zero();
                for (int r = 0; r < 2; ++r)
                    for (std::size_t v = 0; v < NV; ++v) acc[r][v] = Y::fma(z, z, acc[r][v]);
                continue;
            }
            const T* b = bp + kk * NR;
            const V b0 = Y::load(b), b1 = Y::load(b + L), b2 = Y::load(b + 2 * L), b3 = Y::load(b + 3 * L);
            const V x0 = Y::set1(ap[kk * kMR + r0]);
            acc[0][0] = Y::fma(x0, b0, acc[0][0]);
            acc[0][1] = Y::fma(x0, b1, acc[0][1]);
            acc[0][2] = Y::fma(x0, b2, acc[0][2]);
            acc[0][3] = Y::fma(x0, b3, acc[0][3]);
            if (two) {
                const V x1 = Y::set1(ap[kk * kMR + r0 + 1]);
                acc[1][0] = Y::fma(x1, b0, acc[1][0]);
                acc[1][1] = Y::fma(x1, b1, acc[1][1]);
                acc[1][2] = Y::fma(x1, b2, acc[1][2]);
                acc[1][3] = Y::fma(x1, b3, acc[1][3]);
            }
        }
        for (int r = 0; r < (two ? 2 : 1); ++r) {
            T* cr = c + static_cast<std::size_t>(r0 + r) * ldc;
            if (kBlocked && load_c) {
                const T* src = cr;
                if (!full) {
                    for (std::size_t j = 0; j < NR; ++j) edge[r][j] = j < ncols ? cr[j] : T(0);
                    src = edge[r];
                }
                for (std::size_t v = 0; v < NV; ++v) acc[r][v] = Y::add(Y::load(src + v * L), acc[r][v]);
            }
            if (full) {
                for (std::size_t v = 0; v < NV; ++v) Y::store(cr + v * L, acc[r][v]);
            } else {
                for (std::size_t v = 0; v < NV; ++v) Y::store(edge[r] + v * L, acc[r][v]);
                for (std::size_t j = 0; j < ncols; ++j) cr[j] = edge[r][j];
            }
        }
    }
}

template <class T, KOrder kOrder, int... R>
constexpr void fill_micro_fma_avx2(typename Kit<T, T>::Micro* out, std::integer_sequence<int, R...>) {
    ((out[R + 1] = &micro_fma_avx2<T, R + 1, kOrder>), ...);
}

template <class F>
const Kit<typename F::T, typename F::S>& kit_avx2() noexcept {
    static const Kit<typename F::T, typename F::S> k = [] {
        using T = typename F::T;
        Kit<T, typename F::S> r = kit_portable<F>();
        typename Kit<T, T>::Micro tmp[kMR + 1] = {};
        if constexpr (F::op == Op::Fma && F::order != KOrder::Tile &&
                      (std::is_same_v<T, float> || std::is_same_v<T, double>)) {
            fill_micro_fma_avx2<T, F::order>(tmp, std::make_integer_sequence<int, kMR>{});
        } else {
            fill_micro_avx2<T, F::op, F::order>(tmp, std::make_integer_sequence<int, kMR>{});
        }
        for (std::size_t i = 0; i <= kMR; ++i) r.micro[i] = tmp[i];
        return r;
    }();
    return k;
}
#endif

// ------------------------------------------------------------ AVX-512 kernels

#ifdef HRX_GEMM_X86

// One zmm of T with the operations a micro-kernel needs.
template <class T, Op kOp>
struct Zmm;

template <>
struct Zmm<float, Op::Fma> {
    using V = __m512;
    using M = __mmask16;
    HRX_TARGET(HRX_AVX512) static V zero() noexcept { return _mm512_setzero_ps(); }
    HRX_TARGET(HRX_AVX512) static V load(const float* p) noexcept { return _mm512_load_ps(p); }
    HRX_TARGET(HRX_AVX512) static V loadm(M m, const float* p) noexcept { return _mm512_maskz_loadu_ps(m, p); }
    HRX_TARGET(HRX_AVX512) static void storem(float* p, M m, V v) noexcept { _mm512_mask_storeu_ps(p, m, v); }
    HRX_TARGET(HRX_AVX512) static V set1(float x) noexcept { return _mm512_set1_ps(x); }
    HRX_TARGET(HRX_AVX512) static V step(V a, V b, V acc) noexcept { return _mm512_fmadd_ps(a, b, acc); }
    HRX_TARGET(HRX_AVX512) static V add(V a, V b) noexcept { return _mm512_add_ps(a, b); }
};
template <>
struct Zmm<double, Op::Fma> {
    using V = __m512d;
    using M = __mmask8;
    HRX_TARGET(HRX_AVX512) static V zero() noexcept { return _mm512_setzero_pd(); }
    HRX_TARGET(HRX_AVX512) static V load(const double* p) noexcept { return _mm512_load_pd(p); }
    HRX_TARGET(HRX_AVX512) static V loadm(M m, const double* p) noexcept { return _mm512_maskz_loadu_pd(m, p); }
    HRX_TARGET(HRX_AVX512) static void storem(double* p, M m, V v) noexcept { _mm512_mask_storeu_pd(p, m, v); }
    HRX_TARGET(HRX_AVX512) static V set1(double x) noexcept { return _mm512_set1_pd(x); }
    HRX_TARGET(HRX_AVX512) static V step(V a, V b, V acc) noexcept { return _mm512_fmadd_pd(a, b, acc); }
    HRX_TARGET(HRX_AVX512) static V add(V a, V b) noexcept { return _mm512_add_pd(a, b); }
};
template <Op kOp>
struct ZmmU32 {
    using V = __m512i;
    using M = __mmask16;
    HRX_TARGET(HRX_AVX512) static V zero() noexcept { return _mm512_setzero_si512(); }
    HRX_TARGET(HRX_AVX512) static V load(const std::uint32_t* p) noexcept { return _mm512_load_si512(p); }
    HRX_TARGET(HRX_AVX512) static V loadm(M m, const std::uint32_t* p) noexcept { return _mm512_maskz_loadu_epi32(m, p); }
    HRX_TARGET(HRX_AVX512) static void storem(std::uint32_t* p, M m, V v) noexcept { _mm512_mask_storeu_epi32(p, m, v); }
    HRX_TARGET(HRX_AVX512) static V set1(std::uint32_t x) noexcept { return _mm512_set1_epi32(static_cast<int>(x)); }
    HRX_TARGET(HRX_AVX512) static V step(V a, V b, V acc) noexcept {
        if constexpr (kOp == Op::MulAdd) {
            return _mm512_add_epi32(acc, _mm512_mullo_epi32(a, b));
        } else {
            return _mm512_or_si512(acc, _mm512_and_si512(a, b));
        }
    }
};
template <>
struct Zmm<std::uint32_t, Op::MulAdd> : ZmmU32<Op::MulAdd> {};
template <>
struct Zmm<std::uint32_t, Op::OrAnd> : ZmmU32<Op::OrAnd> {};
template <>
struct Zmm<std::uint64_t, Op::MulAdd> {
    using V = __m512i;
    using M = __mmask8;
    HRX_TARGET(HRX_AVX512) static V zero() noexcept { return _mm512_setzero_si512(); }
    HRX_TARGET(HRX_AVX512) static V load(const std::uint64_t* p) noexcept { return _mm512_load_si512(p); }
    HRX_TARGET(HRX_AVX512) static V loadm(M m, const std::uint64_t* p) noexcept { return _mm512_maskz_loadu_epi64(m, p); }
    HRX_TARGET(HRX_AVX512) static void storem(std::uint64_t* p, M m, V v) noexcept { _mm512_mask_storeu_epi64(p, m, v); }
    HRX_TARGET(HRX_AVX512) static V set1(std::uint64_t x) noexcept { return _mm512_set1_epi64(static_cast<long long>(x)); }
    HRX_TARGET(HRX_AVX512) static V step(V a, V b, V acc) noexcept {
        return _mm512_add_epi64(acc, _mm512_mullo_epi64(a, b));
    }
};

// The register tile: R rows x 2 vectors, each row's two vectors of B loaded
// once per k and each A value broadcast once per k; the same operations, in
// the same order per element, as micro_portable.
template <class T, Op kOp, int R, bool kPaired>
HRX_TARGET(HRX_AVX512)
void micro_avx512(std::size_t kc, const T* __restrict ap, const T* __restrict bp, T* __restrict c,
                  std::size_t ldc, std::size_t ncols, bool load_c) noexcept {
    using Z = Zmm<T, kOp>;
    using V = typename Z::V;
    using M = typename Z::M;
    constexpr std::size_t L = lanes<T>(), NR = nr<T>();
    const std::size_t n0 = std::min(ncols, L), n1 = ncols > L ? std::min(ncols - L, L) : 0;
    const M m0 = static_cast<M>((1ull << n0) - 1ull), m1 = static_cast<M>((1ull << n1) - 1ull);
    // Note [Blocked accumulation].
    constexpr bool kBlocked = blocked_accumulation(kOp, kPaired ? KOrder::Paired : KOrder::Ascending);
    V acc0[R], acc1[R];
    for (int r = 0; r < R; ++r) {
        acc0[r] = load_c && !kBlocked ? Z::loadm(m0, c + r * ldc) : Z::zero();
        acc1[r] = load_c && !kBlocked ? Z::loadm(m1, c + r * ldc + L) : Z::zero();
    }
    // The driver's next call takes the tile below this one: fetch it while
    // this one computes (a prefetch never faults, even past the block).
    for (std::size_t r = kMR; r < 2 * kMR; ++r) {
        _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + NR) - 1, _MM_HINT_T0);
    }
    // Paired (Note [Paired k order]): step s takes k = s ^ 1; k = kc after
    // an odd K is the zero pad (it turns a flushed -0 into +0). (No lambda:
    // it would not inherit this function's target attribute.)
    const std::size_t steps = kPaired ? (kc + 1) & ~std::size_t{1} : kc;
    for (std::size_t s = 0; s < steps; ++s) {
        const std::size_t kk = kPaired ? s ^ 1u : s;
        if (kPaired && kk >= kc) {
            const V z = Z::zero();
            for (int r = 0; r < R; ++r) {
                acc0[r] = Z::step(z, z, acc0[r]);
                acc1[r] = Z::step(z, z, acc1[r]);
            }
            continue;
        }
        const V b0 = Z::load(bp + kk * NR), b1 = Z::load(bp + kk * NR + L);
        const T* a = ap + kk * kMR;
        for (int r = 0; r < R; ++r) {
            const V x = Z::set1(a[r]);
            acc0[r] = Z::step(x, b0, acc0[r]);
            acc1[r] = Z::step(x, b1, acc1[r]);
        }
    }
    if constexpr (kBlocked) {
        if (load_c)
            for (int r = 0; r < R; ++r) {
                acc0[r] = Z::add(Z::loadm(m0, c + r * ldc), acc0[r]);
                acc1[r] = Z::add(Z::loadm(m1, c + r * ldc + L), acc1[r]);
            }
    }
    for (int r = 0; r < R; ++r) {
        Z::storem(c + r * ldc, m0, acc0[r]);
        Z::storem(c + r * ldc + L, m1, acc1[r]);
    }
}

// 8 inputs of the fp32 family at p, as 8 floats (exact widening).
template <class In>
HRX_TARGET(HRX_AVX512)
inline __m256 load8(const typename In::S* p) noexcept {
    if constexpr (std::is_same_v<In, InBf16>) {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    } else if constexpr (std::is_same_v<In, InF16>) {
        return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    } else {
        return _mm256_loadu_ps(p);
    }
}

// Up to 16 inputs of the fp32 family at p (the rest zero), as floats.
template <class In>
HRX_TARGET(HRX_AVX512)
inline __m512 load16(const typename In::S* p, std::size_t count) noexcept {
    const __mmask16 m = static_cast<__mmask16>((1u << count) - 1u);
    if constexpr (std::is_same_v<In, InBf16>) {
        const __m256i h = _mm256_maskz_loadu_epi16(m, p);
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    } else if constexpr (std::is_same_v<In, InF16>) {
        return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
    } else {
        return _mm512_maskz_loadu_ps(m, p);
    }
}

HRX_TARGET(HRX_AVX512)
inline void transpose8(__m256 (&v)[8]) noexcept {
    const __m256 t0 = _mm256_unpacklo_ps(v[0], v[1]), t1 = _mm256_unpackhi_ps(v[0], v[1]);
    const __m256 t2 = _mm256_unpacklo_ps(v[2], v[3]), t3 = _mm256_unpackhi_ps(v[2], v[3]);
    const __m256 t4 = _mm256_unpacklo_ps(v[4], v[5]), t5 = _mm256_unpackhi_ps(v[4], v[5]);
    const __m256 t6 = _mm256_unpacklo_ps(v[6], v[7]), t7 = _mm256_unpackhi_ps(v[6], v[7]);
    const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    v[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
    v[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
    v[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
    v[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
    v[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
    v[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
    v[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
    v[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

// A panels of the fp32 family: full 8x8 blocks by loads and a transpose.
template <class In>
HRX_TARGET(HRX_AVX512)
void pack_a_f32_avx512(const typename In::S* a, std::size_t lda, std::size_t rows, std::size_t kc,
                       float* dst) noexcept {
    for (std::size_t i0 = 0; i0 < rows; i0 += kMR, dst += kMR * kc) {
        const std::size_t r = std::min(kMR, rows - i0);
        std::size_t k = 0;
        if (r == kMR) {
            for (; k + 8 <= kc; k += 8) {
                __m256 v[8];
                for (int t = 0; t < 8; ++t) v[t] = load8<In>(a + (i0 + t) * lda + k);
                transpose8(v);
                for (int t = 0; t < 8; ++t) _mm256_storeu_ps(dst + (k + t) * kMR, v[t]);
            }
        }
        for (; k < kc; ++k)
            for (std::size_t t = 0; t < kMR; ++t) dst[k * kMR + t] = t < r ? In::cv(a[(i0 + t) * lda + k]) : 0.0f;
    }
}

template <class In>
HRX_TARGET(HRX_AVX512)
void pack_b_f32_avx512(const typename In::S* b, std::size_t ldb, std::size_t kc, std::size_t cols,
                       float* dst) noexcept {
    constexpr std::size_t NR = nr<float>();
    for (std::size_t j0 = 0; j0 < cols; j0 += NR, dst += kc * NR) {
        const std::size_t w = std::min(NR, cols - j0);
        const std::size_t w0 = std::min<std::size_t>(w, 16), w1 = w > 16 ? w - 16 : 0;
        for (std::size_t k = 0; k < kc; ++k) {
            const auto* src = b + k * ldb + j0;
            _mm512_store_ps(dst + k * NR, load16<In>(src, w0));
            _mm512_store_ps(dst + k * NR + 16, w1 ? load16<In>(src + 16, w1) : _mm512_setzero_ps());
        }
    }
}

// The portable packers recompiled for AVX-512 (the compiler vectorises what it can).
template <class In>
HRX_TARGET(HRX_AVX512)
void pack_a_generic_avx512(const typename In::S* a, std::size_t lda, std::size_t rows,
                           std::size_t kc, typename In::T* dst) noexcept {
    using T = typename In::T;
    for (std::size_t i0 = 0; i0 < rows; i0 += kMR, dst += kMR * kc) {
        const std::size_t r = std::min(kMR, rows - i0);
        for (std::size_t k = 0; k < kc; ++k)
            for (std::size_t t = 0; t < kMR; ++t) dst[k * kMR + t] = t < r ? In::cv(a[(i0 + t) * lda + k]) : T(0);
    }
}
template <class In>
HRX_TARGET(HRX_AVX512)
void pack_b_generic_avx512(const typename In::S* b, std::size_t ldb, std::size_t kc,
                           std::size_t cols, typename In::T* dst) noexcept {
    using T = typename In::T;
    constexpr std::size_t NR = nr<T>();
    for (std::size_t j0 = 0; j0 < cols; j0 += NR, dst += kc * NR) {
        const std::size_t w = std::min(NR, cols - j0);
        for (std::size_t k = 0; k < kc; ++k) {
            const auto* src = b + k * ldb + j0;
            T* d = dst + k * NR;
            for (std::size_t j = 0; j < NR; ++j) d[j] = j < w ? In::cv(src[j]) : T(0);
        }
    }
}

template <class T, Op kOp, bool kPaired, int... R>
constexpr void fill_micro_avx512(typename Kit<T, T>::Micro* out, std::integer_sequence<int, R...>) {
    ((out[R + 1] = &micro_avx512<T, kOp, R + 1, kPaired>), ...);
}

// The tile order's micro-kernel (micro_body) compiled for AVX-512.
template <int R>
HRX_TARGET(HRX_AVX512)
void micro_tile_avx512(std::size_t kc, const float* ap, const float* bp, float* c, std::size_t ldc,
                       std::size_t ncols, bool load_c) noexcept {
    micro_body<float, Op::Fma, R, KOrder::Tile>(kc, ap, bp, c, ldc, ncols, load_c);
}

template <int... R>
constexpr void fill_micro_tile_avx512(Kit<float, float>::Micro* out, std::integer_sequence<int, R...>) {
    ((out[R + 1] = &micro_tile_avx512<R + 1>), ...);
}

// The bf16 family in the tile order: AVX-512 packing and micro_body's order.
template <class F>
const Kit<float, std::uint16_t>& kit_tile_avx512() noexcept {
    static const Kit<float, std::uint16_t> k = [] {
        Kit<float, std::uint16_t> r;
        Kit<float, float>::Micro tmp[kMR + 1] = {};
        fill_micro_tile_avx512(tmp, std::make_integer_sequence<int, kMR>{});
        for (std::size_t i = 0; i <= kMR; ++i) r.micro[i] = tmp[i];
        r.pack_a = &pack_a_f32_avx512<InBf16>;
        r.pack_b = &pack_b_f32_avx512<InBf16>;
        return r;
    }();
    return k;
}

template <class F>
const Kit<typename F::T, typename F::S>& kit_avx512() noexcept {
    static const Kit<typename F::T, typename F::S> k = [] {
        using T = typename F::T;
        using In = typename F::In;
        Kit<T, typename F::S> r;
        typename Kit<T, T>::Micro tmp[kMR + 1] = {};
        fill_micro_avx512<T, F::op, F::paired>(tmp, std::make_integer_sequence<int, kMR>{});
        for (std::size_t i = 0; i <= kMR; ++i) r.micro[i] = tmp[i];
        if constexpr (std::is_same_v<T, float>) {
            r.pack_a = &pack_a_f32_avx512<In>;
            r.pack_b = &pack_b_f32_avx512<In>;
        } else {
            r.pack_a = &pack_a_generic_avx512<In>;
            r.pack_b = &pack_b_generic_avx512<In>;
        }
        return r;
    }();
    return k;
}

// ------------------------------------------------------------ AVX512-BF16 kit

// The bf16 family with VDPBF16PS (Note [Paired k order] in gemm.h): panels
// keep the raw bf16 pairs (k, k+1) in 32-bit slots of the float scratch, and
// one instruction takes both steps of a pair for 16 outputs.
#define HRX_AVX512BF16 HRX_AVX512 ",avx512bf16"

// A panels: for each pair q, kMR slots a[r][2q] | a[r][2q+1] << 16 (zero pad).
HRX_TARGET(HRX_AVX512BF16)
void pack_a_dp(const std::uint16_t* a, std::size_t lda, std::size_t rows, std::size_t kc,
               float* dst) noexcept {
    const std::size_t kp = (kc + 1) / 2;
    for (std::size_t i0 = 0; i0 < rows; i0 += kMR, dst += kMR * kp) {
        const std::size_t r = std::min(kMR, rows - i0);
        std::size_t q = 0;
        if (r == kMR) {
            // 8 rows x 8 pairs: a transpose of 32-bit slots.
            for (; 2 * (q + 8) <= kc; q += 8) {
                __m256 v[8];
                for (std::size_t t = 0; t < 8; ++t)
                    v[t] = _mm256_castsi256_ps(
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + (i0 + t) * lda + 2 * q)));
                transpose8(v);
                for (std::size_t t = 0; t < 8; ++t) _mm256_storeu_ps(dst + (q + t) * kMR, v[t]);
            }
        }
        for (; q < kp; ++q) {
            for (std::size_t t = 0; t < kMR; ++t) {
                const std::uint16_t* row = a + (i0 + t) * lda;
                const std::uint32_t lo = t < r ? row[2 * q] : 0u;
                const std::uint32_t hi = t < r && 2 * q + 1 < kc ? row[2 * q + 1] : 0u;
                const std::uint32_t w = lo | (hi << 16);
                std::memcpy(dst + q * kMR + t, &w, sizeof w);
            }
        }
    }
}

// B panels: for each pair q, NR slots b[2q][j] | b[2q+1][j] << 16 (zero pad).
HRX_TARGET(HRX_AVX512BF16)
void pack_b_dp(const std::uint16_t* b, std::size_t ldb, std::size_t kc, std::size_t cols,
               float* dst) noexcept {
    constexpr std::size_t NR = nr<float>();
    static_assert(NR == 32, "one pair row of a panel is two zmm");
    alignas(64) std::uint16_t ilo[32], ihi[32];
    for (unsigned i = 0; i < 32; ++i) {
        ilo[i] = static_cast<std::uint16_t>((i & 1u ? 32u : 0u) + i / 2);
        ihi[i] = static_cast<std::uint16_t>((i & 1u ? 48u : 16u) + i / 2);
    }
    const __m512i lo = _mm512_load_si512(ilo), hi = _mm512_load_si512(ihi);
    const std::size_t kp = (kc + 1) / 2;
    for (std::size_t j0 = 0; j0 < cols; j0 += NR, dst += kp * NR) {
        const std::size_t w = std::min(NR, cols - j0);
        const __mmask32 m = w == 32 ? ~__mmask32{0} : static_cast<__mmask32>((1u << w) - 1u);
        for (std::size_t q = 0; q < kp; ++q) {
            const std::uint16_t* r0 = b + 2 * q * ldb + j0;
            const __m512i x0 = _mm512_maskz_loadu_epi16(m, r0);
            const __m512i x1 = 2 * q + 1 < kc ? _mm512_maskz_loadu_epi16(m, r0 + ldb) : _mm512_setzero_si512();
            _mm512_store_si512(dst + q * NR, _mm512_permutex2var_epi16(x0, lo, x1));
            _mm512_store_si512(dst + q * NR + 16, _mm512_permutex2var_epi16(x0, hi, x1));
        }
    }
}

HRX_TARGET(HRX_AVX512BF16)
inline __m512bh as_bh(__m512i v) noexcept { return reinterpret_cast<__m512bh&>(v); }

// R rows x 32 columns; per pair, two B vectors and R broadcast A slots.
template <int R>
HRX_TARGET(HRX_AVX512BF16)
void micro_dp(std::size_t kc, const float* __restrict ap, const float* __restrict bp,
              float* __restrict c, std::size_t ldc, std::size_t ncols, bool load_c) noexcept {
    constexpr std::size_t L = 16, NR = nr<float>();
    const std::size_t kp = (kc + 1) / 2;
    const std::size_t n0 = std::min(ncols, L), n1 = ncols > L ? std::min(ncols - L, L) : 0;
    const __mmask16 m0 = static_cast<__mmask16>((1u << n0) - 1u), m1 = static_cast<__mmask16>((1u << n1) - 1u);
    __m512 acc0[R], acc1[R];
    for (int r = 0; r < R; ++r) {
        acc0[r] = load_c ? _mm512_maskz_loadu_ps(m0, c + r * ldc) : _mm512_setzero_ps();
        acc1[r] = load_c ? _mm512_maskz_loadu_ps(m1, c + r * ldc + L) : _mm512_setzero_ps();
    }
    for (std::size_t r = kMR; r < 2 * kMR; ++r) {
        _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + NR) - 1, _MM_HINT_T0);
    }
    for (std::size_t q = 0; q < kp; ++q) {
        const __m512bh b0 = as_bh(_mm512_load_si512(bp + q * NR));
        const __m512bh b1 = as_bh(_mm512_load_si512(bp + q * NR + L));
        const float* a = ap + q * kMR;
        for (int r = 0; r < R; ++r) {
            // A float load moves the slot's bits unchanged.
            const __m512bh x = as_bh(_mm512_castps_si512(_mm512_set1_ps(a[r])));
            acc0[r] = _mm512_dpbf16_ps(acc0[r], x, b0);
            acc1[r] = _mm512_dpbf16_ps(acc1[r], x, b1);
        }
    }
    for (int r = 0; r < R; ++r) {
        _mm512_mask_storeu_ps(c + r * ldc, m0, acc0[r]);
        _mm512_mask_storeu_ps(c + r * ldc + L, m1, acc1[r]);
    }
}

template <int... R>
constexpr void fill_micro_dp(Kit<float, std::uint16_t>::Micro* out, std::integer_sequence<int, R...>) {
    ((out[R + 1] = &micro_dp<R + 1>), ...);
}

// Whether VDPBF16PS on this CPU computes what Note [Paired k order] says:
// acc <- fma(a[2i], b[2i], fma(a[2i+1], b[2i+1], acc)) under DAZ|FTZ. Intel
// documents exactly that; checked once on random operands spread over every
// exponent (subnormals, cancellation to -0, overflow) in case a CPU differs.
HRX_TARGET(HRX_AVX512BF16)
bool dp_matches_fma() noexcept {
    FpEnv env(true);
    CheckOperands rng{0x9E3779B97F4A7C15ull};
    const __m512i hi_mask = _mm512_set1_epi32(static_cast<int>(0xFFFF0000u));
    for (int it = 0; it < 4096; ++it) {
        alignas(64) std::uint16_t a[32], b[32];
        alignas(64) std::uint32_t acc[16];
        const unsigned mode = static_cast<unsigned>(it) % 3u;
        for (int i = 0; i < 32; ++i) {
            a[i] = rng.bf16(mode);
            b[i] = rng.bf16(mode);
        }
        for (int i = 0; i < 16; ++i)
            acc[i] = static_cast<std::uint32_t>(rng.bf16(mode)) << 16 | (rng.next() & 0xFFFFu);
        if (it == 0) {
            for (int i = 0; i < 32; ++i) a[i] = b[i] = 0;
            acc[0] = 0x80000000u;  // -0 + 0*0 + 0*0 is +0
        }
        const __m512i va = _mm512_load_si512(a), vb = _mm512_load_si512(b);
        const __m512 c = _mm512_castsi512_ps(_mm512_load_si512(acc));
        const __m512 got = _mm512_dpbf16_ps(c, as_bh(va), as_bh(vb));
        const __m512 a_even = _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xFFFF, va, 16));
        const __m512 b_even = _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xFFFF, vb, 16));
        const __m512 a_odd = _mm512_castsi512_ps(_mm512_and_si512(va, hi_mask));
        const __m512 b_odd = _mm512_castsi512_ps(_mm512_and_si512(vb, hi_mask));
        const __m512 want = _mm512_fmadd_ps(a_even, b_even, _mm512_fmadd_ps(a_odd, b_odd, c));
        const __mmask16 both_nan = _mm512_cmp_ps_mask(got, got, _CMP_UNORD_Q) &
                                   _mm512_cmp_ps_mask(want, want, _CMP_UNORD_Q);
        const __mmask16 differ =
            _mm512_cmpneq_epi32_mask(_mm512_castps_si512(got), _mm512_castps_si512(want));
        if (differ & ~both_nan) return false;
    }
    return true;
}

bool dp_available() noexcept {
    static const bool ok = [] {
        const std::string_view best = best_kernel_path();
        return (best == "amx_bf16" || best == "avx512_bf16") && dp_matches_fma();
    }();
    return ok;
}

// Note [bf16 kit choice]
// VDPBF16PS takes both steps of a pair in one instruction, but its rate
// differs between CPUs more than the FMA's does. Zen 5 runs it at 2/cycle,
// twice its fp32 FMA rate; the Intel Xeon (AVX512-BF16 and AMX, 2 vCPUs) this
// was tuned on runs it at 0.5/cycle against 2 FMAs/cycle, so that the same
// pairs as two FMAs each go 1.5x as fast: 8 x 32 micro-kernels in L1 at
// 177 vs 115 GFLOP/s, one thread (2026-12-05). Both kits take exactly the
// steps of Note [Paired k order], so the choice changes only the speed. At
// first use (where VDPBF16PS passed dp_matches_fma) each kit's full micro-
// kernel runs 8 times on L1-resident zero panels, interleaved, 5 rounds, and
// the faster by its best round serves every bf16 pair-order product of the
// process. HRXARRAY_GEMM_KIT=dp or =fma (read once) skips the timing, so
// that tests and benchmarks can run either kit on such a host. bench/matmul.py
// there (2 threads, quiet host, 2026-12-05): n = 256 / 1,024 / 4,096 at
// 234 / 282 / 279 GFLOP/s with the FMA kit against 192 / 215 / 213 with
// VDPBF16PS, NumPy float32 (OpenBLAS sgemm) 238 / 313 / 343 in the same runs.
// Both kits are below sgemm's rate there: the pair order costs the FMAs sgemm
// does plus packing, and VDPBF16PS has half their peak.
HRX_TARGET(HRX_AVX512BF16)
bool dp_faster() noexcept {
    using Clock = std::chrono::steady_clock;
    constexpr std::size_t kc = 256, NR = nr<float>();
    std::vector<float> buf(kMR * kc + kc * NR + kMR * NR + 16, 0.0f);
    float* ap = reinterpret_cast<float*>((reinterpret_cast<std::uintptr_t>(buf.data()) + 63) & ~std::uintptr_t{63});
    float* bp = ap + kMR * kc;
    float* c = bp + kc * NR;
    using Micro = Kit<float, std::uint16_t>::Micro;
    const Micro kits[2] = {&micro_dp<static_cast<int>(kMR)>, &micro_avx512<float, Op::Fma, static_cast<int>(kMR), true>};
    FpEnv env(true);
    double best[2] = {1e30, 1e30};
    for (int round = 0; round < 5; ++round) {
        for (int w = 0; w < 2; ++w) {
            const auto t0 = Clock::now();
            for (int i = 0; i < 8; ++i) kits[w](kc, ap, bp, c, NR, NR, i > 0);
            best[w] = std::min(best[w], std::chrono::duration<double>(Clock::now() - t0).count());
        }
    }
    return best[0] < best[1];
}

// Whether the bf16 pair order runs on VDPBF16PS here (Note [bf16 kit choice]).
bool dp_chosen() noexcept {
    static const bool yes = [] {
        if (!dp_available()) return false;
        if (gemm_kit_env() == "dp") return true;
        if (gemm_kit_env() == "fma") return false;
        return dp_faster();
    }();
    return yes;
}

template <class F>
const Kit<float, std::uint16_t>& kit_dp() noexcept {
    static const Kit<float, std::uint16_t> k = [] {
        Kit<float, std::uint16_t> r;
        Kit<float, std::uint16_t>::Micro tmp[kMR + 1] = {};
        fill_micro_dp(tmp, std::make_integer_sequence<int, kMR>{});
        for (std::size_t i = 0; i <= kMR; ++i) r.micro[i] = tmp[i];
        r.pack_a = &pack_a_dp;
        r.pack_b = &pack_b_dp;
        r.kgroup = 2;
        // Pairs halve the panels: 512 k keep the B micro-panel at 32 KiB of
        // the 48 KiB L1 (n = 1,024 / 4,096: 787-822 / 731-804 GFLOP/s against
        // 418-810 / 759-769 with 384, interleaved runs).
        r.kc = 512;
        return r;
    }();
    return k;
}

// The bf16 pair order as two FMAs per pair (Note [bf16 kit choice]): the
// AVX-512 kit with K blocks of 256, whose 32 KiB B micro-panel leaves room in
// the 48 KiB L1 for the A panel and C (the paired order's bits do not depend
// on the block length; 384 filled the L1: 166 vs 171 GFLOP/s at n = 256).
template <class F>
const Kit<float, std::uint16_t>& kit_pair_avx512() noexcept {
    static const Kit<float, std::uint16_t> k = [] {
        Kit<float, std::uint16_t> r = kit_avx512<F>();
        r.kc = 256;
        return r;
    }();
    return k;
}
#endif  // HRX_GEMM_X86

enum class Path { Portable, Avx2, Avx512 };

Path best_path() noexcept {
#ifdef HRX_GEMM_X86
    static const Path p = [] {
        const std::string_view best = best_kernel_path();
        const bool avx512 = best == "amx_bf16" || best == "avx512_bf16" || best == "avx512";
        if (avx512 && gemm_kit_env() != "avx2") return Path::Avx512;
        return avx512 || best == "avx2" ? Path::Avx2 : Path::Portable;
    }();
    return p;
#else
    return Path::Portable;
#endif
}

// ------------------------------------------------------------ the driver

// Note [GEMM threads]
// A product of 2mkn flops runs on t = min(T, 2mkn / kFlopsPerThread) threads
// (T: the pool's threads), at least 1: below that a thread's share costs less
// than handing it over. Per B chunk (Note [Blocked GEMM]) the items are a
// grid of rows x cols parts of the chunk's row tiles (kMR rows) and column
// panels (NR columns), each part a contiguous range, parts differing by at
// most one tile or panel; every item packs its rows of A (in blocks of at
// most kMcMax rows) and computes its whole rectangle over all of K. The grid
// is the one of least estimated time: waves ceil(items / t) times the
// largest item, ceil(tiles / rows) x (ceil(panels / cols) + kPackA) in units
// of one tile-panel product (packing a tile of A costs about kPackA of it, so
// splitting columns repacks A), times 1 + 0.1 t / items, which favours more,
// smaller items: the pool hands them out in order to whichever thread is
// free, so on a shared host a thread that loses its CPU for a while holds up
// one small item instead of 1/t of the product. With t = T the grid has up
// to 4t items; with t < T at most t (every item may start on its own
// thread). Where the split puts an item never changes a bit of the result:
// each output element is one item's, computed by the same micro-kernel steps
// over the same K blocks. HRXARRAY_GEMM_PLAN_THREADS=n (read once; for tests)
// plans for n threads whatever the pool has, so that the grids of hosts with
// more cores than this one run here too. kFlopsPerThread from the 2-vCPU
// Xeon (2026-12-05): 2 threads lose below n = 128 (4.2 MFLOP, break-even) and
// win from 160 on (204 vs 169 GFLOP/s); bench/thread_scaling.py there: 1 -> 2
// threads 1.58x at n = 256 and 1.89x at n = 1,024 (OpenBLAS 1.73x / 2.00x).
constexpr double kFlopsPerThread = 4e6;
constexpr double kPackA = 0.15;

struct Split {
    std::size_t threads, rows, cols;
};

// The thread count the plans assume: HRXARRAY_GEMM_PLAN_THREADS, else the pool's.
std::size_t plan_threads() noexcept {
    static const std::size_t n = [] {
        if (const char* env = std::getenv("HRXARRAY_GEMM_PLAN_THREADS")) {
            char* end = nullptr;
            const long v = std::strtol(env, &end, 10);
            if (end != env && *end == '\0' && v > 0 && v <= 4096) return static_cast<std::size_t>(v);
        }
        return pool_threads();
    }();
    return n;
}


// The item grid for mt row tiles x np panels on t threads of a pool planned as `pool`.
Split plan_split(std::size_t mt, std::size_t np, std::size_t t, std::size_t pool) noexcept {
    t = std::max<std::size_t>(1, std::min(t, mt * np));
    if (t == 1) return {1, 1, 1};
    const std::size_t most = t < pool ? t : 4 * t;
    Split best{t, 1, 1};
    double best_score = 0;
    for (std::size_t r = 1; r <= std::min(mt, most); ++r) {
        for (std::size_t q = 1; q <= std::min(np, most / r); ++q) {
            const std::size_t items = r * q;
            const double waves = static_cast<double>(ceil_div(items, t));
            const double est = waves * static_cast<double>(ceil_div(mt, r)) *
                               (static_cast<double>(ceil_div(np, q)) + kPackA);
            const double score = est * (1.0 + 0.1 * static_cast<double>(t) / static_cast<double>(items));
            if (best_score == 0 || score < best_score) {
                best_score = score;
                best = {t, r, q};
            }
        }
    }
    return best;
}


template <class T>
Scratch<T>& scratch_a() {
    thread_local Scratch<T> s;
    return s;
}
template <class T>
Scratch<T>& scratch_b() {
    thread_local Scratch<T> s;
    return s;
}
template <class T>
Scratch<T>& scratch_w() {
    thread_local Scratch<T> s;
    return s;
}

template <class F>
struct Driver {
    using S = typename F::S;
    using T = typename F::T;
    using O = typename F::O;
    static constexpr std::size_t NR = nr<T>();

    const Kit<T, S>& kit;
    std::size_t M, K, N;
    std::size_t KC = kit.kc;

    // One product c = a @ b, all row-major and dense, on up to `threads`
    // threads (Note [GEMM threads]).
    void product(const S* a, const S* b, O* c, std::size_t threads) const {
        const std::size_t nkb = ceil_div(K, KC);
        std::size_t nc_max = kBChunkBytes / (K * sizeof(T)) / NR * NR;
        nc_max = std::max(nc_max, NR);
        const std::size_t np_max = ceil_div(std::min(nc_max, N), NR);
        Scratch<T>& bs = scratch_b<T>();
        T* bpk = bs.get(nkb * KC * np_max * NR);
        for (std::size_t j0 = 0; j0 < N; j0 += nc_max) {
            const std::size_t nc = std::min(nc_max, N - j0);
            const std::size_t np = ceil_div(nc, NR);
            const Split sp = plan_split(ceil_div(M, kMR), np, threads, plan_threads());
            // Pack B's chunk: pieces of (k-block, panel group).
            const std::size_t groups =
                sp.threads == 1 || nkb >= 2 * sp.threads ? 1 : std::min(np, ceil_div(2 * sp.threads, nkb));
            auto pack = [&](std::size_t piece) {
                const std::size_t p = piece / groups, g = piece % groups;
                const std::size_t q0 = g * np / groups, q1 = (g + 1) * np / groups;
                if (q0 == q1) return;
                const std::size_t k0 = p * KC, kcp = std::min(KC, K - k0);
                kit.pack_b(b + k0 * N + j0 + q0 * NR, N, kcp, std::min(nc, q1 * NR) - q0 * NR,
                           bpk + p * KC * np * NR + q0 * ceil_div(kcp, kit.kgroup) * NR);
            };
            // Work items: the split's grid of (row-tile range, panel range).
            const std::size_t mt = ceil_div(M, kMR);
            auto item = [&](std::size_t it) {
                [[maybe_unused]] EnvGuard<F::env> env;
                const std::size_t r = it / sp.cols, s = it % sp.cols;
                const std::size_t i0 = r * mt / sp.rows * kMR, i1 = std::min(M, (r + 1) * mt / sp.rows * kMR);
                const std::size_t q0 = s * np / sp.cols, q1 = (s + 1) * np / sp.cols;
                if (i0 >= i1 || q0 == q1) return;
                // Row blocks of at most kMcMax (their packed A stays in L2).
                const std::size_t nb = ceil_div(i1 - i0, kMcMax);
                const std::size_t mc = ceil_div(ceil_div(i1 - i0, nb), kMR) * kMR;
                for (std::size_t i = i0; i < i1; i += mc)
                    block(a, c, bpk, np, nc, j0, i, std::min(i1, i + mc), q0, q1);
            };
            if (sp.threads > 1) {
                pool_run(nkb * groups, pack);
                pool_run(sp.rows * sp.cols, item);
            } else {
                for (std::size_t piece = 0; piece < nkb * groups; ++piece) pack(piece);
                for (std::size_t it = 0; it < sp.rows * sp.cols; ++it) item(it);
            }
        }
        bs.release_if_large();
    }

    // Rows [i0, i1) x panels [q0, q1) of B's chunk at column j0, over all of K.
    void block(const S* a, O* c, const T* bpk, std::size_t np, std::size_t nc, std::size_t j0,
               std::size_t i0, std::size_t i1, std::size_t q0, std::size_t q1) const {
        if (q0 == q1) return;
        const std::size_t rows = i1 - i0;
        const std::size_t col0 = j0 + q0 * NR, cols = std::min(nc, q1 * NR) - q0 * NR;
        T* ap = scratch_a<T>().get(ceil_div(rows, kMR) * kMR * KC);
        T* w;
        std::size_t ldw;
        if constexpr (F::Out::direct) {
            w = reinterpret_cast<T*>(c) + i0 * N + col0;
            ldw = N;
        } else {
            w = scratch_w<T>().get(rows * cols);
            ldw = cols;
        }
        for (std::size_t p = 0, k0 = 0; k0 < K; ++p, k0 += KC) {
            const std::size_t kcp = std::min(KC, K - k0);
            const std::size_t kpk = ceil_div(kcp, kit.kgroup);  // packed steps
            kit.pack_a(a + i0 * K + k0, K, rows, kcp, ap);
            const T* bb = bpk + p * KC * np * NR;
            for (std::size_t q = q0; q < q1; ++q) {
                const T* bp = bb + q * kpk * NR;
                const std::size_t ncols = std::min(NR, nc - q * NR);
                T* wq = w + (q - q0) * NR;
                for (std::size_t ir = 0; ir < rows; ir += kMR) {
                    const std::size_t r = std::min(kMR, rows - ir);
                    kit.micro[r](kcp, ap + ir * kpk, bp, wq + ir * ldw, ldw, ncols, p > 0);
                }
            }
        }
        if constexpr (!F::Out::direct) {
            for (std::size_t i = 0; i < rows; ++i) {
                O* dst = c + (i0 + i) * N + col0;
                const T* src = w + i * ldw;
                for (std::size_t j = 0; j < cols; ++j) dst[j] = F::Out::cv(src[j]);
            }
        }
    }
};

template <class F>
void run(const void* av, const void* bv, void* cv, std::size_t batch, std::size_t m, std::size_t k,
         std::size_t n, const std::int64_t* ia, const std::int64_t* ib, bool vector, bool threaded) {
    using S = typename F::S;
    using O = typename F::O;
    const auto* a = static_cast<const S*>(av);
    const auto* b = static_cast<const S*>(bv);
    auto* c = static_cast<O*>(cv);
    if (batch == 0 || m == 0 || n == 0) return;
    if (k == 0) {
        std::fill(c, c + batch * m * n, O(0));
        return;
    }
    // One B for every batch over A's own consecutive matrices: a single
    // product with batch * m rows (B packed once).
    if (batch > 1) {
        bool same_b = true, a_identity = true;
        for (std::size_t t = 0; t < batch && (same_b || a_identity); ++t) {
            const std::size_t sb = ib ? static_cast<std::size_t>(ib[t]) : t;
            const std::size_t sb0 = ib ? static_cast<std::size_t>(ib[0]) : 0;
            same_b = same_b && sb == sb0;
            a_identity = a_identity && (!ia || static_cast<std::size_t>(ia[t]) == t);
        }
        if (same_b && a_identity) {
            b += (ib ? static_cast<std::size_t>(ib[0]) : 0) * k * n;
            m *= batch;
            batch = 1;
            ia = ib = nullptr;
        }
    }
    if constexpr (F::order == KOrder::Tile) {
        // The tiles compute this order themselves; products large enough for
        // their 32 x 32 blocks go there (a threshold chosen without AMX
        // hardware to measure on), the rest to the FMA kits below.
        if (vector && m >= 32 && n >= 32 && k >= 64 && amx_usable()) {
            gemm_bf16_amx(TileUnit::Hardware, a, b, c, batch, m, k, n, ia, ib, threaded);
            return;
        }
    }
#ifdef HRX_GEMM_X86
    const Path path = vector ? best_path() : Path::Portable;
    const auto& kit = [&]() -> const Kit<typename F::T, S>& {
        if constexpr (F::order == KOrder::Tile) {
            return path == Path::Avx512 ? kit_tile_avx512<F>() : path == Path::Avx2 ? kit_avx2<F>() : kit_portable<F>();
        } else {
            if constexpr (F::paired) {
                if (path == Path::Avx512) return dp_chosen() ? kit_dp<F>() : kit_pair_avx512<F>();
            }
            return path == Path::Avx512 ? kit_avx512<F>() : path == Path::Avx2 ? kit_avx2<F>() : kit_portable<F>();
        }
    }();
#else
    (void)vector;
    const auto& kit = kit_portable<F>();
#endif
    const Driver<F> d{kit, m, k, n};
    const double per = 2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n);
    const std::size_t most = threaded ? plan_threads() : 1;
    const bool pool = most > 1 && per * static_cast<double>(batch) > 2e6;
    auto one = [&](std::size_t t, std::size_t threads) {
        const std::size_t sa = ia ? static_cast<std::size_t>(ia[t]) : t;
        const std::size_t sb = ib ? static_cast<std::size_t>(ib[t]) : t;
        d.product(a + sa * m * k, b + sb * k * n, c + t * m * n, threads);
    };
    if (pool && batch > 1 && per < 8e6) {
        // Many small products: one thread each.
        pool_run(batch, [&](std::size_t t) {
            [[maybe_unused]] EnvGuard<F::env> env;
            one(t, 1);
        });
        return;
    }
    [[maybe_unused]] EnvGuard<F::env> env;
    // Note [GEMM threads].
    const std::size_t threads = pool ? threads_for(per, kFlopsPerThread, most) : 1;
    for (std::size_t t = 0; t < batch; ++t) one(t, threads);
}

// ------------------------------------------------------------ matrix-vector

// Note [Matrix-vector]: y = A @ x for a strided A (rows rs, columns cs
// elements apart, one of them 1) reads A once, in place: the GEMM would copy
// A dense and pad x to a 32-column panel, 32x the work (issue 28: 111 ms for
// 4096^2 float32, 202 ms through a transposed view). Each y[i] takes exactly
// the driver's steps (Note [Blocked accumulation]): per K block of kKc an FMA
// chain from +0 in ascending k, the blocks' partials added in order; so the
// results are the GEMM's bits on every path. Rows of A contiguous (cs == 1):
// kGemvRows rows interleave, one independent chain each, so the FMAs pipeline;
// columns contiguous (rs == 1): a strip of rows is one vector loop per k.
constexpr std::size_t kGemvRows = 8;
constexpr std::size_t kGemvStrip = 512;

template <class T>
[[gnu::always_inline]] inline void gemv_rows_body(const T* __restrict a, std::size_t rs, const T* __restrict x,
                                                  T* __restrict y, std::size_t rows, std::size_t k) noexcept {
    for (std::size_t i0 = 0; i0 < rows; i0 += kGemvRows) {
        const std::size_t r = std::min(kGemvRows, rows - i0);
        const T* row[kGemvRows];
        for (std::size_t t = 0; t < kGemvRows; ++t) row[t] = a + (i0 + (t < r ? t : 0)) * rs;
        T total[kGemvRows] = {};
        for (std::size_t k0 = 0; k0 < k; k0 += kKc) {
            const std::size_t k1 = std::min(k, k0 + kKc);
            T acc[kGemvRows] = {};
            for (std::size_t kk = k0; kk < k1; ++kk) {
                const T xv = x[kk];
                for (std::size_t t = 0; t < kGemvRows; ++t) acc[t] = std::fma(row[t][kk], xv, acc[t]);
            }
            for (std::size_t t = 0; t < kGemvRows; ++t) total[t] = k0 == 0 ? acc[t] : T(total[t] + acc[t]);
        }
        for (std::size_t t = 0; t < r; ++t) y[i0 + t] = total[t];
    }
}

template <class T>
[[gnu::always_inline]] inline void gemv_cols_body(const T* __restrict a, std::size_t cs, const T* __restrict x,
                                                  T* __restrict y, std::size_t rows, std::size_t k) noexcept {
    alignas(64) T total[kGemvStrip];
    alignas(64) T acc[kGemvStrip];
    for (std::size_t i0 = 0; i0 < rows; i0 += kGemvStrip) {
        const std::size_t w = std::min(kGemvStrip, rows - i0);
        for (std::size_t k0 = 0; k0 < k; k0 += kKc) {
            const std::size_t k1 = std::min(k, k0 + kKc);
            for (std::size_t i = 0; i < w; ++i) acc[i] = T(0);
            for (std::size_t kk = k0; kk < k1; ++kk) {
                const T xv = x[kk];
                const T* col = a + kk * cs + i0;
                for (std::size_t i = 0; i < w; ++i) acc[i] = std::fma(col[i], xv, acc[i]);
            }
            if (k0 == 0)
                for (std::size_t i = 0; i < w; ++i) total[i] = acc[i];
            else
                for (std::size_t i = 0; i < w; ++i) total[i] = T(total[i] + acc[i]);
        }
        for (std::size_t i = 0; i < w; ++i) y[i0 + i] = total[i];
    }
}

template <class T>
void gemv_portable(const T* a, std::size_t rs, std::size_t cs, const T* x, T* y, std::size_t rows,
                   std::size_t k) noexcept {
    if (cs == 1)
        gemv_rows_body(a, rs, x, y, rows, k);
    else
        gemv_cols_body(a, cs, x, y, rows, k);
}

#ifdef HRX_GEMM_X86
// The same loops with hardware FMAs (AVX2 and AVX-512 widths): std::fma is
// one instruction per element either way, so the bits are the portable ones.
template <class T>
HRX_TARGET("avx2,fma")
void gemv_avx2(const T* a, std::size_t rs, std::size_t cs, const T* x, T* y, std::size_t rows,
               std::size_t k) noexcept {
    if (cs == 1)
        gemv_rows_body(a, rs, x, y, rows, k);
    else
        gemv_cols_body(a, cs, x, y, rows, k);
}
template <class T>
HRX_TARGET(HRX_AVX512)
void gemv_avx512(const T* a, std::size_t rs, std::size_t cs, const T* x, T* y, std::size_t rows,
                 std::size_t k) noexcept {
    if (cs == 1)
        gemv_rows_body(a, rs, x, y, rows, k);
    else
        gemv_cols_body(a, cs, x, y, rows, k);
}
#endif

template <class T>
void gemv_run(const T* a, std::size_t rs, std::size_t cs, const T* x, T* y, std::size_t m, std::size_t k,
              bool vector, bool threaded) {
    if (m == 0) return;
    if (k == 0) {
        std::fill(y, y + m, T(0));
        return;
    }
    using Fn = void (*)(const T*, std::size_t, std::size_t, const T*, T*, std::size_t, std::size_t) noexcept;
    Fn fn = &gemv_portable<T>;
#ifdef HRX_GEMM_X86
    if (vector) {
        const Path path = best_path();
        fn = path == Path::Avx512 ? &gemv_avx512<T> : path == Path::Avx2 ? &gemv_avx2<T> : fn;
    }
#else
    (void)vector;
#endif
    // Row strips split over the pool; each y[i] is one thread's, so the split changes nothing.
    const std::size_t unit = cs == 1 ? kGemvRows * 16 : kGemvStrip;
    const std::size_t items = ceil_div(m, unit);
    const bool pool = threaded && pool_threads() > 1 && items > 1 && static_cast<double>(m) * static_cast<double>(k) > 1e6;
    auto item = [&](std::size_t it) {
        [[maybe_unused]] EnvGuard<Env::Ieee> env;
        const std::size_t i0 = it * unit, rows = std::min(unit, m - i0);
        fn(a + i0 * rs, rs, cs, x, y + i0, rows, k);
    };
    if (pool) {
        pool_run(items, item);
    } else {
        for (std::size_t it = 0; it < items; ++it) item(it);
    }
}

}  // namespace

bool gemv_supported(DType t) noexcept { return t == DType::Float32 || t == DType::Float64; }

void gemv(DType t, const void* a, std::size_t rs, std::size_t cs, const void* x, void* y, std::size_t m,
          std::size_t k, bool vector, bool threaded) noexcept {
    if (t == DType::Float32)
        gemv_run(static_cast<const float*>(a), rs, cs, static_cast<const float*>(x), static_cast<float*>(y), m, k,
                 vector, threaded);
    else if (t == DType::Float64)
        gemv_run(static_cast<const double*>(a), rs, cs, static_cast<const double*>(x), static_cast<double*>(y), m,
                 k, vector, threaded);
}

bool gemm_supported(DType in, DType out) noexcept {
    switch (in) {
        case DType::BFloat16: return out == DType::Float32;
        case DType::BFP16: return false;
        default: return out == in;
    }
}

void gemm(DType in, DType out, const void* a, const void* b, void* c, std::size_t batch,
          std::size_t m, std::size_t k, std::size_t n, const std::int64_t* ia, const std::int64_t* ib,
          bool vector, bool threaded) noexcept {
    if (!gemm_supported(in, out)) return;
    using u32 = std::uint32_t;
    using u64 = std::uint64_t;
#define HRX_RUN(...) run<__VA_ARGS__>(a, b, c, batch, m, k, n, ia, ib, vector, threaded)
    switch (in) {
        case DType::BFloat16: HRX_RUN(Family<InBf16, OutSame<float>, Op::Fma, Env::NoDenormals>); break;
        case DType::Float16: HRX_RUN(Family<InF16, OutF16, Op::Fma, Env::Ieee>); break;
        case DType::Float32: HRX_RUN(Family<InCast<float>, OutSame<float>, Op::Fma, Env::Ieee>); break;
        case DType::Float64: HRX_RUN(Family<InCast<double>, OutSame<double>, Op::Fma, Env::Ieee>); break;
        case DType::Bool: HRX_RUN(Family<InBool, OutBool, Op::OrAnd, Env::None>); break;
        case DType::Int8: HRX_RUN(Family<InCast<std::int8_t, u32>, OutTrunc<std::int8_t>, Op::MulAdd, Env::None>); break;
        case DType::UInt8: HRX_RUN(Family<InCast<std::uint8_t, u32>, OutTrunc<std::uint8_t>, Op::MulAdd, Env::None>); break;
        case DType::Int16: HRX_RUN(Family<InCast<std::int16_t, u32>, OutTrunc<std::int16_t>, Op::MulAdd, Env::None>); break;
        case DType::UInt16: HRX_RUN(Family<InCast<std::uint16_t, u32>, OutTrunc<std::uint16_t>, Op::MulAdd, Env::None>); break;
        case DType::Int32: HRX_RUN(Family<InCast<std::int32_t, u32>, OutBits<std::int32_t>, Op::MulAdd, Env::None>); break;
        case DType::UInt32: HRX_RUN(Family<InCast<u32>, OutSame<u32>, Op::MulAdd, Env::None>); break;
        case DType::Int64: HRX_RUN(Family<InCast<std::int64_t, u64>, OutBits<std::int64_t>, Op::MulAdd, Env::None>); break;
        case DType::UInt64: HRX_RUN(Family<InCast<u64>, OutSame<u64>, Op::MulAdd, Env::None>); break;
        default: break;
    }
#undef HRX_RUN
}

const char* gemm_path() noexcept {
    switch (best_path()) {
#ifdef HRX_GEMM_X86
        case Path::Avx512: return dp_chosen() ? "avx512_bf16" : "avx512";
#else
        case Path::Avx512: return "avx512";
#endif
        case Path::Avx2: return "avx2";
        default: return "portable";
    }
}

void gemm_bf16_tile(const std::uint16_t* a, const std::uint16_t* b, float* c, std::size_t batch,
                    std::size_t m, std::size_t k, std::size_t n, const std::int64_t* ia,
                    const std::int64_t* ib, bool vector, bool threaded) noexcept {
    run<Family<InBf16, OutSame<float>, Op::Fma, Env::NoDenormals, KOrder::Tile>>(a, b, c, batch, m, k, n, ia, ib,
                                                                                 vector, threaded);
}

const char* gemm_tile_path() noexcept {
    if (amx_is_model()) return "amx_model";
    if (amx_usable()) return "amx_bf16";
    switch (best_path()) {
        case Path::Avx512: return "avx512";
        case Path::Avx2: return "avx2";
        default: return "portable";
    }
}

}  // namespace hrx::kernels::detail
