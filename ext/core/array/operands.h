// The operands of array operations as the core sees them, whatever language
// called: device arrays, host data already converted (by NumPy, in the
// binding), and scalars with their NEP 50 typing; plus what an operation
// needs from the layer that embeds the core (CallEnv) and the rules every
// elementwise-like operation shares: Python-scalar conversion, weak-scalar
// resolution, the runtime and placement an operation runs in.
//
// Owners: the binding (ext/bind/bind_ufunc.cpp) only turns Python objects
// into these descriptions and wraps results; elementwise.h, reductions.h and
// matmul.h own the operations' semantics.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "array/array.h"
#include "array/host_transfer.h"
#include "array/ops.h"
#include "runtime/runtime.h"

namespace hrx {

// A number given as a scalar operand. Weak (NEP 50: a Python bool, int,
// float or complex) takes its dtype from the typed operands; strong (a
// NumPy scalar or 0-d host array) has `dtype`, its value already in `value`.
struct Scalar {
    enum class Kind : uint8_t { Bool, Int, Float, Complex };
    // Where an integer's value lives: `i`, `u` (above int64), or beyond 64
    // bits (then `text` is its decimal, `d` its double, `d_overflows` when
    // even a double cannot hold it).
    enum class IntRange : uint8_t { Int64, UInt64, Beyond };

    Kind kind = Kind::Int;
    bool weak = true;
    DType dtype = DType::Float64;  // strong scalars
    IntRange range = IntRange::Int64;
    bool b = false;
    bool d_overflows = false;
    int64_t i = 0;
    uint64_t u = 0;
    double d = 0;        // Float, and Beyond integers
    double re = 0, im = 0;
    std::string text;    // Beyond integers: decimal; Complex: the caller's spelling (repr)
    alignas(16) uint8_t value[16] = {};  // strong scalars, in `dtype`
};

// One operand of an operation.
struct Input {
    enum class Kind : uint8_t { Device, Host, Scalar };
    Kind kind = Kind::Device;
    const Array* device = nullptr;  // Device: alive for the call
    host_transfer::HostBlock host;  // Host: memory the embedder keeps alive for the call
    Scalar scalar;
    // Device and host operands' dtype; weak scalars get theirs in resolve_weak.
    DType dtype = DType::Float64;
    Array uploaded;  // host data once uploaded

    const Array& array() const { return device ? *device : uploaded; }
    const Dims& shape() const;
};

// The runtime and placement an operation runs in.
struct Context {
    std::shared_ptr<RuntimeCore> rt;
    Placement placement;
    bool have = false;
};

// What the core needs from the layer that embeds it (the Python binding's
// hrxarray.default_runtime()).
struct CallEnv {
    // The default runtime and placement, for an operation without device operands.
    std::pair<std::shared_ptr<RuntimeCore>, Placement> (*defaults)();
};

// NumPy's rule for storing the number `s` in an array of `dt`: Python ints
// exactly or OverflowError (NumPy 2's message), Python floats into integer
// dtypes through int() (ValueError for NaN, OverflowError for infinity and
// out-of-range values), complex only into complex dtypes (TypeError), strong
// scalars by a cast from their own dtype. Messages name `op`.
Operand scalar_operand(const Scalar& s, DType dt, const std::string& op);

// The context takes the runtime and placement of the first device array it
// sees; ValueError naming `op` when a later one belongs to another runtime.
void note_array(Context& cx, const Array& a, const std::string& op);
// The default runtime and placement when no device array was seen.
void finish_context(Context& cx, const CallEnv& env);
// Host operands become arrays in the context's placement.
void upload(std::span<Input> inputs, Context& cx, const CallEnv& env, const std::string& op);

// NEP 50: weak scalars take the kind-compatible dtype of the typed operands
// (`mask` says which take part in promotion); for comparisons an integer
// outside that dtype compares in one that holds it (NumPy 2 is exact there).
void resolve_weak(std::span<Input> inputs, const bool* mask, bool comparison);
// The dtype a weak scalar of `kind` takes beside typed operands that promote
// to `typed` (`any`: there are some): resolve_weak's rule, one owner.
DType weak_dtype(Scalar::Kind kind, bool any, DType typed);
// NEP 50's result type of typed dtypes (promoted left to right) and weak
// scalars of the given kinds: hx.result_type. Message when `typed` is empty.
DType result_type(std::span<const DType> typed, std::span<const Scalar::Kind> weak);

// The input's operand (a scalar converted to its resolved dtype); array
// operands borrow the input's Array.
Operand to_operand(const Input& in, const std::string& op);

// "dtype('float32')", as NumPy's casting messages spell a dtype.
std::string np_dtype_str(DType t);

// The usual refusals of operand `a` of a task on `lane`, before its result is allocated.
void preflight_read(const Array& a, Lane lane, const std::string& op);

}  // namespace hrx
