// Private to reduce*.cpp: the reduction engine, a template over the
// accumulation op, instantiated for the float compute types in
// reduce_float.cpp and for bool and the integers in reduce_int.cpp.
//
// Note [Reduction order]: every reduction combines the reduced elements of
// one output, taken in C order of the reduced dimensions, in a tree that
// depends only on how many there are, so the result is the same whatever the
// strides, the dtype casts on the way, the thread count or the way the work
// is split (and on x86 and arm64 alike: no fused multiply-add, no reordering
// by the compiler). The sequence is cut into blocks of kBlock elements; in a
// block, lane l (of kLanes<T>) accumulates the elements at l, l + kLanes, ...
// in order, starting from the op's identity (for maximum/minimum, from the
// block's first element), and the lanes are then combined pairwise. Blocks
// are combined pairwise too: a binary counter over the blocks of a group of
// kGroupBlocks blocks, folded from the top, gives the group's value, and the
// same counter over the groups (the last, partial group placed on top
// unmerged) gives the result. For float add this is pairwise summation, with
// an error bound of about (kBlock / kLanes + log2 n) * eps * sum|x|. Float add
// starts from +0.0 like NumPy's, so a sum of -0.0s is +0.0.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "kernels/elementwise_impl.h"
#include "kernels/nditer.h"
#include "kernels/pool.h"
#include "kernels/scratch.h"

namespace hrx::kernels::ew {

inline constexpr std::int64_t kBlock = 1024;
inline constexpr std::int64_t kGroupBlocks = 64;
inline constexpr std::int64_t kGroup = kBlock * kGroupBlocks;
template <class T> inline constexpr int kLanes = sizeof(T) == 8 ? 16 : 32;
// Outputs per tile of the outer (vectorised across outputs) strategy: rows
// up to 16 KiB are read whole, in order, so they stream from memory; the
// lanes of a tile (kLanes * 16 KiB) then sit in L2.
template <class T> inline constexpr std::int64_t kTile = 16384 / sizeof(T);

// Runs run(T{}) for integer dtype t and returns its result; false for any
// other dtype. T is t's own type, or with `by_width` the unsigned type of
// its width (for ops whose bits do not depend on signedness).
template <bool by_width, class Run>
bool with_int_type(DType t, Run&& run) {
    using I8 = std::conditional_t<by_width, std::uint8_t, std::int8_t>;
    using I16 = std::conditional_t<by_width, std::uint16_t, std::int16_t>;
    using I32 = std::conditional_t<by_width, std::uint32_t, std::int32_t>;
    using I64 = std::conditional_t<by_width, std::uint64_t, std::int64_t>;
    switch (t) {
        case DType::Int8: return run(I8{});
        case DType::Int16: return run(I16{});
        case DType::Int32: return run(I32{});
        case DType::Int64: return run(I64{});
        case DType::UInt8: return run(std::uint8_t{});
        case DType::UInt16: return run(std::uint16_t{});
        case DType::UInt32: return run(std::uint32_t{});
        case DType::UInt64: return run(std::uint64_t{});
        default: return false;
    }
}

// Everything one reduction needs, prepared by reduce_run.
struct ReduceCtx {
    DType ct;         // compute type of the accumulation
    DType acc;        // accumulation dtype (ct, or float16/bfloat16)
    CastFn c1, c2;    // input -> ct (c2 null: one step); both null: direct
    std::int64_t sz1; // item size after c1
    bool direct;      // input already of type ct
    // The reduced dimensions in C order (merged where the input allows).
    int nr;
    std::int64_t rshape[kMaxDims];
    std::int64_t rstride[kMaxDims];
    std::int64_t m;  // reduced elements per output
    // The kept dimensions: operand 0 is the input, 1 the output.
    NdLayout kept;
    char* base[2];
    std::int64_t nout;
    bool outer;  // tile along the innermost kept dimension
    DType out_dtype;
    double divisor;
};

// Writes n compute-type values (contiguous) to out (stride os): rounded to
// the accumulation dtype, divided by the divisor if any, cast to out's dtype.
void reduce_finish(const ReduceCtx& c, const char* vals, std::int64_t n, char* out, std::int64_t os) noexcept;

// Walks the reduced elements of one output in C order.
struct Cursor {
    const ReduceCtx* c;
    const char* p;  // current element
    std::int64_t idx[kMaxDims];

