// The exception classes of hrxarray and the translation of hrx::Error kinds
// onto them. Registered first so that every later binding can raise them.
#include <Python.h>

#include "bindings.h"
#include "errors.h"
#include "py_types.h"

namespace nb = nanobind;

namespace hrx::bind {
namespace {

PyObject* g_hrx_error = nullptr;
PyObject* g_busy = nullptr;
PyObject* g_unsupported = nullptr;
PyObject* g_device_lost = nullptr;
PyObject* g_execution = nullptr;
PyObject* g_cancelled = nullptr;
PyObject* g_contract = nullptr;
PyObject* g_linalg = nullptr;

PyObject* make(nb::module_& m, const char* name, PyObject* base, const char* doc) {
    std::string qualified = std::string("hrxarray.") + name;
    PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, base, nullptr);
    if (!type) throw nb::python_error();
    m.attr(name) = nb::steal(type);
    return type;  // the module attribute keeps it alive for the process
}

// NumPy's AxisError, so that `except np.exceptions.AxisError` (and the
// ValueError and IndexError it derives from) catches ours.
PyObject* axis_error() {
    static PyObject* type = nullptr;
    if (!type)
        type = nb::module_::import_("numpy").attr("exceptions").attr("AxisError").inc_ref().ptr();
    return type;
}

PyObject* type_for(ErrorKind kind) {
    switch (kind) {
        case ErrorKind::Message:
        case ErrorKind::Data: return PyExc_ValueError;
        case ErrorKind::Index: return PyExc_IndexError;
        case ErrorKind::Axis: return axis_error();
        case ErrorKind::Contract: return g_contract;
        case ErrorKind::Busy: return g_busy;
        case ErrorKind::Unsupported: return g_unsupported;
        case ErrorKind::DeviceLost: return g_device_lost;
        case ErrorKind::Execution: return g_execution;
        case ErrorKind::Cancelled: return g_cancelled;
        case ErrorKind::OutOfMemory: return PyExc_MemoryError;
        case ErrorKind::Generic: return g_hrx_error;
        case ErrorKind::LinAlg: return g_linalg;
        case ErrorKind::Type: return PyExc_TypeError;
        case ErrorKind::Overflow: return PyExc_OverflowError;
        case ErrorKind::Buffer: return PyExc_BufferError;
    }
    return g_hrx_error;
}

}  // namespace

PyObject* exception_type(ErrorKind kind) { return type_for(kind); }

void bind_errors(nb::module_& m) {
    g_hrx_error = make(m, "HrxError", PyExc_RuntimeError, "Base class of hrxarray's runtime errors.");
    g_busy = make(m, "BusyError", g_hrx_error,
                  "A capacity is exhausted or a guard, lease or mapping conflicts; hrxarray never waits "
                  "implicitly for these.");
    g_unsupported = make(m, "UnsupportedError", g_hrx_error,
                         "The placement, device or engine cannot do what was asked (for example mapping "
                         "GpuLocal memory on the host).");
    g_device_lost = make(m, "DeviceLostError", g_hrx_error,
                         "The storage was poisoned by an earlier device failure; the message carries the "
                         "original failure.");
    g_execution = make(m, "ExecutionError", g_hrx_error,
                       "A region failed while executing; chained to the region's own error.");
    g_cancelled = make(m, "CancelledError", g_hrx_error, "The submission was cancelled before it finished.");
    g_contract = make(m, "ContractError", PyExc_ValueError,
                      "Arguments break a kernel's binding contract (count, length, alignment, aliasing).");
    // Both an ExecutionError (it is raised at the wait, like every region
    // failure) and NumPy's LinAlgError, which NumPy users catch.
    nb::object bases = nb::make_tuple(nb::handle(g_execution),
                                      nb::module_::import_("numpy").attr("linalg").attr("LinAlgError"));
    g_linalg = make(m, "LinAlgError", bases.ptr(),
                    "A linear algebra routine refused its matrix (singular, not positive definite, no "
                    "convergence); an ExecutionError and a numpy.linalg.LinAlgError.");

    nb::register_exception_translator([](const std::exception_ptr& p, void*) {
        try {
            std::rethrow_exception(p);
        } catch (const TaskFailure& f) {
            // Note [Failed outcomes reach the caller]: the exception a
            // Completion reports, chained to the region's own error.
            try {
                nb::object exc = outcome_exception(f.outcome());
                PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
            } catch (nb::python_error& e) {
                e.restore();
            }
        } catch (const Refusal& e) {
            note_refused_thread();
            PyErr_SetString(type_for(e.kind()), e.what());
        } catch (const Error& e) {
            PyErr_SetString(type_for(e.kind()), e.what());
        }
    });
}

}  // namespace hrx::bind
