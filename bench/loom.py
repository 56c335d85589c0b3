"""Loom on the emulated fabric: kernels written in Loom against the built-in C++ paths and NumPy, and the
compiler's costs.

Figures, each against its peer measured in the same run (medians):

1. an elementwise Loom kernel (``out = x + y``, float32, our own source) over 16,777,216 elements,
   called as ``hx.loom.ufunc(...)(x, y, out=z)`` + wait, against ``hx.add(x, y, out=z)`` + wait on the
   same DeviceArrays (GB/s counted as 12 bytes per element);
2. batched 8x8 gemm at gemm.batch = 16,384 in prepared graphs on the NPU: the built-in ``batched_gemm``
   (our Loom source, ``gemm.bfp16 = 1``) and the hrx-rs corpus ``batched_gemm.xdna.loom`` (read from the
   directory named by ``HRX_LOOM_CORPUS``; skipped when unset), against the C++ matmul kernel the deleted
   C++ built-in called (``hx.numerics.matmul(a, b, compute="bfp16")`` on host arrays), bits compared;
3. parse + verify + specialise of a generated 1,000-line module (``hx.loom.parse(src).specialize(...)``),
   against a plain ``str.splitlines()`` of the same text as the floor;
4. a cached ``hx.loom.compile`` (target < 50 µs) against a dict lookup of the same key;
5. the LLM-inference kernel set of ``examples/loom/*.loom`` (issue 25's speed figures): elementwise add
   and exp over 16 M float32, a row softmax (512 x 1024), an RMS norm (512 x 4096), a tiled f32 matmul
   with workgroup memory (1024^3), a q8_0-style block-quantised matrix-vector product (4096 x 4096, int8
   blocks of 32 with an f16 scale), and a flash-attention decode step (32 heads, d = 128, KV 4096), each a
   prepared GPU graph (data resident, submit + wait) against a NumPy float32 reference of the same op on
   the same data (the matvec including the dequantisation, the matmul NumPy's BLAS), with each ratio,
   their geometric mean and the issue's targets next to them. Each result is checked against NumPy
   before it is timed. A kernel whose first run takes over 10 s is timed once; the others as often as
   fits in about 20 s (at most ``repeats``), alternating with the peer.

The cost of one call of a Loom ufunc against ``hx.add(out=)`` at small sizes is bench/loom_launch.py's figure.

Writes bench/results/loom.json (+ .png when matplotlib is present).

Run: python bench/loom.py [repeats=15] [--llm-only] [--quick]
  --llm-only  only figure 5, merged into the existing bench/results/loom.json (the other figures kept);
  --quick     figure 5 only, at small sizes and 3 repeats, printed and not written (for development).
"""

from __future__ import annotations

import json
import math
import os
import statistics
import sys
import time
from pathlib import Path

from _common import RESULTS, blas_env_removed, drop_blas_overrides, pyplot, save_results, timings_s

drop_blas_overrides()  # the matmul figure's peer is OpenBLAS

import numpy as np  # noqa: E402

import hrxarray as hx  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "loom"))
import loom_kernels  # noqa: E402

N_ELEMENTS = 16_777_216
GEMM_BATCH = 16_384

ADD_F32 = """\
amdgpu.target<gfx1151> @gpu
kernel.def target(@gpu) export("add_f32x") @add_f32x(%count: index) {
  %one = index.constant 1 : index
  %width = index.constant 256 : index
  %spare = index.constant 255 : index
  %n = index.assume %count [range(%count, 1, 1073741824)] : index
  %padded = index.add %n, %spare : index
  %groups = index.div %padded, %width : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%width, %one, %one) : index
} launch(%count: index, %x: buffer, %y: buffer, %out: buffer) {
  %origin = index.constant 0 : offset
  %i = kernel.workitem.dispatch.id<x> : index
  %xs = buffer.view %x[%origin] : buffer -> view<[%count]xf32>
  %ys = buffer.view %y[%origin] : buffer -> view<[%count]xf32>
  %os = buffer.view %out[%origin] : buffer -> view<[%count]xf32>
  %inside = index.cmp ult, %i, %count : index
  scf.if %inside {
    %a = view.load %xs[%i] : view<[%count]xf32> -> f32
    %b = view.load %ys[%i] : view<[%count]xf32> -> f32
    %s = scalar.addf %a, %b : f32
    view.store %s, %os[%i] : f32, view<[%count]xf32>
  }
  kernel.return
}
"""


