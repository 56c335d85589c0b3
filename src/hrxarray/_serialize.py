"""Serialising a DeviceArray: one path for pickle (``copyreg``) and Dask's ``dask_serialize``.

Note [Serialising device arrays]: a DeviceArray's bytes may still be being
written by device work, so a copy taken at once could ship stale values. Every
way out of the process goes through :func:`dumps`, which

1. waits for the array's pending writers, bounded (``HRXARRAY_SERIALIZE_TIMEOUT``
   seconds, 60 by default; ``TimeoutError`` naming the array after that);
2. copies the elements to one contiguous host frame under a host read guard
   (the copy is the library's ``_to_numpy``, which holds the guard; bfp16 ships
   its raw blocks, never decoded values);
3. describes them in a header of plain values: format version, dtype *name*
   (``bfloat16``'s ``dtype.str`` is ``<V2`` and would come back as raw void),
   shape, and the placement *kind* (never a device index or a pointer).

A failed producer or poisoned storage raises ``DeviceLostError`` naming the
array instead of shipping bytes. :func:`loads` places the block on the receiving
process's device (:func:`set_receiving_npu`, which hrxarray.dask's worker plugin
calls; the default runtime's NPU otherwise), keeping the placement kind.

Pickle protocol 5 carries the frame out of band (a NumPy uint8 array), so
``distributed``'s pickle family and its ``dask_serialize`` registration move the
same single copy.

Note [Untrusted headers]: a header and its frames arrive from another process
(or a file), so :func:`loads` checks all of them before it allocates anything:
the exact set of fields, each field's type (``bool`` is not an int here), the
format version, a dtype hrxarray has, a placement kind, a shape of non-negative
ints that bfp16's blocks can tile, and a payload whose length is exactly what
that shape and dtype need. Any failure is one :class:`HeaderError` naming the
field and the value, never NumPy's reshape message from further down.
"""

from __future__ import annotations

import copyreg
import math
import os
import sys
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from . import _core
from ._array import DeviceArray, _dtype
from ._creation import asarray, empty
from ._dtypes import bfp16

#: The header layout's version; :func:`loads` refuses any other.
FORMAT = 1

_KINDS = ("Shared", "NpuLocal", "GpuLocal", "HostVisible")
_FIELDS = ("format", "dtype", "shape", "placement")
# The dtype names dumps can write: every dtype a DeviceArray holds.
_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "complex64", "complex128", "bfloat16", "bfp16")
# NumPy's own limit on dimensions; a longer shape is no array a sender could have had.
_MAX_NDIM = 64


class HeaderError(ValueError):
    """A serialised DeviceArray's header or frames that describe no valid array (Note [Untrusted headers]).

    A ValueError, as DESIGN.md's error list asks for bad input; the subclass
    exists so that callers and tests can tell "the message was tampered with or
    truncated" from a ValueError raised further down, and it stays private to
    this module rather than adding a public name to ``hrxarray``.
    """


_receiving_npu: Any = None


def set_receiving_npu(npu: Any) -> None:
    """The NPU device whose placements received arrays get (None: the default runtime's ``npu()``)."""
    global _receiving_npu
    _receiving_npu = npu


def _placement_for(kind: str) -> _core.Placement:
    if kind == "GpuLocal":
        return _core.GpuLocal()
    if kind == "HostVisible":
        return _core.HostVisible()
    if _receiving_npu is not None:
        npu = _receiving_npu
    else:
        from ._runtime import npu as default_npu

        npu = default_npu()
    return _core.NpuLocal(npu) if kind == "NpuLocal" else _core.Shared(npu)


def _name(x: DeviceArray) -> str:
    dt = "bfp16" if x.dtype is bfp16 else x.dtype.name
    return f"the {dt} array of shape {x.shape} in {x.placement!r}"


def _timeout() -> float:
    try:
        return float(os.environ.get("HRXARRAY_SERIALIZE_TIMEOUT", "60"))
    except ValueError:
        return 60.0


def _wait_bounded(x: DeviceArray, op: str) -> None:
    # ready() never blocks, so the wait is a poll with a growing pause; the
    # copy below then finds no writer pending. A settled array (a Dask task's
    # result is one: Note [Pending results and the Dask scheduler]) costs one
    # check, not a clock read and an environment lookup per block sent.
    if x.ready():
        return
    deadline = time.monotonic() + _timeout()
    pause = 1e-4
    while not x.ready():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{op}: {_name(x)} still has pending device writers after {_timeout():g} s "
                               "(HRXARRAY_SERIALIZE_TIMEOUT); nothing was sent")
        time.sleep(pause)
        pause = min(pause * 2, 0.01)


def dumps(x: DeviceArray, op: str = "serialize") -> tuple[dict, np.ndarray]:
    """(header, frame): ``x``'s elements as one contiguous uint8 host array and the header to rebuild it.

    Waits (bounded) for pending writers; ``DeviceLostError`` naming the array
    when its producer failed or its storage is poisoned.
    """
    _wait_bounded(x, op)
    try:
        host = (x.blocks() if x.dtype is bfp16 else x)._to_numpy()
    except (_core.ExecutionError, _core.DeviceLostError) as e:
        raise _core.DeviceLostError(f"{op}: {_name(x)} cannot be sent: its contents were lost "
                                    f"({type(e).__name__}: {e})") from e
    header = {
        "format": FORMAT,
        "dtype": "bfp16" if x.dtype is bfp16 else x.dtype.name,
        "shape": list(x.shape),
        "placement": type(x.placement).__name__,
    }
    return header, np.ascontiguousarray(host).reshape(-1).view(np.uint8)


