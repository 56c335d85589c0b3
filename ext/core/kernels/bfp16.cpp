// bfp16ebs8 codec. The portable encoder is integer arithmetic on the fp32
// bit patterns, so results do not depend on the FPU's rounding or FTZ/DAZ
// modes. On x86 with AVX-512 an intrinsic path handles two blocks per zmm
// register with the same integer recipe and hands the rare blocks (an E bump
// in "even", E = 254, decode with E < 7) to the portable code, so both paths
// give identical bytes; tests compare them. Functions carry per-function
// target attributes and are picked at run time, so the library still runs
// on any x86-64 and builds unchanged on arm64.
#include "kernels/bfp16.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <string_view>
#include <vector>

#include "errors.h"
#include "kernels/cpu_features.h"
#include "kernels/pool.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HRX_BFP16_X86 1
#if !defined(__clang__)
// GCC 12 flags the intrinsics' own `__m512i __Y = __Y;` placeholders as
// maybe-uninitialized when they are inlined into a target("avx512f")
// function (a known false positive); keep -Wall -Werror builds clean.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#define HRX_AVX512 __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl")))
#endif

namespace hrx::kernels {

namespace {

constexpr std::uint32_t kExpMask = 0xFFu;
constexpr std::uint32_t kFracMask = 0x7FFFFFu;
constexpr std::uint32_t kHidden = 0x800000u;

// x / 2^(E-133) = +-M * 2^(e - E - 17) for a normal input with exponent
// field e and 24-bit significand M, so a mantissa is +-M shifted right by
// s = E - e + 17 >= 17 (one more after an E bump).

// floor(+-M / 2^s). Arithmetic right shift of the signed significand is a
// floor for both signs; shifts of 31 or more give 0 or -1 alike.
inline std::int32_t mantissa_floor(std::uint32_t bits, int s) noexcept {
    const auto m = static_cast<std::int32_t>((bits & kFracMask) | kHidden);
    const std::int32_t v = (bits >> 31) ? -m : m;
    return v >> std::min(s, 31);
}

// +-M / 2^s rounded half to even (symmetric, so rounding the magnitude is
// enough): add half - 1, plus one more when the truncated quotient is odd.
// For s >= 25 the result is 0 since M < 2^24: clamp there so that the sum
// stays below 2^26.
inline std::int32_t mantissa_even(std::uint32_t bits, int s) noexcept {
    const std::uint32_t m = (bits & kFracMask) | kHidden;
    const int sh = std::min(s, 25);
    const std::uint32_t odd = (m >> sh) & 1u;
    const auto mag = static_cast<std::int32_t>((m + (1u << (sh - 1)) - 1u + odd) >> sh);
    return (bits >> 31) ? -mag : mag;
}

void encode_block(const float* x, std::uint8_t* out, BfpRounding rounding) noexcept {
    std::uint32_t bits[kBfp16BlockValues];
    std::memcpy(bits, x, sizeof bits);
    int e[kBfp16BlockValues];
    int emax = 0;
    for (std::size_t i = 0; i < kBfp16BlockValues; ++i) {
        e[i] = static_cast<int>((bits[i] >> 23) & kExpMask);
        emax = std::max(emax, e[i]);
    }
    std::int32_t m[kBfp16BlockValues];
    if (rounding == BfpRounding::floor) {
        for (std::size_t i = 0; i < kBfp16BlockValues; ++i) {
            m[i] = e[i] == 0 ? 0 : mantissa_floor(bits[i], emax - e[i] + 17);
        }
    } else {
        std::int32_t hi = 0;
        for (std::size_t i = 0; i < kBfp16BlockValues; ++i) {
            m[i] = e[i] == 0 ? 0 : mantissa_even(bits[i], emax - e[i] + 17);
            hi = std::max(hi, m[i]);
        }
        // Only a positive element of the top binade can round up to 128
        // (negatives stop at -128, which fits).
        if (hi > 127 && emax < 254) {
            ++emax;
            for (std::size_t i = 0; i < kBfp16BlockValues; ++i) {
                m[i] = e[i] == 0 ? 0 : mantissa_even(bits[i], emax - e[i] + 17);
            }
        }
    }
    // At E = 254, +-128 * 2^121 = +-2^128 is beyond float32: saturate so that
    // every block the encoder writes decodes to finite values.
    if (emax == 254) {
        for (std::size_t i = 0; i < kBfp16BlockValues; ++i) m[i] = std::clamp(m[i], -127, 127);
    }
    out[0] = static_cast<std::uint8_t>(emax);
    for (std::size_t i = 0; i < kBfp16BlockValues; ++i) {
        out[1 + i] = static_cast<std::uint8_t>(static_cast<std::int8_t>(m[i]));
    }
}

// 2^(E-133) for every E, as doubles: exact, never subnormal, and m * scale
// then rounds to float32 exactly (the product has at most 8 significant
// bits and lies within fp32's range, subnormals included, unless E = 255).
constexpr std::array<double, 256> make_scales() {
    std::array<double, 256> t{};
    for (int E = 0; E < 256; ++E) {
        t[E] = std::bit_cast<double>(static_cast<std::uint64_t>(E - 133 + 1023) << 52);
    }
    return t;
}
constexpr std::array<double, 256> kScales = make_scales();

void decode_block(const std::uint8_t* blk, float* y) noexcept {
    const double scale = kScales[blk[0]];
    for (std::size_t i = 0; i < kBfp16BlockValues; ++i) {
        y[i] = static_cast<float>(static_cast<std::int8_t>(blk[1 + i]) * scale);
    }
}

#ifdef HRX_BFP16_X86
// Two blocks (16 values) per iteration: lanes 0-7 are block b, 8-15 block b+1.
HRX_AVX512 void encode_avx512(const float* src, std::uint8_t* dst, std::size_t nblocks,
                              BfpRounding rounding) noexcept {
    const __m512i zero = _mm512_setzero_si512();
    const __m512i one = _mm512_set1_epi32(1);
    const __m512i c127 = _mm512_set1_epi32(127);
    const __m512i c254 = _mm512_set1_epi32(254);
    const bool even = rounding == BfpRounding::even;
    std::size_t b = 0;
    for (; b + 2 <= nblocks; b += 2) {
        const float* x = src + b * kBfp16BlockValues;
        std::uint8_t* out = dst + b * kBfp16BlockBytes;
        const __m512i bits = _mm512_loadu_si512(x);
        const __m512i e = _mm512_and_si512(_mm512_srli_epi32(bits, 23), _mm512_set1_epi32(0xFF));
        // Maximum over each group of 8 lanes: swap 128-bit lanes within each
        // 256-bit half, then 64-bit pairs, then neighbours.
        __m512i mx = _mm512_max_epi32(e, _mm512_shuffle_i32x4(e, e, _MM_SHUFFLE(2, 3, 0, 1)));
        mx = _mm512_max_epi32(mx, _mm512_shuffle_epi32(mx, _MM_PERM_BADC));
        mx = _mm512_max_epi32(mx, _mm512_shuffle_epi32(mx, _MM_PERM_CDAB));
        const __m512i s = _mm512_add_epi32(_mm512_sub_epi32(mx, e), _mm512_set1_epi32(17));
        const __m512i mant = _mm512_or_si512(_mm512_and_si512(bits, _mm512_set1_epi32(0x7FFFFF)),
                                             _mm512_set1_epi32(0x800000));
        const __mmask16 neg = _mm512_cmplt_epi32_mask(bits, zero);
        const __mmask16 normal = _mm512_cmpneq_epi32_mask(e, zero);
        __m512i m;
        if (!even) {
            // Arithmetic shift of the signed significand; counts above 31 fill
            // with the sign, as floor wants.
            m = _mm512_srav_epi32(_mm512_mask_sub_epi32(mant, neg, zero, mant), s);
        } else {
            const __m512i sh = _mm512_min_epi32(s, _mm512_set1_epi32(25));
            const __m512i odd = _mm512_and_si512(_mm512_srlv_epi32(mant, sh), one);
            const __m512i half_m1 =
                _mm512_sub_epi32(_mm512_sllv_epi32(one, _mm512_sub_epi32(sh, one)), one);
            const __m512i mag = _mm512_srlv_epi32(
                _mm512_add_epi32(_mm512_add_epi32(mant, half_m1), odd), sh);
            m = _mm512_mask_sub_epi32(mag, neg, zero, mag);
        }
        m = _mm512_maskz_mov_epi32(normal, m);
        if (_mm512_cmpgt_epi32_mask(m, c127) | _mm512_cmpeq_epi32_mask(mx, c254)) {
            encode_block(x, out, rounding);
            encode_block(x + kBfp16BlockValues, out + kBfp16BlockBytes, rounding);
            continue;
        }
        const __m128i bytes = _mm512_cvtepi32_epi8(m);  // truncation: two's complement int8
        out[0] = static_cast<std::uint8_t>(_mm_cvtsi128_si32(_mm512_castsi512_si128(mx)));
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out + 1), bytes);
        out[9] = static_cast<std::uint8_t>(_mm_cvtsi128_si32(_mm512_extracti32x4_epi32(mx, 2)));
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out + 10), _mm_srli_si128(bytes, 8));
    }
    for (; b < nblocks; ++b) {
        encode_block(src + b * kBfp16BlockValues, dst + b * kBfp16BlockBytes, rounding);
    }
}

