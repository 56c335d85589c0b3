"""Dask arrays of DeviceArray blocks on Dask's synchronous scheduler (issue 17; scale-out.md §6.13).

Every operation is checked three ways against the same operation on NumPy
blocks: the block type of the result's meta and of what compute delivers, the
dtype Dask declares and the one delivered, and the values.
"""

import os
import pickle
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed_protocol = pytest.importorskip("distributed.protocol")
ml_dtypes = pytest.importorskip("ml_dtypes")

import hrxarray as hx  # noqa: E402
import hrxarray.dask as hd  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)
TIMEOUT = 30


@pytest.fixture(autouse=True)
def sync_scheduler():
    with dask.config.set(scheduler="sync"):
        yield


def host(x):
    return hx.to_numpy(x) if isinstance(x, hx.DeviceArray) else np.asarray(x)


def blocks(a, chunks=4):
    """A Dask array of DeviceArray blocks holding `a`, and the same on NumPy blocks."""
    return da.from_array(hx.asarray(a), chunks=chunks, asarray=False), da.from_array(a, chunks=chunks)


# The operations of scale-out.md §2 that hrxarray's namespace covers today.
OPS = {
    "add": lambda x: x + 1,
    "multiply": lambda x: x * x,
    "subtract": lambda x: x - x.T,
    "power": lambda x: x**2,
    "sin": np.sin,
    "sqrt": lambda x: np.sqrt(abs(x)),
    "isnan": da.isnan,
    "invert": lambda x: ~(x > 2),
    "greater": lambda x: x > 10,
    "where": lambda x: da.where(x > 3, x, 0),
    "sum": lambda x: x.sum(),
    "sum_axis": lambda x: x.sum(axis=0),
    "np_sum": np.sum,
    "nansum": da.nansum,
    "mean": lambda x: x.mean(),
    "mean_axis": lambda x: x.mean(axis=1),
    "nanmean": da.nanmean,
    "std": lambda x: x.std(),
    "var_axis": lambda x: x.var(axis=0),
    "max": lambda x: x.max(),
    "min_axis": lambda x: x.min(axis=1),
    "argmax": lambda x: x.argmax(),
    "argmin_axis": lambda x: x.argmin(axis=1),
    "cumsum": lambda x: x.cumsum(axis=0),
    "diff": da.diff,
    "matmul": lambda x: x @ x,
    "dot": lambda x: da.dot(x, x),
    "tensordot": lambda x: da.tensordot(x, x, axes=1),
    "einsum": lambda x: da.einsum("ij,jk->ik", x, x),
    "transpose": lambda x: x.T,
    "rechunk": lambda x: x.rechunk(2),
    "concatenate": lambda x: da.concatenate([x, x]),
    "stack": lambda x: da.stack([x, x]),
    "vstack": lambda x: da.vstack([x, x]),
    "slice": lambda x: x[1:5, ::2],
    "fancy_index": lambda x: x[[0, 3, 5]],
    "broadcast_to": lambda x: da.broadcast_to(x[0], (3, 8)),
    "map_blocks": lambda x: x.map_blocks(lambda b: b * 2),
    "zeros_like": da.zeros_like,
    "ones_like": da.ones_like,
    "astype": lambda x: x.astype(np.float64),
    "reshape_merge": lambda x: x.reshape(64),
    "mix_dask_ones": lambda x: da.ones((8, 8), chunks=4) + x,
    "unique": da.unique,
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_operation_keeps_device_blocks_and_declared_dtypes(name):
    op = OPS[name]
    a = np.arange(64, dtype=np.float32).reshape(8, 8) - 20
    x, ref_x = blocks(a)
    y, ref = op(x), op(ref_x)
    assert isinstance(y._meta, hx.DeviceArray), type(y._meta)
    got = y.compute()
    want = ref.compute()
    assert isinstance(got, hx.DeviceArray), type(got)
    assert y.dtype == got.dtype == want.dtype
    assert got.shape == want.shape
    np.testing.assert_allclose(host(got), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["add", "multiply", "sum_axis", "max", "transpose", "concatenate", "astype",
                                  "slice", "where"])
def test_bfloat16_blocks_keep_their_dtype(name):
    op = OPS[name]
    a = (np.arange(64, dtype=np.float32).reshape(8, 8) / 8).astype(BF16)
    x, ref_x = blocks(a)
    y = op(x)
    got = y.compute()
    assert isinstance(got, hx.DeviceArray)
    assert y.dtype == got.dtype == op(ref_x).dtype
    np.testing.assert_allclose(host(got).astype(np.float64), op(ref_x).compute().astype(np.float64), rtol=1e-2)


def test_full_reductions_are_zero_d_device_arrays_and_metas():
    x, _ = blocks(np.ones((8, 8), np.float32))
    for y in (x.sum(), x.max(), x.mean(), x.any()):
        assert isinstance(y._meta, hx.DeviceArray) and y._meta.ndim == 0
        r = y.compute()
        assert isinstance(r, hx.DeviceArray) and r.shape == ()
    assert isinstance(hx.sum(hx.ones((2, 2))), hx.DeviceArray) and hx.sum(hx.ones((2, 2))).shape == ()


def test_meta_operations_on_empty_arrays():
    # What meta_from_array does to a chunk (scale-out.md §1.1).
    x = hx.ones((3, 4), np.float32)
    e = x[0:0, 0:0]
    assert e.shape == (0, 0) and isinstance(e, hx.DeviceArray)
    assert x[None].shape == (1, 3, 4) and e[..., None].shape == (0, 0, 1)
    assert e.astype(np.float64).dtype == np.float64 and e.astype(np.float64).shape == (0, 0)
    assert e.reshape((0,)).shape == (0,) and e.reshape((0, 0, 0)).shape == (0, 0, 0)
    assert hx.sum(e, axis=0, keepdims=True).shape == (1, 0)
    assert hx.zeros((0,), BF16).dtype == BF16


def test_result_dtype_is_numpys_result_type():
    for a_dt, b_dt in [(np.float32, np.float64), (np.int32, np.float32), (np.int8, np.uint8), (BF16, np.float32)]:
        x = da.from_array(hx.ones((4,), a_dt), chunks=2, asarray=False)
        y = da.from_array(hx.ones((4,), b_dt), chunks=2, asarray=False)
        z = x + y
        assert z.dtype == np.result_type(a_dt, b_dt) == z.compute().dtype


def test_protocols_return_not_implemented_for_dask_arrays():
    d = hx.ones((4, 4))
    x = da.ones((4, 4), chunks=2)
    assert d.__array_ufunc__(np.add, "__call__", d, x) is NotImplemented
    assert d.__array_function__(np.concatenate, (hx.DeviceArray, da.Array), ([d, x],), {}) is NotImplemented
    # So the Dask array handles the mixed operation, in either order, lazily.
    for mixed in (d + x, x + d, np.add(d, x), np.multiply(x, d), d @ x):
        assert isinstance(mixed, da.Array) and isinstance(mixed._meta, hx.DeviceArray)
    np.testing.assert_array_equal(host((d + x).compute()), np.full((4, 4), 2.0))
    assert hx.DeviceArray.__array_priority__ > 0


def test_like_creates_device_arrays_where_the_like_array_lives():
    like = hx.zeros((0,), np.float32, placement=hx.HostVisible())
    for made in (np.asarray([1, 2], like=like), np.arange(0, 4, 1, np.int64, like=like), np.array([1.0], dtype=np.float32, ndmin=2, like=like),
                 np.arange(3, like=like), np.zeros(2, like=like), np.full(2, 7, like=like)):
        assert isinstance(made, hx.DeviceArray) and made.placement == hx.HostVisible()
    assert np.array([1.0], ndmin=2, like=like).shape == (1, 1)
    np.testing.assert_array_equal(host(np.arange(3, like=like)), np.arange(3))


def test_host_operations_are_refused_not_silently_run():
    # Dask's percentile merges on the host (scale-out.md §1.4): refused, not computed behind the user's back.
    x, _ = blocks(np.arange(16, dtype=np.float32))
    with pytest.raises(TypeError):
        da.percentile(x, 50).compute()


def test_to_backend_numpy_and_back():
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    x, _ = blocks(a, 2)
    n = x.to_backend("numpy")
    assert isinstance(n._meta, np.ndarray)
    got = n.compute()
    assert type(got) is np.ndarray
    np.testing.assert_array_equal(got, a)


# --- tokens and sizes ---------------------------------------------------------------------------------


def hold(array):
    """Occupy `array`'s storage with a host region until the returned event is set."""
    gate, started = threading.Event(), threading.Event()

    def body(_view):
        started.set()
        gate.wait(TIMEOUT)

    g = hx.default_runtime().graph()
    g.host(body, [(array.buffer, hx.Access.WRITE)])
    done = g.prepare().submit()
    assert started.wait(TIMEOUT)
    return gate, done


def test_tokenize_is_identity_and_write_version_and_never_copies():
    x = hx.asarray(np.arange(8, dtype=np.float32))
    y = hx.asarray(np.arange(8, dtype=np.float32))
    t = dask.base.tokenize(x)
    assert dask.base.tokenize(x) == t
    assert dask.base.tokenize(y) != t  # same values, another array
    assert dask.base.tokenize(x[2:]) != t
    x[0] = 5
    t2 = dask.base.tokenize(x)
    assert t2 != t
    # A pending writer would make any copy wait: tokenising does not.
    gate, done = hold(x)
    try:
        z = x + 1
        assert not z.ready()
        dask.base.tokenize(z)
        assert not z.ready()
        assert dask.base.tokenize(x) != t2  # the host region is a submitted write
    finally:
        gate.set()
    assert done.wait(TIMEOUT)


def test_sizeof_is_the_byte_count():
    from dask.sizeof import sizeof

    for x in (hx.ones((3, 5), np.float32), hx.ones((7,), BF16), hx.zeros((0,))):
        assert sizeof(x) == x.nbytes


# --- serialisation ------------------------------------------------------------------------------------


def roundtrips(x):
    """x through pickle (protocol 5 out of band, and the default) and distributed's serialisers and spill path."""
    buffers = []
    data = pickle.dumps(x, protocol=5, buffer_callback=buffers.append)
    assert len(buffers) == 1  # the elements travel out of band
    yield pickle.loads(data, buffers=buffers)
    yield pickle.loads(pickle.dumps(x))
    for serializers in (("dask",), ("pickle",)):
        header, frames = distributed_protocol.serialize(x, serializers=serializers)
        assert header["serializer"] == serializers[0]
        yield distributed_protocol.deserialize(header, frames)
    yield distributed_protocol.deserialize_bytes(b"".join(distributed_protocol.serialize_bytelist(x)))  # spill


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.bool_, BF16, np.complex64])
def test_serialisation_keeps_dtype_shape_and_values(dtype):
    a = (np.arange(24).reshape(2, 3, 4) % 5).astype(dtype)
    x = hx.asarray(a)
    for y in roundtrips(x[:, 1:, ::2]):
        assert isinstance(y, hx.DeviceArray) and y.dtype == np.dtype(dtype) and y.shape == (2, 2, 2)
        np.testing.assert_array_equal(hx.to_numpy(y), a[:, 1:, ::2])


