"""Host mapping guards (HRX reference §1.8) and the host views they hand out.

Rejections, in order: GpuLocal → UnsupportedError; poisoned storage →
DeviceLostError (with the original text); a conflicting *host* guard →
BusyError at once (never a wait, also for the blocking variants); conflicting
*device* use (any pending use for a write, a pending writer for a read) →
blocking variants wait, try_ variants raise BusyError "allocation is in device
use". The tests compare against a small plain-Python model of that rule.
"""

from __future__ import annotations

import faulthandler
import sys
import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import hrxarray as hx
from helpers import make_placement
from hrxarray._hostview import HostView

# --------------------------------------------------------------------------
# fixtures and helpers

HOST_MAPPED = ["HostVisible", "NpuLocal", "Shared"]
# HRX: host cache maintenance is skipped only for coherent, GPU-only backing.
NEEDS_MAINTENANCE = {"HostVisible": False, "NpuLocal": True, "Shared": True}
# An engine that can really write each placement (HostVisible is not NPU-bindable).
DEVICE_WRITER = {"HostVisible": "gpu", "NpuLocal": "npu", "Shared": "npu"}
MAPS = ["map_read", "map_write", "try_map_read", "try_map_write"]
WATCHDOG_S = 120  # a hang in a threaded test aborts the run with tracebacks instead of wedging CI

# rt and npu fixtures: tests/conftest.py


def placement_for(rt, name):
    return make_placement(name, rt)


def alloc(rt, name, nbytes=256):
    return rt.allocate(nbytes, placement_for(rt, name))


def maint(rt):
    return rt.statistics().cache_maintenance_bytes


class Expect:
    OK = "ok"
    BUSY_HOST = "busy_host"
    BUSY_DEVICE = "busy_device"
    WAIT = "wait"
    LOST = "lost"


def model_outcome(*, write, wait, poisoned, readers, writer, dev_readers, dev_writers):
    """HRX §1.8 in order: poison, host conflict, device conflict."""
    if poisoned:
        return Expect.LOST
    if writer or (write and readers):
        return Expect.BUSY_HOST
    device_conflict = (dev_readers + dev_writers > 0) if write else dev_writers > 0
    if device_conflict:
        return Expect.WAIT if wait else Expect.BUSY_DEVICE
    return Expect.OK


def check_raises(outcome, fn, poison_text=None):
    """Call fn and check it matches a non-OK model outcome."""
    if outcome == Expect.LOST:
        with pytest.raises(hx.DeviceLostError) as info:
            fn()
        if poison_text is not None:
            assert poison_text in str(info.value)
    elif outcome == Expect.BUSY_HOST:
        with pytest.raises(hx.BusyError, match="conflicting host mapping"):
            fn()
    elif outcome == Expect.BUSY_DEVICE:
        with pytest.raises(hx.BusyError, match="allocation is in device use"):
            fn()
    else:
        raise AssertionError(outcome)


@pytest.fixture
def watchdog():
    faulthandler.dump_traceback_later(WATCHDOG_S, exit=True, file=sys.__stderr__)
    yield
    faulthandler.cancel_dump_traceback_later()


def run_in_thread(fn):
    """Run fn in a daemon thread; returns (thread, box) with box['value'] / box['error']."""
    box = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            box["error"] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    return t, box


# --------------------------------------------------------------------------
# basics: mappings and views


@pytest.mark.parametrize("name", HOST_MAPPED)
@pytest.mark.parametrize("method", MAPS)
def test_map_returns_guard_and_uint8_view(rt, name, method):
    buf = alloc(rt, name, 200)
    write = method.endswith("write")
    mapping = getattr(buf, method)()
    assert isinstance(mapping, hx.HostMapping)
    assert mapping.active
    assert mapping.writable is write
    with mapping as view:
        assert isinstance(view, HostView)
        assert isinstance(view, np.ndarray)
        assert view.dtype == np.uint8
        assert view.shape == (200,)
        assert view.flags.writeable is write
        np.testing.assert_array_equal(view, np.zeros(200, np.uint8))  # zero-filled
        state = buf._state()
        assert state["host_writer"] is write
        assert state["host_readers"] == (0 if write else 1)
        if not write:
            with pytest.raises(ValueError, match="read-only"):
                view[0] = 1
    assert not mapping.active
    state = buf._state()
    assert state["host_writer"] is False and state["host_readers"] == 0
    mapping.release()  # idempotent
    assert buf._state()["host_readers"] == 0


