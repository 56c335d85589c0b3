// Placements, buffers, views, host mapping guards, visibility facts and host
// cache maintenance.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <atomic>

#include "array_bind.h"
#include "bindings.h"
#include "checked.h"
#include "gil.h"
#include "errors.h"
#include "memory/guards.h"
#include "memory/ranges.h"
#include "runtime/host_visibility.h"
#include "py_types.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace hrx::bind {

nb::object placement_to_py(const Placement& p) {
    switch (p.kind) {
        case PlacementKind::GpuLocal: return nb::cast(PyGpuLocal{{p}});
        case PlacementKind::HostVisible: return nb::cast(PyHostVisible{{p}});
        case PlacementKind::NpuLocal: return nb::cast(PyNpuLocal{{p}});
        case PlacementKind::Shared: return nb::cast(PyShared{{p}});
    }
    return nb::none();
}

Site site_from_py(nb::handle h, const RuntimeCore* runtime, const std::string& op) {
    if (nb::isinstance<nb::str>(h)) {
        if (nb::cast<std::string>(h) == "host") return {Engine::Host, 0};
        fail(ErrorKind::Message, op + ": unknown site " + nb::cast<std::string>(nb::repr(h)) +
                                     "; sites are 'host' or a device");
    }
    const RuntimeCore* owner = nullptr;
    Site s;
    if (nb::isinstance<GpuDevice>(h)) {
        const auto& d = nb::cast<const GpuDevice&>(h);
        owner = d.runtime.get();
        s = {Engine::Gpu, d.index};
    } else if (nb::isinstance<NpuDevice>(h)) {
        const auto& d = nb::cast<const NpuDevice&>(h);
        owner = d.runtime.get();
        s = {Engine::Npu, d.index};
    } else {
        throw nb::type_error((op + ": a site is 'host', a GpuDevice or an NpuDevice, not " +
                              nb::cast<std::string>(nb::repr(h))).c_str());
    }
    if (owner != runtime) fail(ErrorKind::Message, op + ": the device belongs to another runtime");
    return s;
}

namespace {

}  // namespace

uint64_t byte_count(nb::handle h, const std::string& op) {
    int64_t v = 0;
    if (!int64_of(h, &v, op, "size") || v <= 0)
        fail(ErrorKind::Message, op + ": allocation size must be in 1..=isize::MAX, got " +
                                     nb::cast<std::string>(nb::repr(h)));
    return static_cast<uint64_t>(v);
}

namespace {

using BufferPtr = std::shared_ptr<Buffer>;


std::unique_ptr<HostMapping> map(const BufferPtr& b, bool write, bool wait) {
    // A blocking map may wait for device work: never hold the GIL then.
    ReleaseGil release;
    return HostMapping::acquire(b, write, wait);
}

nb::object raw_array(HostMapping& m) {
    uint8_t* data = m.data();
    auto* keep = new std::shared_ptr<StorageState>(m.buffer()->state());
    nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<StorageState>*>(p); });
    size_t shape[1] = {static_cast<size_t>(m.buffer()->nbytes())};
    if (m.writable()) return nb::cast(nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>>(data, 1, shape, owner));
    return nb::cast(nb::ndarray<nb::numpy, const uint8_t, nb::ndim<1>>(data, 1, shape, owner));
}

Engine engine_from_str(const std::string& s, const std::string& op) {
    if (s == "host") return Engine::Host;
    if (s == "gpu") return Engine::Gpu;
    if (s == "npu") return Engine::Npu;
    fail(ErrorKind::Message, op + ": engine must be 'host', 'gpu' or 'npu', got '" + s + "'");
}

template <typename E, size_t N>
E enum_from_str(const std::string& s, const E (&values)[N], const char* what) {
    for (E v : values)
        if (s == to_string(v)) return v;
    fail(ErrorKind::Message, std::string("CacheTransition: unknown ") + what + " '" + s + "'");
}

