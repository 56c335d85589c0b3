"""Advanced indexing (integer arrays, boolean masks), take, take_along_axis and isin against NumPy."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import hrxarray as hx

ALL = [np.dtype(t) for t in (bool, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                             np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.complex64, np.complex128)]
INDEX_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def values_of(shape, dtype, seed=0):
    v = np.random.default_rng(seed).integers(-50, 50, size=shape)
    if np.dtype(dtype).kind == "c":
        return (v + 1j * v[::-1] if v.ndim else v + 0j).astype(dtype)
    if np.dtype(dtype).kind == "u":
        v = np.abs(v)
    return v.astype(dtype)


@st.composite
def keys(draw, shape):
    """A NumPy index (ints, slices, None, one Ellipsis, integer arrays, one bool mask) for `shape`, and the
    same index as hrxarray takes it (index arrays as DeviceArrays, NumPy arrays or lists)."""
    ndim = len(shape)
    bshape = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    np_key, hx_key = [], []
    dim = 0
    used_ellipsis = used_mask = False

    def add(np_entry, hx_entry=None):
        np_key.append(np_entry)
        hx_key.append(np_entry if hx_entry is None else hx_entry)

    while dim < ndim and not (np_key and draw(st.integers(0, 9)) == 0):  # sometimes leave trailing axes implicit
        n = shape[dim]
        kinds = ["int", "slice", "array", "array", "none"] + ["ellipsis"] * (not used_ellipsis) + \
            ["mask"] * (not used_mask)
        kind = draw(st.sampled_from(kinds))
        if kind == "none":
            add(None)
        elif kind == "ellipsis":
            used_ellipsis = True
            add(Ellipsis)
            dim += draw(st.integers(0, ndim - dim))  # what the rest of the key leaves to it
        elif kind == "int" and n:
            add(draw(st.integers(-n, n - 1)))
            dim += 1
        elif kind == "mask":
            used_mask = True
            m = draw(hnp.arrays(np.bool_, shape[dim:dim + draw(st.integers(1, ndim - dim))]))
            add(m, hx.asarray(m) if draw(st.booleans()) else m)
            dim += m.ndim
        elif kind == "array" and n:
            cut = draw(st.integers(0, len(bshape)))
            ishape = tuple(draw(st.sampled_from([s, 1])) for s in bshape[cut:])
            vals = draw(hnp.arrays(np.int64, ishape, elements=st.integers(-n, n - 1)))
            signed = not vals.size or vals.min() < 0
            vals = vals.astype(draw(st.sampled_from([np.int64, np.int32, np.int8] +
                                                    ([] if signed else [np.uint8, np.uint16]))))
            form = draw(st.sampled_from(["device", "numpy"] + ["list"] * bool(vals.size)))  # [] loses its shape
            add(vals, hx.asarray(vals) if form == "device" else vals if form == "numpy" else vals.tolist())
            dim += 1
        else:
            s = slice(draw(st.none() | st.integers(-6, 6)), draw(st.none() | st.integers(-6, 6)),
                      draw(st.none() | st.sampled_from([1, 2, -1, 3])))
            add(s)
            dim += 1
    return tuple(np_key), tuple(hx_key)


def numpy_result(a, key):
    try:
        return a[key], None
    except (IndexError, ValueError) as e:
        return None, e


@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=5))
def test_getitem_matches_numpy(data, shape):
    a = values_of(shape, np.float32)
    np_key, hx_key = data.draw(keys(shape))
    want, err = numpy_result(a, np_key)
    x = hx.asarray(a)
    if err is not None:
        with pytest.raises(type(err)):
            x[hx_key]
        return
    got = x[hx_key]
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(hx.to_numpy(got), want)


@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=5),
       scalar=st.booleans())
def test_setitem_matches_numpy(data, shape, scalar):
    a = values_of(shape, np.int32)
    np_key, hx_key = data.draw(keys(shape))
    sel, err = numpy_result(a, np_key)
    if err is not None:
        return
    if scalar:
        value = 99
    else:
        # The selection's trailing shape, or all of it: broadcast as NumPy assigns.
        vshape = sel.shape[data.draw(st.integers(0, sel.ndim)):]
        value = np.arange(int(np.prod(vshape)), dtype=np.int32).reshape(vshape) + 1000
        # Repeated indices with different values: NumPy documents no winner; keep the values equal there.
        flat = np.arange(a.size).reshape(a.shape)[np_key]
        if np.unique(flat).size != flat.size:
            value = 77
    want = a.copy()
    want[np_key] = value
    x = hx.asarray(a)
    x[hx_key] = hx.asarray(value) if data.draw(st.booleans()) and not scalar else value
    np.testing.assert_array_equal(hx.to_numpy(x), want)


def test_layout_of_advanced_dimensions():
    a = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
    x = hx.asarray(a)
    i, j = np.array([0, 1, 1]), np.array([[2], [0]])
    for key in [(slice(None), i, j), (i, slice(None), j), (slice(None), 0, i), (i, slice(None), 0),
                (0, slice(None), slice(None), i), (Ellipsis, i), (None, i, None, j), (slice(None), i, None, j),
                (i, Ellipsis, j), (slice(1, None), [1], [[2]], slice(None, None, -2))]:
        got = x[key]
        assert got.shape == a[key].shape, key
        np.testing.assert_array_equal(hx.to_numpy(got), a[key])


def test_size_one_array_keeps_its_axis_and_zero_d_bools():
    a = np.arange(12.0).reshape(3, 4)
    x = hx.asarray(a)
    assert x[[1]].shape == (1, 4) and x[:, np.array([2])].shape == (3, 1)
    assert x[hx.asarray(np.array([2]))].shape == (1, 4)
    assert x[True].shape == (1, 3, 4) and x[False].shape == (0, 3, 4)
    assert x[np.bool_(True), 0].shape == (1, 4)
    assert x[hx.asarray(True)].shape == (1, 3, 4)
    np.testing.assert_array_equal(hx.to_numpy(x[..., True]), a[..., True])
    x[False] = 5.0
    np.testing.assert_array_equal(hx.to_numpy(x), a)
    x[True] = 5.0
    assert (hx.to_numpy(x) == 5.0).all()


def test_masks():
    a = np.arange(24.0).reshape(2, 3, 4)
    x = hx.asarray(a)
    for key in [a > 7, (a > 7)[:, :, 0], ((a > 7)[:, :, 0], Ellipsis), (slice(None), (a > 5)[0]),
                (0, a[0, :, 0] > 3), (a[:, 0, 0] > 3, slice(None), 1), (1, a[0] % 2 == 0), (a > 100),
                np.zeros((0,), bool)]:
        got = x[key if not isinstance(key, np.ndarray) else hx.asarray(key)]
        assert got.shape == a[key].shape, key
        np.testing.assert_array_equal(hx.to_numpy(got), a[key])
        y, b = hx.asarray(a), a.copy()
        b[key] = -1.0
        y[key] = -1.0
        np.testing.assert_array_equal(hx.to_numpy(y), b)
    m = a > 10
    b = a.copy()
    b[m] = np.arange(m.sum()) * 10.0
    y = hx.asarray(a)
    y[hx.asarray(m)] = hx.asarray(np.arange(m.sum()) * 10.0)
    np.testing.assert_array_equal(hx.to_numpy(y), b)


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_every_dtype_and_index_dtype(dtype):
    a = values_of((5, 6), dtype, seed=3)
    x = hx.asarray(a)
    for it in INDEX_DTYPES:
        idx = np.array([4, 0, 2, 2], dtype=it)
        got = x[hx.asarray(idx)]
        assert got.dtype == a.dtype
        np.testing.assert_array_equal(hx.to_numpy(got), a[idx])
    mask = values_of((5, 6), np.int8, seed=4) > 0
    np.testing.assert_array_equal(hx.to_numpy(x[hx.asarray(mask)]), a[mask])
    np.testing.assert_array_equal(hx.to_numpy(hx.take(x, hx.asarray([5, 0]), axis=1)), np.take(a, [5, 0], axis=1))
    b = a.copy()
    b[[1, 3], 2:4] = a[0, :2]
    y = hx.asarray(a)
    y[[1, 3], 2:4] = hx.asarray(a[0, :2])
    np.testing.assert_array_equal(hx.to_numpy(y), b)
    b[mask] = a[0, 0]
    y[hx.asarray(mask)] = hx.asarray(a)[0, 0]
    np.testing.assert_array_equal(hx.to_numpy(y), b)


def test_bfloat16_values_round_trip_bit_for_bit():
    a = np.array([1.5, -0.0, np.nan, np.inf, 3.0e38], dtype=ml_dtypes.bfloat16)
    got = hx.to_numpy(hx.asarray(a)[[4, 1, 2, 0, 3]])
    assert got.dtype == a.dtype
    np.testing.assert_array_equal(got.view(np.uint16), a[[4, 1, 2, 0, 3]].view(np.uint16))


def test_large_gathers_and_compress_cross_the_parallel_blocks():
    rng = np.random.default_rng(7)
    n = 300_001
    a = rng.standard_normal(n).astype(np.float32)
    idx = rng.integers(-n, n, n // 2)
    mask = rng.random(n) < 0.3
    x = hx.asarray(a)
    np.testing.assert_array_equal(hx.to_numpy(x[hx.asarray(idx)]), a[idx])
    np.testing.assert_array_equal(hx.to_numpy(x[hx.asarray(mask)]), a[mask])
    np.testing.assert_array_equal(hx.to_numpy(x[::-1][hx.asarray(mask)]), a[::-1][mask])
    mask[-70_000:] = False  # whole blocks without a set element, and a short last one
    mask[:5] = True
    np.testing.assert_array_equal(hx.to_numpy(x[hx.asarray(mask)]), a[mask])
    m2 = rng.random((301, 1000)) < 0.5
    a2 = rng.standard_normal((301, 1000, 2))
    np.testing.assert_array_equal(hx.to_numpy(hx.asarray(a2)[hx.asarray(m2)]), a2[m2])


def test_repeated_indices_last_write_wins():
    x = hx.zeros(4, dtype=np.int64)
    x[[1, 1, 3, 1]] = hx.asarray(np.array([5, 6, 7, 8]))
    np.testing.assert_array_equal(hx.to_numpy(x), [0, 8, 0, 7])


def test_assignment_reads_before_it_writes():
    a = np.array([3, 1, 0, 2])
    x = hx.asarray(a)
    x[x] = x[::-1]  # the values and the index overlap the target
    b = a.copy()
    b[b.copy()] = a[::-1].copy()
    np.testing.assert_array_equal(hx.to_numpy(x), b)


def test_errors_name_the_problem_and_change_nothing():
    a = np.arange(12.0).reshape(3, 4)
    x = hx.asarray(a)
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        x[[0, 3]]
    with pytest.raises(IndexError, match="index -5 is out of bounds for axis 1 with size 4"):
        x[:, hx.asarray(np.array([-5, 0]))]
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 1 with size 4"):
        x[1, [9]] = 1.0
    with pytest.raises(IndexError, match="integer \\(or boolean\\) type, got float64"):
        x[np.array([1.0])]
    with pytest.raises(IndexError, match="integer \\(or boolean\\) type, got float32"):
        x[hx.asarray(np.array([1.0], np.float32))] = 2.0
    with pytest.raises(IndexError, match="boolean index did not match indexed array along axis 0; size of axis "
                                         "is 3 but size of corresponding boolean axis is 2"):
        x[np.array([True, False])]
    with pytest.raises(IndexError, match="along axis 1"):
        x[:, hx.asarray(np.ones(3, bool))] = 0.0
    with pytest.raises(IndexError, match="too many indices"):
        x[[0], [0], [0]]
    with pytest.raises(IndexError, match="could not be broadcast together"):
        x[[0, 1], [0, 1, 2]]
    with pytest.raises(ValueError, match="could not broadcast"):
        x[[0, 1]] = np.ones(3)
    with pytest.raises(IndexError, match="more than the 64 allowed"):
        x[np.zeros((1,) * 64, np.intp)]
    with pytest.raises(TypeError, match="bfp16"):
        hx.zeros((2, 8), dtype="bfp16")[[0]]
    np.testing.assert_array_equal(hx.to_numpy(x), a)


def test_asynchronous_use():
    # The index comes from a device operation not waited for; the gather feeds another without a host wait.
    rng = np.random.default_rng(1)
    a = rng.standard_normal(50_000).astype(np.float32)
    x = hx.asarray(a)
    order = hx.argsort(x)
    y = hx.add(x[order], 1.0)
    z = hx.multiply(hx.take(x, order, mode="wrap"), 2.0)
    w = x[x > 0.5]
    v = hx.zeros(10, dtype=np.float32)
    v[hx.asarray(np.arange(10))] = x[order][:10]
    np.testing.assert_array_equal(hx.to_numpy(y), np.sort(a) + np.float32(1.0))
    np.testing.assert_array_equal(hx.to_numpy(z), np.sort(a) * np.float32(2.0))
    np.testing.assert_array_equal(hx.to_numpy(w), a[a > 0.5])
    np.testing.assert_array_equal(hx.to_numpy(v), np.sort(a)[:10])


@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5), data=st.data(),
       mode=st.sampled_from(["raise", "wrap", "clip"]))
def test_take_matches_numpy(shape, data, mode):
    a = values_of(shape, np.float64)
    axis = data.draw(st.none() | st.integers(-len(shape), len(shape) - 1))
    n = a.size if axis is None else shape[axis]
    span = n if mode == "raise" else 3 * n
    idx = data.draw(hnp.arrays(np.int64, hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4),
                               elements=st.integers(-span, span - 1)))
    got = hx.take(hx.asarray(a), hx.asarray(idx), axis=axis, mode=mode)
    want = np.take(a, idx, axis=axis, mode=mode)
    assert got.shape == want.shape
    np.testing.assert_array_equal(hx.to_numpy(got), want)
    via = np.take(hx.asarray(a), idx, axis=axis, mode=mode)
    assert isinstance(via, hx.DeviceArray)
    np.testing.assert_array_equal(hx.to_numpy(via), want)


def test_take_errors():
    x = hx.asarray(np.arange(6.0).reshape(2, 3))
    with pytest.raises(IndexError, match="take: index 3 is out of bounds for axis 1 with size 3"):
        hx.take(x, [3], axis=1)
    with pytest.raises(ValueError, match="take: mode must be"):
        hx.take(x, [0], axis=0, mode="bad")
    with pytest.raises(TypeError, match="take: indices must be integers"):
        hx.take(x, [0.5], axis=0)
    with pytest.raises(np.exceptions.AxisError, match="take"):
        hx.take(x, [0], axis=2)
    with pytest.raises(IndexError, match="non-empty take from an empty axis"):
        hx.take(hx.zeros((0,)), [1], mode="wrap")
    with pytest.raises(TypeError, match="out="):
        np.take(x, [0], out=x)


@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5), data=st.data())
def test_take_along_axis_matches_numpy(shape, data):
    a = values_of(shape, np.int16, seed=len(shape))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    ishape = list(shape)
    ishape[axis] = data.draw(st.integers(0, 4))
    for d in range(len(shape)):
        if d != axis % len(shape) and data.draw(st.booleans()):
            ishape[d] = 1
    idx = data.draw(hnp.arrays(np.int64, tuple(ishape), elements=st.integers(-shape[axis], shape[axis] - 1)))
    want = np.take_along_axis(a, idx, axis=axis)
    got = hx.take_along_axis(hx.asarray(a), hx.asarray(idx), axis=axis)
    assert got.shape == want.shape
    np.testing.assert_array_equal(hx.to_numpy(got), want)
    np.testing.assert_array_equal(hx.to_numpy(np.take_along_axis(hx.asarray(a), idx, axis)), want)


def test_take_along_axis_sorts_with_argsort_and_checks():
    a = np.random.default_rng(2).standard_normal((4, 7))
    x = hx.asarray(a)
    np.testing.assert_array_equal(hx.to_numpy(hx.take_along_axis(x, hx.argsort(x, axis=0), axis=0)), np.sort(a, 0))
    np.testing.assert_array_equal(hx.to_numpy(np.take_along_axis(x.reshape(-1), np.array([3, 0]), None)),
                                  a.reshape(-1)[[3, 0]])
    with pytest.raises(ValueError, match="same number of dimensions"):
        hx.take_along_axis(x, hx.asarray(np.array([0])), axis=0)
    with pytest.raises(IndexError, match="take_along_axis: index 7 is out of bounds for axis 1 with size 7"):
        hx.take_along_axis(x, hx.asarray(np.full((4, 1), 7)), axis=1)


SET_DTYPES = [d for d in ALL]


@given(dtype=st.sampled_from(SET_DTYPES), n=st.integers(0, 30), m=st.integers(0, 10), seed=st.integers(0, 2**32 - 1),
       invert=st.booleans())
def test_isin_matches_numpy(dtype, n, m, seed, invert):
    rng = np.random.default_rng(seed)
    pool = np.array([0.0, -0.0, 1.0, 2.0, 3.0, np.inf, -np.inf, np.nan, 7.0])
    if dtype.kind in "iub":
        pool = np.array([0, 1, 2, 3, 7, 100])
    a = pool[rng.integers(0, len(pool), n)].astype(dtype)
    b = pool[rng.integers(0, len(pool), m)].astype(dtype)
    if dtype.kind == "c":
        a.imag = pool[rng.integers(0, len(pool), n)]
        b.imag = pool[rng.integers(0, len(pool), m)]
    ra, rb = (a.astype(np.float32), b.astype(np.float32)) if dtype == ml_dtypes.bfloat16 else (a, b)
    got = hx.isin(hx.asarray(a), hx.asarray(b), invert=invert)
    assert got.dtype == np.bool_ and got.shape == a.shape
    np.testing.assert_array_equal(hx.to_numpy(got), np.isin(ra, rb, invert=invert))


def test_isin_shapes_promotion_scalars_and_dispatch():
    a = np.array([[1, 2], [3, 300]], dtype=np.int16)
    b = np.array([2.0, 300.0, 0.5])
    got = hx.isin(hx.asarray(a), hx.asarray(b))
    np.testing.assert_array_equal(hx.to_numpy(got), np.isin(a, b))
    f = hx.asarray(np.array([0.1, 0.2], np.float32))
    np.testing.assert_array_equal(hx.to_numpy(hx.isin(f, 0.1)), [True, False])  # 0.1 taken as float32
    np.testing.assert_array_equal(hx.to_numpy(hx.isin(300, hx.asarray(a))), True)
    np.testing.assert_array_equal(hx.to_numpy(hx.isin(hx.asarray(a), 1000)), np.zeros((2, 2), bool))
    via = np.isin(hx.asarray(a), hx.asarray(b), invert=True)
    assert isinstance(via, hx.DeviceArray)
    np.testing.assert_array_equal(hx.to_numpy(via), np.isin(a, b, invert=True))
    with pytest.raises(TypeError, match="isin: x1 and x2 cannot both be scalars"):
        hx.isin(1, 2)
    with pytest.raises(TypeError, match="isin: invert must be a bool"):
        hx.isin(f, f, invert="yes")


def test_placements_and_runtimes(rt):
    a = np.arange(40.0).reshape(5, 8)
    for placement in (hx.GpuLocal(), hx.HostVisible(), hx.Shared(rt.npu())):
        x = hx.asarray(a, placement=placement)
        # The index in other memory of the same runtime than the array's.
        idx = hx.asarray(np.array([4, 0, 4]), placement=hx.HostVisible() if placement == hx.GpuLocal() else
                         hx.GpuLocal() if placement == hx.HostVisible() else placement)
        got = x[idx, ::-3]
        assert got.placement == placement
        np.testing.assert_array_equal(hx.to_numpy(got), a[[4, 0, 4], ::-3])
        m = hx.asarray(a > 20, placement=placement)
        np.testing.assert_array_equal(hx.to_numpy(x[m]), a[a > 20])
        x[m] = 0.0
        np.testing.assert_array_equal(hx.to_numpy(x), np.where(a > 20, 0.0, a))
    for placement in (hx.GpuLocal(), hx.HostVisible()):  # on the default runtime
        got = hx.asarray(a, placement=placement)[hx.asarray(np.array([1]), placement=hx.GpuLocal())]
        np.testing.assert_array_equal(hx.to_numpy(got), a[[1]])
    x = hx.asarray(a, placement=hx.NpuLocal(rt.npu()))
    with pytest.raises(hx.UnsupportedError, match="getitem"):
        x[[0]]
    other = hx.Runtime()
    with pytest.raises(ValueError, match="another runtime"):
        hx.asarray(a, placement=hx.Shared(rt.npu()))[hx.asarray(np.array([0]), placement=hx.Shared(other.npu()))]


def test_a_failed_index_producer_raises_at_the_bounds_check():
    x = hx.asarray(np.arange(4.0))
    bad = hx.power(hx.asarray(np.array([2, 1])), -1)  # fails on the lane: integers to negative powers
    # Failed before the call (its storage poisoned) or while the bounds check waits for it.
    with pytest.raises((hx.ExecutionError, hx.DeviceLostError)):
        x[bad]
    np.testing.assert_array_equal(hx.to_numpy(x), np.arange(4.0))


def test_read_only_target_is_refused():
    host = np.arange(4.0)
    host.setflags(write=False)
    x = hx.from_dlpack(host)
    with pytest.raises(ValueError, match="read-only|readonly|writable"):
        x[[0, 1]] = 5.0
    np.testing.assert_array_equal(hx.to_numpy(x), np.arange(4.0))
