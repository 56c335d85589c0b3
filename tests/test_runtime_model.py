"""Random programs against a serial Python model (HRX reference §2.1–2.6, §2.8).

A program is a list of fills, copies (``copy`` and ``copy_on`` with explicit
lanes) and host regions over sub-ranges of buffers in all four placements. It
is cut into several graphs that are submitted back to back without waiting
(some with ``submit_after``, some replayed twice); the final bytes of every
buffer must equal a plain-Python model that runs the same operations one by one
in program order. Hazard inference inside a graph and whole-graph ordering
across submissions are what make the two agree.

Placement rules the generator follows: GpuLocal is GPU-bindable but not host
mapped (fill/copy only; read back through a final copy to HostVisible);
NpuLocal is host mapped but not GPU-bindable (host regions only: a fill or
copy on it is UnsupportedError when the graph is built, tested separately);
HostVisible and Shared take everything.
"""

from __future__ import annotations

import time
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hrxarray as hx
from helpers import make_placement

WAIT_S = 10.0

# The buffers of every program: name -> placement. Sizes are drawn per program.
BUFFERS = [
    ("g0", "GpuLocal"),
    ("g1", "GpuLocal"),
    ("h0", "HostVisible"),
    ("h1", "HostVisible"),
    ("n0", "NpuLocal"),
    ("s0", "Shared"),
    ("s1", "Shared"),
]
PLACEMENT = dict(BUFFERS)
GPU_BINDABLE = [n for n, p in BUFFERS if p != "NpuLocal"]
HOST_MAPPED = [n for n, p in BUFFERS if p != "GpuLocal"]
LANES = [None, "upload", "compute", "download"]  # None: g.copy() picks the lane

# --------------------------------------------------------------------------
# operations: (kind, ...) tuples, interpreted by both the model and the graph


def host_map(k):
    """dst = (src * 3 + k) & 0xFF."""

    def fn(src, dst):
        dst[:] = ((src.astype(np.uint16) * 3 + k) & 0xFF).astype(np.uint8)

    return fn


def host_xor(k):
    """x ^= (i * 7 + k) & 0xFF, in place (READ_WRITE)."""

    def fn(x):
        x ^= ((np.arange(len(x), dtype=np.uint32) * 7 + k) & 0xFF).astype(np.uint8)

    return fn


def host_pattern(k):
    """dst = (i * k + 1) & 0xFF, without reading dst (WRITE)."""

    def fn(dst):
        dst[:] = ((np.arange(len(dst), dtype=np.uint32) * k + 1) & 0xFF).astype(np.uint8)

    return fn


def host_mix(k):
    """dst = a ^ reversed(b) ^ k: two reads, one write."""

    def fn(a, b, dst):
        dst[:] = a ^ b[::-1] ^ np.uint8(k)

    return fn


def model_apply(mem, op):
    """Run one operation on the model (dict of name -> bytearray)."""
    kind = op[0]
    if kind == "fill":
        _, (b, o, n), byte = op
        mem[b][o : o + n] = bytes([byte]) * n
    elif kind == "copy":
        _, (db, do, n), (sb, so, _n), _lane = op
        mem[db][do : do + n] = bytes(mem[sb][so : so + n])
    elif kind == "map":
        _, (sb, so, n), (db, do, _n), k = op
        src = np.frombuffer(bytes(mem[sb][so : so + n]), np.uint8)
        out = np.zeros(n, np.uint8)
        host_map(k)(src, out)
        mem[db][do : do + n] = out.tobytes()
    elif kind == "xor":
        _, (b, o, n), k = op
        x = np.frombuffer(bytes(mem[b][o : o + n]), np.uint8).copy()
        host_xor(k)(x)
        mem[b][o : o + n] = x.tobytes()
    elif kind == "pattern":
        _, (b, o, n), k = op
        out = np.zeros(n, np.uint8)
        host_pattern(k)(out)
        mem[b][o : o + n] = out.tobytes()
    elif kind == "mix":
        _, (ab, ao, n), (bb, bo, _n), (db, do, _m), k = op
        a = np.frombuffer(bytes(mem[ab][ao : ao + n]), np.uint8)
        b = np.frombuffer(bytes(mem[bb][bo : bo + n]), np.uint8)
        out = np.zeros(n, np.uint8)
        host_mix(k)(a, b, out)
        mem[db][do : do + n] = out.tobytes()
    else:  # pragma: no cover - generator and model disagree
        raise AssertionError(kind)


