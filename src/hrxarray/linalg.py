"""hx.linalg: the array API 2025.12 linear algebra extension, plus NumPy's ``linalg.norm``.

Factorisations (``cholesky``, ``det``, ``slogdet``, ``eigh``, ``eigvalsh``,
``inv``, ``qr``, ``solve``, ``svd``, ``svdvals``; ``lstsq`` through ``svd``) call LAPACK: the OpenBLAS
build NumPy's wheel ships (``numpy.libs/libscipy_openblas64_*``), loaded once
and called inside a region on the emulated GPU's compute lane, without the
GIL (Note [LAPACK on the compute lane] in ``ext/core/array/linalg.h``). Every
call returns DeviceArrays at once; the values complete asynchronously. A
matrix LAPACK refuses (singular for ``solve``/``inv``, not positive definite
for ``cholesky``, no convergence) fails that operation: waiting on its result
raises :class:`hrxarray.LinAlgError`, which is both an ``hx.ExecutionError``
and a ``numpy.linalg.LinAlgError``, and names the function. The rest
(``matrix_norm``, ``vector_norm``, ``matrix_power``, ``matrix_rank``,
``pinv``, ``trace``, ``outer``, ``cross``, ``vecdot``, ``tensordot``) is
composed of hx operations; ``diagonal`` and ``matrix_transpose`` are views.

Dtypes: float32, float64, complex64 and complex128 compute in their own
precision. Integer and boolean inputs compute in float64 (NumPy's rule).
float16 and bfloat16 inputs compute in float32 and the floating results are
rounded back to the input's dtype (NumPy refuses float16; rounding back keeps
the array API's "same dtype out" rule). Stacks of matrices ``(..., M, N)``
loop inside one region. OpenBLAS picks its kernels by CPU, so LAPACK results
may differ in the last bits between hosts.
"""

from __future__ import annotations

import builtins
import glob
import math
import operator
import os
import threading
from typing import Any, NamedTuple, Sequence

import numpy as np

from . import _core
from ._array import _ARRAY_FUNCTIONS, DeviceArray, _device
from ._linear_algebra import matmul
from ._manipulation import broadcast_to, permute_dims, reshape, stack
from ._searching import where
from ._statistical import max, min, sum
from ._creation import zeros_like
from ._core.elementwise import (
    absolute,
    conjugate,
    divide,
    greater,
    multiply,
    not_equal,
    power,
    sqrt,
    subtract,
)
from ._data_types import finfo, result_type
from ._linear_algebra import matrix_transpose, tensordot, vecdot  # the top-level functions, as the standard says

__all__ = [
    "cholesky",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "lstsq",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
    "norm",
    "EigResult",
    "EighResult",
    "QRResult",
    "SlogdetResult",
    "SVDResult",
    "LinAlgError",
]

LinAlgError = _core.LinAlgError


class EigResult(NamedTuple):
    """``eig``'s result: complex eigenvalues and eigenvectors (columns, unit norm)."""

    eigenvalues: DeviceArray
    eigenvectors: DeviceArray


class EighResult(NamedTuple):
    """``eigh``'s result: eigenvalues (ascending, real) and eigenvectors (columns)."""

    eigenvalues: DeviceArray
    eigenvectors: DeviceArray


class QRResult(NamedTuple):
    """``qr``'s result: Q with orthonormal columns and upper-triangular R."""

    Q: DeviceArray
    R: DeviceArray


class SlogdetResult(NamedTuple):
    """``slogdet``'s result: the sign (unit modulus, 0 for singular) and log|det|."""

    sign: DeviceArray
    logabsdet: DeviceArray


class SVDResult(NamedTuple):
    """``svd``'s result: ``x == U @ (S[..., None] * Vh)``, S descending."""

    U: DeviceArray
    S: DeviceArray
    Vh: DeviceArray


_LAPACK = {np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128)}
_load_lock = threading.Lock()


