"""hx.loom.ufunc and hx.loom.function: Loom kernels as array functions, checked
against NumPy (broadcasting, out=, scalars, dtypes, hazards with other array
operations, failures)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import hrxarray as hx
from loom_programs import AXPY_F32, DOUBLE_I32, SCALE_F32

loom = hx.loom

finite32 = st.floats(-(2.0**100), 2.0**100, width=32)


@pytest.fixture(scope="module")
def axpy():
    return loom.ufunc(AXPY_F32, "axpy_f32")


@pytest.fixture(scope="module")
def scale():
    return loom.ufunc(SCALE_F32, "scale_f32")


def test_ufunc_protocol(axpy, scale):
    assert (axpy.nin, axpy.nout, axpy.nargs, axpy.types) == (2, 1, 3, ["ff->f"])
    assert (scale.nin, scale.nout, scale.types) == (1, 1, ["f->f"])
    assert axpy.__name__ == "axpy_f32" and "axpy_f32" in repr(axpy)
    # nin/nout given must agree with the accesses.
    assert loom.ufunc(AXPY_F32, "axpy_f32", nin=2).nout == 1
    with pytest.raises(ValueError, match="read-only"):
        loom.ufunc(AXPY_F32, "axpy_f32", nin=1, nout=2)
    with pytest.raises(ValueError):  # an NPU pipeline does not compile for the GPU
        loom.ufunc(DOUBLE_I32, "double_i32", config={"double.records": 1})


@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=5),
    alpha=finite32,
    data=st.data(),
)
@settings(max_examples=30, deadline=None)
def test_ufunc_broadcasts_like_numpy(axpy, shapes, alpha, data):
    xs = data.draw(hnp.arrays(np.float32, shapes.input_shapes[0], elements=finite32))
    ys = data.draw(hnp.arrays(np.float32, shapes.input_shapes[1], elements=finite32))
    x = hx.asarray(xs)
    with np.errstate(over="ignore"):
        want = np.float32(alpha) * xs + ys
    got = axpy(x, ys, alpha=alpha)  # a DeviceArray and a host array
    assert isinstance(got, hx.DeviceArray)
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_array_equal(hx.to_numpy(got), want)


@given(n=st.integers(1, 700), alpha=finite32)
@settings(max_examples=20, deadline=None)
def test_ufunc_out_and_scalars(axpy, n, alpha):
    xs = np.linspace(-3, 3, n, dtype=np.float32)
    out = hx.empty((n,), np.float32)
    r = axpy(xs, np.float32(1.5), out=out, alpha=alpha)
    assert r is out
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(hx.to_numpy(out), np.float32(alpha) * xs + np.float32(1.5))
    # A non-contiguous out gets the values through a temporary.
    wide = hx.zeros((n, 2), np.float32)
    axpy(xs, xs, out=(wide[:, 0],), alpha=2.0)
    got = hx.to_numpy(wide)
    np.testing.assert_array_equal(got[:, 0], np.float32(2.0) * xs + xs)
    np.testing.assert_array_equal(got[:, 1], 0)


def test_ufunc_dtypes_and_argument_errors(axpy):
    x = hx.asarray(np.arange(6, dtype=np.float64).reshape(2, 3))
    # float64 -> float32 is a same_kind cast, as NumPy's ufuncs do it.
    np.testing.assert_array_equal(hx.to_numpy(axpy(x, 1, alpha=2)), np.arange(6, dtype=np.float32).reshape(2, 3) * 2 + 1)
    # Integer and bool inputs convert to the kernel's float32 (NEP 50: Python scalars are weak).
    ints = hx.asarray(np.array([1, 2, 3], np.int64))
    np.testing.assert_array_equal(hx.to_numpy(axpy(ints, True, alpha=1.0)), np.float32([2, 3, 4]))
    with pytest.raises(TypeError, match="missing scalar 'alpha'"):
        axpy(x, x)
    with pytest.raises(TypeError, match="unknown scalar 'beta'"):
        axpy(x, x, alpha=1.0, beta=2.0)
    with pytest.raises(TypeError, match="count is the element count"):
        axpy(x, x, alpha=1.0, count=3)
    with pytest.raises(TypeError, match="takes 2 input"):
        axpy(x, alpha=1.0)
    with pytest.raises(ValueError, match="could not be broadcast"):
        axpy(x, np.ones(4, np.float32), alpha=1.0)
    with pytest.raises(ValueError, match="out has shape"):
        axpy(x, x, out=hx.empty((1, 3), np.float32), alpha=1.0)
    with pytest.raises(TypeError, match="out must be float32"):
        axpy(x, x, out=hx.empty((2, 3), np.float64), alpha=1.0)
    with pytest.raises(ValueError, match="out of range for f32"):
        axpy(x, x, alpha=1e39)


def test_ufunc_empty_operands_run_nothing(axpy):
    r = axpy(np.zeros((0, 3), np.float32), np.float32(1), alpha=1.0)
    assert r.shape == (0, 3)


def test_ufunc_is_ordered_with_other_array_operations(axpy, scale):
    """The kernel is an operation on the compute lane under the runtime's hazards."""
    n = 10_000
    x = hx.arange(n, dtype=np.float32)
    y = hx.add(x, 1.0)  # pending producer of y
    z = axpy(x, y, alpha=2.0)  # reads y after it is written
    hx.multiply(x, 0.0, out=x)  # a later write to x waits for z's read
    w = scale(z, alpha=0.5)
    xs = np.arange(n, dtype=np.float32)
    np.testing.assert_array_equal(hx.to_numpy(w), np.float32(0.5) * (np.float32(2.0) * xs + (xs + np.float32(1))))
    np.testing.assert_array_equal(hx.to_numpy(x), 0)


