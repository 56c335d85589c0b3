"""NPU pipelines beyond read/scatter/stage/write (issue 25 item 1): ``pipeline.fold<kind>``
(each lane's records combined into one), ``pipeline.reduce`` (every source lane's record r gathered
into one firing of the target stage) and ``pipeline.buffer ... capacity``. The pipelines are written
for these tests and checked against NumPy / plain Python."""

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hrxarray as hx
from hrxarray import _core

NPU = "amd.xdna.strix_halo.17f0_11"


def run(src, symbol, bindings, *, config=None):
    """Runs the pipeline over uint8 views of `bindings` (modified in place)."""
    views = [b.view(np.uint8).reshape(-1) for b in bindings]
    return _core.loom._run_program(src, symbol, NPU, {k: str(v) for k, v in (config or {}).items()},
                                   views, b"", None, False, [])


# --- split-K matmul: four lanes make partial products, one reduce sums them with a bias ----------

SPLITK = """
aie2p.target<array> @arr
aie2p.target<core> @core
config.decl @splitk.batch : %value: index where [range(%value, 1, 64)]
pipeline.def<kernel> public target(@arr) @splitk() launch(%a: buffer, %b: buffer, %bias: buffer, %c: buffer) {
  %n = config.get @splitk.batch : index
  %four = index.constant 4 : index
  %one = index.constant 1 : index
  %z = index.constant 0 : offset
  %prods = group.create %four : index -> group
  %red = group.create %one : index -> group
  %av = buffer.view %a[%z] : buffer -> view<4x[%n]x32xf32>
  %bv = buffer.view %b[%z] : buffer -> view<4x[%n]x64xf32>
  %biasv = buffer.view %bias[%z] : buffer -> view<[%n]x32xf32>
  %cv = buffer.view %c[%z] : buffer -> view<[%n]x32xf32>
  %af = pipeline.scatter %av across %prods : view<4x[%n]x32xf32>, group -> pipeline.flow<tile<32xf32>>
  %bf = pipeline.scatter %bv across %prods : view<4x[%n]x64xf32>, group -> pipeline.flow<tile<64xf32>>
  %parts = pipeline.stage @partial on %prods(%af, %bf) : (group, pipeline.flow<tile<32xf32>>, pipeline.flow<tile<64xf32>>) -> (pipeline.flow<tile<32xf32>>)
  %cap = index.constant 2 : index
  %held = pipeline.buffer %parts capacity %cap : (pipeline.flow<tile<32xf32>>, index) -> pipeline.flow<tile<32xf32>>
  %biasf = pipeline.read %biasv on %red : view<[%n]x32xf32>, group -> pipeline.flow<tile<32xf32>>
  %cf = pipeline.reduce @sum from %prods(%held) to %red(%biasf) : (group, pipeline.flow<tile<32xf32>>) to (group, pipeline.flow<tile<32xf32>>) -> (pipeline.flow<tile<32xf32>>)
  pipeline.write %cf to %cv : pipeline.flow<tile<32xf32>>, view<[%n]x32xf32>
  pipeline.return
}
func.def target(@core) @partial(%a: buffer, %b: buffer, %o: buffer) {
  %z = index.constant 0 : offset
  %av = buffer.view %a[%z] : buffer -> view<4x8xf32>
  %bv = buffer.view %b[%z] : buffer -> view<8x8xf32>
  %ov = buffer.view %o[%z] : buffer -> view<4x8xf32>
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c4 = index.constant 4 : index
  %c8 = index.constant 8 : index
  %zero = scalar.constant 0.0 : f32
  scf.for %i = [%c0 to %c4 step %c1] {
    scf.for %j = [%c0 to %c8 step %c1] {
      %acc = scf.for %k = [%c0 to %c8 step %c1] (%s = %zero : f32) -> (f32) {
        %x = view.load %av[%i, %k] : view<4x8xf32> -> f32
        %y = view.load %bv[%k, %j] : view<8x8xf32> -> f32
        %s2 = scalar.fmaf %x, %y, %s : f32
        scf.yield %s2 : f32
      }
      view.store %acc, %ov[%i, %j] : f32, view<4x8xf32>
    }
  }
  func.return
}
func.def target(@core) @sum(%p0: buffer, %p1: buffer, %p2: buffer, %p3: buffer, %bias: buffer, %o: buffer) {
  %z = index.constant 0 : offset
  %v0 = buffer.view %p0[%z] : buffer -> view<32xf32>
  %v1 = buffer.view %p1[%z] : buffer -> view<32xf32>
  %v2 = buffer.view %p2[%z] : buffer -> view<32xf32>
  %v3 = buffer.view %p3[%z] : buffer -> view<32xf32>
  %vb = buffer.view %bias[%z] : buffer -> view<32xf32>
  %vo = buffer.view %o[%z] : buffer -> view<32xf32>
  %x0 = vector.load %v0[0] : view<32xf32> -> vector<32xf32>
  %x1 = vector.load %v1[0] : view<32xf32> -> vector<32xf32>
  %x2 = vector.load %v2[0] : view<32xf32> -> vector<32xf32>
  %x3 = vector.load %v3[0] : view<32xf32> -> vector<32xf32>
  %xb = vector.load %vb[0] : view<32xf32> -> vector<32xf32>
  %s01 = vector.addf %x0, %x1 : vector<32xf32>
  %s012 = vector.addf %s01, %x2 : vector<32xf32>
  %s = vector.addf %s012, %x3 : vector<32xf32>
  %r = vector.addf %s, %xb : vector<32xf32>
  vector.store %r, %vo[0] : vector<32xf32>, view<32xf32>
  func.return
}
"""


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 5), seed=st.integers(0, 2**32 - 1))
def test_split_k_matmul_with_reduce_matches_numpy(batch, seed):
    # Small integers: every partial sum is exact in f32, so the order of the adds cannot matter.
    rng = np.random.default_rng(seed)
    a = rng.integers(-8, 9, (batch, 4, 32)).astype(np.float32)   # batch x M x K
    b = rng.integers(-8, 9, (batch, 32, 8)).astype(np.float32)   # batch x K x N
    bias = rng.integers(-8, 9, (batch, 4, 8)).astype(np.float32)
    # Lane s holds the K chunk [8s, 8s + 8): A's columns and B's rows.
    a_lanes = np.ascontiguousarray(a.reshape(batch, 4, 4, 8).transpose(2, 0, 1, 3)).reshape(4, batch, 32)
    b_lanes = np.ascontiguousarray(b.reshape(batch, 4, 8, 8).transpose(1, 0, 2, 3)).reshape(4, batch, 64)
    c = np.zeros((batch, 32), np.float32)
    run(SPLITK, "splitk", [a_lanes, b_lanes, bias.reshape(batch, 32), c], config={"splitk.batch": batch})
    assert np.array_equal(c.reshape(batch, 4, 8), a @ b + bias)


