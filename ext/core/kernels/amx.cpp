// The bf16 GEMM on AMX tiles, and a software model of the tile unit that
// runs the same driver (Note [AMX tiles] in amx.h).
//
// The tile instructions are written as inline assembly rather than GCC's
// intrinsics: those are asm statements without memory clobbers, so the
// compiler could move a tile store past the C++ code that reads its result.
#include "kernels/amx.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "kernels/bf16.h"
#include "kernels/cpu_features.h"
#include "kernels/fpenv.h"
#include "kernels/gemm.h"  // CheckOperands
#include "kernels/pool.h"
#include "kernels/scratch.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HRX_AMX_X86 1
#endif

namespace hrx::kernels::detail {

namespace {

using u16 = std::uint16_t;
using u32 = std::uint32_t;

constexpr std::size_t kPairs = 16;                    // pairs per tile row (64 bytes)
constexpr std::size_t kTile = 16;                     // rows of a tile; fp32 columns of a C tile
constexpr std::size_t kBlock = 2 * kTile;             // a C block is 2 x 2 tiles
constexpr std::size_t kChunkSlots = kBlock * kPairs;  // 32-bit slots per packed chunk (2 KiB)

// Packed operands, in 32-bit slots holding a pair (k = 2q in the low half,
// k = 2q + 1 in the high half; zero past K or past the matrix):
// - an A block (32 rows): for each chunk of 16 pairs, 32 rows of 16 slots,
//   so rows 0-15 and 16-31 are two tiles of 64-byte rows, 1 KiB apart;
// - a B panel (32 columns): for each chunk, for each half of 16 columns,
//   16 pair rows of 16 slots (one tile each, 1 KiB apart).
// Tile numbers: C(ri, cj) = 2 * ri + cj, the A halves 4 and 5, the B halves
// 6 and 7.

struct alignas(64) TileCfg {
    std::uint8_t palette = 1;
    std::uint8_t start_row = 0;
    std::uint8_t reserved[14] = {};
    std::uint16_t colsb[16] = {};
    std::uint8_t rows[16] = {};
};
static_assert(sizeof(TileCfg) == 64, "the LDTILECFG memory operand");

// C tiles 16 x 16 fp32; A tiles 16 rows of `pairs` slots; B tiles `pairs`
// rows of 16 slots.
TileCfg make_cfg(std::size_t pairs) noexcept {
    TileCfg t;
    for (int i = 0; i < 4; ++i) {
        t.rows[i] = kTile;
        t.colsb[i] = 64;
    }
    for (int i = 4; i < 6; ++i) {
        t.rows[i] = kTile;
        t.colsb[i] = static_cast<std::uint16_t>(4 * pairs);
    }
    for (int i = 6; i < 8; ++i) {
        t.rows[i] = static_cast<std::uint8_t>(pairs);
        t.colsb[i] = 64;
    }
    return t;
}

inline u32 pair(u32 even, u32 odd) noexcept { return even | (odd << 16); }

// ------------------------------------------------------------ tile units

#ifdef HRX_AMX_X86
// C-block operations on the real tiles (strides in bytes).
struct HwTiles {
    static void config(const TileCfg& c) noexcept { __asm__ volatile("ldtilecfg %0" ::"m"(c) : "memory"); }
    static void release() noexcept { __asm__ volatile("tilerelease" ::: "memory"); }
    static void zero_c() noexcept {
        __asm__ volatile("tilezero %%tmm0\n\ttilezero %%tmm1\n\ttilezero %%tmm2\n\ttilezero %%tmm3" ::: "memory");
    }
    // The 32 x 32 floats at p, ld floats apart.
    static void load_c(const float* p, std::size_t ld) noexcept {
        const long s = static_cast<long>(ld * sizeof(float));
        const float* p1 = p + kTile * ld;
        __asm__ volatile(
            "tileloadd (%0,%2,1), %%tmm0\n\t"
            "tileloadd 64(%0,%2,1), %%tmm1\n\t"
            "tileloadd (%1,%2,1), %%tmm2\n\t"
            "tileloadd 64(%1,%2,1), %%tmm3" ::"r"(p),
            "r"(p1), "r"(s)
            : "memory");
    }
    static void store_c(float* p, std::size_t ld) noexcept {
        const long s = static_cast<long>(ld * sizeof(float));
        float* p1 = p + kTile * ld;
        __asm__ volatile(
            "tilestored %%tmm0, (%0,%2,1)\n\t"
            "tilestored %%tmm1, 64(%0,%2,1)\n\t"
            "tilestored %%tmm2, (%1,%2,1)\n\t"
            "tilestored %%tmm3, 64(%1,%2,1)" ::"r"(p),
            "r"(p1), "r"(s)
            : "memory");
    }
    // One chunk: C(ri, cj) += A half ri x B half cj.
    static void step(const u32* a, const u32* b) noexcept {
        const long s = 64;
        __asm__ volatile(
            "tileloadd (%0,%2,1), %%tmm4\n\t"
            "tileloadd (%1,%2,1), %%tmm6\n\t"
            "tileloadd 1024(%0,%2,1), %%tmm5\n\t"
            "tileloadd 1024(%1,%2,1), %%tmm7\n\t"
            "tdpbf16ps %%tmm6, %%tmm4, %%tmm0\n\t"
            "tdpbf16ps %%tmm7, %%tmm4, %%tmm1\n\t"
            "tdpbf16ps %%tmm6, %%tmm5, %%tmm2\n\t"
            "tdpbf16ps %%tmm7, %%tmm5, %%tmm3" ::"r"(a),
            "r"(b), "r"(s)
            : "memory");
    }
};
#endif

// The tile unit as Intel defines it (palette 1: 8 tiles of up to 16 rows of
// 64 bytes), per thread. A configuration or an operand shape the hardware
// would refuse (#GP / #UD) aborts, as the instruction would kill the process.
struct ModelTiles {
    struct State {
        TileCfg cfg;
        bool configured = false;
        alignas(64) std::uint8_t t[8][kTile][64] = {};
    };
    static State& st() noexcept {
        thread_local State s;
        return s;
    }
    static void config(const TileCfg& c) noexcept {
        if (c.palette != 1 || c.start_row != 0) std::abort();
        for (int i = 0; i < 16; ++i) {
            const bool used = c.rows[i] != 0 || c.colsb[i] != 0;
            const bool valid = i < 8 && c.rows[i] >= 1 && c.rows[i] <= kTile && c.colsb[i] >= 1 &&
                               c.colsb[i] <= 64;
            if (used && !valid) std::abort();
        }
        State& s = st();
        s.cfg = c;
        s.configured = true;
        std::memset(s.t, 0, sizeof s.t);  // LDTILECFG zeroes every tile
    }
    static void release() noexcept {
        State& s = st();
        s.configured = false;
        std::memset(s.t, 0, sizeof s.t);
    }
    static void check(int t) noexcept {
        const State& s = st();
        if (!s.configured || s.cfg.rows[t] == 0) std::abort();
    }
    static void load(int t, const void* p, std::size_t stride) noexcept {
        check(t);
        State& s = st();
        std::memset(s.t[t], 0, sizeof s.t[t]);
        for (std::size_t r = 0; r < s.cfg.rows[t]; ++r)
            std::memcpy(s.t[t][r], static_cast<const std::uint8_t*>(p) + r * stride, s.cfg.colsb[t]);
    }
    static void store(int t, void* p, std::size_t stride) noexcept {
        check(t);
        const State& s = st();
        for (std::size_t r = 0; r < s.cfg.rows[t]; ++r)
            std::memcpy(static_cast<std::uint8_t*>(p) + r * stride, s.t[t][r], s.cfg.colsb[t]);
    }
    static float bf16(u32 h) noexcept {  // the low half of h
        return std::bit_cast<float>(bf16_to_f32_bits(static_cast<u16>(h)));
    }
    // TDPBF16PS c, a, b as Intel's SDM defines it: for each output, the low
    // (even) elements' products and the high (odd) elements' products each
    // chain from +0 over the pairs of the tile, one FMA per step; then their
    // sum is added to the accumulator. DAZ|FTZ and nearest-even throughout.
    static void dp(int c, int a, int b) noexcept {
        check(c);
        check(a);
        check(b);
        State& s = st();
        const TileCfg& g = s.cfg;
        if (g.rows[c] != g.rows[a] || g.colsb[c] != g.colsb[b] || g.colsb[a] != 4 * g.rows[b] ||
            g.colsb[c] % 4 != 0 || c == a || c == b || a == b)
            std::abort();
        const std::size_t pairs = g.colsb[a] / 4u, cols = g.colsb[c] / 4u;
        for (std::size_t m = 0; m < g.rows[c]; ++m) {
            float even[kTile] = {}, odd[kTile] = {};
            for (std::size_t k = 0; k < pairs; ++k) {
                u32 av;
                std::memcpy(&av, s.t[a][m] + 4 * k, 4);
                const float a0 = bf16(av), a1 = bf16(av >> 16);
                for (std::size_t n = 0; n < cols; ++n) {
                    u32 bv;
                    std::memcpy(&bv, s.t[b][k] + 4 * n, 4);
                    even[n] = std::fma(a0, bf16(bv), even[n]);
                    odd[n] = std::fma(a1, bf16(bv >> 16), odd[n]);
                }
            }
            for (std::size_t n = 0; n < cols; ++n) {
                float acc;
                std::memcpy(&acc, s.t[c][m] + 4 * n, 4);
                const float sum = even[n] + odd[n];
                acc += sum;
                std::memcpy(s.t[c][m] + 4 * n, &acc, 4);
            }
        }
    }
    static void zero_c() noexcept {
        for (int t = 0; t < 4; ++t) {
            check(t);
            std::memset(st().t[t], 0, sizeof st().t[t]);
        }
    }
    static void load_c(const float* p, std::size_t ld) noexcept {
        for (int t = 0; t < 4; ++t) load(t, p + (t / 2) * kTile * ld + (t % 2) * kTile, ld * sizeof(float));
    }
    static void store_c(float* p, std::size_t ld) noexcept {
        for (int t = 0; t < 4; ++t) store(t, p + (t / 2) * kTile * ld + (t % 2) * kTile, ld * sizeof(float));
    }
    static void step(const u32* a, const u32* b) noexcept {
        load(4, a, 64);
        load(6, b, 64);
        load(5, a + kTile * kPairs, 64);
        load(7, b + kTile * kPairs, 64);
        dp(0, 4, 6);
        dp(1, 4, 7);
        dp(2, 5, 6);
        dp(3, 5, 7);
    }
};

// ------------------------------------------------------------ packing

// Rows [0, rows) (rows <= 32) of the row-major a (lda apart) over all of K.
void pack_a_block(const u16* a, std::size_t lda, std::size_t rows, std::size_t K, std::size_t chunks,
                  u32* dst) noexcept {
    const std::size_t full_pairs = K / 2;  // pairs with both halves inside K
    for (std::size_t ch = 0; ch < chunks; ++ch) {
        for (std::size_t r = 0; r < kBlock; ++r) {
            u32* out = dst + (ch * kBlock + r) * kPairs;
            const std::size_t q0 = ch * kPairs;
            if (r >= rows) {
                std::fill(out, out + kPairs, 0u);
                continue;
            }
            const u16* row = a + r * lda;
            std::size_t qq = 0;
            for (; qq < kPairs && q0 + qq < full_pairs; ++qq) {
                // Little-endian: a[2q] is already the low half.
                std::memcpy(out + qq, row + 2 * (q0 + qq), sizeof(u32));
            }
            for (; qq < kPairs; ++qq) {
                const std::size_t k = 2 * (q0 + qq);
                out[qq] = k < K ? pair(row[k], 0u) : 0u;
            }
        }
    }
}

// Pair rows [q0, q1) of every panel of a column chunk: columns [0, cols) of
// the row-major b (ldb apart), panels `panel` slots apart at dst. Row by row,
// so that b is read in order (1.5x faster than panel by panel at 4,096^2).
void pack_b_rows(const u16* b, std::size_t ldb, std::size_t cols, std::size_t K, std::size_t panel,
                 std::size_t q0, std::size_t q1, u32* dst) noexcept {
    const std::size_t panels = ceil_div(cols, kBlock);
    for (std::size_t q = q0; q < q1; ++q) {
        const std::size_t k = 2 * q, ch = q / kPairs, qq = q % kPairs;
        const u16* even = k < K ? b + k * ldb : nullptr;
        const u16* odd = k + 1 < K ? b + (k + 1) * ldb : nullptr;
        for (std::size_t p = 0; p < panels; ++p) {
            for (std::size_t h = 0; h < 2; ++h) {
                u32* out = dst + p * panel + ((ch * 2 + h) * kPairs + qq) * kTile;
                const std::size_t c0 = p * kBlock + h * kTile;
                if (even && odd && c0 + kTile <= cols) {
                    for (std::size_t j = 0; j < kTile; ++j) out[j] = pair(even[c0 + j], odd[c0 + j]);
                    continue;
                }
                for (std::size_t j = 0; j < kTile; ++j) {
                    const bool in = c0 + j < cols;
                    out[j] = pair(even && in ? even[c0 + j] : 0u, odd && in ? odd[c0 + j] : 0u);
                }
            }
        }
    }
}

// ------------------------------------------------------------ the driver

Scratch<u32>& slots_a() {
    thread_local Scratch<u32> s;
    return s;
}
Scratch<u32>& slots_b() {
    thread_local Scratch<u32> s;
    return s;
}

// Note [AMX threads]
// A product of 2mkn flops runs on min(T, 2mkn / kAmxFlopsPerThread) threads,
// at least one, as Note [GEMM threads] plans the FMA kits: below that, handing
// a share to a pool thread costs more than computing it. The tiles compute
// about four times the FMA kits' rate per core (2-vCPU Xeon, 2026-12-05: one
// thread 14.6 us at n = 128, 36 us at 192, 68 us at 256), so the share is
// four times theirs. Before this, every tile product of 32 x 64 x 32 and up
// went to the pool: on a loaded 2-core host a 64^3 product then took 0.8 ms
// instead of 7 us. Batches of small products run one product per thread. The
// split never changes a bit: each C block is one item's, computed by the same
// tile steps.
constexpr double kAmxFlopsPerThread = 16e6;

template <class U>
struct AmxDriver {
    std::size_t M, K, N;
    std::size_t chunk_bytes;  // packed B per column chunk
    std::size_t pairs = (K + 1) / 2;
    std::size_t chunks = ceil_div(pairs, kPairs);
    std::size_t last = pairs - (chunks - 1) * kPairs;  // pairs in the last chunk, 1..16
    std::size_t nfull = last == kPairs ? chunks : chunks - 1;
    TileCfg full = make_cfg(kPairs), rem = make_cfg(last);

