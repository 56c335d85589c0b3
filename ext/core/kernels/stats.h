// Counting, binning, selection and sliding dot products of the emulated
// devices: the kernels behind bincount, histogram, median and
// convolve/correlate (array/stats.cpp moves data into the dense int64,
// float32 and float64 buffers these take).
//
// Note [Counting order]: integer counts are exact, so they are split over the
// kernel pool (one private histogram per chunk, added in chunk order). Sums of
// float weights are sequential in element order, one bin at a time, as
// NumPy's bincount (`out[x[i]] += w[i]` in float64, from 0.0) and NumPy's
// histogram (that bincount per block of 65,536 elements, each block's sums
// rounded to the weights' dtype and added to the running result) compute
// them: the same bits as NumPy on every host, and independent of the pool.
//
// Note [Sliding dot order]: output k of a correlation is the sum over the
// kernel's taps j (ascending, from 0, products and sums rounded one at a
// time: the build forbids fused multiply-adds) of a[k - left + j] * v[j],
// taps falling outside `a` skipped as NumPy's correlate skips them. Blocks
// of outputs run the same per-output order in vector lanes, so every path
// gives the same bits.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/dtype.h"

namespace hrx::kernels {

// The least and greatest of the n int64 at x (n > 0).
void int_range(const std::int64_t* x, std::int64_t n, std::int64_t* lo, std::int64_t* hi);

// One pass of bincount that sizes its own result: the counts (w null) or the
// float64 weight sums (Note [Counting order]) of the n int64 at x, in a
// vector of max(x) + 1 entries, and x's least value. A value above `cap`
// stops the pass with fits = false (the caller sizes the result from x's
// range and counts again); a negative value is skipped (lo < 0 reports it).
struct GrownCounts {
    std::vector<std::int64_t> counts;
    std::vector<double> sums;
    std::int64_t lo = 0;
    bool fits = true;
};
void bincount_grown(const std::int64_t* x, const double* w, std::int64_t n, std::int64_t cap, GrownCounts& r);

// counts[b] = occurrences of b among the n int64 at x, for every b < nbins
// (every x must be in [0, nbins)); counts is zeroed first.
void bincount(const std::int64_t* x, std::int64_t n, std::int64_t nbins, std::int64_t* counts);
// sums[b] = the float64 sum of w[i] over x[i] == b in element order (Note
// [Counting order]); sums is zeroed first.
void bincount_weighted(const std::int64_t* x, const double* w, std::int64_t n, std::int64_t nbins, double* sums);

// numpy.histogram's scaling of equal bins: first/last are the outer edges
// (converted to the compute dtype `ct`, Float32 or Float64, the dtype of the
// data and the edges), denom = last - first as NumPy computes it. A value's
// index is ((x - first) / denom) * nbins, x - first in ct and the rest in ct,
// or in float64 when `wide` (NumPy divides a float32 difference by a float64
// or integer denom in float64).
struct UniformBins {
    double first = 0, last = 0, denom = 1;
    bool wide = false;
};
// The bin of each of the n elements of `data` (dtype ct) among the nbins bins
// of the nbins + 1 ascending `edges` (dtype ct), into bin (int64; -1 for an
// element outside [edges[0], edges[nbins]] or NaN). The last bin includes its
// right edge. With `uniform`, NumPy's computed index and its corrections
// against the edges (numpy.histogram's uniform-bin path); otherwise a binary
// search (its searchsorted path, the same bins).
void histogram_bins(DType ct, const std::uint8_t* data, std::int64_t n, const std::uint8_t* edges, std::int64_t nbins,
                    const UniformBins* uniform, std::int64_t* bin);
// counts[b] = the number of the n elements of `data` in bin b
// (histogram_bins' bins, counted without storing them, as bincount counts).
void histogram_counts(DType ct, const std::uint8_t* data, std::int64_t n, const std::uint8_t* edges,
                      std::int64_t nbins, const UniformBins* uniform, std::int64_t* counts);
// counts[b] = occurrences of b among the n bins (-1 skipped), as bincount.
void count_bins(const std::int64_t* bin, std::int64_t n, std::int64_t nbins, std::int64_t* counts);
// out[b] (dtype acc: Float32, Float64 or Int64) = NumPy's histogram sum of
// the weights w (float64) of bin b: per block of 65,536 elements a float64
// sum in element order, rounded to acc and added to out (Note [Counting order]).
void histogram_weighted(const std::int64_t* bin, const double* w, std::int64_t n, std::int64_t nbins, DType acc,
                        std::uint8_t* out);

// The median of each of `rows` contiguous rows of n > 0 elements of `data`
// (dtype Float32 or Float64; NaN if the row holds a NaN) into out (the same
// dtype): NumPy's median, the mean of the middle element or of the middle
// two in that dtype (((+0.0 + lo) + hi) / 2: NumPy's mean sums from +0.0).
// Short rows partition a copy; long ones select by radix (Note [Radix
// selection]); `data` is not modified. With skip_nan (nanmedian) a row's NaNs
// are left out (the median of its other elements; NaN when it has none).
void median_rows(DType dt, const std::uint8_t* data, std::int64_t rows, std::int64_t n, std::uint8_t* out,
                 bool skip_nan = false);

// NumPy's correlate of a (n elements) with v (m elements), both of dtype dt
// (Float32 and Float64 sum in float64, Int64 wraps): out[k] for k < len (dtype
// dt) = sum over j of a[k - left + j] * v[j] (Note [Sliding dot order]).
void correlate(DType dt, const std::uint8_t* a, std::int64_t n, const std::uint8_t* v, std::int64_t m,
               std::int64_t left, std::uint8_t* out, std::int64_t len);

}  // namespace hrx::kernels

namespace hrx::kernels {

// The binary ufuncs ufunc.at applies (NumPy's add.at ... maximum.at).
enum class AtOp { Add, Subtract, Multiply, Minimum, Maximum };

// NumPy's ufunc.at: for i < n in order, a[pos[i]] = op(a[pos[i]], vals[i]),
// so a repeated position sees every earlier update. pos are C-order flat
// positions in [-size, size) (negative ones count from the end) into the
// array of `ndim` dimensions `shape` with byte `strides` at `a` (of dtype dt:
// bool, an integer, float16, float32 or float64); vals are n elements of ct,
// the type the op runs in (NumPy's loop for a's and the values' dtypes:
// Note [ufunc.at in a wider type] in stats.cpp); integers wrap, minimum and
// maximum propagate NaN as NumPy's do, bool add/maximum are or and
// multiply/minimum and (a bool subtract is refused before this).
void ufunc_at(AtOp op, DType dt, DType ct, std::uint8_t* a, int ndim, const std::int64_t* shape,
              const std::int64_t* strides, std::int64_t size, const std::int64_t* pos, const std::uint8_t* vals,
              std::int64_t n);

}  // namespace hrx::kernels
