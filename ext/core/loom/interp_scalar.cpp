// Loom interpreter handlers of the index and scalar dialects: constants,
// lanewise arithmetic, casts and assumptions (Note [Handlers] in
// loom/interp.h; struct Ops in loom/interp_ops.h).
#include "loom/interp_ops.h"

namespace hrx::loom::interp {

void Ops::config_get(Exec& x, const Op& op, Frame& fr, const Mask&) {
    const Type& t = result_type(op, fr, 0);
    Reg& r = out(fr, op);
    size_num(r, t.elem == ScalarKind::None ? ScalarKind::Index : t.elem, 1, {}, true, x.L);
    auto it = x.sh.spec->config.find(op.callee);
    if (it == x.sh.spec->config.end()) x.fail_at(op, -1, "config key '" + op.callee + "' has no value");
    if (isf(r.elem)) r.f[0] = fround(r.elem, it->second.f);
    else r.i[0] = wrap_int(r.elem, it->second.i);
}

void Ops::subgroup_size_fact(Exec& x, const Op& op, Frame& fr, const Mask&) {
    Reg& r = out(fr, op);
    size_num(r, ScalarKind::Index, 1, {}, true, x.L);
    r.i[0] = x.sh.spec->facts.subgroup_size;
}

void Ops::int_binary(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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

void Ops::index_madd(Exec& x, const Op& op, Frame& fr, const Mask&) {
    Reg t;
    bin<int64_t, int64_t, int64_t>(x, t, in(fr, op, 0), in(fr, op, 1), ScalarKind::Index, [](int64_t p, int64_t q) { return static_cast<int64_t>(static_cast<uint64_t>(p) * static_cast<uint64_t>(q)); });
    bin<int64_t, int64_t, int64_t>(x, out(fr, op), t, in(fr, op, 2), ScalarKind::Index, [](int64_t p, int64_t q) { return static_cast<int64_t>(static_cast<uint64_t>(p) + static_cast<uint64_t>(q)); });
}

void Ops::index_scale(Exec& x, const Op& op, Frame& fr, const Mask&) {
    bin<int64_t, int64_t, int64_t>(x, out(fr, op), in(fr, op, 0), in(fr, op, 1), ScalarKind::Offset, [](int64_t p, int64_t q) { return static_cast<int64_t>(static_cast<uint64_t>(p) * static_cast<uint64_t>(q)); });
}

void Ops::int_cmp(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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

void Ops::float_cmp(Exec& x, const Op& op, Frame& fr, const Mask&) {
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

void Ops::float_binary(Exec& x, const Op& op, Frame& fr, const Mask&) {
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
void Ops::float_unary(Exec& x, const Op& op, Frame& fr, const Mask&) {
    const std::string b = base_name(op.name);
    const Reg& A = in(fr, op, 0);
    const ScalarKind k = A.elem;
    Reg& o = out(fr, op);
#define HRX_FM1(fn) fun(x, o, A, k, [](auto p) { return fmath::fn(p); })
    if (b == "negf") fun(x, o, A, k, [](auto p) { return -p; });
    else if (b == "absf") fun(x, o, A, k, [](auto p) { return std::fabs(p); });
    else if (b == "signf") HRX_FM1(sign);
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

// clampf<ordered|number|ieee> %value, %lower, %upper (fmath.h says how
// each mode treats NaN); the result is one of the operands, so exact.
void Ops::clampf(Exec& x, const Op& op, Frame& fr, const Mask&) {
    const ScalarKind k = in(fr, op, 0).elem;
    const std::string mode = op.params.empty() ? "" : op.params[0];
    auto go = [&](auto f) { tern<double>(x, out(fr, op), in(fr, op, 0), in(fr, op, 1), in(fr, op, 2), k, f); };
    if (mode == "ordered") go([](double v, double lo, double hi) { return fmath::clamp_ordered(v, lo, hi); });
    else if (mode == "number") go([](double v, double lo, double hi) { return fmath::clamp_number(v, lo, hi); });
    else if (mode == "ieee") go([](double v, double lo, double hi) { return fmath::clamp_ieee(v, lo, hi); });
    else x.fail_at(op, -1, "unknown clampf mode '" + mode + "'");
}

void Ops::fmaf(Exec& x, const Op& op, Frame& fr, const Mask&) {
    const ScalarKind k = in(fr, op, 0).elem;
    tern<double>(x, out(fr, op), in(fr, op, 0), in(fr, op, 1), in(fr, op, 2), k, [k](double a, double b, double c) {
        if (k == ScalarKind::F64) return std::fma(a, b, c);
        return fround(k, std::fmaf(static_cast<float>(a), static_cast<float>(b), static_cast<float>(c)));
    });
}

void Ops::int_unary(Exec& x, const Op& op, Frame& fr, const Mask&) {
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
void Ops::int_more(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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

void Ops::select(Exec& x, const Op& op, Frame& fr, const Mask&) {
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
void Ops::cast(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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

// --- assumptions ----------------------------------------------------------
void Ops::assume(Exec& x, const Op& op, Frame& fr, const Mask& m) {
    for (size_t k = 0; k < op.results.size() && k < op.operands.size(); ++k)
        out(fr, op, k) = x.sh.options.checked ? in(fr, op, k) : raw(fr, op, k);
    if (!x.sh.options.checked || !m.any()) return;
    check_preds(x, op, fr, m, false);
}

// Evaluates op.preds for every active lane; `authored` (launch programs)
// reports a Message error instead of a checked-mode Execution finding.
void Ops::check_preds(Exec& x, const Op& op, Frame& fr, const Mask& m, bool authored) {
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

}  // namespace hrx::loom::interp
