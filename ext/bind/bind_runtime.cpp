// Runtime, devices, statistics and memory budgets.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "array_bind.h"
#include "bindings.h"
#include "gil.h"
#include "errors.h"
#include "provider/provider.h"
#include "py_types.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace hrx::bind {
namespace {

// Every runtime created from Python, so that interpreter exit can let their
// accepted work finish first (host regions need a live interpreter). Only
// touched with the GIL held, so never locked by another thread at a fork.
std::mutex g_runtimes_mu;
std::vector<std::weak_ptr<RuntimeCore>>* g_runtimes = new std::vector<std::weak_ptr<RuntimeCore>>();

void track(const std::shared_ptr<RuntimeCore>& rt) {
    std::lock_guard<std::mutex> lock(g_runtimes_mu);
    auto& v = *g_runtimes;
    v.erase(std::remove_if(v.begin(), v.end(), [](const auto& w) { return w.expired(); }), v.end());
    v.push_back(rt);
}

// An environment flag: set, non-empty and not "0".
bool env_flag(const char* name) {
    const char* v = std::getenv(name);
    return v && *v && std::string(v) != "0";
}

std::shared_ptr<RuntimeCore> make_runtime(const RuntimeOptions& o) {
    auto rt = RuntimeCore::create(o, provider::make_emulated_provider());
    track(rt);
    return rt;
}

// Note [Refused threads report before exit]: a daemon thread refused at exit
// unwinds and reports the HrxError (threading.excepthook, or its own handler)
// while the exit goes on; once the interpreter finalises, a thread that needs
// the GIL again is ended wherever it is. A report was cut (CPython prints
// "Exception in thread " and then reads thread.name, Python code that lets the
// main thread run), or lost whole when the handler took a while (a hook that
// writes to a log file). So the exit waits for the threads it refused to end,
// at most kRefusedReportWait in all, before it seals Python: each had only its
// own unwinding left. A thread that catches the refusal and goes on running
// costs the exit that bound once; one that waits for hrxarray again parks
// after the seal as before. A thread refused only after the hook returned
// races the interpreter's end, as every daemon thread's output does.
constexpr double kRefusedReportWait = 1.0;  // seconds, for all refused threads together

// Idents (threading.get_ident) of threads refused since exit began; touched
// with the GIL held.
std::vector<unsigned long>* g_refused = new std::vector<unsigned long>();

void join_refused_threads() {
    if (g_refused->empty()) return;
    nb::module_ threading = nb::module_::import_("threading");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kRefusedReportWait);
    const unsigned long self = PyThread_get_thread_ident();
    std::vector<unsigned long> joined;
    // Threads refused while this one waits are waited for too.
    while (true) {
        bool waited = false;
        for (nb::handle t : threading.attr("enumerate")()) {
            nb::object ident = t.attr("ident");
            if (ident.is_none()) continue;  // not started
            const unsigned long id = nb::cast<unsigned long>(ident);
            if (id == self || std::find(joined.begin(), joined.end(), id) != joined.end() ||
                std::find(g_refused->begin(), g_refused->end(), id) == g_refused->end())
                continue;
            joined.push_back(id);
            const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
            if (left <= 0) return;
            t.attr("join")(left);  // releases the GIL while it waits
            waited = true;
        }
        if (!waited) return;
    }
}

}  // namespace

// Note [The default runtime]: one per process, created on first use with the
// environment's options (HRXARRAY_CHECK_VISIBILITY, HRXARRAY_CHECKED). The
// Python object is kept, not only the runtime, so that every call returns
// the same object (nanobind would wrap a bare shared_ptr afresh once the last
// Python reference went). After fork() the child gets a new one on first use
// (Note [Fork] in runtime/scheduler.cpp): the parent's lanes do not exist
// there. Only touched with the GIL held.
nb::object default_runtime_object() {
    static nb::object* held = nullptr;  // never destroyed: it may outlive the module at exit
    if (!held || nb::cast<RuntimeCore&>(*held).scheduler().forked()) {
        RuntimeOptions o;
        o.check_visibility = env_flag("HRXARRAY_CHECK_VISIBILITY");
        o.checked = env_flag("HRXARRAY_CHECKED");
        nb::object fresh = nb::cast(make_runtime(o));
        if (!held)
            held = new nb::object(std::move(fresh));
        else
            *held = std::move(fresh);
    }
    return *held;
}

