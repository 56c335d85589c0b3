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

``check(source)`` runs the module's ``check.case`` test harnesses (Loom's
check dialect) on the emulated GPU and returns a :class:`CheckReport` with one
result per case (see Note [Running check cases] below).

A runtime created with ``checked=True`` (or with the environment variable
``HRXARRAY_CHECKED=1``) runs Loom programs in checked mode: false
assumptions, broken ``nsw``/``nuw`` promises, index domain errors and races
raise ``ExecutionError`` naming the source line and the lane, and poison what
the program wrote, as a device fault does.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from typing import Any

import numpy as np

from ._core import Artifact
from ._core import loom as _l
from ._core.loom import Diagnostic, LoomError, Module

LaunchConfig = _l.LaunchConfig

__all__ = [
    "compile", "parse", "ufunc", "function", "check", "CheckReport", "CheckResult", "Artifact", "LaunchConfig",
    "LoomError", "Diagnostic",
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
    ``name``, ``dialect``, ``operands`` and ``results`` (None where variadic), ``executed`` (bool), ``native``
    (bool: GPU kernels using it can compile to native code, in its common forms), and for the ops it does not
    run, the ``code`` (``EMULATOR/0xx``) and ``reason`` of the plan-time refusal."""
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
    known = _canonical.get(ident)
    if known is None:
        # A new GPU program: compile its native code, if it has any (Artifact.executor says
        # which executor runs it, Artifact.executor_reason why not native).
        from . import _loom_native

        _loom_native.prepare(art)
    art = _canonical.setdefault(ident, art)
    if key is not None:
        if len(_cache) >= _MAX_CACHE:
            _cache.clear()
            _canonical.clear()
            _canonical[ident] = art
        _cache[key] = art
    return art


def _prepare_builtins() -> None:
    """Compile the built-in GPU kernels' native code once per process.

    The runtime plans a built-in (``hx.kernels.gpu``) in C++ on every load; a plan whose IR
    was compiled before in this process starts native (the program's registry of entries),
    so compiling the built-in sources here once makes every later load native.
    """
    global _builtins_prepared
    if _builtins_prepared or os.environ.get("HRXARRAY_LOOM_NATIVE", "1") == "0":
        return
    _builtins_prepared = True
    from importlib import resources

    try:
        text = resources.files("hrxarray").joinpath("programs", "elementwise.loom").read_text()
    except OSError:
        return
    for symbol in re.findall(r"kernel\.def\b[^\n{]*?@([A-Za-z_][\w.\-]*)\s*\(", text):
        try:
            compile(text, symbol, target=GPU_TARGET)
        except Exception:  # a built-in the frontend refuses stays interpreted, as before
            pass


_builtins_prepared = False


def _runtime_of(arrays):
    from ._runtime import default_runtime
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
        self._written = [p for p, b in zip(self._names, self.contract.bindings) if b.access.name != "READ"]
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
        from ._core import Shared
        if self._kernels_rt is not rt:  # loaded kernels keep their runtime alive: the last one's only
            self._kernels, self._kernels_rt = {}, rt
        k = self._kernels.get(npu.index)
        if k is None:
            k = npu.load_artifact(self.artifact, 1, self.contract)
            self._kernels[npu.index] = k
        # One core call: every check (inputs given, outputs DeviceArrays and C-contiguous, sizes against the
        # contract) before any upload, copy or allocation (array/kernel_call.h).
        made = _l._run_kernel(k, [given.get(name) for name in self._names], self._dtypes, self._names,
                              Shared(npu), who)
        # An output given is written in place: the caller's own object comes back.
        results = [given[name] if given.get(name) is not None else r for name, r in zip(self._written, made)]
        return results[0] if len(results) == 1 else tuple(results)


# --- check.case / check.benchmark ----------------------------------------------------------------
#
# Note [Running check cases]
#   A check.case is a flat SSA program (Loom's check dialect). check() runs it in
#   Python, one op at a time, over plain values: index values are ints,
#   scalars NumPy scalars, tensors NumPy arrays (a tensor is storage: a
#   kernel.launch writes into the tensors it is given, as the device writes its
#   bindings). Parameters (check.param.*) are sampled, and the case runs once
#   per combination of their samples (the cartesian product in op order, at
#   most _MAX_SAMPLES). Generators are deterministic: iota and fill exactly as
#   specified; random.uniform draws from NumPy's default_rng(seed) (the same
#   seed gives the same values here, not loomc's). kernel.launch compiles the
#   kernel for the emulated GPU and runs it through the public loading API
#   (Runtime.load_gpu_kernel with a contract of the tensors' sizes: a tensor
#   smaller than the kernel's footprint is a failure naming the binding).
#   Expectations: equal (values compare equal; NaN never does), bitwise (same
#   bytes), close (|actual - expected| <= atol + rtol * |expected|, NaNs per
#   nan(same|different)), shape. Ops whose meaning lies outside the emulator
#   (func.call of device functions, oracle providers, custom validators,
#   device events) skip the case with the reason; a check.requires the
#   emulated gfx1151 does not meet skips it too. A check.benchmark is listed,
#   not run: the emulator's timings say nothing about the device's.

_MAX_SAMPLES = 256

_SCALAR_DTYPES = {
    "i1": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "index": "int64",
    "offset": "uint64", "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
}


class _Skip(Exception):
    """A case that check() does not run, with the reason."""


class _Fail(Exception):
    """A failed expectation or launch, with its message."""


class CheckResult:
    """One check.case (or check.benchmark) of a :func:`check` report.

    ``name`` is the symbol (``"@fills"``), ``kind`` ``"case"`` or
    ``"benchmark"``, ``passed`` whether every expectation of every sample held,
    ``skipped`` whether it was not run (then ``passed`` is False and
    ``message`` says why), ``samples`` how many parameter samples ran, and
    ``message`` the first failure (or ``""``).
    """

    __slots__ = ("name", "kind", "passed", "skipped", "samples", "message", "line")

    def __init__(self, name, kind, passed, skipped, samples, message, line):
        self.name, self.kind, self.passed, self.skipped = name, kind, passed, skipped
        self.samples, self.message, self.line = samples, message, line

    def __repr__(self) -> str:
        return (f"CheckResult(name={self.name!r}, kind={self.kind!r}, passed={self.passed}, "
                f"skipped={self.skipped}, samples={self.samples}, message={self.message!r})")

    def __str__(self) -> str:
        status = "SKIP" if self.skipped else "PASS" if self.passed else "FAIL"
        what = f"{status} {self.name}"
        if self.kind == "case" and not self.skipped:
            what += f" ({self.samples} sample{'s' if self.samples != 1 else ''})"
        return what + (f": {self.message}" if self.message else "")


class CheckReport(list):
    """The results of :func:`check`, one :class:`CheckResult` per check.case and
    check.benchmark in source order. ``ok`` is True when no case failed
    (skipped ones do not count); ``str()`` is one line per result and a summary."""

    @property
    def ok(self) -> bool:
        """True when every case that ran passed."""
        return all(r.passed or r.skipped for r in self)

    @property
    def failed(self) -> list:
        """The results that ran and failed."""
        return [r for r in self if not r.passed and not r.skipped]

    def __str__(self) -> str:
        lines = [str(r) for r in self]
        ran = [r for r in self if not r.skipped]
        lines.append(f"{sum(r.passed for r in ran)} passed, {len(self.failed)} failed, "
                     f"{len(self) - len(ran)} skipped")
        return "\n".join(lines)


def _dtype_of(elem: str) -> np.dtype:
    name = _SCALAR_DTYPES.get(elem)
    if name is None:
        raise _Skip(f"element type {elem} is not run by hx.loom.check")
    return _np_dtype(name)


def _scalar(value, elem: str):
    if elem in ("index", "offset"):
        return int(value)
    dt = _dtype_of(elem)
    if dt.kind in "iub":
        bits = dt.itemsize * 8
        v = int(value) & ((1 << bits) - 1)
        return np.array(v, np.dtype(f"uint{bits}") if bits > 1 else np.uint8).view(dt)[()]
    return dt.type(value)


def _shape(t: dict, env: dict) -> tuple:
    dims = []
    for d in t["dims"]:
        v = env[d] if isinstance(d, str) else d
        dims.append(int(v))
    return tuple(dims)


def _value_str(x) -> str:
    return np.array2string(np.asarray(x), threshold=8) if np.ndim(x) else repr(np.asarray(x).item())


def _compare(kind: str, actual, expected, attrs: dict) -> str:
    """'' when the expectation holds, else what differs."""
    a, e = np.asarray(actual), np.asarray(expected)
    if a.shape != e.shape:
        return f"shape {a.shape} differs from the expected {e.shape}"
    if kind == "bitwise":
        bad = a.reshape(-1).view(np.uint8).reshape(a.size, -1) != e.reshape(-1).view(np.uint8).reshape(e.size, -1) \
            if a.size else np.zeros((0, 1), bool)
        bad = bad.any(axis=1).reshape(a.shape)
    elif kind == "close":
        af, ef = a.astype(np.float64), e.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            bad = ~(np.abs(af - ef) <= float(attrs["atol"]) + float(attrs["rtol"]) * np.abs(ef))
        both_nan = np.isnan(af) & np.isnan(ef)
        bad = bad & ~both_nan if attrs.get("nan") == "same" else bad | both_nan
    else:
        with np.errstate(invalid="ignore"):
            bad = ~(a == e)
    bad = np.asarray(bad)
    if not bad.any():
        return ""
    first = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
    where = f" at {list(first)}" if first else ""
    return (f"{int(bad.sum())} of {max(bad.size, 1)} element(s) differ; first{where}: "
            f"actual {_value_str(a[first] if first else a)}, expected {_value_str(e[first] if first else e)}")


class _CaseRun:
    """One sample of one check.case (Note [Running check cases])."""

    def __init__(self, source, case, config, rt, arts):
        self.source, self.case, self.config, self.rt, self.arts = source, case, config, rt, arts
        self.env: dict = {}
        self.failures: list = []

    def run(self, params: dict) -> None:
        for op in self.case["ops"]:
            name = op["name"]
            if name == "check.return":
                break
            if op["has_regions"]:
                raise _Skip(f"line {op['line']}: {name} with regions is not run by hx.loom.check")
            at = f"{name} at line {op['line']}"
            handler = getattr(self, "op_" + name.replace(".", "_"), None)
            if name.startswith("check.param."):
                self.env[op["results"][0]] = params[op["results"][0]]
            elif handler is None:
                raise _Skip(f"{at} is not run by hx.loom.check")
            else:
                try:
                    handler(op, at)
                except (KeyError, TypeError, ValueError, IndexError, OverflowError) as e:
                    if isinstance(e, (_Skip, _Fail)):
                        raise
                    raise _malformed(f"check: @{self.case['name']}: {at}: {e}") from None

    def val(self, name):
        return self.env[name]

    def ref(self, op, clause):
        a = op["attrs"][clause]
        if isinstance(a, dict) and "value" in a:
            return self.env[a["value"]]
        return a

    def result(self, op, value):
        self.env[op["results"][0]] = value

    def make(self, op, fill):
        t = op["result_types"][0]
        if t["kind"] == "scalar":
            return _scalar(fill(np.zeros(1, np.float64 if t["elem"].startswith(("f", "bf")) else np.int64))[0], t["elem"])
        if t["kind"] != "tensor":
            raise _Skip(f"{op['name']} of type {t['spelling']} is not run by hx.loom.check")
        shape = _shape(t, self.env)
        dt = _dtype_of(t["elem"])
        n = int(np.prod(shape, dtype=np.int64))
        raw = fill(np.zeros(n, np.float64 if dt.kind == "f" or t["elem"] == "bf16" else np.int64))
        if dt.kind in "iub" and dt != np.bool_:
            bits = dt.itemsize * 8
            raw = (np.asarray(raw).astype(np.int64) & ((1 << bits) - 1)).astype(np.dtype(f"uint{bits}")).view(dt)
        return np.ascontiguousarray(np.asarray(raw).astype(dt)).reshape(shape)

    # --- values
    def op_index_constant(self, op, at):
        self.result(op, int(op["attrs"]["value"]))

    def op_scalar_constant(self, op, at):
        self.result(op, _scalar(op["attrs"]["value"], op["result_types"][0]["elem"]))

    def _index_binary(self, op, fn):
        a, b = (int(self.val(v)) for v in op["operands"])
        self.result(op, fn(a, b))

    def op_index_add(self, op, at): self._index_binary(op, lambda a, b: a + b)
    def op_index_sub(self, op, at): self._index_binary(op, lambda a, b: a - b)
    def op_index_mul(self, op, at): self._index_binary(op, lambda a, b: a * b)
    def op_index_min(self, op, at): self._index_binary(op, min)
    def op_index_max(self, op, at): self._index_binary(op, max)

    def op_index_div(self, op, at):
        self._index_binary(op, lambda a, b: int(a / b) if b else _fail(f"{at}: division by zero"))

    def op_index_rem(self, op, at):
        self._index_binary(op, lambda a, b: int(math.fmod(a, b)) if b else _fail(f"{at}: remainder by zero"))

    def op_index_cast(self, op, at):
        self.result(op, _scalar(self.val(op["operands"][0]), op["result_types"][0]["elem"]))

    def op_check_literal(self, op, at):
        self.result(op, _scalar(op["attrs"]["value"], op["result_types"][0]["elem"]))

    def op_check_generate_fill(self, op, at):
        v = op["attrs"]["value"]
        self.result(op, self.make(op, lambda z: np.full(z.shape, v, z.dtype)))

    def op_check_generate_iota(self, op, at):
        off, step, period = op["attrs"]["offset"], op["attrs"]["step"], op["attrs"].get("period")
        def fill(z):
            k = np.arange(z.size, dtype=np.int64)
            if period:
                k %= int(period)
            return off + step * k.astype(z.dtype)
        self.result(op, self.make(op, fill))

    def op_check_generate_random_uniform(self, op, at):
        lo, hi = op["attrs"]["range"]
        rng = np.random.default_rng(int(self.val(op["operands"][0])) & (2**64 - 1))
        def fill(z):
            if z.dtype.kind == "f":
                return rng.uniform(float(lo), float(hi), z.size)
            return rng.integers(int(lo), int(hi), z.size, endpoint=True)
        self.result(op, self.make(op, fill))

    def op_check_file_read_npy(self, op, at):
        x = np.load(op["attrs"]["path"])
        t = op["result_types"][0]
        want = _shape(t, self.env) if t["kind"] == "tensor" else ()
        if x.shape != want or x.dtype != _dtype_of(t["elem"]):
            raise _Fail(f"{at}: {op['attrs']['path']} holds {x.dtype}{list(x.shape)}, the case reads {t['spelling']}")
        self.result(op, np.ascontiguousarray(x))

    def op_check_file_write_npy(self, op, at):
        self.pending_writes = getattr(self, "pending_writes", [])
        self.pending_writes.append((op["attrs"]["path"], op["attrs"].get("mode", "always"), self.ref(op, "value")))

    def op_check_tensor_view(self, op, at):
        src = self.val(op["operands"][0])
        t = op["result_types"][0]
        shape, dt = _shape(t, self.env), _dtype_of(t["elem"])
        off = int(op["attrs"]["offset"])
        nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        flat = src.reshape(-1).view(np.uint8)
        if off < 0 or off + nbytes > flat.size:
            raise _Fail(f"{at}: bytes [{off}, {off + nbytes}) are outside the {flat.size}-byte source")
        self.result(op, flat[off:off + nbytes].view(dt).reshape(shape))

    # --- requirements and launches
    def op_check_requires(self, op, at):
        provider = op["params"][0] if op["params"] else ""
        feature = str(op["attrs"].get("feature", ""))
        if provider == "target.feature" and feature and "gfx1151".startswith(feature.replace("amdgpu.", "")):
            return
        raise _Skip(f"{at}: requirement {provider} {op['attrs']} is not met by the emulated devices")

    def op_check_skip_if(self, op, at):
        pass  # no provider of the emulator reports an exceptional environment

    def op_kernel_launch(self, op, at):
        from ._core import Access, BindingContract, HostVisible, KernelContract
        kname = op["callee"]
        art = self.arts.get(kname)
        if art is None:
            art = self.arts[kname] = compile(self.source, kname, target=GPU_TARGET, config=self.config)
        nw = int(op["attrs"]["workload_count"])
        vals = [self.val(v) for v in op["operands"]]
        workload, args = vals[:nw], vals[nw:]
        params = _params(art)
        scalars, tensors = {}, []
        for p, a in zip(params, args):
            if p["kind"] == "pointer":
                if not isinstance(a, np.ndarray):
                    raise _Fail(f"{at}: binding %{p['name']} of @{kname} needs a tensor, got {a!r}")
                tensors.append((p["name"], a))
            else:
                scalars[p["name"]] = a.item() if isinstance(a, np.generic) else a
        launch = art.launch_config(*[int(w) if not isinstance(w, np.generic) else w.item() for w in workload])
        rw = Access.READ_WRITE
        try:  # the alignments the kernel's code promises; a bounded footprint has none to state
            aligns = [b.alignment for b in art.contract_for(**scalars).bindings]
        except ValueError:
            aligns = [1] * len(tensors)
        contract = KernelContract([BindingContract(max(t.nbytes, 1), al, rw) for (_, t), al in zip(tensors, aligns)],
                                  art.pack_constants(**scalars))
        try:
            k = self.rt.load_gpu_kernel(art, launch.workgroups, launch.workgroup_size, contract)
        except Exception as e:  # a tensor smaller than the footprint, a bad geometry
            raise _Fail(f"{at}: {e}") from None
        bufs = []
        for _, t in tensors:
            b = self.rt.allocate(max(t.nbytes, 1), HostVisible())
            with b.map_write() as m:
                m[: t.nbytes] = np.ascontiguousarray(t).reshape(-1).view(np.uint8)
            bufs.append(b)
        g = self.rt.graph()
        g.gpu(k, bufs)
        c = g.prepare().submit()
        c.wait()
        if c.exception() is not None:
            raise _Fail(f"{at}: {c.exception()}")
        for (_, t), b in zip(tensors, bufs):
            with b.map_read() as m:
                t.reshape(-1).view(np.uint8)[:] = np.asarray(m[: t.nbytes])

    # --- expectations
    def _expect(self, op, at, kind):
        msg = _compare(kind, self.ref(op, "actual"), self.ref(op, "expected"), op["attrs"])
        if msg:
            self.failures.append(f"{at}: {msg}")

    def op_check_expect_equal(self, op, at): self._expect(op, at, "equal")
    def op_check_expect_bitwise(self, op, at): self._expect(op, at, "bitwise")
    def op_check_expect_close(self, op, at): self._expect(op, at, "close")

    def op_check_expect_shape(self, op, at):
        v = np.asarray(self.ref(op, "value"))
        want = op["attrs"]["shape"]
        want = [self.env[w["value"]] if isinstance(w, dict) else w for w in (want if isinstance(want, list) else [want])]
        if list(v.shape) != [int(w) for w in want]:
            self.failures.append(f"{at}: shape {list(v.shape)} differs from the expected {want}")


def _fail(msg):
    raise _Fail(msg)


def _malformed(msg: str):
    """A LoomError for a case check() cannot run as written (no source diagnostics)."""
    e = LoomError(msg)
    e.diagnostics = []
    return e


def _param_samples(op: dict, env_ints: dict) -> list:
    """The samples of one check.param.* op (Note [Running check cases])."""
    a, name = op["attrs"], op["name"]
    elem = op["result_types"][0]["elem"]
    at = f"{name} at line {op['line']}"
    if name == "check.param.range":
        b = a["bounds"]
        if not isinstance(b, list) or len(b) != 2:
            raise _malformed(f"check: {at}: bounds(lo to hi) takes two values, got {b!r}")
        if a.get("step") is not None and not a["step"] > 0:
            raise _malformed(f"check: {at}: step must be positive, got {a['step']!r}")
    if name == "check.param.choice":
        vals = a["values"] if isinstance(a["values"], list) else [a["values"]]
    elif name == "check.param.seed":
        vals = list(range(int(a["base"]), int(a["base"]) + int(a["count"])))
    else:
        lo, hi = a["bounds"]
        step = a.get("step")
        if "po2" in a:
            vals, p = [], 1
            while p <= hi:
                if p >= lo:
                    vals.append(p)
                p *= 2
        elif isinstance(lo, float) or isinstance(hi, float):
            if step is None:
                vals = [lo, hi] if lo != hi else [lo]
            else:
                n = int(math.floor((hi - lo) / step + 1e-9)) + 1
                vals = [lo + i * step for i in range(n)]
        else:
            vals = list(range(int(lo), int(hi) + 1, int(step or 1)))
    if not vals:
        raise _malformed(f"check: {at} gives no samples")
    return [_scalar(v, elem) for v in vals]


def check(source: str, *, config: dict | None = None) -> CheckReport:
    """Run every ``check.case`` of Loom module ``source`` on the emulated devices; a :class:`CheckReport`.

    Each case runs once per sample of its parameters (``check.param.*``),
    with its generators, arithmetic, ``kernel.launch`` of the module's kernels
    (compiled with ``config`` for the emulated GPU) and expectations
    (``check.expect.equal/bitwise/close/shape``); see Note [Running check
    cases] in this module for the exact rules. A case passes when every
    expectation of every sample holds; the result's message names the first
    failure, its line and the sample's parameters. Cases using ops outside the
    emulator (oracle providers, ``func.call`` of device functions, device
    events) are reported skipped with the reason, as are
    ``check.benchmark`` records (listed, not timed). ``str(report)`` is a
    readable summary; ``report.ok`` is True when nothing failed.

    Raises :class:`LoomError` when the source does not parse or verify (a
    malformed case: a missing clause, an unknown op, an undefined value).
    """
    module = _l.parse(source)
    from ._core import Runtime
    rt = Runtime()
    arts: dict = {}
    report = CheckReport()
    for case in module.checks:
        name = "@" + case["name"]
        if case["kind"] == "benchmark":
            report.append(CheckResult(name, "benchmark", False, True, 0,
                                      f"benchmark of {case['case']} {case['attrs'] or ''}".rstrip()
                                      + ": listed, not timed (emulated timings say nothing about the device)",
                                      case["line"]))
            continue
        params = [op for op in case["ops"] if op["name"].startswith("check.param.")]
        try:
            samples = [{}]
            for op in params:
                samples = [dict(s, **{op["results"][0]: v}) for s in samples for v in _param_samples(op, s)]
            if len(samples) > _MAX_SAMPLES:
                raise LoomError(f"check: {name} has {len(samples)} parameter samples, more than "
                                f"hx.loom.check runs ({_MAX_SAMPLES})")
            message, ran = "", 0
            for s in samples:
                r = _CaseRun(source, case, config, rt, arts)
                r.run(s)
                ran += 1
                for path, mode, value in getattr(r, "pending_writes", []):
                    if mode == "always" or r.failures:
                        np.save(path, value)
                if r.failures:
                    named = {("@" + (op["attrs"].get("name") or op["results"][0])): s[op["results"][0]]
                             for op in params}
                    where = f"sample {', '.join(f'{k[1:]}={v}' for k, v in named.items())}: " if named else ""
                    message = where + "; ".join(r.failures)
                    break
            report.append(CheckResult(name, "case", not message, False, ran, message, case["line"]))
        except _Skip as e:
            report.append(CheckResult(name, "case", False, True, 0, str(e), case["line"]))
        except _Fail as e:
            report.append(CheckResult(name, "case", False, False, 0, str(e), case["line"]))
    return report