def _lapack_path() -> str:
    """NumPy's bundled OpenBLAS (LAPACK with ILP64 ``scipy_*_64_`` symbols)."""
    root = os.path.dirname(np.__file__)
    for pattern in ("../numpy.libs/libscipy_openblas64_*.so*", ".libs/libscipy_openblas64_*.so*",
                    "../numpy.libs/libscipy_openblas64_*.dylib", ".dylibs/libscipy_openblas64_*.dylib"):
        found = sorted(glob.glob(os.path.join(root, pattern)))
        if found:
            return os.path.realpath(found[0])
    raise _core.UnsupportedError(
        "hx.linalg: NumPy's bundled OpenBLAS (numpy.libs/libscipy_openblas64_*) was not found; hx.linalg calls "
        "the LAPACK NumPy's wheel ships")


def _lapack(kind: str, x: DeviceArray, b: DeviceArray | None, op: str) -> tuple[DeviceArray, ...]:
    if not _core._lapack_loaded():
        with _load_lock:
            _core._lapack_load(_lapack_path())
    return _core._linalg(kind, x, b, op)


def _floating(x: Any, op: str, matrices: str = "") -> tuple[DeviceArray, np.dtype | None]:
    """x as a DeviceArray in a LAPACK dtype, and the dtype to round floating results back to (or None).
    ``matrices`` ("stack" or "square") checks x's shape first, before any conversion runs."""
    x = _device(x, op)
    if matrices:
        _matrices(x, op, matrices == "square")
    dt = x.dtype
    if dt in _LAPACK:
        return x, None
    if not isinstance(dt, np.dtype):
        raise TypeError(f"{op}: x has dtype {dt}, which has no arithmetic; convert with astype(hx.float32)")
    if dt.kind in "biu":
        return x.astype(np.float64), None
    if dt.itemsize == 2:  # float16, bfloat16: float32 and back (module docstring)
        return x.astype(np.float32), dt
    raise TypeError(f"{op}: unsupported dtype {dt}")


def _back(r: DeviceArray, dt: np.dtype | None) -> DeviceArray:
    # Complex results (eig of float16 input) stay complex64: float16 has no complex counterpart.
    return r if dt is None or r.dtype.kind != "f" else r.astype(dt)


def _matrices(x: DeviceArray, op: str, square: bool = False) -> None:
    if x.ndim < 2:
        raise ValueError(f"{op}: x must have at least 2 dimensions (a stack of matrices), got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{op}: the last two dimensions of x must be square, got shape {x.shape}")


def _one(kind: str, x: Any, op: str, square: bool = True) -> DeviceArray:
    a, back = _floating(x, op, "square" if square else "stack")
    return _back(_lapack(kind, a, None, op)[0], back)


def cholesky(x: DeviceArray, /, *, upper: bool = False) -> DeviceArray:
    """The Cholesky factor of each Hermitian positive-definite matrix: lower ``L`` with ``x = L @ L^H``,
    or upper ``U`` with ``x = U^H @ U`` when ``upper``. Only the lower (upper) triangle of ``x`` is read.
    Not positive definite: ``LinAlgError`` at the wait."""
    return _one("cholesky_upper" if upper else "cholesky", x, "cholesky")


def det(x: DeviceArray, /) -> DeviceArray:
    """The determinant of each square matrix (LU factorisation), shape ``x.shape[:-2]``."""
    return _one("det", x, "det")


def inv(x: DeviceArray, /) -> DeviceArray:
    """The inverse of each square matrix. Singular: ``LinAlgError`` at the wait."""
    return _one("inv", x, "inv")


def eigvalsh(x: DeviceArray, /) -> DeviceArray:
    """The eigenvalues of each Hermitian matrix, ascending, real (only the lower triangle is read)."""
    return _one("eigvalsh", x, "eigvalsh")


def svdvals(x: DeviceArray, /) -> DeviceArray:
    """The singular values of each matrix, descending, shape ``(..., min(M, N))``, real."""
    return _one("svdvals", x, "svdvals", square=False)


def eigh(x: DeviceArray, /) -> EighResult:
    """Eigenvalues (ascending, real) and eigenvectors (the columns) of each Hermitian matrix
    (lower triangle read), as ``EighResult(eigenvalues, eigenvectors)``."""
    a, back = _floating(x, "eigh", "square")
    w, v = _lapack("eigh", a, None, "eigh")
    return EighResult(_back(w, back), _back(v, back))


def eig(x: DeviceArray, /) -> EigResult:
    """Eigenvalues and right eigenvectors (the columns, unit norm) of each square matrix, both complex
    (complex64 for float32/complex64 input, complex128 otherwise) and in no particular order (LAPACK geev)."""
    a, _ = _floating(x, "eig", "square")
    w, v = _lapack("eig", a, None, "eig")
    return EigResult(w, v)


