// Loom kernel.def → LLVM IR text (Note [Native Loom executor], codegen.h).
#include "loom/codegen.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <algorithm>
#include <cstring>

#include "kernels/bf16.h"
#include "kernels/elementwise_impl.h"
#include "kernels/fmath.h"
#include "loom/interp.h"
#include "loom/plan.h"

namespace hrx::loom::native {
namespace {

// SIMD lanes of the code being generated: kNativeLanes, or the subgroup
// size when the kernel uses subgroup collectives (a chunk is then one
// subgroup). Set per generate() call; plans may run on several threads.
thread_local int N = kNativeLanes;

// Refusal: a reason, caught by generate().
struct Refuse {
    std::string why;
};

[[noreturn]] void refuse(const std::string& why) { throw Refuse{why}; }

using interp::bits_of;

bool supported_scalar(ScalarKind k) {
    return (scalar_is_int(k) || scalar_is_address(k) || k == ScalarKind::F32 || k == ScalarKind::F64 || k == ScalarKind::F16 ||
            k == ScalarKind::BF16);
}

bool is_half(ScalarKind k) { return k == ScalarKind::F16 || k == ScalarKind::BF16; }

// The register type of a scalar kind: integers in i64, f32 (and f16, bf16:
// Note [Native f16 and bf16]) float, f64 double.
const char* reg_type(ScalarKind k) {
    if (k == ScalarKind::F32 || is_half(k)) return "float";
    if (k == ScalarKind::F64) return "double";
    return "i64";
}

std::string hex_double(double d) {
    char s[32];
    std::snprintf(s, sizeof s, "0x%016llX", static_cast<unsigned long long>(std::bit_cast<uint64_t>(d)));
    return s;
}

// A float literal of kind k (f32 values as their exact double).
std::string float_lit(ScalarKind k, double v) {
    if (k == ScalarKind::F32) return hex_double(static_cast<double>(static_cast<float>(v)));
    // The interpreter's fround: through float rounded to odd, then to the narrow type.
    if (k == ScalarKind::F16)
        return hex_double(kernels::ew::half_to_float(kernels::ew::float_to_half(kernels::ew::round_to_odd_f32(v))));
    if (k == ScalarKind::BF16) {
        const float f = kernels::ew::round_to_odd_f32(v);
        return hex_double(std::bit_cast<float>(kernels::bf16_to_f32_bits(kernels::f32_bits_to_bf16(std::bit_cast<uint32_t>(f)))));
    }
    return hex_double(v);
}

struct Info {
    bool vary = false;
    bool wgdep = false;   // depends on a workgroup id (Generated's `folded`)
};

enum class VK : uint8_t { None, Num, Buf, View, Vec };

struct ViewMeta {
    int binding = -1;
    ScalarKind elem = ScalarKind::None;
    size_t rank = 0;
    // The view's bytes [static_begin, static_end) of its buffer when its offset
    // and extents are constants (else static_end = -1): Note [Static footprints].
    int64_t static_begin = 0, static_end = -1;
};

class Gen {
public:
    Gen(const Specialized& spec, const std::vector<Param>& params, bool folded)
        : spec_(spec), params_(params), folded_(folded), root_(*spec.root) {
        ib_ = spec.facts.index_bits == 0 ? 32 : spec.facts.index_bits;
    }

    Generated run() {
        Generated g;
        if (root_.name != "kernel.def" || root_.regions.size() < 2 || !root_.values) refuse("not a GPU kernel.def");
        split_ = has_barrier(root_.regions[1]);
        const Region& body = root_.regions[1];
        const size_t nv = root_.values->size();
        nv_ = nv;
        parent_.resize(nv);
        for (size_t v = 0; v < nv; ++v) parent_[v] = static_cast<ValueId>(v);
        info_.assign(nv, Info{});
        vk_.assign(nv, VK::None);
        views_.assign(nv, ViewMeta{});
        bindof_.assign(nv, -1);
        classify_args(body);
        check_region(body);
        N = kNativeLanes;
        // Kernels the interpreter folds (no workgroup memory, barriers,
        // subgroups) fill every chunk: work-items of consecutive workgroups
        // share one, and workgroup ids vary between its lanes, as there.
        fold_ = folded_ && !split_ && !uses_subgroup_ && wg_bytes_ == 0;
        if (uses_subgroup_) {
            const int sg = spec_.facts.subgroup_size;
            if (sg != 8 && sg != 16 && sg != 32 && sg != 64) refuse("subgroup collectives with a subgroup size of " + std::to_string(sg));
            N = sg;
        }
        // Uniformity to a fixed point (loops feed values back).
        for (int it = 0; it < 64; ++it) {
            changed_ = false;
            analyse(body);
            if (!changed_) break;
        }
        if (fold_) N = varying_division(body) ? kFoldedLanesDividing : kFoldedLanes;
        if (split_) {
            check_barriers(body);
            // Per-chunk arrays for every varying value, after the workgroup memory.
            int64_t off = static_cast<int64_t>((wg_bytes_ + 63) / 64 * 64);
            plan_segments(body);
            for (size_t v = 0; v < vk_.size(); ++v)
                if (vk_[v] == VK::Num && vary(static_cast<ValueId>(v)) &&
                    (cross_.count(static_cast<ValueId>(v)) || cross_.count(parent_[v]))) {
                    chunk_slot_[static_cast<ValueId>(v)] = off;
                    off += lane_bytes(static_cast<ValueId>(v)) * (kMaxSplitItems / N);
                }
            g.scratch_bytes = static_cast<uint64_t>(off);
            g.max_items = kMaxSplitItems;
        } else {
            g.scratch_bytes = wg_bytes_;
        }
        scratch_bytes_ = g.scratch_bytes;
        emit_function(body);
        g.buffer_names = buffer_names_;
        g.ir = out_.str();
        g.ops = ops_;
        return g;
    }

private:
    const Specialized& spec_;
    const std::vector<Param>& params_;
    bool folded_;
    const Op& root_;
    int ib_ = 32;
    uint64_t scratch_bytes_ = 0;
    std::vector<Info> info_;
    std::vector<VK> vk_;
    std::vector<ViewMeta> views_;
    std::vector<int> bindof_;
    // Vectors (Note [Native Loom vectors]): a vector value's elements are
    // values of their own, ids from nv_ up, each with the vector's uniformity.
    size_t nv_ = 0;
    std::vector<ValueId> parent_;
    std::map<ValueId, std::vector<ValueId>> comps_;
    std::map<ValueId, ScalarKind> pkind_;
    bool changed_ = false;
    std::ostringstream out_;   // the whole module
    std::ostringstream b_;     // the function body
    std::ostringstream allocas_;
    std::set<std::string> decls_;
    std::vector<const Op*> ops_;
    int tmp_ = 0, lbl_ = 0;
    std::string items_;        // <N x i64> linear work-item ids of the chunk
    std::string ci_ = "0";     // i64 first work-item of the chunk
    std::string mask_;         // <N x i1> the chunk's work-items that exist
    bool split_ = false;       // barriers: per-chunk value storage, region splitting
    bool fold_ = false;        // chunks span workgroups (codegen.h's `folded`)
    std::string wgl_;          // fold_: <N x i64> linear workgroup ids of the chunk
    std::string fold_item_[3], fold_wg_[3];  // fold_: slots of the lanes' work-item and workgroup coordinates
    // fold_, in the copy for chunks inside one workgroup: lane 0's coordinates
    // as i64 scalars ("" elsewhere), and lane 0's value of the varying values
    // known from them (Note [Lane 0 as a scalar]).
    std::string fold0_item_[3], fold0_wg_[3];
    bool one_d_ = false;       // fold_: emitting the copy for one-dimensional launches
    std::map<ValueId, std::string> lane0_;
    std::map<ValueId, int64_t> chunk_slot_;  // scratch offset of a varying value's per-chunk array
    std::map<ValueId, std::pair<int64_t, int64_t>> wg_alloca_;  // workgroup alloca → (scratch offset, bytes)
    uint64_t wg_bytes_ = 0;
    int nbind_ = 0;
    std::vector<std::string> buffer_names_;
    std::string wg_;           // i64 linear workgroup id
    std::string wgc_[3], wgs_[3], wgid_[3], W_;

    const Op::ValueInfo& vinfo(ValueId v) const { return (*root_.values)[static_cast<size_t>(v)]; }
    const Type& vtype(ValueId v) const { return vinfo(v).type; }
    ScalarKind kind(ValueId v) const {
        if (static_cast<size_t>(v) >= nv_) return pkind_.at(v);
        return vtype(v).elem;
    }
    std::string name(ValueId v) const { return "%" + vinfo(v).name; }

    // --- checks ------------------------------------------------------------
    void classify_args(const Region& body) {
        const size_t skip = body.args.size() - params_.size();
        int bi = 0;
        for (size_t k = 0; k < params_.size(); ++k) {
            const ValueId v = body.args[skip + k];
            if (params_[k].is_buffer) {
                vk_[static_cast<size_t>(v)] = VK::Buf;
                bindof_[static_cast<size_t>(v)] = bi++;
                nbind_ = bi;
            } else {
                if (!supported_scalar(params_[k].type)) refuse(std::string("a device scalar of type ") + scalar_name(params_[k].type));
                vk_[static_cast<size_t>(v)] = VK::Num;
            }
        }
        for (size_t k = 0; k < skip; ++k) refuse("a device signature with arguments the planner does not bind");
    }

    void need_num_type(const Type& t, const Op& op) {
        if (t.kind != TypeKind::Scalar) refuse(op.name + " with a value of type " + t.spelling + " (vectors and tiles are not compiled yet)");
        if (!supported_scalar(t.elem)) refuse(op.name + " with a value of type " + std::string(scalar_name(t.elem)));
    }

    static bool is_coord(const std::string& n) {
        return n == "kernel.workitem.id" || n == "kernel.workgroup.id" || n == "kernel.workgroup.size" || n == "kernel.workgroup.count" ||
               n == "kernel.workitem.dispatch.id" || n == "kernel.subgroup.id" || n == "kernel.subgroup.lane.id" ||
               n == "kernel.subgroup.size" || n == "kernel.subgroup.count" || n == "kernel.cluster.size" || n == "kernel.cluster.count";
    }

    static std::string base(const std::string& n) { return n.substr(n.find('.') + 1); }
    // Whether r divides a varying integer (or takes its remainder), at any depth:
    // such a kernel folds into chunks of kFoldedLanesDividing (codegen.h).
    bool varying_division(const Region& r) const {
        static const std::set<std::string> division = {"div", "rem", "divsi", "remsi", "divui", "remui"};
        for (const Op& op : r.ops) {
            if (division.count(base(op.name)) && !op.results.empty() && vary(op.results[0])) return true;
            for (const Region& sub : op.regions)
                if (varying_division(sub)) return true;
        }
        return false;
    }

    // Subgroup collectives (phase 2): a chunk is one subgroup.
    static bool is_collective(const std::string& n) {
        return n == "kernel.subgroup.reduce" || n == "kernel.subgroup.broadcast" || n == "kernel.subgroup.broadcast.first" ||
               n == "kernel.subgroup.shuffle" || n == "kernel.subgroup.ballot" || n == "kernel.subgroup.vote" ||
               n == "kernel.subgroup.any" || n == "kernel.subgroup.all";
    }
    static std::string red_kind(const Op& op) {
        if (op.params.empty()) return "";
        return op.params[0].substr(0, op.params[0].find(','));
    }
    static std::string norm_kind(const std::string& k) {
        if (k == "addi" || k == "addf") return "add";
        if (k == "muli" || k == "mulf") return "mul";
        if (k == "andi") return "and";
        if (k == "ori") return "or";
        if (k == "xori") return "xor";
        return k;
    }
    static std::string vote_mode(const Op& op) {
        return !op.params.empty() ? op.params[0] : op.name.substr(op.name.rfind('.') + 1);
    }
    bool uses_subgroup_ = false;

    static bool known_num_op(const std::string& n) {
        static const std::set<std::string> ops = [] {
            std::set<std::string> s = {"index.constant", "scalar.constant", "config.get", "target.subgroup.size", "index.madd",
                                       "index.scale", "index.cmp", "scalar.cmpi", "scalar.cmpf", "index.cast", "index.assume",
                                       "scalar.assume", "scf.select", "scalar.fmaf", "index.ctpopi", "index.ctlzi",
                                       "index.cttzi"};
            for (const char* b : {"add", "sub", "mul", "div", "rem", "min", "max", "andi", "ori", "xori", "shli", "shrsi", "shrui"})
                s.insert(std::string("index.") + b);
            for (const char* b : {"addi", "subi", "muli", "divsi", "divui", "remsi", "remui", "minsi", "maxsi", "minui", "maxui", "andi",
                                  "ori", "xori", "shli", "shrsi", "shrui", "negi", "absi", "ctpopi", "ctlzi", "cttzi", "addf", "subf",
                                  "mulf", "divf", "remf", "minnumf", "maxnumf", "minimumf", "maximumf", "copysignf", "powf", "negf",
                                  "absf", "sqrtf", "expf", "logf", "tanhf", "floorf", "ceilf", "roundf", "roundevenf", "isnanf",
                                  "isinff", "isfinitef", "extsi", "extui", "trunci", "sitofp", "uitofp", "fptosi", "fptoui", "extf",
                                  "fptrunc", "bitcast", "truncf", "signf", "atan2f", "hypotf", "geluf"})
                s.insert(std::string("scalar.") + b);
            // The math functions of hrx::fmath, called through its array forms (Note [Native Loom math]).
#define HRX_LOOM_OP_NAME(NAME) s.insert("scalar." #NAME "f");
            HRX_FMATH_UNARY_LIST(HRX_LOOM_OP_NAME)
#undef HRX_LOOM_OP_NAME
            return s;
        }();
        return ops.count(n) != 0;
    }

    // Refuses what the generator does not lower, before emitting anything.
    void check_region(const Region& r) {
        for (const Op& op : r.ops) {
            const std::string& n = op.name;
            if (n == "scf.yield" || n == "kernel.return" || n == "scf.condition") {
                for (ValueId v : op.operands)
                    if (n == "scf.condition" && vk_[static_cast<size_t>(v)] == VK::Vec) refuse("a vector carried by scf.while");
                continue;
            }
            if (n.rfind("vector.", 0) == 0) {
                check_vector(op);
                continue;
            }
            if (n == "buffer.assume.alignment" || n == "buffer.assume.memory_space" || n == "buffer.assume.noalias" ||
                n == "buffer.assume.same_root") {
                for (size_t k = 0; k < op.results.size() && k < op.operands.size(); ++k) {
                    const ValueId src = op.operands[k];
                    if (vk_[static_cast<size_t>(src)] != VK::Buf) refuse(n + " of something other than a buffer binding");
                    vk_[static_cast<size_t>(op.results[k])] = VK::Buf;
                    bindof_[static_cast<size_t>(op.results[k])] = bindof_[static_cast<size_t>(src)];
                }
                continue;
            }
            if (n == "buffer.view") {
                if (op.operands.empty() || op.results.size() != 1 || vk_[static_cast<size_t>(op.operands[0])] != VK::Buf)
                    refuse("buffer.view of something other than a buffer binding");
                const Type& t = vtype(op.results[0]);
                if (t.kind != TypeKind::View || !t.layout.empty()) refuse("buffer.view to a view with a layout");
                if (!supported_scalar(t.elem)) refuse(std::string("a view of ") + scalar_name(t.elem));
                if (op.indices.size() > 1) refuse("buffer.view with several offsets");
                ViewMeta m;
                m.binding = bindof_[static_cast<size_t>(op.operands[0])];
                m.elem = t.elem;
                m.rank = t.dims.size();
                {
                    std::optional<int64_t> off = op.indices.empty() ? std::optional<int64_t>(0)
                                                 : op.indices[0].is_value() ? constant_of(op.indices[0].value)
                                                                             : std::optional<int64_t>(op.indices[0].constant);
                    __int128 end = off && *off >= 0 ? static_cast<__int128>(elem_size(t.elem)) : -1;
                    for (const Dim& d : t.dims) {
                        if (d.is_dynamic() || d.extent < 0 || end < 0) end = -1;
                        else end *= d.extent;
                        if (end > (__int128{1} << 62)) end = -1;
                    }
                    if (end >= 0) {
                        m.static_begin = *off;
                        m.static_end = static_cast<int64_t>(static_cast<__int128>(*off) + end);
                    }
                }
                vk_[static_cast<size_t>(op.results[0])] = VK::View;
                views_[static_cast<size_t>(op.results[0])] = m;
                continue;
            }
            if (n == "view.load" || n == "view.store") {
                const size_t vi = n == "view.load" ? 0 : 1;
                if (op.operands.size() <= vi || vk_[static_cast<size_t>(op.operands[vi])] != VK::View) refuse(n + " through a view the generator does not track");
                if (op.indices.size() != views_[static_cast<size_t>(op.operands[vi])].rank) refuse(n + " with an index list of the wrong rank");
                if (n == "view.load") {
                    if (op.results.size() != 1) refuse("view.load without one result");
                    need_num_type(vtype(op.results[0]), op);
                    vk_[static_cast<size_t>(op.results[0])] = VK::Num;
                } else if (vk_[static_cast<size_t>(op.operands[0])] != VK::Num) {
                    refuse("view.store of a non-scalar value");
                }
                continue;
            }
            if (n == "buffer.fence" || n == "scf.schedule.fence" || n == "view.prefetch" || n == "kernel.barrier") continue;
            if (n == "buffer.alloca") {
                if (op.params.empty() || op.params[0] != "workgroup") refuse("buffer.alloca<private>");
                if (&r != &root_.regions[1]) refuse("buffer.alloca<workgroup> inside control flow");
                if (op.operands.empty() || op.results.size() != 1) refuse("buffer.alloca without a size");
                const std::optional<int64_t> bytes = constant_of(op.operands[0]);
                if (!bytes || *bytes < 0 || static_cast<uint64_t>(*bytes) > kMaxAllocaBytes) refuse("buffer.alloca<workgroup> of a size the generator cannot see");
                const Attr* al = op.attr("align");
                const int64_t align = al ? al->i : 16;
                if (align <= 0 || align > 64 || (align & (align - 1))) refuse("buffer.alloca<workgroup> with align(" + std::to_string(align) + ")");
                const uint64_t at = (wg_bytes_ + static_cast<uint64_t>(align) - 1) / static_cast<uint64_t>(align) * static_cast<uint64_t>(align);
                wg_bytes_ = at + static_cast<uint64_t>(*bytes);
                if (wg_bytes_ > kMaxAllocaBytes) refuse("workgroup memory over the emulator's limit");
                const int number = nbind_ + static_cast<int>(buffer_names_.size());
                buffer_names_.push_back("buffer.alloca<workgroup> at " + std::to_string(op.loc.line) + ":" + std::to_string(op.loc.column));
                vk_[static_cast<size_t>(op.results[0])] = VK::Buf;
                bindof_[static_cast<size_t>(op.results[0])] = number;
                wg_alloca_[op.results[0]] = {static_cast<int64_t>(at), *bytes};
                continue;
            }
            if (n == "scf.if" || n == "scf.for" || n == "scf.while") {
                if (n == "scf.for" && op.operands.size() < 3) refuse("scf.for without bounds");
                if (n == "scf.while" && op.regions.size() != 2) refuse("scf.while without two regions");
                // Vectors carried by scf.if / scf.for (Note [Native Loom vectors]).
                auto value = [&](ValueId a) {
                    if (vtype(a).kind == TypeKind::Vector && n != "scf.while") return make_vec(a, op);
                    need_num_type(vtype(a), op);
                    vk_[static_cast<size_t>(a)] = VK::Num;
                };
                for (const Region& sub : op.regions)
                    for (ValueId a : sub.args) value(a);
                for (ValueId v : op.results) value(v);
                for (const Region& sub : op.regions) check_region(sub);
                continue;
            }
            if (is_collective(n)) {
                uses_subgroup_ = true;
                // The interpreter rounds each step of an f16/bf16 reduction; the helper does not.
                if (n == "kernel.subgroup.reduce" && !op.operands.empty() && is_half(kind(op.operands[0])))
                    refuse("kernel.subgroup.reduce of " + std::string(scalar_name(kind(op.operands[0]))));
                if (n == "kernel.subgroup.reduce") {
                    const Attr* cs = op.attr("cluster_size");
                    const int64_t sg = spec_.facts.subgroup_size;
                    if (cs && (cs->kind != Attr::Kind::Int || cs->i < 1 || cs->i > sg || sg % cs->i != 0))
                        refuse("kernel.subgroup.reduce with a cluster_size that does not divide the subgroup");
                    static const std::set<std::string> kinds = {"add", "mul", "and", "or", "xor", "minsi", "maxsi", "minui", "maxui",
                                                                "minnumf", "maxnumf", "minimumf", "maximumf"};
                    if (!kinds.count(norm_kind(red_kind(op)))) refuse("kernel.subgroup.reduce<" + red_kind(op) + ">");
                }
                if (n == "kernel.subgroup.shuffle") {
                    const std::string mode = op.params.empty() ? "index" : op.params[0];
                    if (mode != "xor" && mode != "up" && mode != "down" && mode != "index") refuse("kernel.subgroup.shuffle<" + mode + ">");
                    if (op.operands.size() < 2) refuse("kernel.subgroup.shuffle without a lane operand");
                }
                if (n == "kernel.subgroup.broadcast" && op.operands.size() < 2) refuse("kernel.subgroup.broadcast without a lane operand");
                if (n.find("ballot") != std::string::npos || n.find("vote") != std::string::npos || n.find(".any") != std::string::npos ||
                    n.find(".all") != std::string::npos) {
                    const std::string mode = vote_mode(op);
                    if (mode != "ballot" && mode != "count" && mode != "all" && mode != "any") refuse(n + " mode " + mode);
                }
            } else if (!is_coord(n) && !known_num_op(n)) {
                refuse("op " + n + " is not compiled yet");
            }
            for (ValueId v : op.operands)
                if (vk_[static_cast<size_t>(v)] != VK::Num) refuse(n + " on a value the generator does not track");
            for (size_t k = 0; k < op.results.size(); ++k) {
                const Type& t = k < op.result_types.size() ? op.result_types[k] : vtype(op.results[k]);
                need_num_type(t, op);
                need_num_type(vtype(op.results[k]), op);
                vk_[static_cast<size_t>(op.results[k])] = VK::Num;
            }
            if (!op.preds.empty() && n != "index.assume" && n != "scalar.assume") refuse(n + " with predicates");
        }
    }

    // A value defined by index/scalar.constant or config.get at the top of the body.
    std::optional<int64_t> constant_of(ValueId v) const {
        for (const Op& op : root_.regions[1].ops) {
            if (op.results.empty() || op.results[0] != v) continue;
            if (op.name == "index.constant" || op.name == "scalar.constant") {
                const Attr* a = op.attr("value");
                if (!a || a->kind != Attr::Kind::Int) return std::nullopt;
                return a->i;
            }
            if (op.name == "config.get") {
                auto it = spec_.config.find(op.callee);
                if (it == spec_.config.end() || scalar_is_float(it->second.type)) return std::nullopt;
                return it->second.i;
            }
            return std::nullopt;
        }
        return std::nullopt;
    }

