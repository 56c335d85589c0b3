// Loom interpreter handlers of the vector dialect: vector values, bfp16
// encodings, fragments and mma, register layout, bit packing and grouped dots
// (Note [Handlers] in loom/interp.h; struct Ops in loom/interp_ops.h).
#include "loom/interp_ops.h"

namespace hrx::loom::interp {

void Ops::iota(Exec& x, const Op& op, Frame& fr, const Mask&) {
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

void Ops::mask_range(Exec& x, const Op& op, Frame& fr, const Mask&) {
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

void Ops::extract(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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

void Ops::insert(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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

void Ops::vreduce(Exec& x, const Op& op, Frame& fr, const Mask&) {
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

// A payload of bfp16ebs8 blocks: the values stay as floats (opaque to the
// program); quantisation happens where the blocking is known.
void Ops::encode(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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

void Ops::decode(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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

void Ops::fragment(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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

void Ops::mma(Exec& x, const Op& op, Frame& fr, const Mask&) {
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

void Ops::fragment_store(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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

// vector.slice %v[offsets]: the result-shaped block at the offsets.
void Ops::vslice(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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
void Ops::vconcat(Exec& x, const Op& op, Frame& fr, const Mask&) {
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
void Ops::vtranspose(Exec& x, const Op& op, Frame& fr, const Mask&) {
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
void Ops::vshuffle(Exec& x, const Op& op, Frame& fr, const Mask&) {
    const Reg& v = in(fr, op, 0);
    const std::vector<int64_t> s = int_param(x, op, 0);
    if (static_cast<int64_t>(s.size()) != v.vlen) x.fail_at(op, -1, "vector.shuffle lists " + std::to_string(s.size()) + " lanes for a vector of " + std::to_string(v.vlen));
    for (int64_t q : s)
        if (q < 0 || q >= v.vlen) x.fail_at(op, -1, "vector.shuffle source lane " + std::to_string(q) + " outside a vector of " + std::to_string(v.vlen));
    out(fr, op) = gather_elems(x, {&v}, v.uni, v.vlen, v.vshape, [&](int64_t, int64_t e) { return std::pair<int, int64_t>{0, s[static_cast<size_t>(e)]}; });
}

// vector.interleave<axis> %even, %odd: even coordinates along the axis from %even.
void Ops::vinterleave(Exec& x, const Op& op, Frame& fr, const Mask&) {
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
void Ops::vdeinterleave(Exec& x, const Op& op, Frame& fr, const Mask&) {
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
void Ops::vreduce_axes(Exec& x, const Op& op, Frame& fr, const Mask&) {
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

// vector.bitfield.extractu/extracts %v {offset, width}: each lane's field,
// zero- or sign-extended to the result's element type.
void Ops::vbitfield(Exec& x, const Op& op, Frame& fr, const Mask&) {
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
void Ops::vbitfield_insert(Exec& x, const Op& op, Frame& fr, const Mask&) {
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
void Ops::vbitpack(Exec& x, const Op& op, Frame& fr, const Mask&) {
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

// vector.dot4i<kind> / dot8i4<kind> / dot2f %lhs, %rhs, %acc (Note [Vector layout ops]).
void Ops::vdot_grouped(Exec& x, const Op& op, Frame& fr, const Mask&) {
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
void Ops::table_lookup(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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
void Ops::table_quantize(Exec& x, const Op& op, Frame& fr, const Mask&) {
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
void Ops::buffer_length(Exec& x, const Op& op, Frame& fr, const Mask&) {
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
void Ops::subview(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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

}  // namespace hrx::loom::interp
