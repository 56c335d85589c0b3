// The in-memory form of a parsed Loom module (hrx-rs 0.10.x spelling,
// reference loom.md). The parser (loom/parser.*) builds it, the verifier
// (loom/verify.*) checks it, the specialiser binds config values, the
// planner (loom/plan.*) plans it, and the interpreter (loom/interp.*) or
// native code (loom/codegen.*) runs it when a provider invokes the plan. No Python
// headers, no runtime headers: this is plain data.
//
// Note [Loom op fields]
//   Every operation is one generic `Op`; what the custom format of each op
//   spells lands in fixed fields, the same for every op of a shape, so that
//   the verifier and the executor read ops without knowing the text:
//
//   name       the full op name ("index.add").
//   params     the words inside the `<...>` written right after the name, in
//              order: `kernel.workitem.id<x>` → {"x"}, `buffer.alloca<private>`
//              → {"private"}, `vector.fragment<lhs>` → {"lhs"},
//              `vector.reduce<maxnumf>` → {"maxnumf"}, `scalar.addi<nsw>` →
//              {"nsw"}, `pipeline.def<kernel>` → {"kernel"},
//              `template.def<@fam>` / `template.apply<@fam>` → {"@fam"} (the
//              sigil kept), `amdgpu.target<gfx11-generic>` → {"gfx11-generic"}.
//   operands   the SSA values used, in source order, *excluding* the entries
//              of bracketed index lists and of `shape [...]` lists, the
//              values inside predicates, and values inside attribute
//              dictionaries. Examples:
//                index.add %a, %b                     {a, b}
//                index.cmp ult, %a, %b                {a, b}     attrs["pred"]
//                view.load %v[%i, 0]                  {v}        indices {i, 0}
//                view.store %x, %v[%i]                {x, v}     indices {i}
//                vector.store %x, %v[%i]              {x, v}     indices {i}
//                vector.insert %x into %v[%j]         {x, v}     indices {j}
//                vector.extract %v[%j]                {v}        indices {j}
//                buffer.view %b[%off]                 {b}        indices {off}
//                buffer.alloca<workgroup> align(16) %n {n}       attrs["align"]
//                buffer.assume.alignment %a, %b {minimum_alignment = 64} {a, b}
//                vector.encode %x using %s            {x, s}
//                vector.fragment<lhs> %d shape [%m, %k] using {schema = %s : T}
//                                                     {d}  shape {m, k}  attrs["schema"] = value s
//                vector.fragment.store<result> %p, %v[0, 0] shape [%m, %n]
//                                                     {p, v}  indices {0, 0}  shape {m, n}
//                vector.mma %l, %r, %i                {l, r, i}
//                kernel.launch.config workgroups(a,b,c) workgroup_size(d,e,f) [cluster_size(g,h,i)]
//                                                     {a..f[, g..i]}
//                scf.for %iv = [%lo to %hi step %s](%acc = %init : T, ...)
//                                                     {lo, hi, s, init...}
//                scf.if %c                            {c}
//                scf.while(%x = %init : T, ...)       {init...}
//                scf.condition %c, %f...              {c, f...}
//                scf.select %c, %a, %b                {c, a, b}
//                group.create %n                      {n}
//                pipeline.read %view on %g            {view, g}
//                pipeline.scatter %view across %g     {view, g}
//                pipeline.stage @fn on %g(%in...)     {g, in...}   callee "fn"
//                pipeline.write %flow to %view        {flow, view}
//                func.call @f(%a, ...)                {a, ...}     callee "f"
//                template.apply<@fam>(%a, ...)        {a, ...}     params {"@fam"}
//                low.invoke @f(%a, ...)               {a, ...}     callee "f"
//   results    the SSA values defined (left of `=`), in order.
//   indices    the bracketed mixed static/SSA index list after a view, vector
//              or buffer operand (`[%row, 0]`).
//   shape      the `shape [...]` list of vector.fragment / fragment.store.
//   operand_types / result_types
//              the types written after `:` and after `->`. For `A to B` casts
//              (index.cast, scalar.extsi, ...) operand_types {A},
//              result_types {B}. Ops whose format writes one type for
//              operands and result (`index.add ... : index`) record it in
//              operand_types and again in result_types; the parser fills
//              result_types from the op's rule when the text leaves them
//              implicit, so every result has a type.
//   attrs      named attributes: `{k = v}` dictionaries, keyword clauses
//              (scope(x) → "scope", ordering(x) → "ordering", align(N) →
//              "align", unroll → "unroll", export("n") → "export",
//              target(@t) → "target" (symbol), retain/public/pure/host/device
//              → unit attrs of that name, linkage(x) → "linkage"), the
//              comparison predicate of cmp ops ("pred"), the literal of
//              constants ("value"), `#family<k=v, ...>` of encoding.define
//              ("family" string, its parameters as a Dict under "params"),
//              `{cluster_size = 8}` of collectives.
//   preds      predicate lists (`[range(%v, 1, 10), lt(%i, %n)]`) of
//              index.assume / scalar.assume / config.decl / `where` clauses.
//   symbol     the `@name` a symbol-defining op defines (kernel.def, func.def,
//              pipeline.def, template.def, config.decl/def, targets, ...).
//   callee     the `@name` an op refers to (config.get, func.call,
//              pipeline.stage, low.invoke, kernel.launch).
//   regions    nested regions in source order. kernel.def: {launch-config
//              region (args = workload signature), device body (args = device
//              signature)}. func.def / template.def: {body (args = the
//              signature)}. pipeline.def: {body (args = specialisation
//              arguments then launch bindings; attrs["spec_args"] = count)}.
//              scf.for: {body (args = iv, then carried values)}. scf.if: {then
//              [, else]}. scf.while: {before (args = carried), after (args =
//              the `do(...)` arguments)}. scf.switch: {default, case...}
//              with attrs["case_keys"] = the cases' keys (a List of Int, in
//              source order, one per case region). low.func.def keeps its asm body
//              unparsed (attrs["asm"] = the raw text) and has no region.
//
// Values are numbered per function-like op (kernel.def, func.def, ...) and
// live in that op's `values` table; nested regions share their enclosing
// function's table. ValueId is an index into it.
//
//   What the parser adds where the list above is silent (compatible; the
//   frontend helper's branch, loom-front):
//   - Signatures: func.def/template.def declare results in result_types.
//     Declarations keep a region with args only (no ops): kernel.decl two
//     (workload, device), func.decl/template.decl one, whose argument types
//     are also in operand_types. kernel.def's signature types are its
//     regions' argument types (operand_types/result_types stay empty).
//   - config.decl: results {the named `%v` its predicates use} when named,
//     result_types {T}, preds; its `values` table holds `%v`. config.def:
//     attrs["value"], result_types {T}. Targets: params {kind}, attrs = the
//     `{...}` record (subgroup_size, device_profile, ...).
//   - Clauses: attrs[word] = the clause value (Symbol, String, Ident, Int;
//     a List when it has several); `word<...>(...)` (low.func.def's
//     `target<amd.xdna.aie2p.array>(@t)`) also sets attrs[word + "_kind"]
//     (String). template.def: attrs["priority"] (Int), attrs["requires"].
//   - kernel.launch.config: attrs["workgroups"], ["workgroup_size"],
//     ["cluster_size"] = Int count of the values each clause contributed.
//   - scf.for / scf.while: carried types are the regions' argument types;
//     operand_types stay empty; result_types from `-> (...)`.
//   - Literals: `true`/`false` → Int 1/0, `inf`/`nan`/`-inf` → Float.
//     kernel.assert's string → attrs["message"]. A `{k = %v : T}` entry is
//     Attr::Value with `type`.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace hrx::loom {

