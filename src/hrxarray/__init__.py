"""hrxarray: NumPy/DLPack-style device arrays for AMD Strix Halo.

hrxarray follows the execution and memory model of HRX (the hrx-rs runtime
over libamdf) for the gfx1151 iGPU and the XDNA2 NPU. Without that hardware
the embedded default backend is an emulated fabric: a GPU and an NPU inside
the process that keep HRX's rules for placements, visibility, host mapping
guards, budgets and failure, and run their kernels on the CPU.
"""

from __future__ import annotations

import atexit as _atexit
import os as _os
from typing import TYPE_CHECKING as _TYPE_CHECKING


def _missing_core_message(why: str) -> str:
    return (
        f"hrxarray's compiled module hrxarray._core is missing ({why}): this is hrxarray's source "
        f"tree at {_os.path.dirname(__file__)}, not an installed package. Install it with "
        "`pip install .` (or `pip install --no-build-isolation -e .` for development) and import "
        "hrxarray from outside src/."
    )


# The stubs folder src/hrxarray/_core/ is a namespace package when the compiled
# module is absent (an uninstalled source tree): the import then "succeeds" and
# the first name lookup fails with a message that says nothing about the cause.
try:
    from . import _core
except ImportError as _exc:  # pragma: no cover - only on a broken install
    raise ImportError(_missing_core_message(repr(_exc))) from _exc
if getattr(_core, "__file__", None) is None:
    raise ImportError(_missing_core_message(f"{__name__}._core resolved to the stubs folder {list(_core.__path__)}"))