// Two blocks (16 values) decoded into one vector: blocks with E >= 7 have a
// normal fp32 scale 2^(E-133), and m * scale is exact (or overflows to Inf
// exactly as the double path does); E < 7 goes through the double path.
HRX_AVX512 inline __m512 decode_pair(const std::uint8_t* blk) noexcept {
    const int e0 = blk[0];
    const int e1 = blk[9];
    if (e0 < 7 || e1 < 7) {
        alignas(64) float y[16];
        decode_block(blk, y);
        decode_block(blk + kBfp16BlockBytes, y + kBfp16BlockValues);
        return _mm512_load_ps(y);
    }
    const __m128i m8 = _mm_unpacklo_epi64(
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk + 1)),
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk + 10)));
    const __m512 m = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(m8));
    const __m512 scale = _mm512_mask_blend_ps(
        0xFF00, _mm512_set1_ps(std::bit_cast<float>(static_cast<std::uint32_t>(e0 - 6) << 23)),
        _mm512_set1_ps(std::bit_cast<float>(static_cast<std::uint32_t>(e1 - 6) << 23)));
    return _mm512_mul_ps(m, scale);
}

HRX_AVX512 void decode_avx512(const std::uint8_t* src, float* dst, std::size_t nblocks) noexcept {
    std::size_t b = 0;
    for (; b + 2 <= nblocks; b += 2) {
        _mm512_storeu_ps(dst + b * kBfp16BlockValues, decode_pair(src + b * kBfp16BlockBytes));
    }
    for (; b < nblocks; ++b) {
        decode_block(src + b * kBfp16BlockBytes, dst + b * kBfp16BlockValues);
    }
}

