"""Registering DeviceArray with Dask without importing Dask.

Note [Dask registrations]: hrxarray must not import Dask (an optional extra, and
a second of import time), yet a DeviceArray must be a registered Dask chunk
type whenever both are in use, on the client and on every worker, with no user
code. Three hooks get there, whichever is imported first:

- :func:`install` (run by ``hrxarray/__init__``) registers at once with what is
  already imported, and otherwise puts a finder on ``sys.meta_path`` that runs
  the registration right after ``dask.sizeof``, ``dask.array`` or
  ``distributed.protocol`` finish executing;
- the ``dask.sizeof`` entry point (:func:`register_sizeof`) makes ``import
  dask`` import hrxarray on a worker, so ``install`` runs there too;
- the ``dask.array.backends`` entry point ``hrx`` (hrxarray.dask) imports
  hrxarray.dask, which registers.

The registrations below import Dask inside their bodies only.
"""

from __future__ import annotations

import functools
import importlib.abc
import math
import sys
from typing import Any, Callable

import numpy as np

from . import _serialize
from ._array import DeviceArray, to_numpy
from ._core import _ufuncs
from ._creation import empty, full
from ._indexing import take
from ._linear_algebra import einsum, tensordot
from ._manipulation import concatenate
from ._statistical import sum as hx_sum


# Module -> registration to run once it has executed. dask.sizeof is the first
# Dask module anything imports (dask/_task_spec.py imports it).
_HOOKS: dict[str, Callable[[], None]] = {
    "dask.sizeof": lambda: register_sizeof_dispatch(),
    "dask.array": lambda: register_array(),
    "distributed.protocol": lambda: register_serialize(),
}


def _loaded(name: str) -> bool:
    module = sys.modules.get(name)
    spec = getattr(module, "__spec__", None)
    return module is not None and not getattr(spec, "_initializing", False)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the real loader of a hooked module so the hook runs after it executes."""

    def __init__(self, pending: dict[str, Callable[[], None]]):
        self.pending = pending

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        hook = self.pending.get(name)
        if hook is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)
            if self.pending.pop(name, None) is not None:
                _run(hook)
                if not self.pending and self in sys.meta_path:
                    sys.meta_path.remove(self)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _run(hook: Callable[[], None]) -> None:
    try:
        hook()
    except ImportError:
        pass  # a partial Dask install (dask without dask.array's numpy extra): nothing to register


def install() -> None:
    """Register with the Dask modules already imported; hook the others (Note [Dask registrations])."""
    pending = {}
    for name, hook in _HOOKS.items():
        if _loaded(name):
            _run(hook)
        else:
            pending[name] = hook
    if pending and not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport(pending))


def register_sizeof(sizeof: Any) -> None:
    """The ``dask.sizeof`` entry point: a DeviceArray's size is its byte count, once its writers have finished.

    Importing this module imported hrxarray, whose ``install`` hooks the rest.
    """
    sizeof.register(DeviceArray)(_settled_nbytes)


# Note [Pending results and the Dask scheduler]: hrxarray's operations return
# at once, so a Dask task whose result is a pending DeviceArray ends before its
# device work does, and distributed times it at ~0 s. The scheduler then
# believes the task's worker has no backlog: it never moves a task to an idle
# worker to spare a busy one (work stealing skips tasks that short), and every
# task whose inputs live on one worker runs there
# (tests/test_dask_cluster.py: test_pending_results_spread_over_workers).
# distributed sizes a task's result (dask.sizeof) inside the window it times
# (worker._run_task_simple: sizeof(result) is taken before the meter stops), so
# the size waits for the array's writers: the measured duration is then the
# device work's, and a busy worker looks busy. A settled array costs one
# ready() check. A failed writer is not raised here (outside the task's own
# error handling it would take the worker down): the error surfaces where the
# result is used, as it does without Dask.
def _settled_nbytes(x: Any) -> int:
    if not x.ready():
        try:
            x.block_until_ready()
        except Exception:  # noqa: BLE001 (the consumer of the result meets the error)
            pass
    return int(x.nbytes)


@functools.cache
def register_sizeof_dispatch() -> None:
    """The scheduler's size of a block: its byte count (``sys.getsizeof`` otherwise)."""
    from dask.sizeof import sizeof

    register_sizeof(sizeof)


def _numel(x: DeviceArray, **kwargs: Any) -> Any:
    # Dask's mean divides a block's total by this count: a DeviceArray of the
    # count keeps the division on the device (NumPy's default moves it to the host).
    axis = kwargs.get("axis")
    keepdims = kwargs.get("keepdims", False)
    dtype = kwargs.get("dtype", np.float64)
    axes = tuple(range(x.ndim)) if axis is None else (axis if isinstance(axis, (tuple, list)) else (axis,))
    axes = tuple(a % x.ndim for a in axes) if x.ndim else ()
    count = math.prod(x.shape[a] for a in axes)
    shape = tuple(1 if d in axes else n for d, n in enumerate(x.shape)) if keepdims else \
        tuple(n for d, n in enumerate(x.shape) if d not in axes)
    return full(shape, count, dtype=dtype, placement=x.placement)


