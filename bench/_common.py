"""Helpers shared by the benchmark scripts (not a benchmark: bench/run.py skips it)."""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
_BLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def drop_blas_overrides() -> None:
    """Re-execute the running script once without OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE.

    When inherited they make OpenBLAS pick a slower kernel (numerics.md, section 0). What was
    removed is left in HRX_BENCH_BLAS_UNSET for the JSON (blas_env_removed()). Call it before
    NumPy is imported: OpenBLAS reads them when it loads.
    """
    if any(v in os.environ for v in _BLAS_VARS) and "HRX_BENCH_BLAS_UNSET" not in os.environ:
        env = {k: v for k, v in os.environ.items() if k not in _BLAS_VARS}
        env["HRX_BENCH_BLAS_UNSET"] = ";".join(f"{v}={os.environ[v]}" for v in _BLAS_VARS if v in os.environ)
        os.execve(sys.executable, [sys.executable, *sys.argv], env)


def blas_env_removed() -> str:
    """The OpenBLAS variables drop_blas_overrides() removed ("" if none)."""
    return os.environ.get("HRX_BENCH_BLAS_UNSET", "")


def sustained(call, calls: int, last=None):
    """A function that runs ``call()`` ``calls`` times back to back, then ``last()`` (a wait) when given.

    For per-call figures: the caller divides the time by ``calls``. Pass a
    ``functools.partial`` as ``call`` so the loop adds no Python frame.
    """
    def run():
        for _ in range(calls):
            call()
        if last is not None:
            last()
    return run


def tiny_add_loops(calls: int):
    """The sustained tiny-op figure's two loops: (ours, peer, check).

    ``ours()`` runs ``calls`` back-to-back one-element float32
    ``hx.add(x, y, out=z)`` then one wait; ``peer()`` the same number of
    ``np.add(a, b, out=c)``; ``check()`` asserts that ours computed 1 + 1.
    Divide a timing by ``calls`` for the per-call cost.
    """
    import numpy as np

    import hrxarray as hx

    x, y, z = hx.asarray(np.ones(1, np.float32)), hx.asarray(np.ones(1, np.float32)), hx.empty(1, np.float32)
    a, b, c = np.ones(1, np.float32), np.ones(1, np.float32), np.empty(1, np.float32)
    add = hx.add

    def ours():
        for _ in range(calls):
            add(x, y, out=z)
        z.block_until_ready()

    def peer():
        for _ in range(calls):
            np.add(a, b, out=c)

    def check():
        assert hx.to_numpy(z)[0] == 2.0

    return ours, peer, check


def timings_s(fn, repeats: int, warmup: int = 2) -> list[float]:
    """Calls fn() warmup times, then times it repeats times: the seconds of each timed call."""
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return ts


def alternating_timings_s(ours, peer, repeats: int) -> tuple[list[float], list[float]]:
    """Times ours() and peer() alternately, one call each per round after a warm-up call, so that a
    noisy moment on the shared machine hits both: (our seconds, the peer's seconds)."""
    t_ours: list[float] = []
    t_peer: list[float] = []
    for _ in range(repeats):
        t_ours += timings_s(ours, 1, warmup=1)
        t_peer += timings_s(peer, 1, warmup=1)
    return t_ours, t_peer


def ufunc_vs_numpy_s(ours_f, peer_f, a, second, repeats: int):
    """Times hx ufunc ``ours_f`` against NumPy's ``peer_f`` over the array ``a`` (and ``second``: None,
    or a second operand, an array or a scalar, as NumPy gets it), both writing into an existing
    result of a's dtype, alternately (alternating_timings_s): (our seconds, NumPy's seconds, our
    result)."""
    import numpy as np  # here, so that importing _common does not import hrxarray

    import hrxarray as hx

    x = hx.asarray(a)
    out = hx.empty(a.shape, a.dtype)
    np_out = np.empty(a.shape, a.dtype)
    if second is None:
        ours = lambda: ours_f(x, out=out).block_until_ready()  # noqa: E731
        peer = lambda: peer_f(a, out=np_out)  # noqa: E731
    else:
        b_np = second
        b_hx = hx.asarray(b_np) if isinstance(b_np, np.ndarray) else b_np
        ours = lambda: ours_f(x, b_hx, out=out).block_until_ready()  # noqa: E731
        peer = lambda: peer_f(a, b_np, out=np_out)  # noqa: E731
    t_ours, t_peer = alternating_timings_s(ours, peer, repeats)
    return t_ours, t_peer, out


# The ISA features that decide the kernels' paths (issue 27): recorded with every figure.
ISA_FLAGS = ("avx2", "fma", "avx512f", "avx512_bf16", "amx_tile", "amx_bf16")


def cpu_flags() -> set[str]:
    """The CPU's feature flags as /proc/cpuinfo lists them (empty where there is no such file)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def host_description() -> dict:
    """The machine a figure is measured on: CPU model and count (and the CPUs this process may use), its ISA
    flags (ISA_FLAGS), OS, Python, NumPy, hrxarray's kernel paths and the kernels' thread count."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    info = {"cpu": cpu, "cpus": os.cpu_count(), "os": platform.platform(), "python": platform.python_version()}
    if hasattr(os, "sched_getaffinity"):
        info["cpus_usable"] = len(os.sched_getaffinity(0))
    flags = cpu_flags()
    info["isa"] = {f: f in flags for f in ISA_FLAGS}
    info["HRXARRAY_NUM_THREADS"] = os.environ.get("HRXARRAY_NUM_THREADS")
    try:
        import numpy

        import hrxarray as hx

        info["numpy"] = numpy.__version__
        info["backend"] = hx.Runtime().backend
        features = hx._core.cpu_features()
        info["kernel_path"] = features["kernel_path"]
        if not flags:  # no /proc/cpuinfo: what cpuid told the kernels
            info["isa"] = {f: bool(features.get(f, False)) for f in ISA_FLAGS}
        info["threads"] = hx._core.numerics.matmul_num_threads()
        info["kernel_families"] = dict(hx._core.numerics.kernel_paths())
    except Exception as exc:  # the figure is still worth recording
        info["hrxarray"] = f"not importable: {exc}"
    return info


def save_results(name: str, data: dict) -> Path:
    """Write bench/results/<name>.json and return its path.

    The file also records the host it was measured on (``host``, host_description()) and when
    (``measured_at``, local time with its UTC offset), so that bench/run.py can show each figure
    with its own host and date however many hosts and runs the table mixes.
    """
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    stamped = {**data, "host": host_description(),
               "measured_at": _dt.datetime.now().astimezone().isoformat(timespec="seconds")}
    path.write_text(json.dumps(stamped, indent=2))
    return path


def pyplot():
    """matplotlib.pyplot on the Agg backend, or None (with a note) when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot (pip install '.[bench]')", file=sys.stderr)
        return None
    return plt