// The same values written with non-temporal stores, for outputs far larger
// than the caches: the output lines are not read for ownership first, which
// is a third of the memory traffic of a decode. Streaming stores need 64-byte
// alignment, so each stored vector is the last 16 - h values of one pair and
// the first h of the next (h: floats from dst to its next 64-byte boundary);
// the first h and the last 16 - h values take masked ordinary stores.
HRX_AVX512 void decode_avx512_stream(const std::uint8_t* src, float* dst, std::size_t nblocks) noexcept {
    const std::uintptr_t addr = reinterpret_cast<std::uintptr_t>(dst);
    const std::size_t npairs = nblocks / 2;
    if (addr % sizeof(float) != 0 || npairs < 2) {
        decode_avx512(src, dst, nblocks);
        return;
    }
    const unsigned h = static_cast<unsigned>((64 - addr % 64) % 64 / sizeof(float));
    const __mmask16 head = static_cast<__mmask16>((1u << h) - 1u);
    const __m512i idx = _mm512_add_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                         _mm512_set1_epi32(static_cast<int>(h)));
    __m512 prev = decode_pair(src);
    _mm512_mask_storeu_ps(dst, head, prev);
    for (std::size_t j = 1; j < npairs; ++j) {
        const __m512 next = decode_pair(src + 2 * j * kBfp16BlockBytes);
        _mm512_stream_ps(dst + h + 16 * (j - 1), _mm512_permutex2var_ps(prev, idx, next));
        prev = next;
    }
    _mm512_mask_storeu_ps(dst + 16 * (npairs - 1), static_cast<__mmask16>(~head), prev);
    // Streaming stores are weakly ordered: make them visible before the
    // caller (or the pool's completion) publishes the result.
    _mm_sfence();
    for (std::size_t b = 2 * npairs; b < nblocks; ++b) {
        decode_block(src + b * kBfp16BlockBytes, dst + b * kBfp16BlockValues);
    }
}
#endif

