"""Loom on the emulated fabric: kernels written in Loom against the built-in C++ paths, and the compiler's costs.

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
5. the cost of one call at small and middle sizes (8 to 65,536 float32): 1,000 calls of the Loom add
   ufunc with ``out=`` and then one wait, against the same with ``hx.add(x, y, out=z)``, alternated.

Writes bench/results/loom.json (+ .png when matplotlib is present).

Run: python bench/loom.py [repeats=15]
"""

from __future__ import annotations

import os
import functools
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import hrxarray as hx
from _common import RESULTS, pyplot, save_results, sustained, timings_s

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


CALL_SIZES = (8, 1024, 12_288, 65_536)


def per_call(repeats):
    """Seconds per call, sustained (1,000 calls then one wait), of the Loom add ufunc and of hx.add."""
    add = hx.loom.ufunc(ADD_F32, "add_f32x")
    out = {}
    for n in CALL_SIZES:
        x = hx.asarray(np.arange(n, dtype=np.float32))
        y = hx.asarray(np.ones(n, dtype=np.float32))
        z = hx.empty((n,), np.float32)
        calls = 1000
        loom_run = sustained(functools.partial(add, x, y, out=z), calls, z.block_until_ready)
        hx_run = sustained(functools.partial(hx.add, x, y, out=z), calls, z.block_until_ready)

        loom_run()
        np.testing.assert_array_equal(hx.to_numpy(z), np.arange(n, dtype=np.float32) + 1)
        loom_t, hx_t = [], []
        for _ in range(max(3, repeats // 3)):
            loom_t.append(median(loom_run, 1) / calls)
            hx_t.append(median(hx_run, 1) / calls)
        out[n] = {"loom_s": statistics.median(loom_t), "hx_add_s": statistics.median(hx_t)}
        print(f"  n={n}: loom ufunc {out[n]['loom_s'] * 1e6:.2f} us, hx.add {out[n]['hx_add_s'] * 1e6:.2f} us per call",
              flush=True)
    return out


def cached_compile(repeats):
    hx.loom.compile(ADD_F32, "add_f32x", target="gfx1151")
    inner = 10_000
    t = min(timings_s(lambda: [hx.loom.compile(ADD_F32, "add_f32x", target="gfx1151") for _ in range(inner)],
                      repeats)) / inner
    d = {(ADD_F32, "add_f32x", "gfx1151", ()): 1}
    key = (ADD_F32, "add_f32x", "gfx1151", ())
    floor = min(timings_s(lambda: [d.get(key) for _ in range(inner)], repeats)) / inner
    return {"cached_compile_s": t, "dict_get_s": floor}


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
    for n, v in res.get("per_call", {}).items():
        rows.append({"figure": f"one call of the Loom add ufunc, {int(n):,} float32 (sustained, median)",
                     "value": v["loom_s"] * 1e6, "unit": "µs", "peer": "hx.add(x, y, out=z)",
                     "peer_value": v["hx_add_s"] * 1e6, "ratio": v["loom_s"] / v["hx_add_s"],
                     "ratio_label": "ours / peer"})
    return rows


def plot(res):
    plt = pyplot()
    if plt is None:
        return
    rows = [r for r in res["table"] if not r["figure"].startswith("one call")]
    calls = res.get("per_call", {})
    fig, axes = plt.subplots(1, len(rows) + bool(calls), figsize=(4 * (len(rows) + bool(calls)), 4))
    for ax, row in zip(axes, rows):
        ax.bar(["Loom", "peer"], [row["value"], row["peer_value"]], color=["C0", "C1"])
        ax.set_title(row["figure"].split(" (")[0], fontsize=8)
        ax.set_ylabel(row["unit"])
    if calls:
        ax = axes[-1]
        sizes = [int(n) for n in calls]
        ax.plot(sizes, [v["loom_s"] * 1e6 for v in calls.values()], "o-", color="C0", label="Loom ufunc")
        ax.plot(sizes, [v["hx_add_s"] * 1e6 for v in calls.values()], "o-", color="C1", label="hx.add")
        ax.set_xscale("log")
        ax.set_xlabel("float32 elements")
        ax.set_ylabel("µs per call")
        ax.set_title("one call, sustained", fontsize=8)
        ax.legend(fontsize=8)
    fig.suptitle("Loom on the emulated fabric (medians)")
    fig.tight_layout()
    fig.savefig(RESULTS / "loom.png", dpi=100)


def main(argv):
    repeats = int(argv[1]) if len(argv) > 1 else 15
    res = {"figure": "Loom kernels vs built-in paths; compiler costs", "repeats": repeats}
    print("elementwise 16 M float32 ...", flush=True)
    res["elementwise"] = elementwise(repeats)
    print("batched gemm 16,384 ...", flush=True)
    res["batched_gemm"] = batched_gemm(repeats)
    print("frontend, 1,000 lines ...", flush=True)
    res["frontend"] = frontend(repeats)
    print("cached compile ...", flush=True)
    res["compile"] = cached_compile(repeats)
    print("per call, 8 to 65,536 elements ...", flush=True)
    res["per_call"] = per_call(repeats)
    res["table"] = table(res)
    path = save_results("loom", res)
    plot(res)
    for row in res["table"]:
        print(f"{row['figure']}: {row['value']:.4g} {row['unit']} vs {row['peer']} {row['peer_value']:.4g} "
              f"({row['ratio_label']} {row['ratio']:.3g})")
    print("batched gemm:", res["batched_gemm"]["source"])
    print(f"wrote {path}")


if __name__ == "__main__":
    main(sys.argv)
