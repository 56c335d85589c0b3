"""DeviceArray basics: attributes, creation, conversion, views and indexing, against NumPy."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import hrxarray as hx
from hrxarray import numerics

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = [np.dtype(n) for n in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                "uint64", "float16", "float32", "float64")] + [BF16]
PLACEMENTS = ["GpuLocal", "HostVisible", "NpuLocal", "Shared"]


def default_placement(name):
    rt = hx.default_runtime()
    return {"GpuLocal": hx.GpuLocal(), "HostVisible": hx.HostVisible(), "NpuLocal": hx.NpuLocal(rt.npu()),
            "Shared": hx.Shared(rt.npu())}[name]


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100), shape, endpoint=True).astype(dtype)
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


def same(a, b):
    """Bit-for-bit equal arrays of one dtype and shape (NaNs compared by pattern)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.tobytes() == np.ascontiguousarray(b).tobytes()


# --- attributes and creation -------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test01_asarray_roundtrip_every_dtype(dtype):
    host = sample((3, 4), dtype)
    x = hx.asarray(host)
    assert isinstance(x, hx.DeviceArray)
    assert x.shape == (3, 4) and x.ndim == 2 and x.size == 12
    assert x.dtype == dtype
    assert x.nbytes == 12 * dtype.itemsize and x.itemsize == dtype.itemsize
    assert x.strides == host.strides
    assert x.placement == hx.Shared(hx.npu())
    assert x.device == x.placement  # the array API's device is the placement
    assert isinstance(x.buffer, hx.Buffer) and x.buffer.nbytes >= x.nbytes
    same(hx.to_numpy(x), host)


@pytest.mark.parametrize("name", PLACEMENTS)
def test02_asarray_into_each_placement(name):
    p = default_placement(name)
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = hx.asarray(host, placement=p)
    assert x.placement == p
    same(hx.to_numpy(x), host)
    assert x.device == p


def test03_gpu_local_upload_and_download_use_the_transfer_lanes():
    rt = hx.default_runtime()
    rt.start_trace(64)
    x = hx.asarray(np.arange(8.0), placement=hx.GpuLocal())
    out = hx.to_numpy(x)
    lanes = [e["lane"] for e in rt.finish_trace().events]
    assert lanes == ["upload", "download"]
    same(out, np.arange(8.0))


@pytest.mark.parametrize("obj, dtype", [
    (3, None), (2.5, None), (True, None), ([1, 2, 3], None), ([[1.5, 2], [3, 4]], None),
    ([1, 2], np.float16), ((1.0, -2.0), BF16), ([], None), ([[True, False]], np.int8),
    (np.float32(1.5), None), (np.arange(5, dtype=np.uint16)[::-2], None),
])
def test04_asarray_of_python_and_numpy_data_matches_numpy(obj, dtype):
    x = hx.asarray(obj, dtype=dtype)
    same(hx.to_numpy(x), np.asarray(obj, dtype=dtype))


def test05_asarray_of_a_device_array_copies_only_when_asked():
    x = hx.asarray([1.0, 2.0])
    assert hx.asarray(x) is x
    y = hx.asarray(x, copy=True)
    assert y is not x and y._base_id != x._base_id
    z = hx.asarray(x, dtype=np.int32)
    same(hx.to_numpy(z), np.array([1, 2], np.int32))
    with pytest.raises(ValueError, match="copy"):
        hx.asarray(x, dtype=np.int32, copy=False)
    with pytest.raises(ValueError, match="copy"):
        hx.asarray(np.ones(3), copy=False)


