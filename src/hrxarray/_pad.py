"""``pad`` (NumPy's ``np.pad`` modes) and its NumPy dispatch.

A chapter of its own above manipulation, statistics and searching: its statistic modes (``maximum``,
``mean``, ``median``, ...) reduce with the statistical functions and its ramps select with ``where``,
while ``concatenate``, ``broadcast_to`` and the rest of manipulation need neither, so keeping pad here
keeps the package's import graph free of cycles (tests/test_layers.py).
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from . import _array, _creation, _searching, _statistical
from ._array import DeviceArray, _device
from ._manipulation import _empty_result, _gather, _no_bfp16, flip
from ._sorting import sort

__all__ = ["pad"]


_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap", "empty", "linear_ramp", "maximum", "minimum",
              "mean", "median")
_PAD_STATS = ("maximum", "minimum", "mean", "median")


def _pad_table(n: int, before: int, after: int, mode: str) -> np.ndarray:
    """Input positions for output positions -before .. n+after-1 of one axis under ``mode``."""
    i = np.arange(-before, n + after, dtype=np.int64)
    if mode == "edge":
        return np.clip(i, 0, n - 1)
    if mode == "wrap":
        return i % n
    if mode == "symmetric":  # period 2n, the edge repeated: ... 1 0 | 0 1 .. n-1 | n-1 n-2 ...
        j = i % (2 * n)
        return np.where(j < n, j, 2 * n - 1 - j)
    if n == 1:  # reflect of one element repeats it
        return np.zeros_like(i)
    j = i % (2 * n - 2)  # reflect: period 2n-2, the edge not repeated
    return np.where(j < n, j, 2 * n - 2 - j)


def _pad_pairs(value: Any, ndim: int, op: str, what: str, integer: bool) -> np.ndarray:
    """NumPy's spellings of per-axis (before, after) pairs, as an (ndim, 2) array."""
    arr = np.asarray(value)
    if integer:
        if arr.dtype.kind not in "iu":
            if arr.size or arr.dtype.kind not in "f":
                raise TypeError(f"{op}: {what} must be integers, got {value!r}")
        arr = arr.astype(np.int64)
    try:
        return np.broadcast_to(arr, (ndim, 2))
    except ValueError:
        raise ValueError(f"{op}: {what} {value!r} cannot be read as (before, after) pairs for {ndim} axes") from None


def pad(x: DeviceArray, pad_width: Any, mode: str = "constant", *, constant_values: Any = 0,
        stat_length: Any = None, end_values: Any = 0) -> DeviceArray:
    """``x`` padded along each axis (NumPy's ``pad``).

    ``pad_width`` is NumPy's: an integer, a ``(before, after)`` pair, or one pair
    per axis. ``mode`` is ``"constant"`` (``constant_values``: a scalar or
    NumPy's per-axis pairs; later axes win at the corners, as NumPy fills them),
    ``"edge"``, ``"reflect"``, ``"symmetric"``, ``"wrap"``, ``"empty"`` (NumPy leaves
    the border undefined; here it is zero, as every new allocation is),
    ``"maximum"``, ``"minimum"``, ``"mean"``, ``"median"`` (the statistic of the
    ``stat_length`` elements nearest each border, all of the axis by default;
    rounded to the nearest integer, ties to even, for integer dtypes) or
    ``"linear_ramp"`` (from ``end_values`` at the outer border to the edge
    element, as NumPy's ``linspace`` computes it). As NumPy does, the axes are
    padded in order, each over the border already added to the earlier axes.
    The result is a new array of ``x``'s dtype and placement, filled on the
    compute lane.
    """
    op = "pad"
    x = _device(x, op)
    _no_bfp16(x, op)
    if mode not in _PAD_MODES:
        raise ValueError(f"{op}: mode must be one of {', '.join(_PAD_MODES)}, got {mode!r}")
    widths = _pad_pairs(pad_width, x.ndim, op, "pad_width", True)
    if (widths < 0).any():
        raise ValueError(f"{op}: pad_width may not contain negative values, got {pad_width!r}")
    shape = tuple(int(n + b + a) for n, (b, a) in zip(x.shape, widths.tolist()))
    if mode in ("constant", "empty"):
        return _pad_constant(x, widths, shape, constant_values if mode == "constant" else None, op)
    for d, (n, (b, a)) in enumerate(zip(x.shape, widths.tolist())):
        if n == 0 and b + a:
            raise ValueError(f"{op}: can't extend empty axis {d} using modes other than 'constant'")
    if mode in _PAD_STATS or mode == "linear_ramp":
        if x.dtype.kind == "c" and mode != "mean":
            raise TypeError(f"{op}: mode {mode!r} is not defined for complex dtypes ({x.dtype})")
        return _pad_by_axis(x, widths.tolist(), shape, mode, stat_length, end_values, op)
    tables = [None if b == a == 0 else _pad_table(n, b, a, mode) for n, (b, a) in zip(x.shape, widths.tolist())]
    if builtins.all(t is None for t in tables):
        return x.copy()
    return _gather(x, tables, op)


