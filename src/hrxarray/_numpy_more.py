"""More of NumPy's dispatching functions, composed of device operations: counting and binning
(``bincount``, ``digitize``, ``histogram``, ``histogram_bin_edges``), ``cov``/``corrcoef``,
``convolve``/``correlate``, ``interp``, ``kron``/``inner``/``vdot``/``linalg.multi_dot``, the 2-d FFTs,
the set functions on 1-d arrays, and small elementwise helpers (``isposinf``, ``nan_to_num``, ``sinc`` ...).

Counting, binning and sliding dot products run device kernels
(kernels/stats.h through ``_core._bincount``, ``_histogram``, ``_correlate``).
Index data that decides shapes (``delete``'s
indices, a bin count) is host data or read once, as NumPy's result shape
depends on it.
"""

from __future__ import annotations

import builtins
import functools
import math
import operator

import numpy as np

from . import _array, _core, _creation, _indexing, _manipulation, _searching, _set, _sorting, fft
from ._array import DeviceArray, _device
from ._complex import imag, real
from ._linear_algebra import matmul, tensordot
from ._numpy_breadth import diag
from ._statistical import _out, cumprod, cumulative_sum, max, mean, min, sum
from .lib.stride_tricks import sliding_window_view

__all__ = ["bincount", "digitize", "histogram", "histogram_bin_edges", "cov", "corrcoef", "convolve", "correlate",
           "interp", "kron", "inner", "vdot", "isposinf", "isneginf", "iscomplexobj", "isrealobj", "iscomplex",
           "isreal", "nan_to_num", "fix", "sinc", "flatnonzero", "argwhere", "trapezoid", "diagflat", "union1d",
           "intersect1d", "setdiff1d", "setxor1d", "partition", "argpartition", "select", "extract", "compress",
           "delete", "angle", "rollaxis", "vander", "polyval"]

_U = _array._U
_BOOL = np.dtype(bool)


def _host_any(mask, op) -> bool:
    return bool(_U["logical_or"]._reduce(mask, None, _BOOL, _BOOL, None, False, 0.0, op).item())


def bincount(x, /, weights=None, minlength=0) -> DeviceArray:
    """Occurrences of each value ``0..max(x)`` of a 1-d non-negative integer array (NumPy's ``bincount``).

    With ``weights``, the float64 sum of the weights of each value, added in
    element order as NumPy adds them (the same bits). The result's length is
    ``max(max(x) + 1, minlength)``, so this waits for ``max(x)``. One device
    pass counts (Note [Counting order] in kernels/stats.h).
    """
    op = "bincount"
    v = _device(x, op)
    minlength = operator.index(minlength)
    w = None if weights is None else _device(weights, op, v)
    return _core._bincount(v, w, minlength, op)


def digitize(x, bins, right=False) -> DeviceArray:
    """The index of the bin each value of ``x`` falls in (NumPy's ``digitize``), by ``searchsorted`` on monotonic ``bins``."""
    op = "digitize"
    v = _device(x, op)
    b = _device(bins, op, v)
    if b.ndim != 1:
        raise ValueError(f"{op}: object of too small depth for desired array (bins must be 1-d)")
    if v.dtype.kind == "c" or b.dtype.kind == "c":
        raise TypeError(f"{op}: x may not be complex")
    side = "left" if right else "right"
    if b.size >= 2:
        d = _U["subtract"](b[1:], b[:-1])
        inc = not _host_any(_U["less"](d, 0), op)
        dec = not _host_any(_U["greater"](d, 0), op)
        if not (inc or dec):
            raise ValueError(f"{op}: bins must be monotonically increasing or decreasing")
        if not inc:
            return _U["subtract"](b.size, _searching.searchsorted(_manipulation.flip(b), v, side=side))
    return _searching.searchsorted(b, v, side=side)


def _unsigned_subtract(a, b):
    """numpy.histogram's ``last - first``: integers subtract into the unsigned type of their width (no overflow)."""
    dt = np.result_type(a, b)
    if dt.kind == "i":
        udt = np.dtype(f"u{dt.itemsize}")
        return np.subtract(np.asarray(a, dtype=dt), np.asarray(b, dtype=dt), casting="unsafe", dtype=udt)
    return np.subtract(a, b, dtype=dt)


def _edges(op, a, bins, range_, weights):
    """(flattened a, edges, uniform): uniform = (first, last, denom, wide) of NumPy's equal-bin index
    computation, from host scalars typed as NumPy types them, or None for explicit edges."""
    x = _device(a, op).reshape(-1)
    if x.dtype.kind == "c":
        raise TypeError(f"{op}: complex input is not supported")
    if isinstance(bins, str):
        raise TypeError(f"{op}: bin estimators by name ({bins!r}) are not supported; give a count or the edges")
    if isinstance(bins, (DeviceArray, np.ndarray, list, tuple)):
        edges = _device(bins, op, x)
        if edges.ndim != 1:
            raise ValueError(f"{op}: bins must be 1d, when an array")
        if edges.size >= 2 and _host_any(_U["less"](_U["subtract"](edges[1:], edges[:-1]), 0), op):
            raise ValueError(f"{op}: bins must increase monotonically, when an array")
        return x, edges, None
    n = operator.index(bins)
    if n < 1:
        raise ValueError(f"{op}: `bins` must be positive, when an integer")
    if range_ is not None:
        first, last = range_
        if first > last:
            raise ValueError(f"{op}: max must be larger than min in range parameter.")
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"{op}: supplied range of [{first}, {last}] is not finite")
    elif x.size == 0:
        first, last = 0, 1
    else:
        # NumPy's a.min(), a.max(): scalars of a's dtype, which type the edges and the index arithmetic.
        first, last = (x.dtype.type(r.item()) for r in (min(x), max(x)))
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"{op}: autodetected range of [{first}, {last}] is not finite")
    if first == last:
        first, last = first - 0.5, last + 0.5
    probe = np.empty(0, x.dtype)
    bdt = np.result_type(first, last, probe)
    if bdt.kind in "biu":
        bdt = np.result_type(bdt, float)
    # NumPy's uniform edges: linspace in the bin dtype, from the host (the count and the range are host values).
    edges = np.linspace(first, last, n + 1, endpoint=True, dtype=bdt)
    if np.any(edges[:-1] >= edges[1:]):  # a range too narrow for n distinct edges (subnormals), as NumPy refuses
        raise ValueError(f"{op}: Too many bins for data range. Cannot create {n} finite-sized bins.")
    denom = _unsigned_subtract(last, first)
    # The dtype numpy.histogram divides in: (a - first) is in the bin dtype, denom keeps its own type.
    wide = bool((_unsigned_subtract(np.empty(0, bdt), first) / denom * n).dtype == np.float64)
    return x, _creation.asarray(edges, device=x.placement), (float(first), float(last), float(denom), wide)


