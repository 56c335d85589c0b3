"""
Raw BF16/BFP16 kernels on C-contiguous arrays (private; use hrxarray.numerics).
"""

from typing import Annotated

import numpy
from numpy.typing import NDArray


def f32_to_bf16(src: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], dst: Annotated[NDArray[numpy.uint16], dict(order='C', device='cpu')], *, portable: bool = False) -> None:
    """
    Round float32 src to bf16 bit patterns in dst (uint16), to nearest even;
    NaN becomes the quiet NaN 0x7FC0 with its sign.
    """

def bf16_to_f32(src: Annotated[NDArray[numpy.uint16], dict(order='C', device='cpu', writable=False)], dst: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu')], *, portable: bool = False) -> None:
    """Widen bf16 bit patterns src (uint16) to float32 dst, exactly."""

def bfp16_encode(src: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], dst: Annotated[NDArray[numpy.uint8], dict(order='C', device='cpu')], rounding: str, *, portable: bool = False) -> int:
    """
    Encode float32 src (8 values per block) into bfp16ebs8 blocks in dst
    (uint8, 9 bytes per block) with rounding 'floor' or 'even'. Returns -1,
    or the index of the first block holding NaN/Inf (dst then unspecified).
    """

def bfp16_decode(src: Annotated[NDArray[numpy.uint8], dict(order='C', device='cpu', writable=False)], dst: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu')], *, portable: bool = False) -> None:
    """Decode bfp16ebs8 blocks src (uint8, 9 bytes each) into float32 dst."""

def bfp16_first_nonfinite_block(src: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)]) -> int:
    """
    Index of the first 8-value block of float32 src holding NaN or Inf, or -1.
    """

def matmul_bf16(a: Annotated[NDArray[numpy.uint16], dict(order='C', device='cpu', writable=False)], b: Annotated[NDArray[numpy.uint16], dict(order='C', device='cpu', writable=False)], c: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu')], m: int, k: int, n: int, ia: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu', writable=False)] | None = None, ib: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu', writable=False)] | None = None, *, order: str = 'pair', portable: bool = False, amx_model: bool = False) -> None:
    """
    c[t] = a[ia[t]] @ b[ib[t]] on bf16 bit patterns (uint16) into float32 c:
    a holds (batches of) m x k row-major matrices, b k x n, c m x n. ia / ib
    (int64, one entry per batch of c) default to the identity. fp32 FMA
    accumulation from +0, no denormals; threads for large calls. order='pair'
    (the devices' order): k in pairs, odd index first (1, 0, 3, 2, ...; a 0*0
    step pads an odd K). order='tile': AMX TDPBF16PS's order (per 32 k, even
    and odd chains from +0, then acc + (even + odd)), on the AMX tiles where
    usable, else FMAs; the same bits on every host. portable=True: the
    portable kernels, one thread. amx_model=True (needs order='tile'): the AMX
    tile driver on a software model of the tile unit (slow; for tests).
    """

def matmul_bf16_8x8_batched(a: Annotated[NDArray[numpy.uint16], dict(order='C', device='cpu', writable=False)], b: Annotated[NDArray[numpy.uint16], dict(order='C', device='cpu', writable=False)], c: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu')], *, portable: bool = False) -> None:
    """
    c[t] = a[t] @ b[t] for dense stacks of 8x8 bf16 matrices (uint16) into float32 c.
    """

def matmul_num_threads() -> int:
    """
    Threads a large matmul uses (caller included; HRXARRAY_NUM_THREADS caps it).
    """

def kernel_paths() -> dict:
    """
    The code path each kernel family takes in this process: {'bf16': 'avx512' |
    'avx2' | 'portable', 'bfp16': 'avx512' | 'portable', 'matmul': 'avx512_bf16' |
    'avx512' | 'avx2' | 'portable', 'matmul_tile': 'amx_bf16' | 'amx_model' | 'avx512' |
    'avx2' | 'portable'} ('matmul_tile': large products of order='tile'). The raw kernels'
    portable=True forces the portable path (same results, for comparisons).
    """
