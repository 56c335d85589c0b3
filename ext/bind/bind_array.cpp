// DeviceArray: the array type and the bindings of its creation, host-transfer,
// view, copy and DLPack primitives. The semantics are the core's
// (array/host_transfer.h, array/copy.h, array/creation.h): this file turns
// Python objects into their descriptions (dtypes, placements, host blocks of
// NumPy arrays kept alive for the call, scalars), calls them, and wraps the
// results; a failed producer that a wait meets reaches Python through the
// exception translator (Note [Failed outcomes reach the caller]). The
// Python-level API (asarray, indexing, reshape, repr, NumPy protocols) lives
// in hrxarray/_array.py and builds on these.
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <optional>

#include "array/creation.h"
#include "array/host_transfer.h"
#include "array_bind.h"
#include "bindings.h"
#include "dlpack_bind.h"
#include "errors.h"
#include "kernels/bfp16.h"
#include "kernels/elementwise.h"
#include "py_types.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace hrx::bind {

// --- dtypes --------------------------------------------------------------------

// Note [bfp16 is the core's dtype]: hx.bfp16 is not a NumPy dtype (the NPU's
// bfp16ebs8 blocks: 8 values of the last axis share an exponent in 9 bytes), so
// NumPy cannot describe it; its Python object is this binding's BlockDType,
// whose sizes are the kernels' constants (kernels/bfp16.h). There is one
// instance, made when the module is initialised (bind_block_dtype) and never
// released: DeviceArray.dtype returns it, dtype_from_py recognises it by
// identity, and pickling names it as the global hrxarray._core.bfp16 so a
// round trip gives the same object. hrxarray._dtypes re-exports it.
struct BlockDType {
    std::string name;
    std::size_t block_values;
    std::size_t block_bytes;
};

namespace {

PyObject* g_bfp16 = nullptr;  // the one hx.bfp16 (owned forever)

PyObject* bfp16_object() {
    if (!g_bfp16) throw std::logic_error("hrxarray._core: bfp16 used before the module was initialised");
    return g_bfp16;
}

struct DTypeCache {
    PyObject* dtype[kDTypeCount] = {};  // numpy.dtype objects (hx.bfp16 for BFP16); owned forever
    PyObject* type[kDTypeCount] = {};   // their scalar types (numpy.float32, ml_dtypes.bfloat16)
};

DTypeCache& cache() {
    static DTypeCache* c = new DTypeCache();
    return *c;
}

nb::module_& numpy() {
    static nb::module_* np = new nb::module_(nb::module_::import_("numpy"));
    return *np;
}

void fill_cache(DType t) {
    auto& c = cache();
    const int i = static_cast<int>(t);
    if (c.dtype[i]) return;
    nb::object d;
    if (t == DType::BFP16) {
        d = nb::borrow(bfp16_object());
        c.type[i] = d.inc_ref().ptr();
    } else if (t == DType::BFloat16) {
        d = numpy().attr("dtype")(nb::module_::import_("ml_dtypes").attr("bfloat16"));
        c.type[i] = d.attr("type").inc_ref().ptr();
    } else {
        d = numpy().attr("dtype")(dtype_name(t));
        c.type[i] = d.attr("type").inc_ref().ptr();
    }
    c.dtype[i] = d.inc_ref().ptr();
}

}  // namespace

nb::object dtype_object(DType t) {
    fill_cache(t);
    return nb::borrow(cache().dtype[static_cast<int>(t)]);
}

DType dtype_from_py(nb::handle h, const std::string& op) {
    auto& c = cache();
    for (int i = 0; i < kDTypeCount; ++i)
        if (c.dtype[i] && (h.ptr() == c.dtype[i] || h.ptr() == c.type[i])) return static_cast<DType>(i);
    DType t;
    if (h.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) return DType::Float64;
    if (h.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) return DType::Int64;
    if (h.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) return DType::Bool;
    if (nb::isinstance<nb::str>(h)) {
        const std::string s = nb::cast<std::string>(h);
        if (dtype_from_name(s, &t)) {
            fill_cache(t);
            return t;
        }
    }
    if (h.ptr() == bfp16_object()) return DType::BFP16;
    if (nb::isinstance<BlockDType>(h))
        throw nb::type_error((op + ": unknown block dtype " + nb::cast<std::string>(nb::repr(h))).c_str());
    nb::object d;
    try {
        if (nb::isinstance<nb::str>(h) && nb::cast<std::string>(h) == "bfloat16")
            d = numpy().attr("dtype")(nb::module_::import_("ml_dtypes").attr("bfloat16"));
        else
            d = numpy().attr("dtype")(h);
    } catch (nb::python_error&) {
        throw nb::type_error((op + ": " + nb::cast<std::string>(nb::repr(h)) + " is not a dtype").c_str());
    }
    const std::string name = nb::cast<std::string>(d.attr("name"));
    const bool native = nb::cast<std::string>(d.attr("byteorder")) != ">";
    if (!native || !dtype_from_name(name, &t) || t == DType::BFP16)
        throw nb::type_error((op + ": dtype " + name +
                              " is not supported (hrxarray has bool, int8-int64, uint8-uint64, float16, bfloat16, "
                              "float32, float64, complex64, complex128 and bfp16)")
                                 .c_str());
    fill_cache(t);
    return t;
}

