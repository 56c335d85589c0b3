"""Strided view layouts (issue 25 item 3) and footprints of workgroup-dependent views and of views
made in callees (item 4). A view typed ``view<..., #encoding.layout.strided<strides=[...]>>`` (or
with an ``encoding.layout.strided`` value, or an alias) reads element (i, j, ...) at element offset
sum(i_d * s_d): loads, stores, vector loads/stores, atomics and subviews follow the strides, and the
footprint is 1 + sum((dim - 1) * stride) elements. A layout the emulator cannot honour is refused
when the program is compiled (EMULATOR/007). Programs are written for these tests; results are
checked against NumPy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hrxarray as hx
from hrxarray import _core
from hrxarray import loom

GPU = "gfx1151"
NPU = "amd.xdna.strix_halo.17f0_11"
T = 30.0


def run(src, symbol, bindings, constants=b"", workload=None, *, target=GPU, config=None):
    """Runs one root over uint8 views of `bindings` (modified in place), through the test-only runner."""
    views = [b.view(np.uint8).reshape(-1) for b in bindings]
    return _core.loom._run_program(src, symbol, target, {k: str(v) for k, v in (config or {}).items()},
                                   views, constants, workload, False, [])


def run_public(art, grid, block, contract, inputs, out_bytes):
    """Loads `art` through Runtime.load_gpu_kernel with `contract` and runs it once over `inputs`
    (host arrays) and one output of `out_bytes`; returns the output's bytes."""
    rt = hx.Runtime()
    k = rt.load_gpu_kernel(art, grid, block, contract)
    bufs = []
    for a in inputs:
        b = rt.allocate(max(a.nbytes, 1), hx.HostVisible())
        with b.map_write() as m:
            m[: a.nbytes] = np.ascontiguousarray(a).view(np.uint8).reshape(-1)
        bufs.append(b)
    out = rt.allocate(out_bytes, hx.HostVisible())
    g = rt.graph()
    g.gpu(k, bufs + [out])
    c = g.prepare().submit()
    assert c.wait(T) and c.exception() is None
    with out.map_read() as m:
        return np.array(m[:out_bytes])


# --- GPU: a transposed read through a strided view ------------------------------------------------

# out[i, j] = A^T[i, j] where A (R x C, row-major) is seen as a C x R view with strides [1, C].
TRANSPOSE = """
amdgpu.target<gfx1151> @gpu {subgroup_size = 32}
#tr = #encoding.layout.strided<strides=[1, 8]>
kernel.def target(@gpu) @transpose() {
  %one = index.constant 1 : index
  %c8 = index.constant 8 : index
  %c4 = index.constant 4 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%c8, %c4, %one) : index
} launch(%a: buffer, %out: buffer) {
  %z = index.constant 0 : offset
  %i = kernel.workitem.id<x> : index
  %j = kernel.workitem.id<y> : index
  LAYOUT
  %av = buffer.view %a[%z] : buffer -> view<8x4xf32, VIEWLAYOUT>
  %ov = buffer.view %out[%z] : buffer -> view<8x4xf32>
  %x = view.load %av[%i, %j] : view<8x4xf32, VIEWLAYOUT> -> f32
  view.store %x, %ov[%i, %j] : f32, view<8x4xf32>
  kernel.return
}
"""

FORMS = {
    "attribute": ("", "#encoding.layout.strided<strides=[1, 8]>"),
    "alias": ("", "#tr"),
    "value": ("%c1 = index.constant 1 : index\n  %s8 = index.constant 8 : index\n"
              "  %lay = encoding.layout.strided [%c1, %s8] : encoding<layout>", "%lay"),
    "assumed value": ("%s8 = index.constant 8 : index\n  %raw = encoding.layout.strided [1, %s8] : encoding<layout>\n"
                      "  %lay = encoding.layout.assume.strided %raw {rank = 2} : encoding<layout>", "%lay"),
    "mixed value": ("%s8 = index.constant 8 : index\n  %lay = encoding.layout.strided [1, %s8] : encoding<layout>",
                    "%lay"),
}


def transpose_program(form):
    layout, view = FORMS[form]
    return TRANSPOSE.replace("VIEWLAYOUT", view).replace("LAYOUT", layout)


@pytest.mark.parametrize("form", sorted(FORMS))
def test_gpu_transposed_read_through_a_strided_view(form):
    a = np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32)
    out = np.zeros((8, 4), np.float32)
    run(transpose_program(form), "transpose", [a, out])
    assert np.array_equal(out, a.T)