def test_split_k_runs_through_the_public_function_api():
    rng = np.random.default_rng(3)
    a = rng.integers(-8, 9, (1, 4, 32)).astype(np.float32)
    b = rng.integers(-8, 9, (1, 32, 8)).astype(np.float32)
    bias = np.zeros((1, 32), np.float32)
    a_lanes = np.ascontiguousarray(a.reshape(1, 4, 4, 8).transpose(2, 0, 1, 3)).reshape(4, 1, 32)
    b_lanes = np.ascontiguousarray(b.reshape(1, 4, 8, 8).transpose(1, 0, 2, 3)).reshape(4, 1, 64)
    f = hx.loom.function(SPLITK, "splitk", config={"splitk.batch": 1})
    c = f(a_lanes.reshape(-1), b_lanes.reshape(-1), bias.reshape(-1))
    assert np.array_equal(np.asarray(c).reshape(4, 8), (a @ b)[0])


# --- fold: each of two lanes sums (or maxes, ...) its records ------------------------------------

FOLD = """
aie2p.target<array> @arr
config.decl @fold.records : %value: index where [range(%value, 1, 512)]
pipeline.def<kernel> public target(@arr) @fold() launch(%a: buffer, %out: buffer) {
  %n = config.get @fold.records : index
  %two = index.constant 2 : index
  %z = index.constant 0 : offset
  %grp = group.create %two : index -> group
  %av = buffer.view %a[%z] : buffer -> view<2x[%n]x16xELEM>
  %ov = buffer.view %out[%z] : buffer -> view<2x16xELEM>
  %f = pipeline.scatter %av across %grp : view<2x[%n]x16xELEM>, group -> pipeline.flow<tile<16xELEM>>
  %s = pipeline.fold<KIND> %f : pipeline.flow<tile<16xELEM>>
  pipeline.write %s to %ov : pipeline.flow<tile<16xELEM>>, view<2x16xELEM>
  pipeline.return
}
"""


def fold_program(kind, elem):
    return FOLD.replace("KIND", kind).replace("ELEM", elem)


INT_FOLDS = {
    "addi": lambda x, y: x + y, "muli": lambda x, y: x * y, "maxsi": np.maximum, "minsi": np.minimum,
    "xori": np.bitwise_xor, "andi": np.bitwise_and, "ori": np.bitwise_or,
    "maxui": lambda x, y: np.maximum(x.view(np.uint32), y.view(np.uint32)).view(np.int32),
    "minui": lambda x, y: np.minimum(x.view(np.uint32), y.view(np.uint32)).view(np.int32),
}


