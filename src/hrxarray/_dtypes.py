"""The dtypes of hrxarray arrays: NumPy's numeric dtypes (complex64 and complex128 included), ml_dtypes' bfloat16, and bfp16.

``bfp16`` is not a NumPy dtype: it is the NPU's bfp16ebs8 block format (8
values of the last axis share an exponent, 9 bytes per block; DESIGN.md,
"Numerics"). Arrays of it are storage: they convert with ``astype``, feed
``matmul``, and decode to float32 on host access; ``x.blocks()`` gives the
raw ``uint8`` blocks.
"""

from __future__ import annotations

import numpy as np

__all__ = ["bfp16", "BlockDType", "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16",
           "uint32", "uint64", "float16", "float32", "float64", "complex64", "complex128"]


class BlockDType:
    """A block floating-point storage format (``hx.bfp16``): not a NumPy dtype."""

    __slots__ = ("name", "block_values", "block_bytes")

    def __init__(self, name: str, block_values: int, block_bytes: int):
        self.name = name
        self.block_values = block_values
        self.block_bytes = block_bytes

    @property
    def itemsize(self) -> int:
        """Bytes per block (9 for bfp16)."""
        return self.block_bytes

    @property
    def kind(self) -> str:
        """'V': raw bytes as far as NumPy is concerned."""
        return "V"

    def __repr__(self) -> str:
        return f"hrxarray.{self.name}"

    __str__ = __repr__

    def __reduce__(self):
        return (_block_dtype, (self.name,))


def _block_dtype(name):
    if name == "bfp16":
        return bfp16
    raise ValueError(name)


bfp16 = BlockDType("bfp16", 8, 9)
"""bfp16ebs8: blocks of 8 values along the last axis in 9 bytes [E, m0..m7]."""

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