std::optional<std::vector<ByteRange>> ranges_from_py(nb::handle obj, uint64_t len, const std::string& op) {
    std::vector<ByteRange> out;
    if (obj.is_none()) return std::nullopt;
    auto bad = [&](nb::handle item) {
        fail(ErrorKind::Message, "visibility range out of bounds: " + nb::cast<std::string>(nb::repr(item)) +
                                     " is not a (start, end) pair of nonnegative ints over " +
                                     std::to_string(len) + " bytes");
    };
    for (nb::handle item : obj) {
        nb::object first, second;
        if (PyRange_Check(item.ptr())) {
            if (!nb::cast<nb::int_>(item.attr("step")).equal(nb::int_(1)))
                fail(ErrorKind::Message, "visibility ranges need step 1, got " + nb::cast<std::string>(nb::repr(item)));
            first = item.attr("start");
            second = item.attr("stop");
        } else {
            if (nb::isinstance<nb::str>(item) || !PySequence_Check(item.ptr()) || PySequence_Size(item.ptr()) != 2)
                bad(item);
            first = item[0];
            second = item[1];
        }
        int64_t start = 0, end = 0;
        if (!int64_of(first, &start, op, "a range's start") || !int64_of(second, &end, op, "a range's end") ||
            start < 0 || end < 0)
            bad(item);
        out.push_back({static_cast<uint64_t>(start), static_cast<uint64_t>(end)});
    }
    return out;
}

HostVisibilityPlan prepare_host(const BufferPtr& b, nb::handle ranges, bool release) {
    const std::string op = std::string(release ? "prepare_release_host" : "prepare_acquire_host") + " on " + b->describe();
    return prepare_host_visibility(b, ranges_from_py(ranges, b->nbytes(), op), release);
}

nb::tuple transition_tuple(const CacheTransition& t) {
    return nb::make_tuple(to_string(t.kind), to_string(t.executor), to_string(t.operation), t.range_granularity);
}

nb::object visibility_for(const BackingDesc& backing, const RuntimeCore* rt, nb::handle producer, nb::handle consumer,
                          const std::string& op) {
    Site p = site_from_py(producer, rt, op);
    Site c = site_from_py(consumer, rt, op);
    return nb::cast(visibility_facts(*rt, backing, p, c));
}

}  // namespace


namespace {

// NpuLocal and Shared name an NPU: say so instead of nanobind's generic
// "incompatible function arguments".
[[noreturn]] void npu_placement_error(const char* cls, nb::handle got) {
    throw nb::type_error((std::string(cls) + "(npu): " + cls + " memory belongs to one NPU; pass the device, as in "
                          "hx." + cls + "(hx.npu()) or hx." + cls + "(rt.npu()), got " +
                          (got.is_none() ? std::string("no argument") : nb::cast<std::string>(nb::repr(got))))
                             .c_str());
}

}  // namespace

