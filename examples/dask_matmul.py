"""A chunked bf16 matmul and a reduction on a two-worker Dask cluster, checked against NumPy.

Run: python examples/dask_matmul.py [n=512] [block=128]     (needs ``pip install hrxarray[dask]``)

``n`` and ``block`` are positive integers with ``block`` dividing ``n``; a bad argument prints a usage
error on stderr and exits with status 2.

The program::

    with hd.local_cluster(npu=2) as cluster, Client(cluster) as client:  # 2 worker processes on loopback,
        with dask.config.set({"array.backend": "hrx"}):                   # one device each
            x = da.random.RandomState(0).standard_normal((n, n), chunks=block).astype(bfloat16)
        z = hd.matmul(x, y)                    # float32 block products, tree sum, one rounding to bf16
        col = z.astype(np.float32).sum(axis=0)  # a reduction, on the workers' devices
        client.compute([z, col])

The blocks are DeviceArrays made on the workers (the "hrx" backend); only the results travel to this
process (which runs its own emulated device to hold them). Checks: the product's dtype is bfloat16 and
its relative error against NumPy's float64 product of the same bf16 inputs is below 2**-7; the column
sums equal NumPy's float32 sums of the product within float32 rounding.

Prints ``n=.. block=..: bf16 matmul on 2 workers matches NumPy (relative error ..), column sums match``
and how many tasks each worker ran.
"""

from __future__ import annotations

import sys

import ml_dtypes
import numpy as np

USAGE = "usage: python examples/dask_matmul.py [n=512] [block=128]"


def parse(argv: list[str]) -> tuple[int, int]:
    if len(argv) > 2:
        raise ValueError("at most two arguments")
    values = []
    for text in argv:
        try:
            values.append(int(text))
        except ValueError:
            raise ValueError(f"invalid integer {text!r}") from None
    n, block = (values + [512, 128][len(values):])[:2]
    if n < 1 or block < 1 or n % block:
        raise ValueError(f"n and block must be positive with block dividing n, got n={n}, block={block}")
    return n, block


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    try:
        n, block = parse(argv)
    except ValueError as e:
        print(f"{USAGE}\nerror: {e}", file=sys.stderr)
        return 2
    import dask
    import dask.array as da
    from distributed import Client, get_task_stream, wait

    import hrxarray as hx
    import hrxarray.dask as hd

    bf16 = np.dtype(ml_dtypes.bfloat16)
    with hd.local_cluster(npu=2) as cluster, Client(cluster, timeout="60s") as client:
        with dask.config.set({"array.backend": "hrx"}):
            rs = da.random.RandomState(0)
            x = rs.standard_normal((n, n), chunks=block).astype(bf16)
            y = rs.standard_normal((n, n), chunks=block).astype(bf16)
        x, y = client.persist([x, y])
        wait([x, y], timeout=120)
        z = hd.matmul(x, y)
        col = z.astype(np.float32).sum(axis=0)
        with get_task_stream(client) as ts:
            c, s = client.compute([z, col], sync=True)
        a, b = client.compute([x, y], sync=True)
        names = {addr: w["name"] for addr, w in client.scheduler_info()["workers"].items()}
    assert isinstance(c, hx.DeviceArray) and c.dtype == bf16, (type(c), c.dtype)
    want = hx.to_numpy(a).astype(np.float64) @ hx.to_numpy(b).astype(np.float64)
    got = hx.to_numpy(c).astype(np.float64)
    err = float(np.linalg.norm(got - want) / np.linalg.norm(want))
    assert err < 2**-7, err
    np.testing.assert_allclose(hx.to_numpy(s), hx.to_numpy(c).astype(np.float32).sum(axis=0), rtol=1e-5,
                               atol=1e-3)
    ran: dict[str, int] = {}
    for t in ts.data:
        ran[names[t["worker"]]] = ran.get(names[t["worker"]], 0) + 1
    print(f"n={n} block={block}: bf16 matmul on 2 workers matches NumPy (relative error {err:.2e}), "
          "column sums match")
    print("tasks per worker: " + ", ".join(f"{k}={v}" for k, v in sorted(ran.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
