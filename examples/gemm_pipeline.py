"""GPU preprocessing -> BF16 NPU GEMM -> GPU FP32 epilogue, two concurrent requests.

The Python version of HRX's ``gemm_pipeline`` example (hrx-rs 0.10.1's ``examples/gemm_pipeline.rs``:
https://docs.rs/crate/hrx-rs/0.10.1/source/examples/gemm_pipeline.rs).

Run: python examples/gemm_pipeline.py
     python examples/gemm_pipeline.py <gemm.loom> <symbol> M K N
     e.g. python examples/gemm_pipeline.py src/hrxarray/programs/gemm.loom gemm 8 8 8

Arguments. With none, the built-in 8x8 BF16 fixture is used (``hx.kernels.npu("gemm")``, HRX's
``gemm_bf16.xdna.loom`` export ``gemm`` with no configuration): M = K = N = 8, loaded with the
artifact's own contract. The five-argument form is HRX's: the Loom source in the file is compiled for
the NPU with ``hx.loom.compile(source, symbol, target="xdna", config={"gemm.m": M, "gemm.k": K,
"gemm.n": N})`` (keys the source does not read are ignored, as in HRX) and loaded on one column with
HRX's contract for a row-major GEMM: A = M*K bf16 READ, B = K*N bf16 READ, C = M*N float32 WRITE,
4-byte alignment. hrxarray ships one such source, ``src/hrxarray/programs/gemm.loom`` (also
``hrxarray/programs/gemm.loom`` in the installed package), whose ``gemm`` and ``batched_gemm``
(``gemm.batch`` defaults to 1) are 8x8x8 GEMMs that read none of the three keys; a ``pipeline.def``
that sizes its row-major views from them (A ``view<[%m]x[%k]xbf16>``, B ``view<[%k]x[%n]xbf16>``,
C ``view<[%m]x[%n]xf32>``) runs at any M, K and N.

The checks run in HRX's order: M, K and N must be integers ("invalid integer"), each of the element
counts M*K, K*N and M*N must be in 1..=2**30 ("invalid matrix extent"); then the file must be
readable ("cannot read"), compile ("loom.compile" and Loom's diagnostics, e.g. an unknown symbol),
and its program must have exactly the three bindings of an MxKxN GEMM, A, B and C, of M*K*2, K*N*2 and
M*N*4 bytes ("is not an MxKxN GEMM": HRX would load a source that ignores ``gemm.m``/``gemm.k``/
``gemm.n`` and fail only at the output check; saying so before running is clearer), which HRX's
contract covers (access and alignment: "does not cover binding"). Any other
argument count, and every refusal, prints an error and the usage on stderr and exits with status
2, before a runtime is made; ``-h``/``--help`` prints the usage and exits 0.

Kernels. NPU GEMM (above). GPU ``euler_bf16`` over the M*K elements of A (``a += 1.0 * ones``) and
``add_f32`` over the M*N elements of C (``C += 1.0``). HRX passes the element count and 1.0 as
scalar constants; the built-in emulated kernels take ``elements``, ``dt`` and ``delta`` as
configuration and have no constant bytes.

Data. Every buffer is ``Shared(npu)``: ``weights`` (B) and ``ones`` (A-sized) hold BF16 1.0 (0x3f80),
written once through ``map_write``. Each of the two request graphs has its own ``a`` and ``C``::

    fill(a, 0)                 compute lane   a = 0.0
    euler_bf16(a, ones)        compute lane   a = 0.0 + 1.0 * 1.0 = 1.0
    npu gemm(a, weights, C)    npu lane       C = a @ weights: every element sum over K of 1.0 * 1.0 = K
    add_f32(C)                 compute lane   C = K + 1.0

Each C is checked against a NumPy reference of those four steps (``reference``: float32
``(0 + 1.0 * ones) @ weights + 1.0``, K + 1.0 in every element, exactly), whatever C held before: a
region that did not run leaves 0, K or K + 2, never K + 1. The hazards on ``a`` and ``C`` chain the
four regions; the two graphs share only read-only buffers, so they can run concurrently.

Phases: 5 warm-ups of (first, second); a statistics snapshot; 50 latency runs (first: submit +
wait); 50 pipelined pairs (submit first, submit second, wait both), requests/s = 100 / elapsed.
Then both C buffers are checked ("GEMM pipeline output mismatch", exit status 1; a region that fails
on the device, such as Loom the emulator does not run, also exits 1 with its error), the snapshot must
show the same ``allocations`` and ``imports`` and no ``copied_bytes`` (replays allocate, import and
copy nothing), and ``copied_bytes`` must be 0 overall.

Prints ``M=8 K=8 N=8 p50_ms=X p95_ms=Y pipelined_requests_s=Z`` (nearest-rank percentiles of the
latency runs: the sample at index ceil(n * p / 100) - 1 of the sorted times) and then
``rt.statistics().as_dict()`` as JSON. The times are host-observed times of the CPU emulation.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

import hrxarray as hx
from _common import UsageError, parse_int, percentile

PROGRAM = "gemm_pipeline.py"
USAGE = f"usage: python {PROGRAM} [<gemm.loom> <symbol> M K N]"
FIXTURE_MNK = (8, 8, 8)
MAX_EXTENT = 1 << 30
ALIGNMENT = 4
LAYOUT = "contiguous row-major"
WARMUPS = 5
LATENCY_RUNS = 50
PIPELINED_PAIRS = 50


class CheckError(Exception):
    """A failed output or statistics check."""


class Gemm:
    """The NPU GEMM to run: (M, K, N), and the artifact with the contract to load it under."""

    def __init__(self, m: int, k: int, n: int, artifact: hx.Artifact, contract: hx.KernelContract):
        self.m, self.k, self.n = m, k, n
        self.artifact, self.contract = artifact, contract


def gemm_contract(m: int, k: int, n: int) -> hx.KernelContract:
    """HRX's contract for a row-major GEMM: bf16 A[M,K] and B[K,N] read, float32 C[M,N] written."""
    return hx.KernelContract(
        [
            hx.BindingContract(m * k * 2, ALIGNMENT, hx.Access.READ, LAYOUT),
            hx.BindingContract(k * n * 2, ALIGNMENT, hx.Access.READ, LAYOUT),
            hx.BindingContract(m * n * 4, ALIGNMENT, hx.Access.WRITE, LAYOUT),
        ]
    )