def test06_creation_functions_match_numpy():
    same(hx.to_numpy(hx.zeros((2, 3))), np.zeros((2, 3)))
    same(hx.to_numpy(hx.empty(4, np.int8)), np.zeros(4, np.int8))  # allocations are zero-filled
    same(hx.to_numpy(hx.ones((2, 2), np.int16)), np.ones((2, 2), np.int16))
    same(hx.to_numpy(hx.full(3, 7)), np.full(3, 7))
    same(hx.to_numpy(hx.full(3, 1.5)), np.full(3, 1.5))
    same(hx.to_numpy(hx.full((2, 2), True)), np.full((2, 2), True))
    same(hx.to_numpy(hx.full(5, 0.1, BF16)), np.full(5, 0.1, BF16))
    same(hx.to_numpy(hx.arange(10)), np.arange(10))
    same(hx.to_numpy(hx.arange(1, 2, 0.1)), np.arange(1, 2, 0.1))
    same(hx.to_numpy(hx.arange(0, 5, 1, np.float32)), np.arange(0, 5, 1, np.float32))
    same(hx.to_numpy(hx.linspace(-1, 1, 7)), np.linspace(-1, 1, 7))
    same(hx.to_numpy(hx.linspace(0, 1, 4, endpoint=False, dtype=np.float32)),
         np.linspace(0, 1, 4, endpoint=False, dtype=np.float32))
    x = hx.asarray(np.arange(6, dtype=np.uint8).reshape(2, 3), placement=hx.HostVisible())
    for fn, ref in [(hx.zeros_like, np.zeros_like), (hx.ones_like, np.ones_like), (hx.empty_like, np.zeros_like)]:
        y = fn(x)
        assert y.placement == x.placement and y.dtype == x.dtype
        same(hx.to_numpy(y), ref(np.arange(6, dtype=np.uint8).reshape(2, 3)))
    y = hx.full_like(x, 9, dtype=np.float64, placement=hx.GpuLocal())
    assert y.placement == hx.GpuLocal()
    same(hx.to_numpy(y), np.full((2, 3), 9.0))


def test07_creation_errors():
    with pytest.raises(ValueError, match="negative dimensions"):
        hx.zeros((2, -1))
    with pytest.raises(TypeError, match="not supported|not a dtype"):
        hx.zeros(3, dtype=np.longdouble)
    with pytest.raises(TypeError, match="cannot convert"):
        hx.asarray(np.array(["a"]))
    with pytest.raises(TypeError, match="shape"):
        hx.zeros("abc")
    with pytest.raises(TypeError, match="placement"):
        hx.zeros(3, placement="npu")


def test08_zero_size_and_zero_d_arrays_stay_device_arrays():
    e = hx.zeros((0, 3), np.float32)
    assert e.shape == (0, 3) and e.size == 0 and e.nbytes == 0
    same(hx.to_numpy(e), np.zeros((0, 3), np.float32))
    s = hx.asarray(5.0)
    assert s.shape == () and s.ndim == 0
    r = s + 1
    assert isinstance(r, hx.DeviceArray) and r.shape == ()
    assert float(r) == 6.0
    with pytest.raises(TypeError):
        len(s)


# --- views and indexing -------------------------------------------------------------------

BASIC_KEYS = [
    0, -1, slice(None), slice(1, None), slice(None, None, -1), (slice(None), 1), (Ellipsis, 0),
    (None, slice(None, None, 2)), (1, slice(3, 0, -1), None), (Ellipsis,), (slice(5, 2),), (0, Ellipsis, None),
]


@pytest.mark.parametrize("key", BASIC_KEYS, ids=repr)
def test09_basic_indexing_matches_numpy_and_shares_memory(key):
    host = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    x = hx.asarray(host)
    v = x[key]
    same(hx.to_numpy(v), host[key])
    assert v._base_id == x._base_id
    assert v.strides == host[key].strides


@st.composite
def arrays_and_keys(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=5))
    key = draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    return shape, key


@given(arrays_and_keys())
def test10_hypothesis_views_of_views(case):
    shape, key = case
    host = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    x = hx.asarray(host)
    same(hx.to_numpy(x[key]), host[key])
    if host[key].ndim:
        same(hx.to_numpy(x[key][::-1]), host[key][::-1])


def test11_index_errors():
    x = hx.asarray(np.zeros((2, 3)))
    with pytest.raises(IndexError, match="out of bounds"):
        x[2]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="index 2 is out of bounds for axis 0 with size 2"):
        x[[0, 2]]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]
    with pytest.raises(IndexError):
        x[1.5]


