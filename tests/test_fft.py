"""hx.fft against numpy.fft: every transform over shapes, axes, lengths, norms and dtypes (Hypothesis),
complex64 kept complex64, the frequency and shift helpers, errors, lanes, asynchronous use and np.fft
dispatch."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.array_api import make_strategies_namespace

import hrxarray as hx

xps = make_strategies_namespace(hx, api_version="2024.12")  # Hypothesis knows versions up to 2024.12

N = hx.to_numpy
norms = st.sampled_from(["backward", "ortho", "forward"])
shapes = st.lists(st.integers(1, 9), min_size=1, max_size=3).map(tuple)
seeds = st.integers(0, 2**32 - 1)

C2C = ["fft", "ifft"]
R2C = ["rfft", "ihfft"]
C2R = ["irfft", "hfft"]


def data(seed, shape, dt):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if np.dtype(dt).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dt)


def tol(dt):
    return dict(rtol=1e-4, atol=1e-4) if np.dtype(dt) in (np.float32, np.complex64) else dict(rtol=1e-12, atol=1e-12)


@given(name=st.sampled_from(C2C + R2C + C2R), shape=shapes, seed=seeds, norm=norms, data_=st.data())
def test_one_dimensional_transforms(name, shape, seed, norm, data_):
    real_in = name in R2C
    dt = data_.draw(st.sampled_from([np.float32, np.float64] if real_in else
                                    [np.complex64, np.complex128, np.float32, np.float64]))
    a = data(seed, shape, dt)
    axis = data_.draw(st.integers(-len(shape), len(shape) - 1))
    m = shape[axis]
    if name in C2R and m < 2:
        n = data_.draw(st.integers(1, 12))  # the default 2 * (m - 1) would be 0
    else:
        n = data_.draw(st.none() | st.integers(1, 12))
    got = getattr(hx.fft, name)(hx.asarray(a), n=n, axis=axis, norm=norm)
    want = getattr(np.fft, name)(a, n=n, axis=axis, norm=norm)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    np.testing.assert_allclose(N(got), want, **tol(dt))


@given(name=st.sampled_from(["fftn", "ifftn", "rfftn", "irfftn"]), shape=shapes, seed=seeds, norm=norms,
       data_=st.data())
def test_n_dimensional_transforms(name, shape, seed, norm, data_):
    dt = data_.draw(st.sampled_from([np.float32, np.float64] if name == "rfftn" else
                                    [np.complex64, np.complex128, np.float64]))
    a = data(seed, shape, dt)
    axes = data_.draw(st.none() | st.lists(st.integers(0, len(shape) - 1), min_size=1, max_size=len(shape),
                                           unique=True))
    s = None
    if axes is not None and data_.draw(st.booleans()):
        s = [data_.draw(st.integers(1, 10)) for _ in axes]
    last = (axes or list(range(len(shape))))[-1]
    if name == "irfftn" and s is None and shape[last] < 2:
        s = [4] * len(axes or shape)
        axes = axes or list(range(len(shape)))
    got = getattr(hx.fft, name)(hx.asarray(a), s=s, axes=axes, norm=norm)
    want = getattr(np.fft, name)(a, s=s, axes=axes, norm=norm)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(N(got), want, **tol(dt))


@given(x=xps.arrays(xps.complex_dtypes(), xps.array_shapes(min_dims=1, max_dims=2, max_side=8),
                    elements=st.complex_numbers(max_magnitude=1e3, allow_nan=False, allow_infinity=False, width=64)))
def test_fft_round_trip_over_array_api_strategies(x):
    a = N(x)
    y = hx.fft.fft(x)
    assert y.dtype == x.dtype
    np.testing.assert_allclose(N(y), np.fft.fft(a), rtol=1e-4, atol=1e-2)
    np.testing.assert_allclose(N(hx.fft.ifft(y)), a, rtol=1e-4, atol=1e-2)


def test_complex64_stays_complex64_and_float32_gives_complex64():
    x = data(1, (64,), np.complex64)
    assert hx.fft.fft(hx.asarray(x)).dtype == np.complex64
    assert hx.fft.ifftn(hx.asarray(x)).dtype == np.complex64
    assert hx.fft.irfft(hx.asarray(x)).dtype == np.float32
    assert hx.fft.rfft(hx.asarray(x.real.copy())).dtype == np.complex64
    assert hx.fft.fft(hx.asarray(x.astype(np.complex128))).dtype == np.complex128


@pytest.mark.parametrize("dt, want", [(np.int32, np.complex128), (np.bool_, np.complex128),
                                      (np.float16, np.complex64), (ml_dtypes.bfloat16, np.complex64)])
def test_other_input_dtypes(dt, want):
    a = np.arange(8).astype(dt)
    got = hx.fft.fft(hx.asarray(a))
    assert got.dtype == want
    np.testing.assert_allclose(N(got), np.fft.fft(a.astype(np.float64)), rtol=1e-5, atol=1e-5)


@given(n=st.integers(1, 40), d=st.floats(0.01, 100), dt=st.sampled_from([None, np.float32, np.float64]))
def test_fftfreq_and_rfftfreq(n, d, dt):
    got = hx.fft.fftfreq(n, d=d, dtype=dt)
    want = np.fft.fftfreq(n, d)
    assert got.dtype == (want.dtype if dt is None else dt)
    np.testing.assert_allclose(N(got), want.astype(got.dtype), rtol=1e-6)
    got = hx.fft.rfftfreq(n, d=d, dtype=dt)
    np.testing.assert_allclose(N(got), np.fft.rfftfreq(n, d).astype(got.dtype), rtol=1e-6)


def test_freq_device(rt):
    p = hx.HostVisible()
    assert hx.fft.fftfreq(5, device=p).placement == p
    assert hx.fft.rfftfreq(5, device=hx.Shared(rt.npu())).placement == hx.Shared(rt.npu())


@given(shape=shapes, seed=seeds, data_=st.data())
def test_shifts(shape, seed, data_):
    a = data(seed, shape, np.float32)
    axes = data_.draw(st.none() | st.integers(-len(shape), len(shape) - 1) |
                      st.lists(st.integers(0, len(shape) - 1), max_size=len(shape), unique=True))
    np.testing.assert_array_equal(N(hx.fft.fftshift(hx.asarray(a), axes=axes)), np.fft.fftshift(a, axes=axes))
    np.testing.assert_array_equal(N(hx.fft.ifftshift(hx.asarray(a), axes=axes)), np.fft.ifftshift(a, axes=axes))


@pytest.mark.parametrize("call, exc, text", [
    (lambda x: hx.fft.fft(x, n=0), ValueError, "fft: invalid number"),
    (lambda x: hx.fft.fft(x, norm="none"), ValueError, "fft: norm"),
    (lambda x: hx.fft.fft(x, axis=2), np.exceptions.AxisError, "fft"),
    (lambda x: hx.fft.rfft(x), TypeError, "rfft: x must be real"),
    (lambda x: hx.fft.fftn(x, s=[4, 4], axes=[0]), ValueError, "fftn: s and axes"),
    (lambda x: hx.fft.fftn(x, axes=[0, 0]), ValueError, "fftn: repeated axis"),
    (lambda x: hx.fft.fftfreq(0), ValueError, "fftfreq"),
    (lambda x: hx.fft.fftfreq(4, dtype=np.int32), TypeError, "fftfreq: dtype"),
    (lambda x: hx.fft.fft(hx.asarray(np.float32(1))), ValueError, "fft"),
])
def test_errors_name_the_function(call, exc, text):
    x = hx.asarray(data(0, (2, 4), np.complex64))
    with pytest.raises(exc, match=text):
        call(x)


def test_npu_local_input_is_refused(rt):
    x = hx.asarray(np.ones(8), placement=hx.NpuLocal(rt.npu()))
    with pytest.raises(hx.UnsupportedError, match="fft"):
        hx.fft.fft(x)


def test_runs_on_the_compute_lane_in_every_gpu_placement():
    rt = hx.default_runtime()
    a = data(3, (4, 32), np.complex64)
    for placement in (hx.GpuLocal(), hx.HostVisible(), hx.Shared(rt.npu())):
        x = hx.asarray(a, placement=placement)
        x.block_until_ready()
        rt.start_trace(16)
        y = hx.fft.fft(x)
        y.block_until_ready()
        assert [e["lane"] for e in rt.finish_trace().events] == ["compute"]
        assert y.placement == placement
        np.testing.assert_allclose(N(y), np.fft.fft(a), rtol=1e-4, atol=1e-4)


def test_asynchronous_chain_and_strided_input():
    a = data(4, (8, 64), np.complex64)
    x = hx.multiply(hx.asarray(a), 2)          # pending input
    y = hx.fft.ifft(hx.fft.fft(x[::2, ::-1]))  # strided view in, result consumed without a host wait
    z = hx.add(y, 1)
    np.testing.assert_allclose(N(z), 2 * a[::2, ::-1] + 1, rtol=1e-4, atol=1e-4)


def test_numpy_dispatch_returns_device_arrays():
    a = data(5, (4, 16), np.complex128)
    x = hx.asarray(a)
    for f, args in ((np.fft.fft, (8,)), (np.fft.ifft, ()), (np.fft.fftn, ()), (np.fft.irfft, (10, 0)),
                    (np.fft.fftshift, ()), (np.fft.ifftshift, (1,))):
        got = f(x, *args)
        assert isinstance(got, hx.DeviceArray), f
        np.testing.assert_allclose(N(got), f(a, *args), rtol=1e-12, atol=1e-12)
    with pytest.raises(TypeError, match="out="):
        np.fft.fft(x, out=np.empty(16, np.complex128))


def test_size_zero_batches():
    a = np.zeros((0, 8), np.complex64)
    got = hx.fft.fft(hx.asarray(a))
    assert got.shape == (0, 8) and got.dtype == np.complex64
    assert hx.fft.rfft(hx.asarray(np.zeros((3, 0, 8), np.float64))).shape == (3, 0, 5)


FFT_AT_EXIT = """
    import sys, threading
    import numpy as np
    import hrxarray as hx
    x = hx.asarray(np.ones(1 << 16, np.complex64))
    started = threading.Barrier(2)
    def loop():
        started.wait()
        while True:
            hx.fft.fft(x)  # regions that enter Python, submitted while the interpreter exits
    threading.Thread(target=loop, daemon=True).start()
    started.wait()
    pending = [hx.fft.fft(x) for _ in range(50)]  # queued on the compute lane at exit
    print("done")
"""


def test_interpreter_exit_with_fft_regions_queued_and_submitting(tmp_path):
    from test_lifecycle import assert_clean_exit, run_python

    for _ in range(3):
        proc = run_python(FFT_AT_EXIT, cwd=tmp_path)
        assert_clean_exit(proc, "done\n")


def test_results_stay_on_the_inputs_runtime():
    rt = hx.Runtime()
    a = data(8, (16,), np.complex128)
    x = hx.asarray(a, placement=hx.Shared(rt.npu()))
    y = hx.fft.fft(x)
    assert y.placement == hx.Shared(rt.npu())
    np.testing.assert_allclose(N(y), np.fft.fft(a))
