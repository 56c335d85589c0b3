"""Graph building and preparation: lanes, regions, dependencies, checks (HRX §2.2, §2.3, §2.8)."""

import numpy as np
import pytest

import hrxarray as hx
from helpers import make_placement

T = 10  # seconds: every wait in a test has a timeout


def run(eg):
    c = eg.submit()
    assert c.wait(T)
    c.result()
    return c


def host_bytes(buf):
    with buf.map_read() as v:
        return v.copy()


@pytest.mark.parametrize(
    "src,dst,lane",
    [
        ("HostVisible", "GpuLocal", "upload"),
        ("Shared", "GpuLocal", "upload"),
        ("GpuLocal", "HostVisible", "download"),
        ("GpuLocal", "Shared", "download"),
        ("GpuLocal", "GpuLocal", "compute"),
        ("HostVisible", "Shared", "compute"),
        ("Shared", "Shared", "compute"),
    ],
)
def test_copy_lane_follows_host_mapping(rt, src, dst, lane):
    a = rt.allocate(64, make_placement(src, rt))
    b = rt.allocate(64, make_placement(dst, rt))
    g = rt.graph()
    g.copy(b, a)
    assert g.prepare().regions == [lane]


def test_region_formation(rt, npu):
    a = rt.allocate(256, hx.HostVisible())
    b = rt.allocate(256, hx.GpuLocal())
    g = rt.graph()
    g.fill(a.view(0, 64), 1)  # compute
    g.fill(a.view(64, 64), 2)  # compute: same run
    g.copy(b.view(0, 64), a.view(0, 64))  # upload
    g.copy(b.view(64, 64), a.view(64, 64))  # upload: same run
    g.host(lambda x: None, [(a.view(128, 8), hx.Access.READ)])  # host: alone
    g.host(lambda x: None, [(a.view(136, 8), hx.Access.READ)])  # host: alone again
    g.copy_on(a.view(200, 8), a.view(192, 8), "compute")
    assert g.prepare().regions == ["compute", "upload", "host", "host", "compute"]


def test_prepare_errors(rt, npu):
    with pytest.raises(ValueError, match="cannot prepare an empty graph"):
        rt.graph().prepare()
    shared = rt.allocate(64, hx.Shared(npu))
    npu_local = rt.allocate(64, hx.NpuLocal(npu))
    g = rt.graph()
    with pytest.raises(hx.UnsupportedError, match="NPU-local storage cannot bind to the GPU"):
        g.fill(npu_local, 0)
    with pytest.raises(hx.UnsupportedError, match="NPU-local storage cannot bind to the GPU"):
        g.copy(shared, npu_local)
    with pytest.raises(ValueError, match="equal, nonoverlapping"):
        g.copy(shared.view(0, 32), shared.view(16, 32))
    with pytest.raises(ValueError, match="equal, nonoverlapping"):
        g.copy(shared.view(0, 32), shared.view(32, 16))
    with pytest.raises(ValueError, match="another runtime"):
        g.fill(hx.Runtime().allocate(8, hx.HostVisible()), 0)
    with pytest.raises(ValueError, match="0..=255"):
        g.fill(shared, 256)
    with pytest.raises(ValueError, match="unknown lane"):
        g.copy_on(shared.view(0, 8), shared.view(8, 8), "dma")
    with pytest.raises(ValueError, match="upload, compute or download"):
        g.copy_on(shared.view(0, 8), shared.view(8, 8), "npu")
    with pytest.raises(hx.UnsupportedError, match="not host mapped"):
        g.host(lambda x: None, [(rt.allocate(8, hx.GpuLocal()), hx.Access.READ)])
    with pytest.raises(TypeError):
        g.host(42, [])
    with pytest.raises(TypeError):
        g.fill("buffer", 0)
    assert len(g) == 0, "failed calls add nothing"