def test_gpu_strided_read_through_the_public_loading_api_and_its_footprint():
    art = loom.compile(transpose_program("attribute"), "transpose", target=GPU)
    c = art.contract
    # 1 + (8 - 1) * 1 + (4 - 1) * 8 = 32 elements for the strided view, 32 for the dense one.
    assert [b.bytes for b in c.bindings] == [128, 128]
    a = np.arange(32, dtype=np.float32).reshape(4, 8)
    got = run_public(art, 1, (8, 4, 1), c, [a], 128).view(np.float32).reshape(8, 4)
    assert np.array_equal(got, a.T)


def test_dense_layout_value_is_row_major():
    src = TRANSPOSE.replace("VIEWLAYOUT", "%lay").replace("LAYOUT", "%lay = encoding.layout.dense : encoding<layout>")
    a = np.random.default_rng(2).standard_normal((8, 4)).astype(np.float32)
    out = np.zeros((8, 4), np.float32)
    run(src, "transpose", [a, out])
    assert np.array_equal(out, a)


# A padded matrix: rows of `pitch` elements of which the view sees `cols`; footprint and reads.
PITCHED = """
amdgpu.target<gfx1151> @gpu {subgroup_size = 32}
kernel.def target(@gpu) @pitched(%pitch: index) {
  %one = index.constant 1 : index
  %c6 = index.constant 6 : index
  %c5 = index.constant 5 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%c6, %c5, %one) : index
} launch(%pitch: index, %a: buffer, %out: buffer) {
  %z = index.constant 0 : offset
  %i = kernel.workitem.id<y> : index
  %j = kernel.workitem.id<x> : index
  %lay = encoding.layout.strided [%pitch, 1] : encoding<layout>
  %av = buffer.view %a[%z] : buffer -> view<5x6xi32, %lay>
  %ov = buffer.view %out[%z] : buffer -> view<5x6xi32>
  %x = view.load %av[%i, %j] : view<5x6xi32, %lay> -> i32
  view.store %x, %ov[%i, %j] : i32, view<5x6xi32>
  kernel.return
}
"""


@settings(max_examples=5, deadline=None)
@given(pitch=st.integers(6, 40))
def test_pitched_rows_footprint_and_values(pitch):
    art = loom.compile(PITCHED, "pitched", target=GPU)
    c = art.contract_for(pitch=pitch)
    # 1 + 4 * pitch + 5 elements: the last row ends at its sixth element, not at the pitch.
    assert [b.bytes for b in c.bindings] == [4 * (1 + 4 * pitch + 5), 120]
    a = np.random.default_rng(pitch).integers(-1000, 1000, (5, pitch)).astype(np.int32)
    got = run_public(art, 1, (6, 5, 1), c, [a.reshape(-1)[: 4 * pitch + 6]], 120).view(np.int32).reshape(5, 6)
    assert np.array_equal(got, a[:, :6])


# --- vector access, subviews, stores and atomics through strided views -----------------------------

VECTOR = """
amdgpu.target<gfx1151> @gpu {subgroup_size = 32}
#colmajor = #encoding.layout.strided<strides=[1, 8]>
kernel.def target(@gpu) @vec() {
  %one = index.constant 1 : index
  %c8 = index.constant 8 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%c8, %one, %one) : index
} launch(%a: buffer, %out: buffer, %tout: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %i = kernel.workitem.id<x> : index
  %av = buffer.view %a[%z] : buffer -> view<8x4xf32, #colmajor>
  %ov = buffer.view %out[%z] : buffer -> view<8x4xf32>
  %tv = buffer.view %tout[%z] : buffer -> view<8x4xf32, #colmajor>
  // Row i of the transposed view: its 4 lanes follow the stride of 8.
  %row = vector.load %av[%i, %c0] : view<8x4xf32, #colmajor> -> vector<4xf32>
  vector.store %row, %ov[%i, %c0] : vector<4xf32>, view<8x4xf32>
  // ... and stored back through the same layout: tout holds A again.
  vector.store %row, %tv[%i, %c0] : vector<4xf32>, view<8x4xf32, #colmajor>
  kernel.return
}
"""


