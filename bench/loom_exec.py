"""The Loom executor's two speed goals of issue 15, measured side by side in one run:

1. an elementwise Loom kernel (z = x + y, float32) over 16,777,216 elements on the emulated GPU,
   against ``hx.add(x, y, out=z)`` on the same data (goal: within 2x);
2. a bfp16 batched-gemm pipeline at 16,384 matrices on the emulated NPU (the hrx-rs
   ``batched_gemm.xdna.loom`` when ``HRX_LOOM_CORPUS`` names a copy of the corpus, otherwise the
   equivalent program below), against today's C++ built-in ``hx.kernels.npu("batched_gemm",
   gemm.batch=16384, gemm.bfp16=1)`` (goal: within 2x).

The Loom programs run through the test-only ``_core.loom._run_program`` (parse, specialise, plan
and run on the calling thread; parsing and planning take tens of microseconds). Figures are
medians of alternating runs. Usage: ``python bench/loom_exec.py [repeats]``.
"""

import os
import pathlib
import statistics
import struct
import sys
import time

import ml_dtypes
import numpy as np

import hrxarray as hx
from hrxarray import _core

ADD = """
kernel.def @add(%n: index) {
  %one = index.constant 1 : index
  %w = index.constant 256 : index
  %c255 = index.constant 255 : index
  %r = index.add %n, %c255 : index
  %g = index.div %r, %w : index
  kernel.launch.config workgroups(%g, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%n: index, %x: buffer, %y: buffer, %z: buffer) {
  %zero = index.constant 0 : offset
  %size = kernel.workgroup.size<x> : index
  %grp = kernel.workgroup.id<x> : index
  %item = kernel.workitem.id<x> : index
  %base = index.mul %grp, %size : index
  %i = index.add %base, %item : index
  %xv = buffer.view %x[%zero] : buffer -> view<[%n]xf32>
  %yv = buffer.view %y[%zero] : buffer -> view<[%n]xf32>
  %zv = buffer.view %z[%zero] : buffer -> view<[%n]xf32>
  %in = index.cmp ult, %i, %n : index
  scf.if %in {
    %a = view.load %xv[%i] : view<[%n]xf32> -> f32
    %b = view.load %yv[%i] : view<[%n]xf32> -> f32
    %s = scalar.addf %a, %b : f32
    view.store %s, %zv[%i] : f32, view<[%n]xf32>
  }
  kernel.return
}
"""

GEMM = """
aie2p.target<array> @arr
aie2p.target<core> @core
config.decl @gemm.batch : %value: index where [range(%value, 1, 16384)]
pipeline.def<kernel> public target(@arr) @gemm() launch(%a: buffer, %b: buffer, %c: buffer) {
  %count = config.get @gemm.batch : index
  %one = index.constant 1 : index
  %z = index.constant 0 : offset
  %grp = group.create %one : index -> group
  %av = buffer.view %a[%z] : buffer -> view<[%count]x64xbf16>
  %bv = buffer.view %b[%z] : buffer -> view<[%count]x64xbf16>
  %cv = buffer.view %c[%z] : buffer -> view<[%count]x8x8xf32>
  %af = pipeline.read %av on %grp : view<[%count]x64xbf16>, group -> pipeline.flow<tile<64xbf16>>
  %bf = pipeline.read %bv on %grp : view<[%count]x64xbf16>, group -> pipeline.flow<tile<64xbf16>>
  %cf = pipeline.stage @cell on %grp(%af, %bf) : (group, pipeline.flow<tile<64xbf16>>, pipeline.flow<tile<64xbf16>>) -> (pipeline.flow<tile<8x8xf32>>)
  pipeline.write %cf to %cv : pipeline.flow<tile<8x8xf32>>, view<[%count]x8x8xf32>
  pipeline.return
}
func.def target(@core) @cell(%a: buffer, %b: buffer, %c: buffer) {
  %z = index.constant 0 : offset
  %av = buffer.view %a[%z] : buffer -> view<64xbf16>
  %bv = buffer.view %b[%z] : buffer -> view<64xbf16>
  %cv = buffer.view %c[%z] : buffer -> view<8x8xf32>
  %eight = index.constant 8 : index
  %x = vector.load %av[0] : view<64xbf16> -> vector<64xbf16>
  %y = vector.load %bv[0] : view<64xbf16> -> vector<64xbf16>
  %s = encoding.define #encoding.operand<element_format=bfp16ebs8, payload_elements=64, payload_packing=target_fragment, payload_registers=18, rounding=flush_subnormal> : encoding<schema>
  %xe = vector.encode %x using %s : vector<64xbf16>, encoding<schema> -> vector<72xi8>
  %ye = vector.encode %y using %s : vector<64xbf16>, encoding<schema> -> vector<72xi8>
  %xf = vector.fragment<lhs> %xe shape [%eight, %eight] using {schema = %s : encoding<schema>} : vector<72xi8>
  %yf = vector.fragment<rhs> %ye shape [%eight, %eight] using {schema = %s : encoding<schema>} : vector<72xi8>
  %zero = vector.constant 0.0 : vector<64xf32>
  %zf = vector.fragment<init> %zero shape [%eight, %eight] : vector<64xf32>
  %p = vector.mma %xf, %yf, %zf : vector<72xi8>, vector<72xi8>, vector<64xf32>
  vector.fragment.store<result> %p, %cv[0, 0] shape [%eight, %eight] : vector<64xf32>, view<8x8xf32>
  func.return
}
"""

