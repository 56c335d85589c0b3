"""Process lifecycle: interpreter exit, fork, completion callbacks, waits on lane threads, timeouts.

Every scenario that used to hang or abort runs in a fresh interpreter with a
timeout (run_python), so a regression fails its test instead of wedging the
suite; in-process tests use bounded waits only.
"""

from __future__ import annotations

import asyncio
import gc
import math
import os
import re
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hrxarray as hx
from helpers import run_killable, skip_fork_under_sanitizers

WAIT_S = 10.0
HUNG_S = 90  # a program still running after this long has hung
R, W = hx.Access.READ, hx.Access.WRITE
REFUSED = "accepts no new work: the interpreter is exiting"


def run_python(code, *args, cwd):
    """Run `code` in a fresh interpreter; the CompletedProcess. A hang fails the test.

    The program gets a session of its own, so that a hang kills its forked
    children too instead of leaving them behind.
    """
    return run_killable([sys.executable, "-c", textwrap.dedent(code), *map(str, args)], HUNG_S, cwd=cwd)


def assert_clean_exit(proc, stdout):
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == stdout
    assert "terminate called" not in proc.stderr
    # The only errors allowed are daemon threads told that no new work is accepted. Two threads'
    # tracebacks may interleave within a line, so errors are found anywhere, not at line starts.
    reports = re.findall(r"hrxarray\.(\w+Error)\b(.*)", proc.stderr)
    assert {kind for kind, _ in reports} <= {"HrxError"}, proc.stderr
    # CPython writes an exception's "module.Type: message" line in one piece, so each report
    # that made it out carries its message.
    for _, message in reports:
        assert REFUSED in message, proc.stderr


# --------------------------------------------------------------------------
# interpreter exit

DAEMON_ARRAY_WORK = """
    import sys, threading, time
    import numpy as np
    import hrxarray as hx
    n, export = int(sys.argv[1]), sys.argv[2] == "dlpack"
    # CPython's own hook writes a report in pieces, and two threads refused at once interleave
    # them mid-line ("hrxarray.hrxarray.HrxErrorHrxError: : ..."): this one writes each line whole.
    def report(args):
        sys.stderr.write(f"{args.exc_type.__module__}.{args.exc_type.__qualname__}: {args.exc_value}\\n")
    threading.excepthook = report
    started = threading.Barrier(3)
    def loop():
        x = hx.asarray(np.arange(n, dtype=np.float32))
        started.wait()
        while True:
            x = x * 1.0001 + 1
            if export:
                np.from_dlpack(x)  # waits for x's producers, then a zero-copy export
    for _ in range(2):
        threading.Thread(target=loop, daemon=True).start()
    started.wait()
    time.sleep(0.2)
    print("exiting", flush=True)
"""


@pytest.mark.parametrize(
    "n, mode",
    [(1000, "arrays"), (1 << 19, "arrays"), (1000, "dlpack")],
    ids=["small-arrays", "large-arrays", "dlpack-exports"],
)
def test_exit_while_daemon_threads_submit_array_work(tmp_path, n, mode):
    """Exit finishes: no abort when a daemon thread re-enters Python, no drain that never ends."""
    proc = run_python(DAEMON_ARRAY_WORK, n, mode, cwd=tmp_path)
    assert_clean_exit(proc, "exiting\n")


# Work accepted before exit that ends once `event` is set: the exit's drain waits for it, so
# whatever sets the event happens while the exit hook runs.
HOLD_EXIT = """
    def hold_exit_until(event):
        rt = hx.default_runtime()
        g = rt.graph()
        g.host(lambda view: event.wait(30), [(rt.allocate(64, hx.HostVisible()), hx.Access.WRITE)])
        g.prepare().submit()
"""

SLOW_REPORTS = HOLD_EXIT + """
    import sys, threading, time
    import numpy as np
    import hrxarray as hx
    out = open(sys.argv[1], "w")
    lock, refused, all_refused = threading.Lock(), [], threading.Event()
    def report(args):
        with lock:
            refused.append(args.thread.name)
            if len(refused) == 2:
                all_refused.set()
        time.sleep(0.3)  # a handler that takes a while, as one writing to a log would
        out.write(f"{args.thread.name}: {args.exc_type.__name__}: {args.exc_value}\\n")
        out.flush()
    threading.excepthook = report
    hold_exit_until(all_refused)
    started = threading.Barrier(3)
    def loop():
        x = hx.asarray(np.arange(1000, dtype=np.float32))
        started.wait()
        while True:
            x = x * 1.0001 + 1
    for i in range(2):
        threading.Thread(target=loop, name=f"worker{i}", daemon=True).start()
    started.wait()
    print("exiting", flush=True)
"""


