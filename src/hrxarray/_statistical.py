"""The array API's statistical chapter beyond sum/prod/mean/max/min: ``std``,
``var``, the cumulative functions (and NumPy's ``cumsum``/``cumprod``/``diff``),
and NumPy's ``percentile``/``quantile``.

Scans are sequential along the axis (each step rounded to the result dtype),
as NumPy's cumsum is (Note [Scan order] in ext/core/kernels/scan.h), and run
asynchronously on the compute lane. Integer and bool inputs accumulate in
int64 (uint64 for unsigned), NumPy 2's and the array API's rule.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from . import _array, _core, _manipulation
from ._array import DeviceArray, _axes, _device, _dtype, _flag, _operand, _sum_dtype, _ufunc_reduce
from ._complex import real
from ._sorting import sort

__all__ = ["sum", "prod", "max", "min", "mean", "any", "all", "cumulative_sum", "cumulative_prod", "cumsum", "cumprod", "diff", "std", "var", "percentile",
           "quantile"]

_U = _array._U


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
    """``result`` copied into ``out`` (NumPy's ``out=``, a DeviceArray or a 1-tuple of one), or itself."""
    if isinstance(out, tuple):
        (out,) = out
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
        v = _manipulation.broadcast_to(v, tuple(shape))
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
        x = _manipulation.concatenate(parts, axis=axis)
    f = _core._ufuncs["not_equal" if x.dtype.kind == "b" else "subtract"]
    for _ in range(n):
        x = f(_along(x, axis, slice(1, None)), _along(x, axis, slice(None, -1)))
    return x


def _correction(correction, ddof, op):
    if ddof is not None:
        if correction != 0:
            raise TypeError(f"{op}: give correction or ddof, not both")
        correction = ddof
    if isinstance(correction, (bool, np.bool_)) or not isinstance(correction, (int, float, np.integer, np.floating)):
        raise TypeError(f"{op}: correction must be a real number, got {correction!r}")
    return float(correction)


def _var(op, x, axis, correction, keepdims, dtype, out, root):
    """NumPy's two-pass _var as device ufuncs and reductions (each a region on the compute lane).

    mean = sum(x) / n (pairwise, keepdims), d = x - mean, var = sum(d * d) / (n - correction) (for
    complex d * conj(d), real part), so results are NumPy's for the same summation order.
    """
    x = _device(x, op)
    keepdims = _flag(keepdims, op, "keepdims")
    axes = _array._axes(axis, x.ndim, op)
    if x.dtype is _array.bfp16:
        raise TypeError(f"{op}: bfp16 arrays have no arithmetic; convert with astype(hx.float32) first")
    if dtype is not None:
        dt = _dtype(dtype, op)
    elif x.dtype.kind in "biu":
        dt = np.dtype(np.float64)  # the default real float (NumPy, the array API)
    else:
        dt = x.dtype
    n = x.size if axes is None else math.prod(x.shape[a] for a in axes)
    # The array API: n - correction <= 0 gives NaN (NumPy divides by 0: inf for nonzero data).
    divisor = n - correction if n - correction > 0 else math.nan
    mean = _U["add"]._reduce(x, axes, dt, dt, None, True, float(n) if n else math.nan, op)
    d = _U["subtract"](x if x.dtype == dt else x.astype(dt), mean)
    if dt.kind == "c":
        sq = real(_U["multiply"](d, _U["conjugate"](d)))
    else:
        # In place: a fresh result costs first-touch page faults that cost more than the multiply.
        sq = _U["multiply"](d, d, out=d)
    result = _U["add"]._reduce(sq, axes, sq.dtype, sq.dtype, None, keepdims, 0.0, op)
    result = _U["divide"](result, divisor)
    if root:
        result = _U["sqrt"](result)
    return _out(result, out, op)


def var(x: DeviceArray, /, axis: int | tuple[int, ...] | None = None, dtype: Any = None,
        out: DeviceArray | None = None, ddof: int | float | None = None, keepdims: bool = False, *,
        correction: int | float = 0.0) -> DeviceArray:
    """Variance over ``axis`` (array API ``var(x, *, axis, correction, keepdims)``; NumPy's ``ddof``/``dtype``/``out``).

    The mean of the squared deviations from the mean, divided by
    ``n - correction`` (``ddof`` is NumPy's name for it); NaN when that is
    <= 0 (an empty reduction included; the array API's rule, where NumPy
    gives inf for nonzero data) and where ``x`` has a NaN. Integer
    and bool input gives float64, complex input its real dtype; computed in
    two passes as NumPy does, asynchronously on the compute lane.
    """
    return _var("var", x, axis, _correction(correction, ddof, "var"), keepdims, dtype, out, False)


def std(x: DeviceArray, /, axis: int | tuple[int, ...] | None = None, dtype: Any = None,
        out: DeviceArray | None = None, ddof: int | float | None = None, keepdims: bool = False, *,
        correction: int | float = 0.0) -> DeviceArray:
    """Standard deviation over ``axis``: ``sqrt(var(...))`` with the same arguments and dtypes as ``var``."""
    return _var("std", x, axis, _correction(correction, ddof, "std"), keepdims, dtype, out, True)


_QUANTILE_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _probabilities(q, scale, op):
    """quantile's q (percentile's over ``scale`` = 100) as host float probabilities checked to lie in
    [0, 1], and whether q was a weak Python scalar. The one check of q for quantile, percentile and
    their nan* forms."""
    if isinstance(q, DeviceArray):
        q = q._to_numpy()  # the probabilities steer the host-side index arithmetic
    # NumPy 2: a Python scalar q is weak (the result keeps a float a's dtype) but the
    # index arithmetic runs in float64; other q promote with a.
    weak = type(q) in (int, float)
    qs = np.asarray(q)
    if qs.dtype.kind not in "biuf":
        raise TypeError(f"{op}: q must be real numbers, got dtype {qs.dtype}")
    if scale != 1:
        qs = np.true_divide(qs, scale)
    with np.errstate(invalid="ignore"):
        if not (np.all(qs >= 0) and np.all(qs <= 1)):
            bound = "[0, 100]" if scale != 1 else "[0, 1]"
            raise ValueError(f"{op}: q must be in the range {bound}, got {q!r}")
    return qs, weak


def _quantile(op, a, q, axis, out, overwrite_input, method, keepdims, weights, interpolation, scale):
    if weights is not None:
        raise TypeError(f"{op}: weights= is not supported")
    if interpolation is not None:
        raise TypeError(f"{op}: interpolation= was renamed method= in NumPy 1.22; use method=")
    if method not in _QUANTILE_METHODS:
        raise ValueError(f"{op}: method must be one of {', '.join(map(repr, _QUANTILE_METHODS))}, got {method!r}")
    keepdims = _flag(keepdims, op, "keepdims")
    x = _device(a, op)
    if x.dtype.kind == "c":
        raise TypeError(f"{op}: a must be real, got {x.dtype}")
    if x.dtype is _array.bfp16:
        raise TypeError(f"{op}: bfp16 arrays cannot be sorted; convert with astype(hx.float32) first")
    qs, weak = _probabilities(q, scale, op)
    axes = _array._axes(axis, x.ndim, op)
    if axes is None:
        axes = tuple(range(x.ndim))
    keep = [d for d in range(x.ndim) if d not in axes]
    n = math.prod(x.shape[d] for d in axes)
    if n == 0:
        raise ValueError(f"{op}: cannot take a quantile of an empty reduction (shape {x.shape}, axis {axis!r})")
    # The reduced axes last and as one: a view when it is one axis, else a copy.
    moved = x.transpose(tuple(keep) + tuple(axes))
    flat = moved.reshape(tuple(x.shape[d] for d in keep) + (n,))
    srt = sort(flat, axis=-1)
    # Integer q (only 0 and 1 are valid) index exactly, as NumPy's integer path does.
    interpolate = method == "midpoint" or (method == "linear" and qs.dtype.kind == "f")
    fdt = np.dtype(np.float64) if x.dtype.kind in "biu" else x.dtype
    rdt = (fdt if weak else np.result_type(x.dtype, qs.dtype)) if interpolate else x.dtype
    nan = _U["isnan"](srt[..., n - 1]) if srt.dtype.kind == "f" else None
    results = []
    for qv in qs.reshape(-1):
        with np.errstate(invalid="ignore"):
            vi = (n - 1) * qv  # in q's dtype, as NumPy computes the virtual index
        lo = int(np.floor(vi))
        hi = builtins.min(lo + 1, n - 1)
        if not interpolate and method in ("linear", "midpoint"):
            r = srt[..., lo]
        elif method == "lower":
            r = srt[..., lo]
        elif method == "higher":
            r = srt[..., int(np.ceil(vi))]
        elif method == "nearest":
            r = srt[..., int(np.around(vi))]
        else:
            g = vi - qv.dtype.type(lo)
            if method == "midpoint" and g != 0:
                g = qv.dtype.type(0.5)
            a_lo, a_hi = srt[..., lo], srt[..., hi]
            # NumPy subtracts in a's dtype (integers wrap) before t promotes.
            diff = _U["subtract"](a_hi, a_lo)
            if srt.dtype != rdt:
                a_lo, a_hi, diff = a_lo.astype(rdt), a_hi.astype(rdt), diff.astype(rdt)
            # NumPy's _lerp: from the lower value below t = 0.5, from the upper one above.
            if g >= 0.5:
                r = _U["subtract"](a_hi, _U["multiply"](diff, float(qv.dtype.type(1) - g)))
            else:
                r = _U["add"](a_lo, _U["multiply"](diff, float(g)))
        if nan is not None:
            r = _U["where"](nan, math.nan, r)
        results.append(r)
    result = results[0] if qs.ndim == 0 else _manipulation.stack(results).reshape(qs.shape + results[0].shape)
    if keepdims:
        shape = list(x.shape)
        for d in axes:
            shape[d] = 1
        result = result.reshape(qs.shape + tuple(shape))
    return _out(result, out, op)


def quantile(a: DeviceArray, q: float | ArrayLike, axis: int | tuple[int, ...] | None = None,
             out: DeviceArray | None = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, weights=None, interpolation=None) -> DeviceArray:
    """The ``q``-th quantiles (``0 <= q <= 1``) of ``a`` along ``axis`` (NumPy's ``quantile``).

    Sorts along the reduced axes with ``hx.sort`` on the compute lane and
    interpolates as NumPy's ``method`` does ('linear', the default; 'lower',
    'higher', 'nearest', 'midpoint'), in NumPy's dtypes: a float ``a`` with a
    Python scalar ``q`` keeps its dtype, integers give float64. A slice with
    a NaN gives NaN. ``q`` (host data) shapes the result: ``q.shape +
    reduced shape``. ``overwrite_input`` is accepted and ignored (``a`` is
    never changed).
    """
    return _quantile("quantile", a, q, axis, out, overwrite_input, method, keepdims, weights, interpolation, 1)


def percentile(a: DeviceArray, q: float | ArrayLike, axis: int | tuple[int, ...] | None = None,
               out: DeviceArray | None = None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False, *, weights=None, interpolation=None) -> DeviceArray:
    """The ``q``-th percentiles (``0 <= q <= 100``) of ``a`` along ``axis``: ``quantile(a, q / 100, ...)``."""
    return _quantile("percentile", a, q, axis, out, overwrite_input, method, keepdims, weights, interpolation, 100)


def _np_var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None, **kw):
    if kw:
        raise TypeError(f"hrxarray's var does not take {sorted(kw)}")
    return var(a, axis, dtype, out, None if correction is not None else ddof, keepdims,
               correction=correction if correction is not None else 0.0)