def eigvals(x: DeviceArray, /) -> DeviceArray:
    """The eigenvalues of each square matrix, complex, in no particular order (LAPACK geev)."""
    return _one("eigvals", x, "eigvals")


def slogdet(x: DeviceArray, /) -> SlogdetResult:
    """``SlogdetResult(sign, logabsdet)`` of each square matrix: ``det = sign * exp(logabsdet)``; a singular
    matrix gives sign 0 and logabsdet -inf. sign has x's dtype, logabsdet the real one."""
    a, back = _floating(x, "slogdet", "square")
    s, ld = _lapack("slogdet", a, None, "slogdet")
    return SlogdetResult(_back(s, back), _back(ld, back))


def qr(x: DeviceArray, /, *, mode: str = "reduced") -> QRResult:
    """``QRResult(Q, R)`` of each matrix (Householder QR): ``mode='reduced'`` gives Q ``(..., M, K)`` and
    R ``(..., K, N)`` with ``K = min(M, N)``; ``'complete'`` gives Q ``(..., M, M)`` and R ``(..., M, N)``."""
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr: mode must be 'reduced' or 'complete', got {mode!r}")
    a, back = _floating(x, "qr", "stack")
    q, r = _lapack("qr_" + mode, a, None, "qr")
    return QRResult(_back(q, back), _back(r, back))


def svd(x: DeviceArray, /, *, full_matrices: bool = True) -> SVDResult:
    """``SVDResult(U, S, Vh)`` of each matrix (LAPACK gesdd): S descending and real; U ``(..., M, M)`` and
    Vh ``(..., N, N)`` with ``full_matrices``, else ``(..., M, K)`` and ``(..., K, N)``, ``K = min(M, N)``."""
    a, back = _floating(x, "svd", "stack")
    u, s, vh = _lapack("svd_full" if full_matrices else "svd_reduced", a, None, "svd")
    return SVDResult(_back(u, back), _back(s, back), _back(vh, back))


def solve(x1: DeviceArray, x2: DeviceArray, /) -> DeviceArray:
    """The solution ``x`` of ``x1 @ x = x2`` for each square ``x1`` (LU with partial pivoting).

    ``x2`` is a vector ``(M,)`` when 1-d (the result ``(..., M)``), else a stack
    of matrices ``(..., M, K)``; batch dimensions broadcast (NumPy 2 and the
    array API). Singular ``x1``: ``LinAlgError`` at the wait.
    """
    op = "solve"
    a = _device(x1, op)
    b = _device(x2, op, like=a)
    _matrices(a, op, True)  # every shape check runs before any conversion
    m = a.shape[-1]
    if b.ndim == 0:
        raise ValueError(f"{op}: x2 must have at least 1 dimension, got a 0-d array")
    vector = b.ndim == 1
    if (b.shape[0] if vector else b.shape[-2]) != m:
        raise ValueError(f"{op}: x2 of shape {b.shape} does not match x1 of shape {a.shape} "
                         f"(its {'length' if vector else 'second-to-last dimension'} must be {m})")
    try:
        batch = a.shape[:-2] if vector else _core._broadcast_shapes([a.shape[:-2], b.shape[:-2]], op)
    except ValueError:
        raise ValueError(f"{op}: the batch dimensions of x1 {a.shape} and x2 {b.shape} do not broadcast") from None
    a, back = _floating(a.astype(result_type(a.dtype, b.dtype), copy=False), op)
    b = b.astype(a.dtype, copy=False)
    if vector:
        b = broadcast_to(reshape(b, (m, 1)), (*batch, m, 1))
    else:
        b = broadcast_to(b, (*batch, m, b.shape[-1]))
    a = broadcast_to(a, (*batch, m, m))
    (r,) = _lapack(op, a, b, op)
    if vector:
        r = reshape(r, (*batch, m))
    return _back(r, back)