def test_threads_refused_at_exit_report_before_the_interpreter_goes(tmp_path):
    """Note [Refused threads report before exit]: each refused thread's handler runs to its end."""
    log = tmp_path / "log"
    proc = run_python(SLOW_REPORTS, log, cwd=tmp_path)
    assert_clean_exit(proc, "exiting\n")
    lines = sorted(log.read_text().splitlines())
    assert [line.split(":")[0] for line in lines] == ["worker0", "worker1"], lines
    for line in lines:
        assert re.fullmatch(r"worker\d: HrxError: (multiply|add): hrxarray " + REFUSED +
                            r" \(work accepted before exit still runs to completion\)", line), line


KEEPS_GOING = HOLD_EXIT + """
    import sys, threading
    import numpy as np
    import hrxarray as hx
    out = open(sys.argv[1], "w")
    refused, started = threading.Event(), threading.Event()
    hold_exit_until(refused)
    def loop():
        x = hx.asarray(np.arange(8, dtype=np.float32))
        while True:
            try:
                x = x + 1
            except hx.HrxError:
                if not refused.is_set():
                    out.write("refused\\n")
                    out.flush()
                    refused.set()
            started.set()
    threading.Thread(target=loop, daemon=True).start()
    started.wait()
    print("exiting", flush=True)
"""


def test_exit_does_not_wait_for_ever_on_a_refused_thread_that_goes_on(tmp_path):
    """A refused thread that catches the refusal and keeps running holds the exit up only a bounded while."""
    log = tmp_path / "log"
    proc = run_python(KEEPS_GOING, log, cwd=tmp_path)
    assert_clean_exit(proc, "exiting\n")
    assert log.read_text() == "refused\n"


ACCEPTED_THEN_REFUSED = """
    import sys, threading
    import hrxarray as hx
    rt = hx.Runtime()
    out = open(sys.argv[1], "w")
    refused = threading.Event()
    buf = rt.allocate(64, hx.HostVisible())
    def accepted(view):
        # accepted before exit; it ends only once the exit refused the daemon's work
        refused.wait(30)
        view[:] = 9
        out.write("accepted work ran\\n")
        out.flush()
    g = rt.graph()
    g.host(accepted, [(buf, hx.Access.WRITE)])
    g.prepare().submit()
    other = rt.allocate(64, hx.HostVisible())
    g = rt.graph()
    g.fill(other.view(0, 64), 1)
    eg = g.prepare()
    running = threading.Event()
    def submitter():
        while True:
            try:
                eg.submit().wait()
            except hx.HrxError as e:
                out.write(f"refused: {type(e).__name__}: {e}\\n")
                out.flush()
                refused.set()
                return
            running.set()
    threading.Thread(target=submitter, daemon=True).start()
    assert running.wait(30)
    print("exiting", flush=True)
"""


def test_exit_refuses_new_work_and_finishes_accepted_work(tmp_path):
    log = tmp_path / "log"
    proc = run_python(ACCEPTED_THEN_REFUSED, log, cwd=tmp_path)
    assert_clean_exit(proc, "exiting\n")
    lines = log.read_text().splitlines()
    assert lines == [
        "refused: HrxError: submit: hrxarray " + REFUSED + " (work accepted before exit still runs to completion)",
        "accepted work ran",
    ]


# --------------------------------------------------------------------------
# completion callbacks


CALLBACK_WAITS_ON_ITS_LANE = """
    import threading
    import numpy as np
    import hrxarray as hx
    rt = hx.default_runtime()
    x = hx.asarray(np.arange(8, dtype=np.float32), placement=hx.HostVisible())
    buf = rt.allocate(64, hx.HostVisible())
    gate = threading.Event()
    g = rt.graph()
    g.host(lambda v: gate.wait(30), [(buf, hx.Access.WRITE)])
    g.fill(buf.view(0, 64), 1)  # after the host region: the compute lane finishes the submission
    eg = g.prepare()
    results = []
    done = threading.Event()
    def callback(c):
        results.append(np.asarray(x * 2).tolist())  # more work on the compute lane, and a wait for it
        h = rt.graph()
        h.host(lambda v: results.append(int(v[0])), [(buf, hx.Access.READ)])
        h.prepare().submit().result()  # and on the host lane
        rt.drain()  # on the callback thread: waits for the submissions only
        done.set()
    c = eg.submit()
    c.add_done_callback(callback)
    gate.set()
    assert done.wait(30), "the callback never finished"
    print(results, flush=True)
"""


