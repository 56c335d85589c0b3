// Elementwise operations, casts and reductions of the emulated GPU's compute
// lane: NumPy's ufunc semantics over strided N-d operands in host memory.
// The array layer (ext/core/array) resolves shapes, broadcasting, dtypes and
// memory overlap, then calls these from a lane thread; nothing here knows
// about the runtime or Python.
//
// Note [Elementwise numerics]: results equal NumPy's (with ml_dtypes for
// bfloat16) for the same loop: integer arithmetic wraps (two's complement);
// float16 and bfloat16 loops compute in float32 and round the result once to
// the storage type (round to nearest even), as NumPy and ml_dtypes do; float
// floor_divide/remainder follow NumPy's npy_divmod; integer floor_divide and
// remainder by zero give 0 (NumPy warns and gives 0 too), MIN // -1 wraps to
// MIN; shifts by a count outside [0, bits) give 0 (-1 for a right shift of a
// negative number); maximum/minimum propagate NaN and return the same zero
// NumPy does for +0/-0 ties (the second operand, the first for float16);
// sign keeps a bfloat16 -0 (ml_dtypes) but gives +0 for other floats
// (NumPy). Float floor_divide with an infinite operand is floor(a / b), the
// array API's special cases (NumPy gives NaN for inf // 2 and -1 for
// -1 // inf). nextafter of float16/bfloat16 steps in the 16-bit format.
// Transcendental functions (exp, exp2, log, log1p, expm1, log2, log10,
// logaddexp, logaddexp2, cbrt, sin, cos, tan, tanh, sinh, cosh, the inverse
// trigonometric and hyperbolic functions, arctan2, hypot) are hrx::fmath's
// (kernels/fmath.h), the implementation Loom kernels use: float32 within 1
// ulp of the correctly rounded result on every host (Note [Loom math
// accuracy] in fmath.cpp), float64 the C library's (hypot and cbrt excepted:
// glibc's double hypot differs between x86-64 and arm64, its cbrt is 3 ulp
// off). fmax/fmin, fmod, gcd, lcm and heaviside are exact. They differ from NumPy's own SIMD
// implementations, which are not correctly rounded either, by a few units in
// the last place (measured: at most 2 ULP for float32, 3 for float64, 1 for
// float16 and bfloat16; tests/test_elementwise_kernels.py); float power
// still uses the C library's pow; everything else is bit-exact,
// except that NaN payloads and NaN signs are not reproduced. Complex loops:
// Note [Complex numerics] in elementwise_complex.cpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "kernels/dtype.h"

