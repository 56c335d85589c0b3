"""The device kernels behind bincount, histogram, median and convolve/correlate (kernels/stats.h) against
NumPy on the same data: the same bits wherever NumPy's result is exact or its summation order is the kernel's
(integer counts, float weight sums in element order, equal-bin indices, medians), close otherwise (sliding
dot products, whose NumPy sums go through BLAS)."""

import warnings

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, strategies as st

import hrxarray as hx


def bits_equal(expected, got):
    expected = np.asarray(expected)
    got = hx.to_numpy(got) if isinstance(got, hx.DeviceArray) else np.asarray(got)
    assert got.shape == expected.shape and got.dtype == expected.dtype, (got.shape, got.dtype, expected.shape,
                                                                       expected.dtype)
    np.testing.assert_array_equal(got, expected)
    if expected.dtype.kind == "f":  # the same bits: -0.0 and NaN payloads included
        nan = np.isnan(expected)
        assert np.array_equal(np.isnan(got), nan)
        assert np.array_equal(np.signbit(got[~nan]), np.signbit(expected[~nan]))


INT_DTYPES = [np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint32, np.uint64, np.bool_]
FLOATS = st.floats(-1e6, 1e6, allow_subnormal=False, width=32)


@given(dt=st.sampled_from(INT_DTYPES), data=st.data(), minlength=st.integers(0, 50),
       wdt=st.sampled_from([None, np.float64, np.float32, np.int32, np.int64]))
def test_bincount_matches_numpy_bit_for_bit(dt, data, minlength, wdt):
    hi = 1 if dt is np.bool_ else 60
    x = data.draw(hnp.arrays(dt, st.integers(0, 300), elements=st.integers(0, hi).map(dt) if dt is not np.bool_
                             else st.booleans()))
    w = None
    if wdt is not None:
        w = data.draw(hnp.arrays(wdt, x.shape, elements=st.floats(-1e3, 1e3, width=32) if np.dtype(wdt).kind == "f"
                                 else st.integers(-1000, 1000)))
    expected = np.bincount(x, w, minlength=minlength)
    bits_equal(expected, hx.bincount(hx.asarray(x), None if w is None else hx.asarray(w), minlength=minlength))
    # NumPy's dispatch reaches the same function.
    bits_equal(expected, np.bincount(hx.asarray(x), None if w is None else hx.asarray(w), minlength=minlength))


def test_bincount_sums_weights_in_element_order_on_large_inputs():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 7, 300_000)  # large enough to split the unweighted count over the pool
    w = rng.standard_normal(x.size) * 10.0 ** rng.integers(-8, 8, x.size)
    bits_equal(np.bincount(x), hx.bincount(hx.asarray(x)))
    bits_equal(np.bincount(x, w), hx.bincount(hx.asarray(x), hx.asarray(w)))
    bits_equal(np.bincount(x[::3], w[1::3]), hx.bincount(hx.asarray(x)[::3], hx.asarray(w)[1::3]))


def test_bincount_refuses_bad_input_and_allocates_nothing():
    with pytest.raises(ValueError, match="bincount: 'list' argument must have no negative elements"):
        hx.bincount(hx.asarray(np.array([3, -1, 2])))
    with pytest.raises(ValueError, match="bincount: object too deep"):
        hx.bincount(hx.asarray(np.zeros((2, 2), np.int64)))
    with pytest.raises(TypeError, match=r"bincount: cannot cast array data from dtype\('float64'\)"):
        hx.bincount(hx.asarray(np.zeros(3)))
    with pytest.raises(ValueError, match="bincount: the weights and list don't have the same length"):
        hx.bincount(hx.asarray(np.zeros(3, np.int64)), hx.asarray(np.zeros(4)))
    with pytest.raises(ValueError, match="bincount: 'minlength' must not be negative"):
        hx.bincount(hx.asarray(np.zeros(3, np.int64)), minlength=-1)
    with pytest.raises(TypeError, match="bincount: weights must be real"):
        hx.bincount(hx.asarray(np.zeros(3, np.int64)), hx.asarray(np.zeros(3, np.complex64)))
    bits_equal(np.bincount(np.zeros(0, np.int64), minlength=3), hx.bincount(hx.asarray(np.zeros(0, np.int64)), minlength=3))