def test_callback_may_wait_for_work_on_the_lane_that_finished_its_submission(tmp_path):
    proc = run_python(CALLBACK_WAITS_ON_ITS_LANE, cwd=tmp_path)
    assert_clean_exit(proc, "[[0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0], 1]\n")


def test_callbacks_run_on_one_thread_that_is_not_a_lane(rt):
    """Pending-time callbacks run off the lanes, on one thread, in completion order."""
    bufs = [rt.allocate(64, hx.HostVisible()) for _ in range(3)]
    lane_threads, calls = set(), []
    graphs = []
    for i, b in enumerate(bufs):
        g = rt.graph()
        g.host(lambda v: lane_threads.add(threading.get_ident()), [(b, W)])
        graphs.append(g.prepare())
    gate = threading.Event()
    g = rt.graph()
    g.host(lambda *views: gate.wait(WAIT_S), [(bufs[0], R), (bufs[1], R), (bufs[2], R)])
    first = g.prepare().submit()
    # each waits for the gate (hazards on bufs), then they finish one by one on the host lane
    completions = [eg.submit() for eg in graphs]
    for i, c in enumerate(completions):
        c.add_done_callback(lambda c, i=i: calls.append((i, threading.get_ident(), threading.current_thread())))
    gate.set()
    assert first.result(WAIT_S) is None
    for c in completions:
        assert c.result(WAIT_S) is None
    rt.drain()  # waits for the callbacks too
    assert len(lane_threads) == 1  # the host lane
    assert [i for i, _, _ in calls] == [0, 1, 2]
    idents = {ident for _, ident, _ in calls}
    assert len(idents) == 1 and not idents & lane_threads
    assert threading.get_ident() not in idents
    assert all(isinstance(t, threading._DummyThread) for _, _, t in calls)


# --------------------------------------------------------------------------
# waits on lane threads (host regions)

