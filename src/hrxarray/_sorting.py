"""Sorting functions (the array API's chapter, with NumPy's spellings).

Every sort is stable and runs on the emulated GPU's compute lane as a radix
sort of order-preserving keys (ext/core/kernels/sort.cpp): NaNs sort after
+inf, -0.0 and 0.0 compare equal and keep their order, and a descending sort
keeps equal elements in input order (NaNs first), as the array API says.
Complex arrays sort in NumPy's order (by real part, then imaginary part,
with the NaN-holding elements last: R + nanj, then nan + Rj, then nan + nanj)
by a stable comparison sort of the same kind of keys.
"""

from __future__ import annotations

import numpy as np

from . import _array, _core
from ._array import DeviceArray, _device, _flag

__all__ = ["sort", "argsort"]

_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _prepare(op, x, axis, kind, order, descending, stable):
    if order is not None:
        raise TypeError(f"{op}: order= (fields of structured arrays) is not supported, got {order!r}")
    if kind not in _KINDS:
        raise ValueError(f"{op}: kind must be None, 'quicksort', 'mergesort', 'heapsort' or 'stable', got {kind!r}")
    descending = _flag(descending, op, "descending")
    if stable is not None:  # every sort is stable; NumPy's stable=None means "any"
        _flag(stable, op, "stable")
    x = _device(x, op)
    if axis is None:  # NumPy: sort the flattened array
        return x.reshape(-1), 0, descending
    return x, axis, descending


def sort(x, /, axis: int | None = -1, kind: str | None = None, order: None = None, *, descending: bool = False,
         stable: bool | None = True) -> DeviceArray:
    """A sorted copy of ``x`` along ``axis`` (array API ``sort``; NumPy's ``sort(a, axis, kind)``).

    ``axis=None`` sorts the flattened array (NumPy). Every ``kind`` gives the
    same stable sort; ``order`` is not supported. NaNs sort last (first when
    ``descending``). The result is a new DeviceArray of ``x``'s dtype,
    shape and placement, computed asynchronously on the compute lane.
    """
    x, axis, descending = _prepare("sort", x, axis, kind, order, descending, stable)
    return _core._sort(x, axis, descending, False, "sort")


def argsort(x, /, axis: int | None = -1, kind: str | None = None, order: None = None, *, descending: bool = False,
            stable: bool | None = True) -> DeviceArray:
    """The int64 indices that sort ``x`` along ``axis`` (array API ``argsort``; NumPy's spelling too).

    Stable in both directions: equal elements keep their input order, so a
    descending argsort equals the array API reference (not the reverse of the
    ascending one). ``axis=None`` argsorts the flattened array.
    """
    x, axis, descending = _prepare("argsort", x, axis, kind, order, descending, stable)
    return _core._sort(x, axis, descending, True, "argsort")


@_array._method("sort")
def _sort_method(self, axis: int = -1, kind: str | None = None, order: None = None) -> None:
    """Sort this array in place along axis (NumPy's a.sort(): stable, NaNs last), asynchronously."""
    # Sorted into a new array, copied back in order.
    self._copy_from(sort(self, axis, kind, order), op="sort")


@_array._method("argsort")
def _argsort_method(self, axis: int | None = -1, kind: str | None = None, order: None = None) -> DeviceArray:
    """hrxarray.argsort of this array."""
    return argsort(self, axis, kind, order)


_array._ARRAY_FUNCTIONS.update({np.sort: sort, np.argsort: argsort})
