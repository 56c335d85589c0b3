"""NumPy functions beyond the array API that code written for NumPy calls (SciPy, xarray, user code):
``array``, ``atleast_1d/2d/3d``, the ``*stack``/``*split`` families, ``diagonal``/``trace``/``diag``,
``fliplr``/``flipud``/``rot90``, ``outer``, ``ptp``, ``average``, ``append``, ``ediff1d``, and NumPy's
``linalg.eig``/``eigvals`` dispatch.

Each is composed of the chapters' device operations: views where NumPy's
result is a view (``diagonal`` is a strided view, the splits are slices), and
otherwise the same concatenations, reductions and ufuncs, so nothing goes
through the host.
"""

from __future__ import annotations

import builtins
import math
import operator
from typing import Any

import numpy as np

from . import _array, _creation, _manipulation, linalg
from ._array import DeviceArray, _device
from ._statistical import _out, max, min, sum

__all__ = ["array", "atleast_1d", "atleast_2d", "atleast_3d", "vstack", "hstack", "dstack", "column_stack",
           "split", "array_split", "hsplit", "vsplit", "dsplit", "diagonal", "trace", "diag", "fliplr", "flipud",
           "rot90", "outer", "ptp", "average", "append", "ediff1d"]

_U = _array._U


def array(obj: Any, dtype: Any = None, *, copy: bool | None = True, device: Any = None,
          placement: Any = None, ndmin: int = 0) -> DeviceArray:
    """A new DeviceArray from ``obj`` (NumPy's ``array``: copies by default; ``ndmin`` prepends axes).

    ``hx.asarray`` with ``copy=True`` unless ``copy`` says otherwise.
    """
    x = _creation.asarray(obj, dtype, device=device, placement=placement, copy=copy)
    ndmin = operator.index(ndmin)
    if x.ndim < ndmin:
        x = x.reshape((1,) * (ndmin - x.ndim) + x.shape)
    return x


def _atleast(arys, n, op):
    out = []
    for a in arys:
        x = _device(a, op)
        if x.ndim < n:
            if n == 3 and x.ndim == 2:
                x = x.reshape(x.shape + (1,))
            elif n == 3 and x.ndim == 1:
                x = x.reshape((1,) + x.shape + (1,))
            else:
                x = x.reshape((1,) * (n - x.ndim) + x.shape)
        out.append(x)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arys) -> DeviceArray | tuple[DeviceArray, ...]:
    """Each input as a DeviceArray of at least one dimension (a view; NumPy's ``atleast_1d``)."""
    return _atleast(arys, 1, "atleast_1d")


def atleast_2d(*arys) -> DeviceArray | tuple[DeviceArray, ...]:
    """Each input with at least two dimensions, new axes in front (NumPy's ``atleast_2d``)."""
    return _atleast(arys, 2, "atleast_2d")


def atleast_3d(*arys) -> DeviceArray | tuple[DeviceArray, ...]:
    """Each input with at least three dimensions: (N,) -> (1, N, 1), (M, N) -> (M, N, 1) (NumPy's ``atleast_3d``)."""
    return _atleast(arys, 3, "atleast_3d")


def _seq(tup, op):
    if isinstance(tup, DeviceArray) or not isinstance(tup, (list, tuple)):
        raise TypeError(f"{op}: arrays to stack must be passed as a sequence (a list or a tuple)")
    if not tup:
        raise ValueError(f"{op}: need at least one array to concatenate")
    return tup


def _concat(parts, axis, dtype, op):
    return _manipulation._concatenate(parts, axis, None if dtype is None else _array._dtype(dtype, op), op)


def vstack(tup, *, dtype=None, casting="same_kind") -> DeviceArray:
    """Stack arrays vertically: ``concatenate(atleast_2d(...), axis=0)`` (NumPy's ``vstack``)."""
    parts = [_atleast([a], 2, "vstack") for a in _seq(tup, "vstack")]
    return _concat(parts, 0, dtype, "vstack")


def hstack(tup, *, dtype=None, casting="same_kind") -> DeviceArray:
    """Stack arrays horizontally: along axis 1, or 0 for 1-d inputs (NumPy's ``hstack``)."""
    parts = [_atleast([a], 1, "hstack") for a in _seq(tup, "hstack")]
    return _concat(parts, 0 if parts[0].ndim == 1 else 1, dtype, "hstack")


