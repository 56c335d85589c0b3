// Loom's op catalogue: one entry per op of the dialect definitions
// (ROCm/hrx-system loom/py/loom/dialect/*/defs.py), read by the parser (which
// op names exist, and a generic format for ops with no rule of their own),
// the verifier (through the parser's rules) and the planner (why an op the
// interpreter has no handler for is refused). See Note [Op catalogue].
#pragma once
#include <string_view>
#include <vector>

namespace hrx::loom {

// Note [Op catalogue]
//   Whether an op is *executed* is not written here: it follows from the
//   interpreter's handler table (interp::op_supported, Ops::table() in
//   loom/interp.cpp), so an op gains "executed" by gaining a handler, and a
//   branch that adds handlers needs no edit here. What the catalogue keeps
//   is the op's name and dialect, its operand/result counts where fixed (-1:
//   variadic), and, for ops without a handler, the EMULATOR code and reason
//   the planner reports at plan time ("EMULATOR/001" with an empty reason is
//   the plain "valid Loom, not executed by the emulator"). `format` is the
//   parser's format program (parser.cpp, Note [Format programs]) for ops
//   the parser has no rule for; empty means "rest": operands, attributes and
//   types up to the end of the line, enough to parse valid Loom and refuse
//   it at plan time rather than fail with PARSE/006.
//
//   Source and version: the op names are those of every dialect's defs.py
//   (the scalar dialect's six submodules) read in full at the commits listed
//   in tests/test_loom_catalogue.py (DEFS_COMMITS), less the `test` dialect
//   (fixtures for Loom's own DSL, not part of the compiler). Where the newest
//   defs rename an op (kernel.subgroup.vote -> kernel.subgroup.vote.any/all),
//   both spellings are catalogued; amdgpu.target and aie2p.target come from
//   the hrx-rs 0.10.x profile the parser follows.
//
//   Refusal codes: EMULATOR/001 valid Loom the emulator does not execute
//   (yet); 002 code with no body it can run (target-low, LLVM asm and
//   intrinsics, opaque microkernels); 010 host launch programs (kernel.launch
//   and its schedules, command programs); 011 compiler and toolchain records
//   (pass pipelines, LLVM IR targets); 012 the check dialect's test harness
//   (hx.loom.check runs it). An empty `refusal` marks a module-level
//   declaration the emulator accepts and ignores because that is its meaning
//   for a kernel (global and metadata declarations, module.import: Note
//   [Module-level catalogue ops] in parser.cpp); op_executed() counts it as
//   executed and its `reason` says so. Ops that live outside kernels are
//   refused when their symbol (or the host function holding them) is
//   compiled (Note [Compiling a symbol the emulator does not plan]).
struct OpEntry {
    std::string_view name;
    std::string_view dialect;
    int operands = -1;
    int results = -1;
    std::string_view refusal = "EMULATOR/001";  // code when the interpreter has no handler
    std::string_view reason;                     // why; empty: not implemented yet
    std::string_view format;                     // parser format when the parser has no rule
};

const std::vector<OpEntry>& op_catalogue();
const OpEntry* catalogue_find(std::string_view name);
// 1 + the position of `name` in op_catalogue(); 0 when it has no entry. The
// parser stamps every op with it (Op::entry), so the interpreter finds an
// op's handler by indexing (Note [Handlers] in loom/interp.h).
int catalogue_index(std::string_view name);

}  // namespace hrx::loom