def test_ufunc_checked_failure_surfaces_on_the_result():
    rt = hx.Runtime(checked=True)
    scale = loom.ufunc(SCALE_F32, "scale_f32")
    x = hx.asarray(np.ones(8, np.float32), placement=hx.Shared(rt.npu()))
    y = scale(x, alpha=float("nan"))  # violates finite(%alpha)
    with pytest.raises(hx.ExecutionError):
        hx.to_numpy(y)


@given(records=st.integers(1, 8), data=st.data())
@settings(max_examples=15, deadline=None)
def test_function_runs_an_npu_pipeline(records, data):
    f = loom.function(DOUBLE_I32, "double_i32", config={"double.records": records})
    src = data.draw(hnp.arrays(np.int32, (records * 16,)))
    dst = f(hx.asarray(src))
    assert dst.dtype == np.int32 and dst.shape == (records * 16,)
    np.testing.assert_array_equal(hx.to_numpy(dst), src * np.int32(2))
    # An output given by name is written in place; host inputs are uploaded.
    out = hx.zeros((records * 16,), np.int32)
    assert f(src, dst=out) is out
    np.testing.assert_array_equal(hx.to_numpy(out), src * np.int32(2))


def test_function_argument_errors():
    f = loom.function(DOUBLE_I32, "double_i32", config={"double.records": 1})
    with pytest.raises(TypeError, match="input binding 'src' is required"):
        f()
    with pytest.raises(TypeError, match="unknown binding 'nope'"):
        f(np.zeros(16, np.int32), nope=1)
    with pytest.raises(TypeError, match="takes 2 bindings"):
        f(1, 2, 3)
    with pytest.raises(hx.ContractError):
        f(hx.zeros((4,), np.int32))  # smaller than the pipeline's footprint


def test_ufunc_in_place_out_goes_through_a_temporary(axpy):
    """out= may be an input, as in NumPy: the kernel's bindings may not overlap, so a temporary is used."""
    xs = np.linspace(-2, 2, 300, dtype=np.float32)
    ys = np.linspace(5, 1, 300, dtype=np.float32)
    x, y = hx.asarray(xs), hx.asarray(ys)
    r = axpy(x, y, out=x, alpha=3.0)
    assert r is x
    np.testing.assert_array_equal(hx.to_numpy(x), np.float32(3.0) * xs + ys)
    # A view of an input's memory as out (overlapping, not identical).
    z = hx.asarray(np.arange(8, dtype=np.float32))
    axpy(z[:4], z[4:], out=z[2:6], alpha=1.0)
    zs = np.arange(8, dtype=np.float32)
    want = zs.copy()
    want[2:6] = zs[:4] + zs[4:]
    np.testing.assert_array_equal(hx.to_numpy(z), want)


