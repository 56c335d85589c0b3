"""GPU preprocessing -> BF16 NPU GEMM -> GPU FP32 epilogue, two concurrent requests.

The Python version of HRX's ``gemm_pipeline`` example (hrx-rs 0.10.1's ``examples/gemm_pipeline.rs``:
https://docs.rs/crate/hrx-rs/0.10.1/source/examples/gemm_pipeline.rs).

Run: python examples/gemm_pipeline.py
     python examples/gemm_pipeline.py <gemm.loom> <symbol> M K N

Arguments. With none, the built-in 8x8 BF16 fixture is used (HRX's ``gemm_bf16.xdna.loom``, export
``gemm``, no configuration): M = K = N = 8. HRX's five-argument form compiles an arbitrary Loom GEMM
with ``gemm.m``/``gemm.k``/``gemm.n``; the emulated build has no Loom compiler, only HRX's fixtures
built in, so it accepts the five-argument form only when it names that fixture: a path whose file
name is ``gemm_bf16.xdna.loom`` (it is not read), the symbol ``gemm`` and M = K = N = 8. The checks
run in HRX's order: M, K and N must be integers ("invalid integer"), each of the element counts
M*K, K*N and M*N must be in 1..=2**30 ("invalid matrix extent"), then anything other than the
fixture is refused. Any other argument count, and every refusal, prints a usage error on stderr and
exits with status 2; ``-h``/``--help`` prints the usage and exits 0.

Kernels. NPU ``gemm`` (lhs A: M*K bf16 READ, rhs B: K*N bf16 READ, output C: M*N float32 WRITE)
loaded on one column with the artifact's contract (4-byte alignment, as HRX's Loom build states). GPU ``euler_bf16`` over the M*K elements of A (``a += 1.0 *
ones``) and ``add_f32`` over the M*N elements of C (``C += 1.0``). HRX passes the element count
and 1.0 as scalar constants; the built-in emulated kernels take ``elements``, ``dt`` and ``delta``
as configuration and have no constant bytes.

Data. Every buffer is ``Shared(npu)``: ``weights`` (B) and ``ones`` (A-sized) hold BF16 1.0 (0x3f80),
written once through ``map_write``. Each of the two request graphs has its own ``a`` and ``C``::

    fill(a, 0)                 compute lane   a = 0.0
    euler_bf16(a, ones)        compute lane   a = 0.0 + 1.0 * 1.0 = 1.0
    npu gemm(a, weights, C)    npu lane       C[i, j] = sum over K of 1.0 * 1.0 = K
    add_f32(C)                 compute lane   C = K + 1.0

so every element of C must equal K + 1.0 exactly (9.0 here), whatever C held before: a region that
did not run leaves 0, K or K + 2, never K + 1. The hazards on ``a`` and ``C`` chain the four
regions; the two graphs share only read-only buffers, so they can run concurrently.

Phases: 5 warm-ups of (first, second); a statistics snapshot; 50 latency runs (first: submit +
wait); 50 pipelined pairs (submit first, submit second, wait both), requests/s = 100 / elapsed.
Then both C buffers are checked ("GEMM pipeline output mismatch"), the snapshot must show the same
``allocations`` and ``imports`` and no ``copied_bytes`` (replays allocate, import and copy
nothing), and ``copied_bytes`` must be 0 overall.

Prints ``M=8 K=8 N=8 p50_ms=X p95_ms=Y pipelined_requests_s=Z`` (nearest-rank percentiles of the
latency runs: the sample at index ceil(n * p / 100) - 1 of the sorted times) and then
``rt.statistics().as_dict()`` as JSON. The times are host-observed times of the CPU emulation.
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

import hrxarray as hx
from _common import UsageError, parse_int, percentile

PROGRAM = "gemm_pipeline.py"
USAGE = f"usage: python {PROGRAM} [<gemm.loom> <symbol> M K N]"
FIXTURE_FILE = "gemm_bf16.xdna.loom"
FIXTURE_SYMBOL = "gemm"
FIXTURE_MNK = (8, 8, 8)
MAX_EXTENT = 1 << 30
WARMUPS = 5
LATENCY_RUNS = 50
PIPELINED_PAIRS = 50


class CheckError(Exception):
    """A failed output or statistics check."""


def parse_args(argv: list[str]) -> tuple[int, int, int]:
    """(M, K, N) from the command line (argv[0] is the program), as HRX's example and the emulated build take them."""
    args = argv[1:]
    if not args:
        return FIXTURE_MNK
    if len(args) != 5:
        raise UsageError(f"expected no arguments or five, got {len(args)}")
    loom, symbol, *extents = args
    dims = []
    for text in extents:
        dims.append(parse_int(text))
    m, k, n = dims
    for count in (m * k, k * n, m * n):
        if not 1 <= count <= MAX_EXTENT:
            raise UsageError(f"invalid matrix extent (M={m} K={k} N={n})")
    if os.path.basename(loom) != FIXTURE_FILE or symbol != FIXTURE_SYMBOL or (m, k, n) != FIXTURE_MNK:
        raise UsageError(
            f"the emulated build has no Loom compiler; it runs only the built-in fixture "
            f"{FIXTURE_FILE} {FIXTURE_SYMBOL} 8 8 8 (got {os.path.basename(loom)} {symbol} {m} {k} {n})"
        )
    return m, k, n


