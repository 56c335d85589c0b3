"""hx.random: random numbers generated on the device.

``hx.random.default_rng(seed)`` returns a :class:`Generator` whose methods
(``random``, ``standard_normal``, ``normal``, ``uniform``, ``integers``,
``choice``, ``permutation``) follow ``numpy.random.Generator``'s signatures,
plus ``device=`` (a placement, the array API's spelling of ``placement=``).
Each call returns a DeviceArray at once; the values are written by a region on
the emulated GPU's compute lane and complete asynchronously, like every other
operation. ``size=None`` gives a 0-d array (NumPy gives a Python scalar).

The generator is counter-based (Philox4x32-10): every value is a pure
function of the Generator's key and a block counter, so the same seed gives
the same bits on every host and for every thread count, and each call
advances the counter by exactly the blocks it consumed. Seeding follows
NumPy's ``SeedSequence`` (``default_rng(42)`` twice gives the same stream,
different seeds independent streams, ``default_rng()`` seeds from OS entropy,
``spawn`` gives independent children). The streams are not NumPy's (NumPy
uses PCG64 and its own ziggurat). Note [Random streams] in
``ext/core/kernels/random.h`` describes how each distribution is drawn.
"""

from __future__ import annotations

import math
import operator
import threading
from typing import Any, Callable, cast

import numpy as np

from . import _core
from ._array import DeviceArray, _home
from ._creation import asarray

__all__ = ["default_rng", "Generator", "Philox4x32"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _shape(size: Any, op: str) -> tuple[int, ...]:
    if size is None:
        return ()
    try:
        dims = (operator.index(size),) if not isinstance(size, (tuple, list)) else tuple(map(operator.index, size))
    except TypeError:
        raise TypeError(f"{op}: size must be None, an integer or a tuple of integers, got {size!r}") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"{op}: size must not have negative entries, got {size!r}")
    return dims


