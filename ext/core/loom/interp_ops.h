// The interpreter's op handlers (Note [Handlers] in loom/interp.h): struct Ops,
// declared here and defined by dialect in interp_scalar.cpp (constants,
// arithmetic, casts, assumptions of the index and scalar dialects),
// interp_memory.cpp (buffers, views, atomics), interp_vector.cpp (vectors,
// bfp16 encodings, fragments, mma, register layout ops) and interp_kernel.cpp
// (coordinates, subgroup and workgroup collectives, control flow, scans,
// exits and the smaller ops); interp.cpp holds the executor and the op
// table. The lane helpers below and the small members stay inline here, so
// every file's handlers inline them as the one file's did.
#pragma once
#include "loom/interp.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <set>
#include <stdexcept>
#include <type_traits>
#include <unordered_map>

#include "kernels/bf16.h"
#include "kernels/bfp16.h"
#include "kernels/elementwise_impl.h"
#include "kernels/fmath.h"
#include "kernels/matmul.h"
#include "loom/catalogue.h"

namespace hrx::loom::interp {

using Frame = Exec::Frame;

// hrx::fmath's unary functions as functor types (fmath_exp, fmath_tanh, ...),
// one handler each (Ops::math1).
#define HRX_LOOM_FMATH_FN(NAME)                                       \
    struct fmath_##NAME {                                             \
        template <class T> T operator()(T p) const { return fmath::NAME(p); } \
    };
HRX_FMATH_UNARY_LIST(HRX_LOOM_FMATH_FN)
#undef HRX_LOOM_FMATH_FN

inline double bf16_of(float f) {
    return std::bit_cast<float>(kernels::bf16_to_f32_bits(kernels::f32_bits_to_bf16(std::bit_cast<uint32_t>(f))));
}

// A double holding any value rounded to float type k.
inline double fround(ScalarKind k, double v) {
    switch (k) {
        case ScalarKind::F32: return static_cast<float>(v);
        case ScalarKind::BF16: return bf16_of(kernels::ew::round_to_odd_f32(v));
        case ScalarKind::F16: return kernels::ew::half_to_float(kernels::ew::float_to_half(kernels::ew::round_to_odd_f32(v)));
        default: return v;
    }
}

inline uint64_t float_bits(ScalarKind k, double v) {
    switch (k) {
        case ScalarKind::F32: return std::bit_cast<uint32_t>(static_cast<float>(v));
        case ScalarKind::BF16: return std::bit_cast<uint32_t>(static_cast<float>(v)) >> 16;
        case ScalarKind::F16: return kernels::ew::float_to_half(static_cast<float>(v));
        default: return std::bit_cast<uint64_t>(v);
    }
}

inline double float_from_bits(ScalarKind k, uint64_t b) {
    switch (k) {
        case ScalarKind::F32: return std::bit_cast<float>(static_cast<uint32_t>(b));
        case ScalarKind::BF16: return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
        case ScalarKind::F16: return kernels::ew::half_to_float(static_cast<uint16_t>(b));
        default: return std::bit_cast<double>(b);
    }
}

inline std::string loc_str(const Op& op) { return std::to_string(op.loc.line) + ":" + std::to_string(op.loc.column); }

inline bool isf(ScalarKind k) { return scalar_is_float(k); }

inline size_t count(const Reg& r, int64_t L) { return static_cast<size_t>((r.uni ? 1 : L) * r.vlen); }

inline void size_num(Reg& r, ScalarKind k, int64_t vlen, const std::vector<int64_t>& vshape, bool uni, int64_t L) {
    r.kind = RK::Num;
    r.elem = k;
    r.vlen = vlen;
    r.vshape = vshape;
    r.uni = uni;
    r.aff = -1;
    r.lazy = false;
    r.fs = false;
    const size_t n = static_cast<size_t>((uni ? 1 : L) * vlen);
    if (isf(k)) {
        r.f.resize(n);
        r.i.clear();
    } else {
        r.i.resize(n);
        r.f.clear();
    }
}

// a0 + a1 * (L - 1) fits in int64: lanes 0..L-1 of a0 + a1 * l then never
// wrap, which every user of affine() assumes (a monotonic run of values).
inline bool affine_fits(int64_t a0, int64_t a1, int64_t L) {
    int64_t span = 0, last = 0;
    return !__builtin_mul_overflow(a1, L - 1, &span) && !__builtin_add_overflow(a0, span, &last);
}

// Writes out a lazy index (Reg::lazy) lane by lane.
inline void materialize(const Reg& r0) {
    if (r0.fs) {
        Reg& r = const_cast<Reg&>(r0);
        r.fs = false;
        r.f.assign(r.g.begin(), r.g.end());
        return;
    }
    if (!r0.lazy) return;
    Reg& r = const_cast<Reg&>(r0);
    r.lazy = false;
    r.i.resize(static_cast<size_t>(r.ll));
    int64_t q = 0, m = 0;
    for (int64_t l = 0; l < r.ll; ++l) {
        r.i[static_cast<size_t>(l)] = static_cast<int64_t>(static_cast<uint64_t>(r.c0) + static_cast<uint64_t>(r.c1) * static_cast<uint64_t>(q) +
                                                           static_cast<uint64_t>(r.c2) * static_cast<uint64_t>(m));
        if (++m == r.lw) {
            m = 0;
            ++q;
        }
    }
    if (r.c1 == static_cast<int64_t>(static_cast<uint64_t>(r.c2) * static_cast<uint64_t>(r.lw)) &&
        affine_fits(r.c0, r.c2, r.ll)) {
        r.aff = 1;
        r.a0 = r.c0;
        r.a1 = r.c2;
    } else {
        r.aff = -1;
    }
}

inline Reg lazy_index(int64_t c0, int64_t c1, int64_t c2, int64_t lw, int64_t L) {
    Reg r;
    r.kind = RK::Num;
    r.elem = ScalarKind::Index;
    r.uni = false;
    r.lazy = true;
    r.c0 = c0;
    r.c1 = c1;
    r.c2 = c2;
    r.lw = lw;
    r.ll = L;
    return r;
}

// `r` as a varying value (a copy when it was uniform).
inline const Reg& varying(const Reg& r, Reg& tmp, int64_t L) {
    materialize(r);
    if (!r.uni) return r;
    tmp = r;
    tmp.uni = false;
    if (!r.i.empty()) {
        tmp.i.resize(static_cast<size_t>(L * r.vlen));
        for (int64_t l = 0; l < L; ++l) std::copy(r.i.begin(), r.i.end(), tmp.i.begin() + l * r.vlen);
    }
    if (!r.f.empty()) {
        tmp.f.resize(static_cast<size_t>(L * r.vlen));
        for (int64_t l = 0; l < L; ++l) std::copy(r.f.begin(), r.f.end(), tmp.f.begin() + l * r.vlen);
    }
    if (r.off.size() == 1) tmp.off.assign(static_cast<size_t>(L), r.off[0]);
    return tmp;
}

// Whether a varying scalar integer is affine in the lane without wrapping
// (cached on r). Lanes that wrap (index values near 2^63 and 2^64) are not
// affine here: the arithmetic is modulo 2^64 (unsigned), so no test of it
// overflows, and such registers take the general lane-by-lane paths.
inline bool affine(const Reg& r0, int64_t L) {
    Reg& r = const_cast<Reg&>(r0);
    if (r.lazy) {
        if (r.c1 != static_cast<int64_t>(static_cast<uint64_t>(r.c2) * static_cast<uint64_t>(r.lw))) return false;
        if (!affine_fits(r.c0, r.c2, L)) return false;
        r.aff = 1;
        r.a0 = r.c0;
        r.a1 = r.c2;
        return true;
    }
    if (r.aff >= 0) return r.aff == 1;
    r.aff = 0;
    if (r.uni || r.vlen != 1 || r.i.size() != static_cast<size_t>(L) || L < 2) return false;
    const int64_t* p = r.i.data();
    const uint64_t u0 = static_cast<uint64_t>(p[0]), u1 = static_cast<uint64_t>(p[1]) - u0;
    bool ok = true;
    for (int64_t l = 0; l < L; ++l) ok &= static_cast<uint64_t>(p[l]) == u0 + u1 * static_cast<uint64_t>(l);
    const int64_t a0 = p[0], a1 = static_cast<int64_t>(u1);
    if (!ok || !affine_fits(a0, a1, L)) return false;
    r.aff = 1;
    r.a0 = a0;
    r.a1 = a1;
    return true;
}

