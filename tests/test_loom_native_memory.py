"""Native Loom accesses whose lanes step one element or share one (Note [Lane-affine accesses] in
ext/core/loom/codegen.cpp) against the interpreter: the same output bytes, or the same error text.

The fast path runs only for chunks whose lanes are consecutive x ids of one row of a workgroup and
accesses wholly in bounds; everything else (chunks crossing rows, the end of a view, masked-off
lanes past it) takes the general path. Each test runs workgroup shapes on both sides of that line.
"""

from __future__ import annotations

import numpy as np
import pytest

import hrxarray as hx
from test_loom_native import _run

# A 2-D grid over a rows x cols view: each work-item reads its element shifted by `shift` columns
# (consecutive lanes, consecutive elements), the row's first element (one element for a row of
# lanes), and stores their sum to its own element; `guard` = 0 drops the bounds guard, so the
# accesses past the view's end fail.
GRID = """\
amdgpu.target<gfx1151> @gpu
kernel.def target(@gpu) export("grid2d") @grid2d(%rows: index, %cols: index, %wx: index, %wy: index) {
  %one = index.constant 1 : index
  %ex = index.sub %wx, %one : index
  %ey = index.sub %wy, %one : index
  %cx = index.add %cols, %ex : index
  %cy = index.add %rows, %ey : index
  %gx = index.div %cx, %wx : index
  %gy = index.div %cy, %wy : index
  kernel.launch.config workgroups(%gx, %gy, %one) workgroup_size(%wx, %wy, %one) : index
} launch(%rows: index, %cols: index, %guard: index, %shift: index, %x: buffer, %y: buffer) {
  %origin = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %tx = kernel.workitem.id<x> : index
  %ty = kernel.workitem.id<y> : index
  %bx = kernel.workgroup.id<x> : index
  %by = kernel.workgroup.id<y> : index
  %wx = kernel.workgroup.size<x> : index
  %wy = kernel.workgroup.size<y> : index
  %col = index.madd %bx, %wx, %tx : index
  %r0 = index.mul %by, %wy : index
  %row = index.add %r0, %ty : index
  %scol = index.madd %col, %c1, %shift : index
  %xs = buffer.view %x[%origin] : buffer -> view<[%rows]x[%cols]xf32>
  %ys = buffer.view %y[%origin] : buffer -> view<[%rows]x[%cols]xf32>
  %rin = index.cmp ult, %row, %rows : index
  %cin = index.cmp ult, %scol, %cols : index
  %oin = index.cmp ult, %col, %cols : index
  %in0 = scalar.andi %rin, %cin : i1
  %in = scalar.andi %in0, %oin : i1
  %loose = index.cmp eq, %guard, %c0 : index
  %go = scalar.ori %in, %loose : i1
  scf.if %go {
    %a = view.load %xs[%row, %scol] : view<[%rows]x[%cols]xf32> -> f32
    %b = view.load %xs[%row, %c0] : view<[%rows]x[%cols]xf32> -> f32
    %s = scalar.addf %a, %b : f32
    view.store %s, %ys[%row, %col] : f32, view<[%rows]x[%cols]xf32>
  }
  kernel.return
}
"""

# Workgroup shapes: one-dimensional (every chunk affine), rows of 16 and 32 lanes (every chunk
# inside a row), rows of 20 and 8 (chunks crossing rows: the general path).
SHAPES = [(64, 1), (16, 4), (32, 2), (20, 3), (8, 8)]


def _grid(rows, cols, wx, wy, guard, shift, seed=0):
    art = hx.loom.compile(GRID, "grid2d", target="gfx1151")
    assert art.executor == "native", art.executor_reason
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(rows * cols).astype(np.float32).view(np.uint8)
    y = np.full(rows * cols, np.nan, np.float32).view(np.uint8)
    consts = art.pack_constants(rows=rows, cols=cols, guard=guard, shift=shift)
    want = _run(art, [x, y], consts, [rows, cols, wx, wy], interpret=True)
    got = _run(art, [x, y], consts, [rows, cols, wx, wy], interpret=False)
    return want, got


@pytest.mark.parametrize("wx,wy", SHAPES)
@pytest.mark.parametrize("rows,cols", [(7, 64), (5, 37), (3, 16)])
def test_guarded_contiguous_and_shared_loads_match(wx, wy, rows, cols):
    # Full chunks and chunks partly masked off at the right edge (37 columns), shifted reads.
    for shift in (0, 3):
        want, got = _grid(rows, cols, wx, wy, guard=1, shift=shift)
        assert want[0] == "ok"
        assert got == want
        if shift == 0:
            x = np.frombuffer(_grid_input(rows, cols), np.float32).reshape(rows, cols)
            y = np.frombuffer(want[1][1], np.float32).reshape(rows, cols)
            np.testing.assert_array_equal(y, x + x[:, :1])


