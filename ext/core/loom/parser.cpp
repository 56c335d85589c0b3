// Loom's text parser (reference loom.md §1.2-§1.8): a table of op formats
// drives a small format interpreter; the structural ops (definitions, scf
// regions) have their own routines. Fills ir.h per Note [Loom op fields].
//
// Note [Format programs]
//   Each OpRule's format is a space-separated program the interpreter runs
//   after the op name (and its `<params>`, parsed for every op):
//     lit        a literal (int, float, -inf, true, ...)   → attrs["value"]
//     pred       a comparison predicate word, then `,`     → attrs["pred"]
//     ops/ops?   one or more / zero or more comma-separated SSA operands, each
//                optionally followed by an adjacent `[...]` index list → indices
//     preds      a predicate list `[range(%v, 1, 8), ...]`  → preds
//     dict       an optional `{k = v, ...}` dictionary      → attrs
//     types(?)   `:` then operand types, then `-> R...` or `to R` → result types
//     callee     `@name`                                    → callee
//     args       `(` ops? `)`
//     shape      `shape [...]`                              → shape
//     using-dict an optional `using {k = v : T}`            → attrs
//     clauses    keyword clauses and unit words: align(16), scope(x), pure
//     clauseops  `word(%a, %b, ...)` clauses whose values are operands
//     hash       `#family<k = v, ...>`                      → attrs["family"], ["params"]
//     range      `[%lo to %hi step %s]`                     → operands
//     str?       an optional string                         → attrs["message"]
//     indices    a `[...]` index list (static and SSA entries)   → indices
//     cclauses   check-dialect clauses `word(v[, v | to v]...)` and bare words
//                (Note [Check cases])                     → attrs[word], operands
//     kw:WORD    the keyword WORD
//     optkw:WORD the keyword WORD if present
//     rest       operands, `{...}` attributes and `: types [to T] [-> R]` up to
//                the end of the line (catalogue ops without a rule of their own)
//     attr:NAME  one attribute value (`[0, 1]`, `7`, `word`)     → attrs[NAME]
//     regions    one or more statement regions `{ ... }`, joined by `else` or
//                `do`                                      → regions
//     opaque     tokens to the end of the line, brace groups (regions or
//                dictionaries, across lines) skipped as text: for refused ops
//                whose bodies have their own syntax (pass pipelines, target-low)
//     prefix     tokens up to the `:` of the line, SSA values among them kept
//                as operands (buffer.pack's `[align(16) %a, ...]`)
//     table      `{ KEY = (%a, ...), ... } default(%f, ...)` (scf.lookup)
//                                                          → attrs["case_keys"], operands
//     module     (catalogue only) a module-level op parsed generically: its
//                first `@symbol` names it, the rest of the line and any body
//                in braces are kept as text (Note [Module-level catalogue ops])
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "loom/catalogue.h"
#include "loom/frontend.h"
#include "loom/internal.h"

