// The vectorised Loom interpreter (loom/interp.h). Each handler runs one op
// for every lane of the batch with tight loops over the lanes; control flow
// narrows an active-lane mask instead of branching per lane (loom.md §4.1).
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

bool Mask::any() const {
    if (all) return true;
    for (uint8_t b : m)
        if (b) return true;
    return false;
}

int elem_bytes(ScalarKind k, int index_bits) {
    switch (k) {
        case ScalarKind::I1: case ScalarKind::I8: case ScalarKind::F8E4M3: case ScalarKind::F8E5M2: return 1;
        case ScalarKind::I16: case ScalarKind::F16: case ScalarKind::BF16: return 2;
        case ScalarKind::I32: case ScalarKind::F32: return 4;
        case ScalarKind::I64: case ScalarKind::F64: case ScalarKind::Offset: return 8;
        case ScalarKind::Index: return index_bits / 8;
        default: return 0;
    }
}

namespace {

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

std::string loc_str(const Op& op) { return std::to_string(op.loc.line) + ":" + std::to_string(op.loc.column); }

bool isf(ScalarKind k) { return scalar_is_float(k); }

size_t count(const Reg& r, int64_t L) { return static_cast<size_t>((r.uni ? 1 : L) * r.vlen); }

void size_num(Reg& r, ScalarKind k, int64_t vlen, const std::vector<int64_t>& vshape, bool uni, int64_t L) {
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

// Writes out a lazy index (Reg::lazy) lane by lane.
void materialize(const Reg& r0) {
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
        r.i[static_cast<size_t>(l)] = r.c0 + r.c1 * q + r.c2 * m;
        if (++m == r.lw) {
            m = 0;
            ++q;
        }
    }
    if (r.c1 == r.c2 * r.lw) {
        r.aff = 1;
        r.a0 = r.c0;
        r.a1 = r.c2;
    } else {
        r.aff = -1;
    }
}

Reg lazy_index(int64_t c0, int64_t c1, int64_t c2, int64_t lw, int64_t L) {
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
const Reg& varying(const Reg& r, Reg& tmp, int64_t L) {
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

// Whether a varying scalar integer is affine in the lane (cached on r).
bool affine(const Reg& r0, int64_t L) {
    Reg& r = const_cast<Reg&>(r0);
    if (r.lazy) {
        if (r.c1 != r.c2 * r.lw) return false;
        r.aff = 1;
        r.a0 = r.c0;
        r.a1 = r.c2;
        return true;
    }
    if (r.aff >= 0) return r.aff == 1;
    r.aff = 0;
    if (r.uni || r.vlen != 1 || r.i.size() != static_cast<size_t>(L) || L < 2) return false;
    const int64_t* p = r.i.data();
    const int64_t a0 = p[0], a1 = p[1] - p[0];
    bool ok = true;
    for (int64_t l = 0; l < L; ++l) ok &= p[l] == a0 + a1 * l;
    if (!ok) return false;
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
const int64_t* data<int64_t>(const Reg& r) { return r.i.data(); }
template <>
const double* data<double>(const Reg& r) { return r.f.data(); }
template <class T>
T* mdata(Reg& r);
template <>
int64_t* mdata<int64_t>(Reg& r) { return r.i.data(); }
template <>
double* mdata<double>(Reg& r) { return r.f.data(); }

int64_t vlen_of(const Type& t, const Frame& fr, std::vector<int64_t>* shape) {
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

const Type& result_type(const Op& op, const Frame& fr, size_t k) {
    if (k < op.result_types.size()) return op.result_types[k];
    return (*fr.fn->values)[static_cast<size_t>(op.results[k])].type;
}

}  // namespace

// ---------------------------------------------------------------------------

Exec::Exec(const Shared& s, int64_t lanes) : sh(s), L(lanes) {}

void Exec::set_gpu_batch(int64_t first_global, bool one_workgroup) {
    first_ = first_global;
    uniform_wg_ = one_workgroup;
    coords_ready_ = false;
    exit_epoch_ = 0;
    exited_.clear();
}

// Linear coordinates per lane, written out only when an op needs them (the
// lazy coordinates of loom/interp.h cover the common 1-D cases).
void Exec::ensure_coords() const {
    if (coords_ready_) return;
    auto& self = const_cast<Exec&>(*this);
    self.coords_ready_ = true;
    const int64_t first_global = first_;
    auto& wg_lin_ = self.wg_lin_;
    auto& item_lin_ = self.item_lin_;
    const auto& ws = sh.launch.workgroup_size;
    const int64_t W = ws[0] * ws[1] * ws[2];
    wg_lin_.resize(static_cast<size_t>(L));
    item_lin_.resize(static_cast<size_t>(L));
    int64_t wg = first_global / W, item = first_global % W;
    for (int64_t l = 0; l < L; ++l) {
        wg_lin_[static_cast<size_t>(l)] = wg;
        item_lin_[static_cast<size_t>(l)] = item;
        if (++item == W) {
            item = 0;
            ++wg;
        }
    }
}

std::string Exec::where(int64_t lane) const {
    if (!sh.gpu) return "record " + std::to_string(first_ + lane);
    ensure_coords();
    const auto& ws = sh.launch.workgroup_size;
    const auto& gs = sh.launch.workgroups;
    const int64_t item = item_lin_.empty() ? 0 : item_lin_[static_cast<size_t>(lane)];
    const int64_t wg = wg_lin_.empty() ? 0 : wg_lin_[static_cast<size_t>(lane)];
    auto tri = [](int64_t v, const std::array<int64_t, 3>& d) {
        return "(" + std::to_string(v % d[0]) + ", " + std::to_string(v / d[0] % d[1]) + ", " +
               std::to_string(v / (d[0] * d[1])) + ")";
    };
    return "workgroup " + tri(wg, gs) + ", work-item " + tri(item, ws);
}

void Exec::fail_at(const Op& op, int64_t lane, const std::string& msg) const {
    std::string s = loc_str(op) + ": " + op.name + ": " + msg;
    if (lane >= 0) s += " (" + where(lane) + ")";
    fail(ErrorKind::Execution, s);
}

Exec::Frame Exec::frame_for(const Op& fn) {
    Frame f;
    f.fn = &fn;
    f.regs.resize(fn.values ? fn.values->size() : 0);
    return f;
}

std::vector<Reg> Exec::call(const Op& fn, const Region& body, std::vector<Reg> args, const Mask& mask) {
    Frame fr = frame_for(fn);
    for (size_t a = 0; a < body.args.size() && a < args.size(); ++a)
        fr.regs[static_cast<size_t>(body.args[a])] = std::move(args[a]);
    const Op* term = run_region(body, fr, mask);
    std::vector<Reg> out;
    if (term)
        for (ValueId v : term->operands) out.push_back(fr.regs[static_cast<size_t>(v)]);
    return out;
}

// Lanes that left through kernel.exit are off in every region they would
// still reach: a region narrows its mask on entry and after each exit.
Mask Exec::without_exited(const Mask& m) const {
    Mask n;
    n.all = false;
    n.m.resize(static_cast<size_t>(L));
    for (int64_t l = 0; l < L; ++l) n.m[static_cast<size_t>(l)] = m.on(l) && !exited_[static_cast<size_t>(l)];
    return n;
}

const Op* Exec::run_region(const Region& r, Frame& fr, const Mask& mask0) {
    Mask narrowed;
    const Mask* mask = &mask0;
    uint64_t seen = exit_epoch_;
    if (seen) {
        narrowed = without_exited(mask0);
        mask = &narrowed;
    }
    for (const Op& op : r.ops) {
        void* const h = resolve(op);
        if (!h) return &op;
        try {
            reinterpret_cast<void (*)(Exec&, const Op&, Frame&, const Mask&)>(h)(*this, op, fr, *mask);
        } catch (const std::out_of_range&) {
            // Handlers reach operands and results with at(): an op the verifier
            // lets through with too few of them (formats with any count) stops
            // here, as the op's error, not as an IndexError from nowhere.
            fail_at(op, -1, "the op lacks an operand, result or index it needs (" + std::to_string(op.operands.size()) + " operand(s), " +
                                std::to_string(op.results.size()) + " result(s))");
        }
        if (exit_epoch_ != seen) {
            seen = exit_epoch_;
            narrowed = without_exited(mask0);
            mask = &narrowed;
        }
    }
    return nullptr;
}

// ---------------------------------------------------------------------------
// Handlers.

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

    static void config_get(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Type& t = result_type(op, fr, 0);
        Reg& r = out(fr, op);
        size_num(r, t.elem == ScalarKind::None ? ScalarKind::Index : t.elem, 1, {}, true, x.L);
        auto it = x.sh.spec->config.find(op.callee);
        if (it == x.sh.spec->config.end()) x.fail_at(op, -1, "config key '" + op.callee + "' has no value");
        if (isf(r.elem)) r.f[0] = fround(r.elem, it->second.f);
        else r.i[0] = wrap_int(r.elem, it->second.i);
    }

    static void subgroup_size_fact(Exec& x, const Op& op, Frame& fr, const Mask&) {
        Reg& r = out(fr, op);
        size_num(r, ScalarKind::Index, 1, {}, true, x.L);
        r.i[0] = x.sh.spec->facts.subgroup_size;
    }

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

    static void int_binary(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const std::string b = base_name(op.name);
        if (lazy_arith(x, op, fr, b)) return;
        const Reg& A = in(fr, op, 0);
        const Reg& B = in(fr, op, 1);
        const ScalarKind k = result_type(op, fr, 0).elem == ScalarKind::None ? A.elem : result_type(op, fr, 0).elem;
        Reg& o = out(fr, op);
        auto W = [k](int64_t v) { return wrap_int(k, v); };
        auto U = [k](int64_t v) { return uval(k, v); };
        const bool addr = scalar_is_address(k);
        if (wrapping_binary(x, o, A, B, k, b)) {
        } else if (b == "add" || b == "addi") bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [=](int64_t p, int64_t q) { return W(static_cast<int64_t>(static_cast<uint64_t>(p) + static_cast<uint64_t>(q))); });
        else if (b == "sub" || b == "subi") bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [=](int64_t p, int64_t q) { return W(static_cast<int64_t>(static_cast<uint64_t>(p) - static_cast<uint64_t>(q))); });
        else if (b == "mul" || b == "muli") bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [=](int64_t p, int64_t q) { return W(static_cast<int64_t>(static_cast<uint64_t>(p) * static_cast<uint64_t>(q))); });
        else if (b == "div" || b == "divsi") {
            if (x.sh.options.checked || addr) check_div(x, op, m, A, B, addr);
            bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [=](int64_t p, int64_t q) { return q == 0 || (q == -1 && p == std::numeric_limits<int64_t>::min()) ? 0 : W(p / q); });
        } else if (b == "rem" || b == "remsi") {
            if (x.sh.options.checked || addr) check_div(x, op, m, A, B, addr);
            bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [=](int64_t p, int64_t q) { return q == 0 || q == -1 ? 0 : W(p % q); });
        } else if (b == "divui") {
            if (x.sh.options.checked) check_div(x, op, m, A, B, false);
            bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [=](int64_t p, int64_t q) { return U(q) == 0 ? 0 : W(static_cast<int64_t>(U(p) / U(q))); });
        } else if (b == "remui") {
            if (x.sh.options.checked) check_div(x, op, m, A, B, false);
            bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [=](int64_t p, int64_t q) { return U(q) == 0 ? 0 : W(static_cast<int64_t>(U(p) % U(q))); });
        } else if (b == "min" || b == "minsi") bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [](int64_t p, int64_t q) { return std::min(p, q); });
        else if (b == "max" || b == "maxsi") bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [](int64_t p, int64_t q) { return std::max(p, q); });
        else if (b == "minui") bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [=](int64_t p, int64_t q) { return U(p) < U(q) ? p : q; });
        else if (b == "maxui") bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [=](int64_t p, int64_t q) { return U(p) > U(q) ? p : q; });
        else if (b == "andi") bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [](int64_t p, int64_t q) { return p & q; });
        else if (b == "ori") bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [](int64_t p, int64_t q) { return p | q; });
        else if (b == "xori") bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [](int64_t p, int64_t q) { return p ^ q; });
        else if (b == "shli") bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [=](int64_t p, int64_t q) { return U(q) >= static_cast<uint64_t>(bits_of(k)) ? 0 : W(static_cast<int64_t>(static_cast<uint64_t>(p) << U(q))); });
        else if (b == "shrsi") bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [=](int64_t p, int64_t q) { return U(q) >= static_cast<uint64_t>(bits_of(k)) ? (p < 0 ? -1 : 0) : (p >> U(q)); });
        else if (b == "shrui") bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [=](int64_t p, int64_t q) { return U(q) >= static_cast<uint64_t>(bits_of(k)) ? 0 : W(static_cast<int64_t>(U(p) >> U(q))); });
        else x.fail_at(op, -1, "unsupported integer operation");
        // nsw / nuw promises (checked mode): the exact result must fit.
        if (x.sh.options.checked && !op.params.empty() && (b == "addi" || b == "subi" || b == "muli" || b == "add" || b == "sub" || b == "mul")) {
            const bool nsw = std::find(op.params.begin(), op.params.end(), "nsw") != op.params.end();
            const bool nuw = std::find(op.params.begin(), op.params.end(), "nuw") != op.params.end();
            Reg ta, tb;
            const Reg& a = o.uni ? A : varying(A, ta, x.L);
            const Reg& bb = o.uni ? B : varying(B, tb, x.L);
            const int bits = bits_of(k);
            auto exact = [&](__int128 p, __int128 q) -> __int128 {
                return b[0] == 'a' ? p + q : b[0] == 's' ? p - q : p * q;
            };
            if (nsw)
                check_lanes(x, op, m, o, [&](size_t e) {
                    const __int128 r = exact(a.i[e], bb.i[e]);
                    const __int128 lo = -(static_cast<__int128>(1) << (bits - 1)), hi = (static_cast<__int128>(1) << (bits - 1)) - 1;
                    return r < lo || r > hi;
                }, "nsw promise broken: signed overflow");
            if (nuw)
                check_lanes(x, op, m, o, [&](size_t e) {
                    const __int128 r = exact(static_cast<__int128>(U(a.i[e])), static_cast<__int128>(U(bb.i[e])));
                    return r < 0 || r > ((static_cast<__int128>(1) << bits) - 1);
                }, "nuw promise broken: unsigned overflow");
        }
    }

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

    static void index_madd(Exec& x, const Op& op, Frame& fr, const Mask&) {
        Reg t;
        bin<int64_t, int64_t, int64_t>(x, t, in(fr, op, 0), in(fr, op, 1), ScalarKind::Index, [](int64_t p, int64_t q) { return static_cast<int64_t>(static_cast<uint64_t>(p) * static_cast<uint64_t>(q)); });
        bin<int64_t, int64_t, int64_t>(x, out(fr, op), t, in(fr, op, 2), ScalarKind::Index, [](int64_t p, int64_t q) { return static_cast<int64_t>(static_cast<uint64_t>(p) + static_cast<uint64_t>(q)); });
    }

    static void index_scale(Exec& x, const Op& op, Frame& fr, const Mask&) {
        bin<int64_t, int64_t, int64_t>(x, out(fr, op), in(fr, op, 0), in(fr, op, 1), ScalarKind::Offset, [](int64_t p, int64_t q) { return static_cast<int64_t>(static_cast<uint64_t>(p) * static_cast<uint64_t>(q)); });
    }

    static std::string pred_of(const Op& op) {
        const Attr* a = op.attr("pred");
        return a ? a->s : std::string();
    }

    static void int_cmp(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const std::string p = pred_of(op);
        const Reg& A = raw(fr, op, 0);
        const ScalarKind k = A.elem;
        auto U = [k](int64_t v) { return uval(k, v); };
        Reg& o = out(fr, op);
        const Reg& Bv = in(fr, op, 1);
        const Reg& Araw = raw(fr, op, 0);
        if (m.all && Bv.uni && Bv.vlen == 1 && Araw.lazy && Araw.c2 >= 0 && Araw.c1 >= Araw.c2 * (Araw.lw - 1) && p != "eq" && p != "ne") {
            // Non-decreasing along the lanes: the end lanes decide for all
            // when they agree (and share a sign, for unsigned readings).
            const int64_t Lm = Araw.ll - 1;
            const int64_t first = Araw.c0, last = Araw.c0 + Araw.c1 * (Lm / Araw.lw) + Araw.c2 * (Lm % Araw.lw);
            if ((first >= 0) == (last >= 0)) {
                Reg ends, r;
                size_num(ends, Araw.elem, 1, {}, false, 2);
                ends.i = {first, last};
                Exec two(x.sh, 2);
                auto eval = [&](auto f) { bin<int64_t, int64_t, int64_t>(two, r, ends, Bv, ScalarKind::I1, f); };
                dispatch_cmp(two, op, p, U, eval);
                if (r.i[0] == r.i[1]) {
                    size_num(o, ScalarKind::I1, 1, {}, true, x.L);
                    o.i[0] = r.i[0];
                    return;
                }
            }
        }
        materialize(A);
        // An affine lane value against a uniform bound: when both end lanes
        // agree and every active lane is in the run, the whole batch agrees
        // (comparisons with a constant are monotonic along an affine
        // sequence unless it wraps, which the end checks exclude for signed
        // and unsigned readings alike when both ends have the same sign).
        if (m.all && Bv.uni && Bv.vlen == 1 && !A.uni && affine(A, x.L)) {
            const int64_t first = A.a0, last = A.a0 + A.a1 * (x.L - 1);
            const bool ordered = p != "eq" && p != "ne";
            if ((ordered || A.a1 == 0) && (first >= 0) == (last >= 0)) {
                Reg ends;
                size_num(ends, A.elem, 1, {}, false, 2);
                ends.i = {first, last};
                Reg r;
                Exec two(x.sh, 2);
                auto eval = [&](auto f) { bin<int64_t, int64_t, int64_t>(two, r, ends, Bv, ScalarKind::I1, f); };
                dispatch_cmp(two, op, p, U, eval);
                if (r.i[0] == r.i[1]) {
                    size_num(o, ScalarKind::I1, 1, {}, true, x.L);
                    o.i[0] = r.i[0];
                    return;
                }
            }
        }
        auto go = [&](auto f) { bin<int64_t, int64_t, int64_t>(x, o, A, Bv, ScalarKind::I1, f); };
        dispatch_cmp(x, op, p, U, go);
        if (!o.vshape.empty() || A.vlen > 1) o.vshape = A.vshape;
    }

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

    static void float_cmp(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const std::string p = pred_of(op);
        Reg& o = out(fr, op);
        const Reg& A = in(fr, op, 0);
        auto go = [&](auto f) { bin<int64_t, double, double>(x, o, A, in(fr, op, 1), ScalarKind::I1, f); };
        auto uno = [](double a, double b) { return std::isnan(a) || std::isnan(b); };
        if (p == "oeq") go([=](double a, double b) -> int64_t { return !uno(a, b) && a == b; });
        else if (p == "one") go([=](double a, double b) -> int64_t { return !uno(a, b) && a != b; });
        else if (p == "olt") go([=](double a, double b) -> int64_t { return !uno(a, b) && a < b; });
        else if (p == "ole") go([=](double a, double b) -> int64_t { return !uno(a, b) && a <= b; });
        else if (p == "ogt") go([=](double a, double b) -> int64_t { return !uno(a, b) && a > b; });
        else if (p == "oge") go([=](double a, double b) -> int64_t { return !uno(a, b) && a >= b; });
        else if (p == "ord") go([=](double a, double b) -> int64_t { return !uno(a, b); });
        else if (p == "uno") go([=](double a, double b) -> int64_t { return uno(a, b); });
        else if (p == "ueq") go([=](double a, double b) -> int64_t { return uno(a, b) || a == b; });
        else if (p == "une") go([=](double a, double b) -> int64_t { return uno(a, b) || a != b; });
        else if (p == "ult") go([=](double a, double b) -> int64_t { return uno(a, b) || a < b; });
        else if (p == "ule") go([=](double a, double b) -> int64_t { return uno(a, b) || a <= b; });
        else if (p == "ugt") go([=](double a, double b) -> int64_t { return uno(a, b) || a > b; });
        else if (p == "uge") go([=](double a, double b) -> int64_t { return uno(a, b) || a >= b; });
        else x.fail_at(op, -1, "unknown float predicate '" + p + "'");
        o.vshape = A.vshape;
    }

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

    static void float_binary(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const std::string b = base_name(op.name);
        if (b == "addf" && f32_lanes(x, op, fr, [](float p, float q) { return p + q; })) return;
        if (b == "subf" && f32_lanes(x, op, fr, [](float p, float q) { return p - q; })) return;
        if (b == "mulf" && f32_lanes(x, op, fr, [](float p, float q) { return p * q; })) return;
        if (b == "divf" && f32_lanes(x, op, fr, [](float p, float q) { return p / q; })) return;
        const Reg& A = in(fr, op, 0);
        const Reg& B = in(fr, op, 1);
        const ScalarKind k = A.elem;
        Reg& o = out(fr, op);
        if (b == "addf") fbin(x, o, A, B, k, [](auto p, auto q) { return p + q; });
        else if (b == "subf") fbin(x, o, A, B, k, [](auto p, auto q) { return p - q; });
        else if (b == "mulf") fbin(x, o, A, B, k, [](auto p, auto q) { return p * q; });
        else if (b == "divf") fbin(x, o, A, B, k, [](auto p, auto q) { return p / q; });
        else if (b == "remf") fbin(x, o, A, B, k, [](auto p, auto q) { return fmath::fmod(p, q); });
        else if (b == "minnumf") fbin(x, o, A, B, k, [](auto p, auto q) { return fmath::minnum(p, q); });
        else if (b == "maxnumf") fbin(x, o, A, B, k, [](auto p, auto q) { return fmath::maxnum(p, q); });
        else if (b == "minimumf") fbin(x, o, A, B, k, [](auto p, auto q) { return fmath::minimum(p, q); });
        else if (b == "maximumf") fbin(x, o, A, B, k, [](auto p, auto q) { return fmath::maximum(p, q); });
        else if (b == "copysignf") fbin(x, o, A, B, k, [](auto p, auto q) { return fmath::copysign(p, q); });
        else if (b == "powf") fbin(x, o, A, B, k, [](auto p, auto q) { return fmath::pow(p, q); });
        else if (b == "atan2f") fbin(x, o, A, B, k, [](auto p, auto q) { return fmath::atan2(p, q); });
        else if (b == "hypotf") fbin(x, o, A, B, k, [](auto p, auto q) { return fmath::hypot(p, q); });
        else x.fail_at(op, -1, "unsupported float operation");
    }

    // Loom's float math (loom.md §3.2) is hrx::fmath's, the implementation
    // the ufuncs and native code share (Note [Loom math accuracy] in
    // kernels/fmath.cpp); fast-math flags are permissions, so the strict
    // result is always a valid one.
    static void float_unary(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const std::string b = base_name(op.name);
        const Reg& A = in(fr, op, 0);
        const ScalarKind k = A.elem;
        Reg& o = out(fr, op);
#define HRX_FM1(fn) fun(x, o, A, k, [](auto p) { return fmath::fn(p); })
        if (b == "negf") fun(x, o, A, k, [](auto p) { return -p; });
        else if (b == "absf") fun(x, o, A, k, [](auto p) { return std::fabs(p); });
        else if (b == "signf") HRX_FM1(sign);
        else if (b == "sqrtf") HRX_FM1(sqrt);
        else if (b == "rsqrtf") HRX_FM1(rsqrt);
        else if (b == "cbrtf") HRX_FM1(cbrt);
        else if (b == "expf") HRX_FM1(exp);
        else if (b == "exp2f") HRX_FM1(exp2);
        else if (b == "expm1f") HRX_FM1(expm1);
        else if (b == "logf") HRX_FM1(log);
        else if (b == "log2f") HRX_FM1(log2);
        else if (b == "log10f") HRX_FM1(log10);
        else if (b == "log1pf") HRX_FM1(log1p);
        else if (b == "sinf") HRX_FM1(sin);
        else if (b == "cosf") HRX_FM1(cos);
        else if (b == "tanf") HRX_FM1(tan);
        else if (b == "sinturnsf") HRX_FM1(sinturns);
        else if (b == "costurnsf") HRX_FM1(costurns);
        else if (b == "asinf") HRX_FM1(asin);
        else if (b == "acosf") HRX_FM1(acos);
        else if (b == "atanf") HRX_FM1(atan);
        else if (b == "sinhf") HRX_FM1(sinh);
        else if (b == "coshf") HRX_FM1(cosh);
        else if (b == "tanhf") HRX_FM1(tanh);
        else if (b == "asinhf") HRX_FM1(asinh);
        else if (b == "acoshf") HRX_FM1(acosh);
        else if (b == "atanhf") HRX_FM1(atanh);
        else if (b == "erff") HRX_FM1(erf);
        else if (b == "erfcf") HRX_FM1(erfc);
        else if (b == "logisticf") HRX_FM1(logistic);
        else if (b == "siluf") HRX_FM1(silu);
        else if (b == "softplusf") HRX_FM1(softplus);
        else if (b == "geluf") {
            // The variant is checked at verification (loom/verify.cpp).
            const std::string v = op.params.empty() ? "" : op.params[0];
            if (v == "erf") HRX_FM1(gelu_erf);
            else if (v == "tanh") HRX_FM1(gelu_tanh);
            else if (v == "logistic") {
                const double s = gelu_scale(op);
                fun(x, o, A, k, [s](auto p) { return fmath::gelu_logistic(p, s); });
            } else x.fail_at(op, -1, "unknown GELU variant '" + v + "'");
        }
        else if (b == "floorf") HRX_FM1(floor);
        else if (b == "ceilf") HRX_FM1(ceil);
        else if (b == "roundf") HRX_FM1(round);
        else if (b == "roundevenf") HRX_FM1(roundeven);
        else if (b == "truncf") HRX_FM1(trunc);
        else if (b == "isnanf") un<int64_t, double>(x, o, A, ScalarKind::I1, [](double p) -> int64_t { return std::isnan(p); });
        else if (b == "isinff") un<int64_t, double>(x, o, A, ScalarKind::I1, [](double p) -> int64_t { return std::isinf(p); });
        else if (b == "isfinitef") un<int64_t, double>(x, o, A, ScalarKind::I1, [](double p) -> int64_t { return std::isfinite(p); });
        else x.fail_at(op, -1, "unsupported float operation");
#undef HRX_FM1
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
    static void clampf(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const ScalarKind k = in(fr, op, 0).elem;
        const std::string mode = op.params.empty() ? "" : op.params[0];
        auto go = [&](auto f) { tern<double>(x, out(fr, op), in(fr, op, 0), in(fr, op, 1), in(fr, op, 2), k, f); };
        if (mode == "ordered") go([](double v, double lo, double hi) { return fmath::clamp_ordered(v, lo, hi); });
        else if (mode == "number") go([](double v, double lo, double hi) { return fmath::clamp_number(v, lo, hi); });
        else if (mode == "ieee") go([](double v, double lo, double hi) { return fmath::clamp_ieee(v, lo, hi); });
        else x.fail_at(op, -1, "unknown clampf mode '" + mode + "'");
    }

    static void fmaf(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const ScalarKind k = in(fr, op, 0).elem;
        tern<double>(x, out(fr, op), in(fr, op, 0), in(fr, op, 1), in(fr, op, 2), k, [k](double a, double b, double c) {
            if (k == ScalarKind::F64) return std::fma(a, b, c);
            return fround(k, std::fmaf(static_cast<float>(a), static_cast<float>(b), static_cast<float>(c)));
        });
    }

    static void int_unary(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const std::string b = base_name(op.name);
        const Reg& A = in(fr, op, 0);
        const ScalarKind k = A.elem;
        const int bits = bits_of(k);
        Reg& o = out(fr, op);
        if (b == "negi") un<int64_t, int64_t>(x, o, A, k, [k](int64_t p) { return wrap_int(k, static_cast<int64_t>(0 - static_cast<uint64_t>(p))); });
        else if (b == "absi") un<int64_t, int64_t>(x, o, A, k, [k](int64_t p) { return wrap_int(k, p < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(p)) : p); });
        else if (b == "ctpopi") un<int64_t, int64_t>(x, o, A, k, [k](int64_t p) -> int64_t { return std::popcount(uval(k, p)); });
        else if (b == "ctlzi") un<int64_t, int64_t>(x, o, A, k, [k, bits](int64_t p) -> int64_t { return std::countl_zero(uval(k, p)) - (64 - bits); });
        else if (b == "cttzi") un<int64_t, int64_t>(x, o, A, k, [k, bits](int64_t p) -> int64_t { const uint64_t u = uval(k, p); return u == 0 ? bits : std::countr_zero(u); });
        else x.fail_at(op, -1, "unsupported integer operation");
    }

    // The rest of the integer family (scalar., vector., index. forms): rotli,
    // rotri (amount taken modulo the width), ceildivsi/ceildivui/floordivsi
    // (0 for a zero divisor or INT_MIN / -1, as divsi; checked mode reports
    // them), signi, and fmai (a * b + c, wrapped).
    static void int_more(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const std::string b = base_name(op.name);
        const Reg& A = in(fr, op, 0);
        const ScalarKind k = A.elem;
        const int bits = bits_of(k);
        auto W = [k](int64_t v) { return wrap_int(k, v); };
        auto U = [k](int64_t v) { return uval(k, v); };
        for (size_t j = 0; j < op.operands.size(); ++j)
            if (isf(in(fr, op, j).elem)) x.fail_at(op, -1, op.name + " works on integers");
        Reg& o = out(fr, op);
        if (b == "signi") {
            un<int64_t, int64_t>(x, o, A, k, [](int64_t p) -> int64_t { return (p > 0) - (p < 0); });
            return;
        }
        if (b == "fmai") {
            const Reg& B = in(fr, op, 1);
            const Reg& C = in(fr, op, 2);
            tern<int64_t>(x, o, A, B, C, k, [=](int64_t p, int64_t q, int64_t r) {
                return W(static_cast<int64_t>(static_cast<uint64_t>(p) * static_cast<uint64_t>(q) + static_cast<uint64_t>(r)));
            });
            return;
        }
        const Reg& B = in(fr, op, 1);
        auto rot = [=](int64_t p, int64_t q, bool left) {
            const uint64_t u = U(p), n = U(q) % static_cast<uint64_t>(bits);
            if (n == 0) return p;
            const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
            const uint64_t r = left ? (u << n) | (u >> (bits - n)) : (u >> n) | (u << (bits - n));
            return W(static_cast<int64_t>(r & mask));
        };
        if (b == "rotli" || b == "rotri") {
            const bool left = b == "rotli";
            bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [=](int64_t p, int64_t q) { return rot(p, q, left); });
            return;
        }
        if (b != "ceildivsi" && b != "ceildivui" && b != "floordivsi") x.fail_at(op, -1, "unsupported integer operation");
        if (x.sh.options.checked) check_div(x, op, m, A, B, false);
        const int64_t smin = bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
        if (b == "ceildivui") {
            bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [=](int64_t p, int64_t q) { return U(q) == 0 ? 0 : W(static_cast<int64_t>(U(p) / U(q) + (U(p) % U(q) != 0))); });
        } else {
            const bool ceil = b == "ceildivsi";
            bin<int64_t, int64_t, int64_t>(x, o, A, B, k, [=](int64_t p, int64_t q) -> int64_t {
                if (q == 0 || (q == -1 && p == smin)) return 0;
                const int64_t d = p / q, r = p % q;
                if (r != 0 && ((r < 0) != (q < 0)) != ceil) return W(ceil ? d + 1 : d - 1);  // truncation went the wrong way
                return W(d);
            });
        }
    }

    static void select(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Reg& c = in(fr, op, 0);
        const Reg& a = in(fr, op, 1);
        const Reg& b = in(fr, op, 2);
        if (isf(c.elem) || isf(a.elem) != isf(b.elem)) x.fail_at(op, -1, op.name + " needs an i1 condition and two values of one kind");
        Reg& o = out(fr, op);
        if (c.uni && c.vlen == 1) {
            o = c.i[0] ? a : b;
            return;
        }
        if (a.kind != RK::Num) x.fail_at(op, -1, "a varying choice between non-numeric values is not executed by the emulator");
        Reg tc, ta, tb;
        const bool uni = c.uni && a.uni && b.uni;
        const Reg& C = uni ? c : varying(c, tc, x.L);
        const Reg& A = uni ? a : varying(a, ta, x.L);
        const Reg& B = uni ? b : varying(b, tb, x.L);
        size_num(o, A.elem, A.vlen, A.vshape, uni, x.L);
        const size_t n = count(o, x.L);
        const bool lanecond = C.vlen == 1 && A.vlen > 1;
        for (size_t e = 0; e < n; ++e) {
            const bool t = C.i[lanecond ? e / static_cast<size_t>(A.vlen) : e] != 0;
            if (isf(A.elem)) o.f[e] = t ? A.f[e] : B.f[e];
            else o.i[e] = t ? A.i[e] : B.i[e];
        }
    }

    // --- casts ---------------------------------------------------------------
    static void cast(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const std::string b = base_name(op.name);
        const Reg& A = in(fr, op, 0);
        const ScalarKind from = A.elem;
        const ScalarKind to = result_type(op, fr, 0).elem;
        Reg& o = out(fr, op);
        const bool checked = x.sh.options.checked;
        // Each cast reads one payload kind and writes one; a mismatched
        // spelling (trunci of a float) would read or write storage it lacks.
        const bool int_in = b == "cast" || b == "extsi" || b == "extui" || b == "trunci" || b == "sitofp" || b == "uitofp";
        const bool int_out = b == "cast" || b == "extsi" || b == "extui" || b == "trunci" || b == "fptosi" || b == "fptoui";
        if (b != "bitcast" && (isf(from) == int_in || isf(to) == int_out || from == ScalarKind::None || to == ScalarKind::None))
            x.fail_at(op, -1, op.name + " does not convert " + scalar_name(from) + " to " + scalar_name(to));
        if (b == "cast") {  // index.cast
            if (to == ScalarKind::Offset && from != ScalarKind::Index && from != ScalarKind::Offset) {
                if (checked && from == ScalarKind::I64) check_lanes(x, op, m, A, [&](size_t e) { return A.i[e] < 0; }, "an i64 payload entering offset must be non-negative");
                un<int64_t, int64_t>(x, o, A, to, [from](int64_t p) { return static_cast<int64_t>(uval(from, p)); });
            } else if (scalar_is_address(to)) {
                if (checked && ((to == ScalarKind::Offset && from == ScalarKind::Index) || (to == ScalarKind::Index && from == ScalarKind::Offset)))
                    check_lanes(x, op, m, A, [&](size_t e) { return A.i[e] < 0; }, "index/offset cast of an unrepresentable value");
                if (checked && to == ScalarKind::Index && x.sh.spec->facts.index_bits < 64) {
                    const int64_t lim = int64_t{1} << (x.sh.spec->facts.index_bits - 1);
                    check_lanes(x, op, m, A, [&](size_t e) { return A.i[e] < -lim || A.i[e] >= lim; }, "value not representable in the target's index carrier");
                }
                un<int64_t, int64_t>(x, o, A, to, [](int64_t p) { return p; });
            } else {
                un<int64_t, int64_t>(x, o, A, to, [to](int64_t p) { return wrap_int(to, p); });
            }
        } else if (b == "extsi" || b == "trunci") {
            // An i1 lives as 0 or 1; read signed, true is -1 (its one bit is the sign bit).
            un<int64_t, int64_t>(x, o, A, to, [from, to](int64_t p) { return wrap_int(to, from == ScalarKind::I1 ? -(p & 1) : p); });
        } else if (b == "extui") {
            un<int64_t, int64_t>(x, o, A, to, [from, to](int64_t p) { return wrap_int(to, static_cast<int64_t>(uval(from, p))); });
        } else if (b == "sitofp" || b == "uitofp") {
            const bool u = b[0] == 'u';
            un<double, int64_t>(x, o, A, to, [=](int64_t p) {
                if (!u && from == ScalarKind::I1) p = -(p & 1);  // signed i1: true is -1
                if (to == ScalarKind::F64) return u ? static_cast<double>(uval(from, p)) : static_cast<double>(p);
                const float f = u ? static_cast<float>(uval(from, p)) : static_cast<float>(p);
                return fround(to, f);
            });
        } else if (b == "fptosi" || b == "fptoui") {
            const bool u = b[3] == 'u';
            const int bits = bits_of(to);
            const double hi = u ? std::ldexp(1.0, bits) : std::ldexp(1.0, bits - 1);
            const double lo = u ? 0.0 : -std::ldexp(1.0, bits - 1);
            if (checked) check_lanes(x, op, m, A, [&](size_t e) { const double t = std::trunc(A.f[e]); return !(t >= lo && t < hi) && !(u && t > -1.0 && t <= 0.0); }, "float value not representable in " + std::string(scalar_name(to)));
            un<int64_t, double>(x, o, A, to, [=](double p) -> int64_t {
                const double t = std::trunc(p);
                if (std::isnan(t)) return 0;
                const double c = std::min(std::max(t, lo), std::nextafter(hi, 0.0));
                return u ? wrap_int(to, static_cast<int64_t>(static_cast<uint64_t>(c))) : wrap_int(to, static_cast<int64_t>(c));
            });
        } else if (b == "extf" || b == "fptrunc") {
            // A value of f32 or narrower is exactly a float: rounding it to
            // bf16 needs no round-to-odd step first.
            if (to == ScalarKind::F64) un<double, double>(x, o, A, to, [](double p) { return p; });
            else if (to == ScalarKind::F32) un<double, double>(x, o, A, to, [](double p) { return static_cast<double>(static_cast<float>(p)); });
            else if (to == ScalarKind::BF16 && from != ScalarKind::F64) un<double, double>(x, o, A, to, [](double p) { return bf16_of(static_cast<float>(p)); });
            else un<double, double>(x, o, A, to, [to](double p) { return fround(to, p); });
        } else if (b == "bitcast" && op.name == "vector.bitcast" && vlen_of(result_type(op, fr, 0), fr, nullptr) != A.vlen) {
            vbitcast_reshape(x, op, fr, A);
            return;
        } else if (b == "bitcast") {
            if (isf(from) && isf(to)) un<double, double>(x, o, A, to, [=](double p) { return float_from_bits(to, float_bits(from, p)); });
            else if (isf(from)) un<int64_t, double>(x, o, A, to, [=](double p) { return wrap_int(to, static_cast<int64_t>(float_bits(from, p))); });
            else if (isf(to)) un<double, int64_t>(x, o, A, to, [=](int64_t p) { return float_from_bits(to, uval(from, p)); });
            else un<int64_t, int64_t>(x, o, A, to, [=](int64_t p) { return wrap_int(to, p); });
        } else {
            x.fail_at(op, -1, "unsupported cast");
        }
        if (A.vlen > 1) o.vshape = A.vshape;
        if (op.name == "vector.bitcast") vlen_of(result_type(op, fr, 0), fr, &o.vshape);  // vector<16xi32> to vector<4x4xi32>
    }

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
    static void assume(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        for (size_t k = 0; k < op.results.size() && k < op.operands.size(); ++k)
            out(fr, op, k) = x.sh.options.checked ? in(fr, op, k) : raw(fr, op, k);
        if (!x.sh.options.checked || !m.any()) return;
        check_preds(x, op, fr, m, false);
    }

    // Evaluates op.preds for every active lane; `authored` (launch programs)
    // reports a Message error instead of a checked-mode Execution finding.
    static void check_preds(Exec& x, const Op& op, Frame& fr, const Mask& m, bool authored) {
        for (const Predicate& p : op.preds) {
            if (p.args.empty()) continue;
            auto argv = [&](const PredArg& a, int64_t l, double& f, int64_t& i, bool& fl) {
                if (a.is_value()) {
                    const Reg& r = val(fr, a.value);
                    const size_t e = r.uni ? 0 : static_cast<size_t>(l);
                    fl = isf(r.elem);
                    if (fl) f = r.f[e];
                    else i = r.i[e];
                } else {
                    fl = a.is_float;
                    f = a.f;
                    i = a.i;
                    if (!fl) f = static_cast<double>(a.i);
                }
            };
            bool uni = true;
            for (const PredArg& a : p.args)
                if (a.is_value() && !val(fr, a.value).uni) uni = false;
            for (int64_t l = 0; l < (uni ? 1 : x.L); ++l) {
                if (!uni && !m.on(l)) continue;
                double fv[3] = {0, 0, 0};
                int64_t iv[3] = {0, 0, 0};
                bool fl[3] = {false, false, false};
                for (size_t a = 0; a < p.args.size() && a < 3; ++a) argv(p.args[a], l, fv[a], iv[a], fl[a]);
                const bool useF = fl[0];
                auto cmp = [&](size_t a) { return useF ? (fv[0] < (fl[a] ? fv[a] : static_cast<double>(iv[a])) ? -1 : fv[0] > (fl[a] ? fv[a] : static_cast<double>(iv[a])) ? 1 : 0) : (iv[0] < iv[a] ? -1 : iv[0] > iv[a] ? 1 : 0); };
                bool ok = true;
                const std::string& n = p.name;
                if (n == "range") ok = cmp(1) >= 0 && cmp(2) <= 0;
                else if (n == "mul") ok = iv[1] != 0 && iv[0] % iv[1] == 0;
                else if (n == "pow2") ok = iv[0] > 0 && (iv[0] & (iv[0] - 1)) == 0;
                else if (n == "eq") ok = cmp(1) == 0;
                else if (n == "ne") ok = cmp(1) != 0;
                else if (n == "lt") ok = cmp(1) < 0;
                else if (n == "le" || n == "max") ok = cmp(1) <= 0;
                else if (n == "gt") ok = cmp(1) > 0;
                else if (n == "ge" || n == "min") ok = cmp(1) >= 0;
                else if (n == "not_nan") ok = !std::isnan(fv[0]);
                else if (n == "not_inf") ok = !std::isinf(fv[0]);
                else if (n == "finite") ok = std::isfinite(fv[0]);
                if (!ok) {
                    std::string vtxt = useF ? std::to_string(fv[0]) : std::to_string(iv[0]);
                    std::string pname = p.args[0].is_value() ? "%" + (*fr.fn->values)[static_cast<size_t>(p.args[0].value)].name : "value";
                    const std::string msg = "assumption " + n + "(" + pname + ", ...) is false: " + pname + " = " + vtxt;
                    if (authored)
                        fail(ErrorKind::Message, loc_str(op) + ": " + op.name + ": " + msg);
                    x.fail_at(op, uni ? -1 : l, msg);
                }
            }
        }
    }

    // --- coordinates ------------------------------------------------------------
    static int axis(const Op& op) {
        if (op.params.empty()) return 0;
        return op.params[0] == "y" ? 1 : op.params[0] == "z" ? 2 : 0;
    }

    static void coord(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const std::string& n = op.name;
        const auto& ws = x.sh.launch.workgroup_size;
        const auto& gs = x.sh.launch.workgroups;
        const int a = axis(op);
        Reg& o = out(fr, op);
        auto split = [](int64_t v, const std::array<int64_t, 3>& d, int ax) {
            if (d[1] == 1 && d[2] == 1) return ax == 0 ? v : int64_t{0};
            return ax == 0 ? v % d[0] : ax == 1 ? v / d[0] % d[1] : v / (d[0] * d[1]);
        };
        const int64_t sg = x.sh.spec->facts.subgroup_size > 0 ? x.sh.spec->facts.subgroup_size : 1;
        auto lanes = [&](auto f) {
            size_num(o, ScalarKind::Index, 1, {}, false, x.L);
            for (int64_t l = 0; l < x.L; ++l) o.i[static_cast<size_t>(l)] = f(l);
        };
        auto uniform = [&](int64_t v) {
            size_num(o, ScalarKind::Index, 1, {}, true, x.L);
            o.i[0] = v;
        };
        const int64_t W = ws[0] * ws[1] * ws[2];
        const bool one_d = ws[1] == 1 && ws[2] == 1 && gs[1] == 1 && gs[2] == 1;
        // Batches start at a workgroup boundary: 1-D coordinates are lazy
        // indices (no lane loop until something needs the values).
        if (x.first_ % W == 0) {
            const bool ws1 = ws[1] == 1 && ws[2] == 1, gs1 = gs[1] == 1 && gs[2] == 1;
            if (n == "kernel.workitem.id" && ws1 && a == 0) {
                o = lazy_index(0, 0, 1, W, x.L);
                return;
            }
            if (n == "kernel.workgroup.id" && gs1 && a == 0 && !x.uniform_wg_) {
                o = lazy_index(x.first_ / W, 1, 0, W, x.L);
                return;
            }
            if (n == "kernel.workitem.dispatch.id" && ws1 && gs1 && a == 0) {
                o = lazy_index(x.first_, W, 1, W, x.L);
                return;
            }
        }
        if (one_d && a == 0 && n == "kernel.workitem.dispatch.id") {
            lanes([&](int64_t l) { return x.first_ + l; });
            return;
        }
        x.ensure_coords_if(n != "kernel.workgroup.size" && n != "kernel.workgroup.count");

        if (n == "kernel.workgroup.size") uniform(ws[static_cast<size_t>(a)]);
        else if (n == "kernel.workgroup.count") uniform(gs[static_cast<size_t>(a)]);
        else if (n == "kernel.subgroup.size") uniform(std::min<int64_t>(sg, W));
        else if (n == "kernel.subgroup.count") uniform((W + sg - 1) / sg);
        // Clusters of one workgroup: cluster.count is the workgroup count
        // (the kernel defs: workgroup.count / cluster.size), not 1.
        else if (n == "kernel.cluster.size") uniform(1);
        else if (n == "kernel.cluster.count") uniform(gs[static_cast<size_t>(a)]);
        else if (n == "kernel.workgroup.id") {
            if (x.uniform_wg_) uniform(split(x.wg_lin_.empty() ? 0 : x.wg_lin_[0], gs, a));
            else lanes([&](int64_t l) { return split(x.wg_lin_[static_cast<size_t>(l)], gs, a); });
        } else if (n == "kernel.workitem.id") lanes([&](int64_t l) { return split(x.item_lin_[static_cast<size_t>(l)], ws, a); });
        else if (n == "kernel.workitem.dispatch.id") lanes([&](int64_t l) {
            return split(x.wg_lin_[static_cast<size_t>(l)], gs, a) * ws[static_cast<size_t>(a)] + split(x.item_lin_[static_cast<size_t>(l)], ws, a);
        });
        else if (n == "kernel.subgroup.id") lanes([&](int64_t l) { return x.item_lin_[static_cast<size_t>(l)] / sg; });
        else if (n == "kernel.subgroup.lane.id") lanes([&](int64_t l) { return x.item_lin_[static_cast<size_t>(l)] % sg; });
        else x.fail_at(op, -1, "unsupported coordinate query");
    }

    // --- buffers and views -------------------------------------------------------
    static void buffer_identity(Exec&, const Op& op, Frame& fr, const Mask&) {
        for (size_t k = 0; k < op.results.size() && k < op.operands.size(); ++k) out(fr, op, k) = raw(fr, op, k);
    }

    static uint64_t lane_address(const Exec& x, const BufObj& b, int64_t l) {
        return b.address + static_cast<uint64_t>(l) * b.stride;
        (void)x;
    }

    static void assume_alignment(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const Attr* a = op.attr("minimum_alignment");
        const uint64_t align = a ? static_cast<uint64_t>(a->i) : 1;
        for (size_t k = 0; k < op.results.size() && k < op.operands.size(); ++k) {
            Reg& r = out(fr, op, k);
            r = in(fr, op, k);
            r.align = std::max<uint64_t>(r.align, align);
            if (!x.sh.options.checked || align <= 1 || r.buf < 0) continue;
            const BufObj& b = x.bufs[static_cast<size_t>(r.buf)];
            const int64_t lanes = b.stride ? x.L : 1;
            for (int64_t l = 0; l < lanes; ++l) {
                if (b.stride && !m.on(l)) continue;
                const uint64_t addr = lane_address(x, b, l);
                if (addr % align)
                    x.fail_at(op, b.stride ? l : -1, "alignment promise of " + std::to_string(align) + " bytes broken: " + b.name +
                                                         " is at address 0x" + [&] { char s[32]; std::snprintf(s, sizeof s, "%llx", static_cast<unsigned long long>(addr)); return std::string(s); }());
            }
        }
    }

    static void alloca_(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const bool wg = !op.params.empty() && op.params[0] == "workgroup";
        const Reg& n = in(fr, op, 0);
        if (!n.uni) x.fail_at(op, -1, "a varying alloca size is not executed by the emulator");
        // Sizes the planner could not evaluate meet Note [Emulator size limits] here.
        if (n.i[0] < 0) x.fail_at(op, -1, "size " + std::to_string(n.i[0]) + " is negative (a byte count is an offset)");
        const uint64_t bytes = static_cast<uint64_t>(n.i[0]);
        const Attr* al = op.attr("align");
        if (al && (al->i <= 0 || al->i > static_cast<int64_t>(kMaxAllocaBytes) || (al->i & (al->i - 1))))
            x.fail_at(op, -1, "align(" + std::to_string(al->i) + ") is not a power of two up to " + std::to_string(kMaxAllocaBytes));
        const uint64_t align = al ? static_cast<uint64_t>(al->i) : 16;
        uint64_t& used = wg ? x.workgroup_bytes : x.private_bytes;
        const uint64_t after = (used + align - 1) / align * align + bytes;
        if (bytes > kMaxAllocaBytes)
            x.fail_at(op, -1, "size " + std::to_string(bytes) + " bytes is over the emulator's limit of " + std::to_string(kMaxAllocaBytes) +
                                  " bytes per allocation");
        if (after > kMaxAllocaBytes)
            x.fail_at(op, -1, "size " + std::to_string(bytes) + " bytes brings the " + (wg ? "workgroup's" : "work-item's") + " scratch to " +
                                  std::to_string(after) + " bytes, over the emulator's limit of " + std::to_string(kMaxAllocaBytes) + " bytes");
        used = after;
        BufObj b;
        b.kind = wg ? BufKind::Workgroup : BufKind::Private;
        b.size = bytes;
        b.name = std::string("buffer.alloca<") + (wg ? "workgroup" : "private") + "> at " + loc_str(op);
        const uint64_t stride = wg ? 0 : (bytes + align - 1) / align * align;
        const uint64_t total = wg ? bytes : stride * static_cast<uint64_t>(x.L);
        if (total > kMaxBatchScratch)
            x.fail_at(op, -1, "size " + std::to_string(bytes) + " bytes for each of the " + std::to_string(x.L) + " work-items the emulator runs at once is over its " +
                                  std::to_string(kMaxBatchScratch) + " bytes of scratch per batch");
        std::unique_ptr<uint8_t[]> mem;
        try {
            mem = std::make_unique<uint8_t[]>(total + align);
        } catch (const std::bad_alloc&) {
            x.fail_at(op, -1, "size " + std::to_string(bytes) + ": the host could not allocate " + std::to_string(total + align) + " bytes for it");
        }
        std::memset(mem.get(), kUninitByte, total + align);
        const uintptr_t p = reinterpret_cast<uintptr_t>(mem.get());
        b.base = reinterpret_cast<uint8_t*>((p + align - 1) / align * align);
        b.stride = stride;
        b.address = reinterpret_cast<uintptr_t>(b.base);
        if (x.sh.options.checked) b.init.assign(total, 0);
        if (wg && x.sh.options.checked) {
            b.writer.assign(bytes, -1);
            b.reader.assign(bytes, -1);
        }
        x.owned.push_back(std::move(mem));
        Reg& r = out(fr, op);
        r = Reg{};
        r.kind = RK::Buf;
        r.buf = x.add_buffer(std::move(b));
        r.align = align;
    }

    static void buffer_view(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Reg& b = in(fr, op, 0);
        const Type& t = result_type(op, fr, 0);
        Reg& r = out(fr, op);
        r = Reg{};
        r.kind = RK::View;
        r.buf = b.buf;
        r.elem = t.elem;
        for (const Dim& d : t.dims) {
            if (!d.is_dynamic()) {
                r.dims.push_back(d.extent);
                continue;
            }
            const Reg& dv = val(fr, d.value);
            if (!dv.uni) x.fail_at(op, -1, "a view extent that varies between lanes is not executed by the emulator");
            if (dv.i[0] < 0) x.fail_at(op, -1, "negative view extent " + std::to_string(dv.i[0]));
            r.dims.push_back(dv.i[0]);
        }
        if (!op.indices.empty() && op.indices[0].is_value()) {
            const Reg& o = val(fr, op.indices[0].value);
            r.uni = o.uni;
            r.off = o.i;
        } else {
            r.off = {op.indices.empty() ? 0 : op.indices[0].constant};
        }
        apply_layout(x, op, fr, t, r);
    }

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
    static void layout_value(Exec& x, const Op& op, Frame& fr, const Mask&) {
        Reg r;
        r.kind = RK::Enc;
        r.role = "layout";
        if (op.name == "encoding.layout.strided")
            for (const IndexEntry& e : op.indices) {
                if (e.is_value() && !val(fr, e.value).uni) x.fail_at(op, -1, "a layout stride that varies between lanes is not executed by the emulator");
                r.strides.push_back(entry(fr, e));
            }
        out(fr, op) = std::move(r);
    }
    static void layout_assume(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Reg& l = in(fr, op, 0);
        if (l.kind != RK::Enc || l.role != "layout") x.fail_at(op, -1, "operand is not an encoding.layout value");
        if (op.name == "encoding.layout.assume.strided") {
            const Attr* rank = op.attr("rank");
            if (rank && !l.strides.empty() && static_cast<int64_t>(l.strides.size()) != rank->i)
                x.fail_at(op, -1, "the layout has rank " + std::to_string(l.strides.size()) + ", not " + std::to_string(rank->i));
        }
        out(fr, op) = l;
    }

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

    static void view_load(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const Reg& v = in(fr, op, 0);
        const int ib = x.sh.spec->facts.index_bits;
        const int es = elem_bytes(v.elem, ib);
        std::vector<int64_t> a;
        bool uni = false;
        int64_t contig = -1;
        BufObj& B = x.bufs[static_cast<size_t>(v.buf)];
        const bool plain = !B.stride && !shadowed(B);
        addresses(x, op, fr, m, v, op.indices, {}, es, a, uni, plain ? &contig : nullptr);
        if (contig >= 0) {
            Reg& o = out(fr, op);
            size_num(o, v.elem, 1, {}, false, x.L);
            // The next batch of this stream is this batch's neighbour: fetch
            // it while copying this one.
            const uint8_t* src = B.base + contig;
            const int64_t bytes = x.L * es;
            for (int64_t q = 0; q < bytes; q += 64) __builtin_prefetch(src + bytes + q);
            if (v.elem == ScalarKind::F32) {
                o.f.clear();
                o.g.resize(static_cast<size_t>(x.L));
                std::memcpy(o.g.data(), src, static_cast<size_t>(x.L) * 4);
                o.fs = true;
                return;
            }
            if (load_lanes(x, v.elem, ib, src, nullptr, o)) return;
            a.resize(static_cast<size_t>(x.L));
            for (int64_t l = 0; l < x.L; ++l) a[static_cast<size_t>(l)] = contig + l * es;
        }
        if (uni && B.stride) {
            // One address, but every lane reads its own copy of per-lane memory.
            const int64_t byte = a.empty() ? -1 : a[0];
            a.assign(static_cast<size_t>(x.L), -1);
            for (int64_t l = 0; l < x.L; ++l)
                if (m.on(l)) a[static_cast<size_t>(l)] = byte;
            uni = false;
        }
        Reg& o = out(fr, op);
        size_num(o, v.elem, 1, {}, uni, x.L);
        const bool fl = isf(v.elem);
        if (!uni && m.all && !B.stride && !shadowed(B) && a.size() == static_cast<size_t>(x.L) &&
            load_lanes(x, v.elem, ib, B.base, a.data(), o))
            return;
        for (size_t l = 0; l < a.size(); ++l) {
            if (a[l] < 0) continue;
            const int64_t lane = uni ? 0 : static_cast<int64_t>(l);
            // A uniform read is every active lane's: the first one is named.
            int64_t reader = lane;
            if (uni)
                while (reader + 1 < x.L && !m.on(reader)) ++reader;
            track(x, op, B, reader, a[l], es, false);
            rd(v.elem, B.base + lane * static_cast<int64_t>(B.stride) + a[l], fl ? nullptr : &o.i[l], fl ? &o.f[l] : nullptr, ib);
        }
        if (uni && B.kind == BufKind::Workgroup && x.sh.options.checked)
            for (int64_t l = 0; l < x.L; ++l)
                if (m.on(l)) track(x, op, B, l, a[0], es, false);
    }

    static void view_store(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const Reg& val0 = raw(fr, op, 0);
        if (val0.lazy) materialize(val0);
        const Reg& v = in(fr, op, 1);
        const int ib = x.sh.spec->facts.index_bits;
        const int es = elem_bytes(v.elem, ib);
        std::vector<int64_t> a;
        bool uni = false;
        int64_t contig = -1;
        BufObj& B = x.bufs[static_cast<size_t>(v.buf)];
        const bool plain = !B.stride && !shadowed(B) && !val0.uni;
        addresses(x, op, fr, m, v, op.indices, {}, es, a, uni, plain ? &contig : nullptr);
        if (contig >= 0 && v.elem == ScalarKind::F32 && val0.fs) {
            std::memcpy(B.base + contig, val0.g.data(), static_cast<size_t>(x.L) * 4);
            return;
        }
        materialize(val0);
        if (contig >= 0 && val0.vlen == 1 && store_lanes(x, v.elem, ib, B.base + contig, nullptr, val0)) return;
        if (contig >= 0) {
            a.resize(static_cast<size_t>(x.L));
            for (int64_t l = 0; l < x.L; ++l) a[static_cast<size_t>(l)] = contig + l * es;
        }
        const bool fl = isf(v.elem);
        if (uni && !val0.uni) uni = false;
        if (uni && (B.stride || B.kind == BufKind::Workgroup || !m.all)) uni = false;
        if (uni) {
            if (!a.empty() && a[0] >= 0) wr(v.elem, B.base + a[0], fl ? 0 : val0.i[0], fl ? val0.f[0] : 0, ib);
            return;
        }
        if (m.all && a.size() == static_cast<size_t>(x.L) && !val0.uni && val0.vlen == 1 && !B.stride && !shadowed(B) &&
            store_lanes(x, v.elem, ib, B.base, a.data(), val0))
            return;
        for (int64_t l = 0; l < x.L; ++l) {
            if (!m.on(l)) continue;
            const int64_t byte = a.size() == 1 ? a[0] : a[static_cast<size_t>(l)];
            if (byte < 0) continue;
            const size_t e = val0.uni ? 0 : static_cast<size_t>(l);
            track(x, op, B, l, byte, es, true);
            wr(v.elem, B.base + l * static_cast<int64_t>(B.stride) + byte, fl ? 0 : val0.i[e], fl ? val0.f[e] : 0, ib);
        }
    }

    // vector.load / vector.store / vector.fragment.store: the vector's axes on
    // the view's trailing axes, the whole footprint in bounds.
    static void vec_access(Exec& x, const Op& op, Frame& fr, const Mask& m, const Reg& v, Reg* load, const Reg* store,
                           const std::vector<int64_t>& vshape) {
        const int ib = x.sh.spec->facts.index_bits;
        const int es = elem_bytes(v.elem, ib);
        std::vector<int64_t> a;
        bool uni = false;
        addresses(x, op, fr, m, v, op.indices, vshape, es, a, uni);
        BufObj& B = x.bufs[static_cast<size_t>(v.buf)];
        const size_t rank = v.dims.size();
        // Element offsets of the vector relative to its origin.
        int64_t vlen = 1;
        for (int64_t e : vshape)
            if (e < 1 || e > kMaxVectorElems || (vlen *= e) > kMaxVectorElems)
                x.fail_at(op, -1, "a vector footprint with extent " + std::to_string(e) + " (1 to " + std::to_string(kMaxVectorElems) + " elements)");
        if (vshape.size() > rank) x.fail_at(op, -1, "a rank-" + std::to_string(vshape.size()) + " vector does not fit a rank-" + std::to_string(rank) + " view");
        std::vector<int64_t> rel(static_cast<size_t>(vlen));
        {
            const std::vector<int64_t> strides = view_strides(v);
            const size_t r = vshape.size();
            for (int64_t e = 0; e < vlen; ++e) {
                int64_t rem = e, off = 0;
                for (size_t t = r; t-- > 0;) {
                    const int64_t c = rem % vshape[t];
                    rem /= vshape[t];
                    off += c * strides[rank - r + t];
                }
                rel[static_cast<size_t>(e)] = off * es;
            }
        }
        const bool fl = isf(v.elem);
        bool dense = true;
        for (int64_t e = 0; e < vlen; ++e) dense &= rel[static_cast<size_t>(e)] == e * es;
        if (load) {
            const bool luni = uni && !B.stride;
            size_num(*load, v.elem, vlen, vshape, luni, x.L);
        }
        const int64_t lanes = (load && load->uni) ? 1 : x.L;
        for (int64_t l = 0; l < lanes; ++l) {
            if (!(load && load->uni) && !m.on(l)) continue;
            const int64_t byte = a.size() == 1 ? a[0] : a[static_cast<size_t>(l)];
            if (byte < 0) continue;
            uint8_t* base = B.base + l * static_cast<int64_t>(B.stride) + byte;
            if (load) {
                int64_t* io = fl ? nullptr : load->i.data() + l * vlen;
                double* fo = fl ? load->f.data() + l * vlen : nullptr;
                const bool done = dense && with_elem(v.elem, ib, [&](auto tag, auto rd, auto) {
                    using T = decltype(tag);
                    auto* dst = storage<decltype(rd(tag))>(*load) + l * vlen;
                    for (int64_t e = 0; e < vlen; ++e) { T t; std::memcpy(&t, base + e * static_cast<int64_t>(sizeof(T)), sizeof(T)); dst[e] = rd(t); }
                    return true;
                });
                if (!done)
                    for (int64_t e = 0; e < vlen; ++e) rd(v.elem, base + rel[static_cast<size_t>(e)], io ? io + e : nullptr, fo ? fo + e : nullptr, ib);
                if (shadowed(B))
                    for (int64_t e = 0; e < vlen; ++e) track(x, op, B, l, byte + rel[static_cast<size_t>(e)], es, false);
            } else {
                const size_t s0 = store->uni ? 0 : static_cast<size_t>(l * vlen);
                if (dense && !shadowed(B) && with_elem(v.elem, ib, [&](auto tag, auto rd, auto wr) {
                        using T = decltype(tag);
                        const auto* src = storage<decltype(rd(tag))>(const_cast<Reg&>(*store)) + s0;
                        for (int64_t e = 0; e < vlen; ++e) { const T t = wr(src[e]); std::memcpy(base + e * static_cast<int64_t>(sizeof(T)), &t, sizeof(T)); }
                        return true;
                    }))
                    continue;
                for (int64_t e = 0; e < vlen; ++e) {
                    if (shadowed(B)) track(x, op, B, l, byte + rel[static_cast<size_t>(e)], es, true);
                    wr(v.elem, base + rel[static_cast<size_t>(e)], fl ? 0 : store->i[s0 + static_cast<size_t>(e)], fl ? store->f[s0 + static_cast<size_t>(e)] : 0, ib);
                }
            }
        }
    }

    static void vector_load(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const Type& t = result_type(op, fr, 0);
        std::vector<int64_t> shape;
        vlen_of(t, fr, &shape);
        Reg r;
        vec_access(x, op, fr, m, in(fr, op, 0), &r, nullptr, shape);
        out(fr, op) = std::move(r);
    }

    static void vector_store(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const Reg& s = in(fr, op, 0);
        vec_access(x, op, fr, m, in(fr, op, 1), nullptr, &s, s.vshape.empty() ? std::vector<int64_t>{s.vlen} : s.vshape);
    }

    // --- atomics (lanes in lane order) --------------------------------------------
    static void atomic(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const std::string& n = op.name;
        const bool is_load = n == "view.atomic.load";
        const bool is_store = n == "view.atomic.store";
        const bool is_cx = n == "view.atomic.cmpxchg";
        const size_t vi = is_load ? 0 : is_cx ? 2 : 1;
        const Reg& v = in(fr, op, vi);
        const int ib = x.sh.spec->facts.index_bits;
        const int es = elem_bytes(v.elem, ib);
        const std::string kind = op.params.empty() ? "" : op.params[0];
        BufObj& B = x.bufs[static_cast<size_t>(v.buf)];
        // Note [The gfx1151 float atomic max caveat] (loom/plan.h).
        const bool unapplied = x.sh.gpu && B.kind == BufKind::Binding && B.coherent && (kind == "maxnumf" || kind == "maximumf") &&
                               (n == "view.atomic.rmw" || n == "view.atomic.reduce");
        if (unapplied && x.sh.options.checked)
            x.fail_at(op, -1, "gfx1151 float atomic max (" + kind + ") does not update coherent memory, and " + B.name +
                                  " is on coherent (allocate_shared) backing: HostVisible, or a Shared alias of it; use an "
                                  "integer compare-and-swap loop over the float's bits (view.atomic.cmpxchg on an integer "
                                  "view of the same bytes) instead");
        std::vector<int64_t> a;
        bool uni = false;
        addresses(x, op, fr, m, v, op.indices, {}, es, a, uni);
        const bool fl = isf(v.elem);
        const ScalarKind k = v.elem;
        Reg res, ok;
        if (!is_store) size_num(res, k, 1, {}, false, x.L);
        if (is_cx) size_num(ok, ScalarKind::I1, 1, {}, false, x.L);
        auto get = [&](const Reg& r, int64_t l, int64_t& i, double& f) {
            const size_t e = r.uni ? 0 : static_cast<size_t>(l);
            if (fl) f = r.f[e];
            else i = r.i[e];
        };
        for (int64_t l = 0; l < x.L; ++l) {
            if (!m.on(l)) continue;
            const int64_t byte = a.size() == 1 ? a[0] : a[static_cast<size_t>(l)];
            uint8_t* p = B.base + l * static_cast<int64_t>(B.stride) + byte;
            if (!is_store) mark_init(x, op, B, l, byte, es, false);
            if (!is_load) mark_init(x, op, B, l, byte, es, true);
            int64_t oi = 0;
            double of = 0;
            rd(k, p, &oi, &of, ib);
            if (!is_store) {
                if (fl) res.f[static_cast<size_t>(l)] = of;
                else res.i[static_cast<size_t>(l)] = oi;
            }
            if (is_load || unapplied) continue;
            int64_t ai = 0, ci = 0;
            double af = 0, cf = 0;
            if (is_store) {
                get(in(fr, op, 0), l, ai, af);
                wr(k, p, ai, af, ib);
                continue;
            }
            if (is_cx) {
                get(in(fr, op, 0), l, ci, cf);
                get(in(fr, op, 1), l, ai, af);
                const bool same = fl ? float_bits(k, of) == float_bits(k, cf) : uval(k, oi) == uval(k, ci);
                ok.i[static_cast<size_t>(l)] = same;
                if (same) wr(k, p, ai, af, ib);
                continue;
            }
            get(in(fr, op, 0), l, ai, af);
            int64_t ni = oi;
            double nf = of;
            if (kind == "exchange") ni = ai, nf = af;
            else if (kind == "add") fl ? void(nf = fround(k, of + af)) : void(ni = wrap_int(k, static_cast<int64_t>(static_cast<uint64_t>(oi) + static_cast<uint64_t>(ai))));
            else if (kind == "sub") fl ? void(nf = fround(k, of - af)) : void(ni = wrap_int(k, static_cast<int64_t>(static_cast<uint64_t>(oi) - static_cast<uint64_t>(ai))));
            else if (kind == "and") ni = oi & ai;
            else if (kind == "or") ni = oi | ai;
            else if (kind == "xor") ni = oi ^ ai;
            else if (kind == "maxsi" || kind == "max") ni = std::max(oi, ai);
            else if (kind == "minsi" || kind == "min") ni = std::min(oi, ai);
            else if (kind == "maxui" || kind == "umax") ni = uval(k, oi) >= uval(k, ai) ? oi : ai;
            else if (kind == "minui" || kind == "umin") ni = uval(k, oi) <= uval(k, ai) ? oi : ai;
            else if (kind == "maxnumf") nf = fmath::maxnum(of, af);
            else if (kind == "minnumf") nf = fmath::minnum(of, af);
            else if (kind == "maximumf") nf = fmath::maximum(of, af);
            else if (kind == "minimumf") nf = fmath::minimum(of, af);
            else x.fail_at(op, l, "unknown atomic kind '" + kind + "'");
            wr(k, p, ni, nf, ib);
        }
        if (!is_store && !op.results.empty()) out(fr, op, 0) = std::move(res);
        if (is_cx && op.results.size() > 1) out(fr, op, 1) = std::move(ok);
    }

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
    static void splat(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Reg& s = in(fr, op, 0);
        const Type& t = result_type(op, fr, 0);
        std::vector<int64_t> shape;
        const int64_t vlen = vlen_of(t, fr, &shape);
        Reg& o = out(fr, op);
        size_num(o, s.elem, vlen, shape, s.uni, x.L);
        const int64_t lanes = s.uni ? 1 : x.L;
        for (int64_t l = 0; l < lanes; ++l)
            for (int64_t e = 0; e < vlen; ++e) {
                if (isf(s.elem)) o.f[static_cast<size_t>(l * vlen + e)] = s.f[static_cast<size_t>(l)];
                else o.i[static_cast<size_t>(l * vlen + e)] = s.i[static_cast<size_t>(l)];
            }
    }

    static void iota(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Reg& base = in(fr, op, 0);
        const Reg& step = in(fr, op, 1);
        const Type& t = result_type(op, fr, 0);
        std::vector<int64_t> shape;
        const int64_t vlen = vlen_of(t, fr, &shape);
        Reg tb, ts;
        const bool uni = base.uni && step.uni;
        const Reg& B = uni ? base : varying(base, tb, x.L);
        const Reg& S = uni ? step : varying(step, ts, x.L);
        Reg& o = out(fr, op);
        size_num(o, t.elem, vlen, shape, uni, x.L);
        const int64_t lanes = uni ? 1 : x.L;
        for (int64_t l = 0; l < lanes; ++l)
            for (int64_t e = 0; e < vlen; ++e) {
                const size_t q = static_cast<size_t>(l * vlen + e);
                if (isf(t.elem)) o.f[q] = fround(t.elem, B.f[static_cast<size_t>(l)] + static_cast<double>(e) * S.f[static_cast<size_t>(l)]);
                else o.i[q] = wrap_int(t.elem, static_cast<int64_t>(static_cast<uint64_t>(B.i[static_cast<size_t>(l)]) + static_cast<uint64_t>(e) * static_cast<uint64_t>(S.i[static_cast<size_t>(l)])));
            }
    }

    static void mask_range(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Reg& lo = in(fr, op, 0);
        const Reg& hi = in(fr, op, 1);
        const Reg& st = in(fr, op, 2);
        const Type& t = result_type(op, fr, 0);
        std::vector<int64_t> shape;
        const int64_t vlen = vlen_of(t, fr, &shape);
        const bool uni = lo.uni && hi.uni && st.uni;
        Reg& o = out(fr, op);
        size_num(o, ScalarKind::I1, vlen, shape, uni, x.L);
        const int64_t lanes = uni ? 1 : x.L;
        for (int64_t l = 0; l < lanes; ++l) {
            auto g = [&](const Reg& r) { return r.i[r.uni ? 0 : static_cast<size_t>(l)]; };
            for (int64_t e = 0; e < vlen; ++e) o.i[static_cast<size_t>(l * vlen + e)] = g(lo) + e * g(st) < g(hi);
        }
    }

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

    static void extract(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const Reg& v = in(fr, op, 0);
        const bool uni = v.uni && indices_uniform(fr, op);
        const Type& t = result_type(op, fr, 0);
        std::vector<int64_t> shape;
        const int64_t vlen = vlen_of(t, fr, &shape);
        Reg& o = out(fr, op);
        size_num(o, v.elem, vlen, shape, uni, x.L);
        for (int64_t l = 0; l < (uni ? 1 : x.L); ++l) {
            if (!uni && !m.on(l)) continue;
            int64_t inner = 0;
            const int64_t at = leading_index(x, op, fr, v, l, inner);
            const size_t src = static_cast<size_t>((v.uni ? 0 : l * v.vlen) + at);
            for (int64_t e = 0; e < vlen; ++e) {
                if (isf(v.elem)) o.f[static_cast<size_t>(l * vlen + e)] = v.f[src + static_cast<size_t>(e)];
                else o.i[static_cast<size_t>(l * vlen + e)] = v.i[src + static_cast<size_t>(e)];
            }
        }
    }

    static void insert(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const Reg& s = in(fr, op, 0);
        const Reg& v = in(fr, op, 1);
        const bool uni = v.uni && s.uni && indices_uniform(fr, op);
        Reg tv;
        Reg o = uni ? v : varying(v, tv, x.L);
        for (int64_t l = 0; l < (uni ? 1 : x.L); ++l) {
            if (!uni && !m.on(l)) continue;
            int64_t inner = 0;
            const int64_t at = leading_index(x, op, fr, v, l, inner);
            const size_t dst = static_cast<size_t>(l * v.vlen + at);
            const size_t src = static_cast<size_t>(s.uni ? 0 : l * s.vlen);
            for (int64_t e = 0; e < s.vlen; ++e) {
                if (isf(v.elem)) o.f[dst + static_cast<size_t>(e)] = s.f[src + static_cast<size_t>(e)];
                else o.i[dst + static_cast<size_t>(e)] = s.i[src + static_cast<size_t>(e)];
            }
        }
        out(fr, op) = std::move(o);
    }

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

    static void vreduce(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Reg& v = in(fr, op, 0);
        const Reg& init = in(fr, op, 1);
        const std::string kind = red_kind(op);
        const bool uni = v.uni && init.uni;
        Reg& o = out(fr, op);
        Reg tmp;
        size_num(tmp, v.elem, 1, {}, uni, x.L);
        for (int64_t l = 0; l < (uni ? 1 : x.L); ++l) {
            const size_t il = init.uni ? 0 : static_cast<size_t>(l);
            int64_t ai = isf(v.elem) ? 0 : init.i[il];
            double af = isf(v.elem) ? init.f[il] : 0;
            const size_t base = static_cast<size_t>(v.uni ? 0 : l * v.vlen);
            for (int64_t e = 0; e < v.vlen; ++e) {
                bool ok;
                red_step(kind, v.elem, ai, af, isf(v.elem) ? 0 : v.i[base + static_cast<size_t>(e)], isf(v.elem) ? v.f[base + static_cast<size_t>(e)] : 0, ok);
                if (!ok) x.fail_at(op, -1, "unknown reduction kind '" + kind + "'");
            }
            if (isf(v.elem)) tmp.f[static_cast<size_t>(l)] = af;
            else tmp.i[static_cast<size_t>(l)] = ai;
        }
        o = std::move(tmp);
    }

    // --- subgroups (lockstep batches only) ----------------------------------------
    static int64_t sg_size(const Exec& x) { return std::max(1, x.sh.spec->facts.subgroup_size); }

    static void sg_reduce(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const Reg& v0 = in(fr, op, 0);
        const std::string kind = red_kind(op);
        const Attr* cs = op.attr("cluster_size");
        const int64_t sg = sg_size(x);
        // A lockstep batch is one workgroup: a workgroup reduction is one cluster.
        const int64_t cluster = op.name == "kernel.workgroup.reduce" ? x.L : cs ? cs->i : sg;
        if (cluster < 1) x.fail_at(op, -1, "cluster_size must be positive, got " + std::to_string(cluster));
        if (v0.uni && m.all && (kind == "minnumf" || kind == "maxnumf" || kind == "minsi" || kind == "maxsi" || kind == "minui" || kind == "maxui" || kind == "and" || kind == "or" || kind == "minimumf" || kind == "maximumf")) {
            out(fr, op) = v0;
            return;
        }
        Reg tv;
        const Reg& v = varying(v0, tv, x.L);
        Reg o;
        size_num(o, v.elem, v.vlen, v.vshape, false, x.L);
        for (int64_t l0 = 0; l0 < x.L; l0 += cluster) {
            for (int64_t e = 0; e < v.vlen; ++e) {
                int64_t ai = 0;
                double af = 0;
                bool first = true;
                for (int64_t l = l0; l < std::min(x.L, l0 + cluster); ++l) {
                    if (!m.on(l)) continue;
                    const size_t q = static_cast<size_t>(l * v.vlen + e);
                    if (first) {
                        ai = isf(v.elem) ? 0 : v.i[q];
                        af = isf(v.elem) ? v.f[q] : 0;
                        first = false;
                        continue;
                    }
                    bool ok;
                    red_step(kind, v.elem, ai, af, isf(v.elem) ? 0 : v.i[q], isf(v.elem) ? v.f[q] : 0, ok);
                    if (!ok) x.fail_at(op, -1, "unknown reduction kind '" + kind + "'");
                }
                for (int64_t l = l0; l < std::min(x.L, l0 + cluster); ++l) {
                    const size_t q = static_cast<size_t>(l * v.vlen + e);
                    if (isf(v.elem)) o.f[q] = af;
                    else o.i[q] = ai;
                }
            }
        }
        out(fr, op) = std::move(o);
    }

    static void sg_broadcast(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const Reg& v0 = in(fr, op, 0);
        if (v0.uni) {
            out(fr, op) = v0;
            return;
        }
        const bool first = op.name == "kernel.subgroup.broadcast.first";
        const int64_t sg = sg_size(x);
        Reg o;
        size_num(o, v0.elem, v0.vlen, v0.vshape, false, x.L);
        for (int64_t l0 = 0; l0 < x.L; l0 += sg) {
            int64_t src = -1;
            if (first) {
                for (int64_t l = l0; l < std::min(x.L, l0 + sg); ++l)
                    if (m.on(l)) { src = l; break; }
            } else {
                const Reg& s = in(fr, op, 1);
                src = l0 + s.i[s.uni ? 0 : static_cast<size_t>(l0)];
            }
            if (src < l0 || src >= std::min(x.L, l0 + sg)) src = l0;
            for (int64_t l = l0; l < std::min(x.L, l0 + sg); ++l)
                for (int64_t e = 0; e < v0.vlen; ++e) {
                    if (isf(v0.elem)) o.f[static_cast<size_t>(l * v0.vlen + e)] = v0.f[static_cast<size_t>(src * v0.vlen + e)];
                    else o.i[static_cast<size_t>(l * v0.vlen + e)] = v0.i[static_cast<size_t>(src * v0.vlen + e)];
                }
        }
        out(fr, op) = std::move(o);
    }

    static void sg_shuffle(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        Reg tv;
        const Reg& v = varying(in(fr, op, 0), tv, x.L);
        const Reg& s = in(fr, op, 1);
        const std::string mode = op.params.empty() ? "index" : op.params[0];
        const int64_t sg = sg_size(x);
        // The optional third operand narrows the exchange to segments of
        // `width` lanes (kernel defs: "active subgroup width"); the source
        // lane is found inside the segment, as CUDA's __shfl_*(.., width).
        const Reg* wr = op.operands.size() > 2 ? &in(fr, op, 2) : nullptr;
        Reg o, ok;
        size_num(o, v.elem, v.vlen, v.vshape, false, x.L);
        size_num(ok, ScalarKind::I1, 1, {}, false, x.L);
        for (int64_t l = 0; l < x.L; ++l) {
            int64_t w = wr ? wr->i[wr->uni ? 0 : static_cast<size_t>(l)] : sg;
            if (m.on(l) && (w < 1 || w > sg)) x.fail_at(op, l, "kernel.subgroup.shuffle width " + std::to_string(w) + " outside 1.." + std::to_string(sg));
            w = std::clamp<int64_t>(w, 1, sg);
            const int64_t base = l / sg * sg + (l % sg) / w * w, lane = (l % sg) % w;
            const int64_t arg = s.i[s.uni ? 0 : static_cast<size_t>(l)];
            int64_t src = mode == "xor" ? (lane ^ arg) : mode == "up" ? lane - arg : mode == "down" ? lane + arg : arg;
            const bool valid = src >= 0 && src < w && base + src < x.L && m.on(base + src);
            if (!valid) src = lane;
            ok.i[static_cast<size_t>(l)] = valid;
            for (int64_t e = 0; e < v.vlen; ++e) {
                const size_t d = static_cast<size_t>(l * v.vlen + e), q = static_cast<size_t>((base + src) * v.vlen + e);
                if (isf(v.elem)) o.f[d] = v.f[q];
                else o.i[d] = v.i[q];
            }
        }
        out(fr, op, 0) = std::move(o);
        if (op.results.size() > 1) out(fr, op, 1) = std::move(ok);
    }

    static void sg_vote(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        Reg tv;
        if (in(fr, op, 0).elem != ScalarKind::I1 || in(fr, op, 0).vlen != 1) x.fail_at(op, -1, "the vote's predicate must be an i1 value");
        const Reg& c = varying(in(fr, op, 0), tv, x.L);
        const std::string n = op.name;
        const std::string mode = !op.params.empty() ? op.params[0] : n.substr(n.rfind('.') + 1);
        const int64_t sg = n.rfind("kernel.workgroup.", 0) == 0 ? x.L : sg_size(x);
        const ScalarKind rk = result_type(op, fr, 0).elem;
        Reg o;
        size_num(o, rk, 1, {}, false, x.L);
        for (int64_t l0 = 0; l0 < x.L; l0 += sg) {
            uint64_t bits = 0;
            int64_t count = 0;
            bool all = true, any = false;
            for (int64_t l = l0; l < std::min(x.L, l0 + sg); ++l) {
                if (!m.on(l)) continue;
                const bool b = c.i[static_cast<size_t>(l)] != 0;
                if (b && l - l0 < 64) bits |= uint64_t{1} << (l - l0);
                count += b;
                all = all && b;
                any = any || b;
            }
            const int64_t r = mode == "ballot" ? wrap_int(rk, static_cast<int64_t>(bits))
                              : mode == "count" ? wrap_int(rk, count)
                              : mode == "all"   ? all
                                                : any;
            for (int64_t l = l0; l < std::min(x.L, l0 + sg); ++l) o.i[static_cast<size_t>(l)] = r;
        }
        out(fr, op) = std::move(o);
    }

    // --- bfp16 encodings, fragments, mma --------------------------------------------
    static void encoding_define(Exec& x, const Op& op, Frame& fr, const Mask&) {
        Reg& r = out(fr, op);
        r = Reg{};
        r.kind = RK::Enc;
        const Attr* p = op.attr("params");
        if (p && p->dict) {
            auto fmt = p->dict->find("element_format");
            if (fmt == p->dict->end() || fmt->second.s != "bfp16ebs8")
                x.fail_at(op, -1, "valid Loom, not executed by the emulator: encodings other than bfp16ebs8");
            auto rd_ = p->dict->find("rounding");
            r.even = rd_ != p->dict->end() && rd_->second.s.find("nearest_even") != std::string::npos;
        }
    }

    // A payload of bfp16ebs8 blocks: the values stay as floats (opaque to the
    // program); quantisation happens where the blocking is known.
    static void encode(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const Reg& v = in(fr, op, 0);
        const Reg& s = in(fr, op, 1);
        if (v.vlen % 8) x.fail_at(op, -1, "bfp16ebs8 needs a multiple of 8 elements, got " + std::to_string(v.vlen));
        (void)m;  // NaN and Inf are refused where the payload's matrix role is known
        const bool even = s.even;
        Reg& o = out(fr, op);  // assigned in place: the register keeps its storage between batches
        o = v;
        o.kind = RK::Payload;
        o.even = even;
    }

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

    static void decode(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const Reg& p = in(fr, op, 0);
        if (p.kind != RK::Payload) x.fail_at(op, -1, "operand is not a bfp16ebs8 payload");
        refuse_nonfinite(x, op, m, p, "", p.vlen);
        Reg o = p;
        o.kind = RK::Num;
        quantise(o.f.data(), o.uni ? 1 : x.L, o.vlen, 1, o.vlen, true, p.even);
        const ScalarKind to = result_type(op, fr, 0).elem;
        for (double& d : o.f) d = fround(to, d);
        o.elem = to;
        out(fr, op) = std::move(o);
    }

    static int64_t entry(Frame& fr, const IndexEntry& e) { return e.is_value() ? val(fr, e.value).i.at(0) : e.constant; }

    static void fragment(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const Reg& d = in(fr, op, 0);
        const std::string role = op.params.empty() ? "" : op.params[0];
        if (op.shape.size() != 2) x.fail_at(op, -1, "valid Loom, not executed by the emulator: fragments with a block count");
        Reg& o = out(fr, op);  // assigned in place: the register keeps its storage between batches
        o = d;
        o.kind = RK::Frag;
        o.role = role;
        o.rows = entry(fr, op.shape[0]);
        o.cols = entry(fr, op.shape[1]);
        // Both extents positive before their product is compared: [-8, -8] covers 64 values too.
        if (o.rows < 1 || o.cols < 1 || o.rows > d.vlen || o.cols > d.vlen || o.rows * o.cols != d.vlen)
            x.fail_at(op, -1, "fragment shape [" + std::to_string(o.rows) + ", " + std::to_string(o.cols) + "] does not cover the " + std::to_string(d.vlen) + " values");
        if (o.f.empty()) {  // integer data: keep as floats
            o.f.assign(o.i.begin(), o.i.end());
            o.i.clear();
        }
        if (d.kind == RK::Payload) {
            refuse_nonfinite(x, op, m, o, role, o.cols);
            // K is the blocked axis of both operands (payload_packing=target_fragment).
            const bool rows_blocked = role != "rhs";
            if ((rows_blocked ? o.cols : o.rows) % 8)
                x.fail_at(op, -1, "bfp16ebs8 blocks run along K, which is not a multiple of 8");
            quantise(o.f.data(), o.uni ? 1 : x.L, o.vlen, o.rows, o.cols, rows_blocked, d.even);
        }
    }

    static void mma(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Reg& a0 = in(fr, op, 0);
        const Reg& b0 = in(fr, op, 1);
        const Reg& c0 = in(fr, op, 2);
        if (a0.kind != RK::Frag || b0.kind != RK::Frag || c0.kind != RK::Frag) x.fail_at(op, -1, "operands must be vector.fragment values");
        const int64_t M = a0.rows, K = a0.cols, N = b0.cols;
        if (b0.rows != K || c0.rows != M || c0.cols != N) x.fail_at(op, -1, "fragment shapes do not chain: lhs [M, K], rhs [K, N], init [M, N]");
        Reg ta, tb, tc;
        const bool uni = a0.uni && b0.uni && c0.uni;
        const Reg& a = uni ? a0 : varying(a0, ta, x.L);
        const Reg& b = uni ? b0 : varying(b0, tb, x.L);
        const Reg& c = uni ? c0 : varying(c0, tc, x.L);
        const int64_t lanes = uni ? 1 : x.L;
        // Operand and product storage kept by the interpreter: a batch's
        // operands are hundreds of KiB, fresh pages for every call cost more
        // than the products.
        std::vector<uint16_t>& A = x.mma_a;
        std::vector<uint16_t>& B = x.mma_b;
        std::vector<float>& C = x.mma_c;
        A.resize(static_cast<size_t>(lanes * M * K));
        B.resize(static_cast<size_t>(lanes * K * N));
        C.resize(static_cast<size_t>(lanes * M * N));
        for (size_t e = 0; e < A.size(); ++e) A[e] = kernels::f32_bits_to_bf16(std::bit_cast<uint32_t>(static_cast<float>(a.f[e])));
        for (size_t e = 0; e < B.size(); ++e) B[e] = kernels::f32_bits_to_bf16(std::bit_cast<uint32_t>(static_cast<float>(b.f[e])));
        if (M == 8 && N == 8 && K == 8) kernels::matmul_bf16_8x8_batched(A.data(), B.data(), C.data(), static_cast<size_t>(lanes));
        else kernels::matmul_bf16(A.data(), B.data(), C.data(), static_cast<size_t>(lanes), static_cast<size_t>(M), static_cast<size_t>(K), static_cast<size_t>(N), nullptr, nullptr);
        Reg& o = out(fr, op);  // assigned in place: the register keeps its storage between batches
        o = c;
        o.role = "result";
        o.elem = ScalarKind::F32;
        for (size_t e = 0; e < C.size(); ++e) {
            const double init = o.f[e];
            o.f[e] = init == 0.0 ? C[e] : static_cast<double>(C[e] + static_cast<float>(init));
        }
    }

    static void fragment_store(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const Reg& p = in(fr, op, 0);
        const Reg& v = in(fr, op, 1);
        std::vector<int64_t> shape;
        for (const IndexEntry& e : op.shape) shape.push_back(entry(fr, e));
        int64_t n = 1;
        for (int64_t e : shape) n = e < 1 || e > p.vlen ? -1 : n * e;
        if (n != p.vlen) x.fail_at(op, -1, "the shape does not cover the fragment's " + std::to_string(p.vlen) + " values");
        if (isf(v.elem)) {
            vec_access(x, op, fr, m, v, nullptr, &p, shape);
            return;
        }
        Reg s = p;
        s.kind = RK::Num;
        s.i.resize(s.f.size());
        for (size_t e = 0; e < s.f.size(); ++e) s.i[e] = static_cast<int64_t>(s.f[e]);
        vec_access(x, op, fr, m, v, nullptr, &s, shape);
    }

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

    static void scf_if(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const Reg& c = in(fr, op, 0);
        const bool has_else = op.regions.size() > 1;
        auto results = [&](const Op* term, std::vector<Reg>& out_) {
            out_.clear();
            if (term)
                for (ValueId v : term->operands) out_.push_back(val(fr, v));
        };
        if (c.uni) {
            if (!m.any()) return;
            const Region* r = c.i[0] ? &op.regions[0] : (has_else ? &op.regions[1] : nullptr);
            if (!r) return;
            const Op* term = x.run_region(*r, fr, m);
            std::vector<Reg> res;
            results(term, res);
            for (size_t k = 0; k < op.results.size() && k < res.size(); ++k) out(fr, op, k) = std::move(res[k]);
            return;
        }
        // Every active lane agreeing is the common case (a guarded tail
        // only diverges in one batch): run one side under the same mask.
        int64_t on = 0, active = 0;
        for (int64_t l = 0; l < x.L; ++l)
            if (m.on(l)) {
                ++active;
                on += c.i[static_cast<size_t>(l)] != 0;
            }
        if (on == 0 || on == active) {
            const Region* r = on ? &op.regions[0] : (has_else ? &op.regions[1] : nullptr);
            if (!r || active == 0) {
                for (size_t k = 0; k < op.results.size(); ++k) {
                    const Type& t = result_type(op, fr, k);
                    std::vector<int64_t> shape;
                    size_num(out(fr, op, k), t.elem, vlen_of(t, fr, &shape), shape, true, x.L);
                }
                return;
            }
            const Op* term = x.run_region(*r, fr, m);
            std::vector<Reg> res;
            results(term, res);
            for (size_t k = 0; k < op.results.size() && k < res.size(); ++k) out(fr, op, k) = std::move(res[k]);
            return;
        }
        const Mask tm = narrow(x, m, c, true);
        const Mask em = narrow(x, m, c, false);
        std::vector<Reg> tr, er;
        if (tm.any()) results(x.run_region(op.regions[0], fr, tm), tr);
        if (has_else && em.any()) results(x.run_region(op.regions[1], fr, em), er);
        for (size_t k = 0; k < op.results.size(); ++k) {
            if (k >= tr.size() && k >= er.size()) {
                // Neither side ran (no active lane): a typed placeholder.
                const Type& t = result_type(op, fr, k);
                std::vector<int64_t> shape;
                size_num(out(fr, op, k), t.elem, vlen_of(t, fr, &shape), shape, true, x.L);
            } else if (k >= tr.size()) out(fr, op, k) = er[k];
            else if (k >= er.size()) out(fr, op, k) = tr[k];
            else merge(x, out(fr, op, k), tr[k], er[k], tm);
        }
    }

    // scf.switch: each lane runs the case whose key equals its selector, or
    // the default; results merge lane by lane.
    static void scf_switch(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const Reg& c = in(fr, op, 0);
        const Attr* keys = op.attr("case_keys");
        const size_t ncases = op.regions.size() - 1;
        auto region_of = [&](int64_t sel) -> size_t {
            for (size_t k = 0; k < ncases; ++k)
                if ((*keys->list)[k].i == sel) return k + 1;
            return 0;
        };
        auto results = [&](const Op* term, std::vector<Reg>& out_) {
            out_.clear();
            if (term)
                for (ValueId v : term->operands) out_.push_back(val(fr, v));
        };
        auto placeholders = [&] {
            for (size_t k = 0; k < op.results.size(); ++k) {
                const Type& t = result_type(op, fr, k);
                std::vector<int64_t> shape;
                size_num(out(fr, op, k), t.elem, vlen_of(t, fr, &shape), shape, true, x.L);
            }
        };
        if (c.uni) {
            if (!m.any()) return placeholders();
            std::vector<Reg> res;
            results(x.run_region(op.regions[region_of(c.i[0])], fr, m), res);
            for (size_t k = 0; k < op.results.size() && k < res.size(); ++k) out(fr, op, k) = std::move(res[k]);
            return;
        }
        std::vector<uint32_t> which(static_cast<size_t>(x.L), 0);
        std::vector<int64_t> lanes(op.regions.size(), 0);
        for (int64_t l = 0; l < x.L; ++l) {
            if (!m.on(l)) continue;
            const size_t r = region_of(c.i[static_cast<size_t>(l)]);
            which[static_cast<size_t>(l)] = static_cast<uint32_t>(r);
            ++lanes[r];
        }
        bool first = true;
        for (size_t r = 0; r < op.regions.size(); ++r) {
            if (!lanes[r]) continue;
            Mask rm;
            rm.all = false;
            rm.m.resize(static_cast<size_t>(x.L));
            for (int64_t l = 0; l < x.L; ++l) rm.m[static_cast<size_t>(l)] = m.on(l) && which[static_cast<size_t>(l)] == r;
            std::vector<Reg> res;
            results(x.run_region(op.regions[r], fr, rm), res);
            for (size_t k = 0; k < op.results.size() && k < res.size(); ++k) {
                if (first) out(fr, op, k) = std::move(res[k]);
                else {
                    Reg old = std::move(out(fr, op, k));
                    merge(x, out(fr, op, k), res[k], old, rm);
                }
            }
            first = false;
        }
        if (first) placeholders();
    }

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

    static void scf_for(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const Reg& lo = in(fr, op, 0);
        const Reg& hi = in(fr, op, 1);
        const Reg& st = in(fr, op, 2);
        const Region& body = op.regions.at(0);
        std::vector<Reg> cur;
        for (size_t k = 3; k < op.operands.size(); ++k) cur.push_back(in(fr, op, k));
        const ScalarKind ik = lo.elem == ScalarKind::None ? ScalarKind::Index : lo.elem;
        if (lo.uni && hi.uni && st.uni) {
            const int64_t s = st.i[0];
            if (s <= 0) x.fail_at(op, -1, "loop step must be positive, got " + std::to_string(s));
            if (m.any())
                for (int64_t iv = lo.i[0]; iv < hi.i[0]; iv += s) {
                    Reg& ivr = fr.regs[static_cast<size_t>(body.args.at(0))];
                    size_num(ivr, ik, 1, {}, true, x.L);
                    ivr.i[0] = iv;
                    for (size_t k = 0; k < cur.size(); ++k) fr.regs[static_cast<size_t>(body.args.at(k + 1))] = cur[k];
                    const Op* term = x.run_region(body, fr, m);
                    std::vector<Reg> next;
                    if (term)
                        for (ValueId v : term->operands) next.push_back(val(fr, v));
                    if (next.size() == cur.size()) carry(x, cur, next, m, true);
                }
        } else {
            Reg tl, th, ts;
            const Reg& LO = varying(lo, tl, x.L);
            const Reg& HI = varying(hi, th, x.L);
            const Reg& ST = varying(st, ts, x.L);
            Reg iv;
            size_num(iv, ik, 1, {}, false, x.L);
            iv.i = LO.i;
            for (int64_t l = 0; l < x.L; ++l)
                if (m.on(l) && ST.i[static_cast<size_t>(l)] <= 0) x.fail_at(op, l, "loop step must be positive");
            while (true) {
                Mask run;
                run.all = false;
                run.m.resize(static_cast<size_t>(x.L));
                bool any = false;
                for (int64_t l = 0; l < x.L; ++l) {
                    const bool on = m.on(l) && iv.i[static_cast<size_t>(l)] < HI.i[static_cast<size_t>(l)];
                    run.m[static_cast<size_t>(l)] = on;
                    any = any || on;
                }
                if (!any) break;
                fr.regs[static_cast<size_t>(body.args.at(0))] = iv;
                for (size_t k = 0; k < cur.size(); ++k) fr.regs[static_cast<size_t>(body.args.at(k + 1))] = cur[k];
                const Op* term = x.run_region(body, fr, run);
                std::vector<Reg> next;
                if (term)
                    for (ValueId v : term->operands) next.push_back(val(fr, v));
                if (next.size() == cur.size()) carry(x, cur, next, run, false);
                for (int64_t l = 0; l < x.L; ++l)
                    if (run.m[static_cast<size_t>(l)]) iv.i[static_cast<size_t>(l)] += ST.i[static_cast<size_t>(l)];
            }
        }
        for (size_t k = 0; k < op.results.size() && k < cur.size(); ++k) out(fr, op, k) = std::move(cur[k]);
    }

    static void scf_while(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const Region& before = op.regions.at(0);
        const Region& after = op.regions.at(1);
        std::vector<Reg> cur;
        for (size_t k = 0; k < op.operands.size(); ++k) cur.push_back(in(fr, op, k));
        std::vector<Reg> results(op.results.size());
        Mask run = m;
        bool first_exit = true;
        std::vector<uint8_t> done(static_cast<size_t>(x.L), 0);
        while (run.any()) {
            for (size_t k = 0; k < cur.size(); ++k) fr.regs[static_cast<size_t>(before.args.at(k))] = cur[k];
            const Op* cond = x.run_region(before, fr, run);
            if (!cond || cond->name != "scf.condition") x.fail_at(op, -1, "before-region must end in scf.condition");
            const Reg& c = val(fr, cond->operands.at(0));
            std::vector<Reg> fwd;
            for (size_t k = 1; k < cond->operands.size(); ++k) fwd.push_back(val(fr, cond->operands[k]));
            // Lanes whose condition is false leave with the forwarded values.
            Mask stay = c.uni ? (c.i[0] ? run : Mask{false, std::vector<uint8_t>(static_cast<size_t>(x.L), 0)}) : narrow(x, run, c, true);
            Mask leave;
            leave.all = false;
            leave.m.resize(static_cast<size_t>(x.L));
            for (int64_t l = 0; l < x.L; ++l) leave.m[static_cast<size_t>(l)] = run.on(l) && !stay.on(l);
            if (leave.any()) {
                for (size_t k = 0; k < results.size() && k < fwd.size(); ++k) {
                    if (first_exit) results[k] = fwd[k];
                    else {
                        Reg old = std::move(results[k]);
                        merge(x, results[k], fwd[k], old, leave);
                    }
                }
                first_exit = false;
            }
            if (!stay.any()) break;
            for (size_t k = 0; k < fwd.size() && k < after.args.size(); ++k) fr.regs[static_cast<size_t>(after.args[k])] = fwd[k];
            const Op* y = x.run_region(after, fr, stay);
            std::vector<Reg> next;
            if (y)
                for (ValueId v : y->operands) next.push_back(val(fr, v));
            if (next.size() == cur.size()) carry(x, cur, next, stay, false);
            run = stay;
        }
        for (size_t k = 0; k < op.results.size(); ++k) out(fr, op, k) = std::move(results[k]);
    }

    static void call_(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const Op* fn = nullptr;
        if (op.name == "template.apply") {
            auto it = x.sh.spec->template_choice.find(&op);
            if (it == x.sh.spec->template_choice.end()) x.fail_at(op, -1, "no template implementation was selected");
            fn = it->second;
        } else {
            fn = x.sh.spec->module->find(op.callee);
        }
        if (!has_body(fn)) x.fail_at(op, -1, "callee '@" + (fn ? fn->symbol : op.callee) + "' has no body");
        std::vector<Reg> args;
        for (ValueId v : op.operands) args.push_back(val(fr, v));
        std::vector<Reg> res = x.call(*fn, fn->regions[0], std::move(args), m);
        for (size_t k = 0; k < op.results.size() && k < res.size(); ++k) out(fr, op, k) = std::move(res[k]);
    }

    static void scf_select(Exec& x, const Op& op, Frame& fr, const Mask& m) { select(x, op, fr, m); }

    static void assert_(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const Reg& c = in(fr, op, 0);
        const Attr* msg = op.attr("message");
        for (int64_t l = 0; l < (c.uni ? 1 : x.L); ++l)
            if ((c.uni ? m.any() : m.on(l)) && c.i[static_cast<size_t>(l)] == 0)
                x.fail_at(op, c.uni ? -1 : l, "assertion failed" + (msg ? ": " + msg->s : std::string()));
    }

    // --- scans, exits, masked vectors, subviews and the smaller ops ---------------

    // kernel.subgroup.scan / kernel.workgroup.scan<kind> {mode, direction}:
    // active lanes combined in lane order (reverse: from the highest), one
    // step at a time in the value's type; exclusive results start from the
    // kind's identity. Inactive lanes keep their own value.
    static void scan(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const bool wg = op.name == "kernel.workgroup.scan";
        const std::string kind = red_kind(op);
        const Attr* mode = op.attr("mode");
        const Attr* dir = op.attr("direction");
        const bool exclusive = mode && mode->s == "exclusive";
        const bool reverse = dir && dir->s == "reverse";
        const Attr* cs = op.attr("cluster_size");
        const int64_t group = wg ? x.L : cs ? cs->i : sg_size(x);
        if (group < 1) x.fail_at(op, -1, "cluster_size must be positive, got " + std::to_string(group));
        Reg tv;
        const Reg& v = varying(in(fr, op, 0), tv, x.L);
        Reg o = v;
        const bool fl = isf(v.elem);
        int64_t id_i;
        double id_f;
        red_identity(kind, v.elem, id_i, id_f);
        for (int64_t l0 = 0; l0 < x.L; l0 += group) {
            const int64_t l1 = std::min(x.L, l0 + group);
            for (int64_t e = 0; e < v.vlen; ++e) {
                int64_t ai = id_i;
                double af = id_f;
                bool have = false;
                for (int64_t s = 0; s < l1 - l0; ++s) {
                    const int64_t l = reverse ? l1 - 1 - s : l0 + s;
                    if (!m.on(l)) continue;
                    const size_t q = static_cast<size_t>(l * v.vlen + e);
                    const int64_t bi = fl ? 0 : v.i[q];
                    const double bf = fl ? v.f[q] : 0;
                    if (exclusive) {
                        if (fl) o.f[q] = af;
                        else o.i[q] = ai;
                    }
                    if (!have) {
                        ai = bi, af = bf, have = true;
                    } else {
                        bool ok;
                        red_step(kind, v.elem, ai, af, bi, bf, ok);
                        if (!ok) x.fail_at(op, -1, "unknown scan kind '" + kind + "'");
                    }
                    if (!exclusive) {
                        if (fl) o.f[q] = af;
                        else o.i[q] = ai;
                    }
                }
            }
        }
        out(fr, op) = std::move(o);
    }

    // kernel.exit %c: the active lanes where %c holds leave the kernel.
    static void exit_(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const Reg& c = in(fr, op, 0);
        if (x.exited_.empty()) x.exited_.assign(static_cast<size_t>(x.L), 0);
        bool any = false;
        for (int64_t l = 0; l < x.L; ++l)
            if (m.on(l) && !x.exited_[static_cast<size_t>(l)] && c.i[c.uni ? 0 : static_cast<size_t>(l)]) {
                x.exited_[static_cast<size_t>(l)] = 1;
                any = true;
            }
        if (any) ++x.exit_epoch_;
    }

    // vector.gather %view[origin][%offsets] (.mask: , %mask, %passthrough) and
    // vector.scatter %value, %view[origin][%offsets] (.mask: , %mask): element
    // e of each lane touches the origin with its last coordinate moved by
    // offsets[e]. The origin must lie in the view; each moved coordinate must
    // stay inside the last axis (an error names the lane otherwise). Views are
    // dense here, so the move is offsets[e] elements from the origin's byte.
    static void gather_scatter(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const bool scatter = op.name.rfind("vector.scatter", 0) == 0;
        const bool masked = op.name.size() > 5 && op.name.compare(op.name.size() - 5, 5, ".mask") == 0;
        const Reg& v = in(fr, op, scatter ? 1 : 0);
        if (v.kind != RK::View) x.fail_at(op, -1, op.name + " needs a view operand");
        const size_t rank = v.dims.size();
        if (op.indices.size() != rank + 1 || !op.indices[rank].is_value())
            x.fail_at(op, -1, op.name + " takes %view[origin][%offsets]: " + std::to_string(rank) + " origin indices and one offset vector");
        const Reg& offs = val(fr, op.indices[rank].value);
        if (isf(offs.elem)) x.fail_at(op, -1, op.name + ": offsets must be integers");
        const Reg* mk = masked ? &in(fr, op, scatter ? 2 : 1) : nullptr;
        const Reg* pass = masked && !scatter ? &in(fr, op, 2) : nullptr;
        const Reg* value = scatter ? &in(fr, op, 0) : nullptr;
        const int64_t n = offs.vlen;
        if ((mk && mk->vlen != n) || (pass && pass->vlen != n) || (value && value->vlen != n))
            x.fail_at(op, -1, op.name + ": the offsets, mask and values differ in length");
        const int ib = x.sh.spec->facts.index_bits;
        const int es = elem_bytes(v.elem, ib);
        std::vector<IndexEntry> origin(op.indices.begin(), op.indices.begin() + static_cast<std::ptrdiff_t>(rank));
        std::vector<int64_t> a;
        bool uni = false;
        addresses(x, op, fr, m, v, origin, {}, es, a, uni, nullptr);
        BufObj& B = x.bufs[static_cast<size_t>(v.buf)];
        const IndexEntry& le = op.indices[rank - 1];
        const Reg* lr = le.is_value() ? &val(fr, le.value) : nullptr;
        const bool fl = isf(v.elem);
        Reg o;
        if (!scatter) {
            size_num(o, v.elem, n, offs.vshape, false, x.L);
            if (pass) {
                Reg tp;
                const Reg& P = varying(*pass, tp, x.L);
                if (fl) o.f = P.f;
                else o.i = P.i;
            }
        }
        for (int64_t l = 0; l < x.L; ++l) {
            if (!m.on(l)) continue;
            const int64_t base = a[static_cast<size_t>(uni ? 0 : l)];
            const int64_t last = lr ? lr->i[lr->uni ? 0 : static_cast<size_t>(l)] : le.constant;
            for (int64_t e = 0; e < n; ++e) {
                if (mk && !mk->i[static_cast<size_t>((mk->uni ? 0 : l * n) + e)]) continue;
                const int64_t d = offs.i[static_cast<size_t>((offs.uni ? 0 : l * n) + e)];
                if (last + d < 0 || last + d >= v.dims[rank - 1])
                    x.fail_at(op, l, op.name + " element " + std::to_string(e) + ": coordinate " + std::to_string(last + d) + " outside the last axis of extent " +
                                         std::to_string(v.dims[rank - 1]));
                const int64_t byte = base + d * es;
                if (byte < 0 || static_cast<uint64_t>(byte + es) > B.size)
                    x.fail_at(op, l, "bytes [" + std::to_string(byte) + ", " + std::to_string(byte + es) + ") outside " + B.name);
                track(x, op, B, l, byte, es, scatter);
                uint8_t* p = B.base + l * static_cast<int64_t>(B.stride) + byte;
                if (scatter) {
                    const size_t q = static_cast<size_t>((value->uni ? 0 : l * n) + e);
                    wr(v.elem, p, fl ? 0 : value->i[q], fl ? value->f[q] : 0.0, ib);
                } else {
                    const size_t q = static_cast<size_t>(l * n + e);
                    rd(v.elem, p, fl ? nullptr : &o.i[q], fl ? &o.f[q] : nullptr, ib);
                }
            }
        }
        if (!scatter) out(fr, op) = std::move(o);
    }

    // vector.load.mask %view[o], %mask, %passthru / vector.store.mask %x,
    // %view[o], %mask: the vector's axes on the view's trailing axes; only
    // the elements whose mask bit is set touch memory (and must be in
    // bounds), the others take the passthrough or leave memory alone.
    static void vector_masked(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const bool load = op.name == "vector.load.mask";
        const Reg& v = in(fr, op, load ? 0 : 1);
        const Reg& mk = in(fr, op, load ? 1 : 2);
        const Reg& data = in(fr, op, load ? 2 : 0);
        const int ib = x.sh.spec->facts.index_bits;
        const int es = elem_bytes(v.elem, ib);
        const std::vector<int64_t> vshape = data.vshape.empty() ? std::vector<int64_t>{data.vlen} : data.vshape;
        const size_t rank = v.dims.size(), r = vshape.size();
        if (op.indices.size() != rank) x.fail_at(op, -1, "index list has " + std::to_string(op.indices.size()) + " entries for a rank-" + std::to_string(rank) + " view");
        if (r > rank) x.fail_at(op, -1, "a rank-" + std::to_string(r) + " vector does not fit a rank-" + std::to_string(rank) + " view");
        if (mk.vlen != data.vlen) x.fail_at(op, -1, "the mask has " + std::to_string(mk.vlen) + " lanes for a vector of " + std::to_string(data.vlen));
        const std::vector<int64_t> strides = view_strides(v);
        BufObj& B = x.bufs[static_cast<size_t>(v.buf)];
        const bool fl = isf(v.elem);
        Reg o;
        if (load) {
            Reg tp;
            o = varying(data, tp, x.L);
        }
        std::vector<int64_t> pos(rank), at(rank);
        for (int64_t l = 0; l < x.L; ++l) {
            if (!m.on(l)) continue;
            for (size_t d = 0; d < rank; ++d) {
                const IndexEntry& ie = op.indices[d];
                pos[d] = ie.is_value() ? [&] { const Reg& q = val(fr, ie.value); return q.i[q.uni ? 0 : static_cast<size_t>(l)]; }() : ie.constant;
            }
            const int64_t off = v.off.size() == 1 ? v.off[0] : v.off[static_cast<size_t>(l)];
            for (int64_t e = 0; e < data.vlen; ++e) {
                if (!mk.i[static_cast<size_t>((mk.uni ? 0 : l * mk.vlen) + e)]) continue;
                int64_t rem = e, lin = 0;
                at = pos;
                for (size_t t = r; t-- > 0;) {
                    at[rank - r + t] += rem % vshape[t];
                    rem /= vshape[t];
                }
                for (size_t d = 0; d < rank; ++d) {
                    if (at[d] < 0 || at[d] >= v.dims[d])
                        x.fail_at(op, l, "vector element " + std::to_string(e) + " (mask set) at index " + std::to_string(at[d]) + " out of bounds for axis " + std::to_string(d) + " of extent " + std::to_string(v.dims[d]));
                    lin += at[d] * strides[d];
                }
                const int64_t byte = off + lin * es;
                if (byte < 0 || static_cast<uint64_t>(byte + es) > B.size)
                    x.fail_at(op, l, "bytes [" + std::to_string(byte) + ", " + std::to_string(byte + es) + ") outside " + B.name + " of " + std::to_string(B.size) + " bytes");
                track(x, op, B, l, byte, es, !load);
                uint8_t* p = B.base + l * static_cast<int64_t>(B.stride) + byte;
                const size_t q = static_cast<size_t>(l * data.vlen + e);
                if (load) {
                    rd(v.elem, p, fl ? nullptr : &o.i[q], fl ? &o.f[q] : nullptr, ib);
                } else {
                    const size_t sq = static_cast<size_t>((data.uni ? 0 : l * data.vlen) + e);
                    wr(v.elem, p, fl ? 0 : data.i[sq], fl ? data.f[sq] : 0, ib);
                }
            }
        }
        if (load) out(fr, op) = std::move(o);
    }

    // vector.broadcast %s: the source's axes aligned with the result's
    // trailing axes, extent-1 axes (and missing leading ones) repeated.
    static void vbroadcast(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Reg& s = in(fr, op, 0);
        const Type& t = result_type(op, fr, 0);
        std::vector<int64_t> shape;
        const int64_t vlen = vlen_of(t, fr, &shape);
        const std::vector<int64_t> sshape = s.vshape.empty() ? std::vector<int64_t>{s.vlen} : s.vshape;
        if (sshape.size() > shape.size()) x.fail_at(op, -1, "cannot broadcast a rank-" + std::to_string(sshape.size()) + " vector to rank " + std::to_string(shape.size()));
        const size_t lead = shape.size() - sshape.size();
        for (size_t d = 0; d < sshape.size(); ++d)
            if (sshape[d] != 1 && sshape[d] != shape[lead + d]) x.fail_at(op, -1, "source extent " + std::to_string(sshape[d]) + " does not broadcast to " + std::to_string(shape[lead + d]));
        std::vector<int64_t> src(static_cast<size_t>(vlen));
        for (int64_t e = 0; e < vlen; ++e) {
            int64_t rem = e, si = 0, sstride = 1;
            for (size_t d = shape.size(); d-- > lead;) {
                const int64_t c = rem % shape[d];
                rem /= shape[d];
                const int64_t se = sshape[d - lead];
                si += (se == 1 ? 0 : c) * sstride;
                sstride *= se;
            }
            src[static_cast<size_t>(e)] = si;
        }
        Reg o;
        size_num(o, s.elem, vlen, shape, s.uni, x.L);
        for (int64_t l = 0; l < (s.uni ? 1 : x.L); ++l)
            for (int64_t e = 0; e < vlen; ++e) {
                const size_t d = static_cast<size_t>(l * vlen + e), q = static_cast<size_t>(l * s.vlen + src[static_cast<size_t>(e)]);
                if (isf(s.elem)) o.f[d] = s.f[q];
                else o.i[d] = s.i[q];
            }
        out(fr, op) = std::move(o);
    }

    // vector.from_elements %a, %b, ...: lane e of the vector is operand e.
    static void from_elements(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Type& t = result_type(op, fr, 0);
        std::vector<int64_t> shape;
        const int64_t vlen = vlen_of(t, fr, &shape);
        if (static_cast<int64_t>(op.operands.size()) != vlen) x.fail_at(op, -1, std::to_string(op.operands.size()) + " elements for a vector of " + std::to_string(vlen));
        bool uni = true;
        for (size_t k = 0; k < op.operands.size(); ++k) uni = uni && in(fr, op, k).uni;
        Reg o;
        size_num(o, t.elem, vlen, shape, uni, x.L);
        for (int64_t e = 0; e < vlen; ++e) {
            const Reg& a = in(fr, op, static_cast<size_t>(e));
            for (int64_t l = 0; l < (uni ? 1 : x.L); ++l) {
                const size_t q = static_cast<size_t>(a.uni ? 0 : l), d = static_cast<size_t>(l * vlen + e);
                if (isf(t.elem)) o.f[d] = a.f[q];
                else o.i[d] = a.i[q];
            }
        }
        out(fr, op) = std::move(o);
    }

    // vector.empty, vector.poison, scalar.poison: contents nobody may read
    // (the emulator gives zeros).
    static void undefined(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Type& t = result_type(op, fr, 0);
        std::vector<int64_t> shape;
        const int64_t vlen = vlen_of(t, fr, &shape);
        size_num(out(fr, op), t.elem, vlen, shape, true, x.L);
    }

    // vector.dotf %a, %b[, %init]: a chain of fmaf in lane order from %init
    // (+0 without one), each step rounded once to the result type.
    static void dotf(Exec& x, const Op& op, Frame& fr, const Mask&) {
        if (op.operands.size() < 2 || op.operands.size() > 3) x.fail_at(op, -1, "vector.dotf takes two vectors and an optional accumulator");
        const Reg& a = in(fr, op, 0);
        const Reg& b = in(fr, op, 1);
        const Reg* c = op.operands.size() == 3 ? &in(fr, op, 2) : nullptr;
        if (a.vlen != b.vlen) x.fail_at(op, -1, "vector.dotf operands have " + std::to_string(a.vlen) + " and " + std::to_string(b.vlen) + " lanes");
        const ScalarKind k = result_type(op, fr, 0).elem;
        const bool uni = a.uni && b.uni && (!c || c->uni);
        Reg o;
        size_num(o, k, 1, {}, uni, x.L);
        for (int64_t l = 0; l < (uni ? 1 : x.L); ++l) {
            double acc = c ? c->f[c->uni ? 0 : static_cast<size_t>(l)] : 0.0;
            const size_t pa = static_cast<size_t>(a.uni ? 0 : l * a.vlen), pb = static_cast<size_t>(b.uni ? 0 : l * b.vlen);
            for (int64_t e = 0; e < a.vlen; ++e) {
                const double p = a.f[pa + static_cast<size_t>(e)], q = b.f[pb + static_cast<size_t>(e)];
                acc = k == ScalarKind::F64 ? std::fma(p, q, acc)
                                           : fround(k, std::fmaf(static_cast<float>(p), static_cast<float>(q), static_cast<float>(acc)));
            }
            o.f[static_cast<size_t>(l)] = acc;
        }
        out(fr, op) = std::move(o);
    }

    // scalar.bitfield.extractu/extracts %x {offset, width}: bits
    // [offset, offset + width) of %x, zero- or sign-extended.
    static void bitfield(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Reg& a = in(fr, op, 0);
        const Attr* oa = op.attr("offset");
        const Attr* wa = op.attr("width");
        if (!oa || !wa) x.fail_at(op, -1, "bitfield extraction needs {offset, width}");
        const int bits = bits_of(a.elem);
        const int64_t off = oa->i, width = wa->i;
        if (off < 0 || width < 1 || off + width > bits) x.fail_at(op, -1, "bitfield [" + std::to_string(off) + ", " + std::to_string(off + width) + ") outside a " + std::to_string(bits) + "-bit value");
        const bool sign = op.name == "scalar.bitfield.extracts";
        const ScalarKind k = a.elem;
        un<int64_t, int64_t>(x, out(fr, op), a, k, [=](int64_t p) {
            uint64_t f = uval(k, p) >> off;
            if (width < 64) f &= (uint64_t{1} << width) - 1;
            int64_t r = static_cast<int64_t>(f);
            if (sign && width < 64 && (f >> (width - 1)) & 1) r = static_cast<int64_t>(f | ~((uint64_t{1} << width) - 1));
            return wrap_int(k, r);
        });
    }

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
    static void vslice(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const Reg& v = in(fr, op, 0);
        const std::vector<int64_t> ss = shape_of(v);
        std::vector<int64_t> shape;
        const int64_t vlen = vlen_of(result_type(op, fr, 0), fr, &shape);
        if (shape.size() != ss.size() || op.indices.size() != ss.size())
            x.fail_at(op, -1, "vector.slice keeps the source's rank " + std::to_string(ss.size()) + " and takes one offset per axis");
        const bool uni = v.uni && indices_uniform(fr, op);
        std::vector<std::vector<int64_t>> offs(static_cast<size_t>(uni ? 1 : x.L), std::vector<int64_t>(ss.size()));
        for (int64_t l = 0; l < (uni ? 1 : x.L); ++l)
            for (size_t d = 0; d < ss.size(); ++d) {
                const IndexEntry& ie = op.indices[d];
                int64_t o = ie.constant;
                if (ie.is_value()) {
                    const Reg& r = val(fr, ie.value);
                    o = r.i[r.uni ? 0 : static_cast<size_t>(l)];
                }
                if ((uni || m.on(l)) && (o < 0 || o + shape[d] > ss[d]))
                    x.fail_at(op, uni ? -1 : l, "vector.slice of " + std::to_string(shape[d]) + " lanes at offset " + std::to_string(o) +
                                                    " on axis " + std::to_string(d) + " leaves the source extent " + std::to_string(ss[d]));
                offs[static_cast<size_t>(l)][d] = std::clamp<int64_t>(o, 0, ss[d] - shape[d]);
            }
        std::vector<int64_t> c;
        out(fr, op) = gather_elems(x, {&v}, uni, vlen, shape, [&](int64_t l, int64_t e) {
            unravel(e, shape, c);
            for (size_t d = 0; d < c.size(); ++d) c[d] += offs[static_cast<size_t>(l)][d];
            return std::pair<int, int64_t>{0, ravel(c, ss)};
        });
    }

    // vector.concat<axis> %a, %b, ...: the sources one after another along the axis.
    static void vconcat(Exec& x, const Op& op, Frame& fr, const Mask&) {
        std::vector<const Reg*> ins;
        bool uni = true;
        for (size_t k = 0; k < op.operands.size(); ++k) {
            ins.push_back(&in(fr, op, k));
            uni = uni && ins.back()->uni;
        }
        std::vector<int64_t> shape;
        const int64_t vlen = vlen_of(result_type(op, fr, 0), fr, &shape);
        const int64_t ax = axis_param(x, op, shape.size());
        std::vector<std::vector<int64_t>> ss;
        int64_t total = 0;
        for (const Reg* r : ins) {
            ss.push_back(shape_of(*r));
            bool fits = ss.back().size() == shape.size();
            for (size_t d = 0; fits && d < shape.size(); ++d) fits = static_cast<int64_t>(d) == ax || ss.back()[d] == shape[d];
            if (!fits || r->elem != ins[0]->elem) x.fail_at(op, -1, "vector.concat sources must match the result on every axis but " + std::to_string(ax));
            total += ss.back()[static_cast<size_t>(ax)];
        }
        if (total != shape[static_cast<size_t>(ax)]) x.fail_at(op, -1, "vector.concat sources give " + std::to_string(total) + " lanes on axis " + std::to_string(ax) + ", the result has " + std::to_string(shape[static_cast<size_t>(ax)]));
        std::vector<int64_t> c;
        out(fr, op) = gather_elems(x, ins, uni, vlen, shape, [&](int64_t, int64_t e) {
            unravel(e, shape, c);
            int s = 0;
            while (c[static_cast<size_t>(ax)] >= ss[static_cast<size_t>(s)][static_cast<size_t>(ax)]) c[static_cast<size_t>(ax)] -= ss[static_cast<size_t>(s++)][static_cast<size_t>(ax)];
            return std::pair<int, int64_t>{s, ravel(c, ss[static_cast<size_t>(s)])};
        });
    }

    // vector.transpose<[p...]>: result axis i is source axis p[i].
    static void vtranspose(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Reg& v = in(fr, op, 0);
        const std::vector<int64_t> ss = shape_of(v);
        const std::vector<int64_t> p = int_param(x, op, 0);
        std::vector<int64_t> shape;
        const int64_t vlen = vlen_of(result_type(op, fr, 0), fr, &shape);
        std::vector<int> seen(ss.size(), 0);
        bool ok = p.size() == ss.size() && shape.size() == ss.size();
        for (size_t i = 0; ok && i < p.size(); ++i) ok = p[i] >= 0 && p[i] < static_cast<int64_t>(ss.size()) && !seen[static_cast<size_t>(p[i])]++ && shape[i] == ss[static_cast<size_t>(p[i])];
        if (!ok) x.fail_at(op, -1, "vector.transpose<" + op.params[0] + "> is not a permutation of the source axes giving the result shape");
        std::vector<int64_t> c, sc(ss.size());
        out(fr, op) = gather_elems(x, {&v}, v.uni, vlen, shape, [&](int64_t, int64_t e) {
            unravel(e, shape, c);
            for (size_t i = 0; i < p.size(); ++i) sc[static_cast<size_t>(p[i])] = c[i];
            return std::pair<int, int64_t>{0, ravel(sc, ss)};
        });
    }

    // vector.shuffle<[s...]> %v: result lane i is source lane s[i].
    static void vshuffle(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Reg& v = in(fr, op, 0);
        const std::vector<int64_t> s = int_param(x, op, 0);
        if (static_cast<int64_t>(s.size()) != v.vlen) x.fail_at(op, -1, "vector.shuffle lists " + std::to_string(s.size()) + " lanes for a vector of " + std::to_string(v.vlen));
        for (int64_t q : s)
            if (q < 0 || q >= v.vlen) x.fail_at(op, -1, "vector.shuffle source lane " + std::to_string(q) + " outside a vector of " + std::to_string(v.vlen));
        out(fr, op) = gather_elems(x, {&v}, v.uni, v.vlen, v.vshape, [&](int64_t, int64_t e) { return std::pair<int, int64_t>{0, s[static_cast<size_t>(e)]}; });
    }

    // vector.interleave<axis> %even, %odd: even coordinates along the axis from %even.
    static void vinterleave(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Reg& a = in(fr, op, 0);
        const Reg& b = in(fr, op, 1);
        const std::vector<int64_t> ss = shape_of(a);
        if (shape_of(b) != ss || a.elem != b.elem) x.fail_at(op, -1, "vector.interleave takes two vectors of one type");
        const int64_t ax = axis_param(x, op, ss.size());
        std::vector<int64_t> shape = ss;
        shape[static_cast<size_t>(ax)] *= 2;
        std::vector<int64_t> c;
        out(fr, op) = gather_elems(x, {&a, &b}, a.uni && b.uni, a.vlen * 2, shape, [&](int64_t, int64_t e) {
            unravel(e, shape, c);
            const int s = static_cast<int>(c[static_cast<size_t>(ax)] % 2);
            c[static_cast<size_t>(ax)] /= 2;
            return std::pair<int, int64_t>{s, ravel(c, ss)};
        });
    }

    // %even, %odd = vector.deinterleave<axis> %v.
    static void vdeinterleave(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Reg& v = in(fr, op, 0);
        const std::vector<int64_t> ss = shape_of(v);
        const int64_t ax = axis_param(x, op, ss.size());
        if (ss[static_cast<size_t>(ax)] % 2) x.fail_at(op, -1, "vector.deinterleave of an odd extent " + std::to_string(ss[static_cast<size_t>(ax)]));
        std::vector<int64_t> shape = ss;
        shape[static_cast<size_t>(ax)] /= 2;
        std::vector<int64_t> c;
        for (size_t j = 0; j < op.results.size() && j < 2; ++j) {
            Reg o = gather_elems(x, {&v}, v.uni, v.vlen / 2, shape, [&](int64_t, int64_t e) {
                unravel(e, shape, c);
                c[static_cast<size_t>(ax)] = 2 * c[static_cast<size_t>(ax)] + static_cast<int64_t>(j);
                return std::pair<int, int64_t>{0, ravel(c, ss)};
            });
            out(fr, op, j) = std::move(o);
        }
    }

    // vector.reduce.axes<kind> %v, %init axes [a...]: the listed axes folded
    // in row-major order onto %init, the other axes kept in order.
    static void vreduce_axes(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Reg& v = in(fr, op, 0);
        const Reg& init = in(fr, op, 1);
        const std::vector<int64_t> ss = shape_of(v);
        const Attr* aa = op.attr("axes");
        if (!aa || aa->kind != Attr::Kind::List) x.fail_at(op, -1, "vector.reduce.axes needs 'axes [..]'");
        std::vector<uint8_t> red(ss.size(), 0);
        for (const Attr& a : *aa->list) {
            if (a.kind != Attr::Kind::Int || a.i < 0 || a.i >= static_cast<int64_t>(ss.size()) || red[static_cast<size_t>(a.i)]++)
                x.fail_at(op, -1, "vector.reduce.axes: axes must be distinct axes of a rank-" + std::to_string(ss.size()) + " vector");
        }
        std::vector<int64_t> keep_shape, red_shape;
        for (size_t d = 0; d < ss.size(); ++d) (red[d] ? red_shape : keep_shape).push_back(ss[d]);
        int64_t nk = 1, nr = 1;
        for (int64_t e : keep_shape) nk *= e;
        for (int64_t e : red_shape) nr *= e;
        if (init.vlen != nk) x.fail_at(op, -1, "vector.reduce.axes: the init has " + std::to_string(init.vlen) + " lanes, the kept axes " + std::to_string(nk));
        const std::string kind = red_kind(op);
        if (isf(v.elem) != isf(init.elem)) x.fail_at(op, -1, "vector.reduce.axes: the init's element type differs from the source's");
        const bool uni = v.uni && init.uni;
        Reg o;
        size_num(o, v.elem, nk, keep_shape.empty() ? std::vector<int64_t>{} : keep_shape, uni, x.L);
        if (keep_shape.empty()) o.vshape.clear();
        std::vector<int64_t> kc, rc, c(ss.size());
        for (int64_t l = 0; l < (uni ? 1 : x.L); ++l)
            for (int64_t k = 0; k < nk; ++k) {
                unravel(k, keep_shape, kc);
                const size_t ip = static_cast<size_t>((init.uni ? 0 : l * init.vlen) + k);
                int64_t ai = isf(v.elem) ? 0 : init.i[ip];
                double af = isf(v.elem) ? init.f[ip] : 0;
                for (int64_t r = 0; r < nr; ++r) {
                    unravel(r, red_shape, rc);
                    size_t ki = 0, ri = 0;
                    for (size_t d = 0; d < ss.size(); ++d) c[d] = red[d] ? rc[ri++] : kc[ki++];
                    const size_t p = static_cast<size_t>((v.uni ? 0 : l * v.vlen) + ravel(c, ss));
                    bool ok;
                    red_step(kind, v.elem, ai, af, isf(v.elem) ? 0 : v.i[p], isf(v.elem) ? v.f[p] : 0, ok);
                    if (!ok) x.fail_at(op, -1, "unknown reduction kind '" + kind + "'");
                }
                const size_t d = static_cast<size_t>(l * nk + k);
                if (isf(v.elem)) o.f[d] = af;
                else o.i[d] = ai;
            }
        out(fr, op) = std::move(o);
    }

    static int64_t bit_attr(Exec& x, const Op& op, const char* name) {
        const Attr* a = op.attr(name);
        if (!a || a->kind != Attr::Kind::Int) x.fail_at(op, -1, op.name + " needs {" + name + " = N}");
        return a->i;
    }

    // vector.bitfield.extractu/extracts %v {offset, width}: each lane's field,
    // zero- or sign-extended to the result's element type.
    static void vbitfield(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Reg& a = in(fr, op, 0);
        const int64_t off = bit_attr(x, op, "offset"), width = bit_attr(x, op, "width");
        const ScalarKind rk = result_type(op, fr, 0).elem;
        if (off < 0 || width < 1 || off + width > bits_of(a.elem) || width > bits_of(rk))
            x.fail_at(op, -1, "bitfield [" + std::to_string(off) + ", " + std::to_string(off + width) + ") does not fit " + scalar_name(a.elem) + " lanes and " + scalar_name(rk) + " results");
        if (isf(a.elem) || isf(rk)) x.fail_at(op, -1, op.name + " works on integer lanes");
        const bool sign = op.name == "vector.bitfield.extracts";
        Reg o;
        size_num(o, rk, a.vlen, a.vshape, a.uni, x.L);
        for (size_t q = 0; q < a.i.size(); ++q) {
            uint64_t f = uval(a.elem, a.i[q]) >> off;
            if (width < 64) f &= (uint64_t{1} << width) - 1;
            int64_t r = static_cast<int64_t>(f);
            if (sign && width < 64 && (f >> (width - 1)) & 1) r = static_cast<int64_t>(f | ~((uint64_t{1} << width) - 1));
            o.i[q] = wrap_int(rk, r);
        }
        out(fr, op) = std::move(o);
    }

    // vector.bitfield.insert %field into %base {offset, width}.
    static void vbitfield_insert(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Reg& f = in(fr, op, 0);
        const Reg& b = in(fr, op, 1);
        const int64_t off = bit_attr(x, op, "offset"), width = bit_attr(x, op, "width");
        if (isf(f.elem) || isf(b.elem) || off < 0 || width < 1 || off + width > bits_of(b.elem) || width > bits_of(f.elem) || f.vlen != b.vlen)
            x.fail_at(op, -1, "bitfield [" + std::to_string(off) + ", " + std::to_string(off + width) + ") does not fit the operands");
        const bool uni = f.uni && b.uni;
        Reg o;
        size_num(o, b.elem, b.vlen, b.vshape, uni, x.L);
        const uint64_t low = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
        for (int64_t l = 0; l < (uni ? 1 : x.L); ++l)
            for (int64_t e = 0; e < b.vlen; ++e) {
                const uint64_t fv = uval(f.elem, f.i[static_cast<size_t>((f.uni ? 0 : l * f.vlen) + e)]) & low;
                const uint64_t bv = uval(b.elem, b.i[static_cast<size_t>((b.uni ? 0 : l * b.vlen) + e)]);
                o.i[static_cast<size_t>(l * b.vlen + e)] = wrap_int(b.elem, static_cast<int64_t>((bv & ~(low << off)) | (fv << off)));
            }
        out(fr, op) = std::move(o);
    }

    // vector.bitpack<w> / bitunpacku<w> / bitunpacks<w>: lanes to and from a
    // little-endian bitstream (Note [Vector layout ops]).
    static void vbitpack(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Reg& a = in(fr, op, 0);
        const std::vector<int64_t> wp = int_param(x, op, 0);
        std::vector<int64_t> shape;
        const Type& rt = result_type(op, fr, 0);
        const int64_t vlen = vlen_of(rt, fr, &shape);
        const ScalarKind rk = rt.elem;
        const bool pack = op.name == "vector.bitpack";
        const bool sign = op.name == "vector.bitunpacks";
        const int64_t w = wp.size() == 1 ? wp[0] : 0;
        const int sb = bits_of(a.elem), rb = bits_of(rk);
        if (isf(a.elem) || isf(rk)) x.fail_at(op, -1, op.name + " works on integer lanes");
        const int64_t field_lanes = pack ? a.vlen : vlen, store_lanes = pack ? vlen : a.vlen, store_bits = pack ? rb : sb;
        if (w < 1 || w > (pack ? sb : rb) || w > 64 || field_lanes * w != store_lanes * store_bits)
            x.fail_at(op, -1, op.name + "<" + (op.params.empty() ? "" : op.params[0]) + ">: " + std::to_string(field_lanes) + " fields of " + std::to_string(w) +
                                  " bits do not fill " + std::to_string(store_lanes) + " " + std::to_string(store_bits) + "-bit lanes");
        Reg o;
        size_num(o, rk, vlen, shape, a.uni, x.L);
        for (int64_t l = 0; l < (a.uni ? 1 : x.L); ++l) {
            const int64_t* src = a.i.data() + (a.uni ? 0 : l * a.vlen);
            int64_t* dst = o.i.data() + l * vlen;
            auto bit = [&](int64_t lane_bits, int64_t j) { return (uval(a.elem, src[j / lane_bits]) >> (j % lane_bits)) & 1; };
            for (int64_t e = 0; e < vlen; ++e) {
                uint64_t v = 0;
                const int64_t n = pack ? rb : w;
                for (int64_t b = 0; b < n; ++b) {
                    const int64_t j = e * n + b;  // stream bit
                    v |= static_cast<uint64_t>(pack ? (((uval(a.elem, src[j / w]) >> (j % w)) & 1)) : bit(sb, j)) << b;
                }
                int64_t r = static_cast<int64_t>(v);
                if (sign && n < 64 && (v >> (n - 1)) & 1) r = static_cast<int64_t>(v | ~((uint64_t{1} << n) - 1));
                dst[e] = wrap_int(rk, r);
            }
        }
        out(fr, op) = std::move(o);
    }

    // Signedness of a dot kind's operand: "s8u8" → lhs signed, rhs unsigned.
    static bool dot_signed(const std::string& kind, int which) {
        const size_t half = kind.size() / 2;
        return (which == 0 ? kind.substr(0, half) : kind.substr(half))[0] == 's';
    }

    // vector.dot4i<kind> / dot8i4<kind> / dot2f %lhs, %rhs, %acc (Note [Vector layout ops]).
    static void vdot_grouped(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Reg& a = in(fr, op, 0);
        const Reg& b = in(fr, op, 1);
        const Reg& c = in(fr, op, 2);
        const bool f2 = op.name == "vector.dot2f", i4 = op.name == "vector.dot8i4";
        const std::string kind = op.params.empty() ? "" : op.params[0];
        static const std::set<std::string> k4 = {"s8s8", "u8s8", "s8u8", "u8u8"}, k8 = {"s4s4", "u4s4", "s4u4", "u4u4"};
        if (!f2 && !(i4 ? k8 : k4).count(kind)) x.fail_at(op, -1, op.name + ": unknown signedness kind <" + kind + ">");
        const int64_t G = f2 ? 2 : i4 ? 1 : 4;
        if (isf(a.elem) != f2 || isf(b.elem) != f2 || isf(c.elem) != f2)
            x.fail_at(op, -1, op.name + (f2 ? " takes float sources and accumulator" : " takes integer sources and accumulator"));
        if (a.vlen != b.vlen || a.vlen != c.vlen * G || a.elem != b.elem)
            x.fail_at(op, -1, op.name + ": " + std::to_string(a.vlen) + " and " + std::to_string(b.vlen) + " source lanes for " + std::to_string(c.vlen) + " accumulator lanes");
        const bool sa = !f2 && dot_signed(kind, 0), sb = !f2 && dot_signed(kind, 1);
        const bool uni = a.uni && b.uni && c.uni;
        Reg o;
        size_num(o, c.elem, c.vlen, c.vshape, uni, x.L);
        for (int64_t l = 0; l < (uni ? 1 : x.L); ++l)
            for (int64_t r = 0; r < c.vlen; ++r) {
                const size_t pa = static_cast<size_t>((a.uni ? 0 : l * a.vlen) + r * G), pb = static_cast<size_t>((b.uni ? 0 : l * b.vlen) + r * G);
                const size_t pc = static_cast<size_t>((c.uni ? 0 : l * c.vlen) + r), d = static_cast<size_t>(l * c.vlen + r);
                if (f2) {
                    float acc = static_cast<float>(c.f[pc]);
                    for (int64_t g = 0; g < G; ++g) acc = std::fmaf(static_cast<float>(a.f[pa + static_cast<size_t>(g)]), static_cast<float>(b.f[pb + static_cast<size_t>(g)]), acc);
                    o.f[d] = acc;
                    continue;
                }
                int64_t acc = c.i[pc];
                if (i4) {
                    const uint64_t wa = uval(a.elem, a.i[pa]), wb = uval(b.elem, b.i[pb]);
                    for (int k = 0; k < 8; ++k) {
                        int64_t p = static_cast<int64_t>((wa >> (4 * k)) & 15), q = static_cast<int64_t>((wb >> (4 * k)) & 15);
                        if (sa && p >= 8) p -= 16;
                        if (sb && q >= 8) q -= 16;
                        acc += p * q;
                    }
                } else {
                    for (int64_t g = 0; g < G; ++g) {
                        const int64_t p = sa ? a.i[pa + static_cast<size_t>(g)] : static_cast<int64_t>(uval(a.elem, a.i[pa + static_cast<size_t>(g)]));
                        const int64_t q = sb ? b.i[pb + static_cast<size_t>(g)] : static_cast<int64_t>(uval(b.elem, b.i[pb + static_cast<size_t>(g)]));
                        acc += p * q;
                    }
                }
                o.i[d] = wrap_int(c.elem, acc);
            }
        out(fr, op) = std::move(o);
    }

    // vector.table.lookup %table[%indices]: lane e is table[indices[e]].
    static void table_lookup(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const Reg& t = in(fr, op, 0);
        if (op.indices.size() != 1 || !op.indices[0].is_value()) x.fail_at(op, -1, "vector.table.lookup takes one index vector: %table[%indices]");
        const Reg& ix = val(fr, op.indices[0].value);
        if (isf(ix.elem)) x.fail_at(op, -1, "vector.table.lookup indices must be integers");
        const bool uni = t.uni && ix.uni;
        for (int64_t l = 0; l < (uni ? 1 : x.L); ++l) {
            if (!uni && !m.on(l)) continue;
            for (int64_t e = 0; e < ix.vlen; ++e) {
                const int64_t q = ix.i[static_cast<size_t>((ix.uni ? 0 : l * ix.vlen) + e)];
                if (q < 0 || q >= t.vlen) x.fail_at(op, uni ? -1 : l, "vector.table.lookup index " + std::to_string(q) + " outside a table of " + std::to_string(t.vlen));
            }
        }
        out(fr, op) = gather_elems(x, {&t, &ix}, uni, ix.vlen, ix.vshape, [&](int64_t l, int64_t e) {
            const int64_t q = ix.i[static_cast<size_t>((ix.uni ? 0 : l * ix.vlen) + e)];
            return std::pair<int, int64_t>{0, std::clamp<int64_t>(q, 0, t.vlen - 1)};
        });
    }

    // vector.table.quantize %x, %thresholds {nan, tie}: each lane's bin, the
    // count of thresholds it passes (equal passes with tie = upper).
    static void table_quantize(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Reg& v = in(fr, op, 0);
        const Reg& th = in(fr, op, 1);
        const Attr* na = op.attr("nan");
        const Attr* ta = op.attr("tie");
        if (!na || !ta || (na->s != "zero" && na->s != "max") || (ta->s != "lower" && ta->s != "upper"))
            x.fail_at(op, -1, "vector.table.quantize needs {nan = zero|max, tie = lower|upper}");
        const bool upper = ta->s == "upper", nan_max = na->s == "max";
        const Type& rt = result_type(op, fr, 0);
        if (!isf(v.elem) || !isf(th.elem) || isf(rt.elem)) x.fail_at(op, -1, "vector.table.quantize maps float lanes to integer codes");
        const bool uni = v.uni && th.uni;
        Reg o;
        size_num(o, rt.elem, v.vlen, v.vshape, uni, x.L);
        for (int64_t l = 0; l < (uni ? 1 : x.L); ++l)
            for (int64_t e = 0; e < v.vlen; ++e) {
                const double xv = v.f[static_cast<size_t>((v.uni ? 0 : l * v.vlen) + e)];
                int64_t code = 0;
                if (std::isnan(xv)) code = nan_max ? th.vlen : 0;
                else
                    for (int64_t k = 0; k < th.vlen; ++k) {
                        const double t = th.f[static_cast<size_t>((th.uni ? 0 : l * th.vlen) + k)];
                        if (xv > t || (upper && xv == t)) code = k + 1;
                    }
                o.i[static_cast<size_t>(l * v.vlen + e)] = wrap_int(rt.elem, code);
            }
        out(fr, op) = std::move(o);
    }

    // buffer.length %b: the buffer's bytes (each lane's own, for per-lane memory).
    static void buffer_length(Exec& x, const Op& op, Frame& fr, const Mask&) {
        const Reg& b = in(fr, op, 0);
        const BufObj& B = x.bufs[static_cast<size_t>(b.buf)];
        const Type& t = result_type(op, fr, 0);
        Reg& o = out(fr, op);
        size_num(o, t.elem == ScalarKind::None ? ScalarKind::Offset : t.elem, 1, {}, true, x.L);
        o.i[0] = static_cast<int64_t>(B.stride ? B.stride : B.size);
    }

    // view.subview %v[offs]: the origin moves to offs (full-rank); the result
    // type gives the extents, on the parent's trailing axes. Views here are
    // row-major over their extents, so the emulator runs the subviews whose
    // rows stay rows: every result axis but the first spans its parent axis.
    static void subview(Exec& x, const Op& op, Frame& fr, const Mask& m) {
        const Reg& v = in(fr, op, 0);
        const Type& t = result_type(op, fr, 0);
        std::vector<int64_t> dims;
        for (const Dim& d : t.dims) {
            if (!d.is_dynamic()) {
                dims.push_back(d.extent);
                continue;
            }
            const Reg& dv = val(fr, d.value);
            if (!dv.uni) x.fail_at(op, -1, "a view extent that varies between lanes is not executed by the emulator");
            dims.push_back(dv.i[0]);
        }
        const size_t rank = v.dims.size(), r = dims.size();
        if (op.indices.size() != rank) x.fail_at(op, -1, "index list has " + std::to_string(op.indices.size()) + " entries for a rank-" + std::to_string(rank) + " view");
        if (r > rank || r == 0) x.fail_at(op, -1, "a rank-" + std::to_string(r) + " subview of a rank-" + std::to_string(rank) + " view");
        // A subview keeps its parent's element strides on the axes it keeps;
        // whole rows of a dense parent stay dense (Note [View layouts]).
        bool whole = v.strides.empty();
        for (size_t d = 1; d < r; ++d)
            if (dims[d] != v.dims[rank - r + d]) whole = false;
        const std::vector<int64_t> strides = view_strides(v);
        const int es = elem_bytes(v.elem, x.sh.spec->facts.index_bits);
        bool uni = v.off.size() <= 1;
        for (const IndexEntry& ie : op.indices)
            if (ie.is_value() && !val(fr, ie.value).uni) uni = false;
        Reg o = v;
        o.dims = dims;
        o.uni = uni;
        if (whole) o.strides.clear();
        else o.strides.assign(strides.end() - static_cast<std::ptrdiff_t>(r), strides.end());
        o.off.assign(uni ? 1 : static_cast<size_t>(x.L), 0);
        for (int64_t l = 0; l < (uni ? 1 : x.L); ++l) {
            if (!uni && !m.on(l)) continue;
            int64_t delta = 0;
            for (size_t d = 0; d < rank; ++d) {
                const IndexEntry& ie = op.indices[d];
                const int64_t i = ie.is_value() ? [&] { const Reg& q = val(fr, ie.value); return q.i[q.uni ? 0 : static_cast<size_t>(l)]; }() : ie.constant;
                const int64_t ext = d + r >= rank ? dims[d + r - rank] : 1;
                if (i < 0 || i + ext > v.dims[d])
                    x.fail_at(op, uni ? -1 : l, "subview [" + std::to_string(i) + ", " + std::to_string(i + ext) + ") out of bounds for axis " + std::to_string(d) + " of extent " + std::to_string(v.dims[d]));
                delta += i * strides[d];
            }
            o.off[static_cast<size_t>(l)] = (v.off.size() == 1 ? v.off[0] : v.off[static_cast<size_t>(l)]) + delta * es;
        }
        out(fr, op) = std::move(o);
    }
};

