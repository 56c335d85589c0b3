"""The array type's Python side: placements, host access, views, the ufunc reduce primitive and the NumPy protocols.

``DeviceArray`` is a C++ type (``hrxarray._core.DeviceArray``): its metadata,
ufuncs, operators, DLPack export and every per-operation path are compiled.
This module adds what runs once per call and costs nothing on the device
path: the placement resolver (``_home``), basic indexing (advanced indexing is
_indexing.py), reshapes, host access guards, ``repr``, ``ufunc.reduce``, and
the ``__array__``/``__array_ufunc__``/``__array_function__`` protocols, whose
tables the chapter modules fill (_creation, _manipulation, _statistical,
_searching, _sorting, _set, _indexing, _linear_algebra, _elementwise_functions:
one per chapter of the array API standard, each with its ``__all__``). The Python-level methods are defined once, here and in the chapter
modules, and installed on the C++ type at import (``_method``), so
``hx.DeviceArray`` is one class and a method call runs no C++ forwarder.

Note [Futures]: every operation returns at once; its result carries the
completion of the operation that writes it. ``ready()`` never waits;
``block_until_ready()``, host access (``map_read``/``map_write``,
``to_numpy``, ``__array__``, ``print``, ``bool()``, ``float()``) and DLPack
export wait, and report a failed producer as ``ExecutionError``. The
runtime orders device operations among themselves by their hazards.
"""

from __future__ import annotations

import builtins
import contextlib
import inspect
import math
import operator
import os
import sys
import types
from typing import Any, Callable, TypeVar

import numpy as np

from . import _core
from ._dtypes import bfp16, BlockDType
from ._hostview import HostView

DeviceArray = _core.DeviceArray
ufunc = _core.ufunc

_F = TypeVar("_F", bound=Callable[..., Any])


# Note [The DeviceArray method table]: the C++ DeviceArray (ext/bind/bind_array.cpp) declares its
# primitives; the NumPy-style methods and properties are Python functions of the chapter that owns
# their semantics, installed by ``_method``. Every one of them is declared here, by name, with the
# module that defines it, so the array's whole Python surface reads in one place; ``_method`` refuses
# a name that is not declared, or one defined by another module than the table says, and
# tests/test_methods.py checks that what is installed is exactly this table.
_METHOD_TABLE: dict[str, tuple[str, ...]] = {
    "_array": ("T", "mT", "__array__", "__array_function__", "__array_namespace__", "__array_ufunc__",
               "__bool__", "__complex__", "__float__", "__int__", "__index__", "__iter__", "__repr__", "__str__",
               "astype", "blocks", "copy", "item", "map_read", "map_write", "reshape", "to", "to_device",
               "transpose", "view", "__dlpack__", "readonly_export", "get"),
    "_indexing": ("__getitem__", "__setitem__"),
    "_statistical": ("all", "any", "cumprod", "cumsum", "max", "mean", "min", "prod", "std", "sum", "var"),
    "_searching": ("argmax", "argmin", "nonzero"),
    "_sorting": ("argsort", "sort"),
    "_elementwise_functions": ("clip", "conj", "conjugate", "round", "tolist"),
    "_linear_algebra": ("dot",),
    "_manipulation": ("flatten", "ravel", "repeat", "squeeze", "swapaxes"),
}
_METHOD_OWNER = {name: f"{__package__}.{module}" for module, names in _METHOD_TABLE.items() for name in names}


def _method(name: str, cls: type = DeviceArray, *, prop: bool = False, doc: str | None = None,
            annotations: dict[str, str] | None = None, share: bool = False) -> Callable[[_F], _F]:
    """Install the decorated function as ``cls.<name>`` (a property with ``prop``): the method's one
    definition.

    The function is renamed into ``hrxarray._core`` so that nanobind's stubgen
    emits it in the class's stub with its signature and docstring; its
    annotations are strings (``from __future__ import annotations``) written as
    they read inside that stub. ``doc`` and ``annotations`` supply them for a
    function whose own text is kept as it is. ``share`` installs a module
    function whose first parameter is the array (``hx.sum`` as ``x.sum``): a
    second function object over the same code, whose first parameter the
    signature calls ``self``; the module function is left as it is.
    """

    def install(fn: _F) -> _F:
        if cls is DeviceArray and _METHOD_OWNER.get(name) != fn.__module__:
            raise RuntimeError(f"DeviceArray.{name} from {fn.__module__}: the method table (Note [The DeviceArray "
                               f"method table]) declares {_METHOD_OWNER.get(name, 'no such method')}")
        if share:
            src = fn
            fn = types.FunctionType(src.__code__, src.__globals__, name, src.__defaults__, src.__closure__)
            fn.__kwdefaults__ = src.__kwdefaults__
        fn.__name__ = name
        fn.__qualname__ = f"{cls.__name__}.{name}"
        fn.__module__ = "hrxarray._core"
        # Dedented as the stub shows it (the compiler keeps a docstring's indentation before Python 3.13).
        fn.__doc__ = inspect.cleandoc(doc if doc is not None else fn.__doc__ or "")
        if annotations is not None:
            fn.__annotations__ = annotations
        if share:
            sig = inspect.signature(fn)
            first, *rest = sig.parameters.values()
            fn.__signature__ = sig.replace(parameters=[first.replace(name="self"), *rest])
        setattr(cls, name, property(fn) if prop else fn)
        return fn

    return install

