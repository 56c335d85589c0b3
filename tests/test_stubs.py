"""The committed type stub of the compiled module must match the bindings."""

import difflib
import subprocess
import sys
from pathlib import Path

import pytest

import hrxarray

REPO = Path(__file__).resolve().parents[1]
# _core has submodules (kernels, loom, numerics), so its stubs are a package:
# src/hrxarray/_core/__init__.pyi, elementwise.pyi, kernels.pyi, loom.pyi, numerics.pyi.
STUBS = REPO / "src" / "hrxarray" / "_core"
REGENERATE = "python -m nanobind.stubgen -r -m hrxarray._core -O src/hrxarray"


def test_py_typed_marker_is_committed():
    assert (REPO / "src" / "hrxarray" / "py.typed").is_file()


def test_stub_is_current(tmp_path):
    pytest.importorskip("nanobind.stubgen")
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "nanobind.stubgen", "-q", "-r", "-m", "hrxarray._core", "-O", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,  # outside the source tree, whose hrxarray/ has no compiled module
    )
    assert proc.returncode == 0, proc.stderr
    fresh_dir = out / "_core"
    names = sorted(p.name for p in fresh_dir.glob("*.pyi"))
    assert names == ["__init__.pyi", "elementwise.pyi", "kernels.pyi", "loom.pyi", "numerics.pyi"]
    assert sorted(p.name for p in STUBS.glob("*.pyi")) == names, f"stub files differ; regenerate with `{REGENERATE}`"
    for name in names:
        fresh = (fresh_dir / name).read_text().splitlines(keepends=True)
        committed = (STUBS / name).read_text().splitlines(keepends=True)
        diff = "".join(difflib.unified_diff(committed, fresh, f"committed _core/{name}", "regenerated"))
        assert not diff, f"src/hrxarray/_core/{name} is stale; regenerate it with `{REGENERATE}`:\n{diff}"


def test_every_public_name_is_documented():
    for name in hrxarray.__all__:
        if name == "__version__":
            continue
        obj = getattr(hrxarray, name)
        if name == "bfloat16":
            continue  # ml_dtypes' scalar type, documented there
        if name in ("e", "pi", "inf", "nan", "newaxis", "__array_api_version__"):
            continue  # the standard's constants: plain values, documented in hrxarray._data_types
        assert obj.__doc__ and obj.__doc__.strip(), f"hrxarray.{name} has no docstring"