def histogram_bin_edges(a, bins=10, range=None, weights=None) -> DeviceArray:
    """The bin edges ``histogram`` would use (NumPy's ``histogram_bin_edges``; counts or explicit edges)."""
    return _edges("histogram_bin_edges", a, bins, range, weights)[1]


def _histogram_acc(w):
    """The dtype the device sums ``w`` in (NumPy's: the weights' own; integers in int64), or None: host fallback."""
    if w is None:
        return np.dtype(np.int64)
    if w.dtype in (np.float32, np.float64):
        return w.dtype
    return np.dtype(np.int64) if w.dtype.kind in "iu" else None


def histogram(a, bins=10, range=None, density=None, weights=None) -> tuple[DeviceArray, DeviceArray]:
    """(counts, edges) of ``a`` (flattened) over ``bins`` (NumPy's ``histogram``).

    Bins are half-open except the last, which includes its right edge; values
    outside the edges are not counted. Equal bins find each value's bin as
    NumPy does (its computed index, corrected against the edges), so counts
    and float weight sums have NumPy's bits; explicit edges bin by binary
    search. One device pass bins and counts (kernels/stats.h); float16 and
    bfloat16 data or weights, and bool weights, go through ``searchsorted``
    and ``bincount``.
    """
    op = "histogram"
    x, edges, uniform = _edges(op, a, bins, range, weights)
    w = None if weights is None else _device(weights, op, x).reshape(-1)
    if w is not None and w.shape != x.shape:
        raise ValueError(f"{op}: weights should have the same shape as a.")
    if w is not None and w.dtype.kind == "c":
        raise TypeError(f"{op}: complex weights are not supported")
    acc = _histogram_acc(w)
    ct = np.result_type(x.dtype, edges.dtype)
    ct = np.result_type(ct, float) if ct.kind in "biu" else ct
    if acc is not None and ct in (np.float32, np.float64) and x.dtype.kind in "biuf":
        e = edges if edges.dtype == ct else edges.astype(ct)
        counts = _core._histogram(x, e, uniform, w, acc, op)
        if w is not None and counts.dtype != w.dtype and not density:
            counts = counts.astype(w.dtype)
    else:
        counts = _histogram_searched(op, x, edges, w, density)
    if density:
        widths = _U["subtract"](edges[1:], edges[:-1]).astype(np.float64)  # NumPy's diff(edges) as float
        total = sum(counts)
        return _U["divide"](_U["divide"](counts, widths), total), edges
    return counts, edges


def _histogram_searched(op, x, edges, w, density):
    nb = edges.size - 1
    idx = _U["subtract"](_searching.searchsorted(edges, x, side="right"), 1)
    # The last edge belongs to the last bin.
    idx = _searching.where(_U["equal"](x, edges[nb]), nb - 1, idx)
    inside = _U["logical_and"](_U["greater_equal"](idx, 0), _U["less"](idx, nb))
    idx = _searching.where(inside, idx, nb)  # outside values go to a spare bin, dropped below
    if w is None:
        return bincount(idx, minlength=nb + 1)[:nb]
    counts = bincount(idx, weights=w, minlength=nb + 1)[:nb]
    if w.dtype.kind in "biu" and not density:
        counts = counts.astype(w.dtype if w.dtype.kind != "b" else np.int64)
    return counts


def _cov_rows(op, m, y, rowvar, dtype):
    x = _device(m, op)
    if x.ndim > 2:
        raise ValueError(f"{op}: m has more than 2 dimensions")
    x = x.reshape((1, -1)) if x.ndim < 2 else x
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if y is not None:
        yy = _device(y, op, x)
        if yy.ndim > 2:
            raise ValueError(f"{op}: y has more than 2 dimensions")
        yy = yy.reshape((1, -1)) if yy.ndim < 2 else yy
        if not rowvar and yy.shape[0] != 1:
            yy = yy.T
        x = _manipulation.concatenate([x, yy], axis=0)
    dt = dtype if dtype is not None else np.result_type(x.dtype, np.float64)
    return x.astype(dt)


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None) -> DeviceArray:
    """Covariance matrix of the rows (variables) of ``m`` (NumPy's ``cov``; ``fweights``/``aweights`` unsupported).

    ``(X - mean) @ (X - mean).conj().T / (N - ddof)`` as a device matmul; a
    single variable gives a 0-d result as NumPy's does.
    """
    op = "cov"
    if fweights is not None or aweights is not None:
        raise TypeError(f"{op}: fweights= and aweights= are not supported")
    x = _cov_rows(op, m, y, rowvar, dtype)
    if ddof is None:
        ddof = 0 if bias else 1
    n = x.shape[1]
    fact = n - ddof
    if fact <= 0:
        import warnings

        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    d = _U["subtract"](x, mean(x, axis=1, keepdims=True))
    c = matmul(d, _U["conjugate"](d).T if d.dtype.kind == "c" else d.T)
    c = _U["divide"](c, float(fact))
    return c.reshape(()) if c.shape == (1, 1) else c