def add_to_graph(g, bufs, op):
    """Append one operation to graph g; bufs maps names to Buffers."""

    def view(r):
        b, o, n = r
        return bufs[b].view(o, n)

    kind = op[0]
    R, W, RW = hx.Access.READ, hx.Access.WRITE, hx.Access.READ_WRITE
    if kind == "fill":
        g.fill(view(op[1]), op[2])
    elif kind == "copy":
        _, d, s, lane = op
        if lane is None:
            g.copy(view(d), view(s))
        else:
            g.copy_on(view(d), view(s), lane)
    elif kind == "map":
        _, s, d, k = op
        g.host(host_map(k), [(view(s), R), (view(d), W)])
    elif kind == "xor":
        g.host(host_xor(op[2]), [(view(op[1]), RW)])
    elif kind == "pattern":
        g.host(host_pattern(op[2]), [(view(op[1]), W)])
    elif kind == "mix":
        _, a, b, d, k = op
        g.host(host_mix(k), [(view(a), R), (view(b), R), (view(d), W)])


def copy_bytes(op):
    return op[1][2] if op[0] == "copy" else 0


# --------------------------------------------------------------------------
# strategies


@st.composite
def ranges(draw, sizes, names, length=None):
    """(buffer, offset, length) inside one of `names`; a fixed length if given."""
    if length is not None:
        names = [b for b in names if sizes[b] >= length]
    b = draw(st.sampled_from(names))
    size = sizes[b]
    n = length if length is not None else draw(st.integers(1, size))
    o = draw(st.integers(0, size - n))
    return (b, o, n)


@st.composite
def copy_ops(draw, sizes):
    db = draw(st.sampled_from(GPU_BINDABLE))
    sb = draw(st.sampled_from(GPU_BINDABLE))
    limit = sizes[db] // 2 if sb == db else min(sizes[db], sizes[sb])
    n = draw(st.integers(1, limit))
    if sb == db:  # two non-overlapping slots of one buffer, in either order
        lo = draw(st.integers(0, sizes[db] - 2 * n))
        hi = draw(st.integers(lo + n, sizes[db] - n))
        do, so = (lo, hi) if draw(st.booleans()) else (hi, lo)
    else:
        do = draw(st.integers(0, sizes[db] - n))
        so = draw(st.integers(0, sizes[sb] - n))
    return ("copy", (db, do, n), (sb, so, n), draw(st.sampled_from(LANES)))


@st.composite
def ops(draw, sizes):
    kind = draw(st.sampled_from(["fill", "copy", "copy", "map", "xor", "pattern", "mix"]))
    k = draw(st.integers(0, 255))
    if kind == "fill":
        return ("fill", draw(ranges(sizes, GPU_BINDABLE)), k)
    if kind == "copy":
        return draw(copy_ops(sizes))
    if kind == "map":
        src = draw(ranges(sizes, HOST_MAPPED))
        return ("map", src, draw(ranges(sizes, HOST_MAPPED, length=src[2])), k)
    if kind == "mix":
        a = draw(ranges(sizes, HOST_MAPPED))
        b = draw(ranges(sizes, HOST_MAPPED, length=a[2]))
        return ("mix", a, b, draw(ranges(sizes, HOST_MAPPED, length=a[2])), k)
    return (kind, draw(ranges(sizes, HOST_MAPPED)), k)


# How a graph is submitted: plain, after the previous submission, after a random
# subset of the earlier ones, or plain and replayed once more right away.
MODES = ["submit", "after_prev", "after_some", "replay"]
PLAIN_MODES = ["submit", "replay"]


