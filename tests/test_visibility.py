"""Visibility facts, allocation profiles and the per-storage visibility state.

The expected facts are the Linux producer->consumer table of the libamdf CTS
(reference/memory-fabric.md §2.5) and HRX's cacheable/coherent rule (§1.3 of
hrx-runtime.md), written out here independently of the implementation.
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

import hrxarray as hx
from helpers import make_placement

NONE = ("none", "none", "none", 0)
FLUSH = ("range", "host_direct", "flush", 64)
INVALIDATE = ("range", "host_direct", "invalidate", 64)
Q_RELEASE = ("global", "queue", "release_to_system", 0)
Q_ACQUIRE = ("global", "queue", "acquire_from_system", 0)


def expected(producer, consumer, gpu_coherent):
    """(release, acquire, atomic scope) for a pair of site kinds."""

    def side(site, peer, release):
        if site == "host":
            if peer == "host" or (peer == "gpu" and gpu_coherent):
                return NONE
            return FLUSH if release else INVALIDATE
        if site == "gpu":
            return Q_RELEASE if release else Q_ACQUIRE
        return NONE

    pair = {producer, consumer}
    if pair == {"gpu"}:
        atomic = "device"
    elif pair == {"host", "gpu"}:
        atomic = "system" if gpu_coherent else "none"
    else:
        atomic = "none"
    return side(producer, consumer, True), side(consumer, producer, False), atomic


def as_tuple(t):
    return (t.kind, t.executor, t.operation, t.range_granularity)


def sites_of(rt):
    return {"host": "host", "gpu": rt.gpu(), "npu": rt.npu()}


# placement name -> (admitted device sites, coherent GPU attachment)
ADMITTED = {
    "GpuLocal": ({"host", "gpu"}, False),
    "HostVisible": ({"host", "gpu"}, True),
    "NpuLocal": ({"host", "npu"}, False),
    "Shared": ({"host", "gpu", "npu"}, False),
}


@pytest.mark.parametrize("producer", ["host", "gpu", "npu"])
@pytest.mark.parametrize("consumer", ["host", "gpu", "npu"])
def test_buffer_visibility_table(rt, placement, producer, consumer):
    buf = rt.allocate(256, placement)
    admitted, coherent = ADMITTED[type(placement).__name__]
    sites = sites_of(rt)
    if producer not in admitted or consumer not in admitted:
        with pytest.raises(ValueError, match="visibility device has no access to backing"):
            buf.visibility(sites[producer], sites[consumer])
        return
    facts = buf.visibility(sites[producer], sites[consumer])
    release, acquire, atomic = expected(producer, consumer, coherent)
    assert facts.shared_backing_reachable
    assert as_tuple(facts.release) == release
    assert as_tuple(facts.acquire) == acquire
    assert facts.atomic_scope_32 == facts.atomic_scope_64 == atomic
    if release == acquire == NONE:
        assert facts.estimated_fixed_cost_ns == 0
    else:
        assert facts.estimated_fixed_cost_ns > 0


def test_cache_transition_is_a_value(rt):
    t = hx.CacheTransition("range", "host_direct", "flush", 64)
    facts = rt.allocate(64, hx.Shared(rt.npu())).visibility("host", rt.npu())
    assert facts.release == t and hash(facts.release) == hash(t)
    assert facts.acquire != t
    assert "host_direct" in repr(t)
    with pytest.raises(ValueError, match="unknown kind"):
        hx.CacheTransition("sometimes", "none", "none", 0)


def test_site_errors(rt):
    buf = rt.allocate(64, hx.Shared(rt.npu()))
    with pytest.raises(ValueError, match="unknown site"):
        buf.visibility("cpu", "host")
    with pytest.raises(TypeError):
        buf.visibility(None, "host")
    with pytest.raises(ValueError, match="another runtime"):
        buf.visibility(hx.Runtime().npu(), "host")


def test_adopted_alias_reaches_the_npu(rt):
    src = rt.allocate(64, hx.HostVisible())
    with pytest.raises(ValueError, match="no access to backing"):
        src.visibility(rt.gpu(), rt.npu())
    alias = rt.adopt(src, hx.Shared(rt.npu()))
    facts = alias.visibility(rt.gpu(), rt.npu())
    assert as_tuple(facts.release) == Q_RELEASE and as_tuple(facts.acquire) == NONE
    assert as_tuple(alias.visibility("host", rt.npu()).release) == FLUSH


# --- allocation profiles --------------------------------------------------

PROFILE_CASES = [
    (["gpu"], False, "GpuLocal"),
    (["gpu"], True, "HostVisible"),
    (["npu"], False, "NpuLocal"),
    (["npu"], True, "NpuLocal"),
    (["gpu", "npu"], False, "Shared"),
    (["npu", "gpu"], True, "Shared"),
]


@pytest.mark.parametrize("names,coherent,placement_name", PROFILE_CASES)
def test_profiles_describe_before_allocating(rt, names, coherent, placement_name):
    sites = sites_of(rt)
    before = rt.statistics()
    profiles = rt.allocation_profiles([sites[n] for n in names], coherent_gpu=coherent)
    assert rt.statistics() == before, "querying profiles allocates nothing"
    assert len(profiles) >= 1
    p = profiles[0]
    assert type(p.placement).__name__ == placement_name
    gpu_coherent = coherent and "gpu" in names
    assert p.coherent_gpu == gpu_coherent
    admitted = {"host", *names}
    for producer in admitted:
        for consumer in admitted:
            facts = p.visibility(sites[producer], sites[consumer])
            release, acquire, atomic = expected(producer, consumer, gpu_coherent)
            assert (as_tuple(facts.release), as_tuple(facts.acquire), facts.atomic_scope_32) == (
                release,
                acquire,
                atomic,
            )
    buf = p.allocate(4096)
    assert buf.placement == p.placement and buf.nbytes == 4096
    assert rt.statistics().allocations == before.allocations + 1
    for producer in admitted:
        for consumer in admitted:
            a = p.visibility(sites[producer], sites[consumer])
            b = buf.visibility(sites[producer], sites[consumer])
            assert (a.release, a.acquire, a.atomic_scope_64) == (b.release, b.acquire, b.atomic_scope_64)


def test_profile_size_limits(rt):
    p = rt.allocation_profiles([rt.gpu(), rt.npu()])[0]
    assert p.byte_granularity >= 1 and p.maximum_bytes >= 1 << 30
    before = rt.statistics()
    for bad in (0, p.maximum_bytes + 1):
        with pytest.raises(ValueError):
            p.allocate(bad)
    assert rt.statistics() == before


def test_profile_query_errors(rt):
    with pytest.raises(ValueError, match="empty"):
        rt.allocation_profiles([])
    with pytest.raises(ValueError, match="unique"):
        rt.allocation_profiles([rt.gpu(), rt.gpu()])
    with pytest.raises(ValueError, match="another runtime"):
        rt.allocation_profiles([hx.Runtime().gpu()])
    with pytest.raises(ValueError, match="not 'host'"):
        rt.allocation_profiles(["host"])


# --- per-storage visibility state and checked mode --------------------------

ENGINES = ["host", "gpu", "npu"]


class StateModel:
    """HRX §2.4 in plain Python: last writer, visible set, maintenance bytes."""

    def __init__(self, initial_writer, nbytes, needs_maintenance):
        self.last_writer = initial_writer
        self.visible = {initial_writer}
        self.nbytes = nbytes
        self.needs_maintenance = needs_maintenance

    def make_visible(self, engine):
        if engine in self.visible:
            return 0
        self.visible.add(engine)
        return self.nbytes if self.needs_maintenance else 0

    def mark_written(self, engine):
        self.last_writer = engine
        self.visible = {engine}

    def read_ok(self, engine):
        return engine in self.visible


@pytest.mark.parametrize("placement_name", ["GpuLocal", "HostVisible", "NpuLocal", "Shared"])
@given(ops=st.lists(st.tuples(st.sampled_from(["visible", "written", "read", "write"]), st.sampled_from(ENGINES))))
def test_visibility_state_machine_matches_model(placement_name, ops):
    rt = hx.Runtime(check_visibility=True)
    buf = rt.allocate(192, make_placement(placement_name, rt))
    model = StateModel("gpu" if placement_name == "GpuLocal" else "host", 192, placement_name != "HostVisible")
    for op, engine in ops:
        before = rt.statistics().cache_maintenance_bytes
        if op == "visible":
            assert buf._make_visible(engine) == model.make_visible(engine) == (
                rt.statistics().cache_maintenance_bytes - before
            )
        elif op == "written":
            buf._mark_written(engine)
            model.mark_written(engine)
        elif op == "read":
            if model.read_ok(engine):
                buf._engine_access(engine, hx.Access.READ)
            else:
                with pytest.raises(hx.HrxError, match="visibility violation"):
                    buf._engine_access(engine, hx.Access.READ_WRITE)
        else:
            buf._engine_access(engine, hx.Access.WRITE)  # writes never need prior visibility
        state = buf._state()
        assert state["last_writer"] == model.last_writer
        assert set(state["visible_to"]) == model.visible


def test_host_guards_drive_the_state(rt):
    npu = rt.npu()
    buf = rt.allocate(128, hx.Shared(npu))
    buf._mark_written("npu")
    before = rt.statistics().cache_maintenance_bytes
    with buf.map_read():
        pass
    assert rt.statistics().cache_maintenance_bytes == before + 128, "host acquire of NPU output"
    assert set(buf._state()["visible_to"]) == {"npu", "host"}
    with buf.map_write():
        pass
    assert buf._state()["last_writer"] == "host" and buf._state()["visible_to"] == ["host"]
    with pytest.raises(hx.HrxError, match="visibility violation"):
        buf._engine_access("npu", hx.Access.READ)
    assert buf._make_visible("npu") == 128
    buf._engine_access("npu", hx.Access.READ)
