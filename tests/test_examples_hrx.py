"""HRX's examples (§5.2-5.4) run in subprocesses with small arguments, and their output is checked.

Each example runs from a temporary directory (never the repository root, whose ``hrxarray/`` folder
has no compiled module) with the interpreter running the tests.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
BAD_BYTES_MSG = "bytes must be a multiple of 4096 in 4096..=67108864"


def run(script, *args, cwd):
    return subprocess.run(
        [sys.executable, str(EXAMPLES / script), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
    )


def ok_lines(out):
    assert out.returncode == 0, f"exit {out.returncode}\nstdout:\n{out.stdout}\nstderr:\n{out.stderr}"
    assert out.stderr == ""
    return out.stdout.splitlines()


def assert_usage_error(out, message):
    assert out.returncode != 0
    assert out.stdout == ""
    assert "usage: python " in out.stderr
    assert message in out.stderr


# --- shared_roundtrip.py (§5.3) ---------------------------------------------------------

ROUNDTRIP = re.compile(r"GPU -> NPU -> GPU: all (\d+) bytes correct, (\d+) executions, (\d+) prepared regions")


@pytest.mark.parametrize("args, nbytes", [((), 1 << 20), ((4096,), 4096), ((12288,), 12288)])
def test_shared_roundtrip(tmp_path, args, nbytes):
    lines = ok_lines(run("shared_roundtrip.py", *args, cwd=tmp_path))
    assert len(lines) == 1
    m = ROUNDTRIP.fullmatch(lines[0])
    assert m, lines
    # fill (compute) -> npu copy (npu) -> copy between host-mapped buffers (compute): three regions
    assert tuple(int(x) for x in m.groups()) == (nbytes, 10, 3)


@pytest.mark.parametrize(
    "args, message",
    [
        (("4097",), BAD_BYTES_MSG),
        (("0",), BAD_BYTES_MSG),
        (("2048",), BAD_BYTES_MSG),
        ((str(64 * 2**20 + 4096),), BAD_BYTES_MSG),
        (("1MiB",), "invalid integer '1MiB'"),
        (("-4096",), "invalid integer '-4096'"),
        (("4096", "4096"), "at most one argument"),
    ],
)
def test_shared_roundtrip_bad_argument(tmp_path, args, message):
    assert_usage_error(run("shared_roundtrip.py", *args, cwd=tmp_path), message)


def test_shared_roundtrip_largest_size_is_accepted_by_the_parser():
    sys.path.insert(0, str(EXAMPLES))
    try:
        import shared_roundtrip
    finally:
        sys.path.remove(str(EXAMPLES))
    assert shared_roundtrip.parse_bytes(["x", str(64 * 2**20)]) == 64 * 2**20
    assert shared_roundtrip.parse_bytes(["x"]) == 2**20
    with pytest.raises(shared_roundtrip.UsageError):
        shared_roundtrip.parse_bytes(["x", "4096.0"])


# --- shared_bench.py (§5.4) -------------------------------------------------------------

BENCH = re.compile(r"bytes=(\d+) p50_us=(\d+\.\d\d) p95_us=(\d+\.\d\d)")


@pytest.mark.parametrize("nbytes", [4096, 65536])
def test_shared_bench(tmp_path, nbytes):
    lines = ok_lines(run("shared_bench.py", nbytes, cwd=tmp_path))
    assert len(lines) == 1
    m = BENCH.fullmatch(lines[0])
    assert m, lines
    assert int(m[1]) == nbytes
    p50, p95 = float(m[2]), float(m[3])
    assert 0 < p50 <= p95


@pytest.mark.parametrize(
    "args, message",
    [(("100",), BAD_BYTES_MSG), (("x",), "invalid integer 'x'"), (("4096", "8192"), "at most one argument")],
)
def test_shared_bench_bad_argument(tmp_path, args, message):
    assert_usage_error(run("shared_bench.py", *args, cwd=tmp_path), message)


def test_nearest_rank_percentile():
    sys.path.insert(0, str(EXAMPLES))
    try:
        import shared_bench
    finally:
        sys.path.remove(str(EXAMPLES))
    samples = [float(x) for x in range(1, 101)]
    assert shared_bench.percentile(samples, 50) == 50.0
    assert shared_bench.percentile(samples, 95) == 95.0
    assert shared_bench.percentile([1.0, 2.0, 3.0], 50) == 2.0
    assert shared_bench.percentile([7.0], 95) == 7.0


# --- gemm_pipeline.py (§5.2) ------------------------------------------------------------

GEMM = re.compile(r"M=(\d+) K=(\d+) N=(\d+) p50_ms=(\d+\.\d+) p95_ms=(\d+\.\d+) pipelined_requests_s=(\d+\.\d+)")


GEMM_LOOM = REPO / "src" / "hrxarray" / "programs" / "gemm.loom"


def check_gemm_output(out, m=8, k=8, n=8):
    lines = ok_lines(out)
    assert len(lines) == 2
    match = GEMM.fullmatch(lines[0])
    assert match, lines
    assert (int(match[1]), int(match[2]), int(match[3])) == (m, k, n)
    p50, p95, rate = float(match[4]), float(match[5]), float(match[6])
    assert 0 < p50 <= p95
    assert rate > 0
    stats = json.loads(lines[1])
    # Six Shared buffers (weights, ones, and a and C per request), all made before the timed phase:
    # 5 warm-up pairs + 50 latency runs + 50 pipelined pairs replayed without allocating or copying.
    assert stats["allocations"] == 6
    assert stats["imports"] == 6
    assert stats["copied_bytes"] == 0
    assert stats["submissions"] == stats["completions"] == 2 * 5 + 50 + 2 * 50
    assert stats["live_bytes"] == k * n * 2 + m * k * 2 + 2 * (m * k * 2 + m * n * 4)


def test_gemm_pipeline_builtin_fixture(tmp_path):
    check_gemm_output(run("gemm_pipeline.py", cwd=tmp_path))


@pytest.mark.parametrize("symbol", ["gemm", "batched_gemm"])
def test_gemm_pipeline_compiles_a_loom_gemm(tmp_path, symbol):
    # The shipped source's 8x8x8 GEMMs, compiled from the file with gemm.m/gemm.k/gemm.n as HRX does;
    # the example compares C with its NumPy reference before printing.
    check_gemm_output(run("gemm_pipeline.py", GEMM_LOOM, symbol, 8, 8, 8, cwd=tmp_path))


def test_gemm_pipeline_reads_the_file_it_is_given(tmp_path):
    # Not the built-in fixture under another name: a copy whose GEMM is renamed runs under the new name.
    src = GEMM_LOOM.read_text().replace("@gemm()", "@my_gemm()")
    (tmp_path / "mine.loom").write_text(src)
    check_gemm_output(run("gemm_pipeline.py", "mine.loom", "my_gemm", 8, 8, 8, cwd=tmp_path))
    assert_usage_error(run("gemm_pipeline.py", "mine.loom", "gemm", 8, 8, 8, cwd=tmp_path), "loom.compile(")


@pytest.mark.parametrize(
    "args, message",
    [
        (("gemm.loom",), "expected no arguments or five, got 1"),
        (("gemm.loom", "gemm", 8, 8), "expected no arguments or five, got 4"),
        ((GEMM_LOOM, "gemm", 8, "eight", 8), "invalid integer 'eight'"),
        ((GEMM_LOOM, "gemm", 0, 8, 8), "invalid matrix extent"),
        ((GEMM_LOOM, "gemm", 2**16, 2**15, 1), "invalid matrix extent"),
        (("missing.loom", "gemm", 8, 8, 8), "cannot read missing.loom"),
        ((GEMM_LOOM, "matmul", 8, 8, 8), "loom.compile("),
        ((GEMM_LOOM, "matmul", 8, 8, 8), "matmul"),
        # The shipped source's GEMMs are 8x8x8 whatever gemm.m/k/n say: another shape is refused by name.
        ((GEMM_LOOM, "gemm", 16, 8, 8), "is not an MxKxN GEMM"),
        ((GEMM_LOOM, "gemm", 16, 32, 24), "take [1024, 1536, 1536]"),
        ((GEMM_LOOM, "gemm", 4, 4, 4), "its 3 bindings take [128, 128, 256] bytes"),
        ((GEMM_LOOM.parent / "copy.loom", "copy", 8, 8, 8), "its 2 bindings take [4096, 4096] bytes"),
    ],
)
def test_gemm_pipeline_bad_arguments(tmp_path, args, message):
    assert_usage_error(run("gemm_pipeline.py", *args, cwd=tmp_path), message)


# Our own general GEMM (the shipped programs are 8x8x8): C[M,N] = A[M,K] @ B[K,N], bf16 products
# summed in float32 along K, with M, K and N from gemm.m, gemm.k and gemm.n, in plain loops.
# The pieces of the two GEMM sources below: their targets and configuration, and the loops
# that compute C from the views %av, %bv and %cv.
_GEMM_HEADER = """\
aie2p.target<array> @npu_array
aie2p.target<core> @npu_core
config.decl @gemm.m : %m: index where [range(%m, 1, 4096)]
config.decl @gemm.k : %k: index where [range(%k, 1, 4096)]
config.decl @gemm.n : %n: index where [range(%n, 1, 4096)]
"""
_GEMM_LOOPS = """\
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %zero = scalar.constant 0.0 : f32
  scf.for %i = [%c0 to %m step %c1] {
    scf.for %j = [%c0 to %n step %c1] {
      %sum = scf.for %p = [%c0 to %k step %c1](%acc = %zero : f32) -> (f32) {
        %x = view.load %av[%i, %p] : view<[%m]x[%k]xbf16> -> bf16
        %y = view.load %bv[%p, %j] : view<[%k]x[%n]xbf16> -> bf16
        %xf = scalar.extf %x : bf16 to f32
        %yf = scalar.extf %y : bf16 to f32
        %xy = scalar.mulf %xf, %yf : f32
        %next = scalar.addf %acc, %xy : f32
        scf.yield %next : f32
      }
      view.store %sum, %cv[%i, %j] : f32, view<[%m]x[%n]xf32>
    }
  }