def dstack(tup) -> DeviceArray:
    """Stack arrays along the third axis after ``atleast_3d`` (NumPy's ``dstack``)."""
    parts = [_atleast([a], 3, "dstack") for a in _seq(tup, "dstack")]
    return _concat(parts, 2, None, "dstack")


def column_stack(tup) -> DeviceArray:
    """1-d arrays as columns of a 2-d array, 2-d arrays as they are, joined along axis 1 (NumPy's ``column_stack``)."""
    parts = []
    for a in _seq(tup, "column_stack"):
        x = _device(a, "column_stack")
        parts.append(x.reshape((x.shape[0], 1)) if x.ndim == 1 else _atleast([x], 2, "column_stack"))
    return _concat(parts, 1, None, "column_stack")


def _split(op, a, indices_or_sections, axis, even):
    x = _device(a, op)
    if x.ndim == 0:
        raise ValueError(f"{op}: a must have at least one dimension")
    (axis,) = _array._axes(axis, x.ndim, op)
    n = x.shape[axis]
    if isinstance(indices_or_sections, (DeviceArray, np.ndarray, list, tuple)):
        bounds = [operator.index(i) for i in np.asarray(
            indices_or_sections._to_numpy() if isinstance(indices_or_sections, DeviceArray) else indices_or_sections
        ).reshape(-1)]
        cuts = [0, *bounds, n]
    else:
        try:
            sections = operator.index(indices_or_sections)
        except TypeError:
            raise TypeError(f"{op}: indices_or_sections must be an integer or a sequence of integers, got "
                            f"{indices_or_sections!r}") from None
        if sections <= 0:
            raise ValueError(f"{op}: number of sections must be larger than 0, got {sections}")
        each, extra = divmod(n, sections)
        if even and extra:
            raise ValueError(f"{op}: array split does not result in an equal division ({n} into {sections})")
        sizes = [each + 1] * extra + [each] * (sections - extra)
        cuts = [0]
        for s in sizes:
            cuts.append(cuts[-1] + s)
    pre = (slice(None),) * axis
    # Python's slice rules, as NumPy's: indices past the end give empty pieces.
    return [x[pre + (slice(lo, hi),)] for lo, hi in zip(cuts[:-1], cuts[1:])]


def split(ary, indices_or_sections, axis=0) -> list[DeviceArray]:
    """Views of ``ary`` split into equal sections or at indices along ``axis`` (NumPy's ``split``)."""
    return _split("split", ary, indices_or_sections, axis, True)


def array_split(ary, indices_or_sections, axis=0) -> list[DeviceArray]:
    """As ``split``, but sections may differ in size by one (the first ones longer; NumPy's ``array_split``)."""
    return _split("array_split", ary, indices_or_sections, axis, False)


def hsplit(ary, indices_or_sections) -> list[DeviceArray]:
    """``split`` along axis 1 (axis 0 for 1-d input)."""
    x = _device(ary, "hsplit")
    if x.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return _split("hsplit", x, indices_or_sections, 1 if x.ndim > 1 else 0, True)


def vsplit(ary, indices_or_sections) -> list[DeviceArray]:
    """``split`` along axis 0 of an array of at least 2 dimensions."""
    x = _device(ary, "vsplit")
    if x.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return _split("vsplit", x, indices_or_sections, 0, True)


def dsplit(ary, indices_or_sections) -> list[DeviceArray]:
    """``split`` along axis 2 of an array of at least 3 dimensions."""
    x = _device(ary, "dsplit")
    if x.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return _split("dsplit", x, indices_or_sections, 2, True)


