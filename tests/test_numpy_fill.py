"""NumPy's gradient, insert, lexsort, block, put/putmask/place, polyfit and roots on DeviceArrays
(hrxarray/_numpy_fill.py), each against NumPy on the same data."""

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, strategies as st

import hrxarray as hx

H = hx.asarray


def same(expected, got):
    """The same values, dtype and shape (bit for bit: -0.0 and NaN positions included)."""
    expected = np.asarray(expected)
    got = hx.to_numpy(got) if isinstance(got, hx.DeviceArray) else np.asarray(got)
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got.dtype, got.shape, expected.dtype,
                                                                       expected.shape)
    assert got.tobytes() == expected.tobytes(), (got, expected)


def same_all(expected, got):
    if isinstance(expected, (list, tuple)):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for e, g in zip(expected, got):
            same(e, g)
    else:
        same(expected, got)


finite = st.floats(-1e3, 1e3, allow_nan=False, width=64)


@given(data=st.data(), edge_order=st.sampled_from([1, 2]), dt=st.sampled_from([np.float64, np.float32, np.int64]),
       spacing=st.sampled_from(["none", "scalar", "coords", "uniform-coords"]))
def test_gradient_matches_numpy(data, edge_order, dt, spacing):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=3, max_side=6))
    f = data.draw(hnp.arrays(dt, shape, elements=st.integers(-100, 100) if dt == np.int64 else finite))
    axis = data.draw(st.sampled_from([None, -1, 0]))
    axes = range(f.ndim) if axis is None else [axis % f.ndim]
    if spacing == "none":
        args = ()
    elif spacing == "scalar":
        args = (data.draw(st.sampled_from([0.5, 2.0, 3])),)
    else:
        args = []
        for ax in axes:
            n = f.shape[ax]
            if spacing == "coords":
                steps = data.draw(hnp.arrays(np.float64, n - 1, elements=st.floats(0.25, 4)))
                args.append(np.concatenate([[0.0], np.cumsum(steps)]))
            else:
                args.append(np.arange(n) * 1.5)
        args = tuple(args)
    expected = np.gradient(f, *args, axis=axis, edge_order=edge_order)
    same_all(expected, np.gradient(H(f), *args, axis=axis, edge_order=edge_order))


def test_gradient_refuses_what_numpy_refuses():
    with pytest.raises(ValueError, match="at least"):
        np.gradient(H(np.ones(2)), edge_order=2)
    with pytest.raises(ValueError, match="edge_order"):
        np.gradient(H(np.ones(5)), edge_order=3)
    with pytest.raises(ValueError, match="match the length"):
        np.gradient(H(np.ones(5)), np.arange(4.0))


@given(data=st.data())
def test_insert_matches_numpy(data):
    a = data.draw(hnp.arrays(np.int32, hnp.array_shapes(min_dims=1, max_dims=2, max_side=5),
                             elements=st.integers(-50, 50)))
    axis = data.draw(st.sampled_from([None, 0, -1]))
    n = a.size if axis is None else a.shape[axis]
    kind = data.draw(st.sampled_from(["int", "list", "slice"]))
    if kind == "int":
        obj = data.draw(st.integers(-n, n))
    elif kind == "list":
        obj = data.draw(st.lists(st.integers(-n, n), min_size=1, max_size=4))
    else:
        obj = slice(data.draw(st.integers(0, n)), None, data.draw(st.integers(1, 3)))
    values = data.draw(st.one_of(st.integers(-9, 9), st.floats(-9, 9)))  # scalars broadcast; floats truncate
    expected = np.insert(a, obj, values, axis=axis)
    same(expected, np.insert(H(a), obj, values, axis=axis))


def test_insert_values_shaped_as_numpy_takes_them():
    a = np.arange(12.0).reshape(3, 4)
    for obj, vals, axis in [(2, [[5, 6, 7, 8]], 0), (1, [5, 6, 7], 1), ([1, 1, 3], [7, 8, 9], None),
                            ([0, -1], [[1], [2], [3]], 1)]:
        same(np.insert(a, obj, vals, axis=axis), np.insert(H(a), obj, H(np.asarray(vals, np.float64)), axis=axis))
    with pytest.raises(IndexError, match="out of bounds"):
        np.insert(H(a), 9, 1.0, axis=0)


@given(data=st.data(), n_keys=st.integers(1, 3))
def test_lexsort_matches_numpy(data, n_keys):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=2, max_side=12))
    keys = [data.draw(hnp.arrays(dt, shape, elements=el))
            for dt, el in [(np.int64, st.integers(0, 3)), (np.float64, st.sampled_from([0.0, -0.0, 1.5, np.nan])),
                           (np.int32, st.integers(-2, 2))][:n_keys]]
    axis = data.draw(st.sampled_from([-1, 0]))
    same(np.lexsort(tuple(keys), axis=axis), np.lexsort(tuple(H(k) for k in keys), axis=axis))
    if n_keys > 1 and keys[0].dtype == keys[1].dtype:
        stacked = np.stack(keys[:2])
        same(np.lexsort(stacked), np.lexsort(H(stacked)))