def lstsq(a: DeviceArray, b: DeviceArray, rcond: float | None = None) -> tuple[DeviceArray, DeviceArray, int,
                                                                              DeviceArray]:
    """NumPy's ``linalg.lstsq``: the ``x`` minimising ``||b - a @ x||_2`` for a ``(M, N)`` matrix ``a`` and
    ``b`` of shape ``(M,)`` or ``(M, K)``, as ``(x, residuals, rank, s)``.

    ``x`` has shape ``(N,)`` or ``(N, K)``; among the minimisers it is the one of least norm
    (the pseudo-inverse's, from the reduced SVD: singular values at most ``rcond`` times the largest
    count as zero; ``rcond=None`` means ``eps * max(M, N)``, a negative ``rcond`` means ``eps``, as
    LAPACK's ``gelsd`` reads it). ``residuals`` holds ``sum(|b - a @ x|**2)`` per column of ``b`` (shape
    ``(1,)`` for a 1-d ``b``, ``(K,)`` otherwise) when ``rank == N < M``, else it is empty, as NumPy's.
    ``rank`` (a Python int) is the number of singular values above the cutoff, so ``lstsq`` waits for
    the SVD; ``s`` holds the singular values of ``a``, descending. Memory is O(MN + MK): the SVD is the
    reduced one. Integer inputs compute in float64, float16/bfloat16 in float32 and round back.
    """
    op = "lstsq"
    if isinstance(a, DeviceArray) or not isinstance(b, DeviceArray):
        a = _device(a, op)
        b = _device(b, op, like=a)
    else:
        b = _device(b, op)
        a = _device(a, op, like=b)
    if a.ndim != 2:
        raise LinAlgError(f"{op}: a must be a 2-dimensional matrix, got shape {a.shape}")
    if b.ndim not in (1, 2):
        raise LinAlgError(f"{op}: b must be 1- or 2-dimensional, got shape {b.shape}")
    m, n = a.shape
    if b.shape[0] != m:
        raise LinAlgError(f"{op}: incompatible dimensions: a has {m} rows but b has shape {b.shape}")
    if rcond is not None and not isinstance(rcond, (int, float, np.integer, np.floating)):
        raise TypeError(f"{op}: rcond must be a real number or None, got {rcond!r}")
    a, back = _floating(a.astype(result_type(a.dtype, b.dtype), copy=False), op)
    vector = b.ndim == 1
    b2 = reshape(b.astype(a.dtype, copy=False), (m, 1)) if vector else b.astype(a.dtype, copy=False)
    u, s, vh = svd(a, full_matrices=False)
    eps = float(finfo(s.dtype).eps)
    if rcond is None:
        rcond = eps * builtins.max(m, n)
    elif rcond < 0:
        rcond = eps
    if s.shape[0]:
        large = greater(s, multiply(max(s), float(rcond)))
        sinv = where(large, divide(1, s), 0).astype(s.dtype, copy=False)
        rank = int(sum(large, dtype=np.int64))
    else:
        sinv = s
        rank = 0
    uh, v = u.mT, vh.mT
    if a.dtype.kind == "c":
        uh, v = conjugate(uh), conjugate(v)
    x = matmul(v, multiply(reshape(sinv, (-1, 1)).astype(a.dtype, copy=False), matmul(uh, b2)))
    if rank == n and m > n:
        r = absolute(subtract(b2, matmul(a, x)))
        residuals = sum(multiply(r, r), axis=0)
    else:
        residuals = zeros_like(b2, shape=(0,), dtype=_real_dtype(a.dtype))
    if vector:
        x = reshape(x, (n,))
    return _back(x, back), _back(residuals, back), rank, _back(s, back)


def diagonal(x: DeviceArray, /, *, offset: int = 0) -> DeviceArray:
    """The ``offset`` diagonal of each matrix (above the main one for ``offset > 0``), shape
    ``(..., L)``: a view of ``x`` (writing to it writes ``x``, as NumPy's writable diagonals would)."""
    x = _device(x, "diagonal")
    _matrices(x, "diagonal")
    offset = operator.index(offset)
    m, n = x.shape[-2:]
    rs, cs = x.strides[-2:]
    if offset >= 0:
        length, start = builtins.max(0, builtins.min(m, n - offset)), offset * cs
    else:
        length, start = builtins.max(0, builtins.min(m + offset, n)), -offset * rs
    if length == 0:
        start = 0
    return x._view(x._offset + start, (*x.shape[:-2], length), (*x.strides[:-2], rs + cs))


