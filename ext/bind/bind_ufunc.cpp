// The Python face of elementwise functions, reductions and matmul: the ufunc
// objects (hx.add, hx.exp, ...) with their Python attributes (nin, nout,
// types, identity), the `_reduce`, `_arg_reduce` and `_matmul` primitives,
// and DeviceArray's operators (their NotImplemented rules).
//
// Owners: this file only parses Python arguments (positional/keyword, the
// fast overload without a kwargs dict) into the core's descriptions
// (array/operands.h: device arrays, host data converted by NumPy, NEP 50
// scalars), calls one core function per concept (array/elementwise.h,
// array/reductions.h, array/matmul.h), and wraps the result. Every check,
// allocation and submission is the core's. This is the per-op hot path: no
// Python code runs between `hx.add(x, y, out=z)` and the submission, and no
// heap allocation when every operand is a DeviceArray.
#include <deque>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <exception>
#include <utility>
#include <span>

#include "array/creation.h"
#include "array/elementwise.h"
#include "array/loom_ufunc.h"
#include "array/matmul.h"
#include "array/reductions.h"
#include "array_bind.h"
#include "bindings.h"
#include "errors.h"
#include "loom_bind.h"
#include "py_types.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace hrx::bind {

using kernels::Ufunc;
using kernels::UfuncInfo;

bool is_numpy_scalar(nb::handle h) {
    static PyObject* generic = nb::module_::import_("numpy").attr("generic").inc_ref().ptr();
    return PyObject_IsInstance(h.ptr(), generic) == 1;
}

bool is_python_scalar(nb::handle h) {
    PyObject* p = h.ptr();
    if (PyFloat_CheckExact(p) || PyLong_CheckExact(p) || PyBool_Check(p) || PyComplex_CheckExact(p)) return true;
    return (PyLong_Check(p) || PyFloat_Check(p) || PyComplex_Check(p)) && !is_numpy_scalar(h);
}

namespace {

// Note [DeviceArrays by their exact type]: nanobind's isinstance and cast
// look the C++ type up in its type map (a hash of the type_info) and then
// walk the Python type's bases: about a hundred instructions per check, and
// the per-operation path checked each operand two or three times (foreign
// operands, then the parse). An object whose type is exactly DeviceArray
// (the usual case) is recognised by one pointer comparison here, its Array
// read straight from the instance; subclasses and anything else take
// is_array/array_of as before, so the answers are the same.
PyTypeObject* g_array_type = nullptr;

// The Array of `h` when h is a DeviceArray, else null.
const Array* device_of(nb::handle h) {
    if (Py_TYPE(h.ptr()) == g_array_type && nb::inst_ready(h)) return &nb::inst_ptr<PyArray>(h)->a;
    return is_array(h) ? &array_of(h) : nullptr;
}

// --- Python objects as core descriptions --------------------------------------------

void parse_int(nb::handle h, Scalar& s) {
    s.kind = Scalar::Kind::Int;
    int overflow = 0;
    const long long x = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
    if (overflow == 0) {
        s.i = x;
        return;
    }
    if (overflow > 0) {
        const unsigned long long y = PyLong_AsUnsignedLongLong(h.ptr());
        if (!PyErr_Occurred()) {
            s.range = Scalar::IntRange::UInt64;
            s.u = y;
            return;
        }
        PyErr_Clear();
    }
    s.range = Scalar::IntRange::Beyond;
    s.text = nb::cast<std::string>(nb::str(h));
    s.d = PyLong_AsDouble(h.ptr());
    if (PyErr_Occurred()) {
        PyErr_Clear();
        s.d_overflows = true;
    }
}

void parse_complex(nb::handle h, Scalar& s) {
    const Py_complex c = PyComplex_AsCComplex(h.ptr());
    if (PyErr_Occurred()) throw nb::python_error();
    s.kind = Scalar::Kind::Complex;
    s.re = c.real;
    s.im = c.imag;
    s.text = nb::cast<std::string>(nb::repr(h));
}

void parse_typed(nb::handle h, Scalar& s, const std::string& op);

// A Python number (weak) or NumPy scalar (strong: NEP 50 types numpy.float64
// although it is also a Python float) as a Scalar; false for anything else.
bool parse_number(nb::handle h, Scalar& s, const std::string& op) {
    PyObject* p = h.ptr();
    if (PyBool_Check(p)) {
        s.kind = Scalar::Kind::Bool;
        s.b = p == Py_True;
        return true;
    }
    const bool exact = PyLong_CheckExact(p) || PyFloat_CheckExact(p) || PyComplex_CheckExact(p);
    if (!exact && is_numpy_scalar(h)) {
        parse_typed(h, s, op);
    } else if (PyLong_Check(p)) {
        parse_int(h, s);
    } else if (PyFloat_Check(p)) {
        s.kind = Scalar::Kind::Float;
        s.d = PyFloat_AsDouble(p);
    } else if (PyComplex_Check(p)) {
        parse_complex(h, s);
    } else {
        return false;
    }
    return true;
}

// A typed scalar (NumPy scalar, 0-d host array): its value exact in its own dtype.
void parse_typed(nb::handle h, Scalar& s, const std::string& op) {
    const DType own = dtype_from_py(h.attr("dtype"), op);
    if (own == DType::BFP16) throw nb::type_error((op + ": a bfp16 value is not a scalar").c_str());
    nb::object item = h.attr("item")();
    if (!parse_number(item, s, op))
        throw nb::type_error((op + ": expected a number, got " + nb::cast<std::string>(nb::repr(item.type()))).c_str());
    const Operand exact = hrx::scalar_operand(s, own, op);
    s.weak = false;
    s.dtype = own;
    std::memcpy(s.value, exact.value, sizeof s.value);
}

bool is_zero_d_host_array(nb::handle h) {
    return PyObject_HasAttrString(h.ptr(), "__array_interface__") && nb::hasattr(h, "ndim") &&
           nb::cast<int64_t>(h.attr("ndim")) == 0;
}

// A DeviceArray, or host data converted now by NumPy (no device memory yet,
// so that every check of the call runs before anything is uploaded); `keep`
// holds the converted data for the call.
void parse_array(nb::handle h, Input& in, nb::object& keep, const std::string& op) {
    if (const Array* a = device_of(h)) {
        in.kind = Input::Kind::Device;
        in.device = a;
        in.dtype = a->dtype;
        return;
    }
    keep = host_array(h, nullptr, op);
    in.kind = Input::Kind::Host;
    in.host = host_block(keep, op);
    in.dtype = in.host.dtype;
}

// An operand of an elementwise function: a number, else as parse_array.
void parse_input(nb::handle h, Input& in, nb::object& keep, const std::string& op) {
    if (!device_of(h) && parse_number(h, in.scalar, op)) {
        in.kind = Input::Kind::Scalar;
        in.dtype = in.scalar.dtype;
        return;
    }
    parse_array(h, in, keep, op);
}

// out=: a DeviceArray or None (nullptr).
const Array* parse_out(nb::handle out, const std::string& op) {
    if (out.is_none()) return nullptr;
    if (const Array* a = device_of(out)) return a;
    throw nb::type_error((op + ": out must be a DeviceArray, got " + nb::cast<std::string>(nb::repr(out.type()))).c_str());
}

nb::object wrap_result(std::optional<Array>&& r, nb::handle out) {
    return r ? wrap(std::move(*r)) : nb::borrow(out);
}

std::pair<std::shared_ptr<RuntimeCore>, Placement> call_defaults() {
    auto rt = default_runtime();
    Placement p = creation::default_placement(*rt);
    return {creation::placement_runtime(p, rt), p};
}

const CallEnv g_env{&call_defaults};

}  // namespace