@pytest.mark.parametrize("method", MAPS)
def test_gpu_local_is_not_host_mapped(rt, method):
    buf = alloc(rt, "GpuLocal")
    buf._poison("boom")  # rule 1 comes before rule 2
    before, stats = buf._state(), rt.statistics()
    with pytest.raises(hx.UnsupportedError, match="not host mapped"):
        getattr(buf, method)()
    assert buf._state() == before
    assert rt.statistics() == stats


@pytest.mark.parametrize("name", HOST_MAPPED)
def test_many_readers_one_writer(rt, name):
    buf = alloc(rt, name)
    readers = [buf.map_read(), buf.try_map_read(), buf.map_read()]
    assert buf._state()["host_readers"] == 3
    for method in ("map_write", "try_map_write"):
        before = buf._state()
        with pytest.raises(hx.BusyError, match="conflicting host mapping"):
            getattr(buf, method)()
        assert buf._state() == before
    for r in readers:
        r.release()
    w = buf.map_write()
    for method in MAPS:
        before = buf._state()
        with pytest.raises(hx.BusyError, match="conflicting host mapping"):
            getattr(buf, method)()
        assert buf._state() == before
    w.release()
    with buf.try_map_write():
        pass


@pytest.mark.parametrize("name", HOST_MAPPED)
def test_host_conflict_is_busy_even_with_device_use_pending(rt, name, watchdog):
    """A conflicting host guard raises at once; the blocking variants do not wait for the device."""
    buf = alloc(rt, name)
    w = buf.map_write()
    with buf._device_lease(hx.Access.WRITE):
        for method in ("map_read", "map_write"):
            t0 = time.monotonic()
            with pytest.raises(hx.BusyError, match="conflicting host mapping"):
                getattr(buf, method)()
            assert time.monotonic() - t0 < 5
    w.release()


# --------------------------------------------------------------------------
# device-use leases


@pytest.mark.parametrize("name", HOST_MAPPED)
@pytest.mark.parametrize("access", ["READ", "WRITE", "READ_WRITE"])
def test_device_lease_conflicts(rt, name, access):
    buf = alloc(rt, name)
    acc = getattr(hx.Access, access)
    lease = buf._device_lease(acc)
    assert isinstance(lease, hx.DeviceLease)
    assert lease.active
    writes = access != "READ"
    state = buf._state()
    assert (state["device_readers"], state["device_writers"]) == ((0, 1) if writes else (1, 0))

    for write in (False, True):
        outcome = model_outcome(
            write=write, wait=False, poisoned=False, readers=0, writer=False,
            dev_readers=0 if writes else 1, dev_writers=1 if writes else 0,
        )
        method = "try_map_write" if write else "try_map_read"
        if outcome == Expect.OK:
            getattr(buf, method)().release()
        else:
            before = buf._state()
            check_raises(outcome, getattr(buf, method))
            assert buf._state() == before
    lease.release()
    lease.release()  # idempotent
    assert not lease.active
    state = buf._state()
    assert (state["device_readers"], state["device_writers"]) == (0, 0)
    buf.try_map_write().release()


def test_device_lease_context_manager(rt, npu):
    buf = rt.allocate(64, hx.Shared(npu))
    with buf._device_lease(hx.Access.READ_WRITE) as lease:
        assert isinstance(lease, hx.DeviceLease)
        assert buf._state()["device_writers"] == 1
        with pytest.raises(hx.BusyError, match="allocation is in device use"):
            buf.try_map_read()
    assert not lease.active
    assert buf._state()["device_writers"] == 0
    buf.try_map_read().release()


def test_dropping_a_lease_object_releases_it(rt, npu):
    buf = rt.allocate(64, hx.Shared(npu))
    lease = buf._device_lease(hx.Access.WRITE)
    assert buf._state()["device_writers"] == 1
    del lease
    assert buf._state()["device_writers"] == 0


