"""NumPy's dispatching functions that place, sort by keys, assemble and fit: ``gradient``, ``insert``,
``lexsort``, ``block``, ``put``/``putmask``/``place``, ``polyfit`` and ``roots``, for DeviceArrays.

They are composed of device operations as NumPy composes them of its own, in
the same order, so elementwise results carry NumPy's bits (``gradient``'s
differences, the cyclic value repetition of ``put``/``putmask``/``place``).
What decides a result's shape or layout is host data, as in NumPy: the
positions of ``insert`` and ``put`` and the spacing of ``gradient`` are read
on the host (a DeviceArray of them is copied there once); ``place`` waits for
its mask's count. ``polyfit`` and ``roots`` solve with hrxarray's LAPACK-based
``linalg.lstsq`` and ``linalg.eigvals``: close to NumPy's results, not bit-equal.
None of these is an ``hrxarray`` name: ``numpy.gradient(x)`` and the others
dispatch here (NEP 18).
"""

from __future__ import annotations

import builtins
import operator
import warnings

import numpy as np

from . import _array, _creation, _indexing, _manipulation, _sorting, linalg
from ._array import DeviceArray, _device
from ._complex import imag, real
from ._numpy_more import _np_resize, vander
from ._searching import where

_U = _array._U


def _host(v, op):
    """Index or spacing data on the host: a DeviceArray is copied there, anything else goes through asarray."""
    return _array.to_numpy(v) if isinstance(v, DeviceArray) else np.asarray(v)


# --- gradient -------------------------------------------------------------------------------------

def _axis_slice(ndim, axis, s):
    key = [slice(None)] * ndim
    key[axis] = s
    return tuple(key)


def _along(c, ndim, axis):
    """A 1-d coefficient array shaped to broadcast along ``axis`` of an ndim-d array."""
    shape = [1] * ndim
    shape[axis] = -1
    return c.reshape(shape)


