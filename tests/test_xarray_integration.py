"""xarray on DeviceArrays: a DataArray wrapping a DeviceArray gives what the same DataArray over NumPy gives
(reductions with the default skipna and NaNs present, rolling, groupby, coarsen, polyfit), and its data
stays a DeviceArray. Skipped where xarray is not installed (the test extra installs it)."""

import warnings

import numpy as np
import pytest

import hrxarray as hx

xr = pytest.importorskip("xarray")


def host_data(nan=True):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((6, 8))
    if nan:
        a[1, 2] = a[4, 0] = a[4, 7] = np.nan
    return a


def pair(nan=True):
    a = host_data(nan)
    coords = {"t": np.arange(6), "x": np.arange(8) * 10, "g": ("t", np.array([0, 1, 0, 1, 2, 2]))}
    return (xr.DataArray(a, dims=("t", "x"), coords=coords),
            xr.DataArray(hx.asarray(a), dims=("t", "x"), coords=coords))


def check(expected, got):
    """got's data is a DeviceArray with expected's values (to float rounding), dims and coords."""
    assert isinstance(got.data, hx.DeviceArray), type(got.data)
    assert got.dims == expected.dims
    np.testing.assert_allclose(hx.to_numpy(got.data), expected.values, rtol=1e-12, atol=1e-12)
    for name in expected.coords:
        np.testing.assert_array_equal(np.asarray(got.coords[name].values), expected.coords[name].values)


CALLS = {
    "mean": lambda d: d.mean(),
    "mean_t": lambda d: d.mean("t"),
    "std": lambda d: d.std("x"),
    "std_ddof": lambda d: d.std("t", ddof=1),
    "var": lambda d: d.var(),
    "sum": lambda d: d.sum("x"),
    "max": lambda d: d.max("t"),
    "min": lambda d: d.min(),
    "argmax": lambda d: d.argmax("x"),
    "argmin": lambda d: d.argmin("t"),
    "median": lambda d: d.median("x"),
    "quantile": lambda d: d.quantile([0.1, 0.5, 0.9], dim="t"),
    "cumsum": lambda d: d.cumsum("x"),
    "cumprod": lambda d: d.cumprod("t"),
    "prod": lambda d: d.prod("t"),
    "groupby_mean": lambda d: d.groupby("g").mean(),
    "coarsen_mean": lambda d: d.coarsen(x=2).mean(),
    "coarsen_max": lambda d: d.coarsen(t=3, x=4).max(),
    "rolling_mean": lambda d: d.rolling(x=3).mean(),
    "rolling_center": lambda d: d.rolling(t=3, center=True, min_periods=1).mean(),
    "rolling_sum": lambda d: d.rolling(x=2).sum(),
}


@pytest.mark.parametrize("nan", [True, False], ids=["nan", "finite"])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_dataarray_on_device_matches_numpy(name, nan):
    ref, dev = pair(nan)
    expected = CALLS[name](ref)
    # NumPy and hrxarray give the same warnings (all-NaN slices); xarray filters its own.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = CALLS[name](dev)
    check(expected, got)


@pytest.mark.parametrize("name", ["mean", "max", "median", "quantile", "cumsum"])
def test_skipna_false_propagates_nan(name):
    ref, dev = pair()
    fn = {"quantile": lambda d: d.quantile(0.5, dim="x", skipna=False)}.get(
        name, lambda d: getattr(d, name)("x", skipna=False))
    check(fn(ref), fn(dev))


def test_polyfit():
    if not hasattr(hx.linalg, "lstsq"):
        pytest.skip("polyfit needs hx.linalg.lstsq")
    ref, dev = pair(nan=False)
    expected = ref.polyfit("x", 2)
    got = dev.polyfit("x", 2)
    np.testing.assert_allclose(hx.to_numpy(got.polyfit_coefficients.data), expected.polyfit_coefficients.values,
                               rtol=1e-8, atol=1e-10)
