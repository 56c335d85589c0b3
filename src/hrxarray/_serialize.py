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
"""

from __future__ import annotations

import copyreg
import os
import time
from typing import Any

import numpy as np

from . import _core
from ._array import DeviceArray, _dtype
from ._creation import asarray, empty
from ._dtypes import bfp16

#: The header layout's version; :func:`loads` refuses any other.
FORMAT = 1

_KINDS = ("Shared", "NpuLocal", "GpuLocal", "HostVisible")
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
        import hrxarray

        npu = hrxarray.npu()
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
    # copy below then finds no writer pending.
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


def loads(header: dict, frame: Any) -> DeviceArray:
    """The DeviceArray :func:`dumps` described, on this process's device (a copy of ``frame``)."""
    if header.get("format") != FORMAT:
        raise ValueError(f"deserialize: DeviceArray format {header.get('format')!r} is not {FORMAT} "
                         "(sender and receiver run different hrxarray versions)")
    kind = header["placement"]
    if kind not in _KINDS:
        raise ValueError(f"deserialize: unknown placement kind {kind!r}")
    shape = tuple(header["shape"])
    raw = np.frombuffer(frame, dtype=np.uint8)
    placement = _placement_for(kind)
    if header["dtype"] == "bfp16":
        out = empty(shape, bfp16, placement=placement)
        blocks = out.blocks()
        blocks._copy_from(raw.reshape(blocks.shape), False, "deserialize")
        return out
    dtype = _dtype(header["dtype"], "deserialize")
    return asarray(raw.view(dtype).reshape(shape), placement=placement)


def _rebuild(header: dict, frame: np.ndarray) -> DeviceArray:
    return loads(header, frame)


def _reduce(x: DeviceArray) -> tuple:
    # copyreg, not a __reduce__ method: the C++ type's methods are declared in
    # bind_array.cpp; the dispatch table reaches pickle, cloudpickle and copy alike.
    return _rebuild, dumps(x, "pickle")


copyreg.pickle(DeviceArray, _reduce)
