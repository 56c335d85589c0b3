"""DLPack at the C++ level: the capsules DeviceArray.__dlpack__ (the one producer) builds, over views
made through the public API, and the private _core._dlpack_import/_dlpack_describe, checked against NumPy
and hand-built capsules."""

import contextlib
import ctypes
import gc

import numpy as np
import pytest

import hrxarray as hx
from hrxarray import _core

READ_ONLY, IS_COPIED = 1, 2


class Producer:
    """A minimal DLPack producer that hands out one prepared capsule."""

    def __init__(self, capsule, device=(1, 0)):
        self.capsule = capsule
        self.device = device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


def host_array(rt, n=64, dtype=np.float32):
    """A host-mapped DeviceArray of rt holding 0, 1, ..., n - 1, alone in its buffer."""
    return hx.asarray(np.arange(n).astype(dtype), placement=hx.Shared(rt.npu()))


def export(x, *, versioned=True, copy=None):
    return x.__dlpack__(max_version=(1, 0) if versioned else None, copy=copy)


def as_numpy(x, **kw):
    return np.from_dlpack(Producer(export(x, **kw)))


def leases(x):
    return x.buffer._state()["host_leases"]


def describe(x, **kw):
    return _core._dlpack_describe(export(x, **kw))


@contextlib.contextmanager
def mapped(buffer, offset, shape, strides, dtype, write=False):
    """A NumPy view of an imported tensor (strides in elements) under a host guard of its buffer."""
    dtype = np.dtype(dtype)
    with (buffer.map_write() if write else buffer.map_read()) as raw:
        yield np.ndarray(shape, dtype, buffer=raw, offset=offset, strides=[s * dtype.itemsize for s in strides])


# --- export -----------------------------------------------------------------


def test01_export_roundtrip_through_numpy(rt):
    x = host_array(rt, 32)
    a = as_numpy(x.reshape(4, 8))
    assert a.shape == (4, 8) and a.dtype == np.float32 and a.flags.writeable
    a[...] = -np.arange(32, dtype=np.float32).reshape(4, 8)
    np.testing.assert_array_equal(as_numpy(x), -np.arange(32, dtype=np.float32))


def test02_export_is_zero_copy(rt):
    x = host_array(rt, 64, np.int32)
    cap = export(x[4:12])
    info = _core._dlpack_describe(cap)
    a = np.from_dlpack(Producer(cap))
    b = as_numpy(x)
    assert a.ctypes.data == info["data"] == b.ctypes.data + 16
    a[3] = 42
    assert b[7] == 42
    b[4] = -1
    assert a[0] == -1


def test03_capsule_fields(rt):
    x = host_array(rt, 64, np.uint16)
    v = x[2:14].reshape(2, 6)[:, ::2]  # element [0, 0] 4 bytes in, strides (6, 2) elements
    info = describe(v)
    assert info["name"] == "dltensor_versioned" and info["version"] == (1, 1)
    assert info["device"] == (1, 0) and info["dtype"] == (1, 16, 1)
    assert info["shape"] == (2, 3) and info["strides"] == (6, 2) and info["byte_offset"] == 0
    assert info["data"] == describe(x)["data"] + 4
    legacy = describe(host_array(rt, 2, np.int8), versioned=False)
    assert legacy["name"] == "dltensor" and legacy["version"] is None


@pytest.mark.parametrize(
    "dtype, code",
    [(np.bool_, (6, 8, 1)), (np.int8, (0, 8, 1)), (np.int64, (0, 64, 1)), (np.uint32, (1, 32, 1)),
     (np.float16, (2, 16, 1)), (np.float32, (2, 32, 1)), (np.float64, (2, 64, 1)),
     (np.complex64, (5, 64, 1)), (np.complex128, (5, 128, 1))],
)
def test04_dtype_codes_and_numpy_roundtrip(rt, dtype, code):
    x = host_array(rt, 4, dtype)
    assert describe(x)["dtype"] == code
    a = as_numpy(x)
    assert a.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(a, np.arange(4).astype(dtype))


