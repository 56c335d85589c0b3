// Dense linear algebra (hx.linalg) as compute-lane tasks over LAPACK.
//
// Note [LAPACK on the compute lane]: factorisations are not written by hand.
// NumPy's wheel ships OpenBLAS with LAPACK (numpy.libs/libscipy_openblas64_*:
// ILP64, Fortran ABI, column-major, symbols scipy_<x>_64_); the binding finds
// it from Python once and load_lapack dlopens it and resolves the routines.
// A task gathers each matrix of the batch into a column-major scratch buffer
// (any strides, broadcast batch dimensions included), calls the routine
// without the GIL on the lane thread, and scatters the results into the
// row-major outputs: the copy NumPy's umath_linalg makes too. A routine's
// `info` error (singular matrix, not positive definite, no convergence) is
// an ErrorKind::LinAlg failure of the task: the wait raises hx.LinAlgError
// (an ExecutionError and a numpy.linalg.LinAlgError) naming the function,
// and only the outputs are poisoned (Note [Data checks are not device faults]).
// OpenBLAS dispatches its kernels by CPU, so these results may differ in the
// last bits between hosts: the one exception to "same bits on every host",
// taken for a vetted library over hand-written factorisations.
#pragma once
#include <string>
#include <vector>

#include "array/ops.h"
#include "kernels/lapack.h"

namespace hrx {

using LinalgOp = kernels::LinalgOp;
using kernels::lapack_loaded;
using kernels::load_lapack;


// The shapes and dtypes of op's results for `a` (and `b` for Solve):
// ValueError naming `name` for non-square or too few dimensions, TypeError-like
// Message for dtypes other than float32/float64/complex64/complex128 (the
// Python layer converts the others first).
struct LinalgResults {
    std::vector<Dims> shapes;
    std::vector<DType> dtypes;
};
LinalgResults linalg_results(LinalgOp op, const Array& a, const Array* b, const std::string& name);

// The task computing `outs` (fresh C-contiguous arrays of linalg_results'
// shapes and dtypes) from `a` (and `b`, whose batch dimensions equal a's).
TaskSpec linalg_task(LinalgOp op, const Array& a, const Array* b, const std::vector<Array>& outs,
                     const std::string& name);

}  // namespace hrx

namespace hrx::linalg {

// One hx.linalg operation on `a` (and `b` for Solve, of a's runtime:
// ValueError naming `name` otherwise): its results, fresh arrays in a's
// placement, computed asynchronously by linalg_task.
std::vector<Array> run(LinalgOp op, const Array& a, const Array* b, const std::string& name);

}  // namespace hrx::linalg