std::shared_ptr<RuntimeCore> default_runtime() { return nb::cast<std::shared_ptr<RuntimeCore>>(default_runtime_object()); }

void note_refused_thread() {
    const unsigned long id = PyThread_get_thread_ident();
    if (std::find(g_refused->begin(), g_refused->end(), id) == g_refused->end()) g_refused->push_back(id);
}

namespace {

// Note [Entering Python at exit] (gil.h): refuse new work, finish what was
// accepted, let the refused threads report (Note [Refused threads report
// before exit]), then seal Python. Runtimes inherited from before a fork have
// no lanes here and nothing of theirs can run: they are skipped.
void at_exit() {
    std::vector<std::shared_ptr<RuntimeCore>> live;
    {
        std::lock_guard<std::mutex> lock(g_runtimes_mu);
        for (const auto& w : *g_runtimes)
            if (auto rt = w.lock(); rt && !rt->scheduler().forked()) live.push_back(std::move(rt));
    }
    for (const auto& rt : live)
        rt->scheduler().close("hrxarray accepts no new work: the interpreter is exiting (work accepted before "
                              "exit still runs to completion)");
    {
        ReleaseGil release;
        for (const auto& rt : live) rt->scheduler().drain();
    }
    live.clear();  // dropping a runtime may run Python (host callables)
    join_refused_threads();
    seal_python();
}

nb::dict stats_dict(const Statistics& s) {
    nb::dict d;
    d["allocations"] = s.allocations;
    d["imports"] = s.imports;
    d["submissions"] = s.submissions;
    d["completions"] = s.completions;
    d["copied_bytes"] = s.copied_bytes;
    d["cache_maintenance_bytes"] = s.cache_maintenance_bytes;
    d["live_bytes"] = s.live_bytes;
    d["peak_bytes"] = s.peak_bytes;
    return d;
}

std::string device_repr(const char* kind, const RuntimeCore& rt, Engine e, int index) {
    const auto& ep = rt.endpoint(e, index);
    std::string s = std::string(kind) + "(index=" + std::to_string(index) + ", target='" + ep.target + "'";
    if (e == Engine::Npu) s += ", columns=" + std::to_string(ep.columns);
    return s + ", backend='" + rt.backend() + "')";
}

}  // namespace

