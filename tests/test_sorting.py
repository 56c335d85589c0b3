"""hx.sort / hx.argsort against NumPy: every dtype, any axis, NaN, -0.0, inf, duplicates, both directions."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import hrxarray as hx

DTYPES = [np.dtype(t) for t in (bool, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                np.uint64, np.float16, ml_dtypes.bfloat16, np.float32, np.float64)]
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.5]


def _data(draw_from, dtype, shape):
    """Values with many duplicates and, for floats, NaN/-0.0/inf (NumPy draws them as float64 first)."""
    if dtype.kind == "b":
        return draw_from.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        pool = np.array([info.min, info.max, 0, 1, 2, 3, info.max // 2], dtype=dtype)
        return np.where(draw_from.random(shape) < 0.3, pool[draw_from.integers(0, len(pool), shape)],
                        draw_from.integers(info.min, info.max, shape, dtype=dtype, endpoint=True))
    if dtype.kind == "c":  # NumPy's complex order: NaN, +-0.0 and inf in either part, ties in each
        out = np.empty(shape, dtype)
        out.real = _data(draw_from, np.dtype(np.float64), shape)
        out.imag = _data(draw_from, np.dtype(np.float64), shape)
        return out
    vals = np.where(draw_from.random(shape) < 0.4, np.array(SPECIAL)[draw_from.integers(0, len(SPECIAL), shape)],
                    np.round(draw_from.standard_normal(shape) * 4))
    return vals.astype(dtype)


def _reference_argsort(a, axis, descending):
    """The array API's reference: flip, stable argsort, flip back (array_api_strict's construction)."""
    a = a.astype(np.float32) if a.dtype == ml_dtypes.bfloat16 else a
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    n = a.shape[axis]
    return np.flip(n - 1 - np.argsort(np.flip(a, axis=axis), axis=axis, kind="stable"), axis=axis)


def _same_values(got, want):
    """Equal as floats (NaN == NaN, -0.0 == 0.0), dtype included; complex bit for bit (which part is NaN)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind == "c":
        part = np.uint32 if got.dtype == np.complex64 else np.uint64
        np.testing.assert_array_equal(np.ascontiguousarray(got).view(part), np.ascontiguousarray(want).view(part))
        return
    g = got.astype(np.float64) if got.dtype.kind == "f" or got.dtype == ml_dtypes.bfloat16 else got
    w = want.astype(np.float64) if want.dtype.kind == "f" or want.dtype == ml_dtypes.bfloat16 else want
    np.testing.assert_array_equal(g, w)


@given(dtype=st.sampled_from(DTYPES + [np.dtype(np.complex64), np.dtype(np.complex128)]),
       shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=9),
       seed=st.integers(0, 2**32 - 1), data=st.data(), descending=st.booleans())
def test_sort_and_argsort_match_numpy(dtype, shape, seed, data, descending):
    a = _data(np.random.default_rng(seed), dtype, shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = hx.asarray(a)
    idx = hx.to_numpy(hx.argsort(x, axis=axis, descending=descending))
    want_idx = _reference_argsort(a, axis, descending)
    assert idx.dtype == np.int64
    np.testing.assert_array_equal(idx, want_idx)
    got = hx.to_numpy(hx.sort(x, axis=axis, descending=descending))
    _same_values(got, np.take_along_axis(a, want_idx, axis=axis))


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.int32, np.uint8])
@pytest.mark.parametrize("n", [300, 70_000, 300_000])
def test_long_rows_use_the_radix_path_and_stay_stable(dtype, n):
    # Long rows take the (parallel) radix sort; duplicates everywhere test stability.
    a = _data(np.random.default_rng(n), np.dtype(dtype), (n,))
    x = hx.asarray(a)
    np.testing.assert_array_equal(hx.to_numpy(hx.argsort(x)), _reference_argsort(a, 0, False))
    np.testing.assert_array_equal(hx.to_numpy(hx.argsort(x, descending=True)), _reference_argsort(a, 0, True))
    # kind="stable": NumPy 2.4's default float16 sort (x86-simd-sort with AVX-512) returns unsorted
    # output for some inputs of this size on Zen 4 hosts (two inversions in 65535 elements).
    _same_values(hx.to_numpy(hx.sort(x)), a[np.argsort(a.astype(np.float32) if dtype == ml_dtypes.bfloat16 else a,
                                                      kind="stable")])


def test_nan_payloads_and_signed_zeros_keep_their_bits_in_input_order():
    bits = np.array([0x7FC00001, 0x00000000, 0xFFC00002, 0x80000000, 0x3F800000, 0x7F800000], dtype=np.uint32)
    a = np.tile(bits, 100).view(np.float32)
    got = hx.to_numpy(hx.sort(hx.asarray(a))).view(np.uint32)
    want = a[np.argsort(a, kind="stable")].view(np.uint32)
    np.testing.assert_array_equal(got, want)


