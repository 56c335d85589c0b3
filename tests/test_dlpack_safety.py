"""DLPack imports that must not change their producer's data, and BusyErrors that say how to end an export.

NumPy is the reference for read-only imports: ``numpy.from_dlpack`` imports
every legacy (unversioned) capsule read-only, and a versioned one read-only
only when it carries READ_ONLY.
"""

import gc

import numpy as np
import pytest

import hrxarray as hx
from hrxarray import _core


class Producer:
    """A DLPack producer over a NumPy array that offers only the capsule kind it is told to."""

    def __init__(self, array, versioned):
        self.array, self.versioned = array, versioned

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if self.versioned:
            return self.array.__dlpack__(max_version=(1, 0))
        return self.array.__dlpack__()  # legacy, as JAX 0.10 hands out even for max_version=(1, 0)

    def __dlpack_device__(self):
        return (1, 0)


def writable_through_numpy(array, versioned):
    """Whether NumPy's own from_dlpack imports this producer writable (the reference)."""
    return np.from_dlpack(Producer(array, versioned)).flags.writeable


# (NumPy refuses a legacy export of a read-only array, so that pair does not exist.)
@pytest.mark.parametrize("versioned, producer_writable", [(False, True), (True, True), (True, False)],
                         ids=["legacy", "versioned-writable", "versioned-read-only"])
def test01_import_is_writable_exactly_when_numpy_imports_it_writable(versioned, producer_writable):
    a = np.arange(6, dtype=np.int32)
    a.setflags(write=producer_writable)
    x = hx.from_dlpack(Producer(a, versioned))
    writable = writable_through_numpy(a, versioned)
    assert writable == (versioned and producer_writable)
    assert x._readonly is (not writable)
    np.testing.assert_array_equal(hx.to_numpy(x * 2), np.arange(6) * 2)  # reading always works
    if writable:
        hx.add(x, 100, out=x)
        x.block_until_ready()
        np.testing.assert_array_equal(a, np.arange(6) + 100)  # zero-copy: the producer sees the write
        return
    with pytest.raises(ValueError, match="read-only import.*legacy DLPack capsule.*copy=True"):
        hx.add(x, 100, out=x)
    with pytest.raises(ValueError, match="read-only import"):
        x[0] = 5
    with pytest.raises(ValueError, match="map_write: .*read-only import"):
        with x.map_write():
            pass
    np.testing.assert_array_equal(a, np.arange(6))  # nothing reached the producer


def test02_copy_true_gives_a_writable_copy_of_a_legacy_capsule():
    a = np.arange(4, dtype=np.float32)
    x = hx.from_dlpack(Producer(a, versioned=False), copy=True)
    assert not x._readonly
    hx.add(x, 1, out=x)
    np.testing.assert_array_equal(hx.to_numpy(x), np.arange(4) + 1)
    np.testing.assert_array_equal(a, np.arange(4))


def test03_read_only_import_reexports_read_only():
    a = np.arange(4, dtype=np.float32)
    x = hx.from_dlpack(Producer(a, versioned=False))
    cap = x.__dlpack__(max_version=(1, 0))
    assert _core._dlpack_describe(cap)["flags"] & 1  # READ_ONLY
    n = np.from_dlpack(x)
    assert not n.flags.writeable and n.ctypes.data == a.ctypes.data
    with pytest.raises(BufferError, match="legacy"):
        x.__dlpack__()


def test04_jax_arrays_stay_immutable():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    j = jnp.arange(4, dtype=jnp.int32)
    f = jax.jit(lambda v: v * 10)
    hj = hx.from_dlpack(j)
    assert hj._readonly
    with pytest.raises(ValueError, match="read-only import"):
        hx.add(hj, 100, out=hj)
    np.testing.assert_array_equal(np.asarray(f(j)), [0, 10, 20, 30])
    np.testing.assert_array_equal(np.asarray(j), [0, 1, 2, 3])
    np.testing.assert_array_equal(hx.to_numpy(hj + 1), [1, 2, 3, 4])
    w = hx.from_dlpack(j, copy=True)
    hx.add(w, 100, out=w)
    np.testing.assert_array_equal(hx.to_numpy(w), [100, 101, 102, 103])
    np.testing.assert_array_equal(np.asarray(j), [0, 1, 2, 3])


def test05_torch_imports_stay_zero_copy_and_writable():
    torch = pytest.importorskip("torch")
    src = torch.arange(5, dtype=torch.float32)
    y = hx.from_dlpack(src)
    assert not y._readonly
    assert _core._dlpack_describe(y.__dlpack__(max_version=(1, 0)))["data"] == src.data_ptr()
    hx.multiply(y, 3, out=y)
    y.block_until_ready()
    assert src.tolist() == [0.0, 3.0, 6.0, 9.0, 12.0]


