// Program::plan and the Program queries (launch_config, footprints,
// constant layout) and runs, for GPU kernels and NPU pipelines, on the
// vectorised interpreter of loom/interp.cpp (reference loom.md §4, §5).
#include "loom/plan.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <set>

#include "kernels/bf16.h"
#include "kernels/elementwise_impl.h"
#include "kernels/fmath.h"
#include "kernels/pool.h"
#include "loom/codegen.h"
#include "loom/catalogue.h"
#include "loom/interp.h"

namespace hrx::loom {

namespace {

using interp::BufKind;
using interp::BufObj;
using interp::Exec;
using interp::Mask;
using interp::Reg;
using interp::RK;

// Lane elements per batch of a folded grid (lanes x the widest vector the
// kernel holds): enough to amortise each op's dispatch (about 0.1 us), few
// enough for a batch's registers to stay in L2. Scalar f32 kernels measured
// 1.5x hx.add at 16,384 lanes, 2.1x at 8,192 and ~3x at 2,048.
constexpr int64_t kFoldChunk = 16384;
// NPU stage firings per batch, at most.
constexpr int64_t kMaxFiringChunk = 2048;

// Note [Register storage across launches]: a folded batch's registers hold
// up to kFoldChunk lane values each (8 bytes apiece), allocated as the ops
// write them and freed when the launch ends. Freed at the top of the heap,
// hundreds of KiB at once, glibc gives them back to the kernel (its trim
// threshold), so the next launch faults every page in again: at 12,288 lanes
// that was about 90 faults and 160 us per launch instead of 17 us. Each
// thread therefore keeps its last frame's register storage (up to
// kKeptBytes) and lends it to its next folded frame; values never
// carry over (the vectors are emptied, and every op sizes what it writes).
constexpr size_t kKeptBytes = size_t{16} << 20;

// The lane-sized vectors of one register.
struct RegStorage {
    std::vector<int64_t> i, off;
    std::vector<double> f;
    std::vector<float> g;

