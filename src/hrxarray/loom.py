"""Loom programs on the emulated devices: compile, load, and use as array functions.

``compile(source, symbol, target=...)`` specialises one root symbol of a Loom
module (a ``kernel.def`` for the GPU, a ``pipeline.def`` for the NPU) and
returns an :class:`~hrxarray.Artifact`, the same class the built-in
``hx.kernels.npu(...)`` returns. Compiled artifacts are cached by (source,
symbol, target, config): compiling the same program again returns the same
object, and each source is parsed and verified once.

Load an NPU artifact with ``npu.load_artifact(art, columns, art.contract)``
and a GPU one with ``runtime.load_gpu_kernel(art, grid, block, contract)``
(``grid`` in workgroups, ``block`` in work-items, both checked against the
kernel's launch program); run either in a graph (``g.gpu(k, views)``,
``g.npu(k, views)``) under every rule built-in kernels follow.

Conventions of the array-level wrappers:

``ufunc(source, symbol)`` turns a GPU kernel into an ``hx.ufunc`` (one,
``isinstance(f, hx.ufunc)``, called through the same path as ``hx.add``). The kernel's workload signature is ``(%count: index)`` and its
device signature ``(%count: index, scalars..., inputs..., outputs...)``:
``count`` is the number of elements (the inputs broadcast together, flattened
in C order), each other scalar is a keyword argument of the call
(``%alpha`` → ``alpha=``), the buffers are the operands, inputs first. A
buffer the kernel only reads is an input, one it writes is an output (or
give ``nin``/``nout``); the element type of each is that of the kernel's
view of it (``bf16`` → ``hx.bfloat16``).

``function(source, symbol)`` turns an NPU pipeline into a callable taking
DeviceArrays, one per launch binding in order (or by binding name); outputs
not given are allocated with the element type of the pipeline's view of them
and the size of its footprint.

Both run asynchronously as one operation on the runtime's lane (the GPU
compute lane, the NPU lane) under its hazards, exactly like ``hx.add``; the
results are DeviceArrays whose values are ready once the kernel ran.

A runtime created with ``checked=True`` (or with the environment variable
``HRXARRAY_CHECKED=1``) runs Loom programs in checked mode: false
assumptions, broken ``nsw``/``nuw`` promises, index domain errors and races
raise ``ExecutionError`` naming the source line and the lane, and poison what
the program wrote, as a device fault does.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np

from . import _array as A
from . import _creation as C
from ._core import Artifact
from ._core import loom as _l

try:  # the frontend's bindings
    from ._core.loom import Diagnostic, LoomError, Module
except ImportError:  # pragma: no cover - a build without the frontend
    Diagnostic = LoomError = Module = None  # type: ignore[assignment, misc]

LaunchConfig = _l.LaunchConfig

__all__ = [
    "compile", "parse", "ufunc", "function", "Artifact", "LaunchConfig", "LoomError", "Diagnostic",
    "GPU_TARGET", "NPU_TARGET",
]

#: The emulated GPU's exact target.
GPU_TARGET = "gfx1151"
#: The exact XDNA deployment target of the Strix Halo NPU5.
NPU_TARGET = "amd.xdna.strix_halo.17f0_11"

_TARGETS = {"xdna": NPU_TARGET, NPU_TARGET: NPU_TARGET, "gfx1151": GPU_TARGET}

# (source, symbol, target as given, config key) -> Artifact; and the
# canonical identity (digest, symbol, exact target, canonical config), so
# that two spellings of one specialisation share one artifact.
_cache: dict = {}
_canonical: dict = {}
_MAX_CACHE = 1024


def parse(source: str):
    """Tokenise, parse and verify a Loom module; raises :class:`LoomError` with every diagnostic."""
    return _l.parse(source)


def _spelling(key: str, value: Any) -> str:
    """A config value in Loom's spelling: ints and floats as literals, bools as 1/0, strings as given."""
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(value, str):
        return value
    raise TypeError(f"loom.compile: config key {key!r} must be an int, float, bool or str, got {value!r}")


