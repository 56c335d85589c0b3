// A deterministic battery over the kernels library (ext/core/kernels) that
// prints one "name hash" line per case: FNV-1a of the output bytes, with every
// NaN replaced by its dtype's canonical quiet NaN (NaN payloads and signs are
// unspecified, see elementwise.h and matmul.h).
//
// Every path of the library is bit-identical by contract, so the same source
// built for x86-64 (AVX-512 or AVX2 paths) and for arm64 (portable code) must
// print the same lines. tests/test_arm64_kernels.py builds it both ways, runs
// the arm64 build under qemu-user and compares: that is how the arm64 build
// is checked on a machine without arm64 hardware.
//
// Left out, because their results legitimately differ between C libraries or
// architectures: the transcendental ufuncs (exp, log, log1p, expm1, sin, cos,
// tan, tanh, sinh, cosh, the inverse trigonometric and hyperbolic functions),
// float and complex power, complex sqrt, and complex128 absolute and sign
// (hypot), which call libm (elementwise.h).
//
// Build: c++ -std=c++20 -O3 -Iext/core ext/check/kernels_check.cpp
//        <the hrx_kernels sources of CMakeLists.txt> -lpthread
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/bf16.h"
#include "kernels/bfp16.h"
#include "kernels/dtype.h"
#include "kernels/elementwise.h"
#include "kernels/matmul.h"
#include "kernels/random.h"

namespace {

using hrx::DType;
namespace k = hrx::kernels;

struct Rng {
    std::uint64_t s;
    std::uint64_t next() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return s;
    }
    std::uint32_t u32() { return static_cast<std::uint32_t>(next() >> 17); }
};