def test_serialisation_of_bfp16_ships_the_blocks():
    x = hx.asarray(np.linspace(-3, 3, 32, dtype=np.float32).reshape(2, 16)).astype(hx.bfp16)
    for y in roundtrips(x):
        assert y.dtype is hx.bfp16
        np.testing.assert_array_equal(hx.to_numpy(y.blocks()), hx.to_numpy(x.blocks()))


@pytest.mark.parametrize("placement", [hx.GpuLocal(), hx.HostVisible(), hx.NpuLocal(hx.npu()), hx.Shared(hx.npu())])
def test_serialisation_keeps_the_placement_kind(placement):
    x = hx.asarray(np.arange(4.0), placement=placement)
    for y in roundtrips(x):
        assert type(y.placement) is type(placement)
        np.testing.assert_array_equal(hx.to_numpy(y), np.arange(4.0))


def test_serialising_waits_for_a_pending_writer():
    x = hx.zeros((1000,), np.float32)
    gate, done = hold(x)
    y = x + 7  # pending until the gate opens
    out = []
    sender = threading.Thread(target=lambda: out.append(distributed_protocol.serialize(y, serializers=("dask",))))
    sender.start()
    sender.join(0.2)
    assert sender.is_alive()  # waiting, not sending stale bytes
    gate.set()
    sender.join(TIMEOUT)
    assert not sender.is_alive()
    np.testing.assert_array_equal(hx.to_numpy(distributed_protocol.deserialize(*out[0])), np.full(1000, 7.0))
    assert done.wait(TIMEOUT)


