"""The Loom op table: what the emulator does with each op of Loom's dialect definitions.

``python -m hrxarray loom-ops`` prints it (Markdown, or ``--json``), and README.md carries the
Markdown between ``<!-- loom-op-table -->`` markers (tests/test_readme.py checks that the copy is
current). It is built from :func:`hrxarray.loom.op_catalogue`, the one table the parser, planner and
both executors read, so it cannot disagree with what a program meets:

- *native*: GPU kernels using the op compile to native code (in its common forms; a rarer form or
  type can still keep a kernel in the interpreter, and ``Artifact.executor_reason`` says which);
- *interpreted*: the op runs, in the interpreter only (a kernel using it is interpreted as a whole;
  NPU pipelines and host-side ops always are);
- *refused*: the program is refused when it is compiled, with the ``EMULATOR`` code and reason shown.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

BEGIN = "<!-- loom-op-table -->"
END = "<!-- /loom-op-table -->"


def status(entry: dict) -> str:
    """'native', 'interpreted' or 'refused' for one catalogue entry."""
    if not entry["executed"]:
        return "refused"
    return "native" if entry.get("native") else "interpreted"


def rows(catalogue: Sequence[dict] | None = None) -> list[dict]:
    """One row per dialect, in catalogue order: its native, interpreted and refused op names (the
    dialect prefix dropped), and the refused ones grouped by (code, reason)."""
    if catalogue is None:
        from hrxarray import loom

        catalogue = loom.op_catalogue()
    by: dict[str, dict] = {}
    for e in catalogue:
        d = by.setdefault(e["dialect"], {"dialect": e["dialect"], "native": [], "interpreted": [], "refused": [],
                                         "reasons": {}})
        short = e["name"][len(e["dialect"]) + 1:] if e["name"].startswith(e["dialect"] + ".") else e["name"]
        s = status(e)
        d[s].append(short)
        if s == "refused":
            d["reasons"].setdefault((e["code"], e["reason"] or "not implemented yet"), []).append(e["name"])
    return list(by.values())


def markdown(catalogue: Sequence[dict] | None = None) -> str:
    """The op table as Markdown: a count table per dialect, the op names by status, and the reasons of
    the refusals."""
    table = rows(catalogue)
    n = {s: sum(len(r[s]) for r in table) for s in ("native", "interpreted", "refused")}
    out = [f"{sum(n.values())} ops: {n['native']} compile to native code, {n['interpreted']} run in the "
           f"interpreter only, {n['refused']} are refused when a program is compiled.", "",
           "| dialect | native | interpreted only | refused |", "|---|---|---|---|"]
    for r in table:
        cells = [", ".join(f"`{x}`" for x in r[s]) or "—" for s in ("native", "interpreted", "refused")]
        out.append(f"| `{r['dialect']}` | " + " | ".join(cells) + " |")
    reasons = [(code, why, names) for r in table for (code, why), names in r["reasons"].items()]
    if reasons:
        out += ["", "Refused, and why:", ""]
        for code, why, names in reasons:
            out.append(f"- {', '.join(f'`{x}`' for x in names)}: `{code}`, {why.rstrip('.')}.")
    return "\n".join(out) + "\n"


def main(argv: Sequence[str]) -> int:
    """``loom-ops [--json]``: print the op table (Markdown, or the catalogue rows with their status as JSON)."""
    if any(a not in ("--json",) for a in argv):
        import sys

        sys.stderr.write(f"loom-ops: unknown option {next(a for a in argv if a != '--json')!r} "
                         "(usage: loom-ops [--json])\n")
        return 2
    if "--json" in argv:
        from hrxarray import loom

        print(json.dumps([dict(e, status=status(e)) for e in loom.op_catalogue()], indent=1))
    else:
        print(markdown(), end="")
    return 0
