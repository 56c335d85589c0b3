// The Loom verifier: counts, types and shapes of operands and results,
// region terminators, symbol references and predicate arity (reference
// loom.md §6.2). The parser already enforced scoping (PARSE/001/002/022), so
// every value used here dominates its use. Values the parser could not
// resolve (kNoValue) are skipped rather than reported twice.
#include <algorithm>
#include <unordered_map>

#include "loom/internal.h"

namespace hrx::loom {
namespace {

// -1 for names the parser already reported (PARSE/013).
int pred_arity(const std::string& n) {
    if (n == "range") return 3;
    if (n == "pow2" || n == "not_nan" || n == "not_inf" || n == "finite") return 1;
    if (n == "mul" || n == "eq" || n == "ne" || n == "lt" || n == "le" || n == "gt" || n == "ge" || n == "min" ||
        n == "max")
        return 2;
    return -1;
}

bool is_i1(const Type& t) { return t.kind == TypeKind::Scalar && t.elem == ScalarKind::I1; }
bool is_index(const Type& t) { return t.kind == TypeKind::Scalar && t.elem == ScalarKind::Index; }
bool is_address(const Type& t) { return t.kind == TypeKind::Scalar && scalar_is_address(t.elem); }
bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

class Verifier {
public:
    Verifier(const Module& m, Diags& d) : m_(m), d_(d) {}

    void run() {
        for (const Op& op : m_.ops) {
            vals_ = op.values.get();
            top(op);
        }
    }

private:
    const Module& m_;
    Diags& d_;
    const std::vector<Op::ValueInfo>* vals_ = nullptr;

    const Type* type_of(ValueId v) const {
        if (v == kNoValue || !vals_ || v >= static_cast<ValueId>(vals_->size())) return nullptr;
        return &(*vals_)[v].type;
    }
    std::string vname(ValueId v) const {
        return v == kNoValue || !vals_ ? std::string("%?") : "%" + (*vals_)[v].name;
    }
    void err(const char* code, std::string msg, Location loc) { d_.error(code, std::move(msg), loc); }

    const Op* symbol(const std::string& name) const { return m_.find(name); }

    void preds(const std::vector<Predicate>& ps) {
        for (const Predicate& p : ps) {
            int want = pred_arity(p.name);
            if (want >= 0 && static_cast<int>(p.args.size()) != want)
                err("STRUCTURE/021",
                    "predicate '" + p.name + "' takes " + std::to_string(want) + " argument(s), got " +
                        std::to_string(p.args.size()),
                    p.loc);
        }
    }

    void target_ref(const Op& op) {
        const Attr* t = op.attr("target");
        if (!t || t->kind != Attr::Kind::Symbol) return;
        const Op* s = symbol(t->s);
        if (!s || symbol_kind(s->name) != std::string("target"))
            err("SYMBOL/001", "'" + op.name + " @" + op.symbol + "' names target '@" + t->s + "', which is not a target in the module", t->loc.line ? t->loc : op.loc);
    }

    // The region must end in `term` (when given); no terminator may appear
    // before the end. `yields` (when given) are the types the terminator's
    // operands must have.
    void region(const Region& r, const Op& owner, const char* term, const std::vector<Type>* yields, bool optional_term) {
        for (size_t i = 0; i < r.ops.size(); ++i) {
            const Op& op = r.ops[i];
            const bool last = i + 1 == r.ops.size();
            const bool is_term = op.name == "kernel.return" || op.name == "func.return" ||
                                 op.name == "pipeline.return" || op.name == "template.return" ||
                                 op.name == "scf.yield" || op.name == "scf.condition" ||
                                 op.name == "kernel.launch.config" || op.name == "check.return";
            if (is_term && (!term || op.name != term || !last))
                err("STRUCTURE/014",
                    "'" + op.name + "' cannot appear here" +
                        (term ? std::string(": this region of '") + owner.name + "' ends with '" + term + "'"
                              : std::string()),
                    op.loc);
            else if (is_term && yields)
                check_yield(op, *yields, owner);
            verify(op);
        }
        const bool ends = !r.ops.empty() && term && r.ops.back().name == term;
        if (term && !ends && !(optional_term && (!yields || yields->empty())))
            err("STRUCTURE/014", "a region of '" + owner.name + "' must end with '" + term + "'",
                r.ops.empty() ? r.loc : r.ops.back().loc);
    }