def _np_std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None, **kw):
    if kw:
        raise TypeError(f"hrxarray's std does not take {sorted(kw)}")
    return std(a, axis, dtype, out, None if correction is not None else ddof, keepdims,
               correction=correction if correction is not None else 0.0)


@_array._method("var")
def _var_method(self, axis: object = None, dtype: object = None, out: DeviceArray | None = None, ddof: float = 0,
                keepdims: bool = False, *, correction: float | None = None) -> DeviceArray:
    """hrxarray.var of this array (ddof or correction: the divisor is n - ddof)."""
    return _np_var(self, axis, dtype, out, ddof, keepdims, correction=correction)


@_array._method("std")
def _std_method(self, axis: object = None, dtype: object = None, out: DeviceArray | None = None, ddof: float = 0,
                keepdims: bool = False, *, correction: float | None = None) -> DeviceArray:
    """hrxarray.std of this array (ddof or correction: the divisor is n - ddof)."""
    return _np_std(self, axis, dtype, out, ddof, keepdims, correction=correction)


@_array._method("cumsum")
def _cumsum_method(self, axis: int | None = None, dtype: object = None) -> DeviceArray:
    """hrxarray.cumsum of this array."""
    return cumsum(self, axis, dtype)


@_array._method("cumprod")
def _cumprod_method(self, axis: int | None = None, dtype: object = None) -> DeviceArray:
    """hrxarray.cumprod of this array."""
    return cumprod(self, axis, dtype)