def gradient(f, *varargs, axis=None, edge_order=1):
    """NumPy's ``gradient``: second-order central differences inside, one-sided ones of ``edge_order`` at
    the ends, for uniform (scalar) or coordinate-array spacing, one DeviceArray per axis (a tuple for
    several). Integer input gives float64, as NumPy's."""
    op = "gradient"
    f = _device(f, op)
    n = f.ndim
    axes = tuple(range(n)) if axis is None else _array._axes(axis, n, op)
    if axis is not None and isinstance(axis, (list, tuple)) and len(set(axes)) != len(axes):
        raise ValueError(f"{op}: duplicate value in 'axis'")
    len_axes = len(axes)
    if len(varargs) == 0:
        dx = [1.0] * len_axes
    elif len(varargs) == 1 and np.ndim(_host(varargs[0], op)) == 0:
        dx = list(varargs) * len_axes
    elif len(varargs) == len_axes:
        dx = list(varargs)
        for i, distances in enumerate(dx):
            d = _host(distances, op)
            if d.ndim == 0:
                continue
            if d.ndim != 1:
                raise ValueError(f"{op}: distances must be either scalars or 1d")
            if len(d) != f.shape[axes[i]]:
                raise ValueError(f"{op}: when 1d, distances must match the length of the corresponding dimension")
            if np.issubdtype(d.dtype, np.integer):
                d = d.astype(np.float64)
            diffx = np.diff(d)
            dx[i] = diffx[0] if (diffx == diffx[0]).all() else diffx  # constant spacing: NumPy's scalar case
    else:
        raise TypeError(f"{op}: invalid number of arguments")
    if edge_order > 2:
        raise ValueError(f"{op}: 'edge_order' greater than 2 not supported")
    if f.dtype.kind in "iu":
        f = f.astype(np.float64)
    elif f.dtype.kind not in "fc":
        raise TypeError(f"{op}: unsupported dtype {f.dtype}")
    outvals = []
    for ax, ax_dx in zip(axes, dx):
        if f.shape[ax] < edge_order + 1:
            raise ValueError(f"{op}: Shape of array too small to calculate a numerical gradient, at least "
                             "(edge_order + 1) elements are required.")
        out = _creation.empty(f.shape, dtype=f.dtype, placement=f.placement)
        s = lambda sl: _axis_slice(n, ax, sl)  # noqa: E731
        uniform = np.ndim(ax_dx) == 0
        if uniform:
            out[s(slice(1, -1))] = (f[s(slice(2, None))] - f[s(slice(None, -2))]) / (2.0 * ax_dx)
        else:
            dx1, dx2 = ax_dx[0:-1], ax_dx[1:]
            a = -(dx2) / (dx1 * (dx1 + dx2))
            b = (dx2 - dx1) / (dx1 * dx2)
            c = dx1 / (dx2 * (dx1 + dx2))
            a, b, c = (_along(_device(v, op, f), n, ax) for v in (a, b, c))
            out[s(slice(1, -1))] = a * f[s(slice(None, -2))] + b * f[s(slice(1, -1))] + c * f[s(slice(2, None))]
        if edge_order == 1:
            d0 = ax_dx if uniform else ax_dx[0]
            out[s(0)] = (f[s(1)] - f[s(0)]) / d0
            dn = ax_dx if uniform else ax_dx[-1]
            out[s(-1)] = (f[s(-1)] - f[s(-2)]) / dn
        else:
            if uniform:
                a, b, c = -1.5 / ax_dx, 2.0 / ax_dx, -0.5 / ax_dx
            else:
                dx1, dx2 = ax_dx[0], ax_dx[1]
                a = -(2.0 * dx1 + dx2) / (dx1 * (dx1 + dx2))
                b = (dx1 + dx2) / (dx1 * dx2)
                c = -dx1 / (dx2 * (dx1 + dx2))
            out[s(0)] = a * f[s(0)] + b * f[s(1)] + c * f[s(2)]
            if uniform:
                a, b, c = 0.5 / ax_dx, -2.0 / ax_dx, 1.5 / ax_dx
            else:
                dx1, dx2 = ax_dx[-2], ax_dx[-1]
                a = dx2 / (dx1 * (dx1 + dx2))
                b = -(dx2 + dx1) / (dx1 * dx2)
                c = (2.0 * dx2 + dx1) / (dx2 * (dx1 + dx2))
            out[s(-1)] = a * f[s(-3)] + b * f[s(-2)] + c * f[s(-1)]
        outvals.append(out)
    return outvals[0] if len_axes == 1 else tuple(outvals)


# --- insert ---------------------------------------------------------------------------------------

def insert(arr, obj, values, axis=None):
    """NumPy's ``insert``: ``values`` placed before the positions ``obj`` (an int, a slice or a sequence of
    ints) along ``axis`` (the flattened array for None), in a new array of ``arr``'s dtype."""
    op = "insert"
    x = _device(arr, op)
    if axis is None:
        x = x.reshape(-1)
        axis = 0
    else:
        (axis,) = _array._axes(axis, x.ndim, op)
    N = x.shape[axis]
    if isinstance(obj, slice):
        indices = np.arange(*obj.indices(N), dtype=np.intp)
    else:
        indices = _host(obj, op)
        if indices.dtype == bool:
            raise IndexError(f"{op}: boolean array argument obj is not supported (NumPy treats it as integers "
                             "since 1.19; pass np.flatnonzero(mask))")
        if indices.size == 0 and indices.dtype.kind not in "iu":
            indices = indices.astype(np.intp)
        elif indices.dtype.kind not in "iu":
            raise IndexError(f"{op}: index array argument obj must be integer typed, got {indices.dtype}")
        indices = indices.astype(np.intp)
        if indices.ndim > 1:
            raise ValueError(f"{op}: index array argument obj to insert must be one dimensional or scalar")
    vals = _device(values, op, x).astype(x.dtype, copy=False)
    if indices.ndim == 0 and not isinstance(obj, slice):
        index = int(indices)
        if index < -N or index > N:
            raise IndexError(f"{op}: index {index} is out of bounds for axis {axis} with size {N}")
        if index < 0:
            index += N
        # NumPy: array(values, ndmin=arr.ndim), its first axis moved to `axis`.
        if vals.ndim < x.ndim:
            vals = vals.reshape((1,) * (x.ndim - vals.ndim) + vals.shape)
        vals = _manipulation.moveaxis(vals, 0, axis)
        numnew = vals.shape[axis]
        new_shape = list(x.shape)
        new_shape[axis] = numnew
        vals = _manipulation.broadcast_to(vals, tuple(new_shape))
        pos = np.concatenate([np.arange(index), N + np.arange(numnew), np.arange(index, N)])
    else:
        if np.any((indices < -N) | (indices > N)):
            bad = indices[(indices < -N) | (indices > N)][0]
            raise IndexError(f"{op}: index {bad} is out of bounds for axis {axis} with size {N}")
        indices = np.where(indices < 0, indices + N, indices)
        numnew = len(indices)
        order = indices.argsort(kind="mergesort")
        indices[order] += np.arange(numnew)
        new_shape = list(x.shape)
        new_shape[axis] = numnew
        if vals.ndim > x.ndim:
            raise ValueError(f"{op}: values of {vals.ndim} dimensions do not fit a {x.ndim}-d array")
        vals = _manipulation.broadcast_to(vals, tuple(new_shape))
        old = np.ones(N + numnew, dtype=bool)
        old[indices] = False
        pos = np.empty(N + numnew, dtype=np.intp)
        pos[old] = np.arange(N)
        pos[indices] = N + np.arange(numnew)
    both = _manipulation.concatenate([x, vals], axis=axis)
    return _indexing.take(both, _device(pos.astype(np.int64), op, x), axis=axis)