    // --- uniformity ---------------------------------------------------------
    Info& I(ValueId v) { return info_[static_cast<size_t>(parent_[static_cast<size_t>(v)])]; }
    void set(ValueId v, Info x) {
        Info& o = I(v);
        const Info n{o.vary || x.vary, o.wgdep || x.wgdep};
        if (n.vary != o.vary || n.wgdep != o.wgdep) {
            o = n;
            changed_ = true;
        }
    }
    static Info join(Info a, Info b) { return Info{a.vary || b.vary, a.wgdep || b.wgdep}; }
    Info of_entries(const std::vector<IndexEntry>& e) {
        Info x;
        for (const IndexEntry& i : e)
            if (i.is_value()) x = join(x, I(i.value));
        return x;
    }

    void analyse(const Region& r) {
        for (const Op& op : r.ops) {
            const std::string& n = op.name;
            Info in;
            for (ValueId v : op.operands) in = join(in, I(v));
            if (n == "buffer.view") {
                Info x = of_entries(op.indices);
                for (const Dim& d : vtype(op.results[0]).dims)
                    if (d.is_dynamic()) x = join(x, I(d.value));
                set(op.results[0], x);
            } else if (n == "view.load" || n == "vector.load") {
                set(op.results[0], join(I(op.operands[0]), of_entries(op.indices)));
            } else if (is_collective(n)) {
                for (ValueId v : op.results) set(v, Info{true, false});
            } else if (is_coord(n)) {
                if (n == "kernel.workitem.id" || n == "kernel.subgroup.id" || n == "kernel.subgroup.lane.id") set(op.results[0], Info{true, false});
                else if (n == "kernel.workitem.dispatch.id") set(op.results[0], Info{true, true});
                else if (n == "kernel.workgroup.id") set(op.results[0], Info{fold_, true});
            } else if (n == "scf.if") {
                for (const Region& sub : op.regions) analyse(sub);
                for (size_t k = 0; k < op.results.size(); ++k) {
                    Info x = I(op.operands[0]);
                    for (const Region& sub : op.regions)
                        if (const Op* t = term(sub); t && k < t->operands.size()) x = join(x, I(t->operands[k]));
                    set(op.results[k], x);
                }
            } else if (n == "scf.for") {
                const Region& body = op.regions[0];
                const Info bounds = join(join(I(op.operands[0]), I(op.operands[1])), I(op.operands[2]));
                set(body.args[0], bounds);
                const Op* t = term(body);
                for (size_t k = 1; k < body.args.size(); ++k) {
                    Info x = bounds;
                    if (k + 2 < op.operands.size()) x = join(x, I(op.operands[k + 2]));
                    if (t && k - 1 < t->operands.size()) x = join(x, I(t->operands[k - 1]));
                    set(body.args[k], x);
                    if (k - 1 < op.results.size()) set(op.results[k - 1], I(body.args[k]));
                }
                analyse(body);
            } else if (n == "scf.while") {
                const Region& before = op.regions[0];
                const Region& after = op.regions[1];
                const Op* c = term(before);
                const Op* y = term(after);
                Info cond = c && !c->operands.empty() ? I(c->operands[0]) : Info{};
                for (size_t k = 0; k < before.args.size(); ++k) {
                    Info x = cond;
                    if (k < op.operands.size()) x = join(x, I(op.operands[k]));
                    if (y && k < y->operands.size()) x = join(x, I(y->operands[k]));
                    set(before.args[k], x);
                }
                analyse(before);
                cond = c && !c->operands.empty() ? I(c->operands[0]) : Info{};
                for (size_t k = 0; k < after.args.size(); ++k) {
                    Info x = cond;
                    if (c && k + 1 < c->operands.size()) x = join(x, I(c->operands[k + 1]));
                    set(after.args[k], x);
                }
                for (size_t k = 0; k < op.results.size(); ++k) {
                    Info x = cond;
                    if (c && k + 1 < c->operands.size()) x = join(x, I(c->operands[k + 1]));
                    set(op.results[k], x);
                }
                analyse(after);
            } else {
                for (ValueId v : op.results) set(v, in);
            }
        }
    }

    static const Op* term(const Region& r) {
        if (r.ops.empty()) return nullptr;
        const Op& t = r.ops.back();
        return (t.name == "scf.yield" || t.name == "scf.condition" || t.name == "kernel.return") ? &t : nullptr;
    }

    // --- emission helpers ---------------------------------------------------
    std::string t() { return "%t" + std::to_string(tmp_++); }
    std::string label(const char* p) { return std::string(p) + std::to_string(lbl_++); }
    void block(const std::string& l) { b_ << l << ":\n"; }
    void br(const std::string& l) { b_ << "  br label %" << l << "\n"; }
    void cbr(const std::string& c, const std::string& a, const std::string& z) {
        b_ << "  br i1 " << c << ", label %" << a << ", label %" << z << "\n";
    }
    std::string emit(const std::string& rhs) {
        const std::string r = t();
        b_ << "  " << r << " = " << rhs << "\n";
        return r;
    }
    static std::string vt(const std::string& s) { return "<" + std::to_string(N) + " x " + s + ">"; }
    static std::string ty(const std::string& s, bool vary) { return vary ? vt(s) : s; }
    std::string iota() {
        std::string s = "<";
        for (int l = 0; l < N; ++l) s += (l ? ", i64 " : "i64 ") + std::to_string(l);
        return s + ">";
    }
    std::string splat(const std::string& scalar_ty, const std::string& v) {
        const std::string a = emit("insertelement " + vt(scalar_ty) + " poison, " + scalar_ty + " " + v + ", i64 0");
        return emit("shufflevector " + vt(scalar_ty) + " " + a + ", " + vt(scalar_ty) + " poison, <" + std::to_string(N) + " x i32> zeroinitializer");
    }
    std::string mask_bits(const std::string& m) { return emit("bitcast " + vt("i1") + " " + m + " to i" + std::to_string(N)); }
    // <N x i1> with lanes [0, c) set, for an i64 c read as unsigned (c >= N: all).
    std::string low_lanes(const std::string& c) {
        const std::string full = emit("icmp uge i64 " + c + ", " + std::to_string(N));
        const std::string sh = emit("shl i64 1, " + emit("select i1 " + full + ", i64 0, i64 " + c));
        std::string bits = emit("select i1 " + full + ", i64 -1, i64 " + emit("sub i64 " + sh + ", 1"));
        if (N < 64) bits = emit("trunc i64 " + bits + " to i" + std::to_string(N));
        return emit("bitcast i" + std::to_string(N) + " " + bits + " to " + vt("i1"));
    }
    std::string any(const std::string& m) { return emit("icmp ne i" + std::to_string(N) + " " + mask_bits(m) + ", 0"); }
    std::string all(const std::string& m) { return emit("icmp eq i" + std::to_string(N) + " " + mask_bits(m) + ", -1"); }
    void declare(const std::string& d) { decls_.insert(d); }

    // A value's storage: an entry-block alloca, or (kernels split at
    // barriers) the current chunk's entry of its per-chunk array in scratch.
    std::string slot(ValueId v) {
        if (auto c = cached_.find(v); c != cached_.end()) return c->second;
        auto it = chunk_slot_.find(v);
        if (it == chunk_slot_.end()) return "%v" + std::to_string(v);
        // ci_ counts work-items: chunk ci_ / N starts lane_bytes(v) * ci_ / N bytes in.
        const std::string o = emit("mul i64 " + ci_ + ", " + std::to_string(lane_bytes(v) / N));
        const std::string a = emit("add i64 " + o + ", " + std::to_string(it->second));
        return emit("getelementptr i8, ptr %scratch, i64 " + a);
    }
    int64_t lane_bytes(ValueId v) const { return static_cast<int64_t>(N) * reg_bytes(kind(v)); }
    static int reg_bytes(ScalarKind k) { return std::string(reg_type(k)) == "float" ? 4 : 8; }

    // for ci in [0, W) step N: body() with ci_, items_ and mask_ set.
    void chunk_loop(const std::function<void()>& body) {
        const std::string id = std::to_string(lbl_++);
        const std::string cs = "%cslot" + id, head = "chunk" + id, b = "chunkbody" + id, done = "chunkdone" + id;
        allocas_ << "  " << cs << " = alloca i64\n";
        b_ << "  store i64 0, ptr " << cs << "\n";
        br(head);
        block(head);
        ci_ = emit("load i64, ptr " + cs);
        cbr(emit("icmp slt i64 " + ci_ + ", " + W_), b, done);
        block(b);
        items_ = emit("add " + vt("i64") + " " + splat("i64", ci_) + ", " + iota());
        mask_ = emit("icmp slt " + vt("i64") + " " + items_ + ", " + splat("i64", W_));
        set_affine(ci_);
        body();
        const std::string c2 = emit("load i64, ptr " + cs);
        const std::string c3 = emit("add i64 " + c2 + ", " + std::to_string(N));
        b_ << "  store i64 " << c3 << ", ptr " << cs << "\n";
        br(head);
        block(done);
    }

    // --- barriers (phase 3): pocl's region splitting ---------------------------
    // Note [Barriers in loops with results]
    //   A uniform scf.for holding a barrier runs once per workgroup, its body
    //   cut into chunk loops at the barriers. Its carried values (iteration
    //   arguments) are per-work-item values like any other varying value of a
    //   split kernel, so they live in the per-chunk scratch arrays; the three
    //   transfers the interpreter does per work-item (inits into the
    //   arguments, the yield into the arguments at the end of each
    //   iteration, the arguments into the results after the last) run here as
    //   chunk loops of their own at those points. Each chunk reads all its
    //   sources before writing any destination, so a yield that swaps two
    //   arguments sees the old values, as there.
    // Between barriers, the ops run as one chunk loop; uniform scf.if / scf.for
    // holding barriers run once per workgroup around their own chunk loops.
    static bool has_barrier(const Region& r) {
        for (const Op& op : r.ops) {
            if (op.name == "kernel.barrier") return true;
            for (const Region& sub : op.regions)
                if (has_barrier(sub)) return true;
        }
        return false;
    }
    static bool has_barrier(const Op& op) {
        for (const Region& sub : op.regions)
            if (has_barrier(sub)) return true;
        return false;
    }

    // Note [Values across barriers]
    //   Only a varying value read in another chunk loop than the one that
    //   wrote it needs per-work-item scratch (chunk_slot_); the others stay
    //   in registers (entry allocas that LLVM promotes), which keeps a
    //   barrier-free stretch's inner loops (matmul_tiled's k loop) out of
    //   memory. plan_segments walks the body as emit_wg_region cuts it,
    //   numbering its chunk loops, and marks (cross_) every value used in a
    //   loop other than its defining one, and every value the carried-value
    //   transfers of a barrier-holding scf.for move (its inits, yields,
    //   arguments and results: they run in chunk loops of their own).
    std::map<ValueId, int> def_seg_;
    std::set<ValueId> cross_;
    int segs_ = 0;
    void plan_uses(const Op& op, int seg) {
        auto use = [&](ValueId v) {
            auto it = def_seg_.find(v);
            if (it == def_seg_.end() || it->second != seg) cross_.insert(v);
        };
        for (ValueId v : op.operands) use(v);
        for (const IndexEntry& e : op.indices)
            if (e.is_value()) use(e.value);
        for (ValueId r : op.results)
            for (const Dim& d : vtype(r).dims)
                if (d.is_dynamic()) use(d.value);
        for (ValueId r : op.results) def_seg_[r] = seg;
        for (const Region& sub : op.regions) {
            for (ValueId a : sub.args) def_seg_[a] = seg;
            for (const Op& o : sub.ops) plan_uses(o, seg);
        }
    }
    void plan_segments(const Region& r) {
        int seg = -1;
        for (const Op& op : r.ops) {
            if (op.name == "scf.yield" || op.name == "kernel.return") {
                for (ValueId v : op.operands) cross_.insert(v);
                break;
            }
            if (op.name == "kernel.barrier") {
                seg = -1;
                continue;
            }
            if (!has_barrier(op)) {
                if (seg < 0) seg = segs_++;
                plan_uses(op, seg);
                continue;
            }
            seg = -1;
            for (ValueId v : op.operands) cross_.insert(v);
            for (ValueId v : op.results) cross_.insert(v);
            for (const Region& sub : op.regions) {
                for (ValueId a : sub.args) cross_.insert(a);
                plan_segments(sub);
            }
        }
    }

    // Refuses barriers the splitting does not handle (under varying control
    // flow, in loops or ifs with results, under scf.while).
    void check_barriers(const Region& r) {
        for (const Op& op : r.ops) {
            if (!has_barrier(op)) continue;
            if (op.name == "scf.if" && !vary(op.operands[0]) && op.results.empty()) {
            } else if (op.name == "scf.for" && !vary(op.operands[0]) && !vary(op.operands[1]) && !vary(op.operands[2]) &&
                       op.operands.size() == 2 + op.regions[0].args.size() &&
                       op.results.size() + 1 <= op.regions[0].args.size()) {
            } else {
                refuse("a barrier inside " + op.name + " (only uniform scf.if without results and uniform scf.for hold barriers natively)");
            }
            for (const Region& sub : op.regions) check_barriers(sub);
        }
    }

    // Note [Values read from earlier chunk loops]
    //   A chunk loop reads the values earlier chunk loops left in scratch
    //   (Note [Values across barriers]) once, at the top of each chunk, into
    //   registers (entry allocas that LLVM promotes): they cannot change in
    //   this loop, and a read from scratch inside one of its inner loops is
    //   one LLVM does not hoist (it sits in a conditional block, at an offset
    //   it cannot prove inside the buffer), so matmul_tiled's k loop reloaded
    //   its tile rows, two 64-byte vectors, for each of its eight reads.
    std::map<ValueId, std::string> cached_;
    int cache_ids_ = 0;
    static void uses_and_defs(const Op& op, std::set<ValueId>& used, std::set<ValueId>& defined, const std::function<const Type&(ValueId)>& type) {
        for (ValueId v : op.operands) used.insert(v);
        for (const IndexEntry& e : op.indices)
            if (e.is_value()) used.insert(e.value);
        for (ValueId r : op.results) {
            defined.insert(r);
            for (const Dim& d : type(r).dims)
                if (d.is_dynamic()) used.insert(d.value);
        }
        for (const Region& sub : op.regions) {
            for (ValueId a : sub.args) defined.insert(a);
            for (const Op& o : sub.ops) uses_and_defs(o, used, defined, type);
        }
    }
    void load_earlier_values(const std::vector<const Op*>& seg) {
        std::set<ValueId> used, defined;
        for (const Op* o : seg) uses_and_defs(*o, used, defined, [&](ValueId v) -> const Type& { return vtype(v); });
        for (ValueId v : used) {
            if (defined.count(v) || !chunk_slot_.count(v) || vk_[static_cast<size_t>(v)] != VK::Num) continue;
            const std::string reg = "%early" + std::to_string(cache_ids_++);
            allocas_ << "  " << reg << " = alloca " << rty(v) << ", align 64\n";
            const std::string x = get(v);
            b_ << "  store " << rty(v) << " " << x << ", ptr " << reg << "\n";
            cached_[v] = reg;
        }
    }

    void emit_wg_region(const Region& r) {
        std::vector<const Op*> seg;
        auto flush = [&] {
            if (seg.empty()) return;
            chunk_loop([&] {
                load_earlier_values(seg);
                for (const Op* o : seg) emit_op(*o, mask_);
                cached_.clear();
            });
            seg.clear();
        };
        for (const Op& op : r.ops) {
            if (op.name == "scf.yield" || op.name == "kernel.return") break;
            if (op.name == "kernel.barrier") {
                flush();
                continue;
            }
            if (!has_barrier(op)) {
                seg.push_back(&op);
                continue;
            }
            flush();
            if (op.name == "scf.if") {
                const std::string c = emit("icmp ne i64 " + get(op.operands[0]) + ", 0");
                const std::string lt = label("wthen"), le = label("welse"), lj = label("wendif");
                cbr(c, lt, le);
                block(lt);
                emit_wg_region(op.regions[0]);
                br(lj);
                block(le);
                if (op.regions.size() > 1) emit_wg_region(op.regions[1]);
                br(lj);
                block(lj);
            } else {
                const Region& body = op.regions[0];
                const ValueId iv = body.args[0];
                const std::string lo = get(op.operands[0]), hi = get(op.operands[1]), st = get(op.operands[2]);
                fail_uniform_if(op, emit("icmp sle i64 " + st + ", 0"), kLoopStep, st);
                // Carried values (Note [Barriers in loops with results]): each
                // copy runs per work-item, as a chunk loop of its own.
                const size_t nc = body.args.size() - 1;
                auto copy = [&](const std::vector<ValueId>& from, const std::vector<ValueId>& to) {
                    if (to.empty()) return;
                    chunk_loop([&] { transfer(to, from, to.size(), "", false); });
                };
                std::vector<ValueId> carried(body.args.begin() + 1, body.args.end());
                copy(std::vector<ValueId>(op.operands.begin() + 3, op.operands.end()), carried);
                put(iv, lo, false);
                const std::string lh = label("wfor"), lb = label("wforbody"), lx = label("wforexit");
                br(lh);
                block(lh);
                cbr(emit("icmp slt i64 " + get(iv) + ", " + hi), lb, lx);
                block(lb);
                emit_wg_region(body);
                if (nc) {
                    const Op* y = term(body);
                    if (!y || y->name != "scf.yield" || y->operands.size() != nc) refuse("scf.for whose yield does not match its carried values");
                    copy(y->operands, carried);
                }
                put(iv, emit("add i64 " + get(iv) + ", " + st), false);
                br(lh);
                block(lx);
                copy(std::vector<ValueId>(carried.begin(), carried.begin() + static_cast<long>(op.results.size())), op.results);
            }
        }
        flush();
    }

    bool vary(ValueId v) const { return info_[static_cast<size_t>(parent_[static_cast<size_t>(v)])].vary; }
    std::string rty(ValueId v) const { return ty(reg_type(kind(v)), vary(v)); }

    std::string get(ValueId v) {
        // Note [Lane 0 as a scalar]: in the copy for one-dimensional launches every
        // stride fact holds, so such a value is remade where a (rare) vector use
        // needs it, and the chunk's common path computes no vector of it.
        if (one_d_ && vary(v))
            if (auto z = lane0_.find(v); z != lane0_.end())
            if (auto st = stride_.find(v); st != stride_.end()) {
                std::string steps = "<";
                for (int l = 0; l < N; ++l) steps += (l ? ", i64 " : "i64 ") + std::to_string(st->second * l);
                return emit("add " + vt("i64") + " " + splat("i64", z->second) + ", " + steps + ">");
            }
        return emit("load " + rty(v) + ", ptr " + slot(v));
    }
    // v's value as varying (`want`) or scalar.
    std::string get_as(ValueId v, bool want) {
        const std::string x = get(v);
        if (!want || vary(v)) return x;
        return splat(reg_type(kind(v)), x);
    }
    // Stores `x` (varying when `xv`) into v's slot, widening if needed.
    void put(ValueId v, std::string x, bool xv) {
        if (vary(v) && !xv) x = splat(reg_type(kind(v)), x);
        const std::string at = slot(v);
        b_ << "  store " << rty(v) << " " << x << ", ptr " << at << "\n";
    }
    // Lane-masked update of a varying slot (scalar slots are written whole).
    void put_masked(ValueId v, std::string x, bool xv, const std::string& m) {
        if (!vary(v)) {
            put(v, x, xv);
            return;
        }
        if (!xv) x = splat(reg_type(kind(v)), x);
        const std::string old = get(v);
        const std::string s = emit("select " + vt("i1") + " " + m + ", " + rty(v) + " " + x + ", " + rty(v) + " " + old);
        const std::string at = slot(v);
        b_ << "  store " << rty(v) << " " << s << ", ptr " << at << "\n";
    }

    // Wraps an i64 (vector) to kind k's width, sign-extended (i1: 0/1).
    std::string wrap(ScalarKind k, const std::string& x, bool v) {
        const std::string T = ty("i64", v);
        switch (k) {
            case ScalarKind::I1: return emit("and " + T + " " + x + ", " + (v ? splat("i64", "1") : "1"));
            case ScalarKind::I8: case ScalarKind::I16: case ScalarKind::I32: {
                const std::string nt = ty("i" + std::to_string(bits_of(k)), v);
                const std::string tr = emit("trunc " + T + " " + x + " to " + nt);
                return emit("sext " + nt + " " + tr + " to " + T);
            }
            default: return x;
        }
    }
    // The unsigned reading of a sign-extended payload.
    std::string uval(ScalarKind k, const std::string& x, bool v) {
        const int b = bits_of(k);
        if (b >= 64) return x;
        const std::string T = ty("i64", v);
        const std::string m = std::to_string((uint64_t{1} << b) - 1);
        return emit("and " + T + " " + x + ", " + (v ? splat("i64", m) : m));
    }
    std::string cst(const std::string& scalar_ty, const std::string& lit, bool v) { return v ? splat(scalar_ty, lit) : lit; }

    // --- errors ------------------------------------------------------------
    int op_id(const Op& op) {
        for (size_t k = 0; k < ops_.size(); ++k)
            if (ops_[k] == &op) return static_cast<int>(k);
        ops_.push_back(&op);
        return static_cast<int>(ops_.size() - 1);
    }
    void store_err(int field, const std::string& v) {
        const std::string p = emit("getelementptr i64, ptr %err, i64 " + std::to_string(field));
        b_ << "  store i64 " << v << ", ptr " << p << "\n";
    }
    // Returns from the function with `op`'s failure `kind` (value `a`) when
    // uniform condition `cond` holds, naming no lane (the interpreter's
    // failures of uniform operands: a loop step, a view extent).
    void fail_uniform_if(const Op& op, const std::string& cond, int64_t kind, const std::string& a) {
        const std::string e = label("err"), ok = label("ok");
        cbr(cond, e, ok);
        block(e);
        store_err(0, std::to_string(op_id(op)));
        store_err(1, std::to_string(kind));
        store_err(2, wg_);
        store_err(3, "-1");
        store_err(4, a);
        b_ << "  ret i32 1\n";
        block(ok);
    }
    // Reports when some active lane of varying condition `bad` (or, uniform,
    // when `bad` and some lane is active) holds; `fields(lane)` gives (kind,
    // a, b, c) for the lane (an i64, or "-1" for a uniform failure).
    void check(const Op& op, const std::string& bad, bool varying, const std::string& mask, bool wgdep,
               const std::function<std::array<std::string, 4>(const std::string&)>& fields) {
        std::string cond, bits;
        if (varying) {
            const std::string m = emit("and " + vt("i1") + " " + bad + ", " + mask);
            bits = mask_bits(m);
            cond = emit("icmp ne i" + std::to_string(N) + " " + bits + ", 0");
        } else {
            cond = emit("and i1 " + bad + ", " + any(mask));
        }
        const std::string e = label("err"), ok = label("ok");
        cbr(cond, e, ok);
        block(e);
        std::string lane = "-1", item = "-1";
        if (varying || (folded_ && wgdep)) {
            if (!varying) bits = mask_bits(mask);
            const std::string tz = emit("call i" + std::to_string(N) + " @llvm.cttz.i" + std::to_string(N) + "(i" + std::to_string(N) + " " + bits + ", i1 true)");
            declare("declare i" + std::to_string(N) + " @llvm.cttz.i" + std::to_string(N) + "(i" + std::to_string(N) + ", i1)");
            lane = N == 64 ? tz : emit("zext i" + std::to_string(N) + " " + tz + " to i64");
            item = emit("extractelement " + vt("i64") + " " + items_ + ", i64 " + lane);
        }
        const std::string wgv = fold_ && lane != "-1" ? emit("extractelement " + vt("i64") + " " + wgl_ + ", i64 " + lane) : wg_;
        const auto f = fields(varying ? lane : "-1");
        store_err(0, std::to_string(op_id(op)));
        store_err(1, f[0]);
        store_err(2, wgv);
        store_err(3, item);
        store_err(4, f[1]);
        store_err(5, f[2]);
        store_err(6, f[3]);
        b_ << "  ret i32 1\n";
        block(ok);
    }
    std::string lane_of(const std::string& v, const std::string& lane, const std::string& sty, bool varying) {
        return varying ? emit("extractelement " + vt(sty) + " " + v + ", i64 " + lane) : v;
    }

