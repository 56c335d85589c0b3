// Loom interpreter handlers of the kernel and scf dialects: coordinates,
// subgroup and workgroup collectives, control flow, scans, exits, masked
// vector accesses, subviews and the smaller ops (Note [Handlers] in
// loom/interp.h; struct Ops in loom/interp_ops.h).
#include "loom/interp_ops.h"

namespace hrx::loom::interp {

void Ops::coord(Exec& x, const Op& op, Frame& fr, const Mask&) {
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

void Ops::sg_reduce(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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

void Ops::sg_broadcast(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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

void Ops::sg_shuffle(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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

void Ops::sg_vote(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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
void Ops::encoding_define(Exec& x, const Op& op, Frame& fr, const Mask&) {
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

void Ops::scf_if(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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
void Ops::scf_switch(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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

void Ops::scf_for(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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

void Ops::scf_while(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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

void Ops::call_(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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

void Ops::scf_select(Exec& x, const Op& op, Frame& fr, const Mask& m) { select(x, op, fr, m); }

void Ops::assert_(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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
void Ops::scan(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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
void Ops::exit_(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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
void Ops::gather_scatter(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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
void Ops::vector_masked(Exec& x, const Op& op, Frame& fr, const Mask& m) {
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
void Ops::vbroadcast(Exec& x, const Op& op, Frame& fr, const Mask&) {
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
void Ops::from_elements(Exec& x, const Op& op, Frame& fr, const Mask&) {
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
void Ops::undefined(Exec& x, const Op& op, Frame& fr, const Mask&) {
    const Type& t = result_type(op, fr, 0);
    std::vector<int64_t> shape;
    const int64_t vlen = vlen_of(t, fr, &shape);
    size_num(out(fr, op), t.elem, vlen, shape, true, x.L);
}

// vector.dotf %a, %b[, %init]: a chain of fmaf in lane order from %init
// (+0 without one), each step rounded once to the result type.
void Ops::dotf(Exec& x, const Op& op, Frame& fr, const Mask&) {
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
void Ops::bitfield(Exec& x, const Op& op, Frame& fr, const Mask&) {
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

}  // namespace hrx::loom::interp
