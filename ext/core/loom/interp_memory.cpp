// Loom interpreter handlers of the buffer and view dialects: bindings,
// allocas, views, loads, stores and atomics (Note [Handlers] in loom/interp.h;
// struct Ops in loom/interp_ops.h).
#include "loom/interp_ops.h"

namespace hrx::loom::interp {

void Ops::assume_alignment(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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

void Ops::alloca_(Exec& x, const Op& op, Frame& fr, const Mask&) {
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

void Ops::buffer_view(Exec& x, const Op& op, Frame& fr, const Mask&) {
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

// encoding.layout.dense / .strided: a layout value; the assume forms pass it on.
void Ops::layout_value(Exec& x, const Op& op, Frame& fr, const Mask&) {
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

void Ops::layout_assume(Exec& x, const Op& op, Frame& fr, const Mask&) {
    const Reg& l = in(fr, op, 0);
    if (l.kind != RK::Enc || l.role != "layout") x.fail_at(op, -1, "operand is not an encoding.layout value");
    if (op.name == "encoding.layout.assume.strided") {
        const Attr* rank = op.attr("rank");
        if (rank && !l.strides.empty() && static_cast<int64_t>(l.strides.size()) != rank->i)
            x.fail_at(op, -1, "the layout has rank " + std::to_string(l.strides.size()) + ", not " + std::to_string(rank->i));
    }
    out(fr, op) = l;
}

void Ops::view_load(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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

void Ops::view_store(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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
void Ops::vec_access(Exec& x, const Op& op, Frame& fr, const Mask& m, const Reg& v, Reg* load, const Reg* store, const std::vector<int64_t>& vshape) {
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

void Ops::vector_load(Exec& x, const Op& op, Frame& fr, const Mask& m) {
    const Type& t = result_type(op, fr, 0);
    std::vector<int64_t> shape;
    vlen_of(t, fr, &shape);
    Reg r;
    vec_access(x, op, fr, m, in(fr, op, 0), &r, nullptr, shape);
    out(fr, op) = std::move(r);
}

void Ops::vector_store(Exec& x, const Op& op, Frame& fr, const Mask& m) {
    const Reg& s = in(fr, op, 0);
    vec_access(x, op, fr, m, in(fr, op, 1), nullptr, &s, s.vshape.empty() ? std::vector<int64_t>{s.vlen} : s.vshape);
}

// --- atomics (lanes in lane order) --------------------------------------------
void Ops::atomic(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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

// --- vectors -------------------------------------------------------------------
void Ops::splat(Exec& x, const Op& op, Frame& fr, const Mask&) {
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

}  // namespace hrx::loom::interp