def _along(d: int, ndim: int, start: int, stop: int) -> tuple:
    """The index taking [start, stop) along axis d and everything along the others."""
    return (slice(None),) * d + (slice(start, stop),) + (slice(None),) * (ndim - d - 1)


def _pad_by_axis(x: DeviceArray, widths: list, shape: tuple, mode: str, stat_length: Any, end_values: Any,
                 op: str) -> DeviceArray:
    """The statistic and ramp modes: NumPy pads axis after axis, each axis over the border the earlier
    ones added (and the original extent of the later ones), reading the values placed before it."""
    if shape == x.shape:
        return x.copy()
    out = _empty_result(x, shape, op)
    if out.size == 0:
        return out
    interior = tuple(slice(b, b + n) for n, (b, _) in zip(x.shape, widths))
    out[interior]._copy_from(x, False, op)
    if mode == "linear_ramp":
        pairs = _numpy_pairs(end_values, x.ndim, op, "end_values", False)
    else:
        pairs = _numpy_pairs(stat_length, x.ndim, op, "stat_length", True)
    for d, (n, (b, a)) in enumerate(zip(x.shape, widths)):
        if b == a == 0:
            continue
        roi = out[(slice(None),) * (d + 1) + interior[d + 1:]]
        if mode == "linear_ramp":
            left = _ramp(roi[_along(d, x.ndim, b, b + 1)], pairs[d][0], b, d, op)
            right = _ramp(roi[_along(d, x.ndim, b + n - 1, b + n)], pairs[d][1], a, d, op)
            right = None if right is None else flip(right, axis=d)
        else:
            left, right = _pad_stats(roi, d, b, n, pairs[d], mode, op)
        if b:
            roi[_along(d, x.ndim, 0, b)]._copy_from(left, False, op)
        if a:
            roi[_along(d, x.ndim, b + n, b + n + a)]._copy_from(right, False, op)
    return out


def _numpy_pairs(value: Any, ndim: int, op: str, what: str, index: bool) -> list:
    """NumPy's per-axis (before, after) pairs of stat_length / end_values, element types included:
    one or two values come out as NumPy scalars, longer specs as Python scalars (which promote weakly),
    and that decides the dtype NumPy's linear_ramp computes in."""
    if value is None:
        return [(None, None)] * ndim
    if isinstance(value, DeviceArray):
        value = value._to_numpy()
    arr = np.array(value)
    if index:
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"{op}: {what} must be integers, got {value!r}")
        arr = np.round(arr).astype(np.int64)
        if arr.size and arr.min() < 0:
            raise ValueError(f"{op}: {what} may not contain negative values, got {value!r}")
    elif arr.dtype.kind not in "biufc":
        raise TypeError(f"{op}: {what} must be numbers, got {value!r}")
    if arr.ndim < 3 and arr.size == 1:
        v = arr.ravel()[0]
        return [(v, v)] * ndim
    if arr.ndim < 3 and arr.size == 2 and arr.shape != (2, 1):
        flat = arr.ravel()
        return [(flat[0], flat[1])] * ndim
    return [tuple(p) for p in _pad_pairs(arr, ndim, op, what, index).tolist()]


