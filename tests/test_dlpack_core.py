"""The C++ DLPack primitives: _core._dlpack_export, _dlpack_import, _dlpack_describe."""

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


def export(buf, shape, dtype=np.float32, *, offset=0, strides=None, readonly=False, copied=False, versioned=True):
    if strides is None:
        strides = tuple(int(np.prod(shape[i + 1 :])) for i in range(len(shape)))
    return _core._dlpack_export(buf, offset, tuple(shape), tuple(strides), np.dtype(dtype), readonly, copied, versioned)


def as_numpy(buf, shape, dtype=np.float32, **kw):
    return np.from_dlpack(Producer(export(buf, shape, dtype, **kw)))


def leases(buf):
    return buf._state()["host_leases"]


@pytest.fixture
def buf(rt):
    return rt.allocate(256, hx.HostVisible())


# --- export -----------------------------------------------------------------


def test01_export_roundtrip_through_numpy(buf):
    a = as_numpy(buf, (4, 8))
    assert a.shape == (4, 8) and a.dtype == np.float32 and a.flags.writeable
    a[...] = np.arange(32, dtype=np.float32).reshape(4, 8)
    b = as_numpy(buf, (32,))
    np.testing.assert_array_equal(b, np.arange(32, dtype=np.float32))


def test02_export_is_zero_copy(buf):
    cap = export(buf, (8,), np.int32, offset=16)
    info = _core._dlpack_describe(cap)
    a = np.from_dlpack(Producer(cap))
    b = as_numpy(buf, (64,), np.int32)
    assert a.ctypes.data == info["data"] == b.ctypes.data + 16
    a[3] = 42
    assert b[7] == 42
    b[4] = -1
    assert a[0] == -1


def test03_capsule_fields(buf):
    info = _core._dlpack_describe(export(buf, (2, 3), np.uint16, offset=4, strides=(6, 2)))
    assert info["name"] == "dltensor_versioned" and info["version"] == (1, 1)
    assert info["device"] == (1, 0) and info["dtype"] == (1, 16, 1)
    assert info["shape"] == (2, 3) and info["strides"] == (6, 2) and info["byte_offset"] == 0
    legacy = _core._dlpack_describe(export(buf, (2,), np.int8, versioned=False))
    assert legacy["name"] == "dltensor" and legacy["version"] is None


@pytest.mark.parametrize(
    "dtype, code",
    [(np.bool_, (6, 8, 1)), (np.int8, (0, 8, 1)), (np.int64, (0, 64, 1)), (np.uint32, (1, 32, 1)),
     (np.float16, (2, 16, 1)), (np.float32, (2, 32, 1)), (np.float64, (2, 64, 1))],
)
def test04_dtype_codes_and_numpy_roundtrip(buf, dtype, code):
    assert _core._dlpack_describe(export(buf, (4,), dtype))["dtype"] == code
    a = as_numpy(buf, (4,), dtype)
    assert a.dtype == np.dtype(dtype)


def test05_strided_and_non_contiguous_views(buf):
    base = as_numpy(buf, (4, 8))
    base[...] = np.arange(32, dtype=np.float32).reshape(4, 8)
    v = as_numpy(buf, (4, 4), strides=(8, 2))
    np.testing.assert_array_equal(v, base[:, ::2])
    t = as_numpy(buf, (8, 4), strides=(1, 8))  # a transpose
    np.testing.assert_array_equal(t, base.T)
    inner = as_numpy(buf, (2, 3), offset=4 * 9, strides=(8, 1))
    np.testing.assert_array_equal(inner, base[1:3, 1:4])
    rev = as_numpy(buf, (8,), offset=4 * 7, strides=(-1,))  # negative strides are exportable
    np.testing.assert_array_equal(rev, base[0, ::-1])


def test06_zero_dim_export(buf):
    cap = export(buf, (), np.float64, offset=8)
    info = _core._dlpack_describe(cap)
    assert info["ndim"] == 0 and info["strides"] is None
    a = np.from_dlpack(Producer(cap))
    assert a.shape == () and a == 0.0


