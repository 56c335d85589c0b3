// Dense linear algebra over the host's LAPACK (Note [LAPACK on the compute
// lane] in array/linalg.h): loading the library, and one operation over a
// stack of matrices, which the emulated provider runs for hx.linalg's
// dispatches.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/dtype.h"

namespace hrx::kernels {

enum class LinalgOp : uint8_t {
    Solve,          // a (..., M, M), b (..., M, K) -> x (..., M, K)
    Inv,            // a (..., M, M) -> (..., M, M)
    Cholesky,       // lower L with a = L L^H
    CholeskyUpper,  // upper U with a = U^H U
    Det,            // (...)
    Slogdet,        // sign (...) in a's dtype, logabsdet (...) real
    Eigh,           // eigenvalues (..., M) real, eigenvectors (..., M, M)
    Eigvalsh,       // eigenvalues (..., M) real
    Eig,            // eigenvalues (..., M), eigenvectors (..., M, M), both complex
    Eigvals,        // eigenvalues (..., M) complex
    QrReduced,      // Q (..., M, K), R (..., K, N), K = min(M, N)
    QrComplete,     // Q (..., M, M), R (..., M, N)
    SvdReduced,     // U (..., M, K), S (..., K) real, Vh (..., K, N)
    SvdFull,        // U (..., M, M), S (..., K) real, Vh (..., N, N)
    Svdvals,        // S (..., K) real
};

// A stack of matrices (the last two axes) as LAPACK reads or writes it:
// element [0, ...] at `ptr`, byte strides (any, broadcast batch axes
// included; results are C-contiguous).
struct Matrices {
    std::uint8_t* ptr = nullptr;
    std::vector<std::int64_t> shape, strides;
    std::uint8_t* data() const { return ptr; }
    int ndim() const { return static_cast<int>(shape.size()); }
};

// dlopens the LAPACK library at `path` once (later calls do nothing) and
// resolves every routine; Unsupported naming what is missing.
void load_lapack(const std::string& path);
bool lapack_loaded();

// `outs` (the results op makes for `a` and `b`, array/linalg.h's
// linalg_results) computed from `a` (and `b` for Solve) of dtype `dt`
// (float32, float64, complex64 or complex128) inside a LAPACK region (Note
// [LAPACK and fork]); a routine's `info` error is an ErrorKind::LinAlg failure.
void linalg_run(LinalgOp op, DType dt, const Matrices& a, const Matrices* b, const std::vector<Matrices>& outs);

}  // namespace hrx::kernels
