"""Indexing functions (the array API's chapter) and DeviceArray's advanced indexing.

``x[key]`` and ``x[key] = value`` follow NumPy: integers, slices, None and
Ellipsis give views (the basic part, in _array.py); integer index arrays
(DeviceArrays, NumPy arrays or lists, broadcast together) and boolean masks
gather into a new array or scatter into ``x``, as regions on the compute
lane (ext/core/kernels/indexing.cpp). The index arrays' result dimensions
go where the first advanced entry stood when the advanced entries
(index arrays, masks, and integers among them) are adjacent in the key,
else in front (Note [Advanced index layout] in ext/core/array/indexing.h).

Bounds: an index outside ``[-n, n)`` is an IndexError naming the axis and
its size, raised before anything is submitted. The check runs on the
compute lane and the host waits for it, so an index array that is a pending
device result is waited for (the gather or scatter itself is asynchronous).
``take(..., mode="wrap"|"clip")`` needs no check and never waits.
A boolean mask makes a result whose length depends on its data: the host
waits for the mask's count (as ``nonzero`` does) before the compress runs.
Assigning a scalar through a mask alone (``x[x < 0] = 0``) is an in-place
select that never waits; other assignments through masks use the mask's
nonzero indices, which wait for it.
"""

from __future__ import annotations

import builtins
import operator

import numpy as np
from numpy.typing import ArrayLike

from . import _array, _core, _creation
from ._array import DeviceArray, _device

__all__ = ["take", "take_along_axis"]

_ARRAYS = (DeviceArray, np.ndarray, list)


def _index_dtype_error(op, dtype):
    return IndexError(f"{op}: arrays used as indices must be of integer (or boolean) type, got {dtype}")


def _entry(k, op):
    """One entry of a key as (kind, value); kinds: none, ellipsis, slice, int, array, mask, bool."""
    if k is None:
        return "none", None
    if k is Ellipsis:
        return "ellipsis", None
    if isinstance(k, slice):
        return "slice", k
    if isinstance(k, (bool, np.bool_)):
        return "bool", bool(k)
    if isinstance(k, _ARRAYS):
        if isinstance(k, DeviceArray):
            dtype = k.dtype
        else:
            k = np.asarray(k)
            if k.size == 0 and k.dtype.kind == "f":  # x[[]]: NumPy takes an empty list as integers
                k = k.astype(np.intp)
            dtype = k.dtype
        kind = getattr(dtype, "kind", "V")
        if kind == "b":
            if k.ndim == 0:
                return "bool", bool(k)  # a 0-d mask: its value decides the shape
            return "mask", k
        if kind not in "iu":
            raise _index_dtype_error(op, dtype)
        if k.ndim == 0 and not isinstance(k, DeviceArray):
            return "int", int(k)
        return "array", k
    try:
        return "int", operator.index(k)
    except TypeError:
        raise IndexError(f"{op}: only integers, slices (`:`), ellipsis (`...`), None and integer or boolean "
                         f"arrays are valid indices, got {k!r}") from None


def _is_advanced(key):
    if isinstance(key, tuple):
        return builtins.any(isinstance(k, (*_ARRAYS, bool, np.bool_)) for k in key)
    return isinstance(key, (*_ARRAYS, bool, np.bool_))