def _config_key(config) -> tuple:
    if not config:
        return ()
    # The type is part of the key: 1, 1.0 and True are equal but spell differently.
    return tuple(sorted((k, v.__class__, v) for k, v in config.items()))


def compile(source: str, symbol: str, *, target: str, config: dict | None = None) -> Artifact:
    """Compile Loom ``symbol`` of ``source`` for ``target`` with ``config`` into an :class:`Artifact`.

    ``target`` is ``"gfx1151"`` (the GPU: ``symbol`` names a ``kernel.def``),
    ``"xdna"`` or the exact NPU profile ``"amd.xdna.strix_halo.17f0_11"`` (the
    NPU: a ``pipeline.def``); anything else raises ``ValueError`` naming it.
    ``config`` maps Loom config keys to values (int, float, bool, str, written
    in Loom's spelling); keys the program does not reach are ignored, as HRX
    does. Loom's refusals (syntax, types, a missing key, a value outside its
    declared predicates, a construct the emulator does not run) raise
    :class:`LoomError` with ``.diagnostics``.

    The result is cached: the same (source, symbol, target, config) returns
    the same object, and each source is parsed once.
    """
    try:
        key = (source, symbol, target, _config_key(config))
        hit = _cache.get(key)
    except TypeError:  # an unhashable config value: _spelling names it below
        key, hit = None, None
    if hit is not None:
        return hit
    if not isinstance(source, str):
        raise TypeError(f"loom.compile: source must be a str, got {type(source).__name__}")
    exact = _TARGETS.get(target) if isinstance(target, str) else None
    if exact is None:
        raise ValueError(f"loom.compile: unknown target {target!r} (use 'gfx1151' for the GPU, 'xdna' or "
                         f"{NPU_TARGET!r} for the NPU)")
    if config is not None and not isinstance(config, dict):
        raise TypeError(f"loom.compile: config must be a dict, got {type(config).__name__}")
    spelled = {str(k): _spelling(k, v) for k, v in (config or {}).items()}
    art = _l._compile(source, symbol, exact, spelled)
    ident = (hashlib.sha256(source.encode()).hexdigest(), symbol, exact, art.canonical_config)
    art = _canonical.setdefault(ident, art)
    if key is not None:
        if len(_cache) >= _MAX_CACHE:
            _cache.clear()
            _canonical.clear()
            _canonical[ident] = art
        _cache[key] = art
    return art


def _runtime_of(arrays):
    from . import default_runtime
    for a in arrays:
        if hasattr(a, "buffer") and hasattr(a, "_offset"):
            return a.buffer.runtime
    return default_runtime()


def _np_dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _params(art: Artifact) -> list:
    return art.manifest["functions"][0]["parameters"]


class ufunc(_l.LoomUfunc):
    """A Loom GPU kernel as an :class:`hrxarray.ufunc` (see the module docstring).

    ``ufunc(source, symbol, config=None, nin=None, nout=None)``: the kernel's
    workload signature is ``(%count: index)``, its device signature
    ``(%count: index, scalars..., inputs..., outputs...)``. Calling it with
    ``nin`` arrays (DeviceArrays, host arrays or scalars, broadcast together
    under NEP 50 as ``hx.add``'s operands are), optional ``out=`` (an array or
    a tuple of ``nout``) and every scalar by name runs the kernel once over
    the flattened broadcast shape and returns the output array (a tuple when
    ``nout > 1``). Inputs are cast to the kernel's element types under
    NumPy's ``same_kind`` rule; ``out=`` must have the kernel's output types
    and may be an input (in place). ``dtype=`` may only name the kernel's
    output type, and ``where=`` is refused (TypeError): the kernel writes
    every element.

    It is an ``hx.ufunc``: a call goes through the same C++ call path as
    ``hx.add`` (argument parsing, NEP 50, broadcasting, ``out=``), and its one
    loop is the compiled Loom program, run as one operation on the GPU compute
    lane (Note [Loom ufunc operands] and [Loom ufunc launches] in
    ext/core/array/loom_ufunc.h).

    >>> src = '''...'''  # doctest: +SKIP
    >>> axpb = hx.loom.ufunc(src, "axpb")  # doctest: +SKIP
    >>> y = axpb(x, alpha=2.0, beta=1.0)  # doctest: +SKIP
    """

    def __init__(self, source: str, symbol: str, *, config: dict | None = None, nin: int | None = None,
                 nout: int | None = None):
        art = compile(source, symbol, target="gfx1151", config=config)
        super().__init__(art, nin, nout)
        self.artifact = art
        self.__name__ = symbol