using EncodeFn = void (*)(const float*, std::uint8_t*, std::size_t, BfpRounding) noexcept;
using DecodeFn = void (*)(const std::uint8_t*, float*, std::size_t) noexcept;

struct Dispatch {
    const char* path = "portable";
    EncodeFn encode = &portable::bfp16_encode;
    DecodeFn decode = &portable::bfp16_decode;
    DecodeFn decode_stream = &portable::bfp16_decode;  // for outputs of kStreamBytes and more
};

const Dispatch& dispatch() noexcept {
    static const Dispatch d = [] {
        Dispatch r;
#ifdef HRX_BFP16_X86
        const std::string_view best = best_kernel_path();
        if (best == "amx_bf16" || best == "avx512_bf16" || best == "avx512") {
            r = {"avx512", &encode_avx512, &decode_avx512, &decode_avx512_stream};
        }
#endif
        return r;
    }();
    return d;
}

}  // namespace

namespace portable {

void bfp16_encode(const float* src, std::uint8_t* dst, std::size_t nblocks,
                  BfpRounding rounding) noexcept {
    for (std::size_t b = 0; b < nblocks; ++b) {
        encode_block(src + b * kBfp16BlockValues, dst + b * kBfp16BlockBytes, rounding);
    }
}

void bfp16_decode(const std::uint8_t* src, float* dst, std::size_t nblocks) noexcept {
    for (std::size_t b = 0; b < nblocks; ++b) {
        decode_block(src + b * kBfp16BlockBytes, dst + b * kBfp16BlockValues);
    }
}

}  // namespace portable

// Large calls are split over the kernels' pool (blocks are independent, so
// the bytes are those of one pass): one core does not reach memory bandwidth.
constexpr std::size_t kSplitBlocks = 1u << 13;

template <class Fn>
void split_blocks(std::size_t nblocks, const Fn& fn) noexcept {
    if (nblocks < 16 * kSplitBlocks || pool_threads() < 2) {
        fn(std::size_t{0}, nblocks);
        return;
    }
    pool_run((nblocks + kSplitBlocks - 1) / kSplitBlocks, [&](std::size_t it) {
        const std::size_t lo = it * kSplitBlocks;
        fn(lo, std::min(kSplitBlocks, nblocks - lo));
    });
}

void bfp16_encode(const float* src, std::uint8_t* dst, std::size_t nblocks,
                  BfpRounding rounding) noexcept {
    const auto enc = dispatch().encode;
    split_blocks(nblocks, [&](std::size_t lo, std::size_t cnt) {
        enc(src + kBfp16BlockValues * lo, dst + kBfp16BlockBytes * lo, cnt, rounding);
    });
}

// Decoded outputs from this size on bypass the caches (decode_avx512_stream):
// they would not fit in this machine's 32 MiB L3 anyway, while a smaller
// output is often read again right away (measured on 64 MiB of output with a
// preallocated destination: 38 GB/s with ordinary stores, 47-50 with
// streaming ones; bench/bfp16.py).
constexpr std::size_t kStreamBytes = 32u << 20;

void bfp16_decode(const std::uint8_t* src, float* dst, std::size_t nblocks) noexcept {
    const auto dec = nblocks * kBfp16BlockValues * sizeof(float) >= kStreamBytes ? dispatch().decode_stream
                                                                                  : dispatch().decode;
    split_blocks(nblocks, [&](std::size_t lo, std::size_t cnt) {
        dec(src + kBfp16BlockBytes * lo, dst + kBfp16BlockValues * lo, cnt);
    });
}

const char* bfp16_kernel_path() noexcept { return dispatch().path; }