namespace hrx::loom {

// ---------------------------------------------------------------- op table

namespace {

using R = TypeRule;

std::vector<OpRule> build_rules() {
    std::vector<OpRule> r;
    auto add = [&](std::string_view name, std::string_view fmt, int ops, int res, R rule = R::Pairwise) {
        r.push_back({name, fmt, ops, res, rule});
    };
    // Names live in static storage: string_views into these literals.
    static const char* index_binary[] = {"add", "sub", "mul", "div", "rem", "min", "max", "andi", "ori",
                                         "xori", "shli", "shrsi", "shrui", "rotli", "rotri"};
    static std::vector<std::string> owned;  // composed names ("index.add", "vector.addf", ...)
    owned.reserve(512);
    auto name = [&](const std::string& s) -> std::string_view {
        owned.push_back(s);
        return owned.back();
    };
    for (const char* n : index_binary) add(name(std::string("index.") + n), "ops types", 2, 1);
    for (const char* n : {"ctlzi", "cttzi", "ctpopi"}) add(name(std::string("index.") + n), "ops types", 1, 1);
    add("index.madd", "ops types", 3, 1);
    add("index.scale", "ops types", 2, 1);
    add("index.cmp", "pred ops types", 2, 1);
    add("index.cast", "ops types", 1, 1);
    add("index.assume", "ops preds types", kAny, kSameAsOperands);
    add("index.constant", "lit types", 0, 1, R::ResultOnly);

    static const char* int_binary[] = {"addi",  "subi",      "muli",      "divsi",      "divui", "remsi",
                                       "remui", "ceildivsi", "ceildivui", "floordivsi", "andi",  "ori",
                                       "xori",  "shli",      "shrsi",     "shrui",      "rotli", "rotri",
                                       "minsi", "minui",     "maxsi",     "maxui"};
    static const char* int_unary[] = {"negi", "absi", "signi", "ctlzi", "cttzi", "ctpopi"};
    static const char* float_binary[] = {"addf",     "subf",     "mulf",    "divf",    "remf",   "copysignf",
                                         "minimumf", "maximumf", "minnumf", "maxnumf", "powf",   "atan2f",
                                         "hypotf"};
    static const char* float_unary[] = {"negf",   "absf",   "signf",    "sqrtf",   "rsqrtf",     "cbrtf",
                                        "expf",   "exp2f",  "expm1f",   "logf",    "log2f",      "log10f",
                                        "log1pf", "sinf",   "cosf",     "tanf",    "asinf",      "acosf",
                                        "atanf",  "sinhf",  "coshf",    "tanhf",   "asinhf",     "acoshf",
                                        "atanhf", "sinturnsf", "costurnsf", "erff", "erfcf",     "logisticf",
                                        "siluf",  "softplusf", "geluf", "roundf",  "roundevenf", "floorf",
                                        "ceilf",  "truncf"};
    static const char* float_tests[] = {"isnanf", "isinff", "isfinitef"};
    static const char* casts[] = {"extsi", "extui", "trunci", "sitofp", "uitofp", "fptosi", "fptoui",
                                  "extf", "fptrunc", "bitcast"};
    // Scalar and lanewise vector forms share their spellings.
    for (const char* dialect : {"scalar.", "vector."}) {
        std::string d = dialect;
        auto family = [&](const auto& names, int ops, char domain) {
            for (const char* n : names) {
                add(name(d + n), "ops dict types", ops, 1);
                r.back().domain = domain;
            }
        };
        family(int_binary, 2, 'i');
        family(int_unary, 1, 'i');
        family(float_binary, 2, 'f');
        family(float_unary, 1, 'f');
        family(float_tests, 1, 'f');
        for (const char* n : casts) {
            add(name(d + n), "ops types", 1, 1);
            const std::string_view c = n;
            r.back().domain = c == "bitcast" ? 0 : (c == "fptosi" || c == "fptoui" || c == "extf" || c == "fptrunc") ? 'f' : 'i';
        }
        add(name(d + "fmaf"), "ops dict types", 3, 1);
        r.back().domain = 'f';
        add(name(d + "fmai"), "ops dict types", 3, 1);
        r.back().domain = 'i';
        add(name(d + "clampf"), "ops dict types", 3, 1);
        r.back().domain = 'f';
        add(name(d + "cmpi"), "pred ops dict types", 2, 1);
        r.back().domain = 'i';  // the handlers read integer or float payloads: a mismatch crashed them
        add(name(d + "cmpf"), "pred ops dict types", 2, 1);
        r.back().domain = 'f';
    }
    add("scalar.constant", "lit types", 0, 1, R::ResultOnly);
    add("scalar.poison", "types", 0, 1, R::ResultOnly);
    add("scalar.assume", "ops preds types", kAny, kSameAsOperands);
    add("scalar.bitfield.extractu", "ops dict types", 1, 1);
    add("scalar.bitfield.extracts", "ops dict types", 1, 1);

    add("scf.yield", "ops? types?", kAny, 0);
    add("scf.condition", "ops types", kAny, 0);
    add("scf.select", "ops types", 3, 1, R::SkipFirst);
    add("scf.schedule.fence", "", 0, 0);

    add("buffer.view", "ops types", 1, 1);
    add("buffer.assume.alignment", "ops dict types", kAny, kSameAsOperands);
    add("buffer.assume.memory_space", "ops dict types", kAny, kSameAsOperands);
    add("buffer.assume.noalias", "ops dict types", kAny, kSameAsOperands);
    add("buffer.assume.same_root", "ops dict types", kAny, kSameAsOperands);
    add("buffer.alloca", "clauses ops types", 1, 1, R::ResultOnly);
    add("buffer.fence", "clauses dict", 0, 0);
    add("buffer.length", "ops types", 1, 1, R::None);

    add("view.load", "ops dict types", 1, 1);
    add("view.store", "ops dict types", 2, 0);
    add("view.subview", "ops types", 1, 1);
    add("view.refine", "ops dict types", 1, 1);
    add("view.atomic.load", "ops dict types", 1, 1);
    add("view.atomic.store", "ops dict types", 2, 0);
    add("view.atomic.rmw", "ops dict types", 2, 1);
    add("view.atomic.reduce", "ops dict types", 2, 0);
    add("view.atomic.cmpxchg", "ops dict types", 3, kAny);
    add("view.prefetch", "ops dict types?", 1, 0);

    add("vector.load", "ops dict types", 1, 1);
    add("vector.store", "ops dict types", 2, 0);
    add("vector.load.mask", "ops dict types", 3, 1);
    add("vector.store.mask", "ops dict types", 3, 0);
    add("vector.constant", "lit types", 0, 1, R::ResultOnly);
    add("vector.splat", "ops types", 1, 1, R::ResultOnly);
    add("vector.broadcast", "ops types", 1, 1, R::None);
    add("vector.iota", "ops kw:step ops types", 2, 1, R::ResultOnly);
    add("vector.mask.range", "range types", 3, 1, R::None);
    add("vector.extract", "ops types", 1, 1, R::None);
    add("vector.insert", "ops kw:into ops types", 2, 1);
    add("vector.select", "ops types", 3, 1, R::SkipFirst);
    add("vector.reduce", "ops dict types", 2, 1);
    add("vector.encode", "ops kw:using ops dict types", 2, 1);
    add("vector.decode", "ops kw:using ops dict types", 2, 1);
    add("vector.fragment", "ops shape using-dict types", 1, 1);
    add("vector.fragment.store", "ops shape types", 2, 0);
    add("vector.fragment.load", "ops shape using-dict types", 1, 1, R::None);
    add("vector.mma", "ops types", 3, 1);
    add("vector.from_elements", "ops types", kAny, 1, R::None);
    add("vector.empty", "types", 0, 1, R::ResultOnly);
    add("vector.poison", "types", 0, 1, R::ResultOnly);
    add("vector.dotf", "ops types", kAny, 1, R::None);
    r.back().domain = 'f';
    // Register layout, bit packing, grouped dots and tables (defs.py vector
    // "aggregate", "bitpack", "contraction", "table" categories).
    add("vector.slice", "ops types", 1, 1, R::None);
    add("vector.concat", "ops types", kAny, 1, R::None);
    add("vector.transpose", "ops types", 1, 1, R::None);
    add("vector.shuffle", "ops types", 1, 1);
    add("vector.interleave", "ops types", 2, 1, R::None);
    add("vector.deinterleave", "ops types", 1, 2, R::None);
    add("vector.reduce.axes", "ops kw:axes attr:axes types", 2, 1, R::None);
    // Integer-only ops carry domain 'i' (dot2f 'f'): the verifier reports a
    // float operand instead of the interpreter reading a payload it lacks.
    for (const char* n : {"vector.bitfield.extractu", "vector.bitfield.extracts"}) {
        add(n, "ops dict types", 1, 1, R::None);
        r.back().domain = 'i';
    }
    add("vector.bitfield.insert", "ops kw:into ops dict types", 2, 1, R::None);
    r.back().domain = 'i';
    for (const char* n : {"vector.bitpack", "vector.bitunpacku", "vector.bitunpacks"}) {
        add(n, "ops types", 1, 1, R::None);
        r.back().domain = 'i';
    }
    for (const char* n : {"vector.dot2f", "vector.dot4i", "vector.dot8i4", "vector.dot4f8"}) {
        add(n, "ops types", 3, 1, R::None);
        r.back().domain = std::string_view(n) == "vector.dot2f" ? 'f' : 'i';
    }
    add("vector.table.lookup", "ops types", 1, 1, R::None);
    add("vector.table.quantize", "ops dict types", 2, 1, R::None);
    add("vector.fragment.repack", "ops shape types", 1, 1, R::None);

    add("encoding.define", "hash dict types", 0, 1, R::None);
    // Address layouts (Note [View layouts]): strides in `indices`.
    add("encoding.layout.dense", "types", 0, 1, R::ResultOnly);
    add("encoding.layout.strided", "indices types", 0, 1, R::ResultOnly);
    add("encoding.layout.assume.dense", "ops types", 1, 1);
    add("encoding.layout.assume.strided", "ops dict types", 1, 1);

    for (const char* n : {"kernel.workitem.id", "kernel.workgroup.id", "kernel.workgroup.size", "kernel.workgroup.count",
                          "kernel.workitem.dispatch.id", "kernel.subgroup.id", "kernel.subgroup.lane.id",
                          "kernel.subgroup.size", "kernel.subgroup.count", "target.subgroup.size"})
        add(n, "types", 0, 1, R::ResultOnly);
    add("kernel.barrier", "clauses dict", 0, 0);
    add("kernel.return", "", 0, 0);
    add("kernel.exit", "ops dict types", 1, 0);
    add("kernel.assert", "ops str? types", 1, 0);
    add("kernel.launch.config", "clauseops types", kAny, 0, R::None);
    // `%v from %lane` (kernel defs) or `%v, %lane`.
    add("kernel.subgroup.broadcast", "ops optkw:from ops? dict types", 2, 1);
    for (const char* n : {"kernel.subgroup.reduce", "kernel.subgroup.broadcast.first",
                          "kernel.subgroup.scan", "kernel.workgroup.reduce", "kernel.workgroup.scan"})
        add(n, "ops dict types", kAny, 1);
    add("kernel.subgroup.shuffle", "ops dict types", kAny, kAny, R::None);
    for (const char* n : {"kernel.subgroup.vote", "kernel.subgroup.ballot", "kernel.workgroup.vote"})
        add(n, "ops dict types", kAny, kAny, R::None);

    add("config.get", "callee types", 0, 1, R::ResultOnly);
    add("group.create", "ops types", 1, 1);
    add("pipeline.read", "ops kw:on ops types", 2, 1);
    add("pipeline.scatter", "ops kw:across ops types", 2, 1);
    add("pipeline.write", "ops kw:to ops types", 2, 0);
    add("pipeline.stage", "callee kw:on ops args types", kAny, kAny);
    // `%b = pipeline.buffer %f capacity %n : (flow, index) -> flow`.
    add("pipeline.buffer", "ops kw:capacity ops types", 2, 1, R::None);
    // `%r = pipeline.fold<kind[, flags]> %f : flow`: the result has the source's type.
    add("pipeline.fold", "ops types", 1, 1);
    // Own routine (parse_reduce): operands {source group, source flows...,
    // target group, target flows...}, attrs["source_count"].
    add("pipeline.reduce", "", kAny, kAny, R::None);
    add("pipeline.return", "", 0, 0);
    add("func.call", "clauses callee args types", kAny, kAny);
    add("func.return", "ops? types?", kAny, 0);
    add("template.apply", "args types", kAny, kAny);
    add("func.apply", "args types", kAny, kAny);  // the newer spelling of template.apply (Note [func.template])
    add("template.call", "callee args types", kAny, kAny);
    add("template.return", "ops? types?", kAny, 0);
    add("low.invoke", "callee args types", kAny, kAny);

    // The check dialect's case-body ops (Note [Check cases]): clause values
    // land in attrs[clause], SSA ones also in operands.
    add("check.return", "", 0, 0);
    add("check.requires", "dict", 0, 0, R::None);
    add("check.skip_if", "dict cclauses", 0, 0, R::None);
    for (const char* n : {"check.param.range", "check.param.choice", "check.param.seed", "check.literal",
                          "check.generate.iota", "check.generate.fill", "check.file.read.npy"})
        add(n, "cclauses types", 0, 1, R::ResultOnly);
    add("check.generate.random.uniform", "cclauses types", 1, 1, R::ResultOnly);
    add("check.file.write.npy", "cclauses types", 1, 0, R::None);
    add("check.tensor.view", "ops cclauses types", 1, 1, R::None);
    add("check.oracle.call", "dict cclauses types", kAny, kAny, R::None);
    for (const char* n : {"check.expect.equal", "check.expect.bitwise", "check.expect.close"})
        add(n, "cclauses types", 2, 0, R::None);
    add("check.expect.shape", "cclauses types", kAny, 0, R::None);
    add("check.expect", "cclauses dict types", 2, 0, R::None);
    add("check.expect.event", "dict", 0, 0, R::None);
    // `kernel.launch @k[%w...](%a...) : [W...](A...)`: own routine
    // (parse_launch); operands {workloads..., args...}, attrs["workload_count"].
    add("kernel.launch", "", kAny, 0, R::None);
    // Every other op of the catalogue parses generically (Note [Op
    // catalogue]) so valid Loom reaches the planner's refusal, not PARSE/006.
    std::unordered_set<std::string_view> have;
    for (const OpRule& rule : r) have.insert(rule.name);
    static const char* kStructural[] = {"kernel.def", "kernel.decl", "func.def", "func.decl", "func.template", "pipeline.def",
                                        "template.decl", "template.def", "config.decl", "config.def", "amdgpu.target",
                                        "aie2p.target", "target.generic", "target.decl", "low.func.def", "scf.for",
                                        "scf.if", "scf.while", "scf.switch", "check.case",
                                        "check.benchmark"};
    for (const char* n : kStructural) have.insert(n);
    for (const OpEntry& e : op_catalogue())
        if (!have.count(e.name)) add(e.name, e.format.empty() ? std::string_view("rest") : e.format, kAny, kAny, R::None);
    return r;
}

const std::unordered_map<std::string_view, OpRule>& rule_table() {
    static const std::unordered_map<std::string_view, OpRule> table = [] {
        std::unordered_map<std::string_view, OpRule> t;
        for (const OpRule& r : build_rules()) t.emplace(r.name, r);
        return t;
    }();
    return table;
}

// Ops with their own parse routine (definitions, regions).
const std::unordered_set<std::string_view>& structural_ops() {
    static const std::unordered_set<std::string_view> s = {
        "kernel.def",    "kernel.decl",    "func.def",      "func.decl",     "pipeline.def",
        "template.decl", "template.def",   "config.decl",   "config.def",    "amdgpu.target",
        "aie2p.target",  "target.generic", "target.decl",   "low.func.def",  "scf.for",  "func.template",
        "check.case",    "check.benchmark",
        "scf.if",        "scf.while",      "scf.switch"};
    return s;
}

bool result_is_i1(std::string_view name) {
    return name == "index.cmp" || name == "scalar.cmpi" || name == "scalar.cmpf" || name == "scalar.isnanf" ||
           name == "scalar.isinff" || name == "scalar.isfinitef";
}

const std::unordered_set<std::string_view>& predicate_names() {
    static const std::unordered_set<std::string_view> s = {"range", "mul",  "pow2", "eq",      "ne",      "lt",
                                                           "le",    "gt",   "ge",   "min",     "max",     "not_nan",
                                                           "not_inf", "finite"};
    return s;
}

}  // namespace

const OpRule* find_rule(std::string_view name) {
    auto& t = rule_table();
    auto it = t.find(name);
    return it == t.end() ? nullptr : &it->second;
}

bool is_function_like(std::string_view op) {
    return op == "kernel.def" || op == "kernel.decl" || op == "func.def" || op == "func.decl" ||
           op == "pipeline.def" || op == "template.decl" || op == "template.def" || op == "func.template";
}

bool is_module_level_catalogue_op(std::string_view op) {
    const OpEntry* e = catalogue_find(op);
    return e && e->format == "module";
}

bool is_symbol_op(std::string_view op) {
    return is_function_like(op) || op == "config.decl" || op == "config.def" || op == "amdgpu.target" ||
           op == "aie2p.target" || op == "target.generic" || op == "target.decl" || op == "low.func.def" ||
           op == "check.case" || op == "check.benchmark" || is_module_level_catalogue_op(op);
}

const char* symbol_kind(std::string_view op) {
    if (op.rfind("kernel.", 0) == 0) return "kernel";
    if (op == "pipeline.def") return "pipeline";
    if (op.rfind("func.", 0) == 0) return "func";
    if (op.rfind("config.", 0) == 0) return "config";
    if (op.rfind("template.", 0) == 0) return "template";
    if (op == "low.func.def") return "low";
    if (op.rfind("check.", 0) == 0) return "check";
    if (op.rfind("low.", 0) == 0) return "low";
    if (op.rfind("global.", 0) == 0) return "global";
    if (op.rfind("command.", 0) == 0) return "command";
    if (op.rfind("pass.", 0) == 0) return "pass";
    return "target";
}

// ---------------------------------------------------------------- types

Type scalar_type(ScalarKind k) {
    Type t;
    t.kind = TypeKind::Scalar;
    t.elem = k;
    t.spelling = scalar_name(k);
    return t;
}

namespace {

ScalarKind scalar_from(std::string_view s) {
    static const std::pair<std::string_view, ScalarKind> names[] = {
        {"i1", ScalarKind::I1},         {"i8", ScalarKind::I8},         {"i16", ScalarKind::I16},
        {"i32", ScalarKind::I32},       {"i64", ScalarKind::I64},       {"f8E4M3", ScalarKind::F8E4M3},
        {"f8E5M2", ScalarKind::F8E5M2}, {"f16", ScalarKind::F16},       {"bf16", ScalarKind::BF16},
        {"f32", ScalarKind::F32},       {"f64", ScalarKind::F64},       {"index", ScalarKind::Index},
        {"offset", ScalarKind::Offset}};
    for (auto& [n, k] : names)
        if (n == s) return k;
    return ScalarKind::None;
}

}  // namespace

std::string type_str(const Type& t) { return t.spelling.empty() ? std::string("?") : t.spelling; }

bool same_type(const Type& a, const Type& b) {
    if (a.kind != b.kind || a.elem != b.elem) return false;
    if (a.kind == TypeKind::Opaque) return a.spelling == b.spelling;
    if (a.kind == TypeKind::Encoding) return a.role == b.role;
    if (a.kind == TypeKind::Flow) return a.inner && b.inner && same_type(*a.inner, *b.inner);
    if (a.dims.size() != b.dims.size() || a.layout != b.layout) return false;
    for (size_t i = 0; i < a.dims.size(); ++i) {
        const Dim &x = a.dims[i], &y = b.dims[i];
        if (x.is_dynamic() != y.is_dynamic()) return false;
        if (!x.is_dynamic() && x.extent != y.extent) return false;
    }
    return true;
}

// ---------------------------------------------------------------- parser

namespace {

struct ParseFail {};

struct Step {
    enum Kind { Lit, Pred, Ops, OptOps, Preds, Dict, Types, OptTypes, Callee, Args, Shape, UsingDict, Clauses,
                ClauseOps, Hash, Range, OptStr, Kw, Indices, CheckClauses, AttrValue, OptKw, Rest, Regions, Opaque,
                Table, Prefix } kind;
    std::string word;
};

const std::vector<Step>& program_of(const OpRule& rule) {
    static std::unordered_map<std::string_view, std::vector<Step>> cache = [] {
        std::unordered_map<std::string_view, std::vector<Step>> c;
        static const std::pair<std::string_view, Step::Kind> words[] = {
            {"lit", Step::Lit},       {"pred", Step::Pred},         {"ops", Step::Ops},
            {"ops?", Step::OptOps},   {"preds", Step::Preds},       {"dict", Step::Dict},
            {"types", Step::Types},   {"types?", Step::OptTypes},   {"callee", Step::Callee},
            {"args", Step::Args},     {"shape", Step::Shape},       {"using-dict", Step::UsingDict},
            {"clauses", Step::Clauses}, {"clauseops", Step::ClauseOps}, {"hash", Step::Hash},
            {"range", Step::Range},   {"str?", Step::OptStr},       {"indices", Step::Indices},
            {"cclauses", Step::CheckClauses}, {"rest", Step::Rest}, {"regions", Step::Regions},
            {"opaque", Step::Opaque}, {"table", Step::Table}, {"prefix", Step::Prefix}};
        for (auto& [name, rule] : rule_table()) {
            std::vector<Step> prog;
            std::string_view f = rule.format;
            while (!f.empty()) {
                size_t sp = f.find(' ');
                std::string_view w = f.substr(0, sp);
                f = sp == std::string_view::npos ? std::string_view{} : f.substr(sp + 1);
                if (w.rfind("kw:", 0) == 0) {
                    prog.push_back({Step::Kw, std::string(w.substr(3))});
                    continue;
                }
                if (w.rfind("optkw:", 0) == 0) {
                    prog.push_back({Step::OptKw, std::string(w.substr(6))});
                    continue;
                }
                if (w.rfind("attr:", 0) == 0) {
                    prog.push_back({Step::AttrValue, std::string(w.substr(5))});
                    continue;
                }
                for (auto& [n, k] : words)
                    if (n == w) prog.push_back({k, {}});
            }
            c.emplace(name, std::move(prog));
        }
        return c;
    }();
    return cache.at(rule.name);
}

class Parser {
public:
    Parser(std::string_view src, Diags& d, Module& m) : lex_(src, d), d_(d), m_(m) {}