def test_block_matches_numpy():
    a, b, c = np.ones((2, 2)), np.zeros((2, 3)), np.full((1, 5), 7.0)
    same(np.block([[a, b], [c]]), np.block([[H(a), H(b)], [H(c)]]))
    same(np.block([np.arange(3), 5, np.arange(2)]), np.block([H(np.arange(3)), 5, H(np.arange(2))]))
    same(np.block([[np.arange(2)], [np.arange(2, 4)]]), np.block([[H(np.arange(2))], [H(np.arange(2, 4))]]))
    same(np.block([[[1.0, 2.0]], [[3.0, 4.0]]]), np.block([[[H(np.array(1.0)), 2.0]], [[3.0, 4.0]]]))
    with pytest.raises(ValueError, match="depths are mismatched"):
        np.block([H(np.ones(2)), [H(np.ones(2))]])
    with pytest.raises(TypeError, match="tuple"):
        np.block((H(np.ones(2)),))
    with pytest.raises(ValueError, match="cannot be empty"):
        np.block([[], [H(np.ones(2))]])


@given(data=st.data(), mode=st.sampled_from(["raise", "wrap", "clip"]))
def test_put_matches_numpy(data, mode):
    a = data.draw(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=2, max_side=5), elements=finite))
    bound = a.size if mode == "raise" else 3 * a.size
    ind = data.draw(st.lists(st.integers(-bound, bound - 1), min_size=1, max_size=8))
    v = data.draw(st.lists(finite, min_size=1, max_size=4))
    expected, x = a.copy(), H(a)
    np.put(expected, ind, v, mode=mode)
    np.put(x, ind, v, mode=mode)
    same(expected, x)


@given(data=st.data())
def test_putmask_and_place_match_numpy(data):
    a = data.draw(hnp.arrays(np.int16, hnp.array_shapes(min_dims=1, max_dims=2, max_side=5),
                             elements=st.integers(-9, 9)))
    mask = data.draw(hnp.arrays(np.bool_, a.shape))
    vals = data.draw(st.lists(st.integers(-100, 100), min_size=1, max_size=4))
    expected, x = a.copy(), H(a)
    np.putmask(expected, mask, vals)
    np.putmask(x, H(mask), vals)
    same(expected, x)
    expected, x = a.copy(), H(a)
    np.place(expected, mask, vals)
    np.place(x, H(mask), vals)
    same(expected, x)


def test_place_and_put_refuse_as_numpy_does():
    x = H(np.arange(4.0))
    with pytest.raises(ValueError, match="empty array"):
        np.place(x, H(np.array([True, False, False, False])), [])
    with pytest.raises(IndexError, match="out of bounds"):
        np.put(x, [4], [1.0])
    same(np.arange(4.0), x)  # nothing written


def test_polyfit_matches_numpy():
    rng = np.random.default_rng(0)
    x = np.linspace(-1, 2, 30)
    y = 3 * x**3 - x + 0.5 + 0.01 * rng.standard_normal(30)
    np.testing.assert_allclose(hx.to_numpy(np.polyfit(H(x), H(y), 3)), np.polyfit(x, y, 3), rtol=1e-10, atol=1e-12)
    y2 = np.stack([y, 2 * y], axis=1)
    np.testing.assert_allclose(hx.to_numpy(np.polyfit(H(x), H(y2), 2)), np.polyfit(x, y2, 2), rtol=1e-10)
    got = np.polyfit(H(x), H(y), 2, full=True, w=H(x + 2))
    want = np.polyfit(x, y, 2, full=True, w=x + 2)
    for g, w in zip(got, want):
        np.testing.assert_allclose(hx.to_numpy(g) if isinstance(g, hx.DeviceArray) else g, w, rtol=1e-9)
    with pytest.raises(TypeError, match="same length"):
        np.polyfit(H(x), H(y[:-1]), 2)


@pytest.mark.parametrize("p", [[1, -6, 11, -6], [0, 1, 0, 1, 0], [1, 0, 1], [2.0], [0, 0, 3, 0], [1, 2, 3, 4, 5]])
def test_roots_match_numpy(p):
    want = np.roots(p)
    got = hx.to_numpy(np.roots(H(np.asarray(p, dtype=np.float64))))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(np.sort_complex(got), np.sort_complex(want), rtol=1e-10, atol=1e-12)
