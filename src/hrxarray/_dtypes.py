"""The dtypes of hrxarray arrays: NumPy's numeric dtypes (complex64 and complex128 included), ml_dtypes' bfloat16, and bfp16.

``bfp16`` is not a NumPy dtype: it is the NPU's bfp16ebs8 block format (8
values of the last axis share an exponent, 9 bytes per block; DESIGN.md,
"Numerics"). Arrays of it are storage: they convert with ``astype``, feed
``matmul``, and decode to float32 on host access; ``x.blocks()`` gives the
raw ``uint8`` blocks.
"""

from __future__ import annotations

import numpy as np

# hx.bfp16 is the core's object (Note [bfp16 is the core's dtype] in ext/bind/bind_array.cpp):
# one instance, whose sizes are the kernels' constants.
from ._core import BlockDType, bfp16

__all__ = ["bfp16", "BlockDType", "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16",
           "uint32", "uint64", "float16", "float32", "float64", "complex64", "complex128"]

bool_ = np.dtype(bool)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
float16 = np.dtype(np.float16)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)
