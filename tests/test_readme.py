"""Every ```python block of README.md runs as written.

Each block runs on its own in a fresh interpreter (cwd a temporary directory, so nothing of the
source tree is imported by accident), with a timeout. A block that imports an optional peer (torch)
is skipped when that peer is not installed; nothing else is skipped.
"""

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
OPTIONAL_PEERS = ("torch", "dask", "distributed")


def python_blocks(text):
    """(first line number, source) of every ```python fenced block of a Markdown text."""
    blocks = []
    for m in re.finditer(r"^```python[ \t]*\n(.*?)^```[ \t]*$", text, re.S | re.M):
        blocks.append((text.count("\n", 0, m.start()) + 2, m.group(1)))
    return blocks


def imported_peers(source):
    """The optional peers a block imports (``import torch``, ``import numpy as np, torch``, ``from torch ...``)."""
    found = set()
    for line in source.splitlines():
        m = re.match(r"\s*(?:import\s+(.+)|from\s+(\S+)\s+import\b)", line)
        if not m:
            continue
        names = [m.group(2)] if m.group(2) else [p.split()[0] for p in m.group(1).split(",")]
        found.update(n.split(".")[0] for n in names if n.split(".")[0] in OPTIONAL_PEERS)
    return found


BLOCKS = python_blocks(README.read_text())


def test_the_readme_has_python_blocks_and_the_extractor_finds_them():
    assert len(BLOCKS) >= 3
    text = "x\n```python\na = 1\n```\n```sh\nls\n```\n```python\nimport numpy as np, torch\n```\n"
    assert python_blocks(text) == [(3, "a = 1\n"), (9, "import numpy as np, torch\n")]
    assert imported_peers("import numpy as np, torch\n") == {"torch"}
    assert imported_peers("from torch.utils import dlpack\n") == {"torch"}
    assert imported_peers("import hrxarray as hx\n") == set()


@pytest.mark.parametrize("line, source", BLOCKS, ids=[f"README.md:{line}" for line, _ in BLOCKS])
def test_readme_block_runs(line, source, tmp_path):
    missing = sorted(p for p in imported_peers(source) if importlib.util.find_spec(p) is None)
    if missing:
        pytest.skip(f"README.md:{line} imports {', '.join(missing)}, which is not installed")
    script = tmp_path / "block.py"
    script.write_text(source)
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, f"README.md:{line} fails:\n{proc.stderr}"


ROOT = README.parent


def test_user_docs_cite_only_what_a_reader_can_open():
    # The design references (hrx-runtime.md and its sections) are not part of the repository: the
    # README, the examples and the package cite the public hrx-rs sources instead.
    files = [README, ROOT / "bench" / "README.md", *sorted((ROOT / "examples").glob("*.py")),
             *sorted((ROOT / "src" / "hrxarray").glob("*.py"))]
    for path in files:
        text = path.read_text()
        for needle in ("hrx-runtime.md", "reference/", "§"):
            assert needle not in text, f"{path.relative_to(ROOT)} cites {needle!r}"


def test_readme_speedups_are_the_bench_tables():
    # The overlap figures the README quotes are those of bench/results/gpu_npu_parallel.json.
    d = json.loads((ROOT / "bench" / "results" / "gpu_npu_parallel.json").read_text())
    text = " ".join(README.read_text().split())
    balanced, single = d["balanced"], d["one_cpu_per_engine"]["balanced"]
    assert f"running them at once saves little: about {d['default']['speedup']:.2f}×" in text
    assert f"{balanced['speedup']:.2f}× with the kernels' thread pool" in text
    assert f"{balanced['matrices']:,} matrices; {min(balanced['speedup_per_run']):.2f}–" \
           f"{max(balanced['speedup_per_run']):.2f}× over three runs" in text
    assert f"{single['speedup']:.2f}× with one CPU per emulated engine" in text
    assert f"{single['matrices']:,} matrices)" in text


# --- the Loom op table (hrxarray._loom_table, `hrxarray loom-ops`) ---------------------------------


def test_the_readme_op_table_is_the_one_the_catalogue_gives():
    from hrxarray import _loom_table

    text = README.read_text()
    assert text.count(_loom_table.BEGIN) == 1 and text.count(_loom_table.END) == 1
    copy = text.split(_loom_table.BEGIN + "\n", 1)[1].split(_loom_table.END, 1)[0]
    assert copy == _loom_table.markdown(), (
        "README.md's Loom op table is stale: replace the text between the loom-op-table markers with "
        "the output of `python -m hrxarray loom-ops`")


def test_the_op_table_places_every_catalogue_op_once_by_its_status():
    from hrxarray import _loom_table, loom

    cat = loom.op_catalogue()
    rows = _loom_table.rows(cat)
    placed = [(r["dialect"], s, name) for r in rows for s in ("native", "interpreted", "refused") for name in r[s]]
    assert len(placed) == len(cat)
    for e in cat:
        short = e["name"].removeprefix(e["dialect"] + ".")
        want = "refused" if not e["executed"] else ("native" if e.get("native") else "interpreted")
        assert (e["dialect"], want, short) in placed, e["name"]
    table = _loom_table.markdown(cat)
    for e in cat:
        if not e["executed"]:  # every refusal is listed with its code
            line = next(l for l in table.splitlines() if f"`{e['name']}`" in l and l.startswith("- "))
            assert f"`{e['code']}`" in line
    # A model catalogue: statuses follow executed/native, and the prefix is dropped per dialect.
    model = [{"name": "a.x", "dialect": "a", "executed": True, "native": True, "code": None, "reason": ""},
             {"name": "a.y", "dialect": "a", "executed": True, "code": None, "reason": ""},
             {"name": "b.z.w", "dialect": "b", "executed": False, "code": "EMULATOR/009", "reason": "why."}]
    assert [(r["native"], r["interpreted"], r["refused"]) for r in _loom_table.rows(model)] == [
        (["x"], ["y"], []), ([], [], ["z.w"])]
    assert "- `b.z.w`: `EMULATOR/009`, why.\n" in _loom_table.markdown(model)


def test_the_loom_ops_command(capsys):
    from hrxarray import __main__, _loom_table, loom

    assert __main__.main(["loom-ops"]) == 0
    assert capsys.readouterr().out == _loom_table.markdown()
    assert __main__.main(["loom-ops", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == [e["name"] for e in loom.op_catalogue()]
    assert {r["status"] for r in rows} <= {"native", "interpreted", "refused"}
    assert __main__.main(["loom-ops", "--csv"]) == 2
    assert "unknown option '--csv'" in capsys.readouterr().err
