"""Creation functions (the array API's chapter): asarray, empty, zeros, ones, full, arange, linspace, the
``*_like`` functions, from_dlpack, eye, tril, triu, and their NumPy dispatch (``np.zeros_like``,
NEP 35's ``like=``).

``device=`` is the array API's spelling of ``placement=`` (a placement such as
``hx.Shared(npu)`` or ``hx.GpuLocal()``; ``Shared(hx.npu())`` by default).
Every result is a new array whose contents are written on the compute lane.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from . import _array, _core
from ._array import DeviceArray, _default_placement, _device, _dtype, _flag, _home, _is_bfp16, bfp16

__all__ = ["asarray", "empty", "zeros", "ones", "full", "arange", "linspace", "empty_like", "zeros_like",
           "ones_like", "full_like", "from_dlpack", "eye", "tril", "triu"]


def asarray(obj: Any, dtype: Any = None, *, device: Any = None, placement: Any = None,
            copy: bool | None = None) -> DeviceArray:
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
        device: the array API's spelling of ``placement``.

    Host data is copied synchronously into the new array (host-mapped
    placements) or staged and uploaded on the upload lane (``GpuLocal``). A
    DLPack producer is imported zero-copy first (``from_dlpack``), then copied
    if the placement or dtype differs.
    """
    want = _dtype(dtype, "asarray")
    placement = _home("asarray", device, placement)
    if isinstance(obj, DeviceArray):
        same_dtype = want is None or want == obj.dtype
        same_place = placement is None or placement == obj.placement
        if same_dtype and same_place and not copy:
            return obj
        if copy is False:
            raise ValueError("asarray(copy=False): changing the dtype or placement of a DeviceArray needs a copy")
        return obj._convert(want, obj.placement if placement is None else placement, "asarray")
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
    if want is not None and _is_bfp16(want):
        return _core._from_host(obj, "bfp16", placement)
    return _core._from_host(obj, want, placement)


def _empty(shape, dtype, placement, op, like=None):
    return _core._empty(shape, np.float64 if dtype is None else dtype, placement, op, like)


def empty(shape, dtype: Any = None, *, device: Any = None, placement: Any = None) -> DeviceArray:
    """A new array of ``shape`` (float64 by default). Its memory is zero-filled (allocations always are)."""
    return _empty(shape, dtype, _home("empty", device, placement), "empty")


def zeros(shape, dtype: Any = None, *, device: Any = None, placement: Any = None) -> DeviceArray:
    """A new array of zeros (float64 by default); ready at once, nothing runs on a lane."""
    return _empty(shape, dtype, _home("zeros", device, placement), "zeros")


def _fill_dtype(fill_value, op):
    """NumPy's dtype for a fill value: bool, int64 (uint64 above it) or float64; a DeviceArray's own."""
    if isinstance(fill_value, DeviceArray):
        return fill_value.dtype
    if isinstance(fill_value, int) and not isinstance(fill_value, bool) and not -(2**63) <= fill_value < 2**64:
        raise OverflowError(f"{op}: Python integer {fill_value} does not fit any hrxarray dtype (int64 and uint64 "
                            "are the widest); pass dtype=float64 to round it")
    return _core._host_array(fill_value, op).dtype


def _full(shape, fill_value, dtype, placement, op, like=None):
    if dtype is None:
        dtype = _fill_dtype(fill_value, op)
    if like is None and isinstance(fill_value, DeviceArray):
        like = fill_value  # its runtime, and its placement unless one is given
    return _core._full(shape, fill_value, dtype, placement, op, like)


def full(shape, fill_value, dtype: Any = None, *, device: Any = None, placement: Any = None) -> DeviceArray:
    """A new array filled with ``fill_value`` (an asynchronous fill on the compute lane).

    ``dtype`` defaults to NumPy's choice for the value: bool, int64 or float64
    (a DeviceArray's own dtype, and its placement unless one is given). The
    value is converted as NumPy assigns it (``OverflowError`` for an integer
    the dtype cannot hold, ``ValueError`` for NaN into integers) and an array
    value must broadcast to ``shape``, all before anything is allocated.
    """
    return _full(shape, fill_value, dtype, _home("full", device, placement), "full")