    void parse_module() {
        try {
            while (peek().kind != Tok::Eof) {
                const size_t start = peek().begin;
                try {
                    parse_top();
                } catch (ParseFail&) {
                    recover(start, true);
                }
            }
        } catch (Diags::Stop&) {
        }
    }

private:
    Lexer lex_;
    Diags& d_;
    Module& m_;
    uint32_t last_line_ = 1;
    std::shared_ptr<std::vector<Op::ValueInfo>> values_;
    std::vector<std::unordered_map<std::string, ValueId>> scopes_;
    bool in_signature_ = false;
    bool eof_reported_ = false;
    int region_depth_ = 0;  // regions open around the one being parsed (Note [Nesting limit])
    std::unordered_map<std::string, Attr> aliases_;  // `#name = #family<...>` (Note [View layouts])

    // ---- tokens
    const Token& peek() { return lex_.peek(); }
    Token take() {
        Token t = lex_.next();
        last_line_ = t.loc.line;
        return t;
    }
    bool accept(char p) {
        if (peek().is(p)) {
            take();
            return true;
        }
        return false;
    }
    bool accept_word(std::string_view w) {
        if (peek().is_word(w)) {
            take();
            return true;
        }
        return false;
    }
    [[noreturn]] void fail(const char* code, std::string msg, Location loc) {
        d_.error(code, std::move(msg), loc);
        throw ParseFail{};
    }
    [[noreturn]] void unexpected(const char* expected) {
        const Token& t = peek();
        fail("PARSE/003", "unexpected " + describe(t) + "; expected " + expected, t.loc);
    }
    void expect(char p) {
        if (!accept(p)) {
            std::string what = p == 'A' ? "'->'" : std::string("'") + p + "'";
            unexpected(what.c_str());
        }
    }
    void expect_word(std::string_view w) {
        if (!accept_word(w)) {
            std::string what = "keyword '" + std::string(w) + "'";
            unexpected(what.c_str());
        }
    }
    Token expect_kind(Tok k, const char* what) {
        if (peek().kind != k) unexpected(what);
        return take();
    }

    // Skip the rest of a failed statement (which began at byte `start`): the
    // tokens on its last line and any balanced braces it opened, but never an
    // enclosing region's '}'. A statement that failed on its first token
    // skips that token, so every failure makes progress.
    // At module level (`top`) a '}' closes nothing and is skipped too.
    void recover(size_t start, bool top) {
        if (peek().begin == start && peek().kind != Tok::Eof && (top || !peek().is('}'))) take();
        int depth = 0;
        uint32_t line = last_line_;
        for (;;) {
            const Token& t = peek();
            if (t.kind == Tok::Eof) return;
            if (depth == 0 && (t.is('}') || t.loc.line != line)) return;
            if (t.is('{')) ++depth;
            if (t.is('}')) --depth;
            line = t.loc.line;
            take();
        }
    }

    // ---- values and scopes
    void begin_function() {
        values_ = std::make_shared<std::vector<Op::ValueInfo>>();
        scopes_.clear();
        scopes_.emplace_back();
    }
    void end_function() { scopes_.clear(); }
    ValueId define(const std::string& name, Type type, Location loc) {
        for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
            if (it->count(name)) {
                d_.error("PARSE/002", "'%" + name + "' is already defined in this scope", loc);
                break;
            }
        }
        ValueId id = static_cast<ValueId>(values_->size());
        values_->push_back({name, std::move(type), loc});
        scopes_.back()[name] = id;
        return id;
    }
    ValueId lookup(const Token& t) {
        for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
            auto f = it->find(t.text);
            if (f != it->end()) return f->second;
        }
        if (in_signature_)
            d_.error("PARSE/022", "unresolved forward reference '%" + t.text + "' in signature", t.loc);
        else
            d_.error("PARSE/001", "use of undefined value '%" + t.text + "'", t.loc);
        return kNoValue;
    }
    ValueId operand() { return lookup(expect_kind(Tok::Value, "SSA value")); }