# --- lexsort --------------------------------------------------------------------------------------

def lexsort(keys, axis=-1):
    """NumPy's ``lexsort``: the indices that sort by the last key, ties broken by the one before and so on
    (each key a DeviceArray of one shape, or the rows of one array), by stable sorts from the first key on."""
    op = "lexsort"
    if isinstance(keys, DeviceArray) or isinstance(keys, np.ndarray):
        k = _device(keys, op)
        if k.ndim == 0:
            raise TypeError(f"{op}: need sequence of keys with len > 0 in lexsort")
        key_list = [k[i] for i in range(k.shape[0])]
    else:
        key_list = [_device(v, op) for v in keys]
    if not key_list:
        raise TypeError(f"{op}: need sequence of keys with len > 0 in lexsort")
    shape = key_list[0].shape
    if any(v.shape != shape for v in key_list):
        raise ValueError(f"{op}: all keys need to be the same shape")
    if len(shape) == 0:
        return _device(np.intp(0), op, key_list[0])
    (axis,) = _array._axes(axis, len(shape), op)
    idx = _sorting.argsort(key_list[0], axis=axis, stable=True)
    for k in key_list[1:]:
        o = _sorting.argsort(_indexing.take_along_axis(k, idx, axis=axis), axis=axis, stable=True)
        idx = _indexing.take_along_axis(idx, o, axis=axis)
    return idx


# --- block ----------------------------------------------------------------------------------------

def _block_depth(arrays, path, op):
    """(depth of list nesting, the largest ndim of the leaves), checking NumPy's rules on the way."""
    if isinstance(arrays, tuple):
        raise TypeError(f"{op}: arrays is a tuple. Only lists can be used to arrange blocks, and np.block does "
                        "not allow implicit conversion from tuple to ndarray.")
    if isinstance(arrays, list):
        if len(arrays) == 0:
            raise ValueError(f"{op}: List at arrays{''.join(f'[{i}]' for i in path)} cannot be empty")
        found = [_block_depth(a, path + [i], op) for i, a in enumerate(arrays)]
        depths = {d for d, _ in found}
        if len(depths) != 1:
            raise ValueError(f"{op}: List depths are mismatched (at arrays{''.join(f'[{i}]' for i in path)})")
        return found[0][0] + 1, builtins.max(nd for _, nd in found)
    return 0, np.ndim(arrays) if not isinstance(arrays, DeviceArray) else arrays.ndim