struct Location {
    uint32_t line = 0;    // 1-based; 0 = unknown
    uint32_t column = 0;  // 1-based, in code points
};

using ValueId = int32_t;
inline constexpr ValueId kNoValue = -1;

// Element and scalar types. Index and Offset are the address domains.
enum class ScalarKind : uint8_t {
    None,
    I1, I8, I16, I32, I64,
    F8E4M3, F8E5M2, F16, BF16, F32, F64,
    Index, Offset,
};

const char* scalar_name(ScalarKind k);           // "i32", "index", ...
int scalar_bits(ScalarKind k);                   // 1, 8, ..., 64 (index/offset: 64)
inline bool scalar_is_float(ScalarKind k) { return k >= ScalarKind::F8E4M3 && k <= ScalarKind::F64; }
inline bool scalar_is_int(ScalarKind k) { return k >= ScalarKind::I1 && k <= ScalarKind::I64; }
inline bool scalar_is_address(ScalarKind k) { return k == ScalarKind::Index || k == ScalarKind::Offset; }

enum class TypeKind : uint8_t {
    Scalar,    // index, offset, iN, fN (elem holds which)
    Buffer,
    View,      // view<dims x elem[, layout]>
    Vector,    // vector<dims x elem>
    Tile,      // tile<dims x elem[, enc]>
    Tensor,
    Flow,      // pipeline.flow<tile<...>> (inner holds the tile)
    Group,
    Encoding,  // encoding<role> (role in `role`)
    Opaque,    // anything else the parser accepts but nothing executes (reg<...>, tokens)
};

// One dimension: a static extent or `[%v]`, an index value in scope.
struct Dim {
    int64_t extent = 0;         // static extent (when value == kNoValue)
    ValueId value = kNoValue;   // dynamic extent
    bool is_dynamic() const { return value != kNoValue; }
};