def median(fn, repeats):
    return statistics.median(timings_s(fn, repeats))


def elementwise(repeats):
    rng = np.random.default_rng(0)
    xs = rng.standard_normal(N_ELEMENTS, dtype=np.float32)
    ys = rng.standard_normal(N_ELEMENTS, dtype=np.float32)
    x, y = hx.asarray(xs), hx.asarray(ys)
    z = hx.empty((N_ELEMENTS,), np.float32)
    add = hx.loom.ufunc(ADD_F32, "add_f32x")
    add(x, y, out=z)
    np.testing.assert_array_equal(hx.to_numpy(z), xs + ys)

    def loom_run():
        add(x, y, out=z).block_until_ready()

    def hx_run():
        hx.add(x, y, out=z).block_until_ready()

    loom_t, hx_t = [], []
    for _ in range(repeats):  # alternate, so that both see the same machine state
        loom_t.append(median(loom_run, 1))
        hx_t.append(median(hx_run, 1))
    moved = 12 * N_ELEMENTS
    return {"loom_s": statistics.median(loom_t), "hx_add_s": statistics.median(hx_t),
            "loom_gb_s": moved / statistics.median(loom_t) / 1e9, "hx_add_gb_s": moved / statistics.median(hx_t) / 1e9}


def batched_gemm(repeats):
    """The built-in batched_gemm (our Loom source) and, with HRX_LOOM_CORPUS, the corpus pipeline, in NPU
    graphs, against the C++ matmul kernel the deleted C++ built-in called, on the same operands."""
    import ml_dtypes

    corpus = os.environ.get("HRX_LOOM_CORPUS")
    path = Path(corpus or "") / "batched_gemm.xdna.loom"
    rt = hx.Runtime()
    npu = rt.npu()
    arts = {"builtin": hx.kernels.npu("batched_gemm", **{"gemm.batch": GEMM_BATCH, "gemm.bfp16": 1})}
    if corpus and path.exists():
        arts["loom"] = hx.loom.compile(path.read_text(), "gemm", target="xdna", config={"gemm.batch": GEMM_BATCH})
    rng = np.random.default_rng(1)
    a = rng.integers(-4, 5, (GEMM_BATCH, 64)).astype(ml_dtypes.bfloat16)
    b = rng.integers(-4, 5, (GEMM_BATCH, 64)).astype(ml_dtypes.bfloat16)
    # Spread the exponents so the bfp16 quantisation has work to do (integers alone would be exact).
    a = (a.astype(np.float32) * rng.choice([0.001, 1.0, 30.0], a.shape)).astype(ml_dtypes.bfloat16)
    b = (b.astype(np.float32) * rng.choice([0.001, 1.0, 30.0], b.shape)).astype(ml_dtypes.bfloat16)
    bufs = {n: rt.allocate(s, hx.Shared(npu)) for n, s in (("a", GEMM_BATCH * 128), ("b", GEMM_BATCH * 128))}
    for name, data in (("a", a), ("b", b)):
        with bufs[name].map_write() as m:
            m[:] = data.view(np.uint8).reshape(-1)
    graphs = {}
    for name, art in arts.items():
        bufs["c_" + name] = rt.allocate(GEMM_BATCH * 256, hx.Shared(npu))
        g = rt.graph()
        g.npu(npu.load_artifact(art, 1, art.contract), [bufs["a"], bufs["b"], bufs["c_" + name]])
        graphs[name] = g.prepare()

    def run(name):
        c = graphs[name].submit()
        if not c.wait(120.0):
            raise RuntimeError("batched gemm did not finish within 120 s")
        if c.exception() is not None:
            raise c.exception()

    # The C++ peer: quantise both operands to bfp16ebs8 along K (flush_subnormal, as both Loom sources
    # here), then the 8x8 bf16 products; host arrays in and out, no runtime around it.
    a3, b3 = a.reshape(GEMM_BATCH, 8, 8), b.reshape(GEMM_BATCH, 8, 8)
    c_native = np.empty((GEMM_BATCH, 8, 8), np.float32)

    def native():
        hx.numerics.matmul(a3, b3, compute="bfp16", rounding="floor", out=c_native)

    native()
    res = {"source": "hrx-rs examples/kernels/batched_gemm.xdna.loom (HRX_LOOM_CORPUS)" if "loom" in arts
           else "corpus skipped: HRX_LOOM_CORPUS is not set (or has no batched_gemm.xdna.loom)"}
    times = {name: [] for name in [*arts, "native"]}
    for name in arts:
        run(name)
        with bufs["c_" + name].map_read() as m:
            got = np.asarray(m).view(np.float32).reshape(GEMM_BATCH, 8, 8)
            res[name + "_equals_native"] = bool(np.array_equal(got, c_native))
    for _ in range(repeats):
        for name in arts:
            times[name].append(median(lambda: run(name), 1))
        times["native"].append(median(native, 1))
    for name, ts in times.items():
        res[name + "_s"] = statistics.median(ts)
        res[name + "_mat_s"] = GEMM_BATCH / statistics.median(ts)
    return res