    void swap_with(Reg& r) {
        i.swap(r.i);
        off.swap(r.off);
        f.swap(r.f);
        g.swap(r.g);
    }
    size_t bytes() const {
        return (i.capacity() + off.capacity()) * sizeof(int64_t) + f.capacity() * sizeof(double) +
               g.capacity() * sizeof(float);
    }
};

thread_local std::vector<RegStorage> t_kept;

void lend_storage(std::vector<Reg>& regs) {
    const size_t n = std::min(regs.size(), t_kept.size());
    for (size_t k = 0; k < n; ++k) {
        t_kept[k].swap_with(regs[k]);
        Reg& r = regs[k];
        r.i.clear();
        r.off.clear();
        r.f.clear();
        r.g.clear();
    }
}

void keep_storage(std::vector<Reg>& regs) {
    t_kept.resize(regs.size());
    size_t bytes = 0;
    for (size_t k = 0; k < regs.size(); ++k) {
        t_kept[k].swap_with(regs[k]);
        bytes += t_kept[k].bytes();
        if (bytes > kKeptBytes) {
            t_kept.resize(k);  // past the cap: give this register's storage and the rest back
            break;
        }
    }
}

constexpr uint64_t kTileAlign = 64;

using interp::is_terminator;

std::string loc_of(const Op& op) { return std::to_string(op.loc.line) + ":" + std::to_string(op.loc.column); }

// An error diagnostic of the planner's.
Diagnostic error_at(std::string code, std::string message, const Location& loc) {
    Diagnostic d;
    d.code = std::move(code);
    d.message = std::move(message);
    d.loc = loc;
    return d;
}

// Ops the pipeline driver (not the interpreter's handler table) runs.
bool pipeline_only_op(const std::string& n) {
    return n == "group.create" || n == "pipeline.read" || n == "pipeline.scatter" || n == "pipeline.stage" || n == "pipeline.write" ||
           n == "pipeline.fold" || n == "pipeline.reduce" || n == "pipeline.buffer";
}

// Op facts the planner gathers from everything reachable from the root.
struct Scan {
    std::vector<Diagnostic> diags;
    bool workgroup_memory = false, barrier = false, subgroup = false, atomics = false, private_scratch = false;
    std::set<const Op*> seen_fns;
    std::map<ValueId, int64_t> consts;  // index.constant values of the function being scanned
};

void scan_region(const Specialized& spec, const Region& r, bool in_pipeline, bool in_launch, Scan& s);

void scan_fn(const Specialized& spec, const Op* fn, Scan& s) {
    if (!fn || !s.seen_fns.insert(fn).second) return;
    std::map<ValueId, int64_t> outer;  // value ids are per function
    std::swap(outer, s.consts);
    for (const Region& r : fn->regions) scan_region(spec, r, false, false, s);
    std::swap(outer, s.consts);
}

// Note [Plan-time limits of the matrix ops]
//   The interpreter runs encodings, fragments and mma in one form: bfp16ebs8
//   schemas without auxiliary operands (scales, tables), a fragment as one
//   work-item's whole [rows x cols] matrix (rows * cols lanes), no block
//   count, and mma over bf16 or bfp16ebs8 operands into f32. Valid Loom
//   outside that form (target-distributed fragments, f16 or integer mma,
//   other element formats) is refused here, at plan time, with EMULATOR/001
//   naming the op and the reason, instead of failing when it runs or, for
//   mma, silently rounding f16 operands to bf16.
void check_matrix_op(const Op& op, Scan& s) {
    const std::string& n = op.name;
    auto refuse = [&](const std::string& why) {
        s.diags.push_back(error_at("EMULATOR/001", "valid Loom, not executed by the emulator: " + n + " (" + why + ")", op.loc));
    };
    if (n == "encoding.define") {
        const Attr* p = op.attr("params");
        const Attr* fam = op.attr("family");
        std::string fmt;
        if (p && p->dict) {
            auto f = p->dict->find("element_format");
            if (f != p->dict->end()) fmt = f->second.s;
        }
        if (fmt != "bfp16ebs8")
            refuse("element_format " + (fmt.empty() ? std::string("(none)") : fmt) + (fam ? " of #" + fam->s : std::string()) +
                   ": the emulator runs bfp16ebs8 encodings only");
    } else if (n == "vector.encode" || n == "vector.decode") {
        for (const auto& [k, a] : op.attrs)
            if (a.kind == Attr::Kind::Value) {
                refuse("auxiliary operand '" + k + "': scales, tables and metadata are not emulated (bfp16ebs8 carries its own exponents)");
                break;
            }
    } else if (n == "vector.fragment" || n == "vector.fragment.store") {
        if (op.shape.size() == 3) {
            refuse("a block count: batched fragments are not emulated");
            return;
        }
        auto known = [&](const IndexEntry& e, int64_t& v) {
            if (!e.is_value()) return v = e.constant, true;
            auto it = s.consts.find(e.value);
            return it != s.consts.end() && (v = it->second, true);
        };
        int64_t rows = 0, cols = 0;
        const std::vector<Type>& types = n == "vector.fragment" ? op.result_types : op.operand_types;
        if (op.shape.size() != 2 || types.empty() || !known(op.shape[0], rows) || !known(op.shape[1], cols)) return;
        const Type& t = types[0];
        int64_t lanes = 1;
        for (const Dim& d : t.dims) {
            if (d.is_dynamic()) return;
            lanes *= d.extent;
        }
        // A bfp16ebs8 payload holds 8 values in 9 bytes.
        if (rows < 1 || cols < 1) return;  // the interpreter reports bad extents
        const bool fits = rows <= lanes && cols <= lanes;  // rows * cols cannot overflow then
        const bool payload = fits && t.elem == ScalarKind::I8 && rows * cols % 8 == 0 && rows * cols / 8 * 9 == lanes;
        if ((!fits || rows * cols != lanes) && !payload)
            refuse("shape [" + std::to_string(rows) + ", " + std::to_string(cols) + "] over " + t.spelling +
                   ": the emulator holds a fragment as one work-item's whole matrix (rows x cols lanes); target-distributed "
                   "fragment payloads are not emulated");
    } else if (n == "vector.mma") {
        const std::vector<Type>& t = op.operand_types;
        const Type* res = !op.result_types.empty() ? &op.result_types[0] : t.size() >= 3 ? &t[2] : nullptr;
        for (size_t k = 0; k < 2 && k < t.size(); ++k)
            if (t[k].elem != ScalarKind::BF16 && t[k].elem != ScalarKind::I8) {
                refuse(std::string(k == 0 ? "lhs " : "rhs ") + t[k].spelling + ": the emulator multiplies bf16 or bfp16ebs8-encoded operands only");
                return;
            }
        if (res && res->elem != ScalarKind::F32) refuse("accumulator " + res->spelling + ": the emulator accumulates in f32 only");
        if (!op.params.empty()) refuse("flags <" + op.params[0] + ">: saturating integer mma is not emulated");
    }
}

// Whether `r` (nested regions included) loads a system-scope atomic.
bool polls_system_scope(const Region& r) {
    for (const Op& op : r.ops) {
        if (op.name == "view.atomic.load") {
            const Attr* sc = op.attr("scope");
            if (sc && sc->s == "system") return true;
        }
        for (const Region& sub : op.regions)
            if (polls_system_scope(sub)) return true;
    }
    return false;
}

// Why the emulator cannot honour a layout `op` names (Note [View layouts] in
// parser.cpp), "" when it can: views take dense and strided layouts; a
// pipeline moves dense records only.
std::string layout_problem(const Op& op) {
    const bool flows = op.name == "pipeline.read" || op.name == "pipeline.scatter" || op.name == "pipeline.write";
    for (const auto* types : {&op.result_types, &op.operand_types})
        for (const Type& t0 : *types) {
            const Type& t = t0.kind == TypeKind::Flow && t0.inner ? *t0.inner : t0;
            if (t.kind == TypeKind::View && t.layout_form == Type::Layout::Other)
                return "the view layout '" + t.layout + "' is not honoured by the emulator (it runs dense and encoding.layout.strided views)";
            const bool address_layout = t.layout_form == Type::Layout::Strided || t.layout_form == Type::Layout::Value;
            if (t.kind == TypeKind::Tile && address_layout)
                return "a tile with the address layout '" + t.layout + "' is not executed by the emulator (flows carry dense records)";
            if (flows && t.kind == TypeKind::View && address_layout)
                return "a pipeline over the strided view " + t.spelling + " is not executed by the emulator (records are moved dense)";
        }
    return {};
}

void scan_region(const Specialized& spec, const Region& r, bool in_pipeline, bool in_launch, Scan& s) {
    for (const Op& op : r.ops) {
        const std::string& n = op.name;
        if (n == "scf.while" && std::any_of(op.regions.begin(), op.regions.end(), polls_system_scope)) {
            // A spin on memory another engine or the host writes: the
            // emulator runs one program at a time, so nothing would ever
            // end the loop.
            s.diags.push_back(error_at("EMULATOR/004", "valid Loom, not executed by the emulator: scf.while polling a system-scope view.atomic.load "
                        "(it waits for another engine or the host, which the emulator does not run alongside)", op.loc));
        }
        if (n == "index.constant" && !op.results.empty())
            if (const Attr* v = op.attr("value"); v && v->kind == Attr::Kind::Int) s.consts[op.results[0]] = v->i;
        check_matrix_op(op, s);
        bool ok = is_terminator(n) || interp::op_supported(n);
        if (in_launch && n == "kernel.launch.config") ok = true;
        if (in_pipeline && pipeline_only_op(n)) ok = true;
        if (n == "buffer.alloca" && !op.params.empty() && op.params[0] == "workgroup") s.workgroup_memory = true;
        else if (n == "buffer.alloca") s.private_scratch = true;
        if (n == "kernel.barrier") s.barrier = true;
        if (n.rfind("kernel.subgroup.", 0) == 0 && n != "kernel.subgroup.size" && n != "kernel.subgroup.count") s.subgroup = true;
        // Workgroup collectives need the whole workgroup in one lockstep batch, as subgroup ones do.
        if (n == "kernel.workgroup.reduce" || n == "kernel.workgroup.scan" || n.rfind("kernel.workgroup.vote", 0) == 0) s.subgroup = true;
        if (n.rfind("view.atomic.", 0) == 0) s.atomics = true;
        for (const Type& t : op.result_types)
            if (t.elem == ScalarKind::F8E4M3 || t.elem == ScalarKind::F8E5M2) ok = false;
        bool reported = false;  // one diagnostic per op, however many of its types are too wide
        for (const auto* types : {&op.result_types, &op.operand_types})
            for (const Type& t : *types) {
                if (t.kind != TypeKind::Vector || reported) continue;
                int64_t elems = 1;
                bool fits = true;
                for (const Dim& d : t.dims)
                    if (!d.is_dynamic() && (d.extent < 1 || d.extent > kMaxVectorElems || (elems *= d.extent) > kMaxVectorElems)) fits = false;
                if (fits) continue;
                s.diags.push_back(error_at("EMULATOR/005", n + ": " + t.spelling + " is not a vector the emulator holds (1 to " + std::to_string(kMaxVectorElems) + " elements)", op.loc));
                reported = true;
            }
        if (!ok) {
            // The catalogue says why (Note [Op catalogue]); an op it does not
            // know is refused the same way.
            const OpEntry* e = catalogue_find(n);
            std::string code = e ? std::string(e->refusal) : "EMULATOR/001";
            std::string why = e && !e->reason.empty() ? " (" + std::string(e->reason) + ")" : "";
            if (code == "EMULATOR/001" && why.empty())
                for (const auto* types : {&op.result_types, &op.operand_types})
                    for (const Type& t : *types)
                        if (why.empty() && (t.elem == ScalarKind::F8E4M3 || t.elem == ScalarKind::F8E5M2))
                            why = " (fp8 types are not emulated: " + t.spelling + ")";
            s.diags.push_back(error_at(code, "valid Loom, not executed by the emulator: " + n + why, op.loc));
            continue;
        }
        if (const std::string bad = layout_problem(op); !bad.empty()) {
            s.diags.push_back(error_at("EMULATOR/007", n + ": " + bad, op.loc));
            continue;
        }
        if (n == "func.call" || n == "template.call") {
            const Op* fn = spec.module->find(op.callee);
            if (!has_body(fn)) {
                s.diags.push_back(error_at("EMULATOR/002", n + " of @" + op.callee + ", which has no body the emulator can run", op.loc));
            } else {
                scan_fn(spec, fn, s);
            }
        } else if (n == "template.apply") {
            auto it = spec.template_choice.find(&op);
            if (it != spec.template_choice.end() && !has_body(it->second)) {
                s.diags.push_back(error_at("EMULATOR/002", "template.apply selects @" + it->second->symbol + ", which has no body the emulator can run", op.loc));
            } else if (it != spec.template_choice.end()) {
                scan_fn(spec, it->second, s);
            }
        } else if (n == "pipeline.stage" || n == "pipeline.reduce") {
            const Op* fn = spec.module->find(op.callee);
            if (!has_body(fn)) {
                s.diags.push_back(error_at("EMULATOR/002", n + " of @" + op.callee + ", which has no body the emulator can run", op.loc));
            } else {
                scan_fn(spec, fn, s);
            }
        }
        for (const Region& sub : op.regions) scan_region(spec, sub, in_pipeline, in_launch, s);
    }
}

// The function-like op that `op` runs (a call, template selection or stage
// callee), nullptr for other ops.
const Op* call_target(const Specialized& spec, const Op& op) {
    const std::string& n = op.name;
    if (n == "func.call" || n == "template.call" || n == "pipeline.stage" || n == "pipeline.reduce") return spec.module->find(op.callee);
    if (n == "template.apply") {
        auto it = spec.template_choice.find(&op);
        return it == spec.template_choice.end() ? nullptr : it->second;
    }
    return nullptr;
}

// Checks one buffer.alloca whose size the planner knows (`n` bytes) against
// Note [Emulator size limits]; false (with a diagnostic) when it fails.
bool alloca_size_ok(const Op& op, int64_t n, std::vector<Diagnostic>& diags) {
    const bool wg = !op.params.empty() && op.params[0] == "workgroup";
    const std::string what = std::string("buffer.alloca<") + (wg ? "workgroup" : "private") + ">";
    auto diag = [&](const char* code, std::string msg) {
        diags.push_back(error_at(code, std::move(msg), op.loc));
        return false;
    };
    if (n < 0) return diag("SUBRANGE/002", what + " size " + std::to_string(n) + " is negative (a byte count is an offset)");
    if (static_cast<uint64_t>(n) > kMaxAllocaBytes)
        return diag("EMULATOR/005", what + " of " + std::to_string(n) + " bytes is over the emulator's limit of " + std::to_string(kMaxAllocaBytes) +
                                        " bytes per allocation");
    const Attr* al = op.attr("align");
    if (al && (al->i <= 0 || al->i > static_cast<int64_t>(kMaxAllocaBytes) || (al->i & (al->i - 1))))
        return diag("SUBRANGE/002", what + " align(" + std::to_string(al->i) + ") is not a power of two up to " + std::to_string(kMaxAllocaBytes));
    return true;
}

// Note [Call depth]: the interpreter runs a call by recursing into the
// callee's body, so the regions open at once are the caller's nesting plus
// the callee's, down the whole call chain. The parser bounds each
// function's own nesting (Note [Nesting limit] in parser.cpp); this bounds
// the sum by the same kMaxNesting and refuses recursion (the emulator has
// no call stack to exhaust gracefully), both as EMULATOR/006. Every walk
// here keeps its own stack, so a hostile call chain cannot overflow the
// thread's while it is measured.
// The allocas of functions other than the root whose size is an
// index.constant of that function are checked here too (the planner's
// evaluator knows the root's values only).
void check_call_graph(const Specialized& spec, std::vector<Diagnostic>& diags) {
    struct Facts {
        int depth = 0;  // deepest region level in the function itself
        struct Call {
            const Op* callee;
            int level;  // level of the region holding the call
            Location loc;
        };
        std::vector<Call> calls;
    };
    std::map<const Op*, Facts> facts;
    std::vector<const Op*> work{spec.root};
    while (!work.empty()) {
        const Op* fn = work.back();
        work.pop_back();
        if (facts.count(fn)) continue;
        Facts& f = facts[fn];
        std::map<ValueId, int64_t> literal;
        std::vector<const Op*> allocas;
        std::vector<std::pair<const Region*, int>> regions;
        for (const Region& r : fn->regions) regions.emplace_back(&r, 1);
        while (!regions.empty()) {
            auto [r, level] = regions.back();
            regions.pop_back();
            f.depth = std::max(f.depth, level);
            for (const Op& op : r->ops) {
                const Op* callee = call_target(spec, op);
                if (has_body(callee)) {
                    f.calls.push_back({callee, level, op.loc});
                    if (!facts.count(callee)) work.push_back(callee);
                }
                if (op.name == "index.constant" && op.results.size() == 1)
                    if (const Attr* v = op.attr("value")) literal[op.results[0]] = v->i;
                if (op.name == "buffer.alloca" && !op.operands.empty() && fn != spec.root) allocas.push_back(&op);
                for (const Region& sub : op.regions) regions.emplace_back(&sub, level + 1);
            }
        }
        for (const Op* a : allocas)
            if (auto it = literal.find(a->operands[0]); it != literal.end()) alloca_size_ok(*a, it->second, diags);
    }
    // Depth through calls, callees first (post-order); a callee still on
    // the path is a recursion.
    std::map<const Op*, int> total;
    std::set<const Op*> on_path;
    std::vector<std::pair<const Op*, size_t>> path{{spec.root, 0}};
    on_path.insert(spec.root);
    bool recursion = false;
    while (!path.empty()) {
        auto& [fn, next] = path.back();
        const Facts& f = facts[fn];
        if (next < f.calls.size()) {
            const Facts::Call& c = f.calls[next++];
            if (on_path.count(c.callee)) {
                if (!recursion) {
                    diags.push_back(error_at("EMULATOR/006", "a recursive call: @" + c.callee->symbol + " is still running when @" + fn->symbol +
                                " calls it (the emulator runs call chains without recursion)", c.loc));
                }
                recursion = true;
            } else if (!total.count(c.callee)) {
                on_path.insert(c.callee);
                path.emplace_back(c.callee, 0);
            }
            continue;
        }
        int t = f.depth;
        for (const Facts::Call& c : f.calls) {
            auto it = total.find(c.callee);
            if (it != total.end()) t = std::max(t, c.level + it->second);
        }
        total[fn] = t;
        on_path.erase(fn);
        path.pop_back();
    }
    if (!recursion && total[spec.root] > kMaxNesting) {
        diags.push_back(error_at("EMULATOR/006", "regions nest " + std::to_string(total[spec.root]) + " levels deep through calls from @" + spec.symbol +
                    "; the emulator runs at most " + std::to_string(kMaxNesting), spec.root->loc));
    }
}

ScalarKind value_kind(const Op& fn, ValueId v) { return (*fn.values)[static_cast<size_t>(v)].type.elem; }
bool value_is_buffer(const Op& fn, ValueId v) { return (*fn.values)[static_cast<size_t>(v)].type.kind == TypeKind::Buffer; }

// Where each value of a function is defined (for constant evaluation).
struct Def {
    const Op* op = nullptr;
    size_t result = 0;
};

void collect_defs(const Region& r, std::map<ValueId, Def>& defs, std::vector<const Op*>& all) {
    for (const Op& op : r.ops) {
        all.push_back(&op);
        for (size_t k = 0; k < op.results.size(); ++k) defs[op.results[k]] = Def{&op, k};
        for (const Region& sub : op.regions) collect_defs(sub, defs, all);
    }
}

// Native entries by IR text, for the process (Note [Native Loom executor]):
// a program planned again (a built-in loaded once more, a test's fresh plan)
// whose generated IR was compiled before starts native at once. Python fills
// it through attach_native; entries live as long as the process's engine.
std::mutex g_native_mu;
std::unordered_map<std::string, uint64_t> g_native_entries;

class LoomProgram final : public Program {
public:
    explicit LoomProgram(const Specialized& spec) : spec_(spec) {
        const Op& root = *spec_.root;
        gpu_ = root.name == "kernel.def";
        Scan s;
        check_call_graph(spec_, s.diags);
        if (!s.diags.empty()) throw CompileError(s.diags);
        if (root.name != "kernel.def" && root.name != "pipeline.def") {
            // Functions, templates and low-level code are valid roots for
            // loomc, but nothing the emulator launches.
            s.diags.push_back(error_at("EMULATOR/001", "valid Loom, not executed by the emulator: " + root.name + " as a root (the emulator launches kernel.def and pipeline.def)", root.loc));
            for (const Region& r : root.regions) scan_region(spec_, r, false, false, s);
            throw CompileError(s.diags);
        }
        if (gpu_) {
            if (root.regions.size() < 2) fail(ErrorKind::Message, "Program::plan: kernel.def @" + spec_.symbol + " has no device body");
            scan_region(spec_, root.regions[0], false, true, s);
            scan_region(spec_, root.regions[1], false, false, s);
        } else {
            if (root.regions.empty()) fail(ErrorKind::Message, "Program::plan: pipeline.def @" + spec_.symbol + " has no body");
            scan_region(spec_, root.regions[0], true, false, s);
        }
        if (!s.diags.empty()) throw CompileError(s.diags);
        folded_ = gpu_ && !s.workgroup_memory && !s.barrier && !s.subgroup && !s.atomics;
        atomics_ = s.atomics;
        scratch_lanes_ = s.private_scratch ? kScratchLanes : INT64_MAX;
        if (gpu_) {
            for (ValueId v : root.regions[0].args) wparams_.push_back(param(root, v));
            uint64_t off = 0;
            for (ValueId v : root.regions[1].args) {
                Param p = param(root, v);
                if (!p.is_buffer) {
                    const uint64_t len = static_cast<uint64_t>(interp::elem_bytes(p.type, spec_.facts.index_bits == 0 ? 32 : spec_.facts.index_bits));
                    p.byte_length = len;
                    p.byte_alignment = len;
                    off = (off + len - 1) / len * len;
                    p.byte_offset = off;
                    off += len;
                }
                dparams_.push_back(p);
            }
            const_len_ = off;
            std::vector<const Op*> all;
            collect_defs(root.regions[1], defs_, all);
            collect_defs(root.regions[0], launch_defs_, all);
            wg_storage_ = scratch_storage(all);
            check_static_geometry();
            for (const Op* op : all)
                for (const Type& t : op->result_types) {
                    if (t.kind != TypeKind::Vector) continue;
                    int64_t n = 1;
                    for (const Dim& d : t.dims) n *= d.is_dynamic() ? 64 : std::max<int64_t>(d.extent, 1);
                    max_vlen_ = std::max(max_vlen_, n);
                }
            native_ = native::generate(spec_, dparams_, folded_);
            if (!native_.ir.empty()) {
                std::lock_guard<std::mutex> g(g_native_mu);
                if (auto it = g_native_entries.find(native_.ir); it != g_native_entries.end()) native_entry_.store(it->second);
            }
        } else {
            const Attr* sa = root.attr("spec_args");
            const size_t skip = sa ? static_cast<size_t>(sa->i) : 0;
            const auto& args = root.regions[0].args;
            for (size_t k = skip; k < args.size(); ++k) dparams_.push_back(param(root, args[k]));
            std::vector<const Op*> all;
            collect_defs(root.regions[0], defs_, all);
        }
    }

