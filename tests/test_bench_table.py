"""bench/run.py's table: every result file shows the host and the time it was measured on, and a
partial run replaces only its own figures (the others keep their hosts and dates)."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


def load(name):
    """Import bench/<name>.py as a module (bench/ is not a package; its scripts import _common)."""
    sys.path.insert(0, str(BENCH))
    # A script's `import _common` must not leave bench/_common.py as the
    # `_common` of later tests (examples/ has its own).
    before = sys.modules.get("_common")
    try:
        spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(str(BENCH))
        if before is None:
            sys.modules.pop("_common", None)
        else:
            sys.modules["_common"] = before


HOST_A = {"cpu": "Intel Xeon w9-3495X", "cpus": 112, "os": "Linux-6.8", "python": "3.12.1", "numpy": "2.3.0",
          "backend": "emulated", "kernel_path": "amx_bf16"}
HOST_B = {"cpu": "AMD Ryzen AI Max+ 395", "cpus": 32, "os": "Linux-6.14", "python": "3.11.7", "numpy": "2.4.6",
          "backend": "emulated", "kernel_path": "avx512_bf16"}


def figure(value, host, measured_at):
    return {"figure": "fake", "host": host, "measured_at": measured_at,
            "table": [{"figure": "fake rate", "value": value, "unit": "GB/s", "peer": "copy", "peer_value": 1.0,
                       "ratio": value, "ratio_label": "ours / peer"}]}


def section(text, name):
    """The README section of one result file (from its heading to the next)."""
    return text.split(f"### {name}\n", 1)[1].split("\n### ", 1)[0]


@pytest.fixture
def bench(tmp_path, monkeypatch):
    """bench/run.py with its results, README and scripts in tmp_path."""
    run = load("run")
    results = tmp_path / "results"
    results.mkdir()
    monkeypatch.setattr(run, "HERE", tmp_path)
    monkeypatch.setattr(run, "REPO", tmp_path)
    monkeypatch.setattr(run, "RESULTS", results)
    monkeypatch.setattr(run, "README", tmp_path / "README.md")
    monkeypatch.setattr(run, "wait_until_quiet", lambda max_wait: 0.0)
    (results / "alpha.json").write_text(json.dumps(figure(2.0, HOST_A, "2026-10-01T09:30:00+00:00")))
    (results / "beta.json").write_text(json.dumps(figure(3.0, HOST_B, "2026-11-02T18:05:00+01:00")))
    return run, results


def test_each_file_shows_its_own_host_and_date(bench):
    run, results = bench
    text = run.render(run.collect(results))
    a, b = section(text, "alpha"), section(text, "beta")
    assert "Measured 2026-10-01 09:30 UTC on Intel Xeon w9-3495X (112 logical CPUs)" in a
    assert "CPU kernel path `amx_bf16`" in a and "AMD Ryzen" not in a
    assert "Measured 2026-11-02 18:05 UTC+0100 on AMD Ryzen AI Max+ 395 (32 logical CPUs)" in b
    assert "Intel" not in b
    head = text.split("### alpha", 1)[0]
    assert "| `alpha` | 2026-10-01 09:30 UTC | Intel Xeon w9-3495X (112 CPUs) |" in head
    assert "| `beta` | 2026-11-02 18:05 UTC+0100 | AMD Ryzen AI Max+ 395 (32 CPUs) |" in head
    # A file that records neither says so instead of borrowing a file date.
    (results / "gamma.json").write_text(json.dumps({"figure": "old", "speed": 1.5}))
    g = section(run.render(run.collect(results)), "gamma")
    assert "Measured date not recorded on a host the file does not record." in g


def test_a_partial_run_keeps_the_other_figures_hosts_and_dates(bench, monkeypatch):
    run, results = bench
    common = load("_common")
    monkeypatch.setattr(common, "RESULTS", results)
    # The benchmark "beta" runs again (on this machine): it saves through _common.save_results.
    (run.HERE / "beta.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(BENCH)!r})\n"
        "import _common\n"
        f"_common.RESULTS = __import__('pathlib').Path({str(results)!r})\n"
        "_common.save_results('beta', {'figure': 'fake', 'table': [{'figure': 'fake rate', 'value': 4.0, "
        "'unit': 'GB/s', 'peer': 'copy', 'peer_value': 1.0, 'ratio': 4.0, 'ratio_label': 'ours / peer'}]})\n")
    (run.HERE / "alpha.py").write_text("raise SystemExit('alpha must not run')\n")
    run.write_readme(run.render(run.collect(results)))  # the table before the partial run
    assert run.main(["run.py", "beta"]) == 0
    text = run.README.read_text()
    a, b = section(text, "alpha"), section(text, "beta")
    assert "Measured 2026-10-01 09:30 UTC on Intel Xeon w9-3495X (112 logical CPUs)" in a
    assert "| fake rate | 2.000 GB/s |" in a
    here = common.host_description()
    beta = json.loads((results / "beta.json").read_text())
    assert beta["host"] == here and beta["runner"]["exit"] == 0
    assert f"on {here['cpu']} ({here['cpus']} logical CPUs)" in b and "2026-11-02" not in b
    assert "| fake rate | 4.000 GB/s |" in b
    assert f"| `alpha` | 2026-10-01 09:30 UTC | Intel Xeon w9-3495X (112 CPUs) | — | — | — |" in text


def test_the_host_line_names_its_isa_and_thread_count(bench):
    run, results = bench
    host = {**HOST_A, "isa": {"avx2": True, "fma": True, "avx512f": True, "avx512_bf16": True, "amx_tile": False,
                              "amx_bf16": False}, "threads": 16}
    (results / "alpha.json").write_text(json.dumps(figure(2.0, host, "2026-10-01T09:30:00+00:00")))
    a = section(run.render(run.collect(results)), "alpha")
    assert "ISA: avx2, fma, avx512f, avx512_bf16; 16 kernel thread(s)" in a
    assert "amx" not in a.split("ISA:", 1)[1].split(".", 1)[0]
    # What this host records: each flag as /proc/cpuinfo lists it.
    common = load("_common")
    here = common.host_description()
    assert set(here["isa"]) == set(common.ISA_FLAGS)
    flags = common.cpu_flags()
    if flags:
        assert all(here["isa"][f] == (f in flags) for f in common.ISA_FLAGS)
    assert here["threads"] >= 1


def test_thread_scaling_table():
    ts = load("thread_scaling")
    assert ts.thread_counts(2) == [1, 2]
    assert ts.thread_counts(12) == [1, 2, 4, 8]
    assert ts.thread_counts(64) == [1, 2, 4, 8, 16]
    assert ts.thread_counts(0) == [1]
    runs = {str(t): {"threads": t, "tiny_add_us": {"ours": 1.0 + t, "numpy": 0.25},
                     "gemm_256_gflops": {"ours": 10.0 * t, "numpy": 20.0 * t},
                     "gemm_1024_gflops": {"ours": 30.0 * t * 0.9, "numpy": 25.0 * t}} for t in (1, 2, 4)}
    rows = {r["figure"]: r for r in ts.table({"runs": runs})}
    tiny = rows["tiny hx.add(out=) per call, 2 thread(s) (target ≤ 2 µs, ≤ 5x np.add)"]
    assert tiny["value"] == 3.0 and tiny["ratio"] == 12.0
    g = rows["pair-order bf16 matmul n = 1,024, 4 thread(s)"]
    assert g["value"] == 108.0 and g["peer_value"] == 100.0 and abs(g["ratio"] - 1.08) < 1e-12
    s = rows["matmul n = 1,024 scaling 1 → 4 threads (ideal 4x)"]
    assert abs(s["value"] - 4.0) < 1e-12 and s["peer_value"] == 4.0 and abs(s["ratio"] - 1.0) < 1e-12
    assert "matmul n = 256 scaling 1 → 2 threads (ideal 2x)" in rows
    assert len(rows) == 3 + 2 * 3 + 2 * 2


def test_the_committed_results_render_and_every_row_has_a_figure_and_a_value():
    # `python bench/run.py --table-only` over the files in bench/results/ (it once stopped with a
    # KeyError on the accuracy files, whose rows have their own layout).
    run = load("run")
    figures = run.collect()
    assert figures, "no result files found"
    for name, (_, rows) in figures.items():
        for r in rows:
            assert "figure" in r and "value" in r, (name, r)
    text = run.render(figures)
    for name in figures:
        assert f"### {name}" in text
