"""NumPy's NaN-ignoring reductions (``nansum`` ... ``nanpercentile``) and ``median``, on the device.

xarray calls these for float data (its default ``skipna``), so they are what
``DataArray.mean()`` and friends run. Each is composed of device ufuncs,
reductions, scans, sorts and gathers (no host round trip of the data):
NaNs are replaced by the operation's neutral value (``where(isnan(x), 0, x)``)
and the per-slice count of the others divides where NumPy divides.
Integer and bool inputs have no NaN: they take the plain function, as
NumPy's do.

Note [All-NaN slices wait for one flag]: NumPy warns (``nanmean``, ``nanmin``,
``nanvar``, ``nanmedian`` ...) or raises (``nanargmin``/``nanargmax``) when a
slice has no number. Deciding that needs to know whether any slice is empty,
so these functions wait for one device-computed bool (the ``any`` of the
empty-slice mask) before they return; the result itself is already
computed by then or in flight. The warnings are NumPy's, word for word, so
code that filters them (xarray does) keeps working.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from . import _array, _core, _manipulation
from ._array import DeviceArray, _device, _dtype, _flag
from ._complex import real
from ._indexing import take_along_axis
from ._sorting import sort
from ._statistical import _QUANTILE_METHODS, _out, _probabilities, cumprod, cumsum, max, mean, min, prod, quantile, std, sum, var
from ._searching import argmax, argmin, where

__all__ = ["nansum", "nanprod", "nanmean", "nanmin", "nanmax", "nanargmin", "nanargmax", "nanvar", "nanstd",
           "nanmedian", "nanquantile", "nanpercentile", "nancumsum", "nancumprod", "median"]

_U = _array._U


def _no_kw(op, kw):
    if kw:
        raise TypeError(f"{op}: hrxarray does not take {sorted(kw)}")


def _floating(x) -> bool:
    """Whether ``x`` can hold a NaN (float or complex); bfp16 has no arithmetic and is refused."""
    if x.dtype is _array.bfp16:
        raise TypeError("bfp16 arrays have no arithmetic; convert with astype(hx.float32) first")
    return x.dtype.kind in "fc"


def _replaced(x, value):
    """(x with NaNs replaced by ``value``, the NaN mask)."""
    mask = _U["isnan"](x)
    return where(mask, value, x), mask


def _any(mask) -> bool:
    """Whether any element of the device bool ``mask`` is true: waits for it (Note [All-NaN slices wait for one flag])."""
    return bool(_U["logical_or"]._reduce(mask, None, np.dtype(bool), np.dtype(bool), None, False, 0.0, "any").item())


def _warn(message, depth=0):
    """NumPy's RuntimeWarning, attributed to the caller of the public function ``depth`` frames above ours."""
    warnings.warn(message, RuntimeWarning, stacklevel=3 + depth)


def _count(mask, axes, keepdims):
    """The number of non-NaN elements per slice, int64."""
    return sum(_U["logical_not"](mask), axis=axes, dtype=np.int64, keepdims=keepdims)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, **kw) -> DeviceArray:
    """Sum over ``axis`` treating NaNs as zero (NumPy's ``nansum``; an all-NaN slice sums to 0)."""
    _no_kw("nansum", kw)
    x = _device(a, "nansum")
    if _floating(x):
        x, _ = _replaced(x, 0)
    return sum(x, axis=axis, dtype=dtype, out=out, keepdims=keepdims)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, **kw) -> DeviceArray:
    """Product over ``axis`` treating NaNs as one (NumPy's ``nanprod``; an all-NaN slice gives 1)."""
    _no_kw("nanprod", kw)
    x = _device(a, "nanprod")
    if _floating(x):
        x, _ = _replaced(x, 1)
    return prod(x, axis=axis, dtype=dtype, out=out, keepdims=keepdims)


def nancumsum(a, axis=None, dtype=None, out=None) -> DeviceArray:
    """Cumulative sum treating NaNs as zero (NumPy's ``nancumsum``; ``axis=None`` scans the flattened array)."""
    x = _device(a, "nancumsum")
    if _floating(x):
        x, _ = _replaced(x, 0)
    return cumsum(x, axis, dtype, out)


def nancumprod(a, axis=None, dtype=None, out=None) -> DeviceArray:
    """Cumulative product treating NaNs as one (NumPy's ``nancumprod``)."""
    x = _device(a, "nancumprod")
    if _floating(x):
        x, _ = _replaced(x, 1)
    return cumprod(x, axis, dtype, out)