def test_fill_copy_and_host_regions_compute_the_right_bytes(rt, npu):
    a = rt.allocate(128, hx.Shared(npu))
    b = rt.allocate(128, hx.GpuLocal())
    c = rt.allocate(128, hx.HostVisible())
    seen = {}

    def check(src, dst):
        seen["readonly"] = not src.flags.writeable and dst.flags.writeable
        dst[:] = src[::-1]

    g = rt.graph()
    g.fill(a.view(0, 64), 0x11)
    g.fill(a.view(64, 64), 0x22)
    g.copy(b, a)
    g.copy(c.view(0, 64), b.view(64, 64))
    g.host(check, [(c.view(0, 64), hx.Access.READ), (c.view(64, 64), hx.Access.WRITE)])
    before = rt.statistics()
    run(g.prepare())
    after = rt.statistics()
    out = host_bytes(c)
    assert (out[:64] == 0x22).all() and (out[64:] == 0x22).all()
    assert seen["readonly"] is True
    assert after.copied_bytes - before.copied_bytes == 128 + 64
    assert after.submissions == before.submissions + 1
    assert after.completions == before.completions + 1


def test_replays_allocate_nothing(rt, npu):
    a = rt.allocate(4096, hx.Shared(npu))
    b = rt.allocate(4096, hx.GpuLocal())
    g = rt.graph()
    g.copy(b, a)
    g.copy(a, b)
    eg = g.prepare()
    run(eg)
    before = rt.statistics()
    for i in range(20):
        with a.map_write() as v:
            v[:] = i
        run(eg)
        assert (host_bytes(a) == i).all()
    after = rt.statistics()
    assert (after.allocations, after.imports, after.live_bytes) == (before.allocations, before.imports, before.live_bytes)
    assert after.submissions == before.submissions + 20


def test_runtime_applies_visibility_transitions(npu):
    rt = hx.Runtime(check_visibility=True)
    npu = rt.npu()
    a = rt.allocate(256, hx.Shared(npu))
    with a.map_write() as v:
        v[:] = 5
    before = rt.statistics().cache_maintenance_bytes
    g = rt.graph()
    g.copy(a.view(128, 128), a.view(0, 128))  # the GPU reads host-written Shared storage
    run(g.prepare())
    assert rt.statistics().cache_maintenance_bytes == before + 256
    assert a._state()["last_writer"] == "gpu"
    with a.map_read() as v:  # the host acquires the GPU's writes
        assert (v == 5).all()
    assert rt.statistics().cache_maintenance_bytes == before + 512


def test_submit_after_rejects_another_runtimes_completion(rt):
    other = hx.Runtime()
    g = other.graph()
    g.fill(other.allocate(8, hx.HostVisible()), 1)
    c = g.prepare().submit()
    assert c.wait(T)
    g2 = rt.graph()
    g2.fill(rt.allocate(8, hx.HostVisible()), 1)
    eg2 = g2.prepare()
    before = rt.statistics()
    with pytest.raises(ValueError, match="another runtime"):
        eg2.submit_after([c])
    with pytest.raises(TypeError):
        eg2.submit_after([42])
    assert rt.statistics() == before


def test_host_region_arrays_match_numpy(rt):
    buf = rt.allocate(64, hx.HostVisible())
    with buf.map_write() as v:
        v[:] = np.arange(64, dtype=np.uint8)
    out = {}
    g = rt.graph()
    g.host(lambda a, b: out.update(a=a.copy(), b=b.copy()), [(buf.view(8, 8), hx.Access.READ), (buf, hx.Access.READ)])
    run(g.prepare())
    np.testing.assert_array_equal(out["a"], np.arange(8, 16))
    np.testing.assert_array_equal(out["b"], np.arange(64))


def test_result_timeout_is_timeout_error_and_does_not_cancel(rt):
    import threading

    gate = threading.Event()
    buf = rt.allocate(8, hx.HostVisible())
    g = rt.graph()
    g.host(lambda v: gate.wait(10), [(buf, hx.Access.READ)])
    c = g.prepare().submit()
    try:
        with pytest.raises(TimeoutError, match="still pending"):
            c.result(timeout=0.05)
        with pytest.raises(TimeoutError):
            c.exception(timeout=0.0)
        assert not c.done()
    finally:
        gate.set()
    assert c.wait(T) and c.exception() is None
