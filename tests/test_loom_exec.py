"""The Loom executor on the emulated GPU and NPU (issue 15 item 4): programs written for these
tests (never the hrx-rs corpus text) run through the test-only ``_core.loom._run_program`` and are
checked against NumPy / ml_dtypes / hx.numerics; checked mode reports each violation with its
location; with ``HRX_LOOM_CORPUS`` set, the corpus files that need no peer engine run too."""

import os
import pathlib
import struct

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hrxarray as hx
from hrxarray import _core
from hrxarray import numerics as hn

GPU = "gfx1151"
NPU = "amd.xdna.strix_halo.17f0_11"
BF16 = ml_dtypes.bfloat16


def run(src, symbol, bindings, constants=b"", workload=None, *, target=GPU, config=None, checked=False,
        coherent=()):
    """Runs one root over uint8 views of `bindings` (modified in place); the launch config dict (GPU).
    `coherent` lists the bindings (by position) on coherent backing."""
    views = [b.view(np.uint8).reshape(-1) for b in bindings]
    return _core.loom._run_program(src, symbol, target, {k: str(v) for k, v in (config or {}).items()},
                                   views, constants, workload, checked, list(coherent))


def info(src, symbol, constants=b"", *, target=GPU, config=None):
    """The planned program's parameters, constant block length and footprints (a dict)."""
    return _core.loom._plan_info(src, symbol, target, {k: str(v) for k, v in (config or {}).items()}, constants)


# --- GPU: a folded elementwise kernel ----------------------------------------------------------

AXPY = """
amdgpu.target<gfx1151> @gpu {subgroup_size = 32}
config.decl @axpy.block : %value: index where [range(%value, 1, 1024)]
kernel.def target(@gpu) export("axpy") @axpy(%n: index) {
  %one = index.constant 1 : index
  %b = config.get @axpy.block : index
  %bm1 = index.sub %b, %one : index
  %r = index.add %n, %bm1 : index
  %g = index.div %r, %b : index
  kernel.launch.config workgroups(%g, %one, %one) workgroup_size(%b, %one, %one) : index
} launch(%n: index, %alpha: f32, %x: buffer, %y: buffer) {
  %zero = index.constant 0 : offset
  %size = kernel.workgroup.size<x> : index
  %grp = kernel.workgroup.id<x> : index
  %item = kernel.workitem.id<x> : index
  %base = index.mul %grp, %size : index
  %i = index.add %base, %item : index
  %xv = buffer.view %x[%zero] : buffer -> view<[%n]xf32>
  %yv = buffer.view %y[%zero] : buffer -> view<[%n]xf32>
  %in = index.cmp ult, %i, %n : index
  scf.if %in {
    %j = index.assume %i [lt(%i, %n)] : index
    %a = view.load %xv[%j] : view<[%n]xf32> -> f32
    %c = view.load %yv[%j] : view<[%n]xf32> -> f32
    %p = scalar.mulf %a, %alpha : f32
    %s = scalar.addf %p, %c : f32
    view.store %s, %yv[%j] : f32, view<[%n]xf32>
  }
  kernel.return
}
"""


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 20000), block=st.sampled_from([1, 32, 64, 100, 256]), alpha=st.floats(-4, 4, width=32),
       seed=st.integers(0, 2**32 - 1))