    // --- the function -------------------------------------------------------
    std::string ctx_field(int byte, const std::string& type) {
        const std::string p = emit("getelementptr i8, ptr %ctx, i64 " + std::to_string(byte));
        return emit("load " + type + ", ptr " + p);
    }

    void emit_function(const Region& body) {
        // Slots for every numeric value; views keep offset and extents.
        for (size_t v = 0; v < vk_.size(); ++v) {
            if (vk_[v] == VK::Num)
                allocas_ << "  %v" << v << " = alloca " << rty(static_cast<ValueId>(v)) << ", align 64\n";
            else if (vk_[v] == VK::View) {
                allocas_ << "  %vo" << v << " = alloca i64\n";
                for (size_t d = 0; d < views_[v].rank; ++d) allocas_ << "  %vd" << v << "_" << d << " = alloca i64\n";
            }
        }
        allocas_ << "  %sgV = alloca [" << N << " x i64], align 64\n  %sgS = alloca [" << N << " x i64], align 64\n  %sgM = alloca ["
                 << N << " x i8], align 64\n  %sgO = alloca [" << N << " x i64], align 64\n  %sgK = alloca [" << N << " x i64], align 64\n";
        allocas_ << "  %affine = alloca i1\n";
        b_ << "  store i1 false, ptr %affine\n";
        allocas_ << "  %mathA = alloca [" << N << " x double], align 64\n  %mathB = alloca [" << N
                 << " x double], align 64\n  %mathO = alloca [" << N << " x double], align 64\n";
        const std::string bases = ctx_field(0, "ptr");
        const std::string sizes = ctx_field(8, "ptr");
        const std::string consts = ctx_field(16, "ptr");
        for (int d = 0; d < 3; ++d) {
            wgc_[d] = ctx_field(24 + 8 * d, "i64");
            wgs_[d] = ctx_field(48 + 8 * d, "i64");
        }
        W_ = emit("mul i64 " + wgs_[0] + ", " + wgs_[1]);
        W_ = emit("mul i64 " + W_ + ", " + wgs_[2]);
        // Bindings and device scalars.
        const size_t skip = body.args.size() - params_.size();
        int bi = 0;
        for (size_t k = 0; k < params_.size(); ++k) {
            const Param& p = params_[k];
            const ValueId v = body.args[skip + k];
            if (p.is_buffer) {
                const std::string bp = emit("getelementptr ptr, ptr " + bases + ", i64 " + std::to_string(bi));
                base_[bi] = emit("load ptr, ptr " + bp);
                const std::string sp = emit("getelementptr i64, ptr " + sizes + ", i64 " + std::to_string(bi));
                size_[bi] = emit("load i64, ptr " + sp);
                ++bi;
                continue;
            }
            const std::string at = emit("getelementptr i8, ptr " + consts + ", i64 " + std::to_string(p.byte_offset));
            std::string x;
            if (is_half(p.type)) refuse(std::string("a device scalar of type ") + scalar_name(p.type));
            if (p.type == ScalarKind::F32) x = emit("load float, ptr " + at + ", align 1");
            else if (p.type == ScalarKind::F64) x = emit("load double, ptr " + at + ", align 1");
            else {
                const std::string it = "i" + std::to_string(8 * p.byte_length);
                x = emit("load " + it + ", ptr " + at + ", align 1");
                if (p.byte_length < 8) x = emit(std::string(p.type == ScalarKind::Offset ? "zext " : "sext ") + it + " " + x + " to i64");
                x = wrap(p.type, x, false);
            }
            put(v, x, false);
        }
        for (const auto& [v, at] : wg_alloca_) {
            const int number = bindof_[static_cast<size_t>(v)];
            base_[number] = emit("getelementptr i8, ptr %scratch, i64 " + std::to_string(at.first));
            size_[number] = std::to_string(at.second);
        }
        if (fold_) {
            emit_folded(body);
        } else {
            // for wg in [first, first + n): for chunk in [0, W) step N.
            const std::string wl = label("wg"), wb = label("wgbody"), wdone = label("done");
            const std::string pre = label("pre");
            br(pre);
            block(pre);
            const std::string end = emit("add i64 %first, %n");
            br(wl);
            block(wl);
            wg_ = "%wgi";
            b_ << "  %wgi = phi i64 [ %first, %" << pre << " ], [ %wgnext, %wglatch ]\n";
            const std::string more = emit("icmp slt i64 %wgi, " + end);
            cbr(more, wb, wdone);
            block(wb);
            const std::string gxy = emit("mul i64 " + wgc_[0] + ", " + wgc_[1]);
            wgid_[0] = emit("urem i64 %wgi, " + wgc_[0]);
            wgid_[1] = emit("udiv i64 %wgi, " + wgc_[0]);
            wgid_[1] = emit("urem i64 " + wgid_[1] + ", " + wgc_[1]);
            wgid_[2] = emit("udiv i64 %wgi, " + gxy);
            if (wg_bytes_) {
                // Fresh workgroup memory reads as Note [Uninitialised device memory] says.
                declare("declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)");
                b_ << "  call void @llvm.memset.p0.i64(ptr %scratch, i8 " << static_cast<int>(static_cast<int8_t>(interp::kUninitByte)) << ", i64 "
                   << wg_bytes_ << ", i1 false)\n";
            }
            if (split_) emit_wg_region(body);
            else chunk_loop([&] { emit_region(body, mask_); });
            br("wglatch");
            block("wglatch");
            b_ << "  %wgnext = add i64 %wgi, 1\n";
            br(wl);
            block(wdone);
            b_ << "  ret i32 0\n";
        }
        out_ << "; Loom kernel @" << spec_.symbol << " (hrxarray native executor, " << N << " lanes)\n";
        // Note [Scratch is dereferenceable]: the executor passes Generated::scratch_bytes
        // of 64-byte aligned memory. Saying so lets LLVM hoist loop-invariant reads of
        // scratch (values kept across barrier cuts, read in a loop's conditional
        // blocks) out of the loop, which it may not do for a pointer that might be
        // invalid: matmul_tiled's inner loop reloaded its tile rows every step.
        const std::string sattr = scratch_bytes_ ? " dereferenceable(" + std::to_string(scratch_bytes_) + ") align 64" : std::string();
        out_ << "define i32 @loom_wg(ptr noalias %ctx, ptr noalias %err, ptr noalias" << sattr << " %scratch, i64 %first, i64 %n) {\nentry:\n";
        out_ << allocas_.str() << b_.str() << "}\n\n";
        for (const std::string& d : decls_) out_ << d << "\n";
    }

    // Folded kernels: for g in [first * W, (first + n) * W) step N, the
    // lanes' workgroup and work-item ids from g's (exact scalar division,
    // then small per-lane offsets).
    void emit_folded(const Region& body) {
        wg_ = "0";
        const std::string g0 = emit("mul i64 %first, " + W_);
        const std::string g1 = emit("mul i64 " + emit("add i64 %first, %n") + ", " + W_);
        const std::string id = std::to_string(lbl_++);
        const std::string cs = "%gslot" + id, head = "fold" + id, b = "foldbody" + id, done = "folddone" + id;
        // g's workgroup and item (g = w0 W + i0) are carried from chunk to chunk: one
        // division before the loop, then one only where a chunk crosses more than
        // the next workgroup boundary.
        const std::string ws = "%gw" + id, is = "%gi" + id;
        allocas_ << "  " << cs << " = alloca i64\n";
        allocas_ << "  " << ws << " = alloca i64\n";
        allocas_ << "  " << is << " = alloca i64\n";
        b_ << "  store i64 " << g0 << ", ptr " << cs << "\n";
        b_ << "  store i64 %first, ptr " << ws << "\n";
        b_ << "  store i64 0, ptr " << is << "\n";
        br(head);
        block(head);
        const std::string g = emit("load i64, ptr " + cs);
        cbr(emit("icmp slt i64 " + g + ", " + g1), b, done);
        block(b);
        ci_ = g;
        mask_ = low_lanes(emit("sub i64 " + g1 + ", " + g));
        const std::string w0 = emit("load i64, ptr " + ws);
        const std::string i0 = emit("load i64, ptr " + is);
        // Note [Two copies of a folded body]
        //   A chunk inside one workgroup (the common case) takes its
        //   coordinates from scalars; one spanning workgroups divides. The
        //   body is emitted once for each, so that in the first copy LLVM sees
        //   the workgroup ids and every value made of them as splats of
        //   scalars (one multiply, not a 64-bit vector multiply per lane
        //   group, and lane 0 of an index as a scalar): a single copy joined
        //   the two cases through memory and did the vector work per chunk.
        const std::string V = vt("i64");
        static const char* names[] = {"items", "wgl", "ix", "iy", "iz", "gx", "gy", "gz"};
        auto slots = [&](const std::string& path) {
            std::map<std::string, std::string> sl;
            for (const char* nm : names) {
                sl[nm] = "%f" + std::string(nm) + path + id;
                allocas_ << "  " << sl[nm] << " = alloca " << V << "\n";
            }
            return sl;
        };
        auto body_with = [&](const std::map<std::string, std::string>& sl) {
            items_ = emit("load " + V + ", ptr " + sl.at("items"));
            wgl_ = emit("load " + V + ", ptr " + sl.at("wgl"));
            for (int a = 0; a < 3; ++a) {
                fold_item_[a] = sl.at(names[2 + a]);
                fold_wg_[a] = sl.at(names[5 + a]);
            }
            lane0_.clear();
            emit_region(body, mask_);
            lane0_.clear();
            for (int a = 0; a < 3; ++a) fold0_item_[a] = fold0_wg_[a] = "";
        };
        const std::string inside = emit("icmp ule i64 " + emit("add i64 " + i0 + ", " + std::to_string(N)) + ", " + W_);
        const std::string lf1 = label("foldflat"), lf = label("foldfast"), ls = label("foldslow"), lj = label("foldjoin");
        const std::string lw = label("foldwhich");
        // A one-dimensional grid of one-dimensional workgroups (every
        // elementwise kernel) gets a copy of its own: there the lanes' ids are
        // lane 0's plus the lane, with no test per chunk of the launch's shape.
        const std::string one_d = emit("and i1 " + emit("icmp eq i64 " + W_ + ", " + wgs_[0]) + ", " +
                                       emit("icmp eq i64 " + emit("mul i64 " + wgc_[1] + ", " + wgc_[2]) + ", 1"));
        cbr(inside, lw, ls);
        block(lw);
        cbr(one_d, lf1, lf);
        auto fast_copy = [&](const char* path) {
            const auto sl = slots(path);
            auto keep = [&](const char* nm, const std::string& x) { b_ << "  store " << V << " " << x << ", ptr " << sl.at(nm) << "\n"; };
            items_ = emit("add " + V + " " + splat("i64", i0) + ", " + iota());
            set_affine(i0);
            keep("items", items_);
            keep("wgl", splat("i64", w0));
            for (int a = 0; a < 3; ++a) keep(names[2 + a], split_items(a));
            // A one-dimensional grid (the common case) needs no division per chunk.
            const std::string grid1 = one_d_ ? std::string("true") : emit("icmp eq i64 " + emit("mul i64 " + wgc_[1] + ", " + wgc_[2]) + ", 1");
            const std::string wx = choose_s("i64", grid1, [&] { return w0; }, [&] { return emit("urem i64 " + w0 + ", " + wgc_[0]); });
            const std::string wy = choose_s("i64", grid1, [&] { return std::string("0"); }, [&] {
                return emit("urem i64 " + emit("udiv i64 " + w0 + ", " + wgc_[0]) + ", " + wgc_[1]);
            });
            const std::string wz = choose_s("i64", grid1, [&] { return std::string("0"); }, [&] {
                return emit("udiv i64 " + w0 + ", " + emit("mul i64 " + wgc_[0] + ", " + wgc_[1]));
            });
            keep("gx", splat("i64", wx));
            keep("gy", splat("i64", wy));
            keep("gz", splat("i64", wz));
            // Lane 0's coordinates (Note [Lane 0 as a scalar]): split_items' for lane 0 alone.
            const std::string flat = flat_wg();
            fold0_item_[0] = choose_s("i64", flat, [&] { return i0; }, [&] { return emit("urem i64 " + i0 + ", " + wgs_[0]); });
            fold0_item_[1] = choose_s("i64", flat, [&] { return std::string("0"); }, [&] {
                return emit("urem i64 " + emit("udiv i64 " + i0 + ", " + wgs_[0]) + ", " + wgs_[1]);
            });
            fold0_item_[2] = choose_s("i64", flat, [&] { return std::string("0"); }, [&] {
                return emit("udiv i64 " + i0 + ", " + emit("mul i64 " + wgs_[0] + ", " + wgs_[1]));
            });
            fold0_wg_[0] = wx;
            fold0_wg_[1] = wy;
            fold0_wg_[2] = wz;
            body_with(sl);
            br(lj);
        };
        block(lf1);
        one_d_ = true;
        fast_copy("o");
        one_d_ = false;
        block(lf);
        fast_copy("f");
        block(ls);
        {
            const auto sl = slots("s");
            auto keep = [&](const char* nm, const std::string& x) { b_ << "  store " << V << " " << x << ", ptr " << sl.at(nm) << "\n"; };
            b_ << "  store i1 false, ptr %affine\n";  // lanes of two workgroups
            const std::string off = emit("add " + V + " " + splat("i64", i0) + ", " + iota());
            items_ = divmod(off, W_, true);
            wgl_ = emit("add " + V + " " + splat("i64", w0) + ", " + divmod(off, W_, false));
            keep("items", items_);
            keep("wgl", wgl_);
            for (int a = 0; a < 3; ++a) keep(names[2 + a], split_items(a));
            for (int a = 0; a < 3; ++a) keep(names[5 + a], split_wg(a));
            body_with(sl);
            br(lj);
        }
        block(lj);
        const std::string g2 = emit("load i64, ptr " + cs);
        const std::string g3 = emit("add i64 " + g2 + ", " + std::to_string(N));
        b_ << "  store i64 " << g3 << ", ptr " << cs << "\n";
        {
            const std::string wn = emit("load i64, ptr " + ws);
            const std::string in = emit("add i64 " + emit("load i64, ptr " + is) + ", " + std::to_string(N));
            const std::string lf = label("gstep"), ls = label("gcross"), lo = label("gwrap"), lj = label("gnext");
            cbr(emit("icmp ult i64 " + in + ", " + W_), lf, ls);
            block(lf);
            b_ << "  store i64 " << in << ", ptr " << is << "\n";
            br(lj);
            block(ls);
            const std::string once = emit("sub i64 " + in + ", " + W_);
            cbr(emit("icmp ult i64 " + once + ", " + W_), lo, lo + "d");
            block(lo);
            b_ << "  store i64 " << once << ", ptr " << is << "\n";
            const std::string w1 = emit("add i64 " + wn + ", 1");
            b_ << "  store i64 " << w1 << ", ptr " << ws << "\n";
            br(lj);
            block(lo + "d");
            const std::string ir = emit("urem i64 " + in + ", " + W_);
            const std::string wr = emit("add i64 " + wn + ", " + emit("udiv i64 " + in + ", " + W_));
            b_ << "  store i64 " << ir << ", ptr " << is << "\n";
            b_ << "  store i64 " << wr << ", ptr " << ws << "\n";
            br(lj);
            block(lj);
        }
        br(head);
        block(done);
        b_ << "  ret i32 0\n";
    }

    // Whether the workgroup is one-dimensional (an i1; "true" in the copy of
    // Note [Two copies of a folded body] for one-dimensional launches).
    std::string flat_wg() { return one_d_ ? std::string("true") : emit("icmp eq i64 " + W_ + ", " + wgs_[0]); }

    // Folded kernels: the lanes' workgroup ids along axis a.
    std::string split_wg(int a) {
        // A one-dimensional grid (the common case): the linear id itself.
        const std::string flat = one_d_ ? std::string("true") : emit("icmp eq i64 " + emit("mul i64 " + wgc_[1] + ", " + wgc_[2]) + ", 1");
        const std::string wgl = wgl_;
        return choose(flat, [&] { return a == 0 ? wgl : std::string("zeroinitializer"); }, [&] {
            if (a == 0) return divmod(wgl, wgc_[0], true);
            if (a == 1) return divmod(divmod(wgl, wgc_[0], false), wgc_[1], true);
            return divmod(wgl, emit("mul i64 " + wgc_[0] + ", " + wgc_[1]), false);
        });
    }

    std::map<int, std::string> base_, size_;