Operand scalar_operand(nb::handle value, DType dt, const std::string& op) {
    Scalar s;
    if (!parse_number(value, s, op)) {
        if (!is_zero_d_host_array(value))
            throw nb::type_error(
                (op + ": expected a number, got " + nb::cast<std::string>(nb::repr(value.type()))).c_str());
        parse_typed(value, s, op);
    }
    return hrx::scalar_operand(s, dt, op);
}

namespace {

// --- ufunc calls ------------------------------------------------------------------

// The objects an operator (x + other) takes; anything else returns
// NotImplemented so that Python tries the other operand.
bool numpy_operand(nb::handle h) {
    static PyObject* ndarray = nb::module_::import_("numpy").attr("ndarray").inc_ref().ptr();
    return PyObject_IsInstance(h.ptr(), ndarray) == 1 || is_numpy_scalar(h);
}

bool operator_operand(nb::handle h) {
    return is_array(h) || is_python_scalar(h) || PyList_Check(h.ptr()) || PyTuple_Check(h.ptr()) || numpy_operand(h);
}

struct CallArgs {
    nb::handle inputs[3];
    size_t nin = 0;
    nb::handle out;
    nb::handle dtype;
    nb::handle where;
};

// Note [Foreign operands of hrxarray's ufuncs]: np.add(x, dask_array) reaches
// Dask through NEP 13 (DeviceArray.__array_ufunc__ returns NotImplemented for
// it), but hx.add(x, dask_array) is not a NumPy ufunc, so the same call would
// convert the Dask array to a host array and compute all of it. When an
// operand is a foreign array type (the one rule, has_foreign_operand, which
// DeviceArray.__array_ufunc__ and __array_function__ use too as
// hrxarray._core._has_foreign_operand), the call therefore goes to NumPy's
// ufunc of the same name, so that type maps it over its blocks and hrxarray
// runs each block. Without a foreign operand, or when NumPy has no such ufunc,
// the call goes on here.
bool has_foreign_operand(nb::handle values) {
    static PyObject* ndarray = nb::module_::import_("numpy").attr("ndarray").inc_ref().ptr();
    for (nb::handle item : values) {
        if (is_array(item) || PyObject_IsInstance(item.ptr(), ndarray) == 1 || is_numpy_scalar(item)) continue;
        if (PyTuple_Check(item.ptr()) || PyList_Check(item.ptr())) {
            if (has_foreign_operand(item)) return true;
            continue;
        }
        nb::handle t = item.type();
        if (nb::hasattr(t, "__array_ufunc__") || nb::hasattr(t, "__array_function__")) return true;
    }
    return false;
}

std::optional<nb::object> foreign_override(const std::string& name, const CallArgs& c) {
    bool maybe = false;
    for (size_t i = 0; i < c.nin; ++i) {
        const nb::handle h = c.inputs[i];
        maybe |= !device_of(h) && !is_python_scalar(h) && !numpy_operand(h);
    }
    if (!maybe) return std::nullopt;
    nb::list inputs;
    for (size_t i = 0; i < c.nin; ++i) inputs.append(c.inputs[i]);
    if (!has_foreign_operand(inputs)) return std::nullopt;
    static PyObject* ufunc_type = nb::module_::import_("numpy").attr("ufunc").inc_ref().ptr();
    nb::object uf = nb::getattr(nb::module_::import_("numpy"), name.c_str(), nb::none());
    if (PyObject_IsInstance(uf.ptr(), ufunc_type) != 1) return std::nullopt;
    nb::dict kwargs;
    if (!c.out.is_none()) kwargs["out"] = c.out;
    if (c.dtype.is_valid() && !c.dtype.is_none()) kwargs["dtype"] = c.dtype;
    if (c.where.is_valid() && c.where.ptr() != Py_True) kwargs["where"] = c.where;
    return uf(*nb::tuple(inputs), **kwargs);
}

// The Inputs of one call, constructed only for its operands: an Input holds
// four Dims, a Scalar and an Array, and making and destroying the three
// slots and the mask of every call, used or not, was a twentieth of a
// one-element operation's instructions.
struct InputSlots {
    union {
        Input v[3];
    };
    size_t n = 0;
    InputSlots() {}
    ~InputSlots() {
        while (n > 0) v[--n].~Input();
    }
    InputSlots(const InputSlots&) = delete;
    InputSlots& operator=(const InputSlots&) = delete;
    Input& add() {
        new (&v[n]) Input();
        return v[n++];
    }
};

nb::object ufunc_apply(Ufunc op, const CallArgs& c) {
    const std::string name = kernels::ufunc_info(op).name;
    if (auto deferred = foreign_override(name, c)) return std::move(*deferred);
    nb::handle out_obj = c.out;
    if (!out_obj.is_none() && PyTuple_Check(out_obj.ptr())) {
        if (PyTuple_Size(out_obj.ptr()) != 1)
            throw nb::value_error((name + ": out must be a DeviceArray or a tuple of one").c_str());
        out_obj = PyTuple_GET_ITEM(out_obj.ptr(), 0);
    }
    const Array* out = parse_out(out_obj, name);
    // Fixed-size storage: this is the per-operation path (no heap here).
    InputSlots inputs;
    nb::object keep[4];
    for (size_t i = 0; i < c.nin; ++i) parse_input(c.inputs[i], inputs.add(), keep[i], name);
    elementwise::Where where;
    std::optional<Input> mask;
    if (c.where.is_valid() && !c.where.is_none() && c.where.ptr() != Py_True) {
        if (c.where.ptr() == Py_False) {
            where.kind = elementwise::Where::Kind::Nowhere;
        } else {
            parse_input(c.where, mask.emplace(), keep[3], name);
            where.kind = elementwise::Where::Kind::Mask;
            where.mask = &*mask;
        }
    }
    DType dtype{};
    const bool has_dtype = c.dtype.is_valid() && !c.dtype.is_none();
    if (has_dtype) dtype = dtype_from_py(c.dtype, name);
    return wrap_result(elementwise::call(g_env, op, std::span<Input>(inputs.v, inputs.n), out,
                                         has_dtype ? &dtype : nullptr, where),
                       out_obj);
}

// Note [Ufunc calls by vectorcall]: `hx.add(x, y, out=z)` on a nanobind
// object whose type defines __call__ went through CPython's slot_tp_call:
// a type lookup of __call__, an argument tuple, a keyword dict built from
// the call's keyword names, a second tuple with self prepended, and then
// nanobind unpacking the dict into keyword names again: a fifth of a
// one-element operation's cost. Each built-in ufunc object instead carries a
// vectorcall entry (the type's tp_vectorcall_offset points at `vectorcall`),
// which hands the call's own argument array, self prepended, to the same
// nanobind __call__ overloads: no tuple or dict is made, and the parse, the
// errors and their translation are exactly those of __call__. The two most
// common forms, f(x, y) and f(x, y, out=z), skip nanobind's overload
// matching too and go to ufunc_apply as the keyword overload would; their
// errors are rethrown inside a nanobind function, so they are translated as
// every binding's are. Objects whose
// entry is null (Loom ufuncs, a subclass) take the type's __call__ as before.
struct PyUfunc {
    vectorcallfunc vectorcall = nullptr;
    Ufunc op{};
};

// The type's __call__ (nanobind's overload set), for ufunc_vectorcall.
PyObject* g_ufunc_call = nullptr;
// A nanobind function that rethrows t_failure, so that an exception of the
// direct path below leaves with nanobind's translation (HrxError kinds,
// python_error) like every other call's.
PyObject* g_rethrow = nullptr;
thread_local std::exception_ptr t_failure;

PyObject* ufunc_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
    const Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    const Py_ssize_t total = n + nkw;
    const PyUfunc& u = *nb::inst_ptr<PyUfunc>(self);
    const UfuncInfo& info = kernels::ufunc_info(u.op);
    // The common calls, f(x, y) and f(x, y, out=z), go straight to
    // ufunc_apply, as ufunc_call_kw would send them (no nanobind overload
    // matching, no argument tuple); everything else goes through __call__.
    if (n == info.nin && g_rethrow &&
        (nkw == 0 || (nkw == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "out") == 0))) {
        try {
            CallArgs c;
            for (Py_ssize_t i = 0; i < n; ++i) c.inputs[i] = args[i];
            c.nin = static_cast<size_t>(n);
            c.out = nkw ? nb::handle(args[n]) : nb::handle(Py_None);
            c.dtype = Py_None;
            c.where = Py_True;
            return ufunc_apply(u.op, c).release().ptr();
        } catch (...) {
            t_failure = std::current_exception();
            return PyObject_CallNoArgs(g_rethrow);  // always NULL, with the translated error set
        }
    }
    if (nargsf & PY_VECTORCALL_ARGUMENTS_OFFSET) {
        // The caller lets args[-1] be borrowed for self (PEP 590).
        PyObject** slot = const_cast<PyObject**>(args) - 1;
        PyObject* saved = *slot;
        *slot = self;
        PyObject* r = PyObject_Vectorcall(g_ufunc_call, slot, static_cast<size_t>(n + 1), kwnames);
        *slot = saved;
        return r;
    }
    constexpr Py_ssize_t kInline = 8;
    PyObject* inline_args[kInline + 1];
    std::vector<PyObject*> heap;
    PyObject** all = inline_args;
    if (total > kInline) {
        heap.resize(static_cast<size_t>(total) + 1);
        all = heap.data();
    }
    all[0] = self;
    for (Py_ssize_t i = 0; i < total; ++i) all[i + 1] = args[i];
    return PyObject_Vectorcall(g_ufunc_call, all, static_cast<size_t>(n + 1), kwnames);
}