def test_vector_load_and_store_lanes_follow_the_strides():
    a = np.random.default_rng(3).standard_normal((4, 8)).astype(np.float32)
    out = np.zeros((8, 4), np.float32)
    tout = np.zeros((4, 8), np.float32)
    run(VECTOR, "vec", [a, out, tout])
    assert np.array_equal(out, a.T)
    assert np.array_equal(tout, a)


SUBVIEW = """
amdgpu.target<gfx1151> @gpu {subgroup_size = 32}
kernel.def target(@gpu) @sub() {
  %one = index.constant 1 : index
  %c3 = index.constant 3 : index
  %c2 = index.constant 2 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%c3, %c2, %one) : index
} launch(%a: buffer, %out: buffer) {
  %z = index.constant 0 : offset
  %i = kernel.workitem.id<x> : index
  %j = kernel.workitem.id<y> : index
  %c1 = index.constant 1 : index
  %c2 = index.constant 2 : index
  %av = buffer.view %a[%z] : buffer -> view<8x6xi32, #encoding.layout.strided<strides=[1, 8]>>
  // Rows 1..3, columns 2..3 of the transposed view: not whole rows, strides kept.
  %sv = view.subview %av[%c1, %c2] : view<8x6xi32, #encoding.layout.strided<strides=[1, 8]>> -> view<3x2xi32>
  %x = view.load %sv[%i, %j] : view<3x2xi32> -> i32
  %ov = buffer.view %out[%z] : buffer -> view<3x2xi32>
  view.store %x, %ov[%i, %j] : i32, view<3x2xi32>
  kernel.return
}
"""


def test_subview_of_a_strided_view_keeps_its_strides():
    a = np.arange(48, dtype=np.int32).reshape(6, 8)
    out = np.zeros((3, 2), np.int32)
    run(SUBVIEW, "sub", [a, out])
    assert np.array_equal(out, a.T[1:4, 2:4])


def test_subview_of_part_rows_of_a_dense_view():
    # Formerly refused; a dense parent's part rows are a strided subview.
    src = SUBVIEW.replace(", #encoding.layout.strided<strides=[1, 8]>", "")
    a = np.arange(48, dtype=np.int32).reshape(8, 6)
    out = np.zeros((3, 2), np.int32)
    run(src, "sub", [a, out])
    assert np.array_equal(out, a[1:4, 2:4])


ATOMIC = """
amdgpu.target<gfx1151> @gpu {subgroup_size = 32}
kernel.def target(@gpu) @hist() {
  %one = index.constant 1 : index
  %c4 = index.constant 4 : index
  %c16 = index.constant 16 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%c16, %c4, %one) : index
} launch(%acc: buffer) {
  %z = index.constant 0 : offset
  %i = kernel.workitem.id<x> : index
  %j = kernel.workitem.id<y> : index
  %c4 = index.constant 4 : index
  %col = index.rem %i, %c4 : index
  %v = buffer.view %acc[%z] : buffer -> view<4x4xi32, #encoding.layout.strided<strides=[1, 4]>>
  %one32 = scalar.constant 1 : i32
  %old = view.atomic.rmw<add> %one32, %v[%col, %j] : i32, view<4x4xi32, #encoding.layout.strided<strides=[1, 4]>> -> i32
  kernel.return
}
"""


def test_atomics_through_a_strided_view():
    acc = np.zeros((4, 4), np.int32)
    run(ATOMIC, "hist", [acc])
    # view[col, j] is acc[j, col]; four x values share each col.
    assert np.array_equal(acc, np.full((4, 4), 4, np.int32))


# --- NPU: a stage reading its tile transposed ------------------------------------------------------

NPU_TRANSPOSE = """
aie2p.target<array> @arr
aie2p.target<core> @core
pipeline.def<kernel> public target(@arr) @tr() launch(%a: buffer, %out: buffer) {
  %one = index.constant 1 : index
  %z = index.constant 0 : offset
  %grp = group.create %one : index -> group
  %av = buffer.view %a[%z] : buffer -> view<3x16xf32>
  %ov = buffer.view %out[%z] : buffer -> view<3x16xf32>
  %af = pipeline.read %av on %grp : view<3x16xf32>, group -> pipeline.flow<tile<16xf32>>
  %of = pipeline.stage @flip on %grp(%af) : (group, pipeline.flow<tile<16xf32>>) -> (pipeline.flow<tile<16xf32>>)
  pipeline.write %of to %ov : pipeline.flow<tile<16xf32>>, view<3x16xf32>
  pipeline.return
}
func.def target(@core) @flip(%a: buffer, %o: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c4 = index.constant 4 : index
  %av = buffer.view %a[%z] : buffer -> view<4x4xf32, #encoding.layout.strided<strides=[1, 4]>>
  %ov = buffer.view %o[%z] : buffer -> view<4x4xf32>
  scf.for %i = [%c0 to %c4 step %c1] {
    %row = vector.load %av[%i, %c0] : view<4x4xf32, #encoding.layout.strided<strides=[1, 4]>> -> vector<4xf32>
    vector.store %row, %ov[%i, %c0] : vector<4xf32>, view<4x4xf32>
  }
  func.return
}
"""