    // One C block: rows x cols (each <= 32) at c, ldc apart; the tiles hold
    // the configuration `full` on entry when nfull > 0, else `rem`.
    void block(const u32* ap, const u32* bp, float* c, std::size_t ldc, std::size_t rows,
               std::size_t cols, float* tmp) const {
        U::zero_c();
        for (std::size_t ch = 0; ch < nfull; ++ch) U::step(ap + ch * kChunkSlots, bp + ch * kChunkSlots);
        if (nfull < chunks) {
            // Reconfiguring zeroes the tiles: park C in tmp meanwhile.
            if (nfull > 0) {
                U::store_c(tmp, kBlock);
                U::config(rem);
                U::load_c(tmp, kBlock);
            }
            U::step(ap + nfull * kChunkSlots, bp + nfull * kChunkSlots);
        }
        if (rows == kBlock && cols == kBlock) {
            U::store_c(c, ldc);
        } else {
            U::store_c(tmp, kBlock);
            for (std::size_t i = 0; i < rows; ++i) std::memcpy(c + i * ldc, tmp + i * kBlock, cols * sizeof(float));
        }
        if (nfull < chunks && nfull > 0) U::config(full);
    }

    void product(const u16* a, const u16* b, float* c, std::size_t threads) const {
        const std::size_t panel = chunks * kChunkSlots;  // slots per packed B panel
        const std::size_t np_all = ceil_div(N, kBlock);
        const std::size_t np_max = std::max<std::size_t>(1, chunk_bytes / (panel * sizeof(u32)));
        Scratch<u32>& bs = slots_b();
        u32* bpk = bs.get(std::min(np_max, np_all) * panel);
        const std::size_t rb = ceil_div(M, kBlock);
        // B is packed in pieces of pair rows, a few per thread.
        const std::size_t pair_rows = chunks * kPairs;
        const std::size_t pieces = threads > 1 ? std::min(pair_rows, 4 * threads) : 1;
        for (std::size_t p0 = 0; p0 < np_all; p0 += np_max) {
            const std::size_t npc = std::min(np_max, np_all - p0);
            auto pack = [&](std::size_t piece) {
                const std::size_t col = p0 * kBlock;
                pack_b_rows(b + col, N, std::min(npc * kBlock, N - col), K, panel, piece * pair_rows / pieces,
                            (piece + 1) * pair_rows / pieces, bpk);
            };
            std::size_t js = 1;
            while (threads > 1 && rb * js < 2 * threads && npc >= 2 * js) js *= 2;
            auto item = [&](std::size_t it) {
                const std::size_t i0 = (it / js) * kBlock, s = it % js;
                const std::size_t q0 = s * npc / js, q1 = (s + 1) * npc / js;
                if (q0 == q1) return;
                const std::size_t rows = std::min(kBlock, M - i0);
                u32* ap = slots_a().get(chunks * kChunkSlots);
                pack_a_block(a + i0 * K, K, rows, K, chunks, ap);
                alignas(64) float tmp[kBlock * kBlock];
                // For the model's FMAs (TDPBF16PS itself ignores MXCSR).
                const FpEnv env(true);
                U::config(nfull > 0 ? full : rem);
                for (std::size_t q = q0; q < q1; ++q) {
                    const std::size_t col = (p0 + q) * kBlock;
                    block(ap, bpk + q * panel, c + i0 * N + col, N, rows, std::min(kBlock, N - col), tmp);
                }
                U::release();
            };
            if (threads > 1) {
                pool_run(pieces, pack);
                pool_run(rb * js, item);
            } else {
                pack(0);
                for (std::size_t it = 0; it < rb * js; ++it) item(it);
            }
        }
        bs.release_if_large();
    }
};

template <class U>
void run_amx(std::size_t chunk_bytes, const u16* a, const u16* b, float* c, std::size_t batch,
             std::size_t m, std::size_t k, std::size_t n, const std::int64_t* ia, const std::int64_t* ib,
             bool threaded) {
    if (batch == 0 || m == 0 || n == 0) return;
    if (k == 0) {
        std::fill(c, c + batch * m * n, 0.0f);
        return;
    }
    const AmxDriver<U> d{m, k, n, chunk_bytes};
    const double per = 2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n);
    const std::size_t most = threaded ? pool_threads() : 1;
    const std::size_t threads = threads_for(per, kAmxFlopsPerThread, most);
    auto one = [&](std::size_t t, std::size_t product_threads) {
        const std::size_t sa = ia ? static_cast<std::size_t>(ia[t]) : t;
        const std::size_t sb = ib ? static_cast<std::size_t>(ib[t]) : t;
        d.product(a + sa * m * k, b + sb * k * n, c + t * m * n, product_threads);
    };
    if (threads == 1 && batch > 1 && threads_for(per * static_cast<double>(batch), kAmxFlopsPerThread, most) > 1) {
        // Many small products: one thread each (scratch is per thread).
        pool_run(batch, [&](std::size_t t) { one(t, 1); });
        return;
    }
    for (std::size_t t = 0; t < batch; ++t) one(t, threads);
}

#ifdef HRX_AMX_X86
// The hardware against the model, bit for bit (NaNs aside), on the three
// kinds of CheckOperands; shapes with a short last chunk, an odd K, partial C
// blocks, and one column chunk per panel.
bool self_check() noexcept {
    CheckOperands rng{0xD1B54A32D192ED03ull};
    struct Shape {
        std::size_t m, k, n;
    };
    const Shape shapes[] = {{40, 75, 37}, {32, 64, 48}, {17, 33, 70}, {64, 96, 64}};
    for (unsigned mode = 0; mode < 3; ++mode) {
        for (const Shape& sh : shapes) {
            std::vector<u16> a(sh.m * sh.k), b(sh.k * sh.n);
            for (auto& v : a) v = rng.bf16(mode);
            for (auto& v : b) v = rng.bf16(mode);
            std::vector<float> want(sh.m * sh.n), got(sh.m * sh.n);
            run_amx<ModelTiles>(1, a.data(), b.data(), want.data(), 1, sh.m, sh.k, sh.n, nullptr, nullptr,
                                false);
            run_amx<HwTiles>(1, a.data(), b.data(), got.data(), 1, sh.m, sh.k, sh.n, nullptr, nullptr,
                             false);
            for (std::size_t i = 0; i < want.size(); ++i) {
                const bool both_nan = std::isnan(want[i]) && std::isnan(got[i]);
                if (!both_nan && std::memcmp(&want[i], &got[i], sizeof(float)) != 0) return false;
            }
        }
    }
    return true;
}
#endif

}  // namespace