def corrcoef(x, y=None, rowvar=True, *, dtype=None) -> DeviceArray:
    """Pearson correlation coefficients (NumPy's ``corrcoef``): ``cov`` scaled by the standard deviations, clipped to [-1, 1]."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return _U["divide"](c, c)
    d = diag(c)
    if d.dtype.kind == "c":
        d = real(d)
    s = _U["sqrt"](d)
    c = _U["divide"](_U["divide"](c, s.reshape((-1, 1))), s.reshape((1, -1)))
    if c.dtype.kind == "c":
        return c
    return _U["clip"](c, -1, 1) if "clip" in _U else _U["minimum"](_U["maximum"](c, -1), 1)


def _correlate(op, a, v, mode):
    x = _device(a, op)
    w = _device(v, op, x)
    if x.ndim != 1 or w.ndim != 1:
        raise ValueError(f"{op}: object too deep for desired array (a and v must be 1-d)")
    if x.size == 0 or w.size == 0:
        raise ValueError(f"{op}: {'a' if x.size == 0 else 'v'} cannot be empty")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"{op}: mode must be one of 'full', 'same', 'valid', got {mode!r}")
    return x, w


def _slide(x, w, mode):
    """NumPy's correlate of 1-d x with w (no conjugation), each output a dot of a window with w.

    Real dtypes run the device's sliding dot kernel (float32 sums in float64,
    integers wrap in int64: Note [Sliding dot order]); float16, bfloat16,
    bool and complex run a matrix-vector product of x's sliding windows.
    """
    n, m = x.size, w.size
    if n < m:
        x, w, swapped = w, x, True
        n, m = m, n
    else:
        swapped = False
    dt = np.result_type(x.dtype, w.dtype)
    kdt = dt if dt in (np.float32, np.float64) else np.dtype(np.int64) if dt.kind in "iu" else None
    if kdt is not None:
        left, length = {"valid": (0, n - m + 1), "same": (m // 2, n), "full": (m - 1, n + m - 1)}[mode]
        out = _core._correlate(x, w, left, length, kdt, "correlate")
        out = out if out.dtype == dt else out.astype(dt)
        return _manipulation.flip(out) if swapped else out
    pad = {"valid": (0, 0), "same": (m // 2, m - 1 - m // 2), "full": (m - 1, m - 1)}[mode]
    xp = x.astype(dt)
    if pad != (0, 0):
        xp = _manipulation.concatenate([_creation.zeros(pad[0], dtype=dt, device=x.placement), xp,
                                        _creation.zeros(pad[1], dtype=dt, device=x.placement)])
    out = matmul(sliding_window_view(xp, m), w.astype(dt))
    return _manipulation.flip(out) if swapped else out


def correlate(a, v, mode="valid") -> DeviceArray:
    """Cross-correlation of two 1-d sequences (NumPy's ``correlate``: ``v`` conjugated; modes ``valid``,
    ``same``, ``full``), by the device's sliding dot kernel for real dtypes (float32 sums in float64;
    Note [Sliding dot order]) and a matrix-vector product of ``a``'s sliding windows otherwise."""
    x, w = _correlate("correlate", a, v, mode)
    if w.dtype.kind == "c":
        w = _U["conjugate"](w)
    return _slide(x, w, mode)


def convolve(a, v, mode="full") -> DeviceArray:
    """Discrete linear convolution of two 1-d sequences (NumPy's ``convolve``): ``correlate`` with ``v`` reversed."""
    x, w = _correlate("convolve", a, v, mode)
    if w.size > x.size:
        x, w = w, x
    return _slide(x, _manipulation.flip(w), mode)


def interp(x, xp, fp, left=None, right=None, period=None) -> DeviceArray:
    """Piecewise-linear interpolation of ``(xp, fp)`` at ``x`` (NumPy's ``interp``; ``period`` unsupported).

    ``searchsorted`` finds each interval, then the two ends are gathered and
    interpolated on the device. ``xp`` must increase (not checked, as NumPy).
    """
    op = "interp"
    if period is not None:
        raise TypeError(f"{op}: period= is not supported")
    q = _device(x, op)
    xs = _device(xp, op, q)
    fs = _device(fp, op, q)
    if xs.ndim != 1 or fs.ndim != 1:
        raise ValueError(f"{op}: xp and fp must be 1-d sequences")
    if xs.size != fs.size:
        raise ValueError(f"{op}: fp and xp are not of the same length.")
    if xs.size == 0:
        raise ValueError(f"{op}: array of sample points is empty")
    cdt = np.dtype(np.complex128) if fs.dtype.kind == "c" else np.dtype(np.float64)
    q, xs, fs = q.astype(np.float64), xs.astype(np.float64), fs.astype(cdt)
    n = xs.size
    j = _U["minimum"](_U["maximum"](_U["subtract"](_searching.searchsorted(xs, q, side="right"), 1), 0),
                      builtins.max(n - 2, 0))
    j1 = _U["minimum"](_U["add"](j, 1), n - 1)
    x0, x1 = _indexing.take(xs, j), _indexing.take(xs, j1)
    f0, f1 = _indexing.take(fs, j), _indexing.take(fs, j1)
    slope = _U["divide"](_U["subtract"](f1, f0), _U["subtract"](x1, x0))
    r = _U["add"](_U["multiply"](slope, _U["subtract"](q, x0)), f0)
    r = _searching.where(_U["equal"](q, x1), f1, r)
    r = _searching.where(_U["equal"](q, x0), f0, r)
    lv = fs[0] if left is None else left
    rv = fs[n - 1] if right is None else right
    r = _searching.where(_U["less"](q, xs[0]), lv, r)
    r = _searching.where(_U["greater"](q, xs[n - 1]), rv, r)
    return r.astype(cdt)


def kron(a, b) -> DeviceArray:
    """The Kronecker product (NumPy's ``kron``): blocks of ``b`` scaled by each element of ``a``."""
    x = _device(a, "kron")
    y = _device(b, "kron", x)
    nd = builtins.max(x.ndim, y.ndim)
    xs = (1,) * (nd - x.ndim) + x.shape
    ys = (1,) * (nd - y.ndim) + y.shape
    xr = x.reshape(tuple(v for s in xs for v in (s, 1)))
    yr = y.reshape(tuple(v for s in ys for v in (1, s)))
    return _U["multiply"](xr, yr).reshape(tuple(p * q for p, q in zip(xs, ys)))


