// Graphs, prepared graphs, completions and traces.
#include <cmath>

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "gil.h"
#include "py_region.h"
#include "errors.h"
#include "py_types.h"
#include "runtime/runtime.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace hrx::bind {

std::shared_ptr<Kernel> kernel_from_py(nb::handle h, const char* op) {
    std::shared_ptr<Kernel> k;
    if (!nb::try_cast(h, k) || !k)
        throw nb::type_error((std::string(op) + ": expected a GpuKernel or NpuKernel, got " +
                              nb::cast<std::string>(nb::repr(h.type())))
                                 .c_str());
    return k;
}

BufferView view_from_py(nb::handle h, const std::string& op) {
    if (nb::isinstance<BufferView>(h)) return nb::cast<BufferView>(h);
    if (nb::isinstance<Buffer>(h)) {
        auto b = nb::cast<std::shared_ptr<Buffer>>(h);
        return BufferView{b, 0, b->nbytes()};
    }
    throw nb::type_error(
        (op + ": expected a Buffer or BufferView, got " + nb::cast<std::string>(nb::repr(h.type()))).c_str());
}

std::vector<BufferView> views_from_py(nb::handle views, const std::string& op) {
    std::vector<BufferView> out;
    for (nb::handle v : nb::iter(views)) out.push_back(view_from_py(v, op));
    return out;
}

namespace {

nb::object span_array(const HostSpan& s) {
    auto* keep = new std::shared_ptr<StorageState>(s.storage);
    nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<StorageState>*>(p); });
    size_t shape[1] = {static_cast<size_t>(s.length)};
    if (s.writable) return nb::cast(nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>>(s.data, 1, shape, owner));
    return nb::cast(nb::ndarray<nb::numpy, const uint8_t, nb::ndim<1>>(s.data, 1, shape, owner));
}

HostFn host_fn(nb::handle fn) {
    auto ref = std::make_shared<PyRef>(fn);
    return [ref](const std::vector<HostSpan>& spans) {
        run_python("host region", [&] {
            nb::list args;
            for (const auto& s : spans) args.append(span_array(s));
            ref->get()(*args);
        });
    };
}

struct Graph {
    GraphBuilder builder;
};

struct Completion {
    std::shared_ptr<CompletionState> state;
    std::shared_ptr<SlotToken> slot;  // keeps the graph slot reserved while this observer lives
    std::weak_ptr<RuntimeCore> runtime;
};

bool wait_released(const CompletionState& s, std::optional<double> timeout, const char* op) {
    timeout = timeout_arg(timeout, op);
    ReleaseGil release;
    return s.wait(timeout);
}

}  // namespace

std::optional<double> timeout_arg(std::optional<double> timeout, const char* op) {
    if (timeout && std::isnan(*timeout))
        fail(ErrorKind::Message, std::string(op) + ": timeout must be a number of seconds or None, got nan");
    return timeout;
}

// The exception a finished completion reports, or None.
nb::object outcome_exception(const CompletionState::Outcome& o) {
    using S = CompletionState::Status;
    if (o.status == S::Succeeded || o.status == S::Pending) return nb::none();
    if (o.status == S::Cancelled)
        return nb::steal(PyObject_CallOneArg(exception_type(ErrorKind::Cancelled), nb::str(o.message.c_str()).ptr()));
    nb::object cause;
    const std::string& text = o.cause_message.empty() ? o.message : o.cause_message;
    if (o.cause_payload)
        cause = nb::borrow(static_cast<PyRef*>(o.cause_payload.get())->get());
    else
        cause = nb::steal(PyObject_CallOneArg(exception_type(o.cause_kind), nb::str(text.c_str()).ptr()));
    // A LAPACK refusal raises hx.LinAlgError, itself an ExecutionError.
    const ErrorKind top = o.cause_kind == ErrorKind::LinAlg ? ErrorKind::LinAlg : ErrorKind::Execution;
    nb::object exc = nb::steal(PyObject_CallOneArg(exception_type(top), nb::str(o.message.c_str()).ptr()));
    if (!exc.is_valid() || !cause.is_valid()) throw nb::python_error();
    PyException_SetCause(exc.ptr(), cause.inc_ref().ptr());
    return exc;
}

namespace {

std::shared_ptr<PreparedGraph> prepare(const Graph& g) { return g.builder.prepare(); }

Completion submit(const std::shared_ptr<PreparedGraph>& g, nb::handle after) {
    std::vector<std::shared_ptr<CompletionState>> producers;
    if (!after.is_none())
        for (nb::handle c : after) {
            if (!nb::isinstance<Completion>(c))
                throw nb::type_error("submit_after: expected a list of Completion objects");
            producers.push_back(nb::cast<const Completion&>(c).state);
        }
    std::shared_ptr<SlotToken> slot;
    auto state = g->runtime->submit(g, producers, &slot);
    return Completion{std::move(state), std::move(slot), g->runtime};
}

}  // namespace

