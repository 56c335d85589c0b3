"""Manipulation functions (the array API's chapter, with NumPy's spellings and extras).

Views where NumPy gives views: ``flip``, ``moveaxis``, ``swapaxes``,
``unstack``, ``broadcast_arrays`` (and ``ravel`` of a contiguous array) share
the input's storage through strides, and nothing runs. The others make a new
array on the compute lane: ``concat`` copies each input into its slice,
and ``repeat``, ``roll``, ``tile`` and the non-constant modes of ``pad`` are one
outer gather each (Note [Outer gathers] in ext/core/array/manipulation.h),
whose per-axis index tables are computed here from shapes alone; the data
never visits the host. Where a plain copy does the same (``tile``, ``repeat``
by one count, ``roll`` along one axis: a broadcast view or two slices) that
copy runs instead, with no table at all.

reshape, permute_dims, expand_dims, squeeze, stack, concatenate and
broadcast_to live in ``_array.py`` (other modules build on them there).
"""

from __future__ import annotations

import builtins
import math
from typing import Any, Sequence

import numpy as np

from . import _array, _core, _creation
from ._array import _INT64_MAX, DeviceArray, _axes, _device, _dtype, _flag, _operand, _permute, _shape_tuple, bfp16

__all__ = [
    "concatenate", "stack", "reshape", "transpose", "permute_dims", "squeeze", "expand_dims", "broadcast_to",
    "broadcast_arrays", "broadcast_shapes", "concat", "flip", "moveaxis", "swapaxes", "repeat", "roll", "tile",
    "unstack", "ravel", "meshgrid",
]


def _no_bfp16(x: DeviceArray, op: str) -> None:
    if x.dtype is bfp16:
        raise TypeError(f"{op}: bfp16 blocks cannot be rearranged element by element; convert with "
                        "astype(hx.float32) first")


def _empty_result(x: DeviceArray, shape: tuple, op: str) -> DeviceArray:
    return _core._empty(shape, x.dtype, None, op, x)


def _broadcast_copy(x: DeviceArray, shape: tuple, strides: tuple, result: tuple, op: str) -> DeviceArray:
    """A copy of the view (shape, strides) of x (stride 0 repeats), reshaped to ``result``: one copy task."""
    out = _empty_result(x, shape, op)
    if out.size:
        out._copy_from(x._view(x._offset, shape, strides), False, op)
    return out.reshape(result)


def _gather(x: DeviceArray, tables: list, op: str) -> DeviceArray:
    """x gathered along each axis by its int64 table (None keeps the axis); empty results need no task."""
    shape = tuple(n if t is None else len(t) for n, t in zip(x.shape, tables))
    if math.prod(shape) == 0:
        return _empty_result(x, shape, op)
    tables = [None if t is None else np.ascontiguousarray(t, dtype=np.int64) for t in tables]
    return _core._gather(x, tables, op)


def broadcast_shapes(*shapes: int | Sequence[int]) -> tuple[int, ...]:
    """The shape that arrays of ``shapes`` broadcast to (NumPy's rule); ValueError naming the clash."""
    return _broadcast_shapes(shapes, "broadcast_shapes")


def _broadcast_shapes(shapes: Sequence[Any], op: str) -> tuple[int, ...]:
    # The core's rule, which every operation's broadcasting uses (array/ops.h: one owner).
    return _core._broadcast_shapes(list(shapes), op)


def broadcast_arrays(*arrays: DeviceArray) -> tuple[DeviceArray, ...]:
    """Views of ``arrays`` broadcast against each other (stride 0 on broadcast axes); a tuple, as NumPy 2."""
    op = "broadcast_arrays"
    xs = [_device(a, op) for a in arrays]
    shape = _broadcast_shapes([x.shape for x in xs], op)
    return tuple(x if x.shape == shape else broadcast_to(x, shape) for x in xs)


def concat(arrays: Sequence[DeviceArray], /, *, axis: int | None = 0) -> DeviceArray:
    """Join arrays along an existing axis (array API ``concat``; ``axis=None`` flattens first).

    The result dtype is the arrays' promoted dtype; each input is copied into
    its slice of a new array on the compute lane.
    """
    if isinstance(arrays, DeviceArray):
        raise TypeError("concat: arrays must be a tuple or list of arrays, got a DeviceArray")
    return _concatenate(arrays, axis, None, "concat")