def test05_strided_and_non_contiguous_views(rt):
    base = host_array(rt, 32).reshape(4, 8)
    ref = np.arange(32, dtype=np.float32).reshape(4, 8)
    for key in [(slice(None), slice(None, None, 2)), (slice(1, 3), slice(1, 4)), (0, slice(None, None, -1)),
                (slice(None, None, -2), slice(5, 0, -3))]:
        v = base[key]
        np.testing.assert_array_equal(as_numpy(v), ref[key])
        assert describe(v)["strides"] == tuple(s // 4 for s in ref[key].strides)  # negative strides too
    np.testing.assert_array_equal(as_numpy(base.T), ref.T)
    assert describe(base.T)["strides"] == (1, 8)


def test06_zero_dim_export(rt):
    x = host_array(rt, 4, np.float64)
    cap = export(x[1])
    info = _core._dlpack_describe(cap)
    assert info["ndim"] == 0 and info["strides"] is None and info["shape"] == ()
    assert info["data"] == describe(x)["data"] + 8
    a = np.from_dlpack(Producer(cap))
    assert a.shape == () and a == 1.0


def test07_bfloat16_export(rt):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    vals = np.array([1.5, -2.0, 3.25], dtype=ml_dtypes.bfloat16)
    x = hx.asarray(vals, placement=hx.Shared(rt.npu()))
    cap = export(x)
    assert _core._dlpack_describe(cap)["dtype"] == (4, 16, 1)
    # NumPy <= 2.4 cannot import (kDLBfloat, 16): check the capsule through our own import.
    imported, offset, shape, strides, dtype, readonly = _core._dlpack_import(cap)
    assert (offset, shape, strides, dtype, readonly) == (0, (3,), (1,), "bfloat16", False)
    with mapped(imported, offset, shape, strides, np.uint16) as back:
        np.testing.assert_array_equal(back.view(ml_dtypes.bfloat16), vals)


def test08_read_only_and_copied_flags(rt):
    ro = np.arange(4.0)
    ro.flags.writeable = False
    x = hx.from_dlpack(ro)  # a read-only import
    cap = export(x)
    assert _core._dlpack_describe(cap)["flags"] == READ_ONLY
    a = np.from_dlpack(Producer(cap))
    assert not a.flags.writeable and a.ctypes.data == ro.ctypes.data
    del a
    gc.collect()
    assert leases(x) == 0
    assert describe(host_array(rt, 4), copy=True)["flags"] == IS_COPIED
    # A copy is the consumer's own, writable even when the source is read-only.
    copied = describe(x, copy=True)
    assert copied["flags"] == IS_COPIED and copied["data"] != ro.ctypes.data
    # The legacy struct has no flags: a read-only array is refused rather than exported as writable.
    with pytest.raises(BufferError, match="read-only"):
        export(x, versioned=False)
    gc.collect()
    assert leases(x) == 0
    assert _core._dlpack_import(export(x))[5] is True


@pytest.mark.parametrize("versioned", [True, False])
def test09_never_consumed_capsule_frees_and_releases_lease(rt, versioned):
    x = host_array(rt, 4)
    cap = export(x, versioned=versioned)
    assert leases(x) == 1
    del cap
    gc.collect()
    assert leases(x) == 0


def test10_consumed_capsule_lease_lasts_until_consumer_dies(rt):
    x = host_array(rt, 4)
    cap = export(x)
    a = np.from_dlpack(Producer(cap))
    del cap
    gc.collect()
    assert leases(x) == 1
    del a
    gc.collect()
    assert leases(x) == 0


def test11_storage_outlives_array_while_exported(rt):
    base = rt.statistics().live_bytes
    x = hx.zeros(16, np.float32, placement=hx.Shared(rt.npu()))
    a = as_numpy(x)
    a[...] = 5
    del x
    gc.collect()
    assert rt.statistics().live_bytes == base + 64
    np.testing.assert_array_equal(a, 5)
    del a
    gc.collect()
    assert rt.statistics().live_bytes == base


def test12_writable_export_conflicts_with_host_write_mapping(rt):
    x = host_array(rt, 4)
    cap = export(x)
    with pytest.raises(hx.BusyError, match="lease"):
        x.buffer.map_write()
    del cap
    gc.collect()
    x.buffer.map_write().release()


def test13_export_errors_change_nothing(rt):
    x = host_array(rt, 16)
    with pytest.raises(BufferError, match="copy=False"):
        hx.zeros(4, placement=hx.GpuLocal()).__dlpack__(dl_device=(1, 0), copy=False)
    with pytest.raises(BufferError, match="bfp16"):
        export(x.astype(hx.bfp16))
    with pytest.raises(BufferError, match="cannot export to device"):
        x.__dlpack__(dl_device=(10, 0))
    with pytest.raises(TypeError, match="max_version"):
        x.__dlpack__(max_version=1)
    with pytest.raises(ValueError, match="stream"):
        x.__dlpack__(stream=3)
    assert leases(x) == 0


def test13b_refused_copied_export_changes_nothing(rt):
    """A copying export (copy=True) checks the copy before it allocates: under a live write mapping of the
    array it is BusyError, and no statistic changed."""
    x = host_array(rt, 16)
    before = rt.statistics().as_dict()
    with x.buffer.map_write():
        with pytest.raises(hx.BusyError, match="__dlpack__"):
            x.__dlpack__(max_version=(1, 0), copy=True)
        assert rt.statistics().as_dict() == before
    assert leases(x) == 0

def test14_export_of_poisoned_storage_fails(rt):
    x = host_array(rt, 4)
    x.buffer._poison("boom")
    with pytest.raises(hx.DeviceLostError):
        export(x)
    assert leases(x) == 0


# --- import -----------------------------------------------------------------


@pytest.mark.parametrize("kwargs", [{}, {"max_version": (1, 0)}], ids=["legacy", "versioned"])
def test20_import_numpy_capsule_zero_copy(rt, kwargs):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    cap = x.__dlpack__(**kwargs)
    b, offset, shape, strides, dtype, readonly = _core._dlpack_import(cap, rt)
    # A legacy capsule cannot say writable: read-only, as numpy.from_dlpack imports it.
    assert (offset, shape, strides, dtype) == (0, (3, 4), (4, 1), "float32")
    assert readonly is (not kwargs) is (not np.from_dlpack(Producer(x.__dlpack__(**kwargs))).flags.writeable)
    assert b.placement == hx.HostVisible() and b.nbytes == x.nbytes
    if readonly:  # the storage refuses a host write mapping of itself
        with pytest.raises(ValueError, match="is read-only"):
            b.map_write()
    with mapped(b, offset, shape, strides, dtype, write=not readonly) as y:
        assert y.ctypes.data == x.ctypes.data and y.flags.writeable is not readonly
        if not readonly:
            y[1, 2] = -7
            assert x[1, 2] == -7
        x[0, 0] = 99
        assert y[0, 0] == 99


def test21_import_producer_object_and_default_runtime():
    x = np.arange(5, dtype=np.int64)
    b, offset, shape, strides, dtype, readonly = _core._dlpack_import(x)
    assert b.runtime is hx.default_runtime() or b.runtime == hx.default_runtime()
    assert (shape, dtype) == ((5,), "int64")
    with mapped(b, offset, shape, strides, dtype) as y:
        np.testing.assert_array_equal(y, x)


def test22_used_capsule_is_refused(rt):
    cap = np.arange(4).__dlpack__(max_version=(1, 0))
    _core._dlpack_import(cap, rt)
    with pytest.raises(ValueError, match="already consumed"):
        _core._dlpack_import(cap, rt)
    cap2 = np.arange(4).__dlpack__()
    np.from_dlpack(Producer(cap2))
    with pytest.raises(ValueError, match="already consumed"):
        _core._dlpack_import(cap2, rt)


def test23_non_contiguous_and_sliced_numpy(rt):
    base = np.arange(48, dtype=np.int16).reshape(6, 8)
    x = base[1:5:2, 1::3]
    b, offset, shape, strides, dtype, _ = _core._dlpack_import(x, rt)
    assert strides == (16, 3) and shape == (2, 3)
    assert b.nbytes == ((2 - 1) * 16 + (3 - 1) * 3 + 1) * 2  # base to the end of the extent
    with mapped(b, offset, shape, strides, dtype, write=True) as y:
        np.testing.assert_array_equal(y, x)
        y[1, 1] = -1
    assert base[3, 4] == -1


def test24_read_only_numpy_import(rt):
    x = np.arange(4.0)
    x.flags.writeable = False
    assert _core._dlpack_import(x.__dlpack__(max_version=(1, 0)), rt)[5] is True


def test25_negative_strides_refused(rt):
    x = np.arange(4.0)[::-1]
    cap = x.__dlpack__(max_version=(1, 0))
    with pytest.raises(BufferError, match="negative strides"):
        _core._dlpack_import(cap, rt)
    assert "used" not in repr(cap)  # refused: the producer still owns it


def test26_statistics_count_imports(rt):
    before = rt.statistics()
    x = np.zeros(100, dtype=np.uint8)
    b = _core._dlpack_import(x, rt)[0]
    after = rt.statistics()
    assert after.imports == before.imports + 1
    assert after.live_bytes == before.live_bytes + 100
    del b
    gc.collect()
    assert rt.statistics().live_bytes == before.live_bytes


def test27_imported_storage_keeps_producer_alive(rt):
    x = np.arange(1000, dtype=np.float64)
    b, offset, shape, strides, dtype, _ = _core._dlpack_import(x, rt)
    del x
    gc.collect()
    with mapped(b, offset, shape, strides, dtype) as y:
        np.testing.assert_array_equal(y, np.arange(1000, dtype=np.float64))


def test28_reimport_of_own_export(rt):
    x = host_array(rt, 40)
    cap = export(x[2:34].reshape(4, 8)[:, ::2])  # 8 bytes in, strides (8, 2) elements
    b, offset, shape, strides, dtype, _ = _core._dlpack_import(cap)
    assert leases(x) == 1 and (offset, shape, strides) == (0, (4, 4), (8, 2))
    with mapped(b, offset, shape, strides, dtype) as y:
        np.testing.assert_array_equal(y, np.arange(2, 34, dtype=np.float32).reshape(4, 8)[:, ::2])
    del b, y
    gc.collect()
    assert leases(x) == 0



def test29_refused_copy_of_own_array_changes_nothing(rt):
    """from_dlpack of a DeviceArray into another placement checks the copy before it allocates: a refused
    call changes no statistic of either runtime (no engine binds NpuLocal and GpuLocal; a placement on an
    NPU of another runtime is refused as x.to() refuses it)."""
    x = hx.asarray(np.arange(4, dtype=np.float32), placement=hx.NpuLocal(rt.npu()))
    other = hx.Runtime()
    before, before_other = rt.statistics().as_dict(), other.statistics().as_dict()
    with pytest.raises(hx.UnsupportedError, match="from_dlpack: no engine binds both"):
        hx.from_dlpack(x, placement=hx.GpuLocal())
    with pytest.raises(ValueError, match="from_dlpack: .*another runtime"):
        hx.from_dlpack(x, placement=hx.Shared(other.npu()))
    assert rt.statistics().as_dict() == before and other.statistics().as_dict() == before_other
    y = hx.from_dlpack(x, placement=hx.Shared(rt.npu()))
    np.testing.assert_array_equal(np.asarray(y), np.arange(4, dtype=np.float32))

# --- a hand-built producer: byte_offset, NULL strides, devices, deleter count ---


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                                     ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER),
                                     ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class HandMade:
    """A versioned capsule over a NumPy array with a chosen byte_offset, strides and device."""

    def __init__(self, array, byte_offset, shape, strides=None, device=(1, 0), flags=0):
        self.array, self.deleted = array, 0
        self.shape = (ctypes.c_int64 * len(shape))(*shape)
        self.strides = (ctypes.c_int64 * len(shape))(*strides) if strides is not None else None
        self.deleter = DELETER(self._delete)
        t = DLTensor(array.ctypes.data, DLDevice(*device), len(shape), DLDataType(2, 32, 1), self.shape,
                     self.strides, byte_offset)
        self.managed = DLManagedTensorVersioned(1, 0, None, self.deleter, flags, t)

    def _delete(self, _):
        self.deleted += 1

    def capsule(self):
        # No capsule destructor: the test object owns the struct.
        return _capsule_new(ctypes.addressof(self.managed), b"dltensor_versioned", None)