    // Note [Lane-affine accesses]
    //   Most accesses of GPU kernels index with the work-item's x id plus
    //   values that are the same for the whole chunk (matmul_tiled's tiles,
    //   every row of softmax_rows): their lanes read consecutive elements or
    //   one element. The general path (address()) finds that out per access
    //   at run time, after bounds-checking each lane as a vector of i64;
    //   here the generator knows it. stride_ holds, for varying integer
    //   values of 64-bit kinds (index, offset, i64: no wrapping to a
    //   narrower width), how the value steps from lane to lane, as a fact
    //   that is true whenever the chunk's %affine flag is: the chunk's lanes
    //   are consecutive x ids of one row of one workgroup (set_affine, per
    //   chunk). The x ids (work-item and dispatch) step by 1, the y and z ids
    //   and workgroup ids by 0 (where a chunk is one subgroup, its lane ids
    //   by 1 and its subgroup id by 0), index add/sub/mul/madd of such values
    //   and uniform ones (mul by a constant) step as arithmetic says, and
    //   min/max of values stepping by 0 step by 0. A
    //   value that is not computed in every lane by such an op (results of
    //   scf.if/for/while, loads, ...) has no fact.
    //   An access whose indices all step by 0, but the last by 0 or 1, then
    //   tests only lane 0's indices and bytes, as scalars: when the flag
    //   holds and every lane, active or not, is in bounds, it is one
    //   (masked) vector load or store, or one scalar load for all lanes. A
    //   vector.load of E elements whose lanes step E (flash_decode's K and V
    //   rows: 32 lanes x 4 floats) is likewise one load of N x E elements,
    //   dealt out to the E components by shuffles, instead of E gathers.
    //   Otherwise it takes the general path, whose checks name the
    //   interpreter's failing lane. In bounds, every lane's index is lane
    //   0's plus its step times the lane (no wrap: all lie in [0, extent)),
    //   so the two paths touch the same bytes.
    std::map<ValueId, int64_t> stride_;
    std::map<ValueId, int64_t> const_;
    // The chunk starting at work-item `first` (its lanes first + l) is lane-affine:
    // a one-dimensional workgroup, or the chunk inside one row of x.
    void set_affine(const std::string& first) {
        const std::string flat = flat_wg();
        const std::string ok = choose_s("i1", flat, [&] { return std::string("true"); }, [&] {
            const std::string r = emit("urem i64 " + first + ", " + wgs_[0]);
            return emit("icmp ule i64 " + emit("add i64 " + r + ", " + std::to_string(N)) + ", " + wgs_[0]);
        });
        b_ << "  store i1 " << ok << ", ptr %affine\n";
    }
    static bool wide_int(ScalarKind k) { return k == ScalarKind::Index || k == ScalarKind::Offset || k == ScalarKind::I64; }
    std::optional<int64_t> stride_of(ValueId v) const {
        if (!vary(v)) return 0;
        auto it = stride_.find(v);
        if (it == stride_.end()) return std::nullopt;
        return it->second;
    }
    std::optional<int64_t> const_of(ValueId v) const {
        auto it = const_.find(v);
        if (it == const_.end()) return std::nullopt;
        return it->second;
    }
    // Records op's result's stride (or constant), Note [Lane-affine accesses].
    void note_stride(const Op& op) {
        if (op.results.size() != 1 || vk_[static_cast<size_t>(op.results[0])] != VK::Num) return;
        const ValueId r = op.results[0];
        const std::string& n = op.name;
        if (!wide_int(kind(r))) return;
        if (n == "index.constant" || n == "scalar.constant") {
            const Attr* a = op.attr("value");
            if (a && a->kind == Attr::Kind::Int) const_[r] = a->i;
            return;
        }
        if (!vary(r)) return;
        for (ValueId o : op.operands)
            if (!wide_int(kind(o))) return;
        const std::string b = base(n);
        auto s = [&](size_t k) { return stride_of(op.operands.at(k)); };
        constexpr int64_t kMax = int64_t{1} << 24;
        auto keep = [&](std::optional<int64_t> x) {
            if (x && *x > -kMax && *x < kMax) stride_[r] = *x;
        };
        auto mul = [&](size_t i, size_t j) -> std::optional<int64_t> {
            const auto si = s(i), sj = s(j);
            if (!si || !sj) return std::nullopt;
            if (*si == 0 && *sj == 0) return 0;
            if (*sj == 0 && const_of(op.operands[j])) return *si * *const_of(op.operands[j]);
            if (*si == 0 && const_of(op.operands[i])) return *sj * *const_of(op.operands[i]);
            return std::nullopt;
        };
        if ((n == "index.assume" || n == "scalar.assume") && !op.operands.empty()) return keep(s(0));
        if (op.operands.size() == 2 && (b == "add" || b == "addi" || b == "sub" || b == "subi")) {
            const auto x = s(0), y = s(1);
            if (x && y) keep(b[0] == 'a' ? *x + *y : *x - *y);
            return;
        }
        if (op.operands.size() == 2 && (b == "mul" || b == "muli" || n == "index.scale")) return keep(mul(0, 1));
        if (op.operands.size() == 2 && (b == "min" || b == "max" || b == "minsi" || b == "maxsi" || b == "minui" || b == "maxui")) {
            if (s(0) == std::optional<int64_t>(0) && s(1) == std::optional<int64_t>(0)) keep(0);
            return;
        }
        if (n == "index.madd" && op.operands.size() == 3) {
            const auto p = mul(0, 1), c = s(2);
            if (p && c) keep(*p + *c);
        }
    }
    // Note [Lane 0 as a scalar]
    //   In the copy of a folded body for chunks inside one workgroup (Note
    //   [Two copies of a folded body]) the generator knows lane 0's
    //   coordinates as scalars, and from them lane 0's value of each value
    //   that Note [Lane-affine accesses] gives a stride (the same ops, on
    //   scalars). The fast path of an access then takes its lane-0 index from
    //   there instead of extracting it from a vector the vector code may not
    //   otherwise need, and a compare of a value stepping by one with one
    //   stepping by zero (`%i < %count`, every elementwise kernel's guard) is
    //   a scalar count of the lanes below the bound, made a lane mask by a
    //   shift: no 64-bit vector compare per chunk (Loom add at 65,536 float32
    //   spent most of its time in such vector index work). lane0_ holds the
    //   values of the copy being emitted; it is cleared between copies, and
    //   empty where no copy set the coordinates (lane 0 is then extracted).
    std::string lane0(ValueId v) {
        if (!vary(v)) return get(v);
        auto it = lane0_.find(v);
        return it == lane0_.end() ? std::string() : it->second;
    }
    void note_lane0(const Op& op) {
        if (op.results.size() != 1) return;
        const ValueId r = op.results[0];
        if (!vary(r) || !stride_.count(r)) return;
        std::vector<std::string> x;
        for (ValueId o : op.operands) {
            std::string z = lane0(o);
            if (z.empty()) return;
            x.push_back(std::move(z));
        }
        const std::string& n = op.name;
        const std::string b = base(n);
        std::string z;
        if ((n == "index.assume" || n == "scalar.assume") && !x.empty()) z = x[0];
        else if (x.size() == 2 && (b == "add" || b == "addi")) z = emit("add i64 " + x[0] + ", " + x[1]);
        else if (x.size() == 2 && (b == "sub" || b == "subi")) z = emit("sub i64 " + x[0] + ", " + x[1]);
        else if (x.size() == 2 && (b == "mul" || b == "muli" || n == "index.scale")) z = emit("mul i64 " + x[0] + ", " + x[1]);
        else if (x.size() == 3 && n == "index.madd") z = emit("add i64 " + emit("mul i64 " + x[0] + ", " + x[1]) + ", " + x[2]);
        else return;
        lane0_[r] = z;
    }
    // Note [Lane 0 as a scalar]: the <N x i64> 0/1 result of `icmp p` on a
    // and b, 64-bit integers of which one steps by one from lane to lane and
    // the other by zero, or "" when they are not such. Lane l of the stepping
    // one is x0 + l (mod 2^64) when the chunk's %affine flag holds; where the
    // N lanes also do not wrap in p's order, they rise, and the lanes below
    // (or at) the other value u are the first ones. Otherwise the vector
    // compare `slow` runs.
    std::string affine_cmp(std::string p, ValueId a, ValueId b, const std::function<std::string()>& slow) {
        if (!wide_int(kind(a)) || !wide_int(kind(b))) return "";
        const auto sa = stride_of(a), sb = stride_of(b);
        if (!sa || !sb) return "";
        if (*sa == 0 && *sb == 1) {
            static const std::map<std::string, std::string> swapped = {
                {"eq", "eq"}, {"ne", "ne"}, {"slt", "sgt"}, {"sle", "sge"}, {"sgt", "slt"}, {"sge", "sle"},
                {"ult", "ugt"}, {"ule", "uge"}, {"ugt", "ult"}, {"uge", "ule"}};
            p = swapped.at(p);
            std::swap(a, b);
        } else if (!(*sa == 1 && *sb == 0)) {
            return "";
        }
        const std::string x0 = lane0(a), u = lane0(b);
        if (x0.empty() || u.empty()) return "";
        const bool sgn = p[0] == 's';
        std::string ok = emit("load i1, ptr %affine");
        if (p != "eq" && p != "ne") {
            const std::string top = sgn ? std::to_string(INT64_MAX - (N - 1)) : std::to_string(-int64_t{N});
            ok = emit("and i1 " + ok + ", " + emit(std::string("icmp ") + (sgn ? "sle" : "ule") + " i64 " + x0 + ", " + top));
        }
        return choose(ok, [&] {
            const std::string d = emit("sub i64 " + u + ", " + x0);
            std::string m;
            if (p == "eq" || p == "ne") {
                const std::string in = emit("icmp ult i64 " + d + ", " + std::to_string(N));
                const std::string bit = emit("shl i64 1, " + emit("select i1 " + in + ", i64 " + d + ", i64 0"));
                std::string bits = emit("select i1 " + in + ", i64 " + bit + ", i64 0");
                if (N < 64) bits = emit("trunc i64 " + bits + " to i" + std::to_string(N));
                m = emit("bitcast i" + std::to_string(N) + " " + bits + " to " + vt("i1"));
                if (p == "ne") m = emit("xor " + vt("i1") + " " + m + ", " + splat("i1", "true"));
            } else {
                const std::string o = sgn ? "s" : "u";
                const bool lt = p.substr(1) == "lt" || p.substr(1) == "ge";   // counts the lanes below u, else those at or below
                std::string c;
                if (lt) {
                    const std::string above = emit("icmp " + o + "gt i64 " + u + ", " + x0);
                    c = emit("select i1 " + above + ", i64 " + d + ", i64 0");
                } else {
                    const std::string atop = emit("icmp " + o + "ge i64 " + u + ", " + x0);
                    const std::string lim = emit("select i1 " + emit("icmp ult i64 " + d + ", " + std::to_string(N - 1)) + ", i64 " + d + ", i64 " +
                                                 std::to_string(N - 1));
                    c = emit("select i1 " + atop + ", i64 " + emit("add i64 " + lim + ", 1") + ", i64 0");
                }
                m = low_lanes(c);
                if (p.substr(1) == "ge" || p.substr(1) == "gt") m = emit("xor " + vt("i1") + " " + m + ", " + splat("i1", "true"));
            }
            return emit("zext " + vt("i1") + " " + m + " to " + vt("i64"));
        }, slow);
    }
    // The scalar test of Note [Lane-affine accesses] for op's element of
    // `view`: "" when the indices have no such form; else the i1 that the
    // fast path may run, with lane 0's byte offset in `byte0` and whether
    // the lanes step one element (`contig`) or share it.
    std::string affine_access(const Op& op, ValueId view, std::string& byte0, bool& contig, int64_t ext = 1) {
        const ViewMeta& m = views_[static_cast<size_t>(view)];
        const size_t rank = m.rank;
        if (rank == 0 || op.indices.size() < rank) return "";
        // One base address for all lanes: bindings and workgroup memory only.
        bool shared = m.binding >= 0 && m.binding < nbind_;
        for (const auto& wa : wg_alloca_)
            if (bindof_[static_cast<size_t>(wa.first)] == m.binding) shared = true;
        if (!shared) return "";
        std::vector<int64_t> st(rank, 0);
        for (size_t d = 0; d < rank; ++d) {
            if (!op.indices[d].is_value()) continue;
            const auto x = stride_of(op.indices[d].value);
            if (!x) return "";
            st[d] = *x;
        }
        for (size_t d = 0; d + 1 < rank; ++d)
            if (st[d] != 0) return "";
        if (st[rank - 1] != 0 && st[rank - 1] != ext) return "";
        contig = st[rank - 1] == ext;
        const int es = elem_size(m.elem);
        std::string ok = emit("load i1, ptr %affine");
        std::vector<std::string> dim(rank);
        for (size_t d = 0; d < rank; ++d) dim[d] = emit("load i64, ptr %vd" + std::to_string(view) + "_" + std::to_string(d));
        std::string lin = "0";
        for (size_t d = 0; d < rank; ++d) {
            std::string i0 = std::to_string(op.indices[d].constant);
            if (op.indices[d].is_value()) {
                const ValueId iv = op.indices[d].value;
                i0 = lane0(iv);
                if (i0.empty()) i0 = emit("extractelement " + vt("i64") + " " + get(iv) + ", i64 0");
            }
            // The last element any lane touches on this axis (a vector's footprint: ext of them).
            const int64_t reach = st[d] * (N - 1) + (d + 1 == rank ? ext - 1 : 0);
            const std::string last = reach ? emit("add i64 " + i0 + ", " + std::to_string(reach)) : i0;
            ok = emit("and i1 " + ok + ", " + emit("icmp sge i64 " + i0 + ", 0"));
            ok = emit("and i1 " + ok + ", " + emit("icmp slt i64 " + last + ", " + dim[d]));
            std::string stride = "1";
            for (size_t e = d + 1; e < rank; ++e) stride = stride == "1" ? dim[e] : emit("mul i64 " + stride + ", " + dim[e]);
            lin = emit("add i64 " + lin + ", " + emit("mul i64 " + i0 + ", " + stride));
        }
        const std::string off = emit("load i64, ptr %vo" + std::to_string(view));
        byte0 = emit("add i64 " + off + ", " + emit("mul i64 " + lin + ", " + std::to_string(es)));
        if (static_inside(m)) return ok;  // Note [Static footprints]
        const std::string endb = emit("add i64 " + byte0 + ", " + std::to_string(contig ? es * ext * N : es * ext));
        ok = emit("and i1 " + ok + ", " + emit("icmp sge i64 " + byte0 + ", 0"));
        ok = emit("and i1 " + ok + ", " + emit("icmp ule i64 " + endb + ", " + size_.at(m.binding)));
        return ok;
    }
    // Note [Static footprints]
    //   A view of workgroup memory (an alloca of a constant size) at a
    //   constant offset with constant extents lies inside its buffer or not,
    //   once for all: when it does, an access whose every index passed its
    //   axis check touches bytes inside the view, so the byte check of the
    //   fast path (Note [Lane-affine accesses]) would always pass and is left
    //   out. In matmul_tiled's inner loop that was most of each LDS read's
    //   cost: the axis checks are loop-invariant (the tile row) or folded by
    //   LLVM (the k index of a constant-bound loop), the byte check was not.
    //   A view that reaches outside its buffer keeps the check, which then
    //   fails as the interpreter's does.
    bool static_inside(const ViewMeta& m) const {
        if (m.static_end < 0) return false;
        for (const auto& [v, at] : wg_alloca_)
            if (bindof_[static_cast<size_t>(v)] == m.binding) return m.static_begin >= 0 && m.static_end <= at.second;
        return false;
    }
    bool any_varying_index(const Op& op) const {
        for (const IndexEntry& e : op.indices)
            if (e.is_value() && vary(e.value)) return true;
        return false;
    }
    std::string last_bad_;  // address(): whether a uniform access is out of bounds

    // Emits r's ops under `mask`; returns the terminator (or nullptr).
    const Op* emit_region(const Region& r, const std::string& mask) {
        for (const Op& op : r.ops) {
            const std::string& n = op.name;
            if (n == "scf.yield" || n == "kernel.return" || n == "scf.condition") return &op;
            emit_op(op, mask);
        }
        return nullptr;
    }

    void emit_op(const Op& op, const std::string& mask) {
        emit_op_unrounded(op, mask);
        // Note [Native f16 and bf16]: every op but a move rounds its narrow results.
        static const std::set<std::string> moves = {"view.load", "scf.if", "scf.for", "scf.while", "scf.yield", "scf.condition",
                                                    "scf.select", "kernel.subgroup.shuffle",
                                                    "kernel.subgroup.broadcast", "kernel.subgroup.broadcast.first",
                                                    "scalar.assume", "index.assume"};
        if (moves.count(op.name)) return;
        for (ValueId r : op.results)
            if (vk_[static_cast<size_t>(r)] == VK::Num && is_half(kind(r))) put(r, round_half(kind(r), get(r), vary(r)), vary(r));
    }
    void emit_op_unrounded(const Op& op, const std::string& mask) {
        const std::string& n = op.name;
        if (n == "buffer.fence" || n == "scf.schedule.fence" || n == "view.prefetch" || n == "kernel.barrier") return;
        if (n == "buffer.alloca") return;  // laid out in scratch, filled when the workgroup starts
        if (n.rfind("buffer.assume.", 0) == 0) return;  // bindings are tracked at plan time
        if (n == "buffer.view") return emit_view(op);
        if (n == "view.load") return emit_load(op, mask);
        if (n.rfind("vector.", 0) == 0) return emit_vector(op, mask);
        if (n == "view.store") return emit_store(op, mask);
        if (n == "scf.if") return emit_if(op, mask);
        if (n == "scf.for") return emit_for(op, mask);
        if (n == "scf.while") return emit_while(op, mask);
        if (is_coord(n)) return emit_coord(op);
        if (is_collective(n)) return emit_collective(op, mask);
        emit_num(op, mask);
        note_stride(op);
        note_lane0(op);
    }

    // --- coordinates --------------------------------------------------------
    // items_ split along axis a of the workgroup shape. Vector integer
    // division has no instruction: the quotient comes from doubles (exact
    // to one unit for ids below 2^32) and is corrected by one step.
    std::string divmod(const std::string& a, const std::string& b, bool want_rem) {
        const std::string V = vt("i64"), D = vt("double");
        const std::string bv = splat("i64", b);
        const std::string q0 = emit("fdiv " + D + " " + emit("sitofp " + V + " " + a + " to " + D) + ", " +
                                    emit("sitofp " + V + " " + bv + " to " + D));
        std::string q = emit("fptosi " + D + " " + intrinsic("floor", "double", true, {q0}) + " to " + V);
        std::string r = emit("sub " + V + " " + a + ", " + emit("mul " + V + " " + q + ", " + bv));
        const std::string neg = emit("icmp slt " + V + " " + r + ", zeroinitializer");
        const std::string one = splat("i64", "1");
        q = emit("select " + vt("i1") + " " + neg + ", " + V + " " + emit("sub " + V + " " + q + ", " + one) + ", " + V + " " + q);
        r = emit("select " + vt("i1") + " " + neg + ", " + V + " " + emit("add " + V + " " + r + ", " + bv) + ", " + V + " " + r);
        const std::string big = emit("icmp sge " + V + " " + r + ", " + bv);
        q = emit("select " + vt("i1") + " " + big + ", " + V + " " + emit("add " + V + " " + q + ", " + one) + ", " + V + " " + q);
        r = emit("select " + vt("i1") + " " + big + ", " + V + " " + emit("sub " + V + " " + r + ", " + bv) + ", " + V + " " + r);
        return want_rem ? r : q;
    }

    // `cond ? fast() : slow()` for <N x i64> values, with a branch, so that
    // only the side taken is computed.
    std::string choose(const std::string& cond, const std::function<std::string()>& fast, const std::function<std::string()>& slow) {
        if (cond == "true") return fast();
        const std::string id = std::to_string(lbl_++);
        const std::string sl = "%pick" + id, lf = "pickf" + id, ls = "picks" + id, lj = "pickj" + id;
        allocas_ << "  " << sl << " = alloca " << vt("i64") << "\n";
        cbr(cond, lf, ls);
        block(lf);
        const std::string f = fast();
        b_ << "  store " << vt("i64") << " " << f << ", ptr " << sl << "\n";
        br(lj);
        block(ls);
        const std::string g = slow();
        b_ << "  store " << vt("i64") << " " << g << ", ptr " << sl << "\n";
        br(lj);
        block(lj);
        return emit("load " + vt("i64") + ", ptr " + sl);
    }

    // choose() for a scalar of type T: the slow side's divisions run only when
    // cond is false (a select would compute both sides every chunk).
    std::string choose_s(const std::string& T, const std::string& cond, const std::function<std::string()>& fast,
                         const std::function<std::string()>& slow) {
        if (cond == "true") return fast();
        const std::string id = std::to_string(lbl_++);
        const std::string sl = "%spick" + id, lf = "spickf" + id, ls = "spicks" + id, lj = "spickj" + id;
        allocas_ << "  " << sl << " = alloca " << T << "\n";
        cbr(cond, lf, ls);
        block(lf);
        const std::string f = fast();
        b_ << "  store " << T << " " << f << ", ptr " << sl << "\n";
        br(lj);
        block(ls);
        const std::string g = slow();
        b_ << "  store " << T << " " << g << ", ptr " << sl << "\n";
        br(lj);
        block(lj);
        return emit("load " + T + ", ptr " + sl);
    }

    std::string split_items(int a) {
        // One-dimensional workgroups (the common case): the id itself.
        const std::string flat = flat_wg();
        const std::string items = items_;
        return choose(flat, [&] { return a == 0 ? items : std::string("zeroinitializer"); }, [&] {
            if (a == 0) return divmod(items, wgs_[0], true);
            if (a == 1) return divmod(divmod(items, wgs_[0], false), wgs_[1], true);
            return divmod(items, emit("mul i64 " + wgs_[0] + ", " + wgs_[1]), false);
        });
    }

    void emit_coord(const Op& op) {
        const std::string& n = op.name;
        const int a = op.params.empty() ? 0 : op.params[0] == "y" ? 1 : op.params[0] == "z" ? 2 : 0;
        const ValueId v = op.results.at(0);
        const int64_t sg = spec_.facts.subgroup_size > 0 ? spec_.facts.subgroup_size : 1;
        if (n == "kernel.workgroup.size") return put(v, wgs_[a], false);
        if (n == "kernel.workgroup.count") return put(v, wgc_[a], false);
        if (n == "kernel.cluster.size" || n == "kernel.cluster.count") return put(v, "1", false);
        if (n == "kernel.subgroup.size") {
            const std::string lt = emit("icmp slt i64 " + std::to_string(sg) + ", " + W_);
            return put(v, emit("select i1 " + lt + ", i64 " + std::to_string(sg) + ", i64 " + W_), false);
        }
        if (n == "kernel.subgroup.count") {
            const std::string s = emit("add i64 " + W_ + ", " + std::to_string(sg - 1));
            return put(v, emit("sdiv i64 " + s + ", " + std::to_string(sg)), false);
        }
        // Note [Lane-affine accesses]: x ids step by one lane to lane, the others not at all.
        if (n == "kernel.workitem.id" || n == "kernel.workitem.dispatch.id" || n == "kernel.workgroup.id")
            stride_[v] = n != "kernel.workgroup.id" && a == 0 ? 1 : 0;
        if (uses_subgroup_ && (n == "kernel.subgroup.id" || n == "kernel.subgroup.lane.id")) stride_[v] = n == "kernel.subgroup.id" ? 0 : 1;
        if (fold_ && n == "kernel.workgroup.id") {
            if (!fold0_wg_[a].empty()) lane0_[v] = fold0_wg_[a];
            return put(v, emit("load " + vt("i64") + ", ptr " + fold_wg_[a]), true);
        }
        if (fold_ && n == "kernel.workitem.id") {
            if (!fold0_item_[a].empty()) lane0_[v] = fold0_item_[a];
            return put(v, emit("load " + vt("i64") + ", ptr " + fold_item_[a]), true);
        }
        if (n == "kernel.workgroup.id") return put(v, wgid_[a], false);
        if (n == "kernel.workitem.id") return put(v, split_items(a), true);
        if (n == "kernel.subgroup.id") return put(v, emit("sdiv " + vt("i64") + " " + items_ + ", " + splat("i64", std::to_string(sg))), true);
        if (n == "kernel.subgroup.lane.id") return put(v, emit("srem " + vt("i64") + " " + items_ + ", " + splat("i64", std::to_string(sg))), true);
        if (n == "kernel.workitem.dispatch.id") {
            if (fold_) {
                if (!fold0_wg_[a].empty() && !fold0_item_[a].empty())
                    lane0_[v] = emit("add i64 " + emit("mul i64 " + fold0_wg_[a] + ", " + wgs_[a]) + ", " + fold0_item_[a]);
                const std::string gw = emit("load " + vt("i64") + ", ptr " + fold_wg_[a]);
                const std::string it = emit("load " + vt("i64") + ", ptr " + fold_item_[a]);
                const std::string g = emit("mul " + vt("i64") + " " + gw + ", " + splat("i64", wgs_[a]));
                return put(v, emit("add " + vt("i64") + " " + g + ", " + it), true);
            }
            const std::string g = emit("mul i64 " + wgid_[a] + ", " + wgs_[a]);
            return put(v, emit("add " + vt("i64") + " " + splat("i64", g) + ", " + split_items(a)), true);
        }
        refuse("coordinate " + n);
    }

    // --- views, loads, stores -----------------------------------------------
    void emit_view(const Op& op) {
        const ValueId v = op.results[0];
        if (vary(v)) refuse("a view whose offset or extents vary between work-items");
        std::string off = "0";
        if (!op.indices.empty()) off = op.indices[0].is_value() ? get(op.indices[0].value) : std::to_string(op.indices[0].constant);
        b_ << "  store i64 " << off << ", ptr %vo" << v << "\n";
        const Type& t = vtype(v);
        for (size_t d = 0; d < t.dims.size(); ++d) {
            std::string e = std::to_string(t.dims[d].extent);
            if (t.dims[d].is_dynamic()) {
                e = get(t.dims[d].value);
                // The interpreter names no lane here, whatever the mask.
                fail_uniform_if(op, emit("icmp slt i64 " + e + ", 0"), kNegativeExtent, e);
            }
            b_ << "  store i64 " << e << ", ptr %vd" << v << "_" << d << "\n";
        }
    }

    std::string mem_type(ScalarKind k) const {
        switch (k) {
            case ScalarKind::I1: case ScalarKind::I8: return "i8";
            case ScalarKind::I16: case ScalarKind::F16: case ScalarKind::BF16: return "i16";
            case ScalarKind::I32: return "i32";
            case ScalarKind::Index: return ib_ == 32 ? "i32" : "i64";
            case ScalarKind::F32: return "float";
            case ScalarKind::F64: return "double";
            default: return "i64";
        }
    }
    int elem_size(ScalarKind k) const {
        const std::string m = mem_type(k);
        return m == "i8" ? 1 : m == "i16" ? 2 : (m == "i32" || m == "float") ? 4 : 8;
    }

