"""Host-side BF16 and BFP16 numerics: the emulated devices' own kernels on NumPy arrays.

These functions run the very C++ kernels the emulated NPU and GPU run, so they
double as reference tools: what ``bfp16_quantize`` returns is what an NPU
kernel fed with bfp16ebs8 data sees. The formats are defined in DESIGN.md
("Numerics"):

* **BF16** is ``ml_dtypes.bfloat16``. float32 -> bf16 rounds to nearest even,
  keeps bf16 subnormals, overflows to Inf, and turns NaN into the quiet NaN
  0x7FC0 with its sign (as ml_dtypes does). bf16 -> float32 is exact.
* **BFP16** is bfp16ebs8: blocks of 8 consecutive values of the last axis, 9
  bytes each, ``[E, m0 .. m7]``. E is the largest biased fp32 exponent field in
  the block, each m is an int8 (two's complement) and stands for
  ``m * 2**(E - 133)``. fp32 subnormal inputs flush to zero (a block of zeros
  and subnormals has E = 0). NaN and Inf have no encoding and are refused.
  ``rounding="floor"`` (the default) rounds mantissas toward -inf, as
  mlir-aie's host reference says the NPU does; ``rounding="even"`` rounds half
  to even and, when a mantissa rounds up to 128, increments E and rounds the
  block again at the doubled scale, as AMD Quark does.
* In a block whose E is 254 (magnitudes near float32's maximum) mantissas
  saturate to [-127, 127] in both roundings, because m = +-128 there would
  decode to +-2**128 = +-Inf (and an E bump to 255 likewise): encoding finite
  values always yields blocks that decode to finite values. This is
  hrxarray's choice for a corner the sources leave open; it differs from
  mlir-aie's floor reference only for values below -127 * 2**121.

Every function accepts any strides (copying to a C-contiguous buffer where the
kernel needs one) and releases the GIL while the kernel runs.
"""

from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np

from . import _core
from ._core import numerics as _k

__all__ = [
    "bfloat16",
    "to_bfloat16",
    "from_bfloat16",
    "bfp16_encode",
    "bfp16_decode",
    "bfp16_quantize",
    "matmul",
    "COMPUTES",
    "ORDERS",
    "BFP16_BLOCK_VALUES",
    "BFP16_BLOCK_BYTES",
    "ROUNDINGS",
]

bfloat16 = np.dtype(ml_dtypes.bfloat16)
"""The bf16 dtype (``ml_dtypes.bfloat16``)."""

BFP16_BLOCK_VALUES = 8
"""Values per bfp16ebs8 block (along the last axis)."""

BFP16_BLOCK_BYTES = 9
"""Bytes per bfp16ebs8 block: the shared exponent E, then 8 int8 mantissas."""

ROUNDINGS = ("floor", "even")
"""The mantissa roundings bfp16_encode accepts; "floor" is the default."""

COMPUTES = ("bf16", "bfp16")
"""The operand formats matmul accepts as ``compute``; "bf16" is the default."""

ORDERS = ("pair", "tile")
"""The accumulation orders matmul accepts as ``order``; "pair" (the devices' order) is the default."""

_F32 = np.dtype(np.float32)
_U8 = np.dtype(np.uint8)
_U16 = np.dtype(np.uint16)


def _c_contiguous(a: np.ndarray) -> np.ndarray:
    """Return ``a`` itself when the kernels can read it in place, else a C-contiguous copy."""
    if a.flags.c_contiguous and a.flags.aligned and a.dtype.isnative:
        return a
    return np.array(a, dtype=a.dtype.newbyteorder("="), order="C")


def _input(x: Any, func: str, dtypes: tuple[np.dtype, ...], hint: str) -> np.ndarray:
    """``x`` as an ndarray of one of ``dtypes`` (byte order aside), else TypeError."""
    a = np.asarray(x)
    native = a.dtype.newbyteorder("=") if a.dtype.byteorder not in ("=", "|") else a.dtype
    if native not in dtypes:
        names = " or ".join(str(d) for d in dtypes)
        raise TypeError(f"{func}() expects a {names} array, got dtype {a.dtype}{hint}")
    return a