    bool is_gpu() const override { return gpu_; }
    const Specialized& specialized() const override { return spec_; }
    const std::vector<Param>& workload_params() const override { return wparams_; }
    const std::vector<Param>& device_params() const override { return dparams_; }
    uint64_t constant_byte_length() const override { return const_len_; }

    LaunchConfig launch_config(const std::vector<uint64_t>& bits) const override;
    std::vector<Footprint> footprints(const std::vector<uint8_t>& constants) const override;
    void run(const std::vector<MemorySpan>& bindings, const std::vector<uint8_t>& constants, const LaunchConfig& launch,
             const ExecOptions& options) const override;

    const std::string& native_ir() const override { return native_.ir; }
    const std::string& native_reason() const override {
        static const std::string npu = "NPU pipelines are interpreted";
        if (!gpu_) return npu;
        std::lock_guard<std::mutex> g(native_mu_);
        return native_refusal_.empty() ? native_.reason : native_refusal_;
    }
    void refuse_native(const std::string& why) const override {
        std::lock_guard<std::mutex> g(native_mu_);
        native_refusal_ = why;
    }
    void attach_native(uint64_t entry) const override {
        if (native_.ir.empty() || entry == 0)
            fail(ErrorKind::Message, "attach_native(@" + spec_.symbol + "): the program has no native code (" + native_reason() + ")");
        native_entry_.store(entry, std::memory_order_release);
        std::lock_guard<std::mutex> g(g_native_mu);
        g_native_entries[native_.ir] = entry;
    }
    bool native_attached() const override { return native_entry_.load(std::memory_order_acquire) != 0; }

private:
    void run_native(const std::vector<MemorySpan>& bindings, const std::vector<uint8_t>& constants, const LaunchConfig& launch,
                    uint64_t entry) const;
    [[noreturn]] void native_failure(const native::ErrorRecord& e, const LaunchConfig& launch,
                                     const std::vector<MemorySpan>& bindings) const;

    native::Generated native_;
    mutable std::atomic<uint64_t> native_entry_{0};
    mutable std::mutex native_mu_;
    mutable std::string native_refusal_;  // set once, before any reader (refuse_native)

    Param param(const Op& fn, ValueId v) const {
        Param p;
        p.name = (*fn.values)[static_cast<size_t>(v)].name;
        p.is_buffer = value_is_buffer(fn, v);
        p.is_view = (*fn.values)[static_cast<size_t>(v)].type.kind == TypeKind::View;
        p.is_buffer = p.is_buffer || p.is_view;
        p.type = p.is_buffer && !p.is_view ? ScalarKind::None : value_kind(fn, v);
        return p;
    }

    // The workgroup allocas' total (the launch config's
    // workgroup_storage_bytes), after checking every alloca size the planner
    // can evaluate against Note [Emulator size limits].
    uint64_t scratch_storage(const std::vector<const Op*>& all) const {
        uint64_t total = 0, priv = 0;
        std::vector<Diagnostic> diags;
        auto diag = [&](const char* code, const Op* op, std::string msg) {
            diags.push_back(error_at(code, std::move(msg), op->loc));
        };
        for (const Op* op : all) {
            if (op->name != "buffer.alloca") continue;
            const bool wg = !op->params.empty() && op->params[0] == "workgroup";
            const std::string what = std::string("buffer.alloca<") + (wg ? "workgroup" : "private") + ">";
            const std::optional<int64_t> n = op->operands.empty() ? std::nullopt : eval_static(op->operands[0]);
            if (!n) {
                if (wg) diag("EMULATOR/003", op, "buffer.alloca<workgroup> size must be a constant or config value for the emulator");
                continue;
            }
            if (!alloca_size_ok(*op, *n, diags)) continue;
            const uint64_t bytes = static_cast<uint64_t>(*n);
            const Attr* al = op->attr("align");
            const uint64_t a = al ? static_cast<uint64_t>(al->i) : 16;
            uint64_t& sum = wg ? total : priv;
            sum = (sum + a - 1) / a * a + bytes;
            if (sum > kMaxAllocaBytes) {
                diag("EMULATOR/005", op, what + " brings the " + (wg ? "workgroup's" : "work-item's") + " scratch to " + std::to_string(sum) +
                                             " bytes, over the emulator's limit of " + std::to_string(kMaxAllocaBytes));
                sum = 0;
            }
        }
        if (!diags.empty()) throw CompileError(diags);
        return total;
    }

    // A device-body value known without running: constants, config, and
    // index arithmetic over them; device scalars come from `constants`
    // (nullptr: unknown). `needs` names the scalar an evaluation lacked.
    // `launch`: a value of the launch-config region (workload values are
    // unknown there).
    std::optional<int64_t> eval_value(ValueId v, const std::vector<uint8_t>* constants, std::string* needs, int depth = 0,
                                      bool launch = false) const {
        if (depth > 64) return std::nullopt;
        const Op& root = *spec_.root;
        const Region& body = root.regions[gpu_ && !launch ? 1 : 0];
        for (size_t k = 0; k < body.args.size(); ++k) {
            if (body.args[k] != v) continue;
            if (launch) return std::nullopt;
            if (!gpu_ || k >= dparams_.size() || dparams_[k].is_buffer) return std::nullopt;
            const Param& p = dparams_[k];
            if (!constants || constants->size() < p.byte_offset + p.byte_length) {
                if (needs) *needs = p.name;
                return std::nullopt;
            }
            int64_t raw = 0;
            std::memcpy(&raw, constants->data() + p.byte_offset, p.byte_length);
            if (p.byte_length < 8 && p.type != ScalarKind::Offset) {
                const int sh = static_cast<int>(64 - 8 * p.byte_length);
                raw = static_cast<int64_t>(static_cast<uint64_t>(raw) << sh) >> sh;
            }
            return raw;
        }
        const std::map<ValueId, Def>& defs = launch ? launch_defs_ : defs_;
        auto it = defs.find(v);
        if (it == defs.end()) return std::nullopt;
        const Op& op = *it->second.op;
        const std::string& n = op.name;
        auto arg = [&](size_t k) -> std::optional<int64_t> {
            if (k >= op.operands.size()) return std::nullopt;
            return eval_value(op.operands[k], constants, needs, depth + 1, launch);
        };
        if (n == "index.constant" || n == "scalar.constant") {
            const Attr* a = op.attr("value");
            return a ? a->i : 0;
        }
        if (n == "config.get") {
            auto c = spec_.config.find(op.callee);
            if (c == spec_.config.end()) return std::nullopt;
            return c->second.i;
        }
        if (n == "index.assume" || n == "scalar.assume") return arg(it->second.result);
        if (n == "index.cast" || n == "scalar.extsi" || n == "scalar.extui" || n == "scalar.trunci") return arg(0);
        const auto a = arg(0), b = arg(1);
        if (!a || !b) return std::nullopt;
        // An overflow leaves the value to the interpreter, which knows the op's semantics.
        int64_t r = 0;
        if (n == "index.add") return __builtin_add_overflow(*a, *b, &r) ? std::nullopt : std::optional<int64_t>(r);
        if (n == "index.sub") return __builtin_sub_overflow(*a, *b, &r) ? std::nullopt : std::optional<int64_t>(r);
        if (n == "index.mul" || n == "index.scale") return __builtin_mul_overflow(*a, *b, &r) ? std::nullopt : std::optional<int64_t>(r);
        if (n == "index.div") return *b > 0 ? std::optional<int64_t>(*a / *b) : std::nullopt;
        if (n == "index.rem") return *b > 0 ? std::optional<int64_t>(*a % *b) : std::nullopt;
        if (n == "index.min") return std::min(*a, *b);
        if (n == "index.max") return std::max(*a, *b);
        return std::nullopt;
    }

    std::optional<int64_t> eval_static(ValueId v) const { return eval_value(v, nullptr, nullptr); }

    // Note [Footprint ranges]: the launch the device scalars give (their
    // names match the workload's), and a value's range over it in the
    // function context `ctx` (an FpCtx).
    std::optional<LaunchConfig> launch_from_constants(const std::vector<uint8_t>& constants) const;
    std::optional<std::pair<int64_t, int64_t>> range_of(const void* ctx, ValueId v, const std::vector<uint8_t>& constants,
                                                        const LaunchConfig* lc, std::string* needs, int depth) const;

    // The element strides of view type `t`'s layout when the planner knows
    // them (static strides, or an encoding.layout.strided value of known
    // entries); nullopt otherwise.
    std::optional<std::vector<int64_t>> layout_strides(const Type& t, const std::vector<uint8_t>& constants, std::string& needs) const {
        if (t.layout_form == Type::Layout::Strided) return t.layout_strides;
        if (t.layout_form != Type::Layout::Value) return std::nullopt;
        auto it = defs_.find(t.layout_value);
        while (it != defs_.end() && it->second.op->name.rfind("encoding.layout.assume.", 0) == 0 && !it->second.op->operands.empty())
            it = defs_.find(it->second.op->operands[0]);
        if (it == defs_.end()) return std::nullopt;
        const Op& op = *it->second.op;
        if (op.name == "encoding.layout.dense") {
            std::vector<int64_t> dims;
            for (const Dim& d : t.dims) {
                if (!d.is_dynamic()) dims.push_back(d.extent);
                else if (auto e = eval_value(d.value, &constants, &needs)) dims.push_back(*e);
                else return std::nullopt;
            }
            std::vector<int64_t> st(dims.size(), 1);
            for (size_t d = dims.size(); d-- > 1;) st[d - 1] = st[d] * dims[d];
            return st;
        }
        if (op.name != "encoding.layout.strided") return std::nullopt;
        std::vector<int64_t> st;
        for (const IndexEntry& e : op.indices) {
            if (!e.is_value()) st.push_back(e.constant);
            else if (auto v = eval_value(e.value, &constants, &needs)) st.push_back(*v);
            else return std::nullopt;
        }
        return st;
    }

    // A launch geometry known without the workload meets Note [Emulator
    // size limits] when the program is planned.
    void check_static_geometry() const {
        for (const Op& op : spec_.root->regions[0].ops) {
            if (op.name != "kernel.launch.config" || op.operands.size() < 6) continue;
            std::array<int64_t, 3> wg{}, ws{};
            for (size_t k = 0; k < 6; ++k) {
                const auto v = eval_value(op.operands[k], nullptr, nullptr, 0, true);
                if (!v) return;
                (k < 3 ? wg : ws)[k % 3] = *v;
            }
            const std::string bad = launch_geometry_problem(wg, ws);
            if (bad.empty()) return;
            throw CompileError({error_at("SUBRANGE/002", "kernel.launch.config: " + bad, op.loc)});
        }
    }

    void run_gpu(const interp::Shared& sh) const;
    void run_npu(const interp::Shared& sh) const;
    void bind_device_args(Exec& x, Exec::Frame& fr, const Region& body) const;

