"""Teardown: accepted work finishes; interpreter exit with pending work neither crashes nor hangs."""

import gc
import subprocess
import sys
import textwrap
import threading

import hrxarray as hx

PROGRAM = textwrap.dedent(
    """
    import sys, time
    import hrxarray as hx
    rt = hx.{runtime}
    buf = rt.allocate(64, hx.HostVisible())
    def slow(view):
        time.sleep(0.3)
        view[:] = 9
        with open(sys.argv[1], "w") as f:
            f.write("ran")
    g = rt.graph()
    g.host(slow, [(buf, hx.Access.WRITE)])
    g.fill(buf.view(0, 8), 1)
    g.prepare().submit()
    print("submitted", flush=True)
    """
)


def run_program(tmp_path, runtime):
    marker = tmp_path / "marker"
    proc = subprocess.run(
        [sys.executable, "-c", PROGRAM.format(runtime=runtime), str(marker)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    return proc, marker


def test_exit_with_pending_work_on_the_default_runtime(tmp_path):
    proc, marker = run_program(tmp_path, "default_runtime()")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "submitted"
    assert marker.read_text() == "ran", "accepted work ran before the interpreter went away"


def test_exit_with_pending_work_on_a_private_runtime(tmp_path):
    proc, marker = run_program(tmp_path, "Runtime()")
    assert proc.returncode == 0, proc.stderr
    assert marker.read_text() == "ran"


def test_dropping_every_handle_keeps_accepted_work():
    rt = hx.Runtime()
    buf = rt.allocate(64, hx.HostVisible())
    gate = threading.Event()
    ran = threading.Event()

    def region(view):
        assert gate.wait(10)
        view[:] = 3
        ran.set()

    g = rt.graph()
    g.host(region, [(buf, hx.Access.WRITE)])
    c = g.prepare().submit()
    keep = buf.clone()
    del rt, g, buf
    gc.collect()
    gate.set()
    assert c.wait(10)
    assert ran.is_set()
    with keep.map_read() as v:
        assert (v == 3).all()
