"""Results are futures: ordering by hazards, waits, failures, backpressure, threads, matmul lanes."""

import faulthandler
import sys
import threading

import ml_dtypes
import numpy as np
import pytest

import hrxarray as hx
from hrxarray import numerics

BF16 = np.dtype(ml_dtypes.bfloat16)
TIMEOUT = 30


@pytest.fixture(autouse=True)
def watchdog():
    # A hang is a failure: dump every thread's stack instead of blocking CI.
    faulthandler.dump_traceback_later(120, exit=True, file=sys.__stderr__)
    yield
    faulthandler.cancel_dump_traceback_later()


def hold(rt, array):
    """Occupy `array`'s storage with a host region until the returned event is set."""
    gate = threading.Event()
    started = threading.Event()

    def body(_view):
        started.set()
        gate.wait(TIMEOUT)

    g = rt.graph()
    g.host(body, [(array.buffer, hx.Access.WRITE)])
    completion = g.prepare().submit()
    assert started.wait(TIMEOUT)
    return gate, completion


def test01_results_return_at_once_and_complete_later():
    rt = hx.default_runtime()
    x = hx.asarray(np.arange(4, dtype=np.int32))
    gate, done = hold(rt, x)
    try:
        y = x * 3 + 1  # two operations, both ordered after the host region
        assert not y.ready()
        assert "<pending>" in repr(y) and "shape=(4,)" in repr(y)
        assert y.shape == (4,) and y.dtype == np.int32  # metadata needs no wait
    finally:
        gate.set()
    assert y.block_until_ready() is y
    assert y.ready()
    np.testing.assert_array_equal(hx.to_numpy(y), np.arange(4) * 3 + 1)
    assert done.wait(TIMEOUT)


def test02_host_access_waits_for_the_producer():
    rt = hx.default_runtime()
    x = hx.asarray(np.zeros(8, np.float32))
    gate, _ = hold(rt, x)
    y = x + 2
    results = []
    reader = threading.Thread(target=lambda: results.append(hx.to_numpy(y)))
    reader.start()
    reader.join(0.2)
    assert reader.is_alive()  # blocked in to_numpy, without holding the GIL
    gate.set()
    reader.join(TIMEOUT)
    assert not reader.is_alive()
    np.testing.assert_array_equal(results[0], np.full(8, 2, np.float32))


def test03_a_chain_across_lanes_is_ordered_by_hazards():
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, (4, 8, 8)).astype(np.float32)
    g = hx.asarray(a, placement=hx.GpuLocal())             # upload lane
    s = (g * 2).to(hx.Shared(hx.npu()))                    # compute, download
    b = s.astype(hx.bfloat16)                              # compute
    c = b @ b                                              # npu lane
    d = hx.sum(c, axis=0) - 1                              # compute
    e = d.to(hx.GpuLocal()) * 0.5                          # upload, compute
    want = (np.sum((2 * a) @ (2 * a), axis=0) - 1) * 0.5
    np.testing.assert_array_equal(hx.to_numpy(e), want)


def test04_a_kernel_failure_surfaces_as_execution_error_at_the_first_wait():
    x = hx.asarray(np.array([2, 3], np.int64))
    y = hx.power(x, -1)  # returns at once; the kernel fails on the lane
    with pytest.raises(hx.ExecutionError, match="Integers to negative integer powers are not allowed") as info:
        y.block_until_ready()
    assert type(info.value.__cause__) is ValueError
    assert y.ready()
    with pytest.raises(hx.ExecutionError):
        hx.to_numpy(y)
    with pytest.raises(hx.ExecutionError):
        y.__dlpack__()
    assert "failed" in repr(y)
    # A kernel's data check is not a device fault: it poisons only what the
    # operation writes, and the operand it read stays usable.
    with pytest.raises(hx.DeviceLostError, match="poisoned"):
        y + 1
    np.testing.assert_array_equal(hx.to_numpy(x + 1), [3, 4])
    # unrelated work goes on
    np.testing.assert_array_equal(hx.to_numpy(hx.asarray([1, 2]) + 1), [2, 3])


def test05_backpressure_instead_of_busy_when_the_runtime_is_full():
    rt = hx.Runtime(max_submissions=2)
    a = hx.asarray(np.zeros(16), placement=hx.Shared(rt.npu()))
    for _ in range(200):
        a += 1
    np.testing.assert_array_equal(hx.to_numpy(a), np.full(16, 200.0))
    assert rt.statistics().submissions >= 200