    Specialized spec_;
    bool gpu_ = true;
    bool folded_ = false;
    bool atomics_ = false;
    int64_t scratch_lanes_ = INT64_MAX;  // lanes per batch at most (Note [Emulator size limits])
    std::vector<Param> wparams_, dparams_;
    uint64_t const_len_ = 0;
    uint64_t wg_storage_ = 0;
    int64_t max_vlen_ = 1;  // elements per lane of the widest vector value
    std::map<ValueId, Def> defs_, launch_defs_;
};

// ---------------------------------------------------------------------------

LaunchConfig LoomProgram::launch_config(const std::vector<uint64_t>& bits) const {
    const std::string who = "launch_config(@" + spec_.symbol + ")";
    if (!gpu_) fail(ErrorKind::Message, who + ": a pipeline has no launch program");
    if (bits.size() != wparams_.size())
        fail(ErrorKind::Message, who + ": takes " + std::to_string(wparams_.size()) + " workload value(s), got " + std::to_string(bits.size()));
    interp::Shared sh;
    sh.spec = &spec_;
    sh.gpu = true;
    Exec x(sh, 1);
    const Op& root = *spec_.root;
    Exec::Frame fr = x.frame_for(root);
    const Region& lr = root.regions[0];
    for (size_t k = 0; k < wparams_.size(); ++k) {
        const Param& p = wparams_[k];
        Reg r;
        r.kind = RK::Num;
        r.elem = p.type;
        const uint64_t b = bits[k];
        if (scalar_is_float(p.type)) {
            const uint64_t w = p.type == ScalarKind::F64 ? b : (b & ((uint64_t{1} << scalar_bits(p.type)) - 1));
            double f = 0;
            if (p.type == ScalarKind::F64) f = std::bit_cast<double>(w);
            else if (p.type == ScalarKind::F32) f = std::bit_cast<float>(static_cast<uint32_t>(w));
            else if (p.type == ScalarKind::BF16) f = std::bit_cast<float>(static_cast<uint32_t>(w) << 16);
            else fail(ErrorKind::Message, who + ": workload %" + p.name + " of type " + scalar_name(p.type) + " is not supported");
            r.f = {f};
        } else if (p.type == ScalarKind::Offset) {
            if (b > static_cast<uint64_t>(INT64_MAX))
                fail(ErrorKind::Message, who + ": workload %" + p.name + " = " + std::to_string(b) + " is above INT64_MAX");
            r.i = {static_cast<int64_t>(b)};
        } else if (p.type == ScalarKind::Index) {
            r.i = {static_cast<int64_t>(b)};
        } else {
            r.i = {interp::wrap_int(p.type, static_cast<int64_t>(b))};
        }
        fr.regs[static_cast<size_t>(lr.args[k])] = std::move(r);
    }
    Mask all;
    LaunchConfig lc;
    for (const Op& op : lr.ops) {
        if (op.name == "kernel.launch.config") {
            std::array<int64_t, 9> v{1, 1, 1, 1, 1, 1, 1, 1, 1};
            for (size_t k = 0; k < op.operands.size() && k < 9; ++k) v[k] = fr.regs[static_cast<size_t>(op.operands[k])].i.at(0);
            for (int d = 0; d < 3; ++d) {
                lc.workgroups[static_cast<size_t>(d)] = v[static_cast<size_t>(d)];
                lc.workgroup_size[static_cast<size_t>(d)] = v[static_cast<size_t>(3 + d)];
                lc.cluster_size[static_cast<size_t>(d)] = v[static_cast<size_t>(6 + d)];
            }
            const std::string bad = launch_geometry_problem(lc.workgroups, lc.workgroup_size);
            if (!bad.empty()) fail(ErrorKind::Message, who + ": " + loc_of(op) + ": kernel.launch.config: " + bad);
            break;
        }
        if (is_terminator(op.name)) break;
        try {
            x.exec_op(op, fr, all);
            if (op.name == "index.assume" || op.name == "scalar.assume") interp::check_authored(x, op, fr);
        } catch (const Error& e) {
            if (e.kind() == ErrorKind::Message) fail(ErrorKind::Message, who + ": " + e.what());
            fail(ErrorKind::Message, who + ": " + e.what());
        }
    }
    lc.subgroup_size = spec_.facts.subgroup_size;
    lc.workgroup_storage_bytes = wg_storage_;
    return lc;
}

// Note [Footprint ranges]
//   A binding's footprint is the furthest byte any view of it reaches over
//   the whole launch. A view's byte offset and extents are evaluated as
//   ranges: constants, config values and device scalars are exact; the
//   coordinates range over the launch the constants give (workgroup ids over
//   [0, workgroups), work-item ids over [0, workgroup_size), ...); index
//   arithmetic combines the ranges. Views made in called functions count too:
//   a callee's argument evaluates as the call's operand in the caller. The
//   footprint is then max(offset) + the view's span. A view whose offset or
//   extent has no range here (a loop variable, a loaded value, a launch the
//   constants do not fix) marks the footprint `bounded`: the binding's own
//   span bounds the accesses (the interpreter checks every access against
//   it), so contract_for cannot state the extent, and load_gpu_kernel accepts
//   a hand-written contract for it.

namespace {

struct FpCtx {
    const Op* fn = nullptr;         // whose body holds the values
    std::map<ValueId, Def> defs;
    const Region* body = nullptr;
    const FpCtx* caller = nullptr;  // nullptr: the root
    const Op* call = nullptr;       // the call in the caller
};

using Range = std::optional<std::pair<int64_t, int64_t>>;

int axis_of(const Op& op) {
    const std::string a = op.params.empty() ? "x" : op.params[0];
    return a == "y" ? 1 : a == "z" ? 2 : 0;
}

}  // namespace

std::optional<LaunchConfig> LoomProgram::launch_from_constants(const std::vector<uint8_t>& constants) const {
    if (!gpu_) return std::nullopt;
    std::vector<uint64_t> bits;
    for (const Param& w : wparams_) {
        const Param* match = nullptr;
        for (const Param& d : dparams_)
            if (!d.is_buffer && d.name == w.name && d.type == w.type) match = &d;
        if (!match || match->byte_offset + match->byte_length > constants.size() || match->byte_length > 8) return std::nullopt;
        uint64_t v = 0;
        std::memcpy(&v, constants.data() + match->byte_offset, match->byte_length);
        const int nbits = static_cast<int>(match->byte_length * 8);
        if (nbits < 64 && (w.type == ScalarKind::Index || scalar_is_int(w.type)) && (v >> (nbits - 1)) & 1) v |= ~uint64_t{0} << nbits;
        bits.push_back(v);
    }
    try {
        return launch_config(bits);
    } catch (const Error&) {
        return std::nullopt;
    }
}

std::optional<std::pair<int64_t, int64_t>> LoomProgram::range_of(const void* ctx, ValueId v, const std::vector<uint8_t>& constants,
                                                                 const LaunchConfig* lc, std::string* needs, int depth) const {
    const FpCtx& c = *static_cast<const FpCtx*>(ctx);
    if (depth > 64) return std::nullopt;
    if (!c.caller) {
        std::string miss;
        if (auto x = eval_value(v, &constants, &miss)) return std::make_pair(*x, *x);
        if (!miss.empty() && needs) *needs = miss;
    }
    for (size_t k = 0; k < c.body->args.size(); ++k)
        if (c.body->args[k] == v) {
            if (!c.caller || k >= c.call->operands.size()) return std::nullopt;
            return range_of(c.caller, c.call->operands[k], constants, lc, needs, depth + 1);
        }
    auto it = c.defs.find(v);
    if (it == c.defs.end()) return std::nullopt;
    const Op& op = *it->second.op;
    const std::string& n = op.name;
    auto arg = [&](size_t k) -> Range {
        if (k >= op.operands.size()) return std::nullopt;
        return range_of(ctx, op.operands[k], constants, lc, needs, depth + 1);
    };
    auto exact = [](int64_t x) { return std::make_pair(x, x); };
    if (n == "index.constant" || n == "scalar.constant") {
        const Attr* a = op.attr("value");
        return exact(a ? a->i : 0);
    }
    if (n == "config.get") {
        auto cf = spec_.config.find(op.callee);
        if (cf == spec_.config.end()) return std::nullopt;
        return exact(cf->second.i);
    }
    if (n == "index.assume" || n == "scalar.assume") return arg(it->second.result);
    if (n == "index.cast" || n == "scalar.extsi" || n == "scalar.extui" || n == "scalar.trunci") return arg(0);
    if (lc && n.rfind("kernel.", 0) == 0) {
        const int d = axis_of(op);
        const int64_t wg = lc->workgroups[static_cast<size_t>(d)], ws = lc->workgroup_size[static_cast<size_t>(d)];
        if (n == "kernel.workgroup.id") return std::make_pair(int64_t{0}, wg - 1);
        if (n == "kernel.workitem.id") return std::make_pair(int64_t{0}, ws - 1);
        if (n == "kernel.workgroup.size") return exact(ws);
        if (n == "kernel.workgroup.count") return exact(wg);
        if (n == "kernel.workitem.dispatch.id") return std::make_pair(int64_t{0}, wg * ws - 1);
        return std::nullopt;
    }
    const Range a = arg(0), b = arg(1);
    if (!a || !b) return std::nullopt;
    const auto [alo, ahi] = *a;
    const auto [blo, bhi] = *b;
    int64_t r[4];
    if (n == "index.add") {
        if (__builtin_add_overflow(alo, blo, &r[0]) || __builtin_add_overflow(ahi, bhi, &r[1])) return std::nullopt;
        return std::make_pair(r[0], r[1]);
    }
    if (n == "index.sub") {
        if (__builtin_sub_overflow(alo, bhi, &r[0]) || __builtin_sub_overflow(ahi, blo, &r[1])) return std::nullopt;
        return std::make_pair(r[0], r[1]);
    }
    auto corners = [&](auto f) -> Range {
        const int64_t xs[2] = {alo, ahi}, ys[2] = {blo, bhi};
        for (int i = 0; i < 4; ++i)
            if (!f(xs[i / 2], ys[i % 2], &r[i])) return std::nullopt;
        return std::make_pair(*std::min_element(r, r + 4), *std::max_element(r, r + 4));
    };
    if (n == "index.mul" || n == "index.scale")
        return corners([](int64_t x, int64_t y, int64_t* o) { return !__builtin_mul_overflow(x, y, o); });
    if (n == "index.madd") {
        const Range m = corners([](int64_t x, int64_t y, int64_t* o) { return !__builtin_mul_overflow(x, y, o); });
        const Range cc = arg(2);
        if (!m || !cc || __builtin_add_overflow(m->first, cc->first, &r[0]) || __builtin_add_overflow(m->second, cc->second, &r[1])) return std::nullopt;
        return std::make_pair(r[0], r[1]);
    }
    if (n == "index.min") return std::make_pair(std::min(alo, blo), std::min(ahi, bhi));
    if (n == "index.max") return std::make_pair(std::max(alo, blo), std::max(ahi, bhi));
    // Division by a positive constant is monotone; a remainder of a
    // non-negative range stays below the divisor.
    if (n == "index.div" && blo == bhi && blo > 0) return std::make_pair(alo / blo, ahi / blo);
    if (n == "index.rem" && blo == bhi && blo > 0 && alo >= 0) return ahi < blo ? std::make_pair(alo, ahi) : std::make_pair(int64_t{0}, blo - 1);
    return std::nullopt;
}

std::vector<Footprint> LoomProgram::footprints(const std::vector<uint8_t>& constants) const {
    const Op& root = *spec_.root;
    const Region& body = root.regions[gpu_ ? 1 : 0];
    std::vector<Footprint> out;
    const std::string who = "footprints(@" + spec_.symbol + ")";
    size_t skip = 0;
    if (!gpu_) {
        const Attr* sa = root.attr("spec_args");
        skip = sa ? static_cast<size_t>(sa->i) : 0;
    }
    const std::optional<LaunchConfig> launch = launch_from_constants(constants);
    const LaunchConfig* lc = launch ? &*launch : nullptr;
    const int ib = spec_.facts.index_bits == 0 ? 32 : spec_.facts.index_bits;
    FpCtx rootc;
    rootc.fn = &root;
    rootc.body = &body;
    {
        std::vector<const Op*> ignored;
        collect_defs(body, rootc.defs, ignored);
    }
    for (size_t k = skip; k < body.args.size(); ++k) {
        const Param& p = dparams_[k - skip];
        if (!p.is_buffer) continue;
        Footprint f;
        uint8_t access = 0;
        // One function's part of the walk (Note [Footprint ranges]): `bufs`
        // are the binding's buffer values in `c`'s function.
        std::function<void(const FpCtx&, std::set<ValueId>, int)> walk = [&](const FpCtx& c, std::set<ValueId> bufs, int depth) {
            std::vector<const Op*> all;
            {
                std::map<ValueId, Def> ignored;
                collect_defs(*c.body, ignored, all);
            }
            const auto& values = *c.fn->values;
            std::set<ValueId> views;
            if (!c.caller && p.is_view) {  // the parameter is itself a view from byte 0 of its binding
                f.used = true;
                views.insert(body.args[k]);
                const Type& t = values[static_cast<size_t>(body.args[k])].type;
                std::string needs;
                int64_t elems = 1;
                bool known = true;
                for (const Dim& d : t.dims) {
                    const std::optional<int64_t> e = d.is_dynamic() ? eval_value(d.value, &constants, &needs) : std::optional<int64_t>(d.extent);
                    if (!e) known = false;
                    else elems *= *e;
                }
                if (!known && !needs.empty())
                    fail(ErrorKind::Message, who + ": the extent of view parameter %" + p.name + " (" + t.spelling + ") needs the device scalar %" +
                                                 needs + ", which the constants do not hold");
                if (known) f.bytes = std::max(f.bytes, static_cast<uint64_t>(elems) * static_cast<uint64_t>(interp::elem_bytes(t.elem, ib)));
                else f.bounded = true;
                f.layout = t.spelling;
            }
            for (const Op* op : all) {
                if (op->name.rfind("buffer.assume.", 0) == 0) {
                    for (size_t q = 0; q < op->operands.size() && q < op->results.size(); ++q)
                        if (bufs.count(op->operands[q])) {
                            bufs.insert(op->results[q]);
                            if (op->name == "buffer.assume.alignment") {
                                const Attr* a = op->attr("minimum_alignment");
                                if (a) f.alignment = std::max<uint64_t>(f.alignment, static_cast<uint64_t>(a->i));
                            }
                        }
                } else if (op->name == "buffer.view" && !op->operands.empty() && bufs.count(op->operands[0])) {
                    f.used = true;
                    views.insert(op->results[0]);
                    const Type& t = op->result_types.empty() ? values[static_cast<size_t>(op->results[0])].type : op->result_types[0];
                    std::string needs;
                    Range off = std::make_pair(int64_t{0}, int64_t{0});
                    if (!op->indices.empty())
                        off = op->indices[0].is_value() ? range_of(&c, op->indices[0].value, constants, lc, &needs, 0)
                                                        : Range(std::make_pair(op->indices[0].constant, op->indices[0].constant));
                    bool known = off.has_value() && off->first >= 0;
                    std::vector<int64_t> extents;
                    for (const Dim& d : t.dims) {
                        if (!d.is_dynamic()) {
                            extents.push_back(d.extent);
                            continue;
                        }
                        const Range e = range_of(&c, d.value, constants, lc, &needs, 0);
                        if (!e) known = false;
                        else extents.push_back(std::max<int64_t>(e->second, 0));
                    }
                    int64_t elems = 1;
                    for (int64_t e : extents) elems *= e;
                    // A strided view spans 1 + sum((dim - 1) * stride) elements (Note [View layouts]).
                    if (known && t.layout_form != Type::Layout::Dense && elems > 0) {
                        std::optional<std::vector<int64_t>> st;
                        if (!c.caller) {
                            st = layout_strides(t, constants, needs);
                        } else if (t.layout_form == Type::Layout::Strided) {
                            st = t.layout_strides;
                        } else if (auto d = c.defs.find(t.layout_value); d != c.defs.end() && d->second.op->name == "encoding.layout.strided") {
                            // A callee's layout value: its strides evaluated in the call's context.
                            st.emplace();
                            for (const IndexEntry& e : d->second.op->indices) {
                                const Range r = e.is_value() ? range_of(&c, e.value, constants, lc, &needs, 0) : Range(std::make_pair(e.constant, e.constant));
                                if (!r || r->first != r->second) {
                                    st.reset();
                                    break;
                                }
                                st->push_back(r->first);
                            }
                        }
                        if (!st || st->size() != extents.size()) known = false;
                        else {
                            elems = 1;
                            for (size_t d = 0; d < extents.size(); ++d) elems += (extents[d] - 1) * (*st)[d];
                        }
                    }
                    if (!known) {
                        if (!needs.empty() && !c.caller)
                            fail(ErrorKind::Message, who + ": the extent of binding %" + p.name + " (" + t.spelling + ") needs the device scalar %" + needs +
                                                         ", which the constants do not hold");
                        f.bounded = true;
                        f.layout = t.spelling.empty() ? "view" : t.spelling;
                        continue;
                    }
                    const uint64_t bytes = static_cast<uint64_t>(off->second) + static_cast<uint64_t>(elems) * static_cast<uint64_t>(interp::elem_bytes(t.elem, ib));
                    f.bytes = std::max(f.bytes, bytes);
                    if (f.layout.empty()) f.layout = t.spelling;
                } else if (const Op* callee = call_target(spec_, *op); callee && op->name != "pipeline.stage" && op->name != "pipeline.reduce") {
                    std::set<ValueId> passed;
                    const Region* cb = has_body(callee) && !callee->regions.empty() ? &callee->regions[0] : nullptr;
                    for (size_t q = 0; q < op->operands.size(); ++q)
                        if (bufs.count(op->operands[q])) {
                            access |= 3;  // passed on: may do anything
                            f.used = true;
                            if (cb && q < cb->args.size()) passed.insert(cb->args[q]);
                            else f.bounded = true;
                        }
                    if (!passed.empty() && depth < kMaxNesting) {
                        FpCtx cc;
                        cc.fn = callee;
                        cc.body = cb;
                        cc.caller = &c;
                        cc.call = op;
                        std::vector<const Op*> ignored;
                        collect_defs(*cb, cc.defs, ignored);
                        walk(cc, passed, depth + 1);
                    } else if (!passed.empty()) {
                        f.bounded = true;
                    }
                }
            }
            // Subviews and refinements of those views reach the same bytes (ops are in
            // definition order, so one pass sees each parent before its children).
            for (const Op* op : all)
                if ((op->name == "view.subview" || op->name == "view.refine") && !op->operands.empty() && views.count(op->operands[0]))
                    views.insert(op->results[0]);
            for (const Op* op : all) {
                bool uses = false;
                for (ValueId v : op->operands)
                    if (views.count(v)) uses = true;
                if (!uses) continue;
                const std::string& n = op->name;
                if (n == "view.subview" || n == "view.refine") continue;
                if (n == "view.load" || n == "vector.load" || n == "view.atomic.load" || n == "pipeline.read" || n == "pipeline.scatter" || n == "vector.load.mask" ||
                    n == "vector.gather" || n == "vector.gather.mask") access |= 1;
                else if (n == "view.store" || n == "vector.store" || n == "vector.fragment.store" || n == "view.atomic.store" || n == "pipeline.write" || n == "vector.store.mask" ||
                         n == "vector.scatter" || n == "vector.scatter.mask") access |= 2;
                else if (n == "view.atomic.rmw" || n == "view.atomic.cmpxchg" || n == "view.atomic.reduce") access |= 3;
                else access |= 3;  // passed on (calls): may do anything
            }
        };
        walk(rootc, {body.args[k]}, 0);
        f.access = access == 2 ? Access::Write : access == 3 ? Access::ReadWrite : Access::Read;
        out.push_back(f);
    }
    return out;
}

void LoomProgram::bind_device_args(Exec& x, Exec::Frame& fr, const Region& body) const {
    const interp::Shared& sh = x.sh;
    size_t bi = 0;
    const size_t skip = body.args.size() - dparams_.size();
    for (size_t k = 0; k < dparams_.size(); ++k) {
        const Param& p = dparams_[k];
        Reg r;
        if (p.is_buffer) {
            const MemorySpan& s = (*sh.bindings)[bi++];
            BufObj b;
            b.base = s.data;
            b.size = s.size;
            b.address = s.address ? s.address : reinterpret_cast<uintptr_t>(s.data);
            b.kind = BufKind::Binding;
            b.coherent = s.coherent;
            b.name = "binding %" + p.name;
            r.kind = RK::Buf;
            r.buf = x.add_buffer(std::move(b));
            if (p.is_view) {  // its extents may name other parameters: made once all are bound
                r.kind = RK::View;
                r.elem = p.type;
                r.off = {0};
            }
        } else {
            r.kind = RK::Num;
            r.elem = p.type;
            uint64_t raw = 0;
            std::memcpy(&raw, sh.constants->data() + p.byte_offset, p.byte_length);
            if (scalar_is_float(p.type)) {
                double f = 0;
                if (p.type == ScalarKind::F32) f = std::bit_cast<float>(static_cast<uint32_t>(raw));
                else if (p.type == ScalarKind::F64) f = std::bit_cast<double>(raw);
                else if (p.type == ScalarKind::BF16) f = std::bit_cast<float>(static_cast<uint32_t>(raw) << 16);
                r.f = {f};
            } else {
                int64_t v = static_cast<int64_t>(raw);
                if (p.byte_length < 8 && p.type != ScalarKind::Offset) {
                    const int s = static_cast<int>(64 - 8 * p.byte_length);
                    v = static_cast<int64_t>(raw << s) >> s;
                }
                r.i = {interp::wrap_int(p.type, v)};
            }
        }
        fr.regs[static_cast<size_t>(body.args[skip + k])] = std::move(r);
    }
    for (size_t k = 0; k < dparams_.size(); ++k) {
        if (!dparams_[k].is_view) continue;
        const ValueId v = body.args[skip + k];
        Reg& r = fr.regs[static_cast<size_t>(v)];
        const Type& t = (*spec_.root->values)[static_cast<size_t>(v)].type;
        for (const Dim& d : t.dims) {
            const int64_t e = d.is_dynamic() ? fr.regs[static_cast<size_t>(d.value)].i.at(0) : d.extent;
            if (e < 0) fail(ErrorKind::Execution, "view parameter %" + dparams_[k].name + " (" + t.spelling + ") has a negative extent " + std::to_string(e));
            r.dims.push_back(e);
        }
    }
}

// Runs items over the pool and rethrows the failure of the lowest item.
template <class Fn>
void run_items(size_t items, bool parallel, const Fn& fn) {
    std::mutex mu;
    size_t bad = SIZE_MAX;
    std::exception_ptr err;
    auto one = [&](size_t it) {
        {
            std::lock_guard<std::mutex> g(mu);
            if (bad < it) return;
        }
        try {
            fn(it);
        } catch (...) {
            std::lock_guard<std::mutex> g(mu);
            if (it < bad) {
                bad = it;
                err = std::current_exception();
            }
        }
    };
    if (parallel && items > 1 && kernels::pool_threads() > 1) kernels::pool_run(items, one);
    else
        for (size_t it = 0; it < items; ++it) one(it);
    if (err) std::rethrow_exception(err);
}

void LoomProgram::run_gpu(const interp::Shared& sh) const {
    const LaunchConfig& lc = sh.launch;
    const int64_t W = lc.workgroup_size[0] * lc.workgroup_size[1] * lc.workgroup_size[2];
    const int64_t G = lc.workgroups[0] * lc.workgroups[1] * lc.workgroups[2];
    if (W <= 0 || G <= 0) return;
    const Op& root = *spec_.root;
    const Region& body = root.regions[1];
    auto batch = [&](int64_t first, int64_t lanes, bool one_wg) {
        Exec x(sh, lanes);
        x.set_gpu_batch(first, one_wg);
        Exec::Frame fr = x.frame_for(root);
        bind_device_args(x, fr, body);
        Mask all;
        x.run_region(body, fr, all);
    };
    if (folded_) {
        const int64_t total = W * G;
        // Whole workgroups per batch, so that coordinates stay lazy indices.
        const int64_t kFold = std::max<int64_t>(1, std::min(kFoldChunk / max_vlen_, scratch_lanes_) / W) * W;
        const int64_t chunks = (total + kFold - 1) / kFold;
        // A few items per thread, each running a range of chunks through one
        // interpreter whose registers keep their storage between chunks.
        const int64_t items = std::min<int64_t>(chunks, static_cast<int64_t>(std::max<size_t>(1, kernels::pool_threads())) * 4);
        run_items(static_cast<size_t>(items), true, [&](size_t it) {
            const int64_t c0 = static_cast<int64_t>(it) * chunks / items, c1 = static_cast<int64_t>(it + 1) * chunks / items;
            std::unique_ptr<Exec> x;
            Exec::Frame fr;
            size_t nbufs = 0;
            for (int64_t c = c0; c < c1; ++c) {
                const int64_t first = c * kFold;
                const int64_t lanes = std::min(kFold, total - first);
                if (!x || x->L != lanes) {
                    if (x) keep_storage(fr.regs);
                    x = std::make_unique<Exec>(sh, lanes);
                    fr = x->frame_for(root);
                    lend_storage(fr.regs);
                    bind_device_args(*x, fr, body);
                    nbufs = x->bufs.size();
                }
                x->bufs.resize(nbufs);
                x->release_scratch();
                x->set_gpu_batch(first, false);
                Mask all;
                x->run_region(body, fr, all);
            }
            keep_storage(fr.regs);
        });
    } else {
        run_items(static_cast<size_t>(G), !atomics_, [&](size_t g) { batch(static_cast<int64_t>(g) * W, W, true); });
    }
}

// --- NPU pipelines -----------------------------------------------------------

// A record stream: firing f (lane-major: a lane's records are consecutive)
// delivers record src_record(f) of a view, or slot f of a stage's arena.
struct Flow {
    const BufObj* src = nullptr;
    int64_t src_off = 0;          // byte offset of record 0 in src
    int64_t src_records = 0;
    bool broadcast = false;       // pipeline.read: every lane sees every record
    std::shared_ptr<std::vector<uint8_t>> arena;
    uint8_t* arena_base = nullptr;
    uint64_t stride = 0;          // arena bytes per firing
    int64_t record_bytes = 0;
    int64_t firings = 0;
    int64_t lanes = 1;
    bool direct = false;          // arena_base is the written view's own bytes
    const uint8_t* record(int64_t f) const {
        if (arena_base) return arena_base + static_cast<uint64_t>(f) * stride;
        const int64_t r = broadcast ? f % src_records : f;
        return src->base + src_off + r * record_bytes;
    }
};

// Note [Pipeline fold and reduce]
//   pipeline.fold<kind> combines each lane's R records elementwise, in record
//   order (r0 kind r1 kind ... ), each step rounded to the tile's element type
//   as a scalar op of that kind would be; the result flow has one record per
//   lane. pipeline.reduce gathers record r of every source lane into firing r
//   of its callee, whose buffers are: source flow 0's lanes 0..S-1, source
//   flow 1's lanes, ..., then the target flows' records (pointwise), then the
//   outputs. Firing r's target records are record r of each target flow, so
//   the target flows must deliver R records, R = records per source lane.
//   pipeline.buffer only sets a minimum capacity: the emulator runs each
//   stage over all its records at once, so any capacity >= 1 is met.

// One element of a fold: reads and writes one element of kind k at p as a
// double (floats) or int64 (integers, sign-extended), rounding as the type does.
double fold_read_f(ScalarKind k, const uint8_t* p) {
    switch (k) {
        case ScalarKind::F32: { float v; std::memcpy(&v, p, 4); return v; }
        case ScalarKind::F64: { double v; std::memcpy(&v, p, 8); return v; }
        case ScalarKind::BF16: { uint16_t v; std::memcpy(&v, p, 2); return std::bit_cast<float>(kernels::bf16_to_f32_bits(v)); }
        case ScalarKind::F16: { uint16_t v; std::memcpy(&v, p, 2); return kernels::ew::half_to_float(v); }
        default: return 0;
    }
}
void fold_write_f(ScalarKind k, uint8_t* p, double v) {
    switch (k) {
        case ScalarKind::F32: { const float f = static_cast<float>(v); std::memcpy(p, &f, 4); break; }
        case ScalarKind::F64: std::memcpy(p, &v, 8); break;
        case ScalarKind::BF16: {
            // Round to odd on the way to f32 keeps the one rounding to bf16 correct.
            const uint16_t h = kernels::f32_bits_to_bf16(std::bit_cast<uint32_t>(kernels::ew::round_to_odd_f32(v)));
            std::memcpy(p, &h, 2);
            break;
        }
        case ScalarKind::F16: {
            const uint16_t h = kernels::ew::float_to_half(kernels::ew::round_to_odd_f32(v));
            std::memcpy(p, &h, 2);
            break;
        }
        default: break;
    }
}
int64_t fold_read_i(ScalarKind k, const uint8_t* p, int es) {
    int64_t v = 0;
    std::memcpy(&v, p, static_cast<size_t>(es));
    if (es < 8) v = static_cast<int64_t>(static_cast<uint64_t>(v) << (64 - 8 * es)) >> (64 - 8 * es);
    return k == ScalarKind::I1 ? (v & 1) : v;
}

// acc = acc kind x for one element (Note [Pipeline fold and reduce]).
void fold_step(const std::string& kind, ScalarKind k, int es, uint8_t* acc, const uint8_t* x) {
    if (scalar_is_float(k)) {
        const double a = fold_read_f(k, acc), b = fold_read_f(k, x);
        double r = 0;
        if (kind == "addf") r = a + b;
        else if (kind == "mulf") r = a * b;
        else if (kind == "minimumf") r = fmath::minimum(a, b);
        else if (kind == "maximumf") r = fmath::maximum(a, b);
        else r = kind == "minnumf" ? fmath::minnum(a, b) : fmath::maxnum(a, b);
        fold_write_f(k, acc, r);
        return;
    }
    const int64_t a = fold_read_i(k, acc, es), b = fold_read_i(k, x, es);
    const uint64_t mask = es >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * es)) - 1;
    const uint64_t ua = static_cast<uint64_t>(a) & mask, ub = static_cast<uint64_t>(b) & mask;
    uint64_t r = 0;
    if (kind == "addi") r = ua + ub;
    else if (kind == "muli") r = ua * ub;
    else if (kind == "andi") r = ua & ub;
    else if (kind == "ori") r = ua | ub;
    else if (kind == "xori") r = ua ^ ub;
    else if (kind == "minsi") r = static_cast<uint64_t>(std::min(a, b));
    else if (kind == "maxsi") r = static_cast<uint64_t>(std::max(a, b));
    else if (kind == "minui") r = std::min(ua, ub);
    else r = std::max(ua, ub);  // maxui
    std::memcpy(acc, &r, static_cast<size_t>(es));
}