    void check_yield(const Op& y, const std::vector<Type>& want, const Op& owner) {
        const size_t skip = y.name == "scf.condition" ? 1 : 0;
        if (y.operands.size() < skip) return;
        const size_t n = y.operands.size() - skip;
        if (n != want.size()) {
            err("STRUCTURE/013",
                "'" + y.name + "' gives " + std::to_string(n) + " value(s) but '" + owner.name + "' expects " +
                    std::to_string(want.size()),
                y.loc);
            return;
        }
        for (size_t k = 0; k < n; ++k) {
            const Type* t = type_of(y.operands[k + skip]);
            if (t && !same_type(*t, want[k]))
                err("TYPE/001",
                    "'" + y.name + "' value #" + std::to_string(k) + " (" + vname(y.operands[k + skip]) + ") has type " +
                        type_str(*t) + " but '" + owner.name + "' expects " + type_str(want[k]),
                    y.loc);
        }
    }

    std::vector<Type> arg_types(const Region& r) const { return arg_types(r, vals_); }
    // A region of another top-level op (a stage's callee) numbers its values
    // in that op's own table, not in the one being verified.
    static std::vector<Type> arg_types(const Region& r, const std::vector<Op::ValueInfo>* vals) {
        std::vector<Type> out;
        for (ValueId a : r.args)
            out.push_back(vals && a != kNoValue && a < static_cast<ValueId>(vals->size()) ? (*vals)[a].type : Type{});
        return out;
    }

    void top(const Op& op) {
        preds(op.preds);
        target_ref(op);
        const std::string& n = op.name;
        if (n == "kernel.def") {
            if (op.regions.size() == 2) {
                region(op.regions[0], op, "kernel.launch.config", nullptr, false);
                region(op.regions[1], op, "kernel.return", nullptr, false);
            }
        } else if (n == "func.def" || n == "template.def") {
            const char* term = n == "func.def" ? "func.return" : "template.return";
            if (!op.regions.empty()) region(op.regions[0], op, term, &op.result_types, false);
            if (n == "template.def") template_signature(op);
        } else if (n == "check.case") {
            if (!op.regions.empty()) region(op.regions[0], op, "check.return", nullptr, false);
        } else if (n == "check.benchmark") {
            const std::string cs = op.params.empty() ? "" : op.params[0].substr(op.params[0].rfind('@', 0) == 0 ? 1 : 0);
            const Op* c = symbol(cs);
            if (!c || c->name != "check.case")
                err("SYMBOL/001", "'check.benchmark' names '@" + cs + "', which is not a check.case in the module", op.loc);
        } else if (n == "pipeline.def") {
            if (!op.regions.empty()) {
                const Region& body = op.regions[0];
                const Attr* spec = op.attr("spec_args");
                for (size_t k = spec ? static_cast<size_t>(spec->i) : 0; k < body.args.size(); ++k) {
                    const Type* t = type_of(body.args[k]);
                    if (t && t->kind != TypeKind::Buffer)
                        err("TYPE/003",
                            "pipeline binding " + vname(body.args[k]) + " of '@" + op.symbol + "' has type " +
                                type_str(*t) + "; pipeline bindings must be buffer",
                            (*vals_)[body.args[k]].loc);
                }
                region(body, op, "pipeline.return", nullptr, false);
            }
        }
    }