def test_npu_stage_reads_its_tile_through_a_strided_view():
    a = np.random.default_rng(4).standard_normal((3, 4, 4)).astype(np.float32)
    out = np.zeros((3, 16), np.float32)
    run(NPU_TRANSPOSE, "tr", [a, out], target=NPU)
    assert np.array_equal(out.reshape(3, 4, 4), a.transpose(0, 2, 1))


# --- refusals at plan time ---------------------------------------------------------------------------

def test_a_layout_the_emulator_cannot_honour_is_refused_when_compiled():
    src = TRANSPOSE.replace("VIEWLAYOUT", "#my.swizzle<bits = 3>").replace("LAYOUT", "")
    with pytest.raises(loom.LoomError, match=r"EMULATOR/007|view layout '#my.swizzle<bits = 3>' is not honoured") as info:
        loom.compile(src, "transpose", target=GPU)
    assert any(d.code == "EMULATOR/007" for d in info.value.diagnostics)


def test_a_pipeline_over_a_strided_view_is_refused_when_compiled():
    src = NPU_TRANSPOSE.replace("%av = buffer.view %a[%z] : buffer -> view<3x16xf32>",
                                "%av = buffer.view %a[%z] : buffer -> view<3x16xf32, #encoding.layout.strided<strides=[1, 3]>>") \
        .replace("pipeline.read %av on %grp : view<3x16xf32>,",
                 "pipeline.read %av on %grp : view<3x16xf32, #encoding.layout.strided<strides=[1, 3]>>,")
    with pytest.raises(loom.LoomError, match=r"pipeline over the strided view") as info:
        loom.compile(src, "tr", target="xdna")
    assert [d.code for d in info.value.diagnostics] == ["EMULATOR/007"]


def test_strides_must_match_the_rank():
    src = TRANSPOSE.replace("VIEWLAYOUT", "#encoding.layout.strided<strides=[1, 8, 32]>").replace("LAYOUT", "")
    with pytest.raises(hx.ExecutionError, match=r"a layout of 3 strides for a rank-2 view"):
        run(src, "transpose", [np.zeros(32, np.float32), np.zeros(32, np.float32)])


# --- footprints of workgroup-dependent views and of views made in callees (item 4) ----------------

# Each workgroup of 64 work-items views its own 256-byte block of x and y: the view's byte offset
# is the workgroup id times 256, so the footprint is the last block's end, n * 256 bytes.
BLOCKS = """
amdgpu.target<gfx1151> @gpu {subgroup_size = 32}
kernel.def target(@gpu) @blocks(%n: index) {
  %one = index.constant 1 : index
  %c64 = index.constant 64 : index
  kernel.launch.config workgroups(%n, %one, %one) workgroup_size(%c64, %one, %one) : index
} launch(%n: index, %x: buffer, %y: buffer) {
  %g = kernel.workgroup.id<x> : index
  %i = kernel.workitem.id<x> : index
  %c256 = index.constant 256 : index
  %b = index.mul %g, %c256 : index
  %off = index.cast %b : index to offset
  %xv = buffer.view %x[%off] : buffer -> view<64xf32>
  %yv = buffer.view %y[%off] : buffer -> view<64xf32>
  %v = view.load %xv[%i] : view<64xf32> -> f32
  %two = scalar.constant 2.0 : f32
  %w = scalar.mulf %v, %two : f32
  view.store %w, %yv[%i] : f32, view<64xf32>
  kernel.return
}
"""


