// The array operations beyond provider.h's five families (Note [Array
// operations are dispatches] in provider/provider.h): indexing, sorting,
// searching, sets, scans, rearrangements, random draws and the statistics.
// Each is a description the array layer fills and submits as one dispatch
// on the compute lane's queue; the emulated provider runs it with the
// kernels library (provider/emulated/more_ops.cpp). Operands are Tensors
// (a binding, an offset, byte strides, a shape); an operand marked `stage`
// is read through a dense copy made before anything is written. Host slots
// (shared_ptr members) receive the answers the host waits for.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/indexing.h"
#include "kernels/lapack.h"
#include "kernels/random.h"
#include "kernels/stats.h"
#include "provider/provider.h"

namespace hrx::provider {

// An operation with nothing to do (a zero-size result): it orders its uses,
// as a barrier packet does, and runs nothing.
struct EmptyOp : ArrayOp {
    EmptyOp() : ArrayOp(Family::Empty) {}
};

// (least, greatest) of the integer array `idx` into *range.
struct IndexRangeOp : ArrayOp {
    IndexRangeOp() : ArrayOp(Family::IndexRange) {}
    Tensor idx;
    std::shared_ptr<std::pair<int64_t, int64_t>> range;
};

// An advanced-index gather (dense = out) or scatter (dense = the values
// broadcast over the result's dimensions, written into v) of v at `axes` by
// the int64-readable `indices` (array/indexing.h, Note [Advanced index
// layout]: bshape, rest and insert_at are the layout's).
struct AdvancedIndexOp : ArrayOp {
    explicit AdvancedIndexOp(bool scatter) : ArrayOp(scatter ? Family::IndexScatter : Family::IndexGather) {}
    Tensor v;
    std::vector<int> axes;
    std::vector<Tensor> indices;
    Dims bshape;
    std::vector<int> rest;
    int insert_at = 0;
    kernels::IndexMode mode = kernels::IndexMode::Raise;
    Tensor dense;
};

// *count = the number of true elements of `mask` (read as bool).
struct MaskCountOp : ArrayOp {
    MaskCountOp() : ArrayOp(Family::MaskCount) {}
    Tensor mask;
    std::shared_ptr<int64_t> count;
};

// out = v's sub-blocks where `mask` (over v's axes [axis, axis + mask.ndim)) is true.
struct CompressOp : ArrayOp {
    CompressOp() : ArrayOp(Family::Compress) {}
    Tensor v, mask, out;
    int axis = 0;
    int insert_at = 0;
};

// out (bool) = whether each element of x1 is in x2, compared as `cmp`.
struct IsInOp : ArrayOp {
    IsInOp() : ArrayOp(Family::IsIn) {}
    Tensor x1, x2, out;
    DType cmp = DType::Float64;
    bool invert = false;
};

// dst = src's rows (the last axis) sorted, or their argsort (int64) when `indices`.
struct SortOp : ArrayOp {
    SortOp() : ArrayOp(Family::Sort) {}
    Tensor src, dst;
    bool descending = false;
    bool indices = false;
};

// out (int64) = where x2's elements go in the sorted x1 (through `sorter`
// when has_sorter), compared as `common`.
struct SearchSortedOp : ArrayOp {
    SearchSortedOp() : ArrayOp(Family::SearchSorted) {}
    Tensor x1, x2, sorter, out;
    bool has_sorter = false;
    bool right = false;
    DType common = DType::Float64;
};

// out (ndim, size) int64 = the indices of in's nonzero elements; *count = how many.
struct NonzeroOp : ArrayOp {
    NonzeroOp() : ArrayOp(Family::Nonzero) {}
    Tensor in, out;
    std::shared_ptr<int64_t> count;
};

// The distinct elements of `in` (rows: its sub-arrays along axis 0) in
// order, with first index, inverse and counts; *count = how many.
struct UniqueOp : ArrayOp {
    explicit UniqueOp(bool rows) : ArrayOp(rows ? Family::UniqueRows : Family::Unique) {}
    Tensor in, values, index, inverse, counts;
    bool equal_nan = true;
    std::shared_ptr<int64_t> count;
};

// dst = the running sum (product) of src's rows (the last axis), dst's rows
// starting with the identity when include_initial.
struct CumulativeOp : ArrayOp {
    CumulativeOp() : ArrayOp(Family::Cumulative) {}
    Tensor src, dst;
    bool product = false;
    bool include_initial = false;
};

// out = in at the outer product of one index table per axis (empty: every
// index). The tables become byte offsets in place when it runs (a repeat
// of a large array has a table as long as its result: no second copy), so
// the dispatch runs once.
struct OuterGatherOp : ArrayOp {
    OuterGatherOp() : ArrayOp(Family::OuterGather) {}
    Tensor in, out;
    mutable std::vector<std::vector<int64_t>> index;
};

// out = in's matrices (the last two axes, out dense) with the elements
// above (lower) or below diagonal k zeroed.
struct TriangleOp : ArrayOp {
    TriangleOp() : ArrayOp(Family::Triangle) {}
    Tensor in, out;
    int64_t k = 0;
    bool lower = true;
};

// One draw of hx.random (kernels/random.h, Note [Random streams]) into the
// dense `out`: reals, integers (one range, or one per value), or choice's
// indices (and, with has_src, src's rows at them).
struct RandomOp : ArrayOp {
    RandomOp() : ArrayOp(Family::Random) {}
    enum class Kind : uint8_t { Real, Integers, IntegersEach, Uniform, Cdf, Sample } kind = Kind::Real;
    uint64_t key = 0, counter = 0;
    int64_t n = 0;  // values (choice: indices) drawn
    kernels::RandomDist dist = kernels::RandomDist::Uniform;
    double a = 0, b = 1;
    uint64_t low = 0, range = 0;
    std::vector<uint64_t> lows, ranges;  // IntegersEach
    int64_t population = 0;
    std::vector<double> probs;  // Cdf: the cumulative probabilities; Sample: weights (empty: equal)
    bool sorted = false;
    bool has_src = false;
    Tensor src;
    int64_t row_bytes = 0;
    Tensor out;
    std::string name;  // for the out-of-memory message
};

// np.bincount's passes over the int64-readable x (weights w as float64 when
// weighted): Grown counts into *grown up to `cap`; Range finds x's range
// into *range; Count counts into out of nbins.
struct BincountOp : ArrayOp {
    BincountOp() : ArrayOp(Family::Bincount) {}
    enum class Pass : uint8_t { Grown, Range, Count } pass = Pass::Grown;
    Tensor x, w, out;
    bool weighted = false;
    int64_t cap = 0, nbins = 0;
    std::shared_ptr<kernels::GrownCounts> grown;
    std::shared_ptr<std::pair<int64_t, int64_t>> range;
};

// out's first `bytes` (out dense) = host bytes at `from`, which `keep` holds alive.
struct HostWriteOp : ArrayOp {
    HostWriteOp() : ArrayOp(Family::HostWrite) {}
    Tensor out;
    const void* from = nullptr;
    std::shared_ptr<const void> keep;
    int64_t bytes = 0;
};

// out (nbins) = the histogram of x (flat, read as ct) over `edges` (uniform
// when `uni`), counts or the float64 weights summed in `acc`.
struct HistogramOp : ArrayOp {
    HistogramOp() : ArrayOp(Family::Histogram) {}
    Tensor x, edges, w, out;
    bool weighted = false, uni = false;
    kernels::UniformBins u;
    DType acc = DType::Int64, ct = DType::Float64;
    int64_t nbins = 0;
};

// out = the median of each row (the last axis) of x computed in ct.
struct MedianOp : ArrayOp {
    MedianOp() : ArrayOp(Family::Median) {}
    Tensor x, out;
    DType ct = DType::Float64;
    bool skip_nan = false;
};

// out (len, dense) = the correlation of a and v in dt, from lag `left`.
struct CorrelateOp : ArrayOp {
    CorrelateOp() : ArrayOp(Family::Correlate) {}
    Tensor a, v, out;
    int64_t left = 0, len = 0;
    DType dt = DType::Float64;
};

// NumPy's ufunc.at: a[pos] = at(a[pos], vals) in order, vals (ct) broadcast
// to pos's shape; nothing is written and *bad gets the first out-of-bounds
// position bound when one leaves [-size, size).
struct UfuncAtOp : ArrayOp {
    UfuncAtOp() : ArrayOp(Family::UfuncAt) {}
    Tensor a, pos, vals;
    kernels::AtOp at = kernels::AtOp::Add;
    DType dt = DType::Float64, ct = DType::Float64;
    std::shared_ptr<std::optional<int64_t>> bad;
};

// hx.linalg's operation `op` (kernels/lapack.h) on `a` (and `b` for Solve)
// into the dense `outs`.
struct LinalgDispatchOp : ArrayOp {
    LinalgDispatchOp() : ArrayOp(Family::Linalg) {}
    kernels::LinalgOp op = kernels::LinalgOp::Solve;
    Tensor a, b;
    bool has_b = false;
    std::vector<Tensor> outs;
};

// hx.fft's transform of `in` into `out` (its two bindings): a host function
// the queue runs in order with the other dispatches, as hipLaunchHostFunc
// does. Its body is NumPy's pocketfft entered through Python (Note [FFTs
// through NumPy's pocketfft] in array/fft.h): hrxarray writes no FFT, so the
// provider supplies none and runs the caller's; it must not keep pointers
// into the bindings after it returns.
struct FftOp : ArrayOp {
    FftOp() : ArrayOp(Family::Fft) {}
    Tensor in, out;
    std::function<void()> body;
};

// A loaded program (hx.loom.ufunc's, Note [Loom ufunc operands]) invoked
// once over `count` elements of `shape`: each of its bindings (inputs, then
// outputs) is an operand bound as it is (`direct`: its binding from the
// operand's offset on), or a dense temporary of the program's `dtype`,
// filled from the operand (an input: cast and broadcast by its strides, or
// its inline scalar) before the invocation, or copied into the operand (an
// output) after it. Temporaries are aligned to `alignment` (at least 64).
struct StagedInvokeOp : ArrayOp {
    StagedInvokeOp() : ArrayOp(Family::StagedInvoke) {}
    struct Binding {
        bool direct = false;
        ArrayArg at;  // the operand (its dtype, strides over shape)
        DType dtype = DType::Float32;  // the program's
    };
    std::shared_ptr<const Executable> program;
    Dims shape;
    int64_t count = 0;
    size_t nin = 0;
    uint64_t alignment = 64;
    std::vector<Binding> bindings;
};

}  // namespace hrx::provider