def test_serialising_gives_up_after_the_bounded_wait(monkeypatch):
    monkeypatch.setenv("HRXARRAY_SERIALIZE_TIMEOUT", "0.1")
    x = hx.zeros((8,), np.float32)
    gate, done = hold(x)
    try:
        with pytest.raises(TimeoutError, match=r"shape \(8,\).*pending device writers"):
            pickle.dumps(x + 1)
    finally:
        gate.set()
    assert done.wait(TIMEOUT)


def test_serialising_a_failed_array_raises_device_lost_naming_it():
    y = hx.power(hx.asarray(np.array([2, 3], np.int64)), -1)  # the kernel fails on its lane
    start = time.monotonic()
    with pytest.raises(hx.DeviceLostError, match=r"int64 array of shape \(2,\)") as info:
        pickle.dumps(y)
    assert isinstance(info.value.__cause__, hx.ExecutionError)
    # distributed reports its serialisers' failures as a TypeError caused by them.
    with pytest.raises(TypeError) as info:
        distributed_protocol.serialize(y, serializers=("dask",), on_error="raise")
    assert isinstance(info.value.__cause__, hx.DeviceLostError)
    assert "int64 array of shape (2,)" in str(info.value.__cause__)
    assert time.monotonic() - start < TIMEOUT


