"""Native code for Loom GPU kernels: the IR a planned program carries, compiled with llvmlite.

The C++ program generates LLVM IR text when it is planned (ext/core/loom/codegen.cpp,
Note [Native Loom executor]); :func:`prepare` compiles it for the host CPU at opt level 3,
keeps the object code in a disk cache so that a second process loads instead of compiling,
loads it into one MCJIT engine kept for the process, and hands the entry address back to the
program, which from then on runs its dispatches through it. Whatever goes wrong here leaves
the program on the interpreter, with the reason in ``Artifact.executor_reason``.

``HRXARRAY_LOOM_NATIVE=0`` keeps every program on the interpreter. The cache lives in
``$HRXARRAY_LOOM_NATIVE_CACHE`` when set, else ``$XDG_CACHE_HOME/hrxarray/loom-native``
(``~/.cache/hrxarray/loom-native`` without an absolute XDG_CACHE_HOME).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import time
from pathlib import Path

from ._core import loom as _l

__all__ = ["prepare", "prepare_builtins", "stats", "cache_dir"]

_lock = threading.Lock()
_state: dict = {}
#: Totals for this process: programs compiled, loaded from the cache, and seconds spent.
stats = {"compiled": 0, "cache_hits": 0, "compile_seconds": 0.0, "load_seconds": 0.0}


def cache_dir() -> Path:
    """The directory holding compiled object code (see the module docstring)."""
    explicit = os.environ.get("HRXARRAY_LOOM_NATIVE_CACHE", "")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return root / "hrxarray" / "loom-native"


def _llvm():
    """The initialised llvmlite binding, target machine and engine (once per process)."""
    if "llvm" in _state:
        return _state["llvm"]
    import llvmlite
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    cpu = llvm.get_host_cpu_name()
    features = llvm.get_host_cpu_features().flatten()
    target = llvm.Target.from_default_triple()
    tm = target.create_target_machine(cpu=cpu, features=features, opt=3, codemodel="jitdefault")
    for name, address in _l._native_symbols().items():
        llvm.add_symbol(name, address)
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), tm)
    ident = "|".join([llvmlite.__version__, ".".join(map(str, llvm.llvm_version_info)), target.triple, cpu, features])
    _state["llvm"] = (llvm, tm, engine, ident)
    return _state["llvm"]


def _compile(llvm, tm, ir: str) -> bytes:
    mod = llvm.parse_assembly(ir)
    mod.verify()
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    return tm.emit_object(mod)


def _store(path: Path, data: bytes) -> None:
    # Written under a temporary name and renamed: a reader never sees half a file.
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def prepare(art) -> None:
    """Compile ``art``'s native IR (when it has any) and attach it; on failure record the reason."""
    if art.engine != "gpu" or not art.is_loom or art.executor == "native":
        return
    if os.environ.get("HRXARRAY_LOOM_NATIVE", "1") == "0":
        art._refuse_native("disabled by HRXARRAY_LOOM_NATIVE=0")
        return
    ir = art._native_ir
    if not ir:
        return
    try:
        with _lock:
            _attach(art, ir)
    except ImportError as e:
        art._refuse_native(f"llvmlite is not available ({e})")
    except Exception as e:  # the compiler's failure keeps the interpreter
        art._refuse_native(f"native compilation failed: {type(e).__name__}: {e}")


def _attach(art, ir: str) -> None:
    llvm, tm, engine, ident = _llvm()
    digest = hashlib.sha256((ident + "\n" + ir).encode()).hexdigest()
    entry = _state.setdefault("entries", {}).get(digest)
    if entry is None:
        # One engine for the process: each program's entry gets its own name.
        name = f"loom_wg_{digest[:24]}"
        path = cache_dir() / f"{digest}.o"
        t0 = time.perf_counter()
        obj = None
        try:
            obj = path.read_bytes()
        except OSError:
            pass
        if obj is None:
            obj = _compile(llvm, tm, ir.replace("@loom_wg(", f"@{name}("))
            stats["compiled"] += 1
            stats["compile_seconds"] += time.perf_counter() - t0
            try:
                _store(path, obj)
            except OSError:  # a read-only cache costs a compile per process, nothing else
                pass
        else:
            stats["cache_hits"] += 1
        t1 = time.perf_counter()
        engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        engine.finalize_object()
        entry = engine.get_function_address(name)
        stats["load_seconds"] += time.perf_counter() - t1
        if not entry:
            raise RuntimeError(f"the object code has no {name}")
        _state["entries"][digest] = entry
    art._attach_native(entry)