void LoomProgram::run_npu(const interp::Shared& sh) const {
    const Op& root = *spec_.root;
    const Region& body = root.regions[0];
    Exec g(sh, 1);
    Exec::Frame fr = g.frame_for(root);
    bind_device_args(g, fr, body);
    std::vector<Flow> flows;
    Mask all;
    const int ib = spec_.facts.index_bits == 0 ? 32 : spec_.facts.index_bits;
    auto reg = [&](ValueId v) -> Reg& { return fr.regs[static_cast<size_t>(v)]; };
    auto tile_of = [&](const Type& t, const Op& op) -> std::pair<std::vector<int64_t>, ScalarKind> {
        const Type* tile = t.kind == TypeKind::Flow && t.inner ? t.inner.get() : &t;
        std::vector<int64_t> dims;
        for (const Dim& d : tile->dims) {
            if (d.is_dynamic()) g.fail_at(op, -1, "a tile with a dynamic extent is not executed by the emulator");
            dims.push_back(d.extent);
        }
        return {dims, tile->elem};
    };
    // Records of a view whose trailing dims are the tile's.
    auto records_of = [&](const Op& op, const Reg& view, const std::vector<int64_t>& tile) -> int64_t {
        if (tile.size() > view.dims.size() || !std::equal(tile.begin(), tile.end(), view.dims.end() - static_cast<std::ptrdiff_t>(tile.size())))
            g.fail_at(op, -1, "the tile's shape is not a trailing suffix of the view's shape");
        int64_t r = 1;
        for (size_t d = 0; d + tile.size() < view.dims.size(); ++d) r *= view.dims[d];
        return r;
    };
    // A stage output whose only use is a pipeline.write to a view already
    // made, record for record, 64-byte aligned tiles packed back to back,
    // inside its binding: the stage's output tiles can be the view's own
    // bytes (no arena to clear and copy). Null otherwise.
    auto direct_destination = [&](ValueId flow, const Flow& f, const std::vector<const Flow*>& inputs) -> uint8_t* {
        const Op* writer = nullptr;
        int uses = 0;
        std::function<void(const Region&)> count_uses = [&](const Region& r) {
            for (const Op& o : r.ops) {
                for (ValueId v : o.operands)
                    if (v == flow) {
                        ++uses;
                        if (o.name == "pipeline.write" && o.operands.size() == 2 && o.operands[0] == flow) writer = &o;
                    }
                for (const Region& sub : o.regions) count_uses(sub);
            }
        };
        count_uses(body);
        if (uses != 1 || !writer || f.record_bytes % static_cast<int64_t>(kTileAlign)) return nullptr;
        const Reg& view = reg(writer->operands[1]);
        if (view.kind != RK::View || view.off.size() != 1 || view.buf < 0) return nullptr;
        const BufObj& dst = g.bufs[static_cast<size_t>(view.buf)];
        int64_t recs = 1, elems = 1;
        for (int64_t d : view.dims) elems *= d;
        const int es = interp::elem_bytes(view.elem, ib);
        if (es <= 0 || (elems * es) % f.record_bytes) return nullptr;
        recs = elems * es / f.record_bytes;
        const int64_t off = view.off[0];
        if (recs != f.firings || off < 0 || static_cast<uint64_t>(off + recs * f.record_bytes) > dst.size) return nullptr;
        uint8_t* p = dst.base + off;
        if (reinterpret_cast<uintptr_t>(p) % kTileAlign) return nullptr;
        // Later batches still read their inputs: the outputs must not overlap them.
        const uint8_t* end = p + recs * f.record_bytes;
        for (const Flow* in : inputs) {
            const uint8_t* lo = in->arena_base ? in->arena_base : in->src->base + in->src_off;
            const uint8_t* hi = lo + (in->arena_base ? static_cast<int64_t>(in->stride) * in->firings : in->src_records * in->record_bytes);
            if (lo < end && p < hi) return nullptr;
        }
        return p;
    };
    for (const Op& op : body.ops) {
        const std::string& n = op.name;
        if (n == "pipeline.return") break;
        if (n == "group.create") {
            Reg r;
            r.kind = RK::Group;
            r.group = reg(op.operands.at(0)).i.at(0);
            if (r.group <= 0) g.fail_at(op, -1, "a group needs at least one lane, got " + std::to_string(r.group));
            reg(op.results.at(0)) = std::move(r);
        } else if (n == "pipeline.read" || n == "pipeline.scatter") {
            const Reg& view = reg(op.operands.at(0));
            if (!view.strides.empty()) g.fail_at(op, -1, "a pipeline over a strided view is not executed by the emulator (records are moved dense)");
            const Reg& grp = reg(op.operands.at(1));
            const auto [tile, elem] = tile_of(op.result_types.empty() ? (*root.values)[static_cast<size_t>(op.results[0])].type : op.result_types[0], op);
            Flow f;
            f.src = &g.bufs[static_cast<size_t>(view.buf)];
            f.src_off = view.off.at(0);
            f.src_records = records_of(op, view, tile);
            int64_t tb = interp::elem_bytes(elem, ib);
            for (int64_t e : tile) tb *= e;
            f.record_bytes = tb;
            f.lanes = grp.group;
            f.broadcast = n == "pipeline.read";
            if (f.broadcast) f.firings = f.src_records * f.lanes;
            else {
                if (f.src_records % f.lanes) g.fail_at(op, -1, std::to_string(f.src_records) + " records do not split evenly across " + std::to_string(f.lanes) + " lanes");
                f.firings = f.src_records;
            }
            if (f.src_off < 0 || static_cast<uint64_t>(f.src_off + f.src_records * tb) > f.src->size)
                g.fail_at(op, -1, "the view's " + std::to_string(f.src_records * tb) + " bytes at offset " + std::to_string(f.src_off) + " exceed " + f.src->name + " of " + std::to_string(f.src->size) + " bytes");
            Reg r;
            r.kind = RK::Flow;
            r.flow = static_cast<int>(flows.size());
            flows.push_back(std::move(f));
            reg(op.results.at(0)) = std::move(r);
        } else if (n == "pipeline.buffer") {
            const int64_t cap = reg(op.operands.at(1)).i.at(0);
            if (cap < 1) g.fail_at(op, -1, "pipeline.buffer needs a capacity of at least one record, got " + std::to_string(cap));
            reg(op.results.at(0)) = reg(op.operands.at(0));  // Note [Pipeline fold and reduce]
        } else if (n == "pipeline.fold") {
            const Flow src = flows.at(static_cast<size_t>(reg(op.operands.at(0)).flow));
            const Type& ft = op.operand_types.empty() ? (*root.values)[static_cast<size_t>(op.operands[0])].type : op.operand_types[0];
            const auto [tile, elem] = tile_of(ft, op);
            const std::string kind = op.params.empty() ? "" : op.params[0];
            const int es = interp::elem_bytes(elem, ib);
            if (src.firings % src.lanes) g.fail_at(op, -1, std::to_string(src.firings) + " records do not split evenly across " + std::to_string(src.lanes) + " lanes");
            const int64_t R = src.firings / src.lanes;
            if (R < 1) g.fail_at(op, -1, "pipeline.fold of a flow with no records");
            Flow f;
            f.record_bytes = src.record_bytes;
            f.stride = (static_cast<uint64_t>(f.record_bytes) + kTileAlign - 1) / kTileAlign * kTileAlign;
            f.firings = src.lanes;
            f.lanes = src.lanes;
            f.arena = std::make_shared<std::vector<uint8_t>>(f.stride * static_cast<uint64_t>(f.firings) + kTileAlign);
            const uintptr_t p = reinterpret_cast<uintptr_t>(f.arena->data());
            f.arena_base = reinterpret_cast<uint8_t*>((p + kTileAlign - 1) / kTileAlign * kTileAlign);
            for (int64_t l = 0; l < src.lanes; ++l) {
                uint8_t* acc = f.arena_base + static_cast<uint64_t>(l) * f.stride;
                std::memcpy(acc, src.record(l * R), static_cast<size_t>(f.record_bytes));
                for (int64_t r = 1; r < R; ++r) {
                    const uint8_t* x = src.record(l * R + r);
                    for (int64_t e = 0; e < f.record_bytes; e += es) fold_step(kind, elem, es, acc + e, x + e);
                }
            }
            Reg r;
            r.kind = RK::Flow;
            r.flow = static_cast<int>(flows.size());
            flows.push_back(std::move(f));
            reg(op.results.at(0)) = std::move(r);
        } else if (n == "pipeline.stage" || n == "pipeline.reduce") {
            const Op* fn = spec_.module->find(op.callee);
            const bool reduce = n == "pipeline.reduce";
            const Attr* sca = op.attr("source_count");
            const size_t nsrc = reduce && sca ? static_cast<size_t>(sca->i) : 0;
            const size_t group_at = reduce ? nsrc + 1 : 0;  // the group that runs the firings
            const int64_t lanes = reg(op.operands.at(group_at)).group;
            // The callee's input flows, as indices into `flows`: a reduce's
            // gathered per-lane source flows first (Note [Pipeline fold and reduce]).
            std::vector<size_t> in_ids;
            int64_t gathered_records = -1;
            if (reduce) {
                const int64_t S = reg(op.operands.at(0)).group;
                for (size_t j = 0; j < nsrc; ++j) {
                    const Flow src = flows.at(static_cast<size_t>(reg(op.operands[1 + j]).flow));
                    if (src.lanes != S || src.firings % S)
                        g.fail_at(op, -1, "source flow " + std::to_string(j) + " does not deliver whole records to each of the source group's " + std::to_string(S) + " lanes");
                    const int64_t R = src.firings / S;
                    if (gathered_records >= 0 && R != gathered_records)
                        g.fail_at(op, -1, "source flows deliver different record counts per lane (" + std::to_string(gathered_records) + " and " + std::to_string(R) + ")");
                    gathered_records = R;
                    for (int64_t l = 0; l < S; ++l) {
                        Flow f;
                        f.record_bytes = src.record_bytes;
                        f.stride = (static_cast<uint64_t>(f.record_bytes) + kTileAlign - 1) / kTileAlign * kTileAlign;
                        f.firings = R;
                        f.lanes = lanes;
                        f.arena = std::make_shared<std::vector<uint8_t>>(f.stride * static_cast<uint64_t>(R) + kTileAlign);
                        const uintptr_t p = reinterpret_cast<uintptr_t>(f.arena->data());
                        f.arena_base = reinterpret_cast<uint8_t*>((p + kTileAlign - 1) / kTileAlign * kTileAlign);
                        for (int64_t r = 0; r < R; ++r)
                            std::memcpy(f.arena_base + static_cast<uint64_t>(r) * f.stride, src.record(l * R + r), static_cast<size_t>(f.record_bytes));
                        in_ids.push_back(flows.size());
                        flows.push_back(std::move(f));
                    }
                }
            }
            for (size_t k = group_at + 1; k < op.operands.size(); ++k) in_ids.push_back(static_cast<size_t>(reg(op.operands[k]).flow));
            flows.reserve(flows.size() + op.results.size());  // `ins` stays valid while outputs are added
            std::vector<const Flow*> ins;
            for (size_t id : in_ids) ins.push_back(&flows.at(id));
            const int64_t F = gathered_records >= 0 ? gathered_records : ins.empty() ? lanes : ins[0]->firings;
            for (const Flow* f : ins)
                if (f->firings != F) g.fail_at(op, -1, "input flows deliver different record counts (" + std::to_string(F) + " and " + std::to_string(f->firings) + ")");
            if (fn->regions[0].args.size() != ins.size() + op.results.size())
                g.fail_at(op, -1, "@" + op.callee + " takes " + std::to_string(fn->regions[0].args.size()) + " buffers, the " + (reduce ? "reduce" : "stage") + " passes " + std::to_string(ins.size() + op.results.size()));
            std::vector<Flow*> outs;
            const size_t first_out = flows.size();
            for (size_t k = 0; k < op.results.size(); ++k) {
                const auto [tile, elem] = tile_of(op.result_types.at(k), op);
                Flow f;
                int64_t tb = interp::elem_bytes(elem, ib);
                for (int64_t e : tile) tb *= e;
                f.record_bytes = tb;
                f.stride = (static_cast<uint64_t>(tb) + kTileAlign - 1) / kTileAlign * kTileAlign;
                f.firings = F;
                f.lanes = lanes;
                if (uint8_t* dst = direct_destination(op.results[k], f, ins)) {
                    f.arena_base = dst;  // the stage writes the records in place
                    f.stride = static_cast<uint64_t>(tb);
                    f.direct = true;
                } else {
                    f.arena = std::make_shared<std::vector<uint8_t>>(f.stride * static_cast<uint64_t>(F) + kTileAlign, interp::kUninitByte);
                    const uintptr_t p = reinterpret_cast<uintptr_t>(f.arena->data());
                    f.arena_base = reinterpret_cast<uint8_t*>((p + kTileAlign - 1) / kTileAlign * kTileAlign);
                }
                flows.push_back(std::move(f));
            }
            for (size_t k = 0; k < op.results.size(); ++k) outs.push_back(&flows[first_out + k]);
            for (size_t k = 0; k < in_ids.size(); ++k) ins[k] = &flows.at(in_ids[k]);
            // Registers hold a whole tile per lane (as doubles): about 64 KiB
            // of tiles per batch keeps them in L2 and below malloc's mmap
            // threshold (fresh pages per batch cost more than the ops; the
            // bfp16 gemm at 16,384 measured min 3.4 ms at 256 firings per
            // batch, 4.3-6.8 ms at 2,048).
            int64_t tile_bytes = 1;
            for (const Flow* f : ins) tile_bytes = std::max(tile_bytes, f->record_bytes);
            for (const Flow* f : outs) tile_bytes = std::max(tile_bytes, f->record_bytes);
            const int64_t kFiringChunk = std::min(std::clamp<int64_t>((int64_t{1} << 16) / tile_bytes, 16, kMaxFiringChunk), scratch_lanes_);
            const int64_t chunks = (F + kFiringChunk - 1) / kFiringChunk;
            const int64_t items = std::min<int64_t>(chunks, static_cast<int64_t>(std::max<size_t>(1, kernels::pool_threads())));
            const Region& callee = fn->regions[0];
            // Each item runs a range of chunks through one interpreter and one
            // frame, whose registers and tile buffers keep their storage.
            run_items(static_cast<size_t>(items), true, [&](size_t it) {
                const int64_t c0 = static_cast<int64_t>(it) * chunks / items, c1 = static_cast<int64_t>(it + 1) * chunks / items;
                std::unique_ptr<Exec> x;
                Exec::Frame fr;
                std::vector<std::vector<uint8_t>> tiles(ins.size());
                std::vector<std::vector<uint8_t>> saved(outs.size());
                for (int64_t c = c0; c < c1; ++c) {
                    const int64_t first = c * kFiringChunk;
                    const int64_t nf = std::min(kFiringChunk, F - first);
                    if (!x || x->L != nf) {
                        x = std::make_unique<Exec>(sh, nf);
                        fr = x->frame_for(*fn);
                    }
                    x->bufs.clear();
                    x->release_scratch();
                    x->set_npu_batch(first);
                    size_t arg = 0;
                    auto bind = [&](BufObj b) {
                        Reg& r = fr.regs[static_cast<size_t>(callee.args[arg++])];
                        r = Reg{};
                        r.kind = RK::Buf;
                        r.buf = x->add_buffer(std::move(b));
                    };
                    for (size_t i = 0; i < ins.size(); ++i) {
                        const Flow* f = ins[i];
                        const uint64_t stride = (static_cast<uint64_t>(f->record_bytes) + kTileAlign - 1) / kTileAlign * kTileAlign;
                        tiles[i].resize(stride * static_cast<uint64_t>(nf) + kTileAlign);
                        const uintptr_t p = reinterpret_cast<uintptr_t>(tiles[i].data());
                        uint8_t* base = reinterpret_cast<uint8_t*>((p + kTileAlign - 1) / kTileAlign * kTileAlign);
                        for (int64_t q = 0; q < nf; ++q)
                            std::memcpy(base + static_cast<uint64_t>(q) * stride, f->record(first + q), static_cast<size_t>(f->record_bytes));
                        BufObj b;
                        b.base = base;
                        b.size = static_cast<uint64_t>(f->record_bytes);
                        b.stride = stride;
                        b.address = reinterpret_cast<uintptr_t>(base);
                        b.kind = BufKind::Tile;
                        b.name = "input tile " + std::to_string(i);
                        bind(std::move(b));
                    }
                    for (size_t i = 0; i < outs.size(); ++i) {
                        const Flow* f = outs[i];
                        BufObj b;
                        b.base = f->arena_base + static_cast<uint64_t>(first) * f->stride;
                        b.size = static_cast<uint64_t>(f->record_bytes);
                        b.stride = f->stride;
                        b.address = reinterpret_cast<uintptr_t>(b.base);
                        b.kind = BufKind::Tile;
                        b.name = "output tile " + std::to_string(i);
                        if (sh.options.checked) b.init.assign(b.stride * static_cast<uint64_t>(nf), 0);
                        bind(std::move(b));
                    }
                    // Output tiles written in place start as Note [Uninitialised
                    // device memory] says, as an arena's do; a failed batch puts
                    // back what its records' bytes held (bad input changes nothing).
                    for (size_t i = 0; i < outs.size(); ++i) {
                        if (!outs[i]->direct) continue;
                        uint8_t* p = outs[i]->arena_base + static_cast<uint64_t>(first) * outs[i]->stride;
                        saved[i].assign(p, p + static_cast<uint64_t>(nf) * outs[i]->stride);
                        std::memset(p, interp::kUninitByte, saved[i].size());
                    }
                    Mask m;
                    try {
                        x->run_region(callee, fr, m);
                    } catch (...) {
                        for (size_t i = 0; i < outs.size(); ++i)
                            if (outs[i]->direct)
                                std::memcpy(outs[i]->arena_base + static_cast<uint64_t>(first) * outs[i]->stride, saved[i].data(), saved[i].size());
                        throw;
                    }
                }
            });
            for (size_t k = 0; k < op.results.size(); ++k) {
                Reg r;
                r.kind = RK::Flow;
                r.flow = static_cast<int>(first_out + k);
                reg(op.results[k]) = std::move(r);
            }
        } else if (n == "pipeline.write") {
            const Flow& f = flows.at(static_cast<size_t>(reg(op.operands.at(0)).flow));
            const Reg& view = reg(op.operands.at(1));
            if (!view.strides.empty()) g.fail_at(op, -1, "a pipeline over a strided view is not executed by the emulator (records are moved dense)");
            const Type& ft = op.operand_types.empty() ? (*root.values)[static_cast<size_t>(op.operands[0])].type : op.operand_types[0];
            const auto [tile, elem] = tile_of(ft, op);
            const int64_t recs = records_of(op, view, tile);
            if (recs != f.firings) g.fail_at(op, -1, "the flow delivers " + std::to_string(f.firings) + " records, the view holds " + std::to_string(recs));
            const BufObj& dst = g.bufs[static_cast<size_t>(view.buf)];
            const int64_t off = view.off.at(0);
            if (off < 0 || static_cast<uint64_t>(off + recs * f.record_bytes) > dst.size)
                g.fail_at(op, -1, "the view's " + std::to_string(recs * f.record_bytes) + " bytes at offset " + std::to_string(off) + " exceed " + dst.name + " of " + std::to_string(dst.size) + " bytes");
            if (!f.direct || f.arena_base != dst.base + off)
                for (int64_t r = 0; r < recs; ++r) std::memcpy(dst.base + off + r * f.record_bytes, f.record(r), static_cast<size_t>(f.record_bytes));
        } else {
            g.exec_op(op, fr, all);
        }
    }
}

