"""The hrx-rs Loom corpus under both executors (issue 25's differential test, corpus half).

With ``HRX_LOOM_CORPUS`` naming a directory (a checkout of hrx-rs, or any folder of .loom
files; never committed here), every GPU kernel of every .loom file under it, recursively, is
compiled for gfx1151 and run by the interpreter and by native code on the same random inputs,
sized from the artifact's contract as tests/test_loom_native.py sizes them; the output bytes
(or the error texts) must be equal. Config keys get the values the other corpus tests use
(tests/test_loom_frontend.py, tests/test_loom_exec.py); a kernel that does not compile with
them is skipped with the compile error, and one that stays interpreted with its
executor_reason (``pytest -rs`` lists both).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import hrxarray as hx
from test_loom_native import CANDIDATES, _assert_native_equals_interpreter, _setup

CORPUS = os.environ.get("HRX_LOOM_CORPUS")
UNSET = "HRX_LOOM_CORPUS is not set"

# Config each corpus kernel is specialised with, as the other corpus tests do (one run per entry).
CONFIGS = {
    "add_f32": [{"add.grid": 4}],
    "select": [{"db.batch": 2, "db.select.first": 1, "db.select.limit": 1 << 20},
               {"db.batch": 2, "db.select.first": 0, "db.select.limit": 1 << 20}],
}
# Launches whose scalars must keep the kernel's own assumptions (test_corpus_hrxdb_select_family's).
LAUNCHES = {
    "select": ([3000], {"count_arg": 3000, "k_arg": 5, "row_base_arg": 100}),
}
# A kernel applying this template family links the corpus file that implements it, as hrx-rs does.
PROVIDERS = {"completed_tick": "completed_tick.loom"}


def _kernels(root: Path) -> list[tuple[str, str, str]]:
    """(path relative to root, source, symbol) for every GPU kernel of the .loom files under root."""
    out = []
    for p in sorted(root.rglob("*.loom")):
        src = p.read_text(encoding="utf-8")
        for sym in re.findall(r"kernel\.def\b[^\n{]*?@([A-Za-z_][\w.\-]*)\s*\(", src):
            out.append((p.relative_to(root).as_posix(), src, sym))
    return out


def _params():
    if not CORPUS:
        return [pytest.param("", "", "", {}, id="no-corpus", marks=pytest.mark.skip(reason=UNSET))]
    out = []
    for rel, src, sym in _kernels(Path(CORPUS)):
        for i, config in enumerate(CONFIGS.get(sym, [{}])):
            out.append(pytest.param(rel, src, sym, config, id=f"{rel}:{sym}:{i}"))
    return out


def _linked(source: str) -> str:
    """The source with the corpus files providing the template families it applies put in front."""
    for family, name in PROVIDERS.items():
        if f"template.apply<@{family}>" in source and f"template.def<@{family}>" not in source:
            found = sorted(Path(CORPUS).rglob(name))
            if found:
                source = found[0].read_text(encoding="utf-8") + source
    return source


@pytest.mark.skipif(not CORPUS, reason=UNSET)
def test_corpus_holds_gpu_kernels():
    # A wrong path would otherwise pass by collecting nothing.
    assert Path(CORPUS).is_dir(), CORPUS
    assert _kernels(Path(CORPUS)), f"no kernel.def in any .loom file under {CORPUS}"


@pytest.mark.parametrize("path,source,symbol,config", _params())
def test_corpus_native_equals_interpreter(path, source, symbol, config):
    try:
        art = hx.loom.compile(_linked(source), symbol, target="gfx1151", config=config)
    except (hx.loom.LoomError, ValueError, TypeError, hx.HrxError) as e:
        pytest.skip(f"does not compile: {str(e).splitlines()[0][:160]}")
    # The generator's IR must always compile: a failure there is a bug, not a refusal.
    assert "native compilation failed" not in art.executor_reason
    if art.executor != "native":
        pytest.skip(f"interpreted: {art.executor_reason}")
    if symbol in LAUNCHES:
        workload, scalars = LAUNCHES[symbol]
        try:
            contract = art.contract_for(**scalars)
        except ValueError as e:  # e.g. a buffer only handed to a template that does not use it
            pytest.skip(f"no contract: {str(e).splitlines()[0][:160]}")
    else:
        setup = _setup(art, CANDIDATES)
        if setup is None:
            pytest.skip("no small launch found for its workload")
        workload, scalars, contract = setup
    _assert_native_equals_interpreter(art, contract, scalars, workload)