def bf16_ones(count: int) -> np.ndarray:
    """`count` BF16 1.0 values (0x3f80) as little-endian bytes.

    HRX's host side converts by truncation (the float32 bit pattern shifted right by 16), which is
    exact for 1.0; ``hrxarray.numerics.to_bfloat16`` (round to nearest even) gives the same bits but
    imports ml_dtypes, which costs most of a second at start-up.
    """
    bits = np.ones(count, dtype="<f4").view("<u4") >> 16
    return bits.astype("<u2").view(np.uint8)


def check_output(c: hx.Buffer, m: int, n: int, expected: float, request: str) -> None:
    with c.map_read() as view:
        values = np.array(view[: m * n * 4]).view("<f4").reshape(m, n)
    bad = np.argwhere(values != np.float32(expected))
    if bad.size:
        i, j = (int(x) for x in bad[0])
        raise CheckError(
            f"GEMM pipeline output mismatch: {request} request C[{i}][{j}] = {float(values[i, j])!r}, "
            f"expected {expected!r} ({len(bad)} elements wrong)"
        )


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv[1:]):
        print(USAGE)
        return 0
    try:
        m, k, n = parse_args(argv)
    except UsageError as exc:
        print(f"{PROGRAM}: error: {exc}", file=sys.stderr)
        print(USAGE, file=sys.stderr)
        return 2

    rt = hx.Runtime()
    npu = rt.npu()
    artifact = hx.kernels.npu("gemm")
    gemm = npu.load_artifact(artifact, 1, artifact.contract)
    euler = hx.kernels.gpu("euler_bf16", elements=m * k, dt=1.0, runtime=rt)
    epilogue = hx.kernels.gpu("add_f32", elements=m * n, delta=1.0, runtime=rt)

    shared = hx.Shared(npu)
    weights = rt.allocate(k * n * 2, shared)
    ones = rt.allocate(m * k * 2, shared)
    for buf, count in ((weights, k * n), (ones, m * k)):
        with buf.map_write() as view:
            view[:] = bf16_ones(count)

    def request_graph() -> tuple[hx.ExecutableGraph, hx.Buffer]:
        a = rt.allocate(m * k * 2, shared)
        c = rt.allocate(m * n * 4, shared)
        g = rt.graph()
        g.fill(a, 0)
        g.gpu(euler, [a, ones])
        g.npu(gemm, [a, weights, c])
        g.gpu(epilogue, [c])
        return g.prepare(), c

    (first, c_first), (second, c_second) = request_graph(), request_graph()
    expected = float(k) + 1.0

    try:
        for _ in range(WARMUPS):
            done = [first.submit(), second.submit()]
            for completion in done:
                completion.result()
        check_output(c_first, m, n, expected, "first")
        check_output(c_second, m, n, expected, "second")

        before = rt.statistics()
        latencies = []
        for _ in range(LATENCY_RUNS):
            start = time.perf_counter()
            first.submit().result()
            latencies.append((time.perf_counter() - start) * 1e3)

        start = time.perf_counter()
        for _ in range(PIPELINED_PAIRS):
            done = [first.submit(), second.submit()]
            for completion in done:
                completion.result()
        elapsed = time.perf_counter() - start
        after = rt.statistics()

        check_output(c_first, m, n, expected, "first")
        check_output(c_second, m, n, expected, "second")
        for field in ("allocations", "imports", "copied_bytes"):
            if getattr(after, field) != getattr(before, field):
                raise CheckError(
                    f"replay unexpectedly changed {field}: {getattr(before, field)} -> {getattr(after, field)}"
                )
        if after.copied_bytes != 0:
            raise CheckError(f"the pipeline copied {after.copied_bytes} bytes; it must copy none")
    except CheckError as exc:
        print(f"{PROGRAM}: {exc}", file=sys.stderr)
        return 1

    latencies.sort()
    print(
        f"M={m} K={k} N={n} p50_ms={percentile(latencies, 50):.3f} p95_ms={percentile(latencies, 95):.3f} "
        f"pipelined_requests_s={2 * PIPELINED_PAIRS / elapsed:.2f}"
    )
    print(json.dumps(rt.statistics().as_dict(), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
