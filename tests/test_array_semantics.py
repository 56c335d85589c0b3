"""Array input validation against NumPy: scalar conversion, assignment broadcasting, axes, integers beyond
int64, NEP 50 scalars, failed calls that change nothing, staying on an array's runtime, and messages that
name the public function (issue 14, item 3 and parts of item 16)."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st

import hrxarray as hx

BF16 = np.dtype(ml_dtypes.bfloat16)
INTS = [np.dtype(n) for n in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")]
DTYPES = [np.dtype(bool)] + INTS + [np.dtype(n) for n in ("float16", "float32", "float64")] + [BF16]


def outcome(fn):
    """('ok', value) or ('raise', exception type): what a call did, to compare hrxarray with NumPy."""
    try:
        return ("ok", fn())
    except (ValueError, OverflowError, TypeError, IndexError) as e:
        return ("raise", type(e))


def same_outcome(ours, numpy_):
    """Both raised the same exception type, or both gave equal arrays of one dtype."""
    assert ours[0] == numpy_[0], (ours, numpy_)
    if ours[0] == "raise":
        assert issubclass(ours[1], numpy_[1]) or issubclass(numpy_[1], ours[1]), (ours, numpy_)
    else:
        got, want = np.asarray(ours[1]), np.asarray(numpy_[1])
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


# --- Python integers convert exactly or raise ---------------------------------------------------


def test_asarray_uint64_beyond_int64_is_exact():
    x = hx.asarray([2**63 + 1, 0], dtype=hx.uint64)
    assert hx.to_numpy(x).tolist() == [2**63 + 1, 0]


@pytest.mark.parametrize("dtype", INTS, ids=str)
@given(values=st.lists(st.integers(-(2**65), 2**65), min_size=1, max_size=4))
def test_asarray_python_ints_as_numpy(dtype, values):
    same_outcome(outcome(lambda: hx.to_numpy(hx.asarray(values, dtype=dtype))),
                 outcome(lambda: np.asarray(values, dtype=dtype)))


def test_asarray_overflow_names_the_function():
    with pytest.raises(OverflowError, match=r"^asarray: Python integer 300 out of bounds for uint8"):
        hx.asarray([300, 1], dtype=hx.uint8)


# --- assignment broadcasting ---------------------------------------------------------------------

shapes = st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple)


def numpy_assign(dst_shape, src, key=Ellipsis):
    a = np.zeros(dst_shape)
    a[key] = src
    return a


@given(dst=shapes, src=shapes)
def test_setitem_from_device_array_broadcasts_as_numpy(dst, src):
    value = np.arange(1, 1 + int(np.prod(src)), dtype=np.float64).reshape(src)

    def ours():
        x = hx.zeros(dst)
        x[...] = hx.asarray(value)
        return hx.to_numpy(x)

    same_outcome(outcome(ours), outcome(lambda: numpy_assign(dst, value)))


@given(dst=shapes, src=shapes)
def test_setitem_from_host_data_and_full_broadcast_as_numpy(dst, src):
    value = np.arange(1, 1 + int(np.prod(src)), dtype=np.float64).reshape(src)

    def ours_setitem():
        x = hx.zeros(dst)
        x[...] = value.tolist()
        return hx.to_numpy(x)

    # NumPy refuses a nested list deeper than the target even where its array
    # form (extra leading length-1 axes) is accepted; hrxarray takes both alike.
    same_outcome(outcome(ours_setitem), outcome(lambda: numpy_assign(dst, value)))
    same_outcome(outcome(lambda: hx.to_numpy(hx.full(dst, hx.asarray(value)))),
                 outcome(lambda: np.full(dst, value)))


@pytest.mark.parametrize("src", [[1, 2], [1, 2, 3, 4], [[1, 2, 3], [4, 5, 6]], [[[1, 2, 3]]]])
def test_row_assignment_refuses_other_shapes(src):
    x = hx.zeros((2, 3))
    # NumPy's rule for arrays: leading length-1 axes of the source may go beyond the target's.
    want = outcome(lambda: numpy_assign((2, 3), np.asarray(src, dtype=float), 0))
    if want[0] == "ok":
        x[0] = src
        np.testing.assert_array_equal(hx.to_numpy(x), want[1])
        return
    with pytest.raises(ValueError, match=r"^x\[0\] = value: could not broadcast input array from shape"):
        x[0] = src
    np.testing.assert_array_equal(hx.to_numpy(x), np.zeros((2, 3)))


def test_full_refuses_a_narrower_array_without_reading_past_it():
    with pytest.raises(ValueError, match=r"^full: could not broadcast input array from shape \(2,\) into shape "
                                         r"\(3,\)"):
        hx.full(3, hx.ones(2))
    with pytest.raises(ValueError, match="could not broadcast"):
        hx.full(3, hx.ones((2, 3)))


# --- axes ----------------------------------------------------------------------------------------

A = np.arange(6.0).reshape(2, 3)
AXIS_CALLS = {
    "sum": (lambda m, x, ax: m.sum(x, axis=ax)),
    "prod": (lambda m, x, ax: m.prod(x, axis=ax)),
    "max": (lambda m, x, ax: m.max(x, axis=ax)),
    "min": (lambda m, x, ax: m.min(x, axis=ax)),
    "mean": (lambda m, x, ax: m.mean(x, axis=ax)),
    "any": (lambda m, x, ax: m.any(x, axis=ax)),
    "all": (lambda m, x, ax: m.all(x, axis=ax)),
    "argmax": (lambda m, x, ax: m.argmax(x, axis=ax)),
    "argmin": (lambda m, x, ax: m.argmin(x, axis=ax)),
    "transpose": (lambda m, x, ax: m.transpose(x, (0, ax))),
    "permute_dims": (lambda m, x, ax: (m.permute_dims if m is hx else np.transpose)(x, (ax, 0))),
    "squeeze": (lambda m, x, ax: m.squeeze(m.expand_dims(x, 0), ax)),
    "expand_dims": (lambda m, x, ax: m.expand_dims(x, ax)),
    "concatenate": (lambda m, x, ax: m.concatenate([x, x], ax)),
    "stack": (lambda m, x, ax: m.stack([x, x], ax)),
}


@pytest.mark.parametrize("name", sorted(AXIS_CALLS))
@pytest.mark.parametrize("axis", [-4, -3, 3, 4, 7, 2**40, -(2**63), 2**64])
def test_out_of_range_axes_raise_axis_error_naming_the_function(name, axis):
    call = AXIS_CALLS[name]
    x = hx.asarray(A)
    # NumPy raises AxisError for every axis outside its range (OverflowError beyond int64).
    if name in ("squeeze", "expand_dims", "stack") and axis in (-3, 3):
        pytest.skip("in range for the one-more-dimensional array")
    assert outcome(lambda: call(np, A, axis))[0] == "raise"
    with pytest.raises(np.exceptions.AxisError, match=rf"^{name}: axis {axis} is out of bounds for array of "
                                                      r"dimension \d"):
        call(hx, x, axis)


@pytest.mark.parametrize("name", sorted(AXIS_CALLS))
@pytest.mark.parametrize("axis", [-2, -1, 0, 1])
def test_in_range_axes_as_numpy(name, axis):
    call = AXIS_CALLS[name]
    same_outcome(outcome(lambda: hx.to_numpy(call(hx, hx.asarray(A), axis))), outcome(lambda: call(np, A, axis)))


def test_axis_error_is_value_and_index_error():
    x = hx.ones((2, 3))
    for exc in (ValueError, IndexError):
        with pytest.raises(exc):
            hx.sum(x, axis=2)


def test_duplicate_and_non_integer_axes():
    x = hx.ones((2, 3))
    with pytest.raises(ValueError, match="^sum: duplicate value in 'axis'"):
        hx.sum(x, axis=(0, -2))
    with pytest.raises(TypeError, match="^sum: axis must be an integer"):
        hx.sum(x, axis="0")
    with pytest.raises(ValueError, match="^transpose: axes"):
        hx.transpose(x, (0,))


# --- integers beyond int64 -----------------------------------------------------------------------


@given(start=st.one_of(st.none(), st.integers(-(2**65), 2**65)),
       stop=st.one_of(st.none(), st.integers(-(2**65), 2**65)),
       step=st.one_of(st.none(), st.integers(-(2**65), 2**65).filter(lambda s: s != 0)))
def test_slices_with_huge_integers_as_numpy(start, stop, step):
    a = np.arange(7.0)
    key = slice(start, stop, step)
    np.testing.assert_array_equal(hx.to_numpy(hx.asarray(a)[key]), a[key])


def test_huge_integer_arguments_name_the_argument():
    x = hx.arange(5)
    np.testing.assert_array_equal(hx.to_numpy(x[::2**62]), np.arange(5)[::2**62])
    with pytest.raises(IndexError, match=f"index {2**64} is out of bounds for axis 0 with size 5"):
        x[2**64]
    with pytest.raises(ValueError, match=rf"^zeros: shape entry {2**64} exceeds the maximum allowed dimension"):
        hx.zeros(2**64)
    with pytest.raises(ValueError, match=rf"^empty: shape entry {2**63} exceeds"):
        hx.empty((2, 2**63))
    with pytest.raises(np.exceptions.AxisError, match=rf"^sum: axis {2**64} is out of bounds"):
        hx.sum(x, axis=2**64)
    with pytest.raises(ValueError, match=r"^reshape: shape \(18446744073709551616, 0\) exceeds"):
        hx.zeros(0).reshape(2**64, 0)
    with pytest.raises(ValueError, match=rf"^zeros: shape entry {-(2**64)} is negative"):
        hx.zeros(-(2**64))
    with pytest.raises(IndexError, match=rf"^item: index {2**64} is out of bounds for size 5"):
        x.item(2**64)
    assert x.item(4) == 4 and hx.arange(6).reshape(2, 3).item(1, 2) == 5
    with pytest.raises(ValueError, match="^broadcast_to: all elements of broadcast shape must be non-negative"):
        hx.broadcast_to(x, (2**64, 5))
    with pytest.raises(OverflowError, match=rf"^full: Python integer {2**64} does not fit any hrxarray dtype"):
        hx.full(2, 2**64)
    with pytest.raises(ValueError, match=r"^arange: "):
        hx.arange(2**64)
    with pytest.raises(ValueError, match=rf"stream {2**64} is not a stream"):
        x.__dlpack__(stream=2**64)
    with pytest.raises(BufferError, match="is not a DLPack device"):
        x.__dlpack__(dl_device=(2**64, 0))


# --- NEP 50: NumPy scalars are strong ----------------------------------------------------------

NUMPY_SCALARS = [np.float64, np.float32, np.float16, ml_dtypes.bfloat16, np.int64, np.int32, np.int8,
                 np.uint64, np.uint8, np.bool_]


@pytest.mark.parametrize("array_dtype", DTYPES, ids=str)
@pytest.mark.parametrize("scalar_type", NUMPY_SCALARS, ids=lambda t: np.dtype(t).name)
def test_numpy_scalars_are_strong(array_dtype, scalar_type):
    a = np.array([1, 0, 1], dtype=array_dtype)
    s = scalar_type(1)
    want = a + s
    got = hx.asarray(a) + s
    assert got.dtype == want.dtype, (array_dtype, scalar_type)
    np.testing.assert_array_equal(hx.to_numpy(got), want)
    assert (s + hx.asarray(a)).dtype == (s + a).dtype


@pytest.mark.parametrize("value", [1, 1.5, True])
@pytest.mark.parametrize("array_dtype", [np.dtype(np.float32), BF16, np.dtype(np.int8)], ids=str)
def test_python_scalars_stay_weak(array_dtype, value):
    a = np.array([1, 0, 1], dtype=array_dtype)
    assert (hx.asarray(a) * value).dtype == (a * value).dtype


# --- float and out-of-range values written into integer arrays ----------------------------------

special_floats = st.sampled_from([float("nan"), float("inf"), -float("inf"), 1e300, -1e300, 255.9, 256.0, -0.5,
                                  -1.0, 127.5, 2.0**63, 2.0**64, -(2.0**63)])


@pytest.mark.parametrize("dtype", INTS + [np.dtype(bool)], ids=str)
@given(value=st.one_of(special_floats, st.floats(allow_nan=True, allow_infinity=True),
                       st.integers(-(2**70), 2**70)))
def test_scalar_assignment_into_integers_as_numpy(dtype, value):
    def ours():
        x = hx.zeros(2, dtype)
        x[0] = value
        return hx.to_numpy(x)

    same_outcome(outcome(ours), outcome(lambda: numpy_assign_typed(dtype, value)))


def numpy_assign_typed(dtype, value):
    a = np.zeros(2, dtype)
    a[0] = value
    return a


def test_nan_and_inf_messages():
    x = hx.zeros(3, hx.int64)
    with pytest.raises(ValueError, match=r"^x\[1\] = value: cannot convert float NaN to integer"):
        x[1] = float("nan")
    with pytest.raises(OverflowError, match="cannot convert float infinity to integer"):
        hx.full(3, float("inf"), dtype=hx.int32)
    with pytest.raises(OverflowError, match=r"^x\[...\] = value: Python integer 300 out of bounds for uint8"):
        hx.zeros(3, hx.uint8)[...] = [300, 1, 2]
    np.testing.assert_array_equal(hx.to_numpy(x), np.zeros(3))



@given(st.floats(min_value=2.0**63, max_value=1e308) | st.floats(min_value=-1e308, max_value=-(2.0**63) - 2048),
       st.sampled_from(["int32", "int64", "uint64"]))
def test_huge_floats_into_integers_name_their_exact_integer(value, dtype):
    # A Python float goes into an integer array through int(value): the message shows
    # that integer exactly (the core writes its decimal itself), as Python prints it.
    if dtype == "uint64" and 0 < value < 2.0**64:
        np.testing.assert_array_equal(hx.to_numpy(hx.full(1, value, dtype=dtype)), np.array([int(value)], np.uint64))
        return
    with pytest.raises(OverflowError) as e:
        hx.full(1, value, dtype=dtype)
    assert str(e.value) == f"full: Python integer {int(value)} out of bounds for {dtype}"


def test_numpy_scalars_assign_with_a_cast_as_numpy():
    x = hx.zeros(2, hx.uint8)
    x[0] = np.int64(300)  # NumPy casts a typed scalar (300 -> 44) instead of raising
    np.testing.assert_array_equal(hx.to_numpy(x), numpy_assign_typed(np.uint8, np.int64(300)))


# --- failed calls change nothing -----------------------------------------------------------------


def stats(rt):
    s = rt.statistics()
    return {k: getattr(s, k) for k in ("allocations", "imports", "submissions", "live_bytes", "peak_bytes")}


def test_failed_full_allocates_nothing(rt, npu):
    before = stats(rt)
    with pytest.raises(OverflowError, match="^full: Python integer 300 out of bounds for uint8"):
        hx.full(3, 300, dtype=hx.uint8, placement=hx.Shared(npu))
    with pytest.raises(ValueError, match="^full: cannot convert float NaN"):
        hx.full(3, float("nan"), dtype=hx.int8, placement=hx.Shared(npu))
    with pytest.raises(ValueError, match="^full: could not broadcast"):
        hx.full(3, [1, 2], placement=hx.Shared(npu))
    assert stats(rt) == before


def test_writes_under_a_read_lease_allocate_nothing(rt, npu):
    x = hx.asarray([1.0, 2.0, 3.0], placement=hx.Shared(npu))
    y = hx.asarray([[4.0, 5.0, 6.0]], placement=hx.Shared(npu))
    y.block_until_ready()
    view = x.__array__(copy=False)  # a read lease while it lives
    before = stats(rt)
    for value in ([4.0, 5.0, 6.0], y, y[0, ::-1], 7.0, np.float32(7.0)):
        with pytest.raises(hx.BusyError, match=r"^x\[...\] = value: "):
            x[...] = value
        assert stats(rt) == before
    with pytest.raises(hx.BusyError):
        hx.add(x, [1.0, 1.0, 1.0], out=x)
    assert stats(rt) == before
    np.testing.assert_array_equal(view, [1.0, 2.0, 3.0])
    del view
    x[...] = [4.0, 5.0, 6.0]
    np.testing.assert_array_equal(hx.to_numpy(x), [4.0, 5.0, 6.0])


def test_reads_under_a_writable_export_allocate_nothing(rt, npu):
    x = hx.asarray([[1.0, 2.0], [3.0, 4.0]], placement=hx.Shared(npu))
    x.block_until_ready()
    capsule = x.__dlpack__()  # a writable host lease until the capsule goes
    before = stats(rt)
    for call in (lambda: x + 1, lambda: hx.sum(x), lambda: hx.argmax(x), lambda: x @ x, lambda: x.astype(np.float32),
                 lambda: x.copy(), lambda: x.to(hx.HostVisible()), lambda: hx.concatenate([x, x]),
                 lambda: hx.full((2, 2), x), lambda: hx.add(x, [1.0, 2.0])):
        with pytest.raises(hx.BusyError):
            call()
        assert stats(rt) == before
    del capsule


def test_failed_operations_with_host_data_allocate_nothing(rt, npu):
    x = hx.ones(3, placement=hx.Shared(npu))
    x.block_until_ready()
    before = stats(rt)
    with pytest.raises(ValueError, match="^add: operands could not be broadcast"):
        hx.add(x, [1.0, 2.0])
    with pytest.raises(ValueError, match="^matmul: Input operand 1 has a mismatch"):
        hx.matmul(x, [[1.0, 2.0]])
    with pytest.raises(ValueError, match="^concatenate: all the input array dimensions"):
        hx.concatenate([x, [[1.0]]])
    assert stats(rt) == before


# --- moving stays on the array's runtime ----------------------------------------------------------


@pytest.mark.parametrize("target", ["GpuLocal", "HostVisible", "NpuLocal", "Shared"])
def test_to_and_astype_stay_on_the_arrays_runtime(rt, npu, target):
    from helpers import make_placement

    default = hx.default_runtime()
    y = hx.asarray([1.0, 2.0, 3.0], placement=hx.Shared(npu))  # on rt, not the default runtime
    before_default = stats(default)
    before = rt.statistics().allocations
    moved = y.to(make_placement(target, rt))
    cast = moved.astype(np.float32)
    copied = cast.copy()
    np.testing.assert_array_equal(hx.to_numpy(copied), [1.0, 2.0, 3.0])
    assert rt.statistics().allocations > before
    assert stats(default) == before_default
    assert hx.zeros_like(moved).placement == moved.placement


def test_moving_to_another_runtimes_npu_is_refused(rt, npu):
    y = hx.ones(2, placement=hx.Shared(npu))
    default = hx.default_runtime()
    before = stats(default), stats(rt)
    with pytest.raises(ValueError, match=r"^to: Shared\(npu:0\) names an NPU of another runtime"):
        y.to(hx.Shared(hx.npu()))
    with pytest.raises(ValueError, match=r"^asarray: .* names an NPU of another runtime"):
        hx.asarray(y, placement=hx.NpuLocal(hx.npu()))
    assert (stats(default), stats(rt)) == before


# --- messages name the public function and the bad argument --------------------------------------


def message(fn):
    with pytest.raises(Exception) as info:
        fn()
    return f"{type(info.value).__name__}: {info.value}"


BAD_CALLS = {
    "asarray": lambda x: hx.asarray(None),
    "to": lambda x: x.to(None),
    "sum": lambda x: hx.sum(x, keepdims="yes"),
    "mean": lambda x: hx.mean(x, dtype="nonsense"),
    "argmax": lambda x: hx.argmax(x, keepdims=2),
    "astype": lambda x: x.astype("longdouble"),
    "copy": lambda x: hx.full(2, 1.0).copy().to(3),
    "zeros": lambda x: hx.zeros("3"),
    "empty": lambda x: hx.empty((2, -1)),
    "ones": lambda x: hx.ones(2, dtype="longdouble"),
    "full": lambda x: hx.full(2, None),
    "zeros_like": lambda x: hx.zeros_like(x, placement=7),
    "concatenate": lambda x: hx.concatenate([x, None]),
    "matmul": lambda x: hx.matmul(x, x, compute=3),
    "reshape": lambda x: hx.reshape(x, "a"),
    "max": lambda x: hx.max(x, out=np.zeros(())),
    "add": lambda x: hx.add(x, "a"),
    "broadcast_to": lambda x: hx.broadcast_to(x, 2.5),
    "squeeze": lambda x: hx.squeeze(x, 0),
}


@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_errors_name_the_public_function(name):
    text = message(lambda: BAD_CALLS[name](hx.ones(3)))
    if name == "copy":
        name = "to"
    assert text.split(": ", 1)[1].startswith(f"{name}: ") or text.split(": ", 1)[1].startswith(f"{name}("), text
    for private in ("_core", "_from_host", "_reduce", "_empty", "__eq__", "incompatible function arguments",
                    "empty:" if name != "empty" else "\0", "bad_cast"):
        assert private not in text, text


def test_specific_messages():
    x = hx.ones(3)
    assert "asarray: cannot convert None" in message(lambda: hx.asarray(None))
    assert "keepdims must be a bool, got 'yes'" in message(lambda: hx.sum(x, keepdims="yes"))
    assert message(lambda: x.astype("longdouble")).startswith("TypeError: astype: dtype float128 is not supported")
    assert message(lambda: x.to(None)).startswith("TypeError: to: placement must be")
    assert hx.GpuLocal() != None  # noqa: E711 (placements compare with anything)


def test_matmul_shape_errors_show_the_shapes():
    text = message(lambda: hx.matmul(hx.ones((2, 3)), hx.ones((4, 5))))
    assert "(size 4 is different from 3)" in text and "(2, 3)" in text and "(4, 5)" in text
    text = message(lambda: hx.matmul(hx.ones((2, 2, 3)), hx.ones((3, 3, 5))))
    assert "(2, 2, 3)" in text and "(3, 3, 5)" in text


def test_truth_value_suggests_methods_that_exist():
    a = np.array([[1.0, -2.0], [0.0, 3.0]])
    x = hx.asarray(a)
    text = message(lambda: bool(x > 0))
    assert "a.any() or a.all()" in text
    for axis in (None, 0, 1, -1):
        for keepdims in (False, True):
            np.testing.assert_array_equal(hx.to_numpy((x > 0).any(axis=axis, keepdims=keepdims)),
                                          (a > 0).any(axis=axis, keepdims=keepdims))
            np.testing.assert_array_equal(hx.to_numpy((x > 0).all(axis=axis, keepdims=keepdims)),
                                          (a > 0).all(axis=axis, keepdims=keepdims))
            np.testing.assert_array_equal(hx.to_numpy(hx.any(x, axis=axis)), np.any(a, axis=axis))
    assert bool(np.all(x > -3)) is True and bool(np.any(x > 5)) is False


def test_unimplemented_numpy_functions_are_named_in_full():
    x = hx.ones(3)
    # (norm, lstsq, tensorinv, trapezoid, gradient and insert are implemented now)
    assert "numpy.unwrap for DeviceArray" in message(lambda: np.unwrap(x))
    assert "numpy.histogram2d for DeviceArray" in message(lambda: np.histogram2d(x, x))


@pytest.mark.parametrize("cls", ["Shared", "NpuLocal"])
def test_npu_placements_say_they_need_an_npu(cls):
    text = message(lambda: getattr(hx, cls)())
    assert text.startswith(f"TypeError: {cls}(npu): ") and f"hx.{cls}(hx.npu())" in text
    text = message(lambda: getattr(hx, cls)(hx.gpu()))
    assert f"hx.{cls}(hx.npu())" in text and "GpuDevice" in text


@pytest.mark.parametrize("name, call", [
    ("astype", lambda x: x.astype(np.int8)), ("to", lambda x: x.to(hx.GpuLocal())), ("copy", lambda x: x.copy())])
def test_conversions_report_their_own_name(name, call, rt, npu):
    x = hx.ones(2, placement=hx.Shared(npu))
    x.block_until_ready()
    capsule = x.__dlpack__()
    assert message(lambda: call(x)).startswith(f"BusyError: {name}: ")
    del capsule
