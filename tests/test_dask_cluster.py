"""hrxarray.dask on a real dask.distributed cluster: worker processes on loopback, each bound to one device.

Each scenario runs in a child process (tests/dask_cluster_job.py) under a
timeout, killed with its worker processes if it hangs; the assertions are here.
"""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("dask.array")
pytest.importorskip("distributed")

JOB = Path(__file__).with_name("dask_cluster_job.py")
TIMEOUT = 240


def run(scenario):
    p = subprocess.Popen([sys.executable, str(JOB), scenario], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    try:
        out, err = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        pytest.fail(f"the {scenario} cluster scenario hung for {TIMEOUT} s:\n{err[-4000:]}")
    assert p.returncode == 0, err[-4000:]
    return json.loads(out.strip().splitlines()[-1])


def test_bf16_matmul_on_two_worker_processes():
    r = run("matmul")
    assert r["input_block_type"] == r["meta"] == r["type"] == "DeviceArray"
    assert r["dtype"] == "bfloat16" and r["shape"] == [512, 512]
    assert r["error"] < 2**-7
    # 4 x 4 x 4 block products, and both workers ran some.
    assert sum(r["block_tasks"].values()) == 64
    assert set(r["block_tasks"]) == {"npu0", "npu1"}
    for name, device in (("npu0", "npu:0"), ("npu1", "npu:1")):
        b = r["bindings"][name]
        assert b["visible_devices"] == device and b["binding"]["device"] == device
        assert b["binding"]["resources"] == "NPU=1"


def test_npu_tasks_never_run_on_the_cpu_worker():
    r = run("resources")
    assert r["resources"] == {"npu0": {"NPU": 1}, "npu1": {"NPU": 1}, "cpu0": {}}
    for how in ("compute_resources", "annotate_no_fuse"):
        assert r[how]["type"] == "DeviceArray" and r[how]["value"] == 64 * 64 * 4
        assert r[how]["ran"] and "cpu0" not in r[how]["ran"], r[how]


def test_the_example_runs_on_two_workers(tmp_path):
    example = Path(__file__).resolve().parents[1] / "examples" / "dask_matmul.py"
    p = subprocess.Popen([sys.executable, str(example), "256", "64"], cwd=tmp_path, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        pytest.fail(f"examples/dask_matmul.py hung for {TIMEOUT} s:\n{err[-4000:]}")
    assert p.returncode == 0, err[-4000:]
    assert "n=256 block=64: bf16 matmul on 2 workers matches NumPy" in out and "column sums match" in out
    assert "npu0=" in out and "npu1=" in out


@pytest.mark.parametrize("args, message", [(["0"], "must be positive"), (["100", "7"], "block dividing n"),
                                           (["x"], "invalid integer 'x'"), (["1", "1", "1"], "at most two")])
def test_the_example_refuses_bad_arguments(args, message):
    example = Path(__file__).resolve().parents[1] / "examples" / "dask_matmul.py"
    p = subprocess.run([sys.executable, str(example), *args], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and message in p.stderr