def block(arrays):
    """NumPy's ``block``: nested lists of arrays assembled by concatenation, the innermost lists along the
    last axis, the next along the one before; every block is first given the result's number of dimensions
    (leading 1s)."""
    op = "block"
    depth, leaf_ndim = _block_depth(arrays, [], op)
    ndim = builtins.max(depth, leaf_ndim)
    like = _first_device(arrays)

    def build(a, level):
        if level == depth:
            v = _device(a, op, like)
            return v.reshape((1,) * (ndim - v.ndim) + v.shape) if v.ndim < ndim else v
        return _manipulation.concatenate([build(e, level + 1) for e in a], axis=level - depth)

    return build(arrays, 0)


def _first_device(a):
    if isinstance(a, DeviceArray):
        return a
    if isinstance(a, list):
        for e in a:
            found = _first_device(e)
            if found is not None:
                return found
    return None


# --- put, putmask, place --------------------------------------------------------------------------

def _target(a, op):
    if not isinstance(a, DeviceArray):
        raise TypeError(f"{op}: the first argument must be a DeviceArray (it is written in place), got "
                        f"{type(a).__name__}")
    return a


def put(a, ind, v, mode="raise"):
    """NumPy's ``put``: ``a.flat[ind] = v`` in place, ``v`` repeated cyclically to ``ind``'s length; a
    repeated index keeps the last value. ``mode`` 'raise', 'wrap' or 'clip' treats out-of-bounds indices."""
    op = "put"
    a = _target(a, op)
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"{op}: clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    idx = _host(ind, op).reshape(-1)
    if idx.size and idx.dtype.kind not in "iu":
        raise TypeError(f"{op}: Cannot cast array data from {idx.dtype} to int64 according to the rule 'safe'")
    idx = idx.astype(np.int64)
    n = a.size
    if idx.size == 0:
        return None
    if n == 0:
        raise IndexError(f"{op}: cannot replace elements of an empty array")
    if mode == "raise":
        bad = (idx < -n) | (idx >= n)
        if bad.any():
            raise IndexError(f"{op}: index {idx[bad][0]} is out of bounds for axis 0 with size {n}")
        idx = np.where(idx < 0, idx + n, idx)
    elif mode == "wrap":
        idx = idx % n
    else:
        idx = np.clip(idx, 0, n - 1)
    vals = _device(v, op, a).astype(a.dtype, copy=False).reshape(-1)
    if vals.size == 0:
        return None
    vals = _np_resize(vals, idx.size)
    # The last write to a position wins: keep each position's last occurrence, written through a's own
    # indexing (one index array per axis), which works for any layout of a.
    last = len(idx) - 1 - np.unique(idx[::-1], return_index=True)[1]
    keep = np.sort(last)
    coords = tuple(_device(c.astype(np.int64), op, a) for c in np.unravel_index(idx[keep], a.shape))
    a[coords] = _indexing.take(vals, _device(keep.astype(np.int64), op, a))
    return None


def putmask(a, mask, values):
    """NumPy's ``putmask``: ``a.flat[n] = values.flat[n % len(values)]`` wherever ``mask.flat[n]``, in place."""
    op = "putmask"
    a = _target(a, op)
    m = _device(mask, op, a)
    if m.shape != a.shape:
        raise ValueError(f"{op}: mask and data must be the same size")
    vals = _device(values, op, a).astype(a.dtype, copy=False)
    if vals.size == 0:
        return None
    full = _np_resize(vals, a.size).reshape(a.shape)
    a[...] = where(m.astype(bool, copy=False), full, a)
    return None


def place(arr, mask, vals):
    """NumPy's ``place``: the True positions of ``mask`` (in C order) take ``vals`` in order, repeated
    cyclically; waits for the count of True. In place."""
    op = "place"
    a = _target(arr, op)
    m = _device(mask, op, a).astype(bool, copy=False)
    if m.size != a.size:
        raise ValueError(f"{op}: mask and data must be the same size")
    count = int(_U["add"].reduce(m.reshape(-1).astype(np.int64), axis=0).item())
    v = _device(vals, op, a).astype(a.dtype, copy=False).reshape(-1)
    if count == 0:
        return None
    if v.size == 0:
        raise ValueError(f"{op}: Cannot insert from an empty array!")
    a[m.reshape(a.shape)] = _np_resize(v, count)
    return None


