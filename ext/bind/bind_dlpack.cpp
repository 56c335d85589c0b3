// DLPack plumbing: dlpack_capsule wraps the managed tensors
// DeviceArray.__dlpack__ (bind_array.cpp, the one producer) exports in
// capsules, dlpack_import_raw reads a producer's capsule and hands its tensor
// to the core's import (array/dlpack.h, Note [DLPack ownership]), and the
// private _dlpack_import and _dlpack_describe expose import and a capsule's
// fields to the tests, which check them against NumPy and hand-built
// capsules (tests/test_dlpack_core.py, test_memory_safety.py).
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <functional>
#include <string>
#include <vector>

#include "array/array.h"
#include "array_bind.h"
#include "bindings.h"
#include "gil.h"
#include "dlpack_bind.h"
#include "errors.h"
#include "memory/dlpack_abi.h"
#include "py_types.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace hrx::bind {
namespace {

using namespace hrx::dlpack;

// Capsule destructors (spec): a consumed ("used_...") capsule belongs to its
// consumer; otherwise the capsule still owns the managed tensor. Any error
// already pending is preserved.
template <typename Managed>
void capsule_destructor(PyObject* capsule, const char* name, const char* used_name) noexcept {
    if (PyCapsule_IsValid(capsule, used_name)) return;
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    auto* managed = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
    if (!managed)
        PyErr_WriteUnraisable(capsule);
    else if (managed->deleter)
        managed->deleter(managed);
    PyErr_Restore(type, value, traceback);
}

void legacy_capsule_destructor(PyObject* capsule) noexcept {
    capsule_destructor<DLManagedTensor>(capsule, kCapsuleName, kUsedCapsuleName);
}
void versioned_capsule_destructor(PyObject* capsule) noexcept {
    capsule_destructor<DLManagedTensorVersioned>(capsule, kVersionedCapsuleName, kUsedVersionedCapsuleName);
}

}  // namespace

nb::object dlpack_capsule(DlpackExport managed) {
    PyObject* capsule = managed.versioned()
                            ? PyCapsule_New(managed.get(), kVersionedCapsuleName, &versioned_capsule_destructor)
                            : PyCapsule_New(managed.get(), kCapsuleName, &legacy_capsule_destructor);
    if (!capsule) throw nb::python_error();  // `managed` gives its lease back
    managed.release();  // the capsule (then its consumer) owns it now
    return nb::steal(capsule);
}

namespace {

// --- import ------------------------------------------------------------------

// The producer's managed tensor, in either form, as a release action: its
// deleter runs once, with the GIL (NumPy's deleter needs it), never after
// interpreter shutdown.
template <typename Managed>
std::function<void()> producer_release(Managed* managed) {
    return [managed] {
        if (!managed->deleter) return;
        EnterPython gil;
        if (gil) managed->deleter(managed);
    };
}

// Reads the tensor of a capsule (named `name`); the shared part of import and describe.
struct CapsuleView {
    bool versioned = false;
    void* managed = nullptr;
    const DLTensor* tensor = nullptr;
    DLPackVersion version{0, 0};
    uint64_t flags = 0;
};

CapsuleView open_capsule(nb::handle capsule, const std::string& op) {
    const char* name = PyCapsule_GetName(capsule.ptr());
    if (!name && PyErr_Occurred()) throw nb::python_error();
    const std::string n = name ? name : "";
    if (n == kUsedCapsuleName || n == kUsedVersionedCapsuleName)
        fail(ErrorKind::Message, op + ": the DLPack capsule was already consumed (it is named '" + n +
                                     "'); a capsule can be imported once — ask the producer for a new one");
    CapsuleView v;
    if (n == kVersionedCapsuleName) {
        auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule.ptr(), kVersionedCapsuleName));
        if (!m) throw nb::python_error();
        v.versioned = true;
        v.managed = m;
        v.version = m->version;
        // On a major-version mismatch nothing but the deleter may be read.
        if (m->version.major != kMajorVersion)
            throw nb::buffer_error((op + ": unsupported DLPack version " + std::to_string(m->version.major) + "." +
                                    std::to_string(m->version.minor) + " (hrxarray reads 1.x)")
                                       .c_str());
        v.flags = m->flags;
        v.tensor = &m->dl_tensor;
    } else if (n == kCapsuleName) {
        auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), kCapsuleName));
        if (!m) throw nb::python_error();
        v.managed = m;
        v.tensor = &m->dl_tensor;
    } else {
        fail(ErrorKind::Message, op + ": not a DLPack capsule (named '" + n +
                                     "'; expected 'dltensor' or 'dltensor_versioned')");
    }
    return v;
}