    void template_signature(const Op& def) {
        const std::string fam = def.params.empty() ? "" : def.params[0].substr(1);
        const Op* decl = symbol(fam);
        if (!decl || decl->name != "template.decl") {
            err("SYMBOL/001", "template.def '@" + def.symbol + "' names family '@" + fam + "', which has no template.decl",
                def.loc);
            return;
        }
        std::vector<Type> args = def.regions.empty() ? std::vector<Type>{} : arg_types(def.regions[0]);
        if (args.size() != decl->operand_types.size() || def.result_types.size() != decl->result_types.size()) {
            err("STRUCTURE/013",
                "template.def '@" + def.symbol + "' has " + std::to_string(args.size()) + " argument(s) and " +
                    std::to_string(def.result_types.size()) + " result(s); family '@" + fam + "' declares " +
                    std::to_string(decl->operand_types.size()) + " and " + std::to_string(decl->result_types.size()),
                def.loc);
            return;
        }
        for (size_t k = 0; k < args.size(); ++k)
            if (!same_type(args[k], decl->operand_types[k]))
                err("TYPE/001",
                    "template.def '@" + def.symbol + "' argument #" + std::to_string(k) + " has type " +
                        type_str(args[k]) + " but family '@" + fam + "' declares " + type_str(decl->operand_types[k]),
                    def.loc);
        for (size_t k = 0; k < def.result_types.size(); ++k)
            if (!same_type(def.result_types[k], decl->result_types[k]))
                err("TYPE/001",
                    "template.def '@" + def.symbol + "' result #" + std::to_string(k) + " has type " +
                        type_str(def.result_types[k]) + " but family '@" + fam + "' declares " +
                        type_str(decl->result_types[k]),
                    def.loc);
    }

    void operand_must(const Op& op, size_t k, bool ok, const char* what) {
        if (k >= op.operands.size() || ok) return;
        const Type* t = type_of(op.operands[k]);
        if (!t) return;
        err("TYPE/003",
            "operand #" + std::to_string(k) + " of '" + op.name + "' (" + vname(op.operands[k]) + ") has type " +
                type_str(*t) + "; expected " + what,
            op.loc);
    }

    void counts(const Op& op, const OpRule& rule) {
        if (rule.operands != kAny && static_cast<int>(op.operands.size()) != rule.operands)
            err("STRUCTURE/001",
                "'" + op.name + "' takes " + std::to_string(rule.operands) + " operand(s), got " +
                    std::to_string(op.operands.size()),
                op.loc);
        const int want = rule.results == kSameAsOperands ? static_cast<int>(op.operands.size()) : rule.results;
        if (want != kAny && static_cast<int>(op.results.size()) != want)
            err("PARSE/009",
                "'" + op.name + "' defines " + std::to_string(want) + " result(s), not " +
                    std::to_string(op.results.size()),
                op.loc);
    }

    void written_types(const Op& op, const OpRule& rule) {
        if (rule.types == TypeRule::None || rule.types == TypeRule::ResultOnly || op.operand_types.empty()) return;
        const size_t first = rule.types == TypeRule::SkipFirst ? 1 : 0;
        const bool pairwise = op.operand_types.size() == op.operands.size() && rule.types == TypeRule::Pairwise;
        if (!pairwise && op.operand_types.size() != 1) return;
        for (size_t k = first; k < op.operands.size(); ++k) {
            const Type& want = pairwise ? op.operand_types[k] : op.operand_types[0];
            const Type* t = type_of(op.operands[k]);
            if (t && !same_type(*t, want))
                err("TYPE/001",
                    "operand #" + std::to_string(k) + " of '" + op.name + "' (" + vname(op.operands[k]) +
                        ") has type " + type_str(*t) + " but the op's type is " + type_str(want),
                    op.loc);
        }
    }

