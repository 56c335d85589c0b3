"""The cluster scenarios of tests/test_dask_cluster.py, run in a child process the test can kill.

``python tests/dask_cluster_job.py matmul|local|resources`` prints one JSON line of
facts; the test asserts on them. A hung cluster then costs the test its
timeout, never the suite.
"""

import json
import sys

import numpy as np


def _binding():
    from hrxarray import _doctor

    return _doctor.collect()["dask_worker"]


def matmul():
    import dask
    import dask.array as da
    import ml_dtypes
    from distributed import Client, wait

    import hrxarray as hx
    import hrxarray.dask as hd

    bf16 = np.dtype(ml_dtypes.bfloat16)
    with hd.local_cluster(npu=2) as cluster, Client(cluster, timeout="60s") as client:
        with dask.config.set({"array.backend": "hrx"}):
            rs = da.random.RandomState(7)
            # Blocks made on the workers by the backend, never shipped from here.
            x = rs.standard_normal((512, 512), chunks=128).astype(bf16)
            y = rs.standard_normal((512, 512), chunks=128).astype(bf16)
        x, y = client.persist([x, y])
        wait([x, y], timeout=120)
        with dask.config.set({"optimization.fuse.active": False}):
            from distributed import get_task_stream

            with get_task_stream(client) as ts:
                z = hd.matmul(x, y)
                got = client.compute(z).result(timeout=120)
        a, b = client.compute([x, y], sync=True)
        want = hx.to_numpy(a).astype(np.float64) @ hx.to_numpy(b).astype(np.float64)
        err = float(np.linalg.norm(hx.to_numpy(got).astype(np.float64) - want) / np.linalg.norm(want))
        names = {addr: w["name"] for addr, w in client.scheduler_info()["workers"].items()}
        block_tasks: dict = {}
        for t in ts.data:
            name = t["key"][0] if isinstance(t["key"], tuple) else str(t["key"])
            if name.startswith("hrx-matmul-"):
                block_tasks[names[t["worker"]]] = block_tasks.get(names[t["worker"]], 0) + 1
        placements = client.run(_binding)
        meta = type(z._meta).__name__
        return {"type": type(got).__name__, "dtype": str(got.dtype), "meta": meta, "shape": list(got.shape),
                "error": err, "block_tasks": block_tasks, "input_block_type": type(x._meta).__name__,
                "bindings": {names[k]: v for k, v in placements.items()}}


def local():
    """The issue's recipe on distributed's own LocalCluster: plain `x @ y` of bf16 blocks made on the workers."""
    import dask
    import dask.array as da
    import ml_dtypes
    from distributed import Client, LocalCluster, get_task_stream, wait

    import hrxarray as hx
    import hrxarray.dask as hd

    bf16 = np.dtype(ml_dtypes.bfloat16)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=":0") as cluster, Client(cluster, timeout="60s") as client:
        client.register_plugin(hd.DevicePlugin())
        with dask.config.set({"array.backend": "hrx"}):
            rs = da.random.RandomState(11)
            x = rs.standard_normal((512, 512), chunks=128).astype(bf16)
            y = rs.standard_normal((512, 512), chunks=128).astype(bf16)
        x, y = client.persist([x, y])
        wait([x, y], timeout=120)
        with dask.config.set({"optimization.fuse.active": False}):
            with get_task_stream(client) as ts:
                z = x @ y
                got = client.compute(z).result(timeout=120)
        a, b = client.compute([x, y], sync=True)
        want = hx.to_numpy(a).astype(np.float64) @ hx.to_numpy(b).astype(np.float64)
        err = float(np.linalg.norm(hx.to_numpy(got).astype(np.float64) - want) / np.linalg.norm(want))
        block_tasks: dict = {}
        for t in ts.data:
            name = t["key"][0] if isinstance(t["key"], tuple) else str(t["key"])
            if name.startswith("hrx-matmul-"):
                block_tasks[t["worker"]] = block_tasks.get(t["worker"], 0) + 1
        bindings = client.run(_binding)
        return {"type": type(got).__name__, "dtype": str(got.dtype), "meta": type(z._meta).__name__,
                "shape": list(got.shape), "error": err, "graph": z.name.split("-")[0] + "-" + z.name.split("-")[1],
                "block_tasks": sorted(block_tasks.values()), "workers": len(client.scheduler_info()["workers"]),
                "bound": sorted(b["binding"]["device"] for b in bindings.values() if b["binding"])}


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


if __name__ == "__main__":
    print(json.dumps({"matmul": matmul, "local": local, "resources": resources}[sys.argv[1]]()))