def flip(x: DeviceArray, /, *, axis: int | Sequence[int] | None = None) -> DeviceArray:
    """A view of ``x`` with the order of elements reversed along ``axis`` (all axes by default)."""
    op = "flip"
    x = _device(x, op)
    axes = _axes(axis, x.ndim, op)
    if axes is None:
        axes = tuple(range(x.ndim))
    if x.dtype is bfp16 and x.ndim - 1 in axes:
        raise ValueError(f"{op}: a bfp16 array's blocked last axis cannot be reversed")
    offset, strides = x._offset, list(x.strides)
    for a in axes:
        if x.shape[a] > 1:
            offset += (x.shape[a] - 1) * strides[a]
            strides[a] = -strides[a]
    return x._view(offset, x.shape, tuple(strides))


def _axis_list(axis: Any, ndim: int, op: str, what: str) -> list[int]:
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    try:
        axes = list(_axes(tuple(axis), ndim, op))
    except TypeError:
        raise TypeError(f"{op}: {what} must be an integer or a sequence of integers, got {axis!r}") from None
    except ValueError as e:
        if isinstance(e, np.exceptions.AxisError):
            raise
        raise ValueError(f"{op}: repeated axis in {what} {axis!r}") from None
    return axes


def moveaxis(x: DeviceArray, source: int | Sequence[int], destination: int | Sequence[int], /) -> DeviceArray:
    """A view of ``x`` with axes ``source`` moved to positions ``destination``; the others keep their order."""
    op = "moveaxis"
    x = _device(x, op)
    src = _axis_list(source, x.ndim, op, "source")
    dst = _axis_list(destination, x.ndim, op, "destination")
    if len(src) != len(dst):
        raise ValueError(f"{op}: source and destination must have the same number of elements, got "
                         f"{len(src)} and {len(dst)}")
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _array._permute(x, tuple(order), op)


def swapaxes(x: DeviceArray, axis1: int, axis2: int, /) -> DeviceArray:
    """A view of ``x`` with axes ``axis1`` and ``axis2`` interchanged."""
    op = "swapaxes"
    x = _device(x, op)
    (a,) = _axes(axis1, x.ndim, op)
    (b,) = _axes(axis2, x.ndim, op)
    order = list(range(x.ndim))
    order[a], order[b] = b, a
    return _array._permute(x, tuple(order), op)


def unstack(x: DeviceArray, /, *, axis: int = 0) -> tuple[DeviceArray, ...]:
    """The views ``x[..., i, ...]`` along ``axis``, as a tuple."""
    op = "unstack"
    x = _device(x, op)
    if x.ndim == 0:
        raise ValueError(f"{op}: x must have at least one dimension, got a 0-d array")
    (a,) = _axes(axis, x.ndim, op)
    lead = (slice(None),) * a
    return tuple(x[lead + (i,)] for i in range(x.shape[a]))


def ravel(x: DeviceArray, /, order: str = "C") -> DeviceArray:
    """``x`` as a 1-d array: a view when ``x`` is C-contiguous, else a copy (NumPy's ``ravel``)."""
    op = "ravel"
    x = _device(x, op)
    _c_order_only(x, order, op)
    return x.reshape(-1)


def _c_order_only(x: DeviceArray, order: str, op: str) -> None:
    # "K" and "A" read memory order, which is C order exactly when x is C-contiguous.
    if order != "C" and not (order in ("K", "A") and x._c_contiguous):
        raise ValueError(f"{op}: only order='C' is supported here (and 'K'/'A' of a C-contiguous array), "
                         f"got {order!r}")


@_array._method("flatten")
def _flatten(self, order: str = "C") -> DeviceArray:
    """A 1-d copy of this array (always a new array)."""
    _c_order_only(self, order, "flatten")
    return self.reshape(-1, copy=True)


def _int_counts(values: Any, op: str, what: str) -> np.ndarray:
    """An integer argument (scalar or 1-d) as int64 on the host; a DeviceArray is read (its values set a shape)."""
    if isinstance(values, DeviceArray):
        if values.dtype is bfp16 or values.dtype.kind not in "iub":
            raise TypeError(f"{op}: {what} must be integers, got a {values.dtype} array")
        values = values._to_numpy()
    arr = np.asarray(values)
    if arr.dtype.kind not in "iub" and arr.size:
        raise TypeError(f"{op}: {what} must be integers, got {values!r}")
    if arr.ndim > 1:
        raise ValueError(f"{op}: {what} must be an integer or a 1-d sequence, got shape {arr.shape}")
    return arr.astype(np.int64)


