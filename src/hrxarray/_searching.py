"""Searching functions (the array API's chapter, with NumPy's spellings).

``argmax``, ``argmin`` and the three-argument ``where`` live in _array.py;
this chapter adds ``searchsorted``, ``nonzero`` and ``count_nonzero``.
``nonzero`` (and ``where(condition)``) has a data-dependent shape, so it waits
for its input's producers and for its own region before it returns, as
CuPy's does; everything else here is asynchronous.
"""

from __future__ import annotations


import numpy as np

from . import _array, _core, _creation
from ._array import DeviceArray, _device, _flag, _operand

__all__ = ["where", "argmax", "argmin", "searchsorted", "nonzero", "count_nonzero"]


def searchsorted(x1, x2, /, side: str = "left", sorter=None) -> DeviceArray:
    """Indices where the elements of ``x2`` would be inserted into the sorted 1-d ``x1`` (int64, ``x2``'s shape).

    ``side="left"`` gives the first suitable position, ``"right"`` the last.
    ``sorter`` (integer indices that sort ``x1``, e.g. from argsort) reads
    ``x1`` through it; an index out of range fails the operation. Both
    operands compare in their NumPy result type, NaNs last (the sort order).
    A Python scalar ``x2`` takes a float ``x1``'s dtype (NEP 50's weak scalars).
    """
    op = "searchsorted"
    if side not in ("left", "right"):
        raise ValueError(f"{op}: side must be 'left' or 'right', got {side!r}")
    x1 = _device(x1, op)
    if isinstance(x2, (bool, int, float)) and not isinstance(x2, np.generic) and x1.dtype.kind == "f":
        x2 = _creation.asarray(x2, dtype=x1.dtype, placement=x1.placement)
    else:
        x2 = _device(x2, op, like=x1)
    if sorter is not None:
        sorter = _device(sorter, op, like=x1)
    return _core._searchsorted(x1, x2, side == "right", sorter, op)


def nonzero(x, /) -> tuple[DeviceArray, ...]:
    """The indices of the nonzero elements of ``x``: one int64 array per axis, in C order.

    NaN counts as nonzero, -0.0 as zero. The result's length depends on the
    data: this waits for ``x`` and for the region that finds them. A 0-d
    ``x`` is a ValueError (NumPy 2 and the array API).
    """
    return _core._nonzero(_device(x, "nonzero"), "nonzero")


def count_nonzero(x, /, axis: int | tuple[int, ...] | None = None, *, keepdims: bool = False) -> DeviceArray:
    """The number of nonzero elements of ``x`` over ``axis`` (None: all), an int64 DeviceArray; asynchronous."""
    op = "count_nonzero"
    x = _device(x, op)
    keepdims = _flag(keepdims, op, "keepdims")
    # The add reduction hx.sum is, named for this function in its errors.
    return _array._ufunc_reduce(_core._ufuncs["add"], _core._ufuncs["not_equal"](x, 0), axis, np.int64, None, keepdims, op)


@_array._method("nonzero")
def _nonzero_method(self) -> tuple[DeviceArray, ...]:
    """hrxarray.nonzero of this array."""
    return nonzero(self)


_array._ARRAY_FUNCTIONS.update({np.searchsorted: searchsorted, np.nonzero: nonzero, np.count_nonzero: count_nonzero})


_U = _array._U
_NO_ARG = object()


def where(condition, x=_NO_ARG, y=_NO_ARG):
    """Elements of ``x`` where ``condition`` is true, else of ``y`` (broadcast; NumPy's promotion of x and y).

    With ``condition`` alone it is NumPy's ``where(condition)``: ``hx.nonzero(condition)``.
    """
    if x is _NO_ARG and y is _NO_ARG:
        return nonzero(condition)
    if x is _NO_ARG or y is _NO_ARG:
        raise TypeError("where: either both or neither of x and y should be given")
    return _U["where"](condition, x, y)


def argmax(x, axis=None, keepdims=False) -> DeviceArray:
    """Index of the (first) maximum, over the flattened array or along ``axis``; int64."""
    return _core._arg_reduce(_operand(x, "argmax"), axis, True, _flag(keepdims, "argmax", "keepdims"), "argmax")


def argmin(x, axis=None, keepdims=False) -> DeviceArray:
    """Index of the (first) minimum, over the flattened array or along ``axis``; int64."""
    return _core._arg_reduce(_operand(x, "argmin"), axis, False, _flag(keepdims, "argmin", "keepdims"), "argmin")


_array._ARRAY_FUNCTIONS.update({np.where: where, np.argmax: argmax, np.argmin: argmin})

# NumPy's argmax/argmin methods.
_array._reduction_methods(argmax, argmin)