const std::unordered_map<std::string, Ops::Fn>& Ops::table() {
    static const std::unordered_map<std::string, Fn> t = [] {
        std::unordered_map<std::string, Fn> m;
        m["index.constant"] = m["scalar.constant"] = m["vector.constant"] = &Ops::constant;
        m["config.get"] = &Ops::config_get;
        m["target.subgroup.size"] = &Ops::subgroup_size_fact;
        for (const char* n : {"index.add", "index.sub", "index.mul", "index.div", "index.rem", "index.min", "index.max",
                              "index.andi", "index.ori", "index.xori", "index.shli", "index.shrsi", "index.shrui"})
            m[n] = &Ops::int_binary;
        for (const char* b : {"addi", "subi", "muli", "divsi", "divui", "remsi", "remui", "minsi", "maxsi", "minui", "maxui",
                              "andi", "ori", "xori", "shli", "shrsi", "shrui"}) {
            m[std::string("scalar.") + b] = &Ops::int_binary;
            m[std::string("vector.") + b] = &Ops::int_binary;
        }
        for (const char* b : {"negi", "absi", "ctpopi", "ctlzi", "cttzi"}) {
            m[std::string("scalar.") + b] = &Ops::int_unary;
            m[std::string("vector.") + b] = &Ops::int_unary;
        }
        m["index.ctpopi"] = m["index.ctlzi"] = m["index.cttzi"] = &Ops::int_unary;
        for (const char* b : {"rotli", "rotri", "ceildivsi", "ceildivui", "floordivsi", "signi", "fmai"}) {
            m[std::string("scalar.") + b] = &Ops::int_more;
            m[std::string("vector.") + b] = &Ops::int_more;
        }
        m["index.rotli"] = m["index.rotri"] = &Ops::int_more;
        for (const char* b : {"addf", "subf", "mulf", "divf", "remf", "minnumf", "maxnumf", "minimumf", "maximumf", "copysignf", "powf",
                              "atan2f", "hypotf"}) {
            m[std::string("scalar.") + b] = &Ops::float_binary;
            m[std::string("vector.") + b] = &Ops::float_binary;
        }
        for (const char* b : {"negf", "absf", "sqrtf", "expf", "logf", "tanhf", "floorf", "ceilf", "roundf", "roundevenf", "isnanf", "isinff", "isfinitef",
                              "signf", "rsqrtf", "cbrtf", "exp2f", "expm1f", "log2f", "log10f", "log1pf", "sinf", "cosf", "tanf",
                              "sinturnsf", "costurnsf", "asinf", "acosf", "atanf", "sinhf", "coshf", "asinhf", "acoshf", "atanhf",
                              "erff", "erfcf", "logisticf", "siluf", "softplusf", "geluf", "truncf"}) {
            m[std::string("scalar.") + b] = &Ops::float_unary;
            m[std::string("vector.") + b] = &Ops::float_unary;
        }
        m["scalar.fmaf"] = m["vector.fmaf"] = &Ops::fmaf;
        m["scalar.clampf"] = m["vector.clampf"] = &Ops::clampf;
        m["index.madd"] = &Ops::index_madd;
        m["index.scale"] = &Ops::index_scale;
        m["index.cmp"] = m["scalar.cmpi"] = m["vector.cmpi"] = &Ops::int_cmp;
        m["scalar.cmpf"] = m["vector.cmpf"] = &Ops::float_cmp;
        m["index.cast"] = &Ops::cast;
        for (const char* b : {"extsi", "extui", "trunci", "sitofp", "uitofp", "fptosi", "fptoui", "extf", "fptrunc", "bitcast"}) {
            m[std::string("scalar.") + b] = &Ops::cast;
            m[std::string("vector.") + b] = &Ops::cast;
        }
        m["index.assume"] = m["scalar.assume"] = &Ops::assume;
        m["scf.select"] = m["vector.select"] = &Ops::scf_select;
        for (const char* n : {"kernel.workitem.id", "kernel.workgroup.id", "kernel.workgroup.size", "kernel.workgroup.count",
                              "kernel.workitem.dispatch.id", "kernel.subgroup.id", "kernel.subgroup.lane.id", "kernel.subgroup.size",
                              "kernel.subgroup.count", "kernel.cluster.size", "kernel.cluster.count"})
            m[n] = &Ops::coord;
        m["buffer.assume.memory_space"] = m["buffer.assume.noalias"] = m["buffer.assume.same_root"] = &Ops::buffer_identity;
        m["buffer.assume.alignment"] = &Ops::assume_alignment;
        m["buffer.alloca"] = &Ops::alloca_;
        m["buffer.view"] = &Ops::buffer_view;
        m["buffer.fence"] = m["scf.schedule.fence"] = m["view.prefetch"] = &Ops::nop;
        m["view.load"] = &Ops::view_load;
        m["view.store"] = &Ops::view_store;
        m["view.atomic.load"] = m["view.atomic.store"] = m["view.atomic.rmw"] = m["view.atomic.cmpxchg"] = &Ops::atomic;
        m["kernel.barrier"] = &Ops::barrier;
        m["vector.load"] = &Ops::vector_load;
        m["vector.store"] = &Ops::vector_store;
        m["vector.splat"] = &Ops::splat;
        m["vector.iota"] = &Ops::iota;
        m["vector.mask.range"] = &Ops::mask_range;
        m["vector.extract"] = &Ops::extract;
        m["vector.insert"] = &Ops::insert;
        m["vector.reduce"] = &Ops::vreduce;
        m["kernel.subgroup.reduce"] = &Ops::sg_reduce;
        m["kernel.subgroup.broadcast"] = m["kernel.subgroup.broadcast.first"] = &Ops::sg_broadcast;
        m["kernel.subgroup.shuffle"] = &Ops::sg_shuffle;
        m["kernel.subgroup.ballot"] = m["kernel.subgroup.vote"] = m["kernel.subgroup.any"] = m["kernel.subgroup.all"] = &Ops::sg_vote;
        m["encoding.define"] = &Ops::encoding_define;
        m["vector.encode"] = &Ops::encode;
        m["vector.decode"] = &Ops::decode;
        m["vector.fragment"] = &Ops::fragment;
        m["vector.mma"] = &Ops::mma;
        m["vector.fragment.store"] = &Ops::fragment_store;
        m["scf.if"] = &Ops::scf_if;
        m["scf.for"] = &Ops::scf_for;
        m["scf.while"] = &Ops::scf_while;
        m["scf.switch"] = &Ops::scf_switch;
        m["func.call"] = m["template.apply"] = &Ops::call_;
        m["kernel.assert"] = &Ops::assert_;
        m["kernel.subgroup.scan"] = m["kernel.workgroup.scan"] = &Ops::scan;
        m["kernel.workgroup.reduce"] = &Ops::sg_reduce;
        m["kernel.workgroup.vote"] = &Ops::sg_vote;
        // The newer kernel dialect's names; the mode is the last word.
        m["kernel.subgroup.vote.any"] = m["kernel.subgroup.vote.all"] = m["kernel.subgroup.vote.ballot"] = &Ops::sg_vote;
        m["kernel.workgroup.vote.any"] = m["kernel.workgroup.vote.all"] = m["kernel.workgroup.vote.count"] = &Ops::sg_vote;
        m["kernel.exit"] = &Ops::exit_;
        m["view.atomic.reduce"] = &Ops::atomic;
        m["vector.load.mask"] = m["vector.store.mask"] = &Ops::vector_masked;
        m["vector.gather"] = m["vector.gather.mask"] = m["vector.scatter"] = m["vector.scatter.mask"] = &Ops::gather_scatter;
        m["vector.broadcast"] = &Ops::vbroadcast;
        m["vector.from_elements"] = &Ops::from_elements;
        m["vector.empty"] = m["vector.poison"] = m["scalar.poison"] = &Ops::undefined;
        m["vector.dotf"] = &Ops::dotf;
        m["scalar.bitfield.extractu"] = m["scalar.bitfield.extracts"] = &Ops::bitfield;
        m["vector.bitfield.extractu"] = m["vector.bitfield.extracts"] = &Ops::vbitfield;
        m["vector.bitfield.insert"] = &Ops::vbitfield_insert;
        m["vector.bitpack"] = m["vector.bitunpacku"] = m["vector.bitunpacks"] = &Ops::vbitpack;
        m["vector.slice"] = &Ops::vslice;
        m["vector.concat"] = &Ops::vconcat;
        m["vector.transpose"] = &Ops::vtranspose;
        m["vector.shuffle"] = &Ops::vshuffle;
        m["vector.interleave"] = &Ops::vinterleave;
        m["vector.deinterleave"] = &Ops::vdeinterleave;
        m["vector.reduce.axes"] = &Ops::vreduce_axes;
        m["vector.dot2f"] = m["vector.dot4i"] = m["vector.dot8i4"] = &Ops::vdot_grouped;
        m["vector.table.lookup"] = &Ops::table_lookup;
        m["vector.table.quantize"] = &Ops::table_quantize;
        m["buffer.length"] = &Ops::buffer_length;
        m["view.subview"] = &Ops::subview;
        m["encoding.layout.dense"] = &Ops::layout_value;
        m["encoding.layout.strided"] = &Ops::layout_value;
        m["encoding.layout.assume.dense"] = &Ops::layout_assume;
        m["encoding.layout.assume.strided"] = &Ops::layout_assume;
        m["view.refine"] = &Ops::buffer_identity;
        m["template.call"] = &Ops::call_;
        return m;
    }();
    return t;
}

