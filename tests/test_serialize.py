"""Deserialising a DeviceArray trusts nothing of what arrives (issue 24, item 3).

_serialize.loads is the one way in for pickle and for distributed's "dask" family: a header that
dumps would not write, or a payload of the wrong length, gets one HeaderError (a ValueError) naming
the field and its value, and nothing is allocated. Valid messages of every dtype and placement kind
still round-trip.
"""

import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hrxarray as hx
from hrxarray import _serialize
from hrxarray._serialize import HeaderError

ml_dtypes = pytest.importorskip("ml_dtypes")

BF16 = np.dtype(ml_dtypes.bfloat16)
NUMPY_DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128, BF16]
KINDS = ["Shared", "NpuLocal", "GpuLocal", "HostVisible"]


def placement(kind):
    return {"Shared": lambda: hx.Shared(hx.npu()), "NpuLocal": lambda: hx.NpuLocal(hx.npu()),
            "GpuLocal": hx.GpuLocal, "HostVisible": hx.HostVisible}[kind]()


def sample(dtype, shape, kind):
    """A DeviceArray of `dtype` (or hx.bfp16) and `shape` with varied values, in a placement of `kind`."""
    count = int(np.prod(shape))
    values = (np.arange(count) % 7 - 3).reshape(shape)
    if dtype is hx.bfp16:
        return hx.asarray(values.astype(np.float32), placement=placement(kind)).astype(hx.bfp16)
    return hx.asarray(values.astype(dtype), placement=placement(kind))


def raw(x):
    """x's serialised bytes as NumPy sees them (bfp16: its blocks)."""
    return hx.to_numpy(x.blocks() if x.dtype is hx.bfp16 else x)


def allocations():
    return hx.default_runtime().statistics().allocations


def refused(header, frame, *field_and_value):
    """loads(header, frame) raises HeaderError whose message holds each of field_and_value; nothing is allocated."""
    before = allocations()
    with pytest.raises(HeaderError) as info:
        _serialize.loads(header, frame)
    for text in field_and_value:
        assert text in str(info.value)
    assert isinstance(info.value, ValueError)
    assert allocations() == before
    return info.value


# --- the three reported cases -------------------------------------------------------------------------


def test_a_shape_of_minus_one_is_refused_not_inferred():
    header, frame = _serialize.dumps(hx.arange(6))
    refused({**header, "shape": [-1]}, frame, "'shape'", "[-1]", "-1")


    class Tampered:
        def __reduce__(self):
            return _serialize._rebuild, ({**header, "shape": [-1]}, frame)

    # The same through pickle: a pickled DeviceArray rebuilds through _rebuild, which is loads.
    data = pickle.dumps(Tampered())
    with pytest.raises(HeaderError, match="'shape' = \\[-1\\]"):
        pickle.loads(data)


def test_a_shape_that_does_not_fit_the_payload_names_both_not_numpy():
    header, frame = _serialize.dumps(hx.arange(6))
    err = refused({**header, "shape": [3, 4]}, frame, "payload has 48 bytes", "[3, 4]", "need 96")
    assert "reshape" not in str(err)


def test_dask_frames_must_be_exactly_one():
    header, frame = _serialize.dumps(hx.arange(6))
    before = allocations()
    for frames in ([], [frame, frame], frame.tobytes()):
        with pytest.raises(HeaderError, match="exactly 1 frame"):
            _serialize.loads_frames(header, frames)
    assert allocations() == before
    assert hx.to_numpy(_serialize.loads_frames(header, [frame])).tolist() == list(range(6))


def test_dask_deserialise_hook_refuses_an_empty_frame_list():
    hooks = pytest.importorskip("hrxarray._dask_hooks")
    header, _ = _serialize.dumps(hx.arange(6))
    with pytest.raises(HeaderError, match="exactly 1 frame, got 0"):
        hooks._deserialize_frames(header, [])


# --- each field ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("field, value, text", [
    ("format", 2, "'format' = 2"),
    ("format", True, "'format' = True"),
    ("format", "1", "'format' = '1'"),
    ("dtype", "V2", "'dtype' = 'V2'"),
    ("dtype", "object", "'dtype' = 'object'"),
    ("dtype", 7, "'dtype' = 7"),
    ("placement", "Elsewhere", "'placement' = 'Elsewhere'"),
    ("placement", None, "'placement' = None"),
    ("shape", "6", "'shape' = '6'"),
    ("shape", 6, "'shape' = 6"),
    ("shape", [6.0], "dimension 6.0"),
    ("shape", [True] * 6, "dimension True"),
    ("shape", [1] * 65, "at most 64"),
    ("shape", [2**62, 2**62, 0], "more elements"),
])
def test_a_bad_field_is_named_with_its_value(field, value, text):
    header, frame = _serialize.dumps(hx.arange(6))
    refused({**header, field: value}, frame, text)


@pytest.mark.parametrize("field", ["format", "dtype", "shape", "placement"])
def test_a_missing_field_is_named(field):
    header, frame = _serialize.dumps(hx.arange(6))
    refused({k: v for k, v in header.items() if k != field}, frame, f"no field {field!r}")


