"""``hrxarray.dask.matmul``: the matrix product of Dask arrays of DeviceArray blocks, rounded once.

Its own module below both ``hrxarray.dask`` (which exports it) and ``hrxarray._dask_hooks`` (whose
``@`` routing calls it, Note [Dask's @ on narrow floats]), so neither imports the other. Needs Dask.
"""

from __future__ import annotations

from typing import Any

import dask.array as da
import numpy as np
from dask.base import tokenize

from ._array import DeviceArray
from ._creation import empty
from ._linear_algebra import matmul as _hx_matmul


def _accumulator(dtype: np.dtype) -> np.dtype:
    # float16/bfloat16 sum in float32, as the NPU does. Integers sum in 64 bits:
    # wrapping arithmetic modulo 2**64 truncates to NumPy's wrapped narrow result.
    if dtype.kind in "iu":
        return np.dtype(np.int64 if dtype.kind == "i" else np.uint64)
    if dtype.kind == "b":
        return dtype
    return np.result_type(dtype, np.float32)


def _stacks_match(x_shape: tuple, y_shape: tuple) -> bool:
    """Whether matmul takes operands of these shapes: both 1-d/2-d, or both stacks of one batch shape.

    The plain ``@`` routing (hrxarray/_dask_hooks.py) asks the same question.
    """
    if len(x_shape) > 2 or len(y_shape) > 2:
        return len(x_shape) > 2 and len(y_shape) > 2 and x_shape[:-2] == y_shape[:-2]
    return True


# Blockwise index letters for the batch axes: any but i, j and k.
_BATCH_AXES = "abcdefghlmnopqrstuvwxyz"


def _product(a: DeviceArray, b: DeviceArray, acc: np.dtype) -> DeviceArray:
    # bfloat16 blocks keep the NPU's numerics (exact products, float32 sums);
    # others multiply in the accumulator type.
    if a.dtype.name != "bfloat16" or b.dtype.name != "bfloat16":
        a, b = a.astype(acc, copy=False), b.astype(acc, copy=False)
    c = _hx_matmul(a, b)
    return c if c.dtype == acc else c.astype(acc)


def _row_times_column(a_blocks: list, b_blocks: list, acc: np.dtype, out_dtype: np.dtype) -> DeviceArray:
    """One output block: the k block products in the accumulator, summed pairwise in a tree, rounded once."""
    parts = [_product(a, b, acc) for a, b in zip(a_blocks, b_blocks)]
    while len(parts) > 1:
        parts = [parts[i] + parts[i + 1] if i + 1 < len(parts) else parts[i] for i in range(0, len(parts), 2)]
    # Returned pending: distributed's size of the result waits for it, inside the task's timing
    # (Note [Pending results and the Dask scheduler] in hrxarray/_dask_hooks.py).
    return parts[0].astype(out_dtype, copy=False)


def matmul(x: Any, y: Any) -> da.Array:
    """The matrix product of two Dask arrays of DeviceArray blocks, rounded once.

    Dask's own matmul adds the partial products of the k blocks in the
    result dtype (bfloat16 for bfloat16 operands: an error that grows with the
    number of k blocks). Here each output block is one task on the device that
    holds every (i, k, j) block product in an accumulator (float32 for
    bfloat16 and float16, 64 bits for integers), sums the k partials pairwise
    in a tree, and rounds the sum to ``result_type(x.dtype, y.dtype)`` once.
    Only the operand blocks travel between workers, never the partials. A 1-d
    operand is a row (left) or a column (right) whose axis leaves the result,
    as in ``np.matmul``; operands of more than 2 dimensions are stacks of
    matrices with the same leading (batch) shape, multiplied stack by stack.

    Plain ``x @ y``, ``np.matmul`` and ``da.matmul`` come here too when a
    bfloat16 or float16 product has DeviceArray blocks (Note [Dask's @ on
    narrow floats] in hrxarray/_dask_hooks.py).
    """
    x, y = da.asarray(x), da.asarray(y)
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError("hrxarray.dask.matmul: operands must have at least 1 dimension, got a 0-d array")
    if not _stacks_match(x.shape, y.shape):
        raise ValueError(f"hrxarray.dask.matmul: stacked operands must have the same batch shape, got {x.shape} "
                         f"and {y.shape} (broadcast them first)")
    if x.shape[-1] != y.shape[-2 if y.ndim > 1 else 0]:
        raise ValueError(f"hrxarray.dask.matmul: shapes {x.shape} and {y.shape} are not aligned")
    row, column = x.ndim == 1, y.ndim == 1
    if row:
        x = x[None, :]
    if column:
        y = y[:, None]
    out_dtype = np.result_type(x.dtype, y.dtype)
    acc = _accumulator(out_dtype)
    # y's batch and k axes take x's chunks, so block (b..., i, k) meets (b..., k, j).
    want = x.chunks[:-2] + (x.chunks[-1], y.chunks[-1])
    if y.chunks != want:
        y = y.rechunk(want)
    batch = _BATCH_AXES[:x.ndim - 2]
    name = "hrx-matmul-" + tokenize(x, y, acc, out_dtype)
    z = da.blockwise(_row_times_column, batch + "ij", x, batch + "ik", y, batch + "kj", acc=acc,
                     out_dtype=out_dtype, dtype=out_dtype, concatenate=False, name=name,
                     meta=empty((0,) * x.ndim, out_dtype))
    if row:
        z = z[0]
    if column:
        z = z[..., 0]
    return z
