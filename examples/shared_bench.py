"""Warm end-to-end latency of an NPU passthrough in a coordinated graph.

The Python version of HRX's ``shared_bench`` example (hrx-rs 0.10.1's ``examples/shared_bench.rs``:
https://docs.rs/crate/hrx-rs/0.10.1/source/examples/shared_bench.rs).

Run: python examples/shared_bench.py [bytes=1048576]

Arguments as in ``shared_roundtrip.py``: at most one; ``bytes`` a multiple of 4096 in
4096..=67108864; a bad argument prints a usage error on stderr and exits with status 2.

Two ``Shared(npu)`` buffers ``a`` and ``c`` and one prepared graph: ``fill(a, 0x35)`` on the GPU's
compute lane, then the NPU ``copy`` program ``a -> c`` on the npu lane. Five warm-up executions,
then 100 timed ones (each ``submit()`` + ``result()``, wall time with ``time.perf_counter``); then
every byte of ``c`` must be 0x35 ("incorrect benchmark output" otherwise). ``c`` starts zero-filled,
so a graph that never ran the NPU program fails the check.

Prints ``bytes=N p50_us=X p95_us=Y``: nearest-rank percentiles (the sample at index
ceil(n * p / 100) - 1 of the sorted times), in microseconds with two decimals. On the emulated
fabric these are host-observed times of CPU emulation, not NPU timings.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import hrxarray as hx
from _common import UsageError, load_passthrough, parse_bytes, percentile

PROGRAM = "shared_bench.py"
USAGE = f"usage: python {PROGRAM} [bytes=1048576]"
FILL = 0x35
WARMUPS = 5
RUNS = 100


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv[1:]):
        print(USAGE)
        return 0
    try:
        nbytes = parse_bytes(argv)
    except UsageError as exc:
        print(f"{PROGRAM}: error: {exc}", file=sys.stderr)
        print(USAGE, file=sys.stderr)
        return 2

    rt = hx.Runtime()
    npu = rt.npu()
    passthrough = load_passthrough(npu, nbytes)

    a = rt.allocate(nbytes, hx.Shared(npu))
    c = rt.allocate(nbytes, hx.Shared(npu))
    g = rt.graph()
    g.fill(a, FILL)
    g.npu(passthrough, [a, c])
    graph = g.prepare()

    for _ in range(WARMUPS):
        graph.submit().result()
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        graph.submit().result()
        samples.append((time.perf_counter() - start) * 1e6)

    with c.map_read() as view:
        bad = np.flatnonzero(view != FILL)
        if bad.size:
            first = int(bad[0])
            print(
                f"incorrect benchmark output: byte {first} is 0x{int(view[first]):02x}, "
                f"expected 0x{FILL:02x} ({bad.size} bytes wrong)",
                file=sys.stderr,
            )
            return 1

    samples.sort()
    print(f"bytes={nbytes} p50_us={percentile(samples, 50):.2f} p95_us={percentile(samples, 95):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
