// Counting, binning, medians and correlations as array-layer tasks
// (kernels/stats.h): the device paths of bincount, histogram, median and
// convolve/correlate. The Python functions (_numpy_more.py, _nanfunctions.py)
// parse NumPy's arguments, decide dtypes, bin edges and modes on the host,
// and call these; every check here runs before anything is allocated.
#pragma once
#include <string>

#include "array/ops.h"
#include "kernels/stats.h"

namespace hrx::stats {

// NumPy's bincount of the 1-d integer (or bool) `x`: int64 counts, or the
// float64 sums of `w` (x's shape, any real dtype) when given (int64 zeros
// for an empty x, as NumPy), of length
// max(max(x) + 1, minlength). Waits for x's range (it sizes the result);
// ValueError naming `op` for a negative value.
Array bincount(const Array& x, const Array* w, int64_t minlength, const std::string& op);

// NumPy's histogram counts of the flattened `x` (any real dtype, compared in
// `edges`' dtype, float32 or float64) over the bins of the 1-d ascending
// `edges` (at least 2); `uniform` carries numpy's scaling for equal bins
// (kernels::histogram_bins). Without weights int64 counts; with `w` (x's
// size) the weight sums in `acc` (float32, float64 or int64).
Array histogram(const Array& x, const Array& edges, const kernels::UniformBins* uniform, const Array* w, DType acc,
                const std::string& op);

// The median over the last axis of `x` (any real dtype, at least 1 element
// per row), computed in `ct` (float32 or float64, which orders x's values as
// x's dtype does) and returned in `dtype`: shape x.shape[:-1]. skip_nan:
// NumPy's nanmedian (each row's NaNs left out; NaN for an all-NaN row).
Array median(const Array& x, DType ct, DType dtype, bool skip_nan, const std::string& op);

// NumPy's correlate (no conjugation) of the 1-d `a` with the 1-d `v`, both
// cast to `dt` (float32, float64 or int64): `len` outputs, output k the dot
// of v with a's elements from k - left (kernels::correlate).
Array correlate(const Array& a, const Array& v, int64_t left, int64_t len, DType dt, const std::string& op);

}  // namespace hrx::stats

namespace hrx::stats {

// NumPy's ufunc.at in place on `a` (float32/float64 or an integer dtype):
// a.flat[pos[i]] = op(a.flat[pos[i]], vals[i]) for each element of the int64
// `pos` in C order (negative positions count from the end), `vals` broadcast
// to pos's shape and cast to a's dtype. Waits for the update (one task
// checks every position first); IndexError naming `op` for a position out
// of bounds, with nothing written.
void ufunc_at(const Array& a, const Array& pos, const Array& vals, kernels::AtOp at, const std::string& op);

}  // namespace hrx::stats