def _check_out(out: Any, func: str, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """Validate an ``out=`` argument: an ndarray of ``dtype`` and ``shape``, writeable."""
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{func}(): out must be a numpy.ndarray, got {type(out).__name__}")
    if out.dtype != dtype:
        raise TypeError(f"{func}(): out must have dtype {dtype}, got {out.dtype}")
    if out.shape != shape:
        raise ValueError(f"{func}(): out has shape {out.shape}, but the result has shape {shape}")
    if not out.flags.writeable:
        raise ValueError(f"{func}(): out is read-only")
    return out


def _convert(x: np.ndarray, out: np.ndarray | None, func: str, out_dtype: np.dtype,
             kernel: Any, src_bits: np.dtype, dst_bits: np.dtype) -> np.ndarray:
    """Run an elementwise conversion kernel from ``x`` into ``out`` (allocated if None)."""
    if out is None:
        out = np.empty(x.shape, out_dtype)
    else:
        _check_out(out, func, out_dtype, x.shape)
        if np.may_share_memory(x, out):
            x = x.copy()
    src = _c_contiguous(x)
    direct = out.flags.c_contiguous and out.flags.aligned
    dst = out if direct else np.empty(x.shape, out_dtype)
    kernel(src.view(src_bits), dst.view(dst_bits))
    if not direct:
        out[...] = dst
    return out


def to_bfloat16(x: Any, out: np.ndarray | None = None) -> np.ndarray:
    """Round a float32 array to bfloat16, to nearest even.

    Args:
        x: float32 array (any shape and strides). Other dtypes raise TypeError:
            convert float64 with ``x.astype(np.float32)`` first, knowingly, since
            that rounds twice.
        out: optional ``ml_dtypes.bfloat16`` array of ``x``'s shape to write into.

    Returns:
        The bfloat16 array (``out`` when given). Matches ``x.astype(ml_dtypes.bfloat16)``
        bit for bit: overflow gives Inf, bf16 subnormals are kept, NaN gives the quiet
        NaN 0x7FC0 with the input's sign.

    Raises:
        TypeError: ``x`` is not float32, or ``out`` is not a bfloat16 ndarray.
        ValueError: ``out`` has the wrong shape or is read-only.
    """
    a = _input(x, "to_bfloat16", (_F32,), "; convert it with .astype(numpy.float32) first")
    return _convert(a, out, "to_bfloat16", bfloat16, _k.f32_to_bf16, _F32, np.dtype(np.uint16))


def from_bfloat16(x: Any, out: np.ndarray | None = None) -> np.ndarray:
    """Widen a bfloat16 array to float32 (exact; NaN payloads are kept).

    Args:
        x: ``ml_dtypes.bfloat16`` array (any shape and strides).
        out: optional float32 array of ``x``'s shape to write into.

    Returns:
        The float32 array (``out`` when given).

    Raises:
        TypeError: ``x`` is not bfloat16, or ``out`` is not a float32 ndarray.
        ValueError: ``out`` has the wrong shape or is read-only.
    """
    a = _input(x, "from_bfloat16", (bfloat16,), "")
    return _convert(a, out, "from_bfloat16", _F32, _k.bf16_to_f32, np.dtype(np.uint16), _F32)


def _check_rounding(rounding: Any) -> str:
    """Return ``rounding`` if it is one of ROUNDINGS, else raise ValueError."""
    if not isinstance(rounding, str) or rounding not in ROUNDINGS:
        raise ValueError(f"rounding must be 'floor' or 'even', got {rounding!r}")
    return rounding


def _fmt_index(idx: tuple[int, ...]) -> str:
    """Format an index tuple the way it is written in a subscript: ``0, 3``."""
    return ", ".join(str(int(i)) for i in idx)


def bfp16_encode(x: Any, rounding: str = "floor") -> np.ndarray:
    """Encode float32 (or bfloat16) values as bfp16ebs8 blocks along the last axis.

    Args:
        x: float32 or ``ml_dtypes.bfloat16`` array of shape ``(..., n)`` with ``n`` a
            multiple of 8 (any strides). bf16 input is widened exactly first.
        rounding: ``"floor"`` (default; toward -inf, mlir-aie's reference) or
            ``"even"`` (half to even with an exponent bump on overflow, AMD Quark).

    Returns:
        uint8 array of shape ``(..., n // 8, 9)``; block ``[E, m0 .. m7]`` stands for
        ``m_i * 2**(E - 133)`` with the ``m_i`` read as int8.

    Raises:
        TypeError: ``x`` is not float32 or bfloat16.
        ValueError: bad ``rounding``; ``x`` is 0-d; ``n`` is not a multiple of 8; or
            ``x`` holds NaN or Inf (the message names the first offending block).
    """
    _check_rounding(rounding)
    a = _input(x, "bfp16_encode", (_F32, bfloat16), "")
    if a.dtype == bfloat16:
        a = from_bfloat16(a)
    if a.ndim == 0:
        raise ValueError("bfp16_encode() needs an array with at least one axis; blocks run along the last")
    n = a.shape[-1]
    if n % BFP16_BLOCK_VALUES:
        where = ""
        if a.size:
            block = (0,) * (a.ndim - 1) + (n // BFP16_BLOCK_VALUES,)
            where = (f": block ({_fmt_index(block)}) of the first row is incomplete "
                     f"(only {n % BFP16_BLOCK_VALUES} values)")
        raise ValueError(f"bfp16_encode(): the last axis has length {n}, not a multiple of 8{where}")
    src = _c_contiguous(a)
    blocks_shape = a.shape[:-1] + (n // BFP16_BLOCK_VALUES,)
    out = np.empty(blocks_shape + (BFP16_BLOCK_BYTES,), _U8)
    bad = _k.bfp16_encode(src, out, rounding)
    if bad >= 0:
        block = np.unravel_index(bad, blocks_shape)
        vals = src.reshape(-1)[bad * BFP16_BLOCK_VALUES:(bad + 1) * BFP16_BLOCK_VALUES]
        j = int(np.flatnonzero(~np.isfinite(vals))[0])
        first = block[:-1] + (block[-1] * BFP16_BLOCK_VALUES + j,)
        lo = block[-1] * BFP16_BLOCK_VALUES
        span = ", ".join([str(int(i)) for i in block[:-1]] + [f"{lo}:{lo + BFP16_BLOCK_VALUES}"])
        raise ValueError(
            f"bfp16_encode(): bfp16 has no encoding for NaN or Inf; the first offending block is "
            f"block ({_fmt_index(block)}), x[{span}], where x[{_fmt_index(first)}] = {vals[j]}")
    return out


def bfp16_decode(blocks: Any, out: np.ndarray | None = None) -> np.ndarray:
    """Decode bfp16ebs8 blocks to float32.

    Args:
        blocks: uint8 array of shape ``(..., nb, 9)`` (any strides), as bfp16_encode
            returns. Every byte pattern decodes: ``m_i * 2**(E - 133)`` exactly, which
            overflows to +-Inf only for E = 255 with ``|m_i| >= 64`` or E = 254 with
            ``m_i = -128`` (patterns the encoder never writes).
        out: optional float32 array of shape ``(..., nb * 8)`` to write into. Reusing
            one saves the page faults of a fresh large result, which cost more than
            the decode itself (about 3.6 ms per 64 MiB here).

    Returns:
        float32 array of shape ``(..., nb * 8)`` (``out`` when given).

    Raises:
        TypeError: ``blocks`` is not uint8, or ``out`` is not a float32 ndarray.
        ValueError: ``blocks`` has fewer than 2 axes or its last axis is not 9 long;
            ``out`` has the wrong shape or is read-only.
    """
    a = _input(blocks, "bfp16_decode", (_U8,), "")
    if a.ndim < 2 or a.shape[-1] != BFP16_BLOCK_BYTES:
        raise ValueError(f"bfp16_decode() expects blocks of shape (..., nb, 9), got shape {a.shape}")
    shape = a.shape[:-2] + (a.shape[-2] * BFP16_BLOCK_VALUES,)
    if out is None:
        out = np.empty(shape, _F32)
    else:
        _check_out(out, "bfp16_decode", _F32, shape)
        if np.may_share_memory(a, out):
            a = a.copy()
    src = _c_contiguous(a)
    direct = out.flags.c_contiguous and out.flags.aligned
    dst = out if direct else np.empty(shape, _F32)
    _k.bfp16_decode(src, dst)
    if not direct:
        out[...] = dst
    return out


def bfp16_quantize(x: Any, rounding: str = "floor") -> np.ndarray:
    """Round float32 (or bfloat16) values through bfp16ebs8: ``bfp16_decode(bfp16_encode(x, rounding))``.

    This is what an NPU kernel fed with bfp16 data sees of ``x``, and what a
    reference computation should use in its place.

    Args:
        x: float32 or ``ml_dtypes.bfloat16`` array of shape ``(..., n)``, ``n`` a multiple of 8.
        rounding: ``"floor"`` (default) or ``"even"``, as for bfp16_encode.

    Returns:
        float32 array of ``x``'s shape.

    Raises:
        TypeError, ValueError: as bfp16_encode.
    """
    return bfp16_decode(bfp16_encode(x, rounding))


def _matmul_operand(x: Any, name: str) -> np.ndarray:
    """A matmul operand as a bfloat16 ndarray with at least 2 axes (float32 is rounded to bf16)."""
    a = _input(x, "matmul", (bfloat16, _F32), f" for {name}; convert it with .astype(numpy.float32) first")
    if a.ndim < 2:
        raise ValueError(f"matmul(): {name} must have at least 2 axes (..., rows, cols), got shape {a.shape}")
    return to_bfloat16(a) if a.dtype != bfloat16 else a


def _bfp16_along_k(x: np.ndarray, axis: int, name: str, rounding: str) -> np.ndarray:
    """``x`` (bf16) quantised through bfp16ebs8 in blocks along ``axis``, back as bf16 (exact)."""
    moved = np.moveaxis(x, axis, -1)
    try:
        q = bfp16_quantize(moved, rounding)
    except ValueError as e:
        raise ValueError(f"matmul(compute='bfp16'): cannot quantise {name} along K: {e}") from None
    # Every bfp16 value m * 2**(E - 133), |m| <= 128, has at most 8 significant bits
    # (and bf16 has float32's exponent range), so this rounding is exact.
    return np.moveaxis(to_bfloat16(q), -1, axis)


def matmul(a: Any, b: Any, *, compute: str = "bf16", order: str = "pair", rounding: str = "floor",
           out: np.ndarray | None = None) -> np.ndarray:
    """Matrix product of bfloat16 operands with float32 accumulation, as the emulated NPU computes it.

    ``a @ b`` with NumPy's batch broadcasting: ``a`` is ``(..., M, K)``, ``b`` is
    ``(..., K, N)``, the result ``(..., M, N)`` float32, where the leading axes
    broadcast against each other. (1-d operands are not promoted: give both at
    least 2 axes.)

    Numerics (bit-identical on every host CPU, x86-64 with or without AVX-512 or AMX,
    and arm64): every output element is one fp32 accumulator that starts at +0.0.
    With ``order="pair"`` (the default, and what ``hx.matmul`` and the emulated
    NPU compute) it adds the K products one at a time, each step a fused
    multiply-add rounded to nearest even, in the order k = 1, 0, 3, 2, 5, 4, ...:
    pairs in ascending order, the odd index of a pair first, and after an odd K
    one more step adding ``0 * 0`` (which only turns a flushed -0 into +0). That
    is exactly what the VDPBF16PS instruction does, so it runs at that
    instruction's full rate where the CPU has AVX512-BF16.

    ``order="tile"`` takes the order AMX's TDPBF16PS defines instead: K in
    chunks of 32 (the last one shorter); per chunk, the even-k products and the
    odd-k products each form a chain of fused multiply-adds from +0 in
    ascending k (after an odd K, ``0 * 0`` is the odd chain's last step), and
    the accumulator becomes ``acc + (even + odd)``. On a CPU with AMX-BF16
    (where Linux grants the tile state and the tiles reproduced the software
    model of the tile unit at first use) products of at least 32 x 64 x 32 run
    on the tiles, at their rate; everywhere else the same steps run as fp32
    FMAs, with the same bits. ``HRXARRAY_AMX=0`` (set before the first matmul)
    keeps the tiles off. The two orders give different bits for the same
    operands, within the same error bound.

    bf16 x bf16 products are exact in fp32 (unless below 2**-126), so
    integer-valued inputs give exact results in both orders while partial sums
    stay below 2**24. There are no denormals: subnormal operands count as zero
    and subnormal results flush to zero. Which NaN (sign, payload) a NaN operand
    yields is unspecified. The error against exact arithmetic is at most about
    ``K * 2**-24 * sum_k |a[i, k] * b[k, j]|``.

    Args:
        a, b: ``ml_dtypes.bfloat16`` or float32 arrays (any strides); float32 is
            rounded to bf16 first (to nearest even), as ``to_bfloat16`` does.
        compute: ``"bf16"`` (default) multiplies the bf16 values; ``"bfp16"``
            first quantises ``a`` in 8-value blocks along its rows and ``b`` along
            its columns (K is the blocked axis of both, as on the NPU), with
            ``bfp16_quantize`` semantics. K must then be a multiple of 8.
        order: ``"pair"`` (default) or ``"tile"``: the accumulation order above.
        rounding: mantissa rounding for ``compute="bfp16"``: ``"floor"`` (default)
            or ``"even"``; checked but unused for ``"bf16"``.
        out: optional float32 array of the result's shape to write into.

    Returns:
        The float32 product (``out`` when given).

    Raises:
        TypeError: an operand is neither bfloat16 nor float32, or ``out`` is not a
            float32 ndarray.
        ValueError: fewer than 2 axes, K differs between ``a`` and ``b``, the batch
            shapes do not broadcast, bad ``compute``, ``order`` or ``rounding``, ``out`` has
            the wrong shape or is read-only, or (bfp16) K is not a multiple of 8 or
            an operand holds NaN or Inf.

    The GIL is released while the kernel runs; large products use a small
    thread pool (``HRXARRAY_NUM_THREADS`` caps it).
    """
    if not isinstance(compute, str) or compute not in COMPUTES:
        raise ValueError(f"matmul(): compute must be 'bf16' or 'bfp16', got {compute!r}")
    if not isinstance(order, str) or order not in ORDERS:
        raise ValueError(f"matmul(): order must be 'pair' or 'tile', got {order!r}")
    _check_rounding(rounding)
    x = _matmul_operand(a, "a")
    y = _matmul_operand(b, "b")
    m, k = x.shape[-2:]
    k2, n = y.shape[-2:]
    if k != k2:
        raise ValueError(f"matmul(): a has shape {x.shape} and b has shape {y.shape}; "
                         f"a's last axis ({k}) must equal b's second-to-last ({k2})")
    try:
        batch = _core._broadcast_shapes([x.shape[:-2], y.shape[:-2]], "matmul")
    except ValueError:
        raise ValueError(f"matmul(): the batch shapes of a {x.shape[:-2]} and b {y.shape[:-2]} "
                         "do not broadcast") from None
    if compute == "bfp16":
        if k % BFP16_BLOCK_VALUES:
            raise ValueError(f"matmul(compute='bfp16'): K = {k} is not a multiple of 8 "
                             "(bfp16 blocks run along K)")
        x = _bfp16_along_k(x, -1, "a", rounding)
        y = _bfp16_along_k(y, -2, "b", rounding)
    shape = batch + (m, n)
    if out is None:
        out = np.empty(shape, _F32)
    else:
        _check_out(out, "matmul", _F32, shape)
    # Each operand keeps its own batch shape (no broadcast copies); index maps
    # tell the kernel which of its matrices feeds each output matrix.
    size = math.prod(batch)
    maps = []
    for op in (x, y):
        if op.shape[:-2] == batch:
            maps.append(None)
        else:
            ids = np.arange(math.prod(op.shape[:-2]), dtype=np.int64).reshape(op.shape[:-2])
            maps.append(np.ascontiguousarray(np.broadcast_to(ids, batch)).reshape(size))
    xs, ys = _c_contiguous(x), _c_contiguous(y)
    direct = out.flags.c_contiguous and out.flags.aligned and not (
        np.may_share_memory(out, xs) or np.may_share_memory(out, ys))
    dst = out if direct else np.empty(shape, _F32)
    _k.matmul_bf16(xs.view(_U16), ys.view(_U16), dst, m, k, n, maps[0], maps[1], order=order)
    if not direct:
        out[...] = dst
    return out
