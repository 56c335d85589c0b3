"""Sorting, searching and unique of complex arrays against NumPy's complex order (the Hypothesis
sort/argsort test over every dtype, complex included, is test_sorting.py's).

NumPy orders complex numbers by (real, imaginary), then the NaN-holding ones:
R + nanj (by R), nan + Rj (by R), nan + nanj. The parts here come from a
small pool with NaN, +-0.0 and +-inf so that ties and every NaN class occur.
"""

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import hrxarray as hx

PARTS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.5, 3.0])
CDTYPES = [np.dtype(np.complex64), np.dtype(np.complex128)]


def _complex_data(rng, dtype, shape):
    """Complex values whose parts come from PARTS (often) or small integers."""
    def part():
        return np.where(rng.random(shape) < 0.5, PARTS[rng.integers(0, len(PARTS), shape)],
                        rng.integers(-3, 4, shape).astype(np.float64))
    out = np.empty(shape, dtype)
    out.real = part()
    out.imag = part()
    return out


def _bits(a):
    """The elements' bits (NaN payloads and signs of zeros included)."""
    return np.ascontiguousarray(a).view(np.uint32 if a.dtype == np.complex64 else np.uint64)


def test_numpy_documented_order_of_nans():
    nan = np.nan
    a = np.array([complex(nan, nan), complex(nan, 1), complex(1, nan), complex(1, 1), complex(nan, 0),
                  complex(0, nan), complex(0, 1)])
    got = hx.to_numpy(hx.sort(hx.asarray(a)))
    want = np.array([complex(0, 1), complex(1, 1), complex(0, nan), complex(1, nan), complex(nan, 0),
                     complex(nan, 1), complex(nan, nan)])
    np.testing.assert_array_equal(_bits(got), _bits(want))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_many_rows_strided_and_the_method(dtype):
    a = _complex_data(np.random.default_rng(3), dtype, (40, 300))
    x = hx.asarray(a)
    np.testing.assert_array_equal(_bits(hx.to_numpy(hx.sort(x, axis=0))), _bits(np.sort(a, axis=0, kind="stable")))
    np.testing.assert_array_equal(hx.to_numpy(hx.argsort(x[:, ::3])), np.argsort(a[:, ::3], kind="stable"))
    y = hx.asarray(a)
    y.sort()
    np.testing.assert_array_equal(_bits(hx.to_numpy(y)), _bits(np.sort(a, kind="stable")))
    np.testing.assert_array_equal(_bits(hx.to_numpy(np.sort(x, axis=None))), _bits(np.sort(a, axis=None,
                                                                                          kind="stable")))


@given(dtype=st.sampled_from(CDTYPES), n=st.integers(0, 40), m=st.integers(0, 20), seed=st.integers(0, 2**32 - 1),
       side=st.sampled_from(["left", "right"]), with_sorter=st.booleans())
def test_searchsorted_matches_numpy(dtype, n, m, seed, side, with_sorter):
    rng = np.random.default_rng(seed)
    a = _complex_data(rng, dtype, (n,))
    v = _complex_data(rng, dtype, (m,))
    if with_sorter:
        sorter = np.argsort(a, kind="stable")
        got = hx.searchsorted(hx.asarray(a), hx.asarray(v), side=side, sorter=hx.asarray(sorter))
        want = np.searchsorted(a, v, side=side, sorter=sorter)
    else:
        s = np.sort(a, kind="stable")
        got = hx.searchsorted(hx.asarray(s), hx.asarray(v), side=side)
        want = np.searchsorted(s, v, side=side)
    np.testing.assert_array_equal(hx.to_numpy(got), want)


def _np_unique(a, equal_nan):
    # return_index forces NumPy's sort path (values-only calls may hash and not sort).
    return np.unique(a, return_index=True, return_inverse=True, return_counts=True, equal_nan=equal_nan)


@given(dtype=st.sampled_from(CDTYPES), shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=7),
       seed=st.integers(0, 2**32 - 1), equal_nan=st.booleans())
def test_unique_matches_numpy(dtype, shape, seed, equal_nan):
    a = _complex_data(np.random.default_rng(seed), dtype, shape)
    x = hx.asarray(a)
    values, index, inverse, counts = _np_unique(a, equal_nan)
    got = hx.unique(x, return_index=True, return_inverse=True, return_counts=True, equal_nan=equal_nan)
    np.testing.assert_array_equal(_bits(hx.to_numpy(got[0])), _bits(values))
    for g, w in zip(got[1:], (index, inverse, counts)):
        np.testing.assert_array_equal(hx.to_numpy(g), w)
    # The array API's functions: every NaN-holding value is distinct.
    values, index, inverse, counts = _np_unique(a, False)
    res = hx.unique_all(x)
    np.testing.assert_array_equal(_bits(hx.to_numpy(res.values)), _bits(values))
    np.testing.assert_array_equal(hx.to_numpy(res.indices), index)
    np.testing.assert_array_equal(hx.to_numpy(res.inverse_indices), inverse)
    np.testing.assert_array_equal(hx.to_numpy(res.counts), counts)
    np.testing.assert_array_equal(_bits(hx.to_numpy(hx.unique_values(x))), _bits(values))
    np.testing.assert_array_equal(hx.to_numpy(hx.unique_counts(x).counts), counts)
    np.testing.assert_array_equal(hx.to_numpy(hx.unique_inverse(x).inverse_indices), inverse)