std::ptrdiff_t bfp16_first_nonfinite_block(const float* src, std::size_t nblocks) noexcept {
    // Scan in chunks with a branch-free inner loop, then locate the block.
    constexpr std::size_t kChunk = 64;  // blocks
    for (std::size_t b0 = 0; b0 < nblocks; b0 += kChunk) {
        const std::size_t nb = std::min(kChunk, nblocks - b0);
        const float* x = src + b0 * kBfp16BlockValues;
        std::uint32_t any = 0;
        for (std::size_t i = 0; i < nb * kBfp16BlockValues; ++i) {
            std::uint32_t bits;
            std::memcpy(&bits, x + i, sizeof bits);
            any |= static_cast<std::uint32_t>((bits & 0x7F800000u) == 0x7F800000u);
        }
        if (any) {
            for (std::size_t i = 0; i < nb * kBfp16BlockValues; ++i) {
                std::uint32_t bits;
                std::memcpy(&bits, x + i, sizeof bits);
                if ((bits & 0x7F800000u) == 0x7F800000u) {
                    return static_cast<std::ptrdiff_t>(b0 + i / kBfp16BlockValues);
                }
            }
        }
    }
    return -1;
}

std::ptrdiff_t bfp16_first_nonfinite(const float* src, std::size_t nblocks) noexcept {
    const std::ptrdiff_t block = bfp16_first_nonfinite_block(src, nblocks);
    if (block < 0) return -1;
    std::ptrdiff_t i = block * static_cast<std::ptrdiff_t>(kBfp16BlockValues);
    while (std::isfinite(src[i])) ++i;
    return i;
}

void bfp16_unencodable(const std::string& what, const std::string& element, float value) {
    // NumPy's spelling of the value, so the message reads like the array's repr.
    const char* v = std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
    fail(ErrorKind::Data, (what.empty() ? "" : what + ": ") + "bfp16ebs8 has no encoding for NaN or Inf: " + element +
                              " = " + v);
}

std::string element_name(int ndim, const std::int64_t* shape, std::int64_t flat, const char* operand) {
    std::vector<std::int64_t> index(static_cast<std::size_t>(ndim));
    for (int d = ndim; d-- > 0;) {
        index[static_cast<std::size_t>(d)] = shape[d] ? flat % shape[d] : 0;
        flat = shape[d] ? flat / shape[d] : 0;
    }
    std::string s = std::string(operand) + (*operand ? " " : "") + "element (";
    for (int d = 0; d < ndim; ++d) s += (d ? ", " : "") + std::to_string(index[static_cast<std::size_t>(d)]);
    return s + (ndim == 1 ? ",)" : ")");
}

namespace {

// Calls fn(byte offset) for each row of `shape` (every axis but the last)
// in C order, the offset stepping by `strides`.
template <typename Fn>
void for_each_row(int ndim, const std::int64_t* shape, const std::int64_t* strides, Fn&& fn) {
    const int lead = ndim > 0 ? ndim - 1 : 0;
    for (int i = 0; i < lead; ++i)
        if (shape[i] == 0) return;
    std::vector<std::int64_t> idx(static_cast<std::size_t>(lead), 0);
    for (;;) {
        std::int64_t off = 0;
        for (int i = 0; i < lead; ++i) off += idx[static_cast<std::size_t>(i)] * strides[i];
        fn(off);
        int d = lead;
        while (d > 0) {
            --d;
            if (++idx[static_cast<std::size_t>(d)] < shape[d]) break;
            idx[static_cast<std::size_t>(d)] = 0;
            if (d == 0) return;
        }
        if (lead == 0) return;
    }
}

}  // namespace

void bfp16_encode_rows(const float* src, int ndim, const std::int64_t* shape, const std::int64_t* strides,
                       std::uint8_t* dst, BfpRounding rounding, const std::string& what) {
    const std::int64_t n = shape[ndim - 1];
    const std::size_t blocks = static_cast<std::size_t>(n / 8);
    if (blocks == 0) return;
    const float* row = src;
    for_each_row(ndim, shape, strides, [&](std::int64_t off) {
        const std::ptrdiff_t bad = bfp16_first_nonfinite(row, blocks);
        if (bad >= 0) bfp16_unencodable(what, element_name(ndim, shape, (row - src) + bad), row[bad]);
        bfp16_encode(row, dst + off, blocks, rounding);
        row += n;
    });
}

void bfp16_decode_rows(const std::uint8_t* src, int ndim, const std::int64_t* shape, const std::int64_t* strides,
                       float* dst) noexcept {
    const std::int64_t n = shape[ndim - 1];
    const std::size_t blocks = static_cast<std::size_t>(n / 8);
    if (blocks == 0) return;
    float* row = dst;
    for_each_row(ndim, shape, strides, [&](std::int64_t off) {
        bfp16_decode(src + off, row, blocks);
        row += n;
    });
}

}  // namespace hrx::kernels