// --- runtime, placements, submission ------------------------------------------------

namespace {

[[noreturn]] void placement_type_error(nb::handle h, const std::string& op) {
    throw nb::type_error((op + ": placement must be hx.GpuLocal(), hx.HostVisible(), hx.NpuLocal(npu) or "
                               "hx.Shared(npu), got " + nb::cast<std::string>(nb::repr(h)))
                             .c_str());
}

// A placement argument: nullopt for None, TypeError naming `op` for anything but a placement.
std::optional<Placement> placement_arg(nb::handle h, const std::string& op) {
    if (h.is_none()) return std::nullopt;
    if (!nb::isinstance<PyPlacement>(h)) placement_type_error(h, op);
    return nb::cast<const PyPlacement&>(h).value;
}

}  // namespace

Placement placement_from_py(nb::handle h, RuntimeCore& rt, const std::string& op) {
    auto p = placement_arg(h, op);
    return p ? *p : creation::default_placement(rt);
}

creation::Home new_array_home(nb::handle placement, const Array* like, const std::string& op) {
    std::shared_ptr<RuntimeCore> rt;
    if (!like) rt = default_runtime();
    return creation::home(placement_arg(placement, op), like, rt, op);
}

// --- arrays ------------------------------------------------------------------------

int int64_index(nb::handle h, int64_t* out) {
    PyObject* idx = PyNumber_Index(h.ptr());
    if (!idx) {
        PyErr_Clear();
        return -1;
    }
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(idx, &overflow);
    Py_DECREF(idx);
    if (overflow) return 0;
    *out = v;
    return 1;
}

std::vector<int64_t> axes_from_py(nb::handle axis, int ndim, const std::string& op) {
    std::vector<int64_t> axes;
    auto add = [&](nb::handle h) {
        int64_t v = 0;
        if (!int64_of(h, &v, op, "axis")) fail_axis(nb::cast<std::string>(nb::str(h)), ndim, op);
        axes.push_back(v);
    };
    if (PyTuple_Check(axis.ptr()) || PyList_Check(axis.ptr())) {
        for (nb::handle h : axis) add(h);
    } else {
        add(axis);
    }
    return axes;
}

std::vector<int64_t> int_vector(nb::handle h, const std::string& op, const char* what) {
    std::vector<int64_t> out;
    const std::string entry = std::string(what) + " entry";
    auto add = [&](nb::handle x) {
        int64_t v = 0;
        if (!int64_of(x, &v, op, entry.c_str())) {
            const bool negative = PyObject_RichCompareBool(x.ptr(), nb::int_(0).ptr(), Py_LT) == 1;
            fail(ErrorKind::Message, op + ": " + entry + " " + nb::cast<std::string>(nb::str(x)) +
                                         (negative ? " is negative (negative dimensions are not allowed)"
                                                   : " exceeds the maximum allowed dimension (2**63 - 1)"));
        }
        out.push_back(v);
    };
    PyObject* it = PyLong_Check(h.ptr()) ? nullptr : PyObject_GetIter(h.ptr());
    if (!it) {
        PyErr_Clear();
        if (PyIndex_Check(h.ptr())) {
            add(h);
            return out;
        }
        throw nb::type_error((op + ": " + what + " must be an integer or a sequence of integers, got " +
                              nb::cast<std::string>(nb::repr(h)))
                                 .c_str());
    }
    nb::object iter = nb::steal(it);
    while (PyObject* x = PyIter_Next(it)) add(nb::steal(x));
    if (PyErr_Occurred()) throw nb::python_error();
    return out;
}

nb::object wrap(Array a) { return nb::cast(PyArray{std::move(a)}); }
bool is_array(nb::handle h) { return nb::isinstance<PyArray>(h); }
const Array& array_of(nb::handle h) { return nb::cast<const PyArray&>(h).a; }

const Array& device_array(nb::handle x, const std::string& op, const char* what) {
    if (!is_array(x))
        throw nb::type_error((op + ": " + what + " must be a DeviceArray, got " + nb::cast<std::string>(nb::repr(x.type())))
                                 .c_str());
    return array_of(x);
}

