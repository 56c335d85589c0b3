"""A GPU kernel and an NPU pipeline written in Loom, compiled, loaded and run in one graph.

Run: python examples/loom_npu_pipeline.py [records=64]

``records`` (1..=4096) 16-element int32 records flow through two programs:

1. ``@square_i32`` (GPU ``kernel.def``): ``sq[i] = x[i] * x[i]`` (wrapping), launched over
   ``ceil(count / 64)`` workgroups of 64 work-items, the grid its launch program computes;
2. ``@add_records`` (NPU ``pipeline.def``, config ``add.records``): a one-lane group reads the
   squares and ``y`` as flows of 16-element tiles, a stage function adds each pair of records with
   one 16-lane vector add, and the sums are written to ``out``.

The steps are HRX's::

    gpu_art = hx.loom.compile(SOURCE, "square_i32", target="gfx1151")
    npu_art = hx.loom.compile(SOURCE, "add_records", target="xdna", config={"add.records": records})
    k_gpu = rt.load_gpu_kernel(gpu_art, grid, block, gpu_art.contract_for(count=n))
    k_npu = rt.npu().load_artifact(npu_art, 1, npu_art.contract)
    g = rt.graph(); g.gpu(k_gpu, [x, sq]); g.npu(k_npu, [sq, y, out]); g.prepare().submit().wait()

The graph orders the NPU region after the GPU region that writes ``sq`` (a read-after-write hazard
on Shared memory). The result is checked against NumPy. Prints ``records=..: GPU square then NPU
add in one graph matches NumPy (grid .., block ..)``.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import numpy.typing as npt

import hrxarray as hx
from _common import UsageError, parse_int

USAGE = "usage: python loom_npu_pipeline.py [records=64]"

SOURCE = """\
amdgpu.target<gfx1151> @gpu
aie2p.target<array> @array
aie2p.target<core> @core
config.decl @add.records : %value: index where [range(%value, 1, 4096)]

kernel.def target(@gpu) export("square_i32") @square_i32(%count: index) {
  %one = index.constant 1 : index
  %width = index.constant 64 : index
  %spare = index.constant 63 : index
  %n = index.assume %count [range(%count, 1, 1073741824)] : index
  %padded = index.add %n, %spare : index
  %groups = index.div %padded, %width : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%width, %one, %one) : index
} launch(%count: index, %x: buffer, %sq: buffer) {
  %width = index.constant 64 : index
  %origin = index.constant 0 : offset
  %i = kernel.workitem.dispatch.id<x> : index
  %xs = buffer.view %x[%origin] : buffer -> view<[%count]xi32>
  %ss = buffer.view %sq[%origin] : buffer -> view<[%count]xi32>
  %inside = index.cmp ult, %i, %count : index
  scf.if %inside {
    %v = view.load %xs[%i] : view<[%count]xi32> -> i32
    %p = scalar.muli %v, %v : i32
    view.store %p, %ss[%i] : i32, view<[%count]xi32>
  }
  kernel.return
}

pipeline.def<kernel> public target(@array) @add_records() launch(%lhs: buffer, %rhs: buffer, %out: buffer) {
  %lanes = index.constant 1 : index
  %origin = index.constant 0 : offset
  %records = config.get @add.records : index
  %workers = group.create %lanes : index -> group
  %lhs_view = buffer.view %lhs[%origin] : buffer -> view<[%records]x16xi32>
  %rhs_view = buffer.view %rhs[%origin] : buffer -> view<[%records]x16xi32>
  %out_view = buffer.view %out[%origin] : buffer -> view<[%records]x16xi32>
  %a = pipeline.read %lhs_view on %workers : view<[%records]x16xi32>, group -> pipeline.flow<tile<16xi32>>
  %b = pipeline.read %rhs_view on %workers : view<[%records]x16xi32>, group -> pipeline.flow<tile<16xi32>>
  %sums = pipeline.stage @add_record on %workers(%a, %b) : (group, pipeline.flow<tile<16xi32>>, pipeline.flow<tile<16xi32>>) -> (pipeline.flow<tile<16xi32>>)
  pipeline.write %sums to %out_view : pipeline.flow<tile<16xi32>>, view<[%records]x16xi32>
  pipeline.return
}