def _is_real_scalar(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _param(value: Any, what: str, op: str) -> float | np.ndarray | DeviceArray:
    """A distribution parameter: a real scalar (as float), or a float64 array (host or DeviceArray)."""
    if _is_real_scalar(value):
        return float(value)
    if isinstance(value, DeviceArray):
        return value if value.dtype == np.float64 else value.astype(np.float64)
    try:
        host = np.asarray(value)
    except Exception:
        host = None
    if host is None or host.dtype.kind not in "iuf" or host.dtype == object:
        raise TypeError(f"{op}: {what} must be a real number or an array of them, got {value!r}")
    return host.astype(np.float64, copy=False)


def _int_bound(value: Any, what: str, op: str) -> int | np.ndarray:
    """An integer bound of integers(): a Python int, or an integer array (host or DeviceArray, read)."""
    if isinstance(value, (bool, np.bool_)) or isinstance(value, (float, np.floating)):
        raise TypeError(f"{op}: {what} must be an integer or an integer array, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        pass
    host = np.asarray(value)
    if host.size == 0:
        return host.astype(np.int64)  # [] is float64 to NumPy, and bounds nothing
    if host.dtype.kind not in "iu":
        raise TypeError(f"{op}: {what} must be an integer or an integer array, got {value!r}")
    return host


def _ufunc(name: str) -> Any:
    # hrxarray's ufunc objects, by NumPy name: the C++ core's table, which the package re-exports.
    return _core._ufuncs[name]


def _host_values(p: float | np.ndarray | DeviceArray) -> np.ndarray:
    # A DeviceArray parameter is read (waiting for its producers) only to check it, as NumPy checks.
    return np.asarray(p)


def _dtype(dtype: Any, allowed: Callable[[np.dtype], bool], what: str, op: str) -> np.dtype:
    try:
        dt: np.dtype[Any] = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{op}: dtype {dtype!r} is not a dtype") from None
    if not allowed(dt):
        raise TypeError(f"{op}: dtype must be {what}, got {dt}")
    return dt


class _Seeded:
    _seed_seq: np.random.SeedSequence

    @property
    def seed_seq(self) -> np.random.SeedSequence:
        """The SeedSequence the Philox key comes from."""
        return self._seed_seq


class Generator(_Seeded):
    """A device random generator: a Philox key and a block counter.

    Create one with :func:`default_rng`. Methods are safe to call from
    several threads (each call takes its own range of counters).
    """

    def __init__(self, seed_seq: np.random.SeedSequence) -> None:
        if not isinstance(seed_seq, np.random.SeedSequence):
            raise TypeError(f"Generator: expected a numpy.random.SeedSequence, got {seed_seq!r}; use hx.random.default_rng")
        words = seed_seq.generate_state(2, np.uint32)
        self._seed_seq = seed_seq
        self._key = int(words[0]) | (int(words[1]) << 32)
        self._counter = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Generator(Philox4x32-10, key=0x{self._key:016x}, counter={self._counter})"

    @property
    def state(self) -> dict[str, int]:
        """The Philox key and the next unused block counter (Note [Random streams])."""
        with self._lock:
            return {"key": self._key, "counter": self._counter}

    def _draw(self, call: Callable[[int, int], tuple[DeviceArray, int]]) -> DeviceArray:
        # The counter advances only when the call was accepted: a refused call changes nothing.
        with self._lock:
            out, blocks = call(self._key, self._counter)
            self._counter = (self._counter + blocks) % (1 << 64)
        return out

    def spawn(self, n_children: int) -> list[Generator]:
        """``n_children`` new Generators with independent streams (``SeedSequence.spawn``)."""
        return [Generator(s) for s in self._seed_seq.spawn(n_children)]

    def random(self, size: Any = None, dtype: Any = np.float64, out: DeviceArray | None = None, *,
               device: Any = None, placement: Any = None) -> DeviceArray:
        """Floats uniform in [0, 1): the top 53 (float64) or 24 (float32) bits of the stream.

        ``out``: a C-contiguous DeviceArray of ``dtype`` to fill instead of a new array.
        """
        op = "Generator.random"
        dt = _dtype(dtype, lambda d: d in _FLOATS, "float32 or float64", op)
        return self._real("uniform", size, dt, 0.0, 1.0, _home(op, device, placement), op, out)

    def standard_normal(self, size: Any = None, dtype: Any = np.float64, out: DeviceArray | None = None, *,
                        device: Any = None, placement: Any = None) -> DeviceArray:
        """Standard normal values (Marsaglia's polar method, host-independent bits); ``out`` as in ``random``."""
        op = "Generator.standard_normal"
        dt = _dtype(dtype, lambda d: d in _FLOATS, "float32 or float64", op)
        return self._real("normal", size, dt, 0.0, 1.0, _home(op, device, placement), op, out)

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, *, device: Any = None,
               placement: Any = None) -> DeviceArray:
        """float64 values ``loc + scale * z``, z standard normal; ``scale`` must be non-negative.

        ``loc`` and ``scale`` may be arrays (host or DeviceArray): they broadcast
        to ``size`` (by default to each other), as in NumPy.
        """
        op = "Generator.normal"
        a, b = _param(loc, "loc", op), _param(scale, "scale", op)
        if not np.all(_host_values(b) >= 0):  # NaN fails too
            raise ValueError(f"{op}: scale must be non-negative, got {scale!r}")
        return self._affine("normal", size, a, b, _home(op, device, placement), op)

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None, *, device: Any = None,
                placement: Any = None) -> DeviceArray:
        """float64 values ``low + (high - low) * u``, u uniform in [0, 1).

        ``low`` and ``high`` may be arrays, broadcast as in ``normal``.
        """
        op = "Generator.uniform"
        a, b = _param(low, "low", op), _param(high, "high", op)
        if isinstance(a, float) and isinstance(b, float):
            if not math.isfinite(b - a):
                raise ValueError(f"{op}: high - low must be finite, got low={low!r}, high={high!r}")
            return self._real("uniform", size, _FLOATS[1], a, b - a, _home(op, device, placement), op)
        with np.errstate(over="ignore", invalid="ignore"):
            finite = np.all(np.isfinite(np.subtract(_host_values(b), _host_values(a))))
        if not finite:
            raise ValueError(f"{op}: high - low must be finite, got low={low!r}, high={high!r}")
        place = _home(op, device, placement)
        return self._affine("uniform", size, a, _core_sub(b, a, place), place, op)

    def _affine(self, dist: str, size: Any, a: Any, b: Any, place: Any, op: str) -> DeviceArray:
        """a + b * x: in the kernel for scalar a, b; else x drawn in the kernel and the
        parameters applied by the device's own ufuncs, in the same order (the same bits)."""
        if isinstance(a, float) and isinstance(b, float):
            return self._real(dist, size, _FLOATS[1], a, b, place, op)
        shapes = [tuple(p.shape) for p in (a, b) if not isinstance(p, float)]
        try:
            shape = _core._broadcast_shapes(shapes, op) if size is None else _shape(size, op)
            if size is not None and _core._broadcast_shapes([shape, *shapes], op) != shape:
                raise ValueError
        except ValueError:
            raise ValueError(f"{op}: the parameters' shapes {shapes} do not broadcast to size {size!r}") from None
        dev = [p if isinstance(p, (float, DeviceArray)) else asarray(p, placement=place) for p in (a, b)]
        x = self._real(dist, shape, _FLOATS[1], 0.0, 1.0, place, op)
        return cast(DeviceArray, _ufunc("add")(dev[0], _ufunc("multiply")(dev[1], x)))

    def _real(self, dist: str, size: Any, dt: np.dtype, a: float, b: float, place: Any, op: str,
              out: DeviceArray | None = None) -> DeviceArray:
        shape = _shape(size, op)
        if out is not None:
            if not isinstance(out, DeviceArray):
                raise TypeError(f"{op}: out must be a DeviceArray, got {type(out).__name__}")
            if size is not None and tuple(out.shape) != shape:
                raise ValueError(f"{op}: size {shape} does not match out's shape {tuple(out.shape)}")
            if out.dtype != dt:
                raise TypeError(f"{op}: out's dtype {out.dtype} is not the requested dtype {dt}")
            if place is not None and place != out.placement:
                raise ValueError(f"{op}: out lives in {out.placement!r}, not in device={place!r}")
        return self._draw(lambda key, ctr: _core._random_real(dist, shape, dt, key, ctr, a, b, place, out, op))

    def integers(self, low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64,
                 endpoint: bool = False, *, device: Any = None, placement: Any = None) -> DeviceArray:
        """Integers uniform in [low, high) ([low, high] with ``endpoint=True``), unbiased for every range.

        With ``high=None`` the range is [0, low). Any range within ``dtype``'s
        (an integer dtype or bool) is allowed. ``low`` and ``high`` may be
        integer arrays (host or DeviceArray, read to check them): they
        broadcast to ``size`` (by default to each other), as in NumPy.
        """
        op = "Generator.integers"
        dt = _dtype(dtype, lambda d: d.kind in "iub", "an integer dtype or bool", op)
        if high is None:
            low, high = 0, low
        lo, hi = _int_bound(low, "low", op), _int_bound(high, "high", op)
        place = _home(op, device, placement)
        info_min, info_max = (0, 1) if dt.kind == "b" else (int(np.iinfo(dt).min), int(np.iinfo(dt).max))
        last = 0 if endpoint else 1  # high minus the largest value drawn

        def check(bad_order: bool, low_min: int, top_max: int) -> None:
            if bad_order:
                raise ValueError(f"{op}: low {'>' if endpoint else '>='} high (low={low!r}, high={high!r})")
            if low_min < info_min:
                raise ValueError(f"{op}: low={low_min} is out of bounds for {dt}")
            if top_max > info_max:
                raise ValueError(f"{op}: high={top_max + last} is out of bounds for {dt}")

        if isinstance(lo, int) and isinstance(hi, int):
            check(lo > hi - last, lo, hi - last)
            shape = _shape(size, op)
            span = (hi - last - lo + 1) % (1 << 64)  # 0 stands for 2**64 (a whole uint64/int64 range)
            lo_bits = lo % (1 << 64)
            return self._draw(lambda key, ctr: _core._random_integers(shape, dt, key, ctr, lo_bits, span, place, op))
        shapes = [np.shape(b) for b in (lo, hi)]
        try:
            shape = _core._broadcast_shapes(shapes, op) if size is None else _shape(size, op)
            if _core._broadcast_shapes([shape, *shapes], op) != shape:
                raise ValueError
        except ValueError:
            raise ValueError(f"{op}: the shapes of low and high {shapes} do not broadcast to size {size!r}") from None
        # Python integers (object arrays): bounds up to uint64's and int64's with no overflow.
        los = np.broadcast_to(np.asarray(lo, dtype=object), shape)
        tops = np.broadcast_to(np.asarray(hi, dtype=object), shape) - last
        if los.size:
            check(bool(np.any(los > tops)), int(los.min()), int(tops.max()))
        lows = np.ascontiguousarray((los % (1 << 64)).ravel().astype(np.uint64))
        spans = np.ascontiguousarray(((tops - los + 1) % (1 << 64)).ravel().astype(np.uint64))
        return self._draw(lambda key, ctr: _core._random_integers_each(shape, dt, key, ctr, lows, spans, place, op))

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None, shuffle: bool = True, *,
               device: Any = None, placement: Any = None) -> DeviceArray:
        """Random samples of ``a`` along axis 0 (``a`` an integer n: of ``arange(n)``).

        ``p`` gives the probabilities of the entries (non-negative, summing to
        1). Without replacement the sample is in random order, or in
        population order with ``shuffle=False``. The result's shape is
        ``size`` followed by ``a``'s trailing axes; it lives in ``device`` or
        else in ``a``'s placement (a DeviceArray) or the default placement.
        """
        return self._choice(a, size, replace, p, shuffle, _home("Generator.choice", device, placement),
                            "Generator.choice")

    def _choice(self, a: Any, size: Any, replace: bool, p: Any, shuffle: bool, place: Any, op: str) -> DeviceArray:
        src = None
        if isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)):
            n = int(a)
            if n < 0:
                raise ValueError(f"{op}: a must be a non-negative integer or an array, got {a!r}")
        else:
            src = a if isinstance(a, DeviceArray) else asarray(a, placement=place)
            if src.ndim == 0:
                raise ValueError(f"{op}: a must be an integer or an array of at least one dimension")
            n = src.shape[0]
        shape = _shape(size, op)
        count = math.prod(shape)
        if n == 0 and count > 0:
            raise ValueError(f"{op}: a is empty, so no sample of size {size!r} can be taken")
        probs = np.empty(0)
        kind = "uniform" if replace else "sample"
        if p is not None:
            pa = np.asarray(p, dtype=np.float64)
            if pa.ndim != 1 or pa.shape[0] != n:
                raise ValueError(f"{op}: p must be 1-dimensional with the population's length {n}, got shape {pa.shape}")
            if not np.all(np.isfinite(pa)) or np.any(pa < 0):
                raise ValueError(f"{op}: p must hold finite non-negative probabilities")
            total = math.fsum(pa.tolist())
            if abs(total - 1.0) > math.sqrt(np.finfo(np.float64).eps):
                raise ValueError(f"{op}: p must sum to 1, its entries sum to {total!r}")
            if replace:
                kind, probs = "cdf", np.cumsum(pa)
                probs /= probs[-1]
            else:
                if np.count_nonzero(pa) < count:
                    raise ValueError(f"{op}: p has fewer non-zero entries ({np.count_nonzero(pa)}) than the "
                                     f"sample size {count} without replacement")
                probs = pa
        if not replace and count > n:
            raise ValueError(f"{op}: cannot take a sample of {count} from a population of {n} without replacement "
                             "(replace=False)")
        if src is not None and not src._c_contiguous:
            src = src.copy()  # the kernel gathers whole rows of a dense array
        probs = np.ascontiguousarray(probs, dtype=np.float64)
        return self._draw(lambda key, ctr: _core._random_choice(kind, n, probs, not shuffle, shape, src, key, ctr,
                                                                place, op))

    def permutation(self, x: Any, *, device: Any = None, placement: Any = None) -> DeviceArray:
        """A random permutation of ``arange(x)`` (x an integer), or of ``x``'s rows (along axis 0), as a new array."""
        op = "Generator.permutation"
        place = _home(op, device, placement)
        if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
            if x < 0:
                raise ValueError(f"{op}: x must be a non-negative integer or an array, got {x!r}")
            return self._choice(int(x), int(x), False, None, True, place, op)
        src = x if isinstance(x, DeviceArray) else asarray(x, placement=place)
        if src.ndim == 0:
            raise ValueError(f"{op}: x must be an integer or an array of at least one dimension")
        return self._choice(src, src.shape[0], False, None, True, place, op)