def test_ufunc_bad_scalar_queues_nothing(axpy):
    """A refused call changes nothing: the scalars are checked before any cast or copy is queued."""
    rt = hx.Runtime()
    place = hx.Shared(rt.npu())
    x = hx.asarray(np.ones((3, 4), np.float64), placement=place)  # would need a cast to float32
    y = hx.asarray(np.ones(4, np.float32), placement=place)        # would need a broadcast copy
    out = hx.zeros((3, 4), np.float32, placement=place)
    before = rt.statistics().submissions
    with pytest.raises(ValueError, match="out of range for f32"):
        axpy(x, y, out=out, alpha=1e39)
    assert rt.statistics().submissions == before
    np.testing.assert_array_equal(hx.to_numpy(out), 0)


def test_ufunc_scalars_equal_in_value_but_not_in_bits_get_their_own_kernel(scale):
    # A loaded kernel bakes its scalars in: -0.0 after 0.0 (equal as numbers) must not reuse 0.0's kernel.
    x = hx.asarray(np.array([-1.0, 1.0], np.float32))
    for alpha in (0.0, -0.0, 0.0, 2, 2.0, np.float32(-0.0)):
        got = hx.to_numpy(scale(x, alpha=alpha))
        want = np.float32(alpha) * np.array([-1.0, 1.0], np.float32)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("layout", ["direct", "strided", "cast", "broadcast", "out", "out_strided", "host"])
def test_ufunc_direct_and_general_calls_agree(axpy, layout):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((6, 8)).astype(np.float32)
    b = rng.standard_normal((6, 8)).astype(np.float32)
    want = (np.float32(1.5) * a + b).astype(np.float32)
    x, y = hx.asarray(a), hx.asarray(b)
    out = None
    if layout == "strided":
        x = hx.asarray(np.ascontiguousarray(a.T)).T  # not C-contiguous
    elif layout == "cast":
        x = hx.asarray(a.astype(np.float16))
        want = (np.float32(1.5) * a.astype(np.float16).astype(np.float32) + b).astype(np.float32)
    elif layout == "broadcast":
        y = hx.asarray(b[0])
        want = (np.float32(1.5) * a + b[0]).astype(np.float32)
    elif layout == "out":
        out = hx.empty((6, 8), dtype=np.float32)
    elif layout == "out_strided":
        out = hx.empty((8, 6), dtype=np.float32).T
    elif layout == "host":
        x = a
    got = axpy(x, y, alpha=1.5, out=out)
    assert got is out if out is not None else isinstance(got, hx.DeviceArray)
    np.testing.assert_array_equal(hx.to_numpy(got), want)


def test_launches_of_different_kernels_and_sizes_share_no_values(axpy, scale):
    # Each thread lends its last folded frame's register storage to the next (Note [Register storage across
    # launches]): kernels with other register layouts and sizes, one after another, still see only their own.
    rng = np.random.default_rng(11)
    for n in (12_288, 5, 20_000, 1, 16_384, 300):
        a = rng.standard_normal(n).astype(np.float32)
        b = rng.standard_normal(n).astype(np.float32)
        got_axpy = axpy(hx.asarray(a), hx.asarray(b), alpha=-2.0)
        got_scale = scale(hx.asarray(b), alpha=3.0)
        np.testing.assert_array_equal(hx.to_numpy(got_axpy), np.float32(-2.0) * a + b)
        np.testing.assert_array_equal(hx.to_numpy(got_scale), np.float32(3.0) * b)


# out = x + y and x - y: a kernel with two outputs.
SUMDIFF_F32 = """\
amdgpu.target<gfx1151> @gpu {subgroup_size = 32}
kernel.def target(@gpu) export("sumdiff_f32") @sumdiff_f32(%count: index) {
  %one = index.constant 1 : index
  %width = index.constant 256 : index
  %spare = index.constant 255 : index
  %n = index.assume %count [range(%count, 1, 1073741824)] : index
  %padded = index.add %n, %spare : index
  %groups = index.div %padded, %width : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%width, %one, %one) : index
} launch(%count: index, %x: buffer, %y: buffer, %s: buffer, %d: buffer) {
  %origin = index.constant 0 : offset
  %i = kernel.workitem.dispatch.id<x> : index
  %xs = buffer.view %x[%origin] : buffer -> view<[%count]xf32>
  %ys = buffer.view %y[%origin] : buffer -> view<[%count]xf32>
  %ss = buffer.view %s[%origin] : buffer -> view<[%count]xf32>
  %ds = buffer.view %d[%origin] : buffer -> view<[%count]xf32>
  %inside = index.cmp ult, %i, %count : index
  scf.if %inside {
    %a = view.load %xs[%i] : view<[%count]xf32> -> f32
    %b = view.load %ys[%i] : view<[%count]xf32> -> f32
    %p = scalar.addf %a, %b : f32
    %m = scalar.subf %a, %b : f32
    view.store %p, %ss[%i] : f32, view<[%count]xf32>
    view.store %m, %ds[%i] : f32, view<[%count]xf32>
  }
  kernel.return
}
"""