void bind_runtime(nb::module_& m) {
    // Declared first so that every signature below names it; its methods are
    // added once the memory types they return are registered.
    nb::class_<RuntimeCore> rt(m, "Runtime", nb::is_weak_referenceable(),
                               "An HRX runtime over the device fabric: devices, allocation, statistics (and, with "
                               "the runtime layer, lanes, graphs and completions). The emulated fabric is used "
                               "when no native provider is available.");

    nb::class_<Statistics>(m, "Statistics",
                           "A snapshot of a runtime's counters (HRX execution::Statistics). Compare two "
                           "snapshots to see what a piece of work allocated, imported, copied or maintained.")
        .def_ro("allocations", &Statistics::allocations, "Backing allocations made.")
        .def_ro("imports", &Statistics::imports, "Imports: Shared allocations and dma-buf adoptions.")
        .def_ro("submissions", &Statistics::submissions, "Graph submissions accepted.")
        .def_ro("completions", &Statistics::completions, "Submissions retired.")
        .def_ro("copied_bytes", &Statistics::copied_bytes, "Bytes moved by copy regions.")
        .def_ro("cache_maintenance_bytes", &Statistics::cache_maintenance_bytes,
                "Bytes covered by host cache maintenance (flush/invalidate).")
        .def_ro("live_bytes", &Statistics::live_bytes, "Bytes of storage alive now.")
        .def_ro("peak_bytes", &Statistics::peak_bytes, "Largest live_bytes seen.")
        .def("as_dict", &stats_dict, "The counters as a dict.")
        .def("__eq__", [](const Statistics& a, const Statistics& b) { return stats_dict(a).equal(stats_dict(b)); })
        .def("__repr__", [](const Statistics& s) {
            return "Statistics(" + nb::cast<std::string>(nb::str(stats_dict(s))) + ")";
        });

    nb::class_<MemoryReservation>(m, "BudgetReservation",
                                  "Bytes reserved from a MemoryBudget; released by release(), by leaving "
                                  "its with-block, or when it is garbage collected.")
        .def_prop_ro("bytes", &MemoryReservation::bytes, "The reserved byte count.")
        .def_prop_ro("active", &MemoryReservation::active, "True until released.")
        .def("release", &MemoryReservation::release, "Give the bytes back (idempotent).")
        .def("__enter__", [](nb::handle self) { return nb::borrow(self); }, nb::sig("def __enter__(self) -> BudgetReservation"))
        .def("__exit__", [](MemoryReservation& r, nb::handle, nb::handle, nb::handle) { r.release(); },
             "exc_type"_a.none(), "exc"_a.none(), "tb"_a.none());

    nb::class_<MemoryBudget>(m, "MemoryBudget",
                             "A byte budget. Pass it as Runtime(memory_budget=...): every allocation reserves "
                             "its bytes first; requests larger than the whole budget raise ValueError, requests "
                             "that cannot fit now raise BusyError. Quarantined storage keeps its charge.")
        .def(nb::new_([](int64_t limit) {
                 if (limit <= 0)
                     fail(ErrorKind::Message, "MemoryBudget: the limit must be a positive byte count, got " +
                                                  std::to_string(limit));
                 return std::make_shared<MemoryBudget>(static_cast<uint64_t>(limit));
             }),
             "limit"_a)
        .def_prop_ro("limit", &MemoryBudget::limit, "The budget in bytes.")
        .def_prop_ro("used", &MemoryBudget::used, "Bytes currently charged.")
        .def(
            "reserve",
            [](const std::shared_ptr<MemoryBudget>& b, int64_t n) {
                const std::string who = "MemoryBudget.reserve(" + std::to_string(n) + ")";
                if (n < 0) fail(ErrorKind::Message, who + ": n must be nonnegative");
                return new MemoryReservation(b, static_cast<uint64_t>(n), who);
            },
            "n"_a,
            "Reserve n bytes (for work that will allocate later; 0 is allowed, as in HRX); returns a "
            "BudgetReservation guard. More than the whole limit raises ValueError, more than fits now BusyError.")
        .def("__repr__", [](const MemoryBudget& b) {
            return "MemoryBudget(limit=" + std::to_string(b.limit()) + ", used=" + std::to_string(b.used()) + ")";
        });

    nb::class_<GpuDevice>(m, "GpuDevice", "The runtime's GPU (gfx1151 on Strix Halo). Obtain it from rt.gpu().")
        .def_prop_ro("index", [](const GpuDevice& d) { return d.index; }, "The GPU's index.")
        .def_prop_ro("target", [](const GpuDevice& d) { return d.runtime->endpoint(Engine::Gpu, d.index).target; },
                     "The bare AMDGPU target, 'gfx1151'.")
        .def_prop_ro("name", [](const GpuDevice& d) { return d.runtime->endpoint(Engine::Gpu, d.index).name; },
                     "A human-readable device name.")
        .def_prop_ro("backend", [](const GpuDevice& d) { return d.runtime->backend(); },
                     "'emulated' or 'native'.")
        .def_prop_ro("runtime", [](const GpuDevice& d) { return d.runtime; }, "The owning Runtime.")
        .def("__eq__", [](const GpuDevice& a, nb::handle b) {
            return nb::isinstance<GpuDevice>(b) && a == nb::cast<const GpuDevice&>(b);
        })
        .def("__hash__", [](const GpuDevice& d) { return std::hash<const void*>()(d.runtime.get()) ^ 0x61u; })
        .def("__repr__", [](const GpuDevice& d) { return device_repr("GpuDevice", *d.runtime, Engine::Gpu, d.index); });

    nb::class_<NpuDevice>(m, "NpuDevice",
                          "One XDNA2 NPU (Strix Halo NPU5, 8 columns). Obtain it from rt.npu(index).")
        .def_prop_ro("index", [](const NpuDevice& d) { return d.index; }, "The NPU's index.")
        .def_prop_ro("target", [](const NpuDevice& d) { return d.runtime->endpoint(Engine::Npu, d.index).target; },
                     "The exact XDNA deployment target, 'amd.xdna.strix_halo.17f0_11'.")
        .def_prop_ro("columns", [](const NpuDevice& d) { return d.runtime->endpoint(Engine::Npu, d.index).columns; },
                     "AIE array columns (8).")
        .def_prop_ro("name", [](const NpuDevice& d) { return d.runtime->endpoint(Engine::Npu, d.index).name; },
                     "A human-readable device name.")
        .def_prop_ro("backend", [](const NpuDevice& d) { return d.runtime->backend(); },
                     "'emulated' or 'native'.")
        .def_prop_ro("runtime", [](const NpuDevice& d) { return d.runtime; }, "The owning Runtime.")
        .def("__eq__", [](const NpuDevice& a, nb::handle b) {
            return nb::isinstance<NpuDevice>(b) && a == nb::cast<const NpuDevice&>(b);
        })
        .def("__hash__",
             [](const NpuDevice& d) { return std::hash<const void*>()(d.runtime.get()) ^ (0x9e37u + unsigned(d.index)); })
        .def("__repr__", [](const NpuDevice& d) { return device_repr("NpuDevice", *d.runtime, Engine::Npu, d.index); });

    bind_memory(m);
    bind_graph(m, rt);
    bind_resident(m);
    bind_dlpack(m);
    bind_array(m);
    m.def("_at_exit", &at_exit,
          "Interpreter exit (hrxarray's atexit hook): every runtime refuses new work, the work accepted so far "
          "finishes (waiting without the GIL), then no other thread enters Python through hrxarray.");

    m.def("_default_runtime", &default_runtime_object,
          "The process-wide default Runtime, created on first use (hrxarray.default_runtime wraps it).");

    rt        .def(nb::new_([](int64_t max_submissions, int64_t graph_slots, std::shared_ptr<MemoryBudget> memory_budget,
                         int64_t gpu_index, bool check_visibility, std::optional<bool> checked) {
                 RuntimeOptions o;
                 o.max_submissions = max_submissions;
                 o.graph_slots = graph_slots;
                 o.gpu_index = gpu_index;
                 o.check_visibility = check_visibility;
                 o.checked = checked ? *checked : env_flag("HRXARRAY_CHECKED");
                 o.memory_budget = std::move(memory_budget);
                 return make_runtime(o);
             }),
             nb::kw_only(), "max_submissions"_a = 64, "graph_slots"_a = 2, "memory_budget"_a.none() = nb::none(),
             "gpu_index"_a = 0, "check_visibility"_a = false, "checked"_a.none() = nb::none(),
             "Create a runtime. check_visibility=True makes the emulator raise when an engine would read bytes "
             "that no cache transition made visible to it. checked=True runs Loom programs in checked mode "
             "(false assumptions, broken nsw/nuw promises, races, ... raise ExecutionError naming the source "
             "line and the lane); None takes it from the environment variable HRXARRAY_CHECKED (set and not "
             "'0': on).")
        .def_prop_ro("backend", &RuntimeCore::backend, "'emulated' or 'native'.")
        .def_prop_ro("max_submissions", [](const RuntimeCore& r) { return r.options().max_submissions; },
                     "Pending submissions allowed before BusyError.")
        .def_prop_ro("graph_slots", [](const RuntimeCore& r) { return r.options().graph_slots; },
                     "Completion slots per prepared graph.")
        .def_prop_ro("memory_budget", [](const RuntimeCore& r) { return r.options().memory_budget; },
                     "The MemoryBudget charged by allocations, or None.")
        .def_prop_ro("check_visibility", [](const RuntimeCore& r) { return r.options().check_visibility; },
                     "Whether skipped cache transitions raise.")
        .def_prop_ro("checked", [](const RuntimeCore& r) { return r.options().checked; },
                     "Whether Loom programs run in checked mode.")
        .def("gpu", &RuntimeCore::gpu, "The runtime's GPU device.")
        .def("npu", &RuntimeCore::npu, "index"_a = 0,
             "NPU number `index`; negative → ValueError, missing → UnsupportedError.")
        .def(
            "devices",
            [](const std::shared_ptr<RuntimeCore>& rt) {
                nb::list out;
                out.append(nb::cast(rt->gpu()));
                for (int i = 0; i < rt->npu_count(); ++i) out.append(nb::cast(rt->npu(i)));
                return out;
            },
            "Every device of the runtime: the GPU, then the NPUs.")
        .def("statistics", &RuntimeCore::statistics, "A snapshot of the runtime's Statistics.")
        .def(
            "_inject_fault",
            [](RuntimeCore& r, const std::string& message, const std::string& op) {
                if (op.empty()) fail(ErrorKind::Message, "_inject_fault: op must name an array operation");
                r.array_fault().arm(message, "the runtime's array operations", op);
            },
            "message"_a, "op"_a,
            "Fault injection (tests and failure drills): the next array operation dispatched on this runtime "
            "whose trace label is op ('add', 'astype', 'copy', 'sum', ...) fails with message, as a device "
            "fault would. BusyError when a fault is armed already.")
        .def(
            "allocate",
            [](RuntimeCore& r, nb::handle nbytes, const PyPlacement& placement) {
                return r.allocate(byte_count(nbytes, "allocate(" + nb::cast<std::string>(nb::repr(nbytes)) + ", " +
                                                         placement.value.repr() + ")"),
                                  placement.value);
            },
            "nbytes"_a, "placement"_a,
            "Allocate a zero-filled, 64-byte aligned Buffer of nbytes in the placement. The memory budget, if "
            "any, is reserved first.")
        .def(
            "adopt",
            [](RuntimeCore& r, const std::shared_ptr<Buffer>& buffer, const PyPlacement& placement) {
                return r.adopt(buffer, placement.value);
            },
            "buffer"_a, "placement"_a,
            "Share a GPU buffer (GpuLocal or HostVisible) with the NPU as Shared(npu), the way HRX exports and "
            "imports a dma-buf: the alias retains the original and shares its leases, guards and visibility "
            "state; it counts as an import and is not charged twice.")
        .def(
            "allocation_profiles",
            [](const std::shared_ptr<RuntimeCore>& r, nb::list devices, bool coherent_gpu) {
                std::vector<Site> sites;
                for (nb::handle d : devices) {
                    Site s = site_from_py(d, r.get(), "allocation_profiles");
                    if (s.engine == Engine::Host)
                        fail(ErrorKind::Message, "allocation_profiles: list devices, not 'host' (every profile is host-mapped)");
                    sites.push_back(s);
                }
                return r->allocation_profiles(sites, coherent_gpu);
            },
            "devices"_a, "coherent_gpu"_a = false,
            "The allocation profiles that admit every listed device, queried without allocating. "
            "coherent_gpu=True requests coherent GPU attachments (never NPU coherence).")
        .def("__repr__", [](const RuntimeCore& r) {
            return "Runtime(backend='" + r.backend() + "', max_submissions=" + std::to_string(r.options().max_submissions) +
                   ", graph_slots=" + std::to_string(r.options().graph_slots) + ")";
        });
}

}  // namespace hrx::bind