// Gives the built-in ufunc objects of `cls` their vectorcall entry (Note
// [Ufunc calls by vectorcall]); left as they are when nanobind does not keep
// them inline at one offset.
void enable_ufunc_vectorcall(nb::handle cls, std::span<const nb::object> objects) {
    auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
    g_ufunc_call = PyDict_GetItemString(type->tp_dict, "__call__");
    if (!g_ufunc_call || objects.empty()) return;
    Py_INCREF(g_ufunc_call);
    const auto offset_of = [](const nb::object& o) {
        return reinterpret_cast<char*>(nb::inst_ptr<PyUfunc>(o)) - reinterpret_cast<char*>(o.ptr());
    };
    const auto offset = offset_of(objects[0]);
    for (const auto& o : objects)
        if (offset_of(o) != offset || offset <= 0) return;
    nb::object rethrow = nb::cpp_function([] {
        std::exception_ptr e = std::exchange(t_failure, nullptr);
        if (e) std::rethrow_exception(e);
        throw nb::type_error("ufunc call: no pending error to raise");
    });
    g_rethrow = rethrow.release().ptr();
    for (const auto& o : objects) nb::inst_ptr<PyUfunc>(o)->vectorcall = &ufunc_vectorcall;
    type->tp_vectorcall_offset = offset + static_cast<Py_ssize_t>(offsetof(PyUfunc, vectorcall));
    type->tp_flags |= Py_TPFLAGS_HAVE_VECTORCALL;
    PyType_Modified(type);
}