@st.composite
def programs(draw, modes=MODES):
    sizes = {name: draw(st.integers(8, 64)) for name, _ in BUFFERS}
    program = draw(st.lists(ops(sizes), min_size=1, max_size=16))
    # cut points between ops: every True starts a new graph
    cuts = draw(st.lists(st.booleans(), min_size=len(program) - 1, max_size=len(program) - 1))
    graphs, current = [], [program[0]]
    for op, cut in zip(program[1:], cuts):
        if cut:
            graphs.append(current)
            current = []
        current.append(op)
    graphs.append(current)
    modes = [draw(st.sampled_from(modes)) for _ in graphs]
    seed = draw(st.integers(0, 2**32 - 1))
    return sizes, graphs, modes, seed


# --------------------------------------------------------------------------
# running a program


def trace_lanes_are_exclusive(events):
    by_lane = {}
    for e in events:
        by_lane.setdefault(e["lane"], []).append(e)
    for lane, evs in by_lane.items():
        evs.sort(key=lambda e: e["start_us"])
        for a, b in zip(evs, evs[1:]):
            assert a["start_us"] + a["duration_us"] <= b["start_us"] + 1e-3, (lane, a, b)


def rescue(rt, completions):
    """Wake a scheduler that lost a wake-up, so this runtime can still drain.

    Any new submission notifies every lane; without this a stuck submission
    would keep the interpreter from exiting (teardown waits for accepted work).
    """
    for _ in range(50):
        poke = rt.allocate(1, hx.HostVisible())
        g = rt.graph()
        g.fill(poke, 0)
        assert g.prepare().submit().wait(WAIT_S)
        if all(c.wait(0.1) for c in completions):
            return
    raise AssertionError("the runtime stays stuck even after new submissions")


def run_program(sizes, graphs, modes, seed, *, trace=True, wait_s=WAIT_S):
    rt = hx.Runtime()
    rng = np.random.default_rng(seed)
    bufs = {name: rt.allocate(sizes[name], make_placement(p, rt)) for name, p in BUFFERS}
    readback = {name: rt.allocate(sizes[name], hx.HostVisible()) for name, p in BUFFERS if p == "GpuLocal"}
    model = {}
    for name, p in BUFFERS:
        if p == "GpuLocal":
            model[name] = bytearray(sizes[name])  # zero-filled on the GPU
        else:
            init = rng.integers(0, 256, sizes[name], dtype=np.uint8)
            with bufs[name].map_write() as v:
                v[:] = init
            model[name] = bytearray(init.tobytes())

    prepared = []
    for ops_ in graphs:
        g = rt.graph()
        for op in ops_:
            add_to_graph(g, bufs, op)
        prepared.append(g.prepare())

    before = rt.statistics()
    if trace:
        rt.start_trace(100_000)
    completions = []
    submitted_regions = Counter()
    expected_copied = 0
    for i, (eg, ops_, mode) in enumerate(zip(prepared, graphs, modes)):
        runs = 2 if mode == "replay" else 1
        for _ in range(runs):
            if mode == "after_prev" and completions:
                c = eg.submit_after([completions[-1]])
            elif mode == "after_some" and completions:
                pick = rng.permutation(len(completions))[: rng.integers(1, len(completions) + 1)]
                c = eg.submit_after([completions[j] for j in sorted(pick)])
            else:
                c = eg.submit()
            completions.append(c)
            submitted_regions.update(eg.regions)
            expected_copied += sum(copy_bytes(op) for op in ops_)
            for op in ops_:
                model_apply(model, op)

    # read GpuLocal back through HostVisible; whole-graph ordering puts it last
    gb = rt.graph()
    for name, rb in readback.items():
        gb.copy(rb, bufs[name])
    back = gb.prepare()
    assert back.regions == ["download"]
    completions.append(back.submit())
    submitted_regions.update(back.regions)
    expected_copied += sum(sizes[n] for n in readback)

    stuck = [i for i, c in enumerate(completions) if not c.wait(wait_s)]
    if stuck:
        rescue(rt, completions)
        pytest.fail(f"submissions {stuck} of {len(completions)} did not finish in {wait_s} s (modes {modes})")
    for c in completions:
        assert c.result() is None
        assert c.exception() is None

    for name, p in BUFFERS:
        src = readback[name] if p == "GpuLocal" else bufs[name]
        with src.map_read() as v:
            got = v.tobytes()
        assert got == bytes(model[name]), f"buffer {name} ({p}) differs from the model"

    stats = rt.statistics()
    assert stats.submissions - before.submissions == len(completions)
    assert stats.completions - before.completions == len(completions)
    assert stats.copied_bytes - before.copied_bytes == expected_copied
    assert (stats.allocations, stats.imports) == (before.allocations, before.imports)

    if trace:
        rt.drain()
        time.sleep(0.005)  # a lane records its last trace event just after marking the region done
        events = rt.finish_trace().events
        trace_lanes_are_exclusive(events)
        assert all(not e["failed"] for e in events)
        # every region of every submission ran exactly once, on its lane
        keys = [(e["submission"], e["region"]) for e in events]
        assert len(keys) == len(set(keys))
        assert Counter(e["lane"] for e in events) == submitted_regions
    return rt, completions, submitted_regions