GPU = "gfx1151"
NPU = "amd.xdna.strix_halo.17f0_11"


def u8(a):
    """`a`'s bytes as a flat uint8 view (how _run_program takes bindings)."""
    return a.view(np.uint8).reshape(-1)


def alternate(fns, repeats):
    """Median and minimum seconds of each callable, run in alternation."""
    times = {k: [] for k in fns}
    for _ in range(repeats):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    return {k: (statistics.median(v), min(v)) for k, v in times.items()}


def elementwise(repeats):
    """Loom z = x + y over 16M float32 vs hx.add on the same data: {name: (median s, min s)}."""
    n = 16 * 1024 * 1024
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    c = np.empty(n, np.float32)
    x, y, z = hx.asarray(a), hx.asarray(b), hx.empty(n, np.float32)
    consts = struct.pack("<I", n)

    def loom():
        _core.loom._run_program(ADD, "add", GPU, {}, [u8(a), u8(b), u8(c)], consts, [n], False, False)

    def hx_add():
        hx.add(x, y, out=z).block_until_ready()

    loom()
    hx_add()
    res = alternate({"loom": loom, "hx.add": hx_add}, repeats)
    assert np.array_equal(c, hx.to_numpy(z))
    return res


def batched_gemm(repeats):
    """The bfp16 batched-gemm pipeline at 16,384 vs the C++ built-in: ({name: (median s, min s)}, source)."""
    batch = 16384
    corpus = os.environ.get("HRX_LOOM_CORPUS")
    src, symbol, which = GEMM, "gemm", "bench/loom_exec.py's program"
    if corpus and (pathlib.Path(corpus) / "batched_gemm.xdna.loom").exists():
        src, which = (pathlib.Path(corpus) / "batched_gemm.xdna.loom").read_text(), "corpus batched_gemm.xdna.loom"
    rng = np.random.default_rng(1)
    a = rng.standard_normal((batch, 8, 8), dtype=np.float32).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((batch, 8, 8), dtype=np.float32).astype(ml_dtypes.bfloat16)
    c = np.empty((batch, 8, 8), np.float32)

    rt = hx.Runtime()
    npu = rt.npu()
    art = hx.kernels.npu("batched_gemm", **{"gemm.batch": batch, "gemm.bfp16": 1})
    k = npu.load_artifact(art, 1, art.contract)
    va, vb, vc = (rt.allocate(nb * batch, hx.Shared(npu)).view(0) for nb in (128, 128, 256))
    for v, arr in ((va, a), (vb, b)):
        with v.buffer.map_write() as m:
            m[: arr.nbytes] = u8(arr)

    def loom():
        _core.loom._run_program(src, symbol, NPU, {"gemm.batch": str(batch)}, [u8(a), u8(b), u8(c)], b"", None,
                                False, False)

    def builtin():
        k._run([va, vb, vc])

    loom()
    builtin()
    res = alternate({"loom": loom, "builtin": builtin}, repeats)
    with vc.buffer.map_read() as m:
        ref = np.array(m[: c.nbytes]).view(np.float32).reshape(c.shape)
    assert np.array_equal(c.view(np.uint32), ref.view(np.uint32))
    return res, which


def main(argv):
    """Prints both comparisons; argv[1] is the number of alternating repeats (default 9)."""
    repeats = int(argv[1]) if len(argv) > 1 else 9
    ew = elementwise(repeats)
    print(f"elementwise f32 add, 16,777,216 elements: Loom kernel {ew['loom'][0] * 1e3:.2f} ms "
          f"(min {ew['loom'][1] * 1e3:.2f}), hx.add {ew['hx.add'][0] * 1e3:.2f} ms (min {ew['hx.add'][1] * 1e3:.2f}): "
          f"{ew['loom'][0] / ew['hx.add'][0]:.2f}x", flush=True)
    gm, which = batched_gemm(repeats)
    print(f"bfp16 batched gemm, 16,384 matrices ({which}): Loom pipeline {gm['loom'][0] * 1e3:.2f} ms "
          f"(min {gm['loom'][1] * 1e3:.2f}), C++ built-in {gm['builtin'][0] * 1e3:.2f} ms "
          f"(min {gm['builtin'][1] * 1e3:.2f}): {gm['loom'][0] / gm['builtin'][0]:.2f}x", flush=True)


if __name__ == "__main__":
    main(sys.argv)