def trace(x: DeviceArray, /, *, offset: int = 0, dtype: Any = None) -> DeviceArray:
    """The sum of each matrix's ``offset`` diagonal; dtype as ``sum``'s (small integers widen)."""
    return sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def outer(x1: DeviceArray, x2: DeviceArray, /) -> DeviceArray:
    """The outer product ``x1[:, None] * x2[None, :]`` of two vectors."""
    a = _device(x1, "outer")
    b = _device(x2, "outer", like=a)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"outer: x1 and x2 must be 1-dimensional, got shapes {a.shape} and {b.shape}")
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))


def cross(x1: DeviceArray, x2: DeviceArray, /, *, axis: int = -1) -> DeviceArray:
    """The cross product of the 3-element vectors along ``axis`` (other dimensions broadcast)."""
    op = "cross"
    a = _device(x1, op)
    b = _device(x2, op, like=a)
    axis = operator.index(axis)
    ndim = builtins.max(a.ndim, b.ndim)
    if a.ndim == 0 or b.ndim == 0 or not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"{op}: axis {axis} is out of bounds for shapes {a.shape} and {b.shape}")
    if axis >= 0:
        axis -= ndim
    if (-axis > a.ndim or a.shape[axis] != 3) or (-axis > b.ndim or b.shape[axis] != 3):
        raise ValueError(f"{op}: x1 and x2 must have 3 elements along axis {axis}, got shapes {a.shape} and {b.shape}")
    shape = _core._broadcast_shapes([a.shape, b.shape], op)
    dt = result_type(a.dtype, b.dtype)
    order = [d for d in range(ndim) if d != ndim + axis] + [ndim + axis]
    a = permute_dims(broadcast_to(a.astype(dt, copy=False), shape), order)
    b = permute_dims(broadcast_to(b.astype(dt, copy=False), shape), order)
    a0, a1, a2 = (a[..., i] for i in range(3))
    b0, b1, b2 = (b[..., i] for i in range(3))
    c = stack([subtract(multiply(a1, b2), multiply(a2, b1)), subtract(multiply(a2, b0), multiply(a0, b2)),
               subtract(multiply(a0, b1), multiply(a1, b0))], axis=ndim + axis)
    return c


def _identity(x: DeviceArray) -> DeviceArray:
    """Identity matrices of x's shape, dtype and placement (a fill through the diagonal view)."""
    eye = zeros_like(x)
    diagonal(eye)[...] = 1
    return eye


def matrix_power(x: DeviceArray, n: int, /) -> DeviceArray:
    """Each square matrix raised to the integer power ``n`` by repeated squaring (matmul); ``n < 0``
    inverts first (``LinAlgError`` for a singular matrix), ``n == 0`` gives identities."""
    x = _device(x, "matrix_power")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"matrix_power: n must be an integer, got {n!r}") from None
    _matrices(x, "matrix_power", True)
    if n == 0:
        return _identity(x)
    base = x
    if n < 0:
        base, n = inv(x), -n
    result = None
    while True:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if not n:
            break
        base = matmul(base, base)
    return result.copy() if result is x else result


def _real_dtype(dt: np.dtype) -> np.dtype:
    return np.dtype(np.float32 if dt == np.complex64 else np.float64) if dt.kind == "c" else dt


def matrix_rank(x: DeviceArray, /, *, rtol: float | DeviceArray | None = None) -> DeviceArray:
    """The number of singular values above ``rtol * largest`` for each matrix (int64); ``rtol``
    defaults to ``max(M, N) * eps`` of x's real dtype and may be an array broadcasting to the batch."""
    a, _ = _floating(x, "matrix_rank", "stack")
    s = svdvals(a)
    if rtol is None:
        rtol = builtins.max(a.shape[-2:]) * finfo(s.dtype).eps
    elif not isinstance(rtol, (int, float)):
        rtol = reshape(_device(rtol, "matrix_rank", like=a), (*np.shape(rtol), 1))
    tol = multiply(max(s, axis=-1, keepdims=True), rtol) if s.shape[-1] else 0.0
    return sum(greater(s, tol), axis=-1, dtype=np.int64)