from ._core import (
    Access,
    AllocationProfile,
    Artifact,
    BindingContract,
    Buffer,
    BufferView,
    BudgetReservation,
    BusyError,
    CacheTransition,
    CancelledError,
    Completion,
    ContractError,
    DeviceLease,
    DeviceLostError,
    ExecutableGraph,
    ExecutionError,
    GpuDevice,
    GpuKernel,
    Graph,
    GpuLocal,
    HostMapping,
    HostVisible,
    HrxError,
    KernelContract,
    LinAlgError,
    MemoryBudget,
    NpuDevice,
    NpuKernel,
    NpuLocal,
    Placement,
    PreparedHostVisibility,
    ResidentProgram,
    ResidentSession,
    ResidentStartup,
    Runtime,
    Shared,
    Statistics,
    UnsupportedError,
    Visibility,
)
from ._runtime import default_runtime, devices, gpu, npu
from . import kernels
from . import random
# The elementwise functions: one hx.ufunc object each under NumPy's names,
# named by the kernel table (_core.elementwise.__all__), typed by its stub.
from ._core.elementwise import *  # noqa: F401,F403
from ._core import elementwise as _elementwise
from ._trace import Trace
from ._data_types import (
    __array_api_version__,
    __array_namespace_info__,
    can_cast,
    e,
    finfo,
    iinfo,
    inf,
    isdtype,
    nan,
    newaxis,
    pi,
    result_type,
)
from ._dtypes import (
    bfp16,
    bool_,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._complex import imag, real
from ._array import (
    DeviceArray as DeviceArray,
    astype as astype,
    to_numpy as to_numpy,
    ufunc as ufunc,
)
from ._linear_algebra import matmul as matmul
from ._manipulation import (
    broadcast_to as broadcast_to,
    concatenate as concatenate,
    expand_dims as expand_dims,
    permute_dims as permute_dims,
    reshape as reshape,
    squeeze as squeeze,
    stack as stack,
    transpose as transpose,
)
from ._searching import argmax as argmax, argmin as argmin, where as where
from ._statistical import (
    all as all,
    any as any,
    max as max,
    mean as mean,
    min as min,
    prod as prod,
    sum as sum,
)
from ._creation import (
    arange as arange,
    asarray as asarray,
    empty as empty,
    empty_like as empty_like,
    eye as eye,
    from_dlpack as from_dlpack,
    full as full,
    full_like as full_like,
    linspace as linspace,
    ones as ones,
    ones_like as ones_like,
    tril as tril,
    triu as triu,
    zeros as zeros,
    zeros_like as zeros_like,
)
# `name as name`: mypy takes these as re-exports (it does not read __all__ built from the chapters').
from ._searching import (
    count_nonzero as count_nonzero,
    nonzero as nonzero,
    searchsorted as searchsorted,
)
from ._indexing import take as take, take_along_axis as take_along_axis
from ._set import (
    isin as isin,
)
from ._set import (
    unique as unique,
    unique_all as unique_all,
    unique_counts as unique_counts,
    unique_inverse as unique_inverse,
    unique_values as unique_values,
)
from ._sorting import (
    argsort as argsort,
    sort as sort,
)
from ._statistical import (
    cumprod as cumprod,
    cumsum as cumsum,
    cumulative_prod as cumulative_prod,
    cumulative_sum as cumulative_sum,
    diff as diff,
    percentile as percentile,
    quantile as quantile,
    std as std,
    var as var,
)
from ._elementwise_functions import (
    allclose as allclose,
    array_equal as array_equal,
    clip as clip,
    isclose as isclose,
    round as round,
)
from . import _elementwise_functions, _indexing, _searching, _set, _sorting, _statistical
from ._manipulation import (
    broadcast_arrays as broadcast_arrays,
    broadcast_shapes as broadcast_shapes,
    concat as concat,
    flip as flip,
    meshgrid as meshgrid,
    moveaxis as moveaxis,
    ravel as ravel,
    repeat as repeat,
    roll as roll,
    swapaxes as swapaxes,
    tile as tile,
    unstack as unstack,
)
from ._pad import pad as pad
from ._linear_algebra import (
    dot as dot,
    einsum as einsum,
    matrix_transpose as matrix_transpose,
    tensordot as tensordot,
    vecdot as vecdot,
)
from . import _creation, _linear_algebra, _manipulation
from . import fft, linalg
from ._nanfunctions import (
    median as median,
    nanargmax as nanargmax,
    nanargmin as nanargmin,
    nancumprod as nancumprod,
    nancumsum as nancumsum,
    nanmax as nanmax,
    nanmean as nanmean,
    nanmedian as nanmedian,
    nanmin as nanmin,
    nanpercentile as nanpercentile,
    nanprod as nanprod,
    nanquantile as nanquantile,
    nanstd as nanstd,
    nansum as nansum,
    nanvar as nanvar,
)
from . import _nanfunctions, lib
from ._numpy_breadth import (
    append as append,
    array as array,
    array_split as array_split,
    atleast_1d as atleast_1d,
    atleast_2d as atleast_2d,
    atleast_3d as atleast_3d,
    average as average,
    column_stack as column_stack,
    diag as diag,
    diagonal as diagonal,
    dsplit as dsplit,
    dstack as dstack,
    ediff1d as ediff1d,
    fliplr as fliplr,
    flipud as flipud,
    hsplit as hsplit,
    hstack as hstack,
    outer as outer,
    ptp as ptp,
    rot90 as rot90,
    split as split,
    trace as trace,
    vsplit as vsplit,
    vstack as vstack,
)
from ._numpy_more import (
    bincount as bincount,
    convolve as convolve,
    corrcoef as corrcoef,
    correlate as correlate,
    cov as cov,
    digitize as digitize,
    histogram as histogram,
    histogram_bin_edges as histogram_bin_edges,
    inner as inner,
    interp as interp,
    kron as kron,
    vdot as vdot,
)
from . import _numpy_breadth, _numpy_more, _numpy_fill
from . import _serialize  # noqa: F401 (registers DeviceArray with copyreg: pickling is its serialiser)
from . import _dask_hooks

_dask_hooks.install()

# The array API names the boolean dtype `bool` (NumPy's bool_); nothing below
# this line calls the builtin through the module's globals.
bool = bool_  # noqa: A001

# The array API's spellings of a few elementwise functions (the functions
# themselves are imported from _core.elementwise above).
abs = absolute  # noqa: F821 (defined just above)
true_divide = divide  # noqa: F821
pow = power  # noqa: F821
conj = conjugate  # noqa: F821
asin = arcsin  # noqa: F821
acos = arccos  # noqa: F821
atan = arctan  # noqa: F821
atan2 = arctan2  # noqa: F821
asinh = arcsinh  # noqa: F821
acosh = arccosh  # noqa: F821
atanh = arctanh  # noqa: F821
mod = remainder  # noqa: F821
bitwise_not = invert  # noqa: F821
bitwise_invert = invert  # noqa: F821
bitwise_left_shift = left_shift  # noqa: F821
bitwise_right_shift = right_shift  # noqa: F821

# CuPy's spelling of to_numpy (hx.asnumpy(x) == x.get()).
asnumpy = to_numpy  # noqa: F821

__version__ = "0.1.0"

__all__ = [
    # runtime and devices
    "Runtime",
    "default_runtime",
    "gpu",
    "npu",
    "devices",
    "GpuDevice",
    "NpuDevice",
    "Statistics",
    "MemoryBudget",
    "BudgetReservation",
    # placements and memory
    "Placement",
    "GpuLocal",
    "HostVisible",
    "NpuLocal",
    "Shared",
    "Buffer",
    "BufferView",
    "HostMapping",
    "DeviceLease",
    "Access",
    "Visibility",
    "CacheTransition",
    "PreparedHostVisibility",
    "AllocationProfile",
    # graphs and execution
    "Graph",
    "ExecutableGraph",
    "Completion",
    "Trace",
    # kernels
    "kernels",
    "loom",
    "random",
    "linalg",
    "fft",
    "lib",
    "KernelContract",
    "BindingContract",
    "Artifact",
    "GpuKernel",
    "NpuKernel",
    "ResidentStartup",
    "ResidentProgram",
    "ResidentSession",
    # errors
    "HrxError",
    "BusyError",
    "UnsupportedError",
    "DeviceLostError",
    "ExecutionError",
    "CancelledError",
    "ContractError",
    "LinAlgError",
    "numerics",
    "bfloat16",
    "__version__",
    # arrays
    "DeviceArray",
    "ufunc",
    "to_numpy",
    "asnumpy",
    "where",
    "sum",
    "prod",
    "max",
    "min",
    "mean",
    "any",
    "all",
    "argmax",
    "argmin",
    "matmul",
    "concatenate",
    "stack",
    "reshape",
    "transpose",
    "permute_dims",
    "squeeze",
    "expand_dims",
    "broadcast_to",
    "astype",
    # dtypes
    "bfp16",
    "bool_",
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    # elementwise functions
    *_elementwise.__all__,
    "conj",
    "asin",
    "acos",
    "atan",
    "atan2",
    "asinh",
    "acosh",
    "atanh",
    "real",
    "imag",
    "abs",
    "true_divide",
    "pow",
    "mod",
    "bitwise_not",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_right_shift",
    # the array API's data type functions, inspection API and constants
    "__array_api_version__",
    "__array_namespace_info__",
    "can_cast",
    "finfo",
    "iinfo",
    "isdtype",
    "result_type",
    "e",
    "pi",
    "inf",
    "nan",
    "newaxis",
]
__all__ += [*_sorting.__all__, *_searching.__all__, *_set.__all__, *_statistical.__all__,
            *_elementwise_functions.__all__, *_indexing.__all__]
__all__ += [*_manipulation.__all__, *_creation.__all__, *_linear_algebra.__all__]
__all__ += _nanfunctions.__all__ + _numpy_breadth.__all__
__all__ += ["bincount", "convolve", "corrcoef", "correlate", "cov", "digitize", "histogram", "histogram_bin_edges", "inner", "interp", "kron", "vdot"]
# "where" is both a kernel (the ternary select) and the array function above: name it once.
__all__ = list(dict.fromkeys(__all__))

@_atexit.register
def _drain_runtimes():
    # Accepted work finishes before the interpreter goes away (host regions
    # and completion callbacks need a live interpreter); new work is refused,
    # so daemon threads that keep submitting cannot hold the exit up.
    _core._at_exit()


# Lazy attributes: importing ml_dtypes costs most of a second, and plain
# runtime use does not need it. Type checkers see them through the imports
# below, dir(hx) through __dir__.
_LAZY = ("bfloat16", "loom", "numerics")
if _TYPE_CHECKING:
    from ml_dtypes import bfloat16 as bfloat16

    from . import loom as loom
    from . import numerics as numerics


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


def __getattr__(name: str) -> object:
    if name in ("numerics", "loom"):
        import importlib

        return importlib.import_module("." + name, __name__)
    if name == "bfloat16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    raise AttributeError(f"module 'hrxarray' has no attribute {name!r}")


