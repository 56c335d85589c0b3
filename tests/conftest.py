"""Shared fixtures and the Hypothesis profiles of the test suite."""

import os

import pytest
from hypothesis import HealthCheck, settings

import hrxarray as hx
from helpers import make_placement

# "ci" keeps the suite well inside CI's time on 2 cores; "thorough" is for
# local soak runs: HYPOTHESIS_PROFILE=thorough pytest
settings.register_profile("ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def rt():
    """A fresh runtime per test, so statistics and budgets start from zero."""
    return hx.Runtime()


@pytest.fixture
def npu(rt):
    return rt.npu()


@pytest.fixture(params=["GpuLocal", "HostVisible", "NpuLocal", "Shared"])
def placement(request, rt):
    """Each of the four placements, on the test's runtime."""
    return make_placement(request.param, rt)
