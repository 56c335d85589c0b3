"""Resident GPU–NPU exchange (HRX §2.10) against a plain-Python model of the fixture."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hrxarray as hx

T = 30
MASK = 0xFFFFFFFF


def request_word(seed, slot, gen, i):
    s = seed if slot == 0 else (seed + 0x9E3779B9) & MASK
    return (s * 2654435761 + gen * 40503 + i) & MASK


def model_slots(cfg):
    """The request and response slots' final words after every generation."""
    words = cfg["slot_stride"] // 4
    req = np.zeros((cfg["credits"], words), np.uint32)
    rsp = np.zeros((cfg["credits"], words), np.uint32)
    for gen in range(1, cfg["generations"] + 1):
        slot = (gen - 1) % cfg["credits"]
        payload = [request_word(cfg["seed"], slot, gen, i) for i in range(cfg["payload_words"])]
        o = cfg["word_offset"]
        req[slot, 0] = gen
        req[slot, o : o + len(payload)] = payload
        rsp[slot, 0] = gen
        rsp[slot, o : o + len(payload)] = [(p * 3 + gen) & MASK for p in payload]
    return req, rsp


def session(rt, **cfg):
    npu = rt.npu()
    startup = hx.ResidentStartup(rt.gpu(), npu)
    full = dict(generations=1, payload_words=16, word_offset=1, credits=1, slot_stride=256, seed=1)
    full.update(cfg)
    ex = rt.allocate(full["slot_stride"] * full["credits"] * 2, hx.Shared(npu))
    ctl = rt.allocate(256, hx.Shared(npu))
    s = hx.ResidentSession(startup, startup.gpu_program(ex, ctl, **cfg), startup.npu_program(ex, **cfg))
    return s, startup, ex, ctl, full


def control_words(ctl):
    with ctl.map_read() as v:
        return v.view(np.uint32)[48:51].tolist()