def diagonal(a, offset=0, axis1=0, axis2=1) -> DeviceArray:
    """The diagonal at ``offset`` of the planes of ``axis1``/``axis2``, as the last axis (NumPy's ``diagonal``).

    A strided view of ``a``'s storage (NumPy's is a read-only view): no copy.
    """
    op = "diagonal"
    x = _device(a, op)
    if x.ndim < 2:
        raise ValueError(f"{op}: diag requires an array of at least two dimensions, got {x.ndim}")
    if x.dtype is _array.bfp16:
        raise TypeError(f"{op}: bfp16 arrays are stored in blocks and have no element strides")
    offset = operator.index(offset)
    (a1,) = _array._axes(axis1, x.ndim, op)
    (a2,) = _array._axes(axis2, x.ndim, op)
    if a1 == a2:
        raise ValueError(f"{op}: axis1 and axis2 cannot be the same")
    n1, n2 = x.shape[a1], x.shape[a2]
    start = x._offset
    if offset >= 0:
        k = builtins.max(0, builtins.min(n1, n2 - offset))
        start += offset * x.strides[a2] if k else 0
    else:
        k = builtins.max(0, builtins.min(n1 + offset, n2))
        start += -offset * x.strides[a1] if k else 0
    rest = [d for d in range(x.ndim) if d not in (a1, a2)]
    shape = tuple(x.shape[d] for d in rest) + (k,)
    strides = tuple(x.strides[d] for d in rest) + (x.strides[a1] + x.strides[a2],)
    return x._view(start, shape, strides)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None) -> DeviceArray:
    """Sum along the diagonal (NumPy's ``trace``): ``sum(diagonal(a, offset, axis1, axis2), axis=-1)``."""
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype, out=out)


def diag(v, k=0) -> DeviceArray:
    """The ``k``-th diagonal of a 2-d array (a copy), or a 2-d array with 1-d ``v`` on it (NumPy's ``diag``)."""
    op = "diag"
    x = _device(v, op)
    k = operator.index(k)
    if x.ndim == 1:
        n = x.shape[0] + abs(k)
        out = _creation.zeros((n, n), dtype=x.dtype, device=x.placement)
        diagonal(out, k)._copy_from(x, False, op)
        return out
    if x.ndim == 2:
        return diagonal(x, k).copy()
    raise ValueError(f"{op}: input must be 1- or 2-d, got {x.ndim} dimensions")


def fliplr(m) -> DeviceArray:
    """Reverse the order along axis 1 (a view; NumPy's ``fliplr``)."""
    x = _device(m, "fliplr")
    if x.ndim < 2:
        raise ValueError("fliplr: input must be >= 2-d")
    return _manipulation.flip(x, axis=1)


def flipud(m) -> DeviceArray:
    """Reverse the order along axis 0 (a view; NumPy's ``flipud``)."""
    x = _device(m, "flipud")
    if x.ndim < 1:
        raise ValueError("flipud: input must be >= 1-d")
    return _manipulation.flip(x, axis=0)