const Array& element_operand(nb::handle x, Access access, const std::string& op, const char* what) {
    const Array& a = device_array(x, op, what);
    check_element_operand(a, access, op);
    return a;
}

// The memory of a NumPy array (which the caller keeps alive while the block is used).
host_transfer::HostBlock host_block(nb::handle arr, const std::string& op) {
    host_transfer::HostBlock b;
    nb::dict iface = nb::cast<nb::dict>(arr.attr("__array_interface__"));
    nb::tuple data = nb::cast<nb::tuple>(iface["data"]);
    b.data = reinterpret_cast<const uint8_t*>(nb::cast<uintptr_t>(data[0]));
    b.shape = int_vector(iface["shape"], op, "shape");
    b.dtype = dtype_from_py(arr.attr("dtype"), op);
    nb::object strides = iface.contains("strides") ? nb::object(iface["strides"]) : nb::none();
    if (strides.is_none())
        b.strides = contiguous_strides(b.shape, b.dtype);
    else
        b.strides = int_vector(strides, op, "strides");
    return b;
}

namespace {

nb::tuple int_tuple(const Dims& v) {
    nb::list l;
    for (int64_t x : v) l.append(x);
    return nb::tuple(l);
}


}  // namespace

nb::object host_array(nb::handle obj, const DType* dtype, const std::string& op) {
    nb::object arr;
    try {
        if (nb::isinstance(obj, numpy().attr("ndarray")))
            arr = nb::borrow(obj);  // cast (NumPy's unsafe casts) while copying in
        else if (dtype && *dtype != DType::BFP16)
            arr = numpy().attr("asarray")(obj, dtype_object(*dtype));  // exact, or NumPy's OverflowError/ValueError
        else
            arr = numpy().attr("asarray")(obj);
    } catch (nb::python_error& e) {
        // NumPy's own refusal (an integer out of range, NaN into an integer
        // dtype, a ragged list), named by the operation.
        PyObject* type = e.matches(PyExc_OverflowError) ? PyExc_OverflowError
                         : e.matches(PyExc_ValueError)  ? PyExc_ValueError
                         : e.matches(PyExc_TypeError)   ? PyExc_TypeError
                                                        : nullptr;
        if (!type) throw;
        PyErr_SetString(type, (op + ": " + nb::cast<std::string>(nb::str(e.value()))).c_str());
        throw nb::python_error();
    }
    const std::string kind = nb::cast<std::string>(arr.attr("dtype").attr("kind"));
    if (kind != "b" && kind != "i" && kind != "u" && kind != "f" && kind != "c" && kind != "V") {
        std::string what = nb::cast<std::string>(nb::repr(obj));
        if (what.size() > 80) what = what.substr(0, 77) + "...";
        throw nb::type_error((op + ": cannot convert " + what + " to an array (NumPy makes data of dtype " +
                              nb::cast<std::string>(nb::str(nb::object(arr.attr("dtype")))) +
                              " of it; hrxarray arrays hold booleans, integers, floats and complex numbers)")
                                 .c_str());
    }
    return arr;
}