@given(dt=st.sampled_from([np.float64, np.float32, np.int32, np.int64, np.uint8]), data=st.data(),
       bins=st.integers(1, 40), use_range=st.sampled_from([None, "float", "int", "degenerate"]),
       wdt=st.sampled_from([None, np.float64, np.float32, np.int64]), density=st.booleans())
def test_histogram_with_equal_bins_matches_numpy_bit_for_bit(dt, data, bins, use_range, wdt, density):
    kind = np.dtype(dt).kind
    elements = (st.floats(-1e4, 1e4, width=32 if dt is np.float32 else 64, allow_subnormal=False) if kind == "f"
                else st.integers(0, 255) if dt is np.uint8 else st.integers(-10_000, 10_000))
    x = data.draw(hnp.arrays(dt, st.integers(0, 200), elements=elements))
    if kind == "f" and x.size and data.draw(st.booleans()):  # NaN and inf outside the range are not counted
        x[data.draw(st.integers(0, x.size - 1))] = data.draw(st.sampled_from([np.nan, np.inf, -np.inf]))
        use_range = use_range or "float"
    rng = {None: None, "float": (data.draw(st.floats(-2e4, 0)), data.draw(st.floats(0.1, 2e4))),
           "int": (data.draw(st.integers(-20_000, 0)), data.draw(st.integers(1, 20_000))),
           "degenerate": (3.0, 3.0)}[use_range]
    w = None if wdt is None else data.draw(hnp.arrays(wdt, x.shape, elements=st.integers(-100, 100) if wdt is np.int64
                                                       else st.floats(-1e3, 1e3, width=32)))
    try:
        with np.errstate(all="ignore"):  # density of an all-outside or zero-weight histogram: 0 / 0
            counts, edges = np.histogram(x, bins, range=rng, weights=w, density=density)
    except ValueError as e:
        with pytest.raises(ValueError, match=str(e).split(".")[0][:30]):
            hx.histogram(hx.asarray(x), bins, range=rng, weights=None if w is None else hx.asarray(w))
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        hc, he = hx.histogram(hx.asarray(x), bins, range=rng, weights=None if w is None else hx.asarray(w),
                              density=density)
    bits_equal(edges, he)
    if density:
        # counts / widths / counts.sum(): the sum of float32 weights is rounded differently
        np.testing.assert_allclose(hx.to_numpy(hc), counts, rtol=1e-6 if wdt is np.float32 else 1e-12)
        assert hc.dtype == counts.dtype
    else:
        bits_equal(counts, hc)