def repeat(x: DeviceArray, repeats: int | Sequence[int] | DeviceArray, /, *, axis: int | None = None) -> DeviceArray:
    """Each element of ``x`` repeated ``repeats`` times along ``axis`` (the flattened array by default).

    ``repeats`` is an integer, or one count per element along ``axis`` (a
    sequence or an integer array; a DeviceArray of counts is waited for, since
    the result's shape depends on it). Negative counts are a ValueError.
    """
    op = "repeat"
    x = _device(x, op)
    _no_bfp16(x, op)
    if axis is None:
        x, axis = ravel(x), 0
    (a,) = _axes(axis, x.ndim, op)
    counts = _int_counts(repeats, op, "repeats")
    n = x.shape[a]
    if counts.ndim == 1 and counts.size not in (1, n):
        raise ValueError(f"{op}: repeats has {counts.size} counts for axis {a} of size {n} (shape {x.shape})")
    if (counts < 0).any():
        raise ValueError(f"{op}: repeats may not contain negative values, got {repeats!r}")
    if counts.size == 1 and n:
        # The same count everywhere: a broadcast view (stride 0 after the axis) copied once.
        r = int(counts.reshape(()))
        return _broadcast_copy(x, x.shape[:a + 1] + (r,) + x.shape[a + 1:],
                               x.strides[:a + 1] + (0,) + x.strides[a + 1:],
                               x.shape[:a] + (n * r,) + x.shape[a + 1:], op)
    table = np.repeat(np.arange(n, dtype=np.int64), counts.reshape(-1) if counts.size == n else counts.reshape(()))
    tables = [None] * x.ndim
    tables[a] = table
    return _gather(x, tables, op)


def roll(x: DeviceArray, /, shift: int | Sequence[int], *, axis: int | Sequence[int] | None = None) -> DeviceArray:
    """``x`` with elements shifted by ``shift`` along ``axis`` (the flattened array by default), wrapping around.

    ``shift`` and ``axis`` may be sequences (broadcast against each other);
    shifts of a repeated axis add up, as in NumPy.
    """
    op = "roll"
    x = _device(x, op)
    _no_bfp16(x, op)
    shifts = _int_counts(shift, op, "shift")
    if axis is None:
        if shifts.size != 1:
            raise ValueError(f"{op}: shift must be a single integer when axis is None, got {shift!r}")
        return roll(ravel(x), int(shifts.reshape(())), axis=0).reshape(x.shape)
    axes = np.asarray(axis)
    if axes.dtype.kind not in "iu":
        raise TypeError(f"{op}: axis must be an integer or a sequence of integers, got {axis!r}")
    try:
        shifts, axes = np.broadcast_arrays(shifts, axes)
    except ValueError:
        raise ValueError(f"{op}: shift {shift!r} and axis {axis!r} do not broadcast together") from None
    total = [0] * x.ndim
    for s, ax in zip(shifts.reshape(-1).tolist(), axes.reshape(-1).tolist()):
        (a,) = _axes(ax, x.ndim, op)
        total[a] += s
    moved = {a: s % x.shape[a] for a, s in enumerate(total) if x.shape[a] and s % x.shape[a]}
    if not moved:
        return x.copy()
    if len(moved) == 1:
        # One axis: two slice copies (no index table, whatever the length).
        ((a, s),) = moved.items()
        n, lead = x.shape[a], (slice(None),) * a
        out = _empty_result(x, x.shape, op)
        out[lead + (slice(s, n),)]._copy_from(x[lead + (slice(0, n - s),)], False, op)
        out[lead + (slice(0, s),)]._copy_from(x[lead + (slice(n - s, n),)], False, op)
        return out
    tables: list = [None] * x.ndim
    for a, s in moved.items():
        tables[a] = (np.arange(x.shape[a], dtype=np.int64) - s) % x.shape[a]
    return _gather(x, tables, op)


def tile(x: DeviceArray, reps: int | Sequence[int], /) -> DeviceArray:
    """``x`` repeated ``reps`` times along each axis (NumPy's ``tile``: the shorter of the two is padded with 1s)."""
    op = "tile"
    x = _device(x, op)
    _no_bfp16(x, op)
    reps_t = _shape_tuple(reps, op)
    if builtins.any(r < 0 for r in reps_t):
        raise ValueError(f"{op}: reps must be non-negative, got {reps!r}")
    nd = builtins.max(len(reps_t), x.ndim)
    reps_t = (1,) * (nd - len(reps_t)) + reps_t
    if x.ndim < nd:
        x = x.reshape((1,) * (nd - x.ndim) + x.shape)
    # A broadcast view of shape (r0, n0, r1, n1, ...), stride 0 on the r axes, copied once.
    shape = tuple(v for r, n in zip(reps_t, x.shape) for v in (r, n))
    strides = tuple(v for s in x.strides for v in (0, s))
    return _broadcast_copy(x, shape, strides, tuple(r * n for r, n in zip(reps_t, x.shape)), op)


