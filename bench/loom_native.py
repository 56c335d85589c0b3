"""Loom GPU kernels: the native executor (LLVM via llvmlite) against the interpreter and NumPy.

Figures, medians of one run, each program run directly (``_core.loom._run_artifact``: the planned
program over host memory, no queue), so that the executors are what differs:

1. ``out = x + y`` over 16,777,216 float32 (our own Loom source): native, interpreter, NumPy
   (``np.add(x, y, out=z)``); GB/s counted as 12 bytes per element;
2. ``out = exp(x)`` over the same count: native, interpreter, NumPy (``np.exp(x, out=z)``);
   the two executors' bytes are compared (they must be equal), NumPy's are not (another exp);
3. the native code's compile time (a fresh cache directory: LLVM at opt level 3) and, in a
   second process on the same cache, the load time of a cache hit.

Writes bench/results/loom_native.json.

Run: python bench/loom_native.py [repeats=7]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

from _common import save_results, timings_s

N = 16_777_216

HEAD = """\
amdgpu.target<gfx1151> @gpu
kernel.def target(@gpu) export("{name}") @{name}(%count: index) {{
  %one = index.constant 1 : index
  %width = index.constant 256 : index
  %spare = index.constant 255 : index
  %n = index.assume %count [range(%count, 1, 1073741824)] : index
  %padded = index.add %n, %spare : index
  %groups = index.div %padded, %width : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%width, %one, %one) : index
}} launch(%count: index, {bufs}) {{
  %origin = index.constant 0 : offset
  %i = kernel.workitem.dispatch.id<x> : index
  %inside = index.cmp ult, %i, %count : index
"""

ADD = HEAD.format(name="add_f32n", bufs="%x: buffer, %y: buffer, %out: buffer") + """\
  %xs = buffer.view %x[%origin] : buffer -> view<[%count]xf32>
  %ys = buffer.view %y[%origin] : buffer -> view<[%count]xf32>
  %os = buffer.view %out[%origin] : buffer -> view<[%count]xf32>
  scf.if %inside {
    %a = view.load %xs[%i] : view<[%count]xf32> -> f32
    %b = view.load %ys[%i] : view<[%count]xf32> -> f32
    %s = scalar.addf %a, %b : f32
    view.store %s, %os[%i] : f32, view<[%count]xf32>
  }
  kernel.return
}
"""

EXP = HEAD.format(name="exp_f32n", bufs="%x: buffer, %out: buffer") + """\
  %xs = buffer.view %x[%origin] : buffer -> view<[%count]xf32>
  %os = buffer.view %out[%origin] : buffer -> view<[%count]xf32>
  scf.if %inside {
    %a = view.load %xs[%i] : view<[%count]xf32> -> f32
    %e = scalar.expf %a : f32
    view.store %e, %os[%i] : f32, view<[%count]xf32>
  }
  kernel.return
}
"""

PROBE = """
import json, sys, time
sys.path.insert(0, {here!r})
import hrxarray as hx
from hrxarray import _loom_native
from loom_native import ADD
t0 = time.perf_counter()
art = hx.loom.compile(ADD, "add_f32n", target="gfx1151")
print(json.dumps({{"executor": art.executor, **_loom_native.stats, "compile_call_s": time.perf_counter() - t0}}))
"""


def _probe(cache: str) -> dict:
    env = dict(os.environ, HRXARRAY_LOOM_NATIVE_CACHE=cache)
    code = PROBE.format(here=os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(repeats: int = 7) -> dict:
    import hrxarray as hx
    from hrxarray._core import loom as _l

    with tempfile.TemporaryDirectory() as cache:
        cold = _probe(cache)
        warm = _probe(cache)
    rng = np.random.default_rng(0)
    x = rng.uniform(-4, 4, N).astype(np.float32)
    y = rng.uniform(-4, 4, N).astype(np.float32)
    out: dict = {"elements": N, "repeats": repeats, "lanes": int(_l._native_lanes),
                 "compile_s": cold["compile_seconds"], "compile_executor": cold["executor"],
                 "cache_hit_load_s": warm["load_seconds"], "cache_hits": warm["cache_hits"],
                 "compiled_in_second_process": warm["compiled"]}
    for label, src, sym, ins, peer in (("add", ADD, "add_f32n", [x, y], lambda z: np.add(x, y, out=z)),
                                       ("exp", EXP, "exp_f32n", [x], lambda z: np.exp(x, out=z))):
        art = hx.loom.compile(src, sym, target="gfx1151")
        assert art.executor == "native", art.executor_reason
        consts = art.pack_constants(count=N)
        results = {}
        for ex, interp in (("native", False), ("interpreter", True)):
            z = np.zeros(N, np.float32)
            views = [a.view(np.uint8) for a in ins] + [z.view(np.uint8)]
            ts = timings_s(lambda: _l._run_artifact(art, views, consts, [N], interpret=interp), repeats, warmup=1)
            results[ex] = z.copy()
            out[f"{label}_{ex}_s"] = statistics.median(ts)
        z = np.zeros(N, np.float32)
        out[f"{label}_numpy_s"] = statistics.median(timings_s(lambda: peer(z), repeats))
        out[f"{label}_bytes_equal"] = bool(np.array_equal(results["native"].view(np.uint32), results["interpreter"].view(np.uint32)))
        nbytes = 4 * N * (len(ins) + 1)
        for ex in ("native", "interpreter", "numpy"):
            out[f"{label}_{ex}_gbps"] = nbytes / out[f"{label}_{ex}_s"] / 1e9
        out[f"{label}_speedup_vs_interpreter"] = out[f"{label}_interpreter_s"] / out[f"{label}_native_s"]
    path = save_results("loom_native", out)
    for k, v in out.items():
        print(f"{k:34s} {v:.4g}" if isinstance(v, float) else f"{k:34s} {v}")
    print(f"wrote {path}")
    return out


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