def test12_setitem_writes_through_views():
    host = np.zeros((3, 4), np.float32)
    x = hx.asarray(host)
    x[1] = 5
    x[:, 2] = hx.asarray(np.array([1, 2, 3], np.float32))
    x[0, ::2] = [7, 8]
    x[2, 3] = np.float32(9.5)
    host[1] = 5
    host[:, 2] = [1, 2, 3]
    host[0, ::2] = [7, 8]
    host[2, 3] = 9.5
    same(hx.to_numpy(x), host)
    y = hx.asarray(np.arange(10))
    y[1:] = y[:-1]  # overlapping: NumPy reads everything first
    same(hx.to_numpy(y), np.concatenate([[0], np.arange(9)]))


@pytest.mark.parametrize("shape, new", [((2, 3, 4), (6, 4)), ((2, 3, 4), (-1,)), ((12,), (3, -1)), ((0, 3), (3, 0)),
                                         ((1,), ())])
def test13_reshape_matches_numpy(shape, new):
    host = np.arange(int(np.prod(shape)), dtype=np.int16).reshape(shape)
    x = hx.asarray(host)
    r = x.reshape(new)
    same(hx.to_numpy(r), host.reshape(new))
    assert r._base_id == x._base_id  # contiguous: a view
    same(hx.to_numpy(hx.reshape(x, new)), host.reshape(new))


def test14_reshape_of_a_strided_view_copies_and_errors_name_the_shapes():
    host = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = hx.asarray(host)
    v = x[:, ::2]
    r = v.reshape(-1)
    same(hx.to_numpy(r), host[:, ::2].reshape(-1))
    assert r._base_id != x._base_id
    with pytest.raises(ValueError, match="copy"):
        v.reshape(-1, copy=False)
    with pytest.raises(ValueError, match="cannot reshape array of size 24 into shape"):
        x.reshape(5, 5)
    with pytest.raises(ValueError, match="one unknown"):
        x.reshape(-1, -1)


def test15_transpose_T_and_axes():
    host = np.arange(24, dtype=np.uint32).reshape(2, 3, 4)
    x = hx.asarray(host)
    same(hx.to_numpy(x.T), host.T)
    same(hx.to_numpy(x.transpose(1, 0, 2)), host.transpose(1, 0, 2))
    same(hx.to_numpy(hx.transpose(x, (2, 0, 1))), np.transpose(host, (2, 0, 1)))
    same(hx.to_numpy(hx.permute_dims(x, (0, 2, 1))), np.transpose(host, (0, 2, 1)))
    same(hx.to_numpy(x[0].T), host[0].T)
    same(hx.to_numpy(x.mT), np.swapaxes(host, -1, -2))
    with pytest.raises(ValueError, match="axes"):
        x.transpose(0, 0, 1)


def test16_squeeze_expand_broadcast_to():
    host = np.arange(6.0).reshape(1, 6, 1)
    x = hx.asarray(host)
    same(hx.to_numpy(hx.squeeze(x)), np.squeeze(host))
    same(hx.to_numpy(hx.squeeze(x, 0)), np.squeeze(host, 0))
    same(hx.to_numpy(hx.expand_dims(x, 1)), np.expand_dims(host, 1))
    b = hx.broadcast_to(hx.asarray(np.arange(3)), (4, 3))
    same(hx.to_numpy(b), np.broadcast_to(np.arange(3), (4, 3)))
    with pytest.raises(ValueError):
        hx.squeeze(x, 1)
    with pytest.raises(ValueError):
        hx.broadcast_to(hx.asarray(np.arange(3)), (4, 2))


@pytest.mark.parametrize("src", DTYPES, ids=str)
@pytest.mark.parametrize("dst", [np.dtype("int32"), np.dtype("float32"), np.dtype("uint8"), BF16,
                                 np.dtype("float16"), np.dtype("bool"), np.dtype("float64")], ids=str)
def test17_astype_matches_numpy(src, dst):
    host = sample((5, 3), src, seed=3)
    if (src.kind == "f" or src == BF16) and dst.kind in "iub" and dst != np.bool_:
        host = np.clip(host, 0, 100)  # out-of-range float -> int casts are unspecified
    x = hx.asarray(host)
    with np.errstate(all="ignore"):
        ref = host.astype(dst)
    same(hx.to_numpy(x.astype(dst)), ref)
    same(hx.to_numpy(hx.astype(x, dst)), ref)