@settings(max_examples=4, deadline=None)
@given(n=st.integers(1, 9))
def test_workgroup_dependent_view_offset_footprint_and_run(n):
    art = loom.compile(BLOCKS, "blocks", target=GPU)
    c = art.contract_for(n=n)
    assert [(b.bytes, b.access) for b in c.bindings] == [(256 * n, hx.Access.READ), (256 * n, hx.Access.WRITE)]
    x = np.random.default_rng(n).standard_normal(64 * n).astype(np.float32)
    got = run_public(art, n, 64, c, [x], 256 * n).view(np.float32)
    assert np.array_equal(got, x * np.float32(2))


# The views are made in a called function, from its arguments: the footprint follows the call.
CALLEE = """
amdgpu.target<gfx1151> @gpu {subgroup_size = 32}
func.def @scale_row(%x: buffer, %y: buffer, %row: index, %cols: index, %i: index) {
  %c4 = index.constant 4 : index
  %rb = index.mul %row, %cols : index
  %b = index.mul %rb, %c4 : index
  %off = index.cast %b : index to offset
  %xv = buffer.view %x[%off] : buffer -> view<[%cols]xf32>
  %yv = buffer.view %y[%off] : buffer -> view<[%cols]xf32>
  %in = index.cmp ult, %i, %cols : index
  scf.if %in {
    %v = view.load %xv[%i] : view<[%cols]xf32> -> f32
    %w = scalar.addf %v, %v : f32
    view.store %w, %yv[%i] : f32, view<[%cols]xf32>
  }
  func.return
}
kernel.def target(@gpu) @rows(%rows: index) {
  %one = index.constant 1 : index
  %c32 = index.constant 32 : index
  kernel.launch.config workgroups(%rows, %one, %one) workgroup_size(%c32, %one, %one) : index
} launch(%rows: index, %cols: index, %x: buffer, %y: buffer) {
  %g = kernel.workgroup.id<x> : index
  %i = kernel.workitem.id<x> : index
  func.call @scale_row(%x, %y, %g, %cols, %i) : (buffer, buffer, index, index, index) -> ()
  kernel.return
}
"""


@settings(max_examples=4, deadline=None)
@given(rows=st.integers(1, 6), cols=st.integers(1, 32))
def test_view_made_in_a_callee_footprint_and_run(rows, cols):
    art = loom.compile(CALLEE, "rows", target=GPU)
    c = art.contract_for(rows=rows, cols=cols)
    assert [b.bytes for b in c.bindings] == [4 * rows * cols, 4 * rows * cols]
    x = np.random.default_rng(rows * 100 + cols).standard_normal(rows * cols).astype(np.float32)
    got = run_public(art, rows, 32, c, [x], 4 * rows * cols).view(np.float32)
    assert np.array_equal(got, x + x)


# The block each work-item views comes from a table in memory: no range for the offset, so the
# binding's own span bounds it; contract_for says so, a hand-written contract loads and runs.
TABLE = """
amdgpu.target<gfx1151> @gpu {subgroup_size = 32}
kernel.def target(@gpu) @gather() {
  %one = index.constant 1 : index
  %c4 = index.constant 4 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%c4, %one, %one) : index
} launch(%table: buffer, %x: buffer, %y: buffer) {
  %z = index.constant 0 : offset
  %i = kernel.workitem.id<x> : index
  %c0 = index.constant 0 : index
  %tv = buffer.view %table[%z] : buffer -> view<4xi32>
  %t = view.load %tv[%i] : view<4xi32> -> i32
  %ti = index.cast %t : i32 to index
  %c16 = index.constant 16 : index
  %b = index.mul %ti, %c16 : index
  %off = index.cast %b : index to offset
  %xv = buffer.view %x[%off] : buffer -> view<4xf32>
  %v = vector.load %xv[%c0] : view<4xf32> -> vector<4xf32>
  %yv = buffer.view %y[%z] : buffer -> view<4x4xf32>
  vector.store %v, %yv[%i, %c0] : vector<4xf32>, view<4x4xf32>
  kernel.return
}
"""


def test_an_unbounded_view_offset_needs_a_hand_written_contract():
    art = loom.compile(TABLE, "gather", target=GPU)
    with pytest.raises(ValueError, match=r"contract_for: the extent of binding 1 \(%x\) of @gather .* cannot bound"):
        art.contract_for()
    table = np.array([3, 0, 2, 1], np.int32)
    x = np.arange(16, dtype=np.float32)
    R, W = hx.Access.READ, hx.Access.WRITE
    c = hx.KernelContract([hx.BindingContract(16, 4, R), hx.BindingContract(64, 4, R), hx.BindingContract(64, 4, W)], b"")
    got = run_public(art, 1, 4, c, [table, x], 64).view(np.float32).reshape(4, 4)
    assert np.array_equal(got, x.reshape(4, 4)[table])
    # The table binding's own extent is still derived, and still checked.
    small = hx.KernelContract([hx.BindingContract(8, 4, R)] + list(c.bindings[1:]), b"")
    with pytest.raises(hx.ContractError, match="does not cover"):
        hx.Runtime().load_gpu_kernel(art, 1, 4, small)