class _Advanced:
    """A key split into its basic part (a view of x) and its advanced entries, in view axes."""

    def __init__(self, x, key, op):
        entries = [_entry(k, op) for k in (key if isinstance(key, tuple) else (key,))]
        if builtins.sum(kind == "ellipsis" for kind, _ in entries) > 1:
            raise IndexError(f"{op}: an index can only have a single ellipsis ('...')")
        consumed = builtins.sum(v.ndim if kind == "mask" else 1 for kind, v in entries
                                if kind in ("slice", "int", "array", "mask"))
        if consumed > x.ndim:
            raise IndexError(f"{op}: too many indices for array: array is {x.ndim}-dimensional, "
                             f"but {consumed} were indexed")
        # An Ellipsis separates advanced entries even where it stands for no axis (NumPy): it stays an
        # entry of its own, followed by the slices it stands for.
        fill = [("slice", slice(None))] * (x.ndim - consumed)
        at = next((i for i, (kind, _) in enumerate(entries) if kind == "ellipsis"), len(entries))
        entries = entries[:at + 1] + fill + entries[at + 1:]
        basic, positions = [], []
        self.axes, self.indices, self.key_axes, self.masks = [], [], [], []
        self.first = None
        view_dim = key_dim = 0
        for pos, (kind, v) in enumerate(entries):
            if kind in ("int", "array", "mask", "bool"):
                positions.append(pos)
                if self.first is None:
                    self.first = view_dim
            if kind == "ellipsis":
                continue
            if kind == "int":
                basic.append(v)
                key_dim += 1
            elif kind in ("slice", "none"):
                basic.append(v)
                view_dim += 1
                key_dim += kind == "slice"
            elif kind == "array":
                basic.append(slice(None))
                self.axes.append(view_dim)
                self.indices.append(v)
                self.key_axes.append(key_dim)
                view_dim += 1
                key_dim += 1
            elif kind == "mask":
                basic.extend([slice(None)] * v.ndim)
                self.masks.append((len(self.axes), view_dim, v, key_dim))
                self.axes.append(view_dim)  # a placeholder until the mask becomes index arrays
                self.indices.append(None)
                self.key_axes.append(key_dim)
                view_dim += v.ndim
                key_dim += v.ndim
            else:  # a 0-d bool: a new axis of length 1, taken whole (True) or not at all (False)
                basic.append(None)
                self.axes.append(view_dim)
                self.indices.append(np.zeros(1 if v else 0, np.intp))
                self.key_axes.append(key_dim)
                view_dim += 1
        self.adjacent = positions == list(range(positions[0], positions[0] + len(positions))) if positions else True
        self.first = self.first or 0
        self.basic = tuple(basic)
        self.view = _array._getitem(x, self.basic)
        self.op = op
        for i, (_, vdim, mask, kdim) in enumerate(self.masks):
            if not isinstance(mask, DeviceArray):
                mask = _device(mask, op, like=x)
                self.masks[i] = (self.masks[i][0], vdim, mask, kdim)
            have = self.view.shape[vdim:vdim + mask.ndim]
            for d, (n, m) in enumerate(zip(have, mask.shape)):
                if n != m and m != 0:  # an empty mask dimension selects nothing from any (NumPy)
                    raise IndexError(f"{op}: boolean index did not match indexed array along axis {kdim + d}; "
                                     f"size of axis is {n} but size of corresponding boolean axis is {m}")
        self.indices = [i if i is None or isinstance(i, DeviceArray) else _device(i, op, like=x)
                        for i in self.indices]

    def single_mask(self):
        return len(self.masks) == 1 and len(self.axes) == 1

    def expand_masks(self):
        """Masks as their nonzero indices, one integer array per mask dimension (waits for each mask)."""
        from ._searching import nonzero

        axes, indices, key_axes = [], [], []
        masks = {slot: (vdim, mask, kdim) for slot, vdim, mask, kdim in self.masks}
        for slot, (ax, idx, kax) in enumerate(zip(self.axes, self.indices, self.key_axes)):
            if slot in masks:
                vdim, mask, kdim = masks[slot]
                parts = nonzero(mask)
                axes.extend(range(vdim, vdim + mask.ndim))
                indices.extend(parts)
                key_axes.extend(range(kdim, kdim + mask.ndim))
            else:
                axes.append(ax)
                indices.append(idx)
                key_axes.append(kax)
        return axes, indices, key_axes


@_array._method("__getitem__")
def _getitem(self, key: object) -> DeviceArray:
    """Basic indexing (integers, slices, Ellipsis, None) gives a view of the same storage; integer arrays
    and boolean masks (NumPy's advanced indexing) gather into a new array on the compute lane, after a
    bounds check the host waits for (so a pending index array is waited for; IndexError naming the axis)
    or, for a mask, after its count (a data-dependent shape)."""
    if not _is_advanced(key):
        return _array._getitem(self, key)
    op = "getitem"
    a = _Advanced(self, key, op)
    if not a.axes:  # 0-d integer host arrays only: basic indexing
        return a.view
    if a.single_mask():
        _, vdim, mask, kdim = a.masks[0]
        return _core._mask_get(a.view, vdim, mask, kdim, a.adjacent, a.first, op)
    axes, indices, key_axes = a.expand_masks()
    return _core._index_get(a.view, axes, indices, key_axes, a.adjacent, a.first, "raise", op)


