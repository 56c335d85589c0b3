// Loom GPU kernels as elementwise functions (hx.loom.ufunc): the kernel's
// workload signature is (%count: index), its device signature
// (%count: index, scalars..., inputs..., outputs...). A call takes the
// operands the binding described (operands.h) and runs the one rule every
// elementwise function follows (elementwise.h): NEP 50 weak scalars,
// NumPy's broadcasting, out= checks, every check before anything is
// allocated; its one loop is the Loom program, run as one task on the GPU
// compute lane over the flattened broadcast shape.
//
// Note [Loom ufunc operands]: the program binds each operand as one dense
// buffer of the kernel's element type and `count` elements. Operands that
// already are that (a C-contiguous device array of the kernel's dtype and the
// broadcast shape, aligned as the kernel's footprint asks) are bound as they
// are; the others (scalars, host data, other dtypes, broadcast or strided
// arrays) are staged into a dense temporary inside the dispatch, as the
// provider stages ufunc_task's overlapping inputs. An out= that is not dense,
// or that shares memory with an input, gets the program's result through a
// temporary, copied into it in the same dispatch (NumPy's overlap rule: the inputs are read before out
// is written). So a call is one submission whatever its operands.
//
// Note [Loom ufunc launches]: everything that does not depend on the call is
// worked out once, in define(): the parameter layout, nin/nout, element
// types. What depends on the element count and the device scalars (the
// launch program's grid, the footprints the bindings must cover, the loaded
// executable with its constant block) is cached per (provider, count,
// constants, checked), so a call at a repeated size and scalars only packs
// its constants and looks them up. A call whose operands all bind as they
// are (the kernel's dtypes, the broadcast shape, C-contiguous, aligned, no
// output overlapping another operand) is one dispatch of the cached kernel
// on the compute lane's provider queue, as a graph's kernel entry is; a call
// that stages casts, broadcasts or strides is one StagedInvokeOp dispatch
// (provider/array_ops.h), which stages around one invocation (Note [Loom
// ufunc operands]).
#pragma once
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "array/operands.h"
#include "runtime/programs.h"

namespace hrx::loom {
struct Param;
}

namespace hrx::loom_ufunc {

struct Launch;

// A Loom GPU kernel as an elementwise function, as define() worked it out.
struct Definition {
    Artifact artifact;
    std::string who;  // "loom.ufunc('axpy')": what errors name
    int nin = 0;
    int nout = 0;
    std::vector<DType> dtypes;         // per buffer binding, inputs first
    std::vector<std::string> scalars;  // the device scalars after %count, in signature order
    // The constant block's layout: %count, then `scalars` (parameters of artifact.program).
    std::vector<const loom::Param*> slots;
    size_t constant_bytes = 0;

    // Note [Loom ufunc launches]; bounded, cleared when full. `last` is the
    // launch the previous call used and `last_key` its key: a call that
    // repeats it (the usual loop) compares the key bytes, with no string
    // made and no hash taken.
    mutable std::mutex mu;
    mutable std::unordered_map<std::string, std::shared_ptr<const Launch>> launches;
    mutable std::string last_key;
    mutable std::shared_ptr<const Launch> last;
};

// The definition of `artifact` (a Loom GPU artifact) as a ufunc with `nin`
// inputs and `nout` outputs (nullopt: inferred from the accesses, inputs up
// to the first written buffer). ValueError naming `who` when the signatures
// are not the convention's, the split is impossible, an input is written or
// an output not, or a buffer has no element type.
std::shared_ptr<Definition> define(const Artifact& artifact, std::optional<int> nin, std::optional<int> nout);

// One device scalar of a call, by name (the binding's parse of a keyword).
struct NamedScalar {
    std::string name;
    ScalarArg value;
};

// outs = kernel(inputs...) with the device `scalars`. `outs` is empty (new
// results, in the inputs' placement) or has one array per output, each of
// the broadcast shape and the kernel's output dtype. `dtype` (optional) must
// be the kernel's output dtype (there is one loop). Returns the new results,
// or nothing when writing into outs. TypeError/ValueError naming the ufunc.
std::optional<std::vector<Array>> call(const CallEnv& env, const Definition& def, std::span<Input> inputs,
                                       std::span<const Array* const> outs, std::span<const NamedScalar> scalars,
                                       const DType* dtype);

// The element type of a Loom scalar kind as an array dtype; false when none.
bool dtype_of(loom::ScalarKind kind, DType* out);

}  // namespace hrx::loom_ufunc