def test06_operations_from_several_threads():
    n_threads, n_ops = 4, 50
    arrays = [hx.asarray(np.zeros(32, np.int64)) for _ in range(n_threads)]
    shared = hx.asarray(np.zeros(32, np.int64))
    barrier = threading.Barrier(n_threads)
    errors = []

    def work(i):
        try:
            barrier.wait(TIMEOUT)
            for k in range(n_ops):
                hx.add(arrays[i], k, out=arrays[i])
                hx.add(shared, 1, out=shared)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert not errors
    for a in arrays:
        np.testing.assert_array_equal(hx.to_numpy(a), np.full(32, sum(range(n_ops))))
    np.testing.assert_array_equal(hx.to_numpy(shared), np.full(32, n_threads * n_ops))


def test07_host_guards_and_device_work():
    x = hx.asarray(np.arange(4.0))
    with x.map_write() as v:
        assert isinstance(v, np.ndarray) and v.dtype == np.float64 and v.shape == (4,)
        v[:] = [5, 6, 7, 8]
        with pytest.raises(hx.BusyError, match="live host mapping"):
            x + 1  # device work conflicts with the live write guard
    np.testing.assert_array_equal(hx.to_numpy(x + 1), [6, 7, 8, 9])
    with x.map_read() as v:
        assert not v.flags.writeable
        y = x * 2  # reading beside a read guard is fine
        with pytest.raises(hx.BusyError):
            hx.add(x, 1, out=x)
    with pytest.raises(ValueError, match="released"):
        v[0]
    np.testing.assert_array_equal(hx.to_numpy(y), [10, 12, 14, 16])
    with pytest.raises(hx.UnsupportedError, match="not host mapped"):
        with hx.asarray(np.ones(2), placement=hx.GpuLocal()).map_read():
            pass


def test08_typed_map_views_of_strided_and_bf16_arrays():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = hx.asarray(a)
    v = x[1:, ::-2]
    with v.map_read() as m:
        np.testing.assert_array_equal(m, a[1:, ::-2])
    with v.map_write() as m:
        m[...] = -1
    a[1:, ::-2] = -1
    np.testing.assert_array_equal(hx.to_numpy(x), a)
    b = hx.asarray(np.array([1.5, -2.25], BF16))
    with b.map_read() as m:
        assert m.dtype == BF16
        np.testing.assert_array_equal(m.astype(np.float32), [1.5, -2.25])


def test09_map_write_waits_for_pending_device_readers():
    rt = hx.default_runtime()
    x = hx.asarray(np.ones(4))
    gate, _ = hold(rt, x)
    y = x + 1  # pending reader of x
    done = []

    def writer():
        with x.map_write() as m:
            m[:] = 0
        done.append(True)

    t = threading.Thread(target=writer)
    t.start()
    t.join(0.2)
    assert t.is_alive() and not done
    gate.set()
    t.join(TIMEOUT)
    assert done
    np.testing.assert_array_equal(hx.to_numpy(y), np.full(4, 2.0))  # read before the host write


@pytest.mark.parametrize("placement", ["Shared", "NpuLocal"])
def test10_bf16_matmul_runs_on_the_npu_lane_with_the_npu_numerics(placement):
    rt = hx.default_runtime()
    p = hx.Shared(rt.npu()) if placement == "Shared" else hx.NpuLocal(rt.npu())
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 5, 16)).astype(np.float32)
    b = rng.standard_normal((16, 7)).astype(np.float32)
    x = hx.asarray(a, dtype=hx.bfloat16, placement=p)
    y = hx.asarray(b, dtype=hx.bfloat16, placement=p)
    rt.start_trace(16)
    c = hx.matmul(x, y)
    c.block_until_ready()
    lanes = [e["lane"] for e in rt.finish_trace().events]
    assert lanes == ["npu"]
    assert c.dtype == np.float32 and c.shape == (3, 5, 7) and c.placement == p
    want = numerics.matmul(a.astype(BF16), b.astype(BF16))
    np.testing.assert_array_equal(hx.to_numpy(c), want)
    q = hx.matmul(x, y, compute="bfp16")
    np.testing.assert_array_equal(hx.to_numpy(q), numerics.matmul(a.astype(BF16), b.astype(BF16), compute="bfp16"))
    q = hx.matmul(x, y, compute="bfp16", rounding="even")
    np.testing.assert_array_equal(hx.to_numpy(q),
                                  numerics.matmul(a.astype(BF16), b.astype(BF16), compute="bfp16", rounding="even"))