def test_dropping_a_guard_object_releases_it(rt, npu):
    buf = rt.allocate(64, hx.Shared(npu))
    g = buf.map_write()
    del g
    assert buf._state()["host_writer"] is False
    assert buf._state()["last_writer"] == "host"


# --------------------------------------------------------------------------
# poison


@pytest.mark.parametrize("name", HOST_MAPPED)
@pytest.mark.parametrize("method", MAPS)
def test_poisoned_storage_is_device_lost(rt, name, method, watchdog):
    buf = alloc(rt, name)
    reader = buf.map_read()  # a live guard: poison still wins (rule 2 before rule 3)
    lease = buf._device_lease(hx.Access.WRITE)  # a blocking map must not wait either
    buf._poison("boom: region 7 failed")
    buf._poison("a later failure")  # the first failure is the one kept
    before = buf._state()
    assert before["poison"] == "boom: region 7 failed"
    with pytest.raises(hx.DeviceLostError, match="boom: region 7 failed") as info:
        getattr(buf, method)()
    assert "a later failure" not in str(info.value)
    assert buf._state() == before
    reader.release()
    lease.release()


def test_poison_is_shared_by_aliases(rt, npu):
    buf = rt.allocate(64, hx.Shared(npu))
    alias = buf.clone()
    alias._poison("boom")
    with pytest.raises(hx.DeviceLostError, match="boom"):
        buf.try_map_read()


# --------------------------------------------------------------------------
# aliases share guard state


def test_clone_shares_guard_state(rt, npu):
    buf = rt.allocate(64, hx.NpuLocal(npu))
    alias = buf.clone()
    assert alias.same_storage(buf)
    with buf.map_write():
        with pytest.raises(hx.BusyError, match="conflicting host mapping"):
            alias.try_map_read()
        assert alias._state()["host_writer"] is True
    with alias._device_lease(hx.Access.READ):
        with pytest.raises(hx.BusyError, match="allocation is in device use"):
            buf.try_map_write()
        buf.try_map_read().release()


def test_adopted_alias_shares_guard_state(rt, npu):
    src = rt.allocate(128, hx.HostVisible())
    shared = rt.adopt(src, hx.Shared(npu))
    assert shared.same_storage(src)
    assert shared.placement == hx.Shared(npu)
    with shared.map_read():
        src.try_map_read().release()  # readers coexist across aliases
        with pytest.raises(hx.BusyError, match="conflicting host mapping"):
            src.try_map_write()
    with src.map_write() as v:
        v[:4] = [1, 2, 3, 4]
        with pytest.raises(hx.BusyError, match="conflicting host mapping"):
            shared.map_read()
    with shared.map_read() as v:
        assert v[:4].tolist() == [1, 2, 3, 4]
    with src._device_lease(hx.Access.WRITE):
        with pytest.raises(hx.BusyError, match="allocation is in device use"):
            shared.try_map_read()
    # Once the NPU is admitted, host maintenance is needed for the allocation.
    assert src._state()["needs_host_maintenance"] is True


# --------------------------------------------------------------------------
# visibility: guards perform the host acquire; write guards make the host the writer


@pytest.mark.parametrize("name", HOST_MAPPED)
@pytest.mark.parametrize("method", MAPS)
def test_guard_performs_host_acquire(rt, name, method):
    buf = alloc(rt, name, 300)
    engine = DEVICE_WRITER[name]
    buf._mark_written(engine)
    state = buf._state()
    assert state["last_writer"] == engine and state["visible_to"] == [engine]
    before = maint(rt)
    with getattr(buf, method)():
        state = buf._state()
        assert "host" in state["visible_to"]
        assert maint(rt) - before == (300 if NEEDS_MAINTENANCE[name] else 0)
    # Nothing new was written by a device: a second guard needs no maintenance.
    mid = maint(rt)
    with buf.map_read():
        pass
    assert maint(rt) == mid


@pytest.mark.parametrize("name", HOST_MAPPED)
def test_write_guard_makes_host_the_last_writer(rt, name):
    buf = alloc(rt, name)
    engine = DEVICE_WRITER[name]
    buf._mark_written(engine)
    with buf.map_read():
        pass
    state = buf._state()
    assert state["last_writer"] == engine  # a read guard does not change the writer
    assert set(state["visible_to"]) == {engine, "host"}
    with buf.map_write():
        assert buf._state()["last_writer"] == engine  # only dropping the guard does
    state = buf._state()
    assert state["last_writer"] == "host"
    assert state["visible_to"] == ["host"]