    // Memory accesses: the view operand, full-rank indices, element types.
    void access(const Op& op, size_t view_at, bool loads) {
        if (view_at >= op.operands.size()) return;
        const Type* v = type_of(op.operands[view_at]);
        if (!v) return;
        if (v->kind != TypeKind::View) {
            operand_must(op, view_at, false, "a view");
            return;
        }
        if (op.indices.size() != v->dims.size())
            err("SHAPE/001",
                "'" + op.name + "' indexes " + type_str(*v) + " (rank " + std::to_string(v->dims.size()) + ") with " +
                    std::to_string(op.indices.size()) + " index(es)",
                op.loc);
        const bool vector = starts(op.name, "vector.");
        if (loads) {
            if (op.result_types.empty()) return;
            const Type& r = op.result_types[0];
            const bool ok = vector ? (r.kind == TypeKind::Vector && r.elem == v->elem)
                                   : (r.kind == TypeKind::Scalar && r.elem == v->elem);
            if (!ok)
                err("TYPE/004",
                    "'" + op.name + "' result has type " + type_str(r) + "; loading from " + type_str(*v) + " gives " +
                        (vector ? "a vector of " : "") + scalar_name(v->elem),
                    op.loc);
        } else if (!op.operands.empty()) {
            const Type* x = type_of(op.operands[0]);
            if (!x) return;
            const bool ok = vector ? (x->kind == TypeKind::Vector && x->elem == v->elem)
                                   : (x->kind == TypeKind::Scalar && x->elem == v->elem);
            operand_must(op, 0, ok, vector ? "a vector of the view's element type" : "the view's element type");
        }
    }

    // The `<...>` of a float op: clampf's mode and geluf's variant first
    // (required), then at most one fast-math flag set (scalar defs.py:
    // FastMathFlags, ClampFMode, GeluVariant).
    void float_params(const Op& op) {
        const std::string& n = op.name;
        const bool clamp = n.ends_with(".clampf"), gelu = n.ends_with(".geluf");
        size_t first_flag = 0;
        if (clamp || gelu) {
            const char* what = clamp ? "mode (ordered, number or ieee)" : "variant (erf, tanh or logistic)";
            const std::string v = op.params.empty() ? "" : op.params[0];
            const bool ok = clamp ? (v == "ordered" || v == "number" || v == "ieee")
                                  : (v == "erf" || v == "tanh" || v == "logistic");
            if (!ok) {
                err("PARSE/016", v.empty() ? "'" + n + "' needs a " + what + " in its <...>"
                                           : "'" + n + "': unknown " + std::string(clamp ? "mode" : "variant") + " '" + v + "'; expected a " + what,
                    op.loc);
                return;
            }
            first_flag = 1;
        }
        for (size_t i = first_flag; i < op.params.size(); ++i) {
            const std::string& set = op.params[i];
            size_t b = 0;
            while (b <= set.size()) {
                const size_t e = std::min(set.find('|', b), set.size());
                const std::string f = set.substr(b, e - b);
                if (i > first_flag || !(f == "reassoc" || f == "nnan" || f == "ninf" || f == "nsz" || f == "arcp" ||
                                        f == "contract" || f == "afn" || f == "fast")) {
                    err("PARSE/017", "'" + n + "': unknown fast-math flag '" + f +
                                         "'; expected reassoc, nnan, ninf, nsz, arcp, contract, afn or fast joined by '|'",
                        op.loc);
                    return;
                }
                b = e + 1;
            }
        }
    }

