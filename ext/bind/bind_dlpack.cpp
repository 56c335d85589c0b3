// DLPack plumbing: dlpack_capsule builds the capsules DeviceArray.__dlpack__
// (bind_array.cpp, the one producer) exports, dlpack_import_raw wraps a
// producer's capsule zero-copy as HostVisible storage (hx.from_dlpack), and
// the private _dlpack_import and _dlpack_describe expose import and a
// capsule's fields to the tests, which check them against NumPy and
// hand-built capsules (tests/test_dlpack_core.py, test_memory_safety.py).
//
// Note [DLPack ownership]: an export takes a host lease on the storage and
// keeps (keep) the StorageState alive from the managed tensor; the managed
// tensor's deleter drops both and is pure C++ (no Python, no GIL), so any
// consumer may call it from any thread, even after interpreter shutdown. The
// capsule destructor calls that deleter only while the capsule still has its
// unused name. An import renames the producer's capsule to "used_..." and
// hands the managed tensor to a ForeignMemory, whose release action calls the
// producer's deleter exactly once, with the GIL held, when the storage dies;
// after interpreter shutdown it skips the call (the producer's deleter may
// touch Python, as NumPy's does).
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "array/array.h"
#include "array_bind.h"
#include "bindings.h"
#include "checked.h"
#include "gil.h"
#include "dlpack_bind.h"
#include "errors.h"
#include "memory/dlpack_abi.h"
#include "py_types.h"
#include "runtime/import.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace hrx::bind {
namespace {

using namespace hrx::dlpack;

// --- dtypes -------------------------------------------------------------------

// A DLPack data type as the NumPy-style name hrxarray uses ("float32",
// "bfloat16", ...); BufferError for types hrxarray cannot import.
std::string dtype_name(const DLDataType& t) {
    const std::string what = "(code " + std::to_string(t.code) + ", bits " + std::to_string(t.bits) + ", lanes " +
                             std::to_string(t.lanes) + ")";
    if (t.lanes != 1) throw nb::buffer_error(("DLPack import: vector dtypes are not supported: " + what).c_str());
    const bool int_bits = t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
    switch (t.code) {
        case kDLBool:
            if (t.bits == 8) return "bool";
            break;
        case kDLInt:
            if (int_bits) return "int" + std::to_string(t.bits);
            break;
        case kDLUInt:
            if (int_bits) return "uint" + std::to_string(t.bits);
            break;
        case kDLFloat:
            if (t.bits == 16 || t.bits == 32 || t.bits == 64) return "float" + std::to_string(t.bits);
            break;
        case kDLBfloat:
            if (t.bits == 16) return "bfloat16";
            break;
        case kDLComplex:
            if (t.bits == 64 || t.bits == 128) return "complex" + std::to_string(t.bits);
            break;
        default: break;
    }
    throw nb::buffer_error(("DLPack import: unsupported dtype " + what).c_str());
}

// --- layouts -----------------------------------------------------------------

// The byte span of a tensor whose strides count elements (DLPack's unit), or
// nullopt when a byte stride or the span overflows int64 (Note [Checked
// arithmetic]). The shape must be nonnegative.
std::optional<ByteSpan> element_span(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                                     int64_t itemsize) {
    Dims byte_strides(strides.size());
    for (size_t i = 0; i < strides.size(); ++i) {
        const auto s = (Checked<int64_t>(strides[i]) * itemsize).get();
        if (!s) return std::nullopt;
        byte_strides[i] = *s;
    }
    return strided_span(shape, byte_strides, itemsize);
}

// --- export ------------------------------------------------------------------

// One allocation holds the managed tensor (either form), its shape and
// strides, and the lease it stands for.
struct ExportContext {
    DLManagedTensor legacy{};
    DLManagedTensorVersioned versioned{};
    Dims shape;
    Dims strides;
    std::shared_ptr<StorageState> state;  // keep: the storage outlives every export
    uint64_t lease = 0;
    bool writable = false;