def _inexact_dtype(op, dtype):
    if dtype is None:
        return None
    dt = _dtype(dtype, op)
    if dt.kind not in "fc":
        raise TypeError(f"{op}: if a is inexact, then dtype must be inexact, got {dt}")
    return dt


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, **kw) -> DeviceArray:
    """Mean over ``axis`` ignoring NaNs (NumPy's ``nanmean``).

    A float input keeps its dtype (or ``dtype``); integers give float64 (the
    plain ``mean``). A slice with no number gives NaN and NumPy's
    ``RuntimeWarning: Mean of empty slice``.
    """
    op = "nanmean"
    _no_kw(op, kw)
    x = _device(a, op)
    keepdims = _flag(keepdims, op, "keepdims")
    if not _floating(x):
        return mean(x, axis=axis, dtype=dtype, out=out, keepdims=keepdims)
    dt = _inexact_dtype(op, dtype) or x.dtype
    axes = _array._axes(axis, x.ndim, op)
    filled, mask = _replaced(x, 0)
    cnt = _count(mask, axes, keepdims)
    tot = sum(filled, axis=axes, dtype=dt, keepdims=keepdims)
    empty = _U["equal"](cnt, 0)
    if _any(empty):
        _warn("Mean of empty slice")
    # 0 / 0 is the NaN of an empty slice; the division is correctly rounded in dt as NumPy's is.
    return _out(_U["divide"](tot, cnt.astype(real_dtype(dt))).astype(dt, copy=False), out, op)


def real_dtype(dt):
    """The real dtype of the same precision (complex64 -> float32); itself for reals."""
    return np.empty(0, dt).real.dtype if dt.kind == "c" else dt


def _extreme(op, a, axis, out, keepdims, kw, smallest):
    _no_kw(op, kw)
    x = _device(a, op)
    keepdims = _flag(keepdims, op, "keepdims")
    plain = min if smallest else max
    if not _floating(x) or x.dtype.kind == "c":
        return plain(x, axis=axis, out=out, keepdims=keepdims)
    axes = _array._axes(axis, x.ndim, op)
    filled, mask = _replaced(x, math.inf if smallest else -math.inf)
    r = plain(filled, axis=axes, keepdims=keepdims)
    allnan = _U["logical_and"]._reduce(mask, axes, np.dtype(bool), np.dtype(bool), None, keepdims, 0.0, op)
    if _any(allnan):
        _warn("All-NaN slice encountered", 1)
        r = where(allnan, math.nan, r)
    return _out(r, out, op)


def nanmin(a, axis=None, out=None, keepdims=False, **kw) -> DeviceArray:
    """Minimum over ``axis`` ignoring NaNs (NumPy's ``nanmin``): NaN and a RuntimeWarning for an all-NaN slice."""
    return _extreme("nanmin", a, axis, out, keepdims, kw, True)


def nanmax(a, axis=None, out=None, keepdims=False, **kw) -> DeviceArray:
    """Maximum over ``axis`` ignoring NaNs (NumPy's ``nanmax``): NaN and a RuntimeWarning for an all-NaN slice."""
    return _extreme("nanmax", a, axis, out, keepdims, kw, False)


def _arg(op, a, axis, out, keepdims, smallest):
    x = _device(a, op)
    keepdims = _flag(keepdims, op, "keepdims")
    plain = argmin if smallest else argmax
    if _floating(x) and x.dtype.kind == "f":
        filled, mask = _replaced(x, math.inf if smallest else -math.inf)
        if axis is not None:
            (ax,) = _array._axes(axis, x.ndim, op)
            allnan = _U["logical_and"]._reduce(mask, (ax,), np.dtype(bool), np.dtype(bool), None, False, 0.0, op)
        else:
            allnan = _U["logical_and"]._reduce(mask, None, np.dtype(bool), np.dtype(bool), None, False, 0.0, op)
        if _any(allnan):
            raise ValueError(f"{op}: All-NaN slice encountered")
        x = filled
    return _out(plain(x, axis=axis, keepdims=keepdims), out, op)


def nanargmin(a, axis=None, out=None, *, keepdims=False) -> DeviceArray:
    """Index of the first minimum ignoring NaNs (NumPy's ``nanargmin``); ``ValueError`` for an all-NaN slice."""
    return _arg("nanargmin", a, axis, out, keepdims, True)


def nanargmax(a, axis=None, out=None, *, keepdims=False) -> DeviceArray:
    """Index of the first maximum ignoring NaNs (NumPy's ``nanargmax``); ``ValueError`` for an all-NaN slice."""
    return _arg("nanargmax", a, axis, out, keepdims, False)