struct Type {
    TypeKind kind = TypeKind::Opaque;
    ScalarKind elem = ScalarKind::None;  // Scalar: itself; View/Vector/Tile/Tensor: element type
    std::vector<Dim> dims;               // View/Vector/Tile/Tensor
    std::string role;                    // Encoding: "schema", "layout", ...
    std::string layout;                  // View/Tile: layout or encoding text, "" = dense row-major
    std::string spelling;                // the type as written (diagnostics, Opaque)
    std::shared_ptr<Type> inner;         // Flow: the tile type
    // View/Tile layout as the parser resolved it (Note [View layouts] in
    // parser.cpp): Dense (none written, or encoding.layout.dense), Strided
    // (static element strides in layout_strides), Value (an encoding<layout>
    // SSA value, layout_value), Other (any other encoding: not honoured).
    enum class Layout : uint8_t { Dense, Strided, Value, Other };
    Layout layout_form = Layout::Dense;
    std::vector<int64_t> layout_strides;
    ValueId layout_value = kNoValue;
};

// Attribute values.
struct Attr;
using AttrList = std::vector<Attr>;
using AttrDict = std::map<std::string, Attr>;
struct Attr {
    enum class Kind : uint8_t { Unit, Int, Float, String, Symbol, Ident, Value, Type, List, Dict };
    Kind kind = Kind::Unit;
    int64_t i = 0;       // Int (also Float's integral spelling is not used)
    double f = 0.0;      // Float
    std::string s;       // String, Symbol (no '@'), Ident (enum word, flag set "a|b")
    ValueId value = kNoValue;  // Value
    std::shared_ptr<Type> type;     // Type (also the `: T` of `{schema = %s : T}`)
    std::shared_ptr<AttrList> list;
    std::shared_ptr<AttrDict> dict;
    Location loc;
};

// One entry of an index list or predicate argument: a static integer or
// float, or an SSA value.
struct IndexEntry {
    ValueId value = kNoValue;
    int64_t constant = 0;
    bool is_value() const { return value != kNoValue; }
};

struct PredArg {
    ValueId value = kNoValue;
    bool is_float = false;
    int64_t i = 0;
    double f = 0.0;
    bool is_value() const { return value != kNoValue; }
};

// `range(%v, lo, hi)` (inclusive), `mul(%v, k)`, `pow2(%v)`, `eq/ne/lt/le/gt/ge(%v, x)`,
// `min/max`, `not_nan/not_inf/finite`.
struct Predicate {
    std::string name;
    std::vector<PredArg> args;
    Location loc;
};

struct Op;

struct Region {
    std::vector<ValueId> args;   // block arguments
    std::vector<Op> ops;
    Location loc;                // the opening brace
};

struct Op {
    std::string name;
    // 1 + the op's position in the catalogue (catalogue_index), 0 for a name
    // it lacks; set by parse_module once the module is complete.
    uint16_t entry = 0;
    Location loc;                // the op name's position (results start the statement)
    std::vector<std::string> params;
    std::vector<ValueId> operands;
    std::vector<ValueId> results;
    std::vector<IndexEntry> indices;
    std::vector<IndexEntry> shape;
    std::vector<Type> operand_types;
    std::vector<Type> result_types;
    AttrDict attrs;
    std::vector<Predicate> preds;
    std::string symbol;
    std::string callee;
    std::vector<Region> regions;
    // Function-like ops (kernel.def/decl, func.def/decl, pipeline.def,
    // template.decl/def) own the value table of everything nested in them.
    struct ValueInfo {
        std::string name;        // without '%'
        Type type;
        Location loc;            // where it is defined
    };
    std::shared_ptr<std::vector<ValueInfo>> values;

    bool has_attr(const std::string& k) const { return attrs.count(k) != 0; }
    const Attr* attr(const std::string& k) const {
        auto it = attrs.find(k);
        return it == attrs.end() ? nullptr : &it->second;
    }
};

// Whether `fn` (a call's, stage's or template selection's target) has a
// body to run: a definition, not a declaration, whose first region holds
// ops. The parser gives declarations a region too (their signature's
// arguments, no ops), so an empty region list alone does not tell.
inline bool has_body(const Op* fn) {
    if (!fn || fn->regions.empty() || fn->regions[0].ops.empty()) return false;
    const std::string& n = fn->name;
    return !(n.size() > 5 && n.compare(n.size() - 5, 5, ".decl") == 0);
}

// A diagnostic with Loom's identity (domain/code) and shape (loom.md §6).
struct Diagnostic {
    enum class Severity : uint8_t { Note, Warning, Error };
    Severity severity = Severity::Error;
    std::string code;       // "PARSE/001", "TYPE/003", "EMULATOR/001", ...
    std::string message;
    Location loc;
};

// A whole module: its top-level symbol ops in source order.
struct Module {
    std::vector<Op> ops;
    std::string source_digest;   // hex SHA-256 of the UTF-8 source
    // Top-level symbol → index into ops (definitions; declarations only when
    // no definition exists).
    std::map<std::string, size_t> symbols;
    const Op* find(const std::string& symbol) const {
        auto it = symbols.find(symbol);
        return it == symbols.end() ? nullptr : &ops[it->second];
    }
};

}  // namespace hrx::loom