def test_histogram_float32_data_uses_numpys_index_arithmetic():
    """float32 data against a Python-float range: NumPy divides the float32 difference by a float64 denom;
    values next to edges land where NumPy puts them (the corrections against the edges included)."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal(200_000).astype(np.float32)
    edges = np.linspace(-3.0, 3.0, 7, dtype=np.float32)
    x[:7] = edges
    x[7:14] = np.nextafter(edges, np.float32(np.inf))
    x[14:21] = np.nextafter(edges, np.float32(-np.inf))
    w = rng.standard_normal(x.size).astype(np.float32)
    for r in (None, (-3.0, 3.0), (-3, 3), (np.float32(-2.5), np.float32(2.75))):
        for b in (6, 7, 100, 1000):
            for weights in (None, w):
                c, e = np.histogram(x, b, range=r, weights=weights)
                hc, he = hx.histogram(hx.asarray(x), b, range=r, weights=None if weights is None else hx.asarray(weights))
                bits_equal(e, he)
                bits_equal(c, hc)


@given(x=hnp.arrays(np.float64, st.integers(0, 200), elements=st.floats(-100, 100)),
       edges=hnp.arrays(np.float64, st.integers(2, 12), elements=st.floats(-120, 120), unique=True),
       weighted=st.booleans())
def test_histogram_with_explicit_edges_matches_numpy(x, edges, weighted):
    edges = np.sort(edges)
    w = np.linspace(-1, 2, x.size) if weighted else None
    counts, e = np.histogram(x, edges, weights=w)
    hc, he = hx.histogram(hx.asarray(x), hx.asarray(edges), weights=None if w is None else hx.asarray(w))
    bits_equal(e, he)
    if weighted:  # NumPy's explicit-edge sums are differences of a cumulative sum: close, not the same bits
        np.testing.assert_allclose(hx.to_numpy(hc), counts, rtol=1e-9, atol=1e-9)
    else:
        bits_equal(counts, hc)


def test_histogram_with_duplicate_edges_and_edge_values_matches_numpy():
    x = np.array([0.0, 1.0, 1.0, 2.0, 2.0, 3.0, -1.0, np.nan, 2.5])
    for edges in ([0.0, 1.0, 1.0, 2.0], [0.0, 1.0, 2.0, 2.0], [1.0, 1.0], [-1.0, 3.0]):
        c, _ = np.histogram(x, edges)
        bits_equal(c, hx.histogram(hx.asarray(x), hx.asarray(np.array(edges)))[0])


def _median_arrays():
    dts = st.sampled_from([np.float64, np.float32, np.float16, np.int32, np.int64, np.uint8, np.bool_])

    def arrays(dt):
        kind = np.dtype(dt).kind
        el = (st.booleans() if kind == "b" else st.integers(0, 255) if dt is np.uint8
              else st.integers(-2**31, 2**31 - 1) if kind == "i"
              else st.floats(width=np.dtype(dt).itemsize * 8, allow_nan=True, allow_infinity=True))
        return hnp.arrays(dt, hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=9), elements=el)

    return dts.flatmap(arrays)


@given(x=_median_arrays(), data=st.data(), keepdims=st.booleans())
def test_median_matches_numpy_bit_for_bit(x, data, keepdims):
    axis = data.draw(st.sampled_from([None, -1, 0] + ([(0, x.ndim - 1)] if x.ndim > 1 else [])))
    with np.errstate(all="ignore"):
        expected = np.median(x, axis=axis, keepdims=keepdims)
    got = hx.median(hx.asarray(x), axis=axis, keepdims=keepdims)
    bits_equal(expected, got)


def test_median_of_large_rows_and_views():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 100_001))
    for v in (x, x[:, :-1], x[:, ::2], x.T):
        for axis in (None, 0, 1, -1):
            bits_equal(np.median(v, axis=axis), hx.median(hx.asarray(v), axis=axis))
    x[1, 500] = np.nan
    bits_equal(np.median(x, axis=1), hx.median(hx.asarray(x), axis=1))
    # Long rows select by radix buckets (Note [Radix selection]): the two middle values in one bucket or two,
    # every value in one bucket, ties, zeros of both signs, float32 and integers.
    rows = [np.concatenate([np.full(20_000, 1.0), np.full(20_000, 2.0)]), np.full(40_001, -0.0),
            np.concatenate([np.full(20_000, -0.0), np.full(20_000, 0.0)]),
            rng.integers(-5, 5, 50_000), rng.standard_normal(65_536).astype(np.float32),
            np.concatenate([rng.standard_normal(30_000) * 1e-300, rng.standard_normal(30_000) * 1e300]),
            rng.integers(-2**62, 2**62, 40_000), np.concatenate([np.arange(20_000.0), [np.inf, -np.inf]])]
    for r in rows:
        for v in (r, r[::-1], np.sort(r)):
            bits_equal(np.median(v), hx.median(hx.asarray(v)))
    big = np.array([np.finfo(np.float64).max, np.finfo(np.float64).max, 1.0])
    bits_equal(np.median(big), hx.median(hx.asarray(big)))  # the middle element, not (x + x) / 2 = inf
    with pytest.raises(ValueError, match="median: cannot take the median of an empty reduction"):
        hx.median(hx.asarray(np.zeros((2, 0))), axis=1)


CONV_DTYPES = [np.float64, np.float32, np.int64, np.int32, np.int8, np.uint16]


@given(dt=st.sampled_from(CONV_DTYPES), vdt=st.sampled_from(CONV_DTYPES), data=st.data(),
       mode=st.sampled_from(["full", "same", "valid"]))
def test_convolve_and_correlate_match_numpy(dt, vdt, data, mode):
    def arr(d, n):
        el = (st.floats(-100, 100, width=32) if np.dtype(d).kind == "f" else st.integers(0, 100))
        return data.draw(hnp.arrays(d, n, elements=el))

    a = arr(dt, data.draw(st.integers(1, 300)))
    v = arr(vdt, data.draw(st.integers(1, 40)))
    for name in ("convolve", "correlate"):
        expected = getattr(np, name)(a, v, mode)
        got = getattr(hx, name)(hx.asarray(a), hx.asarray(v), mode)
        assert got.shape == expected.shape and got.dtype == expected.dtype
        if expected.dtype.kind in "iu":  # integer sums are exact (wrapping alike)
            bits_equal(expected, got)
        else:
            scale = np.abs(a).max() * np.abs(v).sum() + 1e-30
            tol = 1e-5 if expected.dtype == np.float32 else 1e-12
            np.testing.assert_allclose(hx.to_numpy(got), expected, rtol=0, atol=tol * scale)


def test_convolve_gives_the_same_bits_on_every_path():
    """Blocked interior outputs and the edge outputs sum their taps in one order (Note [Sliding dot order]):
    each output equals the taps summed from the first in float64, one rounding at a time."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal(3000)
    v = rng.standard_normal(17)
    got = hx.to_numpy(hx.correlate(hx.asarray(a), hx.asarray(v), "full"))
    ap = np.concatenate([np.zeros(16), a, np.zeros(16)])
    for k in (0, 5, 16, 17, 1000, 2999, 3010, 3015):
        lo, hi = max(0, 16 - k), min(17, 3016 - k)
        s = 0.0
        for j in range(lo, hi):
            s = s + ap[k + j] * v[j]
        assert got[k] == s, k
    big = hx.convolve(hx.asarray(a[:5]), hx.asarray(a))  # v longer than a: NumPy swaps them
    np.testing.assert_allclose(hx.to_numpy(big), np.convolve(a[:5], a), rtol=1e-12, atol=1e-12)


