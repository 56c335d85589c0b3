"""Helpers shared by the benchmark scripts (not a benchmark: bench/run.py skips it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def save_results(name: str, data: dict) -> Path:
    """Write bench/results/<name>.json and return its path."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(data, indent=2))
    return path


def pyplot():
    """matplotlib.pyplot on the Agg backend, or None (with a note) when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot (pip install '.[bench]')", file=sys.stderr)
        return None
    return plt
