"""Submission throughput: the cost of `eg.submit()` and of draining many pending replays.

Submits a prepared one-region graph (a 64-byte fill) N times without waiting,
then waits for all; the peer is `concurrent.futures.ThreadPoolExecutor.submit`
of a no-op on one worker thread, the standard library's own queue-and-complete
path, measured in the same run. Writes bench/results/submit_throughput.json
(+ .png when matplotlib is installed).

Run: python bench/submit_throughput.py [submissions=20000]
"""

from __future__ import annotations

import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor, wait

import hrxarray as hx
from _common import RESULTS, pyplot, save_results



def hrx_round(n):
    rt = hx.Runtime(max_submissions=n + 1, graph_slots=n + 1)
    buf = rt.allocate(64, hx.HostVisible())
    g = rt.graph()
    g.fill(buf, 1)
    eg = g.prepare()
    for _ in range(100):
        eg.submit().wait(10)
    t0 = time.perf_counter()
    done = [eg.submit() for _ in range(n)]
    t1 = time.perf_counter()
    assert all(c.wait(60) for c in done)
    t2 = time.perf_counter()
    return (t1 - t0) / n * 1e6, (t2 - t1) * 1e3, (t2 - t0) / n * 1e6


def executor_round(n):
    with ThreadPoolExecutor(max_workers=1) as ex:
        for _ in range(100):
            ex.submit(int).result()
        t0 = time.perf_counter()
        futures = [ex.submit(int) for _ in range(n)]
        t1 = time.perf_counter()
        wait(futures, timeout=60)
        t2 = time.perf_counter()
    return (t1 - t0) / n * 1e6, (t2 - t1) * 1e3, (t2 - t0) / n * 1e6


def main(argv):
    n = int(argv[1]) if len(argv) > 1 else 20000
    runs = {"hrxarray": [hrx_round(n) for _ in range(3)], "ThreadPoolExecutor": [executor_round(n) for _ in range(3)]}
    res = {"figure": "submission throughput (submit without waiting, then drain)", "submissions": n}
    for name, rounds in runs.items():
        best = min(rounds, key=lambda r: r[2])
        res[name] = {"submit_us": best[0], "drain_after_submit_ms": best[1], "end_to_end_us_per_submission": best[2]}
    res["ratio_submit_vs_executor"] = res["hrxarray"]["submit_us"] / res["ThreadPoolExecutor"]["submit_us"]
    res["ratio_end_to_end_vs_executor"] = (
        res["hrxarray"]["end_to_end_us_per_submission"] / res["ThreadPoolExecutor"]["end_to_end_us_per_submission"]
    )
    save_results("submit_throughput", res)
    print(json.dumps(res, indent=2))
    plt = pyplot()
    if plt is None:
        return 0
    fig, ax = plt.subplots(figsize=(6, 3.5))
    names = ["hrxarray", "ThreadPoolExecutor"]
    ax.bar([f"{x}\nsubmit" for x in names], [res[x]["submit_us"] for x in names])
    ax.bar([f"{x}\nend to end" for x in names], [res[x]["end_to_end_us_per_submission"] for x in names])
    ax.set_ylabel("µs per submission")
    ax.set_title(f"{n} submissions of a one-region graph")
    fig.tight_layout()
    fig.savefig(RESULTS / "submit_throughput.png", dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