def generated_module(lines: int, salt: int) -> str:
    """A module of about `lines` lines: GPU kernels of index and f32 arithmetic, each ~20 lines."""
    out = [f"// generated {salt}", "amdgpu.target<gfx1151> @gpu"]
    k = 0
    while len(out) < lines:
        out += [
            f"kernel.def target(@gpu) @k{k}(%count: index) {{",
            "  %one = index.constant 1 : index",
            "  %width = index.constant 64 : index",
            "  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%width, %one, %one) : index",
            "} launch(%count: index, %alpha: f32, %x: buffer) {",
            "  %origin = index.constant 0 : offset",
            "  %i = kernel.workitem.dispatch.id<x> : index",
            "  %xs = buffer.view %x[%origin] : buffer -> view<[%count]xf32>",
            "  %inside = index.cmp ult, %i, %count : index",
            "  scf.if %inside {",
            "    %v = view.load %xs[%i] : view<[%count]xf32> -> f32",
            "    %p = scalar.mulf %v, %alpha : f32",
            "    %q = scalar.addf %p, %alpha : f32",
            "    %r = scalar.mulf %q, %v : f32",
            "    %s = scalar.subf %r, %p : f32",
            "    view.store %s, %xs[%i] : f32, view<[%count]xf32>",
            "  }",
            "  kernel.return",
            "}",
        ]
        k += 1
    return "\n".join(out) + "\n"


def frontend(repeats):
    sources = [generated_module(1000, i) for i in range(repeats + 2)]
    lines = sources[0].count("\n")
    last = sources[0].count("kernel.def") - 1
    it = iter(sources)

    def parse_specialise():
        hx.loom.parse(next(it)).specialize(f"k{last}", "gfx1151", {})

    t = median(parse_specialise, repeats)
    floor = median(lambda: sources[0].splitlines(), repeats)
    return {"lines": lines, "parse_verify_specialise_s": t, "splitlines_s": floor}


def cached_compile(repeats):
    hx.loom.compile(ADD_F32, "add_f32x", target="gfx1151")
    inner = 10_000
    t = min(timings_s(lambda: [hx.loom.compile(ADD_F32, "add_f32x", target="gfx1151") for _ in range(inner)],
                      repeats)) / inner
    d = {(ADD_F32, "add_f32x", "gfx1151", ()): 1}
    key = (ADD_F32, "add_f32x", "gfx1151", ())
    floor = min(timings_s(lambda: [d.get(key) for _ in range(inner)], repeats)) / inner
    return {"cached_compile_s": t, "dict_get_s": floor}


# --- 6. the LLM-inference kernel set (examples/loom/*.loom) ------------------------------------------

# name -> (what the figure calls it, issue 25's target: Loom time <= target x NumPy's time)
LLM_KERNELS = {
    "add": ("elementwise add", 1.3),
    "exp": ("elementwise exp", 1.3),
    "softmax": ("row softmax", 2.0),
    "rms_norm": ("RMS norm", 2.0),
    "matvec_q8_0": ("q8_0 matrix-vector", 2.0),
    "flash_decode": ("flash-attention decode", 3.0),
    "matmul": ("tiled f32 matmul", 5.0),
}
LLM_GEOMEAN_TARGET = 2.0
LLM_SIZES = {
    "full": {"add": 16_777_216, "exp": 16_777_216, "softmax": (512, 1024), "rms_norm": (512, 4096),
             "matvec_q8_0": (4096, 4096), "flash_decode": (32, 4096), "matmul": (1024, 1024, 1024)},
    "quick": {"add": 1 << 20, "exp": 1 << 20, "softmax": (128, 1024), "rms_norm": (128, 4096),
              "matvec_q8_0": (1024, 4096), "flash_decode": (32, 512), "matmul": (256, 256, 256)},
}
LLM_ONE_RUN_S = 10.0    # a kernel slower than this is timed once
LLM_BUDGET_S = 20.0     # otherwise: as many alternating repetitions as fit in about this (at most `repeats`)