def _nanvar(op, a, axis, dtype, out, ddof, keepdims, correction, kw, root):
    _no_kw(op, kw)
    x = _device(a, op)
    keepdims = _flag(keepdims, op, "keepdims")
    if correction is not None:
        if ddof != 0:
            raise TypeError(f"{op}: give correction or ddof, not both")
        ddof = correction
    if isinstance(ddof, (bool, np.bool_)) or not isinstance(ddof, (int, float, np.integer, np.floating)):
        raise TypeError(f"{op}: ddof must be a real number, got {ddof!r}")
    if not _floating(x):
        return (std if root else var)(x, axis, dtype, out, ddof, keepdims)
    dt = _inexact_dtype(op, dtype) or x.dtype
    axes = _array._axes(axis, x.ndim, op)
    # NumPy's _nanvar: mean of the numbers, squared deviations with NaNs zeroed, divided by count - ddof.
    filled, mask = _replaced(x, 0)
    cnt = _count(mask, axes, True)
    rdt = real_dtype(dt)
    avg = _U["divide"](sum(filled, axis=axes, dtype=dt, keepdims=True), cnt.astype(rdt)).astype(dt, copy=False)
    d = where(mask, 0, _U["subtract"](filled.astype(dt, copy=False), avg))
    sq = real(_U["multiply"](d, _U["conjugate"](d))) if dt.kind == "c" else _U["multiply"](d, d)
    v = sum(sq, axis=axes, keepdims=keepdims)
    dof = _U["subtract"](cnt if keepdims else _squeeze(cnt, axes, x.ndim), float(ddof))
    bad = _U["less_equal"](dof, 0)
    result = _U["divide"](v, dof.astype(rdt)).astype(rdt, copy=False)
    if _any(bad):
        _warn("Degrees of freedom <= 0 for slice.", 1)
        result = where(bad, math.nan, result)
    if root:
        result = _U["sqrt"](result)
    return _out(result, out, op)


def _squeeze(x, axes, ndim):
    drop = tuple(range(ndim)) if axes is None else axes
    return _manipulation.squeeze(x, axis=drop) if drop else x


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None, **kw) -> DeviceArray:
    """Variance over ``axis`` ignoring NaNs (NumPy's ``nanvar``: divisor ``count - ddof``).

    A slice with ``count - ddof <= 0`` gives NaN and NumPy's
    ``RuntimeWarning: Degrees of freedom <= 0 for slice.``; complex input
    gives its real dtype.
    """
    return _nanvar("nanvar", a, axis, dtype, out, ddof, keepdims, correction, kw, False)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None, **kw) -> DeviceArray:
    """Standard deviation over ``axis`` ignoring NaNs: ``sqrt(nanvar(...))`` (NumPy's ``nanstd``)."""
    return _nanvar("nanstd", a, axis, dtype, out, ddof, keepdims, correction, kw, True)


# --- order statistics ---------------------------------------------------------------------------


def _last(op, x, axis):
    """(x with the reduced axes moved last and merged into one; the reduced axes; their length)."""
    axes = _array._axes(axis, x.ndim, op)
    if axes is None:
        axes = tuple(range(x.ndim))
    keep = [d for d in range(x.ndim) if d not in axes]
    n = math.prod(x.shape[d] for d in axes)
    moved = x.transpose(tuple(keep) + tuple(axes))
    return moved.reshape(tuple(x.shape[d] for d in keep) + (n,)), axes, n


def _sorted_last(op, x, axis):
    """(x sorted along the reduced axes, moved last and merged into one; the reduced axes; their length)."""
    flat, axes, n = _last(op, x, axis)
    return sort(flat, axis=-1), axes, n


def _kept(result, x, axes, keepdims, lead=()):
    if not keepdims:
        return result
    shape = list(x.shape)
    for d in axes:
        shape[d] = 1
    return result.reshape(tuple(lead) + tuple(shape))


def _gather(srt, idx):
    return take_along_axis(srt, _manipulation.expand_dims(idx, axis=-1), axis=-1)[..., 0]


def _mean_dtype(dt):
    """(accumulation dtype, result dtype) of NumPy's mean of two elements."""
    if dt.kind in "biu":
        return np.dtype(np.float64), np.dtype(np.float64)
    if dt.itemsize < 4 and dt.kind == "f":
        return np.dtype(np.float32), dt
    return dt, dt