def test_an_extra_field_is_named_and_a_non_mapping_refused():
    header, frame = _serialize.dumps(hx.arange(6))
    refused({**header, "strides": [8]}, frame, "'strides' = [8]", "not a field")
    refused([header], frame, "'header'")


def test_bfp16_needs_whole_blocks_and_their_bytes():
    header, frame = _serialize.dumps(sample(hx.bfp16, (2, 16), "Shared"))
    assert frame.nbytes == 2 * 2 * 9
    refused({**header, "shape": [2, 12]}, frame, "whole blocks of 8")
    refused({**header, "shape": []}, frame, "whole blocks of 8")
    refused({**header, "shape": [4, 16]}, frame, "need 72", "8 block(s) of 9 bytes")
    refused(header, frame[:-1], "payload has 35 bytes", "need 36")
    refused(header, np.concatenate([frame, frame[:9]]), "payload has 45 bytes")


def test_a_frame_that_is_not_bytes_is_refused():
    header, frame = _serialize.dumps(hx.arange(6))
    refused(header, [0] * 48, "list", "not a bytes-like frame")
    refused(header, np.zeros(24, BF16), "ndarray", "not a bytes-like frame")  # no buffer export for bfloat16
    refused(header, np.zeros(96, np.uint8)[::2], "not one contiguous frame")


# --- tampering, field by field ------------------------------------------------------------------------

junk = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | st.text(max_size=8)
    | st.sampled_from(["bfp16", "bfloat16", "int8", "float64", "Shared", "GpuLocal", "HostVisible"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=2),
    max_leaves=6,
)
shapes = st.lists(st.integers(-2, 9), max_size=4) | st.lists(junk, max_size=3)


@st.composite
def tampered(draw):
    """A valid (header, frames) of a random array, then one change to a field, the key set or the payload."""
    dtype = draw(st.sampled_from(NUMPY_DTYPES + [hx.bfp16]))
    shape = tuple(draw(st.lists(st.integers(0, 3), max_size=3)))
    if dtype is hx.bfp16:
        shape = shape + (8 * draw(st.integers(0, 2)),)
    x = sample(dtype, shape, draw(st.sampled_from(KINDS)))
    header, frame = _serialize.dumps(x)
    frames = [frame]
    change = draw(st.sampled_from(["field", "shape", "delete", "extra", "truncate", "extend", "frames"]))
    if change == "field":
        header[draw(st.sampled_from(list(header)))] = draw(junk)
    elif change == "shape":
        header["shape"] = draw(shapes)
    elif change == "delete":
        del header[draw(st.sampled_from(list(header)))]
    elif change == "extra":
        header[draw(st.text(max_size=6))] = draw(junk)
    elif change == "truncate":
        frames = [frame[:draw(st.integers(0, max(frame.nbytes - 1, 0)))]]
    elif change == "extend":
        frames = [np.concatenate([frame, np.frombuffer(draw(st.binary(min_size=1, max_size=20)), np.uint8)])]
    else:
        frames = draw(st.lists(st.just(frame), max_size=3))
    return header, frames


@given(tampered())
def test_tampered_messages_round_trip_exactly_or_raise_header_error(message):
    header, frames = message
    before = allocations()
    try:
        y = _serialize.loads_frames(header, frames)
    except HeaderError as e:
        assert str(e).startswith("deserialize: ")
        assert allocations() == before
        return
    # Accepted: the header is one dumps could have written, and the array is exactly what it says.
    assert set(header) == {"format", "dtype", "shape", "placement"}
    assert y.shape == tuple(header["shape"])
    assert (y.dtype is hx.bfp16) if header["dtype"] == "bfp16" else (y.dtype.name == header["dtype"])
    assert type(y.placement).__name__ == header["placement"]
    assert raw(y).tobytes() == np.asarray(frames[0]).tobytes()


# --- valid messages still round-trip ------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", NUMPY_DTYPES + [hx.bfp16], ids=lambda d: getattr(d, "name", str(d)))
def test_every_dtype_and_placement_round_trips(dtype, kind):
    shape = (3, 16) if dtype is hx.bfp16 else (2, 3)
    x = sample(dtype, shape, kind)
    for y in (_serialize.loads(*_serialize.dumps(x)), pickle.loads(pickle.dumps(x)),
              pickle.loads(pickle.dumps(x, protocol=5))):
        assert y.shape == shape and type(y.placement).__name__ == kind
        assert (y.dtype is hx.bfp16) if dtype is hx.bfp16 else (y.dtype == np.dtype(dtype))
        assert raw(y).tobytes() == raw(x).tobytes()


def test_empty_and_zero_dimensional_arrays_round_trip():
    for x in (hx.asarray(np.float32(2.5)), hx.zeros((0, 3), np.int16), hx.zeros((0, 8), hx.bfp16)):
        y = _serialize.loads(*_serialize.dumps(x))
        assert y.shape == x.shape and raw(y).tobytes() == raw(x).tobytes()