void bind_memory(nb::module_& m) {
    nb::enum_<Access>(m, "Access", "How a kernel or host region uses a binding.")
        .value("READ", Access::Read, "Reads only.")
        .value("WRITE", Access::Write, "Writes without reading the prior contents.")
        .value("READ_WRITE", Access::ReadWrite, "Reads and writes.");

    // --- placements ---
    nb::class_<PyPlacement>(m, "Placement",
                            "Base class of the placements GpuLocal, HostVisible, NpuLocal and Shared: hashable "
                            "value objects saying where storage lives and which engines may bind it.")
        .def_prop_ro("host_mapped", [](const PyPlacement& p) { return p.value.host_mapped(); },
                     "Whether the host may map this storage (every placement but GpuLocal).")
        .def_prop_ro("gpu_bindable", [](const PyPlacement& p) { return p.value.gpu_bindable(); },
                     "Whether GPU copies and kernels may bind it (every placement but NpuLocal).")
        .def_prop_ro("npu_bindable", [](const PyPlacement& p) { return p.value.npu_bindable(); },
                     "Whether NPU programs may bind it (NpuLocal and Shared).")
        .def_prop_ro(
            "npu",
            [](const PyPlacement& p) -> nb::object {
                if (!p.value.names_npu()) return nb::none();
                return nb::cast(NpuDevice{runtime_of(p.value.runtime), p.value.npu_index});
            },
            nb::for_getter(nb::sig("def npu(self) -> NpuDevice | None")), "The NPU this placement names, or None.")
        .def(
            "__eq__",
            [](const PyPlacement& a, nb::handle b) {
                return nb::isinstance<PyPlacement>(b) && a.value == nb::cast<const PyPlacement&>(b).value;
            },
            "other"_a.none())
        .def("__hash__", [](const PyPlacement& p) { return p.value.hash(); })
        .def("__repr__", [](const PyPlacement& p) { return p.value.repr(); });

    nb::class_<PyGpuLocal, PyPlacement>(m, "GpuLocal",
                                        "GPU storage (cacheable system memory on Strix Halo) that the host does "
                                        "not map: move data in and out with graph copies.")
        .def("__init__", [](PyGpuLocal* self) { new (self) PyGpuLocal{{Placement{PlacementKind::GpuLocal, {}, 0}}}; });
    nb::class_<PyHostVisible, PyPlacement>(m, "HostVisible",
                                           "Coherent host-local memory that the GPU can bind (copies and kernels); "
                                           "not bindable by the NPU.")
        .def("__init__",
             [](PyHostVisible* self) { new (self) PyHostVisible{{Placement{PlacementKind::HostVisible, {}, 0}}}; });
    nb::class_<PyNpuLocal, PyPlacement>(m, "NpuLocal", "Host-mapped memory admitted only for one NPU.")
        .def(
            "__init__",
            [](PyNpuLocal* self, nb::handle npu) {
                if (!nb::isinstance<NpuDevice>(npu)) npu_placement_error("NpuLocal", npu);
                const auto& d = nb::cast<const NpuDevice&>(npu);
                new (self) PyNpuLocal{{Placement{PlacementKind::NpuLocal, d.runtime, d.index}}};
            },
            nb::sig("def __init__(self, npu: NpuDevice) -> None"), "npu"_a.none() = nb::none());
    nb::class_<PyShared, PyPlacement>(m, "Shared",
                                      "One allocation admitted for both the GPU and the NPU (and host mapped); "
                                      "hazards on it are allocation-wide.")
        .def(
            "__init__",
            [](PyShared* self, nb::handle npu) {
                if (!nb::isinstance<NpuDevice>(npu)) npu_placement_error("Shared", npu);
                const auto& d = nb::cast<const NpuDevice&>(npu);
                new (self) PyShared{{Placement{PlacementKind::Shared, d.runtime, d.index}}};
            },
            nb::sig("def __init__(self, npu: NpuDevice) -> None"), "npu"_a.none() = nb::none());

    // --- visibility facts ---
    nb::class_<CacheTransition>(m, "CacheTransition",
                                "One side of a visibility relation: kind ('unknown', 'none', 'range', 'global'), "
                                "executor ('none', 'queue', 'program', 'host_direct', 'host_api'), operation "
                                "('none', 'release_to_system', 'acquire_from_system', 'flush', 'invalidate') and "
                                "range granularity in bytes.")
        .def(
            "__init__",
            [](CacheTransition* self, const std::string& kind, const std::string& executor, const std::string& operation,
               uint64_t range_granularity) {
                static const TransitionKind kinds[] = {TransitionKind::Unknown, TransitionKind::None,
                                                       TransitionKind::Range, TransitionKind::Global};
                static const TransitionExecutor execs[] = {TransitionExecutor::None, TransitionExecutor::Queue,
                                                           TransitionExecutor::Program, TransitionExecutor::HostDirect,
                                                           TransitionExecutor::HostApi};
                static const TransitionOperation ops[] = {
                    TransitionOperation::None, TransitionOperation::ReleaseToSystem,
                    TransitionOperation::AcquireFromSystem, TransitionOperation::Flush, TransitionOperation::Invalidate};
                new (self) CacheTransition{enum_from_str(kind, kinds, "kind"), enum_from_str(executor, execs, "executor"),
                                           enum_from_str(operation, ops, "operation"), range_granularity};
            },
            "kind"_a, "executor"_a, "operation"_a, "range_granularity"_a)
        .def_prop_ro("kind", [](const CacheTransition& t) { return to_string(t.kind); }, "The transition kind.")
        .def_prop_ro("executor", [](const CacheTransition& t) { return to_string(t.executor); }, "Who performs it.")
        .def_prop_ro("operation", [](const CacheTransition& t) { return to_string(t.operation); }, "What it does.")
        .def_ro("range_granularity", &CacheTransition::range_granularity,
                "Smallest independently transitionable range (bytes); 0 for none/global.")
        .def("__eq__", [](const CacheTransition& a, nb::handle b) {
            return nb::isinstance<CacheTransition>(b) && a == nb::cast<const CacheTransition&>(b);
        })
        .def("__hash__", [](const CacheTransition& t) { return nb::hash(transition_tuple(t)); })
        .def("__repr__", [](const CacheTransition& t) {
            return std::string("CacheTransition(kind='") + to_string(t.kind) + "', executor='" + to_string(t.executor) +
                   "', operation='" + to_string(t.operation) + "', range_granularity=" +
                   std::to_string(t.range_granularity) + ")";
        });

    nb::class_<VisibilityFacts>(m, "Visibility",
                                "What a producer site must do after writing (release) and a consumer site before "
                                "reading (acquire) so the consumer sees the bytes, plus atomic scopes. Describes "
                                "visibility only: execution order is separate.")
        .def_ro("shared_backing_reachable", &VisibilityFacts::shared_backing_reachable,
                "The consumer reaches the producer's backing directly.")
        .def_ro("release", &VisibilityFacts::release, "Producer-side CacheTransition after writes.")
        .def_ro("acquire", &VisibilityFacts::acquire, "Consumer-side CacheTransition before reads.")
        .def_prop_ro("atomic_scope_32", [](const VisibilityFacts& f) { return to_string(f.atomic_scope_32); },
                     "Widest scope of mutual atomicity for aligned 32-bit words: 'none', 'device', 'fabric', 'system'.")
        .def_prop_ro("atomic_scope_64", [](const VisibilityFacts& f) { return to_string(f.atomic_scope_64); },
                     "As atomic_scope_32, for 64-bit words.")
        .def_ro("estimated_fixed_cost_ns", &VisibilityFacts::estimated_fixed_cost_ns,
                "The provider's fixed-cost estimate in ns (not a measurement), or None.")
        .def("__repr__", [](const VisibilityFacts& f) {
            return "Visibility(shared_backing_reachable=" + std::string(f.shared_backing_reachable ? "True" : "False") +
                   ", release=" + nb::cast<std::string>(nb::repr(nb::cast(f.release))) +
                   ", acquire=" + nb::cast<std::string>(nb::repr(nb::cast(f.acquire))) + ", atomic_scope_32='" +
                   to_string(f.atomic_scope_32) + "', atomic_scope_64='" + to_string(f.atomic_scope_64) + "')";
        });

    nb::class_<HostVisibilityPlan>(m, "PreparedHostVisibility",
                                       "Host cache maintenance prepared once with HRX's range rules (sorted, "
                                       "merged when overlapping or adjacent, collapsed to the whole buffer for "
                                       "'none'/'global' recipes); execute() runs it.")
        .def_prop_ro(
            "ranges",
            [](const HostVisibilityPlan& p) {
                nb::list out;
                for (const auto& r : p.ranges) out.append(nb::make_tuple(r.start, r.end));
                return out;
            },
            "The merged (start, end) byte ranges.")
        .def_prop_ro("operation_count", [](const HostVisibilityPlan& p) { return p.ranges.size(); },
                     "Native cache calls (or fences for a no-op recipe) that execute() makes.")
        .def_ro("transition", &HostVisibilityPlan::transition, "The host recipe being applied.")
        .def("execute", &execute_host_visibility, nb::call_guard<ReleaseGil>(),
             "Run one host cache transition per range; maintained bytes are added to the statistics.")
        .def("__repr__", [](const HostVisibilityPlan& p) {
            return "PreparedHostVisibility(" + std::string(p.release ? "release" : "acquire") + ", " +
                   std::to_string(p.ranges.size()) + " operation(s), " + to_string(p.transition.kind) + ")";
        });

    // --- buffers ---
    nb::class_<HostMapping>(m, "HostMapping",
                            "A live host mapping guard over a whole buffer. Use it as a context manager: "
                            "`with buf.map_read() as view:` gives a NumPy uint8 view (read-only for read "
                            "guards) that raises once the guard is released.")
        .def_prop_ro("active", &HostMapping::active, "True until released.")
        .def_prop_ro("writable", &HostMapping::writable, "True for write guards.")
        .def_prop_ro("buffer", [](const HostMapping& g) { return g.buffer(); }, "The mapped Buffer.")
        .def("release", &HostMapping::release,
             "Release the guard (idempotent); dropping a write guard marks the host as the last writer.")
        .def("_raw_array", &raw_array, "The unchecked NumPy array of the mapping (use the context manager).")
        .def("__enter__",
             [](nb::handle self) { return python_builder(Builder::HostView)(self); },
             nb::sig("def __enter__(self) -> numpy.typing.NDArray[typing.Any]"))
        .def("__exit__", [](HostMapping& g, nb::handle, nb::handle, nb::handle) { g.release(); },
             "exc_type"_a.none(), "exc"_a.none(), "tb"_a.none())
        .def("__repr__", [](const HostMapping& g) {
            return std::string(g.writable() ? "HostMapping(write, " : "HostMapping(read, ") + g.buffer()->describe() +
                   (g.active() ? ")" : ", released)");
        });

    nb::class_<DeviceLease>(m, "DeviceLease",
                            "A device-use lease on a buffer's storage, as the runtime takes at dispatch; "
                            "for tests and diagnostics.")
        .def_prop_ro("active", &DeviceLease::active, "True until released.")
        .def("release", &DeviceLease::release, "Drop the lease (idempotent); waiting host guards wake.")
        .def("__enter__", [](nb::handle self) { return nb::borrow(self); }, nb::sig("def __enter__(self) -> DeviceLease"))
        .def("__exit__", [](DeviceLease& l, nb::handle, nb::handle, nb::handle) { l.release(); },
             "exc_type"_a.none(), "exc"_a.none(), "tb"_a.none());

    nb::class_<BufferView>(m, "BufferView",
                           "A byte range of a Buffer (HRX BufferView); keeping it alive keeps the storage alive.")
        .def_ro("buffer", &BufferView::buffer, "The viewed Buffer.")
        .def_ro("offset", &BufferView::offset, "Start, in bytes from the start of the buffer.")
        .def_ro("length", &BufferView::length, "Length in bytes.")
        .def(
            "slice",
            [](const BufferView& v, int64_t offset, std::optional<int64_t> length) { return slice_of(v, offset, length); },
            "offset"_a, "length"_a.none() = nb::none(),
            "A sub-view relative to this view; out of bounds → ValueError.")
        .def("__len__", [](const BufferView& v) { return v.length; })
        .def("__repr__", [](const BufferView& v) {
            return "BufferView(" + v.buffer->describe() + ", offset=" + std::to_string(v.offset) +
                   ", length=" + std::to_string(v.length) + ")";
        });

    nb::class_<Buffer>(m, "Buffer",
                       "A runtime buffer (HRX execution::Buffer): zero-filled, 64-byte aligned storage in one "
                       "placement. Copies made with clone() and aliases made by Runtime.adopt share lifetime, "
                       "guards, poison and visibility state.")
        .def_prop_ro("nbytes", &Buffer::nbytes, "Size in bytes.")
        .def_prop_ro("placement", [](const Buffer& b) { return placement_to_py(b.placement()); },
                     nb::for_getter(nb::sig("def placement(self) -> Placement")), "The placement.")
        .def_prop_ro("runtime", [](const Buffer& b) { return runtime_of(b.state()->owner()); }, "The owning Runtime.")
        .def_prop_ro("poisoned", [](const Buffer& b) { return b.state()->poison_message().has_value(); },
                     "True once a failure poisoned the storage.")
        .def(
            "view",
            [](const BufferPtr& b, int64_t offset, std::optional<int64_t> length) { return view_of(b, offset, length); },
            "offset"_a = 0, "length"_a.none() = nb::none(),
            "A BufferView of [offset, offset+length) (to the end by default); out of bounds → ValueError.")
        .def("clone", [](const Buffer& b) { return std::make_shared<Buffer>(b); },
             "Another handle on the same storage (an alias); the storage lives while any handle does.")
        .def("same_storage", [](const Buffer& a, const Buffer& b) { return a.state() == b.state(); }, "other"_a,
             "Whether both handles alias one storage.")
        .def("map_read", [](const BufferPtr& b) { return map(b, false, true); },
             "A read guard; waits for pending device writers. Conflicting host writers → BusyError; GpuLocal → "
             "UnsupportedError; poisoned storage → DeviceLostError.")
        .def("map_write", [](const BufferPtr& b) { return map(b, true, true); },
             "A write guard; waits for any pending device use. Any other live host guard or lease → BusyError.")
        .def("try_map_read", [](const BufferPtr& b) { return map(b, false, false); },
             "As map_read, but pending device writers → BusyError instead of a wait.")
        .def("try_map_write", [](const BufferPtr& b) { return map(b, true, false); },
             "As map_write, but pending device use → BusyError instead of a wait.")
        .def(
            "visibility",
            [](const Buffer& b, nb::handle producer, nb::handle consumer) {
                return visibility_for(b.backing(), &runtime_of(*b.state()->owner()), producer, consumer,
                                      "visibility on " + b.describe());
            },
            "producer"_a, "consumer"_a,
            nb::sig("def visibility(self, producer: str | GpuDevice | NpuDevice, consumer: str | GpuDevice | NpuDevice) -> Visibility"),
            "Visibility facts between two sites ('host' or a device) of this buffer's backing; a device not "
            "admitted to the backing → ValueError.")
        .def("prepare_release_host", [](const BufferPtr& b, nb::handle ranges) { return prepare_host(b, ranges, true); },
             "ranges"_a.none() = nb::none(),
             "Prepare the host flush that publishes host writes of the (start, end) ranges (None: whole buffer).")
        .def("prepare_acquire_host", [](const BufferPtr& b, nb::handle ranges) { return prepare_host(b, ranges, false); },
             "ranges"_a.none() = nb::none(),
             "Prepare the host invalidate that acquires device writes of the (start, end) ranges (None: whole buffer).")
        .def(
            "_device_lease",
            [](const Buffer& b, Access access) { return DeviceLease::acquire(b, access); },
            "access"_a, "Take a device-use lease as the runtime does at dispatch (tests and diagnostics).")
        .def("_poison", [](const Buffer& b, const std::string& message) { b.state()->poison(message); }, "message"_a,
             "Poison the storage as a failed region would (tests and diagnostics).")
        .def(
            "_make_visible",
            [](const Buffer& b, const std::string& engine) {
                return b.state()->make_visible(engine_from_str(engine, "_make_visible"));
            },
            "engine"_a, "Run the runtime's visibility transition for an engine; returns the bytes maintained.")
        .def(
            "_mark_written",
            [](const Buffer& b, const std::string& engine) {
                b.state()->mark_written(engine_from_str(engine, "_mark_written"));
            },
            "engine"_a, "Record that an engine wrote the storage, as the runtime does after a region.")
        .def(
            "_engine_access",
            [](const Buffer& b, const std::string& engine, Access access) {
                b.state()->check_engine_access(engine_from_str(engine, "_engine_access"), access,
                                               "_engine_access on " + b.describe());
            },
            "engine"_a, "access"_a,
            "The checked-mode test an emulated engine runs before touching the storage: raises HrxError when it "
            "would read bytes no transition made visible to it.")
        .def(
            "_state",
            [](const Buffer& b) {
                const auto& s = *b.state();
                GuardSnapshot g = s.guards();
                nb::dict d;
                d["host_readers"] = g.host_readers;
                d["host_writer"] = g.host_writer;
                d["host_leases"] = g.host_leases;
                d["device_readers"] = g.device_readers;
                d["device_writers"] = g.device_writers;
                d["last_writer"] = engine_name(s.last_writer());
                nb::list visible;
                for (Engine e : {Engine::Host, Engine::Gpu, Engine::Npu})
                    if (s.visible_mask() & (1u << static_cast<unsigned>(e))) visible.append(engine_name(e));
                d["visible_to"] = visible;
                d["needs_host_maintenance"] = s.needs_host_maintenance();
                d["poison"] = s.poison_message();
                return d;
            },
            "Guard, lease, visibility and poison state of the storage (tests and diagnostics).")
        .def("__repr__", [](const Buffer& b) { return b.describe(); });

    nb::class_<AllocationProfile>(m, "AllocationProfile",
                                  "A memory profile for a device set (HRX fabric::AllocationProfile), queried "
                                  "before any allocation: size limits, prospective visibility facts, allocate().")
        .def_prop_ro("name", [](const AllocationProfile& p) { return p.info.name; }, "The profile's name.")
        .def_prop_ro("maximum_bytes", [](const AllocationProfile& p) { return p.info.maximum_bytes; },
                     "Largest allocation.")
        .def_prop_ro("byte_granularity", [](const AllocationProfile& p) { return p.info.byte_granularity; },
                     "Sizes must be multiples of this.")
        .def_prop_ro("placement", [](const AllocationProfile& p) { return placement_to_py(p.placement()); },
                     nb::for_getter(nb::sig("def placement(self) -> Placement")),
                     "The placement its buffers report.")
        .def_prop_ro("coherent_gpu", [](const AllocationProfile& p) { return p.backing.gpu_coherent; },
                     "Whether the GPU attachment is host-coherent.")
        .def(
            "visibility",
            [](const AllocationProfile& p, nb::handle producer, nb::handle consumer) {
                return visibility_for(p.backing, p.runtime.get(), producer, consumer, "profile.visibility");
            },
            "producer"_a, "consumer"_a,
            nb::sig("def visibility(self, producer: str | GpuDevice | NpuDevice, consumer: str | GpuDevice | NpuDevice) -> Visibility"),
            "Prospective visibility facts, before any backing exists.")
        .def(
            "allocate",
            [](const AllocationProfile& p, nb::handle nbytes) {
                return p.runtime->allocate_with_profile(p, byte_count(nbytes, "profile.allocate"));
            },
            "nbytes"_a, "Allocate under exactly this profile.")
        .def("__repr__", [](const AllocationProfile& p) {
            return "AllocationProfile('" + p.info.name + "', placement=" + p.placement().repr() + ")";
        });
}

}  // namespace hrx::bind
