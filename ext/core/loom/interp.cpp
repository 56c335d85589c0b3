// The vectorised Loom interpreter (loom/interp.h). Each handler runs one op
// for every lane of the batch with tight loops over the lanes; control flow
// narrows an active-lane mask instead of branching per lane (loom.md §4.1).
#include "loom/interp.h"

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "loom/catalogue.h"
#include "loom/interp_ops.h"

namespace hrx::loom::interp {

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
#define HRX_LOOM_MATH_ENTRY(NAME) m["scalar." #NAME "f"] = m["vector." #NAME "f"] = &Ops::math1<fmath_##NAME>;
        HRX_FMATH_UNARY_LIST(HRX_LOOM_MATH_ENTRY)
#undef HRX_LOOM_MATH_ENTRY
        // gelu_erf and gelu_tanh are geluf's variants (float_unary), not op names.
        for (const char* n : {"scalar.gelu_erff", "vector.gelu_erff", "scalar.gelu_tanhf", "vector.gelu_tanhf"}) m.erase(n);
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
