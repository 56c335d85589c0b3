"""Scale-out on dask.distributed: a bf16 matmul of DeviceArray blocks on one and two workers.

The workload: ``hrxarray.dask.matmul(x, y).sum()`` for n x n bf16 operands in b-blocks (default 4,096
in 1,024-blocks: 64 block products, 137 GFLOP), the inputs made on the workers by the "hrx" backend and
persisted before timing. Workers come from ``hrxarray.dask.local_cluster``: one process per device,
one thread, ``HRXARRAY_NUM_THREADS=1`` (one core each), loopback TCP. Each configuration gets a fresh
cluster; its figure is the median of R timed runs after one warm-up.

Measured in the same run:

- the speed-up of two workers over one, and the same for NumPy float32 blocks (the peer: Dask's own
  path on the same cluster shape; the issue's target is two workers >= 1.5x one);
- the per-task overhead against block size 128-1,024 (n = 1,024, two workers): the wall time minus
  the time the block products take in this process (one thread), per task and worker;
- the bytes the workers sent each other per GFLOP (distributed's ``transfer_outgoing_bytes_total``);
- the time to serialise and deserialise one 8 MiB block (2,048 x 2,048 bf16) through distributed's
  ``dask`` serialiser, against a NumPy block of the same size (target <= 2x);
- the 4,096^2 error check: relative error of the bf16 result against float64 (target < 2^-7).

What it cannot show (two cores, one L3, loopback): a gain across machines. Two worker processes share
this machine's two cores; the figures measure Dask's overhead and the shape of scaling.

Writes bench/results/dask_scaleout.json (+ dask_scaleout.png when matplotlib is present).

Run: python bench/dask_scaleout.py [n=4096] [block=1024] [repeats=3]

``python bench/dask_scaleout.py overhead [repeats=7]`` measures only the per-task overhead, against
Dask on NumPy blocks in the same run, and writes bench/results/dask_overhead.json: one two-worker
cluster holds both kinds of input and the timed computations alternate between them, so load on the
host falls on both alike. Two graphs: a tiny elementwise one (``((x + 1) * 2).sum()``, 2,048² float32
in 64-blocks: 1,024 blocks, the compute negligible), whose per-task figure is the wall time per task
and worker; and the matmul of the figure above at n = 1,024 in 128- and 256-blocks (bf16 through
``hrxarray.dask.matmul``; float32 and Dask's own @ for NumPy), less the block products' time.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

from _common import RESULTS, pyplot, save_results, timings_s

os.environ.setdefault("HRXARRAY_NUM_THREADS", "1")  # this process's own block timings: one core, as a worker
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # NumPy's too (the Nanny caps the workers' OpenBLAS so)

import numpy as np  # noqa: E402


def _cluster_run(workers: int, n: int, block: int, repeats: int, kind: str, check: bool = False) -> dict:
    import dask
    import dask.array as da
    import ml_dtypes
    from distributed import Client, wait

    import hrxarray as hx
    import hrxarray.dask as hd

    bf16 = np.dtype(ml_dtypes.bfloat16)
    with hd.local_cluster(npu=workers) as cluster, Client(cluster, timeout="120s") as client:
        backend = "hrx" if kind == "hrx" else "numpy"
        with dask.config.set({"array.backend": backend}):
            rs = da.random.RandomState(0)
            x = rs.standard_normal((n, n), chunks=block)
            y = rs.standard_normal((n, n), chunks=block)
        x, y = (x.astype(bf16), y.astype(bf16)) if kind == "hrx" else (x.astype(np.float32), y.astype(np.float32))
        x, y = client.persist([x, y])
        wait([x, y], timeout=600)
        total = hd.matmul(x, y).sum(dtype=np.float32) if kind == "hrx" else (x @ y).sum()
        client.compute(total).result(timeout=1200)  # warm-up

        def sent() -> int:
            return sum(client.run(lambda dask_worker: dask_worker.transfer_outgoing_bytes_total).values())

        before = sent()
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            r = client.compute(total).result(timeout=1200)
            times.append(time.perf_counter() - t0)
        moved = (sent() - before) / repeats
        out = {"workers": workers, "kind": kind, "n": n, "block": block, "tasks": len(total.__dask_graph__()),
               "seconds": times, "median_s": statistics.median(times),
               "gflop_per_s": 2 * n**3 / statistics.median(times) / 1e9,
               "bytes_moved_per_run": moved, "bytes_per_gflop": moved / (2 * n**3 / 1e9),
               "result_type": type(r).__name__}
        if check:
            z = hd.matmul(x, y)
            c, a, b = client.compute([z, x, y], sync=True)
            want = hx.to_numpy(a).astype(np.float64) @ hx.to_numpy(b).astype(np.float64)
            got = hx.to_numpy(c).astype(np.float64)
            out["relative_error"] = float(np.linalg.norm(got - want) / np.linalg.norm(want))
            out["result_dtype"] = str(c.dtype)
    return out


def _block_product_s(block: int, repeats: int) -> float:
    import ml_dtypes

    import hrxarray as hx

    rng = np.random.default_rng(0)
    a = hx.asarray(rng.standard_normal((block, block)).astype(ml_dtypes.bfloat16))
    b = hx.asarray(rng.standard_normal((block, block)).astype(ml_dtypes.bfloat16))

    return statistics.median(timings_s(lambda: hx.matmul(a, b).block_until_ready(), repeats, warmup=1))


def _serialise_s(repeats: int) -> dict:
    import ml_dtypes
    from distributed.protocol import deserialize, serialize

    import hrxarray as hx

    host = np.random.default_rng(0).standard_normal((2048, 2048)).astype(ml_dtypes.bfloat16)  # 8 MiB
    dev = hx.asarray(host)

    def roundtrip(x: object, serializers: tuple) -> float:
        ts = []
        for _ in range(repeats + 1):
            t0 = time.perf_counter()
            h, f = serialize(x, serializers=serializers, on_error="raise")
            deserialize(h, f)
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts[1:])

    ours = roundtrip(dev, ("dask",))
    peer = roundtrip(host, ("dask",))
    # NumPy's frames are views of the array (no copy at either end); a DeviceArray is copied out under a
    # read guard and into the receiver's device memory (Note [Serialising device arrays]). The copying peer:
    # NumPy with one copy out and one copy in, the same two copies.
    ts = []
    for _ in range(repeats + 1):
        t0 = time.perf_counter()
        h, f = serialize(host.copy(), serializers=("dask",), on_error="raise")
        deserialize(h, f).copy()
        ts.append(time.perf_counter() - t0)
    copying = statistics.median(ts[1:])
    return {"bytes": host.nbytes, "device_array_s": ours, "numpy_s": peer, "ratio": ours / peer,
            "numpy_two_copies_s": copying, "ratio_to_two_copies": ours / copying, "target": "<= 2x NumPy"}


def _overhead(repeats: int) -> int:
    """Per-task overhead of DeviceArray blocks and of NumPy blocks, alternating on one cluster."""
    import dask
    import dask.array as da
    import ml_dtypes
    from distributed import Client, wait

    import hrxarray.dask as hd

    bf16 = np.dtype(ml_dtypes.bfloat16)
    graphs: dict = {}
    with hd.local_cluster(npu=2) as cluster, Client(cluster, timeout="120s") as client:
        for kind in ("hrx", "numpy"):
            with dask.config.set({"array.backend": kind}):
                rs = da.random.RandomState(0)
                e = rs.standard_normal((2048, 2048), chunks=64).astype(np.float32)
                mats = {b: (rs.standard_normal((1024, 1024), chunks=b), rs.standard_normal((1024, 1024), chunks=b))
                        for b in (128, 256)}
            dt = bf16 if kind == "hrx" else np.dtype(np.float32)
            mats = {b: client.persist([x.astype(dt), y.astype(dt)]) for b, (x, y) in mats.items()}
            e = client.persist(e)
            wait([e, *[v for xy in mats.values() for v in xy]], timeout=600)
            graphs[(kind, "elementwise", 64)] = ((e + 1) * 2).sum()
            for b, (x, y) in mats.items():
                graphs[(kind, "matmul", b)] = (hd.matmul(x, y) if kind == "hrx" else x @ y).sum(dtype=np.float32)
        times: dict = {key: [] for key in graphs}
        for key, g in graphs.items():
            client.compute(g).result(timeout=600)  # warm-up
        for _ in range(repeats):
            for key, g in graphs.items():
                t0 = time.perf_counter()
                client.compute(g).result(timeout=600)
                times[key].append(time.perf_counter() - t0)
    rows = []
    for (kind, graph, b), g in graphs.items():
        tasks = len(g.__dask_graph__())
        wall = statistics.median(times[(kind, graph, b)])
        compute = 0.0
        if graph == "matmul":
            compute = (1024 // b) ** 3 * (_block_product_s(b, repeats) if kind == "hrx" else _numpy_product_s(b, repeats))
        rows.append({"kind": kind, "graph": graph, "block": b, "tasks": tasks, "median_s": wall,
                     "block_products_s": compute, "overhead_per_task_s": (wall - compute / 2) / (tasks / 2)})
    table = []
    for r in rows:
        if r["kind"] != "hrx":
            continue
        peer = next(p for p in rows if p["kind"] == "numpy" and p["graph"] == r["graph"] and p["block"] == r["block"])
        label = (f"{r['graph']} graph, {r['block']}-blocks ({r['tasks']} tasks; NumPy blocks {peer['tasks']}), "
                 "overhead per task and worker")
        print(f"{label}: {r['overhead_per_task_s'] * 1e3:.2f} ms, NumPy blocks {peer['overhead_per_task_s'] * 1e3:.2f} ms "
              f"({r['overhead_per_task_s'] / peer['overhead_per_task_s']:.2f}x)", flush=True)
        table.append({"figure": label, "value": r["overhead_per_task_s"] * 1e3, "unit": "ms",
                      "peer": "Dask on NumPy blocks", "peer_value": peer["overhead_per_task_s"] * 1e3,
                      "ratio": r["overhead_per_task_s"] / peer["overhead_per_task_s"], "ratio_label": "ours / peer"})
    path = save_results("dask_overhead", {
        "table": table, "figure": "Dask per-task overhead, DeviceArray blocks vs NumPy blocks, two workers",
        "rows": rows, "repeats": repeats, "target": "<= 1 ms per task (issue 28)",
        "method": "local_cluster(npu=2), one process and thread per worker, HRXARRAY_NUM_THREADS=1; both kinds' "
                  "inputs persisted on the same cluster, timed computations alternating; median of repeats; "
                  "per task and worker = (wall - block products / 2) / (tasks / 2)"})
    print(f"wrote {path}")
    return 0


def _numpy_product_s(block: int, repeats: int) -> float:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((block, block)).astype(np.float32)
    b = rng.standard_normal((block, block)).astype(np.float32)
    return statistics.median(timings_s(lambda: a @ b, repeats, warmup=1))


def main(argv: list[str]) -> int:
    if argv and argv[0] == "overhead":
        return _overhead(int(argv[1]) if len(argv) > 1 else 7)
    n = int(argv[0]) if argv else 4096
    block = int(argv[1]) if len(argv) > 1 else 1024
    repeats = int(argv[2]) if len(argv) > 2 else 3
    runs = {}
    for kind in ("hrx", "numpy"):
        for workers in (1, 2):
            r = _cluster_run(workers, n, block, repeats, kind, check=(kind == "hrx" and workers == 2))
            runs[f"{kind}_{workers}"] = r
            print(f"{kind:5s} {workers} worker(s): {r['median_s']:.2f} s, {r['gflop_per_s']:.1f} GFLOP/s, "
                  f"{r['bytes_per_gflop'] / 1e6:.2f} MB moved per GFLOP", flush=True)
    speedup = runs["hrx_1"]["median_s"] / runs["hrx_2"]["median_s"]
    peer_speedup = runs["numpy_1"]["median_s"] / runs["numpy_2"]["median_s"]
    print(f"two workers / one: {speedup:.2f}x for DeviceArray blocks, {peer_speedup:.2f}x for NumPy blocks "
          f"(target >= 1.5x); relative error {runs['hrx_2']['relative_error']:.2e} (target < 2^-7)")

    overhead = []
    small_n = 1024
    for b in (128, 256, 512, 1024):
        r = _cluster_run(2, small_n, b, repeats, "hrx")
        products = (small_n // b) ** 3
        kernel = _block_product_s(b, repeats)
        per_task = (r["median_s"] - products * kernel / 2) / (r["tasks"] / 2)
        overhead.append({"block": b, "n": small_n, "block_products": products, "tasks": r["tasks"],
                         "median_s": r["median_s"], "block_product_s": kernel, "overhead_per_task_s": per_task})
        print(f"n={small_n} block={b}: {r['tasks']} tasks, {r['median_s']:.3f} s, block product "
              f"{kernel * 1e3:.2f} ms, overhead {per_task * 1e3:.2f} ms per task", flush=True)

    ser = _serialise_s(max(repeats, 5))
    print(f"serialise + deserialise one 8 MiB block: {ser['device_array_s'] * 1e3:.2f} ms; NumPy "
          f"{ser['numpy_s'] * 1e3:.2f} ms zero-copy ({ser['ratio']:.1f}x), {ser['numpy_two_copies_s'] * 1e3:.2f} ms "
          f"with a copy at each end ({ser['ratio_to_two_copies']:.2f}x)")
    table = [
        {"figure": f"{n}² bf16 matmul in {block}-blocks, two workers / one", "value": speedup, "unit": "x",
         "peer": "NumPy float32 blocks, two / one", "peer_value": peer_speedup, "ratio": speedup / 1.5,
         "ratio_label": "ours / target 1.5x"},
        {"figure": "serialise + deserialise an 8 MiB bf16 block", "value": ser["device_array_s"] * 1e3,
         "unit": "ms", "peer": "NumPy block, a copy at each end", "peer_value": ser["numpy_two_copies_s"] * 1e3,
         "ratio": ser["ratio_to_two_copies"], "ratio_label": "ours / peer (zero-copy NumPy: "
                                                           f"{ser['ratio']:.0f}x)"},
        {"figure": f"relative error of the {n}² bf16 product", "value": runs["hrx_2"]["relative_error"],
         "unit": "", "peer": "target 2^-7", "peer_value": 2**-7,
         "ratio": runs["hrx_2"]["relative_error"] / 2**-7, "ratio_label": "ours / target"},
    ]
    path = save_results("dask_scaleout", {"table": table,
        "figure": "two workers / one worker, hrxarray.dask.matmul(x, y).sum() of bf16 DeviceArray blocks",
        "speedup_two_over_one": speedup, "peer": "the same with NumPy float32 blocks and Dask's own @",
        "peer_speedup_two_over_one": peer_speedup, "target": ">= 1.5x", "runs": runs,
        "overhead_per_task": overhead, "serialise_8MiB": ser,
        "relative_error_4096": runs["hrx_2"].get("relative_error"), "error_target": 2**-7,
        "method": "local_cluster(npu=1|2): one process per worker, 1 thread, HRXARRAY_NUM_THREADS=1, loopback; "
                  "inputs made on the workers and persisted; median of repeats after a warm-up",
        "repeats": repeats, "limits": "two cores shared by both workers; no network: Dask's overhead and the "
                                      "shape of scaling, not a gain across machines"})
    print(f"wrote {path}")
    plot(runs, overhead, speedup, peer_speedup)
    return 0


def plot(runs: dict, overhead: list, speedup: float, peer_speedup: float) -> None:
    plt = pyplot()
    if plt is None:
        return
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for i, kind in enumerate(("hrx", "numpy")):
        times = [runs[f"{kind}_{w}"]["median_s"] for w in (1, 2)]
        left.bar([i * 3, i * 3 + 1], times, color=["tab:gray", "tab:blue" if kind == "hrx" else "tab:orange"])
        left.text(i * 3 + 0.5, max(times) * 1.03, f"{times[0] / times[1]:.2f}x", ha="center")
    left.set_xticks([0, 1, 3, 4], ["hrx\n1 worker", "hrx\n2 workers", "NumPy\n1 worker", "NumPy\n2 workers"])
    left.set_ylabel("seconds (median)")
    left.set_title(f"bf16 matmul, two workers / one: {speedup:.2f}x (NumPy blocks {peer_speedup:.2f}x)",
                   fontsize=9)
    right.plot([o["block"] for o in overhead], [o["overhead_per_task_s"] * 1e3 for o in overhead], "o-")
    right.set_xscale("log", base=2)
    right.set_xlabel("block size")
    right.set_ylabel("overhead per task (ms)")
    right.set_title("per-task overhead, n = 1024, two workers", fontsize=9)
    fig.tight_layout()
    fig.savefig(RESULTS / "dask_scaleout.png", dpi=120)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