__all__ = [
    "DeviceArray", "ufunc", "to_numpy", "astype",
]


def _is_bfp16(dtype) -> bool:
    return isinstance(dtype, BlockDType) or (isinstance(dtype, str) and dtype == "bfp16")


def _dtype(dtype, op="dtype"):
    """A dtype spelling as what DeviceArray.dtype reports (a numpy.dtype or hx.bfp16); TypeError naming ``op``."""
    # The core's dtype map (ext/bind/bind_array.cpp dtype_from_py): one owner of the spellings.
    return None if dtype is None else _core._dtype(dtype, op)


def _shape_tuple(shape, op="shape") -> tuple:
    if isinstance(shape, (int, np.integer)):
        return (operator.index(shape),)
    try:
        return tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"{op}: shape must be an integer or a sequence of integers, got {shape!r}") from None


def _flag(value, op, name):
    """A boolean argument (bool, numpy.bool_, or the integers 0 and 1, as NumPy takes them)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and value in (0, 1):
        return bool(value)
    raise TypeError(f"{op}: {name} must be a bool, got {value!r}")


def _axes(axis, ndim, op):
    """``axis`` (None, an integer or a sequence of them) as a tuple of axes in [0, ndim), or None.

    The one axis normaliser (Note [Axes] in ext/core/array/array.h): AxisError
    naming ``op`` for an axis outside [-ndim, ndim), ValueError for a repeat.
    """
    if axis is None:
        return None
    return _core._normalize_axes(axis, ndim, op)


# --- placements -------------------------------------------------------------------------


def _default_placement():
    """``Shared(npu())`` of the default runtime: the placement arrays get when none is named (one definition,
    in the bindings' placement parser)."""
    return _core._default_placement()


def _home(op, device, placement):
    """The placement a new array asks for (None: the default or the source's).

    ``device=`` is the array API's spelling of ``placement=``; giving both with
    different values is a TypeError naming them.
    """
    if device is None:
        return placement
    if not isinstance(device, _core.Placement):
        raise TypeError(f"{op}: device must be a placement (hx.Shared(npu), hx.NpuLocal(npu), hx.GpuLocal(), "
                        f"hx.HostVisible()), got {device!r}")
    if placement is not None and placement != device:
        raise TypeError(f"{op}: device={device!r} and placement={placement!r} differ; give one of them")
    return device


def to_numpy(x: DeviceArray, dtype: Any = None) -> np.ndarray:
    """A NumPy copy of ``x`` (waits for its producers; GpuLocal goes through the download lane).

    bfp16 arrays decode to float32.
    """
    if not isinstance(x, DeviceArray):
        return np.asarray(x, dtype=dtype)
    return x._to_numpy(dtype)


# --- host access ---------------------------------------------------------------------------


def _typed_view(x, raw, cls):
    view = np.ndarray.__new__(cls, x.shape, x.dtype, buffer=raw, offset=x._offset, strides=x.strides)
    view._hx_mapping = raw._hx_mapping
    return view


@contextlib.contextmanager
def _map(x, write):
    if write and x._readonly:
        # The producer's memory must not change (a READ_ONLY or legacy DLPack import).
        raise ValueError(f"map_write: the {x.dtype} array of shape {x.shape} is a read-only import (its producer "
                         "exported it READ_ONLY, or through a legacy DLPack capsule, which cannot say writable); "
                         "write a copy instead (x.copy(), or hx.from_dlpack(obj, copy=True))")
    x.block_until_ready()
    if x.dtype is bfp16:
        # Blocks cannot be viewed as floats: decode, and encode back on exit.
        values = x._to_numpy()
        if not write:
            values.setflags(write=False)
        yield values
        if write:
            x._copy_from(values, False, "map_write")
            x.block_until_ready()
        return
    guard = x.buffer.map_write() if write else x.buffer.map_read()
    with guard as raw:
        yield _typed_view(x, raw, HostView)


@_method("map_read")
def map_read(self) -> contextlib.AbstractContextManager[numpy.typing.NDArray[typing.Any]]:
    """Context manager: a read-only NumPy view of the elements under a host read guard.

    Waits for pending device writers (``ExecutionError`` if one failed); device
    work that writes the storage is refused with ``BusyError`` while the guard
    lives. The view raises ``ValueError`` after the block. bfp16 arrays yield a
    decoded float32 copy.
    """
    return _map(self, False)


@_method("map_write")
def map_write(self) -> contextlib.AbstractContextManager[numpy.typing.NDArray[typing.Any]]:
    """Context manager: a writable NumPy view of the elements under a host write guard.

    Waits for every pending device use of the storage; device work on it is
    refused (``BusyError``) while the guard lives. bfp16 arrays yield a decoded
    float32 copy that is encoded back (floor rounding) on exit.
    """
    return _map(self, True)


def _strict_host() -> bool:
    """Strict host mode (``HRXARRAY_STRICT_HOST=1``): ``__array__`` raises, so hidden host round trips show."""
    return os.environ.get("HRXARRAY_STRICT_HOST", "") not in ("", "0")


@_method("__array__")
def _array(self, dtype: object | None = None, copy: bool | None = None) -> numpy.typing.NDArray[typing.Any]:
    """NumPy conversion: a copy after waiting for producers (GpuLocal through the download lane); copy=False
    gives a zero-copy read-only view that holds a host lease while it lives (ValueError for GpuLocal and
    bfp16). In strict host mode (``HRXARRAY_STRICT_HOST=1``) it raises TypeError instead."""
    if _strict_host():
        raise TypeError(f"__array__: strict host mode (HRXARRAY_STRICT_HOST) refuses an implicit host copy of the "
                        f"{self.dtype} DeviceArray of shape {self.shape}; convert explicitly with hx.to_numpy(x)")
    if copy is False:
        if dtype is not None and np.dtype(dtype) != self.dtype:
            raise ValueError("__array__(copy=False): a dtype change needs a copy")
        raw, at = self._host_view()
        out = np.ndarray(self.shape, self.dtype, buffer=raw, offset=at, strides=self.strides)
        out.setflags(write=False)
        return out
    return self._to_numpy(dtype)


# --- views ---------------------------------------------------------------------------------


def _normalize_index(key, ndim):
    if not isinstance(key, tuple):
        key = (key,)
    n_ellipsis = builtins.sum(1 for k in key if k is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = builtins.sum(1 for k in key if k is not None and k is not Ellipsis)
    if consumed > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but {consumed} were indexed")
    out = []
    for k in key:
        if k is Ellipsis:
            out.extend([slice(None)] * (ndim - consumed))
        else:
            out.append(k)
    if n_ellipsis == 0:
        out.extend([slice(None)] * (ndim - consumed))
    return out


def _getitem(self, key):
    # Basic indexing only: _indexing.py routes keys with index arrays or booleans elsewhere.
    items = _normalize_index(key, self.ndim)
    shape, strides = [], []
    offset = self._offset
    dim = 0
    bfp = self.dtype is bfp16
    for k in items:
        if k is None:
            shape.append(1)
            strides.append(0)
            continue
        size, stride = self.shape[dim], self.strides[dim]
        last = dim == self.ndim - 1
        if isinstance(k, slice):
            start, stop, step = k.indices(size)
            n = builtins.max(0, (stop - start + (step - (1 if step > 0 else -1))) // step)
            if n == 0:
                start = 0  # an empty view addresses nothing: keep its offset inside the buffer
            if bfp and last:
                if step != 1 or start % 8 or (n % 8 and stop != size) or n % 8:
                    raise IndexError("a bfp16 array's last axis can only be sliced with step 1 at block "
                                     "boundaries (multiples of 8)")
                offset += (start // 8) * 9
                shape.append(n)
                strides.append(stride)
            else:
                offset += start * stride
                shape.append(n)
                # With one element or none the step never applies, and may
                # take the stride beyond int64 (x[::2**62]): then 0.
                strides.append(stride * step if n > 1 or -_INT64_MAX <= stride * step <= _INT64_MAX else 0)
            dim += 1
            continue
        try:
            i = operator.index(k)
        except TypeError:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`) and None are valid indices, "
                             f"got {k!r}") from None
        if bfp and last:
            raise IndexError("a bfp16 array cannot be indexed inside its blocks (the last axis); "
                             "convert with astype(hx.float32) first")
        if i < -size or i >= size:
            raise IndexError(f"index {i} is out of bounds for axis {dim} with size {size}")
        offset += (i % size) * stride
        dim += 1
    return self._view(offset, tuple(shape), tuple(strides))


def _key_str(key):
    def one(k):
        if k is Ellipsis:
            return "..."
        if isinstance(k, slice):
            text = ":".join("" if v is None else repr(v) for v in (k.start, k.stop, k.step))
            return text[:-1] if k.step is None else text
        return repr(k)

    return ", ".join(one(k) for k in key) if isinstance(key, tuple) else one(key)


def _setitem(self, key, value):
    target = self[key] if not (isinstance(key, tuple) and key == ()) else self
    # Scalars convert as NumPy assigns them, host data through NumPy with the
    # target's dtype, arrays broadcast by NumPy's rule; all before anything runs.
    target._copy_from(value, False, f"x[{_key_str(key)}] = value")


@_method("reshape")
def _reshape(self, *shape: int, order: str = "C", copy: bool | None = None) -> DeviceArray:
    """A view with a new shape (C order; one -1 allowed); copies when the array is not contiguous."""
    op = "reshape"
    if order != "C":
        raise ValueError(f"{op}: only order='C' is supported")
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        shape = shape[0]
    shape = list(_shape_tuple(shape, op))
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise ValueError(f"{op}: can only specify one unknown dimension")
    known = math.prod(s for s in shape if s != -1)
    if unknown:
        if known == 0 or self.size % known:
            raise ValueError(f"{op}: cannot reshape array of size {self.size} into shape {tuple(shape)}")
        shape[unknown[0]] = self.size // known
    if math.prod(shape) != self.size or builtins.any(s < 0 for s in shape):
        raise ValueError(f"{op}: cannot reshape array of size {self.size} into shape {tuple(shape)}")
    if builtins.any(s > _INT64_MAX for s in shape):
        raise ValueError(f"{op}: shape {tuple(shape)} exceeds the maximum allowed dimension (2**63 - 1)")
    shape = tuple(shape)
    if self.dtype is bfp16 and (not shape or shape[-1] % 8):
        raise ValueError(f"{op}: a bfp16 array's last axis must stay a multiple of 8")
    base = self
    if not self._c_contiguous:
        if copy is False:
            raise ValueError(f"{op}(copy=False): the array is not contiguous, a copy is needed")
        base = self.copy()
    elif copy:
        base = self.copy()
    return base._contiguous_view(shape)


_INT64_MAX = 2**63 - 1
# The array API versions the namespace implements (__array_namespace__(api_version=...)).
API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")


@_method("transpose")
def _transpose(self, *axes: int) -> DeviceArray:
    """A view with the axes permuted (reversed by default)."""
    if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], (int, np.integer))):
        axes = axes[0]
    return _permute(self, axes, "transpose")


def _permute(self, axes, op):
    if axes is None or axes == ():
        axes = tuple(reversed(range(self.ndim)))
    given = axes
    try:
        axes = _axes(axes, self.ndim, op)
    except ValueError as e:
        if isinstance(e, np.exceptions.AxisError):
            raise
        raise ValueError(f"{op}: repeated axis in axes {given!r}") from None
    if len(axes) != self.ndim:
        raise ValueError(f"{op}: axes {given!r} don't match array of dimension {self.ndim}")
    if self.dtype is bfp16 and self.ndim and axes[-1] != self.ndim - 1:
        raise ValueError(f"{op}: a bfp16 array's blocked last axis must stay last")
    return self._view(self._offset, tuple(self.shape[a] for a in axes), tuple(self.strides[a] for a in axes))


@_method("astype")
def _astype(self, dtype: object, copy: bool = True) -> DeviceArray:
    """A new array converted to dtype (NumPy's unsafe casts; bfp16 encodes with floor rounding)."""
    want = _dtype(dtype, "astype")
    if want == self.dtype and not copy:
        return self
    return self._convert(want, self.placement, "astype")


@_method("copy")
def _copy(self) -> DeviceArray:
    """A new array with the same contents, dtype and placement."""
    return self._convert(None, self.placement, "copy")


@_method("to")
def _to(self, placement: Placement, *, copy: bool | None = None) -> DeviceArray:
    """This array in another placement of its runtime (itself when already there); copies go through the
    lanes."""
    if placement == self.placement and not copy:
        return self
    # On this array's runtime (a placement naming another runtime's NPU is refused).
    return self._convert(None, placement, "to")


@_method("to_device")
def _to_device(self, device: Placement | str, /, *, stream: object = None) -> DeviceArray:
    """The array API's spelling of to(): this array on the device (a placement) given; stream must be None.

    ``"cpu"`` names host memory: the result is a DeviceArray in ``hx.HostVisible()`` (the array API keeps
    the namespace: to_device returns the library's array). ``x.get()``/``hx.asnumpy(x)`` give NumPy arrays.
    """
    if stream is not None:
        raise ValueError(f"to_device: stream must be None (the emulated devices have no streams), got {stream!r}")
    if isinstance(device, str):
        if device != "cpu":
            raise ValueError(f"to_device: the only device named by a string is 'cpu', got {device!r}; give a "
                             "placement (hx.Shared(npu), hx.NpuLocal(npu), hx.GpuLocal(), hx.HostVisible())")
        device = _core.HostVisible()
    if not isinstance(device, _core.Placement):
        raise TypeError(f"to_device: device must be a placement or 'cpu', got {device!r}")
    return _to(self, device)


@_method("get")
def _get(self, stream: object = None, order: str = "C", out: object = None) -> numpy.typing.NDArray[typing.Any]:
    """A NumPy copy of this array (CuPy's ``get``; waits for its producers); ``stream``/``order``/``out`` as CuPy's
    (no streams; only order 'C'; ``out`` a NumPy array of this shape to copy into)."""
    if stream is not None:
        raise ValueError(f"get: stream must be None (the emulated devices have no streams), got {stream!r}")
    if order not in ("C", "A", "K"):
        raise ValueError(f"get: only order='C' is supported, got {order!r}")
    if out is None:
        return self._to_numpy(None)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"get: out must be a NumPy array, got {type(out).__name__}")
    if out.shape != self.shape or out.dtype != self.dtype:
        raise ValueError(f"get: out has shape {out.shape} and dtype {out.dtype}, expected {self.shape} and "
                         f"{self.dtype}")
    np.copyto(out, self._to_numpy(None))
    return out


@_method("__array_namespace__")
def _array_namespace(self, /, *, api_version: str | None = None) -> types.ModuleType:
    """The hrxarray module, an array API namespace (api_version None or one of the versions it implements)."""
    if api_version is not None and api_version not in API_VERSIONS:
        raise ValueError(f"__array_namespace__: api_version {api_version!r} is not one of "
                         f"{', '.join(API_VERSIONS)}")
    # The package itself, which is loaded whenever this module is (a submodule is never imported
    # without its package): a lookup, not an import of the facade from below it.
    return sys.modules[__package__]


@_method("view")
def _view_dtype(self, dtype: object) -> DeviceArray:
    """The same bytes as another dtype of the same item size."""
    want = _dtype(dtype, "view")
    if isinstance(want, BlockDType) or self.dtype is bfp16:
        raise TypeError("view: bfp16 arrays cannot be reinterpreted; use astype or blocks()")
    if want.itemsize != self.dtype.itemsize:
        raise ValueError(f"view: {want} has a different item size than {self.dtype} "
                         "(only same-size reinterpretation is supported)")
    return self._view(self._offset, self.shape, self.strides, want)


@_method("blocks")
def _blocks(self) -> DeviceArray:
    """The raw bfp16ebs8 blocks of a bfp16 array: a uint8 view of shape (..., n/8, 9)."""
    if self.dtype is not bfp16:
        raise TypeError("blocks(): only bfp16 arrays have blocks")
    shape = self.shape[:-1] + (self.shape[-1] // 8, 9)
    strides = self.strides[:-1] + (9, 1)
    return self._view(self._offset, shape, strides, np.uint8)


# --- printing and conversions ---------------------------------------------------------------


@_method("__repr__")
def _repr(self) -> str:
    """Data and metadata; never waits (a pending array prints <pending>)."""
    place = repr(self.placement)
    dt = self.dtype.name if not isinstance(self.dtype, BlockDType) else "bfp16"
    if not self.ready():
        return f"DeviceArray(<pending>, shape={self.shape}, dtype={dt}, placement={place})"
    try:
        values = self._to_numpy()
    except Exception as exc:  # a failed producer: say so instead of raising from repr
        return f"DeviceArray(<failed: {type(exc).__name__}>, shape={self.shape}, dtype={dt}, placement={place})"
    body = np.array2string(values, separator=", ", prefix="DeviceArray(")
    return f"DeviceArray({body}, dtype={dt}, placement={place})"


@_method("__str__")
def _str(self) -> str:
    """The elements as NumPy prints them (waits)."""
    return str(self._to_numpy())


@_method("item")
def _item(self, *args: int) -> typing.Any:
    """The element as a Python scalar (waits)."""
    if len(args) == 1 and isinstance(args[0], tuple):
        args = args[0]
    if args:
        # Checked here, so that an index beyond int64 is an IndexError naming it.
        flat = len(args) == 1
        sizes = (self.size,) if flat else self.shape
        if len(args) != len(sizes):
            raise ValueError(f"item: incorrect number of indices for array ({len(args)} for {self.ndim} dimensions)")
        for i, n in zip(args, sizes):
            i = operator.index(i)
            if not -n <= i < n:
                raise IndexError(f"item: index {i} is out of bounds for size {n}")
    return self._to_numpy().item(*args)


def _scalar(kind):
    def convert(self):
        if self.size != 1:
            if kind is bool:
                raise ValueError(f"The truth value of an array with more than one element is ambiguous "
                                 f"(shape {self.shape}). Use a.any() or a.all()")
            raise TypeError(f"only arrays of size 1 can be converted to Python scalars ({kind.__name__})")
        return kind(self._to_numpy().reshape(()).item())

    return convert


for _kind, _doc in ((bool, "Truth of a one-element array (waits)."), (int, "A one-element array as int (waits)."),
                    (float, "A one-element array as float (waits)."),
                    (complex, "A one-element array as complex (waits).")):
    _method(f"__{_kind.__name__}__", doc=_doc, annotations={"return": _kind.__name__})(_scalar(_kind))
del _kind, _doc


@_method("__index__")
def _index(self) -> int:
    """A one-element integer array as an index (waits)."""
    if self.size != 1 or self.dtype.kind not in "iu":
        raise TypeError("only integer arrays of size 1 can be converted to an index")
    return int(self._to_numpy().reshape(()).item())


@_method("__iter__")
def _iter(self) -> collections.abc.Iterator[DeviceArray]:
    """Iterate over the first axis (views)."""
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d DeviceArray")
    for i in range(self.shape[0]):
        yield self[i]


# --- functions ---------------------------------------------------------------------------------

_U = _core._ufuncs


def _device(x, op, like=None):
    """x as a DeviceArray: itself, or host data uploaded (to ``like``'s placement); errors name ``op``."""
    if isinstance(x, DeviceArray):
        return x
    return _core._from_host(x, None, like.placement if isinstance(like, DeviceArray) else None, op)


def _operand(x, op):
    """x as a DeviceArray, or host data as a NumPy array (uploaded by the primitive once its checks pass)."""
    return x if isinstance(x, DeviceArray) else _core._host_array(x, op)


_SMALL_SIGNED = {"bool", "int8", "int16", "int32"}
_SMALL_UNSIGNED = {"uint8", "uint16", "uint32"}


def _sum_dtype(dt):
    if dt.name in _SMALL_SIGNED:
        return np.dtype(np.int64)
    if dt.name in _SMALL_UNSIGNED:
        return np.dtype(np.uint64)
    return dt


def _reduce_dtypes(name, x, dtype, op):
    if dtype is not None:
        d = _dtype(dtype, op)
        return d, d
    if name in ("add", "multiply"):
        d = _sum_dtype(x.dtype)
    elif name.startswith("logical_"):
        d = np.dtype(bool)
    else:
        d = x.dtype
    return d, d


def _ufunc_reduce(self, a, axis=None, dtype=None, out=None, keepdims=False, op=None):
    """Reduce ``a`` along ``axis`` (None: all axes; an int or a tuple) with this binary ufunc.

    Integer add/multiply reductions accumulate in int64 (uint64 for unsigned)
    as NumPy's do; float16 and bfloat16 accumulate in float32 and round once.
    Empty reductions give the identity, or ``ValueError`` for ufuncs without
    one (maximum, minimum). Errors name ``op`` (the public function).
    """
    op = op or f"{self.__name__}.reduce"
    x = _operand(a, op)
    keepdims = _flag(keepdims, op, "keepdims")
    if isinstance(out, tuple):
        (out,) = out
    acc, odt = _reduce_dtypes(self.__name__, x, dtype, op)
    return self._reduce(x, axis, acc, odt, out, keepdims, 0.0, op)


_REDUCE_ANNOTATIONS = {"axis": "object", "dtype": "object", "out": "object", "keepdims": "bool",
                       "return": "DeviceArray"}


def _reduction_methods(*fns: Callable[..., Any]) -> None:
    """NumPy's reduction methods (``x.sum()``, ``x.argmax()`` ...): each module function, on this array."""
    for fn in fns:
        params = inspect.signature(fn).parameters
        _method(fn.__name__, doc=f"hrxarray.{fn.__name__} of this array.", share=True,
                annotations={k: v for k, v in _REDUCE_ANNOTATIONS.items() if k in params or k == "return"})(fn)


def astype(x, dtype, /, *, copy=True, device: Any = None) -> DeviceArray:
    """``x`` converted to ``dtype`` (NumPy's unsafe casts; bfp16 encodes with floor rounding), on ``device``
    (a placement; by default ``x``'s) — one copy when both change."""
    x = _device(x, "astype")
    device = _home("astype", device, None)
    if device is None or device == x.placement:
        return x.astype(dtype, copy=copy)
    return x._convert(_dtype(dtype, "astype"), device, "astype")


# --- NumPy protocols -----------------------------------------------------------------------------

_NUMPY_UFUNC_NAMES = {"true_divide": "divide"}


# NumPy's generalized ufuncs that other chapters implement (vecdot: _linear_algebra.py), by name.
_NUMPY_GUFUNCS: dict = {}


# Whether values hold a foreign array type (a Dask array): NumPy's protocols then return NotImplemented,
# so that type handles the operation instead of hrxarray computing all of it on the host. The rule is the
# core's, shared with hrxarray's own ufuncs (Note [Foreign operands of hrxarray's ufuncs]).
_foreign = _core._has_foreign_operand


def _array_ufunc(self, uf, method, *inputs, **kwargs):
    if _foreign(inputs) or _foreign(kwargs.get("out", ()) or ()):
        return NotImplemented
    name = _NUMPY_UFUNC_NAMES.get(uf.__name__, uf.__name__)
    if method == "__call__" and name in _NUMPY_GUFUNCS:
        return _NUMPY_GUFUNCS[name](*inputs, **kwargs)
    if name == "matmul" and method == "__call__":
        out = kwargs.pop("out", None)
        if isinstance(out, tuple):
            (out,) = out
        if kwargs:
            raise TypeError(f"hrxarray's matmul does not take {sorted(kwargs)}")
        a, b = inputs
        return _core._matmul(a, b, out, None, "floor")
    target = _U.get(name) if name else None
    if target is None:
        raise TypeError(f"hrxarray does not implement numpy.{uf.__name__} for DeviceArray (no silent host "
                        "fallback); convert explicitly with hx.to_numpy(x)")
    if method == "__call__":
        return target(*inputs, **kwargs)
    if method == "reduce":
        (a,) = inputs
        kwargs.setdefault("axis", 0)  # numpy.ufunc.reduce's own default
        for k in ("initial", "where"):
            if k in kwargs:
                raise TypeError(f"hrxarray's {name}.reduce does not take {k}=")
        return _ufunc_reduce(target, a, **kwargs)
    if method == "outer":
        # Every pair: a's axes, then b's (NumPy's ufunc.outer), as one broadcast call.
        a, b = (_device(v, f"{name}.outer") for v in inputs)
        return target(a.reshape(a.shape + (1,) * b.ndim), b, **kwargs)
    if method == "accumulate" and name in ("add", "multiply"):
        (a,) = inputs
        return _ufunc_accumulate(name, a, **kwargs)
    if method == "at" and name in _AT_UFUNCS:
        return _ufunc_at(name, *inputs, **kwargs)
    raise TypeError(f"hrxarray does not implement numpy.{uf.__name__}.{method} for DeviceArray (its methods here: "
                    "reduce, outer, accumulate for add and multiply, at for add, subtract, multiply, minimum and "
                    "maximum)")


_AT_UFUNCS = ("add", "subtract", "multiply", "minimum", "maximum")


def _ufunc_at(name, a, indices, b=None):
    """NumPy's ufunc.at: ``a[indices] = name(a[indices], b)`` in place, unbuffered (a repeated index sees
    every earlier update, in index order), on the device (kernels/stats.h's scatter)."""
    op = f"{name}.at"
    if name not in _AT_UFUNCS:
        raise TypeError(f"{op}: hrxarray's ufunc.at runs {', '.join(_AT_UFUNCS)}")
    if not isinstance(a, DeviceArray):
        raise TypeError(f"{op}: the first operand must be a DeviceArray (it is updated in place), got "
                        f"{type(a).__name__}")
    if b is None:
        raise TypeError(f"{op}: second operand needed for ufunc")
    # NumPy's ufunc.at converts b with asarray (a Python scalar is not weak here: 1.5 is float64) and runs
    # the loop of result_type(a, b), casting each result back to a's dtype unsafely (Note [ufunc.at in a
    # wider type] in kernels/stats.cpp): the values go over in that type.
    vals = _device(b, op, a)
    try:
        ct = np.result_type(a.dtype, vals.dtype)
    except TypeError as e:
        raise TypeError(f"{op}: no {name} loop for {a.dtype} and {vals.dtype} ({e})") from None
    if ct != vals.dtype and ct.kind in "biuf" and ct.itemsize <= 8:
        vals = vals.astype(ct)
    pos = None
    if a.ndim == 1 and not isinstance(indices, (tuple, slice)) and indices is not Ellipsis:
        idx = _device(indices, op, a)
        if idx.dtype.kind in "iu":
            pos = idx  # positions along the one axis (negative ones count from the end)
    if pos is None:
        # Any NumPy index: the C-order positions it selects, read off an index of a grid of positions.
        grid = _core._from_host(np.arange(a.size, dtype=np.int64).reshape(a.shape), None, a.placement, op)
        pos = grid[indices]
    _core._ufunc_at(a, pos, vals, name, op)


def _ufunc_accumulate(name, a, axis=0, dtype=None, out=None):
    """NumPy's add/multiply.accumulate: the scan in NumPy's reduction dtype (small integers widen to int64/uint64)."""
    op = f"{name}.accumulate"
    x = _device(a, op)
    dt = _dtype(dtype, op) if dtype is not None else _sum_dtype(x.dtype)
    if dt.kind == "b":
        raise TypeError(f"{op}: bool accumulation is not supported; give dtype=")
    if x.ndim == 0:
        raise TypeError(f"{op}: cannot accumulate on a scalar")
    (axis,) = _axes(axis, x.ndim, op)
    r = _core._cumulative(x, axis, name == "multiply", dt, False, op)
    if isinstance(out, tuple):
        (out,) = out
    if out is None:
        return r
    out._copy_from(r, False, op)
    return out


def _np_copy(a, order="K", subok=False):
    return _device(a, "copy").copy()


def _np_unravel_index(indices, shape, order="C"):
    # Dask's argmax/argmin turn flat block indices into coordinates with this.
    if order != "C":
        raise ValueError("unravel_index: only order='C' is supported")
    rest = _device(indices, "unravel_index")
    out = []
    for n in reversed(_shape_tuple(shape, "unravel_index")):
        out.append(_U["remainder"](rest, n))
        rest = _U["floor_divide"](rest, n)
    return tuple(reversed(out))


def _np_ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    if order != "C" or mode != "raise":
        raise ValueError("ravel_multi_index: only mode='raise' and order='C' are supported")
    dims = _shape_tuple(dims, "ravel_multi_index")
    if len(multi_index) != len(dims):
        raise ValueError(f"ravel_multi_index: {len(multi_index)} indices for {len(dims)} dimensions")
    flat = None
    for i, n in zip(multi_index, dims):
        i = _device(i, "ravel_multi_index")
        flat = i if flat is None else flat * n + i
    return flat


# The chapters (_creation, _manipulation, _statistical, _searching, ...) register their functions here.
_ARRAY_FUNCTIONS = {
    np.copy: _np_copy, np.unravel_index: _np_unravel_index, np.ravel_multi_index: _np_ravel_multi_index,
    np.shape: lambda a: a.shape,
    np.ndim: lambda a: a.ndim, np.size: lambda a, axis=None: a.size if axis is None else a.shape[axis],
}
if hasattr(np, "astype"):
    _ARRAY_FUNCTIONS[np.astype] = astype


# NEP 35 (like=DeviceArray): the creation functions register theirs (_creation.py).
_LIKE_FUNCTIONS: dict[Any, Callable[..., Any]] = {}


def _public_name(func):
    """A NumPy function's full public name (NumPy sets ``__module__`` to it): numpy.linalg.norm, not numpy.norm."""
    module = getattr(func, "__module__", None) or "numpy"
    return f"{module}.{getattr(func, '__qualname__', None) or getattr(func, '__name__', repr(func))}"


def _array_function(self, func, types, args, kwargs):
    if builtins.any(not issubclass(t, (DeviceArray, np.ndarray)) for t in types):
        return NotImplemented
    like = _LIKE_FUNCTIONS.get(func)
    if like is not None:
        # NEP 35: numpy.asarray(..., like=x) arrives here with x as self; the new
        # array goes where x lives (Dask builds its helper arrays this way).
        return like(self, *args, **kwargs)
    impl = _ARRAY_FUNCTIONS.get(func)
    if impl is None:
        raise TypeError(f"hrxarray does not implement {_public_name(func)} for DeviceArray (no silent host "
                        "fallback); convert explicitly with hx.to_numpy(x)")
    return impl(*args, **kwargs)


@_method("reduce", ufunc)
def _ufunc_reduce_method(self, a: object, axis: object = None, dtype: object = None, out: object = None,
                         keepdims: bool = False) -> DeviceArray:
    """Reduce a along axis (None: all axes; an int or a tuple) with this binary ufunc. Integer add/multiply
    reductions accumulate in int64 (uint64 for unsigned) as NumPy's do; float16 and bfloat16 accumulate in
    float32 and round once. Empty reductions give the identity, or ValueError for ufuncs without one."""
    return _ufunc_reduce(self, a, axis, dtype, out, keepdims)


@_method("at", ufunc)
def _ufunc_at_method(self, a: DeviceArray, indices: object, b: object = None) -> None:
    """NumPy's ufunc.at for add, subtract, multiply, minimum and maximum: ``a[indices] = self(a[indices], b)``
    in place and unbuffered, so a repeated index accumulates every update in index order (``hx.add.at(x, i,
    1)`` counts). bool, integer, float16, float32 and float64 arrays; as NumPy's, each update runs in the
    result type of a's and b's dtypes (a Python scalar b counts as float64/int64/bool) and is cast back to
    a's dtype unsafely, so float64 values added to a float16 array round once per update."""
    _ufunc_at(self.__name__, a, indices, b)


# The NumPy protocols keep their own text (their bodies are NumPy dispatch); the method's signature and
# documentation are given here.
_method("__array_ufunc__", doc="NumPy ufuncs on DeviceArrays run as hrxarray ufuncs (__call__, reduce, outer; "
        "accumulate for add and multiply); others raise TypeError.",
        annotations={"uf": "object", "method": "str", "inputs": "object", "kwargs": "object",
                     "return": "typing.Any"})(_array_ufunc)
_method("__array_function__", doc="NumPy functions hrxarray implements return DeviceArrays; the others raise "
        "TypeError naming them.",
        annotations={"func": "object", "types": "object", "args": "object", "kwargs": "object",
                     "return": "typing.Any"})(_array_function)


# Note [Read-only DLPack exports] (ext/core/array/dlpack.h): consumers that never write through an import
# (their arrays are immutable) get a read lease even on a legacy capsule, which cannot say read-only.
_NEVER_WRITE = frozenset({"jax", "jaxlib"})


def _never_writes(frame) -> bool:
    """Whether the code in ``frame`` (the caller of ``__dlpack__``) belongs to a consumer that never writes."""
    name = frame.f_globals.get("__name__") if frame is not None else None
    return isinstance(name, str) and name.partition(".")[0] in _NEVER_WRITE


@_method("__dlpack__", annotations={"stream": "int | None", "max_version": "tuple[int, int] | None",
                                    "dl_device": "tuple[int, int] | None", "copy": "bool | None",
                                    "return": "typing_extensions.CapsuleType"})
def _dlpack(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
    """Export as a DLPack capsule (versioned when max_version >= (1, 0), legacy otherwise).

    Host-mapped placements export zero-copy as (kDLCPU, 0), GpuLocal as (kDLROCM, gpu); dl_device=(1, 0)
    copies GpuLocal memory to the host (IS_COPIED) unless copy=False (BufferError); copy=True always
    copies. A zero-copy export waits for pending writers and holds a host lease until the consumer's
    deleter runs: meanwhile device work that writes the storage raises BusyError naming the export and
    how to end it, and so does device work that reads it when the export is writable (the consumer could
    write meanwhile). Exports of read-only arrays, exports through ``readonly_export()`` and exports to
    JAX (whose arrays are immutable) are read-only: device reads proceed. stream: None or -1 for kDLCPU
    exports; ROCm conventions for GpuLocal. bfp16, and read-only legacy exports other than JAX's ->
    BufferError.
    """
    return self._dlpack_export(stream, max_version, dl_device, copy, False, _never_writes(sys._getframe(1)))


class ReadOnlyExport:
    """A DLPack producer over a DeviceArray's memory whose zero-copy exports are read-only
    (``DeviceArray.readonly_export()``): versioned capsules carry READ_ONLY and hold a read lease."""

    __slots__ = ("array",)

    def __init__(self, array: DeviceArray):
        self.array = array

    def __dlpack__(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
        """``DeviceArray.__dlpack__``, read-only; a legacy capsule (no ``max_version``) is refused with
        BufferError (it cannot say read-only), except for consumers that never write (JAX)."""
        return self.array._dlpack_export(stream, max_version, dl_device, copy, True, _never_writes(sys._getframe(1)))

    def __dlpack_device__(self) -> tuple[int, int]:
        """The array's ``__dlpack_device__()``."""
        return self.array.__dlpack_device__()


@_method("readonly_export", annotations={"return": "typing.Any"})
def _readonly_export(self):
    """A DLPack producer over this array's memory whose zero-copy exports are read-only.

    Pass it to the consumer (``torch.from_dlpack(x.readonly_export())``, ``np.from_dlpack(...)``): the
    capsule carries READ_ONLY, so a consumer that honours the flag cannot write through it, and the
    export holds a read lease, so device work may keep reading this array while the consumer lives;
    only writes raise BusyError (a writable export blocks reads too). A consumer that asks for a legacy
    capsule, which cannot say read-only, gets BufferError.
    """
    return ReadOnlyExport(self)

@_method("T", prop=True)
def _prop_T(self) -> DeviceArray:
    """The transpose (axes reversed)."""
    return self.transpose()


@_method("mT", prop=True)
def _prop_mT(self) -> DeviceArray:
    """The matrix transpose of the last two axes."""
    if self.ndim < 2:
        raise ValueError("mT needs at least 2 dimensions")
    return self.transpose(tuple(range(self.ndim - 2)) + (self.ndim - 1, self.ndim - 2))