func.def target(@core) @add_record(%a: buffer, %b: buffer, %sum: buffer) {
  %ta, %tb, %ts = buffer.assume.alignment %a, %b, %sum {minimum_alignment = 64} : buffer, buffer, buffer
  %origin = index.constant 0 : offset
  %av = buffer.view %ta[%origin] : buffer -> view<16xi32>
  %bv = buffer.view %tb[%origin] : buffer -> view<16xi32>
  %sv = buffer.view %ts[%origin] : buffer -> view<16xi32>
  %x = vector.load %av[0] : view<16xi32> -> vector<16xi32>
  %y = vector.load %bv[0] : view<16xi32> -> vector<16xi32>
  %s = vector.addi %x, %y : vector<16xi32>
  vector.store %s, %sv[0] : vector<16xi32>, view<16xi32>
  func.return
}
"""


def write(buf: hx.Buffer, array: npt.ArrayLike) -> None:
    data = np.ascontiguousarray(array).view(np.uint8).reshape(-1)
    with buf.map_write() as m:
        m[: data.size] = data


def read(buf: hx.Buffer, dtype: npt.DTypeLike, count: int) -> npt.NDArray[Any]:
    with buf.map_read() as m:
        return np.array(m[: count * np.dtype(dtype).itemsize]).view(dtype)


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv[1:]):
        print(USAGE)
        return 0
    try:
        if len(argv) > 2:
            raise UsageError(f"expected at most one argument, got {len(argv) - 1}")
        records = parse_int(argv[1]) if len(argv) > 1 else 64
        if not 1 <= records <= 4096:
            raise UsageError("records must be in 1..=4096")
    except UsageError as e:
        print(f"error: {e}\n{USAGE}", file=sys.stderr)
        return 2

    n = records * 16
    rt = hx.Runtime()
    npu = rt.npu()
    gpu_art = hx.loom.compile(SOURCE, "square_i32", target="gfx1151")
    npu_art = hx.loom.compile(SOURCE, "add_records", target="xdna", config={"add.records": records})
    launch = gpu_art.launch_config(n)
    k_gpu = rt.load_gpu_kernel(gpu_art, launch.workgroups, launch.workgroup_size, gpu_art.contract_for(count=n))
    k_npu = npu.load_artifact(npu_art, 1, npu_art.contract)

    x, sq, y, out = (rt.allocate(4 * n, hx.Shared(npu)) for _ in range(4))
    rng = np.random.default_rng(15)
    xs = rng.integers(-50_000, 50_000, n, dtype=np.int32)
    ys = rng.integers(-(2**31), 2**31 - 1, n, dtype=np.int32)
    write(x, xs)
    write(y, ys)

    g = rt.graph()
    g.gpu(k_gpu, [x, sq])
    g.npu(k_npu, [sq, y, out])  # reads sq after the GPU region wrote it
    done = g.prepare().submit()
    if not done.wait(60.0):
        raise SystemExit("the graph did not finish within 60 s")
    error = done.exception()
    if error is not None:
        raise error

    with np.errstate(over="ignore"):
        want = xs * xs + ys  # int32 arithmetic wraps, as scalar.muli / vector.addi do
    assert np.array_equal(read(sq, np.int32, n), xs * xs), "GPU squares differ from NumPy"
    assert np.array_equal(read(out, np.int32, n), want), "NPU sums differ from NumPy"
    print(f"records={records}: GPU square then NPU add in one graph matches NumPy "
          f"(grid {launch.workgroups}, block {launch.workgroup_size})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