def _core_sub(b: Any, a: Any, place: Any) -> Any:
    """high - low for uniform's array parameters (on the device when either is a DeviceArray)."""
    if isinstance(a, DeviceArray) or isinstance(b, DeviceArray):
        return _ufunc("subtract")(*(p if isinstance(p, (float, DeviceArray)) else asarray(p, placement=place) for p in (b, a)))
    return np.subtract(b, a)


def _seed_sequence(seed: Any, op: str) -> np.random.SeedSequence:
    if isinstance(seed, np.random.SeedSequence):
        return seed
    try:
        return np.random.SeedSequence(seed)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{op}: bad seed {seed!r}: {e}") from None


class Philox4x32(_Seeded):
    """hx.random's bit generator, as NumPy's bit generators are: ``Philox4x32(seed)``.

    ``seed`` is what :func:`default_rng` takes (None, integers, a
    ``SeedSequence``); the Philox4x32-10 key comes from it as a Generator's
    does, so ``default_rng(Philox4x32(s))`` and ``default_rng(s)`` give the
    same stream. As with NumPy, the Generators made from one bit generator
    share its state: ``default_rng(bg)`` returns the same Generator each time.
    ``spawn`` gives independent children (``SeedSequence.spawn``). This is
    what Dask's Generator path (``da.random.default_rng`` under the "hrx"
    backend) spawns per block and hands back to ``default_rng``.
    """

    def __init__(self, seed: Any = None) -> None:
        self._seed_seq = _seed_sequence(seed, "Philox4x32")
        self._generator: Generator | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Philox4x32(entropy={self._seed_seq.entropy}, spawn_key={self._seed_seq.spawn_key})"

    def spawn(self, n_children: int) -> list[Philox4x32]:
        """``n_children`` new bit generators with independent streams."""
        return [Philox4x32(s) for s in self._seed_seq.spawn(n_children)]

    def _rng(self) -> Generator:
        with self._lock:
            if self._generator is None:
                self._generator = Generator(self._seed_seq)
            return self._generator


def default_rng(seed: Any = None) -> Generator:
    """A new :class:`Generator` seeded as ``numpy.random.default_rng`` seeds.

    ``seed``: None (fresh OS entropy), a non-negative integer or a sequence of
    them, a ``numpy.random.SeedSequence``, a :class:`Philox4x32` bit generator
    (its Generator: every call shares its state), or a Generator (returned as
    it is).
    """
    if isinstance(seed, Generator):
        return seed
    if isinstance(seed, Philox4x32):
        return seed._rng()
    return Generator(_seed_sequence(seed, "default_rng"))