def test_ufunc_is_an_hx_ufunc(axpy):
    assert isinstance(axpy, hx.ufunc) and isinstance(axpy, loom.ufunc)
    assert "__call__" not in vars(loom.ufunc)  # no Python layer between the call and the core
    assert (axpy.ntypes, axpy.identity, axpy.scalars) == (1, None, ["alpha"])
    with pytest.raises(TypeError, match="no reduce"):
        axpy.reduce(hx.ones((3,), np.float32))


def test_ufunc_weak_python_scalars_convert_to_the_kernels_type(axpy):
    """NEP 50 with one loop: a Python float goes to float32 directly, not through the array's float16 first."""
    xs = np.array([1, 2, 3], np.float16)
    got = hx.to_numpy(axpy(hx.asarray(xs), 0.1, alpha=1.0))
    np.testing.assert_array_equal(got, xs.astype(np.float32) + np.float32(0.1))
    assert np.float32(np.float16(0.1)) != np.float32(0.1)  # the two routes differ: the test can fail
    # A NumPy scalar is strong: its own dtype, then the kernel's.
    got = hx.to_numpy(axpy(hx.asarray(xs), np.float16(0.1), alpha=1.0))
    np.testing.assert_array_equal(got, xs.astype(np.float32) + np.float32(np.float16(0.1)))
    with pytest.raises(TypeError, match="cannot cast input 1 from complex128 to float32"):
        axpy(hx.asarray(xs), 1j, alpha=1.0)


def test_ufunc_identical_in_place_and_positional_out(axpy):
    xs = np.arange(1000, dtype=np.float32)
    x = hx.asarray(xs)
    y = hx.asarray(np.full(1000, 0.5, np.float32))
    assert axpy(x, y, x, alpha=2.0) is x  # out positionally, identical to an input
    np.testing.assert_array_equal(hx.to_numpy(x), np.float32(2.0) * xs + np.float32(0.5))
    with pytest.raises(TypeError, match="out both positionally and as a keyword"):
        axpy(x, y, x, out=x, alpha=2.0)


def test_ufunc_dtype_and_where(axpy):
    x = hx.asarray(np.ones(4, np.float32))
    np.testing.assert_array_equal(hx.to_numpy(axpy(x, x, dtype=np.float32, alpha=1.0)), 2)
    out = hx.zeros((4,), np.float32)
    before = hx.to_numpy(out)
    with pytest.raises(TypeError, match="No loop matching"):
        axpy(x, x, out=out, dtype=np.float64, alpha=1.0)
    with pytest.raises(TypeError, match="where= is not supported"):
        axpy(x, x, out=out, where=np.array([True, False, True, False]), alpha=1.0)
    np.testing.assert_array_equal(hx.to_numpy(out), before)  # refused calls changed nothing
    np.testing.assert_array_equal(hx.to_numpy(axpy(x, x, where=True, alpha=1.0)), 2)


def test_ufunc_with_two_outputs():
    sd = loom.ufunc(SUMDIFF_F32, "sumdiff_f32")
    assert (sd.nin, sd.nout, sd.types) == (2, 2, ["ff->ff"])
    a = np.linspace(-4, 4, 300, dtype=np.float32).reshape(3, 100)
    b = np.linspace(1, 2, 100, dtype=np.float32)
    s, d = sd(hx.asarray(a), b)  # broadcast
    np.testing.assert_array_equal(hx.to_numpy(s), a + b)
    np.testing.assert_array_equal(hx.to_numpy(d), a - b)
    # out= a tuple, one of them an input (through a temporary), one strided.
    x = hx.asarray(a)
    wide = hx.zeros((3, 200), np.float32)
    r = sd(x, b, out=(x, wide[:, ::2]))
    assert r[0] is x
    np.testing.assert_array_equal(hx.to_numpy(x), a + b)
    np.testing.assert_array_equal(hx.to_numpy(wide)[:, ::2], a - b)
    np.testing.assert_array_equal(hx.to_numpy(wide)[:, 1::2], 0)
    with pytest.raises(ValueError, match="out must hold 2 array"):
        sd(x, b, out=x)