@pytest.mark.parametrize("kind", sorted(INT_FOLDS))
@settings(max_examples=3, deadline=None)
@given(records=st.integers(1, 40), seed=st.integers(0, 2**32 - 1))
def test_integer_fold_matches_a_sequential_reduce(kind, records, seed):
    a = np.random.default_rng(seed).integers(-2**31, 2**31, (2, records, 16), dtype=np.int64).astype(np.int32)
    out = np.zeros((2, 16), np.int32)
    run(fold_program(kind, "i32"), "fold", [a, out], config={"fold.records": records})
    with np.errstate(over="ignore"):
        want = np.stack([functools.reduce(INT_FOLDS[kind], list(a[lane])) for lane in range(2)])
    assert np.array_equal(out, want)


@pytest.mark.parametrize("kind,fn", [("addf", np.add), ("mulf", np.multiply), ("maximumf", np.maximum),
                                     ("minnumf", np.fmin)])
@settings(max_examples=3, deadline=None)
@given(records=st.integers(1, 40), seed=st.integers(0, 2**32 - 1))
def test_float_fold_rounds_each_step_in_record_order(kind, fn, records, seed):
    a = np.random.default_rng(seed).standard_normal((2, records, 16)).astype(np.float32)
    a[0, 0, 3] = np.nan  # maximumf propagates it, minnumf skips it
    out = np.zeros((2, 16), np.float32)
    run(fold_program(kind, "f32"), "fold", [a, out], config={"fold.records": records})
    with np.errstate(over="ignore", invalid="ignore"):
        want = np.stack([functools.reduce(fn, list(a[lane])) for lane in range(2)])  # f32 at every step
    assert np.array_equal(out, want, equal_nan=True)


def test_bf16_fold_rounds_to_bf16_at_every_step():
    import ml_dtypes
    bf16 = ml_dtypes.bfloat16
    a = np.random.default_rng(5).standard_normal((2, 30, 16)).astype(bf16)
    out = np.zeros((2, 16), bf16)
    run(fold_program("addf", "bf16"), "fold", [a, out], config={"fold.records": 30})
    want = np.stack([functools.reduce(lambda x, y: (x.astype(np.float32) + y.astype(np.float32)).astype(bf16),
                                      list(a[lane])) for lane in range(2)])
    assert np.array_equal(out.view(np.uint16), want.view(np.uint16))


# --- errors -----------------------------------------------------------------------------------------

def test_fold_needs_a_combining_kind():
    with pytest.raises(hx.loom.LoomError, match=r"pipeline.fold' needs a combining kind.*got 'plus'"):
        hx.loom.compile(fold_program("plus", "i32"), "fold", target="xdna", config={"fold.records": 2})


def test_buffer_capacity_must_be_positive():
    src = SPLITK.replace("%cap = index.constant 2", "%cap = index.constant 0")
    a = np.zeros((4, 1, 32), np.float32)
    b = np.zeros((4, 1, 64), np.float32)
    with pytest.raises(hx.ExecutionError, match=r"capacity of at least one record, got 0"):
        run(src, "splitk", [a, b, np.zeros((1, 32), np.float32), np.zeros((1, 32), np.float32)],
            config={"splitk.batch": 1})


def test_reduce_callee_must_take_a_buffer_per_source_lane():
    # Three source lanes' worth of buffers for a four-lane source group.
    src = SPLITK.replace("%p3: buffer, ", "").replace("%v3 = buffer.view %p3[%z] : buffer -> view<32xf32>\n", "") \
        .replace("%x3 = vector.load %v3[0] : view<32xf32> -> vector<32xf32>\n", "") \
        .replace("%s = vector.addf %s012, %x3", "%s = vector.addf %s012, %s012")
    a = np.zeros((4, 1, 32), np.float32)
    b = np.zeros((4, 1, 64), np.float32)
    with pytest.raises(hx.ExecutionError, match=r"@sum takes 5 buffers, the reduce passes 6"):
        run(src, "splitk", [a, b, np.zeros((1, 32), np.float32), np.zeros((1, 32), np.float32)],
            config={"splitk.batch": 1})


def test_reduce_names_a_function():
    src = SPLITK.replace("pipeline.reduce @sum", "pipeline.reduce @nosuch")
    with pytest.raises(hx.loom.LoomError, match=r"'pipeline.reduce' names '@nosuch', which is not a function"):
        hx.loom.compile(src, "splitk", target="xdna", config={"splitk.batch": 1})


def test_fold_with_fastmath_flags_runs_in_record_order():
    a = np.random.default_rng(9).standard_normal((2, 7, 16)).astype(np.float32)
    out = np.zeros((2, 16), np.float32)
    run(fold_program("addf, reassoc", "f32"), "fold", [a, out], config={"fold.records": 7})
    want = np.stack([functools.reduce(np.add, list(a[lane])) for lane in range(2)])
    assert np.array_equal(out, want)  # record order is one order reassoc permits


def test_fold_kind_must_match_the_element_type():
    with pytest.raises(hx.loom.LoomError, match=r"'pipeline.fold<addf>' combines floats, not the i32 records"):
        hx.loom.compile(fold_program("addf", "i32"), "fold", target="xdna", config={"fold.records": 2})