void LoomProgram::run(const std::vector<MemorySpan>& bindings, const std::vector<uint8_t>& constants, const LaunchConfig& launch,
                      const ExecOptions& options) const {
    // Named on failure only (every run passes here).
    const auto who = [&] { return "run(@" + spec_.symbol + ")"; };
    size_t nbuf = 0;
    for (const Param& p : dparams_)
        if (p.is_buffer) ++nbuf;
    if (bindings.size() != nbuf)
        fail(ErrorKind::Message, who() + ": takes " + std::to_string(nbuf) + " buffer binding(s), got " + std::to_string(bindings.size()));
    if (constants.size() < const_len_)
        fail(ErrorKind::Message, who() + ": the constant block holds " + std::to_string(constants.size()) + " bytes, the device signature needs " + std::to_string(const_len_));
    interp::Shared sh;
    sh.spec = &spec_;
    sh.options = options;
    sh.gpu = gpu_;
    sh.launch = launch;
    sh.bindings = &bindings;
    sh.constants = &constants;
    sh.device_params = &dparams_;
    if (gpu_) {
        const std::string bad = launch_geometry_problem(launch.workgroups, launch.workgroup_size);
        if (!bad.empty()) {
            const Op* cfg = nullptr;
            for (const Op& op : spec_.root->regions[0].ops)
                if (op.name == "kernel.launch.config") cfg = &op;
            fail(ErrorKind::Execution, who() + ": " + (cfg ? loc_of(*cfg) + ": kernel.launch.config: " : std::string()) + bad);
        }
        const uint64_t entry = native_entry_.load(std::memory_order_acquire);
        const int64_t items = launch.workgroup_size[0] * launch.workgroup_size[1] * launch.workgroup_size[2];
        if (entry && !options.checked && !options.interpret && (native_.max_items == 0 || items <= native_.max_items))
            run_native(bindings, constants, launch, entry);
        else run_gpu(sh);
    } else {
        run_npu(sh);
    }
}

