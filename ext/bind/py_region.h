// Python called from a lane thread: the references such work keeps and the
// one way it enters Python (host regions of graphs, hx.fft's regions).
#pragma once
#include <nanobind/nanobind.h>

#include <memory>
#include <string>
#include <utility>

#include "errors.h"
#include "gil.h"
#include "runtime/scheduler.h"

namespace hrx::bind {

// A strong reference to a Python object that may be dropped on a lane thread:
// it takes the GIL to let go, and leaks on purpose once Python can no longer
// be entered (Note [Entering Python at exit]).
struct PyRef {
    PyObject* obj;
    explicit PyRef(nanobind::handle h) : obj(h.inc_ref().ptr()) {}
    ~PyRef() {
        EnterPython gil;
        if (gil) Py_DECREF(obj);
    }
    nanobind::handle get() const { return obj; }
};

// Runs `body` holding the GIL on a thread that may not hold it. A Python
// exception becomes a ForeignError ("<what> raised T: message") carrying it,
// so the completion chains to the original; once Python cannot be entered
// the region fails instead of running.
template <class F>
void run_python(const char* what, F&& body) {
    EnterPython gil;
    if (!gil) fail(ErrorKind::Generic, std::string(what) + " skipped: the interpreter is shutting down");
    try {
        std::forward<F>(body)();
    } catch (nanobind::python_error& e) {
        auto payload = std::make_shared<PyRef>(e.value());
        std::string text = nanobind::cast<std::string>(nanobind::str(e.type().attr("__name__"))) + ": " +
                           nanobind::cast<std::string>(nanobind::str(e.value()));
        throw ForeignError(std::string(what) + " raised " + text, std::move(payload));
    }
}

}  // namespace hrx::bind