    // The byte offsets of op's element for every lane (or one), after the
    // bounds checks of every active lane, in the interpreter's order.
    // `ext` > 1: a vector's footprint along the last axis (the interpreter's addresses() trail).
    std::string address(const Op& op, ValueId view, const std::string& mask, bool& varying, int64_t ext = 1) {
        const ViewMeta& m = views_[static_cast<size_t>(view)];
        const size_t rank = m.rank;
        const int es = elem_size(m.elem);
        varying = false;
        bool wgdep = I(view).wgdep;
        for (const IndexEntry& e : op.indices)
            if (e.is_value()) {
                varying = varying || vary(e.value);
                wgdep = wgdep || I(e.value).wgdep;
            }
        const std::string T = ty("i64", varying);
        std::vector<std::string> idx(rank), dim(rank);
        for (size_t d = 0; d < rank; ++d) {
            idx[d] = op.indices[d].is_value() ? get_as(op.indices[d].value, varying) : cst("i64", std::to_string(op.indices[d].constant), varying);
            dim[d] = emit("load i64, ptr %vd" + std::to_string(view) + "_" + std::to_string(d));
        }
        std::vector<std::string> badd(rank);
        std::string lin = cst("i64", "0", varying);
        std::string anybad;
        for (size_t d = 0; d < rank; ++d) {
            const std::string D = cst("i64", dim[d], varying);
            const std::string lo = emit("icmp slt " + T + " " + idx[d] + ", " + cst("i64", "0", varying));
            const int64_t xd = d + 1 == rank ? ext : 1;
            const std::string hi = xd == 1 ? emit("icmp sge " + T + " " + idx[d] + ", " + D)
                                           : emit("icmp sgt " + T + " " + emit("add " + T + " " + idx[d] + ", " + cst("i64", std::to_string(xd), varying)) + ", " + D);
            badd[d] = emit("or " + ty("i1", varying) + " " + lo + ", " + hi);
            anybad = anybad.empty() ? badd[d] : emit("or " + ty("i1", varying) + " " + anybad + ", " + badd[d]);
            // stride of axis d: product of the later extents
            std::string stride = "1";
            for (size_t e = d + 1; e < rank; ++e) stride = stride == "1" ? dim[e] : emit("mul i64 " + stride + ", " + dim[e]);
            const std::string term = emit("mul " + T + " " + idx[d] + ", " + cst("i64", stride, varying));
            lin = emit("add " + T + " " + lin + ", " + term);
        }
        const std::string off = emit("load i64, ptr %vo" + std::to_string(view));
        const std::string byte = emit("add " + T + " " + cst("i64", off, varying) + ", " +
                                      emit("mul " + T + " " + lin + ", " + cst("i64", std::to_string(es), varying)));
        const std::string endb = emit("add " + T + " " + byte + ", " + cst("i64", std::to_string(es * ext), varying));
        const std::string size = size_.at(m.binding);
        const std::string bneg = emit("icmp slt " + T + " " + byte + ", " + cst("i64", "0", varying));
        const std::string bbig = emit("icmp ugt " + T + " " + endb + ", " + cst("i64", size, varying));
        const std::string bbytes = emit("or " + ty("i1", varying) + " " + bneg + ", " + bbig);
        anybad = anybad.empty() ? bbytes : emit("or " + ty("i1", varying) + " " + anybad + ", " + bbytes);
        check(op, anybad, varying, mask, wgdep, [&](const std::string& lane) {
            if (ext > 1 && rank > 0) {
                const std::string bl = lane_of(badd[rank - 1], lane, "i1", varying);
                std::string first = bl;  // the last axis is the first failure only when no earlier axis fails
                for (size_t d = 0; d + 1 < rank; ++d)
                    first = emit("and i1 " + first + ", " + emit("xor i1 " + lane_of(badd[d], lane, "i1", varying) + ", true"));
                store_err(7, emit("select i1 " + first + ", i64 " + std::to_string(ext) + ", i64 " + size));
            } else {
                store_err(7, size);
            }
            std::array<std::string, 4> f = {std::to_string(kBytesOutside), lane_of(byte, lane, "i64", varying),
                                            lane_of(endb, lane, "i64", varying), std::to_string(m.binding)};
            for (size_t d = rank; d-- > 0;) {
                const std::string bd = lane_of(badd[d], lane, "i1", varying);
                const std::string id = lane_of(idx[d], lane, "i64", varying);
                const int64_t kd = d + 1 == rank && ext > 1 ? kFootprintOutOfBounds : kIndexOutOfBounds;
                f[0] = emit("select i1 " + bd + ", i64 " + std::to_string(kd) + ", i64 " + f[0]);
                f[1] = emit("select i1 " + bd + ", i64 " + id + ", i64 " + f[1]);
                f[2] = emit("select i1 " + bd + ", i64 " + std::to_string(d) + ", i64 " + f[2]);
                f[3] = emit("select i1 " + bd + ", i64 " + dim[d] + ", i64 " + f[3]);
            }
            return f;
        });
        // Inactive lanes may hold any offset: keep their pointers harmless.
        if (!varying) {
            // A uniform access with no active lane is skipped by the interpreter;
            // an out-of-bounds one then must not touch memory.
            last_bad_ = anybad;
            return byte;
        }
        return byte;
    }

    // Note [Native f16 and bf16]
    //   The interpreter keeps f16 and bf16 values as doubles holding the
    //   exact narrow value, computes each op in float and rounds its result
    //   with fround (through float rounded to odd, then round-to-nearest-even
    //   to the narrow type; the odd step does nothing to a float). Native code
    //   keeps them in float registers (every f16/bf16 value is a float) and
    //   rounds the results of every op but a move (loads, selects, control
    //   flow's carried values, shuffles and broadcasts copy bits, as in the
    //   interpreter) right after it, in emit_op, so every op the generator
    //   lowers for float gets the interpreter's rounding for free:
    //   f16 by LLVM's fptrunc to half (round-to-nearest-even, overflow to
    //   infinity, subnormals kept) and back, bf16 by the integer rounding of
    //   kernels/bf16.h. Rounding is idempotent on a narrow value.
    //   NaNs follow kernels' conversions bit for bit (f16: quiet bit set,
    //   payload kept in the top 10 bits, which fptrunc alone does not
    //   promise; bf16: 0x7FC0 with the sign).
    //   Loads widen exactly (f16 through fpext, NaNs rebuilt from the bits;
    //   bf16 by a shift, a NaN quieted as the interpreter's double does), stores narrow exactly (the value is already
    //   narrow). What would round twice is refused: f64 to f16/bf16, and the
    //   subgroup reduce helper (the interpreter rounds each of its steps).
    std::string round_half(ScalarKind k, const std::string& x, bool v) {
        const std::string F = ty("float", v), I = ty("i32", v), B = ty("i1", v);
        const std::string bits = emit("bitcast " + F + " " + x + " to " + I);
        const std::string nan = emit("fcmp uno " + F + " " + x + ", " + x);
        std::string r;
        if (k == ScalarKind::F16) {
            const std::string h = emit("fptrunc " + F + " " + x + " to " + ty("half", v));
            r = emit("bitcast " + F + " " + emit("fpext " + ty("half", v) + " " + h + " to " + F) + " to " + I);
            // f32_bits_to_f16 then f16_to_f32_bits of a NaN: sign, quiet, the payload's top 10 bits.
            const std::string q = emit("or " + I + " " + emit("and " + I + " " + bits + ", " + cst("i32", "-2139103232", v)) + ", " + cst("i32", "2143289344", v));
            r = emit("select " + B + " " + nan + ", " + I + " " + q + ", " + I + " " + r);
        } else {
            const std::string odd = emit("and " + I + " " + emit("lshr " + I + " " + bits + ", " + cst("i32", "16", v)) + ", " + cst("i32", "1", v));
            const std::string up = emit("add " + I + " " + bits + ", " + emit("add " + I + " " + odd + ", " + cst("i32", "32767", v)));
            const std::string rn = emit("and " + I + " " + up + ", " + cst("i32", "-65536", v));
            const std::string q = emit("or " + I + " " + emit("and " + I + " " + bits + ", " + cst("i32", "-2147483648", v)) + ", " + cst("i32", "2143289344", v));
            r = emit("select " + B + " " + nan + ", " + I + " " + q + ", " + I + " " + rn);
        }
        return emit("bitcast " + I + " " + r + " to " + F);
    }
    // Memory i16 → float register (exact).
    std::string half_to_reg(ScalarKind k, const std::string& x, bool v) {
        const std::string F = ty("float", v), I = ty("i32", v), H = ty("i16", v);
        const std::string w = emit("zext " + H + " " + x + " to " + I);
        if (k == ScalarKind::BF16) {
            // Widened as the interpreter widens (through double): a NaN comes out quiet.
            const std::string b = emit("shl " + I + " " + w + ", " + cst("i32", "16", v));
            const std::string nan = emit("icmp ugt " + I + " " + emit("and " + I + " " + b + ", " + cst("i32", "2147483647", v)) + ", " + cst("i32", "2139095040", v));
            const std::string q = emit("or " + I + " " + b + ", " + cst("i32", "4194304", v));
            return emit("bitcast " + I + " " + emit("select " + ty("i1", v) + " " + nan + ", " + I + " " + q + ", " + I + " " + b) + " to " + F);
        }
        const std::string f = emit("fpext " + ty("half", v) + " " + emit("bitcast " + H + " " + x + " to " + ty("half", v)) + " to " + F);
        // f16_to_f32_bits of a NaN: sign, all-ones exponent, quiet bit, payload << 13.
        const std::string sign = emit("shl " + I + " " + emit("and " + I + " " + w + ", " + cst("i32", "32768", v)) + ", " + cst("i32", "16", v));
        const std::string pay = emit("shl " + I + " " + emit("and " + I + " " + w + ", " + cst("i32", "1023", v)) + ", " + cst("i32", "13", v));
        const std::string q = emit("or " + I + " " + emit("or " + I + " " + sign + ", " + pay) + ", " + cst("i32", "2143289344", v));
        const std::string nan = emit("icmp ugt " + I + " " + emit("and " + I + " " + w + ", " + cst("i32", "32767", v)) + ", " + cst("i32", "31744", v));
        return emit("select " + ty("i1", v) + " " + nan + ", " + F + " " + emit("bitcast " + I + " " + q + " to " + F) + ", " + F + " " + f);
    }
    // Float register holding a narrow value → memory i16 (exact).
    std::string half_to_mem(ScalarKind k, const std::string& x, bool v) {
        const std::string F = ty("float", v), I = ty("i32", v), H = ty("i16", v);
        const std::string bits = emit("bitcast " + F + " " + x + " to " + I);
        if (k == ScalarKind::BF16) return emit("trunc " + I + " " + emit("lshr " + I + " " + bits + ", " + cst("i32", "16", v)) + " to " + H);
        const std::string h = emit("bitcast " + ty("half", v) + " " + emit("fptrunc " + F + " " + x + " to " + ty("half", v)) + " to " + H);
        // f32_bits_to_f16 of a NaN: sign, 0x7E00, the payload's top 10 bits.
        const std::string sign = emit("and " + I + " " + emit("lshr " + I + " " + bits + ", " + cst("i32", "16", v)) + ", " + cst("i32", "32768", v));
        const std::string pay = emit("and " + I + " " + emit("lshr " + I + " " + bits + ", " + cst("i32", "13", v)) + ", " + cst("i32", "1023", v));
        const std::string q = emit("trunc " + I + " " + emit("or " + I + " " + emit("or " + I + " " + sign + ", " + pay) + ", " + cst("i32", "32256", v)) + " to " + H);
        const std::string nan = emit("fcmp uno " + F + " " + x + ", " + x);
        return emit("select " + ty("i1", v) + " " + nan + ", " + H + " " + q + ", " + H + " " + h);
    }

    std::string to_reg(ScalarKind k, const std::string& x, bool v) {
        const std::string mt = mem_type(k);
        if (is_half(k)) return half_to_reg(k, x, v);
        if (mt == "float" || mt == "double") return x;
        if (k == ScalarKind::I1) {
            const std::string a = emit("and " + ty("i8", v) + " " + x + ", " + cst("i8", "1", v));
            return emit("zext " + ty("i8", v) + " " + a + " to " + ty("i64", v));
        }
        if (mt == "i64") return x;
        return emit("sext " + ty(mt, v) + " " + x + " to " + ty("i64", v));
    }
    std::string to_mem(ScalarKind k, const std::string& x, bool v) {
        const std::string mt = mem_type(k);
        if (is_half(k)) return half_to_mem(k, x, v);
        if (mt == "float" || mt == "double" || mt == "i64") return x;
        return emit("trunc " + ty("i64", v) + " " + x + " to " + ty(mt, v));
    }
    static std::string suffix(const std::string& mt) {
        return mt == "float" ? "f32" : mt == "double" ? "f64" : mt;
    }

    // Whether the lane offsets are one contiguous run of elements.
    std::string contiguous(const std::string& byte, int es) {
        const std::string b0 = emit("extractelement " + vt("i64") + " " + byte + ", i64 0");
        const std::string want = emit("add " + vt("i64") + " " + splat("i64", b0) + ", " +
                                      emit("mul " + vt("i64") + " " + iota() + ", " + splat("i64", std::to_string(es))));
        return all(emit("icmp eq " + vt("i64") + " " + byte + ", " + want));
    }

    void emit_load(const Op& op, const std::string& mask) {
        const ValueId view = op.operands[0];
        const ValueId res = op.results[0];
        std::string byte0;
        bool contig = false;
        const std::string fast = any_varying_index(op) && vary(res) ? affine_access(op, view, byte0, contig) : "";
        if (fast.empty()) return emit_load_general(op, mask);
        // Note [Lane-affine accesses]
        const ViewMeta& m = views_[static_cast<size_t>(view)];
        const std::string mt = mem_type(m.elem);
        const std::string lf = label("lda"), ls = label("ldg"), lj = label("ldj");
        cbr(fast, lf, ls);
        block(lf);
        const std::string p = emit("getelementptr i8, ptr " + base_.at(m.binding) + ", i64 " + byte0);
        std::string x;
        if (contig) {
            const std::string fn = "@llvm.masked.load.v" + std::to_string(N) + suffix(mt) + ".p0";
            declare("declare " + vt(mt) + " " + fn + "(ptr, i32, " + vt("i1") + ", " + vt(mt) + ")");
            x = emit("call " + vt(mt) + " " + fn + "(ptr " + p + ", i32 1, " + vt("i1") + " " + mask + ", " + vt(mt) + " zeroinitializer)");
        } else {
            // Inactive lanes read 0, as from the general path's gather.
            const std::string one = splat(mt, emit("load " + mt + ", ptr " + p + ", align 1"));
            x = emit("select " + vt("i1") + " " + mask + ", " + vt(mt) + " " + one + ", " + vt(mt) + " zeroinitializer");
        }
        put(res, to_reg(m.elem, x, true), true);
        br(lj);
        block(ls);
        emit_load_general(op, mask);
        br(lj);
        block(lj);
    }

    void emit_load_general(const Op& op, const std::string& mask) {
        const ValueId view = op.operands[0];
        const ValueId res = op.results[0];
        const ViewMeta& m = views_[static_cast<size_t>(view)];
        bool v = false;
        const std::string byte = address(op, view, mask, v);
        const std::string base = base_.at(m.binding);
        const std::string mt = mem_type(m.elem);
        const int es = elem_size(m.elem);
        if (!v) {
            // Out of bounds with no active lane: no error, and no access.
            const std::string ld = label("ldu"), lj = label("ldj");
            cbr(last_bad_, lj, ld);
            block(ld);
            const std::string p = emit("getelementptr i8, ptr " + base + ", i64 " + byte);
            put(res, to_reg(m.elem, emit("load " + mt + ", ptr " + p + ", align 1"), false), false);
            br(lj);
            block(lj);
            return;
        }
        if (!vary(res)) refuse("internal: a varying load into a uniform value");
        const std::string c = contiguous(byte, es);
        const std::string lc = label("ldc"), lg = label("ldg"), lj = label("ldj");
        cbr(c, lc, lg);
        block(lc);
        {
            const std::string b0 = emit("extractelement " + vt("i64") + " " + byte + ", i64 0");
            const std::string p = emit("getelementptr i8, ptr " + base + ", i64 " + b0);
            const std::string fn = "@llvm.masked.load.v" + std::to_string(N) + suffix(mt) + ".p0";
            declare("declare " + vt(mt) + " " + fn + "(ptr, i32, " + vt("i1") + ", " + vt(mt) + ")");
            const std::string x = emit("call " + vt(mt) + " " + fn + "(ptr " + p + ", i32 1, " + vt("i1") + " " + mask + ", " + vt(mt) + " zeroinitializer)");
            put(res, to_reg(m.elem, x, true), true);
            br(lj);
        }
        block(lg);
        {
            // Every lane active at one address (a row of a tile read by a whole chunk, as
            // matmul_tiled reads its A tile): one load, broadcast, instead of a gather.
            const std::string b0 = emit("extractelement " + vt("i64") + " " + byte + ", i64 0");
            const std::string same = emit("and i1 " + all(emit("icmp eq " + vt("i64") + " " + byte + ", " + splat("i64", b0))) + ", " + all(mask));
            const std::string lb1 = label("ldb"), lg2 = label("ldg");
            cbr(same, lb1, lg2);
            block(lb1);
            const std::string p = emit("getelementptr i8, ptr " + base + ", i64 " + b0);
            put(res, to_reg(m.elem, splat(mt, emit("load " + mt + ", ptr " + p + ", align 1")), true), true);
            br(lj);
            block(lg2);
        }
        {
            const std::string ps = emit("getelementptr i8, ptr " + base + ", " + vt("i64") + " " + byte);
            const std::string fn = "@llvm.masked.gather.v" + std::to_string(N) + suffix(mt) + ".v" + std::to_string(N) + "p0";
            declare("declare " + vt(mt) + " " + fn + "(" + vt("ptr") + ", i32, " + vt("i1") + ", " + vt(mt) + ")");
            const std::string x = emit("call " + vt(mt) + " " + fn + "(" + vt("ptr") + " " + ps + ", i32 1, " + vt("i1") + " " + mask + ", " + vt(mt) + " zeroinitializer)");
            put(res, to_reg(m.elem, x, true), true);
            br(lj);
        }
        block(lj);
    }

    void emit_store(const Op& op, const std::string& mask) {
        const ValueId val = op.operands[0];
        const ValueId view = op.operands[1];
        std::string byte0;
        bool contig = false;
        const ViewMeta& m = views_[static_cast<size_t>(view)];
        const std::string fast = any_varying_index(op) && std::string(reg_type(kind(val))) == reg_type(m.elem)
                                     ? affine_access(op, view, byte0, contig) : "";
        // Note [Lane-affine accesses]: consecutive elements only (lanes sharing
        // an element keep the general path's last-lane-wins order).
        if (fast.empty() || !contig) return emit_store_general(op, mask);
        const std::string mt = mem_type(m.elem);
        const std::string lf = label("sta"), ls = label("stg"), lj = label("stj");
        cbr(fast, lf, ls);
        block(lf);
        const std::string x = to_mem(m.elem, get_as(val, true), true);
        const std::string p = emit("getelementptr i8, ptr " + base_.at(m.binding) + ", i64 " + byte0);
        const std::string fn = "@llvm.masked.store.v" + std::to_string(N) + suffix(mt) + ".p0";
        declare("declare void " + fn + "(" + vt(mt) + ", ptr, i32, " + vt("i1") + ")");
        b_ << "  call void " << fn << "(" << vt(mt) << " " << x << ", ptr " << p << ", i32 1, " << vt("i1") << " " << mask << ")\n";
        br(lj);
        block(ls);
        emit_store_general(op, mask);
        br(lj);
        block(lj);
    }

    void emit_store_general(const Op& op, const std::string& mask) {
        const ValueId val = op.operands[0];
        const ValueId view = op.operands[1];
        const ViewMeta& m = views_[static_cast<size_t>(view)];
        if (std::string(reg_type(kind(val))) != reg_type(m.elem)) refuse("view.store of a value whose type differs from the view's element");
        bool v = false;
        const std::string byte = address(op, view, mask, v);
        const std::string base = base_.at(m.binding);
        const std::string mt = mem_type(m.elem);
        const int es = elem_size(m.elem);
        if (!v) {
            if (vary(val)) {
                // One address, several values: the last active lane wins, as
                // in the interpreter's lane loop.
                const std::string bits = mask_bits(mask);
                const std::string lz = emit("call i" + std::to_string(N) + " @llvm.ctlz.i" + std::to_string(N) + "(i" + std::to_string(N) + " " + bits + ", i1 false)");
                declare("declare i" + std::to_string(N) + " @llvm.ctlz.i" + std::to_string(N) + "(i" + std::to_string(N) + ", i1)");
                const std::string last = emit("sub i" + std::to_string(N) + " " + std::to_string(N - 1) + ", " + lz);
                const std::string l64 = N == 64 ? last : emit("zext i" + std::to_string(N) + " " + last + " to i64");
                const std::string x = emit("extractelement " + rty(val) + " " + get(val) + ", i64 " + l64);
                const std::string a = emit("and i1 " + any(mask) + ", " + emit("xor i1 " + last_bad_ + ", true")), s = label("st"), j = label("stj");
                cbr(a, s, j);
                block(s);
                const std::string p = emit("getelementptr i8, ptr " + base + ", i64 " + byte);
                const std::string xm = to_mem(m.elem, x, false);
                b_ << "  store " << mt << " " << xm << ", ptr " << p << ", align 1\n";
                br(j);
                block(j);
                return;
            }
            const std::string x = get(val);
            const std::string a = emit("and i1 " + any(mask) + ", " + emit("xor i1 " + last_bad_ + ", true")), s = label("st"), j = label("stj");
            cbr(a, s, j);
            block(s);
            const std::string p = emit("getelementptr i8, ptr " + base + ", i64 " + byte);
            const std::string xm = to_mem(m.elem, x, false);
            b_ << "  store " << mt << " " << xm << ", ptr " << p << ", align 1\n";
            br(j);
            block(j);
            return;
        }
        const std::string x = to_mem(m.elem, get_as(val, true), true);
        const std::string c = contiguous(byte, es);
        const std::string lc = label("stc"), lg = label("stg"), lj = label("stj");
        cbr(c, lc, lg);
        block(lc);
        {
            const std::string b0 = emit("extractelement " + vt("i64") + " " + byte + ", i64 0");
            const std::string p = emit("getelementptr i8, ptr " + base + ", i64 " + b0);
            const std::string fn = "@llvm.masked.store.v" + std::to_string(N) + suffix(mt) + ".p0";
            declare("declare void " + fn + "(" + vt(mt) + ", ptr, i32, " + vt("i1") + ")");
            b_ << "  call void " << fn << "(" << vt(mt) << " " << x << ", ptr " << p << ", i32 1, " << vt("i1") << " " << mask << ")\n";
            br(lj);
        }
        block(lg);
        {
            // Lanes in order: where two active lanes share an address the
            // higher one's value stays, as in the interpreter.
            const std::string ps = emit("getelementptr i8, ptr " + base + ", " + vt("i64") + " " + byte);
            const std::string fn = "@llvm.masked.scatter.v" + std::to_string(N) + suffix(mt) + ".v" + std::to_string(N) + "p0";
            declare("declare void " + fn + "(" + vt(mt) + ", " + vt("ptr") + ", i32, " + vt("i1") + ")");
            b_ << "  call void " << fn << "(" << vt(mt) << " " << x << ", " << vt("ptr") << " " << ps << ", i32 1, " << vt("i1") << " " << mask << ")\n";
            br(lj);
        }
        block(lj);
    }

    // --- control flow -----------------------------------------------------------
    // A vector's elements, or the value itself.
    std::vector<ValueId> flat(ValueId v) const {
        auto it = comps_.find(v);
        return it == comps_.end() ? std::vector<ValueId>{v} : it->second;
    }
    // dst[k] = src[k] for k < n (all read before any is written, element by
    // element for vectors), under `m` when `masked`.
    void transfer(const std::vector<ValueId>& dst, const std::vector<ValueId>& src, size_t n, const std::string& m, bool masked) {
        std::vector<ValueId> d, s;
        for (size_t k = 0; k < n; ++k) {
            const std::vector<ValueId> a = flat(dst[k]), b = flat(src[k]);
            if (a.size() != b.size()) refuse("a carried vector whose length changes");
            d.insert(d.end(), a.begin(), a.end());
            s.insert(s.end(), b.begin(), b.end());
        }
        std::vector<std::string> xs;
        for (ValueId w : s) xs.push_back(get(w));
        for (size_t k = 0; k < d.size(); ++k) masked ? put_masked(d[k], xs[k], vary(s[k]), m) : put(d[k], xs[k], vary(s[k]));
    }

