"""The committed type stub of the compiled module must match the bindings."""

import difflib
import subprocess
import sys
from pathlib import Path

import pytest

import hrxarray

REPO = Path(__file__).resolve().parents[1]
STUB = REPO / "hrxarray" / "_core.pyi"
REGENERATE = "python -m nanobind.stubgen -m hrxarray._core -o hrxarray/_core.pyi"


def test_py_typed_marker_is_committed():
    assert (REPO / "hrxarray" / "py.typed").is_file()


def test_stub_is_current(tmp_path):
    pytest.importorskip("nanobind.stubgen")
    out = tmp_path / "_core.pyi"
    proc = subprocess.run(
        [sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "hrxarray._core", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,  # outside the source tree, whose hrxarray/ has no compiled module
    )
    assert proc.returncode == 0, proc.stderr
    fresh = out.read_text().splitlines(keepends=True)
    committed = STUB.read_text().splitlines(keepends=True)
    diff = "".join(difflib.unified_diff(committed, fresh, "committed _core.pyi", "regenerated"))
    assert not diff, f"hrxarray/_core.pyi is stale; regenerate it with `{REGENERATE}`:\n{diff}"


def test_every_public_name_is_documented():
    for name in hrxarray.__all__:
        if name == "__version__":
            continue
        obj = getattr(hrxarray, name)
        if name == "bfloat16":
            continue  # ml_dtypes' scalar type, documented there
        assert obj.__doc__ and obj.__doc__.strip(), f"hrxarray.{name} has no docstring"