def test18_copy_to_and_view():
    host = np.arange(8, dtype=np.int32)
    x = hx.asarray(host)
    c = x.copy()
    assert c._base_id != x._base_id
    same(hx.to_numpy(c), host)
    assert x.to(x.placement) is x
    for name in PLACEMENTS:
        p = default_placement(name)
        y = x.to(p)
        assert y.placement == p
        same(hx.to_numpy(y), host)
    u = x.view(np.float32)
    same(hx.to_numpy(u), host.view(np.float32))
    with pytest.raises(ValueError, match="item size"):
        x.view(np.int8)


def test19_npu_local_and_gpu_local_copies_need_an_engine_that_binds_both():
    n = hx.asarray(np.arange(4.0), placement=hx.NpuLocal(hx.npu()))
    with pytest.raises(hx.UnsupportedError, match="copy through Shared"):
        n.to(hx.GpuLocal())
    same(hx.to_numpy(n.to(hx.Shared(hx.npu())).to(hx.GpuLocal())), np.arange(4.0))


# --- bfp16 arrays ----------------------------------------------------------------------------


def test20_bfp16_astype_blocks_and_host_access_match_numerics():
    rng = np.random.default_rng(7)
    host = (rng.standard_normal((3, 16)) * 4).astype(np.float32)
    x = hx.asarray(host)
    q = x.astype(hx.bfp16)
    assert q.dtype is hx.bfp16 and q.shape == (3, 16) and q.nbytes == 3 * 2 * 9
    same(hx.to_numpy(q.blocks()), numerics.bfp16_encode(host))
    same(hx.to_numpy(q), numerics.bfp16_quantize(host))
    same(hx.to_numpy(q.astype(np.float32)), numerics.bfp16_quantize(host))
    same(hx.to_numpy(hx.asarray(host, dtype=hx.bfp16)), numerics.bfp16_quantize(host))
    same(hx.to_numpy(q[1]), numerics.bfp16_quantize(host)[1])
    with q.map_read() as v:
        same(v, numerics.bfp16_quantize(host))


def test21_bfp16_refusals():
    with pytest.raises(ValueError, match="multiple of 8"):
        hx.zeros((2, 5), hx.bfp16)
    with pytest.raises(ValueError, match="NaN or Inf"):
        hx.asarray(np.full(8, np.inf, np.float32), dtype=hx.bfp16)
    q = hx.zeros((2, 16), hx.bfp16)
    with pytest.raises(IndexError, match="inside its blocks"):
        q[0, 3]
    with pytest.raises(TypeError, match="block storage"):
        q + 1
    with pytest.raises(BufferError, match="bfp16"):
        q.__dlpack__()
    with pytest.raises(TypeError, match="blocks"):
        hx.zeros(8).blocks()


# --- printing and conversions ------------------------------------------------------------------


def test22_repr_shows_data_when_ready_and_str_matches_numpy():
    x = hx.asarray(np.array([1.5, 2.0], np.float32))
    assert repr(x) == "DeviceArray([1.5, 2. ], dtype=float32, placement=Shared(npu:0))"
    assert str(x) == str(np.array([1.5, 2.0], np.float32))
    assert "bfloat16" in repr(x.astype(hx.bfloat16).block_until_ready())


def test23_scalar_conversions():
    assert bool(hx.asarray([1])) is True
    assert int(hx.asarray(7)) == 7
    assert float(hx.asarray([2.5])) == 2.5
    assert hx.asarray(3).item() == 3
    assert [int(v) for v in hx.asarray([4, 5, 6])] == [4, 5, 6]
    assert list(range(10))[hx.asarray(3)] == 3
    with pytest.raises(ValueError, match="ambiguous"):
        bool(hx.asarray([1, 2]))
    with pytest.raises(TypeError):
        float(hx.asarray([1.0, 2.0]))
    with pytest.raises(TypeError):
        hash(hx.asarray([1]))