// Lane loops, f(e) for e in [0, n): compiled twice, portable and for AVX2
// (without FMA, so nothing contracts and the bits are the portable build's),
// and chosen at run time as the kernels choose theirs. The interpreter's
// registers hold iN values as int64 and floats as double; SSE2 has neither a
// 64-bit multiply nor the widening conversions, AVX2 has both.
//
// The closures capture by value and arrive by value: a store through a byte
// pointer could otherwise alias the captured pointers, and the loop would
// reload them every iteration instead of vectorising.
template <class F>
[[gnu::always_inline]] inline void lanes_portable(size_t n, F f) {
    for (size_t e = 0; e < n; ++e) f(e);
}
#ifdef HRX_EW_AVX2
template <class F>
__attribute__((target("avx2"))) void lanes_avx2(size_t n, F f) {
    for (size_t e = 0; e < n; ++e) f(e);
}
#endif
template <class F>
inline void for_lanes(size_t n, F f) {
#ifdef HRX_EW_AVX2
    if (n >= 16 && kernels::ew::avx2_loops()) return lanes_avx2(n, f);
#endif
    lanes_portable(n, f);
}

template <class T>
const T* data(const Reg& r);
template <>
inline const int64_t* data<int64_t>(const Reg& r) { return r.i.data(); }
template <>
inline const double* data<double>(const Reg& r) { return r.f.data(); }
template <class T>
T* mdata(Reg& r);
template <>
inline int64_t* mdata<int64_t>(Reg& r) { return r.i.data(); }
template <>
inline double* mdata<double>(Reg& r) { return r.f.data(); }

inline int64_t vlen_of(const Type& t, const Frame& fr, std::vector<int64_t>* shape) {
    if (t.kind != TypeKind::Vector) {
        if (shape) shape->clear();
        return 1;
    }
    int64_t n = 1;
    if (shape) shape->clear();
    for (const Dim& d : t.dims) {
        int64_t e = d.extent;
        if (d.is_dynamic()) e = fr.regs[static_cast<size_t>(d.value)].i.at(0);
        // Static extents met this limit when the program was planned.
        if (e < 1 || e > kMaxVectorElems || (n *= e) > kMaxVectorElems)
            fail(ErrorKind::Execution, "a vector type " + t.spelling + " with extent " + std::to_string(e) + ": vectors hold 1 to " +
                                           std::to_string(kMaxVectorElems) + " elements in the emulator");
        if (shape) shape->push_back(e);
    }
    return n;
}

inline const Type& result_type(const Op& op, const Frame& fr, size_t k) {
    if (k < op.result_types.size()) return op.result_types[k];
    return (*fr.fn->values)[static_cast<size_t>(op.results[k])].type;
}

// ---------------------------------------------------------------------------
struct Ops {
    using Fn = void (*)(Exec&, const Op&, Frame&, const Mask&);
    static const std::unordered_map<std::string, Fn>& table();

    static Reg& out(Frame& fr, const Op& op, size_t k = 0) { return fr.regs[static_cast<size_t>(op.results.at(k))]; }
    // Operands with their lane values written out; raw() keeps lazy indices.
    static const Reg& in(Frame& fr, const Op& op, size_t k) { return val(fr, op.operands.at(k)); }
    static const Reg& val(Frame& fr, ValueId v) {
        const Reg& r = fr.regs[static_cast<size_t>(v)];
        materialize(r);
        return r;
    }
    static const Reg& raw(Frame& fr, const Op& op, size_t k) { return fr.regs[static_cast<size_t>(op.operands.at(k))]; }

    // index.add/sub/mul on lazy indices and uniforms stay lazy.
    static bool lazy_arith(Exec& x, const Op& op, Frame& fr, const std::string& b) {
        const Reg& A = raw(fr, op, 0);
        const Reg& B = raw(fr, op, 1);
        if (!(A.lazy || B.lazy) || op.name.rfind("index.", 0) != 0) return false;
        auto ok = [](const Reg& r) { return r.lazy || (r.uni && r.vlen == 1 && r.i.size() == 1); };
        if (!ok(A) || !ok(B)) return false;
        if (A.lazy && B.lazy && A.lw != B.lw) return false;
        const int64_t lw = A.lazy ? A.lw : B.lw;
        const int64_t L = A.lazy ? A.ll : B.ll;
        auto co = [](const Reg& r, int k) -> int64_t {
            if (!r.lazy) return k == 0 ? r.i[0] : 0;
            return k == 0 ? r.c0 : k == 1 ? r.c1 : r.c2;
        };
        int64_t c[3];
        if (b == "add" || b == "sub") {
            for (int k = 0; k < 3; ++k) c[k] = b == "add" ? co(A, k) + co(B, k) : co(A, k) - co(B, k);
        } else if (b == "mul") {
            if (A.lazy && B.lazy) return false;
            const Reg& L_ = A.lazy ? A : B;
            const int64_t u = A.lazy ? B.i[0] : A.i[0];
            for (int k = 0; k < 3; ++k) c[k] = co(L_, k) * u;
        } else {
            return false;
        }
        out(fr, op) = lazy_index(c[0], c[1], c[2], lw, L);
        (void)x;
        return true;
    }

    // --- constants ---------------------------------------------------------
    static void constant(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Type& t = result_type(op, fr, 0);
        std::vector<int64_t> shape;
        const int64_t vlen = vlen_of(t, fr, &shape);
        Reg& r = out(fr, op);
        size_num(r, t.elem, vlen, shape, true, x.L);
        const auto [fv, iv] = constant_value(op.attr("value"));
        if (isf(t.elem)) std::fill(r.f.begin(), r.f.end(), fround(t.elem, fv));
        else std::fill(r.i.begin(), r.i.end(), wrap_int(t.elem, iv));
    }
    static void config_get(Exec& x, const Op& op, Frame& fr, const Mask&);
    static void subgroup_size_fact(Exec& x, const Op& op, Frame& fr, const Mask&);

    // --- lanewise arithmetic ------------------------------------------------
    template <class TO, class TA, class F>
    static void un(Exec& x, Reg& o, const Reg& a, ScalarKind ok, F f) {
        size_num(o, ok, a.vlen, a.vshape, a.uni, x.L);
        const size_t n = count(a, x.L);
        const TA* pa = data<TA>(a);
        TO* po = mdata<TO>(o);
        for_lanes(n, [=](size_t e) { po[e] = f(pa[e]); });
    }

    template <class TO, class TA, class TB, class F>
    static void bin(Exec& x, Reg& o, const Reg& a0, const Reg& b0, ScalarKind ok, F f) {
        Reg ta, tb;
        const bool uni = a0.uni && b0.uni;
        const Reg& a = (!uni && a0.vlen > 1) ? varying(a0, ta, x.L) : a0;
        const Reg& b = (!uni && b0.vlen > 1) ? varying(b0, tb, x.L) : b0;
        const int64_t vlen = std::max(a.vlen, b.vlen);
        size_num(o, ok, vlen, a.vlen >= b.vlen ? a.vshape : b.vshape, uni, x.L);
        const size_t n = static_cast<size_t>((uni ? 1 : x.L) * vlen);
        const TA* pa = data<TA>(a);
        const TB* pb = data<TB>(b);
        TO* po = mdata<TO>(o);
        if (uni || (!a.uni && !b.uni)) {
            for_lanes(n, [=](size_t e) { po[e] = f(pa[e], pb[e]); });
        } else if (a.uni) {
            const TA av = pa[0];
            for_lanes(n, [=](size_t e) { po[e] = f(av, pb[e]); });
        } else {
            const TB bv = pb[0];
            for_lanes(n, [=](size_t e) { po[e] = f(pa[e], bv); });
        }
    }

    template <class T, class F>
    static void tern(Exec& x, Reg& o, const Reg& a0, const Reg& b0, const Reg& c0, ScalarKind ok, F f) {
        Reg ta, tb, tc;
        const bool uni = a0.uni && b0.uni && c0.uni;
        const Reg& a = uni ? a0 : varying(a0, ta, x.L);
        const Reg& b = uni ? b0 : varying(b0, tb, x.L);
        const Reg& c = uni ? c0 : varying(c0, tc, x.L);
        size_num(o, ok, b.vlen, b.vshape, uni, x.L);
        const size_t n = count(o, x.L);
        const T* pa = data<T>(a);
        const T* pb = data<T>(b);
        const T* pc = data<T>(c);
        T* po = mdata<T>(o);
        for_lanes(n, [=](size_t e) { po[e] = f(pa[e], pb[e], pc[e]); });
    }

    static std::string base_name(const std::string& n) {
        const auto dot = n.find('.');
        return n.substr(dot + 1);
    }

