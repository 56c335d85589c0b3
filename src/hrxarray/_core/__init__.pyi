"""
hrxarray's compiled core: runtime, memory fabric and kernels (private; use hrxarray).
"""

from collections.abc import Generator, Iterator, Sequence
import contextlib
import enum
import types
from typing import Any, overload

import numpy
import numpy.typing
from typing_extensions import CapsuleType

from hrxarray import (
    BusyError as BusyError,
    CancelledError as CancelledError,
    ContractError as ContractError,
    DeviceLostError as DeviceLostError,
    ExecutionError as ExecutionError,
    HrxError as HrxError,
    LinAlgError as LinAlgError,
    UnsupportedError as UnsupportedError
)
from hrxarray._core import (
    elementwise as elementwise,
    kernels as kernels,
    loom as loom,
    numerics as numerics
)
import hrxarray._trace


def cpu_features() -> dict:
    """
    The host CPU's features that the emulated devices' kernels can use,
    detected once per process.

    Keys: 'arch' and 'brand' (str); 'avx2', 'fma', 'avx512f', 'avx512bw',
    'avx512vl', 'avx512_bf16', 'amx_tile', 'amx_bf16' (bool, as cpuid
    reports them); 'os_avx512' (bool, the OS saves AVX-512 state);
    'amx_permitted' (bool, Linux granted this process AMX tile state);
    'kernel_path' (str): the path the kernels take here, one of
    'amx_bf16', 'avx512_bf16', 'avx512', 'avx2', 'portable'.
    """

class Runtime:
    """
    An HRX runtime over the device fabric: devices, allocation, statistics (and, with the runtime layer, lanes, graphs and completions). The emulated fabric is used when no native provider is available.
    """

    def __init__(self, *, max_submissions: int = 64, graph_slots: int = 2, memory_budget: MemoryBudget | None = None, gpu_index: int = 0, check_visibility: bool = False, checked: bool | None = None) -> None:
        """
        Create a runtime. check_visibility=True makes the emulator raise when an engine would read bytes that no cache transition made visible to it. checked=True runs Loom programs in checked mode (false assumptions, broken nsw/nuw promises, races, ... raise ExecutionError naming the source line and the lane); None takes it from the environment variable HRXARRAY_CHECKED (set and not '0': on).
        """

    def graph(self) -> Graph:
        """A new, empty Graph on this runtime."""

    def start_trace(self, capacity: int) -> None:
        """
        Record executed regions (at most capacity, oldest dropped); already tracing → BusyError.
        """

    def finish_trace(self) -> hrxarray._trace.Trace:
        """Stop tracing and return the Trace (does not wait for pending work)."""

    def pending(self) -> int:
        """Submissions not yet retired."""

    def drain(self) -> None:
        """Wait (without the GIL) until every accepted submission has retired."""

    @property
    def backend(self) -> str:
        """'emulated' or 'native'."""

    @property
    def max_submissions(self) -> int:
        """Pending submissions allowed before BusyError."""

    @property
    def graph_slots(self) -> int:
        """Completion slots per prepared graph."""

    @property
    def memory_budget(self) -> MemoryBudget:
        """The MemoryBudget charged by allocations, or None."""

    @property
    def check_visibility(self) -> bool:
        """Whether skipped cache transitions raise."""

    @property
    def checked(self) -> bool:
        """Whether Loom programs run in checked mode."""

    def gpu(self) -> GpuDevice:
        """The runtime's GPU device."""

    def npu(self, index: int = 0) -> NpuDevice:
        """NPU number `index`; negative → ValueError, missing → UnsupportedError."""

    def devices(self) -> list:
        """Every device of the runtime: the GPU, then the NPUs."""

    def statistics(self) -> Statistics:
        """A snapshot of the runtime's Statistics."""

    def allocate(self, nbytes: object, placement: Placement) -> Buffer:
        """
        Allocate a zero-filled, 64-byte aligned Buffer of nbytes in the placement. The memory budget, if any, is reserved first.
        """

    def adopt(self, buffer: Buffer, placement: Placement) -> Buffer:
        """
        Share a GPU buffer (GpuLocal or HostVisible) with the NPU as Shared(npu), the way HRX exports and imports a dma-buf: the alias retains the original and shares its leases, guards and visibility state; it counts as an import and is not charged twice.
        """

    def allocation_profiles(self, devices: list, coherent_gpu: bool = False) -> list[AllocationProfile]:
        """
        The allocation profiles that admit every listed device, queried without allocating. coherent_gpu=True requests coherent GPU attachments (never NPU coherence).
        """

    def __repr__(self) -> str: ...

    def load_gpu_kernel(self, artifact: Artifact, grid: object, block: object, contract: KernelContract, *, workload: object | None = None) -> GpuKernel:
        """
        Load a Loom GPU artifact on this runtime's GPU (HRX Runtime::load_gpu_kernel). `grid` is in workgroups, `block` in work-items (ints or 3-tuples). The artifact must target this GPU (UnsupportedError); the contract's binding count and constant length must be the kernel's, and block (and grid, when the workload is known) the launch program's (ValueError 'GPU metadata does not match contract'); the workload is `workload` or, when every workload argument has a device scalar of the same name and type, read from the contract's constants. The contract must cover the code's footprints (ContractError). Only this runtime's graphs run the returned GpuKernel.
        """

class Statistics:
    """
    A snapshot of a runtime's counters (HRX execution::Statistics). Compare two snapshots to see what a piece of work allocated, imported, copied or maintained.
    """

    @property
    def allocations(self) -> int:
        """Backing allocations made."""

    @property
    def imports(self) -> int:
        """Imports: Shared allocations and dma-buf adoptions."""

    @property
    def submissions(self) -> int:
        """Graph submissions accepted."""

    @property
    def completions(self) -> int:
        """Submissions retired."""

    @property
    def copied_bytes(self) -> int:
        """Bytes moved by copy regions."""

    @property
    def cache_maintenance_bytes(self) -> int:
        """Bytes covered by host cache maintenance (flush/invalidate)."""

    @property
    def live_bytes(self) -> int:
        """Bytes of storage alive now."""

    @property
    def peak_bytes(self) -> int:
        """Largest live_bytes seen."""

    def as_dict(self) -> dict:
        """The counters as a dict."""

    def __eq__(self, arg: Statistics, /) -> bool: ...

    def __repr__(self) -> str: ...

