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

``ufunc(source, symbol)`` turns a GPU kernel into an ``hx.ufunc``-like
callable. The kernel's workload signature is ``(%count: index)`` and its
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
from . import _manipulation as M
from ._core import Artifact
from ._core import loom as _l

try:  # the frontend's bindings
    from ._core.loom import Diagnostic, LoomError, Module
except ImportError:  # pragma: no cover - a build without the frontend
    Diagnostic = LoomError = Module = None  # type: ignore[assignment, misc]

LaunchConfig = _l.LaunchConfig

__all__ = [
    "compile", "parse", "ufunc", "function", "Artifact", "LaunchConfig", "LoomError", "Diagnostic",
    "GPU_TARGET", "NPU_TARGET", "op_catalogue",
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


def op_catalogue() -> list[dict]:
    """Every op of Loom's dialect definitions and what the emulator does with it: a list of dicts with
    ``name``, ``dialect``, ``operands`` and ``results`` (None where variadic), ``executed`` (bool), and for
    the ops it does not run, the ``code`` (``EMULATOR/0xx``) and ``reason`` of the plan-time refusal."""
    return _l._catalogue()


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


def _scalar_key(v: Any) -> tuple:
    # A loaded kernel bakes its scalars into its constants, so the cache key
    # must tell apart the values that compare equal: -0.0 and 0.0 (and 1 and 1.0).
    if isinstance(v, (float, np.floating)):
        return type(v), float(v).hex()
    return type(v), v


def _np_dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _params(art: Artifact) -> list:
    return art.manifest["functions"][0]["parameters"]


class ufunc:
    """A Loom GPU kernel used as an elementwise function over DeviceArrays (see the module docstring).

    ``ufunc(source, symbol, config=None, nin=None, nout=None)``: the kernel's
    workload signature is ``(%count: index)``, its device signature
    ``(%count: index, scalars..., inputs..., outputs...)``. Calling it with
    ``nin`` arrays (DeviceArrays, host arrays or scalars, broadcast together),
    optional ``out=`` (an array or a tuple of ``nout``) and every scalar by
    name runs the kernel once over the flattened broadcast shape and returns
    the output array (a tuple when ``nout > 1``). Inputs are cast to the
    kernel's element types under NumPy's ``same_kind`` rule, broadcast and
    made C-contiguous on the device first.

    >>> src = '''...'''  # doctest: +SKIP
    >>> axpb = hx.loom.ufunc(src, "axpb")  # doctest: +SKIP
    >>> y = axpb(x, alpha=2.0, beta=1.0)  # doctest: +SKIP
    """

    def __init__(self, source: str, symbol: str, *, config: dict | None = None, nin: int | None = None,
                 nout: int | None = None):
        self.artifact = art = compile(source, symbol, target="gfx1151", config=config)
        self.__name__ = symbol
        who = f"loom.ufunc('{symbol}')"
        try:
            art.launch_config(1)
        except (ValueError, TypeError) as e:
            raise ValueError(f"{who}: the kernel's workload signature must be (%count: index): {e}") from None
        params = _params(art)
        if not params or params[0]["kind"] != "constant" or params[0]["name"] != "count" or params[0]["type"] != "index":
            raise ValueError(f"{who}: the device signature must start with %count: index")
        self._scalars = [p for p in params[1:] if p["kind"] == "constant"]
        buffers = [p for p in params if p["kind"] == "pointer"]
        first_buffer = next((i for i, p in enumerate(params) if p["kind"] == "pointer"), len(params))
        if any(p["kind"] == "constant" for p in params[first_buffer:]):
            raise ValueError(f"{who}: every scalar must come before the buffers in the device signature")
        probe = {p["name"]: (0.0 if p["type"].startswith(("f", "bf")) else 0) for p in self._scalars}
        accesses = [b.access for b in art.contract_for(count=1, **probe).bindings]
        writes = [a.name != "READ" for a in accesses]
        if nin is None and nout is None:
            nin = next((i for i, w in enumerate(writes) if w), len(writes))
        if nin is None:
            nin = len(buffers) - nout
        if nout is None:
            nout = len(buffers) - nin
        if nin < 0 or nout < 1 or nin + nout != len(buffers):
            raise ValueError(f"{who}: the kernel has {len(buffers)} buffers; nin={nin} and nout={nout} do not "
                             f"split them into inputs and at least one output")
        if any(writes[:nin]) or not all(writes[nin:]):
            raise ValueError(f"{who}: the inputs (the first {nin} buffers) must be read-only and the outputs "
                             f"written; accesses are {[a.name for a in accesses]}")
        dtypes = _l._binding_dtypes(art)
        if any(d is None for d in dtypes):
            raise ValueError(f"{who}: every buffer must be viewed with an element type, got {dtypes}")
        self._dtypes = [_np_dtype(d) for d in dtypes]
        self.nin, self.nout = nin, nout
        self.nargs = nin + nout
        self.types = ["".join(d.char for d in self._dtypes[:nin]) + "->" +
                      "".join(d.char for d in self._dtypes[nin:])]
        self._who = who
        self._names = frozenset(p["name"] for p in self._scalars)
        self._kernels: dict = {}
        self._kernels_rt = None

    def __repr__(self) -> str:
        return f"<hx.loom.ufunc '{self.__name__}' nin={self.nin} nout={self.nout} types={self.types}>"

    def _check_scalars(self, scalars: dict) -> None:
        who, names = self._who, self._names
        if "count" in scalars:
            raise TypeError(f"{who}: count is the element count of the operands, not an argument")
        for name in scalars:
            if name not in names:
                raise TypeError(f"{who}: unknown scalar {name!r} (scalars: {sorted(names) or 'none'})")
        for name in names:
            if name not in scalars:
                raise TypeError(f"{who}: missing scalar {name!r}")

    def _kernel(self, rt, count: int, scalars: dict):
        # Loaded kernels keep their runtime alive: hold those of the last runtime used only.
        if self._kernels_rt is not rt:
            self._kernels, self._kernels_rt = {}, rt
        key = (count, frozenset((k, _scalar_key(v)) for k, v in scalars.items()))
        k = self._kernels.get(key)
        if k is not None:
            return k
        art = self.artifact
        launch = art.launch_config(count)
        contract = art.contract_for(count=count, **scalars)
        k = rt.load_gpu_kernel(art, launch.workgroups, launch.workgroup_size, contract)
        if len(self._kernels) >= 64:
            self._kernels.clear()
        self._kernels[key] = k
        return k

    # Note [Loom ufunc calls]: most calls pass DeviceArrays that already have
    # the kernel's dtypes, one shape and C order. Those go straight to the
    # kernel (_direct), skipping the general path's NumPy broadcasting, casts,
    # copies and temporaries, which cost several microseconds of Python per
    # call and matter at small sizes. Any other call takes the general path,
    # which gives the same result for these calls too.
    def _direct(self, args: tuple, out: tuple | None) -> tuple[list, list] | None:
        """(operands, results) when the call needs no conversion, broadcast, copy or temporary, else None.

        That is: every input a C-contiguous DeviceArray of the kernel's dtype
        and one shape, and every out= (if given) the same, of its output dtype,
        sharing no storage with an input. The general path gives the same
        result for these calls, with more steps.
        """
        shape = args[0].shape if args else None
        bases = set()
        for x, want in zip(args, self._dtypes):
            if type(x) is not A.DeviceArray or x.dtype != want or x.shape != shape or not x._c_contiguous:
                return None
            bases.add(x._base_id)
        if out is None:
            return None if shape is None else (list(args), [C.empty_like(args[0], dtype=want, shape=shape)
                                                            for want in self._dtypes[self.nin:]])
        for o, want in zip(out, self._dtypes[self.nin:]):
            if type(o) is not A.DeviceArray or o.dtype != want or not o._c_contiguous or o._base_id in bases or \
                    (shape is not None and o.shape != shape):
                return None
            shape = o.shape
            bases.add(o._base_id)
        return list(args), list(out)

    def __call__(self, *args, out=None, **scalars):
        """Run the kernel over ``args`` broadcast together; ``out=`` and every scalar by name (see the class)."""
        who = self._who
        if len(args) != self.nin:
            raise TypeError(f"{who}: takes {self.nin} input(s), got {len(args)}")
        if scalars.keys() != self._names:
            self._check_scalars(scalars)
        if out is not None and not isinstance(out, tuple):
            out = (out,)
        if out is not None and len(out) != self.nout:
            raise ValueError(f"{who}: out must hold {self.nout} array(s), got {len(out)}")
        rt = _runtime_of(list(args) + list(out or ()))
        direct = self._direct(args, out)
        if direct is not None:
            # The common call (Note [Loom ufunc calls]): nothing to convert, broadcast or stage.
            operands, results = direct
            count = math.prod(results[0].shape)
            if count:
                _l._run_kernel(self._kernel(rt, count, scalars), operands + results, who)
            return results[0] if self.nout == 1 else tuple(results)
        like = next((a for a in args if isinstance(a, A.DeviceArray)), None)
        # Every check runs before any device work (a cast, a copy, the kernel) is queued.
        for i, (x, want) in enumerate(zip(args, self._dtypes)):
            if isinstance(x, A.DeviceArray) and x.dtype != want and not np.can_cast(x.dtype, want, "same_kind"):
                raise TypeError(f"{who}: cannot cast input {i} from {x.dtype} to {want} with casting rule "
                                f"'same_kind'")
        shapes = [x.shape if isinstance(x, A.DeviceArray) else np.shape(x) for x in args]
        shapes += [o.shape for o in out or () if isinstance(o, A.DeviceArray)]
        try:
            shape = np.broadcast_shapes(*shapes)
        except ValueError:
            raise ValueError(f"{who}: operands could not be broadcast together with shapes "
                             f"{' '.join(str(s) for s in shapes)}") from None
        for o, want in zip(out or (), self._dtypes[self.nin:]):
            if not isinstance(o, A.DeviceArray):
                raise TypeError(f"{who}: out must be DeviceArrays, got {type(o).__name__}")
            if o.shape != shape:
                raise ValueError(f"{who}: out has shape {o.shape}, the operands broadcast to {shape}")
            if o.dtype != want:
                raise TypeError(f"{who}: out must be {want}, got {o.dtype}")
        count = math.prod(shape)
        kernel = self._kernel(rt, count, scalars) if count else None
        inputs = []
        for x, want in zip(args, self._dtypes):
            if not isinstance(x, A.DeviceArray):
                x = C.asarray(x, dtype=want, placement=like.placement if like is not None else None)
            elif x.dtype != want:
                x = x.astype(want)
            inputs.append(x)
        template = like if like is not None else (out[0] if out else inputs[0] if inputs else None)
        operands = []
        for x in inputs:
            if count and x.shape != shape:
                x = M.broadcast_to(x, shape)
            if count and not x._c_contiguous:
                x = x.copy()
            operands.append(x)
        # The kernel binds each operand as one buffer view, and a written view may not overlap
        # another binding (ContractError): an out= sharing memory with an input (in place, as
        # NumPy allows) gets its values through a temporary.
        bases = {x._base_id for x in operands}
        results = []
        for j, want in enumerate(self._dtypes[self.nin:]):
            o = out[j] if out else None
            if o is None or not o._c_contiguous or o._base_id in bases:
                o = C.empty_like(template, dtype=want, shape=shape) if template is not None else C.empty(shape, want)
            bases.add(o._base_id)
            results.append(o)
        if kernel is not None:
            _l._run_kernel(kernel, operands + results, who)
        if out:
            for o, r in zip(out, results):
                if o is not r:
                    o[...] = r
            results = list(out)
        return results[0] if self.nout == 1 else tuple(results)


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