@pytest.mark.parametrize("name", HOST_MAPPED)
def test_failing_map_changes_nothing(rt, name):
    """A refused guard performs no acquire: visibility, counts and statistics stay put."""
    buf = alloc(rt, name)
    buf._mark_written(DEVICE_WRITER[name])
    lease = buf._device_lease(hx.Access.WRITE)
    before, stats = buf._state(), rt.statistics()
    for method in ("try_map_read", "try_map_write"):
        with pytest.raises(hx.BusyError):
            getattr(buf, method)()
        assert buf._state() == before
        assert rt.statistics() == stats
    lease.release()
    reader = buf.map_read()
    before, stats = buf._state(), rt.statistics()
    with pytest.raises(hx.BusyError):
        buf.map_write()
    assert buf._state() == before
    assert rt.statistics() == stats
    reader.release()


@settings(max_examples=40, deadline=None)
@given(
    name=st.sampled_from(HOST_MAPPED),
    nbytes=st.integers(1, 512),
    writes=st.lists(st.tuples(st.integers(0, 511), st.integers(0, 511), st.integers(0, 255)), max_size=6),
)
def test_writes_through_write_views_are_seen_by_read_guards(name, nbytes, writes):
    rt = hx.Runtime()
    buf = alloc(rt, name, nbytes)
    alias = buf.clone()
    model = np.zeros(nbytes, np.uint8)
    for i, (a, b, value) in enumerate(writes):
        lo, hi = sorted((a % nbytes, b % nbytes))
        target = buf if i % 2 else alias
        with target.map_write() as v:
            v[lo:hi + 1] = value
        model[lo:hi + 1] = value
        with buf.try_map_read() as r:
            np.testing.assert_array_equal(r, model)
    with alias.map_read() as r:
        assert r.tobytes() == model.tobytes()


# --------------------------------------------------------------------------
# views refuse use after their guard closed; copies stay usable


USE_AFTER_CLOSE = {
    "index": lambda v: v[0],
    "slice": lambda v: v[1:3],
    "assign": lambda v: v.__setitem__(0, 1),
    "ufunc": lambda v: np.add(v, 1),
    "operator": lambda v: v + 1,
    "sum": lambda v: np.sum(v),
    "method_sum": lambda v: v.sum(),
    "tobytes": lambda v: v.tobytes(),
    "len": lambda v: len(v),
    "iter": lambda v: list(v),
    "tolist": lambda v: v.tolist(),
    "copy": lambda v: v.copy(),
    "fill": lambda v: v.fill(0),
}


@pytest.mark.parametrize("use", sorted(USE_AFTER_CLOSE))
@pytest.mark.parametrize("method", ["map_read", "map_write"])
def test_view_use_after_close_raises(rt, npu, method, use):
    buf = rt.allocate(64, hx.Shared(npu))
    with getattr(buf, method)() as v:
        sl = v[4:20]
        assert isinstance(sl, HostView)
        assert np.shares_memory(np.asarray(sl), np.asarray(v))
    op = USE_AFTER_CLOSE[use]
    for target in (v, sl):
        with pytest.raises(ValueError):
            op(target)
    assert "released" in repr(v)


@pytest.mark.parametrize("method", ["map_read", "map_write"])
def test_copies_made_inside_the_block_stay_usable(rt, npu, method):
    buf = rt.allocate(16, hx.NpuLocal(npu))
    with buf.map_write() as w:
        w[:] = np.arange(16, dtype=np.uint8)
    expected = np.arange(16, dtype=np.uint8)
    with getattr(buf, method)() as v:
        c1 = v.copy()
        c2 = v[[0, 1]]
        c3 = v + 1
        c4 = np.sum(v)
        c5 = v[2:6].copy()
    for c in (c1, c2, c3, c5):
        assert not isinstance(c, HostView) or c._hx_mapping is None or c._hx_mapping.active
    np.testing.assert_array_equal(c1, expected)
    np.testing.assert_array_equal(c2, expected[[0, 1]])
    np.testing.assert_array_equal(c3, expected + 1)
    assert c4 == expected.sum()
    np.testing.assert_array_equal(c5, expected[2:6])
    c1[0] = 99  # an independent copy, writable
    with buf.map_read() as v:
        assert v[0] == 0