def _pad_stats(roi: DeviceArray, d: int, b: int, n: int, lengths: tuple, mode: str, op: str) -> tuple:
    """NumPy's (before, after) statistics of the ``lengths`` elements of ``roi`` nearest each border of axis
    d (its original extent is [b, b + n)), keeping the axis; rounded for integer dtypes."""
    ll, rl = (n if v is None or v > n else int(v) for v in lengths)
    if (ll == 0 or rl == 0) and mode in ("maximum", "minimum"):
        raise ValueError(f"{op}: stat_length of 0 yields no value for padding")
    left = _pad_stat(roi[_along(d, roi.ndim, b, b + ll)], d, mode, roi.dtype)
    if ll == rl == n:
        return left, left
    return left, _pad_stat(roi[_along(d, roi.ndim, b + n - rl, b + n)], d, mode, roi.dtype)


def _pad_stat(chunk: DeviceArray, d: int, mode: str, dtype: np.dtype) -> DeviceArray:
    U = _array._U
    if mode == "maximum":
        return _statistical.max(chunk, axis=d, keepdims=True)
    if mode == "minimum":
        return _statistical.min(chunk, axis=d, keepdims=True)
    if mode == "mean":
        stat = _statistical.mean(chunk, axis=d, keepdims=True)
    else:  # NumPy's median: the middle element, or the mean of the middle two; NaN if any is NaN
        m = chunk.shape[d]
        srt = sort(chunk, axis=d)
        stat = _statistical.mean(srt[_along(d, chunk.ndim, (m - 1) // 2, m // 2 + 1)], axis=d, keepdims=True)
        if srt.dtype.kind in "fc" and m:
            last = srt[_along(d, chunk.ndim, m - 1, m)]
            stat = _searching.where(U["isnan"](last), last.astype(stat.dtype), stat)
    if np.issubdtype(dtype, np.integer):
        stat = U["rint"](stat)
    return stat


def _ramp(edge: DeviceArray, end: Any, width: int, d: int, op: str) -> DeviceArray | None:
    """NumPy's ``linspace(end, edge, width, endpoint=False, dtype=edge.dtype, axis=d)``, op for op: computed
    in the inexact result type of ``end`` and ``edge``, floored for integer dtypes."""
    if width == 0:
        return None
    U = _array._U
    dt = np.result_type(end, edge.dtype)
    if dt.kind not in "fc":
        dt = np.dtype(np.float64)
    start = _creation.asarray(np.asarray(end).astype(dt), placement=edge.placement)
    delta = U["subtract"](edge.astype(dt), start)
    y = _creation.arange(0, width, dtype=dt, placement=edge.placement)
    y = y.reshape((1,) * d + (width,) + (1,) * (edge.ndim - d - 1))
    step = U["divide"](delta, width)
    # NumPy divides first when any step is zero (denormal deltas, gh-5437): both, chosen on the device.
    any_zero = _statistical.any(U["equal"](step, 0))
    y = U["add"](_searching.where(any_zero, U["multiply"](U["divide"](y, width), delta), U["multiply"](y, step)), start)
    if np.issubdtype(edge.dtype, np.integer):
        y = U["floor"](y)
    return y.astype(edge.dtype)


def _pad_constant(x: DeviceArray, widths: np.ndarray, shape: tuple, values: Any, op: str) -> DeviceArray:
    if isinstance(values, DeviceArray):
        values = values._to_numpy()
    host = np.asarray(values)
    if values is None:
        out = _empty_result(x, shape, op)
    elif host.ndim == 0:
        out = _creation._full(shape, host.item(), x.dtype, None, op, x)
    else:
        pairs = _pad_pairs(host, x.ndim, op, "constant_values", False)
        out = _empty_result(x, shape, op)
        for d, (b, a) in enumerate(widths.tolist()):
            lead = (slice(None),) * d
            if b:
                out[lead + (slice(0, b),)]._copy_from(pairs[d, 0].item(), False, op)
            if a:
                out[lead + (slice(shape[d] - a, shape[d]),)]._copy_from(pairs[d, 1].item(), False, op)
    if x.size:
        interior = tuple(slice(b, b + n) for n, (b, _) in zip(x.shape, widths.tolist()))
        out[interior]._copy_from(x, False, op)
    return out




def _np_pad(array, pad_width, mode="constant", **kwargs):
    extra = set(kwargs) - {"constant_values", "stat_length", "end_values"}
    if extra:
        raise TypeError(f"hrxarray's pad does not take {sorted(extra)}")
    return pad(array, pad_width, mode, **kwargs)


_array._ARRAY_FUNCTIONS.update({np.pad: _np_pad})
