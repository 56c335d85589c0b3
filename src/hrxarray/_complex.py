"""The array API's complex-number functions that are not ufuncs: ``real`` and ``imag``.

(``conj`` is the ``conjugate`` ufunc.) As NumPy's ``np.real``/``np.imag``,
both return views of a complex array's storage: complex64 holds float32
pairs and complex128 float64 pairs, real part first, so each part is a
strided view of the same bytes and costs no device work. Writes through the
view change the complex array, as in NumPy.
"""

from __future__ import annotations

import numpy as np

from ._array import _ARRAY_FUNCTIONS, DeviceArray, _device
from ._creation import zeros

__all__ = ["real", "imag"]


def _part(x: DeviceArray, which: int, op: str) -> DeviceArray:
    part = np.dtype(np.float32 if x.dtype == np.complex64 else np.float64)
    return x._view(x._offset + which * part.itemsize, x.shape, x.strides, part)


def real(x: DeviceArray) -> DeviceArray:
    """The real part of each element: for complex64/complex128 a float32/float64 view of ``x``'s storage;
    a real array is returned as it is (NumPy's ``np.real``)."""
    x = _device(x, "real")
    if x.dtype.kind != "c":
        return x
    return _part(x, 0, "real")


def imag(x: DeviceArray) -> DeviceArray:
    """The imaginary part of each element: for complex64/complex128 a float32/float64 view of ``x``'s
    storage; zeros of ``x``'s dtype and placement for a real array (NumPy's ``np.imag``)."""
    x = _device(x, "imag")
    if x.dtype.kind != "c":
        return zeros(x.shape, dtype=x.dtype, placement=x.placement)
    return _part(x, 1, "imag")


# np.real(x) and np.imag(x) of a DeviceArray (NumPy's __array_function__ protocol).
_ARRAY_FUNCTIONS[np.real] = real
_ARRAY_FUNCTIONS[np.imag] = imag
