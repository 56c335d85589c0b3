"""Set functions (the array API's ``unique_*`` and NumPy's ``unique``).

The distinct values come from one stable sort of the flattened input on the
compute lane; their number depends on the data, so these functions wait for
their input and their region before returning (as CuPy's do). The results
are views of arrays as long as the input (their first entries).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from . import _array, _core, _creation
from ._array import DeviceArray, _axes, _device, _flag
from ._manipulation import moveaxis

__all__ = ["unique_all", "unique_counts", "unique_inverse", "unique_values", "unique", "isin"]


class UniqueAllResult(NamedTuple):
    values: DeviceArray
    indices: DeviceArray
    inverse_indices: DeviceArray
    counts: DeviceArray


class UniqueCountsResult(NamedTuple):
    values: DeviceArray
    counts: DeviceArray


class UniqueInverseResult(NamedTuple):
    values: DeviceArray
    inverse_indices: DeviceArray


def _unique(x, equal_nan, op):
    return _core._unique(_device(x, op), equal_nan, op)


def unique_all(x, /) -> UniqueAllResult:
    """Distinct values of ``x`` (sorted), the index of each one's first occurrence in the flattened ``x``,
    the inverse indices (``x``'s shape) and the counts. NaNs are all distinct (the array API's rule)."""
    return UniqueAllResult(*_unique(x, False, "unique_all"))


def unique_counts(x, /) -> UniqueCountsResult:
    """Distinct values of ``x`` (sorted) and how often each occurs; NaNs are all distinct."""
    v, _, _, c = _unique(x, False, "unique_counts")
    return UniqueCountsResult(v, c)


def unique_inverse(x, /) -> UniqueInverseResult:
    """Distinct values of ``x`` (sorted) and, for each element of ``x`` (its shape), the index of its value."""
    v, _, inv, _ = _unique(x, False, "unique_inverse")
    return UniqueInverseResult(v, inv)


def unique_values(x, /) -> DeviceArray:
    """Distinct values of ``x``, sorted; NaNs are all distinct."""
    return _unique(x, False, "unique_values")[0]


def unique(ar: DeviceArray | ArrayLike, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           sorted: bool = True) -> DeviceArray | tuple[DeviceArray, ...]:
    """NumPy's ``unique``: the sorted distinct values of ``ar``, plus what is asked for.

    With ``axis=None`` it works on the flattened ``ar``: NaNs collapse into
    one value unless ``equal_nan=False``, and the inverse has ``ar``'s shape
    (NumPy 2). With an ``axis`` it gives the distinct sub-arrays along that
    axis (``ar.shape[axis]`` of them at most), sorted lexicographically by
    their elements in C order; a sub-array holding a NaN is distinct from
    every other (as NumPy's field-by-field comparison makes it), the index,
    inverse and counts are 1-d along the axis; a 1-d ``ar`` is treated as
    with ``axis=None``. Returns the values alone or a tuple, as NumPy does.
    """
    op = "unique"
    flags = [_flag(f, op, n) for f, n in ((return_index, "return_index"), (return_inverse, "return_inverse"),
                                          (return_counts, "return_counts"))]
    _flag(sorted, op, "sorted")
    equal_nan = _flag(equal_nan, op, "equal_nan")
    if axis is None:
        v, idx, inv, c = _unique(ar, equal_nan, op)
    else:
        x = _device(ar, op)
        ax = _axes(axis, x.ndim, op)[0]
        if x.ndim == 1:
            v, idx, inv, c = _unique(x, equal_nan, op)
        else:
            v, idx, inv, c = _core._unique_axis(x, ax, op)
            v = moveaxis(v, 0, ax)
    extra = [a for a, want in zip((idx, inv, c), flags) if want]
    return (v, *extra) if extra else v


def _isin_operand(value, other, op):
    """A Python scalar as an array of the other operand's dtype when that keeps it exact (NEP 50's weak
    scalars), else of its own default dtype; anything else as a DeviceArray."""
    if isinstance(value, DeviceArray):
        return value
    if isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic):
        kinds = {bool: "b", int: "iu", float: "fc", complex: "c"}[type(value)]
        dt = other.dtype
        if dt.kind in kinds and np.asarray(value).astype(dt) == value:
            return _creation.asarray(value, dtype=dt, placement=other.placement)
        return _creation.asarray(value, placement=other.placement)
    return _device(value, op, like=other)


def isin(x1: DeviceArray | ArrayLike, x2: DeviceArray | ArrayLike, /, *, invert: bool = False) -> DeviceArray:
    """Whether each element of ``x1`` is one of the elements of ``x2``: a bool array of ``x1``'s shape.

    ``invert=True`` gives the negation. Elements compare in the operands'
    NumPy result type; NaN is in nothing, -0.0 equals 0.0. Either operand
    may be a Python scalar (taking the other's dtype when it holds the value
    exactly), not both. Sort-based on the compute lane (``x2`` sorted once,
    then a binary search per element of ``x1``); asynchronous.
    """
    op = "isin"
    invert = _flag(invert, op, "invert")
    if not isinstance(x1, DeviceArray) and not isinstance(x2, DeviceArray):
        if isinstance(x1, (bool, int, float, complex)) and isinstance(x2, (bool, int, float, complex)):
            raise TypeError(f"{op}: x1 and x2 cannot both be scalars")
        x1 = _device(x1, op)
    if isinstance(x1, DeviceArray):
        x2 = _isin_operand(x2, x1, op)
    else:
        x1 = _isin_operand(x1, x2, op)
    return _core._isin(x1, x2, invert, op)


def _np_isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    if kind not in (None, "sort", "table"):
        raise ValueError(f"isin: kind must be None, 'sort' or 'table', got {kind!r}")
    return isin(element, test_elements, invert=invert)


_array._ARRAY_FUNCTIONS.update({np.unique: unique, np.isin: _np_isin})
if hasattr(np, "unique_all"):
    _array._ARRAY_FUNCTIONS.update({np.unique_all: unique_all, np.unique_counts: unique_counts,
                                    np.unique_inverse: unique_inverse, np.unique_values: unique_values})