    // ---- types
    Type parse_type() {
        const Token& t = peek();
        if (t.kind != Tok::Ident) unexpected("type");
        Location loc;
        std::string_view text = lex_.take_type_text(loc);
        last_line_ = loc.line;
        if (text.empty()) throw ParseFail{};  // PARSE/026, already reported
        return interpret_type(text, loc, 0);
    }
    // `depth` counts enclosing pipeline.flow<...>: a flow holds a tile, so a
    // few levels cover every valid type, and the bound keeps this recursion
    // (and same_type's over the result) short on hostile input.
    Type interpret_type(std::string_view text, Location loc, int depth) {
        Type ty;
        ty.spelling.assign(text);
        ScalarKind k = scalar_from(text);
        if (k != ScalarKind::None) {
            ty.kind = TypeKind::Scalar;
            ty.elem = k;
            return ty;
        }
        if (text == "buffer") {
            ty.kind = TypeKind::Buffer;
            return ty;
        }
        if (text == "group" || text.rfind("group<", 0) == 0) {
            ty.kind = TypeKind::Group;
            return ty;
        }
        size_t lt = text.find('<');
        if (lt == std::string_view::npos) {
            if (text.find('.') != std::string_view::npos) {
                ty.kind = TypeKind::Opaque;  // dialect tokens such as kernel.async.token
                return ty;
            }
            fail("PARSE/007", "unknown type '" + std::string(text) + "'", loc);
        }
        std::string_view head = text.substr(0, lt);
        std::string_view body = text.substr(lt + 1, text.size() - lt - 2);
        if (head == "view" || head == "vector" || head == "tile" || head == "tensor") {
            ty.kind = head == "view" ? TypeKind::View : head == "vector" ? TypeKind::Vector
                      : head == "tile" ? TypeKind::Tile : TypeKind::Tensor;
            // A layout/encoding may follow the shape after a top-level comma.
            int depth = 0;
            size_t comma = std::string_view::npos;
            for (size_t i = 0; i < body.size(); ++i) {
                if (body[i] == '<' || body[i] == '[') ++depth;
                if (body[i] == '>' || body[i] == ']') --depth;
                if (body[i] == ',' && depth == 0) {
                    comma = i;
                    break;
                }
            }
            std::string_view shape = body.substr(0, comma);
            if (comma != std::string_view::npos) {
                std::string_view lay = body.substr(comma + 1);
                while (!lay.empty() && lay.front() == ' ') lay.remove_prefix(1);
                ty.layout.assign(lay);
            }
            parse_shape(shape, ty, loc);
            if (!ty.layout.empty()) resolve_layout(ty, loc);
            return ty;
        }
        if (head == "pipeline.flow") {
            ty.kind = TypeKind::Flow;
            if (depth >= 4) fail("PARSE/021", "type nesting too deep in '" + std::string(text) + "'", loc);
            ty.inner = std::make_shared<Type>(interpret_type(body, loc, depth + 1));
            return ty;
        }
        if (head == "encoding") {
            ty.kind = TypeKind::Encoding;
            ty.role.assign(body);
            return ty;
        }
        ty.kind = TypeKind::Opaque;  // reg<...>, low.storage<...>
        return ty;
    }
    // Note [View layouts]
    //   A view's (or tile's) layout follows its shape after a comma: `%l` (an
    //   encoding<layout> value of encoding.layout.dense/strided), the attribute
    //   `#encoding.layout.strided<strides=[s0, s1, ...]>` or
    //   `#encoding.layout.dense`, or `#alias` of one of those. Strides count
    //   elements; element (i0, i1, ...) of a strided view lives at element
    //   offset sum(i_d * s_d) from the view's byte offset, so its footprint is
    //   1 + sum((dim_d - 1) * s_d) elements. Any other encoding is Layout::Other,
    //   which the planner refuses (EMULATOR/007): the emulator never reads a
    //   layout it does not understand as dense.
    void resolve_layout(Type& ty, Location loc) {
        std::string_view lay = ty.layout;
        while (!lay.empty() && lay.back() == ' ') lay.remove_suffix(1);
        if (lay.front() == '%') {
            Token name;
            name.text.assign(lay.substr(1));
            name.loc = loc;
            ty.layout_value = lookup(name);
            ty.layout_form = Type::Layout::Value;
            return;
        }
        if (lay.front() != '#') {
            ty.layout_form = Type::Layout::Other;
            return;
        }
        std::string family(lay.substr(1, lay.find('<') == std::string_view::npos ? std::string_view::npos : lay.find('<') - 1));
        std::string_view params = lay.find('<') == std::string_view::npos ? std::string_view{} : lay.substr(lay.find('<'));
        if (auto a = aliases_.find(family); a != aliases_.end() && params.empty()) {
            // An alias: its record's family and parameters.
            const Attr& rec = a->second;
            const Attr* fam = rec.dict && rec.dict->count("family") ? &rec.dict->at("family") : nullptr;
            const Attr* ps = rec.dict && rec.dict->count("params") ? &rec.dict->at("params") : nullptr;
            family = fam ? fam->s : "";
            ty.layout_form = Type::Layout::Other;
            if (family == "encoding.layout.dense") ty.layout_form = Type::Layout::Dense;
            if (family == "encoding.layout.strided" && ps && ps->dict && ps->dict->count("strides")) {
                const Attr& st = ps->dict->at("strides");
                if (st.kind == Attr::Kind::List && st.list) {
                    ty.layout_form = Type::Layout::Strided;
                    for (const Attr& e : *st.list) {
                        if (e.kind != Attr::Kind::Int) ty.layout_form = Type::Layout::Other;
                        ty.layout_strides.push_back(e.i);
                    }
                }
            }
            return;
        }
        if (family == "encoding.layout.dense") {
            ty.layout_form = Type::Layout::Dense;
            return;
        }
        ty.layout_form = Type::Layout::Other;
        if (family != "encoding.layout.strided") return;
        const size_t key = params.find("strides");
        const size_t open = params.find('[', key == std::string_view::npos ? 0 : key);
        const size_t close = params.find(']', open == std::string_view::npos ? 0 : open);
        if (key == std::string_view::npos || open == std::string_view::npos || close == std::string_view::npos) {
            d_.error("PARSE/015", "'#encoding.layout.strided' needs strides = [s0, s1, ...] in '" + ty.spelling + "'", loc);
            return;
        }
        std::string_view list = params.substr(open + 1, close - open - 1);
        while (!list.empty()) {
            while (!list.empty() && (list.front() == ' ' || list.front() == ',')) list.remove_prefix(1);
            if (list.empty()) break;
            size_t e = 0;
            if (list[e] == '-') ++e;
            while (e < list.size() && list[e] >= '0' && list[e] <= '9') ++e;
            if (e == 0 || (e == 1 && list[0] == '-')) {
                d_.error("PARSE/015", "'#encoding.layout.strided' strides must be integer literals in '" + ty.spelling + "'", loc);
                return;
            }
            ty.layout_strides.push_back(std::strtoll(std::string(list.substr(0, e)).c_str(), nullptr, 10));
            list.remove_prefix(e);
        }
        ty.layout_form = Type::Layout::Strided;
    }
    void parse_shape(std::string_view s, Type& ty, Location loc) {
        size_t i = 0;
        while (i < s.size() && s[i] == ' ') ++i;
        for (;;) {
            if (i < s.size() && s[i] == '[') {
                size_t close = s.find(']', i);
                if (close == std::string_view::npos || s.substr(i + 1, 1) != "%")
                    fail("PARSE/004", "bad dynamic dimension in type '" + ty.spelling + "'", loc);
                Token name;
                name.text.assign(s.substr(i + 2, close - i - 2));
                name.loc = loc;
                Dim dim;
                dim.value = lookup(name);
                ty.dims.push_back(dim);
                i = close + 1;
            } else if (i < s.size() && s[i] >= '0' && s[i] <= '9') {
                size_t e = i;
                while (e < s.size() && s[e] >= '0' && s[e] <= '9') ++e;
                Dim dim;
                dim.extent = std::strtoll(std::string(s.substr(i, e - i)).c_str(), nullptr, 10);
                ty.dims.push_back(dim);
                i = e;
            } else {
                std::string_view elem = s.substr(i);
                ty.elem = scalar_from(elem);
                if (ty.elem == ScalarKind::None)
                    fail("PARSE/007", "unknown element type '" + std::string(elem) + "' in '" + ty.spelling + "'", loc);
                return;
            }
            if (i >= s.size() || s[i] != 'x')
                fail("PARSE/004", "expected 'x' after a dimension in type '" + ty.spelling + "'", loc);
            ++i;
        }
    }
    // A parenthesised or single type list (after '->').
    void parse_type_list(std::vector<Type>& out) {
        if (accept('(')) {
            if (accept(')')) return;
            do out.push_back(parse_type());
            while (accept(','));
            expect(')');
            return;
        }
        out.push_back(parse_type());
    }
    void parse_types(Op& op) {
        expect(':');
        if (peek().is('(')) {
            parse_type_list(op.operand_types);
            // `-> (...)` is optional: a call or template.apply with no
            // results may stop after its operand types.
            if (accept('A')) parse_type_list(op.result_types);
            return;
        }
        do op.operand_types.push_back(parse_type());
        while (accept(','));
        if (accept('A')) {
            do op.result_types.push_back(parse_type());
            while (accept(','));
        } else if (accept_word("to")) {
            op.result_types.push_back(parse_type());
        }
    }

    // ---- attributes
    Attr parse_attr_value(int depth) {
        if (depth > 32) fail("PARSE/021", "attribute nesting too deep", peek().loc);
        Attr a;
        a.loc = peek().loc;
        const Token& t = peek();
        switch (t.kind) {
            case Tok::Int: a.kind = Attr::Kind::Int; a.i = take().i; return a;
            case Tok::Float: a.kind = Attr::Kind::Float; a.f = take().f; return a;
            case Tok::String: a.kind = Attr::Kind::String; a.s = take().text; return a;
            case Tok::Symbol: a.kind = Attr::Kind::Symbol; a.s = take().text; return a;
            case Tok::Value: {
                a.kind = Attr::Kind::Value;
                a.value = lookup(take());
                if (accept(':')) a.type = std::make_shared<Type>(parse_type());
                return a;
            }
            case Tok::Ident: {
                a.kind = Attr::Kind::Ident;
                a.s = take().text;
                while (accept('|')) a.s += "|" + expect_kind(Tok::Ident, "flag").text;
                return a;
            }
            case Tok::Hash: return parse_hash(depth);
            case Tok::Punct:
                if (t.is('{')) {
                    a.kind = Attr::Kind::Dict;
                    a.dict = std::make_shared<AttrDict>();
                    parse_dict(*a.dict, depth + 1);
                    return a;
                }
                if (t.is('[')) {
                    take();
                    a.kind = Attr::Kind::List;
                    a.list = std::make_shared<AttrList>();
                    if (!accept(']')) {
                        do a.list->push_back(parse_attr_value(depth + 1));
                        while (accept(','));
                        expect(']');
                    }
                    return a;
                }
                break;
            default: break;
        }
        unexpected("attribute value");
    }
    // `#family<k = v, ...>` → Dict {family: String, params: Dict}.
    Attr parse_hash(int depth) {
        Attr a;
        a.loc = peek().loc;
        a.kind = Attr::Kind::Dict;
        a.dict = std::make_shared<AttrDict>();
        Attr fam;
        fam.kind = Attr::Kind::String;
        fam.s = take().text;
        (*a.dict)["family"] = fam;
        Attr params;
        params.kind = Attr::Kind::Dict;
        params.dict = std::make_shared<AttrDict>();
        if (lex_.adjacent('<')) {
            take();
            if (!accept('>')) {
                do {
                    Token key = take();
                    if (key.kind != Tok::Ident && key.kind != Tok::Hash && key.kind != Tok::Int)
                        fail("PARSE/003", "unexpected " + describe(key) + "; expected parameter name", key.loc);
                    Attr v;
                    if (accept('=')) v = parse_attr_value(depth + 1);
                    if (params.dict->count(key.text))
                        d_.error("PARSE/020", "duplicate parameter '" + key.text + "'", key.loc);
                    (*params.dict)[key.text] = v;
                } while (accept(','));
                expect('>');
            }
        }
        (*a.dict)["params"] = params;
        return a;
    }
    void parse_dict(AttrDict& into, int depth) {
        expect('{');
        if (accept('}')) return;
        do {
            const Token& k = peek();
            if (k.kind != Tok::Ident && k.kind != Tok::String) unexpected("attribute name");
            Token key = take();
            Attr v;
            v.loc = key.loc;
            if (accept('=')) v = parse_attr_value(depth + 1);
            if (into.count(key.text)) d_.error("PARSE/020", "duplicate attribute '" + key.text + "'", key.loc);
            into[key.text] = v;
        } while (accept(','));
        expect('}');
    }
    // Modifier words and clauses: `retain`, `target(@t)`, `export("n")`,
    // `align(16)`, `target<amd.xdna.aie2p.array>(@t)`. Stops at `stop` words.
    void parse_clauses(Op& op, std::initializer_list<std::string_view> stop = {}) {
        for (;;) {
            const Token& t = peek();
            if (t.kind != Tok::Ident || t.text.find('.') != std::string::npos) return;
            for (auto s : stop)
                if (t.text == s) return;
            Token word = take();
            Attr a;
            a.loc = word.loc;
            if (lex_.adjacent('<')) {
                take();
                std::string params;
                while (!peek().is('>')) {
                    if (peek().kind == Tok::Eof) unexpected("'>'");
                    Token p = take();
                    params += p.kind == Tok::Symbol ? "@" + p.text : p.text;
                }
                take();
                Attr pa;
                pa.kind = Attr::Kind::String;
                pa.s = params;
                op.attrs[word.text + "_kind"] = pa;
            }
            if (lex_.adjacent('(')) {
                take();
                std::vector<Attr> vals;
                if (!accept(')')) {
                    do vals.push_back(parse_attr_value(1));
                    while (accept(','));
                    expect(')');
                }
                if (vals.size() == 1) {
                    a = vals[0];
                } else {
                    a.kind = Attr::Kind::List;
                    a.list = std::make_shared<AttrList>(std::move(vals));
                }
            }
            op.attrs[word.text] = a;
        }
    }