MASKED_STRIDED = """
amdgpu.target<gfx1151> @gpu {subgroup_size = 32}
kernel.def target(@gpu) @evens(%n: index) {
  %one = index.constant 1 : index
  %w = index.constant 4 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%n: index, %x: buffer, %y: buffer) {
  %z = index.constant 0 : offset
  %i = kernel.workitem.id<x> : index
  %eight = index.constant 8 : index
  %lo = index.mul %i, %eight : index
  %xv = buffer.view %x[%z] : buffer -> view<[%n]xf32, #encoding.layout.strided<strides=[2]>>
  %yv = buffer.view %y[%z] : buffer -> view<[%n]xf32>
  %step = index.constant 1 : index
  %mask = vector.mask.range [%lo to %n step %step] : index -> vector<8xi1>
  %pass = vector.constant -1.0 : vector<8xf32>
  %a = vector.load.mask %xv[%lo], %mask, %pass : view<[%n]xf32, #encoding.layout.strided<strides=[2]>>, vector<8xi1>, vector<8xf32> -> vector<8xf32>
  vector.store.mask %a, %yv[%lo], %mask : vector<8xf32>, view<[%n]xf32>, vector<8xi1>
  kernel.return
}
"""


@pytest.mark.parametrize("n", [1, 13, 32])
def test_masked_vector_load_through_a_strided_view(n):
    art = loom.compile(MASKED_STRIDED, "evens", target=GPU)
    c = art.contract_for(n=n)
    assert [b.bytes for b in c.bindings] == [4 * (2 * n - 1), 4 * n]  # 1 + (n - 1) * 2 elements
    x = np.random.default_rng(n).standard_normal(2 * n - 1).astype(np.float32)
    got = run_public(art, 1, 4, c, [x], 4 * n).view(np.float32)
    assert np.array_equal(got, x[::2])


# A callee makes a pitched view of the binding from its arguments: stride and rows come from the call.
CALLEE_PITCHED = """
amdgpu.target<gfx1151> @gpu {subgroup_size = 32}
func.def @copy_rows(%a: buffer, %out: buffer, %pitch: index, %i: index, %j: index) {
  %z = index.constant 0 : offset
  %one = index.constant 1 : index
  %lay = encoding.layout.strided [%pitch, %one] : encoding<layout>
  %av = buffer.view %a[%z] : buffer -> view<3x4xi32, %lay>
  %ov = buffer.view %out[%z] : buffer -> view<3x4xi32>
  %x = view.load %av[%i, %j] : view<3x4xi32, %lay> -> i32
  view.store %x, %ov[%i, %j] : i32, view<3x4xi32>
  func.return
}
kernel.def target(@gpu) @rows3() {
  %one = index.constant 1 : index
  %c4 = index.constant 4 : index
  %c3 = index.constant 3 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%c4, %c3, %one) : index
} launch(%pitch: index, %a: buffer, %out: buffer) {
  %j = kernel.workitem.id<x> : index
  %i = kernel.workitem.id<y> : index
  func.call @copy_rows(%a, %out, %pitch, %i, %j) : (buffer, buffer, index, index, index) -> ()
  kernel.return
}
"""


@pytest.mark.parametrize("pitch", [4, 9])
def test_strided_view_made_in_a_callee_footprint_and_run(pitch):
    art = loom.compile(CALLEE_PITCHED, "rows3", target=GPU)
    c = art.contract_for(pitch=pitch)
    assert [b.bytes for b in c.bindings] == [4 * (1 + 2 * pitch + 3), 48]
    a = np.arange(3 * pitch, dtype=np.int32).reshape(3, pitch)
    got = run_public(art, 1, (4, 3, 1), c, [a.reshape(-1)[: 2 * pitch + 4]], 48).view(np.int32).reshape(3, 4)
    assert np.array_equal(got, a[:, :4])
