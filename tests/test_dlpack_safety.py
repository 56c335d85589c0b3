"""BusyErrors that name a live DLPack export or zero-copy view say how to end it."""

import gc

import numpy as np
import pytest

import hrxarray as hx


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