def inner(a, b, /) -> DeviceArray:
    """Inner product over the last axes (NumPy's ``inner``); a scalar operand multiplies."""
    x = _device(a, "inner")
    y = _device(b, "inner", x)
    if x.ndim == 0 or y.ndim == 0:
        return _U["multiply"](x, y)
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(f"inner: shapes {x.shape} and {y.shape} not aligned: {x.shape[-1]} (dim {x.ndim - 1}) != "
                         f"{y.shape[-1]} (dim {y.ndim - 1})")
    return tensordot(x, y, axes=([x.ndim - 1], [y.ndim - 1]))


def vdot(a, b, /) -> DeviceArray:
    """Dot product of the flattened inputs, the first conjugated (NumPy's ``vdot``); a 0-d DeviceArray."""
    x = _device(a, "vdot").reshape(-1)
    y = _device(b, "vdot", x).reshape(-1)
    if x.size != y.size:
        raise ValueError("vdot: vectors have different lengths")
    if x.dtype.kind == "c":
        x = _U["conjugate"](x)
    return matmul(x, y)


def _multi_dot(arrays, *, out=None):
    arrays = [_device(a, "multi_dot") for a in arrays]
    if len(arrays) < 2:
        raise ValueError("multi_dot: expecting at least two arrays")
    return _out(functools.reduce(matmul, arrays), out, "multi_dot")


def isposinf(x, out=None) -> DeviceArray:
    """Whether each element is +inf (NumPy's ``isposinf``; complex input is refused, as NumPy's)."""
    v = _device(x, "isposinf")
    if v.dtype.kind == "c":
        raise TypeError("isposinf: this operation is not supported for complex values because it would be ambiguous.")
    return _out(_U["logical_and"](_U["isinf"](v), _U["logical_not"](_U["signbit"](v))), out, "isposinf")


def isneginf(x, out=None) -> DeviceArray:
    """Whether each element is -inf (NumPy's ``isneginf``)."""
    v = _device(x, "isneginf")
    if v.dtype.kind == "c":
        raise TypeError("isneginf: this operation is not supported for complex values because it would be ambiguous.")
    return _out(_U["logical_and"](_U["isinf"](v), _U["signbit"](v)), out, "isneginf")


def iscomplexobj(x) -> bool:
    """Whether ``x``'s dtype is complex (NumPy's ``iscomplexobj``)."""
    return _device(x, "iscomplexobj").dtype.kind == "c"


def isrealobj(x) -> bool:
    """Whether ``x``'s dtype is not complex (NumPy's ``isrealobj``)."""
    return not iscomplexobj(x)


def iscomplex(x) -> DeviceArray:
    """Whether each element has a nonzero imaginary part (NumPy's ``iscomplex``)."""
    v = _device(x, "iscomplex")
    if v.dtype.kind != "c":
        return _creation.zeros(v.shape, dtype=bool, device=v.placement)
    return _U["not_equal"](imag(v), 0)


def isreal(x) -> DeviceArray:
    """Whether each element has a zero imaginary part (NumPy's ``isreal``)."""
    v = _device(x, "isreal")
    if v.dtype.kind != "c":
        return _creation.ones(v.shape, dtype=bool, device=v.placement)
    return _U["equal"](imag(v), 0)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None) -> DeviceArray:
    """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (default: the dtype's largest finite
    magnitudes; NumPy's ``nan_to_num``). ``copy=False`` writes the result into ``x``."""
    v = _device(x, "nan_to_num")
    if v.dtype.kind not in "fc":
        return v.copy() if copy else v

    def fix(r):
        info = np.finfo(r.dtype)
        r = _searching.where(_U["isnan"](r), nan, r)
        r = _searching.where(_U["logical_and"](_U["isinf"](r), _U["logical_not"](_U["signbit"](r))),
                             info.max if posinf is None else posinf, r)
        return _searching.where(_U["logical_and"](_U["isinf"](r), _U["signbit"](r)),
                                info.min if neginf is None else neginf, r)

    if v.dtype.kind == "c":
        from ._complex import real as re

        res = _U["add"](fix(re(v)).astype(v.dtype), _U["multiply"](fix(imag(v)).astype(v.dtype), 1j))
    else:
        res = fix(v).astype(v.dtype)
    if copy:
        return res
    v._copy_from(res, False, "nan_to_num")
    return v


def fix(x, out=None) -> DeviceArray:
    """Round towards zero (NumPy's ``fix``: ``trunc`` for floats, integers unchanged)."""
    v = _device(x, "fix")
    return _out(_U["trunc"](v) if v.dtype.kind == "f" else v.copy(), out, "fix")


def sinc(x) -> DeviceArray:
    """The normalized sinc, ``sin(pi x) / (pi x)`` with ``sinc(0) = 1`` (NumPy's formula)."""
    v = _device(x, "sinc")
    if v.dtype.kind not in "fc":
        v = v.astype(np.float64)
    y = _U["multiply"](math.pi, _searching.where(_U["equal"](v, 0), 1.0e-20, v))
    return _U["divide"](_U["sin"](y), y)


def flatnonzero(a) -> DeviceArray:
    """The indices of the nonzero elements of the flattened array (NumPy's ``flatnonzero``)."""
    return _searching.nonzero(_device(a, "flatnonzero").reshape(-1))[0]


def argwhere(a) -> DeviceArray:
    """The indices of the nonzero elements, one row per element (NumPy's ``argwhere``)."""
    v = _device(a, "argwhere")
    if v.ndim == 0:
        v = v.reshape((1,))
        return _searching.nonzero(v)[0].reshape((-1, 0))
    return _manipulation.stack(list(_searching.nonzero(v)), axis=1)


def trapezoid(y, x=None, dx=1.0, axis=-1) -> DeviceArray:
    """Integral of ``y`` along ``axis`` by the trapezoidal rule (NumPy's ``trapezoid``)."""
    v = _device(y, "trapezoid")
    (ax,) = _array._axes(axis, v.ndim, "trapezoid")
    pre = (slice(None),) * ax
    if x is None:
        d = dx
    else:
        xv = _device(x, "trapezoid", v)
        if xv.ndim == 1:
            d = _U["subtract"](xv[1:], xv[:-1])
            shape = [1] * v.ndim
            shape[ax] = d.shape[0]
            d = d.reshape(tuple(shape))
        else:
            d = _U["subtract"](xv[pre + (slice(1, None),)], xv[pre + (slice(None, -1),)])
    s = _U["add"](v[pre + (slice(1, None),)], v[pre + (slice(None, -1),)])
    return sum(_U["divide"](_U["multiply"](d, s), 2.0), axis=ax)