_array._ARRAY_FUNCTIONS.update({np.cumsum: cumsum, np.cumprod: cumprod, np.diff: diff, np.var: _np_var,
                                np.std: _np_std, np.quantile: quantile, np.percentile: percentile})
if hasattr(np, "cumulative_sum"):
    _array._ARRAY_FUNCTIONS.update({np.cumulative_sum: cumulative_sum, np.cumulative_prod: cumulative_prod})


# --- reductions (NumPy's sum/prod/max/min/mean; the standard's any/all) ---------------------------


def sum(x, axis=None, dtype=None, out=None, keepdims=False) -> DeviceArray:
    """Sum over ``axis`` (NumPy's dtype rules: small integers accumulate in int64/uint64)."""
    return _ufunc_reduce(_U["add"], x, axis, dtype, out, keepdims, "sum")


def prod(x, axis=None, dtype=None, out=None, keepdims=False) -> DeviceArray:
    """Product over ``axis`` (NumPy's dtype rules)."""
    return _ufunc_reduce(_U["multiply"], x, axis, dtype, out, keepdims, "prod")


def max(x, axis=None, out=None, keepdims=False) -> DeviceArray:
    """Maximum over ``axis``; NaN propagates; ``ValueError`` for an empty reduction."""
    return _ufunc_reduce(_U["maximum"], x, axis, None, out, keepdims, "max")