def test_ufunc_repeated_sizes_reuse_their_launch(scale):
    """Sizes and scalars alternate: each call runs with its own count and constants, cached or not."""
    rng = np.random.default_rng(3)
    for n, alpha in [(5, 2.0), (700, 2.0), (5, -1.0), (700, 2.0), (5, 2.0), (1, 0.5)] * 2:
        xs = rng.standard_normal(n).astype(np.float32)
        np.testing.assert_array_equal(hx.to_numpy(scale(hx.asarray(xs), alpha=alpha)), np.float32(alpha) * xs)


def test_function_launches_are_provider_dispatches_that_faults_and_traces_see():
    """hx.loom.function runs its kernel as a dispatch on the NPU lane's provider queue (issue 26), as a
    graph's kernel entry is: an injected fault fails that launch, naming the operation, and poisons the
    storage it used (a device fault: test_failure.py); the trace shows the kernel on the npu lane."""
    rt = hx.Runtime()
    f = loom.function(DOUBLE_I32, "double_i32", config={"double.records": 1})
    src = np.arange(16, dtype=np.int32)
    x = hx.asarray(src, placement=hx.Shared(rt.npu()))
    np.testing.assert_array_equal(hx.to_numpy(f(x)), src * 2)
    (kernel,) = f._kernels.values()
    kernel._inject_fault("ECC error on the emulated NPU")
    bad = f(x)
    with pytest.raises(hx.ExecutionError, match="double_i32.*ECC error on the emulated NPU"):
        hx.to_numpy(bad)
    with pytest.raises(hx.DeviceLostError, match="poisoned"):
        f(x)
    rt.start_trace(8)
    good = f(hx.asarray(src, placement=hx.Shared(rt.npu())))
    np.testing.assert_array_equal(hx.to_numpy(good), src * 2)
    events = rt.finish_trace().events
    assert [(e["lane"], e["op"]) for e in events] == [("npu", f"npu({kernel.name})")]


def test_ufunc_calls_whose_operands_bind_as_they_are_are_dispatches(axpy):
    """Note [Loom ufunc launches]: operands that bind as they are make one dispatch of the kernel on the
    compute lane's queue (traced as the GPU kernel, like a graph entry); staged operands (a cast here)
    make one staged-invoke dispatch that stages around the invocation. Both give NumPy's result."""
    rt = hx.default_runtime()
    xs = np.linspace(-1, 1, 64, dtype=np.float32)
    ys = np.linspace(3, 2, 64, dtype=np.float32)
    x, y = hx.asarray(xs), hx.asarray(ys)
    hx.to_numpy(x), hx.to_numpy(y)  # uploads done before tracing
    rt.start_trace(16)
    direct = axpy(x, y, alpha=2.0)
    staged = axpy(x, hx.asarray(ys.astype(np.float64)), alpha=2.0)
    np.testing.assert_array_equal(hx.to_numpy(direct), hx.to_numpy(staged))
    np.testing.assert_allclose(hx.to_numpy(direct), np.float32(2) * xs + ys, rtol=1e-6)
    ops = [e["op"] for e in rt.finish_trace().events if e["lane"] == "compute"]
    assert "gpu(axpy_f32)" in ops and "axpy_f32" in ops


def test_an_injected_fault_reaches_a_staged_ufunc_call(axpy):
    """Issue 26 item 1: a staged call (a float64 operand cast to the kernel's float32) is a dispatch
    (provider::StagedInvokeOp) that Runtime._inject_fault reaches by the kernel's symbol: the call's
    result fails naming it, its operands are poisoned, and a later call works."""
    rt = hx.Runtime()
    place = hx.Shared(rt.npu())
    xs = np.linspace(-1, 1, 16, dtype=np.float32)
    x, y64 = hx.asarray(xs, placement=place), hx.asarray(xs.astype(np.float64) + 1, placement=place)
    hx.to_numpy(x), hx.to_numpy(y64)
    rt._inject_fault("ECC error on the emulated GPU", "axpy_f32")
    bad = axpy(x, y64, alpha=2.0)
    with pytest.raises(hx.ExecutionError, match="injected fault in axpy_f32: ECC error"):
        hx.to_numpy(bad)
    with pytest.raises(hx.DeviceLostError, match="poisoned"):
        hx.to_numpy(y64)
    good = axpy(hx.asarray(xs, placement=place), hx.asarray(xs.astype(np.float64), placement=place), alpha=2.0)
    np.testing.assert_allclose(hx.to_numpy(good), np.float32(2) * xs + xs, rtol=1e-6)