nb::object ufunc_call(const PyUfunc& u, nb::args args, nb::kwargs kwargs) {
    const UfuncInfo& info = kernels::ufunc_info(u.op);
    const size_t n = args.size();
    if (n != info.nin && n != static_cast<size_t>(info.nin + info.nout))
        throw nb::type_error((std::string(info.name) + "() takes from " + std::to_string(info.nin) + " to " +
                              std::to_string(info.nin + info.nout) + " positional arguments but " + std::to_string(n) +
                              " were given")
                                 .c_str());
    CallArgs c;
    for (size_t i = 0; i < info.nin; ++i) c.inputs[i] = args[i];
    c.nin = info.nin;
    c.out = n > info.nin ? nb::handle(args[info.nin]) : nb::handle(Py_None);
    c.dtype = Py_None;
    c.where = Py_True;
    for (auto [k, v] : kwargs) {
        const char* key = PyUnicode_AsUTF8(k.ptr());
        if (!key) throw nb::python_error();
        if (std::strcmp(key, "out") == 0) {
            if (n > info.nin)
                throw nb::type_error((std::string(info.name) + "() got out both positionally and as a keyword").c_str());
            c.out = v;
        } else if (std::strcmp(key, "dtype") == 0) {
            c.dtype = v;
        } else if (std::strcmp(key, "where") == 0) {
            c.where = v;
        } else if (std::strcmp(key, "casting") == 0) {
            if (!nb::isinstance<nb::str>(v) || nb::cast<std::string>(v) != "same_kind")
                throw nb::type_error((std::string(info.name) + "(): only casting='same_kind' (the default) is supported").c_str());
        } else {
            throw nb::type_error((std::string(info.name) + "() got an unexpected keyword argument '" + key + "'").c_str());
        }
    }
    return ufunc_apply(u.op, c);
}

// The fast overload: keywords bound by nanobind, no kwargs dict. Unknown
// keywords fall through to ufunc_call, which names them.
nb::object ufunc_call_kw(const PyUfunc& u, nb::args args, nb::handle out, nb::handle dtype, nb::handle where,
                         nb::handle casting) {
    const UfuncInfo& info = kernels::ufunc_info(u.op);
    const size_t n = args.size();
    if (n != info.nin || !(casting.is_none() ||
                           (nb::isinstance<nb::str>(casting) && nb::cast<std::string>(casting) == "same_kind"))) {
        nb::kwargs kw;
        kw["out"] = out;
        kw["dtype"] = dtype;
        kw["where"] = where;
        if (!casting.is_none()) kw["casting"] = casting;
        if (n > info.nin && out.is_none()) kw.attr("pop")("out");
        return ufunc_call(u, args, kw);
    }
    CallArgs c;
    for (size_t i = 0; i < n; ++i) c.inputs[i] = args[i];
    c.nin = n;
    c.out = out;
    c.dtype = dtype;
    c.where = where;
    return ufunc_apply(u.op, c);
}

nb::object identity_object(kernels::Identity id) {
    using kernels::Identity;
    switch (id) {
        case Identity::None: return nb::none();
        case Identity::Zero: return nb::int_(0);
        case Identity::One: return nb::int_(1);
        case Identity::AllOnes: return nb::int_(-1);
        case Identity::False: return nb::bool_(false);
        case Identity::True: return nb::bool_(true);
    }
    return nb::none();
}

nb::list loop_types(const UfuncInfo& info) {
    nb::list out;
    for (int i = 0; i < info.nloops; ++i) {
        std::string s;
        for (int k = 0; k < info.nin; ++k) s += dtype_info(info.loops[i].in[k]).code;
        s += "->";
        s += dtype_info(info.loops[i].out).code;
        out.append(s);
    }
    return out;
}