def compile_gemm(path: str, symbol: str, m: int, k: int, n: int) -> Gemm:
    """Compile ``symbol`` of the Loom file ``path`` for the NPU with gemm.m/gemm.k/gemm.n, as HRX's example does."""
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    config = {"gemm.m": m, "gemm.k": k, "gemm.n": n}
    try:
        artifact = hx.loom.compile(source, symbol, target="xdna", config=config)
    except (hx.loom.LoomError, ValueError) as exc:
        raise UsageError(f"loom.compile({path}, {symbol!r}) failed: {exc}") from None
    contract = gemm_contract(m, k, n)
    # HRX would load a program that ignores gemm.m/k/n and fail only at the output check: the
    # program's own footprints say beforehand whether it is this GEMM.
    try:
        needs = [b.bytes for b in artifact.contract.bindings]
    except ValueError as exc:
        raise UsageError(f"{path} @{symbol}: {exc}") from None
    wants = [b.bytes for b in contract.bindings]
    if needs != wants:
        raise UsageError(
            f"{path} @{symbol} with gemm.m={m} gemm.k={k} gemm.n={n} is not an MxKxN GEMM: its "
            f"{len(needs)} bindings take {needs} bytes; bf16 A[M,K], bf16 B[K,N] and float32 C[M,N] "
            f"take {wants}"
        )
    # load_artifact would refuse these too (ContractError), but after the runtime exists.
    for name, need, give in zip("ABC", artifact.contract.bindings, contract.bindings):
        if give.alignment % need.alignment or not covers(give.access, need.access):
            raise UsageError(
                f"{path} @{symbol}: HRX's GEMM contract does not cover binding {name}: the program needs "
                f"{need.access.name} with {need.alignment}-byte alignment, the contract gives "
                f"{give.access.name} with {give.alignment}-byte alignment"
            )
    return Gemm(m, k, n, artifact, contract)