# --- polyfit, roots -------------------------------------------------------------------------------

def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """NumPy's ``polyfit``: the least-squares polynomial of degree ``deg`` (highest power first) through the
    points, solved as NumPy solves it (scaled Vandermonde columns, ``linalg.lstsq``); ``full`` adds
    (residuals, rank, singular values, rcond), ``w`` weights the points. ``cov`` is not supported."""
    op = "polyfit"
    if cov:
        raise TypeError(f"{op}: cov= is not supported")
    order = operator.index(deg) + 1
    xd = _device(x, op)
    yd = _device(y, op, xd)
    if deg < 0:
        raise ValueError(f"{op}: expected deg >= 0")
    if xd.ndim != 1:
        raise TypeError(f"{op}: expected 1D vector for x")
    if xd.size == 0:
        raise TypeError(f"{op}: expected non-empty vector for x")
    if yd.ndim < 1 or yd.ndim > 2:
        raise TypeError(f"{op}: expected 1D or 2D array for y")
    if xd.shape[0] != yd.shape[0]:
        raise TypeError(f"{op}: expected x and y to have same length")
    xd = xd.astype(np.result_type(xd.dtype, np.float64), copy=False) if xd.dtype.kind in "biu" else xd
    yd = yd.astype(np.result_type(yd.dtype, np.float64), copy=False) if yd.dtype.kind in "biu" else yd
    if rcond is None:
        rcond = len(xd) * np.finfo(xd.dtype).eps
    lhs = vander(xd, order)
    rhs = yd
    if w is not None:
        wd = _device(w, op, xd)
        if wd.ndim != 1:
            raise TypeError(f"{op}: expected a 1-d array for weights")
        if wd.shape[0] != yd.shape[0]:
            raise TypeError(f"{op}: expected w and y to have the same length")
        lhs = lhs * wd[:, None]
        rhs = rhs * wd if rhs.ndim == 1 else rhs * wd[:, None]
    scale = _U["sqrt"](_U["add"].reduce(lhs * lhs, axis=0))
    lhs = lhs / scale
    c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    if rank != order and not full:
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning, stacklevel=2)
    if full:
        return c, resids, rank, s, rcond
    return c


def roots(p):
    """NumPy's ``roots``: the roots of the polynomial with coefficients ``p`` (highest power first), as the
    eigenvalues of its companion matrix (complex, or real when every root is real as NumPy returns them)."""
    op = "roots"
    pd = _device(p, op)
    if pd.ndim != 1:
        raise ValueError(f"{op}: Input must be a rank-1 array.")
    host = _array.to_numpy(pd)  # leading and trailing zeros decide the result's length
    nz = np.nonzero(host)[0]
    if len(nz) == 0:
        return _creation.empty((0,), dtype=np.float64, placement=pd.placement)
    trailing = len(host) - nz[-1] - 1
    pd = pd[int(nz[0]):int(nz[-1]) + 1]
    if pd.dtype.kind not in "fc":
        pd = pd.astype(np.float64)
    N = pd.shape[0]
    if N > 1:
        A = _creation.eye(N - 1, N - 1, k=-1, dtype=pd.dtype, placement=pd.placement)
        A[0, :] = -pd[1:] / pd[0]
        r = linalg.eigvals(A)
        # NumPy's eigvals returns real values when every imaginary part is zero.
        if pd.dtype.kind != "c" and not _U["logical_or"].reduce(_U["not_equal"](imag(r), 0), axis=0).item():
            r = real(r)
    else:
        r = _creation.empty((0,), dtype=pd.dtype, placement=pd.placement)
    if trailing:
        r = _manipulation.concatenate([r, _creation.zeros((trailing,), dtype=r.dtype, placement=pd.placement)])
    return r


_array._ARRAY_FUNCTIONS.update({
    np.gradient: gradient, np.insert: insert, np.lexsort: lexsort, np.block: block, np.put: put,
    np.putmask: putmask, np.place: place, np.polyfit: polyfit, np.roots: roots,
})