// --- reductions and matmul ----------------------------------------------------------

nb::object reduce(const PyUfunc& u, nb::handle x, nb::handle axes, nb::handle acc_dtype, nb::handle out_dtype,
                  nb::handle out_obj, bool keepdims, double divisor, nb::handle name) {
    const std::string op =
        name.is_none() ? std::string(kernels::ufunc_info(u.op).name) + ".reduce" : nb::cast<std::string>(name);
    Input in;
    nb::object keep;
    parse_array(x, in, keep, op);
    std::vector<int64_t> ax;
    if (!axes.is_none()) ax = axes_from_py(axes, static_cast<int>(in.shape().size()), op);
    const DType acc = dtype_from_py(acc_dtype, op);
    const DType odt = dtype_from_py(out_dtype, op);
    const Array* out = parse_out(out_obj, op);
    return wrap_result(reductions::reduce(g_env, u.op, in, axes.is_none() ? nullptr : &ax, acc, odt, out, keepdims,
                                          divisor, op),
                       out_obj);
}

nb::object arg_reduce(nb::handle x, nb::handle axis, bool max, bool keepdims, nb::handle name) {
    const std::string op = name.is_none() ? std::string(max ? "argmax" : "argmin") : nb::cast<std::string>(name);
    Input in;
    nb::object keep;
    parse_array(x, in, keep, op);
    int64_t ax = 0;
    if (!axis.is_none()) ax = axes_from_py(nb::make_tuple(axis), static_cast<int>(in.shape().size()), op).at(0);
    return wrap(reductions::arg_reduce(g_env, in, axis.is_none() ? nullptr : &ax, max, keepdims, op));
}

// A string option of matmul: None gives `dflt`; TypeError naming it otherwise.
std::string matmul_option(nb::handle h, const char* name, const char* dflt, const char* allowed) {
    if (h.is_none()) return dflt;
    if (!nb::isinstance<nb::str>(h))
        throw nb::type_error((std::string("matmul: ") + name + " must be " + allowed + ", got " +
                              nb::cast<std::string>(nb::repr(h)))
                                 .c_str());
    return nb::cast<std::string>(h);
}

nb::object matmul(nb::handle a_obj, nb::handle b_obj, nb::handle out_obj, nb::handle compute, nb::handle rounding) {
    const std::string op = "matmul";
    const Array* out = parse_out(out_obj, op);
    Input in[2];
    nb::object keep[2];
    parse_input(a_obj, in[0], keep[0], op);
    parse_input(b_obj, in[1], keep[1], op);
    const std::string mode = matmul_option(compute, "compute", "", "None, 'bf16' or 'bfp16'");
    const std::string round = matmul_option(rounding, "rounding", "floor", "'floor' or 'even'");
    return wrap_result(matmul::call(g_env, in[0], in[1], out, mode, round), out_obj);
}

// --- operators ----------------------------------------------------------------------

// An operator call: inputs, out (None: a new array), no dtype, everywhere.
nb::object apply_operator(Ufunc op, std::initializer_list<nb::handle> inputs, nb::handle out) {
    CallArgs c;
    for (nb::handle h : inputs) c.inputs[c.nin++] = h;
    c.out = out;
    c.dtype = Py_None;
    c.where = Py_True;
    return ufunc_apply(op, c);
}

nb::object binary(Ufunc op, nb::handle a, nb::handle b) {
    if (!operator_operand(a) || !operator_operand(b)) return nb::borrow(Py_NotImplemented);
    return apply_operator(op, {a, b}, Py_None);
}

nb::object inplace(Ufunc op, nb::handle self, nb::handle b) {
    if (!operator_operand(b)) return nb::borrow(Py_NotImplemented);
    return apply_operator(op, {self, b}, self);
}

nb::object unary(Ufunc op, nb::handle a) { return apply_operator(op, {a}, Py_None); }

// --- Loom ufuncs ---------------------------------------------------------------------

// A ufunc whose one loop is a Loom GPU kernel (array/loom_ufunc.h). Its calls
// parse as the built-ins' do (parse_input, parse_out) and go to the core's
// loom_ufunc::call; keywords other than out/dtype/where/casting are the
// kernel's device scalars.
struct PyLoomUfunc : PyUfunc {
    std::shared_ptr<const loom_ufunc::Definition> def;
};