def test_raw_array_after_release_raises(rt, npu):
    buf = rt.allocate(16, hx.Shared(npu))
    m = buf.map_read()
    m.release()
    with pytest.raises(ValueError, match="already released"):
        m._raw_array()


# --------------------------------------------------------------------------
# stateful model of readers / writers / device leases / poison


class GuardMachine(RuleBasedStateMachine):
    """Random host guards and device leases on one storage (and its aliases) vs a model."""

    def __init__(self):
        super().__init__()
        self.rt = None

    @initialize(name=st.sampled_from(HOST_MAPPED), nbytes=st.integers(1, 4096))
    def setup(self, name, nbytes):
        self.rt = hx.Runtime()
        self.name = name
        self.nbytes = nbytes
        buf = alloc(self.rt, name, nbytes)
        self.handles = [buf, buf.clone()]
        # model
        self.readers = []  # live read HostMappings
        self.writer = None  # live write HostMapping
        self.leases = []  # (DeviceLease, writes?)
        self.poison = None
        self.last_writer = "host"
        self.visible = {"host"}
        self.maintained = 0

    # -- model helpers --
    def dev_counts(self):
        w = sum(1 for _, writes in self.leases if writes)
        return len(self.leases) - w, w

    def outcome(self, write, wait):
        dr, dw = self.dev_counts()
        return model_outcome(
            write=write, wait=wait, poisoned=self.poison is not None, readers=len(self.readers),
            writer=self.writer is not None, dev_readers=dr, dev_writers=dw,
        )

    def acquired(self):
        if "host" not in self.visible:
            self.visible.add("host")
            if NEEDS_MAINTENANCE[self.name]:
                self.maintained += self.nbytes

    def do_map(self, handle, write, wait, keep):
        method = ("map_" if wait else "try_map_") + ("write" if write else "read")
        outcome = self.outcome(write, wait)
        if outcome == Expect.WAIT:
            return  # the blocking variants would wait: covered by the threaded tests
        fn = getattr(self.handles[handle], method)
        if outcome == Expect.OK:
            m = fn()
            assert isinstance(m, hx.HostMapping) and m.active and m.writable is write
            self.acquired()
            if write:
                self.writer = m
            else:
                self.readers.append(m)
            if not keep:  # a short-lived guard: check the state while it lives, then drop it
                self.state_matches_model()
                self.drop_guard(m, via_exit=True)
        else:
            check_raises(outcome, fn, self.poison)

    def drop_guard(self, m, via_exit):
        if via_exit:
            m.__exit__(None, None, None)
        else:
            m.release()
        assert not m.active
        if m is self.writer:
            self.writer = None
            self.last_writer = "host"
            self.visible = {"host"}
        else:
            self.readers.remove(m)

    # -- rules --
    @rule(handle=st.integers(0, 1), keep=st.booleans())
    def try_map_read(self, handle, keep):
        self.do_map(handle, False, False, keep)

    @rule(handle=st.integers(0, 1), keep=st.booleans())
    def try_map_write(self, handle, keep):
        self.do_map(handle, True, False, keep)

    @rule(handle=st.integers(0, 1), write=st.booleans(), keep=st.booleans())
    def blocking_map_when_it_would_not_wait(self, handle, write, keep):
        self.do_map(handle, write, True, keep)

    @precondition(lambda self: self.readers or self.writer is not None)
    @rule(data=st.data(), via_exit=st.booleans())
    def release_guard(self, data, via_exit):
        live = self.readers + ([self.writer] if self.writer is not None else [])
        m = data.draw(st.sampled_from(live), label="guard")
        self.drop_guard(m, via_exit)

    @rule(handle=st.integers(0, 1), access=st.sampled_from(["READ", "WRITE", "READ_WRITE"]))
    def take_lease(self, handle, access):
        lease = self.handles[handle]._device_lease(getattr(hx.Access, access))
        self.leases.append((lease, access != "READ"))
        # Probe both kinds of guard right away (short-lived), so that every
        # lease is checked against reads and writes.
        self.state_matches_model()
        self.do_map(1 - handle, False, False, keep=False)
        self.do_map(handle, True, False, keep=False)

    @precondition(lambda self: self.leases)
    @rule(data=st.data())
    def release_lease(self, data):
        i = data.draw(st.integers(0, len(self.leases) - 1), label="lease")
        lease, _ = self.leases.pop(i)
        lease.release()
        assert not lease.active

    @rule(engine=st.sampled_from(["gpu", "npu"]))
    def device_wrote(self, engine):
        self.handles[0]._mark_written(engine)
        self.last_writer = engine
        self.visible = {engine}

    @rule(roll=st.integers(0, 7), text=st.sampled_from(["boom", "region 3 faulted"]))
    def poison(self, roll, text):
        if roll != 0:  # rarely
            return
        self.handles[1]._poison(text)
        if self.poison is None:
            self.poison = text

    # -- invariants --
    @invariant()
    def state_matches_model(self):
        if self.rt is None:
            return
        dr, dw = self.dev_counts()
        for h in self.handles:
            s = h._state()
            assert s["host_readers"] == len(self.readers)
            assert s["host_writer"] is (self.writer is not None)
            assert s["host_leases"] == 0
            assert (s["device_readers"], s["device_writers"]) == (dr, dw)
            assert s["poison"] == self.poison
            assert s["last_writer"] == self.last_writer
            assert set(s["visible_to"]) == self.visible
        assert self.rt.statistics().cache_maintenance_bytes == self.maintained

    def teardown(self):
        for m in self.readers + ([self.writer] if self.writer is not None else []):
            m.release()
        for lease, _ in self.leases:
            lease.release()