def pinv(x: DeviceArray, /, *, rtol: float | DeviceArray | None = None) -> DeviceArray:
    """The Moore-Penrose pseudo-inverse of each matrix from its SVD, singular values at most
    ``rtol * largest`` treated as zero (``rtol`` defaults to ``max(M, N) * eps``); shape ``(..., N, M)``."""
    a, back = _floating(x, "pinv", "stack")
    u, s, vh = svd(a, full_matrices=False)
    if rtol is None:
        rtol = builtins.max(a.shape[-2:]) * finfo(s.dtype).eps
    elif not isinstance(rtol, (int, float)):
        rtol = reshape(_device(rtol, "pinv", like=a), (*np.shape(rtol), 1))
    if s.shape[-1]:
        large = greater(s, multiply(max(s, axis=-1, keepdims=True), rtol))
        s = where(large, divide(1, s), 0).astype(s.dtype, copy=False)
    v = vh.mT
    uh = u.mT
    if a.dtype.kind == "c":
        v, uh = conjugate(v), conjugate(uh)
    return _back(matmul(multiply(v, reshape(s, (*s.shape[:-1], 1, s.shape[-1])).astype(v.dtype, copy=False)), uh),
                 back)


def vector_norm(x: DeviceArray, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False,
                ord: int | float = 2) -> DeviceArray:
    """The ``ord``-norm of the vectors along ``axis`` (None: all elements as one vector): ``inf``/``-inf``
    the largest/smallest magnitude, ``0`` the count of non-zeros, else ``sum(|x|**ord)**(1/ord)``. The
    result has x's real floating dtype."""
    a, back = _floating(x, "vector_norm")
    mag = absolute(a)
    if ord == math.inf:
        r = max(mag, axis=axis, keepdims=keepdims)
    elif ord == -math.inf:
        r = min(mag, axis=axis, keepdims=keepdims)
    elif ord == 0:
        r = sum(not_equal(mag, 0), axis=axis, keepdims=keepdims, dtype=mag.dtype)
    elif ord == 1:
        r = sum(mag, axis=axis, keepdims=keepdims)
    elif ord == 2:
        r = sqrt(sum(multiply(mag, mag), axis=axis, keepdims=keepdims))
    else:
        p = float(ord)
        r = power(sum(power(mag, p), axis=axis, keepdims=keepdims), 1.0 / p)
    return _back(r.astype(_real_dtype(a.dtype), copy=False), back)


_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


def matrix_norm(x: DeviceArray, /, *, keepdims: bool = False, ord: int | float | str = "fro") -> DeviceArray:
    """The ``ord`` norm of each matrix: ``'fro'`` (Frobenius), ``'nuc'`` (sum of singular values),
    ``2``/``-2`` (largest/smallest singular value), ``1``/``-1`` (max/min column sum of magnitudes),
    ``inf``/``-inf`` (max/min row sum). ``keepdims`` keeps the two axes with length 1."""
    if not builtins.any(ord == o and type(ord) is not bool for o in _MATRIX_ORDS):
        raise ValueError(f"matrix_norm: ord must be one of 'fro', 'nuc', 1, -1, 2, -2, inf, -inf, got {ord!r}")
    a, back = _floating(x, "matrix_norm", "stack")
    if ord == "fro":
        mag = absolute(a)
        r = sqrt(sum(multiply(mag, mag), axis=(-2, -1)))
    elif ord in ("nuc", 2, -2):
        s = svdvals(a)
        r = sum(s, axis=-1) if ord == "nuc" else (max if ord == 2 else min)(s, axis=-1)
    else:
        reduce_axis = -2 if ord in (1, -1) else -1
        sums = sum(absolute(a), axis=reduce_axis)
        r = (max if ord > 0 else min)(sums, axis=-1)
    if keepdims:
        r = reshape(r, (*a.shape[:-2], 1, 1))
    return _back(r.astype(_real_dtype(a.dtype), copy=False), back)


