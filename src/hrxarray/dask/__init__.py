"""hrxarray on Dask: DeviceArrays as the blocks of Dask arrays, on dask.distributed workers bound to devices.

Importing hrxarray registers DeviceArray with Dask whenever Dask is imported
too (Note [Dask registrations] in hrxarray/_dask_hooks.py); this module needs
Dask (``pip install hrxarray[dask]``) and adds the parts a user calls.
"""

from __future__ import annotations

from typing import Any

import dask.array as da
import numpy as np

from .._array import DeviceArray, empty, matmul as _hx_matmul
from .._dask_hooks import register_array

register_array()

__all__ = ["matmul"]


def _accumulator(dtype: np.dtype) -> np.dtype:
    # float16/bfloat16 (and integers narrower than 32 bits) sum in float32, as the NPU does.
    return np.result_type(dtype, np.float32)


def _block_matmul(a: DeviceArray, b: DeviceArray, acc: np.dtype) -> DeviceArray:
    # bfloat16 blocks keep the NPU's numerics (exact products, float32 sums);
    # others multiply in the accumulator type. The new middle axis is k's.
    if a.dtype.name != "bfloat16" or b.dtype.name != "bfloat16":
        a, b = a.astype(acc, copy=False), b.astype(acc, copy=False)
    c = _hx_matmul(a, b)
    if c.dtype != acc:
        c = c.astype(acc)
    return c[:, None, :]


def matmul(x: Any, y: Any, *, split_every: int | None = None) -> da.Array:
    """The matrix product of two 2-d Dask arrays of DeviceArray blocks, rounded once.

    Dask's own ``x @ y`` adds the partial products of the k blocks in the
    result dtype (bfloat16 for bfloat16 operands: an error that grows with the
    number of k blocks). Here every (i, k, j) block product is kept in float32
    (the accumulator: ``result_type(dtype, float32)``), the k partials are
    summed on the device in a tree of ``split_every`` at a time, and the sum
    is rounded to ``result_type(x.dtype, y.dtype)`` once at the end.
    """
    x, y = da.asarray(x), da.asarray(y)
    if x.ndim != 2 or y.ndim != 2:
        raise ValueError(f"hrxarray.dask.matmul: both operands must be 2-d, got {x.ndim}-d and {y.ndim}-d")
    if x.shape[1] != y.shape[0]:
        raise ValueError(f"hrxarray.dask.matmul: shapes {x.shape} and {y.shape} are not aligned")
    out_dtype = np.result_type(x.dtype, y.dtype)
    acc = _accumulator(out_dtype)
    if x.chunks[1] != y.chunks[0]:
        y = y.rechunk((x.chunks[1], y.chunks[1]))
    partials = da.blockwise(_block_matmul, "ikj", x, "ik", y, "kj", acc=acc, dtype=acc,
                            adjust_chunks={"k": 1}, concatenate=False, meta=empty((0, 0, 0), acc))
    total = partials.sum(axis=1, dtype=acc, split_every=split_every)
    return total.astype(out_dtype)


from ._backend import HrxBackendEntrypoint, RandomState  # noqa: E402
from ._cluster import DevicePlugin, local_cluster  # noqa: E402

__all__ += ["DevicePlugin", "local_cluster", "HrxBackendEntrypoint", "RandomState"]