namespace {

// A host NumPy array (or anything numpy.asarray takes) as a new array in
// `placement` of `rt`, converted to `dtype` (the source dtype when absent).
Array array_from_host(nb::handle obj, const DType* dtype, const Placement& placement, RuntimeCore& rt,
                      const std::string& op) {
    nb::object arr = host_array(obj, dtype, op);
    return host_transfer::upload(rt, placement, host_block(arr, op), op,
                                 dtype ? std::optional<DType>(*dtype) : std::nullopt);
}

// A fresh NumPy array of `shape` and dtype `dt` and its data pointer.
std::pair<nb::object, uint8_t*> new_numpy(const Dims& shape, DType dt) {
    nb::object out = numpy().attr("empty")(int_tuple(shape), dtype_object(dt));
    nb::dict iface = nb::cast<nb::dict>(out.attr("__array_interface__"));
    auto* p = reinterpret_cast<uint8_t*>(nb::cast<uintptr_t>(nb::cast<nb::tuple>(iface["data"])[0]));
    return {out, p};
}

nb::object to_numpy(const PyArray& self, nb::handle dtype) {
    const std::string op = "to_numpy";
    std::optional<DType> requested;
    if (!dtype.is_none()) requested = dtype_from_py(dtype, op);
    nb::object out;
    host_transfer::to_host(self.a, requested, [&](const Dims& shape, DType dt) {
        auto [arr, ptr] = new_numpy(shape, dt);
        out = std::move(arr);
        return ptr;
    }, op);
    return out;
}

// A read-only zero-copy uint8 NumPy array over the array's byte extent that
// holds a host lease while it lives; Python reinterprets it (_array.py).
nb::tuple host_view(const PyArray& self) {
    const Array& a = self.a;
    const std::string op = "zero-copy host view of " + a.describe();
    host_transfer::check_view(a, op);
    wait_ready(a);
    host_transfer::HostView v = host_transfer::view(a, op);
    nb::capsule cap(v.lease.release(), [](void* p) noexcept { delete static_cast<host_transfer::HostLease*>(p); });
    size_t shape[1] = {static_cast<size_t>(v.bytes)};
    nb::object raw = nb::cast(nb::ndarray<nb::numpy, const uint8_t, nb::ndim<1>>(v.data, 1, shape, cap));
    return nb::make_tuple(raw, v.offset);
}

// --- DLPack ----------------------------------------------------------------------

// DeviceArray.__dlpack__'s arguments, parsed for the core's export (Note
// [Read-only DLPack exports] in array/dlpack.h).
nb::object dlpack_export(const Array& a, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                         nb::handle copy, bool readonly_requested, bool jax) {
    using namespace dlpack;
    const auto op = [&a] { return "__dlpack__ of " + a.describe(); };
    DlpackExportRequest r;
    if (!max_version.is_none()) {
        if (!PyTuple_Check(max_version.ptr()) || PyTuple_Size(max_version.ptr()) != 2)
            throw nb::type_error((op() + ": max_version must be a (major, minor) tuple or None").c_str());
        int64_t major = 0;
        // A major version beyond int64 is still newer than ours.
        r.versioned = !int64_of(max_version[0], &major, op(), "max_version[0]") || major >= static_cast<int64_t>(kMajorVersion);
    }
    if (!dl_device.is_none()) {
        if (!PyTuple_Check(dl_device.ptr()) || PyTuple_Size(dl_device.ptr()) != 2)
            throw nb::type_error((op() + ": dl_device must be a (device_type, device_id) tuple or None").c_str());
        int64_t type = 0, id = 0;
        if (!int64_of(dl_device[0], &type, op(), "dl_device[0]") || !int64_of(dl_device[1], &id, op(), "dl_device[1]") ||
            type < INT32_MIN || type > INT32_MAX || id < INT32_MIN || id > INT32_MAX)
            throw nb::buffer_error((op() + ": dl_device " + nb::cast<std::string>(nb::repr(dl_device)) +
                                    " is not a DLPack device (device type and id are 32-bit integers)")
                                       .c_str());
        r.device = DLDevice{static_cast<int32_t>(type), static_cast<int32_t>(id)};
    }
    if (!copy.is_none()) r.copy = nb::cast<bool>(copy) ? 1 : 0;
    if (!stream.is_none()) {
        if (!PyLong_Check(stream.ptr())) throw nb::type_error((op() + ": stream must be an integer or None").c_str());
        int64_t s = 0;
        if (!int64_of(stream, &s, op(), "stream"))
            fail(ErrorKind::Message, op() + ": stream " + nb::cast<std::string>(nb::str(stream)) +
                                         " is not a stream (beyond 64 bits)");
        r.stream = s;
    }
    r.readonly_requested = readonly_requested;
    r.never_writes = jax;
    return dlpack_capsule(hrx::dlpack_export(a, r));
}



nb::object from_dlpack(nb::handle obj, nb::handle placement_obj, nb::handle copy, nb::handle dtype_obj) {
    const std::string op = "from_dlpack";
    int copy_mode = -1;
    if (!copy.is_none()) copy_mode = nb::cast<bool>(copy) ? 1 : 0;
    std::shared_ptr<RuntimeCore> rt = default_runtime();
    if (is_array(obj)) rt = runtime_of(array_of(obj)).shared_from_this();
    if (!placement_obj.is_none()) rt = creation::placement_runtime(placement_from_py(placement_obj, *rt, op), rt);
    Array src;
    if (is_array(obj)) {
        src = array_of(obj);  // our own export would alias the storage: take a view instead
    } else {
        DlpackImport r = dlpack_import_raw(obj, rt);
        DType t;
        if (!dtype_from_name(r.dtype, &t)) throw nb::buffer_error((op + ": unsupported dtype " + r.dtype).c_str());
        const int64_t item = dtype_itemsize(t);
        std::vector<int64_t> strides(r.strides.size());
        for (size_t i = 0; i < strides.size(); ++i) strides[i] = r.strides[i] * item;
        src.base = std::make_shared<ArrayBase>(r.buffer, r.readonly);
        src.offset = static_cast<int64_t>(r.offset);
        src.shape = r.shape;
        src.strides = std::move(strides);
        src.dtype = t;
        fill_cache(t);
    }
    const bool want_place = !placement_obj.is_none();
    Placement place = want_place ? placement_from_py(placement_obj, *rt, op) : src.placement();
    const DType target = dtype_obj.is_none() ? src.dtype : dtype_from_py(dtype_obj, op);
    const bool needs_copy = copy_mode == 1 || !(place == src.placement()) || target != src.dtype;
    if (!needs_copy) return wrap(src);
    if (copy_mode == 0)
        throw nb::buffer_error((op + ": placement " + place.repr() + " differs from the producer's memory (" +
                                src.placement().repr() + "), so a copy is needed, and copy=False forbids it")
                                   .c_str());
    if (!want_place) place = placement_from_py(nb::none(), *rt, op);
    if (!is_array(obj)) {
        // A foreign producer's memory: copy now, as asarray does with host
        // data, so that the producer may change it as soon as we return.
        return wrap(host_transfer::upload(*rt, place, {src.data(), src.shape, src.strides, src.dtype}, op, target));
    }
    return wrap(creation::convert(src, target, place, op));
}

// --- copies into arrays ----------------------------------------------------------

namespace {

std::string op_name(nb::handle op, const std::string& fallback) {
    return op.is_none() ? fallback : nb::cast<std::string>(op);
}

// The source of a copy into an array of `dtype`: a DeviceArray, a scalar or
// host data converted to the destination's values (NumPy's conversion, kept
// alive in `host` for the call); the core checks it against the destination.
copy::Source copy_source(nb::handle src, DType dtype, nb::object& host, const std::string& op) {
    copy::Source s;
    const DType value_dtype = copy::value_dtype(dtype);
    if (is_array(src)) {
        s.operand = Operand::of(array_of(src));
    } else if (is_python_scalar(src) || is_numpy_scalar(src)) {
        s.operand = scalar_operand(src, value_dtype, op);
    } else {
        host = host_array(src, &value_dtype, op);
        s.host = host_block(host, op);
    }
    return s;
}

// dst[...] = src: a DeviceArray (broadcast, NumPy's assignment rule), a
// scalar or host data, converted to dst's dtype.
nb::object copy_into(const PyArray& dst, nb::handle src, bool even, nb::handle op_obj) {
    const std::string op = op_name(op_obj, "copy into " + dst.a.describe());
    nb::object host;
    copy::into(dst.a, copy_source(src, dst.a.dtype, host, op), even, op);
    return nb::none();
}

const Array* like_arg(nb::handle like, const std::string& op) {
    if (like.is_none()) return nullptr;
    if (!is_array(like)) throw nb::type_error((op + ": like must be a DeviceArray").c_str());
    return &array_of(like);
}

nb::object full(nb::handle shape_obj, nb::handle fill, nb::handle dtype, nb::handle placement, nb::handle op_obj,
                nb::handle like) {
    const std::string op = op_name(op_obj, "full");
    const DType t = dtype_from_py(dtype, op);
    const creation::Home home = new_array_home(placement, like_arg(like, op), op);
    const Dims shape = int_vector(shape_obj, op, "shape");
    checked_size(shape, t, op);  // a bad shape is named before the fill
    nb::object host;
    copy::Source s = copy_source(fill, t, host, op);
    return wrap(creation::full(home, shape, t, std::move(s), op));
}

// A new array holding x converted to `dtype` (None: x's) in `placement`, on x's runtime.
nb::object convert(const PyArray& x, nb::handle dtype, nb::handle placement, nb::handle op_obj) {
    const std::string op = op_name(op_obj, "astype");
    const DType t = dtype.is_none() ? x.a.dtype : dtype_from_py(dtype, op);
    if (placement.is_none()) placement_type_error(placement, op);
    return wrap(creation::convert(x.a, t, *placement_arg(placement, op), op));
}

}  // namespace

}  // namespace