class function:
    """A Loom NPU pipeline used as a function over DeviceArrays (see the module docstring).

    ``function(source, symbol, config=None)`` compiles the pipeline for the
    NPU. Calling it with DeviceArrays (one per launch binding, positionally
    in order or by binding name; host arrays are uploaded with the binding's
    element type) runs one invocation on the NPU lane; every binding the
    pipeline writes and that was not given is allocated (its view's element
    type, the footprint's size). Returns the written arrays, in binding
    order (one array alone when there is one). Pass ``npu=`` to choose the
    NPU (default: the first of the arrays' runtime).
    """

    def __init__(self, source: str, symbol: str, *, config: dict | None = None):
        self.artifact = art = compile(source, symbol, target="xdna", config=config)
        self.__name__ = symbol
        self.contract = art.contract
        self._names = [p["name"] for p in _params(art) if p["kind"] == "pointer"]
        self._dtypes = [_np_dtype(d or "uint8") for d in _l._binding_dtypes(art)]
        self._writes = [b.access.name != "READ" for b in self.contract.bindings]
        self._kernels: dict = {}
        self._kernels_rt = None
        self._who = f"loom.function('{symbol}')"

    def __repr__(self) -> str:
        return f"<hx.loom.function '{self.__name__}' bindings={self._names}>"

    def __call__(self, *arrays, npu=None, **named):
        """Run the pipeline once over the bindings (positional or by name); returns the written arrays."""
        who = self._who
        n = len(self._names)
        if len(arrays) > n:
            raise TypeError(f"{who}: takes {n} bindings ({', '.join(self._names)}), got {len(arrays)}")
        given = dict(zip(self._names, arrays))
        for k, v in named.items():
            if k not in self._names:
                raise TypeError(f"{who}: unknown binding {k!r} (bindings: {', '.join(self._names)})")
            if k in given:
                raise TypeError(f"{who}: binding {k!r} given twice")
            given[k] = v
        if npu is None:
            npu = _runtime_of(list(given.values())).npu(0)
        rt = npu.runtime
        from . import Shared
        for name, writes in zip(self._names, self._writes):  # checks first: nothing is queued when one fails
            x = given.get(name)
            if x is None and not writes:
                raise TypeError(f"{who}: input binding {name!r} is required")
            if x is not None and writes and not isinstance(x, A.DeviceArray):
                raise TypeError(f"{who}: output binding {name!r} must be a DeviceArray, got {type(x).__name__}")
            if x is not None and writes and not x._c_contiguous:
                raise ValueError(f"{who}: output binding {name!r} must be C-contiguous")
        if self._kernels_rt is not rt:  # loaded kernels keep their runtime alive: the last one's only
            self._kernels, self._kernels_rt = {}, rt
        k = self._kernels.get(npu.index)
        if k is None:
            k = npu.load_artifact(self.artifact, 1, self.contract)
            self._kernels[npu.index] = k
        operands, results = [], []
        for name, want, writes, b in zip(self._names, self._dtypes, self._writes, self.contract.bindings):
            x = given.get(name)
            if x is None:
                x = C.empty((b.bytes // want.itemsize,), want, placement=Shared(npu))
            elif not isinstance(x, A.DeviceArray):
                x = C.asarray(x, dtype=want, placement=Shared(npu))
            elif not x._c_contiguous:
                x = x.copy()
            operands.append(x)
            if writes:
                results.append(x)
        _l._run_kernel(k, operands, who)
        return results[0] if len(results) == 1 else tuple(results)