class BudgetReservation:
    """
    Bytes reserved from a MemoryBudget; released by release(), by leaving its with-block, or when it is garbage collected.
    """

    @property
    def bytes(self) -> int:
        """The reserved byte count."""

    @property
    def active(self) -> bool:
        """True until released."""

    def release(self) -> None:
        """Give the bytes back (idempotent)."""

    def __enter__(self) -> BudgetReservation: ...

    def __exit__(self, exc_type: object | None, exc: object | None, tb: object | None) -> None: ...

class MemoryBudget:
    """
    A byte budget. Pass it as Runtime(memory_budget=...): every allocation reserves its bytes first; requests larger than the whole budget raise ValueError, requests that cannot fit now raise BusyError. Quarantined storage keeps its charge.
    """

    def __init__(self, limit: int) -> None: ...

    @property
    def limit(self) -> int:
        """The budget in bytes."""

    @property
    def used(self) -> int:
        """Bytes currently charged."""

    def reserve(self, n: int) -> BudgetReservation:
        """
        Reserve n bytes (for work that will allocate later; 0 is allowed, as in HRX); returns a BudgetReservation guard. More than the whole limit raises ValueError, more than fits now BusyError.
        """

    def __repr__(self) -> str: ...

class GpuDevice:
    """The runtime's GPU (gfx1151 on Strix Halo). Obtain it from rt.gpu()."""

    @property
    def index(self) -> int:
        """The GPU's index."""

    @property
    def target(self) -> str:
        """The bare AMDGPU target, 'gfx1151'."""

    @property
    def name(self) -> str:
        """A human-readable device name."""

    @property
    def backend(self) -> str:
        """'emulated' or 'native'."""

    @property
    def runtime(self) -> Runtime:
        """The owning Runtime."""

    def __eq__(self, arg: object, /) -> bool: ...

    def __hash__(self) -> int: ...

    def __repr__(self) -> str: ...

class NpuDevice:
    """
    One XDNA2 NPU (Strix Halo NPU5, 8 columns). Obtain it from rt.npu(index).
    """

    @property
    def index(self) -> int:
        """The NPU's index."""

    @property
    def target(self) -> str:
        """The exact XDNA deployment target, 'amd.xdna.strix_halo.17f0_11'."""

    @property
    def columns(self) -> int:
        """AIE array columns (8)."""

    @property
    def name(self) -> str:
        """A human-readable device name."""

    @property
    def backend(self) -> str:
        """'emulated' or 'native'."""

    @property
    def runtime(self) -> Runtime:
        """The owning Runtime."""

    def __eq__(self, arg: object, /) -> bool: ...

    def __hash__(self) -> int: ...

    def __repr__(self) -> str: ...

    def load_artifact(self, artifact: Artifact, columns: int, contract: KernelContract) -> NpuKernel:
        """
        Load an NPU artifact on this device (HRX NpuDevice::load_artifact): validate the contract, require the exact target, 1..=8 columns and buffer-only bindings (UnsupportedError), and charge the image bytes to the memory budget until the last NpuKernel handle goes.
        """

class Access(enum.Enum):
    """How a kernel or host region uses a binding."""

    READ = 1
    """Reads only."""

    WRITE = 2
    """Writes without reading the prior contents."""

    READ_WRITE = 3
    """Reads and writes."""

class Placement:
    """
    Base class of the placements GpuLocal, HostVisible, NpuLocal and Shared: hashable value objects saying where storage lives and which engines may bind it.
    """

    @property
    def host_mapped(self) -> bool:
        """Whether the host may map this storage (every placement but GpuLocal)."""

    @property
    def gpu_bindable(self) -> bool:
        """
        Whether GPU copies and kernels may bind it (every placement but NpuLocal).
        """

    @property
    def npu_bindable(self) -> bool:
        """Whether NPU programs may bind it (NpuLocal and Shared)."""

    @property
    def npu(self) -> NpuDevice | None:
        """The NPU this placement names, or None."""

    def __eq__(self, other: object | None) -> bool: ...

    def __hash__(self) -> int: ...

    def __repr__(self) -> str: ...

class GpuLocal(Placement):
    """
    GPU storage (cacheable system memory on Strix Halo) that the host does not map: move data in and out with graph copies.
    """

    def __init__(self) -> None: ...

class HostVisible(Placement):
    """
    Coherent host-local memory that the GPU can bind (copies and kernels); not bindable by the NPU.
    """

    def __init__(self) -> None: ...

class NpuLocal(Placement):
    """Host-mapped memory admitted only for one NPU."""

    def __init__(self, npu: NpuDevice) -> None: ...

class Shared(Placement):
    """
    One allocation admitted for both the GPU and the NPU (and host mapped); hazards on it are allocation-wide.
    """

    def __init__(self, npu: NpuDevice) -> None: ...

class CacheTransition:
    """
    One side of a visibility relation: kind ('unknown', 'none', 'range', 'global'), executor ('none', 'queue', 'program', 'host_direct', 'host_api'), operation ('none', 'release_to_system', 'acquire_from_system', 'flush', 'invalidate') and range granularity in bytes.
    """

    def __init__(self, kind: str, executor: str, operation: str, range_granularity: int) -> None: ...

    @property
    def kind(self) -> str:
        """The transition kind."""

    @property
    def executor(self) -> str:
        """Who performs it."""

    @property
    def operation(self) -> str:
        """What it does."""

    @property
    def range_granularity(self) -> int:
        """
        Smallest independently transitionable range (bytes); 0 for none/global.
        """

    def __eq__(self, arg: object, /) -> bool: ...

    def __hash__(self) -> int: ...

    def __repr__(self) -> str: ...

class Visibility:
    """
    What a producer site must do after writing (release) and a consumer site before reading (acquire) so the consumer sees the bytes, plus atomic scopes. Describes visibility only: execution order is separate.
    """

    @property
    def shared_backing_reachable(self) -> bool:
        """The consumer reaches the producer's backing directly."""

    @property
    def release(self) -> CacheTransition:
        """Producer-side CacheTransition after writes."""

    @property
    def acquire(self) -> CacheTransition:
        """Consumer-side CacheTransition before reads."""

    @property
    def atomic_scope_32(self) -> str:
        """
        Widest scope of mutual atomicity for aligned 32-bit words: 'none', 'device', 'fabric', 'system'.
        """

    @property
    def atomic_scope_64(self) -> str:
        """As atomic_scope_32, for 64-bit words."""

    @property
    def estimated_fixed_cost_ns(self) -> int | None:
        """The provider's fixed-cost estimate in ns (not a measurement), or None."""

    def __repr__(self) -> str: ...