def test_axis_none_kind_and_numpy_spelling():
    a = np.array([[3, 1], [2, 0]], dtype=np.int16)
    x = hx.asarray(a)
    np.testing.assert_array_equal(hx.to_numpy(hx.sort(x, None)), np.sort(a, None))
    np.testing.assert_array_equal(hx.to_numpy(hx.sort(x, 0, "mergesort")), np.sort(a, 0, "mergesort"))
    np.testing.assert_array_equal(hx.to_numpy(hx.argsort(x, axis=None)), np.argsort(a, axis=None, kind="stable"))


def test_strided_input_and_other_placements(rt):
    a = np.random.default_rng(1).standard_normal((6, 40)).astype(np.float32)
    for placement in (hx.GpuLocal(), hx.HostVisible(), hx.Shared(rt.npu())):
        x = hx.asarray(a, placement=placement)[::2, ::-3]
        got = hx.sort(x, axis=0)
        assert got.placement == placement
        np.testing.assert_array_equal(hx.to_numpy(got), np.sort(a[::2, ::-3], axis=0))


def test_npu_local_input_is_refused_naming_sort(rt):
    x = hx.asarray(np.arange(4.0), placement=hx.NpuLocal(rt.npu()))
    with pytest.raises(hx.UnsupportedError, match="sort"):
        hx.sort(x)


def test_empty_and_zero_d():
    for shape in [(0,), (3, 0), (0, 4)]:
        a = np.zeros(shape, np.float32)
        assert hx.sort(hx.asarray(a)).shape == shape
        assert hx.to_numpy(hx.argsort(hx.asarray(a), axis=0)).shape == shape
    with pytest.raises(np.exceptions.AxisError, match="sort"):
        hx.sort(hx.asarray(np.float32(1)))
    np.testing.assert_array_equal(hx.to_numpy(hx.sort(hx.asarray(np.float32(1)), axis=None)), [1])


@pytest.mark.parametrize("kwargs, exc, text", [
    ({"axis": 2}, np.exceptions.AxisError, "sort"),
    ({"axis": -3}, np.exceptions.AxisError, "sort"),
    ({"kind": "bogo"}, ValueError, "sort: kind"),
    ({"order": "f"}, TypeError, "sort: order"),
    ({"descending": "yes"}, TypeError, "sort: descending"),
    ({"axis": 1.5}, TypeError, "sort: axis"),
])
def test_bad_arguments_name_the_function(kwargs, exc, text):
    with pytest.raises(exc, match=text):
        hx.sort(hx.asarray(np.zeros((2, 2))), **kwargs)


def test_bfp16_is_refused():
    x = hx.asarray(np.zeros(8, np.float32)).astype(hx.bfp16)
    with pytest.raises(TypeError, match="argsort"):
        hx.argsort(x)


def test_methods_and_numpy_dispatch():
    a = np.array([[5, -1, 3], [0, 0, -7]], dtype=np.int32)
    x = hx.asarray(a)
    np.testing.assert_array_equal(hx.to_numpy(x.argsort()), np.argsort(a, kind="stable"))
    s = np.sort(x)
    assert isinstance(s, hx.DeviceArray)
    np.testing.assert_array_equal(hx.to_numpy(s), np.sort(a))
    i = np.argsort(x, axis=0)
    assert isinstance(i, hx.DeviceArray)
    np.testing.assert_array_equal(hx.to_numpy(i), np.argsort(a, axis=0, kind="stable"))
    assert x.sort() is None  # in place, as NumPy's
    np.testing.assert_array_equal(hx.to_numpy(x), np.sort(a))


def test_asynchronous_chain_without_host_wait():
    # The producer's region is still pending when sort is submitted: hazards order them.
    a = np.random.default_rng(3).standard_normal(1 << 18).astype(np.float32)
    x = hx.asarray(a)
    y = hx.multiply(x, -1.0)
    s = hx.sort(y)
    i = hx.argsort(s, descending=True)
    z = hx.add(s, 1.0)
    np.testing.assert_array_equal(hx.to_numpy(z), np.sort(-a) + np.float32(1))
    np.testing.assert_array_equal(hx.to_numpy(i), _reference_argsort(np.sort(-a), 0, True))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.uint32])
@pytest.mark.parametrize("descending", [False, True])
def test_long_rows_without_nan_or_negative_zero_sort_in_place(dtype, descending):
    # No NaN and no -0.0: the values rebuild from their keys (the in-place wide path).
    rng = np.random.default_rng(7)
    a = (rng.standard_normal(200_003) * 1e3).astype(dtype) if np.dtype(dtype).kind == "f" else \
        rng.integers(0, 2**31, 200_003).astype(dtype)
    a[a == 0] = 1
    got = hx.to_numpy(hx.sort(hx.asarray(a), descending=descending))
    want = np.sort(a)
    np.testing.assert_array_equal(got, want[::-1] if descending else want)