// Whole workgroups per pool item, through the compiled entry (Note [Native
// Loom executor]); the failure of the lowest workgroup range is reported.
void LoomProgram::run_native(const std::vector<MemorySpan>& bindings, const std::vector<uint8_t>& constants, const LaunchConfig& launch,
                             uint64_t entry) const {
    const int64_t W = launch.workgroup_size[0] * launch.workgroup_size[1] * launch.workgroup_size[2];
    const int64_t G = launch.workgroups[0] * launch.workgroups[1] * launch.workgroups[2];
    if (W <= 0 || G <= 0) return;
    // Fixed storage for the usual few bindings: a short launch's allocations show.
    constexpr size_t kFew = 8;
    uint8_t* bases_small[kFew];
    uint64_t sizes_small[kFew];
    std::vector<uint8_t*> bases_many(bindings.size() > kFew ? bindings.size() : 0);
    std::vector<uint64_t> sizes_many(bases_many.size());
    uint8_t** bases = bindings.size() > kFew ? bases_many.data() : bases_small;
    uint64_t* sizes = bindings.size() > kFew ? sizes_many.data() : sizes_small;
    for (size_t k = 0; k < bindings.size(); ++k) {
        bases[k] = bindings[k].data;
        sizes[k] = bindings[k].size;
    }
    native::Ctx c;
    c.bases = bases;
    c.sizes = sizes;
    c.constants = constants.data();
    for (size_t d = 0; d < 3; ++d) {
        c.workgroups[d] = launch.workgroups[d];
        c.workgroup_size[d] = launch.workgroup_size[d];
    }
    using Entry = int32_t (*)(const native::Ctx*, native::ErrorRecord*, uint8_t*, int64_t, int64_t);
    const Entry fn = reinterpret_cast<Entry>(static_cast<uintptr_t>(entry));
    // Enough items to balance the pool, each a few thousand work-items at
    // least. A probe runs alone first (Note [Small native launches]), so it is
    // kept a small share of the work: as the first of 4 items per thread it was
    // an eighth on two threads, and a 16 M Loom add ran at 0.8x hx.add's bandwidth.
    const int64_t threads = static_cast<int64_t>(std::max<size_t>(1, kernels::pool_threads()));
    const int64_t items = std::max<int64_t>(1, std::min<int64_t>(G, std::min<int64_t>(threads * 16, (G * W + 4095) / 4096)));
    // Workgroups [g0, g1) through the entry; `e` is the caller's record for them.
    auto run_range = [&](int64_t g0, int64_t g1, native::ErrorRecord& e) {
        // Workgroup memory and per-chunk values (codegen.h), 64-byte aligned. The
        // code writes scratch before reading it, so each thread keeps one buffer for
        // every call: a fresh allocation of this size is fresh pages, which the
        // kernel zeroes on first touch, every run (most of a short kernel's time).
        constexpr uint64_t kKeptScratch = uint64_t{64} << 20;
        thread_local std::unique_ptr<uint8_t[]> kept;
        thread_local uint64_t kept_bytes = 0;
        std::unique_ptr<uint8_t[]> once;
        uint8_t* raw = nullptr;
        if (native_.scratch_bytes > kKeptScratch) {
            once.reset(new uint8_t[native_.scratch_bytes + 64]);
            raw = once.get();
        } else if (native_.scratch_bytes) {
            if (kept_bytes < native_.scratch_bytes) {
                kept.reset(new uint8_t[native_.scratch_bytes + 64]);
                kept_bytes = native_.scratch_bytes;
            }
            raw = kept.get();
        }
        uint8_t* s = raw ? reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw) + 63) / 64 * 64) : nullptr;
        if (fn(&c, &e, s, g0, g1 - g0) != 0) native_failure(e, launch, bindings);
    };
    native::ErrorRecord e0;
    if (items == 1 || kernels::pool_threads() <= 1) return run_range(0, G, e0);
    // The probe: a small first range (a 64th of a thread's share at most), so that
    // the pool idles little while it runs alone; then `items` ranges of the rest.
    const int64_t probe = std::max<int64_t>(1, std::min<int64_t>(G / items, G / (threads * 64)));
    auto first_of = [&](int64_t it) { return it == 0 ? 0 : probe + (it - 1) * (G - probe) / items; };
    // Note [Small native launches]
    // ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    // Waking the pool's threads costs microseconds on an idle host and up to a
    // scheduler time slice (~1 ms) on a busy one, so a native launch whose work
    // is a few microseconds (an elementwise kernel over 65,536 elements) lost
    // most of its time there: hx.add stays on the calling thread below 2^20
    // elements. Work per work-item differs too much between kernels for a
    // fixed threshold, so a first range runs here and is timed; when the rest
    // would take under kSerialNs at its pace, it follows here, as one call of
    // the entry (a call per item cost a short launch a tenth of its time).
    // The failure of the lowest workgroup range is reported either way: the
    // probe's stops the launch, and the rest run in order or through run_items.
    constexpr int64_t kSerialNs = 100'000;
    const auto t0 = std::chrono::steady_clock::now();
    run_range(0, first_of(1), e0);
    const int64_t dt = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    if (dt * (G - probe) < kSerialNs * probe) return run_range(probe, G, e0);
    std::vector<native::ErrorRecord> errs(static_cast<size_t>(items));
    run_items(static_cast<size_t>(items), true, [&](size_t it) {
        const int64_t k = static_cast<int64_t>(it) + 1;
        run_range(first_of(k), first_of(k + 1), errs[it]);
    });
}

