"""cumulative_sum / cumulative_prod / cumsum / cumprod / diff against NumPy (dtypes, shapes, sequential order)."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import hrxarray as hx

import helpers  # noqa: E402

DTYPES = [np.dtype(t) for t in (bool, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                np.uint64, np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.complex64,
                                np.complex128)]


def _data(rng, dtype, shape):
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -3, 4, shape).astype(dtype)
    if dtype.kind == "c":
        part = np.dtype(np.float32 if dtype.itemsize == 8 else np.float64)
        out = np.empty(shape, dtype)
        out.real, out.imag = _data(rng, part, shape), _data(rng, part, shape)
        return out
    vals = rng.standard_normal(shape) * 3
    vals = np.where(rng.random(shape) < 0.05, np.array([np.nan, np.inf, -0.0])[rng.integers(0, 3, shape)], vals)
    return vals.astype(dtype)


def _expect(a, axis, product, dtype=None):
    """NumPy's cumsum/cumprod; bfloat16 through ml_dtypes' own add/multiply (one rounding per step).

    A complex product steps through NumPy's formula unfused (helpers.cmul_unfused):
    NumPy's SIMD loops fuse it on hosts with FMA, hrxarray never does.
    """
    if product and a.dtype.kind == "c" and dtype is None:
        flat = a.reshape(-1) if axis is None else np.moveaxis(a, axis, -1)
        out = np.empty(flat.shape, a.dtype)
        run = np.ones(flat.shape[:-1], a.dtype)
        with np.errstate(all="ignore"):
            for i in range(flat.shape[-1]):
                run = out[..., i] = helpers.cmul_unfused(run, flat[..., i])
        return out if axis is None else np.moveaxis(out, -1, axis)
    f = np.cumprod if product else np.cumsum
    with np.errstate(all="ignore"):  # overflow to inf is part of what is compared
        return f(a, axis=axis, dtype=dtype)


@given(dtype=st.sampled_from(DTYPES), shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=7),
       seed=st.integers(0, 2**32 - 1), product=st.booleans(), data=st.data())
def test_cumsum_and_cumprod_match_numpy(dtype, shape, seed, product, data):
    a = _data(np.random.default_rng(seed), dtype, shape)
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    x = hx.asarray(a)
    got = hx.to_numpy((hx.cumprod if product else hx.cumsum)(x, axis=axis))
    want = _expect(a, axis, product)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@given(dtype=st.sampled_from(DTYPES), shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6),
       seed=st.integers(0, 2**32 - 1), product=st.booleans(), include=st.booleans(), data=st.data())
def test_cumulative_sum_and_prod_match_numpy(dtype, shape, seed, product, include, data):
    a = _data(np.random.default_rng(seed), dtype, shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    name = "cumulative_prod" if product else "cumulative_sum"
    got = hx.to_numpy(getattr(hx, name)(hx.asarray(a), axis=axis, include_initial=include))
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a, axis=axis, include_initial=include)
    if product and a.dtype.kind == "c":
        body = _expect(a, axis, True)
        want = np.concatenate([np.ones_like(np.take(a, [0], axis=axis)), body], axis=axis) if include and \
            a.shape[axis] else (np.ones_like(np.take(want, [0], axis=axis)) if include else body)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_float32_cumsum_is_sequential_not_pairwise():
    # 1 + 2^-24 * k: sequential float32 addition loses every small term, pairwise would not.
    a = np.concatenate([[1.0], np.full(4096, 2.0**-24)]).astype(np.float32)
    got = hx.to_numpy(hx.cumsum(hx.asarray(a)))
    np.testing.assert_array_equal(got, np.cumsum(a))
    assert got[-1] == np.float32(1.0)


def test_dtype_argument_strided_input_and_methods():
    a = np.arange(24, dtype=np.int8).reshape(4, 6) * 7
    x = hx.asarray(a)[:, ::-2]
    np.testing.assert_array_equal(hx.to_numpy(hx.cumsum(x, axis=0, dtype=np.int8)),
                                  np.cumsum(a[:, ::-2], axis=0, dtype=np.int8))
    np.testing.assert_array_equal(hx.to_numpy(hx.cumulative_sum(x, axis=1, dtype=np.float32)),
                                  np.cumulative_sum(a[:, ::-2], axis=1, dtype=np.float32))
    np.testing.assert_array_equal(hx.to_numpy(x.cumsum()), a[:, ::-2].cumsum())
    np.testing.assert_array_equal(hx.to_numpy(x.cumprod(1)), a[:, ::-2].cumprod(1))
    out = hx.zeros(12, dtype=np.int64)
    assert hx.cumsum(x, out=out) is out
    np.testing.assert_array_equal(hx.to_numpy(out), np.cumsum(a[:, ::-2]))


def test_numpy_dispatch():
    a = np.array([[1.5, 2.0], [3.0, -1.0]], dtype=np.float32)
    x = hx.asarray(a)
    for f in (np.cumsum, np.cumprod):
        r = f(x, axis=1)
        assert isinstance(r, hx.DeviceArray)
        np.testing.assert_array_equal(hx.to_numpy(r), f(a, axis=1))
    r = np.cumulative_sum(x, axis=0, include_initial=True)
    np.testing.assert_array_equal(hx.to_numpy(r), np.cumulative_sum(a, axis=0, include_initial=True))
    r = np.diff(x, axis=0)
    assert isinstance(r, hx.DeviceArray)
    np.testing.assert_array_equal(hx.to_numpy(r), np.diff(a, axis=0))


def test_errors_name_the_function():
    x = hx.asarray(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="cumulative_sum: axis must be given"):
        hx.cumulative_sum(x)
    with pytest.raises(np.exceptions.AxisError, match="cumulative_prod"):
        hx.cumulative_prod(x, axis=2)
    with pytest.raises(TypeError, match="cumsum"):
        hx.cumsum(x, dtype="nonsense")
    with pytest.raises(TypeError, match="cumulative_sum: include_initial"):
        hx.cumulative_sum(x, axis=0, include_initial="no")
    with pytest.raises(ValueError, match="diff: order n must be non-negative"):
        hx.diff(x, n=-1)
    with pytest.raises(ValueError, match="diff: x must have at least one dimension"):
        hx.diff(hx.asarray(np.float32(1)))
    with pytest.raises(np.exceptions.AxisError, match="diff"):
        hx.diff(x, axis=3)


@given(dtype=st.sampled_from([np.dtype(bool), np.dtype(np.int16), np.dtype(np.uint8), np.dtype(np.float32),
                              np.dtype(ml_dtypes.bfloat16)]),
       shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6), n=st.integers(0, 3),
       seed=st.integers(0, 2**32 - 1), edges=st.booleans(), data=st.data())
def test_diff_matches_numpy(dtype, shape, n, seed, edges, data):
    a = _data(np.random.default_rng(seed), dtype, shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    kw = {"prepend": a.dtype.type(1), "append": a.dtype.type(0)} if edges else {}
    got = hx.to_numpy(hx.diff(hx.asarray(a), n=n, axis=axis, **kw))
    with np.errstate(all="ignore"):  # inf - inf is part of what is compared
        want = np.diff(a, n=n, axis=axis, **kw)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_scan_follows_a_pending_producer():
    a = np.random.default_rng(5).standard_normal((64, 1024)).astype(np.float32)
    y = hx.multiply(hx.asarray(a), 2.0)
    c = hx.cumsum(y, axis=1)
    s = hx.sum(c, axis=0)
    np.testing.assert_array_equal(hx.to_numpy(c), np.cumsum(a * np.float32(2), axis=1))
    np.testing.assert_allclose(hx.to_numpy(s), np.cumsum(a * np.float32(2), axis=1).sum(axis=0), atol=1e-3)
