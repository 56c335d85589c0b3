"""The Dask array backend "hrx": ``dask.config.set({"array.backend": "hrx"})`` makes creation give DeviceArray blocks.

The blocks are made on the workers, where the graph runs: every creation
function passes a zero-size DeviceArray as ``meta`` (or ``like``), and NumPy's
NEP-35 dispatch builds each block like it. The meta travels to a worker by
pickle, which places it on that worker's own device (Note [Serialising device
arrays]), so each block lands where its task runs. Config key ``hrx.placement``
names the placement kind: ``Shared`` (the default), ``NpuLocal``, ``GpuLocal``
or ``HostVisible``.
"""

from __future__ import annotations

import functools
from typing import Any

import dask
import dask.array as da
import numpy as np
from dask.array.backends import ArrayBackendEntrypoint
from dask.array.dispatch import Dispatch

from .. import _serialize
from .._array import DeviceArray
from .._creation import asarray, empty
from .._dask_hooks import register_array
from ..random import Philox4x32

#: ``to_backend("hrx")`` converts blocks through this dispatch (NumPy blocks are uploaded).
to_hrx_dispatch = Dispatch("to_hrx_dispatch")


@to_hrx_dispatch.register(np.ndarray)
def _numpy_to_hrx(data: np.ndarray, **kwargs: Any) -> DeviceArray:
    return asarray(data, placement=placement(), **kwargs)


@to_hrx_dispatch.register(DeviceArray)
def _hrx_to_hrx(data: DeviceArray, **kwargs: Any) -> DeviceArray:
    return data


def placement() -> Any:
    """The placement ``hrx.placement`` names, on this process's device."""
    kind = dask.config.get("hrx.placement", "Shared")
    if kind not in _serialize._KINDS:
        raise ValueError(f"hrx.placement: {kind!r} is not one of {', '.join(_serialize._KINDS)}")
    return _serialize._placement_for(kind)


def block_meta(dtype: Any = np.float64, ndim: int = 0) -> DeviceArray:
    """A zero-size DeviceArray in the configured placement: the meta of a backend "hrx" array."""
    return empty((0,) * ndim, np.float64 if dtype is None else dtype, placement=placement())


def _create(name: str, *args: Any, meta: Any = None, **kwargs: Any) -> da.Array:
    with dask.config.set({"array.backend": "numpy"}):
        return getattr(da, name)(*args, meta=block_meta() if meta is None else meta, **kwargs)


class RandomState:
    """NumPy's legacy ``RandomState`` methods drawing DeviceArrays, for ``da.random.RandomState``.

    Dask seeds one per block from its state data; the draws are hrxarray's
    device generator (Philox) seeded with that data, so a seed gives the same
    blocks on every host (the streams are not NumPy's).
    """

    def __init__(self, seed: Any = None) -> None:
        from .. import random

        self._rng = random.default_rng(np.random.SeedSequence(np.asarray(seed, dtype=np.uint32).tolist())
                                       if seed is not None else None)

    # The blocks are returned pending; on a distributed worker the task's timing
    # still covers the draw (Note [Pending results and the Dask scheduler]).
    def random_sample(self, size: Any = None) -> DeviceArray:
        return self._rng.random(size, placement=placement())

    random = random_sample

    def standard_normal(self, size: Any = None) -> DeviceArray:
        return self._rng.standard_normal(size, placement=placement())

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> DeviceArray:
        return self._rng.normal(loc, scale, size, placement=placement())

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None) -> DeviceArray:
        return self._rng.uniform(low, high, size, placement=placement())

    def randint(self, low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64) -> DeviceArray:
        return self._rng.integers(low, high, size, dtype=dtype, placement=placement())


class HrxBackendEntrypoint(ArrayBackendEntrypoint):
    """Dask's array backend "hrx" (entry point ``dask.array.backends``)."""

    def __init__(self) -> None:
        register_array()

    @classmethod
    def to_backend_dispatch(cls) -> Dispatch:
        return to_hrx_dispatch

    @classmethod
    def to_backend(cls, data: da.Array, **kwargs: Any) -> da.Array:
        if isinstance(data._meta, DeviceArray):
            return data
        return data.map_blocks(to_hrx_dispatch, meta=block_meta(data.dtype, data.ndim), **kwargs)

    @property
    def RandomState(self) -> type:
        return RandomState

    @property
    def default_bit_generator(self) -> Any:
        # Dask spawns one per block (type(bg)(seed_seq)) and calls
        # hrxarray.random.default_rng(bg) in the block's task.
        return Philox4x32

    ones = staticmethod(functools.partial(_create, "ones"))
    zeros = staticmethod(functools.partial(_create, "zeros"))
    empty = staticmethod(functools.partial(_create, "empty"))
    full = staticmethod(functools.partial(_create, "full"))

    @staticmethod
    def arange(*args: Any, like: Any = None, **kwargs: Any) -> da.Array:
        with dask.config.set({"array.backend": "numpy"}):
            return da.arange(*args, like=block_meta() if like is None else like, **kwargs)