    // Per-lane checks over the active lanes of a varying or uniform result.
    template <class P>
    static void check_lanes(Exec& x, const Op& op, const Mask& m, const Reg& r, P bad, const std::string& what) {
        const int64_t lanes = r.uni ? 1 : x.L;
        for (int64_t l = 0; l < lanes; ++l) {
            if (!r.uni && !m.on(l)) continue;
            if (r.uni && !m.any()) return;
            for (int64_t j = 0; j < r.vlen; ++j)
                if (bad(static_cast<size_t>(l * r.vlen + j))) x.fail_at(op, r.uni ? -1 : l, what);
        }
    }
    static void int_binary(Exec& x, const Op& op, Frame& fr, const Mask& m);

    // Calls f with a functor wrapping an int64 to kind k's width, chosen once
    // per op rather than per element, so that the lane loops vectorise.
    template <class F>
    static void with_wrap(ScalarKind k, F f) {
        switch (k) {
            case ScalarKind::I1: f([](int64_t v) -> int64_t { return v & 1; }); break;
            case ScalarKind::I8: f([](int64_t v) -> int64_t { return static_cast<int8_t>(v); }); break;
            case ScalarKind::I16: f([](int64_t v) -> int64_t { return static_cast<int16_t>(v); }); break;
            case ScalarKind::I32: f([](int64_t v) -> int64_t { return static_cast<int32_t>(v); }); break;
            default: f([](int64_t v) -> int64_t { return v; }); break;
        }
    }

