"""docs/architecture.md stays true to the code it describes.

The document's references follow the convention of its section "How to read the references": every
backticked path exists, every ``path:name`` names a function, method or class defined in that file,
every bare qualified C++ name occurs in the code under ext/, and every ``hx.``/``hrxarray.`` name
resolves on the installed package. The checker is tested on a small made-up tree first, so that a
reference it should refuse is refused."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"

pytestmark = pytest.mark.skipif(not DOC.is_file() or not (ROOT / "ext" / "core").is_dir(),
                                reason="needs the source tree (docs/, ext/core/)")

ROOT_DIRS = ("src", "ext", "tests", "docs", "bench", "examples")
CORE_LAYERS = ("memory", "runtime", "array", "provider", "kernels", "loom")
IDENT = r"[A-Za-z_~][A-Za-z0-9_]*"
SYMBOL = rf"{IDENT}(?:(?:::|\.){IDENT})*"
PATH = r"[A-Za-z0-9_.\-]+(?:/[A-Za-z0-9_.\-]+)*/?"
CPP_SUFFIXES = (".h", ".cpp", ".inc")


def code_spans(text: str) -> list[str]:
    """The inline code spans of a Markdown text, fenced blocks left out."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    return re.findall(r"`([^`]+)`", text)


def classify(span: str):
    """What a code span claims: ("path", p), ("defines", p, name), ("cpp", name), ("python", dotted)
    or None (prose in backticks the convention does not cover)."""
    def located(p: str):
        first = p.split("/", 1)[0]
        if "/" not in p:
            return None
        if first in ROOT_DIRS:
            return p
        if first in CORE_LAYERS:
            return "ext/core/" + p
        return None

    if m := re.fullmatch(rf"({PATH}):({SYMBOL})", span):
        p = located(m.group(1))
        return ("defines", p, m.group(2)) if p else None
    if "/" in span and re.fullmatch(PATH, span):
        p = located(span)
        return ("path", p) if p else None
    if re.fullmatch(rf"{IDENT}(?:::{IDENT})+", span):
        return ("cpp", span)
    if m := re.fullmatch(rf"((?:hx|hrxarray)(?:\.{IDENT})+)(?:\(.*\))?", span, flags=re.DOTALL):
        return ("python", m.group(1))
    return None


def cpp_code(text: str) -> str:
    """C++ source without comments and string literals (a name in a comment defines nothing)."""
    pattern = r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"'
    return re.sub(pattern, lambda m: "" if m.group(0).startswith("/") else '""', text, flags=re.DOTALL)


def _declares(code: str, name: str) -> bool:
    """Whether C++ `code` declares `name` as a class, struct, enum or namespace."""
    return bool(re.search(rf"\b(?:class|struct|enum(?:\s+class)?)\s+{re.escape(name)}\b", code)
                or re.search(rf"\bnamespace\s+(?:[\w:]*::)?{re.escape(name)}\b", code))


def cpp_defines(code: str, symbol: str) -> bool:
    *quals, last = symbol.split("::")
    names_last = bool(re.search(rf"(?<![\w]){re.escape(last)}\s*\(", code)) or _declares(code, last)
    if not quals:
        return names_last
    if re.search(rf"(?<![\w:]){re.escape(symbol)}\s*\(", code):
        return True
    return names_last and all(_declares(code, q) for q in quals)


def python_defines(text: str, symbol: str) -> bool:
    *quals, last = symbol.split(".")
    found = re.search(rf"^\s*(?:async\s+)?(?:def|class)\s+{re.escape(last)}\b", text, re.MULTILINE)
    return bool(found) and all(re.search(rf"^\s*class\s+{re.escape(q)}\b", text, re.MULTILINE) for q in quals)


def cpp_name_known(symbol: str, sources: list[str]) -> bool:
    *quals, last = symbol.split("::")
    verbatim = re.compile(rf"(?<![\w]){re.escape(symbol)}\b")
    # Substring tests first: the regular expressions run only on the few files that can match.
    if any(symbol in code and verbatim.search(code) for code in sources):
        return True
    word = re.compile(rf"\b{re.escape(last)}\b")
    return any(last in code and word.search(code) and all(_declares(code, q) for q in quals) for code in sources)


def python_name_resolves(dotted: str) -> bool:
    import hrxarray

    parts = dotted.split(".")
    obj = hrxarray
    for i, part in enumerate(parts[1:], start=1):
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        try:
            obj = importlib.import_module("hrxarray." + ".".join(parts[1:i + 1]))
        except ImportError:
            return False
    return True


def problems(doc_text: str, root: Path, check_python: bool = True) -> list[str]:
    """Every reference of `doc_text` that the tree at `root` does not bear out."""
    out = []
    sources = None
    for span in code_spans(doc_text):
        if "\n" in span:
            out.append(f"code span across lines (keep references on one line): {span!r}")
            continue
        c = classify(span)
        if c is None:
            continue
        if c[0] == "path":
            if not (root / c[1]).exists():
                out.append(f"missing path: {span}")
        elif c[0] == "defines":
            p = root / c[1]
            if not p.is_file():
                out.append(f"missing file: {span}")
            elif p.suffix == ".py":
                if not python_defines(p.read_text(), c[2]):
                    out.append(f"not defined in {c[1]}: {c[2]}")
            elif p.suffix in CPP_SUFFIXES:
                if not cpp_defines(cpp_code(p.read_text()), c[2]):
                    out.append(f"not defined in {c[1]}: {c[2]}")
            else:
                out.append(f"names a symbol in a file that is neither Python nor C++: {span}")
        elif c[0] == "cpp":
            if sources is None:
                sources = [cpp_code(p.read_text()) for p in sorted((root / "ext").rglob("*"))
                           if p.suffix in CPP_SUFFIXES]
            if not cpp_name_known(c[1], sources):
                out.append(f"C++ name not found under ext/: {c[1]}")
        elif c[0] == "python" and check_python:
            if not python_name_resolves(c[1]):
                out.append(f"does not resolve on the installed package: {c[1]}")
    return out


def test_the_checker_refuses_what_the_tree_does_not_have(tmp_path):
    (tmp_path / "ext" / "core" / "runtime").mkdir(parents=True)
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "ext" / "core" / "runtime" / "lane.cpp").write_text(
        "namespace hrx::lanes {\nstruct Op { enum class Kind { Task }; };\n"
        "void Lane::run(int x) {}\nint helper(int y) { return y; }\n}\n// void ghost(int) in a comment\n")
    (tmp_path / "ext" / "core" / "runtime" / "lane.h").write_text("class Lane {\n  void run(int x);\n};\n")
    (tmp_path / "src" / "pkg" / "mod.py").write_text("class Thing:\n    def call(self):\n        pass\n\ndef free():\n    pass\n")
    doc = "\n".join([
        "`ext/core/runtime/lane.cpp`, `runtime/lane.h`, `ext/core/runtime/`",  # exist
        "`ext/core/runtime/gone.cpp`, `runtime/gone.h`",  # missing
        "`ext/core/runtime/lane.cpp:Lane::run`, `ext/core/runtime/lane.cpp:lanes::helper`",  # defined
        "`ext/core/runtime/lane.cpp:ghost`, `ext/core/runtime/lane.cpp:Other::helper`",  # comment only; no class Other
        "`src/pkg/mod.py:Thing.call`, `src/pkg/mod.py:free`",
        "`src/pkg/mod.py:Nothing.call`, `src/pkg/mod.py:missing`",
        "`Op::Kind::Task`, `Lane::run`, `Op::Kind::Fill`, `Ghost::thing`",
        "`some prose`, `kernel.def`, `hx.`",
        "```\n`ext/core/runtime/in_a_fence.cpp`\n```",
    ])
    assert problems(doc, tmp_path, check_python=False) == [
        "missing path: ext/core/runtime/gone.cpp",
        "missing path: runtime/gone.h",
        "not defined in ext/core/runtime/lane.cpp: ghost",
        "not defined in ext/core/runtime/lane.cpp: Other::helper",
        "not defined in src/pkg/mod.py: Nothing.call",
        "not defined in src/pkg/mod.py: missing",
        "C++ name not found under ext/: Op::Kind::Fill",
        "C++ name not found under ext/: Ghost::thing",
    ]


def test_the_checker_reads_python_names():
    assert classify("hx.loom.function(source, symbol)(x, y)") == ("python", "hx.loom.function")
    assert classify("hrxarray._core._matmul(a, b)") == ("python", "hrxarray._core._matmul")
    assert classify("hx.loom") == ("python", "hx.loom") and classify("kernel.def") is None
    assert python_name_resolves("hx.add") and python_name_resolves("hrxarray._core.loom._run_kernel")
    assert not python_name_resolves("hx.no_such_function")


def test_every_reference_of_the_architecture_doc_holds():
    text = DOC.read_text()
    refs = [c for c in map(classify, code_spans(text)) if c]
    # The document really is written in the convention (not an empty check).
    assert sum(c[0] == "defines" for c in refs) >= 60 and sum(c[0] == "path" for c in refs) >= 30
    assert problems(text, ROOT) == []


def test_the_doc_covers_every_layer_and_the_three_journeys():
    text = DOC.read_text()
    spans = set(code_spans(text))
    layers = sorted(p.name for p in (ROOT / "ext" / "core").iterdir() if p.is_dir())
    assert layers and [f"ext/core/{n}/" for n in layers if f"ext/core/{n}/" not in spans] == []
    assert {"src/hrxarray/", "ext/bind/", "ext/core/provider/emulated/"} <= spans
    journeys = re.split(r"^## Journey \d", text, flags=re.MULTILINE)[1:]
    assert len(journeys) == 3
    for j in journeys:
        assert re.search(r"^\d+\. \*\*", j, re.MULTILINE), "each journey is a numbered list of hops"
        assert "**Known deviations (issue 26).**" in j


def test_readme_development_links_the_doc():
    readme = (ROOT / "README.md").read_text()
    dev = readme.split("## Development", 1)[1].split("\n## ", 1)[0]
    assert "docs/architecture.md" in dev