ConstantValue constant_value(const Attr* a) {
    ConstantValue v;
    if (!a) return v;
    if (a->kind == Attr::Kind::Float) {
        v.f = a->f;
        if (std::isfinite(a->f) && std::fabs(a->f) < 9.2e18) v.i = static_cast<int64_t>(a->f);
    } else if (a->kind == Attr::Kind::Ident) {
        if (a->s == "true") v.i = 1, v.f = 1;
        else if (a->s == "inf") v.f = INFINITY;
        else if (a->s == "nan") v.f = NAN;
        else if (a->s == "-inf") v.f = -INFINITY;
    } else {
        v.i = a->i;
        v.f = static_cast<double>(a->i);
    }
    return v;
}

bool op_supported(const std::string& name) { return Ops::table().count(name) != 0; }

bool is_terminator(const std::string& n) {
    return n == "scf.yield" || n == "scf.condition" || n == "func.return" || n == "template.return" ||
           n == "kernel.return" || n == "pipeline.return";
}

namespace {

// One slot per catalogue entry (Note [Handlers]).
struct HandlerSlot {
    bool known = false;  // a handler, or a terminator
    void* fn = nullptr;  // nullptr: a terminator
};

// Op `name`'s slot, from the name table.
HandlerSlot lookup_handler(std::string_view name) {
    if (is_terminator(std::string(name))) return {true, nullptr};
    const auto& t = Ops::table();
    auto it = t.find(std::string(name));
    if (it == t.end()) return {};
    return {true, reinterpret_cast<void*>(it->second)};
}

const std::vector<HandlerSlot>& handler_slots() {
    static const std::vector<HandlerSlot> slots = [] {
        std::vector<HandlerSlot> v;
        v.reserve(op_catalogue().size());
        for (const OpEntry& e : op_catalogue()) v.push_back(lookup_handler(e.name));
        return v;
    }();
    return slots;
}

}  // namespace

void* Exec::resolve(const Op& op) const {
    // Ops the parser did not stamp (a name outside the catalogue) look their
    // name up; every handled name is catalogued, so that only ever fails.
    const HandlerSlot s = op.entry ? handler_slots()[op.entry - 1] : lookup_handler(op.name);
    if (!s.known) fail_at(op, -1, "valid Loom, not executed by the emulator");
    return s.fn;
}

void Exec::exec_op(const Op& op, Frame& fr, const Mask& mask) {
    void* const h = resolve(op);
    if (!h) fail_at(op, -1, "valid Loom, not executed by the emulator");
    try {
        reinterpret_cast<void (*)(Exec&, const Op&, Frame&, const Mask&)>(h)(*this, op, fr, mask);
    } catch (const std::out_of_range&) {  // as in run_region
        fail_at(op, -1, "the op lacks an operand, result or index it needs (" + std::to_string(op.operands.size()) + " operand(s), " +
                            std::to_string(op.results.size()) + " result(s))");
    }
}

void check_authored(Exec& x, const Op& op, Exec::Frame& fr) {
    Mask m;
    Ops::check_preds(x, op, fr, m, true);
}

}  // namespace hrx::loom::interp