def test30_byte_offset_and_null_strides(rt):
    x = np.arange(16, dtype=np.float32)
    p = HandMade(x, byte_offset=8, shape=(2, 3))  # NULL strides: compact row-major
    b, offset, shape, strides, dtype, readonly = _core._dlpack_import(p.capsule(), rt)
    assert (offset, shape, strides, dtype, readonly) == (8, (2, 3), (3, 1), "float32", False)
    assert b.nbytes == 8 + 6 * 4
    with mapped(b, offset, shape, strides, dtype) as y:
        np.testing.assert_array_equal(y, x[2:8].reshape(2, 3))
    assert p.deleted == 0
    del b, y
    gc.collect()
    assert p.deleted == 1


def test31_deleter_called_once_read_only_flag(rt):
    x = np.arange(8, dtype=np.float32)
    p = HandMade(x, byte_offset=0, shape=(4,), strides=(2,), flags=READ_ONLY)
    cap = p.capsule()
    b, _, _, strides, _, readonly = _core._dlpack_import(cap, rt)
    assert readonly is True and strides == (2,)
    with pytest.raises(ValueError, match="already consumed"):
        _core._dlpack_import(cap, rt)
    del b
    gc.collect()
    assert p.deleted == 1


def test32_non_cpu_device_refused(rt):
    x = np.arange(4, dtype=np.float32)
    p = HandMade(x, byte_offset=0, shape=(4,), device=(10, 0))
    with pytest.raises(BufferError, match="CPU"):
        _core._dlpack_import(p.capsule(), rt)
    with pytest.raises(BufferError, match="CPU"):
        _core._dlpack_import(Producer(p.capsule(), device=(10, 0)), rt)
    assert p.deleted == 0


