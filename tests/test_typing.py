"""`mypy --strict` over the examples and a typed program (tests/typed/), against the package's own
sources and stubs (src/hrxarray, src/hrxarray/_core/*.pyi): operators, methods and functions must
have real types, checked by typing.assert_type in tests/typed/array_program.py."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_mypy_strict_is_clean_on_the_examples_and_a_typed_program(tmp_path):
    pytest.importorskip("mypy")
    env = {**os.environ, "MYPYPATH": str(REPO / "src")}
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"),
         "--config-file", str(REPO / "pyproject.toml"), "examples", "tests/typed"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success: no issues found" in proc.stdout


def test_the_typed_program_runs():
    proc = subprocess.run([sys.executable, str(REPO / "tests" / "typed" / "array_program.py")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert float(proc.stdout) == 66.0 + 23.0  # sum of arange(12), plus max(arange(12) + 1)