"""

GEMM_MKN = _GEMM_HEADER + """\

pipeline.def<kernel> public retain target(@npu_array) @gemm_mkn() launch(%a: buffer, %b: buffer, %c: buffer) {
  %m = config.get @gemm.m : index
  %k = config.get @gemm.k : index
  %n = config.get @gemm.n : index
  %origin = index.constant 0 : offset
  %a_words, %b_words, %c_words = buffer.assume.alignment %a, %b, %c {minimum_alignment = 4} : buffer, buffer, buffer
  %av = buffer.view %a_words[%origin] : buffer -> view<[%m]x[%k]xbf16>
  %bv = buffer.view %b_words[%origin] : buffer -> view<[%k]x[%n]xbf16>
  %cv = buffer.view %c_words[%origin] : buffer -> view<[%m]x[%n]xf32>
""" + _GEMM_LOOPS + """\
  pipeline.return
}

"""


@pytest.mark.parametrize("m, k, n", [(16, 24, 40), (3, 5, 7), (8, 8, 8)])
def test_gemm_pipeline_runs_a_loom_gemm_of_any_shape(tmp_path, m, k, n):
    (tmp_path / "gemm_mkn.loom").write_text(GEMM_MKN)
    check_gemm_output(run("gemm_pipeline.py", "gemm_mkn.loom", "gemm_mkn", m, k, n, cwd=tmp_path), m, k, n)


def test_gemm_pipeline_catches_a_wrong_gemm(tmp_path):
    # The output check compares C with NumPy: a GEMM that sums one product too few is caught.
    wrong = GEMM_MKN.replace("scf.for %p = [%c0 to %k step %c1]", "scf.for %p = [%c1 to %k step %c1]")
    assert wrong != GEMM_MKN
    (tmp_path / "wrong.loom").write_text(wrong)
    out = run("gemm_pipeline.py", "wrong.loom", "gemm_mkn", 4, 6, 4, cwd=tmp_path)
    assert out.returncode == 1 and out.stdout == ""
    assert "GEMM pipeline output mismatch: first request C[0][0] = 6.0, expected 7.0 (16 elements wrong)" in out.stderr


# A general MxKxN GEMM whose pipeline root hands its buffers to a call: its footprints claim
# READ_WRITE on A and B, which HRX's GEMM contract (A and B READ) does not cover.
GEMM_VIA_CALL = _GEMM_HEADER + """\

