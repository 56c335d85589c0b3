"""Cumulative functions of the array API's statistical chapter (and NumPy's
``cumsum``/``cumprod``/``diff``).

Scans are sequential along the axis (each step rounded to the result dtype),
as NumPy's cumsum is (Note [Scan order] in ext/core/kernels/scan.h), and run
asynchronously on the compute lane. Integer and bool inputs accumulate in
int64 (uint64 for unsigned), NumPy 2's and the array API's rule.
"""

from __future__ import annotations

import numpy as np

from . import _array, _core
from ._array import DeviceArray, _device, _dtype, _flag, _sum_dtype

__all__ = ["cumulative_sum", "cumulative_prod", "cumsum", "cumprod", "diff"]


def _scan(op, x, axis, dtype, include_initial, product, flatten):
    x = _device(x, op)
    include_initial = _flag(include_initial, op, "include_initial")
    dt = _dtype(dtype, op) if dtype is not None else _sum_dtype(x.dtype)
    if axis is None:
        if flatten:
            x = x.reshape(-1)
        elif x.ndim != 1:
            raise ValueError(f"{op}: axis must be given for an array of {x.ndim} dimensions (only 1-d input may "
                             "omit it)")
        axis = 0
    if x.ndim == 0:
        raise ValueError(f"{op}: x must have at least one dimension")
    return _core._cumulative(x, axis, product, dt, include_initial, op)


def cumulative_sum(x, /, *, axis: int | None = None, dtype=None, include_initial: bool = False) -> DeviceArray:
    """Cumulative sum along ``axis`` (required unless ``x`` is 1-d); ``include_initial`` prepends a 0.

    The dtype defaults to ``x``'s, with bool and integers widened to int64
    (uint64 for unsigned); ``x`` is cast to it first.
    """
    return _scan("cumulative_sum", x, axis, dtype, include_initial, False, False)


def cumulative_prod(x, /, *, axis: int | None = None, dtype=None, include_initial: bool = False) -> DeviceArray:
    """Cumulative product along ``axis`` (required unless ``x`` is 1-d); ``include_initial`` prepends a 1."""
    return _scan("cumulative_prod", x, axis, dtype, include_initial, True, False)


def _out(result, out, op):
    if out is None:
        return result
    if not isinstance(out, DeviceArray):
        raise TypeError(f"{op}: out must be a DeviceArray, got {type(out).__name__}")
    if out.shape != result.shape:
        raise ValueError(f"{op}: out has shape {out.shape}, expected {result.shape}")
    out._copy_from(result, False, op)
    return out


def cumsum(a, axis: int | None = None, dtype=None, out: DeviceArray | None = None) -> DeviceArray:
    """NumPy's cumsum: ``axis=None`` scans the flattened array; dtype rules as cumulative_sum."""
    return _out(_scan("cumsum", a, axis, dtype, False, False, True), out, "cumsum")


def cumprod(a, axis: int | None = None, dtype=None, out: DeviceArray | None = None) -> DeviceArray:
    """NumPy's cumprod: ``axis=None`` scans the flattened array; dtype rules as cumulative_prod."""
    return _out(_scan("cumprod", a, axis, dtype, False, True, True), out, "cumprod")


def _along(x, axis, sl):
    return x[(slice(None),) * axis + (sl,)]


def _edge(v, x, axis, op):
    v = _device(v, op, like=x)
    if v.ndim == 0:
        shape = list(x.shape)
        shape[axis] = 1
        v = _array.broadcast_to(v, tuple(shape))
    return v


def diff(a, /, n: int = 1, axis: int = -1, prepend=None, append=None) -> DeviceArray:
    """The n-th discrete difference along ``axis`` (NumPy's and the array API's ``diff``).

    ``prepend``/``append`` (scalars broadcast to one slice) are joined to
    ``a`` first. Bool input differences with ``not_equal``, others subtract
    (integers wrap). Built from views and ufuncs, so it stays asynchronous.
    """
    op = "diff"
    x = _device(a, op)
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{op}: n must be an integer, got {n!r}")
    if n < 0:
        raise ValueError(f"{op}: order n must be non-negative, got {n}")
    if x.ndim == 0:
        raise ValueError(f"{op}: x must have at least one dimension")
    (axis,) = _array._axes(axis, x.ndim, op)
    if n == 0:
        return x
    parts = [_edge(prepend, x, axis, op)] if prepend is not None else []
    parts.append(x)
    if append is not None:
        parts.append(_edge(append, x, axis, op))
    if len(parts) > 1:
        x = _array.concatenate(parts, axis=axis)
    f = _core._ufuncs["not_equal" if x.dtype.kind == "b" else "subtract"]
    for _ in range(n):
        x = f(_along(x, axis, slice(1, None)), _along(x, axis, slice(None, -1)))
    return x


def _cumsum_method(self, axis=None, dtype=None):
    return cumsum(self, axis, dtype)


def _cumprod_method(self, axis=None, dtype=None):
    return cumprod(self, axis, dtype)


_array._METHODS.update({"cumsum": _cumsum_method, "cumprod": _cumprod_method})
_array._ARRAY_FUNCTIONS.update({np.cumsum: cumsum, np.cumprod: cumprod, np.diff: diff})
if hasattr(np, "cumulative_sum"):
    _array._ARRAY_FUNCTIONS.update({np.cumulative_sum: cumulative_sum, np.cumulative_prod: cumulative_prod})