def min(x, axis=None, out=None, keepdims=False) -> DeviceArray:
    """Minimum over ``axis``; NaN propagates; ``ValueError`` for an empty reduction."""
    return _ufunc_reduce(_U["minimum"], x, axis, None, out, keepdims, "min")


def any(x, axis=None, out=None, keepdims=False) -> DeviceArray:
    """Whether any element along ``axis`` is true (nonzero); a bool array (``logical_or`` reduction)."""
    return _ufunc_reduce(_U["logical_or"], x, axis, None, out, keepdims, "any")


def all(x, axis=None, out=None, keepdims=False) -> DeviceArray:
    """Whether every element along ``axis`` is true (nonzero); a bool array (``logical_and`` reduction)."""
    return _ufunc_reduce(_U["logical_and"], x, axis, None, out, keepdims, "all")


def mean(x, axis=None, dtype=None, out=None, keepdims=False) -> DeviceArray:
    """Arithmetic mean over ``axis``: float64 for integer input; float16/bfloat16 accumulate in float32."""
    op = "mean"
    x = _operand(x, op)
    keepdims = _flag(keepdims, op, "keepdims")
    if dtype is not None:
        odt = _dtype(dtype, op)
    elif x.dtype.kind in "biu":
        odt = np.dtype(np.float64)
    else:
        odt = x.dtype
    axes = _axes(axis, x.ndim, op)
    count = x.size if axes is None else math.prod(x.shape[a] for a in axes)
    if isinstance(out, tuple):
        (out,) = out
    return _U["add"]._reduce(x, axes, odt, odt, out, keepdims, float(count) if count else math.nan, op)


def _np_max(a, axis=None, out=None, keepdims=False, **kw):
    if kw:
        raise TypeError(f"hrxarray's max does not take {sorted(kw)}")
    return max(a, axis=axis, out=out, keepdims=keepdims)


def _np_min(a, axis=None, out=None, keepdims=False, **kw):
    if kw:
        raise TypeError(f"hrxarray's min does not take {sorted(kw)}")
    return min(a, axis=axis, out=out, keepdims=keepdims)


_array._ARRAY_FUNCTIONS.update({
    np.sum: sum, np.prod: prod, np.max: _np_max, np.amax: _np_max, np.min: _np_min, np.amin: _np_min,
    np.mean: mean, np.any: any, np.all: all,
})


# NumPy's reduction methods: the module functions, on this array.
_array._reduction_methods(sum, prod, max, min, mean, any, all)