def test33_empty_tensor_import(rt):
    x = np.zeros((0, 3), dtype=np.float32)
    b, offset, shape, strides, dtype, _ = _core._dlpack_import(x, rt)
    assert shape == (0, 3) and b.nbytes == 0 and offset == 0


def test34_not_a_capsule(rt):
    with pytest.raises(TypeError, match="__dlpack__"):
        _core._dlpack_import(object(), rt)


def test35_export_import_loop_does_not_leak(rt):
    x = host_array(rt, 8)
    base = rt.statistics().live_bytes
    for i in range(2000):
        cap = export(x, versioned=bool(i % 2))
        if i % 3 == 0:
            np.from_dlpack(Producer(cap))
        elif i % 3 == 1:
            _core._dlpack_import(cap, rt)
        del cap
        _core._dlpack_import(np.arange(4), rt)
    gc.collect()
    assert leases(x) == 0
    assert rt.statistics().live_bytes == base


# --- torch (optional) ---------------------------------------------------------


def test40_torch_roundtrip(rt):
    torch = pytest.importorskip("torch")
    x = host_array(rt, 8)
    t = torch.from_dlpack(Producer(export(x)))
    t[2] = -3.0
    assert as_numpy(x)[2] == -3.0
    src = torch.arange(6, dtype=torch.float32)
    b, offset, shape, strides, dtype, _ = _core._dlpack_import(src)
    with mapped(b, offset, shape, strides, dtype, write=True) as y:
        y[0] = 42
    assert src[0].item() == 42


def test50_exports_and_imports_alive_at_interpreter_exit(tmp_path):
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        """
        import numpy as np, hrxarray as hx
        from hrxarray import _core

        class P:
            def __init__(self, c): self.c = c
            def __dlpack__(self, **kw): return self.c
            def __dlpack_device__(self): return (1, 0)

        rt = hx.Runtime()
        x = hx.asarray(np.arange(4.0), placement=hx.Shared(rt.npu()))
        kept = np.from_dlpack(P(x.__dlpack__(max_version=(1, 0))))
        unused = x[1:].__dlpack__()
        imported = _core._dlpack_import(np.arange(10.0), rt)
        again = _core._dlpack_import(hx.from_dlpack(np.arange(10.0)).__dlpack__(max_version=(1, 0)), rt)
        print("ok")
        """
    )
    # cwd outside the source tree, whose hrxarray/ has no compiled module
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
