"""The NumPy function table: what a DeviceArray gets from each NumPy function that dispatches through
``__array_function__`` (NEP 18) in ``numpy``, ``numpy.linalg``, ``numpy.fft`` and
``numpy.lib.stride_tricks``.

``hrxarray numpy-functions`` prints it (Markdown, or ``--json``), and README.md carries the Markdown
between ``<!-- numpy-function-table -->`` markers (tests/test_numpy_breadth.py checks that the copy is
current for the NumPy version it names). It is read from the dispatch table itself
(``_array._ARRAY_FUNCTIONS``), so it cannot disagree with what a call meets:

- *runs*: hrxarray implements it on the device (it returns DeviceArrays, or a host value such as a
  bool or a dtype where NumPy's result is one);
- *refused*: it raises ``TypeError`` naming a real limit (no datetime64 dtype, a Python callback ...);
- *not yet*: it raises ``TypeError`` (no silent host fallback).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

import numpy as np

BEGIN = "<!-- numpy-function-table -->"
END = "<!-- /numpy-function-table -->"


def dispatching_functions() -> list:
    """NumPy's public functions that dispatch through ``__array_function__``, each once, by public name."""
    kind = type(np.concatenate)
    seen: dict[int, object] = {}
    for mod in (np, np.linalg, np.fft, np.lib.stride_tricks):
        for name in dir(mod):
            f = getattr(mod, name, None)
            if isinstance(f, kind) and not name.startswith("_"):
                seen.setdefault(id(f), f)
    from hrxarray import _array

    return sorted(seen.values(), key=_array._public_name)


def rows() -> list[dict]:
    """One row per dispatching function: its public name, status and (for refusals) reason."""
    import hrxarray  # noqa: F401 (the chapters register their functions on import)
    from hrxarray import _array

    out = []
    for f in dispatching_functions():
        impl = _array._ARRAY_FUNCTIONS.get(f)
        reason = getattr(impl, "_hx_refusal", None)
        status = "not yet" if impl is None else "refused" if reason else "runs"
        out.append({"name": _array._public_name(f), "status": status, "reason": reason})
    return out


def markdown() -> str:
    """The table as Markdown: the counts, the names that run, the refusals with reasons, the rest."""
    table = rows()
    by = {s: [r for r in table if r["status"] == s] for s in ("runs", "refused", "not yet")}
    n = len(table)
    short = lambda r: r["name"].removeprefix("numpy.")  # noqa: E731
    out = [f"NumPy {np.__version__}: {n} functions dispatch through `__array_function__`; {len(by['runs'])} run "
           f"on DeviceArrays, {len(by['refused'])} are refused with the reason below, {len(by['not yet'])} are not "
           f"implemented yet ({100 * (len(by['runs']) + len(by['refused'])) // n}% run or name their limit).", "",
           "| status | functions |", "|---|---|",
           "| runs | " + ", ".join(f"`{short(r)}`" for r in by["runs"]) + " |",
           "| not yet | " + (", ".join(f"`{short(r)}`" for r in by["not yet"]) or "—") + " |", ""]
    reasons: dict[str, list[str]] = {}
    for r in by["refused"]:
        reasons.setdefault(r["reason"], []).append(short(r))
    out += [f"- {', '.join(f'`{x}`' for x in names)}: {why}." for why, names in reasons.items()]
    return "\n".join(out) + "\n"


def main(argv: Sequence[str]) -> int:
    """``hrxarray numpy-functions [--json]``: print the table."""
    if list(argv) not in ([], ["--json"]):
        sys.stderr.write("usage: hrxarray numpy-functions [--json]\n")
        return 2
    if argv:
        sys.stdout.write(json.dumps(rows(), indent=1) + "\n")
    else:
        sys.stdout.write(markdown())
    return 0
