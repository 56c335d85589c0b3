"""Set functions (the array API's ``unique_*`` and NumPy's ``unique``).

The distinct values come from one stable sort of the flattened input on the
compute lane; their number depends on the data, so these functions wait for
their input and their region before returning (as CuPy's do). The results
are views of arrays as long as the input (their first entries).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import _array, _core
from ._array import DeviceArray, _device, _flag

__all__ = ["unique_all", "unique_counts", "unique_inverse", "unique_values", "unique"]


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


def unique(ar, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
           axis: None = None, *, equal_nan: bool = True, sorted: bool = True):
    """NumPy's ``unique``: the sorted distinct values of the flattened ``ar``, plus what is asked for.

    Only ``axis=None`` (the flattened array) is supported. NaNs collapse
    into one value unless ``equal_nan=False``. The inverse has ``ar``'s shape
    (NumPy 2). Returns the values alone or a tuple, as NumPy does.
    """
    op = "unique"
    if axis is not None:
        raise TypeError(f"{op}: axis={axis!r} is not supported (hrxarray's unique works on the flattened array)")
    flags = [_flag(f, op, n) for f, n in ((return_index, "return_index"), (return_inverse, "return_inverse"),
                                          (return_counts, "return_counts"))]
    _flag(sorted, op, "sorted")
    v, idx, inv, c = _unique(ar, _flag(equal_nan, op, "equal_nan"), op)
    extra = [a for a, want in zip((idx, inv, c), flags) if want]
    return (v, *extra) if extra else v
_array._ARRAY_FUNCTIONS.update({np.unique: unique})
if hasattr(np, "unique_all"):
    _array._ARRAY_FUNCTIONS.update({np.unique_all: unique_all, np.unique_counts: unique_counts,
                                    np.unique_inverse: unique_inverse, np.unique_values: unique_values})
