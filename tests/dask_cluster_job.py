"""The cluster scenarios of tests/test_dask_cluster.py, run in a child process the test can kill.

``python tests/dask_cluster_job.py matmul|local|resources|spread`` prints one JSON line of
facts; the test asserts on them. A hung cluster then costs the test its
timeout, never the suite.
"""

import json
import sys

import numpy as np


def _binding():
    from hrxarray import _doctor

    return _doctor.collect()["dask_worker"]


def _product(client, seed, product):
    """bf16 operands of 512² in 128-blocks made on the workers, and product(x, y) computed there.

    Returns the operands' meta type, the product's meta, the result, its relative
    error against float64 and the number of hrx-matmul block tasks per worker address.
    """
    import dask
    import dask.array as da
    import ml_dtypes
    from distributed import get_task_stream, wait

    import hrxarray as hx

    bf16 = np.dtype(ml_dtypes.bfloat16)
    with dask.config.set({"array.backend": "hrx"}):
        rs = da.random.RandomState(seed)
        # Blocks made on the workers by the backend, never shipped from here.
        x = rs.standard_normal((512, 512), chunks=128).astype(bf16)
        y = rs.standard_normal((512, 512), chunks=128).astype(bf16)
    x, y = client.persist([x, y])
    wait([x, y], timeout=120)
    with dask.config.set({"optimization.fuse.active": False}):
        with get_task_stream(client) as ts:
            z = product(x, y)
            got = client.compute(z).result(timeout=120)
    a, b = client.compute([x, y], sync=True)
    want = hx.to_numpy(a).astype(np.float64) @ hx.to_numpy(b).astype(np.float64)
    err = float(np.linalg.norm(hx.to_numpy(got).astype(np.float64) - want) / np.linalg.norm(want))
    block_tasks: dict = {}
    for t in ts.data:
        name = t["key"][0] if isinstance(t["key"], tuple) else str(t["key"])
        if name.startswith("hrx-matmul-"):
            block_tasks[t["worker"]] = block_tasks.get(t["worker"], 0) + 1
    return {"input_block_type": type(x._meta).__name__, "meta": type(z._meta).__name__, "graph": z.name,
            "type": type(got).__name__, "dtype": str(got.dtype), "shape": list(got.shape), "error": err,
            "block_tasks": block_tasks}


def matmul():
    from distributed import Client

    import hrxarray.dask as hd

    with hd.local_cluster(npu=2) as cluster, Client(cluster, timeout="60s") as client:
        r = _product(client, 7, hd.matmul)
        names = {addr: w["name"] for addr, w in client.scheduler_info()["workers"].items()}
        r["block_tasks"] = {names[k]: v for k, v in r["block_tasks"].items()}
        r["bindings"] = {names[k]: v for k, v in client.run(_binding).items()}
        return r


def local():
    """The issue's recipe on distributed's own LocalCluster: plain `x @ y` of bf16 blocks made on the workers."""
    import operator

    from distributed import Client, LocalCluster

    import hrxarray.dask as hd

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=":0") as cluster, Client(cluster, timeout="60s") as client:
        client.register_plugin(hd.DevicePlugin())
        r = _product(client, 11, operator.matmul)
        r["graph"] = "-".join(r["graph"].split("-")[:2])
        r["block_tasks"] = sorted(r["block_tasks"].values())
        r["workers"] = len(client.scheduler_info()["workers"])
        r["bound"] = sorted(b["binding"]["device"] for b in client.run(_binding).values() if b["binding"])
        return r


def resources():
    import dask
    import dask.array as da
    from distributed import Client, get_task_stream

    import hrxarray.dask as hd

    out = {}
    with hd.local_cluster(npu=2, cpu=1) as cluster, Client(cluster, timeout="60s") as client:
        names = {addr: w["name"] for addr, w in client.scheduler_info()["workers"].items()}
        out["resources"] = {names[a]: w["resources"] for a, w in client.scheduler_info()["workers"].items()}
        with dask.config.set({"array.backend": "hrx"}):
            x = da.ones((64, 64), chunks=16)
        for how in ("compute_resources", "annotate_no_fuse"):
            y = (x + 1) * 2
            with get_task_stream(client) as ts:
                if how == "compute_resources":
                    r = client.compute(y.sum(), resources={"NPU": 1}).result(timeout=120)
                else:
                    with dask.config.set({"optimization.fuse.active": False}):
                        with dask.annotate(resources={"NPU": 1}):
                            y2 = ((x + 1) * 2).sum()
                        r = client.compute(y2).result(timeout=120)
            ran = {}
            for t in ts.data:
                ran[names[t["worker"]]] = ran.get(names[t["worker"]], 0) + 1
            out[how] = {"ran": ran, "value": float(r), "type": type(r).__name__}
    return out


def _block(seed):
    import hrxarray as hx

    return hx.asarray(np.random.default_rng(seed).standard_normal((512, 512)).astype(np.float32) / 32)


def _squares(x):
    import hrxarray as hx

    y = x
    for _ in range(8):
        y = hx.matmul(y, x)
    return y  # returned pending: the device is still working when the task returns


def spread():
    """Tasks returning pending DeviceArrays, all inputs on one worker: where the scheduler runs them.

    28 blocks are made on the first worker; 4 tasks teach the scheduler the
    function's duration, then 24 more run. A task that looks free (~0 s) is
    never worth moving a block for, so all 24 stay on the first worker; a task
    timed over its device work is stolen by the idle worker.
    """
    import os

    from distributed import Client, LocalCluster, get_task_stream, wait

    import dask

    os.environ["HRXARRAY_NUM_THREADS"] = "1"  # the worker processes inherit it: one core each
    # Stealing is how an idle worker gets tasks whose inputs live elsewhere; balancing every 20 ms
    # (default 100 ms) lets it act within the run.
    with dask.config.set({"distributed.scheduler.work-stealing-interval": "20ms"}), LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=":0") as cluster, Client(cluster, timeout="60s") as client:
        workers = sorted(client.scheduler_info()["workers"])
        blocks = [client.submit(_block, i, workers=[workers[0]], pure=False) for i in range(28)]
        wait(blocks, timeout=120)
        client.gather([client.submit(_squares, b, pure=False) for b in blocks[:4]])
        with get_task_stream(client) as ts:
            results = client.gather([client.submit(_squares, b, pure=False) for b in blocks[4:]])
        ran = {w: 0 for w in workers}
        for t in ts.data:
            if str(t["key"]).startswith("_squares"):
                ran[t["worker"]] += 1
        durations = client.run_on_scheduler(
            lambda dask_scheduler: {p: tp.duration_average for p, tp in dask_scheduler.task_prefixes.items()})
        return {"ran": [ran[w] for w in workers], "type": type(results[0]).__name__,
                "ready": all(r.ready() for r in results), "duration_s": [d for p, d in durations.items() if "squares" in p]}


if __name__ == "__main__":
    print(json.dumps({"matmul": matmul, "local": local, "resources": resources, "spread": spread}[sys.argv[1]]()))
