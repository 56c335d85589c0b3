"""NumPy's ``lib.stride_tricks`` on DeviceArrays: views that reuse an array's storage through strides.

``sliding_window_view`` is what xarray's ``rolling`` and SciPy build windows
with; ``as_strided`` is its general form. Both make a view (nothing runs, no
copy) whose byte extent the core checks against the array's allocation:
a view that reaches outside it raises ``ValueError`` (NumPy's ``as_strided``
would read stray memory), so neither can touch bytes the array does not own.

Note [Windows are writable views]: NumPy marks these views read-only by
default because the windows overlap. hrxarray has no read-only views of
device-written storage, so the result can be written; a write to one element
shows in every window that holds it, and writing such a view with ``out=``
races among the overlapping elements. ``writeable=`` is accepted for NumPy's
signature and changes nothing.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from .. import _array, _manipulation
from .._array import DeviceArray, _device

__all__ = ["sliding_window_view", "as_strided", "broadcast_to", "broadcast_arrays", "broadcast_shapes"]

broadcast_to = _manipulation.broadcast_to
broadcast_arrays = _manipulation.broadcast_arrays
broadcast_shapes = _manipulation.broadcast_shapes


def _ints(values, op, name) -> tuple:
    try:
        seq = tuple(values) if np.iterable(values) else (values,)
        return tuple(operator.index(v) for v in seq)
    except TypeError:
        raise TypeError(f"{op}: {name} must be an integer or a sequence of integers, got {values!r}") from None


def _strided_operand(x, op):
    x = _device(x, op)
    if x.dtype is _array.bfp16:
        raise TypeError(f"{op}: bfp16 arrays are stored in blocks and have no element strides; convert with "
                        "astype(hx.float32) first")
    return x


def sliding_window_view(x, window_shape: int | Sequence[int], axis: int | Sequence[int] | None = None, *,
                        subok: bool = False, writeable: bool = False) -> DeviceArray:
    """A view of every window of ``window_shape`` over ``axis`` (NumPy's ``sliding_window_view``).

    The result has ``x``'s axes, each windowed one shortened by ``window - 1``,
    followed by the window axes (an axis may be windowed more than once, as in
    NumPy). A view of ``x``'s storage: no copy and nothing runs. Unlike NumPy's
    it can be written (Note [Windows are writable views]).
    """
    op = "sliding_window_view"
    x = _strided_operand(x, op)
    window = _ints(window_shape, op, "window_shape")
    if any(w < 0 for w in window):
        raise ValueError(f"{op}: window_shape cannot contain negative values, got {window}")
    if axis is None:
        axes = tuple(range(x.ndim))
        if len(window) != len(axes):
            raise ValueError(f"{op}: since axis is None, window_shape must give every dimension of x; got "
                             f"{len(window)} window_shape elements and x.ndim is {x.ndim}")
    else:
        axes = _ints(axis, op, "axis")
        for a in axes:
            if not -x.ndim <= a < x.ndim:
                raise np.exceptions.AxisError(f"{op}: axis {a} is out of bounds for an array of dimension {x.ndim}")
        axes = tuple(a % x.ndim for a in axes)
        if len(window) != len(axes):
            raise ValueError(f"{op}: window_shape must have as many elements as axis; got {len(window)} "
                             f"window_shape elements and {len(axes)} axes")
    shape = list(x.shape)
    for a, w in zip(axes, window):
        if shape[a] < w:
            raise ValueError(f"{op}: window shape {window} cannot be larger than the input array shape {x.shape}")
        shape[a] -= w - 1
    return x._view(x._offset, tuple(shape) + window, tuple(x.strides) + tuple(x.strides[a] for a in axes))


def as_strided(x, shape: Sequence[int] | None = None, strides: Sequence[int] | None = None, subok: bool = False,
               writeable: bool = True) -> DeviceArray:
    """A view of ``x``'s storage with ``shape`` and byte ``strides``, from ``x``'s first element (NumPy's ``as_strided``).

    Safe where NumPy's is not: a view reaching outside ``x``'s allocation
    raises ``ValueError`` before anything is made. Strides must be multiples
    of the item size. Overlapping elements are written as one (Note [Windows
    are writable views]).
    """
    op = "as_strided"
    x = _strided_operand(x, op)
    shape = x.shape if shape is None else _ints(shape, op, "shape")
    strides = x.strides if strides is None else _ints(strides, op, "strides")
    if len(shape) != len(strides):
        raise ValueError(f"{op}: shape {shape} and strides {strides} differ in length")
    if any(n < 0 for n in shape):
        raise ValueError(f"{op}: negative dimensions are not allowed, got shape {shape}")
    return x._view(x._offset, tuple(shape), tuple(strides))


_array._ARRAY_FUNCTIONS[np.lib.stride_tricks.sliding_window_view] = sliding_window_view