@settings(max_examples=150, deadline=None)
@given(programs(modes=PLAIN_MODES))
def test_random_programs_match_a_serial_model(program):
    """Back-to-back submissions (and replays) ordered only by hazard inference."""
    sizes, graphs, modes, seed = program
    run_program(sizes, graphs, modes, seed)


@settings(max_examples=150, deadline=None)
@given(programs(modes=MODES))
def test_random_programs_with_submit_after_match_a_serial_model(program):
    """The same, with explicit submit_after edges to earlier submissions mixed in.

    Regression: a consumer whose producer finished on another lane used to
    sleep until some unrelated submission woke the lanes (lost wake-up).
    """
    sizes, graphs, modes, seed = program
    run_program(sizes, graphs, modes, seed)


# --------------------------------------------------------------------------
# fixed cases that pin down what the generator relies on


def test_generator_covers_every_kind_lane_and_mode():
    """A sanity check on the strategy itself: it reaches every op, lane and mode."""
    seen = set()

    @settings(max_examples=300, deadline=None, database=None)
    @given(programs())
    def collect(program):
        sizes, graphs, modes, _seed = program
        for ops_ in graphs:
            for op in ops_:
                seen.add(op[0])
                if op[0] == "copy":
                    seen.add(("lane", op[3]))
                    seen.add(("copy", PLACEMENT[op[1][0]], PLACEMENT[op[2][0]]))
        seen.update(("mode", m) for m in modes)

    collect()
    for kind in ["fill", "copy", "map", "xor", "pattern", "mix"]:
        assert kind in seen
    for lane in LANES:
        assert ("lane", lane) in seen
    for m in MODES:
        assert ("mode", m) in seen
    assert ("copy", "HostVisible", "GpuLocal") in seen and ("copy", "GpuLocal", "Shared") in seen


def test_a_hand_written_program_matches_the_model():
    """Upload, device copy, download and host steps in one chain, split over graphs."""
    sizes = {name: 32 for name, _ in BUFFERS}
    graphs = [
        [("pattern", ("h0", 0, 32), 5), ("copy", ("g0", 0, 32), ("h0", 0, 32), None)],
        [("copy", ("g1", 8, 16), ("g0", 0, 16), "compute"), ("fill", ("g0", 0, 8), 0xAB)],
        [("copy", ("s0", 0, 32), ("g1", 0, 32), None), ("map", ("s0", 4, 8), ("n0", 0, 8), 9)],
        [("mix", ("n0", 0, 8), ("s0", 0, 8), ("h1", 24, 8), 3), ("xor", ("h1", 0, 32), 1)],
    ]
    run_program(sizes, graphs, ["submit", "submit", "replay", "submit"], seed=7)


# --------------------------------------------------------------------------
# build-time placement errors


