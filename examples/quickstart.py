"""A short tour of hrxarray's foundation on the default (emulated) fabric.

Run: python examples/quickstart.py
"""

import hrxarray as hx


def main() -> None:
    rt = hx.default_runtime()
    gpu, npu = rt.gpu(), rt.npu()
    print(f"backend: {rt.backend}; devices: {gpu.target} and {npu.target} ({npu.columns} columns)")

    # One allocation that both engines can bind, mapped on the host under a guard.
    buf = rt.allocate(1 << 20, hx.Shared(npu))
    with buf.map_write() as view:
        view[:] = 0x5A
    with buf.map_read() as view:
        assert (view == 0x5A).all()
    print(f"wrote and read back {buf.nbytes} bytes of {buf!r}")

    # What the host must do before the NPU reads what it wrote, and after.
    facts = buf.visibility("host", npu)
    print(f"host -> npu: release {facts.release.kind}/{facts.release.operation}, acquire {facts.acquire.kind}")
    prepared = buf.prepare_release_host([(0, 4096), (4096, 8192), (65536, 65600)])
    print(f"host flush of 3 ranges merges into {prepared.operation_count} operations: {prepared.ranges}")
    prepared.execute()

    # A GPU buffer shared with the NPU through the dma-buf path: one backing, two handles.
    gpu_buf = rt.allocate(4096, hx.GpuLocal())
    alias = rt.adopt(gpu_buf, hx.Shared(npu))
    print(f"adopted {gpu_buf!r} as {alias!r}; same storage: {alias.same_storage(gpu_buf)}")

    # Guards are strict: a second writer is refused at once, never waited for.
    with buf.map_read():
        try:
            buf.try_map_write()
        except hx.BusyError as exc:
            print(f"BusyError as expected: {exc}")

    print(rt.statistics())


if __name__ == "__main__":
    main()