class PreparedHostVisibility:
    """
    Host cache maintenance prepared once with HRX's range rules (sorted, merged when overlapping or adjacent, collapsed to the whole buffer for 'none'/'global' recipes); execute() runs it.
    """

    @property
    def ranges(self) -> list:
        """The merged (start, end) byte ranges."""

    @property
    def operation_count(self) -> int:
        """
        Native cache calls (or fences for a no-op recipe) that execute() makes.
        """

    @property
    def transition(self) -> CacheTransition:
        """The host recipe being applied."""

    def execute(self) -> None:
        """
        Run one host cache transition per range; maintained bytes are added to the statistics.
        """

    def __repr__(self) -> str: ...

class HostMapping:
    """
    A live host mapping guard over a whole buffer. Use it as a context manager: `with buf.map_read() as view:` gives a NumPy uint8 view (read-only for read guards) that raises once the guard is released.
    """

    @property
    def active(self) -> bool:
        """True until released."""

    @property
    def writable(self) -> bool:
        """True for write guards."""

    @property
    def buffer(self) -> Buffer:
        """The mapped Buffer."""

    def release(self) -> None:
        """
        Release the guard (idempotent); dropping a write guard marks the host as the last writer.
        """

    def __enter__(self) -> numpy.typing.NDArray[Any]: ...

    def __exit__(self, exc_type: object | None, exc: object | None, tb: object | None) -> None: ...

    def __repr__(self) -> str: ...

class DeviceLease:
    """
    A device-use lease on a buffer's storage, as the runtime takes at dispatch; for tests and diagnostics.
    """

    @property
    def active(self) -> bool:
        """True until released."""

    def release(self) -> None:
        """Drop the lease (idempotent); waiting host guards wake."""

    def __enter__(self) -> DeviceLease: ...

    def __exit__(self, exc_type: object | None, exc: object | None, tb: object | None) -> None: ...

class BufferView:
    """
    A byte range of a Buffer (HRX BufferView); keeping it alive keeps the storage alive.
    """

    @property
    def buffer(self) -> Buffer:
        """The viewed Buffer."""

    @property
    def offset(self) -> int:
        """Start, in bytes from the start of the buffer."""

    @property
    def length(self) -> int:
        """Length in bytes."""

    def slice(self, offset: int, length: int | None = None) -> BufferView:
        """A sub-view relative to this view; out of bounds → ValueError."""

    def __len__(self) -> int: ...

    def __repr__(self) -> str: ...

class Buffer:
    """
    A runtime buffer (HRX execution::Buffer): zero-filled, 64-byte aligned storage in one placement. Copies made with clone() and aliases made by Runtime.adopt share lifetime, guards, poison and visibility state.
    """

    @property
    def nbytes(self) -> int:
        """Size in bytes."""

    @property
    def placement(self) -> Placement:
        """The placement."""

    @property
    def runtime(self) -> Runtime:
        """The owning Runtime."""

    @property
    def poisoned(self) -> bool:
        """True once a failure poisoned the storage."""

    def view(self, offset: int = 0, length: int | None = None) -> BufferView:
        """
        A BufferView of [offset, offset+length) (to the end by default); out of bounds → ValueError.
        """

    def clone(self) -> Buffer:
        """
        Another handle on the same storage (an alias); the storage lives while any handle does.
        """

    def same_storage(self, other: Buffer) -> bool:
        """Whether both handles alias one storage."""

    def map_read(self) -> HostMapping:
        """
        A read guard; waits for pending device writers. Conflicting host writers → BusyError; GpuLocal → UnsupportedError; poisoned storage → DeviceLostError.
        """

    def map_write(self) -> HostMapping:
        """
        A write guard; waits for any pending device use. Any other live host guard or lease → BusyError.
        """

    def try_map_read(self) -> HostMapping:
        """As map_read, but pending device writers → BusyError instead of a wait."""

    def try_map_write(self) -> HostMapping:
        """As map_write, but pending device use → BusyError instead of a wait."""

    def visibility(self, producer: str | GpuDevice | NpuDevice, consumer: str | GpuDevice | NpuDevice) -> Visibility:
        """
        Visibility facts between two sites ('host' or a device) of this buffer's backing; a device not admitted to the backing → ValueError.
        """

    def prepare_release_host(self, ranges: object | None = None) -> PreparedHostVisibility:
        """
        Prepare the host flush that publishes host writes of the (start, end) ranges (None: whole buffer).
        """

    def prepare_acquire_host(self, ranges: object | None = None) -> PreparedHostVisibility:
        """
        Prepare the host invalidate that acquires device writes of the (start, end) ranges (None: whole buffer).
        """

    def __repr__(self) -> str: ...

class AllocationProfile:
    """
    A memory profile for a device set (HRX fabric::AllocationProfile), queried before any allocation: size limits, prospective visibility facts, allocate().
    """

    @property
    def name(self) -> str:
        """The profile's name."""

    @property
    def maximum_bytes(self) -> int:
        """Largest allocation."""

    @property
    def byte_granularity(self) -> int:
        """Sizes must be multiples of this."""

    @property
    def placement(self) -> Placement:
        """The placement its buffers report."""

    @property
    def coherent_gpu(self) -> bool:
        """Whether the GPU attachment is host-coherent."""

    def visibility(self, producer: str | GpuDevice | NpuDevice, consumer: str | GpuDevice | NpuDevice) -> Visibility:
        """Prospective visibility facts, before any backing exists."""

    def allocate(self, nbytes: object) -> Buffer:
        """Allocate under exactly this profile."""

    def __repr__(self) -> str: ...