    ~ExportContext() {
        if (state) state->release_host_lease(lease);
    }
};

// The managed tensors' deleters: pure C++ (Note [DLPack ownership]).
void delete_legacy(DLManagedTensor* self) noexcept { delete static_cast<ExportContext*>(self->manager_ctx); }
void delete_versioned(DLManagedTensorVersioned* self) noexcept {
    delete static_cast<ExportContext*>(self->manager_ctx);
}

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

nb::object dlpack_capsule(const Array& a, uint64_t lease, DLDataType dl, DLDevice device, bool readonly, bool copied,
                          bool versioned) {
    auto ctx = std::make_unique<ExportContext>();
    // From here the context's destructor gives the lease back on any error.
    ctx->lease = lease;
    ctx->state = a.base->storage();
    ctx->shape = a.shape;
    const int64_t item = dtype_itemsize(a.dtype);
    ctx->strides.resize(a.strides.size());
    for (size_t i = 0; i < a.strides.size(); ++i) ctx->strides[i] = a.strides[i] / item;
    ctx->writable = !readonly;

    DLTensor t{};
    t.data = a.data();
    t.device = device;
    t.ndim = static_cast<int32_t>(a.shape.size());
    t.dtype = dl;
    // ndim 0: NULL shape and strides, as the spec allows; otherwise strides
    // are always given (v1.2 forbids NULL strides for ndim > 0).
    t.shape = a.shape.empty() ? nullptr : ctx->shape.data();
    t.strides = a.shape.empty() ? nullptr : ctx->strides.data();
    t.byte_offset = 0;  // consumers that ignore byte_offset still see the right data

    PyObject* capsule = nullptr;
    ExportContext* raw = ctx.get();
    if (versioned) {
        auto& m = raw->versioned;
        m.version = {kMajorVersion, kMinorVersion};
        m.manager_ctx = raw;
        m.deleter = &delete_versioned;
        m.flags = (readonly ? kFlagReadOnly : 0) | (copied ? kFlagIsCopied : 0);
        m.dl_tensor = t;
        capsule = PyCapsule_New(&m, kVersionedCapsuleName, &versioned_capsule_destructor);
    } else {
        // The legacy struct has no flags: READ_ONLY and IS_COPIED are lost
        // (callers that must signal read-only ask for a versioned capsule).
        auto& m = raw->legacy;
        m.dl_tensor = t;
        m.manager_ctx = raw;
        m.deleter = &delete_legacy;
        capsule = PyCapsule_New(&m, kCapsuleName, &legacy_capsule_destructor);
    }
    if (!capsule) throw nb::python_error();
    ctx.release();  // the capsule (then its consumer) owns it now
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

// Where a capsule's tensor lies: element [0, ...] at `offset` bytes from the
// producer's data pointer, `bytes` bytes from there to the end of the extent
// (both 0 for an empty tensor).
struct ImportExtent {
    uint64_t offset = 0;
    uint64_t bytes = 0;
};

// Validates strides and byte_offset with checked arithmetic (Note [Checked
// arithmetic]); the shape is already known to be nonnegative with an element
// count that fits. BufferError for negative strides, ValueError for a byte
// extent beyond int64 or a byte range that wraps the address space.
ImportExtent import_extent(const std::string& op, const DLTensor& t, const std::vector<int64_t>& shape,
                           const std::vector<int64_t>& strides, int64_t itemsize) {
    for (size_t i = 0; i < shape.size(); ++i) {
        if (strides[i] < 0)
            throw nb::buffer_error((op + ": negative strides are not supported (dimension " + std::to_string(i) +
                                    " has stride " + std::to_string(strides[i]) + ")")
                                       .c_str());
    }
    const auto where = [&] {
        return " (shape " + shape_str(shape) + ", strides " + shape_str(strides) + " in " +
               std::to_string(itemsize) + "-byte elements, byte_offset " + std::to_string(t.byte_offset) + ")";
    };
    const auto span = element_span(shape, strides, itemsize);
    if (!span) fail(ErrorKind::Message, op + ": the tensor's byte extent overflows" + where());
    if (span->hi == 0) return {};
    // Offsets into the storage are int64, and the range must not wrap around
    // the address space (a byte_offset that does would address memory before
    // the producer's data).
    const auto end = Checked<int64_t>::from(t.byte_offset) + span->hi;
    const bool fits = end.ok() && (Checked<uintptr_t>(reinterpret_cast<uintptr_t>(t.data)) +
                                   static_cast<uintptr_t>(*end.get()))
                                      .ok();
    if (!fits) fail(ErrorKind::Message, op + ": byte_offset plus the tensor's extent overflows" + where());
    return {t.byte_offset, static_cast<uint64_t>(span->hi)};
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
    const DLTensor& t = *v.tensor;
    if (t.device.device_type != kDLCPU)
        throw nb::buffer_error((op + ": only CPU (kDLCPU) tensors can be imported zero-copy; got device type " +
                                std::to_string(t.device.device_type))
                                   .c_str());
    const std::string dtype = dtype_name(t.dtype);
    const int64_t itemsize = t.dtype.bits / 8;
    if (t.ndim < 0 || t.ndim > kMaxDims) fail(ErrorKind::Message, op + ": unsupported ndim " + std::to_string(t.ndim));
    if (t.ndim > 0 && !t.shape) fail(ErrorKind::Message, op + ": the tensor has ndim > 0 but no shape");
    std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
    DType element_type;
    dtype_from_name(dtype, &element_type);
    checked_size(shape, element_type, op);  // the element count fits (and no entry is negative)
    std::vector<int64_t> strides(static_cast<size_t>(t.ndim));
    if (t.strides) {
        std::copy(t.strides, t.strides + t.ndim, strides.begin());
    } else {  // NULL strides (producers before v1.2): compact row-major; checked_size bounds the products
        int64_t s = 1;
        for (int32_t i = t.ndim - 1; i >= 0; --i) {
            strides[static_cast<size_t>(i)] = s;
            s *= std::max<int64_t>(shape[static_cast<size_t>(i)], 1);
        }
    }
    const ImportExtent extent = import_extent(op, t, shape, strides, itemsize);
    auto* base = static_cast<uint8_t*>(t.data);
    if (!base && extent.bytes != 0)
        fail(ErrorKind::Message, op + ": the tensor has elements but a NULL data pointer");
    // A legacy capsule cannot say read-only, so it may come from a producer
    // whose data must not change (a JAX array): import it read-only, as NumPy
    // does; only a versioned capsule's flags can grant writes.
    const bool readonly = !v.versioned || (v.flags & kFlagReadOnly) != 0;

    // Take ownership: rename, then hand the deleter to the storage. The
    // release action runs even if the import below throws.
    std::function<void()> release =
        v.versioned ? producer_release(static_cast<DLManagedTensorVersioned*>(v.managed))
                    : producer_release(static_cast<DLManagedTensor*>(v.managed));
    if (PyCapsule_SetName(capsule.ptr(), v.versioned ? kUsedVersionedCapsuleName : kUsedCapsuleName) != 0)
        throw nb::python_error();
    std::shared_ptr<Buffer> buffer =
        import_host_memory(*runtime, base, extent.offset + extent.bytes, std::move(release), readonly);
    return DlpackImport{std::move(buffer), extent.offset, std::move(shape), std::move(strides), dtype, readonly};
}

namespace {

nb::tuple dlpack_import(nb::handle obj, nb::handle runtime_obj) {
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
    m.def("_dlpack_import", &dlpack_import, "obj"_a, "runtime"_a = nb::none(),
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
