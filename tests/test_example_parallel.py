"""examples/gpu_npu_parallel.py runs with small arguments, says what §5.1 says, and writes a valid trace."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "gpu_npu_parallel.py"


def run(args, cwd, timeout=180):
    return subprocess.run(
        [sys.executable, str(EXAMPLE), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=os.environ.copy(),
    )


def test_small_run_prints_the_figures_and_writes_the_trace(tmp_path):
    out = run(["65536", "64", "3", "trace.json"], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "GPU: gfx1151; NPU: amd.xdna.strix_halo.17f0_11"
    assert "65536 GPU elements + 64 NPU matrices; 3 paired samples" in lines

    m = re.search(
        r"^sequential median: (\d+\.\d{3}) ms; parallel median: (\d+\.\d{3}) ms; speedup: (\d+\.\d{2}) x$",
        out.stdout,
        re.M,
    )
    assert m, out.stdout
    seq, par, speedup = (float(g) for g in m.groups())
    assert seq > 0 and par > 0
    # seq and par are printed to 0.001 ms and the speedup to 0.01: allow for both roundings.
    ratio = seq / par
    assert speedup == pytest.approx(ratio, abs=0.005 + ratio * (0.0005 / seq + 0.0005 / par) + 1e-9)

    assert re.search(r"both CPU references matched exactly.*no native allocations or imports", out.stdout)
    m = re.search(r"^GPU/NPU host-observed overlap across four replays: (\d+) us \(not device timestamps\)$", out.stdout, re.M)
    assert m, out.stdout
    assert int(m.group(1)) >= 0
    assert lines[-1] == "Trace: trace.json"

    trace = json.loads((tmp_path / "trace.json").read_text())
    events = trace["traceEvents"]
    lanes = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "thread_name"}
    assert lanes[1] == "compute" and lanes[3] == "npu"
    x = [e for e in events if e.get("ph") == "X"]
    compute = [e for e in x if e["tid"] == 1]
    npu = [e for e in x if e["tid"] == 3]
    # Four parallel replays: one compute-lane and one npu-lane region each.
    assert len(compute) == 4 and len(npu) == 4, x
    # Events are named by what ran (the lane is the thread).
    assert all(e["name"] == "gpu(transform_i32)" for e in compute)
    assert all(e["name"] == "npu(batched_gemm)" for e in npu)
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in x)
    assert {e["args"]["submission"] for e in compute} == {e["args"]["submission"] for e in npu}


def test_without_trace_path_writes_no_file(tmp_path):
    out = run(["256", "1", "3"], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "256 GPU elements + 1 NPU matrices; 3 paired samples" in out.stdout
    assert "Trace:" not in out.stdout
    assert list(tmp_path.iterdir()) == []


def test_help_prints_the_usage(tmp_path):
    out = run(["--help"], cwd=tmp_path)
    assert out.returncode == 0
    assert out.stdout.startswith("usage: gpu_npu_parallel.py [elements=16777216] [matrices=1024] [samples=21]")


@pytest.mark.parametrize(
    "args, message",
    [
        (["12x"], "invalid integer"),
        (["1000"], "elements must be a multiple of 256 in 256..=67108864"),
        (["256", "16385"], "matrices must be in 1..=16384"),
        (["256", "1", "2"], "samples must be in 3..=1000"),
        (["256", "1", "3", "t.json", "extra"], "at most 4 arguments"),
    ],
)
def test_bad_arguments_are_usage_errors(tmp_path, args, message):
    out = run(args, cwd=tmp_path)
    assert out.returncode != 0
    assert message in out.stderr
    assert "usage: gpu_npu_parallel.py" in out.stderr
    assert out.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_a_stale_result_cannot_pass_validation():
    """The example's checks are not vacuous: outputs of the previous inputs are named as mismatches."""
    import runpy

    import hrxarray as hx

    ex = runpy.run_path(str(EXAMPLE))  # defines the functions; main() does not run
    prog = ex["Program"](hx.Runtime(), 512, 3)
    prog.write_inputs(0)
    for eg in (prog.upload, prog.gpu_only, prog.npu_only, prog.download):
        prog.run(eg)
    prog.validate("pass 0")
    prog.write_inputs(1)  # new inputs, nothing run yet
    with pytest.raises(ex["ValidationError"], match=r"GPU element 0: expected"):
        prog.validate("stale")
    for eg in (prog.upload, prog.gpu_only, prog.download):  # the NPU output is still stale
        prog.run(eg)
    with pytest.raises(ex["ValidationError"], match=r"NPU matrix \d+ row \d+ col \d+: expected"):
        prog.validate("stale")
    prog.run(prog.parallel)
    prog.run(prog.download)
    prog.validate("pass 1")
    assert ex["median"]([3.0, 1.0, 2.0]) == 2.0 and ex["median"]([4.0, 1.0, 3.0, 2.0]) == 2.5
