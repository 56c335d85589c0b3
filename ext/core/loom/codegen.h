// Loom GPU kernels lowered to LLVM IR text (issue 25, "Native code"): the
// planned kernel's device body becomes one function that runs whole
// workgroups, the work-items of a chunk as SIMD lanes (pocl's design:
// work-items are vector lanes, uniform values stay scalar, varying control
// flow is masked execution). The Python layer (hrxarray/_loom_native.py)
// compiles the text with llvmlite and hands the entry address back to the
// program, which then runs dispatches through it.
//
// Note [Native Loom executor]
//   One semantics, two executors: the native code must give the bytes the
//   interpreter (loom/interp.cpp) gives, for every program
//   it accepts. So it computes what the interpreter computes, the same way:
//   integers of every width live sign-extended in 64 bits (i1 as 0/1) and
//   are wrapped to their type after each op, f32 in float, f64 in double,
//   no fp contraction, library math (exp, log, tanh, pow, fmod, fmin/fmax,
//   minimum/maximum) through the same C++ functions (native_symbols),
//   every active access bounds-checked in the interpreter's order (index per
//   axis, then bytes) and a failure reported as an ErrorRecord from which
//   the program builds the interpreter's ExecutionError text.
//   The one difference allowed is a NaN's payload: LLVM may commute the
//   operands of a float op, and which operand's payload a NaN result carries
//   follows their order (every NaN stays a NaN, every other bit is equal).
//   And a program racing on workgroup memory (a work-item reading what
//   another wrote with no barrier between) has no defined result: the
//   interpreter runs the workgroup in lockstep, the native code chunk by
//   chunk; checked mode (always interpreted) reports such races.
//
//   What the generator lowers: index/scalar integer and float arithmetic,
//   compares, casts, selects, constants and config values, coordinates,
//   view.load/view.store through views of bindings and of workgroup memory,
//   scf.if/for/while (varying conditions and trip counts as masks), subgroup
//   collectives (a chunk is then one subgroup: N = the subgroup size), and
//   kernel.barrier by pocl's region splitting: the body is cut at barriers
//   (at its top or inside uniform scf.if without results and uniform
//   scf.for, Note [Barriers in loops with results]), each
//   barrier-free stretch runs as a loop over the workgroup's chunks, and
//   varying values live per chunk in scratch across the cuts.
//   Also f16/bf16 values (Note [Native f16 and bf16]) and some vectors
//   (Note [Native Loom vectors]).
//   What it does not know (other vectors, tiles, private allocas, atomics,
//   calls, kernel.exit, scf.switch, ...) makes it return a reason
//   instead of IR, and the program keeps the interpreter; that is decided
//   once, when the program is planned, and checked mode always interprets.
//
//   The function generated is
//     i32 @loom_wg(ptr ctx, ptr err, ptr scratch, i64 first_wg, i64 n_wg)
//   running workgroups [first_wg, first_wg + n_wg) (linear ids); it returns
//   0, or 1 after filling *err; `scratch` holds Generated::scratch_bytes.
//   Inside, each workgroup runs in chunks of N work-items (linear ids
//   chunk..chunk+N-1, the ones past the workgroup masked off); kernels the
//   interpreter folds (no workgroup memory, barriers or subgroups) fill each
//   chunk with consecutive work-items of the whole range instead, so that
//   narrow workgroups do not leave lanes idle, and their workgroup ids vary
//   between lanes as in the interpreter's batches. Errors name
//   the lowest failing lane of the first chunk that fails; the interpreter
//   runs a whole batch op by op, so where two different ops fail in
//   different chunks the two executors can name different failures.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "loom/frontend.h"