@settings(max_examples=25, deadline=None)
@given(
    generations=st.integers(1, 40),
    payload_words=st.integers(1, 60),
    word_offset=st.integers(1, 16),
    credits=st.integers(1, 2),
    seed=st.integers(0, 2**32 - 1),
    npu_first=st.booleans(),
)
def test_exchange_matches_model(generations, payload_words, word_offset, credits, seed, npu_first):
    rt = hx.Runtime()
    stride = -(-(word_offset + payload_words) * 4 // 64) * 64  # the smallest slot that fits
    s, startup, ex, ctl, cfg = session(
        rt,
        generations=generations,
        payload_words=payload_words,
        word_offset=word_offset,
        credits=credits,
        slot_stride=stride,
        seed=seed,
    )
    if npu_first:
        s.submit_npu()
        s.submit_gpu()
    else:
        s.submit_gpu()
        s.submit_npu()
    s.start()
    assert s.wait(T)
    assert s.done() and startup.decision == 1
    assert control_words(ctl) == [1, generations, 0]
    req, rsp = model_slots(cfg)
    with ex.map_read() as v:
        words = v.view(np.uint32).reshape(2 * credits, -1).copy()
    np.testing.assert_array_equal(words[:credits], req)
    np.testing.assert_array_equal(words[credits:], rsp)


def test_abort_before_start(rt):
    s, startup, ex, ctl, _ = session(rt, generations=5)
    s.submit_gpu()
    s.submit_npu()
    s.abort()
    assert s.wait(T)
    assert startup.decision == 2
    assert control_words(ctl)[0] == 2
    with ex.map_read() as v:
        assert not v.any(), "no generation ran"


def test_protocol_rules(rt):
    s, startup, ex, ctl, _ = session(rt, generations=3)
    with pytest.raises(hx.BusyError, match="decision"):
        s.wait(1)
    with pytest.raises(hx.BusyError, match="both participants"):
        s.start()
    s.submit_gpu()
    with pytest.raises(hx.BusyError, match="already accepted"):
        s.submit_gpu()
    with pytest.raises(hx.BusyError, match="both participants"):
        s.start()
    # While a participant is accepted the storage is in device use.
    with pytest.raises(hx.BusyError, match="device use"):
        ex.try_map_write()
    s.submit_npu()
    s.start()
    with pytest.raises(hx.BusyError, match="already decided"):
        s.abort()
    with pytest.raises(hx.BusyError, match="already decided"):
        s.start()
    assert s.wait(T)
    # A decided startup cannot serve a new session.
    with pytest.raises(hx.BusyError, match="already decided"):
        hx.ResidentSession(startup, startup.gpu_program(ex, ctl, generations=3), startup.npu_program(ex, generations=3))


def test_session_validation(rt):
    npu = rt.npu()
    startup = hx.ResidentStartup(rt.gpu(), npu)
    ex = rt.allocate(512, hx.Shared(npu))
    ctl = rt.allocate(256, hx.Shared(npu))
    with pytest.raises(ValueError, match="disagree"):
        hx.ResidentSession(startup, startup.gpu_program(ex, ctl, seed=1), startup.npu_program(ex, seed=2))
    with pytest.raises(ValueError, match="GPU program then an NPU program"):
        hx.ResidentSession(startup, startup.npu_program(ex), startup.npu_program(ex))
    with pytest.raises(ValueError, match="share one exchange view"):
        hx.ResidentSession(startup, startup.gpu_program(ex, ctl), startup.npu_program(ex.view(0, 256)))
    host_only = rt.allocate(512, hx.HostVisible())
    with pytest.raises(hx.UnsupportedError, match="Shared"):
        hx.ResidentSession(startup, startup.gpu_program(host_only, ctl), startup.npu_program(host_only))
    with pytest.raises(hx.ContractError, match="exchange view needs"):
        small = rt.allocate(256, hx.Shared(npu))
        hx.ResidentSession(startup, startup.gpu_program(small, ctl, credits=2), startup.npu_program(small, credits=2))
    for bad in (dict(payload_words=0), dict(credits=3), dict(slot_stride=100), dict(word_offset=17), dict(generations=0)):
        with pytest.raises(ValueError):
            startup.gpu_program(ex, ctl, **bad)
    with pytest.raises(ValueError, match="different runtimes"):
        hx.ResidentStartup(rt.gpu(), hx.Runtime().npu())


def test_dropping_an_undecided_session_aborts(rt):
    s, startup, ex, ctl, _ = session(rt, generations=2)
    s.submit_gpu()
    del s
    assert startup.decision == 2
    assert control_words(ctl)[0] == 2


# Eight Python threads wait on each session at once (wait releases the GIL).
# Two waiters used to join the same participant thread, and the second join
# never returned: within a few of these sessions, nearly always.
CONCURRENT_WAITS = textwrap.dedent("""
    import threading
    import hrxarray as hx
    rt = hx.Runtime()
    npu = rt.npu()
    results = []
    for seed in range(100):
        startup = hx.ResidentStartup(rt.gpu(), npu)
        ex, ctl = rt.allocate(512, hx.Shared(npu)), rt.allocate(256, hx.Shared(npu))
        cfg = dict(generations=20, payload_words=16, seed=seed)
        s = hx.ResidentSession(startup, startup.gpu_program(ex, ctl, **cfg), startup.npu_program(ex, **cfg))
        s.submit_gpu()
        s.submit_npu()
        s.start()
        barrier = threading.Barrier(8)
        def waiter():
            barrier.wait()
            results.append(s.wait(30))
        threads = [threading.Thread(target=waiter) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        with ctl.map_read() as v:
            assert v.view("uint32")[48:51].tolist() == [1, 20, 0]
    print(len(results), all(results))
""")


def test_concurrent_waits_on_one_session_all_return():
    # In a subprocess: the failure this guards against is a hang.
    try:
        proc = subprocess.run([sys.executable, "-c", CONCURRENT_WAITS], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("concurrent ResidentSession.wait() calls hung")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["800", "True"]