def llm_case(name: str, size):
    """(shape text, a Launch of the Loom kernel on fresh data, the NumPy reference as a function returning its
    result, a function returning the Loom result, the allowed |loom - numpy| relative to max|numpy|)."""
    rng = np.random.default_rng(25)
    f32 = np.float32
    if name in ("add", "exp"):
        n = size
        x = rng.standard_normal(n, dtype=f32)
        if name == "add":
            y, z = rng.standard_normal(n, dtype=f32), np.empty(n, f32)
            launch = loom_kernels.Launch("add_f32", {"count": n}, [x, y, np.empty(n, f32)])
            return f"{n:,} float32", launch, lambda: np.add(x, y, out=z), lambda: launch.result(2), 0.0
        z = np.empty(n, f32)
        launch = loom_kernels.Launch("exp_f32", {"count": n}, [x, np.empty(n, f32)])
        return f"{n:,} float32", launch, lambda: np.exp(x, out=z), lambda: launch.result(1), 4e-7
    if name == "softmax":
        rows, cols = size
        x = rng.standard_normal((rows, cols), dtype=f32) * f32(4)
        e = np.empty_like(x)

        def ref():
            np.subtract(x, x.max(axis=1, keepdims=True), out=e)
            np.exp(e, out=e)
            return np.divide(e, e.sum(axis=1, keepdims=True), out=e)
        launch = loom_kernels.Launch("softmax_rows", {"rows": rows, "cols": cols}, [x, np.empty_like(x)])
        return f"{rows} x {cols}", launch, ref, lambda: launch.result(1), 1e-5
    if name == "rms_norm":
        rows, cols = size
        x = rng.standard_normal((rows, cols), dtype=f32)
        w = rng.standard_normal(cols, dtype=f32)
        eps = f32(1e-5)

        def ref():
            scale = f32(1) / np.sqrt(np.einsum("ij,ij->i", x, x) / f32(cols) + eps)
            return x * scale[:, None] * w
        launch = loom_kernels.Launch("rms_norm", {"rows": rows, "cols": cols, "eps": float(eps)},
                                     [x, w, np.empty_like(x)])
        return f"{rows} x {cols}", launch, ref, lambda: launch.result(2), 1e-5
    if name == "matvec_q8_0":
        rows, cols = size
        q = rng.integers(-127, 128, (rows, cols), dtype=np.int8)
        d = (rng.random((rows, cols // 32)) * 0.01 + 1e-3).astype(np.float16)
        x = rng.standard_normal(cols, dtype=f32)

        def ref():  # dequantise, then NumPy's (BLAS) matrix-vector product
            w = q.reshape(rows, -1, 32).astype(f32) * d.astype(f32)[..., None]
            return w.reshape(rows, cols) @ x
        launch = loom_kernels.Launch("matvec_q8_0", {"rows": rows, "cols": cols}, [q, d, x, np.empty(rows, f32)])
        return f"{rows} x {cols}", launch, ref, lambda: launch.result(3), 1e-5
    if name == "flash_decode":
        heads, kv = size
        q = rng.standard_normal((heads, 128), dtype=f32)
        k = rng.standard_normal((heads, kv, 128), dtype=f32)
        v = rng.standard_normal((heads, kv, 128), dtype=f32)
        scale = f32(128 ** -0.5)

        def ref():  # scores, softmax and weighted sum, batched over heads
            s = np.matmul(k, q[:, :, None])[:, :, 0] * scale
            p = np.exp(s - s.max(axis=1, keepdims=True))
            p /= p.sum(axis=1, keepdims=True)
            return np.matmul(p[:, None, :], v)[:, 0, :]
        launch = loom_kernels.Launch("flash_decode", {"heads": heads, "kv_len": kv, "scale": float(scale)},
                                     [q, k, v, np.empty((heads, 128), f32)])
        return f"{heads} heads, d = 128, KV {kv:,}", launch, ref, lambda: launch.result(3), 1e-5
    if name == "matmul":
        m, n, kk = size
        a = rng.standard_normal((m, kk), dtype=f32)
        b = rng.standard_normal((kk, n), dtype=f32)
        c = np.empty((m, n), f32)
        launch = loom_kernels.Launch("matmul_tiled", {"m": m, "n": n, "k": kk}, [a, b, np.empty((m, n), f32)])
        return f"{m} x {kk} @ {kk} x {n}", launch, lambda: np.matmul(a, b, out=c), lambda: launch.result(2), 1e-5
    raise ValueError(f"unknown kernel {name!r}")


# Pause before each timed run of the kernel set, so that OpenBLAS's idle threads have stopped spinning:
# after a 1024^3 sgemm they spin longer than 50 ms, and with 0.05 s the tiled Loom matmul on the 2-vCPU
# Xeon took 46-48 ms in most processes (one CPU left to it) against 24-25 ms after 0.3 s (2026-12-05).
SETTLE_S = 0.3


def run_kernel(name: str, size, repeats: int) -> dict:
    """Time Loom kernel ``name`` (a prepared graph, submit + wait) and its NumPy reference on the same data.

    The row records the executor hrxarray chose for the kernel (``Artifact.executor``: 'native' or
    'interpreter', with ``Artifact.executor_reason`` when not native), so a ratio is read against what
    actually ran. The Loom result is checked against the reference before anything is timed.
    """
    shape, launch, ref, result, tol = llm_case(name, size)
    executor, reason = launch.artifact.executor, launch.artifact.executor_reason
    t0 = time.perf_counter()
    launch.run()
    first = time.perf_counter() - t0
    want = np.asarray(ref())
    err = float(np.abs(result() - want).max() / max(np.abs(want).max(), 1e-30))
    if not err <= tol:
        raise AssertionError(f"{name}: Loom result differs from NumPy's by {err:.3g} of its largest value")
    if first > LLM_ONE_RUN_S:
        loom_t, peer_t = [first], timings_s(ref, max(3, min(repeats, 5)))
    else:
        reps = max(1, min(repeats, int(LLM_BUDGET_S / max(first, 1e-6))))
        loom_t, peer_t = [], []
        for _ in range(reps):  # alternate, so that a noisy moment of the shared machine hits both
            # Settle first: OpenBLAS's threads spin a while after NumPy's call and would take the
            # cores from the Loom run that follows it (the matmul and matvec figures' peers are BLAS).
            time.sleep(SETTLE_S)
            loom_t += timings_s(launch.run, 1, warmup=0)
            time.sleep(SETTLE_S)
            peer_t += timings_s(ref, 1, warmup=0 if peer_t else 1)
    loom_s, numpy_s = statistics.median(loom_t), statistics.median(peer_t)
    target = LLM_KERNELS[name][1]
    return {"kernel": name, "source": f"examples/loom/{launch.name}.loom", "shape": shape,
            "executor": executor, "executor_reason": reason, "loom_s": loom_s, "numpy_s": numpy_s,
            "loom_repetitions": len(loom_t), "numpy_repetitions": len(peer_t), "max_rel_diff_vs_numpy": err,
            "ratio": loom_s / numpy_s, "target_ratio": target, "meets_target": loom_s / numpy_s <= target}


def llm_kernels(repeats: int, quick: bool = False) -> dict:
    """Figure 6: every kernel of the set at the full (or --quick) sizes, and the geometric mean of the ratios."""
    sizes = LLM_SIZES["quick" if quick else "full"]
    out = {"sizes": "quick" if quick else "full", "kernels": {},
           "load_average_1min_at_start": os.getloadavg()[0]}  # the figures are only as quiet as the machine
    for name in LLM_KERNELS:
        print(f"  {LLM_KERNELS[name][0]} ...", end=" ", flush=True)
        r = run_kernel(name, sizes[name], repeats)
        out["kernels"][name] = r
        print(f"{r['shape']}: Loom {r['loom_s'] * 1e3:.4g} ms, NumPy {r['numpy_s'] * 1e3:.4g} ms, "
              f"ratio {r['ratio']:.3g} (target <= {r['target_ratio']}, {r['loom_repetitions']} run(s), {r['executor']})",
              flush=True)
        if r["executor"] != "native":
            print(f"    not native: {r['executor_reason']}", flush=True)
    ratios = [r["ratio"] for r in out["kernels"].values()]
    out["geomean_ratio"] = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    out["geomean_target"] = LLM_GEOMEAN_TARGET
    out["meets_geomean_target"] = out["geomean_ratio"] <= LLM_GEOMEAN_TARGET
    out["blas_env_removed"] = blas_env_removed()
    return out


def llm_rows(llm: dict) -> list[dict]:
    """Table rows of figure 5: one per kernel (Loom ms against NumPy ms), then the geometric mean."""
    rows = []
    for name, r in llm["kernels"].items():
        rows.append({"figure": f"LLM set: Loom {LLM_KERNELS[name][0]}, {r['shape']} ({r['executor']}, median of "
                               f"{r['loom_repetitions']}; target <= {r['target_ratio']:g}x NumPy)",
                     "value": r["loom_s"] * 1e3, "unit": "ms", "peer": "NumPy float32, same op and data",
                     "peer_value": r["numpy_s"] * 1e3, "ratio": r["ratio"], "ratio_label": "ours / peer",
                     "llm_kernel": name})
    rows.append({"figure": f"LLM set: geometric mean of the {len(llm['kernels'])} ratios "
                           f"(target <= {llm['geomean_target']:g}x)",
                 "value": llm["geomean_ratio"], "unit": "x", "peer": "—", "peer_value": None,
                 "ratio": llm["geomean_ratio"], "ratio_label": "geometric mean of Loom / NumPy",
                 "llm_kernel": "geomean"})
    return rows


def table(res):
    e, f, c = res["elementwise"], res["frontend"], res["compile"]
    rows = [{"figure": "Loom elementwise add, 16 M float32, ufunc + wait (median)", "value": e["loom_gb_s"],
             "unit": "GB/s", "peer": "hx.add(x, y, out=z) + wait", "peer_value": e["hx_add_gb_s"],
             "ratio": e["loom_gb_s"] / e["hx_add_gb_s"], "ratio_label": "ours / peer"}]
    g = res["batched_gemm"]
    peer = "C++ matmul kernel: hx.numerics.matmul(compute='bfp16') on host arrays"
    for name, label in (("loom", "Loom batched_gemm (corpus)"), ("builtin", "built-in batched_gemm (our Loom source)")):
        if name + "_mat_s" in g:
            rows.append({"figure": f"{label} at 16,384, NPU graph, gemm.bfp16 (median)",
                         "value": g[name + "_mat_s"] / 1e6, "unit": "M mat/s", "peer": peer,
                         "peer_value": g["native_mat_s"] / 1e6, "ratio": g[name + "_mat_s"] / g["native_mat_s"],
                         "ratio_label": "ours / peer", "equal_bits": g[name + "_equals_native"]})
    rows.append({"figure": f"parse + verify + specialise, generated {f['lines']}-line module (median; target << 50 ms)",
                 "value": f["parse_verify_specialise_s"] * 1e3, "unit": "ms", "peer": "str.splitlines() of it",
                 "peer_value": f["splitlines_s"] * 1e3,
                 "ratio": f["parse_verify_specialise_s"] / f["splitlines_s"], "ratio_label": "ours / peer"})
    rows.append({"figure": "cached hx.loom.compile (best; target < 50 µs)", "value": c["cached_compile_s"] * 1e6,
                 "unit": "µs", "peer": "dict.get of the same key", "peer_value": c["dict_get_s"] * 1e6,
                 "ratio": c["cached_compile_s"] / c["dict_get_s"], "ratio_label": "ours / peer"})
    if "llm_kernels" in res:
        rows += llm_rows(res["llm_kernels"])
    return rows


def plot(res):
    plt = pyplot()
    if plt is None:
        return
    rows = [r for r in res["table"] if "llm_kernel" not in r]
    llm = res.get("llm_kernels")
    panels = len(rows) + bool(llm)
    fig, axes = plt.subplots(1, panels, figsize=(4 * panels, 4), squeeze=False)
    axes = list(axes[0])
    for ax, row in zip(axes, rows):
        ax.bar(["Loom", "peer"], [row["value"], row["peer_value"]], color=["C0", "C1"])
        ax.set_title(row["figure"].split(" (")[0], fontsize=8)
        ax.set_ylabel(row["unit"])
    if llm:
        # The kernel set: each Loom / NumPy time ratio (log scale) with its target as a tick above it.
        ax = axes[-1]
        names = list(llm["kernels"]) + ["geomean"]
        ratios = [r["ratio"] for r in llm["kernels"].values()] + [llm["geomean_ratio"]]
        targets = [r["target_ratio"] for r in llm["kernels"].values()] + [llm["geomean_target"]]
        xs = range(len(names))
        ax.bar(xs, ratios, color=["C0"] * (len(names) - 1) + ["C2"])
        ax.scatter(xs, targets, marker="_", s=300, color="C3", label="target", zorder=3)
        ax.set_yscale("log")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(names, rotation=45, ha="right", fontsize=7)
        ax.set_ylabel("Loom time / NumPy time")
        native = sum(r.get("executor") == "native" for r in llm["kernels"].values())
        ax.set_title(f"LLM kernel set ({native} of {len(llm['kernels'])} native, {llm['sizes']} sizes)", fontsize=8)
        ax.legend(fontsize=8)
    fig.suptitle("Loom on the emulated fabric (medians)")
    fig.tight_layout()
    fig.savefig(RESULTS / "loom.png", dpi=100)


def report(res):
    """Print the table rows (and where the batched gemm's corpus came from)."""
    for row in res["table"]:
        peer = "" if row["peer_value"] is None else f" vs {row['peer']} {row['peer_value']:.4g}"
        print(f"{row['figure']}: {row['value']:.4g} {row['unit']}{peer} ({row['ratio_label']} {row['ratio']:.3g})")
    if "batched_gemm" in res:
        print("batched gemm:", res["batched_gemm"]["source"])


def main(argv):
    flags = {a for a in argv[1:] if a.startswith("--")}
    if flags - {"--quick", "--llm-only"}:
        sys.exit(f"unknown option(s) {sorted(flags - {'--quick', '--llm-only'})}; "
                 "usage: python bench/loom.py [repeats=15] [--llm-only] [--quick]")
    args = [a for a in argv[1:] if not a.startswith("--")]
    quick = "--quick" in flags
    repeats = int(args[0]) if args else 3 if quick else 15
    if quick or "--llm-only" in flags:
        print(f"LLM kernel set ({'quick' if quick else 'full'} sizes) ...", flush=True)
        llm = llm_kernels(repeats, quick=quick)
        if quick:
            report({"table": llm_rows(llm)})
            print("--quick: nothing written")
            return
        path = RESULTS / "loom.json"
        res = json.loads(path.read_text()) if path.exists() else {}
        res.pop("host", None)
        if "measured_at" in res:  # the file's stamp becomes this run's; keep when the other figures were measured
            res["other_figures_measured_at"] = res.pop("measured_at")
        res["llm_kernels"] = llm
        res["llm_kernels_repeats"] = repeats
        if "elementwise" in res:
            res["table"] = table(res)
        else:  # no earlier full run to merge into
            res.setdefault("figure", "Loom kernels vs built-in paths; compiler costs")
            res.setdefault("repeats", repeats)
            res["table"] = llm_rows(llm)
    else:
        res = {"figure": "Loom kernels vs built-in paths; compiler costs", "repeats": repeats}
        print("elementwise 16 M float32 ...", flush=True)
        res["elementwise"] = elementwise(repeats)
        print("batched gemm 16,384 ...", flush=True)
        res["batched_gemm"] = batched_gemm(repeats)
        print("frontend, 1,000 lines ...", flush=True)
        res["frontend"] = frontend(repeats)
        print("cached compile ...", flush=True)
        res["compile"] = cached_compile(repeats)
        print("LLM kernel set (full sizes) ...", flush=True)
        res["llm_kernels"] = llm_kernels(repeats)
        res["table"] = table(res)
    path = save_results("loom", res)
    plot(res)
    report(res)
    print(f"wrote {path}")


if __name__ == "__main__":
    main(sys.argv)
