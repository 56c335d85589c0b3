"""Placements are hashable value objects with HRX's reach rules (§1.7)."""

import pytest

import hrxarray as hx

# (host mapped, GPU bindable, NPU bindable), from reference/hrx-runtime.md §1.7.
REACH = {
    "GpuLocal": (False, True, False),
    "HostVisible": (True, True, False),
    "NpuLocal": (True, False, True),
    "Shared": (True, True, True),
}


def test_reach_table(placement):
    name = type(placement).__name__
    assert (placement.host_mapped, placement.gpu_bindable, placement.npu_bindable) == REACH[name]
    assert isinstance(placement, hx.Placement)


def test_value_semantics(rt):
    n = rt.npu()
    assert hx.GpuLocal() == hx.GpuLocal() and hash(hx.GpuLocal()) == hash(hx.GpuLocal())
    assert hx.HostVisible() == hx.HostVisible()
    assert hx.GpuLocal() != hx.HostVisible()
    assert hx.Shared(n) == hx.Shared(rt.npu()) and hash(hx.Shared(n)) == hash(hx.Shared(rt.npu()))
    assert hx.Shared(n) != hx.NpuLocal(n)
    assert hx.Shared(n) != hx.Shared(hx.Runtime().npu())
    assert hx.Shared(n) != "Shared"
    assert len({hx.Shared(n), hx.Shared(n), hx.NpuLocal(n), hx.GpuLocal(), hx.GpuLocal()}) == 3


def test_npu_attribute(rt):
    n = rt.npu()
    assert hx.Shared(n).npu == n
    assert hx.NpuLocal(n).npu == n
    assert hx.GpuLocal().npu is None


def test_reprs(rt):
    n = rt.npu()
    assert repr(hx.GpuLocal()) == "GpuLocal()"
    assert repr(hx.HostVisible()) == "HostVisible()"
    assert repr(hx.Shared(n)) == "Shared(npu:0)"
    assert repr(hx.NpuLocal(n)) == "NpuLocal(npu:0)"


def test_immutable(rt):
    p = hx.Shared(rt.npu())
    with pytest.raises(AttributeError):
        p.npu = None
    with pytest.raises(AttributeError):
        p.extra = 1


def test_npu_placements_need_an_npu_device(rt):
    with pytest.raises(TypeError):
        hx.Shared(rt.gpu())
    with pytest.raises(TypeError):
        hx.NpuLocal()


def test_buffer_reports_its_placement(rt, placement):
    buf = rt.allocate(64, placement)
    assert buf.placement == placement
    assert type(buf.placement) is type(placement)