pipeline.def<kernel> public retain target(@npu_array) @gemm_mkn() launch(%a: buffer, %b: buffer, %c: buffer) {
  %m = config.get @gemm.m : index
  %k = config.get @gemm.k : index
  %n = config.get @gemm.n : index
  %lanes = index.constant 1 : index
  %origin = index.constant 0 : offset
  %a_words, %b_words, %c_words = buffer.assume.alignment %a, %b, %c {minimum_alignment = 4} : buffer, buffer, buffer
  %av0 = buffer.view %a_words[%origin] : buffer -> view<[%m]x[%k]xbf16>
  %bv0 = buffer.view %b_words[%origin] : buffer -> view<[%k]x[%n]xbf16>
  %cv0 = buffer.view %c_words[%origin] : buffer -> view<[%m]x[%n]xf32>
  func.call @multiply(%a_words, %b_words, %c_words) : (buffer, buffer, buffer) -> ()
  pipeline.return
}

func.def target(@npu_core) @multiply(%a: buffer, %b: buffer, %c: buffer) {
  %m = config.get @gemm.m : index
  %k = config.get @gemm.k : index
  %n = config.get @gemm.n : index
  %origin = index.constant 0 : offset
  %av = buffer.view %a[%origin] : buffer -> view<[%m]x[%k]xbf16>
  %bv = buffer.view %b[%origin] : buffer -> view<[%k]x[%n]xbf16>
  %cv = buffer.view %c[%origin] : buffer -> view<[%m]x[%n]xf32>
""" + _GEMM_LOOPS + """\
  func.return
}
"""


def test_gemm_pipeline_refuses_a_program_its_contract_does_not_cover(tmp_path):
    (tmp_path / "via_call.loom").write_text(GEMM_VIA_CALL)
    out = run("gemm_pipeline.py", "via_call.loom", "gemm_mkn", 16, 24, 40, cwd=tmp_path)
    assert_usage_error(out, "HRX's GEMM contract does not cover binding A: the program needs READ_WRITE")
    assert "Traceback" not in out.stderr


def test_gemm_pipeline_refuses_bad_loom_source(tmp_path):
    (tmp_path / "broken.loom").write_text("pipeline.def @gemm( {\n")
    assert_usage_error(run("gemm_pipeline.py", "broken.loom", "gemm", 8, 8, 8, cwd=tmp_path), "loom.compile(")


# --- help -------------------------------------------------------------------------------


@pytest.mark.parametrize("script", ["shared_roundtrip.py", "shared_bench.py", "gemm_pipeline.py", "npu_matmul.py"])
def test_help_prints_usage_and_succeeds(tmp_path, script):
    out = run(script, "--help", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"usage: python {script}")


def test_npu_matmul_example(tmp_path):
    lines = ok_lines(run("npu_matmul.py", 16, 32, 8, cwd=tmp_path))
    assert lines[0].startswith("M=16 K=32 N=8: npu matmul matches numerics (bf16 and bfp16), epilogue matches NumPy, "
                               "zero-copy hand-off to numpy")
    lanes = lines[1].split()[1:]
    assert lanes.count("npu") == 2 and lanes.count("compute") == 3


@pytest.mark.parametrize("args, message", [
    (("8", "12"), "k must be a multiple of 8"), (("0",), "must be positive"), (("1", "2", "3", "4"), "at most three"),
    (("x",), "invalid integer"), (("4096", "8192"), "at most 16777216"),
])
def test_npu_matmul_bad_arguments(tmp_path, args, message):
    assert_usage_error(run("npu_matmul.py", *args, cwd=tmp_path), message)