def diagflat(v, k=0) -> DeviceArray:
    """A 2-d array with the flattened input on its ``k``-th diagonal (NumPy's ``diagflat``)."""
    return diag(_device(v, "diagflat").reshape(-1), k)


def union1d(ar1, ar2) -> DeviceArray:
    """The sorted unique values in either array (NumPy's ``union1d``)."""
    a = _device(ar1, "union1d").reshape(-1)
    b = _device(ar2, "union1d", a).reshape(-1)
    return _set.unique(_manipulation.concatenate([a, b]))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False) -> DeviceArray:
    """The sorted unique values in both arrays (NumPy's ``intersect1d``; ``return_indices`` unsupported)."""
    if return_indices:
        raise TypeError("intersect1d: return_indices=True is not supported")
    a = _set.unique(_device(ar1, "intersect1d").reshape(-1))
    b = _device(ar2, "intersect1d", a).reshape(-1)
    return a[_set.isin(a, b)]


def setdiff1d(ar1, ar2, assume_unique=False) -> DeviceArray:
    """The sorted unique values of ``ar1`` that are not in ``ar2`` (NumPy's ``setdiff1d``)."""
    a = _device(ar1, "setdiff1d").reshape(-1)
    if not assume_unique:
        a = _set.unique(a)
    b = _device(ar2, "setdiff1d", a).reshape(-1)
    return a[_set.isin(a, b, invert=True)]


def setxor1d(ar1, ar2, assume_unique=False) -> DeviceArray:
    """The sorted unique values in exactly one of the arrays (NumPy's ``setxor1d``)."""
    a = _set.unique(_device(ar1, "setxor1d").reshape(-1))
    b = _set.unique(_device(ar2, "setxor1d", a).reshape(-1))
    return _sorting.sort(_manipulation.concatenate([a[_set.isin(a, b, invert=True)], b[_set.isin(b, a, invert=True)]]))


def _kth(op, v, kth, axis):
    if axis is None:
        v, axis = v.reshape(-1), 0
    (ax,) = _array._axes(axis, v.ndim, op)
    n = v.shape[ax]
    for k in np.atleast_1d(np.asarray(kth)).reshape(-1):
        k = operator.index(k)
        if not -n <= k < n:
            raise ValueError(f"{op}: kth(={k}) out of bounds ({n})")
    return v, ax


def partition(a, kth, axis=-1, kind="introselect", order=None) -> DeviceArray:
    """A partitioned copy (NumPy's ``partition``): the full sort, which satisfies every ``kth``."""
    v, ax = _kth("partition", _device(a, "partition"), kth, axis)
    return _sorting.sort(v, axis=ax)


def argpartition(a, kth, axis=-1, kind="introselect", order=None) -> DeviceArray:
    """Indices that partition ``a`` (NumPy's ``argpartition``): the stable argsort, valid for every ``kth``."""
    v, ax = _kth("argpartition", _device(a, "argpartition"), kth, axis)
    return _sorting.argsort(v, axis=ax)