AT_DTYPES = [np.float64, np.float32, np.int64, np.int32, np.int8, np.uint8, np.uint16]


@given(dt=st.sampled_from(AT_DTYPES), name=st.sampled_from(["add", "subtract", "multiply", "minimum", "maximum"]),
       data=st.data(), via_numpy=st.booleans())
def test_ufunc_at_matches_numpy_with_repeated_indices(dt, name, data, via_numpy):
    kind = np.dtype(dt).kind
    el = st.floats(-100, 100, width=32) if kind == "f" else st.integers(0, 100) if kind == "u" else st.integers(-100, 100)
    a = data.draw(hnp.arrays(dt, st.integers(1, 30), elements=el))
    if kind == "f" and data.draw(st.booleans()):
        a[0] = np.nan  # minimum/maximum propagate it
    idx = data.draw(hnp.arrays(np.int64, st.integers(0, 60), elements=st.integers(-a.size, a.size - 1)))
    b = data.draw(st.one_of(hnp.arrays(dt, idx.shape, elements=el), el.map(lambda v: dt(v))))
    expected = a.copy()
    with np.errstate(all="ignore"):
        getattr(np, name).at(expected, idx, b)
    x = hx.asarray(a)
    hb = hx.asarray(b) if isinstance(b, np.ndarray) else b
    if via_numpy:
        getattr(np, name).at(x, hx.asarray(idx), hb)
    else:
        getattr(hx, name).at(x, hx.asarray(idx), hb)
    bits_equal(expected, x)


AT_MIXED_DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint32, np.uint64, np.float16,
                   np.float32, np.float64]


def _at_elements(dt, small):
    kind = np.dtype(dt).kind
    if kind == "b":
        return st.booleans()
    if kind == "f":
        # Values that a float -> integer cast can hold (NumPy leaves the others to the C compiler).
        return st.floats(0, 1, width=16, exclude_max=True) if small else st.floats(-300, 300, width=32)
    return st.integers(0, 1) if small else st.integers(0, 50) if kind == "u" else st.integers(-50, 50)


@given(adt=st.sampled_from(AT_MIXED_DTYPES), bdt=st.sampled_from([*AT_MIXED_DTYPES, bool, int, float]),
       name=st.sampled_from(["add", "subtract", "multiply", "minimum", "maximum"]), data=st.data())