    void verify(const Op& op) {
        preds(op.preds);
        const std::string& n = op.name;
        if (const OpRule* rule = find_rule(n)) {
            counts(op, *rule);
            written_types(op, *rule);
        }
        const Type* written = op.operand_types.empty() ? nullptr : &op.operand_types[0];
        if (starts(n, "index.") && n != "index.cast" && n != "index.constant" && n != "index.assume" &&
            n != "index.scale" && written) {
            const bool index_only = !(n == "index.add" || n == "index.sub" || n == "index.cmp" || n == "index.min" ||
                                      n == "index.max");
            if (index_only ? !is_index(*written) : !is_address(*written))
                err("TYPE/003",
                    "'" + n + "' works on " + (index_only ? "index" : "index or offset") + " values, not " +
                        type_str(*written),
                    op.loc);
        }
        if (const OpRule* rule = find_rule(n); rule && rule->domain && written) {
            const bool ok = rule->domain == 'i' ? scalar_is_int(written->elem) : scalar_is_float(written->elem);
            const bool shaped_ok = written->kind == TypeKind::Scalar || written->kind == TypeKind::Vector;
            if (!ok || !shaped_ok)
                err("TYPE/003",
                    "'" + n + "' works on " + (rule->domain == 'i' ? "integers" : "floats") + ", not " +
                        type_str(*written),
                    op.loc);
        }
        if (const OpRule* rule = find_rule(n); (rule && rule->domain == 'f') || n == "scalar.fmaf" ||
                                               n == "vector.fmaf" || n == "scalar.clampf" || n == "vector.clampf")
            float_params(op);
        if (n == "scf.if" || n == "scf.condition" || n == "scf.select") {
            const Type* c = op.operands.empty() ? nullptr : type_of(op.operands[0]);
            if (c) operand_must(op, 0, is_i1(*c), "i1");
        }
        if (n == "view.load" || n == "view.atomic.load") access(op, 0, true);
        if (n == "vector.load" || n == "vector.load.mask") access(op, 0, true);
        if (n == "view.store" || n == "view.atomic.store" || n == "vector.store" || n == "vector.store.mask")
            access(op, 1, false);
        if ((starts(n, "kernel.subgroup.vote") || starts(n, "kernel.workgroup.vote") || n == "kernel.subgroup.ballot" ||
             n == "kernel.subgroup.any" || n == "kernel.subgroup.all") && !op.operands.empty()) {
            const Type* c = type_of(op.operands[0]);
            if (c) operand_must(op, 0, is_i1(*c), "i1");
        }
        if (n == "vector.select" && !op.operands.empty()) {  // a float mask crashed the interpreter
            const Type* c = type_of(op.operands[0]);
            if (c) operand_must(op, 0, c->elem == ScalarKind::I1, "a vector of i1");
        }
        if (n == "buffer.alloca" && !op.operands.empty()) {
            // The byte count: a float or vector here crashed the interpreter, which reads its integer payload.
            const Type* b = type_of(op.operands[0]);
            if (b) operand_must(op, 0, b->kind == TypeKind::Scalar && (scalar_is_int(b->elem) || scalar_is_address(b->elem)),
                                "an integer, index or offset byte count");
        }
        if (n == "buffer.length" && !op.operands.empty()) {  // a non-buffer operand crashed the interpreter
            const Type* b = type_of(op.operands[0]);
            if (b) operand_must(op, 0, b->kind == TypeKind::Buffer, "buffer");
        }
        if (n == "buffer.view") {
            const Type* b = op.operands.empty() ? nullptr : type_of(op.operands[0]);
            if (b) operand_must(op, 0, b->kind == TypeKind::Buffer, "buffer");
            if (!op.result_types.empty() && op.result_types[0].kind != TypeKind::View)
                err("TYPE/004", "'buffer.view' result has type " + type_str(op.result_types[0]) + "; expected a view",
                    op.loc);
        }
        if (n == "config.get") {
            const Op* s = symbol(op.callee);
            if (!s || (s->name != "config.decl" && s->name != "config.def")) {
                err("SYMBOL/001", "config key '@" + op.callee + "' is not declared in the module", op.loc);
            } else if (!s->result_types.empty() && !op.result_types.empty() &&
                       !same_type(s->result_types[0], op.result_types[0])) {
                err("TYPE/004",
                    "'config.get @" + op.callee + "' reads " + type_str(op.result_types[0]) + " but the key is declared " +
                        type_str(s->result_types[0]),
                    op.loc);
            }
        }
        if (n == "func.call" || n == "template.call" || n == "low.invoke") call(op);
        if (n == "pipeline.stage") stage(op);
        if (n == "pipeline.reduce") reduce(op);
        if (n == "kernel.launch") {
            const Op* k = symbol(op.callee);
            if (!k || (k->name != "kernel.def" && k->name != "kernel.decl")) {
                err("SYMBOL/001", "'kernel.launch' names '@" + op.callee + "', which is not a kernel in the module", op.loc);
            } else if (k->name == "kernel.def" && k->regions.size() == 2) {
                const Attr* wc = op.attr("workload_count");
                const size_t w = wc ? static_cast<size_t>(wc->i) : 0;
                if (w != k->regions[0].args.size() || op.operands.size() - w != k->regions[1].args.size())
                    err("STRUCTURE/013",
                        "'kernel.launch @" + op.callee + "' passes " + std::to_string(w) + " workload value(s) and " +
                            std::to_string(op.operands.size() - w) + " argument(s); the kernel takes " +
                            std::to_string(k->regions[0].args.size()) + " and " + std::to_string(k->regions[1].args.size()),
                        op.loc);
            }
        }
        if (n.rfind("check.", 0) == 0 && n != "check.return") check_clauses(op);
        if (n == "pipeline.fold" || n == "pipeline.buffer") {
            operand_flow(op, 0);
            if (n == "pipeline.buffer" && op.operands.size() == 2) {
                const Type* c = type_of(op.operands[1]);
                if (c) operand_must(op, 1, is_index(*c), "index");
            }
            const Type* src = op.operands.empty() ? nullptr : type_of(op.operands[0]);
            if (src && !op.result_types.empty() && !same_type(*src, op.result_types[0]))
                err("TYPE/001", "'" + n + "' result has type " + type_str(op.result_types[0]) + " but its source is " + type_str(*src),
                    op.loc);
            const std::string kind = op.params.empty() ? "" : op.params[0];
            if (n == "pipeline.fold" && fold_kind_ok(kind) && src && src->kind == TypeKind::Flow && src->inner &&
                (kind.back() == 'f') != scalar_is_float(src->inner->elem))
                err("TYPE/003", "'pipeline.fold<" + kind + ">' combines " + (kind.back() == 'f' ? "floats" : "integers") +
                                    ", not the " + scalar_name(src->inner->elem) + " records of " + type_str(*src),
                    op.loc);
            if (n == "pipeline.fold" && !fold_kind_ok(op.params.empty() ? "" : op.params[0]))
                err("PARSE/015",
                    "'pipeline.fold' needs a combining kind (addi, muli, minsi, minui, maxsi, maxui, andi, ori, xori, addf, "
                    "mulf, minimumf, maximumf, minnumf, maxnumf), got '" + (op.params.empty() ? "" : op.params[0]) + "'",
                    op.loc);
        }
        if (n == "template.apply") apply(op);
        if (n == "kernel.launch.config" && op.operands.size() != 6 && op.operands.size() != 9)
            err("STRUCTURE/001",
                "'kernel.launch.config' takes workgroups(x, y, z) and workgroup_size(x, y, z) (6 or 9 values), got " +
                    std::to_string(op.operands.size()),
                op.loc);
        if (n == "scf.for") {
            for (size_t k = 0; k < 3 && k < op.operands.size(); ++k) {
                const Type* t = type_of(op.operands[k]);
                if (t) operand_must(op, k, is_address(*t), "index or offset");
            }
            std::vector<Type> carried;
            if (!op.regions.empty()) {
                auto all = arg_types(op.regions[0]);
                if (!all.empty()) carried.assign(all.begin() + 1, all.end());
                if (carried.size() != op.result_types.size() && !(op.results.empty() && op.result_types.empty()))
                    err("STRUCTURE/013",
                        "'scf.for' carries " + std::to_string(carried.size()) + " value(s) but declares " +
                            std::to_string(op.result_types.size()) + " result(s)",
                        op.loc);
                region(op.regions[0], op, "scf.yield", &carried, true);
            }
        } else if (n == "scf.if") {
            if (!op.result_types.empty() && op.regions.size() < 2)
                err("STRUCTURE/014", "'scf.if' with results needs an else region", op.loc);
            for (const Region& r : op.regions) region(r, op, "scf.yield", &op.result_types, true);
        } else if (n == "scf.switch") {
            if (!op.operands.empty()) {
                const Type* t = type_of(op.operands[0]);
                if (t) operand_must(op, 0, is_index(*t), "index");
            }
            const Attr* keys = op.attr("case_keys");
            if (keys && keys->list) {
                for (size_t k = 1; k < keys->list->size(); ++k)
                    if ((*keys->list)[k].kind == Attr::Kind::Int && (*keys->list)[k - 1].kind == Attr::Kind::Int &&
                        (*keys->list)[k].i <= (*keys->list)[k - 1].i)
                        err("STRUCTURE/015",
                            "scf.switch case keys must be sorted and unique: " + std::to_string((*keys->list)[k].i) +
                                " follows " + std::to_string((*keys->list)[k - 1].i),
                            (*keys->list)[k].loc);
            }
            for (size_t k = op.attr("missing_default") ? 1 : 0; k < op.regions.size(); ++k)
                region(op.regions[k], op, "scf.yield", &op.result_types, true);
        } else if (n == "scf.while") {
            if (op.regions.size() == 2) {
                std::vector<Type> forwarded = arg_types(op.regions[1]);
                region(op.regions[0], op, "scf.condition", &forwarded, false);
                std::vector<Type> carried = arg_types(op.regions[0]);
                region(op.regions[1], op, "scf.yield", &carried, true);
            }
        }
    }

