"""Submit-to-complete latency of an empty-ish region on the emulated fabric.

Measures `eg.submit().wait()` for a one-region graph (a 64-byte fill on the
compute lane, and a one-access host region) and, for scale, a bare
`threading.Event` round trip between two Python threads (the cheapest
cross-thread hand-off the host can do). Writes bench/results/runtime_latency.json
and, when matplotlib is installed, bench/results/runtime_latency.png.

Run: python bench/runtime_latency.py [runs=2000]
"""

from __future__ import annotations

import json
import platform
import sys
import threading
import time

import numpy as np

import hrxarray as hx
from _common import RESULTS, pyplot, save_results



def percentiles(samples_ns):
    a = np.sort(np.asarray(samples_ns, dtype=np.float64)) / 1000.0
    rank = lambda p: a[max(0, int(np.ceil(p / 100.0 * len(a))) - 1)]  # nearest rank
    return {"p50_us": rank(50), "p95_us": rank(95), "p99_us": rank(99), "min_us": a[0]}


def time_graph(eg, runs):
    for _ in range(50):
        eg.submit().wait(10)
    out = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        c = eg.submit()
        c.wait(10)
        out.append(time.perf_counter_ns() - t0)
    return out


def time_event_round_trip(runs):
    ping, pong = threading.Event(), threading.Event()
    stop = False

    def echo():
        while True:
            ping.wait()
            ping.clear()
            if stop:
                return
            pong.set()

    t = threading.Thread(target=echo)
    t.start()
    out = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        ping.set()
        pong.wait()
        pong.clear()
        out.append(time.perf_counter_ns() - t0)
    stop = True
    ping.set()
    t.join(10)
    return out


def main(argv):
    runs = int(argv[1]) if len(argv) > 1 else 2000
    rt = hx.Runtime()
    buf = rt.allocate(64, hx.HostVisible())
    g = rt.graph()
    g.fill(buf, 1)
    fill = g.prepare()
    g = rt.graph()
    g.host(lambda v: None, [(buf, hx.Access.READ)])
    host = g.prepare()
    results = {
        "figure": "submit-to-complete latency of a one-region graph",
        "runs": runs,
        "machine": {"cpus": __import__("os").cpu_count(), "python": platform.python_version()},
        "hrxarray_fill_64B_compute": percentiles(time_graph(fill, runs)),
        "hrxarray_host_region": percentiles(time_graph(host, runs)),
        "peer_threading_event_round_trip": percentiles(time_event_round_trip(runs)),
    }
    peer = results["peer_threading_event_round_trip"]["p50_us"]
    results["ratio_fill_p50_vs_event_round_trip"] = results["hrxarray_fill_64B_compute"]["p50_us"] / peer
    save_results("runtime_latency", results)
    print(json.dumps(results, indent=2))
    plt = pyplot()
    if plt is None:
        return 0
    names = ["hrxarray_fill_64B_compute", "hrxarray_host_region", "peer_threading_event_round_trip"]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    x = np.arange(len(names))
    ax.bar(x - 0.2, [results[n]["p50_us"] for n in names], 0.4, label="p50")
    ax.bar(x + 0.2, [results[n]["p95_us"] for n in names], 0.4, label="p95")
    ax.set_xticks(x, ["fill 64 B", "host region", "Event round trip"])
    ax.set_ylabel("µs")
    ax.set_title("submit → complete latency (emulated fabric)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(RESULTS / "runtime_latency.png", dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