    // ---- lists
    void parse_index_list(std::vector<IndexEntry>& out) {
        expect('[');
        if (accept(']')) return;
        do {
            IndexEntry e;
            const Token& t = peek();
            if (t.kind == Tok::Value) e.value = lookup(take());
            else if (t.kind == Tok::Int) e.constant = take().i;
            else unexpected("index (SSA value or integer)");
            out.push_back(e);
        } while (accept(','));
        expect(']');
    }
    void parse_preds(std::vector<Predicate>& out) {
        expect('[');
        if (accept(']')) return;
        do {
            Token name = expect_kind(Tok::Ident, "predicate");
            if (!predicate_names().count(name.text))
                d_.error("PARSE/013", "unknown predicate '" + name.text + "'", name.loc);
            Predicate p;
            p.name = name.text;
            p.loc = name.loc;
            expect('(');
            if (!accept(')')) {
                do {
                    PredArg a;
                    const Token& t = peek();
                    if (t.kind == Tok::Value) a.value = lookup(take());
                    else if (t.kind == Tok::Int) a.i = take().i;
                    else if (t.kind == Tok::Float) {
                        a.is_float = true;
                        a.f = take().f;
                    } else unexpected("predicate argument");
                    p.args.push_back(a);
                } while (accept(','));
                expect(')');
            }
            out.push_back(std::move(p));
        } while (accept(','));
        expect(']');
    }
    void parse_operands(Op& op, bool optional) {
        if (optional && peek().kind != Tok::Value) return;
        do {
            op.operands.push_back(operand());
            // `%view[%i, %j][%offsets]` (vector.gather and friends) appends both lists.
            while (lex_.adjacent('[')) parse_index_list(op.indices);
        } while (accept(','));
    }
    Attr parse_literal() {
        Attr a;
        const Token& t = peek();
        a.loc = t.loc;
        if (t.kind == Tok::Int) {
            a.kind = Attr::Kind::Int;
            a.i = take().i;
        } else if (t.kind == Tok::Float) {
            a.kind = Attr::Kind::Float;
            a.f = take().f;
        } else if (t.kind == Tok::Ident && (t.text == "true" || t.text == "false")) {
            a.kind = Attr::Kind::Int;
            a.i = take().text == "true";
        } else if (t.kind == Tok::Ident && (t.text == "inf" || t.text == "nan")) {
            a.kind = Attr::Kind::Float;
            a.f = take().text == "inf" ? INFINITY : NAN;
        } else {
            unexpected("literal");
        }
        return a;
    }

    // ---- statements
    void run_format(Op& op, const OpRule& rule) {
        for (const Step& s : program_of(rule)) {
            switch (s.kind) {
                case Step::Lit: op.attrs["value"] = parse_literal(); break;
                case Step::Pred: {
                    Token p = expect_kind(Tok::Ident, "comparison predicate");
                    Attr a;
                    a.kind = Attr::Kind::Ident;
                    a.s = p.text;
                    a.loc = p.loc;
                    op.attrs["pred"] = a;
                    expect(',');
                    break;
                }
                case Step::Ops: parse_operands(op, false); break;
                case Step::OptOps: parse_operands(op, true); break;
                case Step::Preds: parse_preds(op.preds); break;
                case Step::Dict:
                    if (peek().is('{')) {
                        const Location at = peek().loc;
                        parse_dict(op.attrs, 0);
                        // The newer kernel dialect's spelling, accepted because it is cheap;
                        // hrx-rs 0.10.x (the normative profile) writes clauses.
                        if (op.name == "kernel.barrier" && (op.attrs.count("ordering") || op.attrs.count("scope")))
                            d_.warning("EMULATOR/100",
                                       "portability: kernel.barrier with ordering/scope in an attribute dictionary is "
                                       "the newer kernel dialect's spelling; hrx-rs 0.10.x writes scope(...) and "
                                       "ordering(...) clauses",
                                       at);
                    }
                    break;
                case Step::Types: parse_types(op); break;
                case Step::OptTypes:
                    if (peek().is(':')) parse_types(op);
                    break;
                case Step::Callee: op.callee = expect_kind(Tok::Symbol, "symbol").text; break;
                case Step::Args:
                    expect('(');
                    if (!accept(')')) {
                        parse_operands(op, false);
                        expect(')');
                    }
                    break;
                case Step::Shape:
                    expect_word("shape");
                    parse_index_list(op.shape);
                    break;
                case Step::UsingDict:
                    if (accept_word("using")) parse_dict(op.attrs, 0);
                    break;
                case Step::Clauses: parse_clauses(op); break;
                case Step::ClauseOps:
                    while (peek().kind == Tok::Ident && peek().text.find('.') == std::string::npos) {
                        Token w = take();
                        Attr count;
                        count.kind = Attr::Kind::Int;
                        expect('(');
                        size_t before = op.operands.size();
                        parse_operands(op, true);
                        expect(')');
                        count.i = static_cast<int64_t>(op.operands.size() - before);
                        count.loc = w.loc;
                        op.attrs[w.text] = count;
                    }
                    break;
                case Step::Hash: {
                    if (peek().kind != Tok::Hash) unexpected("attribute ('#family<...>')");
                    Attr h = parse_hash(0);
                    op.attrs["family"] = (*h.dict)["family"];
                    op.attrs["params"] = (*h.dict)["params"];
                    break;
                }
                case Step::Range: parse_bounds(op); break;
                case Step::OptStr:
                    if (peek().kind == Tok::String) {
                        Attr a;
                        a.kind = Attr::Kind::String;
                        a.s = take().text;
                        op.attrs["message"] = a;
                    }
                    break;
                case Step::Kw: expect_word(s.word); break;
                case Step::Indices: parse_index_list(op.indices); break;
                case Step::CheckClauses: parse_check_clauses(op); break;
                case Step::AttrValue: op.attrs[s.word] = parse_attr_value(0); break;
                case Step::OptKw: accept_word(s.word); break;
                case Step::Rest: parse_rest(op); break;
                case Step::Regions:
                    do {
                        op.regions.push_back(scoped_region());
                    } while (accept_word("else") || accept_word("do"));
                    break;
                case Step::Opaque: skip_line_text(op.loc.line); break;
                case Step::Table: parse_table(op); break;
                case Step::Prefix:
                    while (peek().kind != Tok::Eof && peek().loc.line == op.loc.line && !peek().is(':')) {
                        if (peek().kind == Tok::Value) op.operands.push_back(operand());
                        else take();
                    }
                    break;
            }
        }
    }

    // The `rest` format step: whatever the line holds, kept as operands,
    // attributes and types (enough for the planner to refuse the op).
    void parse_rest(Op& op) {
        const uint32_t line = op.loc.line;
        auto here = [&] { return peek().kind != Tok::Eof && peek().loc.line == line; };
        while (here() && !peek().is(':') && !peek().is('}')) {
            if (peek().kind == Tok::Value) {
                op.operands.push_back(operand());
                while (lex_.adjacent('[')) parse_index_list(op.indices);
            } else if (peek().is('{')) {
                parse_dict(op.attrs, 0);
            } else if (peek().is('[')) {
                parse_index_list(op.shape);
            } else {
                take();  // keywords, punctuation, literals
            }
        }
        if (!here() || !accept(':')) return;
        if (peek().is('(')) {
            parse_type_list(op.operand_types);
            if (accept('A')) {
                if (peek().is('(')) parse_type_list(op.result_types);
                else
                    do op.result_types.push_back(parse_type());
                    while (accept(','));
            }
            return;
        }
        do op.operand_types.push_back(parse_type());
        while (accept(',') || accept_word("to"));
        if (accept('A')) {
            if (peek().is('(')) parse_type_list(op.result_types);
            else
                do op.result_types.push_back(parse_type());
                while (accept(','));
        }
    }

    // Whether the low.func.def starting at the next token is the hrx-rs 0.10.x
    // form `... asm { "..." }` (the word `asm` before the first `{` on its line).
    bool low_asm_form() {
        const std::string_view rest = lex_.source().substr(peek().begin);
        const std::string_view line = rest.substr(0, rest.find('\n'));
        const std::string_view head = line.substr(0, line.find('{'));
        for (size_t at = head.find("asm"); at != std::string_view::npos; at = head.find("asm", at + 1)) {
            const bool left = at == 0 || !(std::isalnum(static_cast<unsigned char>(head[at - 1])) || head[at - 1] == '_' || head[at - 1] == '.');
            const bool right = at + 3 >= head.size() || !(std::isalnum(static_cast<unsigned char>(head[at + 3])) || head[at + 3] == '_');
            if (left && right) return true;
        }
        return false;
    }

    // Modifiers and clauses up to an op's own `@name` (not the `@t` of
    // `target(@t)`), which becomes op.symbol.
    void skip_to_symbol(Op& op) {
        bool after_paren = false;
        while (peek().kind != Tok::Eof && peek().loc.line == op.loc.line) {
            Token t = take();
            if (t.kind == Tok::Symbol && !after_paren) {
                op.symbol = t.text;
                return;
            }
            after_paren = t.is('(');
        }
        unexpected("symbol");
    }