def norm(x: DeviceArray, ord: Any = None, axis: int | tuple[int, ...] | None = None,
         keepdims: bool = False) -> DeviceArray:
    """NumPy's ``linalg.norm``: a vector norm over one axis (or of the flattened array when ``ord`` and
    ``axis`` are None), a matrix norm over two axes (``ord=None`` is Frobenius)."""
    a = _device(x, "norm")
    if axis is None:
        if ord is None:
            return vector_norm(a, axis=None, keepdims=keepdims)
        if a.ndim not in (1, 2):
            raise ValueError(f"norm: improper number of dimensions to norm ({a.ndim}) with ord={ord!r}")
        axis = tuple(range(a.ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    axes = tuple(operator.index(v) for v in axes)
    for v in axes:
        if not -a.ndim <= v < a.ndim:
            raise np.exceptions.AxisError(f"norm: axis {v} is out of bounds for array of dimension {a.ndim}")
    axes = tuple(v % a.ndim for v in axes)
    if len(axes) == 1:
        if isinstance(ord, str):
            raise ValueError(f"norm: invalid norm order {ord!r} for vectors")
        return vector_norm(a, axis=axes[0], keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axes) != 2 or axes[0] == axes[1]:
        raise ValueError(f"norm: axis must name one or two distinct axes, got {axis!r}")
    rest = [d for d in range(a.ndim) if d not in axes]
    r = matrix_norm(permute_dims(a, (*rest, *axes)), ord="fro" if ord is None else ord)
    if keepdims:
        shape = list(a.shape)
        for v in axes:
            shape[v] = 1
        r = reshape(r, tuple(shape))
    return r


# NumPy's spellings through __array_function__ (np.linalg.solve(device_array, ...)).
def _np_svd(a: DeviceArray, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False) -> Any:
    return svd(a, full_matrices=full_matrices) if compute_uv else svdvals(a)


def _np_qr(a: DeviceArray, mode: str = "reduced") -> Any:
    if mode == "r":
        return qr(a).R
    return qr(a, mode=mode)


def _np_eigh(a: DeviceArray, UPLO: str = "L") -> EighResult:
    if UPLO not in ("L", "l"):
        return eigh(matrix_transpose(a) if a.dtype.kind != "c" else conjugate(matrix_transpose(a)))
    return eigh(a)


def _np_eigvalsh(a: DeviceArray, UPLO: str = "L") -> DeviceArray:
    return _np_eigh(a, UPLO).eigenvalues if UPLO not in ("L", "l") else eigvalsh(a)


def _np_matrix_rank(A: DeviceArray, tol: Any = None, hermitian: bool = False, *, rtol: Any = None) -> DeviceArray:
    if tol is not None:
        s = svdvals(A)
        return sum(greater(s, tol), axis=-1, dtype=np.int64)
    return matrix_rank(A, rtol=rtol)


_NO_RTOL = object()


def _np_pinv(a: DeviceArray, rcond: Any = None, hermitian: bool = False, *, rtol: Any = _NO_RTOL) -> DeviceArray:
    # NumPy 2's defaults: rcond 1e-15 unless rtol is given (rtol=None: the array API's default).
    if rcond is None:
        rcond = 1e-15 if rtol is _NO_RTOL else rtol
    return pinv(a, rtol=rcond)


def _np_cholesky(a: DeviceArray, /, *, upper: bool = False) -> DeviceArray:
    return cholesky(a, upper=upper)


def _np_tensordot(a: DeviceArray, b: DeviceArray, axes: Any = 2) -> DeviceArray:
    return tensordot(a, b, axes=axes)


_ARRAY_FUNCTIONS.update({
    np.linalg.cholesky: _np_cholesky, np.linalg.det: det, np.linalg.inv: inv, np.linalg.eigh: _np_eigh,
    np.linalg.eigvalsh: _np_eigvalsh, np.linalg.slogdet: slogdet, np.linalg.qr: _np_qr, np.linalg.svd: _np_svd,
    np.linalg.solve: solve, np.linalg.matrix_power: matrix_power, np.linalg.matrix_rank: _np_matrix_rank,
    np.linalg.pinv: _np_pinv, np.linalg.norm: norm, np.linalg.lstsq: lstsq, np.outer: outer, np.tensordot: _np_tensordot,
})
# NumPy 2's array-API spellings in np.linalg share the standard's signatures.
for _name in ("svdvals", "matrix_norm", "vector_norm", "matrix_transpose", "vecdot", "outer", "cross", "diagonal",
              "trace", "tensordot", "matmul"):
    if hasattr(np.linalg, _name):
        _ARRAY_FUNCTIONS[getattr(np.linalg, _name)] = globals()[_name]
del _name