    void seek(const char* base, std::int64_t flat) noexcept {
        p = base;
        for (int d = c->nr - 1; d >= 0; --d) {
            idx[d] = flat % c->rshape[d];
            flat /= c->rshape[d];
            p += idx[d] * c->rstride[d];
        }
    }
    // Moves k elements on; k never crosses the end of the innermost run when
    // called from read (which splits at runs) or is 1.
    void advance(std::int64_t k) noexcept {
        const int in = c->nr - 1;
        idx[in] += k;
        p += k * c->rstride[in];
        for (int d = in; d > 0 && idx[d] == c->rshape[d]; --d) {
            idx[d] = 0;
            ++idx[d - 1];
            p += c->rstride[d - 1] - c->rshape[d] * c->rstride[d];
        }
    }
    std::int64_t run_left() const noexcept { return c->rshape[c->nr - 1] - idx[c->nr - 1]; }

    // Converts one strided run of n elements at src (stride s) to ct in dst.
    static void convert(const ReduceCtx& c, const char* src, std::int64_t s, char* dst, char* tmp,
                        std::int64_t n) noexcept {
        const std::int64_t szc = dtype_itemsize(c.ct);
        if (c.direct) {
            cast_fn(c.ct, c.ct)(src, s, dst, szc, n);
        } else if (c.c2) {
            c.c1(src, s, tmp, c.sz1, n);
            c.c2(tmp, c.sz1, dst, szc, n);
        } else {
            c.c1(src, s, dst, szc, n);
        }
    }