def test07_bfloat16_export(buf):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    vals = np.array([1.5, -2.0, 3.25], dtype=ml_dtypes.bfloat16)
    as_numpy(buf, (3,), np.uint16)[...] = vals.view(np.uint16)
    cap = export(buf, (3,), ml_dtypes.bfloat16)
    assert _core._dlpack_describe(cap)["dtype"] == (4, 16, 1)
    # NumPy <= 2.4 cannot import (kDLBfloat, 16): check the capsule through our own import.
    imported, offset, shape, strides, dtype, readonly = _core._dlpack_import(cap)
    assert (offset, shape, strides, dtype, readonly) == (0, (3,), (1,), "bfloat16", False)
    back = as_numpy(imported, (3,), np.uint16).view(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(back, vals)


def test08_read_only_and_copied_flags(buf):
    cap = export(buf, (4,), readonly=True)
    assert _core._dlpack_describe(cap)["flags"] == READ_ONLY
    a = np.from_dlpack(Producer(cap))
    assert not a.flags.writeable
    assert _core._dlpack_describe(export(buf, (4,), copied=True))["flags"] == IS_COPIED
    assert _core._dlpack_describe(export(buf, (4,), readonly=True, copied=True))["flags"] == READ_ONLY | IS_COPIED
    # The legacy struct has no flags: a read-only legacy export is allowed and unsignalled.
    assert _core._dlpack_describe(export(buf, (4,), readonly=True, versioned=False))["name"] == "dltensor"
    assert _core._dlpack_import(export(buf, (4,), readonly=True))[5] is True


@pytest.mark.parametrize("versioned", [True, False])
def test09_never_consumed_capsule_frees_and_releases_lease(buf, versioned):
    cap = export(buf, (4,), versioned=versioned)
    assert leases(buf) == 1
    del cap
    gc.collect()
    assert leases(buf) == 0


def test10_consumed_capsule_lease_lasts_until_consumer_dies(buf):
    cap = export(buf, (4,))
    a = np.from_dlpack(Producer(cap))
    del cap
    gc.collect()
    assert leases(buf) == 1
    del a
    gc.collect()
    assert leases(buf) == 0


def test11_storage_outlives_buffer_handle_while_exported(rt):
    buf = rt.allocate(64, hx.HostVisible())
    a = as_numpy(buf, (16,))
    a[...] = 5
    del buf
    gc.collect()
    assert rt.statistics().live_bytes == 64
    np.testing.assert_array_equal(a, 5)
    del a
    gc.collect()
    assert rt.statistics().live_bytes == 0


def test12_writable_export_conflicts_with_host_write_mapping(buf):
    cap = export(buf, (4,))
    with pytest.raises(hx.BusyError, match="lease"):
        buf.map_write()
    del cap
    gc.collect()
    buf.map_write().release()


def test13_export_errors(rt, buf):
    with pytest.raises(BufferError, match="not host mapped"):
        export(rt.allocate(64, hx.GpuLocal()), (4,))
    with pytest.raises(BufferError, match="datetime64"):
        export(buf, (4,), np.dtype("datetime64[s]"))
    with pytest.raises(BufferError, match="byte order"):
        export(buf, (4,), np.dtype(">f4"))
    with pytest.raises(ValueError, match="outside"):
        export(buf, (65,))
    with pytest.raises(ValueError, match="outside"):
        export(buf, (4,), strides=(-1,))
    with pytest.raises(ValueError, match="dimensions"):
        _core._dlpack_export(buf, 0, (4,), (1, 1), np.float32, False, False, True)
    assert leases(buf) == 0


def test14_export_of_poisoned_storage_fails(buf):
    buf._poison("boom")
    with pytest.raises(hx.DeviceLostError):
        export(buf, (4,))
    assert leases(buf) == 0


# --- import -----------------------------------------------------------------


def read_back(buffer, offset, shape, strides, dtype, readonly=False):
    """A NumPy array of an imported tensor, through a fresh export."""
    return np.from_dlpack(Producer(_core._dlpack_export(buffer, offset, shape, strides, np.dtype(dtype),
                                                        readonly, False, True)))


@pytest.mark.parametrize("kwargs", [{}, {"max_version": (1, 0)}], ids=["legacy", "versioned"])
def test20_import_numpy_capsule_zero_copy(rt, kwargs):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    cap = x.__dlpack__(**kwargs)
    b, offset, shape, strides, dtype, readonly = _core._dlpack_import(cap, rt)
    # A legacy capsule cannot say writable: read-only, as numpy.from_dlpack imports it.
    assert (offset, shape, strides, dtype) == (0, (3, 4), (4, 1), "float32")
    assert readonly is (not kwargs) is (not np.from_dlpack(Producer(x.__dlpack__(**kwargs))).flags.writeable)
    assert b.placement == hx.HostVisible() and b.nbytes == x.nbytes
    if readonly:  # the storage refuses a writable export of itself
        with pytest.raises(ValueError, match="is read-only"):
            read_back(b, offset, shape, strides, dtype)
    y = read_back(b, offset, shape, strides, dtype, readonly)
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
    np.testing.assert_array_equal(read_back(b, offset, shape, strides, dtype), x)


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
    y = read_back(b, offset, shape, strides, dtype)
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
    y = read_back(b, offset, shape, strides, dtype)
    np.testing.assert_array_equal(y, np.arange(1000, dtype=np.float64))


def test28_reimport_of_own_export(buf):
    cap = export(buf, (4, 4), strides=(8, 2), offset=8)
    b, offset, shape, strides, dtype, _ = _core._dlpack_import(cap)
    assert leases(buf) == 1 and (offset, strides) == (0, (8, 2))
    del b
    gc.collect()
    assert leases(buf) == 0


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
    y = read_back(b, offset, shape, strides, dtype)
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


def test35_export_import_loop_does_not_leak(rt, buf):
    base = rt.statistics().live_bytes
    for i in range(2000):
        cap = export(buf, (8,), versioned=bool(i % 2))
        if i % 3 == 0:
            np.from_dlpack(Producer(cap))
        elif i % 3 == 1:
            _core._dlpack_import(cap, rt)
        del cap
        _core._dlpack_import(np.arange(4), rt)
    gc.collect()
    assert leases(buf) == 0
    assert rt.statistics().live_bytes == base


# --- torch (optional) ---------------------------------------------------------


def test40_torch_roundtrip(buf):
    torch = pytest.importorskip("torch")
    t = torch.from_dlpack(Producer(export(buf, (8,))))
    t[2] = 3.0
    assert as_numpy(buf, (8,))[2] == 3.0
    src = torch.arange(6, dtype=torch.float32)
    b, offset, shape, strides, dtype, _ = _core._dlpack_import(src)
    y = read_back(b, offset, shape, strides, dtype)
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
        buf = rt.allocate(64, hx.HostVisible())
        kept = np.from_dlpack(P(_core._dlpack_export(buf, 0, (4,), (1,), np.float32, False, False, True)))
        unused = _core._dlpack_export(buf, 0, (4,), (1,), np.float32, True, False, False)
        imported = _core._dlpack_import(np.arange(10.0), rt)
        again = _core._dlpack_import(_core._dlpack_export(imported[0], 0, (10,), (1,), np.float64, False, False, True), rt)
        print("ok")
        """
    )
    # cwd outside the source tree, whose hrxarray/ has no compiled module
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