def test_ufunc_at_in_the_result_type_matches_numpy_bit_for_bit(adt, bdt, name, data):
    # NumPy's ufunc.at runs the loop of (a's dtype, b's dtype) and casts each update back to a's dtype
    # (Note [ufunc.at in a wider type]): float64 values added to float16 round once per update, an int8
    # maximum against 300 wraps after the comparison, a Python float is float64.
    ct = np.result_type(adt, np.asarray(bdt(1)).dtype)
    if name == "subtract" and ct == np.bool_:
        return  # NumPy refuses it too (checked in the refusals test)
    # An integer array updated in floats: small values, so no sum leaves the integer's range.
    small = np.dtype(adt).kind in "biu" and ct.kind == "f"
    if small and name == "subtract":
        name = "add"
    a = data.draw(hnp.arrays(adt, st.integers(1, 20), elements=_at_elements(adt, False).filter(lambda v: v >= 0)
                             if small else _at_elements(adt, False)))
    idx = data.draw(hnp.arrays(np.int64, st.integers(0, 40), elements=st.integers(-a.size, a.size - 1)))
    el = _at_elements(np.dtype(bdt) if bdt not in (bool, int, float) else np.asarray(bdt(1)).dtype, small)
    if bdt in (bool, int, float):
        b = data.draw(el.map(bdt))
    else:
        b = data.draw(hnp.arrays(bdt, idx.shape, elements=el))
    expected = a.copy()
    with np.errstate(all="ignore"):
        getattr(np, name).at(expected, idx, b)
    x = hx.asarray(a)
    getattr(hx, name).at(x, hx.asarray(idx), hx.asarray(b) if isinstance(b, np.ndarray) else b)
    bits_equal(expected, x)


def test_ufunc_at_rounds_each_update_from_the_wider_type():
    # 1 + 2^-11 + 2^-40 rounds up to float16's next value above 1; the value rounded to float16 first
    # (2^-11, a tie) would leave 1: NumPy adds in float64 and rounds each sum once.
    for a_dt, v in [(np.float16, np.array([2**-11 + 2**-40] * 2)), (np.float32, 2**-24 + 2**-50),
                    (np.int8, np.array([300, -300])), (np.uint8, np.array([-3, 7], np.int16))]:
        for name in ("add", "maximum"):
            expected = np.ones(2, a_dt)
            getattr(np, name).at(expected, [0, 0], v)
            x = hx.asarray(np.ones(2, a_dt))
            getattr(hx, name).at(x, [0, 0], v)
            bits_equal(expected, x)
            if a_dt == np.float16 and name == "add":
                assert hx.to_numpy(x)[0] == 1 + 2**-9  # rounded up twice; values rounded first leave 1


def test_ufunc_at_takes_numpys_indices_and_refuses_bad_input_unchanged():
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    for index in [(0, slice(None), [1, 1, 3]), ([1, 0, 1],), (Ellipsis, 2), (np.array([[0, 1], [1, 1]]), 1),
                  a > 10, 1]:
        expected = a.copy()
        np.add.at(expected, index, 2.5)
        x = hx.asarray(a)
        hx.add.at(x, index, 2.5)
        bits_equal(expected, x)
    counts = hx.asarray(np.zeros(4, np.int64))
    hx.add.at(counts, hx.asarray(np.array([3, 3, 0, 3])), 1)
    bits_equal(np.array([1, 0, 0, 3]), counts)
    x = hx.asarray(np.arange(5.0))
    with pytest.raises(IndexError, match="add.at: index 5 is out of bounds for size 5"):
        hx.add.at(x, [0, 5], 1.0)
    with pytest.raises(TypeError, match="boolean subtract"):
        hx.subtract.at(hx.asarray(np.zeros(3, bool)), [1], True)
    with pytest.raises(TypeError, match="values must be bool, integer, float16"):
        hx.add.at(x, [1], hx.asarray(np.ones(1, np.complex64)))
    with pytest.raises(ValueError, match="could not be broadcast"):
        hx.multiply.at(x, [0, 1], hx.asarray(np.ones(3)))
    with pytest.raises(TypeError, match="second operand needed"):
        hx.add.at(x, [0])
    with pytest.raises(TypeError, match="numpy.divide.at for DeviceArray"):
        np.divide.at(x, [0], 1.0)
    bits_equal(np.arange(5.0), x)  # every refusal left x as it was
    y = hx.asarray(np.array([0, 1, 1, 2]))  # indices that are the updated array itself
    expected = np.array([0, 1, 1, 2])
    np.add.at(expected, expected.copy(), 1)
    hx.add.at(y, y, 1)
    bits_equal(expected, y)