def test_a_newer_format_is_refused():
    from hrxarray import _serialize

    header, frame = _serialize.dumps(hx.ones(2))
    with pytest.raises(ValueError, match="format"):
        _serialize.loads({**header, "format": 99}, frame)


# --- matmul --------------------------------------------------------------------------------------------


def rel_error(got, want):
    got = host(got).astype(np.float64)
    return np.linalg.norm(got - want) / np.linalg.norm(want)


def test_bf16_matmul_keeps_float32_partials_and_rounds_once():
    n, block = 256, 32
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(BF16)
    b = rng.standard_normal((n, n)).astype(BF16)
    want = a.astype(np.float64) @ b.astype(np.float64)
    x, y = da.from_array(hx.asarray(a), chunks=block, asarray=False), da.from_array(hx.asarray(b), chunks=block,
                                                                                  asarray=False)
    z = hd.matmul(x, y)
    assert z.dtype == BF16 and isinstance(z._meta, hx.DeviceArray)
    got = z.compute()
    assert isinstance(got, hx.DeviceArray) and got.dtype == BF16
    err = rel_error(got, want)
    assert err < 2**-7
    # One rounding of the float32 sum: the error of rounding the exact product to bfloat16, not more.
    once = rel_error(want.astype(np.float32).astype(BF16), want)
    assert err < 1.5 * once
    # Dask's own matmul (kept as __wrapped__) adds the 8 k partials in bfloat16.
    assert rel_error(da.matmul.__wrapped__(x, y).compute(), want) > err


@pytest.mark.parametrize("spelling", ["@", "rmatmul", "np.matmul", "da.matmul"])
@pytest.mark.parametrize("dtype", [BF16, np.dtype(np.float16)])
def test_plain_matmul_on_narrow_device_blocks_is_hrxarray_dask_matmul(spelling, dtype):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((64, 48)).astype(dtype)
    b = rng.standard_normal((48, 40)).astype(dtype)
    x = da.from_array(hx.asarray(a), chunks=16, asarray=False)
    y = da.from_array(hx.asarray(b), chunks=16, asarray=False)
    z = {"@": lambda: x @ y, "rmatmul": lambda: y.__rmatmul__(x), "np.matmul": lambda: np.matmul(x, y),
         "da.matmul": lambda: da.matmul(x, y)}[spelling]()
    assert z.name.startswith("hrx-matmul-"), z.name
    assert z.dtype == dtype and isinstance(z._meta, hx.DeviceArray)
    got = z.compute()
    assert isinstance(got, hx.DeviceArray) and got.dtype == dtype
    np.testing.assert_array_equal(host(got), host(hd.matmul(x, y).compute()))