def ones(shape, dtype: Any = None, *, device: Any = None, placement: Any = None) -> DeviceArray:
    """A new array of ones (float64 by default)."""
    return _full(shape, 1, np.float64 if dtype is None else dtype, _home("ones", device, placement), "ones")


def arange(start, stop=None, step=1, dtype: Any = None, *, device: Any = None, placement: Any = None) -> DeviceArray:
    """Evenly spaced values in [start, stop), exactly as ``numpy.arange`` computes them."""
    placement = _home("arange", device, placement)
    try:
        host = np.arange(start, stop, step) if stop is not None else np.arange(start, step=step)
    except (ValueError, TypeError, OverflowError) as e:
        raise type(e)(f"arange: {e}") from None
    return asarray(host, dtype=dtype if dtype is None or _is_bfp16(dtype) else dtype, placement=placement)


def linspace(start, stop, num: int = 50, endpoint: bool = True, dtype: Any = None, *, device: Any = None,
             placement: Any = None) -> DeviceArray:
    """``num`` evenly spaced values over [start, stop], exactly as ``numpy.linspace`` computes them."""
    placement = _home("linspace", device, placement)
    try:
        host = np.linspace(start, stop, num=num, endpoint=endpoint)
    except (ValueError, TypeError, OverflowError) as e:
        raise type(e)(f"linspace: {e}") from None
    return asarray(host, dtype=dtype, placement=placement)


def _like(x, dtype, shape, op):
    """(shape, dtype, like): a DeviceArray's own runtime and placement, or a host array's shape and dtype."""
    if not isinstance(x, DeviceArray):
        x, like = _core._host_array(x, op), None
    else:
        like = x
    return (x.shape if shape is None else shape, x.dtype if dtype is None else dtype, like)


def empty_like(x, dtype: Any = None, *, device: Any = None, placement: Any = None, shape=None) -> DeviceArray:
    """A new (zero-filled) array with the shape, dtype and placement of ``x`` (and on its runtime) unless given."""
    s, d, like = _like(x, dtype, shape, "empty_like")
    return _empty(s, d, _home("empty_like", device, placement), "empty_like", like)


def zeros_like(x, dtype: Any = None, *, device: Any = None, placement: Any = None, shape=None) -> DeviceArray:
    """A new array of zeros shaped, typed and placed like ``x``."""
    s, d, like = _like(x, dtype, shape, "zeros_like")
    return _empty(s, d, _home("zeros_like", device, placement), "zeros_like", like)


def ones_like(x, dtype: Any = None, *, device: Any = None, placement: Any = None, shape=None) -> DeviceArray:
    """A new array of ones shaped, typed and placed like ``x``."""
    s, d, like = _like(x, dtype, shape, "ones_like")
    return _core._full(s, 1, d, _home("ones_like", device, placement), "ones_like", like)


def full_like(x, fill_value, dtype: Any = None, *, device: Any = None, placement: Any = None,
              shape=None) -> DeviceArray:
    """A new array filled with ``fill_value``, shaped, typed and placed like ``x``."""
    s, d, like = _like(x, dtype, shape, "full_like")
    return _core._full(s, fill_value, d, _home("full_like", device, placement), "full_like", like)