    // The next n (<= kBlock) elements as contiguous compute-type values:
    // in place when they are, else converted into buf (tmp: scratch).
    template <class T>
    const T* read(std::int64_t n, T* buf, char* tmp) noexcept {
        const std::int64_t s = c->rstride[c->nr - 1];
        if (c->direct && s == static_cast<std::int64_t>(sizeof(T)) && run_left() >= n &&
            reinterpret_cast<std::uintptr_t>(p) % alignof(T) == 0) {
            const T* r = reinterpret_cast<const T*>(p);
            advance(n);
            return r;
        }
        std::int64_t done = 0;
        while (done < n) {
            const std::int64_t k = std::min(run_left(), n - done);
            convert(*c, p, s, reinterpret_cast<char*>(buf + done), tmp, k);
            advance(k);
            done += k;
        }
        return buf;
    }
};

// The binary counter of Note [Reduction order], for scalars...
template <class Op, class T>
struct Counter {
    T v[64];
    signed char lvl[64];
    int n = 0;
    void push(T x) noexcept {
        signed char level = 0;
        while (n > 0 && lvl[n - 1] == level) {
            x = Op::f(v[n - 1], x);
            --n;
            ++level;
        }
        v[n] = x;
        lvl[n] = level;
        ++n;
    }
    void append(T x) noexcept {  // on top, never merged
        v[n] = x;
        lvl[n] = -1;
        ++n;
    }
    T fold() const noexcept {
        T r = v[n - 1];
        for (int i = n - 2; i >= 0; --i) r = Op::f(v[i], r);
        return r;
    }
};

// ...and for a tile of J outputs at once (the same merges on every column),
// over caller-provided storage of J values per level.
template <class Op, class T>
struct TileCounter {
    T* v;  // levels * J
    std::int64_t J;
    signed char lvl[64];
    int n = 0;
    T* at(int i) const noexcept { return v + i * J; }
    void push(const T* x) noexcept {
        signed char level = 0;
        T* top = at(n);
        if (top != x) std::copy(x, x + J, top);
        while (n > 0 && lvl[n - 1] == level) {
            T* below = at(n - 1);
            for (std::int64_t j = 0; j < J; ++j) below[j] = Op::f(below[j], top[j]);
            top = below;
            --n;
            ++level;
        }
        lvl[n] = level;
        ++n;
    }
    void append(const T* x) noexcept {
        std::copy(x, x + J, at(n));
        lvl[n] = -1;
        ++n;
    }
    void fold(T* r) const noexcept {
        if (n <= 0) return;  // never: every sequence has a block
        std::copy(at(n - 1), at(n - 1) + J, r);
        for (int i = n - 2; i >= 0; --i) {
            const T* p = at(i);
            for (std::int64_t j = 0; j < J; ++j) r[j] = Op::f(p[j], r[j]);
        }
    }
};

// Note [Prefetch across pages]: a block of kBlock float32 is one 4 KiB page,
// and the hardware's stream prefetchers stop at page boundaries, so a plain
// walk over a long sequence stalls at the start of every block (16 GB/s where
// the axis-0 walk, four streams at once, reaches twice that). Prefetching a
// fixed distance ahead carries the stream into the next page. It reads
// nothing the result depends on.
inline constexpr std::int64_t kPrefetchAhead = 2048;

// One block (len <= kBlock contiguous values).
template <class Op, class T>
T block_value(const T* x, std::int64_t len) noexcept {
    constexpr int L = kLanes<T>;
    T acc[L];
    const T init = Op::kIdentity ? Op::identity() : x[0];
    for (int l = 0; l < L; ++l) acc[l] = init;
    std::int64_t i = 0;
    for (; i + L <= len; i += L) {
        // Note [Prefetch across pages]
        __builtin_prefetch(reinterpret_cast<const char*>(x + i) + kPrefetchAhead);
        __builtin_prefetch(reinterpret_cast<const char*>(x + i) + kPrefetchAhead + 64);
        for (int l = 0; l < L; ++l) acc[l] = Op::f(acc[l], x[i + l]);
    }
    for (int l = 0; i + l < len; ++l) acc[l] = Op::f(acc[l], x[i + l]);
    for (int w = L / 2; w >= 1; w /= 2)
        for (int l = 0; l < w; ++l) acc[l] = Op::f(acc[l], acc[l + w]);
    return acc[0];
}

// The value of group g of the sequence starting at base.
template <class Op, class T>
T group_value(const ReduceCtx& c, const char* base, std::int64_t g) noexcept {
    alignas(64) T buf[kBlock];
    alignas(64) char tmp[kBlock * 8];
    Cursor cur{&c, nullptr, {}};
    const std::int64_t begin = g * kGroup, end = std::min(c.m, begin + kGroup);
    cur.seek(base, begin);
    Counter<Op, T> blocks;
    for (std::int64_t b = begin; b < end; b += kBlock) {
        const std::int64_t len = std::min(kBlock, end - b);
        blocks.push(block_value<Op, T>(cur.read<T>(len, buf, tmp), len));
    }
    return blocks.fold();
}

inline std::int64_t group_count(std::int64_t m) noexcept { return (m + kGroup - 1) / kGroup; }

template <class Op, class T>
T combine_groups(const T* vals, std::int64_t m) noexcept {
    const std::int64_t ng = group_count(m);
    const bool partial = m % kGroup != 0;
    Counter<Op, T> groups;
    for (std::int64_t g = 0; g < ng; ++g) {
        if (partial && g == ng - 1) groups.append(vals[g]);
        else groups.push(vals[g]);
    }
    return groups.fold();
}

template <class Op, class T>
T sequence_value(const ReduceCtx& c, const char* base) noexcept {
    const std::int64_t ng = group_count(c.m);
    const bool partial = c.m % kGroup != 0;
    Counter<Op, T> groups;
    for (std::int64_t g = 0; g < ng; ++g) {
        const T v = group_value<Op, T>(c, base, g);
        if (partial && g == ng - 1) groups.append(v);
        else groups.push(v);
    }
    return groups.fold();
}

// Scratch of the outer strategy for tiles of up to kTile<T> outputs, carved
// from a buffer that stays with the calling thread (reduce_scratch): a fresh
// allocation of this size per call is a fresh mapping whose first touch
// faults in and zeroes every page, a tenth of an axis-0 sum's time.
template <class T>
struct TileScratch {
    T *acc, *rows, *val, *blocks, *groups;
    char* tmp;
    TileScratch(std::int64_t m, detail::Scratch<char>& buffer) {
        constexpr std::int64_t W = kTile<T>;
        std::int64_t levels = 2;  // of the group counter
        for (std::int64_t g = group_count(m); g > 1; g >>= 1) ++levels;
        const std::size_t values = static_cast<std::size_t>(W * (kLanes<T> + 4 + 1 + 8 + levels));
        char* base = buffer.get(values * sizeof(T) + static_cast<std::size_t>(W * 8));
        acc = reinterpret_cast<T*>(base);
        rows = acc + W * kLanes<T>;
        val = rows + 4 * W;
        blocks = val + W;
        groups = blocks + W * 8;
        tmp = base + values * sizeof(T);
    }
};

// The i-th scratch buffer of the calling thread (a lane thread: pool items
// get theirs from it, as they must not allocate).
inline detail::Scratch<char>& reduce_scratch(std::size_t i) {
    thread_local std::vector<detail::Scratch<char>> buffers;
    if (buffers.size() <= i) buffers.resize(i + 1);
    return buffers[i];
}

// The outer strategy: J (<= kTile<T>) outputs whose inputs sit at in + j * sk,
// with the lanes and counters of Note [Reduction order] held per output. In
// a block, lane l takes rows l, l + L, l + 2L, ...; the four consecutive rows
// of a lane are added in one pass over its accumulators, so the input is read
// as four interleaved sequential streams while the accumulators (L rows of J,
// in L2) are read and written a quarter as often.
template <class Op, class T>
[[gnu::always_inline]] inline void tile_values_body(const ReduceCtx& c, const char* in, std::int64_t sk,
                                                    std::int64_t J, T* result, TileScratch<T>& w) noexcept {
    constexpr int L = kLanes<T>;
    T* const acc = w.acc;
    const bool zero_copy = c.direct && sk == static_cast<std::int64_t>(sizeof(T));
    Cursor cur{&c, nullptr, {}};
    const bool one_dim = c.nr == 1;
    const std::int64_t rs = c.rstride[0];
    auto row_at = [&](std::int64_t i, T* buf) -> const T* {
        if (one_dim) cur.p = in + i * rs;
        else cur.seek(in, i);
        if (zero_copy && reinterpret_cast<std::uintptr_t>(cur.p) % alignof(T) == 0) return reinterpret_cast<const T*>(cur.p);
        Cursor::convert(c, cur.p, sk, reinterpret_cast<char*>(buf), w.tmp, J);
        return buf;
    };
    // Rows b + i of a block of len, lane by lane, four rows per pass.
    auto add_rows_by_lane = [&](std::int64_t b, std::int64_t len) {
        for (std::int64_t i0 = 0; i0 < len; i0 += 4 * L) {
            for (int l = 0; l < L; ++l) {
                const std::int64_t i = i0 + l;
                if (i >= len) break;
                T* a = acc + l * J;
                const int nr = static_cast<int>(std::min<std::int64_t>(4, (len - i + L - 1) / L));
                const T* r0 = row_at(b + i, w.rows);
                if (nr == 4) {
                    const T* r1 = row_at(b + i + L, w.rows + J);
                    const T* r2 = row_at(b + i + 2 * L, w.rows + 2 * J);
                    const T* r3 = row_at(b + i + 3 * L, w.rows + 3 * J);
                    // Note [Prefetch across pages]: in chunks, each prefetching
                    // its four rows a fixed distance ahead.
                    constexpr std::int64_t kChunk = 64 / sizeof(T) * 4;
                    constexpr std::int64_t kAhead = kPrefetchAhead / static_cast<std::int64_t>(sizeof(T));
                    for (std::int64_t j0 = 0; j0 < J; j0 += kChunk) {
                        for (std::int64_t q = 0; q < kChunk; q += 64 / static_cast<std::int64_t>(sizeof(T))) {
                            __builtin_prefetch(r0 + j0 + kAhead + q);
                            __builtin_prefetch(r1 + j0 + kAhead + q);
                            __builtin_prefetch(r2 + j0 + kAhead + q);
                            __builtin_prefetch(r3 + j0 + kAhead + q);
                        }
                        const std::int64_t je = std::min(J, j0 + kChunk);
                        for (std::int64_t j = j0; j < je; ++j)
                            a[j] = Op::f(Op::f(Op::f(Op::f(a[j], r0[j]), r1[j]), r2[j]), r3[j]);
                    }
                    continue;
                }
                for (std::int64_t j = 0; j < J; ++j) a[j] = Op::f(a[j], r0[j]);
                for (int t = 1; t < nr; ++t) {
                    const T* r = row_at(b + i + t * L, w.rows + t * J);
                    for (std::int64_t j = 0; j < J; ++j) a[j] = Op::f(a[j], r[j]);
                }
            }
        }
    };
    TileCounter<Op, T> groups{w.groups, J, {}, 0};
    const std::int64_t ng = group_count(c.m);
    const bool partial = c.m % kGroup != 0;
    for (std::int64_t g = 0; g < ng; ++g) {
        TileCounter<Op, T> blocks{w.blocks, J, {}, 0};
        const std::int64_t gend = std::min(c.m, (g + 1) * kGroup);
        for (std::int64_t b = g * kGroup; b < gend; b += kBlock) {
            const std::int64_t len = std::min(kBlock, gend - b);
            if constexpr (Op::kIdentity) {
                std::fill(acc, acc + L * J, Op::identity());
            } else {
                const T* first = row_at(b, w.rows);
                for (int l = 0; l < L; ++l) std::copy(first, first + J, acc + l * J);
            }
            // Narrow rows (all the lanes fit in L1) go in plain row order, and
            // so do integers: the lane-by-lane walk only pays for wide float
            // tiles, and compiling it for every integer op costs more.
            if (!std::is_floating_point_v<T> || J * static_cast<std::int64_t>(sizeof(T)) < 1024) {
                for (std::int64_t i = 0; i < len; ++i) {
                    const T* r = row_at(b + i, w.rows);
                    T* a = acc + (i % L) * J;
                    for (std::int64_t j = 0; j < J; ++j) a[j] = Op::f(a[j], r[j]);
                }
            } else if constexpr (std::is_floating_point_v<T>) {
                add_rows_by_lane(b, len);
            }
            for (int wd = L / 2; wd >= 1; wd /= 2)
                for (int l = 0; l < wd; ++l) {
                    T* a = acc + l * J;
                    const T* a2 = acc + (l + wd) * J;
                    for (std::int64_t j = 0; j < J; ++j) a[j] = Op::f(a[j], a2[j]);
                }
            blocks.push(acc);
        }
        blocks.fold(w.val);
        if (partial && g == ng - 1) groups.append(w.val);
        else groups.push(w.val);
    }
    groups.fold(result);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// The row updates are L2-bound at SSE2 width; AVX2 halves their
// instructions. (No FMA: "avx2" does not enable it, so nothing contracts.)
template <class Op, class T>
__attribute__((target("avx2"))) void tile_values_avx2(const ReduceCtx& c, const char* in, std::int64_t sk,
                                                      std::int64_t J, T* result, TileScratch<T>& w) noexcept {
    tile_values_body<Op, T>(c, in, sk, J, result, w);
}
#endif

template <class Op, class T>
void tile_values(const ReduceCtx& c, const char* in, std::int64_t sk, std::int64_t J, T* result,
                 TileScratch<T>& w) noexcept {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    // (floats only: the integer instantiations would multiply compile time
    // for reductions that are rarer and exact either way)
    if constexpr (std::is_floating_point_v<T>) {
        if (avx2_loops()) return tile_values_avx2<Op, T>(c, in, sk, J, result, w);
    }
#endif
    tile_values_body<Op, T>(c, in, sk, J, result, w);
}

// The accumulation ops: f combines an accumulator with an element (or two
// partial results); kIdentity says whether lanes may start from identity().
template <class T> struct RAdd {
    static constexpr bool kIdentity = true;
    static T identity() noexcept { return T(0); }
    static T f(T a, T b) noexcept {
        if constexpr (std::is_same_v<T, bool>) return a || b;
        else if constexpr (std::is_integral_v<T>) return wrap_add(a, b);
        else if constexpr (is_complex_v<T>) return T(a.real() + b.real(), a.imag() + b.imag());
        else return a + b;
    }
};
template <class T> struct RMul {
    static constexpr bool kIdentity = true;
    static T identity() noexcept { return T(1); }
    static T f(T a, T b) noexcept {
        if constexpr (std::is_same_v<T, bool>) return a && b;
        else if constexpr (std::is_integral_v<T>) return wrap_mul(a, b);
        else if constexpr (is_complex_v<T>) return cmul(a, b);
        else return a * b;
    }
};
template <class T> struct RMax {
    static constexpr bool kIdentity = false;
    static T identity() noexcept { return T(0); }
    static T f(T a, T b) noexcept {
        if constexpr (std::is_floating_point_v<T>) return (a > b || a != a) ? a : b;
        else return a > b ? a : b;
    }
};
template <class T> struct RMin {
    static constexpr bool kIdentity = false;
    static T identity() noexcept { return T(0); }
    static T f(T a, T b) noexcept {
        if constexpr (std::is_floating_point_v<T>) return (a < b || a != a) ? a : b;
        else return a < b ? a : b;
    }
};
template <class T> struct RLAnd {
    static constexpr bool kIdentity = true;
    static T identity() noexcept { return T(1); }
    static T f(T a, T b) noexcept { return static_cast<T>((a != 0) && (b != 0)); }
};
template <class T> struct RLOr {
    static constexpr bool kIdentity = true;
    static T identity() noexcept { return T(0); }
    static T f(T a, T b) noexcept { return static_cast<T>((a != 0) || (b != 0)); }
};
template <class T> struct RLXor {
    static constexpr bool kIdentity = true;
    static T identity() noexcept { return T(0); }
    static T f(T a, T b) noexcept { return static_cast<T>((a != 0) != (b != 0)); }
};
template <class T> struct RBAnd {
    static constexpr bool kIdentity = true;
    static T identity() noexcept {
        if constexpr (std::is_same_v<T, bool>) return true;
        else return static_cast<T>(~T(0));
    }
    static T f(T a, T b) noexcept { return static_cast<T>(a & b); }
};
template <class T> struct RBOr {
    static constexpr bool kIdentity = true;
    static T identity() noexcept { return T(0); }
    static T f(T a, T b) noexcept { return static_cast<T>(a | b); }
};
template <class T> struct RBXor {
    static constexpr bool kIdentity = true;
    static T identity() noexcept { return T(0); }
    static T f(T a, T b) noexcept { return static_cast<T>(a ^ b); }
};

// reduce_engine for op over c.ct: float32/float64 and add/multiply of
// complex64/complex128 (reduce_float.cpp) or bool
// and the integers (reduce_int.cpp, reduce_bitwise.cpp, reduce_minmax.cpp).
// False if the op has no such reduction.
bool reduce_floats(Ufunc op, const ReduceCtx& c);
bool reduce_ints(Ufunc op, const ReduceCtx& c);
bool reduce_minmax_ints(Ufunc op, const ReduceCtx& c);   // reduce_minmax.cpp
bool reduce_bitwise_ints(Ufunc op, const ReduceCtx& c);  // reduce_bitwise.cpp

// Reductions of at least this many elements use the pool (waking it costs
// tens of microseconds; see ufunc_run).
inline constexpr std::int64_t kReduceParallelMin = std::int64_t{1} << 20;

// Runs the reduction of c with accumulation Op over compute type T. Outputs
// (or tiles of them) are independent, and so are the groups of one long
// sequence, which is what the pool is given; Note [Reduction order] makes
// the split invisible in the results.
template <class Op, class T>
void reduce_engine(const ReduceCtx& c) {
    const std::size_t threads = pool_threads();
    const bool par = c.m * c.nout >= kReduceParallelMin && threads > 1;
    const NdLayout& K = c.kept;
    char* const* base = c.base;
    if (c.outer) {
        const std::int64_t J = K.shape[K.ndim - 1];
        std::int64_t W = kTile<T>;
        if (par && (c.nout / J) * ((J + W - 1) / W) < 2 * static_cast<std::int64_t>(threads)) {
            // Too few tiles to share: narrower ones (whole cache lines).
            const std::int64_t want = (J + 2 * static_cast<std::int64_t>(threads) - 1) / (2 * static_cast<std::int64_t>(threads));
            W = std::min(W, std::max<std::int64_t>(8192 / sizeof(T), (want + 15) / 16 * 16));
        }
        const std::int64_t ntile = (J + W - 1) / W;
        const std::int64_t units = (c.nout / J) * ntile;
        auto run_units = [&](TileScratch<T>& w, std::int64_t ub, std::int64_t ue) {
            for (std::int64_t u = ub; u < ue; ++u) {
                const std::int64_t o = u / ntile, t = u % ntile;
                const std::int64_t b = o * J + t * W, e = o * J + std::min(J, (t + 1) * W);
                nd_rows(K, base, b, e, [&](char* const* p, const std::int64_t* s, std::int64_t n) {
                    tile_values<Op, T>(c, p[0], s[0], n, w.val, w);
                    reduce_finish(c, reinterpret_cast<const char*>(w.val), n, p[1], s[1]);
                });
            }
        };
        if (!par || units < 2) {
            TileScratch<T> w(c.m, reduce_scratch(0));
            run_units(w, 0, units);
            return;
        }
        // Scratch is allocated here, since pool items must not throw.
        const std::int64_t items = std::min<std::int64_t>(units, static_cast<std::int64_t>(threads) * 4);
        reduce_scratch(static_cast<std::size_t>(items) - 1);  // every buffer exists before one is used
        std::vector<TileScratch<T>> ws;
        for (std::int64_t i = 0; i < items; ++i) ws.emplace_back(c.m, reduce_scratch(static_cast<std::size_t>(i)));
        pool_run(static_cast<std::size_t>(items), [&](std::size_t i) {
            run_units(ws[i], units * static_cast<std::int64_t>(i) / items, units * static_cast<std::int64_t>(i + 1) / items);
        });
        return;
    }
    const std::int64_t ng = group_count(c.m);
    const bool split_groups = par && c.nout < 2 * static_cast<std::int64_t>(threads) && ng >= 2;
    auto outputs = [&](std::int64_t b, std::int64_t e) {
        nd_rows(K, base, b, e, [&](char* const* p, const std::int64_t* s, std::int64_t n) {
            constexpr std::int64_t kBatch = 256;
            alignas(64) T vals[kBatch];
            for (std::int64_t k = 0; k < n; k += kBatch) {
                const std::int64_t cnt = std::min(kBatch, n - k);
                for (std::int64_t j = 0; j < cnt; ++j) {
                    const char* in = p[0] + (k + j) * s[0];
                    if (split_groups) {
                        std::unique_ptr<T[]> gv(new T[static_cast<std::size_t>(ng)]);
                        const std::int64_t items = std::min<std::int64_t>(ng, static_cast<std::int64_t>(threads) * 4);
                        pool_run(static_cast<std::size_t>(items), [&](std::size_t i) {
                            const std::int64_t gb = ng * static_cast<std::int64_t>(i) / items;
                            const std::int64_t ge = ng * static_cast<std::int64_t>(i + 1) / items;
                            for (std::int64_t g = gb; g < ge; ++g) gv[g] = group_value<Op, T>(c, in, g);
                        });
                        vals[j] = combine_groups<Op, T>(gv.get(), c.m);
                    } else {
                        vals[j] = sequence_value<Op, T>(c, in);
                    }
                }
                reduce_finish(c, reinterpret_cast<const char*>(vals), cnt, p[1] + k * s[1], s[1]);
            }
        });
    };
    if (!par || split_groups || c.nout < 2) {
        outputs(0, c.nout);
        return;
    }
    const std::int64_t items = std::min<std::int64_t>(c.nout, static_cast<std::int64_t>(threads) * 4);
    pool_run(static_cast<std::size_t>(items), [&](std::size_t i) {
        outputs(c.nout * static_cast<std::int64_t>(i) / items, c.nout * static_cast<std::int64_t>(i + 1) / items);
    });
}

}  // namespace hrx::kernels::ew
