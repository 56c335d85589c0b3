"""The array API's data type functions and inspection API: ``finfo``, ``iinfo``, ``isdtype``,
``result_type``, ``can_cast`` and ``__array_namespace_info__``, with hrxarray's dtypes
(NumPy's numeric ones and ml_dtypes' ``bfloat16``, an extension dtype counted as real
floating). Promotion and casting come from the one table the kernels use
(ext/core/kernels/dtype.cpp, Note [Promotion]): NumPy 2's rules with ml_dtypes' bfloat16.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from . import _array, _core
from ._dtypes import BlockDType

__all__ = ["__array_api_version__", "__array_namespace_info__", "finfo", "iinfo", "isdtype", "result_type",
           "can_cast", "finfo_object", "iinfo_object", "e", "pi", "inf", "nan", "newaxis"]

__array_api_version__ = "2025.12"
# The versions __array_namespace__(api_version=...) accepts: this one and the earlier ones
# whose rules it keeps.
_API_VERSIONS = _array.API_VERSIONS

e = float(np.e)
pi = float(np.pi)
inf = float("inf")
nan = float("nan")
newaxis = None

DType = np.dtype


def _bfloat16() -> np.dtype:
    import ml_dtypes

    return np.dtype(ml_dtypes.bfloat16)


def _as_dtype(x: Any, op: str) -> np.dtype:
    """The dtype of a dtype spelling or of an array; TypeError naming ``op`` otherwise."""
    if isinstance(x, BlockDType):
        raise TypeError(f"{op}: {x!r} is a block storage format, not an arithmetic dtype")
    dt = getattr(x, "dtype", None)
    if dt is not None and not isinstance(x, (type, np.dtype)):
        if isinstance(dt, BlockDType):
            raise TypeError(f"{op}: bfp16 arrays are storage, not an arithmetic dtype")
        return np.dtype(dt)
    if isinstance(x, str) and x == "bfloat16":
        return _bfloat16()
    try:
        return np.dtype(x)
    except TypeError:
        raise TypeError(f"{op}: {x!r} is neither a dtype nor an array") from None


@dataclass(frozen=True)
class finfo_object:
    """Machine limits of a real floating dtype (the array API's finfo object)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype


@dataclass(frozen=True)
class iinfo_object:
    """Machine limits of an integer dtype (the array API's iinfo object)."""

    bits: int
    max: int
    min: int
    dtype: np.dtype


def finfo(type: Any, /) -> finfo_object:
    """Machine limits of a floating dtype (or of an array's dtype): bits, eps, max, min, smallest_normal."""
    dt = _as_dtype(type, "finfo")
    if dt.kind == "c":
        # The limits of the real (and imaginary) components, as NumPy and the standard say.
        dt_real = np.dtype(f"f{dt.itemsize // 2}")
        fi = np.finfo(dt_real)
    elif dt.kind == "f" or dt == _bfloat16():
        import ml_dtypes

        fi = ml_dtypes.finfo(dt) if dt == _bfloat16() else np.finfo(dt)
    else:
        raise TypeError(f"finfo: {dt} is not a floating dtype")
    # For complex dtypes the standard's finfo describes (and names) the real component type.
    return finfo_object(int(fi.bits), float(fi.eps), float(fi.max), float(fi.min), float(fi.smallest_normal),
                        dt_real if dt.kind == "c" else dt)


def iinfo(type: Any, /) -> iinfo_object:
    """Machine limits of an integer dtype (or of an array's dtype): bits, max, min."""
    dt = _as_dtype(type, "iinfo")
    if dt.kind not in "iu":
        raise TypeError(f"iinfo: {dt} is not an integer dtype")
    ii = np.iinfo(dt)
    return iinfo_object(int(ii.bits), int(ii.max), int(ii.min), dt)


_KINDS = {
    "bool": lambda dt: dt.kind == "b",
    "signed integer": lambda dt: dt.kind == "i",
    "unsigned integer": lambda dt: dt.kind == "u",
    "integral": lambda dt: dt.kind in "iu",
    "real floating": lambda dt: dt.kind == "f" or dt == _bfloat16(),
    "complex floating": lambda dt: dt.kind == "c",
    "numeric": lambda dt: dt.kind in "iufc" or dt == _bfloat16(),
}


def isdtype(dtype: Any, kind: Union[str, Any, tuple]) -> bool:
    """Whether ``dtype`` is of ``kind``: a kind name ('bool', 'signed integer', 'unsigned integer',
    'integral', 'real floating', 'complex floating', 'numeric'), a dtype, or a tuple of those.
    bfloat16 is real floating."""
    if isinstance(dtype, type) and issubclass(dtype, np.generic) and dtype is not np.generic:
        # A scalar type (np.float32, hx.bfloat16) names its dtype, as NumPy's isdtype accepts.
        dtype = np.dtype(dtype)
    if not isinstance(dtype, np.dtype):
        raise TypeError(f"isdtype: {dtype!r} is not a dtype")
    if isinstance(kind, tuple):
        return builtins.any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        test = _KINDS.get(kind)
        if test is None:
            raise ValueError(f"isdtype: unknown kind {kind!r} (kinds: {', '.join(_KINDS)})")
        return bool(test(dtype))
    return dtype == _as_dtype(kind, "isdtype")


def _promote(a: np.dtype, b: np.dtype) -> np.dtype:
    if a == b:
        return a
    name = _core._elementwise.promote_types(a.name, b.name)
    return _bfloat16() if name == "bfloat16" else np.dtype(name)


def _scalar_kind(x: Any) -> str | None:
    if isinstance(x, bool):
        return "b"
    if isinstance(x, int):
        return "i"
    if isinstance(x, float):
        return "f"
    if isinstance(x, complex):
        return "c"
    return None


class _ScalarsOnly(TypeError, ValueError):
    """result_type of Python scalars alone: a ValueError (the argument values), and a TypeError for callers that
    probe one argument at a time and skip those that have no dtype, as xarray's promotion does."""


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """The dtype of an operation on these arrays, dtypes and Python scalars: NumPy 2's promotion
    with ml_dtypes' bfloat16 between the arrays and dtypes, applied left to right (the standard
    leaves promotion across kinds to the implementation; NumPy's n-ary result_type can differ
    there), then the scalars as weak (NEP 50): a scalar only decides the kind when no array or
    dtype of that kind or higher is present."""
    if not arrays_and_dtypes:
        raise ValueError("result_type: at least one array or dtype is needed")
    dtypes, scalars = [], []
    for x in arrays_and_dtypes:
        kind = _scalar_kind(x)
        if kind is None:
            dtypes.append(_as_dtype(x, "result_type"))
        else:
            scalars.append(kind)
    if not dtypes:
        raise _ScalarsOnly("result_type: at least one array or dtype is needed (Python scalars alone have no dtype)")
    # The core's rule, the one hrxarray's ufuncs apply (array/operands.h result_type: NEP 50).
    return _core._result_type(dtypes, "".join(scalars))


def can_cast(from_: Any, to: Any, /) -> bool:
    """Whether ``from_`` (a dtype or an array) casts to ``to`` under the "safe" rule (promotion gives ``to``)."""
    a, b = _as_dtype(from_, "can_cast"), _as_dtype(to, "can_cast")
    return bool(_core._elementwise.can_cast(a.name, b.name, "safe"))


def _known(name: str) -> bool:
    try:
        _core._elementwise.promote_types(name, name)
        return True
    except ValueError:
        return False


_STANDARD = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32",
             "float64", "complex64", "complex128"]