def test_a_refused_function_call_allocates_and_uploads_nothing():
    """Every check of hx.loom.function runs before any upload, copy or allocation (array/kernel_call.h):
    a refused call leaves the runtime's allocation statistics as they were."""
    rt = hx.Runtime()
    f = loom.function(DOUBLE_I32, "double_i32", config={"double.records": 1})
    small = hx.asarray(np.zeros(4, np.int32), placement=hx.Shared(rt.npu()))
    big = hx.zeros((32,), np.int32, placement=hx.Shared(rt.npu()))
    before = rt.statistics()
    with pytest.raises(hx.ContractError, match="binding 0"):
        f(small)  # smaller than the pipeline's footprint; dst would be allocated
    with pytest.raises(hx.ContractError, match="binding 0"):
        f(np.zeros(4, np.int32))  # host data too small: not uploaded
    with pytest.raises(TypeError, match="output binding 'dst' must be a DeviceArray"):
        f(np.zeros(16, np.int32), dst=np.zeros(16, np.int32))
    with pytest.raises(ValueError, match="output binding 'dst' must be C-contiguous"):
        f(np.zeros(16, np.int32), dst=big[::2])
    after = rt.statistics()
    assert (after.allocations, after.peak_bytes, after.live_bytes) == (
        before.allocations, before.peak_bytes, before.live_bytes)


def _sum_kernel(k: int) -> str:
    """out = x0 + x1 + ... + x{k-1} over float32, k inputs (left to right, as NumPy's chain of adds)."""
    ins = ", ".join(f"%x{i}: buffer" for i in range(k))
    body = []
    for i in range(k):
        body.append(f"    %v{i} = buffer.view %x{i}[%origin] : buffer -> view<[%count]xf32>")
        body.append(f"    %a{i} = view.load %v{i}[%i] : view<[%count]xf32> -> f32")
    acc = "%a0"
    for i in range(1, k):
        body.append(f"    %s{i} = scalar.addf {acc}, %a{i} : f32")
        acc = f"%s{i}"
    return f"""amdgpu.target<gfx1151> @gpu {{subgroup_size = 32}}
kernel.def target(@gpu) export("sum{k}") @sum{k}(%count: index) {{
  %one = index.constant 1 : index
  %width = index.constant 64 : index
  %spare = index.constant 63 : index
  %n = index.assume %count [range(%count, 1, 1073741824)] : index
  %padded = index.add %n, %spare : index
  %groups = index.div %padded, %width : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%width, %one, %one) : index
}} launch(%count: index, {ins}, %out: buffer) {{
  %origin = index.constant 0 : offset
  %i = kernel.workitem.dispatch.id<x> : index
  %os = buffer.view %out[%origin] : buffer -> view<[%count]xf32>
  %inside = index.cmp ult, %i, %count : index
  scf.if %inside {{
{chr(10).join(body)}
    view.store {acc}, %os[%i] : f32, view<[%count]xf32>
  }}
  kernel.return
}}
"""


@pytest.mark.parametrize("k", [5, 9])
def test_ufunc_with_many_inputs(k):
    # More operands than the call path keeps in fixed storage (4 inputs, 8 bindings): direct,
    # broadcast (staged) and host inputs, sizes on both sides of a chunk.
    f = loom.ufunc(_sum_kernel(k), f"sum{k}")
    assert (f.nin, f.nout) == (k, 1)
    rng = np.random.default_rng(k)
    for n in (1, 100, 5000):
        xs = [rng.standard_normal(n).astype(np.float32) for _ in range(k)]
        args = [hx.asarray(x) for x in xs]
        args[1] = xs[1]  # a host array
        xs[2] = xs[2][:1]  # broadcast from one element
        args[2] = hx.asarray(xs[2])
        want = xs[0] + xs[1]
        for x in xs[2:]:
            want = want + x
        np.testing.assert_array_equal(hx.to_numpy(f(*args)), want)
        out = hx.empty((n,), np.float32)
        assert f(*[hx.asarray(np.broadcast_to(x, (n,)).copy()) for x in xs], out=out) is out
        np.testing.assert_array_equal(hx.to_numpy(out), want)