def test_plain_matmul_leaves_other_products_to_dask():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((16, 16)).astype(BF16)
    x_np = da.from_array(a, chunks=8)
    # NumPy blocks, wider dtypes and batched operands keep Dask's algorithm.
    assert not (x_np @ x_np).name.startswith("hrx-matmul-")
    x32 = da.from_array(hx.asarray(a.astype(np.float32)), chunks=8, asarray=False)
    assert not (x32 @ x32).name.startswith("hrx-matmul-")
    # Batches that broadcast ((2, 8, 16) @ (1, 16, 8)) too.
    x3 = da.from_array(hx.asarray(a.reshape(2, 8, 16)), chunks=4, asarray=False)
    y3 = x3[:1].transpose(0, 2, 1)
    z3 = x3 @ y3
    assert not z3.name.startswith("hrx-matmul-") and z3.dtype == BF16
    a3 = a.reshape(2, 8, 16).astype(np.float32)
    np.testing.assert_allclose(host(z3.compute()).astype(np.float32), a3 @ a3[:1].transpose(0, 2, 1),
                               rtol=2e-2, atol=1e-1)


def test_stacked_bf16_matmul_is_each_matrix_rounded_once():
    rng = np.random.default_rng(8)
    a = rng.standard_normal((3, 2, 32, 24)).astype(BF16)
    b = rng.standard_normal((3, 2, 24, 16)).astype(BF16)
    x = da.from_array(hx.asarray(a), chunks=(1, 2, 8, 8), asarray=False)
    y = da.from_array(hx.asarray(b), chunks=(2, 1, 12, 8), asarray=False)  # rechunked to x's batch and k chunks
    z = x @ y
    assert z.name.startswith("hrx-matmul-") and z.dtype == BF16 and z.shape == (3, 2, 32, 16)
    got = host(z.compute())
    for i in range(3):
        for j in range(2):
            # Each matrix of the stack: the same bits as the 2-d product with the same blocks.
            one = hd.matmul(x[i, j], y[i, j].rechunk((8, 8))).compute()
            np.testing.assert_array_equal(got[i, j], host(one))
            want = a[i, j].astype(np.float64) @ b[i, j].astype(np.float64)
            assert rel_error(got[i, j], want) < 2**-7
    with pytest.raises(ValueError, match="same batch shape"):
        hd.matmul(x, y[:1])


@pytest.mark.parametrize("shapes", [((40,), (40, 24)), ((24, 40), (40,)), ((40,), (40,))])
def test_matmul_of_vectors_drops_their_axis(shapes):
    rng = np.random.default_rng(4)
    a = rng.standard_normal(shapes[0]).astype(BF16)
    b = rng.standard_normal(shapes[1]).astype(BF16)
    x = da.from_array(hx.asarray(a), chunks=16, asarray=False)
    y = da.from_array(hx.asarray(b), chunks=16, asarray=False)
    z = x @ y
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert z.shape == want.shape and z.name.startswith(("hrx-matmul-", "getitem-"))
    got = host(z.compute())
    assert got.shape == want.shape and got.dtype == BF16
    # Rounded once from a float32 sum: within half a bfloat16 ulp of the float32 result, plus its sum error.
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2**-8, atol=1e-2)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.bool_])
def test_integer_matmul_wraps_as_numpy(dtype):
    rng = np.random.default_rng(5)
    a = rng.integers(0, 120, (12, 10)).astype(dtype)
    b = rng.integers(0, 120, (10, 6)).astype(dtype)
    x = da.from_array(hx.asarray(a), chunks=4, asarray=False)
    y = da.from_array(hx.asarray(b), chunks=4, asarray=False)
    got = hd.matmul(x, y).compute()
    assert got.dtype == dtype
    np.testing.assert_array_equal(host(got), a @ b)


def test_narrow_product_of_device_and_numpy_blocks():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((32, 32)).astype(BF16)
    b = rng.standard_normal((32, 32)).astype(BF16)
    x = da.from_array(hx.asarray(a), chunks=16, asarray=False)
    z = x @ da.from_array(b, chunks=16)
    assert z.name.startswith("hrx-matmul-")
    got = z.compute()
    assert isinstance(got, hx.DeviceArray)
    np.testing.assert_allclose(host(got).astype(np.float64), a.astype(np.float64) @ b.astype(np.float64),
                               rtol=2**-7, atol=5e-2)


def test_matmul_with_misaligned_chunks_and_other_dtypes():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((12, 10)).astype(np.float32)
    b = rng.standard_normal((10, 6)).astype(np.float32)
    x = da.from_array(hx.asarray(a), chunks=(5, 4), asarray=False)
    y = da.from_array(hx.asarray(b), chunks=(3, 4), asarray=False)
    z = hd.matmul(x, y)
    assert z.dtype == np.float32
    np.testing.assert_allclose(host(z.compute()), a @ b, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="not aligned"):
        hd.matmul(x, x)


