"""The array-library face of hrxarray: creation, host access, views and the NumPy protocols.

``DeviceArray`` is a C++ type (``hrxarray._core.DeviceArray``): its metadata,
ufuncs, operators, DLPack export and every per-operation path are compiled.
This module adds what runs once per call and costs nothing on the device
path: creation functions, basic indexing, reshapes, host access guards,
``repr``, and the ``__array__``/``__array_ufunc__``/``__array_function__``
protocols. The methods are installed on the C++ type at import (see the end of
this file), so ``hx.DeviceArray`` is one class.

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
import math
import operator
from typing import Any

import numpy as np

from . import _core
from ._dtypes import bfp16, BlockDType
from ._hostview import HostView

DeviceArray = _core.DeviceArray
ufunc = _core.ufunc

__all__ = [
    "DeviceArray", "ufunc", "asarray", "empty", "zeros", "ones", "full", "arange", "linspace",
    "empty_like", "zeros_like", "ones_like", "full_like", "to_numpy", "from_dlpack", "where",
    "sum", "prod", "max", "min", "mean", "argmax", "argmin", "matmul", "concatenate", "stack",
    "reshape", "transpose", "permute_dims", "squeeze", "expand_dims", "broadcast_to", "astype",
]


def _is_bfp16(dtype) -> bool:
    return isinstance(dtype, BlockDType) or (isinstance(dtype, str) and dtype == "bfp16")


def _dtype(dtype):
    """A dtype spelling as what DeviceArray.dtype reports (a numpy.dtype or hx.bfp16)."""
    if dtype is None or isinstance(dtype, BlockDType):
        return dtype
    if isinstance(dtype, str) and dtype in ("bfp16", "bfloat16"):
        if dtype == "bfp16":
            return bfp16
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(dtype)


def _shape_tuple(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        return (operator.index(shape),)
    try:
        return tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"shape must be an integer or a sequence of integers, got {shape!r}") from None


# --- creation ---------------------------------------------------------------------------


def asarray(obj: Any, dtype: Any = None, *, placement: Any = None, copy: bool | None = None) -> DeviceArray:
    """Convert ``obj`` to a DeviceArray.

    Args:
        obj: a DeviceArray, a NumPy array or scalar, a Python scalar or nested
            sequence, or any DLPack producer (torch, JAX, array_api_strict ...).
        dtype: the element type (NumPy spellings, ``hx.bfloat16``, ``hx.bfp16``);
            by default the source's (NumPy's inference for Python data).
        placement: where the array lives; by default ``Shared(hx.npu())`` for
            host data, the source's placement for a DeviceArray.
        copy: ``True`` always copies; ``False`` never does (``ValueError`` when a
            copy would be needed: host data into device memory, a dtype or
            placement change); ``None`` copies only when needed.

    Host data is copied synchronously into the new array (host-mapped
    placements) or staged and uploaded on the upload lane (``GpuLocal``). A
    DLPack producer is imported zero-copy first (``from_dlpack``), then copied
    if the placement or dtype differs.
    """
    want = _dtype(dtype)
    if isinstance(obj, DeviceArray):
        same_dtype = want is None or want == obj.dtype
        same_place = placement is None or placement == obj.placement
        if same_dtype and same_place and not copy:
            return obj
        if copy is False:
            raise ValueError("asarray(copy=False): changing the dtype or placement of a DeviceArray needs a copy")
        out = empty(obj.shape, dtype=obj.dtype if want is None else want,
                    placement=obj.placement if placement is None else placement)
        out._copy_from(obj)
        return out
    if not isinstance(obj, (np.ndarray, np.generic, list, tuple, int, float, bool)) and hasattr(obj, "__dlpack__"):
        # Zero-copy import first; any copy (placement, dtype) happens before returning.
        if copy is False:
            x = from_dlpack(obj, placement=placement, copy=False)
            if want is not None and want != x.dtype:
                raise ValueError("asarray(copy=False): a dtype change needs a copy")
            return x
        return _core._from_dlpack(obj, _default_placement() if placement is None else placement,
                                  copy, None if want is None else ("bfp16" if _is_bfp16(want) else want))
    if copy is False:
        raise ValueError("asarray(copy=False): host data must be copied into device memory; "
                         "use hx.from_dlpack(obj) for a zero-copy import of a host array")
    if isinstance(obj, complex) or (isinstance(obj, np.ndarray) and obj.dtype.kind == "c"):
        raise TypeError("asarray: hrxarray has no complex dtypes")
    if want is not None and _is_bfp16(want):
        return _core._from_host(obj, "bfp16", placement)
    return _core._from_host(obj, want, placement)


def _default_placement():
    from . import Shared, npu

    return Shared(npu())


def empty(shape, dtype: Any = None, *, placement: Any = None) -> DeviceArray:
    """A new array of ``shape`` (float64 by default). Its memory is zero-filled (allocations always are)."""
    return _core._empty(_shape_tuple(shape), np.float64 if dtype is None else dtype, placement)


def zeros(shape, dtype: Any = None, *, placement: Any = None) -> DeviceArray:
    """A new array of zeros (float64 by default); ready at once, nothing runs on a lane."""
    return empty(shape, dtype, placement=placement)


def full(shape, fill_value, dtype: Any = None, *, placement: Any = None) -> DeviceArray:
    """A new array filled with ``fill_value`` (an asynchronous fill on the compute lane).

    ``dtype`` defaults to NumPy's choice for the value: bool, int64 or float64.
    """
    if dtype is None:
        if isinstance(fill_value, DeviceArray):
            dtype = fill_value.dtype
        else:
            dtype = np.asarray(fill_value).dtype
    out = empty(shape, dtype, placement=placement)
    if out.size:
        out._copy_from(fill_value)
    return out


def ones(shape, dtype: Any = None, *, placement: Any = None) -> DeviceArray:
    """A new array of ones (float64 by default)."""
    return full(shape, 1, np.float64 if dtype is None else dtype, placement=placement)


def arange(start, stop=None, step=1, dtype: Any = None, *, placement: Any = None) -> DeviceArray:
    """Evenly spaced values in [start, stop), exactly as ``numpy.arange`` computes them."""
    host = np.arange(start, stop, step) if stop is not None else np.arange(start, step=step)
    return asarray(host, dtype=dtype if dtype is None or _is_bfp16(dtype) else dtype, placement=placement)


def linspace(start, stop, num: int = 50, endpoint: bool = True, dtype: Any = None, *,
             placement: Any = None) -> DeviceArray:
    """``num`` evenly spaced values over [start, stop], exactly as ``numpy.linspace`` computes them."""
    host = np.linspace(start, stop, num=num, endpoint=endpoint)
    return asarray(host, dtype=dtype, placement=placement)


def _like(x, dtype, placement, shape):
    x = x if isinstance(x, DeviceArray) else asarray(x)
    return (x.shape if shape is None else _shape_tuple(shape), x.dtype if dtype is None else dtype,
            x.placement if placement is None else placement)


def empty_like(x, dtype: Any = None, *, placement: Any = None, shape=None) -> DeviceArray:
    """A new (zero-filled) array with the shape, dtype and placement of ``x`` unless given."""
    s, d, p = _like(x, dtype, placement, shape)
    return empty(s, d, placement=p)


def zeros_like(x, dtype: Any = None, *, placement: Any = None, shape=None) -> DeviceArray:
    """A new array of zeros shaped, typed and placed like ``x``."""
    s, d, p = _like(x, dtype, placement, shape)
    return zeros(s, d, placement=p)


def ones_like(x, dtype: Any = None, *, placement: Any = None, shape=None) -> DeviceArray:
    """A new array of ones shaped, typed and placed like ``x``."""
    s, d, p = _like(x, dtype, placement, shape)
    return full(s, 1, d, placement=p)


def full_like(x, fill_value, dtype: Any = None, *, placement: Any = None, shape=None) -> DeviceArray:
    """A new array filled with ``fill_value``, shaped, typed and placed like ``x``."""
    s, d, p = _like(x, dtype, placement, shape)
    return full(s, fill_value, d, placement=p)


def from_dlpack(obj: Any, *, placement: Any = None, copy: bool | None = None) -> DeviceArray:
    """Import a DLPack producer (or capsule) as a DeviceArray.

    Host producers (NumPy, torch CPU, JAX CPU, array_api_strict) are imported
    zero-copy into registered host storage (``HostVisible``) that keeps the
    producer alive; ``byte_offset`` and NULL strides are honoured.

    A zero-copy import is writable only when the producer says so: a versioned
    capsule without the ``READ_ONLY`` flag (NumPy, torch). A versioned capsule
    with ``READ_ONLY``, and every legacy (unversioned) capsule, which cannot say
    whether the data may change (JAX's arrays are immutable), give a read-only
    import, as ``numpy.from_dlpack`` does: device work that would write it
    (``out=``, ``x[...] = v``) and ``x.map_write()`` raise ``ValueError``;
    reading it, ``x.copy()`` and a read-only re-export (``max_version >=
    (1, 0)``) work. ``copy=True`` gives a writable copy instead.

    ``placement=`` (when different) or ``copy=True`` copies into that placement
    (``Shared(hx.npu())`` by default); ``copy=False`` refuses any copy
    (``BufferError``). A capsule can be imported once (``ValueError`` for a used
    one). A capsule whose shape, strides or ``byte_offset`` overflow is refused
    (``ValueError``) before anything is read.

    NumPy <= 2.4 cannot export or import bfloat16 through DLPack; hrxarray
    imports bfloat16 NumPy arrays through a ``uint16`` view internally. In the
    other direction use ``np.from_dlpack(x.view(np.uint16)).view(hx.bfloat16)``.
    """
    if isinstance(obj, np.ndarray) and obj.dtype.name == "bfloat16":
        # NumPy <= 2.4 refuses to export bfloat16: go through its bits.
        x = _core._from_dlpack(obj.view(np.uint16), placement, copy)
        return x._view(x._offset, x.shape, x.strides, "bfloat16")
    return _core._from_dlpack(obj, placement, copy)


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
            x._copy_from(asarray(values, placement=x.placement))
            x.block_until_ready()
        return
    guard = x.buffer.map_write() if write else x.buffer.map_read()
    with guard as raw:
        yield _typed_view(x, raw, HostView)


def map_read(self):
    """Context manager: a read-only NumPy view of the elements under a host read guard.

    Waits for pending device writers (``ExecutionError`` if one failed); device
    work that writes the storage is refused with ``BusyError`` while the guard
    lives. The view raises ``ValueError`` after the block. bfp16 arrays yield a
    decoded float32 copy.
    """
    return _map(self, False)


def map_write(self):
    """Context manager: a writable NumPy view of the elements under a host write guard.

    Waits for every pending device use of the storage; device work on it is
    refused (``BusyError``) while the guard lives. bfp16 arrays yield a decoded
    float32 copy that is encoded back (floor rounding) on exit.
    """
    return _map(self, True)


def _array(self, dtype=None, copy=None):
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
    if isinstance(key, DeviceArray) or isinstance(key, (list, np.ndarray)):
        raise IndexError("DeviceArray supports basic indexing only (integers, slices, Ellipsis, None); "
                         "advanced indexing with arrays or masks is not implemented")
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
        if isinstance(k, (bool, np.bool_)):
            raise IndexError("boolean indices are advanced indexing, which DeviceArray does not implement")
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
                strides.append(stride * step)
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


def _setitem(self, key, value):
    target = self[key] if not (isinstance(key, tuple) and key == ()) else self
    if not isinstance(value, (DeviceArray, bool, int, float, np.generic)):
        value = asarray(value, placement=self.placement)
    elif isinstance(value, np.generic):
        value = value.item()
    target._copy_from(value)


def _reshape(self, *shape, order="C", copy=None):
    if order != "C":
        raise ValueError("reshape: only order='C' is supported")
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        shape = shape[0]
    shape = list(_shape_tuple(shape))
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    known = math.prod(s for s in shape if s != -1)
    if unknown:
        if known == 0 or self.size % known:
            raise ValueError(f"cannot reshape array of size {self.size} into shape {tuple(shape)}")
        shape[unknown[0]] = self.size // known
    if math.prod(shape) != self.size or builtins.any(s < 0 for s in shape):
        raise ValueError(f"cannot reshape array of size {self.size} into shape {tuple(shape)}")
    shape = tuple(shape)
    if self.dtype is bfp16 and (not shape or shape[-1] % 8 or shape[-1] != self.shape[-1] and copy is False):
        if not shape or shape[-1] % 8:
            raise ValueError("reshape: a bfp16 array's last axis must stay a multiple of 8")
    base = self
    if not _c_contiguous(self):
        if copy is False:
            raise ValueError("reshape(copy=False): the array is not contiguous, a copy is needed")
        base = self.copy()
    elif copy:
        base = self.copy()
    return base._view(base._offset, shape, _contiguous_strides(shape, base.dtype))


def _contiguous_strides(shape, dtype):
    strides = []
    if dtype is bfp16:
        step = 9
        for i, s in enumerate(reversed(shape)):
            strides.append(step)
            step *= builtins.max(s // 8, 1) if i == 0 else builtins.max(s, 1)
    else:
        step = np.dtype(dtype).itemsize
        for s in reversed(shape):
            strides.append(step)
            step *= builtins.max(s, 1)
    return tuple(reversed(strides))


def _c_contiguous(x):
    if x.size == 0:
        return True
    want = _contiguous_strides(x.shape, x.dtype)
    return builtins.all(n == 1 or s == w for n, s, w in zip(x.shape, x.strides, want))


def _transpose(self, *axes):
    if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], (int, np.integer))):
        axes = axes[0]
    if axes is None or axes == ():
        axes = tuple(reversed(range(self.ndim)))
    axes = tuple(operator.index(a) % self.ndim if self.ndim else operator.index(a) for a in axes)
    if sorted(axes) != list(range(self.ndim)):
        raise ValueError(f"axes {axes} don't match array of dimension {self.ndim}")
    if self.dtype is bfp16 and self.ndim and axes[-1] != self.ndim - 1:
        raise ValueError("transpose: a bfp16 array's blocked last axis must stay last")
    return self._view(self._offset, tuple(self.shape[a] for a in axes), tuple(self.strides[a] for a in axes))


def _astype(self, dtype, copy=True):
    want = _dtype(dtype)
    if want == self.dtype and not copy:
        return self
    out = empty(self.shape, want, placement=self.placement)
    out._copy_from(self)
    return out


def _copy(self):
    out = empty(self.shape, self.dtype, placement=self.placement)
    out._copy_from(self)
    return out


def _to(self, placement, *, copy=None):
    if placement == self.placement and not copy:
        return self
    out = empty(self.shape, self.dtype, placement=placement)
    out._copy_from(self)
    return out


def _view_dtype(self, dtype):
    want = _dtype(dtype)
    if isinstance(want, BlockDType) or self.dtype is bfp16:
        raise TypeError("view: bfp16 arrays cannot be reinterpreted; use astype or blocks()")
    if want.itemsize != self.dtype.itemsize:
        raise ValueError(f"view: {want} has a different item size than {self.dtype} "
                         "(only same-size reinterpretation is supported)")
    return self._view(self._offset, self.shape, self.strides, want)


def _blocks(self):
    if self.dtype is not bfp16:
        raise TypeError("blocks(): only bfp16 arrays have blocks")
    shape = self.shape[:-1] + (self.shape[-1] // 8, 9)
    strides = self.strides[:-1] + (9, 1)
    return self._view(self._offset, shape, strides, np.uint8)


# --- printing and conversions ---------------------------------------------------------------


def _repr(self):
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


def _str(self):
    return str(self._to_numpy())


def _item(self, *args):
    values = self._to_numpy()
    return values.item(*args)


def _scalar(kind):
    def convert(self):
        if self.size != 1:
            if kind is bool:
                raise ValueError("The truth value of an array with more than one element is ambiguous. "
                                 "Use a.any() or a.all()")
            raise TypeError(f"only arrays of size 1 can be converted to Python scalars ({kind.__name__})")
        return kind(self._to_numpy().reshape(()).item())

    convert.__name__ = f"__{kind.__name__}__"
    return convert


def _index(self):
    if self.size != 1 or self.dtype.kind not in "iu":
        raise TypeError("only integer arrays of size 1 can be converted to an index")
    return int(self._to_numpy().reshape(()).item())


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d DeviceArray")
    for i in range(self.shape[0]):
        yield self[i]


# --- functions ---------------------------------------------------------------------------------

_U = _core._ufuncs


def _device(x, like=None):
    if isinstance(x, DeviceArray):
        return x
    return asarray(x, placement=like.placement if isinstance(like, DeviceArray) else None)


def where(condition, x, y) -> DeviceArray:
    """Elements of ``x`` where ``condition`` is true, else of ``y`` (broadcast; NumPy's promotion of x and y)."""
    return _U["where"](condition, x, y)


def _axes(axis, ndim):
    if axis is None:
        return None
    if isinstance(axis, (int, np.integer)):
        return (operator.index(axis),)
    return tuple(operator.index(a) for a in axis)


def _reduced_count(x, axes):
    if axes is None:
        return x.size
    return math.prod(x.shape[a % x.ndim] for a in axes) if x.ndim else 1


_SMALL_SIGNED = {"bool", "int8", "int16", "int32"}
_SMALL_UNSIGNED = {"uint8", "uint16", "uint32"}


def _sum_dtype(dt):
    if dt.name in _SMALL_SIGNED:
        return np.dtype(np.int64)
    if dt.name in _SMALL_UNSIGNED:
        return np.dtype(np.uint64)
    return dt


def _reduce_dtypes(name, x, dtype):
    if dtype is not None:
        d = _dtype(dtype)
        return d, d
    if name in ("add", "multiply"):
        d = _sum_dtype(x.dtype)
    elif name.startswith("logical_"):
        d = np.dtype(bool)
    else:
        d = x.dtype
    return d, d


def _ufunc_reduce(self, a, axis=None, dtype=None, out=None, keepdims=False):
    """Reduce ``a`` along ``axis`` (None: all axes; an int or a tuple) with this binary ufunc.

    Integer add/multiply reductions accumulate in int64 (uint64 for unsigned)
    as NumPy's do; float16 and bfloat16 accumulate in float32 and round once.
    Empty reductions give the identity, or ``ValueError`` for ufuncs without
    one (maximum, minimum).
    """
    x = _device(a)
    if isinstance(out, tuple):
        (out,) = out
    acc, odt = _reduce_dtypes(self.__name__, x, dtype)
    return self._reduce(x, _axes(axis, x.ndim), acc, odt, out, keepdims, 0.0)


def sum(x, axis=None, dtype=None, out=None, keepdims=False) -> DeviceArray:
    """Sum over ``axis`` (NumPy's dtype rules: small integers accumulate in int64/uint64)."""
    return _ufunc_reduce(_U["add"], x, axis, dtype, out, keepdims)


def prod(x, axis=None, dtype=None, out=None, keepdims=False) -> DeviceArray:
    """Product over ``axis`` (NumPy's dtype rules)."""
    return _ufunc_reduce(_U["multiply"], x, axis, dtype, out, keepdims)


def max(x, axis=None, out=None, keepdims=False) -> DeviceArray:
    """Maximum over ``axis``; NaN propagates; ``ValueError`` for an empty reduction."""
    return _ufunc_reduce(_U["maximum"], x, axis, None, out, keepdims)


def min(x, axis=None, out=None, keepdims=False) -> DeviceArray:
    """Minimum over ``axis``; NaN propagates; ``ValueError`` for an empty reduction."""
    return _ufunc_reduce(_U["minimum"], x, axis, None, out, keepdims)


def mean(x, axis=None, dtype=None, out=None, keepdims=False) -> DeviceArray:
    """Arithmetic mean over ``axis``: float64 for integer input; float16/bfloat16 accumulate in float32."""
    x = _device(x)
    if dtype is not None:
        odt = _dtype(dtype)
    elif x.dtype.kind in "biu":
        odt = np.dtype(np.float64)
    else:
        odt = x.dtype
    axes = _axes(axis, x.ndim)
    count = _reduced_count(x, axes)
    if isinstance(out, tuple):
        (out,) = out
    return _U["add"]._reduce(x, axes, odt, odt, out, keepdims, float(count) if count else math.nan)


def argmax(x, axis=None, keepdims=False) -> DeviceArray:
    """Index of the (first) maximum, over the flattened array or along ``axis``; int64."""
    return _core._arg_reduce(_device(x), axis, True, keepdims)


def argmin(x, axis=None, keepdims=False) -> DeviceArray:
    """Index of the (first) minimum, over the flattened array or along ``axis``; int64."""
    return _core._arg_reduce(_device(x), axis, False, keepdims)


def matmul(a, b, *, out=None, compute=None, rounding="floor") -> DeviceArray:
    """Matrix product with NumPy's matmul shapes (1-d promotion, batch broadcasting).

    Runs on the NPU lane when both operands are NPU-bindable (``Shared``,
    ``NpuLocal``) and bfloat16 or bfp16, on the GPU compute lane otherwise.
    bfloat16 inputs give float32, with the NPU's numerics (products exact,
    float32 accumulation with k in pairs ``(1, 0), (3, 2), ...``, no denormals).
    ``compute="bf16"`` rounds any inputs to bfloat16 first; ``compute="bfp16"``
    quantises both operands to bfp16ebs8 along K (K a multiple of 8) with
    ``rounding`` ("floor" or "even"), as the NPU's BFP path does (bfp16
    operands imply it). Other dtypes multiply in their own type (NumPy's result
    type; integers wrap).

    Keeping it on the NPU: both operands must be bfloat16 or bfp16 *and*
    NPU-bindable. Anything else leaves the NPU without an error: a float32
    operand (``f32 @ bf16`` promotes to float32, as NumPy does), or a
    ``GpuLocal``/``HostVisible`` one, runs on the GPU compute lane in float32.
    ``compute="bf16"`` does not move it either; convert first
    (``x.astype(hx.bfloat16)``, ``x.to(hx.Shared(npu))``). A trace shows where
    each one ran: between ``rt.start_trace(n)`` and ``rt.finish_trace()``
    every ``"matmul"`` event has its lane (``"npu"`` or ``"compute"``).

    A value that ``compute="bfp16"`` cannot encode (NaN, Inf) fails this
    operation only: its result raises ``ExecutionError`` chained to a
    ``ValueError`` naming the element, and the operands stay usable.
    """
    return _core._matmul(a, b, out, compute, rounding)


def concatenate(arrays, axis=0, dtype=None) -> DeviceArray:
    """Join arrays along an existing axis (``axis=None`` flattens first); NumPy's result dtype."""
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    first = next((a for a in arrays if isinstance(a, DeviceArray)), None)
    xs = [_device(a, first) for a in arrays]
    if axis is None:
        xs = [x.reshape(-1) for x in xs]
        axis = 0
    nd = xs[0].ndim
    if nd == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = operator.index(axis)
    if not -nd <= axis < nd:
        raise np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension {nd}")
    axis %= nd
    for i, x in enumerate(xs):
        if x.ndim != nd:
            raise ValueError("all the input array dimensions except for the concatenation axis must match exactly, "
                             f"but along dimension 0, the array at index 0 has {nd} dimension(s) and the array "
                             f"at index {i} has {x.ndim} dimension(s)")
        for d in range(nd):
            if d != axis and x.shape[d] != xs[0].shape[d]:
                raise ValueError("all the input array dimensions except for the concatenation axis must match "
                                 f"exactly, but along dimension {d}, the array at index 0 has size "
                                 f"{xs[0].shape[d]} and the array at index {i} has size {x.shape[d]}")
    if dtype is None:
        dtype = xs[0].dtype
        for x in xs[1:]:
            dtype = _result_type(dtype, x.dtype)
    shape = list(xs[0].shape)
    shape[axis] = builtins.sum(x.shape[axis] for x in xs)
    out = empty(tuple(shape), dtype, placement=xs[0].placement)
    at = 0
    for x in xs:
        n = x.shape[axis]
        if n:
            index = (slice(None),) * axis + (slice(at, at + n),)
            out[index]._copy_from(x)
        at += n
    return out


def _result_type(a, b):
    if a == b:
        return a
    import ml_dtypes  # noqa: F401  (registers bfloat16 promotion with NumPy)

    return np.result_type(a, b)


def stack(arrays, axis=0) -> DeviceArray:
    """Join arrays of one shape along a new axis."""
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to stack")
    first = next((a for a in arrays if isinstance(a, DeviceArray)), None)
    xs = [_device(a, first) for a in arrays]
    if builtins.any(x.shape != xs[0].shape for x in xs):
        raise ValueError("all input arrays must have the same shape")
    nd = xs[0].ndim + 1
    axis = operator.index(axis)
    if not -nd <= axis < nd:
        raise np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension {nd}")
    axis %= nd
    return concatenate([expand_dims(x, axis) for x in xs], axis=axis)


def reshape(x, shape, order="C", *, copy=None) -> DeviceArray:
    """``x`` with a new shape (a view when ``x`` is C-contiguous, else a copy)."""
    return _device(x).reshape(shape, order=order, copy=copy)


def transpose(x, axes=None) -> DeviceArray:
    """A view with the axes permuted (reversed by default)."""
    return _device(x).transpose(axes)


def permute_dims(x, axes) -> DeviceArray:
    """The array API's name for transpose with explicit axes."""
    return _device(x).transpose(axes)


def squeeze(x, axis=None) -> DeviceArray:
    """A view without the given (or all) length-1 axes."""
    x = _device(x)
    axes = range(x.ndim) if axis is None else [a % x.ndim for a in _axes(axis, x.ndim)]
    axes = [a for a in axes if axis is not None or x.shape[a] == 1]
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    keep = [i for i in range(x.ndim) if i not in axes]
    return x._view(x._offset, tuple(x.shape[i] for i in keep), tuple(x.strides[i] for i in keep))


def expand_dims(x, axis) -> DeviceArray:
    """A view with a length-1 axis inserted at ``axis``."""
    x = _device(x)
    nd = x.ndim + 1
    axis = operator.index(axis)
    if not -nd <= axis < nd:
        raise np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension {nd}")
    axis %= nd
    shape = x.shape[:axis] + (1,) + x.shape[axis:]
    strides = x.strides[:axis] + (0,) + x.strides[axis:]
    return x._view(x._offset, shape, strides)


def broadcast_to(x, shape) -> DeviceArray:
    """A read-through view of ``x`` broadcast to ``shape`` (stride 0 on new axes)."""
    x = _device(x)
    shape = _shape_tuple(shape)
    if len(shape) < x.ndim:
        raise ValueError(f"cannot broadcast a shape {x.shape} to {shape}")
    pad = len(shape) - x.ndim
    strides = []
    for i, n in enumerate(shape):
        if i < pad:
            strides.append(0)
            continue
        have = x.shape[i - pad]
        if have == n:
            strides.append(x.strides[i - pad] if n != 1 else 0)
        elif have == 1:
            strides.append(0)
        else:
            raise ValueError(f"operands could not be broadcast together with remapped shapes "
                             f"[original->remapped]: {x.shape} and requested shape {shape}")
    return x._view(x._offset, shape, tuple(strides))


def astype(x, dtype, *, copy=True) -> DeviceArray:
    """``x`` converted to ``dtype`` (NumPy's unsafe casts; bfp16 encodes with floor rounding)."""
    return _device(x).astype(dtype, copy=copy)


# --- NumPy protocols -----------------------------------------------------------------------------

_NUMPY_UFUNC_NAMES = {"true_divide": "divide", "conjugate": None}


def _array_ufunc(self, uf, method, *inputs, **kwargs):
    name = _NUMPY_UFUNC_NAMES.get(uf.__name__, uf.__name__)
    if name == "matmul" and method == "__call__":
        out = kwargs.pop("out", None)
        if isinstance(out, tuple):
            (out,) = out
        if kwargs:
            raise TypeError(f"hrxarray's matmul does not take {sorted(kwargs)}")
        return matmul(*inputs, out=out)
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
    raise TypeError(f"hrxarray does not implement numpy.{uf.__name__}.{method} for DeviceArray")


def _np_round(a, decimals=0, out=None):
    if decimals != 0:
        raise TypeError("hrxarray implements numpy.round only for decimals=0 (round half to even)")
    return _U["rint"](a, out=out) if out is not None else _U["rint"](a)


def _np_max(a, axis=None, out=None, keepdims=False, **kw):
    if kw:
        raise TypeError(f"hrxarray's max does not take {sorted(kw)}")
    return max(a, axis=axis, out=out, keepdims=keepdims)


def _np_min(a, axis=None, out=None, keepdims=False, **kw):
    if kw:
        raise TypeError(f"hrxarray's min does not take {sorted(kw)}")
    return min(a, axis=axis, out=out, keepdims=keepdims)


def _np_copy(a, order="K", subok=False):
    return _device(a).copy()


_ARRAY_FUNCTIONS = {
    np.sum: sum, np.prod: prod, np.max: _np_max, np.amax: _np_max, np.min: _np_min, np.amin: _np_min,
    np.mean: mean, np.argmax: argmax, np.argmin: argmin, np.concatenate: concatenate, np.stack: stack,
    np.transpose: transpose, np.reshape: reshape, np.where: where, np.round: _np_round,
    np.around: _np_round, np.copy: _np_copy, np.squeeze: squeeze, np.expand_dims: expand_dims,
    np.broadcast_to: broadcast_to, np.zeros_like: zeros_like, np.ones_like: ones_like,
    np.empty_like: empty_like, np.full_like: full_like, np.shape: lambda a: a.shape,
    np.ndim: lambda a: a.ndim, np.size: lambda a, axis=None: a.size if axis is None else a.shape[axis],
}
if hasattr(np, "astype"):
    _ARRAY_FUNCTIONS[np.astype] = astype
if hasattr(np, "permute_dims") and np.permute_dims is not np.transpose:
    _ARRAY_FUNCTIONS[np.permute_dims] = permute_dims


def _array_function(self, func, types, args, kwargs):
    impl = _ARRAY_FUNCTIONS.get(func)
    if impl is None:
        raise TypeError(f"hrxarray does not implement numpy.{func.__name__} for DeviceArray (no silent host "
                        "fallback); convert explicitly with hx.to_numpy(x)")
    return impl(*args, **kwargs)


def _ufunc_reduce_method(self, a, axis=None, dtype=None, out=None, keepdims=False):
    return _ufunc_reduce(self, a, axis, dtype, out, keepdims)


def _prop_T(self):
    return self.transpose()


def _prop_mT(self):
    if self.ndim < 2:
        raise ValueError("mT needs at least 2 dimensions")
    return self.transpose(tuple(range(self.ndim - 2)) + (self.ndim - 1, self.ndim - 2))


# The implementations behind DeviceArray's Python-level methods. The C++ type
# declares each method (signature and docstring, so the stub shows them) and
# forwards here; see bind_array.cpp (kPyMethods).
_METHODS = {
    "__repr__": _repr, "__str__": _str, "__getitem__": _getitem, "__setitem__": _setitem,
    "__iter__": _iter, "__bool__": _scalar(bool), "__int__": _scalar(int), "__float__": _scalar(float),
    "__index__": _index, "__array__": _array, "__array_ufunc__": _array_ufunc,
    "__array_function__": _array_function, "map_read": map_read, "map_write": map_write,
    "reshape": _reshape, "transpose": _transpose, "astype": _astype, "copy": _copy, "to": _to,
    "view": _view_dtype, "blocks": _blocks, "item": _item, "T": _prop_T, "mT": _prop_mT,
    "sum": sum, "prod": prod, "max": max, "min": min, "mean": mean, "argmax": argmax, "argmin": argmin,
    "reduce": _ufunc_reduce_method,
}