nb::object loom_call(const PyLoomUfunc& u, nb::args args, nb::kwargs kwargs) {
    const loom_ufunc::Definition& d = *u.def;
    const std::string& who = d.who;
    const size_t nin = static_cast<size_t>(d.nin);
    const size_t nout = static_cast<size_t>(d.nout);
    const size_t n = args.size();
    if (n != nin && n != nin + nout)
        throw nb::type_error((who + ": takes " + std::to_string(nin) + " input(s), got " + std::to_string(n)).c_str());
    nb::object out = nb::none();
    if (n > nin)
        out = nout == 1 ? nb::borrow(args[nin])
                        : nb::steal(PyTuple_GetSlice(args.ptr(), static_cast<Py_ssize_t>(nin), static_cast<Py_ssize_t>(n)));
    nb::handle dtype_obj = Py_None;
    std::vector<loom_ufunc::NamedScalar> scalars;
    scalars.reserve(kwargs.size());
    for (auto [k, v] : kwargs) {
        const char* key = PyUnicode_AsUTF8(k.ptr());
        if (!key) throw nb::python_error();
        if (std::strcmp(key, "out") == 0) {
            if (n > nin) throw nb::type_error((who + ": got out both positionally and as a keyword").c_str());
            out = nb::borrow(v);
        } else if (std::strcmp(key, "dtype") == 0) {
            dtype_obj = v;
        } else if (std::strcmp(key, "where") == 0) {
            if (v.ptr() != Py_True)
                throw nb::type_error((who + ": where= is not supported (the Loom kernel writes every element)").c_str());
        } else if (std::strcmp(key, "casting") == 0) {
            if (!nb::isinstance<nb::str>(v) || nb::cast<std::string>(v) != "same_kind")
                throw nb::type_error((who + ": only casting='same_kind' (the default) is supported").c_str());
        } else {
            loom_ufunc::NamedScalar& s = scalars.emplace_back();
            s.name = key;
            // The common spellings without building scalar_arg's message.
            int overflow = 0;
            if (PyFloat_CheckExact(v.ptr())) {
                s.value.is_float = true;
                s.value.f = PyFloat_AS_DOUBLE(v.ptr());
            } else if (PyLong_CheckExact(v.ptr()) &&
                       (s.value.i = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow), overflow == 0)) {
            } else {
                s.value = scalar_arg(v, who + ": device scalar '" + key + "'");
            }
        }
    }
    std::vector<const Array*> outs;
    const bool out_tuple = PyTuple_Check(out.ptr());
    if (out_tuple) {
        const size_t m = static_cast<size_t>(PyTuple_Size(out.ptr()));
        if (m != nout)
            throw nb::value_error((who + ": out must hold " + std::to_string(nout) + " array(s), got " +
                                   std::to_string(m)).c_str());
        for (size_t j = 0; j < m; ++j) outs.push_back(parse_out(PyTuple_GET_ITEM(out.ptr(), j), who));
    } else if (!out.is_none()) {
        if (nout != 1)
            throw nb::value_error((who + ": out must hold " + std::to_string(nout) + " array(s), got 1").c_str());
        outs.push_back(parse_out(out, who));
    }
    for (const Array* o : outs)
        if (!o) throw nb::type_error((who + ": out must be DeviceArrays, got None").c_str());
    // Fixed-size storage for the usual few inputs, as ufunc_apply's.
    Input small[4];
    nb::object keep_small[4];
    std::vector<Input> many;
    std::vector<nb::object> keep_many;
    if (nin > 4) {
        many.resize(nin);
        keep_many.resize(nin);
    }
    const std::span<Input> inputs = nin > 4 ? std::span<Input>(many) : std::span<Input>(small, nin);
    nb::object* keep = nin > 4 ? keep_many.data() : keep_small;
    for (size_t i = 0; i < nin; ++i) parse_input(args[i], inputs[i], keep[i], who);
    DType dtype{};
    const bool has_dtype = !dtype_obj.is_none();
    if (has_dtype) dtype = dtype_from_py(dtype_obj, who);
    auto results = loom_ufunc::call(g_env, d, inputs, outs, scalars, has_dtype ? &dtype : nullptr);
    if (!results) return out_tuple && nout == 1 ? nb::borrow(PyTuple_GET_ITEM(out.ptr(), 0)) : out;
    if (nout == 1) return wrap(std::move((*results)[0]));
    nb::list l;
    for (Array& r : *results) l.append(wrap(std::move(r)));
    return nb::tuple(l);
}

std::string loom_types(const loom_ufunc::Definition& d) {
    std::string s;
    for (int i = 0; i < d.nin + d.nout; ++i) {
        if (i == d.nin) s += "->";
        s += dtype_info(d.dtypes[static_cast<size_t>(i)]).code;
    }
    return s;
}

}  // namespace

void bind_loom_ufunc(nb::module_& lm) {
    nb::class_<PyLoomUfunc, PyUfunc>(
        lm, "LoomUfunc", nb::dynamic_attr(),
        "An hx.ufunc whose one loop is a Loom GPU kernel (hrxarray.loom.ufunc compiles one from source). "
        "LoomUfunc(artifact, nin=None, nout=None): the artifact's workload signature is (%count: index), its "
        "device signature (%count: index, scalars..., inputs..., outputs...). Calls take nin operands "
        "(broadcast together, NEP 50, cast same_kind to the kernel's element types), out= (an array or a "
        "tuple of nout) and every device scalar by name, and run the kernel once over the flattened "
        "broadcast shape as one operation on the GPU compute lane.")
        .def(
            "__init__",
            [](PyLoomUfunc* self, const Artifact& artifact, std::optional<int> nin, std::optional<int> nout) {
                auto def = loom_ufunc::define(artifact, nin, nout);
                PyLoomUfunc* u = new (self) PyLoomUfunc();
                u->def = std::move(def);
            },
            "artifact"_a, "nin"_a.none() = nb::none(), "nout"_a.none() = nb::none(),
            "Plan `artifact` (a Loom GPU kernel) as a ufunc; nin/nout default to the split at the first "
            "written buffer. ValueError naming the kernel when it does not follow the convention.")
        .def("__call__", &loom_call, "args"_a, "kwargs"_a,
             nb::sig("def __call__(self, *args: object, **kwargs: object) -> DeviceArray"),
             "Apply elementwise: f(*inputs, out=None, dtype=None, **scalars) -> DeviceArray (out when given; a "
             "tuple when nout > 1). where= other than True is refused (TypeError).")
        .def_prop_ro("nin", [](const PyLoomUfunc& u) { return u.def->nin; }, "Number of inputs.")
        .def_prop_ro("nout", [](const PyLoomUfunc& u) { return u.def->nout; }, "Number of outputs.")
        .def_prop_ro("nargs", [](const PyLoomUfunc& u) { return u.def->nin + u.def->nout; }, "Inputs plus outputs.")
        .def_prop_ro("ntypes", [](const PyLoomUfunc&) { return 1; }, "Number of loops (1: the kernel).")
        .def_prop_ro("types", [](const PyLoomUfunc& u) {
            nb::list l;
            l.append(loom_types(*u.def));
            return l;
        }, "The kernel's loop as a NumPy-style type string ('ff->f'; bfloat16 is 'E').")
        .def_prop_ro("identity", [](const PyLoomUfunc&) { return nb::none(); }, "None: a Loom ufunc has no reduction identity.")
        .def_prop_ro("scalars", [](const PyLoomUfunc& u) { return u.def->scalars; },
                     "The kernel's device scalars (keyword arguments of a call), in signature order.")
        .def("_reduce",
             [](const PyLoomUfunc& u, nb::args, nb::kwargs) -> nb::object {
                 throw nb::type_error((u.def->who + ": a Loom ufunc has no reduce").c_str());
             },
             "args"_a, "kwargs"_a, "Refused (TypeError): a Loom kernel is not a reduction.")
        .def("__repr__", [](nb::handle self) {
            const auto& u = nb::cast<const PyLoomUfunc&>(self);
            nb::object name = nb::getattr(self, "__name__", nb::str(u.def->artifact.symbol.c_str()));
            return "<hx.loom.ufunc '" + nb::cast<std::string>(nb::str(name)) + "' nin=" + std::to_string(u.def->nin) +
                   " nout=" + std::to_string(u.def->nout) + " types=['" + loom_types(*u.def) + "']>";
        });
}

