"""Elementwise functions of the array API that are not one kernel (``clip``, ``round``), and NumPy's
elementwise comparisons ``isclose``, ``allclose``, ``array_equal``.

Each is composed of ufuncs (the kernel table's, Note [Elementwise numerics] in
ext/core/kernels/elementwise.h), so it runs asynchronously on the compute lane
like any ufunc; only ``allclose`` and ``array_equal``, which return a Python
bool, wait for their result.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from . import _array, _statistical
from ._array import DeviceArray, _device, _flag
from ._statistical import _out

__all__ = ["clip", "round", "isclose", "allclose", "array_equal"]

_U = _array._U
_NO_VALUE = object()


def _bound(value, x: DeviceArray, name: str, op: str):
    """A clip bound: a Python scalar (NEP 50: it takes x's dtype), or an array on x's device."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, int) and not isinstance(value, bool) and x.dtype.kind in "iu":
        # A bound beyond the dtype's range clips nothing (or everything) there: clamp it, as NumPy
        # and array_api_strict do, where NEP 50 would refuse the out-of-range scalar.
        info = np.iinfo(x.dtype)
        return builtins.min(builtins.max(value, int(info.min)), int(info.max))
    if value is None or isinstance(value, (bool, int, float, complex, DeviceArray)):
        return value
    try:
        return _device(value, op, like=x)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{op}: {name} must be None, a number or an array, got {value!r} ({e})") from None


def clip(x: DeviceArray, /, min: int | float | DeviceArray | None = None, max: int | float | DeviceArray | None = None,
         out: DeviceArray | None = None, *, a_min: Any = _NO_VALUE, a_max: Any = _NO_VALUE) -> DeviceArray:
    """Clamp each element of ``x`` to ``[min, max]`` (array API ``clip``; NumPy's ``clip(a, a_min, a_max)``).

    ``min``/``max`` are None (no bound), Python scalars (they take ``x``'s
    dtype, NEP 50) or arrays broadcast against ``x``; NaN in ``x`` or in a
    bound gives NaN. Computed as ``minimum(maximum(x, min), max)``, so where
    ``min > max`` the result is ``max`` (NumPy's choice). The result has
    ``x``'s dtype when the bounds are scalars or share it (NumPy's promotion
    otherwise); both None gives a copy of ``x``.
    """
    op = "clip"
    if a_min is not _NO_VALUE:
        if min is not None:
            raise TypeError(f"{op}: give min or a_min, not both")
        min = a_min
    if a_max is not _NO_VALUE:
        if max is not None:
            raise TypeError(f"{op}: give max or a_max, not both")
        max = a_max
    x = _device(x, op)
    if x.dtype.kind == "c":
        raise TypeError(f"{op}: x must have a real-valued dtype, got {x.dtype}")
    lo, hi = _bound(min, x, "min", op), _bound(max, x, "max", op)
    result = x
    if lo is not None:
        result = _U["maximum"](result, lo)
    if hi is not None:
        result = _U["minimum"](result, hi)
    if result is x:
        result = x.copy()
    return _out(result, out, op)


def round(x: DeviceArray, /, decimals: int = 0, out: DeviceArray | None = None) -> DeviceArray:
    """Round to ``decimals`` decimal places, half to even (array API ``round``; NumPy's ``round(a, decimals)``).

    The result has ``x``'s dtype. Floats and the two parts of complex use
    NumPy's formula: ``rint(x * 10**decimals) / 10**decimals`` (for negative
    ``decimals``: ``rint(x / 10**-decimals) * 10**-decimals``), in ``x``'s
    dtype, so ``round(2.675, 2)`` is 2.67 as in NumPy. Integers and bools are
    returned unchanged (a copy) for ``decimals >= 0``; negative ``decimals``
    round integers through float64, as NumPy does.
    """
    op = "round"
    if isinstance(decimals, bool):
        raise TypeError(f"{op}: decimals must be an integer, got {decimals!r}")
    try:
        decimals = operator.index(decimals)
    except TypeError:
        raise TypeError(f"{op}: decimals must be an integer, got {decimals!r}") from None
    x = _device(x, op)
    kind = x.dtype.kind
    if kind in "biu":
        if decimals >= 0:
            return _out(x.copy(), out, op)
        f = 10.0 ** -decimals
        y = _U["multiply"](_U["rint"](_U["divide"](x.astype(np.float64), f)), f)
        return _out(y.astype(x.dtype), out, op)
    if decimals == 0:
        return _out(_U["rint"](x), out, op)
    if kind == "c":
        # NumPy rounds the two parts as floats: complex multiply/divide by 10**d would mix them.
        part = np.dtype(np.float32 if x.dtype == np.complex64 else np.float64)
        parts = x._view(x._offset, x.shape + (2,), x.strides + (part.itemsize,), part)
        r = round(parts, decimals)
        return _out(r._view(r._offset, x.shape, r.strides[:-1], x.dtype), out, op)
    f = 10.0 ** builtins.abs(decimals)
    scale, unscale = (_U["multiply"], _U["divide"]) if decimals > 0 else (_U["divide"], _U["multiply"])
    return _out(unscale(_U["rint"](scale(x, f)), f), out, op)


def _tolerance(value, name: str, op: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{op}: {name} must be a real number, got {value!r}")
    return float(value)


def isclose(a: DeviceArray | ArrayLike, b: DeviceArray | ArrayLike, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> DeviceArray:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (NumPy's ``isclose``; asymmetric in ``a`` and ``b``).

    Infinities are close only to themselves (equal values always are);
    NaNs are close to each other only with ``equal_nan=True``. ``b`` is
    computed in its dtype promoted with float (``result_type(b, 1.0)``), as
    NumPy does. A bool array, asynchronously.
    """
    op = "isclose"
    rtol, atol = _tolerance(rtol, "rtol", op), _tolerance(atol, "atol", op)
    equal_nan = _flag(equal_nan, op, "equal_nan")
    like = a if isinstance(a, DeviceArray) else b if isinstance(b, DeviceArray) else None
    x = a if isinstance(a, (int, float, complex)) and not isinstance(a, bool) else _device(a, op, like=like)
    y = _device(b, op, like=like)
    if y.dtype.kind in "biu":
        y = y.astype(np.float64)
    absolute = _U["absolute"]
    within = _U["less_equal"](absolute(_U["subtract"](x, y)), _U["add"](atol, _U["multiply"](rtol, absolute(y))))
    result = _U["logical_or"](_U["logical_and"](within, _U["isfinite"](y)), _U["equal"](x, y))
    if equal_nan:
        both_nan = _U["logical_and"](_U["isnan"](x), _U["isnan"](y))
        result = _U["logical_or"](result, both_nan)
    return result


def allclose(a: DeviceArray | ArrayLike, b: DeviceArray | ArrayLike, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """Whether every element of ``isclose(a, b, rtol, atol, equal_nan)`` holds: a Python bool.

    It waits for the result (a bool is a host value); use ``hx.all(hx.isclose(...))`` to keep
    the answer on the device.
    """
    return builtins.bool(_statistical.all(isclose(a, b, rtol, atol, equal_nan)))


def array_equal(a1: DeviceArray | ArrayLike, a2: DeviceArray | ArrayLike, equal_nan: bool = False) -> bool:
    """Whether ``a1`` and ``a2`` have the same shape and elements (NumPy's ``array_equal``): a Python bool.

    Different shapes give False at once; otherwise it waits for the
    comparison. With ``equal_nan=True`` NaNs in the same places count as
    equal (for float and complex inputs).
    """
    op = "array_equal"
    equal_nan = _flag(equal_nan, op, "equal_nan")
    like = a1 if isinstance(a1, DeviceArray) else a2 if isinstance(a2, DeviceArray) else None
    x, y = _device(a1, op, like=like), _device(a2, op, like=like)
    if x.shape != y.shape:
        return False
    same = _U["equal"](x, y)
    if equal_nan and (x.dtype.kind in "fc" or y.dtype.kind in "fc"):
        same = _U["logical_or"](same, _U["logical_and"](_U["isnan"](x), _U["isnan"](y)))
    return builtins.bool(_statistical.all(same))


def _np_clip(a, a_min=_NO_VALUE, a_max=_NO_VALUE, out=None, *, min=_NO_VALUE, max=_NO_VALUE, **kwargs):
    if kwargs:
        raise TypeError(f"hrxarray's clip does not take {sorted(kwargs)}")
    lo = None if a_min is _NO_VALUE else a_min
    hi = None if a_max is _NO_VALUE else a_max
    if min is not _NO_VALUE:
        if lo is not None:
            raise TypeError("clip: give min or a_min, not both")
        lo = min
    if max is not _NO_VALUE:
        if hi is not None:
            raise TypeError("clip: give max or a_max, not both")
        hi = max
    return clip(a, lo, hi, out)


@_array._method("round")
def _round_method(self, decimals: int = 0, out: DeviceArray | None = None) -> DeviceArray:
    """hrxarray.round of this array (half to even; same dtype)."""
    return round(self, decimals, out)


@_array._method("clip")
def _clip_method(self, min: object = None, max: object = None, out: DeviceArray | None = None,
                 **kwargs: object) -> DeviceArray:
    """hrxarray.clip of this array."""
    return _np_clip(self, min, max, out, **kwargs)


@_array._method("conj")
def _conj_method(self) -> DeviceArray:
    """The complex conjugate (hrxarray.conj); real arrays are their own."""
    return _U["conjugate"](self)


@_array._method("conjugate")
def _conjugate_method(self) -> DeviceArray:
    """NumPy's other name for conj(): the complex conjugate."""
    return _conj_method(self)


@_array._method("tolist")
def _tolist_method(self) -> typing.Any:
    """The elements as nested Python lists of Python scalars (waits)."""
    return self._to_numpy().tolist()


_array._ARRAY_FUNCTIONS.update({np.clip: _np_clip, np.round: round, np.around: round, np.isclose: isclose,
                                np.allclose: allclose, np.array_equal: array_equal})