    // The `opaque` step and module-level catalogue ops: every token to the end
    // of `line`; a brace group (a region or a dictionary, over any number of
    // lines) is skipped as text and the line of its `}` continues.
    // With `symbol`, the first `@name` not written as a clause value (the
    // `@t` of `target(@t)`) is kept there: the op's own symbol.
    void skip_line_text(uint32_t line, std::string* symbol = nullptr) {
        bool after_paren = false;
        while (peek().kind != Tok::Eof && peek().loc.line == line) {
            if (peek().is('{')) {
                const uint32_t open = peek().loc.line;
                const std::string_view body = lex_.take_braced_text();
                line = std::max(line, last_line_of_braces(body, open));
                after_paren = false;
                continue;
            }
            Token t = take();
            if (symbol && symbol->empty() && t.kind == Tok::Symbol && !after_paren) *symbol = t.text;
            after_paren = t.is('(');
        }
    }
    // The line a brace group that opened on `line` closed on.
    static uint32_t last_line_of_braces(std::string_view body, uint32_t line) {
        return line + static_cast<uint32_t>(std::count(body.begin(), body.end(), '\n'));
    }
    // `{ 0 = (%a, %b), 1 = (%c, %d) } default(%e, %f)`: scf.lookup's table.
    // Operands: the selector (already read), then each row's values, the
    // default row last; attrs["case_keys"] lists the keys.
    void parse_table(Op& op) {
        parse_operands(op, false);
        Attr keys;
        keys.kind = Attr::Kind::List;
        keys.list = std::make_shared<AttrList>();
        keys.loc = op.loc;
        expect('{');
        while (!accept('}')) {
            keys.list->push_back(parse_attr_value(1));
            expect('=');
            expect('(');
            if (!accept(')')) {
                parse_operands(op, false);
                expect(')');
            }
            accept(',');
        }
        op.attrs["case_keys"] = keys;
        expect_word("default");
        expect('(');
        if (!accept(')')) {
            parse_operands(op, false);
            expect(')');
        }
        parse_types(op);
    }

    void parse_params(Op& op) {
        if (!lex_.adjacent('<')) return;
        take();
        if (accept('>')) return;
        do {
            const Token& t = peek();
            std::string p;
            if (t.kind == Tok::Symbol) p = "@" + take().text;
            else if (t.kind == Tok::Hash) {  // an encoding spec: encoding.isa<#ggml.q4_k>
                p = "#" + t.text;
                parse_attr_value(1);
            } else if (t.kind == Tok::Ident || t.kind == Tok::Int) {
                p = take().text;
                while (accept('|')) p += "|" + expect_kind(Tok::Ident, "flag").text;
                if (accept('=')) p += "=" + take().text;  // a requirement: encoding.matches<element_format = u4>
            } else if (accept('[')) {  // a lane or axis list: vector.shuffle<[3, 2, 1, 0]>
                p = "[";
                if (!accept(']')) {
                    do p += (p.size() > 1 ? "," : "") + expect_kind(Tok::Int, "integer").text;
                    while (accept(','));
                    expect(']');
                }
                p += "]";
            } else unexpected("parameter");
            op.params.push_back(std::move(p));
        } while (accept(','));
        expect('>');
    }

    // One statement into `ops`. Results are defined after the op (and its
    // regions) so an op cannot use its own results.
    void parse_statement(std::vector<Op>& ops) {
        std::vector<Token> results;
        if (peek().kind == Tok::Value) {
            do results.push_back(expect_kind(Tok::Value, "SSA value"));
            while (accept(','));
            expect('=');
        }
        const Token& nt = peek();
        if (nt.kind != Tok::Ident || nt.text.find('.') == std::string::npos) unexpected("op name");
        Token name = take();
        Op op;
        op.name = name.text;
        op.loc = name.loc;
        if (is_symbol_op(op.name))
            fail("STRUCTURE/011", "'" + op.name + "' defines a symbol and must be at module level", name.loc);
        parse_params(op);
        if (op.name == "scf.for") parse_for(op);
        else if (op.name == "scf.if") parse_if(op);
        else if (op.name == "scf.while") parse_while(op);
        else if (op.name == "scf.switch") parse_switch(op);
        else if (op.name == "pipeline.reduce") parse_reduce(op);
        else if (op.name == "kernel.launch") parse_launch(op);
        else {
            const OpRule* rule = find_rule(op.name);
            if (!rule)
                fail("PARSE/006", "unknown op '" + op.name + "' (check the dialect prefix and the op's spelling)",
                     name.loc);
            run_format(op, *rule);
        }
        if (op.name == "func.apply") newer_template_spelling(op);
        finish_results(op, results);
        ops.push_back(std::move(op));
    }
    void finish_results(Op& op, const std::vector<Token>& results) {
        if (results.empty()) return;
        if (op.result_types.empty() && op.name == "kernel.subgroup.shuffle" && !op.operand_types.empty()) {
            // `: T, i32, i32` types the operands; the results are the moved value and its validity.
            op.result_types = {op.operand_types[0], scalar_type(ScalarKind::I1)};
            op.result_types.resize(std::min<size_t>(results.size(), 2), op.operand_types[0]);
        }
        if (op.result_types.empty() && op.name == "kernel.subgroup.broadcast" && !op.operand_types.empty())
            op.result_types = {op.operand_types[0]};  // `: T, i32`: the value's type, not the lane's
        if (op.result_types.empty()) {
            if (result_is_i1(op.name)) op.result_types.assign(results.size(), scalar_type(ScalarKind::I1));
            else if ((op.name == "vector.isnanf" || op.name == "vector.isinff" || op.name == "vector.isfinitef") &&
                     op.operand_types.size() == 1 && op.operand_types[0].kind == TypeKind::Vector) {
                // A lanewise class test: the operand's lanes as i1 (`: vector<4xf32>` gives vector<4xi1>).
                Type t = op.operand_types[0];
                t.elem = ScalarKind::I1;
                const size_t x = t.spelling.rfind('x');
                if (x != std::string::npos) t.spelling = t.spelling.substr(0, x) + "xi1>";
                op.result_types.assign(results.size(), t);
            }
            else if (op.operand_types.size() == results.size()) op.result_types = op.operand_types;
            else if (!op.operand_types.empty()) op.result_types.assign(results.size(), op.operand_types.back());
        }
        if (op.result_types.size() != results.size())
            d_.error("PARSE/009",
                     "'" + op.name + "' defines " + std::to_string(results.size()) + " result(s) but its type gives " +
                         std::to_string(op.result_types.size()),
                     results[0].loc);
        for (size_t i = 0; i < results.size(); ++i) {
            Type t = i < op.result_types.size() ? op.result_types[i] : Type{};
            op.results.push_back(define(results[i].text, t, results[i].loc));
        }
    }

    // Note [Nesting limit]: regions nest at most kMaxNesting deep (a
    // function's body is level 1). Every later walk over the IR (verifier,
    // specialiser, planner, interpreter) recurses once per level, so the
    // parser refuses deeper input before it recurses itself; recover() then
    // skips the refused statement's braces iteratively. Calls add their
    // callee's depth; the planner bounds that sum by the same limit.
    void parse_region(Region& r) {
        r.loc = peek().loc;
        if (region_depth_ >= kMaxNesting)
            fail("PARSE/021", "regions nested more than " + std::to_string(kMaxNesting) + " levels deep", peek().loc);
        struct Level {
            int& d;
            explicit Level(int& x) : d(x) { ++d; }
            ~Level() { --d; }
        } level{region_depth_};
        expect('{');
        for (;;) {
            const Token& t = peek();
            if (t.is('}')) {
                take();
                return;
            }
            if (t.kind == Tok::Eof) {
                if (!eof_reported_) d_.error("PARSE/003", "unexpected end of input; expected '}'", t.loc);
                eof_reported_ = true;
                return;
            }
            const size_t start = t.begin;
            try {
                if (t.kind == Tok::Label) parse_block_label();
                else parse_statement(r.ops);
            } catch (ParseFail&) {
                recover(start, false);
            }
        }
    }
    // `^name:` or `^name(%a: T, ...):` opening a block of an unstructured
    // region (cfg.br and friends). The emulator runs structured regions only:
    // the label is read (its arguments defined) and the region stays one list
    // of ops; the planner refuses the branches (catalogue, EMULATOR/001).
    void parse_block_label() {
        take();
        std::vector<ValueId> args;
        if (lex_.adjacent('(')) parse_signature(args, nullptr);
        expect(':');  // its arguments are defined in the enclosing scope; the region's own args stay as they are
    }
    // `pipeline.reduce @fn from %src(%a, ...) to %dst(%b, ...)
    //    : (group, T...) to (group, U...) -> (R...)`
    void parse_reduce(Op& op) {
        op.callee = expect_kind(Tok::Symbol, "symbol").text;
        auto group_and_flows = [&](const char* kw) -> size_t {
            expect_word(kw);
            op.operands.push_back(operand());
            const size_t before = op.operands.size();
            expect('(');
            if (!accept(')')) {
                parse_operands(op, false);
                expect(')');
            }
            return op.operands.size() - before;
        };
        Attr count;
        count.kind = Attr::Kind::Int;
        count.loc = op.loc;
        count.i = static_cast<int64_t>(group_and_flows("from"));
        op.attrs["source_count"] = count;
        group_and_flows("to");
        expect(':');
        parse_type_list(op.operand_types);
        expect_word("to");
        parse_type_list(op.operand_types);
        expect('A');
        parse_type_list(op.result_types);
    }
    // Note [Check cases]
    //   `check.case [public] @name { ... check.return }` is a test harness: a
    //   flat SSA program of check.* ops (parameters, generators, expectations),
    //   index/scalar arithmetic and kernel.launch. The parser keeps it as a
    //   symbol op with one region; the emulator never plans it (it is not a
    //   kernel or pipeline), and hrxarray.loom.check() runs it. Clause values
    //   go to attrs[clause]: one value as itself, several (or `a to b`) as a
    //   List; SSA values also join the operands in order. A bare word (the
    //   sampling policy of check.param.range) is attrs[word] = Unit.
    //   `check.benchmark<@case> [@name] [{attrs}]` names a case to time.
    void parse_check_clauses(Op& op) {
        while (peek().kind == Tok::Ident && peek().text.find('.') == std::string::npos) {
            Token word = take();
            Attr a;
            a.loc = word.loc;
            if (!lex_.adjacent('(')) {
                op.attrs[word.text] = a;
                continue;
            }
            take();
            std::vector<Attr> items;
            if (!accept(')')) {
                do {
                    Attr v = parse_attr_value(1);
                    if (v.kind == Attr::Kind::Value) op.operands.push_back(v.value);
                    if (v.kind == Attr::Kind::Symbol && word.text == "callee") op.callee = v.s;
                    items.push_back(std::move(v));
                } while (accept(',') || accept_word("to"));
                expect(')');
            }
            if (items.size() == 1) {
                a = items[0];
            } else {
                a.kind = Attr::Kind::List;
                a.list = std::make_shared<AttrList>(std::move(items));
            }
            if (op.attrs.count(word.text)) d_.error("PARSE/020", "duplicate clause '" + word.text + "'", word.loc);
            op.attrs[word.text] = a;
        }
    }
    void parse_launch(Op& op) {
        op.callee = expect_kind(Tok::Symbol, "symbol").text;
        expect('[');
        if (!accept(']')) {
            parse_operands(op, false);
            expect(']');
        }
        Attr count;
        count.kind = Attr::Kind::Int;
        count.i = static_cast<int64_t>(op.operands.size());
        count.loc = op.loc;
        op.attrs["workload_count"] = count;
        expect('(');
        if (!accept(')')) {
            parse_operands(op, false);
            expect(')');
        }
        expect(':');
        expect('[');
        if (!accept(']')) {
            do op.operand_types.push_back(parse_type());
            while (accept(','));
            expect(']');
        }
        parse_type_list(op.operand_types);
    }
    void push_scope() { scopes_.emplace_back(); }
    void pop_scope() { scopes_.pop_back(); }