# --- NumPy's spellings and DeviceArray methods ----------------------------------------------


def _np_flip(m, axis=None):
    return flip(m, axis=axis)


def _np_roll(a, shift, axis=None):
    return roll(a, shift, axis=axis)


def _np_repeat(a, repeats, axis=None):
    return repeat(a, repeats, axis=axis)


def _np_concat(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    if out is not None:
        raise TypeError("hrxarray's concatenate does not take out=")
    return _concatenate(arrays, axis, None if dtype is None else _dtype(dtype, "concatenate"), "concatenate")


def _np_broadcast_arrays(*args, subok=False):
    return broadcast_arrays(*args)


def _np_unstack(x, /, *, axis=0):
    return unstack(x, axis=axis)


@_array._method("squeeze")
def _squeeze_method(self, axis: int | tuple[int, ...] | None = None) -> DeviceArray:
    """hrxarray.squeeze of this array."""
    return squeeze(self, axis)


@_array._method("repeat")
def _repeat_method(self, repeats: object, axis: int | None = None) -> DeviceArray:
    """hrxarray.repeat of this array."""
    return repeat(self, repeats, axis=axis)


@_array._method("ravel")
def _ravel_method(self, order: str = "C") -> DeviceArray:
    """hrxarray.ravel of this array: a 1-d view when contiguous, else a copy."""
    return ravel(self, order)


@_array._method("swapaxes")
def _swapaxes_method(self, axis1: int, axis2: int) -> DeviceArray:
    """hrxarray.swapaxes of this array (a view)."""
    return swapaxes(self, axis1, axis2)


_array._ARRAY_FUNCTIONS.update({
    np.flip: _np_flip, np.moveaxis: moveaxis, np.swapaxes: swapaxes, np.repeat: _np_repeat, np.roll: _np_roll,
    np.tile: tile, np.ravel: ravel, np.broadcast_arrays: _np_broadcast_arrays,
    np.concatenate: _np_concat,
})
if hasattr(np, "unstack"):
    _array._ARRAY_FUNCTIONS[np.unstack] = _np_unstack
if hasattr(np, "concat") and np.concat is not np.concatenate:
    _array._ARRAY_FUNCTIONS[np.concat] = _np_concat


# --- the standard's manipulation functions that hrxarray had first ---------------------------------


def concatenate(arrays, axis=0, dtype=None) -> DeviceArray:
    """Join arrays along an existing axis (``axis=None`` flattens first); NumPy's result dtype."""
    return _concatenate(arrays, axis, dtype, "concatenate")


def _concatenate(arrays, axis, dtype, op):
    arrays = list(arrays)
    if not arrays:
        raise ValueError(f"{op}: need at least one array to concatenate")
    first = next((a for a in arrays if isinstance(a, DeviceArray)), None)
    # Host data stays on the host until every check has passed.
    xs = [_operand(a, op) for a in arrays]
    if axis is None:
        xs = [x.reshape(-1) for x in xs]
        axis = 0
    nd = xs[0].ndim
    if nd == 0:
        raise ValueError(f"{op}: zero-dimensional arrays cannot be concatenated")
    (axis,) = _axes(axis, nd, op)
    for i, x in enumerate(xs):
        if x.ndim != nd:
            raise ValueError(f"{op}: all the input array dimensions except for the concatenation axis must match "
                             f"exactly, but along dimension 0, the array at index 0 has {nd} dimension(s) and the "
                             f"array at index {i} has {x.ndim} dimension(s)")
        for d in range(nd):
            if d != axis and x.shape[d] != xs[0].shape[d]:
                raise ValueError(f"{op}: all the input array dimensions except for the concatenation axis must "
                                 f"match exactly, but along dimension {d}, the array at index 0 has size "
                                 f"{xs[0].shape[d]} and the array at index {i} has size {x.shape[d]}")
    if dtype is None:
        dtype = xs[0].dtype
        for x in xs[1:]:
            dtype = _result_type(dtype, x.dtype)
    shape = list(xs[0].shape)
    shape[axis] = builtins.sum(x.shape[axis] for x in xs)
    _core._check_reads(xs, op)
    out = _core._empty(tuple(shape), np.float64 if dtype is None else dtype, None, op, first)
    at = 0
    for x in xs:
        n = x.shape[axis]
        if n:
            index = (slice(None),) * axis + (slice(at, at + n),)
            out[index]._copy_from(x, False, op)
        at += n
    return out


def _result_type(a, b):
    from ._data_types import _promote

    return _promote(a, b)


def stack(arrays, axis=0) -> DeviceArray:
    """Join arrays of one shape along a new axis."""
    op = "stack"
    arrays = list(arrays)
    if not arrays:
        raise ValueError(f"{op}: need at least one array to stack")
    xs = [_operand(a, op) for a in arrays]
    if builtins.any(x.shape != xs[0].shape for x in xs):
        raise ValueError(f"{op}: all input arrays must have the same shape")
    (axis,) = _axes(axis, xs[0].ndim + 1, op)
    return _concatenate([_expand_dims(x, axis, op) for x in xs], axis, None, op)


def reshape(x, shape, order="C", *, copy=None) -> DeviceArray:
    """``x`` with a new shape (a view when ``x`` is C-contiguous, else a copy)."""
    return _device(x, "reshape").reshape(shape, order=order, copy=copy)


def transpose(x, axes=None) -> DeviceArray:
    """A view with the axes permuted (reversed by default)."""
    return _permute(_device(x, "transpose"), axes, "transpose")


def permute_dims(x, axes) -> DeviceArray:
    """The array API's name for transpose with explicit axes."""
    return _permute(_device(x, "permute_dims"), axes, "permute_dims")


def squeeze(x, axis=None) -> DeviceArray:
    """A view without the given (or all) length-1 axes."""
    op = "squeeze"
    x = _device(x, op)
    axes = _axes(axis, x.ndim, op)
    if axes is None:
        axes = [a for a in range(x.ndim) if x.shape[a] == 1]
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"{op}: cannot select an axis to squeeze out which has size not equal to one "
                             f"(axis {a} of shape {x.shape})")
    keep = [i for i in range(x.ndim) if i not in axes]
    return x._view(x._offset, tuple(x.shape[i] for i in keep), tuple(x.strides[i] for i in keep))