def select(condlist, choicelist, default=0) -> DeviceArray:
    """Elements from the first choice whose condition holds, else ``default`` (NumPy's ``select``)."""
    if len(condlist) != len(choicelist):
        raise ValueError("select: list of cases must be same length as list of conditions")
    if not condlist:
        raise ValueError("select: select with an empty condition list is not possible")
    conds = [_device(c, "select") for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype.kind != "b":
            raise TypeError(f"select: invalid entry {i} in condlist: should be boolean ndarray")
    chs = [_device(c, "select", conds[0]) for c in choicelist]
    r = _device(default, "select", conds[0])
    dt = functools.reduce(np.result_type, [c.dtype for c in chs] + [r.dtype])
    r = r.astype(dt)
    for c, ch in zip(reversed(conds), reversed(chs)):
        r = _searching.where(c, ch.astype(dt), r)
    return r


def extract(condition, arr) -> DeviceArray:
    """The elements of the flattened ``arr`` where the flattened ``condition`` is nonzero (NumPy's ``extract``)."""
    a = _device(arr, "extract").reshape(-1)
    c = _device(condition, "extract", a).reshape(-1)
    return _indexing.take(a, _searching.nonzero(c)[0])


def compress(condition, a, axis=None, out=None) -> DeviceArray:
    """The slices of ``a`` along ``axis`` where the 1-d ``condition`` is true (NumPy's ``compress``)."""
    v = _device(a, "compress")
    c = _device(condition, "compress", v)
    if c.ndim != 1:
        raise ValueError("compress: condition must be a 1-d array")
    if axis is None:
        v, axis = v.reshape(-1), 0
    (ax,) = _array._axes(axis, v.ndim, "compress")
    idx = _searching.nonzero(c)[0]
    if idx.size and int(max(idx).item()) >= v.shape[ax]:
        raise IndexError(f"compress: index {int(max(idx).item())} is out of bounds for axis {ax} with size "
                         f"{v.shape[ax]}")
    return _out(_indexing.take(v, idx, axis=ax), out, "compress")


def delete(arr, obj, axis=None) -> DeviceArray:
    """A copy of ``arr`` without the entries ``obj`` (an index, a slice, indices or a bool mask) along ``axis``."""
    v = _device(arr, "delete")
    if axis is None:
        v, axis = v.reshape(-1), 0
    (ax,) = _array._axes(axis, v.ndim, "delete")
    n = v.shape[ax]
    keep = np.ones(n, dtype=bool)
    if isinstance(obj, slice):
        keep[obj] = False
    else:
        o = np.asarray(obj._to_numpy() if isinstance(obj, DeviceArray) else obj)
        if o.dtype.kind == "b":
            if o.shape != (n,):
                raise ValueError(f"delete: boolean array argument obj to delete must be one dimensional and match "
                                 f"the axis length of {n}")
            keep = ~o
        else:
            o = o.astype(np.intp).reshape(-1)
            if o.size and (o.max() >= n or o.min() < -n):
                bad = o.max() if o.max() >= n else o.min()
                raise IndexError(f"delete: index {bad} is out of bounds for axis {ax} with size {n}")
            keep[o] = False
    return _indexing.take(v, _creation.asarray(np.flatnonzero(keep).astype(np.int64), device=v.placement), axis=ax)


def angle(z, deg=False) -> DeviceArray:
    """The counterclockwise angle of each complex element from the positive real axis (NumPy's ``angle``)."""
    v = _device(z, "angle")
    if v.dtype.kind == "c":
        a = _U["arctan2"](imag(v), real(v))
    else:
        f = v if v.dtype.kind == "f" else v.astype(np.float64)
        a = _U["arctan2"](_creation.zeros(f.shape, dtype=f.dtype, device=f.placement), f)
    return _U["multiply"](a, 180 / math.pi) if deg else a


def rollaxis(a, axis, start=0) -> DeviceArray:
    """``axis`` rolled back until it lies before ``start`` (NumPy's ``rollaxis``; a view)."""
    v = _device(a, "rollaxis")
    n = v.ndim
    (axis,) = _array._axes(axis, n, "rollaxis")
    start = operator.index(start)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise np.exceptions.AxisError(f"rollaxis: 'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in")
    if axis < start:
        start -= 1
    if axis == start:
        return v
    axes = list(range(n))
    axes.remove(axis)
    axes.insert(start, axis)
    return v.transpose(tuple(axes))


def vander(x, N=None, increasing=False) -> DeviceArray:
    """The Vandermonde matrix of 1-d ``x`` (NumPy's ``vander``: powers by repeated multiplication, as NumPy)."""
    v = _device(x, "vander")
    if v.ndim != 1:
        raise ValueError("vander: x must be a one-dimensional array or sequence.")
    n = v.shape[0] if N is None else operator.index(N)
    if n == 0:
        return _creation.empty((v.shape[0], 0), dtype=np.result_type(v.dtype, np.int64) if v.dtype.kind == "b" else
                               v.dtype, device=v.placement)
    dt = np.result_type(v.dtype, np.int64) if v.dtype.kind == "b" else v.dtype
    cols = _manipulation.broadcast_to(v.astype(dt).reshape((-1, 1)), (v.shape[0], n - 1))
    ones = _creation.ones((v.shape[0], 1), dtype=dt, device=v.placement)
    r = _manipulation.concatenate([ones, cumprod(cols, axis=1, dtype=dt)], axis=1) if n > 1 else ones
    return r if increasing else _manipulation.flip(r, axis=1)


def polyval(p, x) -> DeviceArray:
    """The polynomial with coefficients ``p`` (highest power first) at ``x``, by Horner's rule (NumPy's ``polyval``)."""
    c = _device(p, "polyval")
    v = _device(x, "polyval", c)
    y = _creation.zeros(v.shape, dtype=np.result_type(c.dtype, v.dtype), device=v.placement)
    for i in range(c.shape[0]):
        y = _U["add"](_U["multiply"](y, v), c[i])
    return y


def _fft2(f):
    def call(a, s=None, axes=(-2, -1), norm=None, out=None):
        if out is not None:
            raise TypeError(f"hrxarray's {f.__name__} does not take out=")
        return f(a, s=s, axes=axes, norm=norm or "backward")
    return call


def _indices_from(fn):
    def call(arr, k=0):
        v = _device(arr, fn.__name__)
        if v.ndim != 2:
            raise ValueError("input array must be 2-d")
        return tuple(_creation.asarray(i.astype(np.int64), device=v.placement)
                     for i in fn(v.shape[-2], k=k, m=v.shape[-1]))
    return call


def _np_diag_indices_from(arr):
    v = _device(arr, "diag_indices_from")
    if v.ndim < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(v.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    i = _creation.arange(v.shape[0], dtype=np.int64, device=v.placement)
    return (i,) * v.ndim


_array._ARRAY_FUNCTIONS.update({
    np.bincount: bincount, np.digitize: digitize, np.histogram: histogram,
    np.histogram_bin_edges: histogram_bin_edges, np.cov: cov, np.corrcoef: corrcoef, np.convolve: convolve,
    np.correlate: correlate, np.interp: interp, np.kron: kron, np.inner: inner, np.vdot: vdot,
    np.linalg.multi_dot: _multi_dot, np.isposinf: isposinf, np.isneginf: isneginf, np.iscomplexobj: iscomplexobj,
    np.isrealobj: isrealobj, np.iscomplex: iscomplex, np.isreal: isreal, np.nan_to_num: nan_to_num, np.fix: fix,
    np.sinc: sinc, np.flatnonzero: flatnonzero, np.argwhere: argwhere, np.diagflat: diagflat,
    np.union1d: union1d, np.intersect1d: intersect1d, np.setdiff1d: setdiff1d, np.setxor1d: setxor1d,
    np.partition: partition, np.argpartition: argpartition, np.select: select, np.extract: extract,
    np.compress: compress, np.delete: delete, np.angle: angle, np.rollaxis: rollaxis, np.vander: vander,
    np.polyval: polyval, np.fft.fft2: _fft2(fft.fftn), np.fft.ifft2: _fft2(fft.ifftn),
    np.fft.rfft2: _fft2(fft.rfftn), np.fft.irfft2: _fft2(fft.irfftn),
    np.tril_indices_from: _indices_from(np.tril_indices), np.triu_indices_from: _indices_from(np.triu_indices),
    np.diag_indices_from: _np_diag_indices_from,
})
if hasattr(np, "trapezoid"):
    _array._ARRAY_FUNCTIONS[np.trapezoid] = trapezoid


# --- the rest: small compositions, and refusals that name a real limit -----------------------------


def _np_array_equiv(a1, a2):
    x = _device(a1, "array_equiv")
    y = _device(a2, "array_equiv", x)
    try:
        shape = _manipulation._broadcast_shapes([x.shape, y.shape], "array_equiv")
    except ValueError:
        return False
    if shape != x.shape and shape != y.shape and not (x.ndim == 0 or y.ndim == 0):
        return False
    return bool(_U["logical_and"]._reduce(_U["equal"](x, y), None, _BOOL, _BOOL, None, False, 0.0,
                                          "array_equiv").item())


def _np_common_type(*arrays):
    # Decided by the dtypes alone, as NumPy's.
    return np.common_type(*[np.empty(0, _device(a, "common_type").dtype) for a in arrays])


def _np_min_scalar_type(a):
    x = _device(a, "min_scalar_type")
    return np.min_scalar_type(x.item()) if x.ndim == 0 else x.dtype


def _np_sort_complex(a):
    x = _device(a, "sort_complex")
    r = _sorting.sort(x)
    if r.dtype.kind == "c":
        return r
    # NumPy's rule: small integers to complex64, everything else to complex128.
    return r.astype(np.complex64 if r.dtype.char in "bhBH" else np.complex128)


def _np_copyto(dst, src, casting="same_kind", where=True):
    if not isinstance(dst, DeviceArray):
        raise TypeError(f"copyto: dst must be a DeviceArray here, got {type(dst).__name__}")
    if where is True:
        dst._copy_from(src, False, "copyto")
        return
    m = _device(where, "copyto", dst)
    dst._copy_from(_searching.where(m, _device(src, "copyto", dst).astype(dst.dtype), dst), False, "copyto")


def _np_fill_diagonal(a, val, wrap=False):
    from ._numpy_breadth import diagonal

    x = _device(a, "fill_diagonal")
    if x.ndim < 2:
        raise ValueError("fill_diagonal: array must be at least 2-d")
    if x.ndim > 2 and len(set(x.shape)) != 1:
        raise ValueError("fill_diagonal: all dimensions of input must be of equal length")
    if wrap:
        raise TypeError("fill_diagonal: wrap=True is not supported")
    if x.ndim == 2:
        d = diagonal(x)
    else:
        n = x.shape[0]
        d = x._view(x._offset, (n,), (builtins.sum(x.strides),))
    d._copy_from(val, False, "fill_diagonal")


def _poly(c, op):
    v = _device(c, op)
    return v.reshape((1,)) if v.ndim == 0 else v


def _np_polyadd(a1, a2, _sub=False):
    op = "polysub" if _sub else "polyadd"
    a, b = _poly(a1, op), _poly(a2, op)
    n = builtins.max(a.size, b.size)
    dt = np.result_type(a.dtype, b.dtype)

    def pad(v):
        if v.size == n:
            return v.astype(dt)
        return _manipulation.concatenate([_creation.zeros(n - v.size, dtype=dt, device=v.placement), v.astype(dt)])

    return _U["subtract" if _sub else "add"](pad(a), pad(b))


def _np_polysub(a1, a2):
    return _np_polyadd(a1, a2, True)


def _np_polymul(a1, a2):
    return convolve(_poly(a1, "polymul"), _poly(a2, "polymul"))


def _np_polyder(p, m=1):
    c = _poly(p, "polyder")
    m = operator.index(m)
    if m < 0:
        raise ValueError("polyder: order of derivative must be positive (see polyint)")
    for _ in range(m):
        n = c.size - 1
        if n <= 0:
            return _creation.zeros(1, dtype=c.dtype, device=c.placement)[:0] if n < 0 else \
                _creation.zeros(0, dtype=c.dtype, device=c.placement)
        c = _U["multiply"](c[:-1], _creation.arange(n, 0, -1, device=c.placement))
    return c


def _np_polyint(p, m=1, k=None):
    c = _poly(p, "polyint")
    m = operator.index(m)
    if m < 0:
        raise ValueError("polyint: order of integral must be positive (see polyder)")
    ks = [0.0] * m if k is None else list(np.atleast_1d(k))
    if len(ks) == 1 and m > 1:
        ks = ks * m
    if len(ks) < m:
        raise ValueError("polyint: k must be a scalar or a rank-1 array of length 1 or >m.")
    for i in range(m):
        n = c.size
        c = _U["divide"](c, _creation.arange(n, 0, -1, device=c.placement))
        c = _manipulation.concatenate([c, _creation.full(1, ks[i], dtype=c.dtype, device=c.placement)])
    return c


def _np_cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa = axisb = axisc = axis
    x = _manipulation.moveaxis(_device(a, "cross"), axisa, -1)
    y = _manipulation.moveaxis(_device(b, "cross", x), axisb, -1)
    if x.shape[-1] != 3 or y.shape[-1] != 3:
        raise ValueError("cross: only 3-dimensional vectors are supported here (incompatible dimensions for cross "
                         "product)")
    m = _U["multiply"]
    s = _U["subtract"]
    c = _manipulation.stack([s(m(x[..., 1], y[..., 2]), m(x[..., 2], y[..., 1])),
                             s(m(x[..., 2], y[..., 0]), m(x[..., 0], y[..., 2])),
                             s(m(x[..., 0], y[..., 1]), m(x[..., 1], y[..., 0]))], axis=-1)
    return _manipulation.moveaxis(c, -1, axisc)


def _np_ix(*args):
    out = []
    nd = len(args)
    for k, a in enumerate(args):
        v = _device(a, "ix_")
        if v.ndim != 1:
            raise ValueError("ix_: cross index must be 1 dimensional")
        if v.dtype.kind == "b":
            (v,) = _searching.nonzero(v)
        out.append(v.reshape((1,) * k + (v.size,) + (1,) * (nd - k - 1)))
    return tuple(out)


def _np_choose(a, choices, out=None, mode="raise"):
    idx = _device(a, "choose")
    if mode != "raise":
        raise TypeError("choose: only mode='raise' is supported")
    chs = [_device(c, "choose", idx) for c in choices]
    n = len(chs)
    if idx.size and _host_any(_U["logical_or"](_U["less"](idx, 0), _U["greater_equal"](idx, n)), "choose"):
        raise ValueError("choose: invalid entry in choice array")
    dt = functools.reduce(np.result_type, [c.dtype for c in chs])
    r = chs[0].astype(dt)
    for i in range(1, n):
        r = _searching.where(_U["equal"](idx, i), chs[i].astype(dt), r)
    return _out(_manipulation.broadcast_to(r, _manipulation._broadcast_shapes([idx.shape, r.shape], "choose")).copy(), out, "choose")


def _np_einsum_path(*operands, optimize="greedy", einsum_call=False):
    # The path depends on the operands' shapes only: NumPy plans it on zero-strided stand-ins.
    stand = [np.broadcast_to(np.zeros((), o.dtype), o.shape) if isinstance(o, DeviceArray) else o for o in operands]
    return np.einsum_path(*stand, optimize=optimize, einsum_call=einsum_call)


def _np_cond(x, p=None):
    from . import linalg

    a = _device(x, "cond")
    if p is not None:
        raise TypeError("cond: only p=None (the 2-norm condition number) is supported")
    s = linalg.svdvals(a)
    return _U["divide"](s[..., 0], s[..., -1])


def _np_tensorinv(a, ind=2):
    from . import linalg

    x = _device(a, "tensorinv")
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError("tensorinv: Invalid ind argument.")
    old = x.shape
    inv_shape = old[ind:] + old[:ind]
    prod = math.prod(old[ind:])
    return linalg.inv(x.reshape((prod, -1))).reshape(inv_shape)


def _np_tensorsolve(a, b, axes=None):
    from . import linalg

    x = _device(a, "tensorsolve")
    y = _device(b, "tensorsolve", x)
    if axes is not None:
        order = [d for d in range(x.ndim) if d not in [d % x.ndim for d in axes]] + [d % x.ndim for d in axes]
        x = x.transpose(tuple(order))
    q = x.shape[-(x.ndim - y.ndim):]
    prod = math.prod(q)
    if math.prod(x.shape[:y.ndim]) != prod:
        raise np.linalg.LinAlgError("tensorsolve: Input arrays must satisfy the requirement "
                                    "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    return linalg.solve(x.reshape((prod, prod)), y.reshape((prod, 1)))[:, 0].reshape(q)


def _np_resize(a, new_shape):
    x = _device(a, "resize").reshape(-1)
    shape = (operator.index(new_shape),) if not isinstance(new_shape, (tuple, list)) else \
        tuple(operator.index(n) for n in new_shape)
    if any(n < 0 for n in shape):
        raise ValueError("resize: all elements of `new_shape` must be non-negative")
    total = math.prod(shape)
    if x.size == 0 or total == 0:
        return _creation.zeros(shape, dtype=x.dtype, device=x.placement)
    reps = -(-total // x.size)
    return (_manipulation.concatenate([x] * reps) if reps > 1 else x)[:total].reshape(shape)


def _np_real_if_close(a, tol=100):
    x = _device(a, "real_if_close")
    if x.dtype.kind != "c":
        return x
    eps = np.finfo(x.dtype).eps
    t = tol * eps if tol > 1 else tol
    if not _host_any(_U["greater"](_U["absolute"](imag(x)), t), "real_if_close"):
        return real(x)
    return x


def _np_trim_zeros(filt, trim="fb", axis=None):
    x = _device(filt, "trim_zeros")
    if x.ndim != 1 or axis not in (None, 0, -1):
        raise TypeError("trim_zeros: only 1-d input is supported")
    nz = _searching.nonzero(x)[0]
    if nz.size == 0:
        return x[:0]
    lo = int(nz[0].item()) if "f" in trim.lower() else 0
    hi = int(nz[nz.size - 1].item()) + 1 if "b" in trim.lower() else x.size
    return x[lo:hi]


def _refuse(name, reason):
    def refused(*args, **kwargs):
        raise TypeError(f"hrxarray does not implement numpy.{name} for DeviceArray: {reason}")
    refused.__name__ = name
    refused._hx_refusal = reason
    return refused


# NumPy functions whose work is not array arithmetic hrxarray could run on a device.
REFUSALS = {
    np.busday_count: "no datetime64 dtype (business days are datetime arithmetic)",
    np.busday_offset: "no datetime64 dtype (business days are datetime arithmetic)",
    np.is_busday: "no datetime64 dtype (business days are datetime arithmetic)",
    np.datetime_as_string: "no datetime64 dtype",
    np.apply_along_axis: "it calls a Python function per slice on the host; run it on hx.to_numpy(x)",
    np.apply_over_axes: "it calls a Python function per axis on the host; run it on hx.to_numpy(x)",
    np.piecewise: "it calls Python functions on the host; compose hx.where/hx.select instead",
    np.save: "it writes a host file: save hx.to_numpy(x) (or pickle the DeviceArray)",
    np.savez: "it writes a host file: save hx.to_numpy(x) (or pickle the DeviceArray)",
    np.savez_compressed: "it writes a host file: save hx.to_numpy(x) (or pickle the DeviceArray)",
    np.savetxt: "it writes a host text file: save hx.to_numpy(x)",
    np.array2string: "it formats text on the host: use str(x) or format hx.to_numpy(x)",
    np.array_repr: "it formats text on the host: use repr(x) or format hx.to_numpy(x)",
    np.array_str: "it formats text on the host: use str(x) or format hx.to_numpy(x)",
}

_array._ARRAY_FUNCTIONS.update({
    np.array_equiv: _np_array_equiv, np.common_type: _np_common_type, np.min_scalar_type: _np_min_scalar_type,
    np.sort_complex: _np_sort_complex, np.copyto: _np_copyto, np.fill_diagonal: _np_fill_diagonal,
    np.polyadd: _np_polyadd, np.polysub: _np_polysub, np.polymul: _np_polymul, np.polyder: _np_polyder,
    np.polyint: _np_polyint, np.cross: _np_cross, np.ix_: _np_ix, np.choose: _np_choose,
    np.einsum_path: _np_einsum_path, np.linalg.cond: _np_cond, np.linalg.tensorinv: _np_tensorinv,
    np.linalg.tensorsolve: _np_tensorsolve, np.resize: _np_resize, np.real_if_close: _np_real_if_close,
    np.trim_zeros: _np_trim_zeros,
})
_array._ARRAY_FUNCTIONS.update({f: _refuse(f.__name__, why) for f, why in REFUSALS.items()})