    void emit_if(const Op& op, const std::string& mask) {
        const ValueId c = op.operands.at(0);
        const bool has_else = op.regions.size() > 1;
        auto results = [&](const Op* tm, const std::string& m, bool masked) {
            if (!tm) return;
            transfer(op.results, tm->operands, std::min(op.results.size(), tm->operands.size()), m, masked);
        };
        const std::string lt = label("then"), le = label("else"), lj = label("endif");
        if (!vary(c)) {
            const std::string cv = get(c);
            const std::string b = emit("icmp ne i64 " + cv + ", 0");
            cbr(b, lt, le);
            block(lt);
            results(emit_region(op.regions[0], mask), mask, false);
            br(lj);
            block(le);
            if (has_else) results(emit_region(op.regions[1], mask), mask, false);
            br(lj);
            block(lj);
            return;
        }
        const std::string cv = get(c);
        const std::string cb = emit("icmp ne " + vt("i64") + " " + cv + ", zeroinitializer");
        const std::string tm = emit("and " + vt("i1") + " " + mask + ", " + cb);
        const std::string ncb = emit("xor " + vt("i1") + " " + cb + ", " + splat("i1", "true"));
        const std::string em = emit("and " + vt("i1") + " " + mask + ", " + ncb);
        const std::string lt2 = label("thenskip");
        cbr(any(tm), lt, lt2);
        block(lt);
        results(emit_region(op.regions[0], tm), tm, true);
        br(lt2);
        block(lt2);
        if (has_else) {
            cbr(any(em), le, lj);
            block(le);
            results(emit_region(op.regions[1], em), em, true);
            br(lj);
        } else {
            br(lj);
        }
        block(lj);
    }

    void emit_for(const Op& op, const std::string& mask) {
        const Region& body = op.regions.at(0);
        const ValueId iv = body.args.at(0);
        const size_t nc = body.args.size() - 1;
        if (op.operands.size() != 3 + nc) refuse("scf.for whose carried values do not match its body");
        const std::vector<ValueId> carried(body.args.begin() + 1, body.args.end());
        transfer(carried, std::vector<ValueId>(op.operands.begin() + 3, op.operands.end()), nc, "", false);
        const bool v = vary(iv);
        const std::string lh = label("for"), lb = label("forbody"), lx = label("forexit");
        auto yield = [&](const Op* tm, const std::string& m, bool masked) {
            if (!tm) return;
            transfer(carried, tm->operands, std::min(nc, tm->operands.size()), m, masked);
        };
        if (!v) {
            const std::string lo = get(op.operands[0]), hi = get(op.operands[1]), st = get(op.operands[2]);
            fail_uniform_if(op, emit("icmp sle i64 " + st + ", 0"), kLoopStep, st);
            put(iv, lo, false);
            const std::string la = label("foractive");
            cbr(any(mask), lh, lx);
            block(lh);
            const std::string cur = get(iv);
            cbr(emit("icmp slt i64 " + cur + ", " + hi), lb, lx);
            block(lb);
            yield(emit_region(body, mask), mask, false);
            const std::string nx = emit("add i64 " + get(iv) + ", " + st);
            put(iv, nx, false);
            br(lh);
            (void)la;
            block(lx);
        } else {
            const std::string lo = get_as(op.operands[0], true), hi = get_as(op.operands[1], true), st = get_as(op.operands[2], true);
            const std::string bad = emit("icmp sle " + vt("i64") + " " + st + ", zeroinitializer");
            check(op, bad, true, mask, false, [&](const std::string&) {
                return std::array<std::string, 4>{std::to_string(kLoopStep), "0", "0", "0"};
            });
            put(iv, lo, true);
            br(lh);
            block(lh);
            const std::string cur = get(iv);
            const std::string in = emit("icmp slt " + vt("i64") + " " + cur + ", " + hi);
            const std::string run = emit("and " + vt("i1") + " " + mask + ", " + in);
            cbr(any(run), lb, lx);
            block(lb);
            yield(emit_region(body, run), run, true);
            const std::string now = get(iv);
            const std::string nx = emit("add " + vt("i64") + " " + now + ", " + st);
            put(iv, emit("select " + vt("i1") + " " + run + ", " + vt("i64") + " " + nx + ", " + vt("i64") + " " + now), true);
            br(lh);
            block(lx);
        }
        transfer(op.results, carried, std::min(op.results.size(), nc), "", false);
    }

    void emit_while(const Op& op, const std::string& mask) {
        const Region& before = op.regions[0];
        const Region& after = op.regions[1];
        if (op.operands.size() != before.args.size()) refuse("scf.while whose carried values do not match its before-region");
        for (size_t k = 0; k < before.args.size(); ++k) put(before.args[k], get(op.operands[k]), vary(op.operands[k]));
        const std::string runslot = "%run" + std::to_string(lbl_++);
        allocas_ << "  " << runslot << " = alloca " << vt("i1") << "\n";
        b_ << "  store " << vt("i1") << " " << mask << ", ptr " << runslot << "\n";
        const std::string lh = label("while"), lb = label("whilebefore"), la = label("whileafter"), lx = label("whileexit");
        br(lh);
        block(lh);
        const std::string run = emit("load " + vt("i1") + ", ptr " + runslot);
        cbr(any(run), lb, lx);
        block(lb);
        const Op* c = emit_region(before, run);
        if (!c || c->name != "scf.condition" || c->operands.empty()) refuse("scf.while whose before-region does not end in scf.condition");
        const ValueId cv = c->operands[0];
        std::vector<std::pair<std::string, bool>> fwd;
        for (size_t k = 1; k < c->operands.size(); ++k) fwd.push_back({get(c->operands[k]), vary(c->operands[k])});
        std::string stay, leave;
        if (vary(cv)) {
            const std::string cb = emit("icmp ne " + vt("i64") + " " + get(cv) + ", zeroinitializer");
            stay = emit("and " + vt("i1") + " " + run + ", " + cb);
            leave = emit("and " + vt("i1") + " " + run + ", " + emit("xor " + vt("i1") + " " + cb + ", " + splat("i1", "true")));
        } else {
            const std::string cb = emit("icmp ne i64 " + get(cv) + ", 0");
            stay = emit("select i1 " + cb + ", " + vt("i1") + " " + run + ", " + vt("i1") + " zeroinitializer");
            leave = emit("select i1 " + cb + ", " + vt("i1") + " zeroinitializer, " + vt("i1") + " " + run);
        }
        // Leaving lanes take the forwarded values as results.
        const std::string lr = label("whileleave"), lr2 = label("whileleft");
        cbr(any(leave), lr, lr2);
        block(lr);
        for (size_t k = 0; k < op.results.size() && k < fwd.size(); ++k) put_masked(op.results[k], fwd[k].first, fwd[k].second, leave);
        br(lr2);
        block(lr2);
        cbr(any(stay), la, lx);
        block(la);
        for (size_t k = 0; k < after.args.size() && k < fwd.size(); ++k) put(after.args[k], fwd[k].first, fwd[k].second);
        const Op* y = emit_region(after, stay);
        if (y && y->operands.size() == before.args.size()) {
            std::vector<std::pair<std::string, bool>> ys;
            for (ValueId w : y->operands) ys.push_back({get(w), vary(w)});
            for (size_t k = 0; k < ys.size(); ++k) put_masked(before.args[k], ys[k].first, ys[k].second, stay);
        }
        b_ << "  store " << vt("i1") << " " << stay << ", ptr " << runslot << "\n";
        br(lh);
        block(lx);
    }

    // --- subgroup collectives ------------------------------------------------------
    // Each through a helper (below) that follows the interpreter's sg_*
    // handlers lane by lane over the chunk's stack copies.
    static int64_t elem_code(ScalarKind k) { return static_cast<int64_t>(k); }

    void store_lanes(ValueId v, const std::string& dst) {
        const std::string x = get_as(v, true);
        b_ << "  store " << vt(reg_type(kind(v))) << " " << x << ", ptr " << dst << "\n";
    }

    void emit_collective(const Op& op, const std::string& mask) {
        const std::string& n = op.name;
        const std::string m8 = emit("zext " + vt("i1") + " " + mask + " to " + vt("i8"));
        b_ << "  store " << vt("i8") << " " << m8 << ", ptr %sgM\n";
        // Work-items of this subgroup that exist (the interpreter's batch ends at the workgroup).
        const std::string live0 = emit("sub i64 " + W_ + ", " + ci_);
        const std::string lt = emit("icmp slt i64 " + live0 + ", " + std::to_string(N));
        const std::string live = emit("select i1 " + lt + ", i64 " + live0 + ", i64 " + std::to_string(N));
        const ValueId v = op.operands.at(0);
        const ValueId r = op.results.at(0);
        const std::string NN = std::to_string(N);
        if (n == "kernel.subgroup.reduce") {
            const std::string rk = norm_kind(red_kind(op));
            const Attr* rcs = op.attr("cluster_size");
            const ScalarKind ek = kind(v);
            static const std::map<std::string, double> identity = {
                {"add", -0.0}, {"mul", 1.0}, {"minnumf", NAN}, {"maxnumf", NAN}, {"minimumf", INFINITY}, {"maximumf", -INFINITY}};
            if (identity.count(rk) && (ek == ScalarKind::F32 || ek == ScalarKind::F64) && (!rcs || rcs->i == N) &&
                spec_.facts.subgroup_size == N) {
                // The helper's chain inline (its order: active lanes from the lowest, each
                // step rounded to the type) from the op's identity, exact on every first
                // lane, signed zeros and NaNs included: -0 for add, 1 for mul, NaN for
                // minnum/maxnum (which return the other operand's bits), -inf/+inf for
                // maximum/minimum (a NaN lane's a + b is that NaN); +0 when no lane is
                // active, as the helper leaves it.
                const std::string ft = reg_type(ek), x = get_as(v, true);
                std::string acc = float_lit(ek, identity.at(rk));
                for (int l = 0; l < N; ++l) {
                    const std::string e = emit("extractelement " + vt(ft) + " " + x + ", i64 " + std::to_string(l));
                    const std::string ml = emit("extractelement " + vt("i1") + " " + mask + ", i64 " + std::to_string(l));
                    std::string st;
                    if (rk == "add" || rk == "mul") {
                        st = emit(std::string(rk == "add" ? "fadd " : "fmul ") + ft + " " + acc + ", " + e);
                    } else if (rk == "minnumf" || rk == "maxnumf") {
                        st = num_minmax(rk == "maxnumf", ft, acc, e, false);
                    } else {
                        st = nan_minmax(rk == "maximumf", ft, acc, e, false);
                    }
                    acc = emit("select i1 " + ml + ", " + ft + " " + st + ", " + ft + " " + acc);
                }
                acc = emit("select i1 " + any(mask) + ", " + ft + " " + acc + ", " + ft + " " + float_lit(ek, 0.0));
                return put(r, splat(ft, acc), true);
            }
            store_lanes(v, "%sgV");
            static const std::vector<std::string> kinds = {"add", "mul", "and", "or", "xor", "minsi", "maxsi", "minui", "maxui",
                                                           "minnumf", "maxnumf", "minimumf", "maximumf"};
            const std::string k = norm_kind(red_kind(op));
            int64_t code = 0;
            while (kinds[static_cast<size_t>(code)] != k) ++code;
            const Attr* cs = op.attr("cluster_size");
            const int64_t cluster = cs ? cs->i : spec_.facts.subgroup_size;
            declare("declare void @hrx_loom_sg_reduce(i64, i64, ptr, ptr, i64, i64, ptr)");
            b_ << "  call void @hrx_loom_sg_reduce(i64 " << code << ", i64 " << elem_code(kind(v)) << ", ptr %sgV, ptr %sgM, i64 " << NN
               << ", i64 " << cluster << ", ptr %sgO)\n";
        } else if (n == "kernel.subgroup.broadcast" || n == "kernel.subgroup.broadcast.first") {
            store_lanes(v, "%sgV");
            const bool first = n == "kernel.subgroup.broadcast.first";
            if (!first) store_lanes(op.operands.at(1), "%sgS");
            declare("declare void @hrx_loom_sg_broadcast(i64, i64, ptr, ptr, ptr, i64, i64, ptr)");
            b_ << "  call void @hrx_loom_sg_broadcast(i64 " << (first ? 1 : 0) << ", i64 " << reg_bytes(kind(v))
               << ", ptr %sgV, ptr %sgS, ptr %sgM, i64 " << NN << ", i64 " << live << ", ptr %sgO)\n";
        } else if (n == "kernel.subgroup.shuffle") {
            store_lanes(v, "%sgV");
            store_lanes(op.operands.at(1), "%sgS");
            const std::string mode = op.params.empty() ? "index" : op.params[0];
            const int64_t mc = mode == "xor" ? 0 : mode == "up" ? 1 : mode == "down" ? 2 : 3;
            declare("declare void @hrx_loom_sg_shuffle(i64, i64, ptr, ptr, ptr, i64, i64, ptr, ptr)");
            b_ << "  call void @hrx_loom_sg_shuffle(i64 " << mc << ", i64 " << reg_bytes(kind(v)) << ", ptr %sgV, ptr %sgS, ptr %sgM, i64 "
               << NN << ", i64 " << spec_.facts.subgroup_size << ", ptr %sgO, ptr %sgK)\n";
            if (op.results.size() > 1) put(op.results[1], emit("load " + vt("i64") + ", ptr %sgK"), true);
        } else {
            store_lanes(v, "%sgV");
            const std::string mode = vote_mode(op);
            const int64_t mc = mode == "ballot" ? 0 : mode == "count" ? 1 : mode == "all" ? 2 : 3;
            declare("declare void @hrx_loom_sg_vote(i64, i64, ptr, ptr, i64, ptr)");
            b_ << "  call void @hrx_loom_sg_vote(i64 " << mc << ", i64 " << elem_code(kind(r)) << ", ptr %sgV, ptr %sgM, i64 " << NN << ", ptr %sgO)\n";
        }
        put(r, emit("load " + vt(reg_type(kind(r))) + ", ptr %sgO"), true);
    }

    // --- vectors ----------------------------------------------------------------
    // Note [Native Loom vectors]
    //   A vector<K x T> value of a work-item is K values of type T, one per
    //   element: check_vector gives each element an id of its own (after the
    //   program's values), with the vector's uniformity, so an element lives
    //   where a scalar would (a register slot, or per work-item scratch in
    //   split kernels) and every lanewise op is the scalar op on each element.
    //   The interpreter's order is kept: vector.dotf is the chain of fmas in
    //   element order from the accumulator (+0 without one), vector.load checks
    //   its whole footprint (the trailing axis [i, i + K)) and the bytes it
    //   covers before it reads, and reads element by element; vector.store
    //   checks the same way and writes element by element (work-items whose
    //   footprints overlap race, as any two work-items writing the same bytes
    //   do). What it lowers: 1-D vectors of up to 64 integer, f32 or f64
    //   elements made by vector.load, vector.splat or vector.constant,
    //   converted lanewise (extsi, extui, trunci, sitofp, uitofp, fptosi,
    //   fptoui, extf, fptrunc), combined lanewise (addf, subf, mulf, divf,
    //   fmaf: each element the scalar op), carried by scf.if and scf.for (a
    //   carried vector moves element by element, transfer()), consumed by
    //   vector.dotf and vector.store. Not yet: vectors under scf.while,
    //   f16/bf16 vectors, extract/insert/broadcast/reduce and the other vector
    //   ops (each refused with its name).
    static bool vector_cast(const std::string& b) {
        return b == "extsi" || b == "extui" || b == "trunci" || b == "sitofp" || b == "uitofp" || b == "fptosi" || b == "fptoui" ||
               b == "extf" || b == "fptrunc";
    }
    void check_vector(const Op& op) {
        const std::string& n = op.name;
        const std::string b = n.substr(7);
        if (n != "vector.load" && n != "vector.store" && n != "vector.splat" && n != "vector.dotf" && n != "vector.constant" &&
            !vector_cast(b) && !vector_arith(b))
            refuse("op " + n + " is not compiled yet");
        if (!op.preds.empty()) refuse(n + " with predicates");
        auto need_vec = [&](ValueId v) {
            if (vk_[static_cast<size_t>(v)] != VK::Vec) refuse(n + " on a value the generator does not track");
        };
        auto need_num = [&](ValueId v) {
            if (vk_[static_cast<size_t>(v)] != VK::Num) refuse(n + " on a value the generator does not track");
        };
        if (n == "vector.store") {
            if (op.operands.size() != 2 || vk_[static_cast<size_t>(op.operands[1])] != VK::View) refuse("vector.store through a view the generator does not track");
            need_vec(op.operands[0]);
            const ViewMeta& m = views_[static_cast<size_t>(op.operands[1])];
            if (op.indices.size() != m.rank) refuse("vector.store with an index list of the wrong rank");
            if (kind(op.operands[0]) != m.elem) refuse("vector.store of a vector whose type differs from the view's element");
            return;
        }
        if (n == "vector.constant") {
            if (!op.operands.empty()) refuse("vector.constant with operands");
        } else if (vector_arith(b)) {
            if (op.operands.size() != (b == "fmaf" ? 3u : 2u)) refuse(n + " with " + std::to_string(op.operands.size()) + " operands");
            for (ValueId v : op.operands) need_vec(v);
            for (ValueId v : op.operands)
                if (comps_.at(v).size() != comps_.at(op.operands[0]).size() || kind(v) != kind(op.operands[0])) refuse(n + " of mismatched vectors");
            if (kind(op.operands[0]) != ScalarKind::F32 && kind(op.operands[0]) != ScalarKind::F64) refuse(n + " of " + std::string(scalar_name(kind(op.operands[0]))));
        } else if (n == "vector.load") {
            if (op.operands.size() != 1 || vk_[static_cast<size_t>(op.operands[0])] != VK::View) refuse("vector.load through a view the generator does not track");
            const ViewMeta& m = views_[static_cast<size_t>(op.operands[0])];
            if (op.indices.size() != m.rank) refuse("vector.load with an index list of the wrong rank");
            if (is_half(m.elem)) refuse("vector.load of " + std::string(scalar_name(m.elem)));
        } else if (n == "vector.splat") {
            if (op.operands.size() != 1) refuse("vector.splat without one operand");
            need_num(op.operands[0]);
        } else if (n == "vector.dotf") {
            if (op.operands.size() < 2 || op.operands.size() > 3) refuse("vector.dotf with " + std::to_string(op.operands.size()) + " operands");
            need_vec(op.operands[0]);
            need_vec(op.operands[1]);
            if (op.operands.size() == 3) need_num(op.operands[2]);
            if (comps_.at(op.operands[0]).size() != comps_.at(op.operands[1]).size()) refuse("vector.dotf of vectors of different lengths");
            const ScalarKind k = vtype(op.results.at(0)).elem;
            if (k != ScalarKind::F32 && k != ScalarKind::F64) refuse("vector.dotf to " + std::string(scalar_name(k)));
            for (size_t i = 0; i < op.operands.size(); ++i)
                if (kind(op.operands[i]) != k) refuse("vector.dotf over mixed element types");
            if (op.results.size() != 1) refuse("vector.dotf without one result");
            need_num_type(vtype(op.results[0]), op);
            vk_[static_cast<size_t>(op.results[0])] = VK::Num;
            return;
        } else {
            if (op.operands.size() != 1) refuse(n + " without one operand");
            need_vec(op.operands[0]);
        }
        if (op.results.size() != 1) refuse(n + " without one result");
        make_vec(op.results[0], op);
        if ((vector_cast(b) || vector_arith(b)) && comps_.at(op.operands[0]).size() != comps_.at(op.results[0]).size())
            refuse(n + " changing the vector's length");
        if (vector_arith(b) && kind(op.results[0]) != kind(op.operands[0])) refuse(n + " changing the element type");
    }
    static bool vector_arith(const std::string& b) { return b == "addf" || b == "subf" || b == "mulf" || b == "divf" || b == "fmaf"; }

public:
    // Whether check_region accepts op `n` in some form: the op table's
    // "native" column (op_native). The predicates are check_region's own;
    // the structural names are the ones it handles by name.
    static bool lowers(const std::string& n) {
        static const std::set<std::string> structural = {
            "view.load", "view.store", "buffer.view", "buffer.assume.alignment", "buffer.assume.memory_space",
            "buffer.assume.noalias", "buffer.assume.same_root", "buffer.fence", "scf.schedule.fence", "view.prefetch",
            "kernel.barrier", "buffer.alloca", "scf.if", "scf.for", "scf.while", "scf.yield", "scf.condition",
            "kernel.return", "kernel.def"};
        if (structural.count(n) || is_coord(n) || is_collective(n) || known_num_op(n)) return true;
        if (n.rfind("vector.", 0) != 0) return false;
        const std::string b = n.substr(7);
        return b == "load" || b == "store" || b == "splat" || b == "dotf" || b == "constant" || vector_cast(b) ||
               vector_arith(b);
    }

private:
    // Gives vector value r its element values.
    void make_vec(ValueId r, const Op& op) {
        const std::string& n = op.name;
        const Type& t = vtype(r);
        if (t.kind != TypeKind::Vector || t.dims.size() != 1 || t.dims[0].is_dynamic()) refuse(n + " with a value of type " + t.spelling);
        const int64_t K = t.dims[0].extent;
        if (K < 1 || K > 64) refuse(n + " with a vector of " + std::to_string(K) + " elements");
        if (!supported_scalar(t.elem) || is_half(t.elem)) refuse(std::string("a vector of ") + scalar_name(t.elem));
        vk_[static_cast<size_t>(r)] = VK::Vec;
        std::vector<ValueId> cs;
        for (int64_t c = 0; c < K; ++c) {
            const ValueId id = static_cast<ValueId>(info_.size());
            info_.push_back(Info{});
            vk_.push_back(VK::Num);
            views_.push_back(ViewMeta{});
            bindof_.push_back(-1);
            parent_.push_back(r);
            pkind_[id] = t.elem;
            cs.push_back(id);
        }
        comps_[r] = cs;
    }