def test_axpy_matches_numpy(n, block, alpha, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n + 3).astype(np.float32)  # a longer binding: the tail stays untouched
    want = y.copy()
    want[:n] = x * np.float32(alpha) + y[:n]
    lc = run(AXPY, "axpy", [x, y], struct.pack("<If", n, alpha), [n], config={"axpy.block": block})
    assert lc["workgroups"] == (-(-n // block), 1, 1) and lc["workgroup_size"] == (block, 1, 1)
    assert lc["subgroup_size"] == 32 and lc["workgroup_storage_bytes"] == 0
    assert np.array_equal(y.view(np.uint32), want.view(np.uint32))


def test_axpy_constant_layout_and_footprints():
    got = info(AXPY, "axpy", struct.pack("<If", 10, 1.0), config={"axpy.block": 64})
    assert got["constant_byte_length"] == 8
    assert got["device_params"][:2] == [("n", False, "index", 0, 4, 4), ("alpha", False, "f32", 4, 4, 4)]
    assert got["workload_params"] == [("n", False, "index", 0, 0, 0)]
    assert [f[:3] for f in got["footprints"]] == [(40, 1, "READ"), (40, 1, "READ_WRITE")]
    with pytest.raises(ValueError, match=r"binding %x .*device scalar %n"):
        info(AXPY, "axpy", b"", config={"axpy.block": 64})


def test_launch_config_checks_counts_and_predicates():
    x = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match="takes 1 workload value"):
        run(AXPY, "axpy", [x, x], struct.pack("<If", 4, 1.0), [4, 5], config={"axpy.block": 64})
    src = AXPY.replace("%bm1 = index.sub %b, %one : index",
                       "%m = index.assume %n [range(%n, 1, 100)] : index\n  %bm1 = index.sub %b, %one : index")
    with pytest.raises(ValueError, match=r"range\(%n.*%n = 1000"):
        run(src, "axpy", [x, x], struct.pack("<If", 4, 1.0), [1000], config={"axpy.block": 64})


def test_out_of_bounds_access_is_an_execution_error_and_masked_lanes_are_not_checked():
    # The guard keeps lanes past n away from memory: a binding of exactly n elements is enough.
    n = 70
    x = np.ones(n, np.float32)
    y = np.zeros(n, np.float32)
    run(AXPY, "axpy", [x, y], struct.pack("<If", n, 2.0), [n], config={"axpy.block": 64})
    assert (y == 2).all()
    # A view larger than the binding: the first lane past the binding is reported.
    with pytest.raises(hx.ExecutionError, match=r"^\d+:\d+: view.load: bytes \[200, 204\) outside binding %x.*work-item \(50, 0, 0\)"):
        run(AXPY, "axpy", [x[:50], y], struct.pack("<If", n, 2.0), [n], config={"axpy.block": 64})


# --- GPU: lockstep workgroups, workgroup memory, barriers, subgroups, private memory ----------

REDUCE = """
kernel.def @wg_sum(%groups: index) {
  %one = index.constant 1 : index
  %w = index.constant 128 : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%data: buffer, %sums: buffer, %clusters: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c4 = index.constant 4 : index
  %c128 = index.constant 128 : index
  %g = kernel.workgroup.id<x> : index
  %t = kernel.workitem.id<x> : index
  %base = index.mul %g, %c128 : index
  %i = index.add %base, %t : index
  %all = buffer.view %data[%z] : buffer -> view<1048576xi32>
  %v = view.load %all[%i] : view<1048576xi32> -> i32
  %s = kernel.subgroup.reduce<add> %v : i32
  %cl = kernel.subgroup.reduce<maxsi> %v {cluster_size = 8} : i32
  %cv = buffer.view %clusters[%z] : buffer -> view<1048576xi32>
  view.store %cl, %cv[%i] : i32, view<1048576xi32>
  %bytes = index.constant 16 : offset
  %lds = buffer.alloca<workgroup> align(16) %bytes : buffer
  %ldsv = buffer.view %lds[%z] : buffer -> view<4xi32>
  %lane = kernel.subgroup.lane.id : index
  %wave = kernel.subgroup.id : index
  %lead = index.cmp eq, %lane, %c0 : index
  scf.if %lead {
    view.store %s, %ldsv[%wave] : i32, view<4xi32>
  }
  kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)
  %first = index.cmp eq, %t, %c0 : index
  scf.if %first {
    %zero = scalar.constant 0 : i32
    %total = scf.for %k = [%c0 to %c4 step %c1](%acc = %zero : i32) -> (i32) {
      %e = view.load %ldsv[%k] : view<4xi32> -> i32
      %n = scalar.addi %acc, %e : i32
      scf.yield %n : i32
    }
    %sv = buffer.view %sums[%z] : buffer -> view<8192xi32>
    view.store %total, %sv[%g] : i32, view<8192xi32>
  }
  kernel.return
}
"""


@settings(max_examples=10, deadline=None)
@given(groups=st.integers(1, 12), seed=st.integers(0, 2**32 - 1))
def test_workgroup_memory_barrier_and_subgroup_reductions(groups, seed):
    rng = np.random.default_rng(seed)
    data = np.zeros(1 << 20, np.int32)
    data[:groups * 128] = rng.integers(-2**31, 2**31, groups * 128, dtype=np.int64).astype(np.int32)
    sums = np.zeros(8192, np.int32)
    clusters = np.zeros(1 << 20, np.int32)
    lc = run(REDUCE, "wg_sum", [data, sums, clusters], b"", [groups])
    assert lc["workgroup_storage_bytes"] == 16
    want = data[:groups * 128].reshape(groups, 128).astype(np.int64).sum(axis=1)
    want = ((want + 2**31) % 2**32 - 2**31).astype(np.int32)  # i32 wraps
    assert np.array_equal(sums[:groups], want)
    cl = np.repeat(data[:groups * 128].reshape(-1, 8).max(axis=1), 8)
    assert np.array_equal(clusters[:groups * 128], cl)


SCRATCH = """
kernel.def @permute() {
  %one = index.constant 1 : index
  %w = index.constant 32 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%order: buffer, %out: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c16 = index.constant 16 : index
  %bytes = index.constant 64 : offset
  %t = kernel.workitem.id<x> : index
  %t32 = index.cast %t : index to i32
  %mine = buffer.alloca<private> align(16) %bytes : buffer
  %mv = buffer.view %mine[%z] : buffer -> view<16xi32>
  scf.for %k = [%c0 to %c16 step %c1] {
    %k32 = index.cast %k : index to i32
    %h = scalar.constant 100 : i32
    %a = scalar.muli %t32, %h : i32
    %b = scalar.addi %a, %k32 : i32
    view.store %b, %mv[%k] : i32, view<16xi32>
    scf.yield
  }
  %ov = buffer.view %order[%z] : buffer -> view<32xi32>
  %sel = view.load %ov[%t] : view<32xi32> -> i32
  %si = index.cast %sel : i32 to index
  %pick = view.load %mv[%si] : view<16xi32> -> i32
  %res = buffer.view %out[%z] : buffer -> view<32xi32>
  view.store %pick, %res[%t] : i32, view<32xi32>
  kernel.return
}
"""


def test_private_memory_is_per_work_item():
    order = np.random.default_rng(5).integers(0, 16, 32).astype(np.int32)
    out = np.zeros(32, np.int32)
    run(SCRATCH, "permute", [order, out], b"", [])
    assert np.array_equal(out, np.arange(32, dtype=np.int32) * 100 + order)


VECTORS = """
kernel.def @vec(%n: index) {
  %one = index.constant 1 : index
  %w = index.constant 64 : index
  kernel.launch.config workgroups(%n, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%src: buffer, %dst: buffer, %flags: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c4 = index.constant 4 : index
  %i = kernel.workitem.dispatch.id<x> : index
  %o = index.mul %i, %c4 : index
  %sv = buffer.view %src[%z] : buffer -> view<1024xf32>
  %dv = buffer.view %dst[%z] : buffer -> view<1024xf32>
  %fv = buffer.view %flags[%z] : buffer -> view<256xi32>
  %x = vector.load %sv[%o] : view<1024xf32> -> vector<4xf32>
  %half = scalar.constant 0.5 : f32
  %h = vector.splat %half : vector<4xf32>
  %gt = vector.cmpf ogt, %x, %h : vector<4xf32> -> vector<4xi1>
  %neg = vector.negf %x : vector<4xf32>
  %sel = vector.select %gt, %x, %neg : vector<4xf32>
  %two = scalar.constant 2.0 : f32
  %start = vector.iota %two step %two : vector<4xf32>
  %sum = vector.addf %sel, %start : vector<4xf32>
  %e0 = vector.extract %sum[0] : vector<4xf32> -> f32
  %big = scalar.constant 1000.0 : f32
  %e1 = scalar.addf %e0, %big : f32
  %ins = vector.insert %e1 into %sum[0] : f32, vector<4xf32>
  vector.store %ins, %dv[%o] : vector<4xf32>, view<1024xf32>
  %mx = scalar.constant -1.0e30 : f32
  %m = vector.reduce<maxnumf> %ins, %mx : vector<4xf32>, f32
  %lim = scalar.constant 1001.0 : f32
  %hit = scalar.cmpf oge, %m, %lim : f32
  %hi = scalar.extui %hit : i1 to i32
  view.store %hi, %fv[%i] : i32, view<256xi32>
  kernel.return
}
"""


def test_vector_ops_match_numpy():
    src = np.random.default_rng(3).random(1024).astype(np.float32)
    dst = np.zeros(1024, np.float32)
    flags = np.zeros(256, np.int32)
    run(VECTORS, "vec", [src, dst, flags], b"", [4])
    x = src.reshape(256, 4)
    sel = np.where(x > np.float32(0.5), x, -x)
    want = sel + np.array([2, 4, 6, 8], np.float32)
    want[:, 0] += np.float32(1000)
    assert np.array_equal(dst.reshape(256, 4), want)
    assert np.array_equal(flags, (want.max(axis=1) >= 1001).astype(np.int32))


LOOPS = """
kernel.def @collatz() {
  %one = index.constant 1 : index
  %w = index.constant 64 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%io: buffer, %steps: buffer) {
  %z = index.constant 0 : offset
  %t = kernel.workitem.id<x> : index
  %v = buffer.view %io[%z] : buffer -> view<64xi32>
  %sv = buffer.view %steps[%z] : buffer -> view<64xi32>
  %x0 = view.load %v[%t] : view<64xi32> -> i32
  %zero = scalar.constant 0 : i32
  %one32 = scalar.constant 1 : i32
  %two = scalar.constant 2 : i32
  %three = scalar.constant 3 : i32
  %fx, %fs = scf.while(%x = %x0 : i32, %s = %zero : i32) -> (i32, i32) {
    %more = scalar.cmpi sgt, %x, %one32 : i32
    scf.condition %more, %x, %s : i1, i32, i32
  } do(%y: i32, %c: i32) {
    %r = scalar.remsi %y, %two : i32
    %odd = scalar.cmpi eq, %r, %one32 : i32
    %nx = scf.if %odd -> (i32) {
      %a = scalar.muli %y, %three : i32
      %b = scalar.addi %a, %one32 : i32
      scf.yield %b : i32
    } else {
      %h = scalar.divsi %y, %two : i32
      scf.yield %h : i32
    }
    %nc = scalar.addi %c, %one32 : i32
    scf.yield %nx, %nc : i32, i32
  }
  view.store %fs, %sv[%t] : i32, view<64xi32>
  %lim = index.cast %x0 : i32 to index
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %tri = scf.for %k = [%c0 to %lim step %c1](%acc = %zero : i32) -> (i32) {
    %k32 = index.cast %k : index to i32
    %n = scalar.addi %acc, %k32 : i32
    scf.yield %n : i32
  }
  view.store %tri, %v[%t] : i32, view<64xi32>
  kernel.return
}
"""


def test_varying_while_and_for_loops_run_under_lane_masks():
    x = np.arange(1, 65, dtype=np.int32)
    steps = np.zeros(64, np.int32)
    io = x.copy()
    run(LOOPS, "collatz", [io, steps], b"", [])

    def collatz(v):
        s = 0
        while v > 1:
            v = 3 * v + 1 if v % 2 else v // 2
            s += 1
        return s

    assert steps.tolist() == [collatz(int(v)) for v in x]
    assert io.tolist() == [int(v) * (int(v) - 1) // 2 for v in x]


ATOMIC = """
kernel.def @hist(%n: index) {
  %one = index.constant 1 : index
  %w = index.constant 64 : index
  %c63 = index.constant 63 : index
  %r = index.add %n, %c63 : index
  %g = index.div %r, %w : index
  kernel.launch.config workgroups(%g, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%n: index, %data: buffer, %bins: buffer, %peak: buffer) {
  %z = index.constant 0 : offset
  %i = kernel.workitem.dispatch.id<x> : index
  %dv = buffer.view %data[%z] : buffer -> view<[%n]xi32>
  %bv = buffer.view %bins[%z] : buffer -> view<8xi32>
  %pv = buffer.view %peak[%z] : buffer -> view<1xf32>
  %c0 = index.constant 0 : index
  %in = index.cmp ult, %i, %n : index
  scf.if %in {
    %d = view.load %dv[%i] : view<[%n]xi32> -> i32
    %di = index.cast %d : i32 to index
    %one32 = scalar.constant 1 : i32
    %old = view.atomic.rmw<add> %one32, %bv[%di] {ordering = relaxed, scope = device} : i32, view<8xi32> -> i32
    %f = scalar.sitofp %d : i32 to f32
    %p = view.atomic.rmw<maxnumf> %f, %pv[%c0] {ordering = relaxed, scope = device} : f32, view<1xf32> -> f32
  }
  kernel.return
}
"""


def test_atomics_on_cacheable_memory():
    d = np.random.default_rng(1).integers(0, 8, 300).astype(np.int32)
    bins = np.zeros(8, np.int32)
    peak = np.zeros(1, np.float32)
    run(ATOMIC, "hist", [d, bins, peak], struct.pack("<I", 300), [300])
    assert np.array_equal(bins, np.bincount(d, minlength=8)) and peak[0] == d.max()


FLOAT_MAX_FORMS = [
    ("maxnumf", "rmw"),
    ("maximumf", "rmw"),
    ("maxnumf", "reduce"),
]


def float_max_form(kind, form):
    """ATOMIC with its float max spelled as `kind` in the rmw or the reduce (no result) form."""
    rmw = "%p = view.atomic.rmw<maxnumf> %f, %pv[%c0] {ordering = relaxed, scope = device} : f32, view<1xf32> -> f32"
    assert rmw in ATOMIC
    if form == "rmw":
        return ATOMIC.replace(rmw, rmw.replace("maxnumf", kind))
    return ATOMIC.replace(rmw, f"view.atomic.reduce<{kind}> %f, %pv[%c0] {{ordering = relaxed, scope = device}} : f32, view<1xf32>")


@pytest.mark.parametrize("kind, form", FLOAT_MAX_FORMS)
def test_float_atomic_max_does_not_update_coherent_bindings(kind, form):
    # gfx1151: a float atomic max does not update coherent backing; the other atomics do, and the
    # same max into a binding on cacheable memory is applied (per binding, not per dispatch).
    src = float_max_form(kind, form)
    d = np.random.default_rng(2).integers(0, 8, 300).astype(np.int32)
    for coherent in ([2], [0, 1, 2]):
        bins = np.zeros(8, np.int32)
        peak = np.array([-3.0], np.float32)
        run(src, "hist", [d, bins, peak], struct.pack("<I", 300), [300], coherent=coherent)
        assert np.array_equal(bins, np.bincount(d, minlength=8)), coherent
        assert peak[0] == -3.0, coherent
    for coherent in ([], [0], [1], [0, 1]):
        bins = np.zeros(8, np.int32)
        peak = np.array([-3.0], np.float32)
        run(src, "hist", [d, bins, peak], struct.pack("<I", 300), [300], coherent=coherent)
        assert np.array_equal(bins, np.bincount(d, minlength=8)) and peak[0] == d.max(), coherent


@pytest.mark.parametrize("kind, form", FLOAT_MAX_FORMS)
def test_checked_mode_reports_the_float_max_caveat(kind, form):
    src = float_max_form(kind, form)
    line = next(i for i, l in enumerate(src.splitlines(), 1) if f"<{kind}>" in l)
    d = np.random.default_rng(1).integers(0, 8, 300).astype(np.int32)
    bins = np.zeros(8, np.int32)
    peak = np.zeros(1, np.float32)
    with pytest.raises(hx.ExecutionError, match=rf"^{line}:\d+: view.atomic.{form}: gfx1151 float atomic max \({kind}\) "
                                                r"does not update coherent memory, and binding %peak is on coherent.*integer "
                                                r"compare-and-swap loop over the float's bits"):
        run(src, "hist", [d, bins, peak], struct.pack("<I", 300), [300], checked=True, coherent=[2])
    assert peak[0] == 0  # reported before any lane ran the float max
    run(src, "hist", [d, bins, peak], struct.pack("<I", 300), [300], checked=True, coherent=[0, 1])
    assert peak[0] == d.max()


@pytest.mark.parametrize("kind", ["minnumf", "minimumf"])
def test_float_atomic_min_updates_coherent_bindings(kind):
    # Only max is in HRX's caveat (Note [The gfx1151 float atomic max caveat]).
    src = ATOMIC.replace("rmw<maxnumf>", f"rmw<{kind}>")
    d = np.random.default_rng(3).integers(0, 8, 300).astype(np.int32)
    for checked in (False, True):
        bins = np.zeros(8, np.int32)
        peak = np.array([5.5], np.float32)
        run(src, "hist", [d, bins, peak], struct.pack("<I", 300), [300], checked=checked, coherent=[2])
        assert peak[0] == min(d.min(), 5.5)


def test_coherent_binding_positions_are_checked():
    d = np.zeros(4, np.int32)
    with pytest.raises(ValueError, match="coherent binding 3"):
        run(ATOMIC, "hist", [d, np.zeros(8, np.int32), np.zeros(1, np.float32)], struct.pack("<I", 4), [4],
            coherent=[3])


def test_unsupported_op_is_rejected_at_plan_time():
    # A fragment load's payload layout is target-defined: the emulator does not guess it.
    op = "%fl = vector.fragment.load<result> %xv[0] shape [%size, %size] : view<[%n]xf32> -> vector<64xf32>"
    src = AXPY.replace("kernel.return\n}", op + "\n  kernel.return\n}")
    line = src.splitlines().index("  " + op) + 1
    with pytest.raises(ValueError, match=rf"^{line}:9: valid Loom, not executed by the emulator: vector.fragment.load") as e:
        info(src, "axpy", config={"axpy.block": 64})
    diags = getattr(e.value, "diagnostics", None)
    if diags is not None:
        assert [d.code for d in diags] == ["EMULATOR/001"]


SUBGROUP = """
kernel.def @sg() {
  %one = index.constant 1 : index
  %w = index.constant 64 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%out: buffer) {
  %z = index.constant 0 : offset
  %t = kernel.workitem.id<x> : index
  %t32 = index.cast %t : index to i32
  %three = scalar.constant 3 : i32
  %x, %ok = kernel.subgroup.shuffle<xor> %t32, %three : i32, i32 -> i32, i1
  %five = scalar.constant 5 : i32
  %b = kernel.subgroup.broadcast %t32, %five : i32, i32 -> i32
  %c7 = scalar.constant 7 : i32
  %r = scalar.remsi %t32, %c7 : i32
  %zero = scalar.constant 0 : i32
  %p = scalar.cmpi eq, %r, %zero : i32
  %bal = kernel.subgroup.ballot %p : i1 -> i32
  %two = scalar.constant 2 : i32
  %d, %dok = kernel.subgroup.shuffle<down> %t32, %two : i32, i32 -> i32, i1
  %dv = scalar.extui %dok : i1 to i32
  %ov = buffer.view %out[%z] : buffer -> view<64x5xi32>
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c2 = index.constant 2 : index
  %c3 = index.constant 3 : index
  %c4 = index.constant 4 : index
  view.store %x, %ov[%t, %c0] : i32, view<64x5xi32>
  view.store %b, %ov[%t, %c1] : i32, view<64x5xi32>
  view.store %bal, %ov[%t, %c2] : i32, view<64x5xi32>
  view.store %d, %ov[%t, %c3] : i32, view<64x5xi32>
  view.store %dv, %ov[%t, %c4] : i32, view<64x5xi32>
  kernel.return
}
"""


def test_subgroup_shuffle_broadcast_ballot():
    out = np.zeros((64, 5), np.int32)
    run(SUBGROUP, "sg", [out], b"", [])
    t = np.arange(64)
    base = t // 32 * 32
    assert np.array_equal(out[:, 0], t ^ 3)
    assert np.array_equal(out[:, 1], base + 5)
    for g in range(2):
        bits = sum(1 << (l - 32 * g) for l in range(32 * g, 32 * g + 32) if l % 7 == 0)
        assert (out[32 * g:32 * g + 32, 2].astype(np.int64) % 2**32 == bits).all()
    valid = (t % 32) + 2 < 32
    assert np.array_equal(out[:, 4], valid.astype(np.int32))
    assert np.array_equal(out[:, 3], np.where(valid, t + 2, t))


EXCHANGE = """
kernel.def @swap() {
  %one = index.constant 1 : index
  %w = index.constant 8 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%cell: buffer, %seen: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %t = kernel.workitem.id<x> : index
  %t32 = index.cast %t : index to i32
  %cv = buffer.view %cell[%z] : buffer -> view<1xi32>
  %sv = buffer.view %seen[%z] : buffer -> view<8x2xi32>
  %one32 = scalar.constant 1 : i32
  %want = scalar.subi %t32, %one32 : i32
  %old, %won = view.atomic.cmpxchg %want, %t32, %cv[%c0] {success = acq_rel, failure = acquire, scope = device} : i32, i32, view<1xi32> -> i32, i1
  %w32 = scalar.extui %won : i1 to i32
  %c1 = index.constant 1 : index
  view.store %old, %sv[%t, %c0] : i32, view<8x2xi32>
  view.store %w32, %sv[%t, %c1] : i32, view<8x2xi32>
  %fin = view.atomic.load %cv[%c0] {ordering = acquire, scope = device} : view<1xi32> -> i32
  %nine = scalar.constant 9 : i32
  %sum = scalar.addi %fin, %nine : i32
  view.atomic.store %sum, %cv[%c0] {ordering = release, scope = device} : i32, view<1xi32>
  kernel.return
}
"""


def test_cmpxchg_and_atomic_load_store_run_lanes_in_lane_order():
    # Lane t swaps t - 1 for t: in lane order every swap succeeds, a chain 0 -> 7.
    cell = np.array([-1], np.int32)
    seen = np.zeros((8, 2), np.int32)
    run(EXCHANGE, "swap", [cell, seen], b"", [])
    assert np.array_equal(seen[:, 0], np.arange(-1, 7)) and seen[:, 1].all()
    assert cell[0] == 7 + 9  # every lane loads 7 and stores 16


SCATTER = """
aie2p.target<array> @arr
aie2p.target<core> @core
pipeline.def<kernel> public target(@arr) @split() launch(%a: buffer, %out: buffer) {
  %two = index.constant 2 : index
  %z = index.constant 0 : offset
  %grp = group.create %two : index -> group
  %av = buffer.view %a[%z] : buffer -> view<4x3x8xf32>
  %ov = buffer.view %out[%z] : buffer -> view<12x8xbf16>
  %af = pipeline.scatter %av across %grp : view<4x3x8xf32>, group -> pipeline.flow<tile<8xf32>>
  %of = pipeline.stage @round on %grp(%af) : (group, pipeline.flow<tile<8xf32>>) -> (pipeline.flow<tile<8xbf16>>)
  pipeline.write %of to %ov : pipeline.flow<tile<8xbf16>>, view<12x8xbf16>
  pipeline.return
}
func.def target(@core) @round(%a: buffer, %o: buffer) {
  %z = index.constant 0 : offset
  %av = buffer.view %a[%z] : buffer -> view<8xf32>
  %ov = buffer.view %o[%z] : buffer -> view<8xbf16>
  %x = vector.load %av[0] : view<8xf32> -> vector<8xf32>
  %y = vector.fptrunc %x : vector<8xf32> to vector<8xbf16>
  vector.store %y, %ov[0] : vector<8xbf16>, view<8xbf16>
  func.return
}
"""


def test_pipeline_scatter_and_bf16_rounding():
    a = (np.random.default_rng(8).standard_normal((4, 3, 8)) * 1000).astype(np.float32)
    out = np.zeros((12, 8), BF16)
    run(SCATTER, "split", [a, out], target=NPU)
    assert np.array_equal(out.view(np.uint16), a.reshape(12, 8).astype(BF16).view(np.uint16))


PICK = """
kernel.def @pick(%n: index) {
  %one = index.constant 1 : index
  %w = index.constant 64 : index
  kernel.launch.config workgroups(%n, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%x: buffer, %out: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c2 = index.constant 2 : index
  %i = kernel.workitem.dispatch.id<x> : index
  %xv = buffer.view %x[%z] : buffer -> view<256xf32>
  %ov = buffer.view %out[%z] : buffer -> view<256xf32>
  %r = index.rem %i, %c2 : index
  %even = index.cmp eq, %r, %c0 : index
  %j = scf.if %even -> (index) {
    scf.yield %i : index
  } else {
    scf.yield %c0 : index
  }
  %v = view.load %xv[%j] : view<256xf32> -> f32
  view.store %v, %ov[%i] : f32, view<256xf32>
  kernel.return
}
"""


def test_divergent_if_results_merge_lane_by_lane():
    # The then-side value is a step-1 lane sequence; the merged one is not (odd lanes take 0).
    x = np.random.default_rng(9).random(256).astype(np.float32)
    out = np.zeros(256, np.float32)
    run(PICK, "pick", [x, out], b"", [4])
    i = np.arange(256)
    assert np.array_equal(out, x[np.where(i % 2 == 0, i, 0)])


# --- checked mode --------------------------------------------------------------------------------

def test_checked_false_assumption_names_line_and_work_item():
    src = AXPY.replace("[lt(%i, %n)]", "[lt(%i, 37)]")
    n = 100
    x = np.zeros(n, np.float32)
    y = np.zeros(n, np.float32)
    run(src, "axpy", [x, y], struct.pack("<If", n, 1.0), [n], config={"axpy.block": 32})  # unchecked: no report
    line = next(k for k, l in enumerate(src.splitlines(), 1) if "index.assume" in l)
    with pytest.raises(hx.ExecutionError, match=rf"^{line}:\d+: index.assume: assumption lt\(%i, \.\.\.\) is false: %i = 37 "
                                                 r"\(workgroup \(1, 0, 0\), work-item \(5, 0, 0\)\)"):
        run(src, "axpy", [x, y], struct.pack("<If", n, 1.0), [n], config={"axpy.block": 32}, checked=True)


ARITH = """
kernel.def @arith() {
  %one = index.constant 1 : index
  %w = index.constant 4 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%io: buffer) {
  %z = index.constant 0 : offset
  %t = kernel.workitem.id<x> : index
  %v = buffer.view %io[%z] : buffer -> view<4xi32>
  %a = view.load %v[%t] : view<4xi32> -> i32
  %b = scalar.addi<nsw> %a, %a : i32
  %c = scalar.divsi %b, %a : i32
  view.store %c, %v[%t] : i32, view<4xi32>
  kernel.return
}
"""


def test_checked_nsw_overflow_and_division_by_zero():
    io = np.array([1, 2, 2**30, 3], np.int32)
    run(ARITH, "arith", [io.copy()], b"", [])  # wraps silently when unchecked
    with pytest.raises(hx.ExecutionError, match=r"^11:\d+: scalar.addi: nsw promise broken.*work-item \(2, 0, 0\)"):
        run(ARITH, "arith", [io.copy()], b"", [], checked=True)
    with pytest.raises(hx.ExecutionError, match=r"^12:\d+: scalar.divsi: division by zero.*work-item \(1, 0, 0\)"):
        run(ARITH, "arith", [np.array([1, 0, 3, 4], np.int32)], b"", [], checked=True)


RACES = """
kernel.def @race(%mode: index) {
  %one = index.constant 1 : index
  %two = index.constant 2 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%two, %one, %one) : index
} launch(%mode: index, %out: buffer) {
  %z = index.constant 0 : offset
  %four = index.constant 4 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c2 = index.constant 2 : index
  %t = kernel.workitem.id<x> : index
  %bytes = index.constant 16 : offset
  %lds = buffer.alloca<workgroup> align(8) %bytes : buffer
  %w64 = buffer.view %lds[%z] : buffer -> view<2xi64>
  %w32 = buffer.view %lds[%four] : buffer -> view<1xi32>
  %ov = buffer.view %out[%z] : buffer -> view<1xi32>
  %first = index.cmp eq, %t, %c0 : index
  %second = index.cmp eq, %t, %c1 : index
  %wide = scalar.constant 7 : i64
  %narrow = scalar.constant 9 : i32
  %same = index.cmp eq, %mode, %c0 : index
  scf.if %same {
    view.store %narrow, %w32[%c0] : i32, view<1xi32>
  }
  %overlap = index.cmp eq, %mode, %c1 : index
  scf.if %overlap {
    scf.if %first {
      view.store %wide, %w64[%c0] : i64, view<2xi64>
    }
    scf.if %second {
      view.store %narrow, %w32[%c0] : i32, view<1xi32>
    }
  }
  %apart = index.cmp eq, %mode, %c2 : index
  scf.if %apart {
    scf.if %first {
      view.store %wide, %w64[%c0] : i64, view<2xi64>
    }
    scf.if %second {
      view.store %wide, %w64[%c1] : i64, view<2xi64>
    }
  }
  %fenced = index.cmp ugt, %mode, %c2 : index
  scf.if %fenced {
    scf.if %first {
      view.store %narrow, %w32[%c0] : i32, view<1xi32>
    }
    kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)
    %r = view.load %w32[%c0] : view<1xi32> -> i32
    scf.if %second {
      view.store %r, %ov[%c0] : i32, view<1xi32>
    }
  }
  kernel.return
}
"""


@pytest.mark.parametrize("mode, line, what", [
    (0, 24, r"writes 4 bytes at offset 4 of .* that work-item 0 wrote"),
    (1, 32, r"writes 4 bytes at offset 4 of .* that work-item 0 wrote"),
])
def test_checked_workgroup_races(mode, line, what):
    out = np.zeros(1, np.int32)
    run(RACES, "race", [out], struct.pack("<I", mode), [mode])  # unchecked: no report
    with pytest.raises(hx.ExecutionError, match=rf"^{line}:\d+: view.store: workgroup-memory race: {what}.*work-item \(1, 0, 0\)"):
        run(RACES, "race", [out], struct.pack("<I", mode), [mode], checked=True)


SHARED_READ_RACE = """
kernel.def @r() {
  %one = index.constant 1 : index
  %two = index.constant 2 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%two, %one, %one) : index
} launch(%out: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %bytes = index.constant 4 : offset
  %t = kernel.workitem.id<x> : index
  %lds = buffer.alloca<workgroup> align(4) %bytes : buffer
  %v = buffer.view %lds[%z] : buffer -> view<1xf32>
  %o = buffer.view %out[%z] : buffer -> view<2xf32>
  %first = index.cmp eq, %t, %c0 : index
  %zero = scalar.constant 0.0 : f32
  scf.if %first {
    view.store %zero, %v[%c0] : f32, view<1xf32>
  }
  kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)
  %x = view.load %v[%c0] : view<1xf32> -> f32
  view.store %x, %o[%t] : f32, view<2xf32>
  scf.if %first {
    view.store %zero, %v[%c0] : f32, view<1xf32>
  }
  kernel.return
}
"""


def test_checked_race_with_bytes_several_work_items_read_says_so():
    # Both work-items read the word, then work-item 0 overwrites it in the same epoch: the report
    # names the readers as several (the shadow's -2 marker must not leak out as a work-item id).
    out = np.zeros(2, np.float32)
    with pytest.raises(hx.ExecutionError, match=r"^23:\d+: view.store: workgroup-memory race: writes 4 bytes at "
                                                r"offset 0 of .* that several work-items read in the same barrier "
                                                r"epoch.*work-item \(0, 0, 0\)"):
        run(SHARED_READ_RACE, "r", [out], checked=True)


def test_checked_disjoint_writes_and_barrier_separated_accesses_are_not_races():
    out = np.zeros(1, np.int32)
    run(RACES, "race", [out], struct.pack("<I", 2), [2], checked=True)
    run(RACES, "race", [out], struct.pack("<I", 3), [3], checked=True)
    assert out[0] == 9


def test_checked_barrier_under_divergent_control_flow():
    src = RACES.replace("""    scf.if %first {
      view.store %narrow, %w32[%c0] : i32, view<1xi32>
    }
    kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)""", """    scf.if %first {
      view.store %narrow, %w32[%c0] : i32, view<1xi32>
      kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)
    }""")
    with pytest.raises(hx.ExecutionError, match=r"kernel.barrier: barrier under divergent control flow.*work-item \(1, 0, 0\)"):
        run(src, "race", [np.zeros(1, np.int32)], struct.pack("<I", 3), [3], checked=True)


MISC = """
kernel.def @misc() {
  %one = index.constant 1 : index
  %w = index.constant 4 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%io: buffer, %f: buffer) {
  %z = index.constant 0 : offset
  %t = kernel.workitem.id<x> : index
  %a, %fa = buffer.assume.alignment %io, %f {minimum_alignment = 64} : buffer, buffer
  %v = buffer.view %a[%z] : buffer -> view<8xi32>
  %fv = buffer.view %fa[%z] : buffer -> view<4xf32>
  %x = view.load %fv[%t] : view<4xf32> -> f32
  %i = scalar.fptosi %x : f32 to i32
  %c2 = index.constant 2 : index
  %o = index.mul %t, %c2 : index
  %vec = vector.load %v[%o] : view<8xi32> -> vector<3xi32>
  %s = vector.splat %i : vector<3xi32>
  %sum = vector.addi %vec, %s : vector<3xi32>
  %e = vector.extract %sum[0] : vector<3xi32> -> i32
  view.store %e, %v[%o] : i32, view<8xi32>
  kernel.return
}
"""


def aligned(n, dtype, misalign=0):
    """A zeroed array of n elements whose data starts `misalign` bytes past a 64-byte boundary."""
    size = np.dtype(dtype).itemsize
    raw = np.zeros(n * size + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + misalign
    return raw[start:start + n * size].view(dtype)


def test_checked_alignment_vector_footprint_and_cast_representability():
    f = aligned(4, np.float32)
    f[:] = [1, 2, 3, 4]
    io = aligned(8, np.int32)
    # Lane 3's 3-element vector at 6 runs past the 8-element view: always an error.
    with pytest.raises(hx.ExecutionError, match=r"vector.load: footprint \[6, 9\) out of bounds for axis 0 of extent 8 .*work-item \(3, 0, 0\)"):
        run(MISC, "misc", [io, f], b"", [])
    src = MISC.replace("vector<3xi32>", "vector<2xi32>")
    run(src, "misc", [io, f], b"", [], checked=True)
    assert io.tolist() == [1, 0, 2, 0, 3, 0, 4, 0]
    f[2] = 3e9  # not an i32
    with pytest.raises(hx.ExecutionError, match=r"scalar.fptosi: float value not representable in i32 .*work-item \(2, 0, 0\)"):
        run(src, "misc", [io, f], b"", [], checked=True)
    f[2] = 3
    bad = aligned(8, np.int32, misalign=4)
    with pytest.raises(hx.ExecutionError, match=r"buffer.assume.alignment: alignment promise of 64 bytes broken: binding %io"):
        run(src, "misc", [bad, f], b"", [], checked=True)
    run(src, "misc", [bad, f], b"", [])  # unchecked: the promise is not verified


# --- NPU pipelines ---------------------------------------------------------------------------------

MUL = """
aie2p.target<array> @arr
aie2p.target<core> @core
config.decl @mul.records : %value: index where [range(%value, 1, 4096)]
pipeline.def<kernel> public target(@arr) @mul() launch(%a: buffer, %b: buffer, %c: buffer) {
  %n = config.get @mul.records : index
  %one = index.constant 1 : index
  %z = index.constant 0 : offset
  %grp = group.create %one : index -> group
  %av = buffer.view %a[%z] : buffer -> view<[%n]x16xi32>
  %bv = buffer.view %b[%z] : buffer -> view<[%n]x16xi32>
  %cv = buffer.view %c[%z] : buffer -> view<[%n]x16xi32>
  %af = pipeline.read %av on %grp : view<[%n]x16xi32>, group -> pipeline.flow<tile<16xi32>>
  %bf = pipeline.read %bv on %grp : view<[%n]x16xi32>, group -> pipeline.flow<tile<16xi32>>
  %cf = pipeline.stage @mul_tile on %grp(%af, %bf) : (group, pipeline.flow<tile<16xi32>>, pipeline.flow<tile<16xi32>>) -> (pipeline.flow<tile<16xi32>>)
  pipeline.write %cf to %cv : pipeline.flow<tile<16xi32>>, view<[%n]x16xi32>
  pipeline.return
}
func.def target(@core) @mul_tile(%a: buffer, %b: buffer, %c: buffer) {
  %a2, %b2, %c2 = buffer.assume.alignment %a, %b, %c {minimum_alignment = 64} : buffer, buffer, buffer
  %z = index.constant 0 : offset
  %av = buffer.view %a2[%z] : buffer -> view<16xi32>
  %bv = buffer.view %b2[%z] : buffer -> view<16xi32>
  %cv = buffer.view %c2[%z] : buffer -> view<16xi32>
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c8 = index.constant 8 : index
  %c16 = index.constant 16 : index
  scf.for %i = [%c0 to %c8 step %c1] {
    %x = view.load %av[%i] : view<16xi32> -> i32
    %y = view.load %bv[%i] : view<16xi32> -> i32
    %p = scalar.muli %x, %y : i32
    view.store %p, %cv[%i] : i32, view<16xi32>
  }
  %x8 = vector.load %av[%c8] : view<16xi32> -> vector<8xi32>
  %y8 = vector.load %bv[%c8] : view<16xi32> -> vector<8xi32>
  %s8 = vector.addi %x8, %y8 : vector<8xi32>
  vector.store %s8, %cv[%c8] : vector<8xi32>, view<16xi32>
  func.return
}
"""


@settings(max_examples=20, deadline=None)
@given(records=st.integers(1, 3000), seed=st.integers(0, 2**32 - 1))
def test_pipeline_records_match_numpy(records, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-2**31, 2**31, (records, 16), dtype=np.int64).astype(np.int32)
    b = rng.integers(-2**31, 2**31, (records, 16), dtype=np.int64).astype(np.int32)
    c = np.zeros((records, 16), np.int32)
    assert run(MUL, "mul", [a, b, c], target=NPU, config={"mul.records": records}) is None
    with np.errstate(over="ignore"):
        assert np.array_equal(c[:, :8], a[:, :8] * b[:, :8])
        assert np.array_equal(c[:, 8:], a[:, 8:] + b[:, 8:])


def test_pipeline_footprints_and_short_bindings():
    got = info(MUL, "mul", target=NPU, config={"mul.records": 10})
    assert not got["gpu"] and got["constant_byte_length"] == 0
    assert [f[:3] for f in got["footprints"]] == [(640, 1, "READ"), (640, 1, "READ"), (640, 1, "WRITE")]
    a = np.zeros((10, 16), np.int32)
    with pytest.raises(hx.ExecutionError, match=r"pipeline.read: the view's 640 bytes .* exceed binding %b of 320 bytes"):
        run(MUL, "mul", [a, a[:5], a.copy()], target=NPU, config={"mul.records": 10})


SHIFT = """
aie2p.target<array> @arr
aie2p.target<core> @core
config.decl @shift.records : %value: index where [range(%value, 1, 65536)]
pipeline.def<kernel> public target(@arr) @shift() launch(%a: buffer, %b: buffer) {
  %n = config.get @shift.records : index
  %one = index.constant 1 : index
  %z = index.constant 0 : offset
  %next = index.constant 64 : offset
  %grp = group.create %one : index -> group
  %src = buffer.view %a[%z] : buffer -> view<[%n]x16xi32>
  %dst = buffer.view %b[%next] : buffer -> view<[%n]x16xi32>
  %f = pipeline.read %src on %grp : view<[%n]x16xi32>, group -> pipeline.flow<tile<16xi32>>
  %g = pipeline.stage @bump on %grp(%f) : (group, pipeline.flow<tile<16xi32>>) -> (pipeline.flow<tile<16xi32>>)
  pipeline.write %g to %dst : pipeline.flow<tile<16xi32>>, view<[%n]x16xi32>
  pipeline.return
}
func.def target(@core) @bump(%tin: buffer, %tout: buffer) {
  %z = index.constant 0 : offset
  %iv = buffer.view %tin[%z] : buffer -> view<16xi32>
  %ov = buffer.view %tout[%z] : buffer -> view<16xi32>
  %x = vector.load %iv[0] : view<16xi32> -> vector<16xi32>
  %one = scalar.constant 1 : i32
  %ones = vector.splat %one : vector<16xi32>
  %y = vector.addi %x, %ones : vector<16xi32>
  vector.store %y, %ov[0] : vector<16xi32>, view<16xi32>
  func.return
}
"""


@pytest.mark.parametrize("records", [5, 3000])
def test_pipeline_write_overlapping_its_input_sees_the_inputs_as_read(records):
    # Both bindings are the same memory: records r are read and written back one record later;
    # every output is computed from the input as it was (the write happens after the stage,
    # whatever the batching).
    a = aligned((records + 1) * 16, np.int32).reshape(records + 1, 16)  # 64-byte aligned tiles in place
    a[:] = np.random.default_rng(12).integers(-1000, 1000, (records + 1, 16))
    want = a.copy()
    want[1:] = a[:-1] + 1
    run(SHIFT, "shift", [a, a], target=NPU, config={"shift.records": records})
    assert np.array_equal(a, want)


GEMM = """
aie2p.target<array> @arr
aie2p.target<core> @core
config.decl @mm.count : %value: index where [range(%value, 1, 65536)]
pipeline.def<kernel> public target(@arr) @mm() launch(%a: buffer, %b: buffer, %c: buffer) {
  %count = config.get @mm.count : index
  %one = index.constant 1 : index
  %z = index.constant 0 : offset
  %grp = group.create %one : index -> group
  %av = buffer.view %a[%z] : buffer -> view<[%count]x8x8xbf16>
  %bv = buffer.view %b[%z] : buffer -> view<[%count]x8x8xbf16>
  %cv = buffer.view %c[%z] : buffer -> view<[%count]x8x8xf32>
  %af = pipeline.read %av on %grp : view<[%count]x8x8xbf16>, group -> pipeline.flow<tile<8x8xbf16>>
  %bf = pipeline.read %bv on %grp : view<[%count]x8x8xbf16>, group -> pipeline.flow<tile<8x8xbf16>>
  %cf = pipeline.stage @cell on %grp(%af, %bf) : (group, pipeline.flow<tile<8x8xbf16>>, pipeline.flow<tile<8x8xbf16>>) -> (pipeline.flow<tile<8x8xf32>>)
  pipeline.write %cf to %cv : pipeline.flow<tile<8x8xf32>>, view<[%count]x8x8xf32>
  pipeline.return
}
func.def target(@core) @cell(%a: buffer, %b: buffer, %c: buffer) {
  %a2, %b2, %c2 = buffer.assume.alignment %a, %b, %c {minimum_alignment = 64} : buffer, buffer, buffer
  %z = index.constant 0 : offset
  %av = buffer.view %a2[%z] : buffer -> view<8x8xbf16>
  %bv = buffer.view %b2[%z] : buffer -> view<8x8xbf16>
  %cv = buffer.view %c2[%z] : buffer -> view<8x8xf32>
  %eight = index.constant 8 : index
  %x = vector.load %av[0, 0] : view<8x8xbf16> -> vector<8x8xbf16>
  %y = vector.load %bv[0, 0] : view<8x8xbf16> -> vector<8x8xbf16>
  %s = encoding.define #encoding.operand<element_format=bfp16ebs8, payload_elements=64, payload_packing=target_fragment, payload_registers=18, rounding=ROUNDING> : encoding<schema>
  %xe = vector.encode %x using %s : vector<8x8xbf16>, encoding<schema> -> vector<72xi8>
  %ye = vector.encode %y using %s : vector<8x8xbf16>, encoding<schema> -> vector<72xi8>
  %xf = vector.fragment<lhs> %xe shape [%eight, %eight] using {schema = %s : encoding<schema>} : vector<72xi8>
  %yf = vector.fragment<rhs> %ye shape [%eight, %eight] using {schema = %s : encoding<schema>} : vector<72xi8>
  %zero = vector.constant 0.0 : vector<64xf32>
  %zf = vector.fragment<init> %zero shape [%eight, %eight] : vector<64xf32>
  %p = vector.mma %xf, %yf, %zf : vector<72xi8>, vector<72xi8>, vector<64xf32>
  vector.fragment.store<result> %p, %cv[0, 0] shape [%eight, %eight] : vector<64xf32>, view<8x8xf32>
  func.return
}
"""


@settings(max_examples=15, deadline=None)
@given(count=st.integers(1, 5000), rounding=st.sampled_from(["floor", "even"]), seed=st.integers(0, 2**32 - 1))
def test_bfp16_gemm_pipeline_is_bit_identical_to_numerics_matmul(count, rounding, seed):
    rng = np.random.default_rng(seed)
    scale = 2.0 ** rng.integers(-8, 9, (count, 8, 8))
    a = (rng.standard_normal((count, 8, 8)) * scale).astype(np.float32).astype(BF16)
    b = (rng.standard_normal((count, 8, 8)) * scale).astype(np.float32).astype(BF16)
    c = np.zeros((count, 8, 8), np.float32)
    src = GEMM.replace("ROUNDING", "nearest_even" if rounding == "even" else "flush_subnormal")
    run(src, "mm", [a, b, c], target=NPU, config={"mm.count": count})
    want = hn.matmul(a, b, compute="bfp16", rounding=rounding)
    assert np.array_equal(c.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("role", ["lhs", "rhs"])
def test_bfp16_refuses_nan_and_inf_as_a_data_check_naming_the_element(role):
    # The built-in gemm's wording (programs.cpp): a ValueError (Data), not a device fault.
    a = np.ones((3, 8, 8), BF16)
    b = np.ones((3, 8, 8), BF16)
    (a if role == "lhs" else b)[2, 1, 3] = np.inf if role == "lhs" else np.nan
    c = np.zeros((3, 8, 8), np.float32)
    src = GEMM.replace("ROUNDING", "flush_subnormal")
    with pytest.raises(ValueError, match=rf"vector.fragment \(record 2\): bfp16ebs8 has no encoding for NaN or Inf: "
                                         rf"{role} element \(2, 1, 3\) = (inf|nan)") as e:
        run(src, "mm", [a, b, c], target=NPU, config={"mm.count": 3})
    assert not isinstance(e.value, hx.ExecutionError)
    assert not c.any()  # nothing written


# --- the hrx-rs corpus (read from HRX_LOOM_CORPUS, never committed) ----------------------------------

CORPUS = os.environ.get("HRX_LOOM_CORPUS")
corpus = pytest.mark.skipif(not CORPUS, reason="HRX_LOOM_CORPUS is not set")


def corpus_source(name):
    """The text of corpus file `name` under HRX_LOOM_CORPUS (skips the test when it is absent)."""
    root = pathlib.Path(CORPUS)
    for p in (root / name, root / "tests" / "kernels" / name, root / "examples" / "kernels" / name):
        if p.exists():
            return p.read_text()
    pytest.skip(f"{name} not in {CORPUS}")


@corpus
def test_corpus_add_f32():
    src = corpus_source("add_f32.loom")
    n = 1000
    x = np.random.default_rng(0).random(n + 5).astype(np.float32)
    want = x.copy()
    want[:n] += np.float32(0.25)
    lc = run(src, "add_f32", [x], struct.pack("<If", n, 0.25), [n], config={"add.grid": 4})
    assert lc["workgroups"] == (4, 1, 1) and lc["workgroup_size"] == (256, 1, 1)
    assert np.array_equal(x, want)


@corpus
def test_corpus_bounded_extrema():
    src = corpus_source("bounded_extrema.loom")
    n = 200
    out = np.zeros((n, 2), np.int32)
    run(src, "bounded_extrema", [out], struct.pack("<I", n), [n])
    want = np.zeros((n, 2), np.int32)
    for g in range(-(-n // 64)):
        want[g * 64] = [min(g * 64 + 64, n), max(g * 64 + 64, n)]
    assert np.array_equal(out, want)


@corpus
def test_corpus_scratch():
    src = corpus_source("scratch.loom")
    idx = np.random.default_rng(2).integers(0, 64, 64).astype(np.int32)
    out = np.zeros(64, np.int32)
    run(src, "scratch", [out, idx], b"", [])
    assert np.array_equal(out, idx * 3 + np.arange(64, dtype=np.int32))


@corpus
@pytest.mark.parametrize("symbol, racy", [
    ("tsan_workgroup_write_race", True),
    ("tsan_workgroup_wide_upper_half_write_race", True),
    ("tsan_workgroup_wide_current_write_race", True),
    ("tsan_workgroup_adjacent_wide_writes", False),
    ("tsan_workgroup_barrier_safe_write", False),
])
def test_corpus_workgroup_races(symbol, racy):
    src = corpus_source("workgroup_races.loom")
    out = np.zeros(2, np.int32)
    run(src, symbol, [out], b"", [])
    if symbol == "tsan_workgroup_barrier_safe_write":
        assert out[0] == 2
    if racy:
        with pytest.raises(hx.ExecutionError, match="workgroup-memory race"):
            run(src, symbol, [np.zeros(2, np.int32)], b"", [], checked=True)
    else:
        run(src, symbol, [np.zeros(2, np.int32)], b"", [], checked=True)


@corpus
@pytest.mark.parametrize("first", [0, 1])
def test_corpus_hrxdb_select_family(first):
    src = corpus_source("hrxdb_select_family.loom")
    rng = np.random.default_rng(7 + first)
    count, k, batch, row_base = 3000, 5, 2, 100
    groups = -(-count // 1024)
    scores = rng.integers(-50, 50, (batch, count)).astype(np.float32)
    scores[0, 10] = np.nan
    ids = rng.permutation(batch * count).astype(np.int32).reshape(batch, count)
    out_s = np.zeros((batch, groups * k), np.float32)
    out_i = np.zeros((batch, groups * k), np.int32)
    cfg = {"db.select.limit": 1 << 20, "db.batch": batch, "db.select.first": first}
    run(src, "select", [scores, ids, out_s, out_i], struct.pack("<iii", count, k, row_base), [count], config=cfg)
    for q in range(batch):
        for g in range(groups):
            s = scores[q, g * 1024:(g + 1) * 1024]
            cand = np.arange(g * 1024, g * 1024 + len(s)) + row_base if first else ids[q, g * 1024:(g + 1) * 1024]
            live = [(float(v), int(i)) for v, i in zip(s, cand) if not np.isnan(v)]
            live.sort(key=lambda t: (-t[0], t[1]))
            for r in range(k):
                assert (out_s[q, g * k + r], out_i[q, g * k + r]) == live[r]


@corpus
def test_corpus_npu_pipelines():
    copy = corpus_source("copy.xdna.loom")
    src = np.random.default_rng(4).integers(-2**31, 2**31, (3, 1024), dtype=np.int64).astype(np.int32)
    dst = np.zeros_like(src)
    run(copy, "copy", [src, dst], target=NPU, config={"copy.packets": 3})
    assert np.array_equal(dst, src)
    mul = corpus_source("mul_i32.xdna.loom")
    a = np.arange(16, dtype=np.int32)
    b = np.arange(16, dtype=np.int32) - 7
    c = np.zeros(16, np.int32)
    run(mul, "mul_i32", [a, b, c], target=NPU)
    assert np.array_equal(c, a * b)


@corpus
@pytest.mark.parametrize("name, symbol, config", [
    ("gemm_bf16.xdna.loom", "gemm", {}),
    ("batched_gemm.xdna.loom", "gemm", {"gemm.batch": 37}),
])
def test_corpus_bfp16_gemms(name, symbol, config):
    src = corpus_source(name)
    n = config.get("gemm.batch", 1)
    rng = np.random.default_rng(11)
    a = rng.standard_normal((n, 8, 8)).astype(np.float32).astype(BF16)
    b = rng.standard_normal((n, 8, 8)).astype(np.float32).astype(BF16)
    c = np.zeros((n, 8, 8), np.float32)
    run(src, symbol, [a, b, c], target=NPU, config=config)
    want = hn.matmul(a, b, compute="bfp16")
    assert np.array_equal(c.view(np.uint32), want.view(np.uint32))


@corpus
def test_corpus_clock_template_plans_to_emulator_diagnostic():
    # completed_tick is a template library (its provider is low asm): a kernel of ours that applies it
    # specialises, and planning rejects the low.invoke the chosen template reaches: EMULATOR/002, the
    # catalogue's code for a call whose callee has no body the emulator can run.
    kernel = """
kernel.def @ticks() {
  %one = index.constant 1 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%one, %one, %one) : index
} launch(%out: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %t = template.apply<@completed_tick>() : () -> (i32)
  %v = buffer.view %out[%z] : buffer -> view<1xi32>
  view.store %t, %v[%c0] : i32, view<1xi32>
  kernel.return
}
"""
    src = corpus_source("completed_tick.loom") + kernel
    with pytest.raises(ValueError, match=r"^20:\d+: valid Loom, not executed by the emulator: low.invoke") as e:
        info(src, "ticks")
    assert [d.code for d in e.value.diagnostics] == ["EMULATOR/002"]


@corpus
@pytest.mark.parametrize("name, symbol, code", [
    ("file_exchange.gpu.loom", "file_exchange", "EMULATOR/004"),
    ("resident_exchange.gpu.loom", None, "EMULATOR/004"),
])
def test_corpus_exchange_fixtures_plan_to_emulator_diagnostics(name, symbol, code):
    src = corpus_source(name)
    if "template.apply<@completed_tick>" in src:  # hrx-rs links the clock provider in
        src = corpus_source("completed_tick.loom") + src
    if symbol is None:
        symbol = next(l.split("@")[1].split("(")[0] for l in src.splitlines() if l.startswith("kernel.def"))
    with pytest.raises(ValueError, match="not executed by the emulator") as e:
        info(src, symbol)
    codes = {d.code for d in e.value.diagnostics}
    # EMULATOR/002: the low.invoke of the linked-in clock provider (completed_tick)
    assert codes <= {"EMULATOR/001", "EMULATOR/002", "EMULATOR/004"} and (code is None or code in codes)


@corpus
def test_corpus_low_asm_pipeline_is_not_a_root():
    with pytest.raises(ValueError, match="needs a pipeline.def|not executed by the emulator"):
        info(corpus_source("resident_exchange.xdna.loom"), "resident_service_array", target=NPU)


# --- every element type through the lane loops --------------------------------------------------
# The executor loads, computes and stores each element type in typed lane loops: contiguous
# (an index of step 1 over whole-workgroup batches), gathered and scattered (an index read
# from memory). Each of those must give NumPy's results: iN wraps, floats round once to
# their own type.

TYPED = """
amdgpu.target<gfx1151> @gpu {{subgroup_size = 32}}
kernel.def target(@gpu) export("typed") @typed(%n: index) {{
  %one = index.constant 1 : index
  %w = index.constant 64 : index
  %spare = index.constant 63 : index
  %r = index.add %n, %spare : index
  %g = index.div %r, %w : index
  kernel.launch.config workgroups(%g, %one, %one) workgroup_size(%w, %one, %one) : index
}} launch(%n: index, %x: buffer, %perm: buffer, %y: buffer, %gathered: buffer, %scattered: buffer) {{
  %z = index.constant 0 : offset
  %i = kernel.workitem.dispatch.id<x> : index
  %xv = buffer.view %x[%z] : buffer -> view<[%n]x{t}>
  %pv = buffer.view %perm[%z] : buffer -> view<[%n]xi32>
  %yv = buffer.view %y[%z] : buffer -> view<[%n]x{t}>
  %gv = buffer.view %gathered[%z] : buffer -> view<[%n]x{t}>
  %sv = buffer.view %scattered[%z] : buffer -> view<[%n]x{t}>
  %in = index.cmp ult, %i, %n : index
  scf.if %in {{
    %a = view.load %xv[%i] : view<[%n]x{t}> -> {t}
    %c = scalar.constant {c} : {t}
    %p = {mul} %a, %c : {t}
    %q = {add} %p, %a : {t}
    view.store %q, %yv[%i] : {t}, view<[%n]x{t}>
    %k32 = view.load %pv[%i] : view<[%n]xi32> -> i32
    %k = index.cast %k32 : i32 to index
    %b = view.load %xv[%k] : view<[%n]x{t}> -> {t}
    view.store %b, %gv[%i] : {t}, view<[%n]x{t}>
    view.store %a, %sv[%k] : {t}, view<[%n]x{t}>
  }}
  kernel.return
}}
"""

TYPED_DTYPES = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "f16": np.float16,
                "bf16": BF16, "f32": np.float32, "f64": np.float64}


@settings(max_examples=30, deadline=None)
@given(t=st.sampled_from(sorted(TYPED_DTYPES)), n=st.integers(1, 40000), seed=st.integers(0, 2**32 - 1))
def test_every_element_type_loads_computes_and_stores_like_numpy(t, n, seed):
    dt = np.dtype(TYPED_DTYPES[t])
    rng = np.random.default_rng(seed)
    is_int = t.startswith("i")
    if is_int:
        info_ = np.iinfo(dt)
        x = rng.integers(info_.min, info_.max, n, dtype=dt, endpoint=True)
        c = int(rng.integers(-100, 100))
        want = (x * dt.type(c) + x).astype(dt)  # NumPy's fixed-width arithmetic wraps
        src = TYPED.format(t=t, c=c, mul="scalar.muli", add="scalar.addi")
    else:
        x = (rng.standard_normal(n) * 100).astype(np.float32).astype(dt)
        c = 1.5
        with np.errstate(over="ignore"):
            want = ((x * dt.type(c)).astype(dt) + x).astype(dt)
        src = TYPED.format(t=t, c=c, mul="scalar.mulf", add="scalar.addf")
    perm = rng.permutation(n).astype(np.int32)
    y, gathered, scattered = (np.zeros(n, dt) for _ in range(3))
    run(src, "typed", [x, perm, y, gathered, scattered], struct.pack("<I", n), [n])
    bits = f"u{dt.itemsize}"
    assert np.array_equal(y.view(bits), want.view(bits))
    assert np.array_equal(gathered.view(bits), x[perm].view(bits))
    expect = np.zeros(n, dt)
    expect[perm] = x
    assert np.array_equal(scattered.view(bits), expect.view(bits))


# --- scans and workgroup collectives ------------------------------------------------------------

COLLECTIVES = """
amdgpu.target<gfx1151> @gpu {subgroup_size = 32}
kernel.def target(@gpu) export("coll") @coll() {
  %one = index.constant 1 : index
  %w = index.constant 64 : index
  %g = index.constant 3 : index
  kernel.launch.config workgroups(%g, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%x: buffer, %out: buffer, %fout: buffer) {
  %z = index.constant 0 : offset
  %t = kernel.workitem.dispatch.id<x> : index
  %xv = buffer.view %x[%z] : buffer -> view<192xi32>
  %ov = buffer.view %out[%z] : buffer -> view<192x5xi32>
  %fv = buffer.view %fout[%z] : buffer -> view<192xf32>
  %v = view.load %xv[%t] : view<192xi32> -> i32
  %s1 = kernel.subgroup.scan<addi> %v {mode = inclusive, direction = forward} : i32
  %s2 = kernel.subgroup.scan<maxsi> %v {mode = exclusive, direction = reverse} : i32
  %wr = kernel.workgroup.reduce<addi> %v : i32
  %three = scalar.constant 3 : i32
  %big = scalar.cmpi sgt, %v, %three : i32
  %cnt = kernel.workgroup.vote<count> %big : i1 -> i32
  %f = scalar.sitofp %v : i32 to f32
  %ws = kernel.workgroup.scan<addf> %f {mode = exclusive, direction = forward} : f32
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c2 = index.constant 2 : index
  %c3 = index.constant 3 : index
  %c4 = index.constant 4 : index
  view.store %s1, %ov[%t, %c0] : i32, view<192x5xi32>
  view.store %s2, %ov[%t, %c1] : i32, view<192x5xi32>
  view.store %wr, %ov[%t, %c2] : i32, view<192x5xi32>
  view.store %cnt, %ov[%t, %c3] : i32, view<192x5xi32>
  view.store %v, %ov[%t, %c4] : i32, view<192x5xi32>
  view.store %ws, %fv[%t] : f32, view<192xf32>
  kernel.return
}
"""


def test_subgroup_and_workgroup_scans_reductions_and_votes():
    x = np.random.default_rng(5).integers(-50, 50, 192).astype(np.int32)
    out = np.zeros((192, 5), np.int32)
    fout = np.zeros(192, np.float32)
    run(COLLECTIVES, "coll", [x, out, fout])
    sg = x.reshape(-1, 32)
    assert np.array_equal(out[:, 0], np.cumsum(sg, axis=1).reshape(-1))
    # exclusive, from the highest lane down: the max of the lanes above, INT32_MIN for the top lane
    rev = np.maximum.accumulate(sg[:, ::-1], axis=1)[:, ::-1]
    want = np.full_like(sg, np.iinfo(np.int32).min)
    want[:, :-1] = rev[:, 1:]
    assert np.array_equal(out[:, 1], want.reshape(-1))
    wg = x.reshape(-1, 64)
    assert np.array_equal(out[:, 2], np.repeat(wg.sum(axis=1), 64))
    assert np.array_equal(out[:, 3], np.repeat((wg > 3).sum(axis=1), 64))
    excl = np.cumsum(wg, axis=1) - wg
    assert np.array_equal(fout, excl.reshape(-1).astype(np.float32))
    assert np.signbit(fout[::64]).all()  # the first lane's exclusive float sum is the identity, -0.0


# --- kernel.exit ---------------------------------------------------------------------------------

EXIT = """
amdgpu.target<gfx1151> @gpu {subgroup_size = 32}
kernel.def target(@gpu) export("ex") @ex(%n: index) {
  %one = index.constant 1 : index
  %w = index.constant 64 : index
  %spare = index.constant 63 : index
  %r = index.add %n, %spare : index
  %g = index.div %r, %w : index
  kernel.launch.config workgroups(%g, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%n: index, %out: buffer) {
  %z = index.constant 0 : offset
  %i = kernel.workitem.dispatch.id<x> : index
  %ov = buffer.view %out[%z] : buffer -> view<[%n]xi32>
  %past = index.cmp uge, %i, %n : index
  kernel.exit %past : i1
  %three = index.constant 3 : index
  %m = index.rem %i, %three : index
  %zero = index.constant 0 : index
  %first = index.cmp eq, %m, %zero : index
  %i32 = index.cast %i : index to i32
  scf.if %first {
    %neg = scalar.negi %i32 : i32
    view.store %neg, %ov[%i] : i32, view<[%n]xi32>
    %yes = index.cmp eq, %zero, %zero : index
    kernel.exit %yes : i1
  }
  view.store %i32, %ov[%i] : i32, view<[%n]xi32>
  kernel.return
}
"""


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 40000))
def test_kernel_exit_stops_the_lanes_that_take_it(n):
    out = np.zeros(n, np.int32)
    run(EXIT, "ex", [out], struct.pack("<I", n), [n])
    i = np.arange(n, dtype=np.int32)
    # lanes past n leave before any access (no bounds error); every third lane stores -i and
    # leaves inside the if, so the store after it does not overwrite
    assert np.array_equal(out, np.where(i % 3 == 0, -i, i))


# --- masked vector memory -----------------------------------------------------------------------

MASKED = """
amdgpu.target<gfx1151> @gpu {subgroup_size = 32}
kernel.def target(@gpu) export("tail") @tail(%n: index) {
  %one = index.constant 1 : index
  %w = index.constant 32 : index
  %g = index.constant 4 : index
  kernel.launch.config workgroups(%g, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%n: index, %x: buffer, %y: buffer) {
  %z = index.constant 0 : offset
  %i = kernel.workitem.dispatch.id<x> : index
  %eight = index.constant 8 : index
  %lo = index.mul %i, %eight : index
  %xv = buffer.view %x[%z] : buffer -> view<[%n]xf32>
  %yv = buffer.view %y[%z] : buffer -> view<[%n]xf32>
  %step = index.constant 1 : index
  %mask = vector.mask.range [%lo to %n step %step] : index -> vector<8xi1>
  %pass = vector.constant -1.0 : vector<8xf32>
  %a = vector.load.mask %xv[%lo], %mask, %pass : view<[%n]xf32>, vector<8xi1>, vector<8xf32> -> vector<8xf32>
  %two = vector.constant 2.0 : vector<8xf32>
  %b = vector.mulf %a, %two : vector<8xf32>
  vector.store.mask %b, %yv[%lo], %mask : vector<8xf32>, view<[%n]xf32>, vector<8xi1>
  kernel.return
}
"""


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 1024), seed=st.integers(0, 2**32 - 1))
def test_masked_vector_loads_and_stores_touch_only_set_lanes(n, seed):
    x = np.random.default_rng(seed).standard_normal(n).astype(np.float32)
    y = np.full(n, 7.0, np.float32)
    # 128 work-items x 8 lanes cover 1,024 elements: the lanes past n are masked off and
    # would be out of bounds of the [%n] views if they touched memory
    run(MASKED, "tail", [x, y], struct.pack("<I", n), [n])
    assert np.array_equal(y, x * 2)


# --- the smaller ops: broadcast, from_elements, dotf, bitfields, buffer.length, subviews,
# --- atomic reduce, template.call --------------------------------------------------------------

ODDS = """
amdgpu.target<gfx1151> @gpu {subgroup_size = 32}
template.decl @twice(%x: i32) -> (i32)
template.def<@twice> @twice_add(%x: i32) -> (i32) {
  %r = scalar.addi %x, %x : i32
  template.return %r : i32
}
kernel.def target(@gpu) export("odds") @odds() {
  %one = index.constant 1 : index
  %w = index.constant 16 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%m: buffer, %out: buffer, %fout: buffer, %count: buffer) {
  %z = index.constant 0 : offset
  %t = kernel.workitem.id<x> : index
  %mv = buffer.view %m[%z] : buffer -> view<16x8xf32>
  %ov = buffer.view %out[%z] : buffer -> view<16x4xi32>
  %fv = buffer.view %fout[%z] : buffer -> view<16x4xf32>
  %cv = buffer.view %count[%z] : buffer -> view<2xi32>
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c2 = index.constant 2 : index
  %c3 = index.constant 3 : index
  %row = view.subview %mv[%t, %c0] : view<16x8xf32> -> view<1x8xf32>
  %a = vector.load %row[%c0, %c0] : view<1x8xf32> -> vector<8xf32>
  %half = vector.constant 0.5 : vector<8xf32>
  %init = scalar.constant 1.0 : f32
  %dot = vector.dotf %a, %half, %init : vector<8xf32>, vector<8xf32>, f32 -> f32
  view.store %dot, %fv[%t, %c0] : f32, view<16x4xf32>
  %e0 = vector.extract %a[%c0] : vector<8xf32> -> f32
  %e7 = vector.extract %a[7] : vector<8xf32> -> f32
  %pair = vector.from_elements %e7, %e0 : f32, f32 -> vector<2xf32>
  %wide = vector.broadcast %pair : vector<2xf32> -> vector<3x2xf32>
  %r2 = vector.extract %wide[%c2] : vector<3x2xf32> -> vector<2xf32>
  %p0 = vector.extract %r2[%c0] : vector<2xf32> -> f32
  %p1 = vector.extract %r2[%c1] : vector<2xf32> -> f32
  view.store %p0, %fv[%t, %c1] : f32, view<16x4xf32>
  view.store %p1, %fv[%t, %c2] : f32, view<16x4xf32>
  %t32 = index.cast %t : index to i32
  %k = scalar.constant 1000003 : i32
  %h = scalar.muli %t32, %k : i32
  %bu = scalar.bitfield.extractu %h {offset = 3, width = 5} : i32 -> i32
  %bs = scalar.bitfield.extracts %h {offset = 3, width = 5} : i32 -> i32
  view.store %bu, %ov[%t, %c0] : i32, view<16x4xi32>
  view.store %bs, %ov[%t, %c1] : i32, view<16x4xi32>
  %len = buffer.length %m : buffer -> offset
  %leni = index.cast %len : offset to i32
  view.store %leni, %ov[%t, %c2] : i32, view<16x4xi32>
  %tw = template.call @twice_add(%t32) : (i32) -> (i32)
  view.store %tw, %ov[%t, %c3] : i32, view<16x4xi32>
  %uno = scalar.constant 1 : i32
  view.atomic.reduce<add> %uno, %cv[%c0] {ordering = relaxed, scope = device} : i32, view<2xi32>
  view.atomic.reduce<maxsi> %t32, %cv[%c1] {ordering = relaxed, scope = device} : i32, view<2xi32>
  kernel.return
}
"""


def test_broadcast_from_elements_dotf_bitfields_length_subview_atomic_reduce_template_call():
    m = np.random.default_rng(9).integers(-8, 8, (16, 8)).astype(np.float32)
    out = np.zeros((16, 4), np.int32)
    fout = np.zeros((16, 4), np.float32)
    count = np.array([5, -1], np.int32)
    run(ODDS, "odds", [m, out, fout, count])
    want_dot = np.float32(1.0)
    for k in range(8):  # a chain of fmaf in lane order
        want_dot = want_dot + m[:, k] * np.float32(0.5)
    assert np.array_equal(fout[:, 0], want_dot)
    assert np.array_equal(fout[:, 1], m[:, 7]) and np.array_equal(fout[:, 2], m[:, 0])
    h = (np.arange(16, dtype=np.int64) * 1000003).astype(np.int32).view(np.uint32)
    field = (h >> 3) & 31
    assert np.array_equal(out[:, 0], field)
    assert np.array_equal(out[:, 1], np.where(field >= 16, field.astype(np.int64) - 32, field))
    assert (out[:, 2] == m.nbytes).all()
    assert np.array_equal(out[:, 3], 2 * np.arange(16))
    assert count[0] == 5 + 16 and count[1] == 15
    # the subview reads through %m's view; the masked and atomic accesses are writes and updates
    assert [f[:3] for f in info(ODDS, "odds")["footprints"]] == [(512, 1, "READ"), (256, 1, "WRITE"), (256, 1, "WRITE"),
                                                                 (8, 1, "READ_WRITE")]


# --- scf.switch -----------------------------------------------------------------------------------

SWITCH = """
amdgpu.target<gfx1151> @gpu {subgroup_size = 32}
kernel.def target(@gpu) export("sw") @sw(%n: index) {
  %one = index.constant 1 : index
  %w = index.constant 64 : index
  %spare = index.constant 63 : index
  %r = index.add %n, %spare : index
  %g = index.div %r, %w : index
  kernel.launch.config workgroups(%g, %one, %one) workgroup_size(%w, %one, %one) : index
} launch(%n: index, %mode: i32, %x: buffer, %y: buffer) {
  %z = index.constant 0 : offset
  %i = kernel.workitem.dispatch.id<x> : index
  %xv = buffer.view %x[%z] : buffer -> view<[%n]xi32>
  %yv = buffer.view %y[%z] : buffer -> view<[%n]x2xi32>
  %in = index.cmp ult, %i, %n : index
  scf.if %in {
    %v = view.load %xv[%i] : view<[%n]xi32> -> i32
    %four = scalar.constant 4 : i32
    %m = scalar.remsi %v, %four : i32
    %k = index.cast %m : i32 to index
    %a = scf.switch %k -> (i32) {
      case -3 {
        %t = scalar.constant 100 : i32
        scf.yield %t : i32
      }
      case 0 {
        %t = scalar.negi %v : i32
        scf.yield %t : i32
      }
      case 2 {
        %t = scalar.muli %v, %v : i32
        scf.yield %t : i32
      }
      default {
        scf.yield %v : i32
      }
    }
    %mk = index.cast %mode : i32 to index
    %b = scf.switch %mk -> (i32) {
      case 1 {
        %t = scalar.addi %v, %four : i32
        scf.yield %t : i32
      }
      default {
        scf.yield %four : i32
      }
    }
    %c0 = index.constant 0 : index
    %c1 = index.constant 1 : index
    view.store %a, %yv[%i, %c0] : i32, view<[%n]x2xi32>
    view.store %b, %yv[%i, %c1] : i32, view<[%n]x2xi32>
  }
  kernel.return
}
"""


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 20000), mode=st.integers(0, 2), seed=st.integers(0, 2**32 - 1))
def test_switch_runs_each_lane_case_and_merges_results(n, mode, seed):
    x = np.random.default_rng(seed).integers(-1000, 1000, n).astype(np.int32)
    y = np.zeros((n, 2), np.int32)
    run(SWITCH, "sw", [x, y], struct.pack("<Ii", n, mode), [n])
    m = np.fmod(x, 4)  # remsi truncates toward zero, as C does
    want_a = np.select([m == -3, m == 0, m == 2], [100, -x, x * x], x)
    assert np.array_equal(y[:, 0], want_a)
    assert np.array_equal(y[:, 1], x + 4 if mode == 1 else np.full(n, 4))