    void call(const Op& op) {
        const Op* f = symbol(op.callee);
        const bool ok = f && (op.name == "low.invoke" ? f->name == "low.func.def"
                              : op.name == "template.call" ? f->name == "template.def"
                                                           : (f->name == "func.def" || f->name == "func.decl"));
        if (!ok) {
            err("SYMBOL/001", "'" + op.name + "' names '@" + op.callee + "', which is not a " +
                                  (op.name == "low.invoke" ? "low.func.def" : op.name == "template.call" ? "template.def" : "function") +
                                  " in the module",
                op.loc);
            return;
        }
        size_t params = f->name == "func.decl" || f->name == "low.func.def" ? f->operand_types.size()
                        : f->regions.empty()                               ? 0
                                                                           : f->regions[0].args.size();
        if (f->name == "low.func.def") return;  // its signature is in registers, not Loom types
        if (params != op.operands.size())
            err("STRUCTURE/013",
                "'" + op.name + " @" + op.callee + "' passes " + std::to_string(op.operands.size()) +
                    " argument(s); the callee takes " + std::to_string(params),
                op.loc);
    }

    void stage(const Op& op) {
        const Op* f = symbol(op.callee);
        if (!f || (f->name != "func.def" && f->name != "func.decl")) {
            err("SYMBOL/001", "'pipeline.stage' names '@" + op.callee + "', which is not a function in the module",
                op.loc);
            return;
        }
        const size_t inputs = op.operands.empty() ? 0 : op.operands.size() - 1;  // operand 0 is the group
        const size_t outputs = op.results.size();
        std::vector<Type> params =
            f->name == "func.decl" ? f->operand_types
                                   : (f->regions.empty() ? std::vector<Type>{} : arg_types(f->regions[0], f->values.get()));
        bool buffers = true;
        for (const Type& t : params) buffers = buffers && t.kind == TypeKind::Buffer;
        if (params.size() != inputs + outputs || !buffers || !f->result_types.empty())
            err("STRUCTURE/013",
                "stage function '@" + op.callee + "' must take " + std::to_string(inputs) + " input + " +
                    std::to_string(outputs) + " output buffer(s) and return nothing; it takes " +
                    std::to_string(params.size()) + (buffers ? " buffer(s)" : " argument(s), not all buffers") +
                    (f->result_types.empty() ? "" : " and returns values"),
                op.loc);
        for (size_t k = 1; k < op.operands.size(); ++k) operand_flow(op, k);
        if (!op.operands.empty()) {
            const Type* g = type_of(op.operands[0]);
            if (g) operand_must(op, 0, g->kind == TypeKind::Group, "group");
        }
    }
    // The clauses each check op needs (Note [Check cases] in parser.cpp).
    void check_clauses(const Op& op) {
        static const std::map<std::string, std::vector<const char*>> need = {
            {"check.param.range", {"bounds"}},      {"check.param.choice", {"values"}},
            {"check.param.seed", {"base", "count"}}, {"check.literal", {"value"}},
            {"check.generate.iota", {"offset", "step"}}, {"check.generate.fill", {"value"}},
            {"check.generate.random.uniform", {"seed", "range"}}, {"check.file.read.npy", {"path"}},
            {"check.file.write.npy", {"value", "path"}}, {"check.tensor.view", {"offset"}},
            {"check.oracle.call", {"callee", "inputs"}}, {"check.expect.equal", {"actual", "expected"}},
            {"check.expect.bitwise", {"actual", "expected"}},
            {"check.expect.close", {"actual", "expected", "atol", "rtol", "nan"}},
            {"check.expect.shape", {"value", "shape"}}, {"check.expect", {"actual", "expected"}}};
        auto it = need.find(op.name);
        if (it == need.end()) return;
        for (const char* c : it->second)
            if (!op.attr(c)) err("PARSE/015", "'" + op.name + "' needs its " + c + "(...) clause", op.loc);
        if (op.name == "check.param.range" && !op.attr("linear") && !op.attr("po2"))
            err("PARSE/015", "'check.param.range' needs a sampling policy, linear or po2", op.loc);
    }