namespace hrx::loom {

struct Param;

namespace native {

// Work-items per chunk (SIMD lanes of the generated code).
inline constexpr int kNativeLanes = 16;
// Work-items per chunk of a folded kernel (no workgroup memory, barriers or
// subgroups: nothing ties a chunk to the hardware's lanes). Four times the
// vector width divides the scalar work per work-item (the chunk's mask and
// bounds checks) for more registers. With 32 lanes Loom add at 65,536
// float32 took 17.5 us instead of 23.2 with 16 (64 lanes: 16.8), 2026-12-05.
// Once the index vectors left the chunk's common path (Note [Lane 0 as a
// scalar]) the scalar work was what remained: 64 lanes took the add ufunc
// at 65,536 from 12.3-13.2 to 11.1-11.3 us, and exp over 1 M from 0.59 ms
// (32 lanes, before) to 0.44-0.45 ms, one thread, 2026-12-05.
inline constexpr int kFoldedLanes = 64;
// ... except kernels that divide varying integers (rope's row and pair of a
// work-item): their vector index math (a 64-bit division through doubles,
// then gathers) spills at 64 lanes. Rope over 512 x 32 x 128 took 14-16 ms
// with 64 lanes against 11-12 ms with 32 (one thread, busy host).
inline constexpr int kFoldedLanesDividing = 32;
// Kernels split at barriers keep each varying value per work-item, for
// workgroups of at most this many work-items (larger ones are interpreted).
inline constexpr int64_t kMaxSplitItems = 1024;

// What the generated code reads (layout fixed: the IR addresses its fields
// by byte offset).
struct Ctx {
    uint8_t* const* bases = nullptr;   // per buffer binding, signature order
    const uint64_t* sizes = nullptr;   // bytes of each binding
    const uint8_t* constants = nullptr;
    int64_t workgroups[3] = {1, 1, 1};
    int64_t workgroup_size[3] = {1, 1, 1};
};

enum ErrorKind : int64_t {
    kNoError = 0,
    kIndexOutOfBounds = 1,   // a = index, b = axis, c = extent
    kBytesOutside = 2,       // a = first byte, b = end, c = binding number
    kDivisionByZero = 3,
    kIndexDivNegative = 4,
    kLoopStep = 5,           // a = step (uniform loops), lane < 0
    kNegativeExtent = 6,     // a = extent
    kFootprintOutOfBounds = 7,  // a vector's [a, a + d) on axis b of extent c
};

// What a failing access or op reports (filled by the generated code).
struct ErrorRecord {
    int64_t op = -1;      // index into Generated::ops
    int64_t kind = kNoError;
    int64_t wg = 0;       // linear workgroup id
    int64_t item = -1;    // linear work-item id in the workgroup; -1: no lane named
    int64_t a = 0, b = 0, c = 0;
    int64_t d = 0;        // kBytesOutside: the buffer's size; kFootprintOutOfBounds: the vector's extent
};

struct Generated {
    std::string ir;       // LLVM IR text; empty when refused
    std::string reason;   // why not ("" when ir is set)
    std::vector<const Op*> ops;  // ErrorRecord::op → the op
    // Bytes of per-call scratch the code needs (workgroup memory, then the
    // per-chunk values of kernels split at barriers), 64-byte aligned.
    uint64_t scratch_bytes = 0;
    // Largest workgroup (work-items) the code runs; 0: any.
    int64_t max_items = 0;
    // Names of workgroup allocas, buffer numbers after the bindings (the
    // interpreter's BufObj::name, for out-of-bounds messages).
    std::vector<std::string> buffer_names;
};

// Lowers `spec`'s kernel.def (device signature `params`, in order) to LLVM
// IR, or says why not. `folded`: the interpreter runs this program in
// batches spanning workgroups (its uniform values then exclude workgroup
// ids, which changes which lane an error names).
Generated generate(const Specialized& spec, const std::vector<Param>& params, bool folded);

// Whether the generator lowers op `name` in some form (a GPU kernel using it
// can compile to native code; a rarer form or type of it can still keep the
// kernel in the interpreter, and Generated::reason names it).
bool op_native(std::string_view name);

// name → address of every helper function the generated code may call.
std::map<std::string, uint64_t> native_symbols();

}  // namespace native
}  // namespace hrx::loom
