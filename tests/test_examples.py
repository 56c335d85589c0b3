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