@pytest.fixture
def bufs(rt):
    return {name: rt.allocate(32, make_placement(p, rt)) for name, p in BUFFERS}


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda g, b: g.fill(b["n0"], 1), id="fill"),
        pytest.param(lambda g, b: g.fill(b["n0"].view(4, 4), 1), id="fill-view"),
        pytest.param(lambda g, b: g.copy(b["n0"], b["h0"]), id="copy-dst"),
        pytest.param(lambda g, b: g.copy(b["h0"], b["n0"]), id="copy-src"),
        pytest.param(lambda g, b: g.copy(b["g0"].view(0, 8), b["n0"].view(8, 8)), id="copy-src-gpu-dst"),
        pytest.param(lambda g, b: g.copy_on(b["n0"], b["s0"], "upload"), id="copy_on-dst"),
        pytest.param(lambda g, b: g.copy_on(b["s0"], b["n0"], "download"), id="copy_on-src"),
    ],
)
def test_npu_local_storage_cannot_bind_to_gpu_ops(rt, bufs, build):
    g = rt.graph()
    with pytest.raises(hx.UnsupportedError, match="NPU-local storage cannot bind to the GPU"):
        build(g, bufs)
    assert len(g) == 0  # nothing was added; the graph stays usable
    g.fill(bufs["h0"], 1)
    assert g.prepare().submit().wait(WAIT_S)


def test_host_regions_need_host_mapped_views(rt, bufs):
    g = rt.graph()
    with pytest.raises(hx.UnsupportedError, match="not host mapped"):
        g.host(lambda a: None, [(bufs["g0"].view(0, 4), hx.Access.READ)])
    with pytest.raises(hx.UnsupportedError, match="not host mapped"):
        g.host(lambda a, b: None, [(bufs["h0"], hx.Access.READ), (bufs["g1"], hx.Access.WRITE)])
    assert len(g) == 0


# --------------------------------------------------------------------------
# statistics


def test_statistics_count_submissions_completions_and_copied_bytes(rt, bufs):
    g = rt.graph()
    g.copy(bufs["g0"].view(0, 16), bufs["h0"].view(0, 16))  # upload, 16
    g.copy_on(bufs["s0"].view(0, 8), bufs["g0"].view(0, 8), "compute")  # 8
    g.fill(bufs["h1"], 3)  # not a copy
    g.host(lambda x: None, [(bufs["n0"], hx.Access.READ)])
    g.copy(bufs["h1"].view(0, 12), bufs["g0"].view(4, 12))  # download, 12
    eg = g.prepare()
    per_run = 16 + 8 + 12

    other = rt.graph()
    other.copy(bufs["h1"].view(16, 4), bufs["h0"].view(16, 4))  # compute, 4
    other_eg = other.prepare()

    before = rt.statistics()
    completions = []
    for i in range(7):
        completions.append(eg.submit())
        completions.append(other_eg.submit())
        for c in completions[-2:]:
            assert c.wait(WAIT_S)
        completions.clear()  # release the slots
    s = rt.statistics()
    assert s.submissions - before.submissions == 14
    assert s.completions - before.completions == 14
    assert s.copied_bytes - before.copied_bytes == 7 * (per_run + 4)

    # a refused submission is not counted
    with bufs["h0"].map_write():
        with pytest.raises(hx.BusyError):
            eg.submit()
    assert rt.statistics().submissions == s.submissions
    assert rt.statistics().copied_bytes == s.copied_bytes


def test_replays_allocate_nothing(rt, bufs):
    g = rt.graph()
    g.copy(bufs["g0"], bufs["s0"])
    g.copy(bufs["s1"], bufs["g0"])
    g.host(
        lambda a, b: b.__setitem__(slice(None), a ^ 0x5A),
        [(bufs["s1"], hx.Access.READ), (bufs["n0"], hx.Access.WRITE)],
    )
    g.fill(bufs["h0"].view(3, 5), 9)
    eg = g.prepare()
    s0 = rt.statistics()
    assert s0.imports >= 2  # the Shared buffers were imports
    for i in range(25):
        with bufs["s0"].map_write() as v:
            v[:] = i
        c = eg.submit()
        assert c.wait(WAIT_S)
        c.result()
        del c
        with bufs["n0"].map_read() as v:
            assert v.tobytes() == bytes([i ^ 0x5A]) * 32
    s1 = rt.statistics()
    assert (s1.allocations, s1.imports) == (s0.allocations, s0.imports)
    assert s1.live_bytes == s0.live_bytes
    assert s1.submissions - s0.submissions == 25
    assert s1.copied_bytes - s0.copied_bytes == 25 * 64
