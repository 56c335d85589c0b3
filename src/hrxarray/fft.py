"""hx.fft: the array API 2025.12 FFT extension.

The transforms are NumPy's pocketfft, called inside a region on the emulated
GPU's compute lane (Note [FFTs through NumPy's pocketfft] in
``ext/core/array/fft.h``): the region enters Python on the lane thread and
calls ``numpy.fft.<name>`` on NumPy views of the arrays' host mappings with
``out=`` (the emulated GPU's memory is host memory), and pocketfft runs
without the GIL. Every call returns a DeviceArray at once; its values
complete asynchronously, ordered after the input's writers by the runtime's
hazards. The cost over NumPy's own call is the region (a GIL acquisition and
two views per call).

Dtypes follow the standard and NumPy 2: complex64 (and float32) in gives
complex64 out (``irfft``/``hfft``: float32), complex128/float64 gives
complex128/float64; no silent upcast. Integer and boolean inputs transform in
float64 (NumPy's rule); float16 and bfloat16 in float32.

``fftfreq``, ``rfftfreq``, ``fftshift`` and ``ifftshift`` are composed of hx
operations (``arange``, ufuncs, slicing, ``concatenate``).
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Sequence

import numpy as np

from . import _core
from ._array import _ARRAY_FUNCTIONS, DeviceArray, _axes, _device
from ._manipulation import concatenate
from ._creation import arange, empty_like
from ._core.elementwise import divide, less, subtract, where

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]

_NORMS = ("backward", "ortho", "forward")
_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128)}
_REAL_OF = {c: r for r, c in _COMPLEX_OF.items()}


def _input(x: Any, op: str, kind: str) -> tuple[DeviceArray, np.dtype]:
    """x as a DeviceArray and the dtype pocketfft computes it in (float32/64, complex64/128; complex
    for the c2r transforms). Converting is left to the caller, after every other check."""
    x = _device(x, op)
    dt = x.dtype
    if not isinstance(dt, np.dtype):
        raise TypeError(f"{op}: x has dtype {dt}, which has no arithmetic; convert with astype(hx.float32)")
    if dt.kind == "c" and kind == "r2c":
        raise TypeError(f"{op}: x must be real-valued, got {dt}")
    if dt.kind in "biu":
        dt = np.dtype(np.float64)
    elif dt.kind != "c" and dt.itemsize == 2:  # float16, bfloat16 (ml_dtypes kind "V")
        dt = np.dtype(np.float32)
    if kind == "c2r":
        dt = _COMPLEX_OF.get(dt, dt)
    return x, dt


def _norm(norm: str | None, op: str) -> str:
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise ValueError(f"{op}: norm must be 'backward', 'ortho' or 'forward', got {norm!r}")
    return norm


def _axis(axis: Any, ndim: int, op: str) -> int:
    """One axis (an integer, not a sequence) in [0, ndim), through the one axis normaliser."""
    return _axes(operator.index(axis), ndim, op)[0]


def _length(n: Any, op: str) -> int:
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"{op}: invalid number of data points ({n}) specified; it must be at least 1")
    return n


def _run(op: str, x: DeviceArray, shape: tuple[int, ...], dtype: np.dtype,
         call: Callable[[np.ndarray, np.ndarray], Any]) -> DeviceArray:
    out = empty_like(x, dtype, shape=shape)  # x's placement on x's runtime
    if out.size:
        _core._fft_region(call, x, out, op)
    return out


def _one_d(op: str, x: Any, n: int | None, axis: int, norm: str, kind: str) -> DeviceArray:
    """kind: 'c2c' (fft, ifft), 'r2c' (rfft, ihfft), 'c2r' (irfft, hfft)."""
    a, work = _input(x, op, kind)
    if a.ndim == 0:
        raise ValueError(f"{op}: x must have at least one dimension")
    ax = _axis(axis, a.ndim, op)
    norm = _norm(norm, op)
    m = a.shape[ax]
    if n is None:
        n = 2 * (m - 1) if kind == "c2r" else m
    n = _length(n, op)
    a = a.astype(work, copy=False)
    shape = list(a.shape)
    shape[ax] = n // 2 + 1 if kind == "r2c" else n
    if kind == "c2c":
        dt = _COMPLEX_OF.get(a.dtype, a.dtype)
    elif kind == "r2c":
        dt = _COMPLEX_OF[a.dtype]
    else:
        dt = _REAL_OF[a.dtype]
    if op == "hfft":
        # numpy.fft.hfft drops its out= (NumPy 2.4): its definition, irfft of the conjugate, is called instead.
        swapped = {"backward": "forward", "forward": "backward"}.get(norm, norm)
        return _run(op, a, tuple(shape), dt,
                    lambda i, o: np.fft.irfft(np.conjugate(i), n=n, axis=ax, norm=swapped, out=o))
    f = getattr(np.fft, op)
    return _run(op, a, tuple(shape), dt, lambda i, o: f(i, n=n, axis=ax, norm=norm, out=o))


def _n_d(op: str, x: Any, s: Sequence[int] | None, axes: Sequence[int] | None, norm: str, kind: str) -> DeviceArray:
    a, work = _input(x, op, kind)
    norm = _norm(norm, op)
    if axes is None:
        axes = list(range(a.ndim)) if s is None else list(range(a.ndim - len(s), a.ndim))
    else:
        axes = [_axis(v, a.ndim, op) for v in axes]
    if len(set(axes)) != len(axes):
        raise ValueError(f"{op}: repeated axis in axes {axes!r}")
    if s is None:
        s = [a.shape[v] for v in axes]
        if kind == "c2r" and axes:
            s[-1] = 2 * (a.shape[axes[-1]] - 1)
    else:
        s = [operator.index(v) for v in s]
        if len(s) != len(axes):
            raise ValueError(f"{op}: s and axes must have the same length, got {s!r} and {axes!r}")
        s = [a.shape[v] if n == -1 else n for n, v in zip(s, axes)]
    for n in s:
        _length(n, op)
    a = a.astype(work, copy=False)
    if not axes:
        if kind == "c2c":
            return a.copy()
        raise ValueError(f"{op}: at least one axis must be transformed")
    shape = list(a.shape)
    for n, v in zip(s, axes):
        shape[v] = n
    if kind == "r2c":
        shape[axes[-1]] = s[-1] // 2 + 1
    dt = _COMPLEX_OF.get(a.dtype, a.dtype) if kind != "c2r" else _REAL_OF[a.dtype]
    f = getattr(np.fft, op)
    # numpy.fft's n-dimensional transforms pass out= to every per-axis step, which fails when s pads or
    # crops an axis transformed before the last (NumPy 2.4): they write a temporary, copied into out.
    return _run(op, a, tuple(shape), dt, lambda i, o: np.copyto(o, f(i, s=s, axes=axes, norm=norm)))


def fft(x: DeviceArray, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> DeviceArray:
    """The one-dimensional discrete Fourier transform along ``axis``, zero-padded or cropped to ``n``."""
    return _one_d("fft", x, n, axis, norm, "c2c")


def ifft(x: DeviceArray, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> DeviceArray:
    """The one-dimensional inverse discrete Fourier transform along ``axis``."""
    return _one_d("ifft", x, n, axis, norm, "c2c")


def rfft(x: DeviceArray, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> DeviceArray:
    """The one-dimensional transform of real ``x``: the ``n // 2 + 1`` non-negative frequencies."""
    return _one_d("rfft", x, n, axis, norm, "r2c")