// The interpreter's ExecutionError text (Exec::fail_at, Exec::where) for a
// native failure record.
void LoomProgram::native_failure(const native::ErrorRecord& e, const LaunchConfig& launch, const std::vector<MemorySpan>& bindings) const {
    const Op* op = e.op >= 0 && static_cast<size_t>(e.op) < native_.ops.size() ? native_.ops[static_cast<size_t>(e.op)] : nullptr;
    if (!op) fail(ErrorKind::Execution, "run(@" + spec_.symbol + "): native code reported an unknown failure");
    std::string msg;
    switch (e.kind) {
        case native::kIndexOutOfBounds:
            msg = "index " + std::to_string(e.a) + " out of bounds for axis " + std::to_string(e.b) + " of extent " + std::to_string(e.c);
            break;
        case native::kFootprintOutOfBounds:
            msg = "footprint [" + std::to_string(e.a) + ", " + std::to_string(e.a + e.d) + ") out of bounds for axis " + std::to_string(e.b) +
                  " of extent " + std::to_string(e.c);
            break;
        case native::kBytesOutside: {
            std::string name;
            int64_t k = 0;
            for (const Param& p : dparams_)
                if (p.is_buffer && k++ == e.c) name = "binding %" + p.name;
            uint64_t size = static_cast<size_t>(e.c) < bindings.size() ? bindings[static_cast<size_t>(e.c)].size : 0;
            const size_t wg = static_cast<size_t>(e.c) - bindings.size();
            if (static_cast<size_t>(e.c) >= bindings.size() && wg < native_.buffer_names.size()) {
                // A workgroup alloca: its size is in the code; the name says where it is.
                name = native_.buffer_names[wg];
                size = static_cast<uint64_t>(e.d);
            }
            msg = "bytes [" + std::to_string(e.a) + ", " + std::to_string(e.b) + ") outside " + name + " of " + std::to_string(size) + " bytes";
            break;
        }
        case native::kDivisionByZero: msg = "division by zero"; break;
        case native::kIndexDivNegative: msg = "index div/rem needs a non-negative dividend and a positive divisor"; break;
        case native::kLoopStep: msg = e.item < 0 ? "loop step must be positive, got " + std::to_string(e.a) : "loop step must be positive"; break;
        case native::kNegativeExtent: msg = "negative view extent " + std::to_string(e.a); break;
        default: msg = "native code reported failure kind " + std::to_string(e.kind); break;
    }
    std::string s = loc_of(*op) + ": " + op->name + ": " + msg;
    if (e.item >= 0) {
        auto tri = [](int64_t v, const std::array<int64_t, 3>& d) {
            return "(" + std::to_string(v % d[0]) + ", " + std::to_string(v / d[0] % d[1]) + ", " + std::to_string(v / (d[0] * d[1])) + ")";
        };
        s += " (workgroup " + tri(e.wg, launch.workgroups) + ", work-item " + tri(e.item, launch.workgroup_size) + ")";
    }
    fail(ErrorKind::Execution, s);
}

}  // namespace

std::string launch_geometry_problem(const std::array<int64_t, 3>& workgroups, const std::array<int64_t, 3>& workgroup_size) {
    auto triple = [](const std::array<int64_t, 3>& a) {
        return "(" + std::to_string(a[0]) + ", " + std::to_string(a[1]) + ", " + std::to_string(a[2]) + ")";
    };
    // Built on failure only: a launch checks its geometry on every run.
    const auto shape = [&] { return "workgroups " + triple(workgroups) + " of workgroup_size " + triple(workgroup_size); };
    int64_t total = 1;
    for (size_t d = 0; d < 3; ++d) {
        if (workgroup_size[d] <= 0) return "workgroup_size must be nonzero in every dimension, got " + triple(workgroup_size);
        if (workgroups[d] < 0) return "negative workgroup count in " + triple(workgroups);
        int64_t items = 0;
        if (__builtin_mul_overflow(workgroups[d], workgroup_size[d], &items) || items > kMaxGridDimItems)
            return shape() + ": more than " + std::to_string(kMaxGridDimItems) + " work-items along axis " + "xyz"[d] +
                   " (HSA's 32-bit grid size)";
        if (__builtin_mul_overflow(total, items, &total))
            return shape() + ": the work-item count overflows a 64-bit integer";
    }
    return {};
}

bool op_executed(const std::string& name) {
    // Definitions and regions the planner and executors walk themselves.
    static const std::set<std::string> structural = {"kernel.def", "kernel.decl", "func.def", "func.decl", "func.template",
                                                     "template.decl", "template.def", "pipeline.def", "config.decl",
                                                     "config.def", "amdgpu.target", "aie2p.target", "target.generic",
                                                     "target.decl", "kernel.launch.config", "func.apply"};
    // Module-level declarations the catalogue accepts and ignores (no refusal
    // code: global and metadata declarations, Note [Module-level catalogue ops]).
    const OpEntry* e = catalogue_find(name);
    const bool ignored = e && e->refusal.empty();
    return interp::is_terminator(name) || interp::op_supported(name) || pipeline_only_op(name) || structural.count(name) ||
           ignored;
}

std::shared_ptr<const Program> Program::plan(const Specialized& spec) {
    if (!spec.root) fail(ErrorKind::Message, "Program::plan: the specialisation has no root");
    return std::make_shared<LoomProgram>(spec);
}

}  // namespace hrx::loom