    void emit_vector(const Op& op, const std::string& mask) {
        const std::string& n = op.name;
        const std::string b = n.substr(7);
        if (n == "vector.store") return emit_vector_store(op, mask);
        const ValueId r = op.results[0];
        const bool v = vary(r);
        if (n == "vector.dotf") {
            const ScalarKind k = kind(r);
            const std::string ft = reg_type(k);
            const std::vector<ValueId>& a = comps_.at(op.operands[0]);
            const std::vector<ValueId>& c = comps_.at(op.operands[1]);
            std::string acc = op.operands.size() == 3 ? get_as(op.operands[2], v) : cst(ft, float_lit(k, 0.0), v);
            for (size_t e = 0; e < a.size(); ++e) acc = intrinsic("fma", ft, v, {get_as(a[e], v), get_as(c[e], v), acc});
            return put(r, acc, v);
        }
        const std::vector<ValueId>& out = comps_.at(r);
        if (n == "vector.constant") {
            const std::string x = const_lit(op, kind(r));
            for (ValueId e : out) put(e, x, false);
            return;
        }
        if (vector_arith(b)) {
            const std::string ft = reg_type(kind(r)), T = ty(ft, v);
            std::vector<const std::vector<ValueId>*> in;
            for (ValueId a : op.operands) in.push_back(&comps_.at(a));
            static const std::map<std::string, std::string> instr = {{"addf", "fadd"}, {"subf", "fsub"}, {"mulf", "fmul"}, {"divf", "fdiv"}};
            for (size_t e = 0; e < out.size(); ++e) {
                auto A = [&](size_t i) { return get_as((*in[i])[e], v); };
                put(out[e], b == "fmaf" ? intrinsic("fma", ft, v, {A(0), A(1), A(2)}) : emit(instr.at(b) + " " + T + " " + A(0) + ", " + A(1)), v);
            }
            return;
        }
        if (n == "vector.splat") {
            const std::string x = get_as(op.operands[0], v);
            for (ValueId e : out) put(e, x, v);
            return;
        }
        if (n == "vector.load") {
            const ValueId view = op.operands[0];
            const ViewMeta& m = views_[static_cast<size_t>(view)];
            const int64_t E = static_cast<int64_t>(out.size());
            std::string byte0;
            bool contig = false;
            const std::string fast = any_varying_index(op) && v ? affine_access(op, view, byte0, contig, E) : "";
            if (fast.empty()) return emit_vector_load_general(op, mask);
            // Note [Lane-affine accesses]: lanes reading E consecutive elements each, one after
            // another, are one load of N * E elements, dealt out to the E components.
            const std::string mt = mem_type(m.elem);
            const int es = elem_size(m.elem);
            const std::string lf = label("vlda"), ls = label("vldg"), lj = label("vldj");
            cbr(fast, lf, ls);
            block(lf);
            const std::string p = emit("getelementptr i8, ptr " + base_.at(m.binding) + ", i64 " + byte0);
            if (contig) {
                // Every lane's footprint is in bounds: one plain load (a mask widened to
                // N x E lanes costs more than it saves), inactive lanes then zeroed as the
                // general path's gathers leave them.
                const std::string WT = "<" + std::to_string(N * E) + " x " + mt + ">";
                const std::string x = emit("load " + WT + ", ptr " + p + ", align 1");
                for (int64_t e = 0; e < E; ++e) {
                    std::string pick = "<";
                    for (int l = 0; l < N; ++l) pick += (l ? ", i32 " : "i32 ") + std::to_string(l * E + e);
                    const std::string c = emit("shufflevector " + WT + " " + x + ", " + WT + " poison, <" + std::to_string(N) + " x i32> " + pick + ">");
                    const std::string z = emit("select " + vt("i1") + " " + mask + ", " + vt(mt) + " " + c + ", " + vt(mt) + " zeroinitializer");
                    put(out[static_cast<size_t>(e)], to_reg(m.elem, z, true), true);
                }
            } else {
                for (int64_t e = 0; e < E; ++e) {
                    const std::string pe = emit("getelementptr i8, ptr " + p + ", i64 " + std::to_string(e * es));
                    const std::string one = splat(mt, emit("load " + mt + ", ptr " + pe + ", align 1"));
                    const std::string c = emit("select " + vt("i1") + " " + mask + ", " + vt(mt) + " " + one + ", " + vt(mt) + " zeroinitializer");
                    put(out[static_cast<size_t>(e)], to_reg(m.elem, c, true), true);
                }
            }
            br(lj);
            block(ls);
            emit_vector_load_general(op, mask);
            br(lj);
            block(lj);
            return;
        }
        // Lanewise conversions: the scalar cast on each element.
        const std::vector<ValueId>& in = comps_.at(op.operands[0]);
        for (size_t e = 0; e < out.size(); ++e) emit_cast_ids(in[e], out[e], n, b, v);
    }

    void emit_vector_load_general(const Op& op, const std::string& mask) {
        const std::vector<ValueId>& out = comps_.at(op.results[0]);
        {
            const ValueId view = op.operands[0];
            const ViewMeta& m = views_[static_cast<size_t>(view)];
            bool va = false;
            const std::string byte = address(op, view, mask, va, static_cast<int64_t>(out.size()));
            const std::string base = base_.at(m.binding);
            const std::string mt = mem_type(m.elem);
            const int es = elem_size(m.elem);
            if (!va) {
                const std::string ld = label("vldu"), lj = label("vldj");
                cbr(last_bad_, lj, ld);
                block(ld);
                for (size_t e = 0; e < out.size(); ++e) {
                    const std::string at = emit("add i64 " + byte + ", " + std::to_string(static_cast<int64_t>(e) * es));
                    const std::string p = emit("getelementptr i8, ptr " + base + ", i64 " + at);
                    put(out[e], to_reg(m.elem, emit("load " + mt + ", ptr " + p + ", align 1"), false), false);
                }
                br(lj);
                block(lj);
                return;
            }
            const std::string fn = "@llvm.masked.gather.v" + std::to_string(N) + suffix(mt) + ".v" + std::to_string(N) + "p0";
            declare("declare " + vt(mt) + " " + fn + "(" + vt("ptr") + ", i32, " + vt("i1") + ", " + vt(mt) + ")");
            for (size_t e = 0; e < out.size(); ++e) {
                const std::string at = emit("add " + vt("i64") + " " + byte + ", " + splat("i64", std::to_string(static_cast<int64_t>(e) * es)));
                const std::string ps = emit("getelementptr i8, ptr " + base + ", " + vt("i64") + " " + at);
                const std::string x = emit("call " + vt(mt) + " " + fn + "(" + vt("ptr") + " " + ps + ", i32 1, " + vt("i1") + " " + mask + ", " + vt(mt) + " zeroinitializer)");
                put(out[e], to_reg(m.elem, x, true), true);
            }
        }
    }

    // vector.store: the footprint checked as vector.load checks it, then the
    // elements written in order (one address for all lanes: the last active
    // lane's vector, as in the interpreter's lane loop).
    void emit_vector_store(const Op& op, const std::string& mask) {
        const std::vector<ValueId>& val = comps_.at(op.operands[0]);
        const ValueId view = op.operands[1];
        const ViewMeta& m = views_[static_cast<size_t>(view)];
        const bool xv = vary(op.operands[0]);
        bool va = false;
        const std::string byte = address(op, view, mask, va, static_cast<int64_t>(val.size()));
        const std::string base = base_.at(m.binding);
        const std::string mt = mem_type(m.elem);
        const int es = elem_size(m.elem);
        if (!va) {
            std::string last;
            if (xv) {
                const std::string bits = mask_bits(mask);
                const std::string lz = emit("call i" + std::to_string(N) + " @llvm.ctlz.i" + std::to_string(N) + "(i" + std::to_string(N) + " " + bits + ", i1 false)");
                declare("declare i" + std::to_string(N) + " @llvm.ctlz.i" + std::to_string(N) + "(i" + std::to_string(N) + ", i1)");
                last = emit("sub i" + std::to_string(N) + " " + std::to_string(N - 1) + ", " + lz);
                if (N < 64) last = emit("zext i" + std::to_string(N) + " " + last + " to i64");
            }
            const std::string a = emit("and i1 " + any(mask) + ", " + emit("xor i1 " + last_bad_ + ", true")), s = label("vst"), j = label("vstj");
            cbr(a, s, j);
            block(s);
            for (size_t e = 0; e < val.size(); ++e) {
                std::string x = get(val[e]);
                if (xv) x = emit("extractelement " + rty(val[e]) + " " + x + ", i64 " + last);
                const std::string at = emit("add i64 " + byte + ", " + std::to_string(static_cast<int64_t>(e) * es));
                const std::string p = emit("getelementptr i8, ptr " + base + ", i64 " + at);
                b_ << "  store " << mt << " " << to_mem(m.elem, x, false) << ", ptr " << p << ", align 1\n";
            }
            br(j);
            block(j);
            return;
        }
        const std::string fn = "@llvm.masked.scatter.v" + std::to_string(N) + suffix(mt) + ".v" + std::to_string(N) + "p0";
        declare("declare void " + fn + "(" + vt(mt) + ", " + vt("ptr") + ", i32, " + vt("i1") + ")");
        for (size_t e = 0; e < val.size(); ++e) {
            const std::string x = to_mem(m.elem, get_as(val[e], true), true);
            const std::string at = emit("add " + vt("i64") + " " + byte + ", " + splat("i64", std::to_string(static_cast<int64_t>(e) * es)));
            const std::string ps = emit("getelementptr i8, ptr " + base + ", " + vt("i64") + " " + at);
            b_ << "  call void " << fn << "(" << vt(mt) << " " << x << ", " << vt("ptr") << " " << ps << ", i32 1, " << vt("i1") << " " << mask << ")\n";
        }
    }

    // A constant op's value as an IR literal of kind rk (the interpreter's constant()).
    std::string const_lit(const Op& op, ScalarKind rk) {
        const auto [fv, iv] = interp::constant_value(op.attr("value"));
        if (scalar_is_float(rk)) return float_lit(rk, fv);
        return std::to_string(interp_wrap(rk, iv));
    }

    // --- numbers ----------------------------------------------------------------
    // Calls helper `fn` (Note [Native Loom executor]) on one or two operands
    // of float type `ft`, lane by lane through stack arrays.
    std::string math(const std::string& fn, const std::string& ft, const std::vector<std::string>& args, bool v) {
        const int n = v ? N : 1;
        const std::string T = ty(ft, v);
        const char* bufs[] = {"%mathA", "%mathB"};
        std::string sig = "declare void @" + fn + "(";
        std::string call = "  call void @" + fn + "(";
        for (size_t k = 0; k < args.size(); ++k) {
            b_ << "  store " << T << " " << args[k] << ", ptr " << bufs[k] << "\n";
            sig += "ptr, ";
            call += std::string("ptr ") + bufs[k] + ", ";
        }
        declare(sig + "ptr, i64)");
        b_ << call << "ptr %mathO, i64 " << n << ")\n";
        return emit("load " + T + ", ptr %mathO");
    }

    std::string fcmp_pred(const std::string& p) {
        static const std::set<std::string> ok = {"oeq", "one", "olt", "ole", "ogt", "oge", "ord", "uno",
                                                 "ueq", "une", "ult", "ule", "ugt", "uge"};
        if (!ok.count(p)) refuse("scalar.cmpf predicate " + p);
        return p;
    }
    std::string icmp_pred(const std::string& p) {
        static const std::set<std::string> ok = {"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"};
        if (!ok.count(p)) refuse("comparison predicate " + p);
        return p;
    }

    std::string intrinsic(const std::string& base, const std::string& ft, bool v, const std::vector<std::string>& args) {
        const std::string T = ty(ft, v);
        const std::string sfx = (v ? "v" + std::to_string(N) : std::string()) + (ft == "float" ? "f32" : ft == "double" ? "f64" : ft);
        const std::string fn = "@llvm." + base + "." + sfx;
        std::string sig = "declare " + T + " " + fn + "(", call = "call " + T + " " + fn + "(";
        for (size_t k = 0; k < args.size(); ++k) {
            sig += (k ? ", " : "") + T;
            call += (k ? ", " : "") + T + " " + args[k];
        }
        declare(sig + ")");
        return emit(call + ")");
    }

    void emit_num(const Op& op, const std::string& mask) {
        (void)mask;
        const std::string& n = op.name;
        const ValueId r = op.results.empty() ? kNoValue : op.results[0];
        if (r == kNoValue) refuse(n + " without a result");
        const ScalarKind rk = kind(r);
        const bool v = vary(r);
        if (n == "index.constant" || n == "scalar.constant") return put(r, const_lit(op, rk), false);
        if (n == "config.get") {
            auto it = spec_.config.find(op.callee);
            if (it == spec_.config.end()) refuse("config.get of a key without a value");
            if (scalar_is_float(rk)) return put(r, float_lit(rk, it->second.f), false);
            return put(r, std::to_string(interp_wrap(rk, it->second.i)), false);
        }
        if (n == "target.subgroup.size") return put(r, std::to_string(spec_.facts.subgroup_size), false);
        if (n == "index.assume" || n == "scalar.assume") {
            for (size_t k = 0; k < op.results.size() && k < op.operands.size(); ++k) put(op.results[k], get(op.operands[k]), vary(op.operands[k]));
            return;
        }
        auto A = [&](size_t k) { return get_as(op.operands.at(k), v); };
        const std::string IT = ty("i64", v);
        const std::string b = base(n);
        if (n == "scf.select") {
            const ValueId c = op.operands.at(0);
            const std::string x = A(1), y = A(2);
            const std::string RT = rty(r);
            if (vary(c)) {
                const std::string cb = emit("icmp ne " + vt("i64") + " " + get(c) + ", zeroinitializer");
                return put(r, emit("select " + vt("i1") + " " + cb + ", " + RT + " " + x + ", " + RT + " " + y), true);
            }
            const std::string cb = emit("icmp ne i64 " + get(c) + ", 0");
            return put(r, emit("select i1 " + cb + ", " + RT + " " + x + ", " + RT + " " + y), v);
        }
        if (n == "index.cmp" || n == "scalar.cmpi" || n == "scalar.cmpf") {
            const Attr* pa = op.attr("pred");
            const std::string p = pa ? pa->s : "";
            const ValueId a0 = op.operands.at(0);
            const ScalarKind k = kind(a0);
            std::string c;
            if (n == "scalar.cmpf") {
                c = emit("fcmp " + fcmp_pred(p) + " " + ty(reg_type(k), v) + " " + A(0) + ", " + A(1));
            } else {
                const std::string pp = icmp_pred(p);
                // The operands are read where the vector compare runs: on the path of
                // Note [Lane 0 as a scalar] they may be vectors made for it alone.
                auto vector_cmp = [&] {
                    std::string x1 = A(0), y1 = A(1);
                    if (pp[0] == 'u') {
                        x1 = uval(k, x1, v);
                        y1 = uval(k, y1, v);
                    }
                    return emit("zext " + ty("i1", v) + " " + emit("icmp " + pp + " " + IT + " " + x1 + ", " + y1) + " to " + IT);
                };
                if (v) {
                    const std::string fast = affine_cmp(pp, a0, op.operands.at(1), vector_cmp);
                    if (!fast.empty()) return put(r, fast, true);
                }
                return put(r, vector_cmp(), v);
            }
            return put(r, emit("zext " + ty("i1", v) + " " + c + " to " + IT), v);
        }
        if (n == "index.madd") {
            const std::string m = emit("mul " + IT + " " + A(0) + ", " + A(1));
            return put(r, emit("add " + IT + " " + m + ", " + A(2)), v);
        }
        if (n == "index.scale") return put(r, emit("mul " + IT + " " + A(0) + ", " + A(1)), v);
        // Float ops.
        if (scalar_is_float(kind(op.operands.at(0))) && (n.rfind("scalar.", 0) == 0) &&
            b != "fptosi" && b != "fptoui" && b != "extf" && b != "fptrunc" && b != "bitcast")
            return emit_float(op, b, v);
        if (b == "sitofp" || b == "uitofp" || b == "fptosi" || b == "fptoui" || b == "extf" || b == "fptrunc" || b == "bitcast" ||
            b == "extsi" || b == "extui" || b == "trunci" || n == "index.cast")
            return emit_cast(op, b, v);
        // Integer ops: kind from the result type (int_binary's rule).
        const ScalarKind k = rk;
        const int bits = bits_of(k);
        const bool addr = scalar_is_address(k);
        auto W = [&](const std::string& x) { return wrap(k, x, v); };
        auto U = [&](const std::string& x) { return uval(k, x, v); };
        auto C = [&](int64_t c) { return cst("i64", std::to_string(c), v); };
        auto sel = [&](const std::string& c, const std::string& x, const std::string& y) {
            return emit("select " + ty("i1", v) + " " + c + ", " + IT + " " + x + ", " + IT + " " + y);
        };
        if (op.operands.size() == 1 || b == "negi" || b == "absi" || b == "ctpopi" || b == "ctlzi" || b == "cttzi") {
            const std::string x = A(0);
            if (b == "negi") return put(r, W(emit("sub " + IT + " " + C(0) + ", " + x)), v);
            if (b == "absi") {
                const std::string neg = emit("icmp slt " + IT + " " + x + ", " + C(0));
                return put(r, W(sel(neg, emit("sub " + IT + " " + C(0) + ", " + x), x)), v);
            }
            const ScalarKind ak = kind(op.operands[0]);
            const int ab = bits_of(ak);
            const std::string u = uval(ak, x, v);
            if (b == "ctpopi") return put(r, intrinsic("ctpop", "i64", v, {u}), v);
            if (b == "ctlzi") {
                declare_bitcount("ctlz", v);
                const std::string c = emit("call " + IT + " @llvm.ctlz." + (v ? "v" + std::to_string(N) : std::string()) + "i64(" + IT + " " + u + ", i1 false)");
                return put(r, emit("sub " + IT + " " + c + ", " + C(64 - ab)), v);
            }
            if (b == "cttzi") {
                declare_bitcount("cttz", v);
                const std::string c = emit("call " + IT + " @llvm.cttz." + (v ? "v" + std::to_string(N) : std::string()) + "i64(" + IT + " " + u + ", i1 false)");
                const std::string z = emit("icmp eq " + IT + " " + u + ", " + C(0));
                return put(r, sel(z, C(ab), c), v);
            }
            refuse(n + " with one operand");
        }
        const std::string x = A(0), y = A(1);
        if (b == "add" || b == "addi") return put(r, W(emit("add " + IT + " " + x + ", " + y)), v);
        if (b == "sub" || b == "subi") return put(r, W(emit("sub " + IT + " " + x + ", " + y)), v);
        if (b == "mul" || b == "muli") return put(r, W(emit("mul " + IT + " " + x + ", " + y)), v);
        if (b == "andi") return put(r, emit("and " + IT + " " + x + ", " + y), v);
        if (b == "ori") return put(r, emit("or " + IT + " " + x + ", " + y), v);
        if (b == "xori") return put(r, emit("xor " + IT + " " + x + ", " + y), v);
        if (b == "div" || b == "divsi" || b == "rem" || b == "remsi") {
            const bool div = b == "div" || b == "divsi";
            if (addr) div_checks(op, x, y, v, mask, true);
            const std::string z = emit("icmp eq " + IT + " " + y + ", " + C(0));
            const std::string m1 = emit("icmp eq " + IT + " " + y + ", " + C(-1));
            std::string zero_out;
            if (div) {
                const std::string mn = emit("icmp eq " + IT + " " + x + ", " + C(INT64_MIN));
                zero_out = emit("or " + ty("i1", v) + " " + z + ", " + emit("and " + ty("i1", v) + " " + m1 + ", " + mn));
            } else {
                zero_out = emit("or " + ty("i1", v) + " " + z + ", " + m1);
            }
            const std::string safe = sel(zero_out, C(1), y);
            const std::string q = emit(std::string(div ? "sdiv " : "srem ") + IT + " " + x + ", " + safe);
            return put(r, sel(zero_out, C(0), W(q)), v);
        }
        if (b == "divui" || b == "remui") {
            const std::string ux = U(x), uy = U(y);
            const std::string z = emit("icmp eq " + IT + " " + uy + ", " + C(0));
            const std::string q = emit(std::string(b == "divui" ? "udiv " : "urem ") + IT + " " + ux + ", " + sel(z, C(1), uy));
            return put(r, sel(z, C(0), W(q)), v);
        }
        if (b == "min" || b == "minsi") return put(r, sel(emit("icmp slt " + IT + " " + y + ", " + x), y, x), v);   // std::min(p, q)
        if (b == "max" || b == "maxsi") return put(r, sel(emit("icmp slt " + IT + " " + x + ", " + y), y, x), v);   // std::max(p, q)
        if (b == "minui") return put(r, sel(emit("icmp ult " + IT + " " + U(x) + ", " + U(y)), x, y), v);
        if (b == "maxui") return put(r, sel(emit("icmp ugt " + IT + " " + U(x) + ", " + U(y)), x, y), v);
        if (b == "shli" || b == "shrsi" || b == "shrui") {
            const std::string uy = U(y);
            const std::string big = emit("icmp uge " + IT + " " + uy + ", " + C(bits));
            const std::string amt = sel(big, C(0), uy);
            if (b == "shli") return put(r, sel(big, C(0), W(emit("shl " + IT + " " + x + ", " + amt))), v);
            if (b == "shrsi") {
                const std::string neg = emit("icmp slt " + IT + " " + x + ", " + C(0));
                return put(r, sel(big, sel(neg, C(-1), C(0)), emit("ashr " + IT + " " + x + ", " + amt)), v);
            }
            return put(r, sel(big, C(0), W(emit("lshr " + IT + " " + U(x) + ", " + amt))), v);
        }
        refuse("integer op " + n);
    }

    void declare_bitcount(const std::string& f, bool v) {
        const std::string IT = ty("i64", v);
        declare("declare " + IT + " @llvm." + f + "." + (v ? "v" + std::to_string(N) : std::string()) + "i64(" + IT + ", i1)");
    }

    // index div/rem: the interpreter's check_div, every mode.
    void div_checks(const Op& op, const std::string& x, const std::string& y, bool v, const std::string& mask, bool) {
        const std::string IT = ty("i64", v);
        const std::string z = emit("icmp eq " + IT + " " + y + ", " + cst("i64", "0", v));
        bool wgdep = false;
        for (ValueId o : op.operands) wgdep = wgdep || I(o).wgdep;
        check(op, z, v, mask, wgdep, [&](const std::string&) { return std::array<std::string, 4>{std::to_string(kDivisionByZero), "0", "0", "0"}; });
        const std::string nx = emit("icmp slt " + IT + " " + x + ", " + cst("i64", "0", v));
        const std::string ny = emit("icmp slt " + IT + " " + y + ", " + cst("i64", "0", v));
        const std::string neg = emit("or " + ty("i1", v) + " " + nx + ", " + ny);
        check(op, neg, v, mask, wgdep, [&](const std::string&) { return std::array<std::string, 4>{std::to_string(kIndexDivNegative), "0", "0", "0"}; });
    }

    static int64_t interp_wrap(ScalarKind k, int64_t v) {
        switch (k) {
            case ScalarKind::I1: return v & 1;
            case ScalarKind::I8: return static_cast<int8_t>(v);
            case ScalarKind::I16: return static_cast<int16_t>(v);
            case ScalarKind::I32: return static_cast<int32_t>(v);
            default: return v;
        }
    }

    // fmath's min_num_/max_num_ as selects (no arithmetic: every bit, NaN payloads
    // included, is an operand's), instead of a helper call per chunk.
    // fmath::minimum/maximum: the first NaN operand quieted (x + x, whose payload no operand order can
    // change), else minnum/maxnum.
    std::string nan_minmax(bool mx, const std::string& ft, const std::string& x, const std::string& y, bool v) {
        const std::string T = ty(ft, v), B1 = ty("i1", v);
        std::string out = num_minmax(mx, ft, x, y, v);
        out = emit("select " + B1 + " " + emit("fcmp uno " + T + " " + y + ", " + y) + ", " + T + " " +
                   emit("fadd " + T + " " + y + ", " + y) + ", " + T + " " + out);
        return emit("select " + B1 + " " + emit("fcmp uno " + T + " " + x + ", " + x) + ", " + T + " " +
                    emit("fadd " + T + " " + x + ", " + x) + ", " + T + " " + out);
    }
    std::string num_minmax(bool mx, const std::string& ft, const std::string& x, const std::string& y, bool v) {
        const std::string T = ty(ft, v), B1 = ty("i1", v);
        const std::string xn = emit("fcmp uno " + T + " " + x + ", " + x), yn = emit("fcmp uno " + T + " " + y + ", " + y);
        const std::string lt = emit(std::string("fcmp ") + (mx ? "ogt " : "olt ") + T + " " + x + ", " + y);
        const std::string eq = emit("fcmp oeq " + T + " " + x + ", " + y);
        const std::string IT2 = ty(ft == "float" ? "i32" : "i64", v);
        const std::string neg = emit("icmp slt " + IT2 + " " + emit("bitcast " + T + " " + x + " to " + IT2) + ", " + cst(ft == "float" ? "i32" : "i64", "0", v));
        const std::string zs = mx ? emit("xor " + B1 + " " + neg + ", " + cst("i1", "true", v)) : neg;
        const std::string pick = emit("or " + B1 + " " + lt + ", " + emit("and " + B1 + " " + eq + ", " + zs));
        std::string out = emit("select " + B1 + " " + pick + ", " + T + " " + x + ", " + T + " " + y);
        out = emit("select " + B1 + " " + yn + ", " + T + " " + x + ", " + T + " " + out);
        return emit("select " + B1 + " " + xn + ", " + T + " " + y + ", " + T + " " + out);
    }