void bind_ufuncs(nb::module_& m, nb::class_<PyArray>& cls) {
    g_array_type = reinterpret_cast<PyTypeObject*>(cls.ptr());
    auto ufunc_cls = nb::class_<PyUfunc>(m, "ufunc", nb::dynamic_attr(),
                        "An elementwise function over DeviceArrays (hx.add, hx.exp, ...), run on the GPU compute "
                        "lane: NumPy's broadcasting, NEP 50 scalar promotion (with ml_dtypes' bfloat16 rules), "
                        "out=, dtype= and where=. The result is returned at once; its data is ready when the "
                        "operation completes.")
        .def("__call__", &ufunc_call_kw, "args"_a, nb::kw_only(), "out"_a.none() = nb::none(),
             "dtype"_a.none() = nb::none(), "where"_a.none() = nb::bool_(true), "casting"_a.none() = nb::none(),
             nb::sig("def __call__(self, *args: object, out: DeviceArray | tuple[DeviceArray, ...] | None = None, "
                     "dtype: object | None = None, where: object = True, casting: str | None = None) -> DeviceArray"),
             "Apply elementwise: f(*inputs, out=None, dtype=None, where=True) -> DeviceArray (out when given).")
        .def("__call__", &ufunc_call, "args"_a, "kwargs"_a,
             nb::sig("def __call__(self, *args: object, **kwargs: object) -> DeviceArray"),
             "Apply elementwise (any other keywords are refused with a TypeError naming them).")
        .def_prop_ro("nin", [](const PyUfunc& u) { return kernels::ufunc_info(u.op).nin; }, "Number of inputs.")
        .def_prop_ro("nout", [](const PyUfunc& u) { return kernels::ufunc_info(u.op).nout; }, "Number of outputs (1).")
        .def_prop_ro("nargs", [](const PyUfunc& u) { return kernels::ufunc_info(u.op).nin + kernels::ufunc_info(u.op).nout; },
                     "Inputs plus outputs.")
        .def_prop_ro("ntypes", [](const PyUfunc& u) { return kernels::ufunc_info(u.op).nloops; }, "Number of loops.")
        .def_prop_ro("types", [](const PyUfunc& u) { return loop_types(kernels::ufunc_info(u.op)); },
                     "The loops as NumPy-style type strings ('ff->f'; bfloat16 is 'E'), in resolution order.")
        .def_prop_ro("identity", [](const PyUfunc& u) { return identity_object(kernels::ufunc_info(u.op).identity); },
                     "The reduction identity (None when there is none).")
        .def("_reduce", &reduce, "x"_a, "axes"_a.none(), "acc_dtype"_a, "out_dtype"_a, "out"_a.none(), "keepdims"_a,
             "divisor"_a, "op"_a.none() = nb::none(),
             "Primitive behind reduce(): axes None (all), an integer or a tuple; dtypes resolved by the caller; "
             "errors name op (the public function; default '<ufunc>.reduce').")
        .def("__repr__", [](const PyUfunc& u) { return std::string("<hrxarray.ufunc '") + kernels::ufunc_info(u.op).name + "'>"; });

    nb::dict ufuncs;
    std::vector<nb::object> objects;
    for (int i = 0; i < kernels::kUfuncCount; ++i) {
        const Ufunc op = static_cast<Ufunc>(i);
        PyUfunc value;
        value.op = op;
        nb::object u = nb::cast(value);
        // An instance attribute: __name__ on the type is the type's own name.
        u.attr("__name__") = kernels::ufunc_info(op).name;
        ufuncs[kernels::ufunc_info(op).name] = u;
        objects.push_back(u);
    }
    enable_ufunc_vectorcall(ufunc_cls, objects);
    m.attr("_ufuncs") = ufuncs;
    // The same objects as attributes of a submodule whose __all__ is the
    // kernel table's names: stubgen types each one (`add: ufunc`), and
    // hrxarray star-imports them, so no Python file keeps a copy of the list.
    nb::module_ ew = m.def_submodule("elementwise", "The elementwise functions (hx.ufunc objects), one per kernel-table entry.");
    nb::list names;
    for (int i = 0; i < kernels::kUfuncCount; ++i) {
        const char* name = kernels::ufunc_info(static_cast<Ufunc>(i)).name;
        ew.attr(name) = ufuncs[name];
        names.append(name);
    }
    ew.attr("__all__") = names;
    m.def("_has_foreign_operand", [](nb::handle values) { return has_foreign_operand(values); }, "values"_a,
          "Whether the sequence `values` holds (at any depth of tuples and lists) an array type hrxarray does not "
          "know that speaks NumPy's protocols (a Dask array): NumPy's protocols then return NotImplemented so that "
          "type handles the call (Note [Foreign operands of hrxarray's ufuncs]).");
    m.def("_arg_reduce", &arg_reduce, "x"_a, "axis"_a.none(), "max"_a, "keepdims"_a, "op"_a.none() = nb::none(),
          "argmax (max=True) or argmin over an axis (None: the flattened array) -> int64 DeviceArray; errors name "
          "op (default 'argmax'/'argmin').");
    m.def("_matmul", &matmul, "a"_a, "b"_a, "out"_a.none() = nb::none(), "compute"_a.none() = nb::none(),
          "rounding"_a.none() = nb::none(),
          "Matrix product with NumPy's matmul shapes (see hrxarray.matmul).");

    struct Bin {
        const char* name;
        const char* rname;
        const char* iname;
        Ufunc op;
    };
    static const Bin bins[] = {
        {"__add__", "__radd__", "__iadd__", Ufunc::Add},
        {"__sub__", "__rsub__", "__isub__", Ufunc::Subtract},
        {"__mul__", "__rmul__", "__imul__", Ufunc::Multiply},
        {"__truediv__", "__rtruediv__", "__itruediv__", Ufunc::Divide},
        {"__floordiv__", "__rfloordiv__", "__ifloordiv__", Ufunc::FloorDivide},
        {"__mod__", "__rmod__", "__imod__", Ufunc::Remainder},
        {"__pow__", "__rpow__", "__ipow__", Ufunc::Power},
        {"__and__", "__rand__", "__iand__", Ufunc::BitwiseAnd},
        {"__or__", "__ror__", "__ior__", Ufunc::BitwiseOr},
        {"__xor__", "__rxor__", "__ixor__", Ufunc::BitwiseXor},
        {"__lshift__", "__rlshift__", "__ilshift__", Ufunc::LeftShift},
        {"__rshift__", "__rrshift__", "__irshift__", Ufunc::RightShift},
    };
    // Typed signatures (the stub shows `x + 1` as a DeviceArray); nb::sig keeps
    // a pointer, so the texts live as long as the module.
    static std::deque<std::string> sigs;
    auto sig = [](const char* name) {
        sigs.push_back(std::string("def ") + name + "(self, other: object, /) -> DeviceArray");
        return nb::sig(sigs.back().c_str());
    };
    for (const Bin& bn : bins) {
        const Ufunc op = bn.op;
        cls.def(bn.name, [op](nb::handle a, nb::handle b) { return binary(op, a, b); }, nb::is_operator(), sig(bn.name));
        cls.def(bn.rname, [op](nb::handle a, nb::handle b) { return binary(op, b, a); }, nb::is_operator(), sig(bn.rname));
        cls.def(bn.iname, [op](nb::handle a, nb::handle b) { return inplace(op, a, b); }, nb::is_operator(), sig(bn.iname));
    }
    static const std::pair<const char*, Ufunc> cmps[] = {
        {"__eq__", Ufunc::Equal}, {"__ne__", Ufunc::NotEqual}, {"__lt__", Ufunc::Less},
        {"__le__", Ufunc::LessEqual}, {"__gt__", Ufunc::Greater}, {"__ge__", Ufunc::GreaterEqual},
    };
    for (const auto& [nm, op] : cmps) {
        const Ufunc o = op;
        cls.def(nm, [o](nb::handle a, nb::handle b) { return binary(o, a, b); }, nb::is_operator(), sig(nm));
    }
    cls.def("__neg__", [](nb::handle a) { return unary(Ufunc::Negative, a); }, nb::sig("def __neg__(self) -> DeviceArray"));
    cls.def("__pos__", [](nb::handle a) { return unary(Ufunc::Positive, a); }, nb::sig("def __pos__(self) -> DeviceArray"));
    cls.def("__abs__", [](nb::handle a) { return unary(Ufunc::Absolute, a); }, nb::sig("def __abs__(self) -> DeviceArray"));
    cls.def("__invert__", [](nb::handle a) { return unary(Ufunc::Invert, a); }, nb::sig("def __invert__(self) -> DeviceArray"));
    cls.def("__matmul__", [](nb::handle a, nb::handle b) {
        if (!operator_operand(b)) return nb::borrow(Py_NotImplemented);
        return matmul(a, b, nb::none(), nb::none(), nb::none());
    }, nb::is_operator(), sig("__matmul__"));
    cls.def("__rmatmul__", [](nb::handle a, nb::handle b) {
        if (!operator_operand(b)) return nb::borrow(Py_NotImplemented);
        return matmul(b, a, nb::none(), nb::none(), nb::none());
    }, nb::is_operator(), sig("__rmatmul__"));
    cls.def("__imatmul__", [](nb::handle a, nb::handle b) {
        if (!operator_operand(b)) return nb::borrow(Py_NotImplemented);
        return matmul(a, b, a, nb::none(), nb::none());
    }, nb::is_operator(), sig("__imatmul__"));
}

}  // namespace hrx::bind