def from_dlpack(obj: Any, /, *, device: Any = None, placement: Any = None, copy: bool | None = None) -> DeviceArray:
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

    ``device=`` is the array API's spelling of ``placement=``.

    NumPy <= 2.4 cannot export or import bfloat16 through DLPack; hrxarray
    imports bfloat16 NumPy arrays through a ``uint16`` view internally. In the
    other direction use ``np.from_dlpack(x.view(np.uint16)).view(hx.bfloat16)``.
    """
    placement = _home("from_dlpack", device, placement)
    if isinstance(obj, np.ndarray) and obj.dtype.name == "bfloat16":
        # NumPy <= 2.4 refuses to export bfloat16: go through its bits.
        x = _core._from_dlpack(obj.view(np.uint16), placement, copy)
        return x._view(x._offset, x.shape, x.strides, "bfloat16")
    return _core._from_dlpack(obj, placement, copy)


def _count(value: Any, op: str, what: str) -> int:
    try:
        n = operator.index(value)
    except TypeError:
        raise TypeError(f"{op}: {what} must be an integer, got {value!r}") from None
    if n < 0:
        raise ValueError(f"{op}: {what} must be non-negative, got {n}")
    return n


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None, device: Any = None,
        placement: Any = None) -> DeviceArray:
    """A 2-d array with ones on the ``k``-th diagonal and zeros elsewhere (float64 by default).

    ``k > 0`` is above the main diagonal, ``k < 0`` below. The zeros are the
    allocation's; the diagonal is one strided fill on the compute lane.
    """
    op = "eye"
    rows = _count(n_rows, op, "n_rows")
    cols = rows if n_cols is None else _count(n_cols, op, "n_cols")
    try:
        k = operator.index(k)
    except TypeError:
        raise TypeError(f"{op}: k must be an integer, got {k!r}") from None
    dt = np.dtype(np.float64) if dtype is None else _dtype(dtype, op)
    if dt is bfp16:
        raise TypeError(f"{op}: dtype bfp16 is a storage format; create float32 and convert with astype")
    out = zeros((rows, cols), dt, placement=_home(op, device, placement))
    r0, c0 = (0, k) if k >= 0 else (-k, 0)
    length = max(0, min(rows - r0, cols - c0))
    if length:
        item = dt.itemsize
        diag = out._view(out._offset + (r0 * cols + c0) * item, (length,), ((cols + 1) * item,))
        diag._copy_from(1, False, op)
    return out


def _triangle(x: Any, k: Any, lower: bool, op: str) -> DeviceArray:
    x = _device(x, op)
    try:
        k = operator.index(k)
    except TypeError:
        raise TypeError(f"{op}: k must be an integer, got {k!r}") from None
    # Diagonals beyond the matrix keep or drop everything alike; clamping keeps k in int64.
    k = max(min(k, 2**62), -(2**62))
    return _core._triangle(x, k, lower, op)


def tril(x: DeviceArray, /, *, k: int = 0) -> DeviceArray:
    """A copy of ``x`` with the elements above the ``k``-th diagonal of the last two axes zeroed."""
    return _triangle(x, k, True, "tril")


def triu(x: DeviceArray, /, *, k: int = 0) -> DeviceArray:
    """A copy of ``x`` with the elements below the ``k``-th diagonal of the last two axes zeroed."""
    return _triangle(x, k, False, "triu")


def _np_tril(m, k=0):
    return tril(m, k=k)


def _np_triu(m, k=0):
    return triu(m, k=k)


_array._ARRAY_FUNCTIONS.update({np.tril: _np_tril, np.triu: _np_triu})


# --- NumPy dispatch ---------------------------------------------------------------------------


def _np_creation_like(fn):
    # NumPy's *_like take a memory order and subok; a DeviceArray is always C-ordered and never subclassed.
    def create(a, *args, order="K", subok=True, **kwargs):
        return fn(a, *args, **kwargs)

    create.__name__ = fn.__name__
    return create


_array._ARRAY_FUNCTIONS.update({
    np.zeros_like: _np_creation_like(zeros_like), np.ones_like: _np_creation_like(ones_like),
    np.empty_like: _np_creation_like(empty_like), np.full_like: _np_creation_like(full_like),
})


def _like_array(like, obj, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, **kw):
    x = asarray(obj, dtype=dtype, placement=like.placement, copy=None if copy is False else copy)
    if ndmin > x.ndim:
        x = x.reshape((1,) * (ndmin - x.ndim) + x.shape)
    return x


def _like_asarray(like, obj, dtype=None, order=None, *, copy=None, **kw):
    return asarray(obj, dtype=dtype, placement=like.placement, copy=copy)


def _like_arange(like, start, stop=None, step=1, dtype=None, **kw):
    return arange(start, stop, step, dtype=dtype, placement=like.placement)


def _like_creation(fn):
    def create(like, shape, *args, dtype=None, order="C", **kw):
        return fn(shape, *args, dtype=dtype, placement=like.placement)

    return create


_array._LIKE_FUNCTIONS.update({
    np.array: _like_array, np.asarray: _like_asarray, np.asanyarray: _like_asarray, np.arange: _like_arange,
    np.empty: _like_creation(empty), np.zeros: _like_creation(zeros), np.ones: _like_creation(ones),
    np.full: _like_creation(full),
})
