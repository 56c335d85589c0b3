// The Python builders of results the core hands back as plain data (Note [Python builders]).
#include <nanobind/nanobind.h>

#include "bindings.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace hrx::bind {

// Note [Python builders]: three results are Python objects whose behaviour is
// Python's: `await completion` is an asyncio awaitable, `with buf.map_read() as
// view` yields a NumPy subclass (hrxarray._hostview.HostView) that checks its
// guard, and finish_trace returns an hrxarray._trace.Trace. The core computes
// their contents (the completion, the mapping, the trace records); the Python
// classes are handed to the bindings once, by hrxarray._runtime at import
// (_core._set_builders), instead of the bindings importing hrxarray's modules:
// the dependency runs one way, Python to C++ (issue 26). A builder called
// before they are set (hrxarray._core driven without its package) is an error
// that says so.
namespace {

const char* const kNames[] = {"await_completion", "host_view", "trace"};
PyObject* g_builders[3] = {};  // owned forever: called until the interpreter is gone

}  // namespace

nb::handle python_builder(Builder b) {
    PyObject* f = g_builders[static_cast<int>(b)];
    if (!f)
        throw nb::type_error((std::string("hrxarray._core: the Python builder '") + kNames[static_cast<int>(b)] +
                              "' is not set: import hrxarray (not hrxarray._core alone)")
                                 .c_str());
    return f;
}

void bind_builders(nb::module_& m) {
    m.def(
        "_set_builders",
        [](nb::handle await_completion, nb::handle host_view, nb::handle trace) {
            const nb::handle given[] = {await_completion, host_view, trace};
            for (int i = 0; i < 3; ++i)
                if (!PyCallable_Check(given[i].ptr()))
                    throw nb::type_error((std::string("_set_builders: ") + kNames[i] + " must be callable").c_str());
            for (int i = 0; i < 3; ++i) {
                Py_XDECREF(g_builders[i]);
                g_builders[i] = given[i].inc_ref().ptr();
            }
        },
        "await_completion"_a, "host_view"_a, "trace"_a,
        "Set the Python builders of awaitables, host views and traces (hrxarray._runtime calls it once at import; "
        "Note [Python builders]).");
}

}  // namespace hrx::bind