void bind_graph(nb::module_& m, nb::class_<RuntimeCore>& rt) {
    nb::class_<Graph>(m, "Graph",
                      "A graph under construction (HRX Graph): fills, copies, kernels and host regions over "
                      "buffer views. prepare() turns it into an ExecutableGraph of lane-bound regions.")
        .def(
            "fill",
            [](Graph& g, nb::handle view, int byte) {
                if (byte < 0 || byte > 255)
                    fail(ErrorKind::Message, "fill: byte must be in 0..=255, got " + std::to_string(byte));
                g.builder.fill(view_from_py(view, "fill"), static_cast<uint8_t>(byte));
            },
            "view"_a, "byte"_a, "Fill a GPU-bindable view with one byte value (compute lane).")
        .def(
            "copy", [](Graph& g, nb::handle dst, nb::handle src) {
                g.builder.copy(view_from_py(dst, "copy"), view_from_py(src, "copy"));
            },
            "dst"_a, "src"_a,
            "Copy src into dst (equal, non-overlapping lengths). Host-mapped → not host-mapped runs on the "
            "upload lane, the reverse on the download lane, anything else on the compute lane.")
        .def(
            "copy_on",
            [](Graph& g, nb::handle dst, nb::handle src, const std::string& lane) {
                Lane l;
                if (!lane_from_name(lane, &l))
                    fail(ErrorKind::Message, "copy_on: unknown lane '" + lane + "'; lanes are upload, compute, download");
                g.builder.copy_on(view_from_py(dst, "copy_on"), view_from_py(src, "copy_on"), l);
            },
            "dst"_a, "src"_a, "lane"_a, "Copy on an explicit GPU lane ('upload', 'compute' or 'download').")
        .def(
            "host",
            [](Graph& g, nb::handle fn, nb::handle accesses) {
                if (!PyCallable_Check(fn.ptr())) throw nb::type_error("host: fn must be callable");
                std::vector<Use> uses;
                for (nb::handle item : accesses) {
                    if (!PySequence_Check(item.ptr()) || PySequence_Size(item.ptr()) != 2)
                        throw nb::type_error("host: accesses are (view, hx.Access) pairs");
                    uses.push_back({view_from_py(item[0], "host"), nb::cast<Access>(item[1])});
                }
                g.builder.host(host_fn(fn), uses);
            },
            "fn"_a, "accesses"_a,
            "A host region: fn(*arrays) runs on the host lane, holding the GIL, with one NumPy uint8 array "
            "per (view, Access) pair (read-only for READ).")
        .def(
            "gpu",
            [](Graph& g, nb::handle kernel, nb::handle views) {
                g.builder.gpu(kernel_from_py(kernel, "gpu"), views_from_py(views, "gpu"));
            },
            "kernel"_a, "views"_a,
            "Run a GpuKernel over views (one per contract binding) on the compute lane; contract violations → "
            "ContractError.")
        .def(
            "npu",
            [](Graph& g, nb::handle kernel, nb::handle views) {
                g.builder.npu(kernel_from_py(kernel, "npu"), views_from_py(views, "npu"));
            },
            "kernel"_a, "views"_a,
            "Run an NpuKernel over views (NpuLocal or Shared storage of its NPU) as its own region on the npu lane.")
        .def("__len__", [](const Graph& g) { return g.builder.size(); })
        .def("prepare", &prepare,
             "Form lane-bound regions and their dependencies; bindings are immutable afterwards. An empty graph "
             "→ ValueError.");

    nb::class_<PreparedGraph>(m, "ExecutableGraph",
                              "A prepared graph (HRX ExecutableGraph): replay it with submit(); replays allocate "
                              "nothing.")
        .def_prop_ro(
            "regions",
            [](const PreparedGraph& g) {
                nb::list out;
                for (const auto& r : g.regions) out.append(lane_name(r.lane));
                return out;
            },
            "The lane of each region, in order.")
        .def_prop_ro("quarantined", &PreparedGraph::quarantined, "True after a region of it failed.")
        .def("submit", [](const std::shared_ptr<PreparedGraph>& g) { return submit(g, nb::none()); },
             "Submit a run; never waits. Exhaustion (submission capacity, graph slots, a conflicting live host "
             "mapping) is BusyError; poisoned storage or a quarantined graph is DeviceLostError.")
        .def("submit_after", &submit, "completions"_a,
             "As submit(), also ordered after the given completions; a failed or cancelled producer prevents "
             "execution.");

    nb::class_<Completion>(m, "Completion",
                           "The completion of one submission. Waits release the GIL; a timeout never cancels. "
                           "Keeping it alive keeps its graph slot reserved. Awaitable in asyncio.")
        .def("done", [](const Completion& c) { return c.state->done(); }, "Whether it has finished (in any way).")
        .def(
            "wait",
            [](const Completion& c, std::optional<double> timeout) { return wait_released(*c.state, timeout, "wait"); },
            "timeout"_a.none() = nb::none(),
            "Wait up to timeout seconds; True once finished, False if the timeout passed first. None, inf or any "
            "timeout too large for the clock waits without limit; 0 or a negative timeout does not wait "
            "(concurrent.futures' rule); NaN → ValueError. In a host region (a lane thread) a wait for work that "
            "cannot finish before the host region returns raises BusyError instead of stopping the lane.")
        .def(
            "result",
            [](const Completion& c, std::optional<double> timeout) {
                if (!wait_released(*c.state, timeout, "result")) {
                    PyErr_SetString(PyExc_TimeoutError, "result: the submission is still pending after the timeout "
                                                        "(nothing was cancelled)");
                    throw nb::python_error();
                }
                // Note [Failed outcomes reach the caller]: raised by the translator.
                if (c.state->status() != CompletionState::Status::Succeeded) throw TaskFailure(c.state->outcome());
            },
            "timeout"_a.none() = nb::none(),
            "Wait, then return None or raise ExecutionError (chained to the region's error) or CancelledError; "
            "TimeoutError if the timeout passes first (timeouts as for wait()).")
        .def(
            "exception",
            [](const Completion& c, std::optional<double> timeout) {
                if (!wait_released(*c.state, timeout, "exception")) {
                    PyErr_SetString(PyExc_TimeoutError, "exception: the submission is still pending after the "
                                                        "timeout (nothing was cancelled)");
                    throw nb::python_error();
                }
                return outcome_exception(c.state->outcome());
            },
            "timeout"_a.none() = nb::none(), nb::sig("def exception(self, timeout: float | None = None) -> BaseException | None"),
            "Wait, then return the exception result() would raise, or None; TimeoutError if the timeout passes first "
            "(timeouts as for wait()).")
        .def(
            "cancel",
            [](const Completion& c) {
                if (c.state->done()) return false;
                c.state->request_cancel();
                if (auto r = c.runtime.lock()) r->scheduler().poke();
                return true;
            },
            "Skip the regions not yet scheduled (running ones drain); the result is CancelledError. False if "
            "already finished.")
        .def(
            "add_done_callback",
            [](nb::handle self, nb::handle fn) {
                if (!PyCallable_Check(fn.ptr())) throw nb::type_error("add_done_callback: fn must be callable");
                auto me = std::make_shared<PyRef>(self);
                auto f = std::make_shared<PyRef>(fn);
                nb::cast<Completion&>(self).state->on_done([me, f] {
                    EnterPython gil;
                    if (!gil) return;
                    PyObject* r = PyObject_CallOneArg(f->get().ptr(), me->get().ptr());
                    if (r)
                        Py_DECREF(r);
                    else
                        PyErr_WriteUnraisable(f->get().ptr());
                });
            },
            "fn"_a,
            "Call fn(completion) once when finished, holding the GIL: at once on the calling thread if it already "
            "is, otherwise on the runtime's callback thread (never a lane thread, so fn may wait for more work), "
            "in the order completions finish. What fn raises goes to sys.unraisablehook.")
        .def("__await__",
             [](nb::handle self) { return python_builder(Builder::AwaitCompletion)(self); },
             nb::sig("def __await__(self) -> collections.abc.Generator[typing.Any, None, None]"))
        .def("__repr__", [](const Completion& c) {
            static const char* names[] = {"pending", "succeeded", "failed", "cancelled"};
            return std::string("Completion(") + names[static_cast<int>(c.state->outcome().status)] + ")";
        });

    rt.def("graph", [](const std::shared_ptr<RuntimeCore>& r) { return Graph{GraphBuilder(r)}; },
           "A new, empty Graph on this runtime.")
        .def("start_trace", [](RuntimeCore& r, int64_t capacity) {
                 if (capacity <= 0) fail(ErrorKind::Message, "start_trace: capacity must be at least 1");
                 r.scheduler().start_trace(static_cast<size_t>(capacity));
             },
             "capacity"_a, "Record executed regions (at most capacity, oldest dropped); already tracing → BusyError.")
        .def(
            "finish_trace",
            [](RuntimeCore& r) {
                uint64_t dropped = 0;
                auto events = r.scheduler().finish_trace(&dropped);
                nb::list out;
                for (const auto& e : events) {
                    nb::dict d;
                    d["lane"] = lane_name(e.lane);
                    d["op"] = e.op;
                    if (!e.detail.empty()) d["detail"] = e.detail;
                    d["start_us"] = e.start_us;
                    d["duration_us"] = e.duration_us;
                    d["bytes"] = e.bytes;
                    d["failed"] = e.failed;
                    d["submission"] = e.submission;
                    d["region"] = e.region;
                    out.append(d);
                }
                return python_builder(Builder::Trace)(out, dropped);
            },
            nb::sig("def finish_trace(self) -> hrxarray._trace.Trace"), "Stop tracing and return the Trace (does not wait for pending work).")
        .def("pending", [](RuntimeCore& r) { return r.scheduler().pending(); }, "Submissions not yet retired.")
        .def("drain", [](RuntimeCore& r) {
                 ReleaseGil release;
                 r.scheduler().drain();
             },
             "Wait (without the GIL) until every accepted submission has retired.");
}

}  // namespace hrx::bind