def expand_dims(x, axis=0) -> DeviceArray:
    """A view with length-1 axes inserted at ``axis`` (an integer, or a tuple of positions in the result)."""
    op = "expand_dims"
    x = _device(x, op)
    if not isinstance(axis, (tuple, list)):
        return _expand_dims(x, axis, op)
    shape, strides = list(x.shape), list(x.strides)
    for a in sorted(_axes(tuple(axis), x.ndim + len(axis), op)):
        shape.insert(a, 1)
        strides.insert(a, 0)
    return x._view(x._offset, tuple(shape), tuple(strides))


def _expand_dims(x, axis, op):
    """x with a length-1 axis at ``axis`` (a view of a DeviceArray; a NumPy array stays on the host)."""
    (axis,) = _axes(axis, x.ndim + 1, op)
    if not isinstance(x, DeviceArray):
        return np.expand_dims(x, axis)
    shape = x.shape[:axis] + (1,) + x.shape[axis:]
    strides = x.strides[:axis] + (0,) + x.strides[axis:]
    return x._view(x._offset, shape, strides)


def broadcast_to(x, shape) -> DeviceArray:
    """A read-through view of ``x`` broadcast to ``shape`` (stride 0 on new axes)."""
    x = _device(x, "broadcast_to")
    shape = _shape_tuple(shape, "broadcast_to")
    if builtins.any(not 0 <= n <= _INT64_MAX for n in shape):
        raise ValueError(f"broadcast_to: all elements of broadcast shape must be non-negative and fit int64, "
                         f"got {shape}")
    if len(shape) < x.ndim:
        raise ValueError(f"broadcast_to: cannot broadcast a shape {x.shape} to {shape}")
    pad = len(shape) - x.ndim
    strides = []
    for i, n in enumerate(shape):
        if i < pad:
            strides.append(0)
            continue
        have = x.shape[i - pad]
        if have == n:
            strides.append(x.strides[i - pad] if n != 1 else 0)
        elif have == 1:
            strides.append(0)
        else:
            raise ValueError(f"broadcast_to: operands could not be broadcast together with remapped shapes "
                             f"[original->remapped]: {x.shape} and requested shape {shape}")
    return x._view(x._offset, shape, tuple(strides))


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
            v = broadcast_to(v, tuple(sizes))
        out.append(v.copy() if copy else v)
    return tuple(out)


_array._ARRAY_FUNCTIONS.update({
    np.concatenate: concatenate, np.stack: stack, np.transpose: transpose, np.reshape: reshape, np.squeeze: squeeze,
    np.expand_dims: expand_dims, np.broadcast_to: broadcast_to, np.meshgrid: meshgrid,
})
if hasattr(np, "permute_dims") and np.permute_dims is not np.transpose:
    _array._ARRAY_FUNCTIONS[np.permute_dims] = permute_dims