def _nannumel(x: DeviceArray, **kwargs: Any) -> Any:
    return hx_sum(_ufuncs["logical_not"](_ufuncs["isnan"](x)), **kwargs)


def _to_numpy(x: DeviceArray, **kwargs: Any) -> np.ndarray:
    return to_numpy(x, **kwargs)


def _einsum(*args: Any, **kwargs: Any) -> Any:
    # Dask passes NumPy's einsum options; hrxarray's einsum has no memory order or casting.
    for k in ("casting", "order", "optimize"):
        kwargs.pop(k, None)
    dtype = kwargs.pop("dtype", None)
    out = einsum(*args, **kwargs)
    return out if dtype is None else out.astype(dtype, copy=False)


@functools.cache
def register_array() -> None:
    """``register_chunk_type`` and the compute-time dispatch of dask.array for DeviceArray."""
    import dask.array as da
    from dask.array import dispatch

    da.register_chunk_type(DeviceArray)
    dispatch.concatenate_lookup.register(DeviceArray, concatenate)
    dispatch.take_lookup.register(DeviceArray, take)
    dispatch.tensordot_lookup.register(DeviceArray, tensordot)
    dispatch.einsum_lookup.register(DeviceArray, _einsum)
    dispatch.empty_lookup.register(DeviceArray, empty)
    dispatch.divide_lookup.register(DeviceArray, _ufuncs["divide"])
    dispatch.numel_lookup.register(DeviceArray, _numel)
    dispatch.nannumel_lookup.register(DeviceArray, _nannumel)
    dispatch.to_numpy_dispatch.register(DeviceArray, _to_numpy)
    register_sizeof_dispatch()
    _route_matmul()


# Note [Dask's @ on narrow floats]: Dask's matmul multiplies each (i, k, j)
# block pair with np.matmul, which rounds the block product to the result dtype,
# then adds the k partials with np.add(dtype=result dtype). In bfloat16 that is
# one rounding per k block, so the error grows with the number of k blocks
# (twice the error of one rounding in 128-blocks at 512²), where the NPU keeps
# float32 partials and rounds once.
# No dispatch reaches that sum: Array.__matmul__, __rmatmul__ and Dask's
# __array_ufunc__ for np.matmul all import dask.array.routines.matmul when
# called, and da.matmul is that function bound at import. So the registration
# replaces both names with a wrapper that sends a bfloat16 or float16 product
# of 1-d/2-d operands or of stacks with one batch shape, one of them with
# DeviceArray blocks, to hrxarray.dask.matmul (hrxarray/_dask_matmul.py), and calls Dask's function (kept
# as __wrapped__) for everything else: NumPy blocks, wider dtypes, batches that
# broadcast.
def _narrow_device_product(a: Any, b: Any) -> bool:
    import dask.array as da

    if not (isinstance(a, da.Array) or isinstance(b, da.Array)):
        return False
    if not (isinstance(getattr(a, "_meta", a), DeviceArray) or isinstance(getattr(b, "_meta", b), DeviceArray)):
        return False
    dims = (getattr(a, "ndim", None), getattr(b, "ndim", None))
    if not all(isinstance(d, int) and d >= 1 for d in dims):
        return False
    from ._dask_matmul import _stacks_match

    if not _stacks_match(a.shape, b.shape):
        return False  # batches that broadcast: Dask's own algorithm
    try:
        dtype = np.result_type(a.dtype, b.dtype)
    except (AttributeError, TypeError):
        return False
    return dtype.kind == "f" and dtype.itemsize == 2 or dtype.name == "bfloat16"


def _route_matmul() -> None:
    import dask.array as da
    from dask.array import routines

    dask_matmul = routines.matmul
    if getattr(dask_matmul, "_hrx_routed", False):
        return

    @functools.wraps(dask_matmul)
    def matmul(a: Any, b: Any) -> Any:
        if _narrow_device_product(a, b):
            from ._dask_matmul import matmul as device_matmul

            return device_matmul(a, b)
        return dask_matmul(a, b)

    matmul._hrx_routed = True  # type: ignore[attr-defined]
    routines.matmul = matmul
    if getattr(da, "matmul", None) is dask_matmul:
        da.matmul = matmul


def _serialize_frames(x: DeviceArray) -> tuple[dict, list]:
    header, frame = _serialize.dumps(x, "dask_serialize")
    return header, [frame.data]


def _deserialize_frames(header: dict, frames: list) -> DeviceArray:
    return _serialize.loads_frames(header, frames)


@functools.cache
def register_serialize() -> None:
    """distributed's ``dask`` serialiser family: the same path as pickle (Note [Serialising device arrays])."""
    from distributed.protocol import dask_deserialize, dask_serialize

    dask_serialize.register(DeviceArray)(_serialize_frames)
    dask_deserialize.register(DeviceArray)(_deserialize_frames)