    // `[%lo to %hi step %s]` → three operands.
    void parse_bounds(Op& op) {
        expect('[');
        op.operands.push_back(operand());
        expect_word("to");
        op.operands.push_back(operand());
        expect_word("step");
        op.operands.push_back(operand());
        expect(']');
    }
    // `(%x = %init : T, ...)` of scf.for / scf.while: the inits become
    // operands; the names are defined later, in the region's scope.
    std::vector<std::pair<Token, Type>> parse_carried(Op& op) {
        std::vector<std::pair<Token, Type>> carried;
        if (!accept('(') || accept(')')) return carried;
        do {
            Token name = expect_kind(Tok::Value, "SSA value");
            expect('=');
            op.operands.push_back(operand());
            expect(':');
            carried.emplace_back(name, parse_type());
        } while (accept(','));
        expect(')');
        return carried;
    }
    // `scf.for %iv = [%lo to %hi step %s] [(%acc = %init : T, ...)] [-> (T...)] [unroll] { ... }`
    void parse_for(Op& op) {
        Token iv = expect_kind(Tok::Value, "induction variable");
        expect('=');
        parse_bounds(op);
        std::vector<std::pair<Token, Type>> carried = parse_carried(op);
        if (accept('A')) parse_type_list(op.result_types);
        parse_clauses(op);
        Region body;
        push_scope();
        Type iv_type = scalar_type(ScalarKind::Index);
        if (op.operands[0] != kNoValue) iv_type = (*values_)[op.operands[0]].type;
        body.args.push_back(define(iv.text, iv_type, iv.loc));
        for (auto& [tok, ty] : carried) body.args.push_back(define(tok.text, ty, tok.loc));
        parse_region(body);
        pop_scope();
        op.regions.push_back(std::move(body));
    }
    // A region with no arguments, whose names stay inside it.
    Region scoped_region() {
        Region r;
        push_scope();
        parse_region(r);
        pop_scope();
        return r;
    }
    void parse_if(Op& op) {
        op.operands.push_back(operand());
        if (accept('A')) parse_type_list(op.result_types);
        do {
            op.regions.push_back(scoped_region());
        } while (op.regions.size() == 1 && accept_word("else"));
    }
    // `scf.switch %sel [-> (T...)] { case K { ... } ... default { ... } }`:
    // regions {default, case...}, attrs["case_keys"] (ir.h). The verifier
    // checks the keys and the default.
    void parse_switch(Op& op) {
        op.operands.push_back(operand());
        if (accept('A')) parse_type_list(op.result_types);
        expect('{');
        Attr keys;
        keys.kind = Attr::Kind::List;
        keys.list = std::make_shared<AttrList>();
        keys.loc = op.loc;
        Region deflt;
        deflt.loc = op.loc;
        bool have_default = false;
        std::vector<Region> cases;
        while (!accept('}')) {
            const Token& w = peek();
            if (accept_word("case")) {
                Attr k = parse_attr_value(1);
                if (k.kind != Attr::Kind::Int) d_.error("PARSE/015", "scf.switch case key must be an integer literal", k.loc);
                keys.list->push_back(k);
                cases.push_back(scoped_region());
            } else if (accept_word("default")) {
                if (have_default) d_.error("STRUCTURE/014", "'scf.switch' has a second default region", w.loc);
                Region r = scoped_region();
                if (!have_default) deflt = std::move(r);
                have_default = true;
            } else {
                unexpected("'case', 'default' or '}'");
            }
        }
        if (!have_default) {
            d_.error("STRUCTURE/014", "'scf.switch' needs a default region", op.loc);
            Attr missing;
            missing.kind = Attr::Kind::Int;
            missing.i = 1;
            op.attrs["missing_default"] = missing;  // region 0 is a placeholder: not verified again
        }
        op.attrs["case_keys"] = keys;
        op.regions.push_back(std::move(deflt));
        for (Region& r : cases) op.regions.push_back(std::move(r));
    }
    void parse_while(Op& op) {
        std::vector<std::pair<Token, Type>> carried = parse_carried(op);
        if (accept('A')) parse_type_list(op.result_types);
        Region before, after;
        push_scope();
        for (auto& [tok, ty] : carried) before.args.push_back(define(tok.text, ty, tok.loc));
        parse_region(before);
        pop_scope();
        expect_word("do");
        push_scope();
        if (peek().is('(')) parse_signature(after.args, nullptr);
        parse_region(after);
        pop_scope();
        op.regions.push_back(std::move(before));
        op.regions.push_back(std::move(after));
    }

    // `(%a: T, %b: view<[%a]xf32>)`; declarations may omit the names.
    void parse_signature(std::vector<ValueId>& args, std::vector<Type>* types) {
        expect('(');
        in_signature_ = true;
        struct Reset {
            bool& f;
            ~Reset() { f = false; }
        } reset{in_signature_};
        if (accept(')')) return;
        do {
            if (peek().kind == Tok::Value) {
                Token name = take();
                expect(':');
                Type t = parse_type();
                if (types) types->push_back(t);
                args.push_back(define(name.text, t, name.loc));
            } else {
                Type t = parse_type();
                if (types) types->push_back(t);
            }
        } while (accept(','));
        expect(')');
    }

    // ---- module level
    void parse_top() {
        const Token& t = peek();
        if (t.kind == Tok::Hash) {
            // `#alias = #family<...>`: an encoding alias; kept out of the IR.
            Token alias = take();
            expect('=');
            Attr rec = parse_attr_value(0);
            aliases_[alias.text] = std::move(rec);
            return;
        }
        if (t.kind != Tok::Ident || t.text.find('.') == std::string::npos) {
            if (t.kind == Tok::Value) {
                // A plain statement at module level: parse it for its own
                // errors, then report the structure error.
                begin_function();
                struct End {
                    Parser& p;
                    ~End() { p.end_function(); }
                } end{*this};
                std::vector<Op> sink;
                Location loc = t.loc;
                parse_statement(sink);
                fail("STRUCTURE/011", "'" + (sink.empty() ? std::string("op") : sink[0].name) +
                                          "' is not a symbol definition and cannot appear at module level",
                     loc);
            }
            unexpected("op name");
        }
        Token name = take();
        Op op;
        op.name = name.text;
        op.loc = name.loc;
        if (!is_symbol_op(op.name)) {
            if (!find_rule(op.name) && !structural_ops().count(op.name))
                fail("PARSE/006", "unknown op '" + op.name + "' (check the dialect prefix and the op's spelling)",
                     name.loc);
            fail("STRUCTURE/011", "'" + op.name + "' is not a symbol definition and cannot appear at module level",
                 name.loc);
        }
        parse_params(op);
        begin_function();
        struct End {
            Parser& p;
            ~End() { p.end_function(); }
        } end{*this};
        const std::string& n = op.name;
        if (n == "amdgpu.target" || n == "aie2p.target" || n == "target.generic" || n == "target.decl") {
            op.symbol = expect_kind(Tok::Symbol, "symbol").text;
            if (peek().is('{')) parse_dict(op.attrs, 0);
        } else if (n == "config.decl") {
            op.symbol = expect_kind(Tok::Symbol, "symbol").text;
            expect(':');
            Token v;
            bool named = peek().kind == Tok::Value;
            if (named) {
                v = take();
                expect(':');
            }
            Type ty = parse_type();
            op.result_types.push_back(ty);
            if (named) op.results.push_back(define(v.text, ty, v.loc));
            if (accept_word("where")) parse_preds(op.preds);
        } else if (n == "config.def") {
            op.symbol = expect_kind(Tok::Symbol, "symbol").text;
            expect('=');
            op.attrs["value"] = parse_literal();
            expect(':');
            op.result_types.push_back(parse_type());
        } else if (n == "kernel.def" || n == "kernel.decl") {
            parse_clauses(op);
            op.symbol = expect_kind(Tok::Symbol, "symbol").text;
            Region cfg, body;
            push_scope();
            parse_signature(cfg.args, &op.operand_types);
            if (n == "kernel.def") parse_region(cfg);
            pop_scope();
            expect_word("launch");
            push_scope();
            parse_signature(body.args, &op.result_types);
            if (accept_word("where")) parse_preds(op.preds);
            if (n == "kernel.def") parse_region(body);
            pop_scope();
            // The signature types are the regions' argument types; keep
            // operand/result types free for the op's own (none).
            op.operand_types.clear();
            op.result_types.clear();
            op.regions.push_back(std::move(cfg));
            op.regions.push_back(std::move(body));
        } else if (n == "pipeline.def") {
            parse_clauses(op);
            op.symbol = expect_kind(Tok::Symbol, "symbol").text;
            Region body;
            parse_signature(body.args, nullptr);
            Attr spec;
            spec.kind = Attr::Kind::Int;
            spec.i = static_cast<int64_t>(body.args.size());
            op.attrs["spec_args"] = spec;
            expect_word("launch");
            parse_signature(body.args, nullptr);
            if (accept_word("where")) parse_preds(op.preds);
            parse_region(body);
            op.regions.push_back(std::move(body));
        } else if (n == "func.def" || n == "func.decl" || n == "template.decl" || n == "template.def" || n == "func.template") {
            parse_clauses(op, {"requires"});
            if (accept_word("requires")) op.attrs["requires"] = parse_attr_value(0);
            parse_clauses(op);
            op.symbol = expect_kind(Tok::Symbol, "symbol").text;
            Region body;
            std::vector<Type> arg_types;
            parse_signature(body.args, &arg_types);
            if (accept('A')) parse_type_list(op.result_types);
            parse_clauses(op, {"where"});
            if (accept_word("where")) parse_preds(op.preds);
            if (n == "func.def" || n == "template.def" || n == "func.template") {
                parse_region(body);
            } else {
                // Declarations keep their argument types on the op.
                op.operand_types = std::move(arg_types);
            }
            op.regions.push_back(std::move(body));
        } else if (n == "check.case") {
            parse_clauses(op);
            op.symbol = expect_kind(Tok::Symbol, "symbol").text;
            Region body;
            parse_region(body);
            op.regions.push_back(std::move(body));
        } else if (n == "check.benchmark") {
            // `check.benchmark<@case> [@name] [{attrs}]`: the case is params[0].
            if (peek().kind == Tok::Symbol) op.symbol = take().text;
            if (peek().is('{')) parse_dict(op.attrs, 0);
        } else if (n == "command.program.def" || ((n == "low.func.def" || n == "low.kernel.def") && !low_asm_form())) {
            // A command program, or the newer target-low form `low.func.def
            // target<set>(@t) @f(%a: reg<...>) -> (...) { low ops }`: modifiers
            // up to the name are kept as text, the signature and body parse.
            // The emulator runs neither (their catalogue refusals); a command
            // program keeps its body, a target-low body is checked and dropped
            // so nothing mistakes it for a Loom body to call.
            skip_to_symbol(op);
            Region body;
            push_scope();
            parse_signature(body.args, nullptr);
            if (accept_word("launch")) parse_signature(body.args, nullptr);
            if (accept('A')) parse_type_list(op.result_types);
            if (accept_word("where")) parse_preds(op.preds);
            parse_region(body);
            pop_scope();
            if (n == "command.program.def") op.regions.push_back(std::move(body));
        } else if (is_module_level_catalogue_op(n)) {
            // Note [Module-level catalogue ops]
            //   Module-level ops the emulator never plans as a kernel (global
            //   and metadata declarations, command programs, pass pipelines,
            //   opaque implementations, target-low kernels, LLVM targets) parse
            //   generically: the first `@symbol` names the op, the rest of the
            //   line and any braced body are skipped as text. Compiling such a
            //   symbol is refused with its catalogue code (specialize.cpp); a
            //   kernel in the same module compiles as if it were absent, which is
            //   their meaning for a kernel (globals are only reached through
            //   global.load/global.store, which are refused in a kernel body).
            skip_line_text(op.loc.line, n == "metadata.module" || n == "module.import" ? nullptr : &op.symbol);
        } else if (n == "low.func.def") {
            parse_clauses(op, {"asm"});
            op.symbol = expect_kind(Tok::Symbol, "symbol").text;
            Region sig;
            parse_signature(sig.args, &op.operand_types);
            if (accept('A')) parse_type_list(op.result_types);
            parse_clauses(op, {"asm"});
            expect_word("asm");
            if (!peek().is('{')) unexpected("'{'");
            Attr body;
            body.kind = Attr::Kind::String;
            body.s.assign(lex_.take_braced_text());
            op.attrs["asm"] = body;
        }
        op.values = values_;
        if (op.name == "func.template") newer_template_spelling(op);
        m_.ops.push_back(std::move(op));
    }