    // add/sub/mul and the bitwise ops: modulo 2^bits, the same results as
    // the general path below.
    static bool wrapping_binary(Exec& x, Reg& o, const Reg& A, const Reg& B, ScalarKind k, const std::string& b) {
        int which = b == "add" || b == "addi" ? 0 : b == "sub" || b == "subi" ? 1 : b == "mul" || b == "muli" ? 2
                  : b == "andi" ? 3 : b == "ori" ? 4 : b == "xori" ? 5 : -1;
        if (which < 0) return false;
        with_wrap(k, [&](auto W) {
            using U = uint64_t;
            switch (which) {
                case 0: bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [=](int64_t p, int64_t q) { return W(static_cast<int64_t>(U(p) + U(q))); }); break;
                case 1: bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [=](int64_t p, int64_t q) { return W(static_cast<int64_t>(U(p) - U(q))); }); break;
                case 2: bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [=](int64_t p, int64_t q) { return W(static_cast<int64_t>(U(p) * U(q))); }); break;
                case 3: bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [](int64_t p, int64_t q) { return p & q; }); break;
                case 4: bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [](int64_t p, int64_t q) { return p | q; }); break;
                default: bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [](int64_t p, int64_t q) { return p ^ q; }); break;
            }
        });
        return true;
    }

    static void check_div(Exec& x, const Op& op, const Mask& m, const Reg& A, const Reg& B, bool addr) {
        Reg ta, tb;
        const bool uni = A.uni && B.uni;
        const Reg& a = uni ? A : varying(A, ta, x.L);
        const Reg& b = uni ? B : varying(B, tb, x.L);
        Reg probe;
        probe.uni = uni;
        probe.vlen = a.vlen;
        check_lanes(x, op, m, probe, [&](size_t e) { return b.i[e] == 0; }, "division by zero");
        if (addr)
            check_lanes(x, op, m, probe, [&](size_t e) { return a.i[e] < 0 || b.i[e] < 0; },
                        "index div/rem needs a non-negative dividend and a positive divisor");
    }
    static void index_madd(Exec& x, const Op& op, Frame& fr, const Mask&);
    static void index_scale(Exec& x, const Op& op, Frame& fr, const Mask&);

    static std::string pred_of(const Op& op) {
        const Attr* a = op.attr("pred");
        return a ? a->s : std::string();
    }
    static void int_cmp(Exec& x, const Op& op, Frame& fr, const Mask& m);

    template <class UF, class G>
    static void dispatch_cmp(Exec& x, const Op& op, const std::string& p, UF U, G go) {
        if (p == "eq") go([](int64_t a, int64_t b) -> int64_t { return a == b; });
        else if (p == "ne") go([](int64_t a, int64_t b) -> int64_t { return a != b; });
        else if (p == "slt") go([](int64_t a, int64_t b) -> int64_t { return a < b; });
        else if (p == "sle") go([](int64_t a, int64_t b) -> int64_t { return a <= b; });
        else if (p == "sgt") go([](int64_t a, int64_t b) -> int64_t { return a > b; });
        else if (p == "sge") go([](int64_t a, int64_t b) -> int64_t { return a >= b; });
        else if (p == "ult") go([=](int64_t a, int64_t b) -> int64_t { return U(a) < U(b); });
        else if (p == "ule") go([=](int64_t a, int64_t b) -> int64_t { return U(a) <= U(b); });
        else if (p == "ugt") go([=](int64_t a, int64_t b) -> int64_t { return U(a) > U(b); });
        else if (p == "uge") go([=](int64_t a, int64_t b) -> int64_t { return U(a) >= U(b); });
        else x.fail_at(op, -1, "unknown comparison predicate '" + p + "'");
    }
    static void float_cmp(Exec& x, const Op& op, Frame& fr, const Mask&);

    // Float arithmetic in the declared type: f32 in float, f64 in double,
    // bf16/f16 computed in float and rounded (kernels/bf16.h rounding).
    template <class F>
    static void fbin(Exec& x, Reg& o, const Reg& a, const Reg& b, ScalarKind k, F f) {
        if (k == ScalarKind::F64) bin<double, double, double>(x, o, a, b, k, [=](double p, double q) { return f(p, q); });
        else if (k == ScalarKind::F32) bin<double, double, double>(x, o, a, b, k, [=](double p, double q) { return static_cast<double>(f(static_cast<float>(p), static_cast<float>(q))); });
        else bin<double, double, double>(x, o, a, b, k, [=](double p, double q) { return fround(k, f(static_cast<float>(p), static_cast<float>(q))); });
    }

    template <class F>
    static void fun(Exec& x, Reg& o, const Reg& a, ScalarKind k, F f) {
        if (k == ScalarKind::F64) un<double, double>(x, o, a, k, [=](double p) { return f(p); });
        else if (k == ScalarKind::F32) un<double, double>(x, o, a, k, [=](double p) { return static_cast<double>(f(static_cast<float>(p))); });
        else un<double, double>(x, o, a, k, [=](double p) { return fround(k, f(static_cast<float>(p))); });
    }

    // f32 arithmetic on float-stored lanes (Reg::fs) and uniform scalars,
    // in float: the same operations and roundings as the double-stored path.
    template <class F>
    static bool f32_lanes(Exec& x, const Op& op, Frame& fr, F f) {
        const Reg& A = raw(fr, op, 0);
        const Reg& B = raw(fr, op, 1);
        if (A.elem != ScalarKind::F32 || !(A.fs || B.fs)) return false;
        auto ok = [](const Reg& r) { return r.fs || (r.uni && r.vlen == 1 && r.f.size() == 1 && !r.lazy); };
        if (!ok(A) || !ok(B)) return false;
        const size_t n = static_cast<size_t>(x.L);
        Reg& o = out(fr, op);
        if (&o == &A || &o == &B) return false;
        o.kind = RK::Num;
        o.elem = ScalarKind::F32;
        o.vlen = 1;
        o.vshape.clear();
        o.uni = false;
        o.aff = -1;
        o.lazy = false;
        o.fs = true;
        o.i.clear();
        o.f.clear();
        o.g.resize(n);
        float* po = o.g.data();
        if (A.fs && B.fs) {
            const float *pa = A.g.data(), *pb = B.g.data();
            for_lanes(n, [=](size_t e) { po[e] = f(pa[e], pb[e]); });
        } else if (A.fs) {
            const float *pa = A.g.data(), bv = static_cast<float>(B.f[0]);
            for_lanes(n, [=](size_t e) { po[e] = f(pa[e], bv); });
        } else {
            const float av = static_cast<float>(A.f[0]), *pb = B.g.data();
            for_lanes(n, [=](size_t e) { po[e] = f(av, pb[e]); });
        }
        return true;
    }
    static void float_binary(Exec& x, const Op& op, Frame& fr, const Mask&);
    // Loom's float math (loom.md §3.2) is hrx::fmath's, the implementation
    // the ufuncs and native code share (Note [Loom math accuracy] in
    // kernels/fmath.cpp); fast-math flags are permissions, so the strict
    // result is always a valid one.
    static void float_unary(Exec& x, const Op& op, Frame& fr, const Mask&);
    // The math functions of HRX_FMATH_UNARY_LIST: "scalar.expf" and
    // "vector.expf" run math1<fmath_exp>, so executing one compares no names
    // (Note [Handlers]); float_unary keeps the rest (negf, absf, signf,
    // geluf's variants, rounding and classification).
    template <class F> static void math1(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Reg& A = in(fr, op, 0);
        fun(x, out(fr, op), A, A.elem, F{});
    }

    // geluf<logistic>'s `scale` attribute: x * logistic(scale * x), 1.702
    // (the usual sigmoid fit of GELU) when the attribute is absent.
    static double gelu_scale(const Op& op) {
        const Attr* a = op.attr("scale");
        if (!a) return 1.702;
        return a->kind == Attr::Kind::Float ? a->f : static_cast<double>(a->i);
    }
    // clampf<ordered|number|ieee> %value, %lower, %upper (fmath.h says how
    // each mode treats NaN); the result is one of the operands, so exact.
    static void clampf(Exec& x, const Op& op, Frame& fr, const Mask&);
    static void fmaf(Exec& x, const Op& op, Frame& fr, const Mask&);
    static void int_unary(Exec& x, const Op& op, Frame& fr, const Mask&);
    // The rest of the integer family (scalar., vector., index. forms): rotli,
    // rotri (amount taken modulo the width), ceildivsi/ceildivui/floordivsi
    // (0 for a zero divisor or INT_MIN / -1, as divsi; checked mode reports
    // them), signi, and fmai (a * b + c, wrapped).
    static void int_more(Exec& x, const Op& op, Frame& fr, const Mask& m);
    static void select(Exec& x, const Op& op, Frame& fr, const Mask&);
    // --- casts ---------------------------------------------------------------
    static void cast(Exec& x, const Op& op, Frame& fr, const Mask& m);

    // vector.bitcast between lane counts (vector<16xi8> to vector<4xi32>): the
    // lanes as one little-endian bit string, cut into the result's lanes.
    static void vbitcast_reshape(Exec& x, const Op& op, Frame& fr, const Reg& A) {
        const Type& rt = result_type(op, fr, 0);
        std::vector<int64_t> shape;
        const int64_t vlen = vlen_of(rt, fr, &shape);
        const int fb = bits_of(A.elem), tb = bits_of(rt.elem);
        if (A.vlen * fb != vlen * tb || fb > 64 || tb > 64)
            x.fail_at(op, -1, "vector.bitcast of " + std::to_string(A.vlen * fb) + " bits to " + rt.spelling + " (" + std::to_string(vlen * tb) + " bits)");
        Reg o;
        size_num(o, rt.elem, vlen, shape, A.uni, x.L);
        auto src_bits = [&](size_t q) { return isf(A.elem) ? float_bits(A.elem, A.f[q]) : uval(A.elem, A.i[q]); };
        for (int64_t l = 0; l < (A.uni ? 1 : x.L); ++l)
            for (int64_t e = 0; e < vlen; ++e) {
                uint64_t v = 0;
                for (int b = 0; b < tb; ++b) {
                    const int64_t j = e * tb + b;
                    v |= ((src_bits(static_cast<size_t>((A.uni ? 0 : l * A.vlen) + j / fb)) >> (j % fb)) & 1) << b;
                }
                const size_t d = static_cast<size_t>(l * vlen + e);
                if (isf(rt.elem)) o.f[d] = float_from_bits(rt.elem, v);
                else o.i[d] = wrap_int(rt.elem, static_cast<int64_t>(v));
            }
        out(fr, op) = std::move(o);
    }
    // --- assumptions ----------------------------------------------------------
    static void assume(Exec& x, const Op& op, Frame& fr, const Mask& m);
    // Evaluates op.preds for every active lane; `authored` (launch programs)
    // reports a Message error instead of a checked-mode Execution finding.
    static void check_preds(Exec& x, const Op& op, Frame& fr, const Mask& m, bool authored);

    // --- coordinates ------------------------------------------------------------
    static int axis(const Op& op) {
        if (op.params.empty()) return 0;
        return op.params[0] == "y" ? 1 : op.params[0] == "z" ? 2 : 0;
    }
    static void coord(Exec& x, const Op& op, Frame& fr, const Mask&);

    // --- buffers and views -------------------------------------------------------
    static void buffer_identity(Exec&, const Op& op, Frame& fr, const Mask&) {
        for (size_t k = 0; k < op.results.size() && k < op.operands.size(); ++k) out(fr, op, k) = raw(fr, op, k);
    }

    static uint64_t lane_address(const Exec& x, const BufObj& b, int64_t l) {
        return b.address + static_cast<uint64_t>(l) * b.stride;
        (void)x;
    }
    static void assume_alignment(Exec& x, const Op& op, Frame& fr, const Mask& m);
    static void alloca_(Exec& x, const Op& op, Frame& fr, const Mask&);
    static void buffer_view(Exec& x, const Op& op, Frame& fr, const Mask&);

    // The element strides of view `v` (Note [View layouts]).
    static std::vector<int64_t> view_strides(const Reg& v) { return v.strides.empty() ? dense_strides(v.dims) : v.strides; }
    static std::vector<int64_t> dense_strides(const std::vector<int64_t>& dims) {
        std::vector<int64_t> strides(dims.size(), 1);
        for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
        return strides;
    }

    // Gives view `r` (dims set) the layout of its type `t`; a dense one
    // keeps `strides` empty so the dense fast paths apply.
    static void apply_layout(Exec& x, const Op& op, Frame& fr, const Type& t, Reg& r) {
        std::vector<int64_t> s;
        if (t.layout_form == Type::Layout::Strided) {
            s = t.layout_strides;
        } else if (t.layout_form == Type::Layout::Value) {
            const Reg& l = val(fr, t.layout_value);
            if (l.kind != RK::Enc || l.role != "layout") x.fail_at(op, -1, "the view's layout " + t.layout + " is not an encoding.layout value");
            s = l.strides;
        } else if (t.layout_form == Type::Layout::Other) {
            x.fail_at(op, -1, "EMULATOR/007: the view layout " + t.layout + " is not honoured by the emulator");
        }
        if (s.empty()) return;
        if (s.size() != r.dims.size())
            x.fail_at(op, -1, "a layout of " + std::to_string(s.size()) + " strides for a rank-" + std::to_string(r.dims.size()) + " view");
        for (int64_t e : s)
            if (e < 0) x.fail_at(op, -1, "a negative layout stride " + std::to_string(e) + " is not executed by the emulator");
        r.strides = s;
        if (r.strides == dense_strides(r.dims)) r.strides.clear();
    }
    // encoding.layout.dense / .strided: a layout value; the assume forms pass it on.
    static void layout_value(Exec& x, const Op& op, Frame& fr, const Mask&);
    static void layout_assume(Exec& x, const Op& op, Frame& fr, const Mask&);

    // Byte offsets (relative to each lane's buffer start) of the element at
    // `idx` of view `v`, for the active lanes; -1 for inactive lanes.
    // `trail` gives, for vector footprints, the extents that must fit on the
    // trailing axes. Out-of-bounds accesses of active lanes fail.
    static void addresses(Exec& x, const Op& op, Frame& fr, const Mask& m, const Reg& v, const std::vector<IndexEntry>& idx,
                          const std::vector<int64_t>& trail, int es, std::vector<int64_t>& outv, bool& uniform,
                          int64_t* contig = nullptr) {
        if (contig) {
            *contig = -1;
            // Rank 1, an affine index of step 1, every lane active: one range check.
            if (v.dims.size() == 1 && v.strides.empty() && idx.size() == 1 && idx[0].is_value() && m.all && v.off.size() == 1 && trail.empty()) {
                const Reg& r = fr.regs[static_cast<size_t>(idx[0].value)];
                if (!r.uni && affine(r, x.L) && r.a1 == 1) {
                    const BufObj& B = x.bufs[static_cast<size_t>(v.buf)];
                    const int64_t lo = r.a0, hi = r.a0 + x.L - 1, off = v.off[0];
                    if (lo >= 0 && hi < v.dims[0] && off >= 0 && static_cast<uint64_t>(off + (hi + 1) * es) <= B.size && (off + lo * es) % es == 0) {
                        *contig = off + lo * es;
                        uniform = false;
                        outv.clear();
                        return;
                    }
                }
            }
        }
        const size_t rank = v.dims.size();
        if (idx.size() != rank) x.fail_at(op, -1, "index list has " + std::to_string(idx.size()) + " entries for a rank-" + std::to_string(rank) + " view");
        uniform = v.off.size() <= 1;
        std::vector<const Reg*> regs(rank, nullptr);
        for (size_t d = 0; d < rank; ++d)
            if (idx[d].is_value()) {
                regs[d] = &val(fr, idx[d].value);
                if (!regs[d]->uni) uniform = false;
            }
        const std::vector<int64_t> strides = view_strides(v);
        const BufObj& B = x.bufs[static_cast<size_t>(v.buf)];
        std::vector<int64_t> ext(rank, 1);
        for (size_t t = 0; t < trail.size() && t < rank; ++t) ext[rank - trail.size() + t] = trail[t];
        int64_t foot = 0;
        for (size_t d = 0; d < rank; ++d) foot += (ext[d] - 1) * strides[d];
        const int64_t lanes = uniform ? 1 : x.L;
        outv.assign(static_cast<size_t>(lanes), -1);
        // Rank 1, one varying index, a uniform offset, every lane active:
        // check the index range once, then one multiply-add per lane.
        if (rank == 1 && v.strides.empty() && !uniform && m.all && regs[0] && !regs[0]->uni && v.off.size() == 1) {
            const int64_t* ip = regs[0]->i.data();
            int64_t lo = INT64_MAX, hi = INT64_MIN;
            if (affine(*regs[0], x.L)) {
                lo = std::min(regs[0]->a0, regs[0]->a0 + regs[0]->a1 * (x.L - 1));
                hi = std::max(regs[0]->a0, regs[0]->a0 + regs[0]->a1 * (x.L - 1));
            } else {
                for (int64_t l = 0; l < x.L; ++l) {
                    lo = std::min(lo, ip[l]);
                    hi = std::max(hi, ip[l]);
                }
            }
            const int64_t off = v.off[0];
            if (lo >= 0 && hi + ext[0] <= v.dims[0] && off >= 0 && static_cast<uint64_t>(off + (hi + ext[0]) * es) <= B.size) {
                int64_t* o = outv.data();
                for (int64_t l = 0; l < x.L; ++l) o[l] = off + ip[l] * es;
                return;
            }
        }
        for (int64_t l = 0; l < lanes; ++l) {
            if (!m.on(l) && !uniform) continue;
            if (uniform && !m.any()) return;
            int64_t lin = 0;
            for (size_t d = 0; d < rank; ++d) {
                const int64_t i = regs[d] ? regs[d]->i[regs[d]->uni ? 0 : static_cast<size_t>(l)] : idx[d].constant;
                if (i < 0 || i + ext[d] > v.dims[d]) {
                    std::string what = ext[d] > 1 ? "footprint [" + std::to_string(i) + ", " + std::to_string(i + ext[d]) + ")" : "index " + std::to_string(i);
                    x.fail_at(op, uniform ? -1 : l, what + " out of bounds for axis " + std::to_string(d) + " of extent " + std::to_string(v.dims[d]));
                }
                lin += i * strides[d];
            }
            const int64_t off = v.off.size() == 1 ? v.off[0] : v.off[static_cast<size_t>(l)];
            const int64_t byte = off + lin * es;
            const int64_t end = off + (lin + foot) * es + es;
            if (byte < 0 || static_cast<uint64_t>(end) > B.size)
                x.fail_at(op, uniform ? -1 : l, "bytes [" + std::to_string(byte) + ", " + std::to_string(end) + ") outside " + B.name + " of " + std::to_string(B.size) + " bytes");
            outv[static_cast<size_t>(l)] = byte;
        }
    }

    // Whether accesses to `B` must go lane by lane through track().
    static bool shadowed(const BufObj& B) { return !B.writer.empty() || !B.init.empty(); }

    static void rd(ScalarKind k, const uint8_t* p, int64_t* io, double* fo, int ib) {
        switch (k) {
            case ScalarKind::I1: case ScalarKind::I8: *io = k == ScalarKind::I1 ? (*p & 1) : static_cast<int8_t>(*p); break;
            case ScalarKind::I16: { int16_t v; std::memcpy(&v, p, 2); *io = v; break; }
            case ScalarKind::I32: { int32_t v; std::memcpy(&v, p, 4); *io = v; break; }
            case ScalarKind::I64: case ScalarKind::Offset: { int64_t v; std::memcpy(&v, p, 8); *io = v; break; }
            case ScalarKind::Index: { if (ib == 32) { int32_t v; std::memcpy(&v, p, 4); *io = v; } else { int64_t v; std::memcpy(&v, p, 8); *io = v; } break; }
            case ScalarKind::F32: { float v; std::memcpy(&v, p, 4); *fo = v; break; }
            case ScalarKind::F64: { double v; std::memcpy(&v, p, 8); *fo = v; break; }
            case ScalarKind::BF16: case ScalarKind::F16: { uint16_t v; std::memcpy(&v, p, 2); *fo = float_from_bits(k, v); break; }
            default: break;
        }
    }

    static void wr(ScalarKind k, uint8_t* p, int64_t iv, double fv, int ib) {
        switch (k) {
            case ScalarKind::I1: case ScalarKind::I8: *p = static_cast<uint8_t>(iv); break;
            case ScalarKind::I16: { int16_t v = static_cast<int16_t>(iv); std::memcpy(p, &v, 2); break; }
            case ScalarKind::I32: { int32_t v = static_cast<int32_t>(iv); std::memcpy(p, &v, 4); break; }
            case ScalarKind::I64: case ScalarKind::Offset: std::memcpy(p, &iv, 8); break;
            case ScalarKind::Index: { if (ib == 32) { int32_t v = static_cast<int32_t>(iv); std::memcpy(p, &v, 4); } else std::memcpy(p, &iv, 8); break; }
            case ScalarKind::F32: { float v = static_cast<float>(fv); std::memcpy(p, &v, 4); break; }
            case ScalarKind::F64: std::memcpy(p, &fv, 8); break;
            case ScalarKind::BF16: case ScalarKind::F16: { uint16_t v = static_cast<uint16_t>(float_bits(k, fv)); std::memcpy(p, &v, 2); break; }
            default: break;
        }
    }

    // Checked mode (Note [Uninitialised device memory]): a write marks lane
    // `lane`'s bytes [byte, byte + n) written; a read of any byte not yet
    // written fails, naming the op, the lane and the bytes.
    static void mark_init(Exec& x, const Op& op, BufObj& B, int64_t lane, int64_t byte, int64_t n, bool write) {
        if (B.init.empty()) return;
        const size_t at = static_cast<size_t>(lane * static_cast<int64_t>(B.stride) + byte);
        uint8_t* f = B.init.data() + at;
        if (write) {
            std::memset(f, 1, static_cast<size_t>(n));
            return;
        }
        for (int64_t q = 0; q < n; ++q)
            if (!f[q])
                x.fail_at(op, lane, "reads " + std::to_string(n) + " bytes at offset " + std::to_string(byte) + " of " + B.name +
                                                        ", and byte " + std::to_string(byte + q) + " was never written (uninitialised device memory)");
    }

    // Checked-mode race detection on workgroup memory within a barrier epoch
    // (loom.md §4.4): a lane touching bytes another lane wrote, or writing
    // bytes another lane read, in the same epoch.
    static void track(Exec& x, const Op& op, BufObj& B, int64_t lane, int64_t byte, int64_t n, bool write) {
        mark_init(x, op, B, lane, byte, n, write);
        if (B.kind != BufKind::Workgroup || B.writer.empty()) return;
        for (int64_t q = byte; q < byte + n; ++q) {
            int32_t& w = B.writer[static_cast<size_t>(q)];
            int32_t& r = B.reader[static_cast<size_t>(q)];
            const int32_t l = static_cast<int32_t>(lane);
            const bool other_w = w != -1 && w != l;
            const bool other_r = write && r != -1 && r != l;
            if (other_w || other_r) {
                const int32_t peer = other_w ? w : r;
                // r == -2: more than one lane read the bytes (the shadow keeps no list of them).
                const std::string who = peer == -2 ? "several work-items" : "work-item " + std::to_string(peer);
                x.fail_at(op, lane, "workgroup-memory race: " + std::string(write ? "writes " : "reads ") + std::to_string(n) + " bytes at offset " +
                                        std::to_string(byte) + " of " + B.name + " that " + who + " " +
                                        (other_w ? "wrote" : "read") + " in the same barrier epoch");
            }
            if (write) w = l;
            else r = (r == -1 || r == l) ? l : -2;
        }
    }

    // Calls f(T{}, rd, wr) with the element's memory type T, rd: T -> the
    // register's storage value (int64 or double), wr: storage -> T; the same
    // conversions as rd()/wr() above, chosen once per op so that lane loops
    // over contiguous or gathered addresses vectorise.
    template <class F>
    static bool with_elem(ScalarKind k, int ib, F f) {
        auto same = [](auto v) { return v; };
        switch (k) {
            case ScalarKind::I1: return f(uint8_t{}, [](uint8_t v) -> int64_t { return v & 1; }, [](int64_t v) { return static_cast<uint8_t>(v); });
            case ScalarKind::I8: return f(int8_t{}, [](int8_t v) -> int64_t { return v; }, [](int64_t v) { return static_cast<int8_t>(v); });
            case ScalarKind::I16: return f(int16_t{}, [](int16_t v) -> int64_t { return v; }, [](int64_t v) { return static_cast<int16_t>(v); });
            case ScalarKind::I32: return f(int32_t{}, [](int32_t v) -> int64_t { return v; }, [](int64_t v) { return static_cast<int32_t>(v); });
            case ScalarKind::I64: case ScalarKind::Offset: return f(int64_t{}, same, same);
            case ScalarKind::Index:
                if (ib == 32) return f(int32_t{}, [](int32_t v) -> int64_t { return v; }, [](int64_t v) { return static_cast<int32_t>(v); });
                return f(int64_t{}, same, same);
            case ScalarKind::F32: return f(float{}, [](float v) -> double { return v; }, [](double v) { return static_cast<float>(v); });
            case ScalarKind::F64: return f(double{}, same, same);
            case ScalarKind::BF16:
                return f(uint16_t{}, [](uint16_t v) -> double { return std::bit_cast<float>(static_cast<uint32_t>(v) << 16); },
                         [](double v) { return static_cast<uint16_t>(std::bit_cast<uint32_t>(static_cast<float>(v)) >> 16); });
            case ScalarKind::F16:
                return f(uint16_t{}, [](uint16_t v) -> double { return kernels::ew::half_to_float(v); },
                         [](double v) { return static_cast<uint16_t>(kernels::ew::float_to_half(static_cast<float>(v))); });
            default: return false;
        }
    }
    template <class S>
    static S* storage(Reg& r) {
        if constexpr (std::is_same_v<S, double>) return r.f.data();
        else return r.i.data();
    }

    // Every lane active, plain memory: lane l reads base + (ap ? ap[l] : l * es).
    static bool load_lanes(Exec& x, ScalarKind k, int ib, const uint8_t* base, const int64_t* ap, Reg& o) {
        return with_elem(k, ib, [&](auto tag, auto rd, auto) {
            using T = decltype(tag);
            auto* dst = storage<decltype(rd(tag))>(o);
            const size_t n = static_cast<size_t>(x.L);
            if (ap) for_lanes(n, [=](size_t l) { T t; std::memcpy(&t, base + ap[l], sizeof(T)); dst[l] = rd(t); });
            else for_lanes(n, [=](size_t l) { T t; std::memcpy(&t, base + l * sizeof(T), sizeof(T)); dst[l] = rd(t); });
            return true;
        });
    }
    static bool store_lanes(Exec& x, ScalarKind k, int ib, uint8_t* base, const int64_t* ap, const Reg& val) {
        return with_elem(k, ib, [&](auto tag, auto rd, auto wr) {
            using T = decltype(tag);
            const auto* src = storage<decltype(rd(tag))>(const_cast<Reg&>(val));
            const size_t n = static_cast<size_t>(x.L);
            if (ap) for_lanes(n, [=](size_t l) { const T t = wr(src[l]); std::memcpy(base + ap[l], &t, sizeof(T)); });
            else for_lanes(n, [=](size_t l) { const T t = wr(src[l]); std::memcpy(base + l * sizeof(T), &t, sizeof(T)); });
            return true;
        });
    }
    static void view_load(Exec& x, const Op& op, Frame& fr, const Mask& m);
    static void view_store(Exec& x, const Op& op, Frame& fr, const Mask& m);
    // vector.load / vector.store / vector.fragment.store: the vector's axes on
    // the view's trailing axes, the whole footprint in bounds.
    static void vec_access(Exec& x, const Op& op, Frame& fr, const Mask& m, const Reg& v, Reg* load, const Reg* store, const std::vector<int64_t>& vshape);
    static void vector_load(Exec& x, const Op& op, Frame& fr, const Mask& m);
    static void vector_store(Exec& x, const Op& op, Frame& fr, const Mask& m);
    // --- atomics (lanes in lane order) --------------------------------------------
    static void atomic(Exec& x, const Op& op, Frame& fr, const Mask& m);

    static void nop(Exec&, const Op&, Frame&, const Mask&) {}

    static void barrier(Exec& x, const Op& op, Frame&, const Mask& m) {
        if (!m.all) {
            for (int64_t l = 0; l < x.L; ++l)
                if (!m.on(l)) x.fail_at(op, l, "barrier under divergent control flow: this work-item does not reach it");
        }
        for (BufObj& b : x.bufs)
            if (b.kind == BufKind::Workgroup && !b.writer.empty()) {
                std::fill(b.writer.begin(), b.writer.end(), -1);
                std::fill(b.reader.begin(), b.reader.end(), -1);
            }
    }
    // --- vectors -------------------------------------------------------------------
    static void splat(Exec& x, const Op& op, Frame& fr, const Mask&);
    static void iota(Exec& x, const Op& op, Frame& fr, const Mask&);
    static void mask_range(Exec& x, const Op& op, Frame& fr, const Mask&);

    static int64_t leading_index(Exec& x, const Op& op, Frame& fr, const Reg& v, int64_t l, int64_t& inner) {
        // vector.extract / insert: leading indices select a sub-vector.
        int64_t lin = 0, rest = v.vlen;
        for (size_t d = 0; d < op.indices.size(); ++d) {
            const int64_t ext = d < v.vshape.size() ? v.vshape[d] : 1;
            rest /= ext;
            const IndexEntry& ie = op.indices[d];
            const int64_t i = ie.is_value() ? [&] { const Reg& r = val(fr, ie.value); return r.i[r.uni ? 0 : static_cast<size_t>(l)]; }() : ie.constant;
            if (i < 0 || i >= ext) x.fail_at(op, l, "vector index " + std::to_string(i) + " out of bounds for extent " + std::to_string(ext));
            lin = lin * ext + i;
        }
        inner = rest;
        return lin * rest;
    }

    static bool indices_uniform(Frame& fr, const Op& op) {
        for (const IndexEntry& ie : op.indices)
            if (ie.is_value() && !val(fr, ie.value).uni) return false;
        return true;
    }
    static void extract(Exec& x, const Op& op, Frame& fr, const Mask& m);
    static void insert(Exec& x, const Op& op, Frame& fr, const Mask& m);

    // One reduction step of `kind` in type k.
    // Loom's combining kinds (addi, addf, andi, ...) and the short spellings.
    static std::string norm_kind(const std::string& kind) {
        if (kind == "addi" || kind == "addf") return "add";
        if (kind == "muli" || kind == "mulf") return "mul";
        if (kind == "andi") return "and";
        if (kind == "ori") return "or";
        if (kind == "xori") return "xor";
        return kind;
    }

    // The value that leaves any other unchanged under `kind` (an exclusive
    // scan's first result): -0.0 for float add, all ones for and, the
    // type's extreme for min/max.
    static void red_identity(const std::string& kind0, ScalarKind k, int64_t& i, double& f) {
        const std::string kind = norm_kind(kind0);
        const int bits = bits_of(k);
        const int64_t smax = bits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
        i = 0;
        f = 0;
        if (kind == "add") f = -0.0;
        else if (kind == "mul") i = 1, f = 1;
        else if (kind == "and" || kind == "minui") i = wrap_int(k, -1);
        else if (kind == "minsi") i = smax;
        else if (kind == "maxsi") i = -smax - 1;
        else if (kind == "minnumf" || kind == "minimumf") f = INFINITY;
        else if (kind == "maxnumf" || kind == "maximumf") f = -INFINITY;
    }

    static void red_step(const std::string& kind0, ScalarKind k, int64_t& ai, double& af, int64_t bi, double bf, bool& ok) {
        const std::string kind = norm_kind(kind0);
        ok = true;
        auto U = [k](int64_t v) { return uval(k, v); };
        if (kind == "add") isf(k) ? void(af = fround(k, af + bf)) : void(ai = wrap_int(k, static_cast<int64_t>(static_cast<uint64_t>(ai) + static_cast<uint64_t>(bi))));
        else if (kind == "mul") isf(k) ? void(af = fround(k, af * bf)) : void(ai = wrap_int(k, static_cast<int64_t>(static_cast<uint64_t>(ai) * static_cast<uint64_t>(bi))));
        else if (kind == "and") ai &= bi;
        else if (kind == "or") ai |= bi;
        else if (kind == "xor") ai ^= bi;
        else if (kind == "minsi") ai = std::min(ai, bi);
        else if (kind == "maxsi") ai = std::max(ai, bi);
        else if (kind == "minui") ai = U(ai) <= U(bi) ? ai : bi;
        else if (kind == "maxui") ai = U(ai) >= U(bi) ? ai : bi;
        else if (kind == "minnumf") af = fmath::minnum(af, bf);
        else if (kind == "maxnumf") af = fmath::maxnum(af, bf);
        else if (kind == "minimumf") af = fmath::minimum(af, bf);
        else if (kind == "maximumf") af = fmath::maximum(af, bf);
        else ok = false;
    }

    static std::string red_kind(const Op& op) {
        if (op.params.empty()) return "";
        const std::string& p = op.params[0];
        return p.substr(0, p.find(','));
    }
    static void vreduce(Exec& x, const Op& op, Frame& fr, const Mask&);

    // --- subgroups (lockstep batches only) ----------------------------------------
    static int64_t sg_size(const Exec& x) { return std::max(1, x.sh.spec->facts.subgroup_size); }
    static void sg_reduce(Exec& x, const Op& op, Frame& fr, const Mask& m);
    static void sg_broadcast(Exec& x, const Op& op, Frame& fr, const Mask& m);
    static void sg_shuffle(Exec& x, const Op& op, Frame& fr, const Mask& m);
    static void sg_vote(Exec& x, const Op& op, Frame& fr, const Mask& m);
    // --- bfp16 encodings, fragments, mma --------------------------------------------
    static void encoding_define(Exec& x, const Op& op, Frame& fr, const Mask&);
    // A payload of bfp16ebs8 blocks: the values stay as floats (opaque to the
    // program); quantisation happens where the blocking is known.
    static void encode(Exec& x, const Op& op, Frame& fr, const Mask& m);

    // Quantise `n` problems of rows x cols (row-major floats) in 8-blocks
    // along rows (along_rows) or along columns, in place.
    static void quantise(double* vals, int64_t lanes, int64_t stride, int64_t rows, int64_t cols, bool along_rows, bool even) {
        const int64_t blocks = rows * cols / 8;
        std::vector<float> f(static_cast<size_t>(rows * cols)), q(f.size());
        std::vector<uint8_t> enc(static_cast<size_t>(blocks) * kernels::kBfp16BlockBytes);
        const auto rounding = even ? kernels::BfpRounding::even : kernels::BfpRounding::floor;
        for (int64_t l = 0; l < lanes; ++l) {
            double* p = vals + l * stride;
            size_t t = 0;
            if (along_rows) {
                for (int64_t e = 0; e < rows * cols; ++e) f[t++] = static_cast<float>(p[e]);
            } else {
                for (int64_t c = 0; c < cols; ++c)
                    for (int64_t r = 0; r < rows; ++r) f[t++] = static_cast<float>(p[r * cols + c]);
            }
            kernels::bfp16_encode(f.data(), enc.data(), static_cast<size_t>(blocks), rounding);
            kernels::bfp16_decode(enc.data(), q.data(), static_cast<size_t>(blocks));
            t = 0;
            if (along_rows) {
                for (int64_t e = 0; e < rows * cols; ++e) p[e] = q[t++];
            } else {
                for (int64_t c = 0; c < cols; ++c)
                    for (int64_t r = 0; r < rows; ++r) p[r * cols + c] = q[t++];
            }
        }
    }

    // A data check, not a device fault (Note [Data checks are not device
    // faults] in errors.h): bfp16ebs8 cannot encode NaN or Inf. The element
    // is named as the built-in gemm names it, (record, row, column) of the
    // operand's own matrix, with its role.
    static void refuse_nonfinite(const Exec& x, const Op& op, const Mask& m, const Reg& p, const std::string& role, int64_t cols) {
        bool all_finite = true;
        for (double f : p.f) all_finite &= std::fabs(f) <= std::numeric_limits<double>::max();
        if (all_finite) return;
        for (int64_t l = 0; l < (p.uni ? 1 : x.L); ++l) {
            if (!p.uni && !m.on(l)) continue;
            for (int64_t e = 0; e < p.vlen; ++e) {
                const double f = p.f[static_cast<size_t>(l * p.vlen + e)];
                if (std::isfinite(f)) continue;
                const std::string who = x.sh.gpu ? x.where(l) : "record " + std::to_string(x.first_ + l);
                kernels::bfp16_unencodable(loc_str(op) + ": " + op.name + " (" + who + ")",
                                           (role.empty() ? "" : role + " ") + "element (" + std::to_string(x.sh.gpu ? l : x.first_ + l) + ", " +
                                               std::to_string(e / cols) + ", " + std::to_string(e % cols) + ")",
                                           static_cast<float>(f));
            }
        }
    }
    static void decode(Exec& x, const Op& op, Frame& fr, const Mask& m);

    static int64_t entry(Frame& fr, const IndexEntry& e) { return e.is_value() ? val(fr, e.value).i.at(0) : e.constant; }
    static void fragment(Exec& x, const Op& op, Frame& fr, const Mask& m);
    static void mma(Exec& x, const Op& op, Frame& fr, const Mask&);
    static void fragment_store(Exec& x, const Op& op, Frame& fr, const Mask& m);

    // --- control flow -----------------------------------------------------------------
    static Mask narrow(const Exec& x, const Mask& m, const Reg& c, bool want) {
        Mask r;
        r.all = false;
        r.m.resize(static_cast<size_t>(x.L));
        for (int64_t l = 0; l < x.L; ++l) r.m[static_cast<size_t>(l)] = m.on(l) && ((c.i[static_cast<size_t>(l)] != 0) == want);
        return r;
    }

    static void merge(Exec& x, Reg& dst, const Reg& t, const Reg& e, const Mask& tm) {
        if (t.kind != RK::Num && t.kind != RK::Payload && t.kind != RK::Frag) {
            dst = t;
            return;
        }
        Reg tt, te;
        const Reg& T = varying(t, tt, x.L);
        const Reg& E = varying(e, te, x.L);
        dst = T;
        dst.aff = -1;  // the merged lanes are a new sequence
        for (int64_t l = 0; l < x.L; ++l) {
            if (tm.on(l)) continue;
            for (int64_t j = 0; j < T.vlen; ++j) {
                const size_t q = static_cast<size_t>(l * T.vlen + j);
                if (!dst.f.empty()) dst.f[q] = E.f[q];
                else dst.i[q] = E.i[q];
            }
        }
    }
    static void scf_if(Exec& x, const Op& op, Frame& fr, const Mask& m);
    // scf.switch: each lane runs the case whose key equals its selector, or
    // the default; results merge lane by lane.
    static void scf_switch(Exec& x, const Op& op, Frame& fr, const Mask& m);

    // Carried values of loop lanes still running replace the old ones.
    static void carry(Exec& x, std::vector<Reg>& cur, std::vector<Reg>& next, const Mask& run, bool all_same) {
        for (size_t k = 0; k < cur.size(); ++k) {
            if (all_same || run.all) cur[k] = std::move(next[k]);
            else {
                Reg old = std::move(cur[k]);
                merge(x, cur[k], next[k], old, run);
            }
        }
    }
    static void scf_for(Exec& x, const Op& op, Frame& fr, const Mask& m);
    static void scf_while(Exec& x, const Op& op, Frame& fr, const Mask& m);
    static void call_(Exec& x, const Op& op, Frame& fr, const Mask& m);
    static void scf_select(Exec& x, const Op& op, Frame& fr, const Mask& m);
    static void assert_(Exec& x, const Op& op, Frame& fr, const Mask& m);
    // --- scans, exits, masked vectors, subviews and the smaller ops ---------------
    // kernel.subgroup.scan / kernel.workgroup.scan<kind> {mode, direction}:
    // active lanes combined in lane order (reverse: from the highest), one
    // step at a time in the value's type; exclusive results start from the
    // kind's identity. Inactive lanes keep their own value.
    static void scan(Exec& x, const Op& op, Frame& fr, const Mask& m);
    // kernel.exit %c: the active lanes where %c holds leave the kernel.
    static void exit_(Exec& x, const Op& op, Frame& fr, const Mask& m);
    // vector.gather %view[origin][%offsets] (.mask: , %mask, %passthrough) and
    // vector.scatter %value, %view[origin][%offsets] (.mask: , %mask): element
    // e of each lane touches the origin with its last coordinate moved by
    // offsets[e]. The origin must lie in the view; each moved coordinate must
    // stay inside the last axis (an error names the lane otherwise). Views are
    // dense here, so the move is offsets[e] elements from the origin's byte.
    static void gather_scatter(Exec& x, const Op& op, Frame& fr, const Mask& m);
    // vector.load.mask %view[o], %mask, %passthru / vector.store.mask %x,
    // %view[o], %mask: the vector's axes on the view's trailing axes; only
    // the elements whose mask bit is set touch memory (and must be in
    // bounds), the others take the passthrough or leave memory alone.
    static void vector_masked(Exec& x, const Op& op, Frame& fr, const Mask& m);
    // vector.broadcast %s: the source's axes aligned with the result's
    // trailing axes, extent-1 axes (and missing leading ones) repeated.
    static void vbroadcast(Exec& x, const Op& op, Frame& fr, const Mask&);
    // vector.from_elements %a, %b, ...: lane e of the vector is operand e.
    static void from_elements(Exec& x, const Op& op, Frame& fr, const Mask&);
    // vector.empty, vector.poison, scalar.poison: contents nobody may read
    // (the emulator gives zeros).
    static void undefined(Exec& x, const Op& op, Frame& fr, const Mask&);
    // vector.dotf %a, %b[, %init]: a chain of fmaf in lane order from %init
    // (+0 without one), each step rounded once to the result type.
    static void dotf(Exec& x, const Op& op, Frame& fr, const Mask&);
    // scalar.bitfield.extractu/extracts %x {offset, width}: bits
    // [offset, offset + width) of %x, zero- or sign-extended.
    static void bitfield(Exec& x, const Op& op, Frame& fr, const Mask&);

    // --- vector register layout, bit packing, grouped dots (Note [Vector layout ops]) ---------
    //
    // Note [Vector layout ops]
    //   vector.slice/concat/transpose/shuffle/interleave/deinterleave move
    //   elements without computing: each result element is one element of
    //   one source, found from its row-major coordinates (gather_elems).
    //   The bit ops read integer lanes as their unsigned N-bit payloads
    //   (uval) and write results wrapped to the result type. bitpack and
    //   bitunpacku/s see the lanes as one little-endian bitstream: bit j of
    //   the stream is bit j % w of lane j / w. The grouped dots (dot2f,
    //   dot4i, dot8i4) sum G adjacent products of the last axis into one
    //   accumulator lane; dot2f rounds after each fma as its defs spell it
    //   (two scalar.fmaf in f32), the integer dots wrap to i32.
    static std::vector<int64_t> shape_of(const Reg& r) { return r.vshape.empty() ? std::vector<int64_t>{r.vlen} : r.vshape; }

    static int64_t ravel(const std::vector<int64_t>& c, const std::vector<int64_t>& shape) {
        int64_t q = 0;
        for (size_t d = 0; d < shape.size(); ++d) q = q * shape[d] + c[d];
        return q;
    }

    static void unravel(int64_t e, const std::vector<int64_t>& shape, std::vector<int64_t>& c) {
        c.assign(shape.size(), 0);
        for (size_t d = shape.size(); d-- > 0;) {
            c[d] = e % shape[d];
            e /= shape[d];
        }
    }

    // `<[a, b, ...]>` or `<a>` template parameter k as integers.
    static std::vector<int64_t> int_param(Exec& x, const Op& op, size_t k) {
        if (k >= op.params.size()) x.fail_at(op, -1, op.name + " needs a template parameter <...>");
        std::vector<int64_t> v;
        std::string s = op.params[k];
        for (char& ch : s)
            if (ch == '[' || ch == ']' || ch == ',') ch = ' ';
        size_t p = 0;
        while (p < s.size()) {
            while (p < s.size() && s[p] == ' ') ++p;
            if (p >= s.size()) break;
            size_t used = 0;
            try {
                v.push_back(std::stoll(s.substr(p), &used));
            } catch (const std::exception&) {
                x.fail_at(op, -1, op.name + ": template parameter '" + op.params[k] + "' is not an integer list");
            }
            p += used;
        }
        return v;
    }

    // A result of `vlen` elements whose element e in lane l is element
    // map(l, e).second of source map(l, e).first.
    template <class M>
    static Reg gather_elems(Exec& x, const std::vector<const Reg*>& ins, bool uni, int64_t vlen, const std::vector<int64_t>& shape, M map) {
        Reg o;
        const ScalarKind k = ins[0]->elem;
        size_num(o, k, vlen, shape, uni, x.L);
        const bool fl = isf(k);
        for (int64_t l = 0; l < (uni ? 1 : x.L); ++l)
            for (int64_t e = 0; e < vlen; ++e) {
                const auto [s, q] = map(l, e);
                const Reg& r = *ins[static_cast<size_t>(s)];
                const size_t p = static_cast<size_t>((r.uni ? 0 : l * r.vlen) + q), d = static_cast<size_t>(l * vlen + e);
                if (fl) o.f[d] = r.f[p];
                else o.i[d] = r.i[p];
            }
        return o;
    }

    static int64_t axis_param(Exec& x, const Op& op, size_t rank) {
        const std::vector<int64_t> a = int_param(x, op, 0);
        if (a.size() != 1 || a[0] < 0 || a[0] >= static_cast<int64_t>(rank))
            x.fail_at(op, -1, op.name + ": axis <" + op.params[0] + "> is not an axis of a rank-" + std::to_string(rank) + " vector");
        return a[0];
    }
    // vector.slice %v[offsets]: the result-shaped block at the offsets.
    static void vslice(Exec& x, const Op& op, Frame& fr, const Mask& m);
    // vector.concat<axis> %a, %b, ...: the sources one after another along the axis.
    static void vconcat(Exec& x, const Op& op, Frame& fr, const Mask&);
    // vector.transpose<[p...]>: result axis i is source axis p[i].
    static void vtranspose(Exec& x, const Op& op, Frame& fr, const Mask&);
    // vector.shuffle<[s...]> %v: result lane i is source lane s[i].
    static void vshuffle(Exec& x, const Op& op, Frame& fr, const Mask&);
    // vector.interleave<axis> %even, %odd: even coordinates along the axis from %even.
    static void vinterleave(Exec& x, const Op& op, Frame& fr, const Mask&);
    // %even, %odd = vector.deinterleave<axis> %v.
    static void vdeinterleave(Exec& x, const Op& op, Frame& fr, const Mask&);
    // vector.reduce.axes<kind> %v, %init axes [a...]: the listed axes folded
    // in row-major order onto %init, the other axes kept in order.
    static void vreduce_axes(Exec& x, const Op& op, Frame& fr, const Mask&);

    static int64_t bit_attr(Exec& x, const Op& op, const char* name) {
        const Attr* a = op.attr(name);
        if (!a || a->kind != Attr::Kind::Int) x.fail_at(op, -1, op.name + " needs {" + name + " = N}");
        return a->i;
    }
    // vector.bitfield.extractu/extracts %v {offset, width}: each lane's field,
    // zero- or sign-extended to the result's element type.
    static void vbitfield(Exec& x, const Op& op, Frame& fr, const Mask&);
    // vector.bitfield.insert %field into %base {offset, width}.
    static void vbitfield_insert(Exec& x, const Op& op, Frame& fr, const Mask&);
    // vector.bitpack<w> / bitunpacku<w> / bitunpacks<w>: lanes to and from a
    // little-endian bitstream (Note [Vector layout ops]).
    static void vbitpack(Exec& x, const Op& op, Frame& fr, const Mask&);

    // Signedness of a dot kind's operand: "s8u8" → lhs signed, rhs unsigned.
    static bool dot_signed(const std::string& kind, int which) {
        const size_t half = kind.size() / 2;
        return (which == 0 ? kind.substr(0, half) : kind.substr(half))[0] == 's';
    }
    // vector.dot4i<kind> / dot8i4<kind> / dot2f %lhs, %rhs, %acc (Note [Vector layout ops]).
    static void vdot_grouped(Exec& x, const Op& op, Frame& fr, const Mask&);
    // vector.table.lookup %table[%indices]: lane e is table[indices[e]].
    static void table_lookup(Exec& x, const Op& op, Frame& fr, const Mask& m);
    // vector.table.quantize %x, %thresholds {nan, tie}: each lane's bin, the
    // count of thresholds it passes (equal passes with tie = upper).
    static void table_quantize(Exec& x, const Op& op, Frame& fr, const Mask&);
    // buffer.length %b: the buffer's bytes (each lane's own, for per-lane memory).
    static void buffer_length(Exec& x, const Op& op, Frame& fr, const Mask&);
    // view.subview %v[offs]: the origin moves to offs (full-rank); the result
    // type gives the extents, on the parent's trailing axes. Views here are
    // row-major over their extents, so the emulator runs the subviews whose
    // rows stay rows: every result axis but the first spans its parent axis.
    static void subview(Exec& x, const Op& op, Frame& fr, const Mask& m);
};

}  // namespace hrx::loom::interp