namespace {

void bind_block_dtype(nb::module_& m) {
    nb::class_<BlockDType>(m, "BlockDType",
                           "A block floating-point storage format (``hx.bfp16``): not a NumPy dtype. Arrays of it "
                           "are storage: they convert with ``astype``, feed ``matmul`` and decode to float32 on "
                           "host access; ``x.blocks()`` gives the raw ``uint8`` blocks.")
        .def_ro("name", &BlockDType::name, "The format's name ('bfp16').")
        .def_ro("block_values", &BlockDType::block_values, "Values per block, along the last axis (8).")
        .def_ro("block_bytes", &BlockDType::block_bytes, "Bytes per block (9: a shared exponent and 8 mantissas).")
        .def_prop_ro("itemsize", [](const BlockDType& d) { return d.block_bytes; }, "Bytes per block (9 for bfp16).")
        .def_prop_ro("kind", [](const BlockDType&) { return "V"; }, "'V': raw bytes as far as NumPy is concerned.")
        .def("__repr__", [](const BlockDType& d) { return "hrxarray." + d.name; })
        .def("__str__", [](const BlockDType& d) { return "hrxarray." + d.name; })
        .def("__reduce__", [](const BlockDType& d) { return d.name; },
             "Pickled as the global hrxarray._core.<name>: unpickling gives the same object.");
    nb::object bfp = nb::cast(BlockDType{"bfp16", kernels::kBfp16BlockValues, kernels::kBfp16BlockBytes});
    m.attr("bfp16") = bfp;
    g_bfp16 = bfp.release().ptr();
}

}  // namespace

