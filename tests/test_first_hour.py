"""What a newcomer meets first: the README's commands, the source tree, the import."""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()


def _sh_blocks(text):
    return re.findall(r"```sh\n(.*?)```", text, flags=re.S)


def test01_import_works_from_the_repository_root():
    # The README's commands leave the user in the repository root; the package
    # lives under src/, so the installed package is what `import hrxarray` finds.
    proc = subprocess.run(
        [sys.executable, "-c", "import hrxarray, sys; print(hrxarray.__file__)"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).name == "__init__.py"


def test02_source_tree_without_compiled_module_says_how_to_install(tmp_path):
    # A copy of the Python sources alone: the stub folder _core/ must not make
    # the missing compiled module look like an empty package.
    pkg = tmp_path / "hrxarray"
    pkg.mkdir()
    for p in (REPO / "src" / "hrxarray").glob("*.py"):
        (pkg / p.name).write_text(p.read_text())
    (pkg / "_core").mkdir()
    (pkg / "_core" / "__init__.pyi").write_text("")
    proc = subprocess.run(
        [sys.executable, "-c", "import hrxarray"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: hrxarray's compiled module hrxarray._core is missing"), proc.stderr
    assert "pip install ." in last and "cannot import name" not in last


def test03_readme_commands_install_the_build_requirements_of_pyproject():
    # The two commands build without isolation so that the second reuses the
    # first's build directory; they must then install exactly what the build
    # backend needs (pyproject's build-system.requires) plus cmake and ninja.
    requires = tomllib.loads((REPO / "pyproject.toml").read_text())["build-system"]["requires"]
    main_job, tests = (b.strip() for b in _sh_blocks(README)[:2])
    for command in (main_job, tests):
        m = re.match(r"python3 -m venv \.venv && \.venv/bin/pip install -q (.*?) && \.venv/bin/pip install -q "
                     r"--no-build-isolation ", command)
        assert m, command
        pkgs = m.group(1).split()
        assert {"cmake", "ninja"} <= set(pkgs), pkgs
        for req in requires:
            name = re.split(r"[<>=!~ ]", req)[0]
            # a pin must be the same pin; a lower bound is met by the newest release
            assert req in pkgs or ("==" not in req and name in pkgs), (req, pkgs)
    assert tests.endswith(".venv/bin/pytest")


def test04_ci_runs_exactly_the_readme_test_command():
    tests = _sh_blocks(README)[1].strip()
    ci = (REPO / ".ci" / "run").read_text()
    assert tests in ci.splitlines()