GuardMachine.TestCase.settings = settings(max_examples=50, stateful_step_count=30, deadline=None)
TestGuardMachine = GuardMachine.TestCase


# --------------------------------------------------------------------------
# blocking variants wait for device use (threads)


@pytest.mark.parametrize("name", HOST_MAPPED)
def test_blocking_map_write_waits_for_a_device_writer(rt, name, watchdog):
    buf = alloc(rt, name)
    have_lease = threading.Event()
    drop_lease = threading.Event()

    def device():
        lease = buf._device_lease(hx.Access.WRITE)
        have_lease.set()
        assert drop_lease.wait(timeout=30)
        lease.release()

    holder = threading.Thread(target=device, daemon=True)
    holder.start()
    assert have_lease.wait(timeout=10)

    # While the worker is blocked, other Python threads keep running (the GIL is released).
    ticks = [0]
    stop_ticking = threading.Event()

    def ticker():
        while not stop_ticking.is_set():
            ticks[0] += 1
            time.sleep(0.001)

    ticking = threading.Thread(target=ticker, daemon=True)

    waiter, box = run_in_thread(buf.map_write)
    time.sleep(0.05)
    ticking.start()
    time.sleep(0.2)
    assert waiter.is_alive() and not box, "map_write returned while a device writer was pending"
    seen = ticks[0]
    time.sleep(0.1)
    assert ticks[0] > seen, "no other Python thread ran while map_write was blocked"
    assert buf._state()["host_writer"] is False
    # The try_ variant does not wait meanwhile.
    with pytest.raises(hx.BusyError, match="allocation is in device use"):
        buf.try_map_write()

    drop_lease.set()
    holder.join(timeout=10)
    assert not holder.is_alive()
    waiter.join(timeout=10)
    assert not waiter.is_alive(), "map_write did not return after the lease was dropped"
    stop_ticking.set()
    ticking.join(timeout=10)
    assert not ticking.is_alive()
    assert "error" not in box, box.get("error")
    mapping = box["value"]
    assert isinstance(mapping, hx.HostMapping) and mapping.writable and mapping.active
    assert buf._state()["host_writer"] is True
    mapping.release()