def _grid_input(rows, cols, seed=0):
    return np.random.default_rng(seed).standard_normal(rows * cols).astype(np.float32).view(np.uint8)


@pytest.mark.parametrize("wx,wy", SHAPES)
@pytest.mark.parametrize("rows,cols,shift", [(4, 37, 0), (4, 64, 1), (4, 48, 5), (2, 16, 0)])
def test_out_of_bounds_at_the_end_of_a_view_names_the_interpreters_lane(wx, wy, rows, cols, shift):
    want, got = _grid(rows, cols, wx, wy, guard=0, shift=shift)
    if cols % wx == 0 and rows % wy == 0 and shift == 0:
        assert want[0] == "ok"
    else:
        assert want[0] == "error" and want[1] == "ExecutionError", want
    assert got == want


# Workgroup memory: a square tile read in by rows (lanes step one element), read back both by rows
# and by columns (lanes step a whole row: the general path), with a barrier between.
TILE = """\
amdgpu.target<gfx1151> @gpu
kernel.def target(@gpu) export("tile") @tile(%groups: index) {
  %one = index.constant 1 : index
  %w = index.constant 16 : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%w, %w, %one) : index
} launch(%groups: index, %skew: index, %x: buffer, %y: buffer, %z: buffer) {
  %origin = index.constant 0 : offset
  %c16 = index.constant 16 : index
  %c256 = index.constant 256 : index
  %tx = kernel.workitem.id<x> : index
  %ty = kernel.workitem.id<y> : index
  %g = kernel.workgroup.id<x> : index
  %base = index.mul %g, %c256 : index
  %r = index.madd %ty, %c16, %tx : index
  %at = index.add %base, %r : index
  %n = index.mul %groups, %c256 : index
  %xs = buffer.view %x[%origin] : buffer -> view<[%n]xf32>
  %ys = buffer.view %y[%origin] : buffer -> view<[%n]xf32>
  %zs = buffer.view %z[%origin] : buffer -> view<[%n]xf32>
  %bytes = index.constant 1024 : offset
  %lds = buffer.alloca<workgroup> align(16) %bytes : buffer
  %t = buffer.view %lds[%origin] : buffer -> view<16x16xf32>
  %v = view.load %xs[%at] : view<[%n]xf32> -> f32
  view.store %v, %t[%ty, %tx] : f32, view<16x16xf32>
  kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)
  %col = index.add %tx, %skew : index
  %same = view.load %t[%ty, %col] : view<16x16xf32> -> f32
  %across = view.load %t[%tx, %ty] : view<16x16xf32> -> f32
  view.store %same, %ys[%at] : f32, view<[%n]xf32>
  view.store %across, %zs[%at] : f32, view<[%n]xf32>
  kernel.return
}
"""


@pytest.mark.parametrize("skew", [0, 1, -1])
def test_workgroup_memory_tiles_match(skew):
    art = hx.loom.compile(TILE, "tile", target="gfx1151")
    assert art.executor == "native", art.executor_reason
    groups = 3
    x = np.random.default_rng(1).standard_normal(groups * 256).astype(np.float32)
    bufs = [x.view(np.uint8), np.zeros(groups * 1024, np.uint8), np.zeros(groups * 1024, np.uint8)]
    consts = art.pack_constants(groups=groups, skew=skew)
    want = _run(art, bufs, consts, [groups], interpret=True)
    got = _run(art, bufs, consts, [groups], interpret=False)
    assert got == want
    if skew:  # the tile's first or last column read one past its edge
        assert want[0] == "error" and "view.load" in want[2], want
        return
    tiles = x.reshape(groups, 16, 16)
    np.testing.assert_array_equal(np.frombuffer(want[1][1], np.float32).reshape(groups, 16, 16), tiles)
    np.testing.assert_array_equal(np.frombuffer(want[1][2], np.float32).reshape(groups, 16, 16), tiles.transpose(0, 2, 1))


# Folded one-dimensional kernels (chunks span workgroups): lanes of two workgroups in a chunk take
# the general path, the others the fast one; the view ends short of the grid.
FOLDED = """\
amdgpu.target<gfx1151> @gpu
kernel.def target(@gpu) export("copy_w") @copy_w(%count: index, %width: index) {
  %one = index.constant 1 : index
  %spare = index.sub %width, %one : index
  %up = index.add %count, %spare : index
  %groups = index.div %up, %width : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%width, %one, %one) : index
} launch(%count: index, %size: index, %x: buffer, %y: buffer) {
  %origin = index.constant 0 : offset
  %i = kernel.workitem.dispatch.id<x> : index
  %xs = buffer.view %x[%origin] : buffer -> view<[%size]xf32>
  %ys = buffer.view %y[%origin] : buffer -> view<[%size]xf32>
  %inside = index.cmp ult, %i, %count : index
  scf.if %inside {
    %v = view.load %xs[%i] : view<[%size]xf32> -> f32
    view.store %v, %ys[%i] : f32, view<[%size]xf32>
  }
  kernel.return
}
"""