def _midmean(lo, hi, dt):
    acc, rdt = _mean_dtype(dt)
    return _U["divide"](_U["add"](lo.astype(acc, copy=False), hi.astype(acc, copy=False)), 2.0).astype(rdt, copy=False)


def _check_median(op, x):
    if x.dtype.kind == "c":
        raise TypeError(f"{op}: a must be real, got {x.dtype}")
    if x.dtype is _array.bfp16:
        raise TypeError(f"{op}: bfp16 arrays cannot be sorted; convert with astype(hx.float32) first")


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False) -> DeviceArray:
    """The median along ``axis`` (NumPy's ``median``): the mean of the two middle values of an even count.

    Selects the middle values of each slice on the compute lane (no full
    sort; bfloat16 sorts); a slice with a NaN gives NaN. Integers give
    float64, float16 averages in float32 (NumPy's ``mean``).
    ``overwrite_input`` is accepted and ignored.
    """
    op = "median"
    x = _device(a, op)
    keepdims = _flag(keepdims, op, "keepdims")
    _check_median(op, x)
    acc, rdt = _mean_dtype(x.dtype)
    if acc in (np.float32, np.float64) and x.dtype.kind in "biuf":
        # A selection kernel per slice (kernels/stats.h): a monotone cast to acc keeps the middle values'
        # order, and the mean of the middle two is NumPy's, in acc.
        flat, axes, n = _last(op, x, axis)
        if n == 0:
            raise ValueError(f"{op}: cannot take the median of an empty reduction (shape {x.shape}, axis {axis!r})")
        return _out(_kept(_core._median(flat, acc, rdt, False, op), x, axes, keepdims), out, op)
    srt, axes, n = _sorted_last(op, x, axis)
    if n == 0:
        raise ValueError(f"{op}: cannot take the median of an empty reduction (shape {x.shape}, axis {axis!r})")
    r = _midmean(srt[..., (n - 1) // 2], srt[..., n // 2], x.dtype)
    if x.dtype.kind == "f":
        r = where(_U["isnan"](srt[..., n - 1]), math.nan, r)
    return _out(_kept(r, x, axes, keepdims), out, op)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False) -> DeviceArray:
    """The median along ``axis`` ignoring NaNs (NumPy's ``nanmedian``).

    float16/32/64 slices run the selection kernel of ``median`` with each
    slice's NaNs left out (no sort); other floats (bfloat16) sort, NaNs
    last, and gather each slice's middle numbers. An all-NaN slice gives NaN
    and NumPy's ``RuntimeWarning: All-NaN slice encountered``.
    """
    op = "nanmedian"
    x = _device(a, op)
    keepdims = _flag(keepdims, op, "keepdims")
    _check_median(op, x)
    if x.dtype.kind != "f":
        return median(x, axis, out, overwrite_input, keepdims)
    acc, rdt = _mean_dtype(x.dtype)
    if acc in (np.float32, np.float64):
        flat, axes, n = _last(op, x, axis)
        if n == 0:
            raise ValueError(f"{op}: cannot take the median of an empty reduction (shape {x.shape}, axis {axis!r})")
        r = _core._median(flat, acc, rdt, True, op)
        if _any(_U["logical_and"].reduce(_U["isnan"](flat), axis=-1)):
            _warn("All-NaN slice encountered")
        return _out(_kept(r, x, axes, keepdims), out, op)
    srt, axes, n = _sorted_last(op, x, axis)
    if n == 0:
        raise ValueError(f"{op}: cannot take the median of an empty reduction (shape {x.shape}, axis {axis!r})")
    k = _count(_U["isnan"](srt), -1, False)
    lo = _U["maximum"](_U["floor_divide"](_U["subtract"](k, 1), 2), 0)
    hi = _U["minimum"](_U["floor_divide"](k, 2), n - 1)
    r = _midmean(_gather(srt, lo), _gather(srt, hi), x.dtype)
    empty = _U["equal"](k, 0)
    if _any(empty):
        _warn("All-NaN slice encountered")
        r = where(empty, math.nan, r)
    return _out(_kept(r, x, axes, keepdims), out, op)


def _nanquantile(op, a, q, axis, out, method, keepdims, weights, interpolation, scale):
    if weights is not None:
        raise TypeError(f"{op}: weights= is not supported")
    if interpolation is not None:
        raise TypeError(f"{op}: interpolation= was renamed method= in NumPy 1.22; use method=")
    if method not in _QUANTILE_METHODS:
        raise ValueError(f"{op}: method must be one of {', '.join(map(repr, _QUANTILE_METHODS))}, got {method!r}")
    x = _device(a, op)
    keepdims = _flag(keepdims, op, "keepdims")
    _check_median(op, x)
    qs, weak = _probabilities(q, scale, op)
    if x.dtype.kind != "f":
        return quantile(x, qs if not weak else float(qs), axis, out, False, method, keepdims)
    srt, axes, n = _sorted_last(op, x, axis)
    if n == 0:
        raise ValueError(f"{op}: cannot take a quantile of an empty reduction (shape {x.shape}, axis {axis!r})")
    k = _count(_U["isnan"](srt), -1, False)
    interpolate = method == "midpoint" or (method == "linear" and qs.dtype.kind == "f")
    rdt = (x.dtype if weak else np.result_type(x.dtype, qs.dtype)) if interpolate else x.dtype
    idt = np.dtype(np.float64)
    last = _U["maximum"](_U["subtract"](k, 1), 0)
    span = last.astype(idt)
    results = []
    for qv in qs.reshape(-1):
        vi = _U["multiply"](span, float(qv))  # each slice's virtual index into its own numbers
        flo = _U["floor"](vi)
        lo = flo.astype(np.int64)
        if method == "lower" or not interpolate and method in ("linear", "midpoint"):
            r = _gather(srt, lo)
        elif method == "higher":
            r = _gather(srt, _U["ceil"](vi).astype(np.int64))
        elif method == "nearest":
            r = _gather(srt, _U["rint"](vi).astype(np.int64))
        else:
            hi = _U["minimum"](_U["add"](lo, 1), last)
            g = _U["subtract"](vi, flo)
            if method == "midpoint":
                g = where(_U["not_equal"](g, 0), 0.5, g)
            a_lo, a_hi = _gather(srt, lo), _gather(srt, hi)
            diff = _U["subtract"](a_hi, a_lo)
            if srt.dtype != rdt:
                a_lo, a_hi, diff = a_lo.astype(rdt), a_hi.astype(rdt), diff.astype(rdt)
            g = g.astype(rdt)
            # NumPy's _lerp: from the lower value below t = 0.5, from the upper one above.
            up = _U["subtract"](a_hi, _U["multiply"](diff, _U["subtract"](1, g)))
            down = _U["add"](a_lo, _U["multiply"](diff, g))
            r = where(_U["greater_equal"](g, 0.5), up, down)
        results.append(r)
    result = results[0] if qs.ndim == 0 else _manipulation.stack(results).reshape(qs.shape + results[0].shape)
    empty = _U["equal"](k, 0)
    if _any(empty):
        _warn("All-NaN slice encountered", 1)
        result = where(empty, math.nan, result)
    return _out(_kept(result, x, axes, keepdims, qs.shape), out, op)


def nanquantile(a: DeviceArray, q: float | ArrayLike, axis: int | tuple[int, ...] | None = None,
                out: DeviceArray | None = None, overwrite_input: bool = False, method: str = "linear",
                keepdims: bool = False, *, weights: Any = None, interpolation: Any = None) -> DeviceArray:
    """The ``q``-th quantiles of ``a`` along ``axis`` ignoring NaNs (NumPy's ``nanquantile``).

    Each slice's numbers (its first ``count`` sorted elements) are
    interpolated as ``hx.quantile`` does, with per-slice indices gathered on
    the device. An all-NaN slice gives NaN and NumPy's RuntimeWarning.
    """
    return _nanquantile("nanquantile", a, q, axis, out, method, keepdims, weights, interpolation, 1)


def nanpercentile(a: DeviceArray, q: float | ArrayLike, axis: int | tuple[int, ...] | None = None,
                  out: DeviceArray | None = None, overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False, *, weights: Any = None, interpolation: Any = None) -> DeviceArray:
    """The ``q``-th percentiles (``0 <= q <= 100``) ignoring NaNs: ``nanquantile(a, q / 100, ...)``."""
    return _nanquantile("nanpercentile", a, q, axis, out, method, keepdims, weights, interpolation, 100)


_array._ARRAY_FUNCTIONS.update({
    np.nansum: nansum, np.nanprod: nanprod, np.nanmean: nanmean, np.nanmin: nanmin, np.nanmax: nanmax,
    np.nanargmin: nanargmin, np.nanargmax: nanargmax, np.nanvar: nanvar, np.nanstd: nanstd,
    np.nanmedian: nanmedian, np.nanquantile: nanquantile, np.nanpercentile: nanpercentile,
    np.nancumsum: nancumsum, np.nancumprod: nancumprod, np.median: median,
})