    // Note [func.template]
    //   The newer func dialect spells a template family without a
    //   declaration: `func.template<contract> target(@t) priority(n) @impl(...)
    //   -> (...) where [...] { ... func.return }` provides, `func.apply<contract>`
    //   demands. hrx-rs 0.10.x (the normative profile) writes template.decl /
    //   template.def<@family> / template.apply<@family> / template.return. The
    //   parser rewrites the newer spelling into the older one (an EMULATOR/100
    //   portability warning each) and declares each family once from its first
    //   provider's signature, so the verifier, specialiser and executors see
    //   one form.
    void newer_template_spelling(Op& op) {
        const std::string contract = op.params.empty() ? std::string() : op.params[0];
        if (contract.empty() || contract[0] == '@')
            fail("PARSE/003", "'" + op.name + "' names its contract without '@': " + op.name + "<contract>", op.loc);
        d_.warning("EMULATOR/100",
                   "portability: " + op.name + "<" + contract + "> is the newer func dialect's spelling; hrx-rs 0.10.x writes " +
                       (op.name == "func.apply" ? "template.apply<@family>" : "template.decl/template.def<@family>"),
                   op.loc);
        op.params[0] = "@" + contract;
        if (op.name == "func.apply") {
            op.name = "template.apply";
            return;
        }
        op.name = "template.def";
        for (Region& r : op.regions) returns_to_template(r);
        if (!families_.insert(contract).second) return;
        Op decl;
        decl.name = "template.decl";
        decl.loc = op.loc;
        decl.symbol = contract;
        decl.result_types = op.result_types;
        for (ValueId a : op.regions.at(0).args) decl.operand_types.push_back((*values_)[static_cast<size_t>(a)].type);
        decl.values = values_;
        decl.regions.emplace_back();
        m_.ops.push_back(std::move(decl));
    }
    static void returns_to_template(Region& r) {
        for (Op& o : r.ops) {
            if (o.name == "func.return") o.name = "template.return";
            for (Region& sub : o.regions) returns_to_template(sub);
        }
    }
    std::unordered_set<std::string> families_;  // contracts declared from a func.template
};

}  // namespace

// ---------------------------------------------------------------- entry

const char* scalar_name(ScalarKind k) {
    switch (k) {
        case ScalarKind::None: return "none";
        case ScalarKind::I1: return "i1";
        case ScalarKind::I8: return "i8";
        case ScalarKind::I16: return "i16";
        case ScalarKind::I32: return "i32";
        case ScalarKind::I64: return "i64";
        case ScalarKind::F8E4M3: return "f8E4M3";
        case ScalarKind::F8E5M2: return "f8E5M2";
        case ScalarKind::F16: return "f16";
        case ScalarKind::BF16: return "bf16";
        case ScalarKind::F32: return "f32";
        case ScalarKind::F64: return "f64";
        case ScalarKind::Index: return "index";
        case ScalarKind::Offset: return "offset";
    }
    return "none";
}

int scalar_bits(ScalarKind k) {
    switch (k) {
        case ScalarKind::I1: return 1;
        case ScalarKind::I8: case ScalarKind::F8E4M3: case ScalarKind::F8E5M2: return 8;
        case ScalarKind::I16: case ScalarKind::F16: case ScalarKind::BF16: return 16;
        case ScalarKind::I32: case ScalarKind::F32: return 32;
        case ScalarKind::I64: case ScalarKind::F64: case ScalarKind::Index: case ScalarKind::Offset: return 64;
        case ScalarKind::None: return 0;
    }
    return 0;
}

namespace {
std::string summary_of(const std::vector<Diagnostic>& diags) {
    const Diagnostic* first = nullptr;
    size_t errors = 0;
    for (const Diagnostic& d : diags) {
        if (d.severity != Diagnostic::Severity::Error) continue;
        if (!first) first = &d;
        ++errors;
    }
    if (!first) first = diags.empty() ? nullptr : &diags[0];
    if (!first) return "Loom compilation failed";
    std::string s = first->loc.line ? std::to_string(first->loc.line) + ":" + std::to_string(first->loc.column) + ": " +
                                          first->message
                                    : first->message;
    if (errors > 1) s += "\n(" + std::to_string(errors - 1) + " later error(s) suppressed as cascade)";
    return s;
}
}  // namespace

CompileError::CompileError(std::vector<Diagnostic> diagnostics)
    : Error(ErrorKind::Message, summary_of(diagnostics)), diagnostics_(std::move(diagnostics)) {}

ParsedModule parse_module(std::string_view source) {
    Diags d;
    auto m = std::make_shared<Module>();
    m->source_digest = sha256_hex(source);
    size_t bad = invalid_utf8_at(source);
    if (bad != std::string_view::npos) {
        // Report where the bad byte sits, counting code points up to it.
        Location loc{1, 1};
        for (size_t i = 0; i < bad; ++i) {
            unsigned char c = static_cast<unsigned char>(source[i]);
            if (c == '\n') {
                ++loc.line;
                loc.column = 1;
            } else if ((c & 0xC0) != 0x80) {
                ++loc.column;
            }
        }
        d.list.push_back({Diagnostic::Severity::Error, "PARSE/019", "invalid UTF-8 in source", loc});
        throw CompileError(std::move(d.list));
    }
    Parser p(source, d, *m);
    p.parse_module();
    // Each op's catalogue entry, once the module is complete (Note [Handlers]).
    const auto stamp = [](auto& self, std::vector<Op>& ops) -> void {
        for (Op& op : ops) {
            op.entry = static_cast<uint16_t>(catalogue_index(op.name));
            for (Region& r : op.regions) self(self, r.ops);
        }
    };
    stamp(stamp, m->ops);
    for (size_t i = 0; i < m->ops.size(); ++i) {
        const Op& op = m->ops[i];
        if (op.symbol.empty()) continue;
        const bool is_decl = op.name == "kernel.decl" || op.name == "func.decl" || op.name == "template.decl" ||
                             op.name == "config.decl" || op.name == "target.decl";
        auto it = m->symbols.find(op.symbol);
        if (it == m->symbols.end()) {
            m->symbols[op.symbol] = i;
            continue;
        }
        const Op& prev = m->ops[it->second];
        const bool prev_decl = prev.name == "kernel.decl" || prev.name == "func.decl" ||
                               prev.name == "template.decl" || prev.name == "config.decl" ||
                               prev.name == "target.decl";
        if (!is_decl && !prev_decl) {
            if (d.errors < Diags::kMaxErrors)
                d.error("SYMBOL/002",
                        "symbol '@" + op.symbol + "' is defined twice (first at line " +
                            std::to_string(prev.loc.line) + ")",
                        op.loc);
        } else if (!is_decl) {
            m->symbols[op.symbol] = i;  // a definition replaces its declaration
        }
    }
    if (d.errors <= Diags::kMaxErrors) {
        try {
            verify_module(*m, d);
        } catch (Diags::Stop&) {
        }
    }
    // Source order; the PARSE/012 stop stays last.
    std::stable_sort(d.list.begin(), d.list.end(), [](const Diagnostic& a, const Diagnostic& b) {
        auto key = [](const Diagnostic& x) { return std::make_tuple(x.code == "PARSE/012", x.loc.line, x.loc.column); };
        return key(a) < key(b);
    });
    std::vector<Diagnostic> warnings;
    for (const Diagnostic& x : d.list)
        if (x.severity != Diagnostic::Severity::Error) warnings.push_back(x);
    if (d.errors) throw CompileError(std::move(d.list));
    return {m, std::move(warnings)};
}

}  // namespace hrx::loom
