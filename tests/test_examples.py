"""The README's main job runs and says what it did."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def run(args, cwd, timeout=120):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=os.environ.copy())


def test_quickstart_runs(tmp_path):
    out = run([sys.executable, str(REPO / "examples" / "quickstart.py")], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "backend: emulated; devices: gfx1151 and amd.xdna.strix_halo.17f0_11 (8 columns)" in out.stdout
    assert "host flush of 3 ranges merges into 2 operations: [(0, 8192), (65536, 65600)]" in out.stdout
    assert "BusyError as expected" in out.stdout
    assert "same storage: True" in out.stdout


def test_console_script_runs_the_doctor(tmp_path):
    script = Path(sys.executable).parent / "hrxarray"
    if not script.exists():
        pytest.skip("the hrxarray console script is not installed beside this interpreter")
    out = run([str(script), "doctor", "--json"], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["backend"] == "emulated"


@pytest.mark.parametrize("args, expected", [
    ([], "n=1000000: loom ufunc y = a*x + b (bf16) matches NumPy"),
    (["1"], "n=1: loom ufunc y = a*x + b (bf16) matches NumPy"),
    (["1001"], "n=1001: loom ufunc y = a*x + b (bf16) matches NumPy"),
])
def test_loom_ufunc_example(tmp_path, args, expected):
    out = run([sys.executable, str(REPO / "examples" / "loom_ufunc.py"), *args], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert expected in out.stdout


@pytest.mark.parametrize("args, expected", [
    ([], "records=64: GPU square then NPU add in one graph matches NumPy (grid (16, 1, 1), block (64, 1, 1))"),
    (["1"], "records=1: GPU square then NPU add in one graph matches NumPy (grid (1, 1, 1), block (64, 1, 1))"),
    (["4096"], "records=4096: GPU square then NPU add in one graph matches NumPy (grid (1024, 1, 1)"),
])
def test_loom_npu_pipeline_example(tmp_path, args, expected):
    out = run([sys.executable, str(REPO / "examples" / "loom_npu_pipeline.py"), *args], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert expected in out.stdout


@pytest.mark.parametrize("script, args, message", [
    ("loom_ufunc.py", ["0"], "n must be in 1..=67108864"),
    ("loom_ufunc.py", ["x"], "invalid integer 'x'"),
    ("loom_ufunc.py", ["1", "2"], "expected at most one argument, got 2"),
    ("loom_npu_pipeline.py", ["4097"], "records must be in 1..=4096"),
    ("loom_npu_pipeline.py", ["-1"], "invalid integer '-1'"),
])
def test_loom_examples_bad_arguments(tmp_path, script, args, message):
    out = run([sys.executable, str(REPO / "examples" / script), *args], cwd=tmp_path)
    assert out.returncode == 2
    assert message in out.stderr and "usage:" in out.stderr


@pytest.mark.parametrize("script", ["loom_ufunc.py", "loom_npu_pipeline.py"])
def test_loom_examples_help(tmp_path, script):
    out = run([sys.executable, str(REPO / "examples" / script), "--help"], cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.startswith("usage:")