@pytest.mark.parametrize("width", [16, 24, 64, 7])
@pytest.mark.parametrize("count,size", [(100, 100), (96, 96), (100, 90), (100, 97)])
def test_folded_copies_match(width, count, size):
    art = hx.loom.compile(FOLDED, "copy_w", target="gfx1151")
    assert art.executor == "native", art.executor_reason
    x = np.arange(size, dtype=np.float32)
    bufs = [x.view(np.uint8), np.zeros(size * 4, np.uint8)]
    consts = art.pack_constants(count=count, size=size)
    want = _run(art, bufs, consts, [count, width], interpret=True)
    got = _run(art, bufs, consts, [count, width], interpret=False)
    assert got == want
    if size < count:
        assert want[0] == "error" and want[1] == "ExecutionError", want
    else:
        assert np.frombuffer(want[1][1], np.float32)[:count].tolist() == x[:count].tolist()


# vector.load of 4 consecutive elements per work-item: lanes one vector apart (one load of the
# whole chunk's footprint, dealt out), or all at one vector (a subgroup's shared row), through
# subgroup ids (a chunk is one subgroup). `reach` moves the last subgroup's reads past the view's
# end: the footprint error of the general path.
VEC = """\
amdgpu.target<gfx1151> @gpu {subgroup_size = 32}
kernel.def target(@gpu) export("vec4") @vec4(%rows: index, %width: index) {
  %one = index.constant 1 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%width, %one, %one) : index
} launch(%rows: index, %reach: index, %x: buffer, %y: buffer, %z: buffer) {
  %origin = index.constant 0 : offset
  %c4 = index.constant 4 : index
  %c128 = index.constant 128 : index
  %wave = kernel.subgroup.id : index
  %lane = kernel.subgroup.lane.id : index
  %item = kernel.workitem.id<x> : index
  %dim = index.mul %lane, %c4 : index
  %row0 = index.add %wave, %reach : index
  %last = index.sub %rows, %reach : index
  %row = index.min %row0, %last : index
  %xs = buffer.view %x[%origin] : buffer -> view<[%rows]x128xf32>
  %ys = buffer.view %y[%origin] : buffer -> view<[%rows]x128xf32>
  %a = vector.load %xs[%row, %dim] : view<[%rows]x128xf32> -> vector<4xf32>
  %b = vector.load %xs[%row, %c4] : view<[%rows]x128xf32> -> vector<4xf32>
  %s = vector.addf %a, %b : vector<4xf32>
  // A collective makes each chunk one subgroup.
  %zf = scalar.constant 0.0 : f32
  %p = vector.dotf %a, %b, %zf : vector<4xf32>, vector<4xf32>, f32 -> f32
  %r = kernel.subgroup.reduce<add> %p : f32
  %zs = buffer.view %z[%origin] : buffer -> view<[%rows]x128xf32>
  view.store %r, %zs[%wave, %lane] : f32, view<[%rows]x128xf32>
  %odd = index.rem %item, %c4 : index
  %zero = index.constant 0 : index
  %some = index.cmp ne, %odd, %zero : index
  scf.if %some {
    %c = vector.load %xs[%row, %dim] : view<[%rows]x128xf32> -> vector<4xf32>
    %t = vector.addf %s, %c : vector<4xf32>
    vector.store %t, %ys[%wave, %dim] : vector<4xf32>, view<[%rows]x128xf32>
  }
  kernel.return
}
"""


@pytest.mark.parametrize("width", [32, 64, 96, 40])
@pytest.mark.parametrize("reach", [0, 1, 2])
def test_vector_loads_of_consecutive_and_shared_footprints_match(width, reach):
    art = hx.loom.compile(VEC, "vec4", target="gfx1151")
    assert art.executor == "native", art.executor_reason
    rows = 3
    x = np.random.default_rng(2).standard_normal(rows * 128).astype(np.float32)
    bufs = [x.view(np.uint8), np.zeros(rows * 512, np.uint8), np.zeros(rows * 512, np.uint8)]
    consts = art.pack_constants(rows=rows, reach=reach)
    want = _run(art, bufs, consts, [rows, width], interpret=True)
    got = _run(art, bufs, consts, [rows, width], interpret=False)
    assert got == want
    if reach == 0 and width <= 96:
        assert want[0] == "ok"
        y = np.frombuffer(want[1][1], np.float32).reshape(rows, 32, 4)
        xr = x.reshape(rows, 32, 4)
        for w in range((width + 31) // 32):
            live = np.arange(32) % 4 != 0
            live &= np.arange(32) + 32 * w < width
            np.testing.assert_array_equal(y[w][live], ((xr[w] + x.reshape(rows, 128)[w, 4:8]) + xr[w])[live])