# --- BusyError messages that name a live export say how to end it -------------------------------------

REMEDY = r"del t.*copy"


def test10_device_work_blocked_by_a_writable_export_says_how_to_end_it():
    y = hx.asarray(np.arange(4.0))
    t = np.from_dlpack(y)  # writable, like torch.from_dlpack
    with pytest.raises(hx.BusyError, match=r"DLPack export \(writable\).*may write.*" + REMEDY):
        y * 2  # a read: the consumer could write meanwhile (DESIGN keeps this refusal)
    with pytest.raises(hx.BusyError, match=r"DLPack export \(writable\).*" + REMEDY):
        hx.add(hx.asarray(np.ones(4)), 1, out=y)
    with pytest.raises(hx.BusyError, match=r"lease.*" + REMEDY):
        with y.map_write():
            pass
    del t
    gc.collect()
    np.testing.assert_array_equal(hx.to_numpy(y * 2), np.arange(4.0) * 2)  # the remedy works


def test11_device_write_blocked_by_a_read_only_view_says_how_to_end_it():
    x = hx.asarray(np.arange(4.0))
    v = np.asarray(x, copy=False)
    with pytest.raises(hx.BusyError, match=r"zero-copy NumPy view.*" + REMEDY) as info:
        hx.add(x, 1, out=x)
    assert "may write" not in str(info.value)  # the view is read-only: only writes conflict
    del v
    gc.collect()
    hx.add(x, 1, out=x)
    np.testing.assert_array_equal(hx.to_numpy(x), np.arange(4.0) + 1)


def test12_torch_hand_off_busy_error_names_both_remedies_and_both_work():
    torch = pytest.importorskip("torch")
    y = hx.asarray(np.arange(4, dtype=np.float32))
    t = torch.from_dlpack(y)
    with pytest.raises(hx.BusyError, match=r"to end it, .*del t.*to avoid it, .*torch\.from_dlpack\(x\.copy\(\)\)"):
        y * 2
    del t  # remedy 1: the consumer lets go
    gc.collect()
    np.testing.assert_array_equal(hx.to_numpy(y * 2), np.arange(4) * 2)
    t2 = torch.from_dlpack(y.copy())  # remedy 2: the consumer gets a copy, y stays free
    np.testing.assert_array_equal(hx.to_numpy(y * 2), np.arange(4) * 2)
    t2[0] = 42
    assert float(y[0]) == 0.0


@pytest.mark.parametrize("versioned, producer_writable", [(False, True), (True, False)],
                         ids=["legacy", "versioned-read-only"])
def test13_read_only_import_refuses_writes_through_its_buffer_and_graphs(versioned, producer_writable):
    # The array's flag is not the only way in: its buffer maps and binds too.
    a = np.arange(16, dtype=np.int32)
    a.setflags(write=producer_writable)
    x = hx.from_dlpack(Producer(a, versioned))
    rt, buf = hx.default_runtime(), x.buffer
    stats = rt.statistics()
    with pytest.raises(ValueError, match="map_write.*is read-only.*copy=True"):
        buf.map_write()
    with pytest.raises(ValueError, match="is read-only"):
        buf.try_map_write()
    other = rt.allocate(buf.nbytes, hx.HostVisible())
    for build in (lambda g: g.fill(buf.view(0, buf.nbytes), 7), lambda g: g.copy(buf.view(0, buf.nbytes), other.view(0, buf.nbytes))):
        g = rt.graph()
        build(g)
        with pytest.raises(ValueError, match="prepare: .*is read-only"):
            g.prepare()
    # reading through the buffer still works, on the host and in graphs
    with buf.map_read() as v:
        assert bytes(v[:8]) == a[:2].tobytes()
    g = rt.graph()
    g.copy(other.view(0, buf.nbytes), buf.view(0, buf.nbytes))
    g.prepare().submit().result()
    with other.map_read() as v:
        np.testing.assert_array_equal(v.view(np.int32)[:16], np.arange(16))
    np.testing.assert_array_equal(a, np.arange(16))  # nothing reached the producer
    assert rt.statistics().submissions == stats.submissions + 1


# --- read-only exports hold read leases (issue 28: Note [Read-only DLPack exports]) -------------------------