# --- registration without user code -------------------------------------------------------------------


def run(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONWARNINGS": "error"})


@pytest.mark.parametrize("order", ["hrxarray first", "dask first"])
def test_registered_whichever_is_imported_first(order):
    imports = "import hrxarray as hx; import dask.array as da" if order == "hrxarray first" else \
        "import dask.array as da; import hrxarray as hx"
    r = run(f"""{imports}
from dask.array.chunk_types import is_valid_chunk_type
from dask.sizeof import sizeof
from distributed.protocol import dask_serialize
assert is_valid_chunk_type(hx.DeviceArray)
assert sizeof(hx.ones(5)) == 40
assert dask_serialize.dispatch(hx.DeviceArray)
from dask.array import routines
x = da.from_array(hx.ones((4, 4), dtype="bfloat16"), chunks=2, asarray=False)
assert da.matmul is routines.matmul and (x @ x).name.startswith("hrx-matmul-")
print("ok")""")
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_importing_hrxarray_does_not_import_dask():
    r = run("import sys, hrxarray; print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))")
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stderr


def test_importing_dask_registers_through_the_entry_point():
    # What a worker sees: it imports Dask, never hrxarray itself.
    r = run("""import sys, dask
assert "hrxarray" in sys.modules
from dask.sizeof import sizeof
import hrxarray as hx
assert sizeof(hx.ones(3)) == 24
print("ok")""")
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


# --- backend "hrx" and strict host mode ------------------------------------------------------------------


@pytest.mark.parametrize("make", [
    lambda: da.ones((6, 4), chunks=3, dtype=np.float32),
    lambda: da.zeros((6, 4), chunks=3),
    lambda: da.empty((6, 4), chunks=3),
    lambda: da.full((6, 4), 2.5, chunks=3),
    lambda: da.arange(10, chunks=4),
    lambda: da.random.RandomState(3).standard_normal((6, 4), chunks=3),
    lambda: da.random.RandomState(3).random_sample((6, 4), chunks=3),
])
def test_backend_hrx_creates_device_blocks(make):
    with dask.config.set({"array.backend": "hrx"}):
        x = make()
    assert isinstance(x._meta, hx.DeviceArray)
    got = x.compute()
    assert isinstance(got, hx.DeviceArray) and got.dtype == x.dtype and got.shape == x.shape
    with dask.config.set({"array.backend": "numpy"}):
        ref = make()
    if "random" not in x.name and "standard_normal" not in x.name and "empty" not in x.name:
        np.testing.assert_array_equal(host(got), ref.compute())


def test_backend_random_is_reproducible_and_per_block_distinct():
    with dask.config.set({"array.backend": "hrx"}):
        a = host(da.random.RandomState(5).random_sample((8,), chunks=4).compute())
        b = host(da.random.RandomState(5).random_sample((8,), chunks=4).compute())
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a[:4], a[4:]) and ((0 <= a) & (a < 1)).all()


def test_backend_generator_path_draws_each_block_from_its_spawned_child():
    # A plain model of Dask's Generator path: the bit generator's SeedSequence spawns one child per
    # block (C order of blocks); block i is hx.random.default_rng(child i) drawing the block's shape.
    with dask.config.set({"array.backend": "hrx"}):
        rng = da.random.default_rng(42)
        x = rng.standard_normal((6, 5), chunks=(4, 3))
        k = rng.integers(0, 1000, size=(7,), chunks=3)
    assert isinstance(x._meta, hx.DeviceArray) and isinstance(k._meta, hx.DeviceArray)
    got, got_k = x.compute(), k.compute()
    assert isinstance(got, hx.DeviceArray) and got.dtype == np.float64 and got.shape == (6, 5)
    children = np.random.SeedSequence(42).spawn(4)
    blocks = [[(slice(0, 4), slice(0, 3)), (slice(0, 4), slice(3, 5))], [(slice(4, 6), slice(0, 3)), (slice(4, 6), slice(3, 5))]]
    want = np.empty((6, 5))
    for i, (r, c) in enumerate(b for row in blocks for b in row):
        want[r, c] = host(hx.random.default_rng(children[i]).standard_normal((r.stop - r.start, c.stop - c.start)))
    np.testing.assert_array_equal(host(got), want)
    # The second draw spawns from the same SeedSequence: its children follow the first draw's four.
    kids = np.random.SeedSequence(42).spawn(7)[4:]
    want_k = np.concatenate([host(hx.random.default_rng(kid).integers(0, 1000, n)) for kid, n in zip(kids, (3, 3, 1))])
    assert got_k.dtype == np.int64
    np.testing.assert_array_equal(host(got_k), want_k)