class Graph:
    """
    A graph under construction (HRX Graph): fills, copies, kernels and host regions over buffer views. prepare() turns it into an ExecutableGraph of lane-bound regions.
    """

    def fill(self, view: object, byte: int) -> None:
        """Fill a GPU-bindable view with one byte value (compute lane)."""

    def copy(self, dst: object, src: object) -> None:
        """
        Copy src into dst (equal, non-overlapping lengths). Host-mapped → not host-mapped runs on the upload lane, the reverse on the download lane, anything else on the compute lane.
        """

    def copy_on(self, dst: object, src: object, lane: str) -> None:
        """Copy on an explicit GPU lane ('upload', 'compute' or 'download')."""

    def host(self, fn: object, accesses: object) -> None:
        """
        A host region: fn(*arrays) runs on the host lane, holding the GIL, with one NumPy uint8 array per (view, Access) pair (read-only for READ).
        """

    def gpu(self, kernel: object, views: object) -> None:
        """
        Run a GpuKernel over views (one per contract binding) on the compute lane; contract violations → ContractError.
        """

    def npu(self, kernel: object, views: object) -> None:
        """
        Run an NpuKernel over views (NpuLocal or Shared storage of its NPU) as its own region on the npu lane.
        """

    def __len__(self) -> int: ...

    def prepare(self) -> ExecutableGraph:
        """
        Form lane-bound regions and their dependencies; bindings are immutable afterwards. An empty graph → ValueError.
        """

class ExecutableGraph:
    """
    A prepared graph (HRX ExecutableGraph): replay it with submit(); replays allocate nothing.
    """

    @property
    def regions(self) -> list:
        """The lane of each region, in order."""

    @property
    def quarantined(self) -> bool:
        """True after a region of it failed."""

    def submit(self) -> Completion:
        """
        Submit a run; never waits. Exhaustion (submission capacity, graph slots, a conflicting live host mapping) is BusyError; poisoned storage or a quarantined graph is DeviceLostError.
        """

    def submit_after(self, completions: object) -> Completion:
        """
        As submit(), also ordered after the given completions; a failed or cancelled producer prevents execution.
        """

class Completion:
    """
    The completion of one submission. Waits release the GIL; a timeout never cancels. Keeping it alive keeps its graph slot reserved. Awaitable in asyncio.
    """

    def done(self) -> bool:
        """Whether it has finished (in any way)."""

    def wait(self, timeout: float | None = None) -> bool:
        """
        Wait up to timeout seconds; True once finished, False if the timeout passed first. None, inf or any timeout too large for the clock waits without limit; 0 or a negative timeout does not wait (concurrent.futures' rule); NaN → ValueError. In a host region (a lane thread) a wait for work that cannot finish before the host region returns raises BusyError instead of stopping the lane.
        """

    def result(self, timeout: float | None = None) -> None:
        """
        Wait, then return None or raise ExecutionError (chained to the region's error) or CancelledError; TimeoutError if the timeout passes first (timeouts as for wait()).
        """

    def exception(self, timeout: float | None = None) -> BaseException | None:
        """
        Wait, then return the exception result() would raise, or None; TimeoutError if the timeout passes first (timeouts as for wait()).
        """

    def cancel(self) -> bool:
        """
        Skip the regions not yet scheduled (running ones drain); the result is CancelledError. False if already finished.
        """

    def add_done_callback(self, fn: object) -> None:
        """
        Call fn(completion) once when finished, holding the GIL: at once on the calling thread if it already is, otherwise on the runtime's callback thread (never a lane thread, so fn may wait for more work), in the order completions finish. What fn raises goes to sys.unraisablehook.
        """

    def __await__(self) -> Generator[Any, None, None]: ...

    def __repr__(self) -> str: ...

class ResidentStartup:
    """
    The startup word of a resident GPU–NPU exchange: a 64-byte allocation on a coherent-GPU profile admitting both devices. Word 0: WAIT = 0, RUN = 1, ABORT = 2; only the host writes it, once.
    """

    def __init__(self, gpu: GpuDevice, npu: NpuDevice) -> None: ...

    @property
    def word(self) -> Buffer:
        """The Buffer holding the decision word."""

    @property
    def decision(self) -> int:
        """The published decision: 0 WAIT, 1 RUN, 2 ABORT."""

    def gpu_program(self, exchange: object, control: object, *, generations: int = 1, payload_words: int = 16, word_offset: int = 1, credits: int = 1, slot_stride: int = 256, seed: int = 1) -> ResidentProgram:
        """
        The emulated GPU participant: writes request slots in `exchange`, checks each response and writes its terminal state to word 48 of the 256-byte `control` block (1 complete, 2 aborted; word 49 completed generations, word 50 mismatches).
        """

    def npu_program(self, exchange: object, *, generations: int = 1, payload_words: int = 16, word_offset: int = 1, credits: int = 1, slot_stride: int = 256, seed: int = 1) -> ResidentProgram:
        """
        The emulated NPU participant: answers each request with request * 3 + generation (mod 2**32).
        """

class ResidentProgram:
    """
    A prepared resident participant (from ResidentStartup.gpu_program/npu_program).
    """

    @property
    def engine(self) -> str:
        """'gpu' or 'npu'."""

class ResidentSession:
    """
    A resident exchange (HRX ResidentSession): submit both participants in either order, then start() (RUN) or abort() (ABORT, before start). One decision only.
    """

    def __init__(self, startup: ResidentStartup, gpu_program: ResidentProgram, npu_program: ResidentProgram) -> None: ...

    def submit_gpu(self) -> None:
        """Accept the GPU participant (once; again → BusyError)."""

    def submit_npu(self) -> None:
        """Accept the NPU participant (once; again → BusyError)."""

    def start(self) -> None:
        """Publish RUN; both participants must have been accepted."""

    def abort(self) -> None:
        """Publish ABORT before start (not a cancellation of a running exchange)."""

    def done(self) -> bool:
        """Whether both participants have finished."""

    @property
    def decision(self) -> int:
        """0 WAIT, 1 RUN, 2 ABORT."""

    def wait(self, timeout: float | None = None) -> bool:
        """
        Wait for both participants (a decision is required); False on timeout (timeouts as for Completion.wait). A failed participant → ExecutionError.
        """

