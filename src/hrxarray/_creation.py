"""Creation functions of the array API beyond those in ``_array.py``: eye, tril, triu, meshgrid.

``device=`` is the array API's spelling of ``placement=`` (a placement such as
``hx.Shared(npu)`` or ``hx.GpuLocal()``; ``Shared(hx.npu())`` by default).
Every result is a new array whose contents are written on the compute lane.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from . import _array, _core
from ._array import DeviceArray, _device, _dtype, _flag, bfp16
from ._array import _home

__all__ = ["eye", "tril", "triu", "meshgrid"]


def _count(value: Any, op: str, what: str) -> int:
    try:
        n = operator.index(value)
    except TypeError:
        raise TypeError(f"{op}: {what} must be an integer, got {value!r}") from None
    if n < 0:
        raise ValueError(f"{op}: {what} must be non-negative, got {n}")
    return n


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None, device: Any = None,
        placement: Any = None) -> DeviceArray:
    """A 2-d array with ones on the ``k``-th diagonal and zeros elsewhere (float64 by default).

    ``k > 0`` is above the main diagonal, ``k < 0`` below. The zeros are the
    allocation's; the diagonal is one strided fill on the compute lane.
    """
    op = "eye"
    rows = _count(n_rows, op, "n_rows")
    cols = rows if n_cols is None else _count(n_cols, op, "n_cols")
    try:
        k = operator.index(k)
    except TypeError:
        raise TypeError(f"{op}: k must be an integer, got {k!r}") from None
    dt = np.dtype(np.float64) if dtype is None else _dtype(dtype, op)
    if dt is bfp16:
        raise TypeError(f"{op}: dtype bfp16 is a storage format; create float32 and convert with astype")
    out = _array.zeros((rows, cols), dt, placement=_home(op, device, placement))
    r0, c0 = (0, k) if k >= 0 else (-k, 0)
    length = max(0, min(rows - r0, cols - c0))
    if length:
        item = dt.itemsize
        diag = out._view(out._offset + (r0 * cols + c0) * item, (length,), ((cols + 1) * item,))
        diag._copy_from(1, False, op)
    return out


def _triangle(x: Any, k: Any, lower: bool, op: str) -> DeviceArray:
    x = _device(x, op)
    try:
        k = operator.index(k)
    except TypeError:
        raise TypeError(f"{op}: k must be an integer, got {k!r}") from None
    # Diagonals beyond the matrix keep or drop everything alike; clamping keeps k in int64.
    k = max(min(k, 2**62), -(2**62))
    return _core._triangle(x, k, lower, op)


def tril(x: DeviceArray, /, *, k: int = 0) -> DeviceArray:
    """A copy of ``x`` with the elements above the ``k``-th diagonal of the last two axes zeroed."""
    return _triangle(x, k, True, "tril")


def triu(x: DeviceArray, /, *, k: int = 0) -> DeviceArray:
    """A copy of ``x`` with the elements below the ``k``-th diagonal of the last two axes zeroed."""
    return _triangle(x, k, False, "triu")


def meshgrid(*arrays: DeviceArray, indexing: str = "xy", sparse: bool = False,
             copy: bool = True) -> tuple[DeviceArray, ...]:
    """Coordinate arrays from 1-d coordinate vectors (a tuple, as NumPy 2 and the array API 2025.12).

    ``indexing="xy"`` (Cartesian) swaps the first two output axes, ``"ij"``
    (matrix) keeps them. NumPy's ``sparse=True`` gives broadcastable views and
    ``copy=False`` read-through broadcast views; by default each output is a
    new array (one copy on the compute lane each), of its input's dtype.
    Inputs of more than one dimension are flattened, as NumPy does.
    """
    op = "meshgrid"
    if indexing not in ("xy", "ij"):
        raise ValueError(f"{op}: indexing must be 'xy' or 'ij', got {indexing!r}")
    sparse = _flag(sparse, op, "sparse")
    copy = _flag(copy, op, "copy")
    xs = [_device(a, op).reshape(-1) for a in arrays]
    nd = len(xs)
    sizes = [x.shape[0] for x in xs]
    if indexing == "xy" and nd > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, x in enumerate(xs):
        at = 1 - i if indexing == "xy" and nd > 1 and i < 2 else i
        shape = [1] * nd
        shape[at] = x.shape[0]
        v = x.reshape(tuple(shape))
        if not sparse:
            v = _array.broadcast_to(v, tuple(sizes))
        out.append(v.copy() if copy else v)
    return tuple(out)


def _np_tril(m, k=0):
    return tril(m, k=k)


def _np_triu(m, k=0):
    return triu(m, k=k)


_array._ARRAY_FUNCTIONS.update({np.tril: _np_tril, np.triu: _np_triu, np.meshgrid: meshgrid})