def irfft(x: DeviceArray, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> DeviceArray:
    """The inverse of ``rfft``: ``n`` (default ``2 * (m - 1)``) real values along ``axis``."""
    return _one_d("irfft", x, n, axis, norm, "c2r")


def hfft(x: DeviceArray, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> DeviceArray:
    """The transform of a signal with Hermitian symmetry (its half in ``x``): ``n`` real values."""
    return _one_d("hfft", x, n, axis, norm, "c2r")


def ihfft(x: DeviceArray, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> DeviceArray:
    """The inverse of ``hfft`` for real ``x``: ``n // 2 + 1`` complex values."""
    return _one_d("ihfft", x, n, axis, norm, "r2c")


def fftn(x: DeviceArray, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str = "backward") -> DeviceArray:
    """The n-dimensional discrete Fourier transform over ``axes`` (all by default), sizes ``s``."""
    return _n_d("fftn", x, s, axes, norm, "c2c")


def ifftn(x: DeviceArray, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str = "backward") -> DeviceArray:
    """The n-dimensional inverse discrete Fourier transform over ``axes``."""
    return _n_d("ifftn", x, s, axes, norm, "c2c")


def rfftn(x: DeviceArray, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str = "backward") -> DeviceArray:
    """The n-dimensional transform of real ``x``; the last axis keeps ``s[-1] // 2 + 1`` frequencies."""
    return _n_d("rfftn", x, s, axes, norm, "r2c")


def irfftn(x: DeviceArray, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str = "backward") -> DeviceArray:
    """The inverse of ``rfftn``: real output, the last axis ``s[-1]`` (default ``2 * (m - 1)``) long."""
    return _n_d("irfftn", x, s, axes, norm, "c2r")


def _freq_dtype(dtype: Any, op: str) -> np.dtype:
    dt = np.dtype(np.float64 if dtype is None else dtype)
    if dt.kind not in "fc":
        raise TypeError(f"{op}: dtype must be a floating-point dtype, got {dt}")
    return dt


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> DeviceArray:
    """The sample frequencies of an ``n``-point transform with sample spacing ``d``:
    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``, float64 by default, in ``device``."""
    n = _length(n, "fftfreq")
    dt = _freq_dtype(dtype, "fftfreq")
    k = arange(n, dtype=np.float64, device=device)
    k = where(less(k, (n + 1) // 2), k, subtract(k, float(n)))
    return divide(k, float(d) * n).astype(dt, copy=False)


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> DeviceArray:
    """The non-negative sample frequencies of an ``n``-point ``rfft``: ``[0, 1, ..., n // 2] / (d * n)``."""
    n = _length(n, "rfftfreq")
    dt = _freq_dtype(dtype, "rfftfreq")
    return divide(arange(n // 2 + 1, dtype=np.float64, device=device), float(d) * n).astype(dt, copy=False)


def _roll_half(x: Any, axes: int | Sequence[int] | None, op: str, inverse: bool) -> DeviceArray:
    a = _device(x, op)
    if axes is None:
        axes = range(a.ndim)
    elif isinstance(axes, (int, np.integer)):
        axes = (axes,)
    out = a
    for v in axes:
        ax = _axis(v, a.ndim, op)
        m = a.shape[ax]
        cut = m // 2 if inverse else m - m // 2
        lead = (slice(None),) * ax
        out = concatenate([out[(*lead, slice(cut, None))], out[(*lead, slice(0, cut))]], axis=ax)
    return out if out is not a else a.copy()


def fftshift(x: DeviceArray, /, *, axes: int | Sequence[int] | None = None) -> DeviceArray:
    """``x`` with the zero-frequency term moved to the centre of each of ``axes`` (all by default)."""
    return _roll_half(x, axes, "fftshift", False)


def ifftshift(x: DeviceArray, /, *, axes: int | Sequence[int] | None = None) -> DeviceArray:
    """The inverse of ``fftshift``."""
    return _roll_half(x, axes, "ifftshift", True)


# NumPy's positional spellings through __array_function__ (np.fft.fft(device_array, n)).
def _np_one_d(f: Callable[..., DeviceArray]) -> Callable[..., DeviceArray]:
    def call(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None) -> DeviceArray:
        if out is not None:
            raise TypeError(f"np.fft.{f.__name__}: out= is not supported for DeviceArrays")
        return f(a, n=n, axis=axis, norm=_norm(norm, f.__name__))
    return call


def _np_n_d(f: Callable[..., DeviceArray]) -> Callable[..., DeviceArray]:
    def call(a: Any, s: Any = None, axes: Any = None, norm: str | None = None, out: Any = None) -> DeviceArray:
        if out is not None:
            raise TypeError(f"np.fft.{f.__name__}: out= is not supported for DeviceArrays")
        return f(a, s=s, axes=axes, norm=_norm(norm, f.__name__))
    return call


_ARRAY_FUNCTIONS.update({getattr(np.fft, f.__name__): _np_one_d(f) for f in (fft, ifft, rfft, irfft, hfft, ihfft)})
_ARRAY_FUNCTIONS.update({getattr(np.fft, f.__name__): _np_n_d(f) for f in (fftn, ifftn, rfftn, irfftn)})
_ARRAY_FUNCTIONS.update({np.fft.fftshift: lambda x, axes=None: fftshift(x, axes=axes),
                         np.fft.ifftshift: lambda x, axes=None: ifftshift(x, axes=axes)})