@_array._method("__setitem__")
def _setitem(self, key: object, value: object) -> None:
    """Copy value (array, scalar or host data) into the indexed view (or, through integer arrays and masks,
    the selected elements), asynchronously, as NumPy assigns: broadcasting, Python scalars converted exactly
    (OverflowError, ValueError for NaN into integers)."""
    if not _is_advanced(key):
        return _array._setitem(self, key, value)
    op = f"x[{_array._key_str(key)}] = value"
    a = _Advanced(self, key, op)
    if not a.axes:
        return _array._setitem(self, a.basic, value)
    if isinstance(value, DeviceArray):
        values = value if value.dtype == self.dtype else value.astype(self.dtype)
    else:
        # Converted as NumPy assigns (overflow and NaN-to-integer raise), before anything runs.
        values = _core._full(np.shape(value), value, self.dtype, None, op, self)
    if a.single_mask() and values.ndim == 0:
        _, vdim, mask, _ = a.masks[0]
        if mask.shape == a.view.shape[vdim:vdim + mask.ndim]:
            # x[mask] = scalar selects in place, asynchronously: no count, no wait.
            m = mask.reshape(mask.shape + (1,) * (a.view.ndim - vdim - mask.ndim))
            _core._ufuncs["where"](m, values, a.view, out=a.view)
            return
    axes, indices, key_axes = a.expand_masks()
    _core._index_set(a.view, axes, indices, key_axes, a.adjacent, a.first, values, op)


def _index_operand(indices, x, op):
    if isinstance(indices, DeviceArray):
        return indices
    h = np.asarray(indices)
    if h.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must be integers, got dtype {h.dtype}")
    return _device(h, op, like=x)


def take(x: DeviceArray | ArrayLike, indices: DeviceArray | ArrayLike, /, *, axis: int | None = None,
         mode: str = "raise") -> DeviceArray:
    """Elements of ``x`` at ``indices`` along ``axis`` (array API ``take``; NumPy's ``mode`` too).

    ``axis=None`` takes from the flattened ``x`` (the array API allows it only
    for 1-d ``x``; NumPy flattens any). The result is ``x``'s shape with
    ``axis`` replaced by ``indices``' shape. ``mode="raise"`` checks bounds
    first (waiting for pending ``indices``; IndexError naming the axis),
    ``"wrap"`` takes indices modulo the axis length, ``"clip"`` clamps them;
    the gather itself runs asynchronously on the compute lane.
    """
    op = "take"
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"{op}: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    x = _device(x, op)
    if axis is None:
        x, axis = x.reshape(-1), 0
    else:
        (axis,) = _array._axes(axis, x.ndim, op)
    idx = _index_operand(indices, x, op)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must be integers, got dtype {idx.dtype}")
    return _core._index_get(x, [axis], [idx], [axis], True, axis, mode, op)


def take_along_axis(x: DeviceArray | ArrayLike, indices: DeviceArray | ArrayLike, /, *,
                    axis: int | None = -1) -> DeviceArray:
    """Elements of ``x`` at ``indices`` along ``axis``, matched position by position on the other axes.

    ``indices`` has ``x``'s number of dimensions; the other axes broadcast
    against ``x``'s (NumPy's and the array API's rule), so
    ``take_along_axis(x, argsort(x, axis=a), axis=a)`` sorts ``x``.
    ``axis=None`` works on the flattened ``x`` (NumPy). Bounds are checked
    first as in ``take``; the gather is asynchronous.
    """
    op = "take_along_axis"
    x = _device(x, op)
    idx = _index_operand(indices, x, op)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must be integers, got dtype {idx.dtype}")
    if axis is None:
        x, axis = x.reshape(-1), 0
        if idx.ndim != 1:
            raise ValueError(f"{op}: with axis=None, indices must be 1-dimensional, got {idx.ndim} dimensions")
    else:
        (axis,) = _array._axes(axis, x.ndim, op)
    if idx.ndim != x.ndim:
        raise ValueError(f"{op}: indices and x must have the same number of dimensions, got {idx.ndim} and {x.ndim}")
    arrays = []
    for d in range(x.ndim):
        if d == axis:
            arrays.append(idx)
        else:
            shape = [1] * x.ndim
            shape[d] = x.shape[d]
            arrays.append(_creation.arange(x.shape[d], dtype=np.int64, placement=x.placement).reshape(shape))
    dims = list(range(x.ndim))
    return _core._index_get(x, dims, arrays, dims, True, 0, "raise", op)


def _np_take(a, indices, axis=None, out=None, mode="raise"):
    if out is not None:
        raise TypeError("hrxarray's take does not take out=")
    return take(a, indices, axis=axis, mode=mode)


def _np_take_along_axis(arr, indices, axis=-1):
    return take_along_axis(arr, indices, axis=axis)


_array._ARRAY_FUNCTIONS.update({np.take: _np_take, np.take_along_axis: _np_take_along_axis})
