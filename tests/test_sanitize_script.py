"""ext/check/sanitize.sh's verdict: a report that reached only stderr, or a run a sanitizer halted, fails it.

Note [Reports that bypass the log files] in the script says why: GCC's UBSan,
linked beside ASan, ignores log_path and writes to stderr, and the process it
halts prints no pytest summary. The script's `report <dir> <status>` mode is
the check its runs end with; these tests give it what such runs leave behind,
the first from a real halted process.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "ext" / "check" / "sanitize.sh"
HALTED = 86  # the script's exit status for a halting sanitizer

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="sanitize.sh is a bash script")


def plain_env():
    """This environment without the sanitizer runtime a sanitize.sh run preloads into everything.

    Under that run the preload would reach bash, awk and g++ too, which are not
    built for it (mawk reads past a buffer under it, for one).
    """
    env = dict(os.environ)
    for name in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS", "PYTHONMALLOC"):
        env.pop(name, None)
    return env


def report(run_dir, status):
    """Run the script's check on a finished run's folder."""
    return subprocess.run(["bash", str(SCRIPT), "report", str(run_dir), str(status)],
                          capture_output=True, text=True, timeout=60, env=plain_env())


def runtime(name):
    """The path of one of g++'s runtime libraries, or None."""
    if shutil.which("g++") is None:
        return None
    out = subprocess.run(["g++", f"-print-file-name={name}"], capture_output=True, text=True,
                         env=plain_env()).stdout.strip()
    return out if out != name and os.path.exists(out) else None


def test_report_of_a_process_ubsan_halted(tmp_path):
    """A real UBSan halt: the report is on stderr only, the status is HALTED, and the script fails naming both."""
    asan, ubsan, stdcxx = runtime("libasan.so"), runtime("libubsan.so"), runtime("libstdc++.so")
    if not (asan and ubsan and stdcxx):
        pytest.skip("g++ with its sanitizer runtimes is needed to build the halting library")
    src = tmp_path / "ub.cpp"
    src.write_text("#include <climits>\nextern \"C\" int overflow(int x) { int y = INT_MAX; return y + x; }\n")
    lib = tmp_path / "libub.so"
    subprocess.run(["g++", "-shared", "-fPIC", "-O1", "-fsanitize=address,undefined", str(src), "-o", str(lib)],
                   check=True, timeout=120, env=plain_env())
    run_dir = tmp_path / "sanitize-asan"
    logs = run_dir / "logs"
    logs.mkdir(parents=True)
    env = dict(plain_env(), LD_PRELOAD=f"{asan} {stdcxx}",
               ASAN_OPTIONS=f"exitcode={HALTED}:detect_leaks=0:log_path={logs}/asan",
               UBSAN_OPTIONS=f"exitcode={HALTED}:print_stacktrace=1:halt_on_error=1:log_path={logs}/ubsan")
    code = textwrap.dedent(f"""
        import ctypes
        print(ctypes.CDLL({str(lib)!r}).overflow(5))
    """)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    # The premise of the Note: nothing in the log folder, the report on stderr, the status ours.
    assert proc.returncode == HALTED, proc.stderr
    assert "runtime error: signed integer overflow" in proc.stderr
    assert list(logs.iterdir()) == []
    (run_dir / "pytest.out").write_text(proc.stdout + proc.stderr)

    verdict = report(run_dir, proc.returncode)
    assert verdict.returncode == 1
    assert "runtime error: signed integer overflow" in verdict.stdout
    assert f"a sanitizer ended pytest: exit status {HALTED}" in verdict.stderr
    assert f"reports: {logs}/" in verdict.stderr


def test_report_found_in_the_output_of_a_passing_run(tmp_path):
    """A report that only a test's captured output carried fails a run whose tests passed."""
    run_dir = tmp_path / "sanitize-asan"
    run_dir.mkdir()
    (run_dir / "pytest.out").write_text(
        "....\n"
        "ext/core/x.cpp:3:7: runtime error: shift exponent 70 is too large\n"
        "    #0 0x1 in f ext/core/x.cpp:3\n"
        "\n"
        "4 passed in 1.00s\n"
    )
    verdict = report(run_dir, 0)
    assert verdict.returncode == 1
    kept = (run_dir / "logs" / "output-reports").read_text()
    assert kept.splitlines() == ["ext/core/x.cpp:3:7: runtime error: shift exponent 70 is too large",
                                 "    #0 0x1 in f ext/core/x.cpp:3", ""]
    assert "FAILED (pytest status 0;" in verdict.stderr


@pytest.mark.parametrize("status", [0, 1, HALTED])
def test_report_of_a_run_without_reports(tmp_path, status):
    """No report anywhere: clean exactly when pytest passed; a halted run fails though it left no report."""
    run_dir = tmp_path / "sanitize-tsan"
    run_dir.mkdir()
    (run_dir / "pytest.out").write_text("....\n4 passed in 1.00s\n")
    verdict = report(run_dir, status)
    assert verdict.returncode == (0 if status == 0 else 1)
    assert ("clean" in verdict.stdout) == (status == 0)
    assert ("a sanitizer ended pytest" in verdict.stderr) == (status == HALTED)
    assert not (run_dir / "logs" / "output-reports").exists()