namespace hrx::kernels {

// Every elementwise operation, named as NumPy names the ufunc.
enum class Ufunc : std::uint8_t {
    // binary arithmetic
    Add, Subtract, Multiply, Divide, FloorDivide, Remainder, Power, Maximum, Minimum,
    // comparisons (bool results)
    Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual,
    // logical (bool results, any numeric inputs) and bitwise (bool and integers)
    LogicalAnd, LogicalOr, LogicalXor, BitwiseAnd, BitwiseOr, BitwiseXor, LeftShift, RightShift,
    // unary
    Negative, Positive, Absolute, Sign, Exp, Log, Log1p, Expm1, Sqrt, Square, Sin, Cos, Tan, Tanh,
    Floor, Ceil, Trunc, Rint, LogicalNot, Invert, Isnan, Isinf, Isfinite, Conjugate,
    Sinh, Cosh, Arcsin, Arccos, Arctan, Arcsinh, Arccosh, Arctanh, Reciprocal,
    // the array API's remaining float functions (NumPy's names)
    Arctan2, Copysign, Hypot, Log2, Log10, Logaddexp, Nextafter, Signbit,
    // NumPy's further ufuncs (not in the array API)
    Cbrt, Exp2, Fmax, Fmin, Fmod, Heaviside, Logaddexp2, Gcd, Lcm,
    // where(cond, x, y): internal ternary; its loops are "?XX->X"
    Where,
    Count_
};
inline constexpr int kUfuncCount = static_cast<int>(Ufunc::Count_);

// The reduction identity of a binary ufunc.
enum class Identity : std::uint8_t { None, Zero, One, AllOnes, False, True };

// One inner loop: the dtypes the inputs are cast to and the dtype of the result.
struct UfuncLoop {
    DType in[3];
    DType out;
};

struct UfuncInfo {
    const char* name;      // NumPy's name: "add", "floor_divide", "absolute", "rint", "invert", "where"
    std::uint8_t nin;
    std::uint8_t nout;     // always 1
    Identity identity;     // None for ops without a reduction identity (maximum, minimum, ...)
    bool has_reduce;       // binary ops NumPy can reduce (add, multiply, maximum, minimum, logical_*, bitwise_*)
    const UfuncLoop* loops;  // in NumPy's search order
    std::uint8_t nloops;
};

const UfuncInfo& ufunc_info(Ufunc op) noexcept;
bool ufunc_from_name(std::string_view name, Ufunc* out) noexcept;
// The loop NumPy picks for these input dtypes (nin of them; already resolved
// from Python scalars by the caller): for one input, the first loop its dtype
// casts to safely; for more, the first loop the promoted dtype of the inputs
// (promote_types) casts to safely, except that divide of integers or bools
// takes the float64 loop (NumPy's true division), a comparison of a signed
// integer with uint64 takes the exact mixed loop ("lL->?" / "Ll->?"), and
// where promotes only its last two inputs (the condition goes to bool).
// nullptr when no loop fits, and where NumPy refuses a bool operand that
// would otherwise fit the int8 loop: negative, positive and sign of bool,
// subtract of two bools (the caller raises TypeError naming the op and
// dtypes). BFP16 inputs never resolve.
const UfuncLoop* resolve_loop(Ufunc op, const DType* inputs) noexcept;

// A strided operand: `data` points at element [0, ..., 0]; `strides` has one
// byte stride per dimension (0 broadcasts, negative walks backwards).
struct StridedArg {
    std::uint8_t* data;
    DType dtype;
    const std::int64_t* strides;
};

// out = op(inputs...) over `shape` (ndim dimensions, ndim may be 0 for one
// element). Each input is cast from its dtype to loop.in[i] as needed and the
// result from loop.out to out.dtype (copy_cast's conversions). `where`, if
// not null, is a bool operand (another dtype counts as its truth value):
// elements where it is false keep their old value. out may
// be the very same memory as an input (identical data and strides: in place);
// any other overlap is the caller's to resolve. Large calls (about 2^20
// elements of an add, fewer of costlier ops) are split over the kernel pool;
// results never depend on the split. Throws an hrx::Error of kind Data for
// inputs NumPy refuses inside the loop (integer power with a negative exponent
// where `where` is true: "Integers to negative integer powers are not
// allowed."; Note [Data checks are not device faults] in errors.h), checked
// before anything is written, and std::invalid_argument for a loop that is not one of op's or
// ndim above 64. Needs no heap memory; uses about 24 KiB of stack. Safe to
// call from any number of threads at once.
void ufunc_run(Ufunc op, const UfuncLoop& loop, int ndim, const std::int64_t* shape, const StridedArg* inputs,
               const StridedArg& out, const StridedArg* where);

// dst = src cast to dst.dtype (NumPy's astype with casting="unsafe"; numeric
// dtypes only, BFP16 is converted by the bfp16 codec: std::invalid_argument).
// float -> bool is x != 0 (NaN is true); conversions to float16/bfloat16 round
// once from the exact value; float -> integer truncates, and gives 0 for NaN,
// +-inf and values the target cannot hold (ml_dtypes' rule; NumPy leaves
// those to the C compiler). Note [Cast semantics] in casts.cpp has the
// details. src and dst must not overlap unless identical. Same-dtype
// contiguous copies are a memcpy; large casts are split over the pool.
void copy_cast(int ndim, const std::int64_t* shape, const StridedArg& src, const StridedArg& dst);

// A new C-contiguous copy of `src` (ndim dimensions of `shape`) in dtype
// `dt` (any numeric; never empty: one byte for zero elements), by copy_cast;
// a BFP16 src (its strides its blocks', the last axis's unused) decodes
// through float32 rows. The dense operand copies of matmuls and of array
// operations that want contiguous input.
std::vector<std::uint8_t> dense_copy(int ndim, const std::int64_t* shape, const StridedArg& src, DType dt);

// The float16 <-> float32 conversion path in use: "f16c" or "portable".
const char* half_cast_path() noexcept;
// Test hook: forces the portable float16 and bfloat16 conversion paths (true)
// or restores the fastest (false), process-wide, so that tests can compare
// the paths; results are identical by design.
void force_portable_half_casts(bool on) noexcept;

// Reduces `in` over the dimensions d with reduce[d] true, writing `out`, which
// has the same ndim with stride 0 on every reduced dimension (keepdims
// layout). `op` is a binary ufunc with has_reduce; inputs are cast to `acc`
// (float16/bfloat16 accumulate in float32), the accumulation starts from the
// identity (or from the first element for ops without one: the reduced
// extent must then be nonzero, which the caller checks; a zero extent of an
// op with an identity writes the identity), float add uses pairwise
// summation in a fixed order (Note [Reduction order] in reduce_impl.h: the
// result depends only on the values and their C order, not on strides,
// layout or threads), and maximum/minimum propagate NaN. The accumulated
// value is rounded to `acc`; if divisor is nonzero it is then divided by it
// in float64 and rounded to `acc` again (NumPy's mean), before the final cast
// to out.dtype. Bitwise ops need a bool or integer acc. Throws
// std::invalid_argument (before writing anything) for an op without
// has_reduce, a non-numeric dtype, or a bitwise op on a float or complex acc, and
// std::bad_alloc if its scratch cannot be had (reductions that keep a
// non-innermost dimension or split one long sequence over the pool allocate
// some; the rest use the stack). Where +0 and -0 tie for the maximum or
// minimum, which of them comes out is not specified. Safe to call from any
// number of threads; large reductions use the pool.
void reduce_run(Ufunc op, DType acc, int ndim, const std::int64_t* shape, const bool* reduce,
                const StridedArg& in, const StridedArg& out, double divisor);

// argmax (max = true) or argmin over dimension `axis`, or over the whole
// array in C order when axis is -1; out is int64 with stride 0 on the reduced
// dimension (on every dimension when axis is -1). The first extreme wins and a
// NaN counts as the extreme (the first NaN), as NumPy. The reduced extent must
// be nonzero (std::invalid_argument otherwise, as for an out dtype other than
// int64, a complex input or a bad axis).
void arg_reduce_run(bool max, int ndim, const std::int64_t* shape, int axis, const StridedArg& in,
                    const StridedArg& out);

}  // namespace hrx::kernels