def test20_read_only_export_lets_device_reads_proceed_and_refuses_writes():
    x = hx.asarray(np.arange(6.0))
    ro = x.readonly_export()
    assert ro.__dlpack_device__() == x.__dlpack_device__()
    n = np.from_dlpack(ro)  # NumPy honours READ_ONLY
    assert not n.flags.writeable
    assert x.buffer._state()["host_leases"] == 1  # zero-copy
    with pytest.raises(ValueError):
        n[0] = 5  # the consumer cannot write through it
    np.testing.assert_array_equal(hx.to_numpy(x + 1), np.arange(6.0) + 1)  # device reads proceed
    np.testing.assert_array_equal(hx.to_numpy(x.copy()), np.arange(6.0))
    with pytest.raises(hx.BusyError, match=r"DLPack export \(read-only\) of storage #\d+ is live.*" + REMEDY) as info:
        hx.add(x, 1, out=x)
    assert "may write" not in str(info.value)
    with pytest.raises(hx.BusyError, match="lease.*" + REMEDY):
        with x.map_write():
            pass
    np.testing.assert_array_equal(n, np.arange(6.0))  # the refused writes changed nothing
    del n
    gc.collect()
    hx.add(x, 1, out=x)  # the remedy works
    np.testing.assert_array_equal(hx.to_numpy(x), np.arange(6.0) + 1)


def test21_read_only_export_flags_and_legacy_refusal():
    x = hx.asarray(np.arange(4, dtype=np.float32))
    cap = x.readonly_export().__dlpack__(max_version=(1, 0))
    assert _core._dlpack_describe(cap)["flags"] & 1  # READ_ONLY
    assert x.buffer._state()["host_leases"] == 1
    np.testing.assert_array_equal(hx.to_numpy(x * 2), np.arange(4) * 2)  # a read lease: device reads proceed
    del cap
    gc.collect()
    assert x.buffer._state()["host_leases"] == 0
    with pytest.raises(BufferError, match="read-only export.*legacy"):
        x.readonly_export().__dlpack__()
    assert x.buffer._state()["host_leases"] == 0  # the refusal took nothing
    c = x.readonly_export().__dlpack__(max_version=(1, 0), copy=True)  # a copy is the consumer's: writable
    assert _core._dlpack_describe(c)["flags"] & 1 == 0


def test22_writable_export_still_blocks_reads():
    x = hx.asarray(np.arange(4.0))
    t = np.from_dlpack(x)
    assert t.flags.writeable
    with pytest.raises(hx.BusyError, match=r"DLPack export \(writable\).*may write"):
        x + 1
    del t
    gc.collect()


def test23_jax_like_consumer_gets_a_read_lease_even_on_a_legacy_capsule():
    """What the import of a consumer module named jax.* asks (a legacy capsule; JAX never writes in place)."""
    import types

    fake = types.ModuleType("jax._src.dlpack_probe")
    exec("def take(x):\n    return x.__dlpack__(stream=None)", fake.__dict__)
    x = hx.asarray(np.arange(4, dtype=np.float32))
    cap = fake.take(x)
    assert _core._dlpack_describe(cap)["name"] == "dltensor"
    np.testing.assert_array_equal(hx.to_numpy(x + 1), np.arange(4) + 1)  # reads proceed
    with pytest.raises(hx.BusyError, match=r"DLPack export \(read-only, to JAX\) of storage #\d+ is live.*" + REMEDY):
        hx.add(x, 1, out=x)
    del cap
    gc.collect()
    hx.add(x, 1, out=x)
    np.testing.assert_array_equal(hx.to_numpy(x), np.arange(4) + 1)


def test23b_jax_import_holds_a_read_lease():
    jnp = pytest.importorskip("jax.numpy")
    x = hx.asarray(np.arange(4, dtype=np.float32))
    j = jnp.from_dlpack(x)
    np.testing.assert_array_equal(np.asarray(j), np.arange(4))
    np.testing.assert_array_equal(hx.to_numpy(x * 2), np.arange(4) * 2)  # reads proceed while j lives
    if x.buffer._state()["host_leases"]:  # zero-copy: writes wait for the JAX array
        with pytest.raises(hx.BusyError, match=r"read-only, to JAX.*" + REMEDY):
            hx.add(x, 1, out=x)
    del j
    gc.collect()
    hx.add(x, 1, out=x)
    np.testing.assert_array_equal(hx.to_numpy(x), np.arange(4) + 1)


def test24_torch_read_only_export():
    torch = pytest.importorskip("torch")
    x = hx.asarray(np.arange(4, dtype=np.float32))
    t = torch.from_dlpack(x.readonly_export())
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    np.testing.assert_array_equal(hx.to_numpy(x + 1), np.arange(4) + 1)  # reads proceed
    with pytest.raises(hx.BusyError, match=r"DLPack export \(read-only\).*del t"):
        hx.add(x, 1, out=x)
    del t
    gc.collect()
    hx.add(x, 1, out=x)
    np.testing.assert_array_equal(hx.to_numpy(x), np.arange(4) + 1)


def test25_dlpack_signature_is_the_standards():
    import inspect

    x = hx.asarray(np.arange(2.0))
    for f in (x.__dlpack__, x.readonly_export().__dlpack__):
        params = inspect.signature(f).parameters  # inspectable (array-api-tests' signature test)
        assert list(params) == ["stream", "max_version", "dl_device", "copy"]
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is None for p in params.values())