    static bool fold_kind_ok(const std::string& k) {
        for (const char* c : {"addi", "muli", "minsi", "minui", "maxsi", "maxui", "andi", "ori", "xori", "addf", "mulf",
                              "minimumf", "maximumf", "minnumf", "maxnumf"})
            if (k == c) return true;
        return false;
    }

    // The callee takes one buffer per source lane per source flow (lane-major
    // within each flow), then the target flows, then the outputs; the lane
    // count is a runtime value, so only the shape of the call is checked here
    // and the count at plan/run time.
    void reduce(const Op& op) {
        const Op* f = symbol(op.callee);
        if (!f || (f->name != "func.def" && f->name != "func.decl")) {
            err("SYMBOL/001", "'pipeline.reduce' names '@" + op.callee + "', which is not a function in the module", op.loc);
            return;
        }
        const Attr* sc = op.attr("source_count");
        const size_t src = sc ? static_cast<size_t>(sc->i) : 0;
        if (op.operands.size() < src + 2) return;
        for (size_t k = 0; k < op.operands.size(); ++k) {
            const bool group = k == 0 || k == src + 1;
            if (group) {
                const Type* g = type_of(op.operands[k]);
                if (g) operand_must(op, k, g->kind == TypeKind::Group, "group");
            } else {
                operand_flow(op, k);
            }
        }
        std::vector<Type> params =
            f->name == "func.decl" ? f->operand_types
                                   : (f->regions.empty() ? std::vector<Type>{} : arg_types(f->regions[0], f->values.get()));
        bool buffers = true;
        for (const Type& t : params) buffers = buffers && t.kind == TypeKind::Buffer;
        if (!buffers || !f->result_types.empty())
            err("STRUCTURE/013", "reduce function '@" + op.callee + "' must take buffers only and return nothing", op.loc);
        for (const Type& t : op.result_types)
            if (t.kind != TypeKind::Flow)
                err("TYPE/004", "'pipeline.reduce' result has type " + type_str(t) + "; expected a pipeline.flow<...>", op.loc);
    }
    void operand_flow(const Op& op, size_t k) {
        const Type* t = type_of(op.operands[k]);
        if (t) operand_must(op, k, t->kind == TypeKind::Flow, "pipeline.flow<...>");
    }

    void apply(const Op& op) {
        const std::string fam = op.params.empty() ? "" : op.params[0].substr(1);
        const Op* decl = symbol(fam);
        if (!decl || decl->name != "template.decl") {
            err("SYMBOL/001", "'template.apply' names family '@" + fam + "', which has no template.decl", op.loc);
            return;
        }
        if (decl->operand_types.size() != op.operands.size() || decl->result_types.size() != op.results.size())
            err("STRUCTURE/013",
                "'template.apply<@" + fam + ">' passes " + std::to_string(op.operands.size()) + " argument(s) for " +
                    std::to_string(op.results.size()) + " result(s); the family takes " +
                    std::to_string(decl->operand_types.size()) + " and gives " +
                    std::to_string(decl->result_types.size()),
                op.loc);
    }
};

}  // namespace

void verify_module(const Module& m, Diags& d) { Verifier(m, d).run(); }

}  // namespace hrx::loom