    // hrx::fmath's float exp (detail::v::exp_ff, Note [float exp in float]) spelled
    // out in IR, operation for operation, so the lanes stay in registers instead
    // of a call per chunk: the same IEEE float operations in the same order (no
    // fast-math flags, so LLVM neither fuses nor reassociates them) give the same
    // bits as the interpreter and the exp ufunc. test_loom_native checks them equal.
    std::string exp_f32_inline(const std::string& x, bool v) {
        const std::string T = ty("float", v), I = ty("i32", v), B1 = ty("i1", v);
        auto f = [&](float c) { return cst("float", float_lit(ScalarKind::F32, static_cast<double>(c)), v); };
        auto i = [&](int c) { return cst("i32", std::to_string(c), v); };
        auto op2 = [&](const char* o, const std::string& a, const std::string& b2) { return emit(std::string(o) + " " + T + " " + a + ", " + b2); };
        const float kShift = 0x1.8p23f;
        std::string c = emit("select " + B1 + " " + emit("fcmp olt " + T + " " + x + ", " + f(-104.0f)) + ", " + T + " " + f(-104.0f) + ", " + T + " " + x);
        c = emit("select " + B1 + " " + emit("fcmp ogt " + T + " " + c + ", " + f(89.0f)) + ", " + T + " " + f(89.0f) + ", " + T + " " + c);
        const std::string kd = op2("fadd", op2("fmul", c, f(0x1.715476p+0f)), f(kShift));
        const std::string n = op2("fsub", kd, f(kShift));
        const std::string r = op2("fsub", op2("fsub", c, op2("fmul", n, f(0x1.62e4p-1f))), op2("fmul", n, f(0x1.7f7d1cp-20f)));
        std::string q = f(1.0f / 5040.0f);
        for (float k : {1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f}) q = op2("fadd", op2("fmul", q, r), f(k));
        const std::string p = op2("fadd", f(1.0f), op2("fadd", r, op2("fmul", op2("fmul", r, r), q)));
        const std::string ni = emit("sub " + I + " " + emit("bitcast " + T + " " + kd + " to " + I) + ", " + i(0x4B400000));
        const std::string n1 = emit("ashr " + I + " " + ni + ", " + i(1));
        const std::string n2 = emit("sub " + I + " " + ni + ", " + n1);
        auto pow2 = [&](const std::string& e) {
            return emit("bitcast " + I + " " + emit("shl " + I + " " + emit("add " + I + " " + e + ", " + i(127)) + ", " + i(23)) + " to " + T);
        };
        const std::string res = op2("fmul", op2("fmul", p, pow2(n1)), pow2(n2));
        // A NaN input comes back quieted (x + x), as the interpreter's float registers give it.
        return emit("select " + B1 + " " + emit("fcmp uno " + T + " " + x + ", " + x) + ", " + T + " " + op2("fadd", x, x) + ", " + T + " " + res);
    }

    void emit_float(const Op& op, const std::string& b, bool v) {
        const ValueId r = op.results[0];
        const ScalarKind k = kind(op.operands.at(0));
        const std::string ft = reg_type(k);
        const std::string T = ty(ft, v);
        const std::string sf = k == ScalarKind::F64 ? "f64" : "f32";
        auto A = [&](size_t i) { return get_as(op.operands.at(i), v); };
        const std::string IT = ty("i64", v);
        auto to_i = [&](const std::string& c) { return emit("zext " + ty("i1", v) + " " + c + " to " + IT); };
        if (b == "addf") return put(r, emit("fadd " + T + " " + A(0) + ", " + A(1)), v);
        if (b == "subf") return put(r, emit("fsub " + T + " " + A(0) + ", " + A(1)), v);
        if (b == "mulf") return put(r, emit("fmul " + T + " " + A(0) + ", " + A(1)), v);
        if (b == "divf") return put(r, emit("fdiv " + T + " " + A(0) + ", " + A(1)), v);
        if (b == "negf") return put(r, emit("fneg " + T + " " + A(0)), v);
        if (b == "absf") return put(r, intrinsic("fabs", ft, v, {A(0)}), v);
        if (b == "sqrtf") return put(r, intrinsic("sqrt", ft, v, {A(0)}), v);
        if (b == "floorf") return put(r, intrinsic("floor", ft, v, {A(0)}), v);
        if (b == "ceilf") return put(r, intrinsic("ceil", ft, v, {A(0)}), v);
        if (b == "roundf") return put(r, intrinsic("round", ft, v, {A(0)}), v);
        if (b == "roundevenf") return put(r, intrinsic("roundeven", ft, v, {A(0)}), v);
        if (b == "truncf") return put(r, intrinsic("trunc", ft, v, {A(0)}), v);
        if (b == "copysignf") return put(r, intrinsic("copysign", ft, v, {A(0), A(1)}), v);
        if (b == "fmaf") return put(r, intrinsic("fma", ft, v, {A(0), A(1), A(2)}), v);
        if (b == "isnanf") {
            const std::string x = A(0);
            return put(r, to_i(emit("fcmp uno " + T + " " + x + ", " + x)), v);
        }
        if (b == "isinff" || b == "isfinitef") {
            const std::string a = intrinsic("fabs", ft, v, {A(0)});
            const std::string inf = cst(ft, float_lit(k, INFINITY), v);
            return put(r, to_i(emit(std::string("fcmp ") + (b == "isinff" ? "oeq " : "olt ") + T + " " + a + ", " + inf)), v);
        }
        if (b == "minnumf" || b == "maxnumf") return put(r, num_minmax(b == "maxnumf", ft, A(0), A(1), v), v);
        if (b == "minimumf" || b == "maximumf") return put(r, nan_minmax(b == "maximumf", ft, A(0), A(1), v), v);
        if (b == "expf" && ft == "float") return put(r, exp_f32_inline(A(0), v), v);
        static const std::map<std::string, std::string> lib = [] {
            std::map<std::string, std::string> m = {{"powf", "pow"}, {"atan2f", "atan2"}, {"hypotf", "hypot"}, {"remf", "fmod"},
                                                    {"minnumf", "fmin"}, {"maxnumf", "fmax"}, {"minimumf", "minimum"},
                                                    {"maximumf", "maximum"}, {"signf", "sign"}};
#define HRX_LOOM_LIB(NAME) m[#NAME "f"] = #NAME;
            HRX_FMATH_UNARY_LIST(HRX_LOOM_LIB)
#undef HRX_LOOM_LIB
            return m;
        }();
        std::string fn = b;
        if (b == "geluf") {
            // geluf<logistic> takes a scale the array forms do not: the interpreter runs it.
            const std::string variant = op.params.empty() ? "" : op.params[0];
            if (variant != "erf" && variant != "tanh") refuse("float op scalar.geluf<" + variant + ">");
            fn = "gelu_" + variant + "f";
        }
        auto it = lib.find(fn);
        if (it == lib.end()) refuse("float op scalar." + b);
        std::vector<std::string> args;
        for (size_t i = 0; i < op.operands.size(); ++i) args.push_back(A(i));
        return put(r, math("hrx_loom_" + it->second + "_" + sf, ft, args, v), v);
    }

    void emit_cast(const Op& op, const std::string& b, bool v) { emit_cast_ids(op.operands.at(0), op.results[0], op.name, b, v); }
    void emit_cast_ids(ValueId a, ValueId r, const std::string& name, const std::string& b, bool v) {
        const ScalarKind from = kind(a), to = kind(r);
        const std::string x = get_as(a, v);
        const std::string IT = ty("i64", v);
        if (name == "index.cast") {
            if (to == ScalarKind::Offset && !scalar_is_address(from)) return put(r, uval(from, x, v), v);
            if (scalar_is_address(to)) return put(r, x, v);
            return put(r, wrap(to, x, v), v);
        }
        // An i1 lives as 0 or 1; read signed (extsi, sitofp), true is -1.
        const std::string sx = from == ScalarKind::I1 ? emit("sub " + IT + " " + cst("i64", "0", v) + ", " + x) : x;
        if (b == "extsi") return put(r, wrap(to, sx, v), v);
        if (b == "trunci") return put(r, wrap(to, x, v), v);
        if (b == "extui") return put(r, wrap(to, uval(from, x, v), v), v);
        if (b == "sitofp" || b == "uitofp") {
            const std::string src = b[0] == 'u' ? uval(from, x, v) : sx;
            return put(r, emit(std::string(b[0] == 'u' ? "uitofp " : "sitofp ") + IT + " " + src + " to " + ty(reg_type(to), v)), v);
        }
        if (b == "fptosi" || b == "fptoui") {
            const bool u = b[3] == 'u';
            const int bits = bits_of(to);
            const double hi = u ? std::ldexp(1.0, bits) : std::ldexp(1.0, bits - 1);
            const double lo = u ? 0.0 : -std::ldexp(1.0, bits - 1);
            const std::string DT = ty("double", v);
            std::string d = from == ScalarKind::F64 ? x : emit("fpext " + ty("float", v) + " " + x + " to " + DT);
            const std::string tr = intrinsic("trunc", "double", v, {d});
            const std::string nan = emit("fcmp uno " + DT + " " + tr + ", " + tr);
            const std::string lov = cst("double", hex_double(lo), v), hiv = cst("double", hex_double(std::nextafter(hi, 0.0)), v);
            const std::string m1 = emit("select " + ty("i1", v) + " " + emit("fcmp olt " + DT + " " + tr + ", " + lov) + ", " + DT + " " + lov + ", " + DT + " " + tr);
            const std::string m2 = emit("select " + ty("i1", v) + " " + emit("fcmp olt " + DT + " " + hiv + ", " + m1) + ", " + DT + " " + hiv + ", " + DT + " " + m1);
            const std::string i = emit(std::string(u ? "fptoui " : "fptosi ") + DT + " " + m2 + " to " + IT);
            return put(r, emit("select " + ty("i1", v) + " " + nan + ", " + IT + " " + cst("i64", "0", v) + ", " + IT + " " + wrap(to, i, v)), v);
        }
        if (b == "extf" || b == "fptrunc") {
            if (from == to) return put(r, x, v);
            // f16/bf16 registers hold floats; put() rounds to the narrow type, from a float as the
            // interpreter does (a double would be rounded twice: refused).
            if (is_half(to) && from == ScalarKind::F64) refuse("f64 to " + std::string(scalar_name(to)));
            if (is_half(from) || is_half(to)) {
                if (to == ScalarKind::F64) return put(r, emit("fpext " + ty("float", v) + " " + x + " to " + ty("double", v)), v);
                return put(r, x, v);
            }
            if (from == ScalarKind::F32 && to == ScalarKind::F64) return put(r, emit("fpext " + ty("float", v) + " " + x + " to " + ty("double", v)), v);
            if (from == ScalarKind::F64 && to == ScalarKind::F32) return put(r, emit("fptrunc " + ty("double", v) + " " + x + " to " + ty("float", v)), v);
            refuse("float conversion");
        }
        if (b == "bitcast") {
            const bool ff = scalar_is_float(from), tf = scalar_is_float(to);
            if (is_half(from) || is_half(to)) refuse("bitcast of f16/bf16");
            if (ff && tf) {
                if (from != to) refuse("bitcast between float types of different widths");
                return put(r, x, v);
            }
            if (ff) {
                const std::string w = from == ScalarKind::F32 ? "i32" : "i64";
                const std::string c = emit("bitcast " + ty(reg_type(from), v) + " " + x + " to " + ty(w, v));
                const std::string e = w == "i32" ? emit("zext " + ty("i32", v) + " " + c + " to " + IT) : c;
                return put(r, wrap(to, e, v), v);
            }
            if (tf) {
                const std::string w = to == ScalarKind::F32 ? "i32" : "i64";
                std::string u = uval(from, x, v);
                if (w == "i32") u = emit("trunc " + IT + " " + u + " to " + ty("i32", v));
                return put(r, emit("bitcast " + ty(w, v) + " " + u + " to " + ty(reg_type(to), v)), v);
            }
            return put(r, wrap(to, x, v), v);
        }
        refuse("cast " + name);
    }
};

}  // namespace

bool op_native(std::string_view name) { return Gen::lowers(std::string(name)); }

Generated generate(const Specialized& spec, const std::vector<Param>& params, bool folded) {
    try {
        Gen g(spec, params, folded);
        return g.run();
    } catch (const Refuse& r) {
        Generated out;
        out.reason = r.why;
        return out;
    } catch (const std::out_of_range&) {
        Generated out;
        out.reason = "an op lacks an operand, result or index the generator needs";
        return out;
    }
}

}  // namespace hrx::loom::native

extern "C" {
#define HRX_LOOM_UNARY(NAME, T, EXPR)                                      \
    void hrx_loom_##NAME(const T* a, T* o, int64_t n) {                   \
        for (int64_t i = 0; i < n; ++i) {                                  \
            const T p = a[i];                                              \
            o[i] = (EXPR);                                                 \
        }                                                                  \
    }
#define HRX_LOOM_BINARY(NAME, T, EXPR)                                     \
    void hrx_loom_##NAME(const T* a, const T* b, T* o, int64_t n) {       \
        for (int64_t i = 0; i < n; ++i) {                                  \
            const T p = a[i], q = b[i];                                    \
            o[i] = (EXPR);                                                 \
        }                                                                  \
    }
// Note [Native Loom math]: native code computes every math function through
// hrx::fmath, the implementation the interpreter and the hx ufuncs use, so the
// executors give the same bits: the transcendental functions through its array
// forms (one call per chunk of lanes, vectorised), the min/max family, fmod and
// sign through its scalar functions lane by lane. The call costs little next
// to the math: fmath's exp_f32 over 1 M floats took the same time as one call
// or as 65,536 calls of 16 lanes (2026-12-05), so the chunk calls stay.
#define HRX_LOOM_FM1(NAME)                                                                                            \
    void hrx_loom_##NAME##_f32(const float* a, float* o, int64_t n) { hrx::fmath::NAME##_f32(a, o, static_cast<size_t>(n)); } \
    void hrx_loom_##NAME##_f64(const double* a, double* o, int64_t n) { hrx::fmath::NAME##_f64(a, o, static_cast<size_t>(n)); }
#define HRX_LOOM_FM2(NAME)                                                                                            \
    void hrx_loom_##NAME##_f32(const float* a, const float* b, float* o, int64_t n) {                                 \
        hrx::fmath::NAME##_f32(a, b, o, static_cast<size_t>(n));                                                      \
    }                                                                                                                 \
    void hrx_loom_##NAME##_f64(const double* a, const double* b, double* o, int64_t n) {                              \
        hrx::fmath::NAME##_f64(a, b, o, static_cast<size_t>(n));                                                      \
    }
HRX_FMATH_UNARY_LIST(HRX_LOOM_FM1)
HRX_FMATH_BINARY_LIST(HRX_LOOM_FM2)
#define HRX_LOOM_SCALAR(T, SFX)                                                  \
    HRX_LOOM_UNARY(sign_##SFX, T, hrx::fmath::sign(p))                           \
    HRX_LOOM_BINARY(fmod_##SFX, T, hrx::fmath::fmod(p, q))                       \
    HRX_LOOM_BINARY(fmin_##SFX, T, hrx::fmath::minnum(p, q))                     \
    HRX_LOOM_BINARY(fmax_##SFX, T, hrx::fmath::maxnum(p, q))                     \
    HRX_LOOM_BINARY(minimum_##SFX, T, hrx::fmath::minimum(p, q))                 \
    HRX_LOOM_BINARY(maximum_##SFX, T, hrx::fmath::maximum(p, q))
HRX_LOOM_SCALAR(float, f32)
HRX_LOOM_SCALAR(double, f64)
#undef HRX_LOOM_SCALAR
#undef HRX_LOOM_FM2
#undef HRX_LOOM_FM1
#undef HRX_LOOM_BINARY
#undef HRX_LOOM_UNARY
}


namespace {

using hrx::loom::ScalarKind;
using hrx::loom::interp::uval;
using hrx::loom::interp::wrap_int;

// One step of a reduction (the interpreter's red_step), kinds in the order
// the generator numbers them.
void red_step(int64_t kind, ScalarKind k, int64_t& ai, double& af, int64_t bi, double bf) {
    const bool f32 = k == ScalarKind::F32;
    auto U = [k](int64_t v) { return uval(k, v); };
    switch (kind) {
        case 0: hrx::loom::scalar_is_float(k) ? void(af = f32 ? static_cast<float>(af + bf) : af + bf) : void(ai = wrap_int(k, static_cast<int64_t>(static_cast<uint64_t>(ai) + static_cast<uint64_t>(bi)))); break;
        case 1: hrx::loom::scalar_is_float(k) ? void(af = f32 ? static_cast<float>(af * bf) : af * bf) : void(ai = wrap_int(k, static_cast<int64_t>(static_cast<uint64_t>(ai) * static_cast<uint64_t>(bi)))); break;
        case 2: ai &= bi; break;
        case 3: ai |= bi; break;
        case 4: ai ^= bi; break;
        case 5: ai = std::min(ai, bi); break;
        case 6: ai = std::max(ai, bi); break;
        case 7: ai = U(ai) <= U(bi) ? ai : bi; break;
        case 8: ai = U(ai) >= U(bi) ? ai : bi; break;
        case 9: af = hrx::fmath::minnum(af, bf); break;
        case 10: af = hrx::fmath::maxnum(af, bf); break;
        case 11: af = hrx::fmath::minimum(af, bf); break;
        default: af = hrx::fmath::maximum(af, bf); break;
    }
}

}  // namespace

// Subgroup collectives over one chunk (= one subgroup) of n lanes, as the
// interpreter's sg_reduce / sg_broadcast / sg_shuffle / sg_vote do them.
extern "C" {
void hrx_loom_sg_reduce(int64_t kind, int64_t elem, const void* vals, const uint8_t* mask, int64_t n, int64_t cluster, void* out) {
    const ScalarKind k = static_cast<ScalarKind>(elem);
    auto get = [&](int64_t l, int64_t& i, double& f) {
        if (k == ScalarKind::F32) f = static_cast<const float*>(vals)[l];
        else if (k == ScalarKind::F64) f = static_cast<const double*>(vals)[l];
        else i = static_cast<const int64_t*>(vals)[l];
    };
    for (int64_t l0 = 0; l0 < n; l0 += cluster) {
        int64_t ai = 0;
        double af = 0;
        bool first = true;
        for (int64_t l = l0; l < std::min(n, l0 + cluster); ++l) {
            if (!mask[l]) continue;
            int64_t bi = 0;
            double bf = 0;
            get(l, bi, bf);
            if (first) {
                ai = bi;
                af = bf;
                first = false;
                continue;
            }
            red_step(kind, k, ai, af, bi, bf);
        }
        for (int64_t l = l0; l < std::min(n, l0 + cluster); ++l) {
            if (k == ScalarKind::F32) static_cast<float*>(out)[l] = static_cast<float>(af);
            else if (k == ScalarKind::F64) static_cast<double*>(out)[l] = af;
            else static_cast<int64_t*>(out)[l] = ai;
        }
    }
}

void hrx_loom_sg_broadcast(int64_t first, int64_t es, const void* vals, const int64_t* src, const uint8_t* mask, int64_t n, int64_t live,
                           void* out) {
    const int64_t end = std::min(n, live);
    int64_t s = -1;
    if (first) {
        for (int64_t l = 0; l < end; ++l)
            if (mask[l]) {
                s = l;
                break;
            }
    } else {
        s = src[0];
    }
    if (s < 0 || s >= end) s = 0;
    for (int64_t l = 0; l < n; ++l)
        std::memcpy(static_cast<uint8_t*>(out) + l * es, static_cast<const uint8_t*>(vals) + s * es, static_cast<size_t>(es));
}

void hrx_loom_sg_shuffle(int64_t mode, int64_t es, const void* vals, const int64_t* arg, const uint8_t* mask, int64_t n, int64_t sg,
                         void* out, int64_t* ok) {
    for (int64_t l = 0; l < n; ++l) {
        const int64_t a = arg[l];
        int64_t src = mode == 0 ? (l ^ a) : mode == 1 ? l - a : mode == 2 ? l + a : a;
        const bool valid = src >= 0 && src < sg && src < n && mask[src];
        if (!valid) src = l;
        ok[l] = valid;
        std::memcpy(static_cast<uint8_t*>(out) + l * es, static_cast<const uint8_t*>(vals) + src * es, static_cast<size_t>(es));
    }
}

void hrx_loom_sg_vote(int64_t mode, int64_t rk, const int64_t* c, const uint8_t* mask, int64_t n, int64_t* out) {
    uint64_t bits = 0;
    int64_t count = 0;
    bool all = true, any = false;
    for (int64_t l = 0; l < n; ++l) {
        if (!mask[l]) continue;
        const bool b = c[l] != 0;
        if (b && l < 64) bits |= uint64_t{1} << l;
        count += b;
        all = all && b;
        any = any || b;
    }
    const ScalarKind k = static_cast<ScalarKind>(rk);
    const int64_t r = mode == 0 ? wrap_int(k, static_cast<int64_t>(bits)) : mode == 1 ? wrap_int(k, count) : mode == 2 ? all : any;
    for (int64_t l = 0; l < n; ++l) out[l] = r;
}
}

namespace hrx::loom::native {

std::map<std::string, uint64_t> native_symbols() {
    std::map<std::string, uint64_t> m;
#define HRX_SYM(NAME) m["hrx_loom_" #NAME] = reinterpret_cast<uint64_t>(&hrx_loom_##NAME);
#define HRX_SYMS(SFX) HRX_SYM(sign_##SFX) HRX_SYM(fmod_##SFX) HRX_SYM(fmin_##SFX) HRX_SYM(fmax_##SFX) HRX_SYM(minimum_##SFX) \
    HRX_SYM(maximum_##SFX)
    HRX_SYMS(f32)
    HRX_SYMS(f64)
#define HRX_SYM_FM(NAME) HRX_SYM(NAME##_f32) HRX_SYM(NAME##_f64)
    HRX_FMATH_UNARY_LIST(HRX_SYM_FM)
    HRX_FMATH_BINARY_LIST(HRX_SYM_FM)
#undef HRX_SYM_FM
    m["hrx_loom_sg_reduce"] = reinterpret_cast<uint64_t>(&hrx_loom_sg_reduce);
    m["hrx_loom_sg_broadcast"] = reinterpret_cast<uint64_t>(&hrx_loom_sg_broadcast);
    m["hrx_loom_sg_shuffle"] = reinterpret_cast<uint64_t>(&hrx_loom_sg_shuffle);
    m["hrx_loom_sg_vote"] = reinterpret_cast<uint64_t>(&hrx_loom_sg_vote);
#undef HRX_SYMS
#undef HRX_SYM
    return m;
}

}  // namespace hrx::loom::native