def test_backend_placement_from_config():
    with dask.config.set({"array.backend": "hrx", "hrx.placement": "HostVisible"}):
        x = da.ones((4,), chunks=2)
        assert x.compute().placement == hx.HostVisible()
    with dask.config.set({"array.backend": "hrx", "hrx.placement": "Elsewhere"}):
        with pytest.raises(ValueError, match="hrx.placement"):
            da.ones((4,), chunks=2)


def test_to_backend_hrx_and_back():
    a = np.arange(12.0).reshape(3, 4)
    x = da.from_array(a, chunks=2).to_backend("hrx")
    assert isinstance(x._meta, hx.DeviceArray)
    got = x.compute()
    assert isinstance(got, hx.DeviceArray)
    np.testing.assert_array_equal(host(got), a)
    np.testing.assert_array_equal(x.to_backend("numpy").compute(), a)


@pytest.mark.parametrize("call", [
    lambda d, x: hx.add(d, x),
    lambda d, x: hx.add(x, 1.5),
    lambda d, x: hx.multiply(x, x, dtype=np.float64),
    lambda d, x: hx.sin(x),
    lambda d, x: hx.arctan2(hx.to_numpy(d), x),
    lambda d, x: hx.maximum(x, d, where=True),
])
def test_hrxarray_ufuncs_hand_dask_operands_to_dask(call, monkeypatch):
    a = np.arange(16, dtype=np.float32).reshape(4, 4) - 5
    x, ref = blocks(a, 2)
    d = hx.asarray(a)
    # No hidden host copy: the Dask array is not computed whole and converted.
    monkeypatch.setenv("HRXARRAY_STRICT_HOST", "1")
    y = call(d, x)
    assert isinstance(y, da.Array) and isinstance(y._meta, hx.DeviceArray)
    got = y.compute()
    assert isinstance(got, hx.DeviceArray) and got.dtype == y.dtype
    monkeypatch.setenv("HRXARRAY_STRICT_HOST", "0")
    want = call(a, ref).compute()
    assert got.dtype == want.dtype
    np.testing.assert_allclose(host(got), want, rtol=1e-6)


def test_numpy_dtype_enforcement_on_device_blocks():
    # Dask checks each block of np.multiply(x, y, dtype=...) with np.can_cast(block, dtype).
    x, ref = blocks(np.arange(16, dtype=np.float32).reshape(4, 4), 2)
    got = np.multiply(x, x, dtype=np.float64).compute()
    assert isinstance(got, hx.DeviceArray) and got.dtype == np.float64
    np.testing.assert_array_equal(host(got), np.multiply(ref, ref, dtype=np.float64).compute())
    d = hx.ones(3, dtype=np.float32)
    assert np.can_cast(d, np.float64) and not np.can_cast(d, np.int8, casting="same_kind")
    assert np.result_type(d, np.int64, hx.ones(1, dtype=np.int8)) == np.float64


def test_strict_host_mode_catches_hidden_host_copies(monkeypatch):
    x, _ = blocks(np.arange(16, dtype=np.float32).reshape(4, 4), 2)
    monkeypatch.setenv("HRXARRAY_STRICT_HOST", "1")
    # What runs on the device passes...
    got = ((x + 1) @ x).sum(axis=0).compute()
    assert isinstance(got, hx.DeviceArray)
    assert hx.to_numpy(got).shape == (4,)  # explicit conversion is allowed
    # ...a hidden conversion does not.
    with pytest.raises(TypeError, match="strict host mode"):
        np.asarray(got)
    with pytest.raises(TypeError, match="strict host mode"):
        np.asarray(x)  # Dask computes, then asks the block for __array__
    monkeypatch.setenv("HRXARRAY_STRICT_HOST", "0")
    np.testing.assert_array_equal(np.asarray(got), hx.to_numpy(got))