class BlockDType:
    """
    A block floating-point storage format (``hx.bfp16``): not a NumPy dtype. Arrays of it are storage: they convert with ``astype``, feed ``matmul`` and decode to float32 on host access; ``x.blocks()`` gives the raw ``uint8`` blocks.
    """

    @property
    def name(self) -> str:
        """The format's name ('bfp16')."""

    @property
    def block_values(self) -> int:
        """Values per block, along the last axis (8)."""

    @property
    def block_bytes(self) -> int:
        """Bytes per block (9: a shared exponent and 8 mantissas)."""

    @property
    def itemsize(self) -> int:
        """Bytes per block (9 for bfp16)."""

    @property
    def kind(self) -> str:
        """'V': raw bytes as far as NumPy is concerned."""

    def __repr__(self) -> str: ...

    def __str__(self) -> str: ...

    def __reduce__(self) -> str:
        """
        Pickled as the global hrxarray._core.<name>: unpickling gives the same object.
        """

bfp16: BlockDType = ...

class DeviceArray:
    """
    An n-dimensional array in memory of the emulated (or native) HRX fabric.

    Create arrays with hx.asarray, hx.zeros, hx.arange, ...; every operation returns at once with the array's producer attached (a future): host access, to_numpy, printing and DLPack export wait for it, and a device failure surfaces there as ExecutionError.
    """

    @property
    def shape(self) -> tuple:
        """The dimensions, a tuple of ints."""

    @property
    def ndim(self) -> int:
        """Number of dimensions."""

    @property
    def size(self) -> int:
        """Number of elements."""

    @property
    def nbytes(self) -> int:
        """Bytes the elements occupy (9 per 8 values for bfp16)."""

    @property
    def itemsize(self) -> int:
        """Bytes per element (9, the bytes per 8-value block, for bfp16)."""

    @property
    def strides(self) -> tuple:
        """
        Byte steps per dimension (for bfp16 the last is 9, bytes per block of 8 values).
        """

    @property
    def dtype(self) -> numpy.dtype[Any] | BlockDType:
        """The element type: a numpy.dtype (bfloat16 is ml_dtypes'), or hx.bfp16."""

    @property
    def placement(self) -> Placement:
        """Where the storage lives (GpuLocal, HostVisible, NpuLocal or Shared)."""

    @property
    def device(self) -> Placement:
        """
        The array API's device: the array's placement (a device is a placement, as x.to_device and device= take it).
        """

    @property
    def buffer(self) -> Buffer:
        """The Buffer holding the elements (shared by every view of it)."""

    def __dask_tokenize__(self) -> tuple[object, ...]:
        """
        Dask's token: the array's identity and its storage's write version (Note [Write version]); never reads or copies the elements, and changes with every write submitted.
        """

    def ready(self) -> bool:
        """
        True when no device operation writing this array's allocation is pending (never waits).
        """

    def block_until_ready(self) -> DeviceArray:
        """
        Wait for the pending writers and return self; raises ExecutionError if one failed.
        """

    def __len__(self) -> int: ...

    def __dlpack_device__(self) -> tuple:
        """
        (kDLCPU=1, 0) for host-mapped placements, (kDLROCM=10, gpu index) for GpuLocal.
        """

    __array_priority__: float = 100.0

    __hash__: None = None

    def __add__(self, other: object, /) -> DeviceArray: ...

    def __radd__(self, other: object, /) -> DeviceArray: ...

    def __iadd__(self, other: object, /) -> DeviceArray: ...

    def __sub__(self, other: object, /) -> DeviceArray: ...

    def __rsub__(self, other: object, /) -> DeviceArray: ...

    def __isub__(self, other: object, /) -> DeviceArray: ...

    def __mul__(self, other: object, /) -> DeviceArray: ...

    def __rmul__(self, other: object, /) -> DeviceArray: ...

    def __imul__(self, other: object, /) -> DeviceArray: ...

    def __truediv__(self, other: object, /) -> DeviceArray: ...

    def __rtruediv__(self, other: object, /) -> DeviceArray: ...

    def __itruediv__(self, other: object, /) -> DeviceArray: ...

    def __floordiv__(self, other: object, /) -> DeviceArray: ...

    def __rfloordiv__(self, other: object, /) -> DeviceArray: ...

    def __ifloordiv__(self, other: object, /) -> DeviceArray: ...

    def __mod__(self, other: object, /) -> DeviceArray: ...

    def __rmod__(self, other: object, /) -> DeviceArray: ...

    def __imod__(self, other: object, /) -> DeviceArray: ...

    def __pow__(self, other: object, /) -> DeviceArray: ...

    def __rpow__(self, other: object, /) -> DeviceArray: ...

    def __ipow__(self, other: object, /) -> DeviceArray: ...

    def __and__(self, other: object, /) -> DeviceArray: ...

    def __rand__(self, other: object, /) -> DeviceArray: ...

    def __iand__(self, other: object, /) -> DeviceArray: ...

    def __or__(self, other: object, /) -> DeviceArray: ...

    def __ror__(self, other: object, /) -> DeviceArray: ...

    def __ior__(self, other: object, /) -> DeviceArray: ...

    def __xor__(self, other: object, /) -> DeviceArray: ...

    def __rxor__(self, other: object, /) -> DeviceArray: ...

    def __ixor__(self, other: object, /) -> DeviceArray: ...

    def __lshift__(self, other: object, /) -> DeviceArray: ...

    def __rlshift__(self, other: object, /) -> DeviceArray: ...

    def __ilshift__(self, other: object, /) -> DeviceArray: ...

    def __rshift__(self, other: object, /) -> DeviceArray: ...

    def __rrshift__(self, other: object, /) -> DeviceArray: ...

    def __irshift__(self, other: object, /) -> DeviceArray: ...

    def __eq__(self, other: object, /) -> DeviceArray: ...

    def __ne__(self, other: object, /) -> DeviceArray: ...

    def __lt__(self, other: object, /) -> DeviceArray: ...

    def __le__(self, other: object, /) -> DeviceArray: ...

    def __gt__(self, other: object, /) -> DeviceArray: ...

    def __ge__(self, other: object, /) -> DeviceArray: ...

    def __neg__(self) -> DeviceArray: ...

    def __pos__(self) -> DeviceArray: ...

    def __abs__(self) -> DeviceArray: ...

    def __invert__(self) -> DeviceArray: ...

    def __matmul__(self, other: object, /) -> DeviceArray: ...

    def __rmatmul__(self, other: object, /) -> DeviceArray: ...

    def __imatmul__(self, other: object, /) -> DeviceArray: ...

    def map_read(self) -> contextlib.AbstractContextManager[numpy.typing.NDArray[Any]]:
        """
        Context manager: a read-only NumPy view of the elements under a host read guard.

        Waits for pending device writers (``ExecutionError`` if one failed); device
        work that writes the storage is refused with ``BusyError`` while the guard
        lives. The view raises ``ValueError`` after the block. bfp16 arrays yield a
        decoded float32 copy.
        """

    def map_write(self) -> contextlib.AbstractContextManager[numpy.typing.NDArray[Any]]:
        """
        Context manager: a writable NumPy view of the elements under a host write guard.

        Waits for every pending device use of the storage; device work on it is
        refused (``BusyError``) while the guard lives. bfp16 arrays yield a decoded
        float32 copy that is encoded back (floor rounding) on exit.
        """

    def __array__(self, dtype: object | None = None, copy: bool | None = None) -> numpy.typing.NDArray[Any]:
        """
        NumPy conversion: a copy after waiting for producers (GpuLocal through the download lane); copy=False
        gives a zero-copy read-only view that holds a host lease while it lives (ValueError for GpuLocal and
        bfp16). In strict host mode (``HRXARRAY_STRICT_HOST=1``) it raises TypeError instead.
        """

    def reshape(self, *shape: int, order: str = 'C', copy: bool | None = None) -> DeviceArray:
        """
        A view with a new shape (C order; one -1 allowed); copies when the array is not contiguous.
        """

    def transpose(self, *axes: int) -> DeviceArray:
        """A view with the axes permuted (reversed by default)."""

    def astype(self, dtype: object, copy: bool = True) -> DeviceArray:
        """
        A new array converted to dtype (NumPy's unsafe casts; bfp16 encodes with floor rounding).
        """

    def copy(self) -> DeviceArray:
        """A new array with the same contents, dtype and placement."""

    def to(self, placement: Placement, *, copy: bool | None = None) -> DeviceArray:
        """
        This array in another placement of its runtime (itself when already there); copies go through the
        lanes.
        """

    def to_device(self, device: Placement | str, /, *, stream: object = None) -> DeviceArray:
        """
        The array API's spelling of to(): this array on the device (a placement) given; stream must be None.

        ``"cpu"`` names host memory: the result is a DeviceArray in ``hx.HostVisible()`` (the array API keeps
        the namespace: to_device returns the library's array). ``x.get()``/``hx.asnumpy(x)`` give NumPy arrays.
        """

    def get(self, stream: object = None, order: str = 'C', out: object = None) -> numpy.typing.NDArray[Any]:
        """
        A NumPy copy of this array (CuPy's ``get``; waits for its producers); ``stream``/``order``/``out`` as CuPy's
        (no streams; only order 'C'; ``out`` a NumPy array of this shape to copy into).
        """

    def __array_namespace__(self, /, *, api_version: str | None = None) -> types.ModuleType:
        """
        The hrxarray module, an array API namespace (api_version None or one of the versions it implements).
        """

    def view(self, dtype: object) -> DeviceArray:
        """The same bytes as another dtype of the same item size."""

    def blocks(self) -> DeviceArray:
        """
        The raw bfp16ebs8 blocks of a bfp16 array: a uint8 view of shape (..., n/8, 9).
        """

    def __repr__(self) -> str:
        """Data and metadata; never waits (a pending array prints <pending>)."""

    def __str__(self) -> str:
        """The elements as NumPy prints them (waits)."""

    def item(self, *args: int) -> Any:
        """The element as a Python scalar (waits)."""

    def __bool__(self) -> bool:
        """Truth of a one-element array (waits)."""

    def __int__(self) -> int:
        """A one-element array as int (waits)."""

    def __float__(self) -> float:
        """A one-element array as float (waits)."""

    def __complex__(self) -> complex:
        """A one-element array as complex (waits)."""

    def __index__(self) -> int:
        """A one-element integer array as an index (waits)."""

    def __iter__(self) -> Iterator[DeviceArray]:
        """Iterate over the first axis (views)."""

    def __array_ufunc__(self, uf: object, method: str, *inputs: object, **kwargs: object) -> Any:
        """
        NumPy ufuncs on DeviceArrays run as hrxarray ufuncs (__call__, reduce, outer; accumulate for add and multiply); others raise TypeError.
        """

    def __array_function__(self, func: object, types: object, args: object, kwargs: object) -> Any:
        """
        NumPy functions hrxarray implements return DeviceArrays; the others raise TypeError naming them.
        """

    def __dlpack__(self, /, *, stream: int | None = None, max_version: tuple[int, int] | None = None, dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> CapsuleType:
        """
        Export as a DLPack capsule (versioned when max_version >= (1, 0), legacy otherwise).

        Host-mapped placements export zero-copy as (kDLCPU, 0), GpuLocal as (kDLROCM, gpu); dl_device=(1, 0)
        copies GpuLocal memory to the host (IS_COPIED) unless copy=False (BufferError); copy=True always
        copies. A zero-copy export waits for pending writers and holds a host lease until the consumer's
        deleter runs: meanwhile device work that writes the storage raises BusyError naming the export and
        how to end it, and so does device work that reads it when the export is writable (the consumer could
        write meanwhile). Exports of read-only arrays, exports through ``readonly_export()`` and exports to
        JAX (whose arrays are immutable) are read-only: device reads proceed. stream: None or -1 for kDLCPU
        exports; ROCm conventions for GpuLocal. bfp16, and read-only legacy exports other than JAX's ->
        BufferError.
        """

    def readonly_export(self) -> Any:
        """
        A DLPack producer over this array's memory whose zero-copy exports are read-only.

        Pass it to the consumer (``torch.from_dlpack(x.readonly_export())``, ``np.from_dlpack(...)``): the
        capsule carries READ_ONLY, so a consumer that honours the flag cannot write through it, and the
        export holds a read lease, so device work may keep reading this array while the consumer lives;
        only writes raise BusyError (a writable export blocks reads too). A consumer that asks for a legacy
        capsule, which cannot say read-only, gets BufferError.
        """

    @property
    def T(self) -> DeviceArray:
        """The transpose (axes reversed)."""

    @property
    def mT(self) -> DeviceArray:
        """The matrix transpose of the last two axes."""

    def flatten(self, order: str = 'C') -> DeviceArray:
        """A 1-d copy of this array (always a new array)."""

    def squeeze(self, axis: int | tuple[int, ...] | None = None) -> DeviceArray:
        """hrxarray.squeeze of this array."""

    def repeat(self, repeats: object, axis: int | None = None) -> DeviceArray:
        """hrxarray.repeat of this array."""

    def ravel(self, order: str = 'C') -> DeviceArray:
        """hrxarray.ravel of this array: a 1-d view when contiguous, else a copy."""

    def swapaxes(self, axis1: int, axis2: int) -> DeviceArray:
        """hrxarray.swapaxes of this array (a view)."""

    def sort(self, axis: int = -1, kind: str | None = None, order: None = None) -> None:
        """
        Sort this array in place along axis (NumPy's a.sort(): stable, NaNs last), asynchronously.
        """

    def argsort(self, axis: int | None = -1, kind: str | None = None, order: None = None) -> DeviceArray:
        """hrxarray.argsort of this array."""

    def var(self, axis: object = None, dtype: object = None, out: DeviceArray | None = None, ddof: float = 0, keepdims: bool = False, *, correction: float | None = None) -> DeviceArray:
        """
        hrxarray.var of this array (ddof or correction: the divisor is n - ddof).
        """

    def std(self, axis: object = None, dtype: object = None, out: DeviceArray | None = None, ddof: float = 0, keepdims: bool = False, *, correction: float | None = None) -> DeviceArray:
        """
        hrxarray.std of this array (ddof or correction: the divisor is n - ddof).
        """

    def cumsum(self, axis: int | None = None, dtype: object = None) -> DeviceArray:
        """hrxarray.cumsum of this array."""

    def cumprod(self, axis: int | None = None, dtype: object = None) -> DeviceArray:
        """hrxarray.cumprod of this array."""

    def sum(self, axis: object = None, dtype: object = None, out: object = None, keepdims: bool = False) -> DeviceArray:
        """hrxarray.sum of this array."""

    def prod(self, axis: object = None, dtype: object = None, out: object = None, keepdims: bool = False) -> DeviceArray:
        """hrxarray.prod of this array."""

    def max(self, axis: object = None, out: object = None, keepdims: bool = False) -> DeviceArray:
        """hrxarray.max of this array."""

    def min(self, axis: object = None, out: object = None, keepdims: bool = False) -> DeviceArray:
        """hrxarray.min of this array."""

    def mean(self, axis: object = None, dtype: object = None, out: object = None, keepdims: bool = False) -> DeviceArray:
        """hrxarray.mean of this array."""

    def any(self, axis: object = None, out: object = None, keepdims: bool = False) -> DeviceArray:
        """hrxarray.any of this array."""

    def all(self, axis: object = None, out: object = None, keepdims: bool = False) -> DeviceArray:
        """hrxarray.all of this array."""

    def dot(self, b: object, out: object = None) -> DeviceArray:
        """hrxarray.dot of this array and b."""

    def nonzero(self) -> tuple[DeviceArray, ...]:
        """hrxarray.nonzero of this array."""

    def argmax(self, axis: object = None, keepdims: bool = False) -> DeviceArray:
        """hrxarray.argmax of this array."""

    def argmin(self, axis: object = None, keepdims: bool = False) -> DeviceArray:
        """hrxarray.argmin of this array."""

    def __getitem__(self, key: object) -> DeviceArray:
        """
        Basic indexing (integers, slices, Ellipsis, None) gives a view of the same storage; integer arrays
        and boolean masks (NumPy's advanced indexing) gather into a new array on the compute lane, after a
        bounds check the host waits for (so a pending index array is waited for; IndexError naming the axis)
        or, for a mask, after its count (a data-dependent shape).
        """

    def __setitem__(self, key: object, value: object) -> None:
        """
        Copy value (array, scalar or host data) into the indexed view (or, through integer arrays and masks,
        the selected elements), asynchronously, as NumPy assigns: broadcasting, Python scalars converted exactly
        (OverflowError, ValueError for NaN into integers).
        """

    def round(self, decimals: int = 0, out: DeviceArray | None = None) -> DeviceArray:
        """hrxarray.round of this array (half to even; same dtype)."""

    def clip(self, min: object = None, max: object = None, out: DeviceArray | None = None, **kwargs: object) -> DeviceArray:
        """hrxarray.clip of this array."""

    def conj(self) -> DeviceArray:
        """The complex conjugate (hrxarray.conj); real arrays are their own."""

    def conjugate(self) -> DeviceArray:
        """NumPy's other name for conj(): the complex conjugate."""

    def tolist(self) -> Any:
        """The elements as nested Python lists of Python scalars (waits)."""

class ufunc:
    """
    An elementwise function over DeviceArrays (hx.add, hx.exp, ...), run on the GPU compute lane: NumPy's broadcasting, NEP 50 scalar promotion (with ml_dtypes' bfloat16 rules), out=, dtype= and where=. The result is returned at once; its data is ready when the operation completes.
    """

    @overload
    def __call__(self, *args: object, out: DeviceArray | tuple[DeviceArray, ...] | None = None, dtype: object | None = None, where: object = True, casting: str | None = None) -> DeviceArray:
        """
        Apply elementwise: f(*inputs, out=None, dtype=None, where=True) -> DeviceArray (out when given).
        """

    @overload
    def __call__(self, *args: object, **kwargs: object) -> DeviceArray:
        """
        Apply elementwise (any other keywords are refused with a TypeError naming them).
        """

    @property
    def nin(self) -> int:
        """Number of inputs."""

    @property
    def nout(self) -> int:
        """Number of outputs (1)."""

    @property
    def nargs(self) -> int:
        """Inputs plus outputs."""

    @property
    def ntypes(self) -> int:
        """Number of loops."""

    @property
    def types(self) -> list:
        """
        The loops as NumPy-style type strings ('ff->f'; bfloat16 is 'E'), in resolution order.
        """

    @property
    def identity(self) -> object:
        """The reduction identity (None when there is none)."""

    def __repr__(self) -> str: ...

    def reduce(self, a: object, axis: object = None, dtype: object = None, out: object = None, keepdims: bool = False) -> DeviceArray:
        """
        Reduce a along axis (None: all axes; an int or a tuple) with this binary ufunc. Integer add/multiply
        reductions accumulate in int64 (uint64 for unsigned) as NumPy's do; float16 and bfloat16 accumulate in
        float32 and round once. Empty reductions give the identity, or ValueError for ufuncs without one.
        """

    def at(self, a: DeviceArray, indices: object, b: object = None) -> None:
        """
        NumPy's ufunc.at for add, subtract, multiply, minimum and maximum: ``a[indices] = self(a[indices], b)``
        in place and unbuffered, so a repeated index accumulates every update in index order (``hx.add.at(x, i,
        1)`` counts). bool, integer, float16, float32 and float64 arrays; as NumPy's, each update runs in the
        result type of a's and b's dtypes (a Python scalar b counts as float64/int64/bool) and is cast back to
        a's dtype unsafely, so float64 values added to a float16 array round once per update.
        """

class BindingContract:
    """
    One argument of a kernel contract (HRX BindingContract): the minimum accessible extent in bytes (1..=isize::MAX: HRX has no zero-length binding), the required byte alignment (a power of two), every access the code may make through it, and a diagnostic layout label. An extent or alignment outside those raises ValueError naming the field.
    """

    def __init__(self, bytes: object, alignment: object, access: Access, layout: str = '') -> None: ...

    @property
    def bytes(self) -> int:
        """Minimum accessible extent, including every DMA or vector access."""

    @property
    def alignment(self) -> int:
        """Required byte alignment of the view (offset and address)."""

    @property
    def access(self) -> Access:
        """Every access the code may perform through the argument."""

    @property
    def layout(self) -> str:
        """A diagnostic label; packing is the caller's job."""

    def __eq__(self, arg: object, /) -> bool: ...

    def __hash__(self) -> int: ...

    def __repr__(self) -> str: ...

class KernelContract:
    """
    The memory contract of a kernel (HRX KernelContract): its bindings in argument order and its exact scalar constant bytes. Construction validates every binding (ValueError); each use is checked against it (ContractError).
    """

    def __init__(self, bindings: Sequence[BindingContract], constants: bytes = ...) -> None: ...

    @property
    def bindings(self) -> list[BindingContract]:
        """The BindingContracts, in argument order."""

    @property
    def constants(self) -> bytes:
        """The exact scalar argument bytes (b'' for buffer-only kernels)."""

    def __eq__(self, arg: object, /) -> bool: ...

    def __len__(self) -> int: ...

    def __repr__(self) -> str: ...

class Artifact:
    """
    A compiled program for one exact target (HRX loom::Artifact): a built-in NPU program (hx.kernels.npu) or a Loom kernel.def / pipeline.def (hx.loom.compile). Load NPU artifacts with npu.load_artifact(artifact, columns, contract), GPU ones with runtime.load_gpu_kernel(artifact, grid, block, contract).
    """

    @property
    def target(self) -> str:
        """The exact XDNA deployment target it was compiled for."""

    @property
    def symbol(self) -> str:
        """The program's entry symbol."""

    @property
    def bytes(self) -> int:
        """Image size in bytes, charged to the memory budget at load."""

    @property
    def name(self) -> str:
        """The built-in program's name."""

    @property
    def config(self) -> dict:
        """
        Its specialisation (Loom keys such as 'copy.packets'), defaults filled in.
        """

    @property
    def contract(self) -> KernelContract:
        """
        The contract the program's code needs: pass it (or a wider one) to load_artifact. Loom GPU kernels whose extents depend on device scalars raise ValueError: use contract_for.
        """

    @property
    def engine(self) -> object:
        """'gpu' (a Loom kernel.def) or 'npu'."""

    @property
    def executor(self) -> str:
        """
        Loom artifacts: 'native' (compiled with LLVM, Note [Native Loom executor]) or 'interpreter'. Checked mode always interprets.
        """

    @property
    def executor_reason(self) -> str:
        """Loom artifacts: why the program is interpreted ('' when native)."""

    @property
    def is_loom(self) -> bool:
        """True for artifacts compiled from Loom source (hx.loom.compile)."""

    @property
    def canonical_config(self) -> str:
        """
        Loom artifacts: the specialisation as canonical text 'key=value;...' (keys the program uses).
        """

    @property
    def manifest(self) -> dict:
        """
        Loom artifacts: the loom.artifact_manifest dict (loom.md §5.3, details mode): kind, schema_version, mode, artifact, targets, functions (interface, parameters, execution). Facts the emulator does not know are omitted.
        """

    def launch_config(self, *args) -> loom.LaunchConfig:
        """
        Loom GPU kernels: evaluate the host launch program for the workload values (ints and floats, in workload-signature order) as a LaunchConfig. ValueError for a wrong count, values out of range for their type, or a violated predicate.
        """

    def pack_constants(self, **kwargs) -> bytes:
        """
        Loom GPU kernels: the constant block (bytes) of the device scalars, each given by name (%alpha -> alpha=...), laid out in signature order as the device ABI packs them. ValueError for a missing or unknown name or a value out of range for its type.
        """

    def contract_for(self, **kwargs) -> KernelContract:
        """
        Loom artifacts: the KernelContract of the code under these device scalars (by name, as pack_constants): each binding's footprint, alignment and access, and the constant block.
        """

    def __repr__(self) -> str: ...

class Kernel:
    """
    Base class of GpuKernel and NpuKernel: a loaded kernel with its contract.
    """

    @property
    def name(self) -> str:
        """The kernel's name."""

    @property
    def contract(self) -> KernelContract:
        """Its KernelContract."""

    @property
    def engine(self) -> str:
        """'gpu' or 'npu'."""

    @property
    def runtime(self) -> Runtime:
        """The Runtime it was loaded on; only that runtime's graphs run it."""

class GpuKernel(Kernel):
    """A loaded GPU kernel; run it in a graph with g.gpu(kernel, views)."""

    def __repr__(self) -> str: ...

class NpuKernel(Kernel):
    """
    An NPU program loaded on one NPU (HRX NpuKernel); run it in a graph with g.npu(kernel, views). Its image bytes stay charged to the memory budget until it is dropped.
    """

    @property
    def columns(self) -> int:
        """AIE columns it was loaded on (1..=8)."""

    @property
    def image_bytes(self) -> int:
        """Image bytes charged to the memory budget."""

    @property
    def npu_index(self) -> int:
        """The index of the NPU it was loaded for."""

    def __repr__(self) -> str: ...