// A capsule from a capsule or a DLPack producer (asking for a versioned one
// first, then retrying without keywords as the spec tells consumers to).
nb::object capsule_from(nb::handle obj, const std::string& op) {
    if (PyCapsule_CheckExact(obj.ptr())) return nb::borrow(obj);
    if (!nb::hasattr(obj, "__dlpack__"))
        throw nb::type_error((op + ": expected a DLPack capsule or an object with __dlpack__, got " +
                              nb::cast<std::string>(nb::repr(obj.type())))
                                 .c_str());
    if (nb::hasattr(obj, "__dlpack_device__")) {
        nb::object dev = obj.attr("__dlpack_device__")();
        const int64_t type = nb::cast<int64_t>(dev[0]);
        if (type != kDLCPU)
            throw nb::buffer_error((op + ": only CPU (kDLCPU) tensors can be imported zero-copy; the producer's "
                                         "device is " +
                                    nb::cast<std::string>(nb::repr(dev)))
                                       .c_str());
    }
    try {
        return obj.attr("__dlpack__")("max_version"_a = nb::make_tuple(kMajorVersion, kMinorVersion));
    } catch (nb::python_error& e) {
        if (!e.matches(PyExc_TypeError)) throw;
    }
    return obj.attr("__dlpack__")();
}

}  // namespace

DlpackImport dlpack_import_raw(nb::handle obj, const std::shared_ptr<RuntimeCore>& runtime) {
    const std::string op = "DLPack import";
    nb::object capsule = capsule_from(obj, op);

    // Validate everything before taking ownership: on any error the capsule
    // keeps its name and its producer's destructor frees the tensor.
    CapsuleView v = open_capsule(capsule, op);
    DlpackImportPlan plan = dlpack_plan_import(*v.tensor, v.versioned, v.flags);

    // Take ownership: rename, then hand the deleter to the storage. The
    // release action runs even if the import below throws.
    std::function<void()> release =
        v.versioned ? producer_release(static_cast<DLManagedTensorVersioned*>(v.managed))
                    : producer_release(static_cast<DLManagedTensor*>(v.managed));
    if (PyCapsule_SetName(capsule.ptr(), v.versioned ? kUsedVersionedCapsuleName : kUsedCapsuleName) != 0)
        throw nb::python_error();
    return dlpack_import(*runtime, std::move(plan), std::move(release));
}

namespace {

nb::tuple py_dlpack_import(nb::handle obj, nb::handle runtime_obj) {
    std::shared_ptr<RuntimeCore> runtime;
    if (runtime_obj.is_none())
        runtime = default_runtime();
    else
        runtime = nb::cast<std::shared_ptr<RuntimeCore>>(runtime_obj);
    DlpackImport r = dlpack_import_raw(obj, runtime);
    nb::list shape_list, strides_list;
    for (int64_t n : r.shape) shape_list.append(n);
    for (int64_t s : r.strides) strides_list.append(s);
    return nb::make_tuple(r.buffer, r.offset, nb::tuple(shape_list), nb::tuple(strides_list), r.dtype, r.readonly);
}

nb::dict dlpack_describe(nb::handle capsule) {
    if (!PyCapsule_CheckExact(capsule.ptr())) throw nb::type_error("_dlpack_describe: expected a PyCapsule");
    CapsuleView v = open_capsule(capsule, "_dlpack_describe");
    const DLTensor& t = *v.tensor;
    nb::dict d;
    d["name"] = v.versioned ? kVersionedCapsuleName : kCapsuleName;
    d["version"] = v.versioned ? nb::object(nb::make_tuple(v.version.major, v.version.minor)) : nb::none();
    d["flags"] = v.flags;
    d["data"] = reinterpret_cast<uintptr_t>(t.data);
    d["device"] = nb::make_tuple(t.device.device_type, t.device.device_id);
    d["dtype"] = nb::make_tuple(t.dtype.code, t.dtype.bits, t.dtype.lanes);
    nb::list shape, strides;
    for (int32_t i = 0; i < t.ndim && t.shape; ++i) shape.append(t.shape[i]);
    for (int32_t i = 0; i < t.ndim && t.strides; ++i) strides.append(t.strides[i]);
    d["ndim"] = t.ndim;
    d["shape"] = nb::tuple(shape);
    d["strides"] = t.strides ? nb::object(nb::tuple(strides)) : nb::none();
    d["byte_offset"] = t.byte_offset;
    return d;
}

}  // namespace

void bind_dlpack(nb::module_& m) {
    m.def("_dlpack_import", &py_dlpack_import, "obj"_a, "runtime"_a = nb::none(),
          "Wrap a DLPack capsule (either version) or producer zero-copy as HostVisible storage of `runtime` "
          "(default_runtime() by default), marking the capsule used. Returns (buffer, offset, shape, strides, "
          "dtype_name, readonly) with strides in elements; readonly is True for a versioned capsule with "
          "READ_ONLY and for every legacy capsule (which cannot say writable), as numpy.from_dlpack does. The "
          "storage keeps the producer alive and calls its deleter when it dies. A used capsule, or a shape, "
          "strides or byte_offset whose extent overflows -> ValueError (the capsule stays unconsumed); non-CPU "
          "device, unsupported dtype or negative strides -> BufferError.");
    m.def("_dlpack_describe", &dlpack_describe, "capsule"_a,
          "The fields of an unconsumed DLPack capsule, without consuming it (tests and diagnostics).");
}

}  // namespace hrx::bind