class Hash {
public:
    void bytes(const void* p, std::size_t n) {
        const auto* b = static_cast<const std::uint8_t*>(p);
        for (std::size_t i = 0; i < n; ++i) {
            h_ ^= b[i];
            h_ *= 0x100000001B3ull;
        }
    }
    // Elements of dtype t, NaNs canonicalised.
    void values(DType t, const void* p, std::size_t count) {
        // A complex element is two floats (NaN signs differ between x86 and arm64).
        if (hrx::dtype_is_complex(t)) return values(hrx::complex_part(t), p, 2 * count);
        const auto* b = static_cast<const std::uint8_t*>(p);
        const int size = hrx::dtype_itemsize(t);
        for (std::size_t i = 0; i < count; ++i) {
            const std::uint8_t* e = b + i * static_cast<std::size_t>(size);
            if (t == DType::Float16 || t == DType::BFloat16) {
                std::uint16_t v;
                std::memcpy(&v, e, 2);
                const bool nan = t == DType::Float16 ? (v & 0x7C00u) == 0x7C00u && (v & 0x3FFu)
                                                     : (v & 0x7F80u) == 0x7F80u && (v & 0x7Fu);
                if (nan) v = t == DType::Float16 ? 0x7E00u : 0x7FC0u;
                bytes(&v, 2);
            } else if (t == DType::Float32) {
                std::uint32_t v;
                std::memcpy(&v, e, 4);
                if ((v & 0x7FFFFFFFu) > 0x7F800000u) v = 0x7FC00000u;
                bytes(&v, 4);
            } else if (t == DType::Float64) {
                std::uint64_t v;
                std::memcpy(&v, e, 8);
                if ((v & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull) v = 0x7FF8000000000000ull;
                bytes(&v, 8);
            } else {
                bytes(e, static_cast<std::size_t>(size));
            }
        }
    }
    void mark(const char* s) { bytes(s, std::strlen(s)); }
    std::uint64_t value() const { return h_; }

private:
    std::uint64_t h_ = 0xCBF29CE484222325ull;
};

void emit(const std::string& name, const Hash& h) {
    std::printf("%s %016llx\n", name.c_str(), static_cast<unsigned long long>(h.value()));
}

constexpr DType kNumeric[] = {DType::Bool,    DType::Int8,     DType::Int16,   DType::Int32,    DType::Int64,
                              DType::UInt8,   DType::UInt16,   DType::UInt32,  DType::UInt64,   DType::Float16,
                              DType::BFloat16, DType::Float32, DType::Float64, DType::Complex64, DType::Complex128};

// count elements of dtype t: random bits now and then (NaN, Inf, subnormals,
// extreme integers), otherwise small integers and moderate floats, so that
// arithmetic, comparisons and casts all see interesting cases.
std::vector<std::uint8_t> make(DType t, std::size_t count, Rng& rng, bool nonnegative_small = false) {
    if (hrx::dtype_is_complex(t)) return make(hrx::complex_part(t), 2 * count, rng, nonnegative_small);
    const int size = hrx::dtype_itemsize(t);
    std::vector<std::uint8_t> v(count * static_cast<std::size_t>(size));
    for (std::size_t i = 0; i < count; ++i) {
        std::uint8_t* e = v.data() + i * static_cast<std::size_t>(size);
        const std::uint64_t r = rng.next();
        const unsigned kind = static_cast<unsigned>(r % 8u);
        const std::int64_t small = nonnegative_small ? static_cast<std::int64_t>((r >> 8) % 6u)
                                                     : static_cast<std::int64_t>((r >> 8) % 17u) - 8;
        if (t == DType::Bool) {
            e[0] = static_cast<std::uint8_t>((r >> 3) & 1u);
        } else if (hrx::dtype_is_integer(t)) {
            const std::uint64_t bits = kind == 0 && !nonnegative_small ? rng.next() : static_cast<std::uint64_t>(small);
            std::memcpy(e, &bits, static_cast<std::size_t>(size));  // little endian: the low bytes
        } else {
            double x;
            if (kind == 0) {
                const std::uint64_t bits = rng.next();
                if (t == DType::Float64) {
                    std::memcpy(e, &bits, 8);
                    continue;
                }
                if (t == DType::Float32) {
                    std::memcpy(e, &bits, 4);
                    continue;
                }
                const auto h = static_cast<std::uint16_t>(bits);
                std::memcpy(e, &h, 2);
                continue;
            } else if (kind < 4) {
                x = static_cast<double>(small);
            } else {
                const double frac = static_cast<double>(rng.next() >> 11) * 0x1p-53;
                x = (frac - 0.5) * static_cast<double>(1u << (rng.next() % 20u));
                if (nonnegative_small) x = x < 0 ? -x : x;
            }
            if (t == DType::Float64) {
                std::memcpy(e, &x, 8);
            } else {
                const float f = static_cast<float>(x);
                if (t == DType::Float32) {
                    std::memcpy(e, &f, 4);
                } else {
                    std::uint32_t bits;
                    std::memcpy(&bits, &f, 4);
                    // float16 by truncating the float32 pattern is good enough for test data.
                    std::uint16_t h;
                    if (t == DType::BFloat16) {
                        h = static_cast<std::uint16_t>(bits >> 16);
                    } else {
                        const std::uint32_t sign = (bits >> 16) & 0x8000u;
                        const float a = f < 0 ? -f : f;
                        h = a >= 65504.0f ? static_cast<std::uint16_t>(sign | 0x7BFFu)
                            : a < 0x1p-14f ? static_cast<std::uint16_t>(sign)
                                           : static_cast<std::uint16_t>(sign | (((bits >> 23 & 0xFFu) - 112u) << 10) |
                                                                        ((bits >> 13) & 0x3FFu));
                    }
                    std::memcpy(e, &h, 2);
                }
            }
        }
    }
    return v;
}

bool uses_libm(k::Ufunc op, const k::UfuncLoop& loop) {
    using U = k::Ufunc;
    switch (op) {
        case U::Exp: case U::Log: case U::Log1p: case U::Expm1: case U::Sin: case U::Cos: case U::Tan:
        case U::Tanh: case U::Sinh: case U::Cosh: case U::Arcsin: case U::Arccos: case U::Arctan: case U::Arcsinh:
        case U::Arccosh: case U::Arctanh: case U::Log2: case U::Log10: case U::Arctan2: case U::Logaddexp:
            return true;
        case U::Power: return hrx::dtype_is_float(loop.out) || hrx::dtype_is_complex(loop.out);
        case U::Sqrt: return hrx::dtype_is_complex(loop.out);
        // hypot: glibc's double version differs between x86-64 (its FMA variant) and arm64
        case U::Absolute: case U::Sign: return loop.in[0] == DType::Complex128;
        default: return false;
    }
}

void check_ufuncs() {
    constexpr std::size_t n = 777;
    for (int o = 0; o < k::kUfuncCount; ++o) {
        const auto op = static_cast<k::Ufunc>(o);
        const k::UfuncInfo& info = k::ufunc_info(op);
        for (int li = 0; li < info.nloops; ++li) {
            const k::UfuncLoop& loop = info.loops[li];
            if (uses_libm(op, loop)) continue;
            Rng rng{0x1234567ull + static_cast<std::uint64_t>(o * 131 + li)};
            std::vector<std::vector<std::uint8_t>> in;
            for (int i = 0; i < info.nin; ++i) {
                const bool exponent = op == k::Ufunc::Power && i == 1;
                in.push_back(make(loop.in[i], n, rng, exponent));
            }
            std::vector<std::uint8_t> out(n * static_cast<std::size_t>(hrx::dtype_itemsize(loop.out)));
            const std::int64_t shape[1] = {static_cast<std::int64_t>(n)};
            std::int64_t strides[3][1];
            k::StridedArg args[3];
            for (int i = 0; i < info.nin; ++i) {
                strides[i][0] = hrx::dtype_itemsize(loop.in[i]);
                args[i] = {in[static_cast<std::size_t>(i)].data(), loop.in[i], strides[i]};
            }
            const std::int64_t ostride[1] = {hrx::dtype_itemsize(loop.out)};
            const k::StridedArg oarg{out.data(), loop.out, ostride};
            Hash h;
            try {
                k::ufunc_run(op, loop, 1, shape, args, oarg, nullptr);
                h.values(loop.out, out.data(), n);
            } catch (const std::exception& e) {
                h.mark(e.what());
            }
            std::string name = std::string("ufunc ") + info.name + " ";
            for (int i = 0; i < info.nin; ++i) name += hrx::dtype_info(loop.in[i]).code;
            name += std::string("->") + hrx::dtype_info(loop.out).code;
            emit(name, h);
        }
    }
}

void check_casts() {
    constexpr std::size_t n = 1000;
    for (DType from : kNumeric) {
        for (DType to : kNumeric) {
            Rng rng{0xABCDEFull + static_cast<std::uint64_t>(from) * 31u + static_cast<std::uint64_t>(to)};
            std::vector<std::uint8_t> src = make(from, n, rng);
            std::vector<std::uint8_t> dst(n * static_cast<std::size_t>(hrx::dtype_itemsize(to)));
            const std::int64_t shape[1] = {static_cast<std::int64_t>(n)};
            const std::int64_t ss[1] = {hrx::dtype_itemsize(from)}, ds[1] = {hrx::dtype_itemsize(to)};
            k::copy_cast(1, shape, {src.data(), from, ss}, {dst.data(), to, ds});
            Hash h;
            h.values(to, dst.data(), n);
            emit(std::string("cast ") + hrx::dtype_name(from) + "->" + hrx::dtype_name(to), h);
        }
    }
}

void check_reductions() {
    const std::int64_t shape[2] = {37, 53};
    const std::size_t n = 37 * 53;
    const k::Ufunc ops[] = {k::Ufunc::Add, k::Ufunc::Multiply, k::Ufunc::Maximum, k::Ufunc::Minimum,
                            k::Ufunc::LogicalOr, k::Ufunc::BitwiseXor};
    for (DType t : kNumeric) {
        Rng rng{0x5151ull + static_cast<std::uint64_t>(t)};
        std::vector<std::uint8_t> src = make(t, n, rng);
        const std::int64_t isz = hrx::dtype_itemsize(t);
        const std::int64_t in_strides[2] = {53 * isz, isz};
        const bool float_t = hrx::dtype_is_float(t);
        const DType acc = t == DType::Float16 || t == DType::BFloat16 ? DType::Float32 : t;
        for (k::Ufunc op : ops) {
            if (op == k::Ufunc::BitwiseXor && float_t) continue;
            for (int axes = 1; axes <= 3; ++axes) {  // bit 0: axis 0, bit 1: axis 1
                const bool red[2] = {(axes & 1) != 0, (axes & 2) != 0};
                const std::size_t count = (red[0] ? 1 : 37) * (red[1] ? 1 : 53);
                std::vector<std::uint8_t> out(count * static_cast<std::size_t>(isz));
                const std::int64_t out_strides[2] = {red[0] ? 0 : (red[1] ? isz : 53 * isz), red[1] ? 0 : isz};
                Hash h;
                try {
                    k::reduce_run(op, acc, 2, shape, red, {src.data(), t, in_strides}, {out.data(), t, out_strides},
                                  0.0);
                    h.values(t, out.data(), count);
                } catch (const std::exception& e) {
                    h.mark(e.what());
                }
                emit(std::string("reduce ") + k::ufunc_info(op).name + " " + hrx::dtype_name(t) + " axes=" +
                         std::to_string(axes),
                     h);
            }
        }
        for (int axis = -1; axis <= 1 && !hrx::dtype_is_complex(t); ++axis) {  // complex numbers are not ordered
            for (bool mx : {true, false}) {
                const std::size_t count = axis == -1 ? 1 : axis == 0 ? 53 : 37;
                std::vector<std::int64_t> out(count);
                const std::int64_t out_strides[2] = {axis == 1 ? 8 : 0, axis == 0 ? 8 : 0};
                k::arg_reduce_run(mx, 2, shape, axis, {src.data(), t, in_strides},
                                  {reinterpret_cast<std::uint8_t*>(out.data()), DType::Int64, out_strides});
                Hash h;
                h.bytes(out.data(), out.size() * 8);
                emit(std::string(mx ? "argmax " : "argmin ") + hrx::dtype_name(t) + " axis=" + std::to_string(axis),
                     h);
            }
        }
    }
}

void check_bf16() {
    std::vector<std::uint16_t> all(65536);
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint16_t>(i);
    std::vector<float> wide(all.size());
    k::bf16_to_f32(all.data(), wide.data(), all.size());
    Hash h1;
    h1.bytes(wide.data(), wide.size() * 4);  // every pattern widens exactly, NaNs included
    emit("bf16_to_f32 all", h1);
    Rng rng{0xBF16ull};
    std::vector<float> x((1u << 20) + 7);
    for (float& f : x) {
        const std::uint32_t bits = rng.u32() ^ static_cast<std::uint32_t>(rng.next() << 31);
        std::memcpy(&f, &bits, 4);
    }
    std::vector<std::uint16_t> y(x.size());
    k::f32_to_bf16(x.data(), y.data(), x.size());
    Hash h2;
    h2.bytes(y.data(), y.size() * 2);  // NaN handling is specified: sign kept, quiet 0x7FC0
    emit("f32_to_bf16 random", h2);
}

void check_bfp16() {
    Rng rng{0xB0F16ull};
    const std::size_t nb = (1u << 15) + 3;
    std::vector<float> x(nb * k::kBfp16BlockValues);
    for (std::size_t b = 0; b < nb; ++b) {
        // Per-block scales over the whole exponent range, subnormal-only blocks included.
        const int spread = static_cast<int>(rng.next() % 4u);
        const int e0 = static_cast<int>(rng.next() % 250u);
        for (std::size_t i = 0; i < k::kBfp16BlockValues; ++i) {
            const int e = e0 - static_cast<int>(rng.next() % static_cast<std::uint64_t>(1 + spread * 12));
            const std::uint32_t bits = (rng.u32() & 0x807FFFFFu) | (static_cast<std::uint32_t>(e < 0 ? 0 : e) << 23);
            std::memcpy(&x[b * k::kBfp16BlockValues + i], &bits, 4);
        }
    }
    for (auto rounding : {k::BfpRounding::floor, k::BfpRounding::even}) {
        std::vector<std::uint8_t> blocks(nb * k::kBfp16BlockBytes);
        k::bfp16_encode(x.data(), blocks.data(), nb, rounding);
        Hash h;
        h.bytes(blocks.data(), blocks.size());
        emit(rounding == k::BfpRounding::floor ? "bfp16_encode floor" : "bfp16_encode even", h);
    }
    std::vector<std::uint8_t> raw(nb * k::kBfp16BlockBytes);
    for (auto& b : raw) b = static_cast<std::uint8_t>(rng.next());
    std::vector<float> y(nb * k::kBfp16BlockValues);
    k::bfp16_decode(raw.data(), y.data(), nb);
    Hash h;
    h.bytes(y.data(), y.size() * 4);  // every pattern decodes exactly (no NaN)
    emit("bfp16_decode random bytes", h);
}

void check_matmul() {
    struct Shape {
        std::size_t batch, m, kk, n;
    };
    const Shape shapes[] = {{300, 8, 8, 8}, {2, 13, 77, 150}, {1, 9, 771, 40}, {1, 200, 390, 260}, {3, 1, 5, 64}};
    for (const Shape& s : shapes) {
        for (int data = 0; data < 2; ++data) {
            Rng rng{0x3A7ull + s.m * 7 + s.kk * 13 + static_cast<std::uint64_t>(data)};
            std::vector<std::uint16_t> a(s.batch * s.m * s.kk), b(s.batch * s.kk * s.n);
            auto fill = [&](std::vector<std::uint16_t>& v) {
                for (auto& e : v) {
                    // Random bit patterns (overflow, tiny products, NaN/Inf), or moderate values.
                    e = data == 0 ? static_cast<std::uint16_t>(rng.next())
                                  : static_cast<std::uint16_t>((rng.next() & 0x807Fu) | ((120u + rng.next() % 14u) << 7));
                }
            };
            fill(a);
            fill(b);
            std::vector<float> c(s.batch * s.m * s.n);
            using Fn = void (*)(const std::uint16_t*, const std::uint16_t*, float*, std::size_t, std::size_t,
                                std::size_t, std::size_t, const std::int64_t*, const std::int64_t*) noexcept;
            const auto product = [&](const char* name, Fn fn) {
                std::fill(c.begin(), c.end(), -1.0f);
                fn(a.data(), b.data(), c.data(), s.batch, s.m, s.kk, s.n, nullptr, nullptr);
                Hash h;
                h.values(DType::Float32, c.data(), c.size());
                emit(std::string(name) + " " + std::to_string(s.batch) + "x" + std::to_string(s.m) + "x" +
                         std::to_string(s.kk) + "x" + std::to_string(s.n) + (data == 0 ? " bits" : " normal"),
                     h);
            };
            product("matmul_bf16", &k::matmul_bf16);
            // The AMX tile path on the model of the tile unit (TDPBF16PS's order).
            if (s.m * s.kk * s.n * s.batch <= 1000000) product("matmul_bf16_amx_model", &k::matmul_bf16_amx_model);
            // The tile order's own path (FMAs here; the same bits as the model).
            product("matmul_bf16_tile", &k::matmul_bf16_tile);
        }
    }
    for (DType t : kNumeric) {
        const DType out = t == DType::BFloat16 ? DType::Float32 : t;
        if (!k::matmul_typed_supported(t, out)) continue;
        const std::size_t m = 19, kk = 70, n = 45;
        Rng rng{0x7E5ull + static_cast<std::uint64_t>(t)};
        std::vector<std::uint8_t> a = make(t, 2 * m * kk, rng), b = make(t, 2 * kk * n, rng);
        std::vector<std::uint8_t> c(2 * m * n * static_cast<std::size_t>(hrx::dtype_itemsize(out)));
        k::matmul_typed(t, out, a.data(), b.data(), c.data(), 2, m, kk, n, nullptr, nullptr);
        Hash h;
        h.values(out, c.data(), 2 * m * n);
        emit(std::string("matmul_typed ") + hrx::dtype_name(t), h);
    }
}

// hx.random's streams (Note [Random streams]): every distribution, both float
// dtypes, narrow and wide integer ranges, with and without replacement. Odd
// counts that span several pool items and end mid-block.
void check_random() {
    constexpr std::uint64_t key = 0x0123456789ABCDEFull, ctr = 977;
    constexpr std::int64_t n = 100003;
    for (auto dist : {k::RandomDist::Uniform, k::RandomDist::Normal}) {
        for (DType t : {DType::Float32, DType::Float64}) {
            std::vector<std::uint8_t> out(static_cast<std::size_t>(n) * 8);
            k::random_real(dist, t, key, ctr, n, 0.25, 3.0, out.data());
            Hash h;
            h.values(t, out.data(), static_cast<std::size_t>(n));
            emit(std::string(dist == k::RandomDist::Uniform ? "random_uniform " : "random_normal ") +
                     hrx::dtype_name(t), h);
        }
    }
    const std::uint64_t ranges[] = {1, 7, 1000, (std::uint64_t{1} << 32) - 5, std::uint64_t{1} << 32,
                                    (std::uint64_t{1} << 32) + 1, 3ull << 61, 0};
    for (std::uint64_t r : ranges) {
        std::vector<std::uint64_t> out(static_cast<std::size_t>(n));
        k::random_integers(DType::UInt64, key, ctr, n, 12345, r, out.data());
        Hash h;
        h.values(DType::UInt64, out.data(), out.size());
        emit("random_integers range=" + std::to_string(r), h);
    }
    for (std::uint64_t widest : {std::uint64_t{1} << 32, (std::uint64_t{1} << 32) + 1}) {  // four a block, two
        std::vector<std::uint64_t> lows(static_cast<std::size_t>(n)), spans(lows.size()), out(lows.size());
        for (std::size_t i = 0; i < lows.size(); ++i) {
            lows[i] = i * 7919;
            spans[i] = i % 97 == 0 ? widest : 1 + i % 1009;
        }
        k::random_integers_each(DType::UInt64, key, ctr, n, lows.data(), spans.data(), out.data());
        Hash h;
        h.values(DType::UInt64, out.data(), out.size());
        emit("random_integers_each widest=" + std::to_string(widest), h);
    }
    std::vector<double> cdf = {0.1, 0.1, 0.35, 0.6, 0.99, 1.0};
    std::vector<std::int64_t> idx(static_cast<std::size_t>(n));
    k::random_choice_cdf(key, ctr, n, cdf.data(), static_cast<std::int64_t>(cdf.size()), idx.data());
    Hash hc;
    hc.values(DType::Int64, idx.data(), idx.size());
    emit("random_choice_cdf", hc);
    std::vector<double> weights(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<double>(i % 13);
    for (const double* w : {static_cast<const double*>(nullptr), static_cast<const double*>(weights.data())}) {
        for (std::int64_t count : {5000, 50000}) {  // Floyd's path and the keyed one when unweighted
            for (bool sorted : {false, true}) {
                std::vector<std::int64_t> pick(static_cast<std::size_t>(count));
                if (!k::random_sample(key, ctr, n, count, w, sorted, pick.data()))
                    throw std::runtime_error("random_sample");
                Hash h;
                h.values(DType::Int64, pick.data(), pick.size());
                emit(std::string("random_sample ") + (w ? "weighted " : "equal ") + std::to_string(count) +
                         (sorted ? " sorted" : ""),
                     h);
            }
        }
    }
    std::vector<double> logs;
    for (double x = 1e-310; x < 1e300; x *= 1.37) logs.push_back(k::random_log(x));
    Hash hl;
    hl.values(DType::Float64, logs.data(), logs.size());
    emit("random_log", hl);
}

}  // namespace

int main() {
    check_bf16();
    check_bfp16();
    check_matmul();
    check_casts();
    check_ufuncs();
    check_reductions();
    check_random();
    return 0;
}