def _show(value: Any) -> str:
    # A tampered field may be any size; the message names it, it does not dump it.
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _bad(field: Any, value: Any, why: str) -> HeaderError:
    return HeaderError(f"deserialize: DeviceArray header field {_show(field)} = {_show(value)} {why}; "
                       "nothing was allocated")


def _is_int(value: Any) -> bool:
    # bool is an int subclass, but True is no dimension or format version.
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _payload_bytes(dtype: str, shape: tuple) -> int:
    count = math.prod(shape)
    if dtype == "bfp16":
        return count // bfp16.block_values * bfp16.block_bytes
    return count * _dtype(dtype, "deserialize").itemsize


def _check_header(header: Any) -> tuple[str, tuple, str]:
    """(dtype name, shape, placement kind) of a header whose every field is valid; HeaderError otherwise."""
    if not isinstance(header, Mapping):
        raise _bad("header", header, "is not a mapping of the fields " + ", ".join(_FIELDS))
    for field in _FIELDS:
        if field not in header:
            raise HeaderError(f"deserialize: DeviceArray header has no field {field!r} (it has "
                              f"{_show(', '.join(sorted(map(repr, header))))}); nothing was allocated")
    extra = [k for k in header if k not in _FIELDS]
    if extra:
        raise _bad(extra[0], header[extra[0]], f"is not a field of format {FORMAT}")
    fmt = header["format"]
    if not _is_int(fmt) or fmt != FORMAT:
        raise _bad("format", fmt, f"is not {FORMAT} (sender and receiver run different hrxarray versions)")
    dtype = header["dtype"]
    if not isinstance(dtype, str) or dtype not in _DTYPES:
        raise _bad("dtype", dtype, "is not the name of an hrxarray dtype (" + ", ".join(_DTYPES) + ")")
    kind = header["placement"]
    if not isinstance(kind, str) or kind not in _KINDS:
        raise _bad("placement", kind, "is not a placement kind (" + ", ".join(_KINDS) + ")")
    shape = header["shape"]
    if not isinstance(shape, (list, tuple)) or len(shape) > _MAX_NDIM:
        raise _bad("shape", shape, f"is not a list of at most {_MAX_NDIM} dimensions")
    for n in shape:
        if not _is_int(n) or n < 0:
            raise _bad("shape", shape, f"has the dimension {_show(n)}, which is not a non-negative int")
    shape = tuple(int(n) for n in shape)
    # NumPy refuses arrays whose element count does not fit an index, zero-sized ones included.
    if math.prod(n for n in shape if n) > sys.maxsize:
        raise _bad("shape", list(shape), "has more elements than an array can index")
    if dtype == "bfp16" and (not shape or shape[-1] % bfp16.block_values):
        raise _bad("shape", list(shape), f"cannot be a bfp16 array's: its last axis must hold whole "
                   f"blocks of {bfp16.block_values} values")
    return dtype, shape, kind


def _check_frame(frame: Any, dtype: str, shape: tuple) -> np.ndarray:
    """The frame as uint8 when its length is exactly what ``shape`` of ``dtype`` needs; HeaderError otherwise."""
    try:
        view = memoryview(frame)
    except (TypeError, ValueError, BufferError):  # NumPy refuses a buffer of e.g. bfloat16 with ValueError
        raise HeaderError(f"deserialize: the DeviceArray payload is a {type(frame).__name__}, "
                          "not a bytes-like frame; nothing was allocated") from None
    if not view.c_contiguous:
        raise HeaderError("deserialize: the DeviceArray payload is not one contiguous frame; nothing was allocated")
    want = _payload_bytes(dtype, shape)
    if view.nbytes != want:
        if dtype == "bfp16":
            what = f"{math.prod(shape) // bfp16.block_values} block(s) of {bfp16.block_bytes} bytes"
        else:
            what = f"{math.prod(shape)} element(s) of {_payload_bytes(dtype, (1,))} bytes"
        raise HeaderError(f"deserialize: the DeviceArray payload has {view.nbytes} bytes, but the header's "
                          f"dtype {dtype!r} and shape {list(shape)} need {want} ({what}); nothing was allocated")
    return np.frombuffer(view.cast("B"), dtype=np.uint8)


def loads(header: dict, frame: Any) -> DeviceArray:
    """The DeviceArray :func:`dumps` described, on this process's device (a copy of ``frame``).

    ``HeaderError`` (a ValueError) naming the field and its value when the
    header or the frame's length is not what :func:`dumps` writes; then nothing
    was allocated.
    """
    dtype, shape, kind = _check_header(header)
    raw = _check_frame(frame, dtype, shape)
    placement = _placement_for(kind)
    if dtype == "bfp16":
        out = empty(shape, bfp16, placement=placement)
        blocks = out.blocks()
        blocks._copy_from(raw.reshape(blocks.shape), False, "deserialize")
        return out
    return asarray(raw.view(_dtype(dtype, "deserialize")).reshape(shape), placement=placement)


def loads_frames(header: dict, frames: Any) -> DeviceArray:
    """:func:`loads` for a list of frames (Dask's form), which must hold exactly the one frame :func:`dumps` made."""
    if not isinstance(frames, (list, tuple)) or len(frames) != 1:
        count = len(frames) if isinstance(frames, (list, tuple)) else type(frames).__name__
        raise HeaderError(f"deserialize: a DeviceArray travels in exactly 1 frame, got {count}; "
                          "nothing was allocated")
    return loads(header, frames[0])


def _rebuild(header: dict, frame: np.ndarray) -> DeviceArray:
    return loads(header, frame)


def _reduce(x: DeviceArray) -> tuple:
    # copyreg, not a __reduce__ method: the C++ type's methods are declared in
    # bind_array.cpp; the dispatch table reaches pickle, cloudpickle and copy alike.
    return _rebuild, dumps(x, "pickle")


copyreg.pickle(DeviceArray, _reduce)
