"""hrxarray.dask on a real dask.distributed cluster: worker processes on loopback, each bound to one device.

Each scenario runs in a child process (tests/dask_cluster_job.py) under a
timeout, killed with its worker processes if it hangs; the assertions are here.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import helpers

pytest.importorskip("dask.array")
pytest.importorskip("distributed")

JOB = Path(__file__).with_name("dask_cluster_job.py")
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "dask_matmul.py"
TIMEOUT = 240


def run_killable(args, what, **kwargs):
    """(stdout, stderr) of a child Python that must succeed within TIMEOUT."""
    proc = helpers.run_killable([sys.executable, *args], TIMEOUT, what, **kwargs)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout, proc.stderr


def run(scenario):
    out, _ = run_killable([str(JOB), scenario], f"the {scenario} cluster scenario",
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})
    return json.loads(out.strip().splitlines()[-1])


def test_bf16_matmul_on_two_worker_processes():
    r = run("matmul")
    assert r["input_block_type"] == r["meta"] == r["type"] == "DeviceArray"
    assert r["dtype"] == "bfloat16" and r["shape"] == [512, 512]
    assert r["error"] < 2**-7
    # 4 x 4 output blocks (each 4 block products summed on its worker), and both workers ran some.
    assert sum(r["block_tasks"].values()) == 16
    assert set(r["block_tasks"]) == {"npu0", "npu1"}
    for name, device in (("npu0", "npu:0"), ("npu1", "npu:1")):
        b = r["bindings"][name]
        assert b["visible_devices"] == device and b["binding"]["device"] == device
        assert b["binding"]["resources"] == "NPU=1"


def test_plain_matmul_on_distributed_local_cluster():
    # distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True) with the plugin registered by
    # the client (the several-machines recipe); plain x @ y of bf16 blocks runs hrxarray.dask.matmul.
    r = run("local")
    assert r["workers"] == 2 and r["bound"] == ["cpu", "cpu"]
    assert r["meta"] == r["type"] == "DeviceArray" and r["dtype"] == "bfloat16" and r["shape"] == [512, 512]
    assert r["graph"] == "hrx-matmul" and r["error"] < 2**-7
    assert sum(r["block_tasks"]) == 16 and len(r["block_tasks"]) == 2  # both workers ran block tasks


def test_npu_tasks_never_run_on_the_cpu_worker():
    r = run("resources")
    assert r["resources"] == {"npu0": {"NPU": 1}, "npu1": {"NPU": 1}, "cpu0": {}}
    for how in ("compute_resources", "annotate_no_fuse"):
        assert r[how]["type"] == "DeviceArray" and r[how]["value"] == 64 * 64 * 4
        assert r[how]["ran"] and "cpu0" not in r[how]["ran"], r[how]


def test_pending_results_spread_over_workers():
    # Note [Pending results and the Dask scheduler]: every input lives on the first worker and each task
    # returns a pending DeviceArray; timed at ~0 s the tasks would all stay there (24 and 0), timed over
    # their device work the idle worker steals a share.
    r = run("spread")
    assert sum(r["ran"]) == 24 and r["type"] == "DeviceArray" and r["ready"]
    assert min(r["ran"]) >= 4, r  # 12 and 12 here; 24 and 0 when pending results were timed at ~0 s


def test_the_example_runs_on_two_workers(tmp_path):
    out, _ = run_killable([str(EXAMPLE), "256", "64"], "examples/dask_matmul.py", cwd=tmp_path)
    assert "n=256 block=64: bf16 matmul on 2 workers matches NumPy" in out and "column sums match" in out
    assert "npu0=" in out and "npu1=" in out


@pytest.mark.parametrize("args, message", [(["0"], "must be positive"), (["100", "7"], "block dividing n"),
                                           (["x"], "invalid integer 'x'"), (["1", "1", "1"], "at most two")])
def test_the_example_refuses_bad_arguments(args, message):
    p = subprocess.run([sys.executable, str(EXAMPLE), *args], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and message in p.stderr