@pytest.mark.parametrize("access", ["READ", "WRITE"])
def test_blocking_map_read_waits_only_for_device_writers(rt, npu, access, watchdog):
    buf = rt.allocate(64, hx.Shared(npu))
    lease = buf._device_lease(getattr(hx.Access, access))
    waiter, box = run_in_thread(buf.map_read)
    if access == "READ":
        waiter.join(timeout=10)
        assert not waiter.is_alive()
        assert box["value"].active
        box["value"].release()
        lease.release()
        return
    time.sleep(0.2)
    assert waiter.is_alive() and not box
    lease.release()
    waiter.join(timeout=10)
    assert not waiter.is_alive()
    assert "error" not in box, box.get("error")
    assert not box["value"].writable
    box["value"].release()


def test_waiting_map_wakes_with_device_lost_on_poison(rt, npu, watchdog):
    buf = rt.allocate(64, hx.Shared(npu))
    lease = buf._device_lease(hx.Access.READ)
    waiter, box = run_in_thread(buf.map_write)
    time.sleep(0.2)
    assert waiter.is_alive() and not box
    buf._poison("boom while waiting")
    waiter.join(timeout=10)
    assert not waiter.is_alive()
    assert isinstance(box.get("error"), hx.DeviceLostError)
    assert "boom while waiting" in str(box["error"])
    assert buf._state()["host_writer"] is False
    lease.release()


def test_many_waiters_all_wake(rt, npu, watchdog):
    buf = rt.allocate(64, hx.Shared(npu))
    lease = buf._device_lease(hx.Access.WRITE)
    waiters = [run_in_thread(buf.map_read) for _ in range(4)]
    time.sleep(0.2)
    assert all(t.is_alive() for t, _ in waiters)
    lease.release()
    for t, box in waiters:
        t.join(timeout=10)
        assert not t.is_alive()
        assert box["value"].active
    assert buf._state()["host_readers"] == 4
    for _, box in waiters:
        box["value"].release()
    assert buf._state()["host_readers"] == 0


def test_device_leases_end_without_losing_a_host_waiter(rt, watchdog):
    """Note [Device leases end without the lock]: a lease ends without the storage mutex (a lane retiring a
    submission) and notifies only when a host guard waits. With more threads than CPUs (6 submitting
    graphs that write or read the allocation, 4 mapping the
    same allocation with blocking read and write guards, which wait for device use and are refused by each
    other) no waiter may miss its release (a hang, caught by the watchdog), no write mapping may coexist
    with a device lease, and the counts end at zero."""
    buf = alloc(rt, "HostVisible")
    rounds = 150
    errors, overlaps, mapped = [], [], []

    def device(t):
        try:
            g = rt.graph()
            if t % 2:
                g.fill(buf, t)  # a device writer of buf
            else:
                g.copy_on(alloc(rt, "HostVisible"), buf, "upload")  # a device reader of buf
            run = g.prepare()
            last = None
            for _ in range(rounds):
                try:
                    last = run.submit()
                except hx.BusyError:  # a live host guard or a full runtime: refused, nothing changed
                    time.sleep(0)
            if last is not None:
                assert last.wait(60), f"device thread {t} timed out"
        except BaseException as e:  # reported below
            errors.append((t, e))

    def host(t):
        try:
            k = 0
            while k < rounds // 3:
                try:
                    m = buf.map_write() if (t + k) % 2 else buf.map_read()
                except hx.BusyError as e:  # another host guard (those are refused, not waited for)
                    assert "conflicting host mapping" in str(e), e
                    time.sleep(0)
                    continue
                k += 1
                state = buf._state()
                if m.writable and (state["device_writers"] or state["device_readers"]):
                    overlaps.append(state)
                if not m.writable and state["device_writers"]:
                    overlaps.append(state)
                mapped.append(t)
                m.release()
        except BaseException as e:  # reported below
            errors.append((100 + t, e))

    threads = [threading.Thread(target=device, args=(t,), daemon=True) for t in range(6)]
    threads += [threading.Thread(target=host, args=(t,), daemon=True) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
        assert not th.is_alive(), "a thread hung: a host guard missed the end of a device lease"
    assert not errors, errors
    assert not overlaps, [sorted(o.items()) for o in overlaps[:2]]
    assert len(mapped) == 4 * (rounds // 3)
    state = buf._state()
    assert state["device_writers"] == 0 and state["device_readers"] == 0
    assert not state["host_writer"] and state["host_readers"] == 0