def test11_other_matmuls_run_on_the_gpu_compute_lane():
    rt = hx.default_runtime()
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    b = np.arange(8, dtype=np.int32).reshape(4, 2) - 3
    rt.start_trace(16)
    c = hx.asarray(a) @ hx.asarray(b)
    np.testing.assert_array_equal(hx.to_numpy(c), a @ b)
    assert [e["lane"] for e in rt.finish_trace().events] == ["compute"]
    g = hx.asarray(a.astype(np.float32), placement=hx.GpuLocal())
    h = hx.asarray(b.astype(np.float32), placement=hx.GpuLocal())
    np.testing.assert_array_equal(hx.to_numpy(g @ h), a.astype(np.float32) @ b.astype(np.float32))
    bf = hx.asarray(a, dtype=hx.bfloat16, placement=hx.GpuLocal())
    r = bf @ hx.asarray(b, dtype=hx.bfloat16, placement=hx.GpuLocal())
    assert r.dtype == np.float32  # bf16 inputs give float32 on either lane
    np.testing.assert_array_equal(hx.to_numpy(r), (a @ b).astype(np.float32))


def test12_matmul_shapes_follow_numpy():
    rng = np.random.default_rng(2)
    cases = [((4,), (4,)), ((4,), (4, 3)), ((2, 4), (4,)), ((5, 2, 4), (4, 3)), ((1, 2, 4), (6, 4, 3)),
             ((2, 1, 3, 4), (5, 4, 2)), ((0, 4), (4, 3)), ((3, 0), (0, 2))]
    for sa, sb in cases:
        a = rng.integers(-3, 4, sa).astype(np.float64)
        b = rng.integers(-3, 4, sb).astype(np.float64)
        got = hx.matmul(hx.asarray(a), hx.asarray(b))
        want = np.matmul(a, b)
        assert got.shape == want.shape, (sa, sb)
        np.testing.assert_array_equal(hx.to_numpy(got), want)
    x = hx.asarray(np.ones((2, 3)))
    with pytest.raises(ValueError, match="mismatch in its core dimension"):
        x @ x
    with pytest.raises(ValueError, match="not have enough dimensions"):
        hx.matmul(x, 2.0)
    with pytest.raises(ValueError, match="multiple of 8"):
        hx.matmul(x, x.T, compute="bfp16")
    with pytest.raises(ValueError, match="compute"):
        hx.matmul(x, x.T, compute="fp8")
    out = hx.empty((2, 2), np.float64)
    assert hx.matmul(x, x.T, out=out) is out
    np.testing.assert_array_equal(hx.to_numpy(out), np.full((2, 2), 3.0))


def test13_bfp16_arrays_feed_the_npu_matmul():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 16)).astype(np.float32)
    b = rng.standard_normal((16, 8)).astype(np.float32)
    qa = hx.asarray(a, dtype=hx.bfp16)
    c = qa @ hx.asarray(b, dtype=hx.bfloat16)
    want = numerics.matmul(numerics.bfp16_quantize(a).astype(BF16), b.astype(BF16), compute="bfp16")
    np.testing.assert_array_equal(hx.to_numpy(c), want)


@pytest.mark.parametrize("operation", ["setitem", "astype", "full_like", "to_gpu_local"])
def test_core_waits_for_room_release_the_gil(operation):
    """Copies and fills wait for room inside the core (Note [Blocking waits of core code]) while the
    runtime is full; the wait releases the GIL, or the host region filling the runtime could never
    finish and this test would hang (the watchdog fails it)."""
    rt = hx.Runtime(max_submissions=1)
    x = hx.asarray(np.arange(4.0), placement=hx.Shared(rt.npu()))
    run = {
        "setitem": lambda: x.__setitem__(Ellipsis, 7.0),
        "astype": lambda: x.astype(np.float32),
        "full_like": lambda: hx.full_like(x, 7.0),
        "to_gpu_local": lambda: x.to(hx.GpuLocal()),
    }[operation]
    gate, done = hold(rt, x)  # the runtime's one submission, until the gate opens
    results = []
    worker = threading.Thread(target=lambda: results.append(run()))
    worker.start()
    worker.join(0.2)
    assert worker.is_alive() and not results  # waiting for room, not refused
    gate.set()
    worker.join(TIMEOUT)
    assert not worker.is_alive() and done.wait(TIMEOUT)
    want = {"setitem": np.full(4, 7.0), "full_like": np.full(4, 7.0)}.get(operation, np.arange(4.0))
    got = x if operation == "setitem" else results[0]
    np.testing.assert_array_equal(hx.to_numpy(got), want)