void bind_array(nb::module_& m) {
    bind_block_dtype(m);
    m.def(
        "_dtype", [](nb::handle dtype, const std::string& op) { return dtype_object(dtype_from_py(dtype, op)); },
        "dtype"_a, "op"_a,
        "A dtype spelling (a NumPy dtype or its name or type, 'bfloat16', hx.bfp16, float/int/bool) as what "
        "DeviceArray.dtype reports: the one dtype map. TypeError naming `op` for what is not a dtype hrxarray has.");
    m.def(
        "_result_type",
        [](nb::sequence dtypes, const std::string& scalar_kinds) {
            std::vector<DType> typed;
            for (nb::handle h : dtypes) typed.push_back(dtype_from_py(h, "result_type"));
            std::vector<Scalar::Kind> weak;
            for (char c : scalar_kinds) {
                switch (c) {
                    case 'b': weak.push_back(Scalar::Kind::Bool); break;
                    case 'i': weak.push_back(Scalar::Kind::Int); break;
                    case 'f': weak.push_back(Scalar::Kind::Float); break;
                    case 'c': weak.push_back(Scalar::Kind::Complex); break;
                    default: throw nb::value_error("_result_type: scalar kinds are 'b', 'i', 'f' and 'c'");
                }
            }
            return dtype_object(result_type(typed, weak));
        },
        "dtypes"_a, "scalar_kinds"_a,
        "NEP 50's result type of `dtypes` and of weak Python scalars of the given kinds ('b', 'i', 'f', 'c'): "
        "the rule hrxarray's ufuncs apply (array/operands.h).");
    auto cls = nb::class_<PyArray>(
        m, "DeviceArray",
        "An n-dimensional array in memory of the emulated (or native) HRX fabric.\n\n"
        "Create arrays with hx.asarray, hx.zeros, hx.arange, ...; every operation returns at once with the "
        "array's producer attached (a future): host access, to_numpy, printing and DLPack export wait for it, "
        "and a device failure surfaces there as ExecutionError.");
    cls.def_prop_ro("shape", [](const PyArray& s) { return int_tuple(s.a.shape); }, "The dimensions, a tuple of ints.")
        .def_prop_ro("ndim", [](const PyArray& s) { return s.a.ndim(); }, "Number of dimensions.")
        .def_prop_ro("size", [](const PyArray& s) { return s.a.size(); }, "Number of elements.")
        .def_prop_ro("nbytes", [](const PyArray& s) { return s.a.nbytes(); },
                     "Bytes the elements occupy (9 per 8 values for bfp16).")
        .def_prop_ro("itemsize", [](const PyArray& s) { return dtype_itemsize(s.a.dtype); },
                     "Bytes per element (9, the bytes per 8-value block, for bfp16).")
        .def_prop_ro("strides", [](const PyArray& s) { return int_tuple(s.a.strides); },
                     "Byte steps per dimension (for bfp16 the last is 9, bytes per block of 8 values).")
        .def_prop_ro("dtype", [](const PyArray& s) { return dtype_object(s.a.dtype); },
                     nb::for_getter(nb::sig("def dtype(self) -> numpy.dtype[typing.Any] | BlockDType")),
                     "The element type: a numpy.dtype (bfloat16 is ml_dtypes'), or hx.bfp16.")
        .def_prop_ro("placement", [](const PyArray& s) { return placement_to_py(s.a.placement()); },
                     nb::for_getter(nb::sig("def placement(self) -> Placement")), "Where the storage lives (GpuLocal, HostVisible, NpuLocal or Shared).")
        .def_prop_ro("device", [](const PyArray& s) { return placement_to_py(s.a.placement()); },
                     nb::for_getter(nb::sig("def device(self) -> Placement")), "The array API's device: the array's placement (a device is a placement, as x.to_device and "
                     "device= take it).")
        .def_prop_ro("buffer", [](const PyArray& s) { return s.a.buffer(); },
                     "The Buffer holding the elements (shared by every view of it).")
        .def_prop_ro("_offset", [](const PyArray& s) { return s.a.offset; }, "Byte offset of element [0, ...].")
        .def_prop_ro("_c_contiguous", [](const PyArray& s) { return s.a.c_contiguous(); },
                     "True when the elements lie in C order with no gaps (length-1 axes and empty arrays count as "
                     "contiguous).")
        .def("_contiguous_view",
             [](const PyArray& s, nb::handle shape) {
                 return wrap(contiguous_view(s.a, int_vector(shape, "reshape", "shape"), "reshape of " + s.a.describe()));
             },
             "shape"_a, "A view of this C-contiguous array's elements, from its first, with `shape` in C order.")
        .def_prop_ro("_readonly", [](const PyArray& s) { return s.a.base->readonly(); },
                     "True for read-only DLPack imports, which device work must not write.")
        .def_prop_ro("_base_id", [](const PyArray& s) { return reinterpret_cast<uintptr_t>(s.a.base.get()); },
                     "Identity of the shared base (views of one allocation share it).")
        .def_prop_ro("_write_version", [](const PyArray& s) { return s.a.base->storage()->write_version(); },
                     "Writes submitted to the storage so far (Note [Write version]): with _base_id it names the "
                     "bytes without reading them.")
        .def(
            "__dask_tokenize__",
            [](const PyArray& s) {
                const auto& st = *s.a.base->storage();
                return nb::make_tuple("hrxarray.DeviceArray", reinterpret_cast<uintptr_t>(s.a.base.get()), st.id(),
                                      st.write_version(), s.a.offset, int_tuple(s.a.shape), int_tuple(s.a.strides),
                                      nb::str(dtype_object(s.a.dtype)), nb::repr(placement_to_py(s.a.placement())));
            },
            nb::sig("def __dask_tokenize__(self) -> tuple[object, ...]"),
            "Dask's token: the array's identity and its storage's write version (Note [Write version]); never "
            "reads or copies the elements, and changes with every write submitted.")
        .def("ready", [](const PyArray& s) { return s.a.base->ready(); },
             "True when no device operation writing this array's allocation is pending (never waits).")
        .def(
            "block_until_ready",
            [](nb::handle self) {
                wait_ready(array_of(self));
                return nb::borrow(self);
            },
            nb::sig("def block_until_ready(self) -> DeviceArray"), "Wait for the pending writers and return self; raises ExecutionError if one failed.")
        .def("__len__",
             [](const PyArray& s) {
                 if (s.a.ndim() == 0) throw nb::type_error("len() of unsized object (a 0-d DeviceArray)");
                 return s.a.shape[0];
             })
        .def(
            "_dlpack_export",
            [](const PyArray& s, nb::handle stream, nb::handle max_version, nb::handle dl_device, nb::handle copy,
               bool readonly, bool never_writes) {
                return dlpack_export(s.a, stream, max_version, dl_device, copy, readonly, never_writes);
            },
            "stream"_a.none(), "max_version"_a.none(), "dl_device"_a.none(), "copy"_a.none(), "readonly"_a,
            "never_writes"_a,
            "DeviceArray.__dlpack__'s primitive (_array.py): readonly asks for a read-only export (READ_ONLY, a "
            "read lease); never_writes says the consumer never writes (JAX: a read lease, even on a legacy "
            "capsule). Note [Read-only DLPack exports].")
        .def("__dlpack_device__",
             [](const PyArray& s) {
                 auto d = dlpack_device(s.a);
                 return nb::make_tuple(d.device_type, d.device_id);
             },
             "(kDLCPU=1, 0) for host-mapped placements, (kDLROCM=10, gpu index) for GpuLocal.")
        .def("_to_numpy", &to_numpy, "dtype"_a.none() = nb::none(),
             "A new NumPy array holding a copy (waits; GpuLocal goes through the download lane).")
        .def("_host_view", &host_view,
             "(uint8 array over the byte extent, offset of element 0 in it): a zero-copy read-only view holding "
             "a host lease while it lives.")
        .def(
            "_view",
            [](const PyArray& s, int64_t offset, nb::handle shape, nb::handle strides, nb::handle dtype) {
                const DType t = dtype.is_none() ? s.a.dtype : dtype_from_py(dtype, "view");
                return wrap(view_of(s.a, offset, int_vector(shape, "view", "shape"),
                                    int_vector(strides, "view", "strides"), t, "view of " + s.a.describe()));
            },
            "offset"_a, "shape"_a, "strides"_a, "dtype"_a.none() = nb::none(),
            "A view sharing this array's storage: byte offset into the buffer, shape, byte strides.")
        .def("_copy_from", &copy_into, "src"_a, "even"_a = false, "op"_a.none() = nb::none(),
             "Asynchronously copy src (a DeviceArray, a scalar or host data, with NumPy's assignment broadcasting) "
             "into this array, converting dtypes (bfp16 encodes with floor rounding, or half-to-even with "
             "even=True); errors name op. Everything is checked before anything is allocated.")
        .def("_convert", &convert, "dtype"_a.none(), "placement"_a.none(), "op"_a.none() = nb::none(),
             "A new array: this one converted to dtype (None: its own) in placement, on this array's runtime "
             "(astype, copy, to); errors name op.")
        ;
    // NumPy defers binary operators and ufuncs to the higher priority.
    cls.attr("__array_priority__") = 100.0;
    cls.attr("__hash__") = nb::none();

    m.def(
        "_host_array", [](nb::handle obj, const std::string& op) { return host_array(obj, nullptr, op); },
        "obj"_a.none(), "op"_a,
        "Host data as a NumPy array of booleans, integers or floats (numpy.asarray); errors name op.");
    m.def(
        "_check_reads",
        [](nb::handle arrays, const std::string& op) {
            std::vector<const Array*> reads;
            for (nb::handle h : arrays)
                if (is_array(h)) reads.push_back(&array_of(h));
            check_reads(reads, op);
        },
        "arrays"_a, "op"_a,
        "The refusals device work reading these DeviceArrays would meet (different runtimes, DeviceLost, "
        "BusyError), checked before a result is allocated; errors name op.");
    m.def(
        "_normalize_axes",
        [](nb::handle axis, int ndim, const std::string& op) {
            const std::vector<int64_t> axes = axes_from_py(axis, ndim, op);
            axes_mask(axes, ndim, op);  // range and repeats
            nb::list out;
            for (int64_t a : axes) out.append(normalize_axis(a, ndim, op));
            return nb::tuple(out);
        },
        "axis"_a, "ndim"_a, "op"_a,
        "axis (an integer or a sequence of them) as a tuple of axes in [0, ndim): numpy.exceptions.AxisError "
        "naming op when one is out of range, ValueError for a repeated axis (Note [Axes]).");
    m.def(
        "_empty",
        [](nb::handle shape, nb::handle dtype, nb::handle placement, nb::handle op_obj, nb::handle like) {
            const std::string op = op_name(op_obj, "empty");
            const DType t = dtype_from_py(dtype, op);
            const creation::Home home = new_array_home(placement, like_arg(like, op), op);
            return wrap(creation::empty(home, int_vector(shape, op, "shape"), t, op));
        },
        "shape"_a, "dtype"_a, "placement"_a.none() = nb::none(), "op"_a.none() = nb::none(),
        "like"_a.none() = nb::none(),
        "A new zero-filled C-contiguous array (on like's runtime, in its placement by default); errors name op.");
    m.def("_full", &full, "shape"_a, "fill"_a.none(), "dtype"_a, "placement"_a.none() = nb::none(),
          "op"_a.none() = nb::none(), "like"_a.none() = nb::none(),
          "A new array filled with fill (a scalar, a DeviceArray or host data, broadcast as NumPy assigns); "
          "the fill is checked before the array is allocated.");
    m.def(
        "_from_host",
        [](nb::handle obj, nb::handle dtype, nb::handle placement, nb::handle op_obj) {
            const std::string op = op_name(op_obj, "asarray");
            auto [rt, p] = new_array_home(placement, nullptr, op);
            DType t;
            const DType* tp = nullptr;
            if (!dtype.is_none()) {
                t = dtype_from_py(dtype, op);
                tp = &t;
            }
            return wrap(array_from_host(obj, tp, p, *rt, op));
        },
        "obj"_a.none(), "dtype"_a.none() = nb::none(), "placement"_a.none() = nb::none(), "op"_a.none() = nb::none(),
        "A new array holding a copy of host data (anything numpy.asarray takes), converted to dtype (Python "
        "data exactly, or NumPy's OverflowError/ValueError); errors name op.");
    m.def(
        "_default_placement", [] { return placement_to_py(placement_from_py(nb::none(), *default_runtime(), "")); },
        "Shared(npu 0) of the default runtime: the placement arrays get when none is named.");
    m.def("_from_dlpack", &from_dlpack, "obj"_a, "placement"_a.none() = nb::none(), "copy"_a.none() = nb::none(),
          "dtype"_a.none() = nb::none(),
          "Import a DLPack producer or capsule (zero-copy for host producers; copies into `placement` when it "
          "differs, or with copy=True).");
    bind_ufuncs(m, cls);
}

}  // namespace hrx::bind
