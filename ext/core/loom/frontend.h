// The Loom frontend's entry points: parse + verify a module, and specialise
// one root symbol of it for a target with config values (reference loom.md
// §1.4, §1.8, §5.1). Errors are CompileError carrying every diagnostic.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "errors.h"
#include "loom/ir.h"

namespace hrx::loom {

// A failed parse, verify, specialisation or plan. what() is hrx-rs's summary
// (loom.md §6.3): the first error as "line:col: message" (message alone when
// line is 0), then "(N later error(s) suppressed as cascade)" when there are
// more. `diagnostics` keeps every one, in source order, errors and warnings.
class CompileError : public Error {
public:
    explicit CompileError(std::vector<Diagnostic> diagnostics);
    const std::vector<Diagnostic>& diagnostics() const noexcept { return diagnostics_; }

private:
    std::vector<Diagnostic> diagnostics_;
};

// How deep regions may nest, counting a function's body as one level and a
// call as its callee's depth (Note [Nesting limit] in parser.cpp): the parser
// refuses deeper source (PARSE/021), the planner deeper call chains and
// recursion (EMULATOR/006).
inline constexpr int kMaxNesting = 256;

// Tokenise, parse and verify `source`. Throws CompileError when any error
// diagnostic was emitted; warnings (portability) stay on the module.
struct ParsedModule {
    std::shared_ptr<const Module> module;
    std::vector<Diagnostic> warnings;
};
ParsedModule parse_module(std::string_view source);

// The exact compile targets the emulator knows.
inline constexpr const char* kGpuTarget = "gfx1151";
inline constexpr const char* kNpuTarget = "amd.xdna.strix_halo.17f0_11";

// One config value after binding: the Loom spelling parsed for the declared
// type (index/iN → integer, i1 → 0/1, fN → double).
struct ConfigConstant {
    ScalarKind type = ScalarKind::Index;
    int64_t i = 0;
    double f = 0.0;
};

// Target facts of the specialisation (loom.md §5.2, §5.3). For gfx targets
// the index carrier is 32 bits (the constant block packs an index as u32)
// unless the target record overrides it.
struct TargetFacts {
    std::string target;          // kGpuTarget or kNpuTarget
    int subgroup_size = 32;      // 0 for the NPU
    int index_bits = 32;
    int offset_bits = 64;
};

struct Specialization {
    std::string symbol;                          // root symbol, without '@'
    std::string target;                          // kGpuTarget or kNpuTarget
    std::map<std::string, std::string> config;   // key → Loom spelling ("1024")
};

// A root symbol bound to config values and a target: everything planning
// and execution need, and nothing they must re-derive from text.
struct Specialized {
    std::shared_ptr<const Module> module;
    std::string symbol;
    const Op* root = nullptr;                    // the kernel.def or pipeline.def
    TargetFacts facts;
    // Every config key reachable from the root → its value (config.def
    // defaults applied, predicates checked). Unused keys never appear.
    std::map<std::string, ConfigConstant> config;
    // Each template.apply reachable from the root → the template.def chosen.
    std::map<const Op*, const Op*> template_choice;
    // Canonical config text: "key=value;..." sorted, for cache keys.
    std::string canonical_config;
};

// Bind `spec` to `module` (HRX Module::compile's front half): validates the
// symbol and keys (non-empty ASCII alphanumerics, '.', '_', '-'), finds the
// root (kernel.def for gfx1151, pipeline.def for the NPU), checks target
// compatibility, binds config (require-resolved: every reachable config.get
// needs exactly one value; bindings of unused keys are ignored), checks the
// declarations' predicates and selects templates. Throws CompileError.
Specialized specialize(std::shared_ptr<const Module> module, const Specialization& spec);

}  // namespace hrx::loom