def rot90(m, k=1, axes=(0, 1)) -> DeviceArray:
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (a view; NumPy's ``rot90``)."""
    op = "rot90"
    x = _device(m, op)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError(f"{op}: len(axes) must be 2, got {axes!r}")
    if x.ndim < 2:
        raise ValueError(f"{op}: the array must have at least 2 dimensions")
    a0, a1 = _array._axes(axes[0], x.ndim, op)[0], _array._axes(axes[1], x.ndim, op)[0]
    if a0 == a1:
        raise ValueError(f"{op}: axes must be different, got {axes!r}")
    k = operator.index(k) % 4
    if k == 0:
        return x
    if k == 2:
        return _manipulation.flip(x, axis=(a0, a1))
    perm = list(range(x.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return _manipulation.flip(x, axis=a1).transpose(tuple(perm))
    return _manipulation.flip(x.transpose(tuple(perm)), axis=a1)


def outer(a, b, out=None) -> DeviceArray:
    """The outer product of the flattened inputs, ``a.ravel()[:, None] * b.ravel()[None, :]`` (NumPy's ``outer``)."""
    x = _device(a, "outer")
    y = _device(b, "outer", x)
    r = _U["multiply"](x.reshape((x.size, 1)), y.reshape((1, y.size)))
    return _out(r, out, "outer")


def ptp(a, axis=None, out=None, keepdims=False) -> DeviceArray:
    """Range (max - min) along ``axis`` (NumPy's ``ptp``; integers wrap as NumPy's do)."""
    x = _device(a, "ptp")
    return _out(_U["subtract"](max(x, axis=axis, keepdims=keepdims), min(x, axis=axis, keepdims=keepdims)), out,
                "ptp")


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """The (weighted) average along ``axis`` (NumPy's ``average``): ``sum(a * w) / sum(w)``.

    Without weights it is ``mean``. 1-d ``weights`` apply along a single
    ``axis``. ``returned=True`` also gives the sum of the weights.
    ``ZeroDivisionError`` when the weights sum to zero, as in NumPy (this
    waits for that sum).
    """
    op = "average"
    x = _device(a, op)
    axes = _array._axes(axis, x.ndim, op)
    if weights is None:
        from ._statistical import mean

        avg = mean(x, axis=axes, keepdims=keepdims)
        n = x.size if axes is None else math.prod(x.shape[d] for d in axes)
        scl = _creation.full(avg.shape, n, dtype=avg.dtype, device=avg.placement)
    else:
        w = _device(weights, op, x)
        if w.shape != x.shape:
            if axes is None:
                raise TypeError(f"{op}: axis must be specified when shapes of a and weights differ")
            if w.ndim != 1 or len(axes) != 1:
                raise TypeError(f"{op}: 1D weights expected when shapes of a and weights differ")
            if w.shape[0] != x.shape[axes[0]]:
                raise ValueError(f"{op}: length of weights differs from that of the specified axis")
            shape = [1] * x.ndim
            shape[axes[0]] = w.shape[0]
            w = w.reshape(tuple(shape))
        rdt = np.result_type(x.dtype if x.dtype.kind in "fc" else np.float64, w.dtype)
        scl = sum(_manipulation.broadcast_to(w, x.shape).astype(rdt), axis=axes, keepdims=keepdims)
        if bool(_U["logical_or"]._reduce(_U["equal"](scl, 0), None, np.dtype(bool), np.dtype(bool), None, False,
                                         0.0, op).item()):
            raise ZeroDivisionError(f"{op}: weights sum to zero, can't be normalized")
        avg = _U["divide"](sum(_U["multiply"](x.astype(rdt), w.astype(rdt)), axis=axes, keepdims=keepdims), scl)
    return (avg, scl) if returned else avg


def append(arr, values, axis=None) -> DeviceArray:
    """``values`` joined to the end of ``arr`` (flattened both when ``axis`` is None; NumPy's ``append``)."""
    x = _device(arr, "append")
    v = _device(values, "append", x)
    if axis is None:
        return _concat([x.reshape(-1), v.reshape(-1)], 0, None, "append")
    return _concat([x, v], axis, None, "append")


def ediff1d(ary, to_end=None, to_begin=None) -> DeviceArray:
    """Differences of consecutive elements of the flattened array, with optional ends (NumPy's ``ediff1d``)."""
    x = _device(ary, "ediff1d").reshape(-1)
    d = _U["subtract"](x[1:], x[:-1])
    parts = []
    if to_begin is not None:
        parts.append(_device(to_begin, "ediff1d", x).reshape(-1).astype(d.dtype))
    parts.append(d)
    if to_end is not None:
        parts.append(_device(to_end, "ediff1d", x).reshape(-1).astype(d.dtype))
    return d if len(parts) == 1 else _concat(parts, 0, None, "ediff1d")


def _np_eig(a):
    # NumPy's eig returns real results when every eigenvalue is real; hx.linalg.eig's are always complex.
    return linalg.eig(a)


_array._ARRAY_FUNCTIONS.update({
    np.atleast_1d: atleast_1d, np.atleast_2d: atleast_2d, np.atleast_3d: atleast_3d, np.vstack: vstack,
    np.hstack: hstack, np.dstack: dstack, np.column_stack: column_stack, np.split: split,
    np.array_split: array_split, np.hsplit: hsplit, np.vsplit: vsplit, np.dsplit: dsplit, np.diagonal: diagonal,
    np.trace: trace, np.diag: diag, np.fliplr: fliplr, np.flipud: flipud, np.rot90: rot90, np.outer: outer,
    np.ptp: ptp, np.average: average, np.append: append, np.ediff1d: ediff1d,
    np.linalg.eig: _np_eig, np.linalg.eigvals: linalg.eigvals,
})