def covers(give: hx.Access, need: hx.Access) -> bool:
    """Whether a binding declared with access ``give`` allows every access in ``need``."""
    return give == need or give == hx.Access.READ_WRITE


def parse_args(argv: list[str]) -> Gemm:
    """The GEMM from the command line (argv[0] is the program), as HRX's example takes it."""
    args = argv[1:]
    if not args:
        artifact = hx.kernels.npu("gemm")
        return Gemm(*FIXTURE_MNK, artifact, artifact.contract)
    if len(args) != 5:
        raise UsageError(f"expected no arguments or five, got {len(args)}")
    path, symbol, *extents = args
    m, k, n = (parse_int(text) for text in extents)
    for count in (m * k, k * n, m * n):
        if not 1 <= count <= MAX_EXTENT:
            raise UsageError(f"invalid matrix extent (M={m} K={k} N={n})")
    return compile_gemm(path, symbol, m, k, n)


def bf16_ones(count: int) -> np.ndarray:
    """`count` BF16 1.0 values (0x3f80) as little-endian bytes.

    HRX's host side converts by truncation (the float32 bit pattern shifted right by 16), which is
    exact for 1.0; ``hrxarray.numerics.to_bfloat16`` (round to nearest even) gives the same bits but
    imports ml_dtypes, which costs most of a second at start-up.
    """
    bits = np.ones(count, dtype="<f4").view("<u4") >> 16
    return bits.astype("<u2").view(np.uint8)


def reference(m: int, k: int, n: int) -> np.ndarray:
    """C of one request by NumPy: a = 0 + 1.0 * ones (euler), C = a @ weights (the GEMM), C += 1.0 (add)."""
    ones = np.ones((m, k), np.float32)
    weights = np.ones((k, n), np.float32)
    a = np.zeros((m, k), np.float32) + np.float32(1.0) * ones
    return (a @ weights + np.float32(1.0)).astype(np.float32)


def check_output(c: hx.Buffer, expected: np.ndarray, request: str) -> None:
    m, n = expected.shape
    with c.map_read() as view:
        values = np.array(view[: m * n * 4]).view("<f4").reshape(m, n)
    bad = np.argwhere(values != expected)
    if bad.size:
        i, j = (int(x) for x in bad[0])
        raise CheckError(
            f"GEMM pipeline output mismatch: {request} request C[{i}][{j}] = {float(values[i, j])!r}, "
            f"expected {float(expected[i, j])!r} ({len(bad)} elements wrong)"
        )


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv[1:]):
        print(USAGE)
        return 0
    try:
        gemm_program = parse_args(argv)
    except UsageError as exc:
        print(f"{PROGRAM}: error: {exc}", file=sys.stderr)
        print(USAGE, file=sys.stderr)
        return 2

    m, k, n = gemm_program.m, gemm_program.k, gemm_program.n
    rt = hx.Runtime()
    npu = rt.npu()
    gemm = npu.load_artifact(gemm_program.artifact, 1, gemm_program.contract)
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
    expected = reference(m, k, n)

    try:
        for _ in range(WARMUPS):
            done = [first.submit(), second.submit()]
            for completion in done:
                completion.result()
        check_output(c_first, expected, "first")
        check_output(c_second, expected, "second")

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

        check_output(c_first, expected, "first")
        check_output(c_second, expected, "second")
        for field in ("allocations", "imports", "copied_bytes"):
            if getattr(after, field) != getattr(before, field):
                raise CheckError(
                    f"replay unexpectedly changed {field}: {getattr(before, field)} -> {getattr(after, field)}"
                )
        if after.copied_bytes != 0:
            raise CheckError(f"the pipeline copied {after.copied_bytes} bytes; it must copy none")
    except (CheckError, hx.HrxError) as exc:
        # A device error (a Loom program the emulator refuses while running) is the run's failure.
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