class Info:
    """The array API's inspection namespace (``hx.__array_namespace_info__()``)."""

    def capabilities(self) -> dict:
        """What this namespace supports beyond the baseline ('max dimensions' is the array layer's limit)."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self) -> Any:
        """The placement arrays get without ``device=``: ``Shared(npu())`` of the default runtime."""
        from ._array import _default_placement

        return _default_placement()

    def devices(self) -> tuple:
        """The placements of the default runtime arrays can live in, the default first (a tuple, as 2025.12 says)."""
        from ._core import GpuLocal, HostVisible, NpuLocal
        from ._runtime import npu

        default = self.default_device()
        return (default, HostVisible(), GpuLocal(), NpuLocal(npu()))

    def default_dtypes(self, *, device: Any = None) -> dict:
        """The default dtypes: float64, complex128, int64 (also for indexing); the same on every device."""
        return {"real floating": np.dtype(np.float64), "complex floating": np.dtype(np.complex128),
                "integral": np.dtype(np.int64), "indexing": np.dtype(np.int64)}

    def dtypes(self, *, device: Any = None, kind: Union[str, tuple, None] = None) -> dict:
        """The standard dtypes the array layer implements, by name, optionally of ``kind`` (as isdtype's).
        bfloat16 is an extension dtype and not listed."""
        out = {}
        for name in _STANDARD:
            if not _known(name):
                continue
            dt = np.dtype(name)
            if kind is None or isdtype(dt, kind):
                out[name] = dt
        return out


def __array_namespace_info__() -> Info:
    """The array API's inspection namespace: capabilities, devices, default and supported dtypes."""
    return Info()


def _dtype_of(x: Any, op: str) -> Any:
    # NumPy takes the other arguments as they are.
    return _as_dtype(x, op) if isinstance(x, _array.DeviceArray) else x


def _np_can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    # Dask asks this of every block whose dtype it enforces (np.multiply(x, y, dtype=...)).
    return bool(np.can_cast(_dtype_of(from_, "can_cast"), to, casting))


def _np_result_type(*arrays_and_dtypes: Any) -> np.dtype:
    return np.result_type(*(_dtype_of(x, "result_type") for x in arrays_and_dtypes))


_array._ARRAY_FUNCTIONS.update({np.can_cast: _np_can_cast, np.result_type: _np_result_type})