def host_region_outcomes(tmp_path, body):
    """Run host regions that wait in a fresh interpreter; the outcome of each, one per line."""
    program = """
        import threading
        import numpy as np
        import hrxarray as hx
        rt = hx.default_runtime()

        def outcome(c):
            assert c.wait(30), "the host region never returned"
            e = c.exception()
            return "ok" if e is None else f"{type(e.__cause__).__name__}: {e.__cause__}"

        def submit_region(fn, *uses):
            g = rt.graph()
            g.host(fn, list(uses))
            return g.prepare().submit()
    """
    proc = run_python(textwrap.dedent(program) + textwrap.dedent(body), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "terminate called" not in proc.stderr
    return proc.stdout.splitlines()


def test_host_region_mapping_a_buffer_it_uses_raises(tmp_path):
    lines = host_region_outcomes(
        tmp_path,
        """
        buf = rt.allocate(64, hx.HostVisible())
        def map_own(view):
            with buf.map_read():
                pass
        print(outcome(submit_region(map_own, (buf, hx.Access.WRITE))))
        # (a failed region poisons what it used: a new buffer per case)
        read_only = rt.allocate(64, hx.HostVisible())
        def map_own_for_writing(view):
            np.from_dlpack(hx.asarray(np.zeros(4, np.float32)))  # unrelated: fine
            with read_only.map_write():
                pass
        print(outcome(submit_region(map_own_for_writing, (read_only, hx.Access.READ))))
        fresh = rt.allocate(64, hx.HostVisible())
        # the runtime goes on: the lane was never stuck
        print(outcome(submit_region(lambda v: None, (fresh, hx.Access.READ))))
        """,
    )
    own = "an allocation its own submission uses on a device (use the array the host region is given for it)"
    assert len(lines) == 3, lines
    assert lines[0].startswith("BusyError: map_read on Buffer#1 (HostVisible(), 64 bytes): called from a host region")
    assert own in lines[0] and "this wait would never end" in lines[0]
    assert lines[1].startswith("BusyError: map_write on Buffer#2") and own in lines[1]
    assert lines[2] == "ok"


def test_host_region_waits_that_cannot_end_raise_and_others_wait(tmp_path):
    lines = host_region_outcomes(
        tmp_path,
        """
        def fresh():  # a failed region poisons what it used: a new buffer per case
            return rt.allocate(64, hx.HostVisible())
        # 1: its own completion
        own = {}
        def wait_own(view):
            own["ready"].wait(30)
            own["c"].wait()
        own["ready"] = threading.Event()
        own["c"] = submit_region(wait_own, (fresh(), hx.Access.READ))
        own["ready"].set()
        print(outcome(own["c"]))
        # 2: a submission that needs the host lane it is blocking; a poll is fine, a long timeout is not
        polls = []
        def wait_host_lane(view):
            c = submit_region(lambda v: None, (fresh(), hx.Access.READ))
            polls.append(c.wait(0))
            c.result(timeout=1e10)
        print(outcome(submit_region(wait_host_lane, (fresh(), hx.Access.READ))), polls)
        # 3: array work ordered after its own submission (it writes x's storage)
        x = hx.asarray(np.arange(4, dtype=np.float32), placement=hx.HostVisible())
        def wait_ordered_after(view):
            np.asarray(x + 1)
        print(outcome(submit_region(wait_ordered_after, (x.buffer, hx.Access.WRITE))))
        # 4: independent array work on the compute lane: the wait ends
        y = hx.asarray(np.arange(4, dtype=np.float32))
        seen = []
        def wait_independent(view):
            seen.append(np.asarray(y * 3).tolist())
        print(outcome(submit_region(wait_independent, (fresh(), hx.Access.READ))), seen)
        """,
    )
    assert len(lines) == 4, lines
    assert lines[0].startswith("BusyError: wait: called from a host region (on the host lane) for its own submission")
    assert lines[1].startswith("BusyError: wait: called from a host region (on the host lane) for a submission that "
                               "needs this lane or is ordered after its own to finish")
    assert lines[1].endswith(" [False]")
    assert lines[2].startswith("BusyError: wait: called from a host region (on the host lane) for a submission that "
                               "needs this lane or is ordered after its own to finish")
    assert lines[3] == "ok [[0.0, 3.0, 6.0, 9.0]]"


# --------------------------------------------------------------------------
# fork

def fork_program(child):
    """A parent with pending work (a gated host region) that forks; `child` runs in the child."""
    return textwrap.dedent(
        """
        import os, sys, threading
        import numpy as np
        import hrxarray as hx
        rt = hx.default_runtime()
        x = hx.asarray(np.arange(12, dtype=np.float32))
        buf = rt.allocate(64, hx.HostVisible())
        gate = threading.Event()
        g = rt.graph()
        g.host(lambda v: gate.wait(30), [(buf, hx.Access.WRITE)])
        pending = g.prepare().submit()  # pending in the parent while it forks
        pid = os.fork()
        if pid == 0:
        {child}
        _, status = os.waitpid(pid, 0)
        gate.set()
        pending.result()
        print("child exit status", os.waitstatus_to_exitcode(status), flush=True)
        """
    ).replace("{child}", textwrap.indent(textwrap.dedent(child), "    "))


FORK_CHILD = fork_program(
    """
    def attempt(name, fn):
        try:
            fn()
            print(name, "worked", flush=True)
        except hx.UnsupportedError as e:
            print(name, "UnsupportedError", "before fork()" in str(e), "'spawn'" in str(e), flush=True)
    attempt("wait", lambda: pending.wait())
    attempt("asarray", lambda: np.asarray(x))
    attempt("add", lambda: x + 1)
    attempt("map", lambda: buf.map_read())
    attempt("drain", rt.drain)
    attempt("submit", lambda: g.prepare().submit())
    fresh = hx.default_runtime()
    print("fresh default", fresh is not rt, flush=True)
    a = np.arange(256 * 256, dtype=np.float32).reshape(256, 256) % 7
    y = hx.asarray(a)
    big = np.asarray(hx.matmul(y, y))  # uses the kernels' thread pool
    print("child result", np.array_equal(big, a @ a), np.asarray(y[0, :3] + 1).tolist(), flush=True)
    sys.exit(0)  # a normal exit: the atexit drain runs in the child
    """
)


@skip_fork_under_sanitizers
def test_fork_child_gets_a_fresh_default_runtime_and_clean_errors(tmp_path):
    proc = run_python(FORK_CHILD, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines == [
        "wait UnsupportedError True True",
        "asarray UnsupportedError True True",
        "add UnsupportedError True True",
        "map UnsupportedError True True",
        "drain UnsupportedError True True",
        "submit UnsupportedError True True",
        "fresh default True",
        "child result True [1.0, 2.0, 3.0]",
        "child exit status 0",
    ]


FORK_CHILD_UNTOUCHED = fork_program(
    """
    sys.exit(3)  # never touches hrxarray; its atexit hook still runs
    """
)


@skip_fork_under_sanitizers
def test_fork_child_that_never_uses_hrxarray_exits(tmp_path):
    proc = run_python(FORK_CHILD_UNTOUCHED, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "child exit status 3\n"


FORK_POOL = """
    import multiprocessing
    import numpy as np
    import hrxarray as hx

    def work(i):
        a = np.full((128, 128), i, dtype=np.float32)
        return float(np.asarray(hx.matmul(hx.asarray(a), hx.asarray(a))).sum())

    if __name__ == "__main__":
        parent = work(1)  # the parent's lanes and kernel pool are running when the pool forks
        with multiprocessing.get_context("fork").Pool(2) as pool:
            print(parent, pool.map(work, range(4)), flush=True)
"""


@skip_fork_under_sanitizers
def test_multiprocessing_fork_pool_uses_hrxarray(tmp_path):
    proc = run_python(FORK_POOL, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    expected = [float(128 * 128 * 128 * i * i) for i in range(4)]
    assert proc.stdout == f"{expected[1]} {expected}\n"


# Issue 29 (Note [LAPACK and fork] in ext/core/array/linalg.cpp): a fork while another thread is inside
# hx.linalg must not stop that thread's LAPACK call for good. The children do nothing but exit.
FORK_DURING_LINALG = """
    import os, threading, time, numpy as np, hrxarray as hx
    stop, busy = threading.Event(), {"linalg": 0}
    def linalger():
        r = np.random.default_rng(2)
        while not stop.is_set():
            a = r.standard_normal((120, 120)) + 120 * np.eye(120)
            hx.linalg.inv(hx.asarray(a)); hx.linalg.svd(hx.asarray(a)); busy["linalg"] += 1
    t = threading.Thread(target=linalger, daemon=True)
    t.start()
    time.sleep(1)
    for i in range(2):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    before = busy["linalg"]
    deadline = time.monotonic() + 20
    while busy["linalg"] == before and time.monotonic() < deadline:
        time.sleep(0.01)
    moved = busy["linalg"] > before
    stop.set()
    t.join(20)
    inv = np.asarray(hx.linalg.inv(hx.asarray(np.eye(4) * 2.0)))
    print(moved, t.is_alive(), np.array_equal(inv, np.eye(4) / 2), flush=True)
"""


@skip_fork_under_sanitizers
def test_fork_while_linalg_runs_in_another_thread(tmp_path):
    proc = run_python(FORK_DURING_LINALG, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "True False True\n"


# Three threads (LAPACK, FFTs, Loom launches) checking every result against NumPy, and 50 forks whose
# children run each kind of work too; after every fork each thread must make progress again.
FORK_STORM = """
    import os, sys, threading, time, numpy as np, hrxarray as hx
    add = hx.loom.ufunc(open(sys.argv[1]).read(), "add_f32")
    stop = threading.Event(); done = {"linalg": 0, "fft": 0, "loom": 0}; bad = []
    def linalger():
        r = np.random.default_rng(2)
        while not stop.is_set():
            a = r.standard_normal((96, 96)) + 96 * np.eye(96)
            if not np.allclose(np.asarray(hx.linalg.inv(hx.asarray(a))) @ a, np.eye(96), atol=1e-8): bad.append("inv")
            if not np.allclose(np.asarray(hx.linalg.svdvals(hx.asarray(a))), np.linalg.svd(a, compute_uv=False)):
                bad.append("svdvals")
            done["linalg"] += 1
    def ffter():
        r = np.random.default_rng(3)
        while not stop.is_set():
            x = r.standard_normal(4096)
            if not np.allclose(np.asarray(hx.fft.fft(hx.asarray(x))), np.fft.fft(x)): bad.append("fft")
            done["fft"] += 1
    def loomer():
        r = np.random.default_rng(4)
        while not stop.is_set():
            x, y = r.standard_normal((2, 50_000)).astype(np.float32)
            if not np.array_equal(np.asarray(add(hx.asarray(x), hx.asarray(y))), x + y): bad.append("loom")
            done["loom"] += 1
    def wait_child(pid):
        # A child stuck in os.fork must fail the program with a message, not hang it.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            done_pid, status = os.waitpid(pid, os.WNOHANG)
            if done_pid:
                return os.waitstatus_to_exitcode(status)
            time.sleep(0.002)
        os.kill(pid, 9); os.waitpid(pid, 0)
        return "a hang"
    ts = [threading.Thread(target=f, daemon=True) for f in (linalger, ffter, loomer)]
    for t in ts:
        t.start()
    time.sleep(0.5)
    for i in range(50):
        pid = os.fork()
        if pid == 0:
            ok = np.allclose(np.asarray(hx.linalg.inv(hx.asarray(np.eye(8) * 2.0))), np.eye(8) / 2)
            ok &= np.allclose(np.asarray(hx.fft.fft(hx.asarray(np.ones(16)))), np.fft.fft(np.ones(16)))
            x = np.arange(1000, dtype=np.float32)
            ok &= np.array_equal(np.asarray(add(hx.asarray(x), hx.asarray(x))), x + x)
            os._exit(0 if ok else 3)
        code = wait_child(pid)
        if code != 0:
            bad.append(f"child {i} exited with {code}")
        before = dict(done)
        deadline = time.monotonic() + 20
        while any(done[k] == before[k] for k in done) and time.monotonic() < deadline:
            time.sleep(0.002)
        if any(done[k] == before[k] for k in done):
            bad.append(f"after fork {i} a thread stalled: {before} -> {done}")
        if bad:
            break
    stop.set()
    for t in ts:
        t.join(30)
    print(bad, [t.is_alive() for t in ts], flush=True)
"""


@skip_fork_under_sanitizers
def test_fifty_forks_while_linalg_fft_and_loom_run(tmp_path):
    add = Path(__file__).resolve().parent.parent / "examples" / "loom" / "add_f32.loom"
    proc = run_python(FORK_STORM, add, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "[] [False, False, False]\n"


# A lane thread entering Python makes a thread state, which takes CPython's
# runtime lock without the GIL; a fork at that moment left the child stuck in
# os.fork before Note [Thread states and fork] (ext/bind/gil.cpp). Host regions
# enter Python on the host lane each time they run.
FORK_WHILE_LANES_ENTER_PYTHON = """
    import os, threading, time, hrxarray as hx
    rt = hx.default_runtime()
    buf = rt.allocate(64, hx.HostVisible())
    g = rt.graph()
    g.host(lambda v: None, [(buf, hx.Access.WRITE)])
    graph = g.prepare()
    stop = threading.Event(); runs = [0]
    def submitter():
        while not stop.is_set():
            graph.submit().wait()
            runs[0] += 1
    t = threading.Thread(target=submitter, daemon=True); t.start()
    time.sleep(0.2)
    hung = 0
    for i in range(1000):
        pid = os.fork()
        if pid == 0:
            os._exit(7)
        deadline = time.monotonic() + 10
        while not os.waitpid(pid, os.WNOHANG)[0]:
            if time.monotonic() > deadline:
                hung += 1; os.kill(pid, 9); os.waitpid(pid, 0); break
            time.sleep(0.0005)
        if hung:
            break
    stop.set(); t.join(30)
    print(hung, runs[0] > 100, t.is_alive(), flush=True)
"""


@skip_fork_under_sanitizers
def test_forks_while_a_lane_keeps_entering_python(tmp_path):
    proc = run_python(FORK_WHILE_LANES_ENTER_PYTHON, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "0 True False\n"


# --------------------------------------------------------------------------
# timeouts (Note [Timeouts] in ext/core/runtime/deadline.h)


class Gate:
    """A one-region graph on the host lane that runs until opened."""

    def __init__(self, rt):
        self.event = threading.Event()
        buf = rt.allocate(64, hx.HostVisible())
        g = rt.graph()
        g.host(lambda v: self.event.wait(WAIT_S), [(buf, W)])
        self.graph = g.prepare()

    def submit(self):
        self.event.clear()
        return self.graph.submit()

    def open_after(self, seconds):
        t = threading.Timer(seconds, self.event.set)
        t.start()
        return t


@settings(max_examples=15)
@given(timeout=st.one_of(st.just(math.inf), st.floats(min_value=1e9, allow_infinity=True)))
def test_huge_and_infinite_timeouts_wait(timeout):
    rt = hx.default_runtime()
    gate = Gate(rt)
    c = gate.submit()
    gate.open_after(0.02)
    assert c.wait(timeout=timeout) is True
    assert c.done()
    c = gate.submit()
    gate.open_after(0.02)
    assert c.result(timeout=timeout) is None
    c = gate.submit()
    gate.open_after(0.02)
    assert c.exception(timeout=timeout) is None


@settings(max_examples=15)
@given(timeout=st.floats(max_value=0.0, allow_infinity=True, allow_nan=False))
def test_zero_and_negative_timeouts_do_not_wait(timeout):
    rt = hx.default_runtime()
    gate = Gate(rt)
    c = gate.submit()
    try:
        assert c.wait(timeout=timeout) is False
        with pytest.raises(TimeoutError, match="result: the submission is still pending"):
            c.result(timeout=timeout)
        with pytest.raises(TimeoutError, match="exception: the submission is still pending"):
            c.exception(timeout=timeout)
        assert not c.done()
    finally:
        gate.event.set()
    assert c.wait(WAIT_S)


@pytest.mark.parametrize("method", ["wait", "result", "exception"])
def test_nan_timeout_is_a_value_error(rt, method):
    gate = Gate(rt)
    c = gate.submit()
    try:
        with pytest.raises(ValueError, match=f"^{method}: timeout must be a number of seconds or None, got nan$"):
            getattr(c, method)(timeout=math.nan)
        assert not c.done()  # nothing waited, nothing changed
    finally:
        gate.event.set()
    assert c.wait(WAIT_S)


# --------------------------------------------------------------------------
# asyncio


def test_timed_out_await_does_not_call_back_into_a_closed_loop(rt, monkeypatch):
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: unraisable.append(u))
    gate = Gate(rt)
    c = gate.submit()

    async def main():
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(c, 0.05)

    loop_closed = []
    try:
        asyncio.run(main())
        loop_closed.append(True)
    finally:
        gate.event.set()  # the completion finishes after asyncio.run closed its loop
    assert c.wait(WAIT_S)
    rt.drain()  # every callback has run
    gc.collect()
    assert loop_closed and unraisable == []
    assert c.result() is None


# --------------------------------------------------------------------------
# fault injection


def test_injected_faults_arm_once_and_report_their_own_message(rt):
    """Arming from a Python thread while lanes run the kernel hands each run a whole message."""
    kernel = hx.kernels.gpu("transform_i32", elements=1024, runtime=rt)
    src = rt.allocate(4096, hx.HostVisible())
    dst = rt.allocate(4096, hx.HostVisible())
    kernel._inject_fault("first")
    with pytest.raises(hx.BusyError, match="a fault is already armed on transform_i32"):
        kernel._inject_fault("second")
    messages = [f"fault {i} " + "x" * (i % 97) for i in range(200)]
    seen = []
    g = rt.graph()
    g.gpu(kernel, [src, dst])
    eg = g.prepare()
    stop = threading.Event()

    def arm():
        for m in messages:
            while not stop.is_set():
                try:
                    kernel._inject_fault(m)
                    break
                except hx.BusyError:
                    time.sleep(0)

    armer = threading.Thread(target=arm)
    armer.start()
    try:
        for _ in range(400):
            c = eg.submit()
            assert c.wait(WAIT_S)
            e = c.exception()
            if e is not None:
                seen.append((str(e), str(e.__cause__)))
                # a failed region poisons its storage: start over on fresh buffers
                src = rt.allocate(4096, hx.HostVisible())
                dst = rt.allocate(4096, hx.HostVisible())
                g = rt.graph()
                g.gpu(kernel, [src, dst])
                eg = g.prepare()
    finally:
        stop.set()
        armer.join(WAIT_S)
    assert seen, "no injected fault fired"
    allowed = {"first", *messages}
    for outer, cause in seen:
        # the completion's error carries the region's context, its cause the kernel's own message
        prefix = "injected fault in transform_i32: "
        assert cause.startswith(prefix) and cause[len(prefix):] in allowed, cause
        assert outer == "executing graph region 0 (compute lane): " + cause, outer