namespace {

// What serves TileUnit::Hardware in this process, decided at the first call.
enum class TileSource { None, Hardware, Model };

TileSource tile_source() noexcept {
    static const TileSource src = [] {
        const char* e = std::getenv("HRXARRAY_AMX");
        const std::string_view v = e != nullptr ? e : "";
        if (v == "model") return TileSource::Model;
        if (v == "0") return TileSource::None;
#ifdef HRX_AMX_X86
        if (std::string_view(best_kernel_path()) == "amx_bf16" && self_check()) return TileSource::Hardware;
#endif
        return TileSource::None;
    }();
    return src;
}

}  // namespace

bool amx_usable() noexcept { return tile_source() != TileSource::None; }

bool amx_is_model() noexcept { return tile_source() == TileSource::Model; }

void gemm_bf16_amx(TileUnit unit, const std::uint16_t* a, const std::uint16_t* b, float* c,
                   std::size_t batch, std::size_t m, std::size_t k, std::size_t n,
                   const std::int64_t* ia, const std::int64_t* ib, bool threaded) noexcept {
    if (unit == TileUnit::Model) {
        // Small column chunks, so that modest test shapes cross chunk edges.
        run_amx<ModelTiles>(64u << 10, a, b, c, batch, m, k, n, ia, ib, threaded);
        return;
    }
    switch (tile_source()) {
        case TileSource::Model: run_amx<ModelTiles>(8u << 20, a, b, c, batch, m, k, n, ia, ib, threaded); break;
#ifdef HRX_AMX_X86
        case TileSource::Hardware: run_amx<HwTiles>(8u << 20, a, b, c, batch, m, k, n, ia, ib, threaded); break;
#endif
        default: break;
    }
}

}  // namespace hrx::kernels::detail
