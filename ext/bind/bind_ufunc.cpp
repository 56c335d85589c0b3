// Ufunc objects (hx.add, hx.exp, ...), their argument handling (NEP 50 weak
// Python scalars, broadcasting, out=, dtype=, where=), the reduction, where
// and matmul primitives, and DeviceArray's operators. This is the per-op hot
// path: no Python code runs between `hx.add(x, y, out=z)` and the submission.
#include <deque>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <span>

#include "array_bind.h"
#include "bindings.h"
#include "errors.h"
#include "py_types.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace hrx::bind {

using kernels::Ufunc;
using kernels::UfuncInfo;
using kernels::UfuncLoop;

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

std::string type_list(const std::vector<DType>& ts) {
    std::string s;
    for (DType t : ts) s += (s.empty() ? "" : ", ") + std::string(dtype_name(t));
    return s;
}

// One element of `src_dtype` at `src` cast to `dt` into `out` (kernels' casts,
// so scalars convert exactly as arrays do).
void cast_one(const void* src, DType src_dtype, DType dt, uint8_t* out) {
    kernels::copy_cast(0, nullptr, kernels::StridedArg{const_cast<uint8_t*>(static_cast<const uint8_t*>(src)), src_dtype, nullptr},
                       kernels::StridedArg{out, dt, nullptr});
}

bool int_fits(DType dt, int64_t v, bool negative_big, bool positive_big) {
    if (negative_big || positive_big) return dt == DType::UInt64 && positive_big;
    switch (dt) {
        case DType::Int8: return v >= -128 && v <= 127;
        case DType::Int16: return v >= -32768 && v <= 32767;
        case DType::Int32: return v >= INT32_MIN && v <= INT32_MAX;
        case DType::Int64: return true;
        case DType::UInt8: return v >= 0 && v <= 255;
        case DType::UInt16: return v >= 0 && v <= 65535;
        case DType::UInt32: return v >= 0 && v <= static_cast<int64_t>(UINT32_MAX);
        case DType::UInt64: return v >= 0;
        default: return true;
    }
}

// A Python int as (int64 value, or uint64 when above int64); false if it
// fits neither.
bool py_int_value(nb::handle h, int64_t* v, uint64_t* u, bool* big) {
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
    if (overflow == 0) {
        *v = x;
        *big = false;
        return true;
    }
    if (overflow > 0) {
        unsigned long long y = PyLong_AsUnsignedLongLong(h.ptr());
        if (PyErr_Occurred()) {
            PyErr_Clear();
            return false;
        }
        *u = y;
        *big = true;
        return true;
    }
    return false;
}

[[noreturn]] void raise_overflow(const std::string& message) {
    PyErr_SetString(PyExc_OverflowError, message.c_str());
    throw nb::python_error();
}

// A Python int (exact) as an operand of `dt`: OverflowError when it does not
// fit an integer dtype (NumPy 2's message); floats round once from the exact value.
Operand int_operand(nb::handle value, DType dt, const std::string& op) {
    Operand o;
    o.scalar = true;
    o.dtype = dt;
    int64_t v = 0;
    uint64_t u = 0;
    bool big = false;
    const bool fits64 = py_int_value(value, &v, &u, &big);
    if (dtype_is_integer(dt) ? !fits64 || !int_fits(dt, v, false, big) : !fits64 && dt != DType::Bool) {
        if (dtype_is_integer(dt))
            raise_overflow(op + ": Python integer " + nb::cast<std::string>(nb::str(value)) + " out of bounds for " +
                           dtype_name(dt));
        const double d = PyLong_AsDouble(value.ptr());
        if (PyErr_Occurred()) {
            PyErr_Clear();
            raise_overflow(op + ": Python integer " + nb::cast<std::string>(nb::str(value)) +
                           " is too large to convert to " + dtype_name(dt));
        }
        cast_one(&d, DType::Float64, dt, o.value);
        return o;
    }
    if (!fits64) {
        const uint8_t nonzero = 1;  // beyond 64 bits, so not zero
        cast_one(&nonzero, DType::Bool, dt, o.value);
    } else if (big) {
        cast_one(&u, DType::UInt64, dt, o.value);
    } else {
        cast_one(&v, DType::Int64, dt, o.value);
    }
    return o;
}

// A Python float as an operand of `dt`. Into an integer dtype it goes as NumPy
// assigns a Python float to an integer array: through int(value), so NaN is a
// ValueError, infinity and out-of-range values an OverflowError.
Operand float_operand(double d, DType dt, const std::string& op) {
    if (dtype_is_integer(dt)) {
        if (std::isnan(d))
            throw nb::value_error((op + ": cannot convert float NaN to integer (" + dtype_name(dt) + ")").c_str());
        if (std::isinf(d)) raise_overflow(op + ": cannot convert float infinity to integer (" + dtype_name(dt) + ")");
        return int_operand(nb::steal(PyLong_FromDouble(d)), dt, op);
    }
    Operand o;
    o.scalar = true;
    o.dtype = dt;
    cast_one(&d, DType::Float64, dt, o.value);
    return o;
}

// A Python complex as an operand of complex dtype `dt`; NumPy refuses to
// store one in a real array (float(1j) is a TypeError), and so does this.
Operand complex_operand(nb::handle value, DType dt, const std::string& op) {
    if (!dtype_is_complex(dt))
        throw nb::type_error((op + ": cannot convert the complex number " + nb::cast<std::string>(nb::repr(value)) +
                              " to " + dtype_name(dt))
                                 .c_str());
    const Py_complex c = PyComplex_AsCComplex(value.ptr());
    if (PyErr_Occurred()) throw nb::python_error();
    const double parts[2] = {c.real, c.imag};
    Operand o;
    o.scalar = true;
    o.dtype = dt;
    cast_one(parts, DType::Complex128, dt, o.value);
    return o;
}

bool is_zero_d_host_array(nb::handle h) {
    return PyObject_HasAttrString(h.ptr(), "__array_interface__") && nb::hasattr(h, "ndim") &&
           nb::cast<int64_t>(h.attr("ndim")) == 0;
}

}  // namespace

Operand scalar_operand(nb::handle value, DType dt, const std::string& op) {
    PyObject* p = value.ptr();
    if (PyBool_Check(p)) {
        Operand o;
        o.scalar = true;
        o.dtype = dt;
        const uint8_t b = p == Py_True;
        cast_one(&b, DType::Bool, dt, o.value);
        return o;
    }
    if (PyLong_CheckExact(p)) return int_operand(value, dt, op);
    if (PyFloat_CheckExact(p)) return float_operand(PyFloat_AS_DOUBLE(p), dt, op);
    if (PyComplex_CheckExact(p)) return complex_operand(value, dt, op);
    // NumPy scalars (numpy.float64 is also a Python float) and 0-d host arrays
    // are typed: exact in their own dtype, then cast to dt as arrays are
    // (NumPy assigns them with an unsafe cast).
    if (is_numpy_scalar(value) || is_zero_d_host_array(value)) {
        const DType own = dtype_from_py(value.attr("dtype"), op);
        if (own == DType::BFP16) throw nb::type_error((op + ": a bfp16 value is not a scalar").c_str());
        Operand exact = scalar_operand(value.attr("item")(), own, op);
        Operand o;
        o.scalar = true;
        o.dtype = dt;
        cast_one(exact.value, own, dt, o.value);
        return o;
    }
    if (PyLong_Check(p)) return int_operand(value, dt, op);
    if (PyFloat_Check(p)) return float_operand(PyFloat_AsDouble(p), dt, op);
    if (PyComplex_Check(p)) return complex_operand(value, dt, op);
    throw nb::type_error((op + ": expected a number, got " + nb::cast<std::string>(nb::repr(value.type()))).c_str());
}

namespace {

// --- argument resolution --------------------------------------------------------------

enum class ArgKind : uint8_t { Array, StrongScalar, WeakBool, WeakInt, WeakFloat, WeakComplex };

struct Arg {
    ArgKind kind = ArgKind::Array;
    nb::handle obj;
    const Array* ref = nullptr;  // a DeviceArray argument's own Array (alive for the call)
    Array own;                   // host data uploaded for the call
    nb::object host;             // host data as a NumPy array, until upload()
    Dims host_shape;
    const Array& arr() const { return ref ? *ref : own; }
    bool is_host() const { return host.is_valid(); }
    // The operand's shape, also before host data is uploaded (scalars: ()).
    const Dims& shape() const {
        static const Dims none{};
        if (kind != ArgKind::Array) return none;
        return ref ? ref->shape : is_host() ? host_shape : own.shape;
    }
    DType dtype = DType::Float64;  // arrays and strong scalars; weak ones get theirs in resolve
};

// The objects an operator (x + other) takes; anything else returns
// NotImplemented so that Python tries the other operand.
bool operator_operand(nb::handle h) {
    if (is_array(h) || is_python_scalar(h) || PyList_Check(h.ptr()) || PyTuple_Check(h.ptr())) return true;
    static PyObject* ndarray = nb::module_::import_("numpy").attr("ndarray").inc_ref().ptr();
    return PyObject_IsInstance(h.ptr(), ndarray) == 1 || is_numpy_scalar(h);
}

struct Context {
    std::shared_ptr<RuntimeCore> rt;
    Placement placement;
    bool have = false;
};

void note_array(Context& cx, const Array& a, const std::string& op) {
    RuntimeCore& r = runtime_of(a);
    if (!cx.have) {
        cx.rt = r.shared_from_this();
        cx.placement = a.placement();
        cx.have = true;
    } else if (cx.rt.get() != &r) {
        fail(ErrorKind::Message, op + ": operands belong to different runtimes");
    }
}

void finish_context(Context& cx, const std::string& op) {
    if (cx.have) return;
    cx.rt = default_runtime();
    cx.placement = placement_from_py(nb::none(), *cx.rt, op);
    cx.have = true;
}

Arg classify(nb::handle h, const std::string& op) {
    Arg a;
    a.obj = h;
    if (is_array(h)) {
        a.ref = &array_of(h);
        a.dtype = a.ref->dtype;
    } else if (PyBool_Check(h.ptr())) {
        a.kind = ArgKind::WeakBool;
    } else if (PyLong_CheckExact(h.ptr()) || PyFloat_CheckExact(h.ptr())) {
        a.kind = PyFloat_CheckExact(h.ptr()) ? ArgKind::WeakFloat : ArgKind::WeakInt;
    } else if (PyComplex_CheckExact(h.ptr())) {
        a.kind = ArgKind::WeakComplex;
    } else if (is_numpy_scalar(h)) {
        // NEP 50: NumPy scalars are typed (strong), numpy.float64 included
        // although it is also a Python float.
        a.kind = ArgKind::StrongScalar;
        a.dtype = dtype_from_py(h.attr("dtype"), op);
    } else if (PyLong_Check(h.ptr())) {
        a.kind = ArgKind::WeakInt;
    } else if (PyFloat_Check(h.ptr())) {
        a.kind = ArgKind::WeakFloat;
    } else if (PyComplex_Check(h.ptr())) {
        a.kind = ArgKind::WeakComplex;
    } else {
        a.kind = ArgKind::Array;  // converted once the placement is known
    }
    return a;
}

// Host data (NumPy arrays, lists) is converted on the host first (NumPy's
// rules; no device memory yet), so that every check of the call runs before
// upload() allocates anything.
void host_convert(std::span<Arg> args, const std::string& op) {
    for (auto& a : args)
        if (a.kind == ArgKind::Array && !is_array(a.obj)) {
            a.host = host_array(a.obj, nullptr, op);
            a.dtype = dtype_from_py(a.host.attr("dtype"), op);
            a.host_shape = int_vector(a.host.attr("shape"), op, "shape");
        }
}

// Host data becomes an array in the operation's placement.
void upload(std::span<Arg> args, Context& cx, const std::string& op) {
    for (auto& a : args)
        if (a.is_host()) {
            finish_context(cx, op);
            a.own = array_from_host(a.host, nullptr, cx.placement, *cx.rt, op);
            a.ref = nullptr;
            a.host = nb::object();
        }
}

// NEP 50: Python scalars take the kind-compatible dtype of the typed operands
// (`mask` says which operands take part in promotion).
void resolve_weak(std::span<Arg> args, const bool* mask, bool comparison) {
    bool any = false;
    DType p = DType::Bool;
    for (size_t i = 0; i < args.size(); ++i) {
        if (!mask[i] || args[i].kind == ArgKind::WeakBool || args[i].kind == ArgKind::WeakInt ||
            args[i].kind == ArgKind::WeakFloat || args[i].kind == ArgKind::WeakComplex)
            continue;
        if (args[i].dtype == DType::BFP16) continue;
        p = any ? promote_types(p, args[i].dtype) : args[i].dtype;
        any = true;
    }
    for (size_t i = 0; i < args.size(); ++i) {
        Arg& a = args[i];
        switch (a.kind) {
            case ArgKind::WeakBool: a.dtype = DType::Bool; break;
            case ArgKind::WeakInt: {
                a.dtype = any && p != DType::Bool ? p : DType::Int64;
                if (dtype_is_integer(a.dtype)) {
                    int64_t v = 0;
                    uint64_t u = 0;
                    bool big = false;
                    const bool ok = py_int_value(a.obj, &v, &u, &big);
                    if (!ok || !int_fits(a.dtype, v, false, big)) {
                        // Comparisons with out-of-range integers are exact in NumPy 2:
                        // compare in a dtype that holds the value.
                        if (comparison) a.dtype = !ok ? DType::Float64 : big ? DType::UInt64 : DType::Int64;
                    }
                }
                break;
            }
            case ArgKind::WeakFloat:
                a.dtype = any && (dtype_is_float(p) || dtype_is_complex(p)) ? p : DType::Float64;
                break;
            case ArgKind::WeakComplex:
                // NEP 50: the complex dtype of the typed operands' float kind
                // (float16, bfloat16, float32: complex64), complex128 otherwise.
                a.dtype = !any || !(dtype_is_float(p) || dtype_is_complex(p)) ? DType::Complex128
                                                                            : promote_types(p, DType::Complex64);
                break;
            default: break;
        }
    }
}

// An array operand of a compute-lane task, checked before the task's result
// is allocated.
void preflight_read(const Array& a, const std::string& op) {
    check_lane_binding(a, Lane::Compute, op);
    check_device_use(a, Access::Read, op);
}

Operand to_operand(Arg&& a, const std::string& op) {
    if (a.kind == ArgKind::Array) {
        if (a.ref) return Operand::borrow(*a.ref);
        return Operand::of(std::move(a.own));
    }
    return scalar_operand(a.obj, a.dtype, op);
}

bool is_comparison(Ufunc op) {
    return op == Ufunc::Equal || op == Ufunc::NotEqual || op == Ufunc::Less || op == Ufunc::LessEqual ||
           op == Ufunc::Greater || op == Ufunc::GreaterEqual;
}

std::string np_dtype_str(DType t) { return std::string("dtype('") + dtype_name(t) + "')"; }

const UfuncLoop* loop_for_dtype(Ufunc op, const std::vector<DType>& ins, DType want, const std::string& name) {
    const UfuncLoop* natural = kernels::resolve_loop(op, ins.data());
    if (natural && natural->out == want) return natural;
    const UfuncInfo& info = kernels::ufunc_info(op);
    for (int i = 0; i < info.nloops; ++i) {
        const UfuncLoop& l = info.loops[i];
        if (l.in[0] != want) continue;
        bool ok = true;
        for (int k = 0; k < info.nin; ++k) ok = ok && can_cast(ins[static_cast<size_t>(k)], l.in[k], Casting::SameKind);
        if (ok) return &l;
    }
    throw nb::type_error(("No loop matching the specified signature and casting was found for ufunc " + name +
                          " (inputs " + type_list(ins) + ", dtype=" + dtype_name(want) + ")")
                             .c_str());
}

struct CallArgs {
    nb::handle inputs[3];
    size_t nin = 0;
    nb::handle out;
    nb::handle dtype;
    nb::handle where;
};

nb::object ufunc_apply(Ufunc op, const CallArgs& c) {
    const UfuncInfo& info = kernels::ufunc_info(op);
    const std::string name = info.name;
    // Fixed-size storage: this is the per-operation path (no heap here).
    Arg args[3];
    const size_t n = c.nin;
    Context cx;
    nb::handle out_obj = c.out;
    if (!out_obj.is_none() && PyTuple_Check(out_obj.ptr())) {
        if (PyTuple_Size(out_obj.ptr()) != 1)
            throw nb::value_error((name + ": out must be a DeviceArray or a tuple of one").c_str());
        out_obj = PyTuple_GET_ITEM(out_obj.ptr(), 0);
    }
    const bool has_out = !out_obj.is_none();
    if (has_out) {
        if (!is_array(out_obj))
            throw nb::type_error((name + ": out must be a DeviceArray, got " +
                                  nb::cast<std::string>(nb::repr(out_obj.type())))
                                     .c_str());
        note_array(cx, array_of(out_obj), name);
    }
    for (size_t i = 0; i < n; ++i) {
        args[i] = classify(c.inputs[i], name);
        if (args[i].kind == ArgKind::Array && is_array(c.inputs[i])) note_array(cx, args[i].arr(), name);
    }
    host_convert(std::span<Arg>(args, n), name);
    // where= (default True: everywhere)
    bool where_all = true, where_none = false;
    Arg where_arg;
    if (c.where.is_valid() && !c.where.is_none() && !(c.where.ptr() == Py_True)) {
        if (c.where.ptr() == Py_False) {
            where_none = true;
        } else {
            where_all = false;
            where_arg = classify(c.where, name);
            if (is_array(c.where)) note_array(cx, where_arg.arr(), name);
            host_convert(std::span<Arg>(&where_arg, 1), name);
            if (where_arg.kind != ArgKind::Array || where_arg.dtype != DType::Bool)
                throw nb::type_error((name + ": where must be a boolean array (got " +
                                      (where_arg.kind == ArgKind::Array ? std::string(dtype_name(where_arg.dtype))
                                                                        : std::string("a scalar")) +
                                      ")")
                                         .c_str());
        }
    }
    finish_context(cx, name);
    bool mask[3] = {true, true, true};
    if (op == Ufunc::Where) mask[0] = false;
    resolve_weak(std::span<Arg>(args, n), mask, is_comparison(op));
    DType ins[3] = {};
    for (size_t i = 0; i < n; ++i) {
        if (args[i].dtype == DType::BFP16)
            throw nb::type_error((name + ": bfp16 arrays are a block storage format without elementwise "
                                         "arithmetic; convert with x.astype(hx.float32) first")
                                     .c_str());
        ins[i] = args[i].dtype;
    }
    if (op == Ufunc::Where) ins[0] = DType::Bool;
    const UfuncLoop* loop;
    if (!c.dtype.is_valid() || c.dtype.is_none()) {
        loop = kernels::resolve_loop(op, ins);
        if (!loop)
            throw nb::type_error(("ufunc '" + name + "' not supported for the input types (" +
                                  type_list(std::vector<DType>(ins, ins + n)) +
                                  "), and the inputs could not be safely coerced to any supported types")
                                     .c_str());
    } else {
        loop = loop_for_dtype(op, std::vector<DType>(ins, ins + n), dtype_from_py(c.dtype, name), name);
    }
    const Dims* shapes[4];
    size_t nshapes = 0;
    bool any_host = where_arg.is_host();
    for (size_t i = 0; i < n; ++i) {
        shapes[nshapes++] = &args[i].shape();
        any_host = any_host || args[i].is_host();
    }
    const bool has_where = !where_all && !where_none;
    if (has_where) shapes[nshapes++] = &where_arg.shape();
    Dims shape = broadcast_shapes(std::span<const Dims* const>(shapes, nshapes), name);
    Array out;
    if (has_out) {
        out = array_of(out_obj);
        if (out.shape != shape)
            fail(ErrorKind::Message, "non-broadcastable output operand with shape " + shape_str(out.shape) +
                                         " doesn't match the broadcast shape " + shape_str(shape) + " (" + name + ")");
        if (!can_cast(loop->out, out.dtype, Casting::SameKind))
            throw nb::type_error(("Cannot cast ufunc '" + name + "' output from " + np_dtype_str(loop->out) + " to " +
                                  np_dtype_str(out.dtype) + " with casting rule 'same_kind'")
                                     .c_str());
    }
    Operand operands[3];
    for (size_t i = 0; i < n; ++i)
        if (args[i].kind != ArgKind::Array) operands[i] = to_operand(std::move(args[i]), name);
    if (!has_out || any_host) {
        // Everything the submission would refuse, before anything is
        // allocated (a failed call changes nothing).
        for (size_t i = 0; i < n; ++i)
            if (args[i].ref) preflight_read(*args[i].ref, name);
        if (where_arg.ref) preflight_read(*where_arg.ref, name);
        if (has_out) {
            check_writable(out, name);
            check_lane_binding(out, Lane::Compute, name);
            check_device_use(out, Access::Write, name);
        } else {
            check_lane_placement(cx.placement, "the result's placement " + cx.placement.repr(), Lane::Compute, name);
        }
    }
    upload(std::span<Arg>(args, n), cx, name);
    upload(std::span<Arg>(&where_arg, 1), cx, name);
    for (size_t i = 0; i < n; ++i)
        if (args[i].kind == ArgKind::Array) operands[i] = to_operand(std::move(args[i]), name);
    Operand where_op;
    if (has_where) where_op = where_arg.ref ? Operand::borrow(*where_arg.ref) : Operand::of(where_arg.own);
    nb::object result;
    if (has_out) {
        result = nb::borrow(out_obj);
    } else {
        out = make_array(*cx.rt, cx.placement, shape, loop->out, name);
        result = wrap(out);
    }
    if (where_none) return result;
    TaskSpec t = ufunc_task(op, *loop, std::span<const Operand>(operands, n), out, where_all ? nullptr : &where_op,
                            name);
    submit(*cx.rt, t);
    return result;
}

struct PyUfunc {
    Ufunc op;
};

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

// --- reductions -------------------------------------------------------------------

Array keepdims_view(const Array& a, const std::vector<bool>& reduced) {
    // out without keepdims -> a view with the reduced axes reinserted (extent 1, stride 0)
    Array v = a;
    v.shape.clear();
    v.strides.clear();
    size_t j = 0;
    for (size_t i = 0; i < reduced.size(); ++i) {
        if (reduced[i]) {
            v.shape.push_back(1);
            v.strides.push_back(0);
        } else {
            v.shape.push_back(a.shape[j]);
            v.strides.push_back(a.strides[j]);
            ++j;
        }
    }
    return v;
}

Array drop_reduced(const Array& a, const std::vector<bool>& reduced) {
    Array v = a;
    v.shape.clear();
    v.strides.clear();
    for (size_t i = 0; i < reduced.size(); ++i)
        if (!reduced[i]) {
            v.shape.push_back(a.shape[i]);
            v.strides.push_back(a.strides[i]);
        }
    return v;
}

// The reduced dimensions of an axis= argument (None: all of them).
std::vector<bool> reduced_axes(nb::handle axes, int ndim, const std::string& op) {
    if (axes.is_none()) return std::vector<bool>(static_cast<size_t>(ndim), true);
    return axes_mask(axes_from_py(axes, ndim, op), ndim, op);
}

// The input of a reduction: a DeviceArray, or host data converted on the host
// now and uploaded (to the default placement) by array() once every check
// of the call has passed.
struct ReductionInput {
    nb::object host;
    Array device;
    Dims shape;
    DType dtype = DType::Float64;

    ReductionInput(nb::handle x, const std::string& op) {
        if (is_array(x)) {
            device = array_of(x);
            shape = device.shape;
            dtype = device.dtype;
        } else {
            host = host_array(x, nullptr, op);
            shape = int_vector(host.attr("shape"), op, "shape");
            dtype = dtype_from_py(host.attr("dtype"), op);
        }
        if (dtype == DType::BFP16)
            throw nb::type_error((op + ": bfp16 arrays have no arithmetic; convert with astype(hx.float32)").c_str());
    }
    int ndim() const { return static_cast<int>(shape.size()); }
    // The array to reduce; a device array's refusals are checked first, so
    // that the caller may then allocate the result.
    Array array(const std::string& op) {
        if (host.is_valid()) {
            auto rt = default_runtime();
            return array_from_host(host, nullptr, placement_from_py(nb::none(), *rt, op), *rt, op);
        }
        check_lane_binding(device, Lane::Compute, op);
        check_device_use(device, Access::Read, op);
        return device;
    }
};

// Complex numbers have no order: maximum/minimum (max, min) and the bitwise
// reductions have no complex loop, so they are refused before anything runs.
void refuse_unordered(Ufunc u, const std::string& op, DType t = DType::Complex128) {
    const bool ok = u == Ufunc::Add || u == Ufunc::Multiply || u == Ufunc::LogicalAnd || u == Ufunc::LogicalOr ||
                    u == Ufunc::LogicalXor;
    if (!ok)
        throw nb::type_error((op + ": not defined for complex dtypes (" + dtype_name(t) +
                              "): complex numbers are not ordered")
                                 .c_str());
}

nb::object reduce(const PyUfunc& u, nb::handle x, nb::handle axes, nb::handle acc_dtype, nb::handle out_dtype,
                  nb::handle out_obj, bool keepdims, double divisor, nb::handle name) {
    const UfuncInfo& info = kernels::ufunc_info(u.op);
    const std::string op = name.is_none() ? std::string(info.name) + ".reduce" : nb::cast<std::string>(name);
    if (!info.has_reduce)
        fail(ErrorKind::Message, op + ": reduce only supported for binary functions with a reduction");
    ReductionInput input(x, op);
    const std::vector<bool> mask = reduced_axes(axes, input.ndim(), op);
    const DType acc = dtype_from_py(acc_dtype, op);
    const DType odt = dtype_from_py(out_dtype, op);
    if (dtype_is_complex(acc) || dtype_is_complex(input.dtype))
        refuse_unordered(u.op, op, dtype_is_complex(input.dtype) ? input.dtype : acc);
    Dims kshape = input.shape;
    bool empty_reduction = false;
    int64_t size = 1;
    for (size_t i = 0; i < mask.size(); ++i) {
        size *= input.shape[i];
        if (mask[i]) {
            empty_reduction = empty_reduction || input.shape[i] == 0;
            kshape[i] = 1;
        }
    }
    if (empty_reduction && info.identity == kernels::Identity::None && size == 0)
        fail(ErrorKind::Message, op + ": zero-size array to reduction operation " + info.name +
                                     " which has no identity");
    Array kout;
    nb::object result;
    if (!out_obj.is_none()) {
        if (!is_array(out_obj))
            throw nb::type_error(
                (op + ": out must be a DeviceArray, got " + nb::cast<std::string>(nb::repr(out_obj.type()))).c_str());
        Array o = array_of(out_obj);
        Dims want = keepdims ? kshape : drop_reduced(Array{nullptr, 0, kshape, kshape, odt}, mask).shape;
        if (o.shape != want)
            fail(ErrorKind::Message, op + ": output parameter has shape " + shape_str(o.shape) + ", expected " +
                                         shape_str(want));
        if (!can_cast(odt, o.dtype, Casting::SameKind))
            throw nb::type_error((op + ": cannot cast the result from " + dtype_name(odt) + " to " + dtype_name(o.dtype) +
                                  " with casting rule 'same_kind'")
                                     .c_str());
        check_writable(o, op);
        check_device_use(o, Access::Write, op);
        kout = keepdims ? o : keepdims_view(o, mask);
        result = nb::borrow(out_obj);
    }
    const Array in = input.array(op);
    RuntimeCore& rt = runtime_of(in);
    if (out_obj.is_none()) {
        kout = make_array(rt, in.placement(), kshape, odt, op);
        result = wrap(keepdims ? kout : drop_reduced(kout, mask));
    }
    TaskSpec t = reduce_task(u.op, acc, in, mask, kout, divisor, op);
    submit(rt, t);
    return result;
}

nb::object arg_reduce(nb::handle x, nb::handle axis, bool max, bool keepdims, nb::handle name) {
    const std::string op = name.is_none() ? std::string(max ? "argmax" : "argmin") : nb::cast<std::string>(name);
    ReductionInput input(x, op);
    if (dtype_is_complex(input.dtype)) refuse_unordered(Ufunc::Maximum, op, input.dtype);
    int ax = -1;
    std::vector<bool> mask(static_cast<size_t>(input.ndim()), true);
    if (!axis.is_none()) {
        mask = reduced_axes(nb::make_tuple(axis), input.ndim(), op);
        for (size_t i = 0; i < mask.size(); ++i)
            if (mask[i]) ax = static_cast<int>(i);
    }
    for (int64_t d : input.shape)
        if (d == 0) fail(ErrorKind::Message, op + ": attempt to get " + op + " of an empty sequence");
    Dims kshape = input.shape;
    for (size_t i = 0; i < mask.size(); ++i)
        if (mask[i]) kshape[i] = 1;
    const Array in = input.array(op);
    RuntimeCore& rt = runtime_of(in);
    Array kout = make_array(rt, in.placement(), kshape, DType::Int64, op);
    TaskSpec t = arg_reduce_task(max, in, ax, kout, op);
    submit(rt, t);
    return wrap(keepdims ? kout : drop_reduced(kout, mask));
}

// --- matmul ----------------------------------------------------------------------

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
    if (is_python_scalar(a_obj) || is_python_scalar(b_obj) || is_numpy_scalar(a_obj) || is_numpy_scalar(b_obj))
        fail(ErrorKind::Message, "matmul: Input operand does not have enough dimensions (scalars cannot be matrix-multiplied; use multiply)");
    Context cx;
    Arg args[2] = {classify(a_obj, op), classify(b_obj, op)};
    for (auto& a : args)
        if (is_array(a.obj)) note_array(cx, a.arr(), op);
    if (!out_obj.is_none()) {
        if (!is_array(out_obj))
            throw nb::type_error(
                ("matmul: out must be a DeviceArray, got " + nb::cast<std::string>(nb::repr(out_obj.type()))).c_str());
        note_array(cx, array_of(out_obj), op);
    }
    host_convert(std::span<Arg>(args, 2), op);
    finish_context(cx, op);
    const DType ta = args[0].dtype, tb = args[1].dtype;
    // Shapes before host data is uploaded: every refusal comes first.
    Dims sa = args[0].shape(), sb = args[1].shape();
    const std::string shapes = " (shapes " + shape_str(sa) + " and " + shape_str(sb) + ")";
    if (sa.empty() || sb.empty())
        fail(ErrorKind::Message, "matmul: Input operand does not have enough dimensions" + shapes);
    const std::string mode_s = matmul_option(compute, "compute", "", "None, 'bf16' or 'bfp16'");
    if (!mode_s.empty() && mode_s != "bf16" && mode_s != "bfp16")
        fail(ErrorKind::Message, "matmul: compute must be None, 'bf16' or 'bfp16', got '" + mode_s + "'");
    const std::string round_s = matmul_option(rounding, "rounding", "floor", "'floor' or 'even'");
    if (round_s != "floor" && round_s != "even")
        fail(ErrorKind::Message, "matmul: rounding must be 'floor' or 'even', got '" + round_s + "'");
    // 1-d operands: NumPy's promotion to a row / column, removed afterwards.
    const bool a1 = sa.size() == 1, b1 = sb.size() == 1;
    if (a1) sa.insert(sa.begin(), 1);
    if (b1) {
        sb.push_back(1);
        if (tb == DType::BFP16)
            fail(ErrorKind::Message, "matmul: a 1-d bfp16 right operand cannot be a column (its blocks run along it)");
    }
    const int64_t m = sa[sa.size() - 2], k = sa[sa.size() - 1];
    const int64_t k2 = sb[sb.size() - 2], n = sb[sb.size() - 1];
    if (k != k2)
        fail(ErrorKind::Message, "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
                                 "signature (n?,k),(k,m?)->(n?,m?) (size " + std::to_string(k2) +
                                     " is different from " + std::to_string(k) + ")" + shapes);
    Dims ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
    const Dims* batch_shapes[2] = {&ba, &bb};
    Dims batch = broadcast_shapes(batch_shapes, "matmul: the batch dimensions" + shapes);
    Dims shape = batch;
    shape.push_back(m);
    shape.push_back(n);
    const bool bfp_in = ta == DType::BFP16 || tb == DType::BFP16;
    auto npu_type = [](DType t) { return t == DType::BFloat16 || t == DType::BFP16; };
    MatmulMode mode = MatmulMode::Natural;
    if (mode_s == "bfp16" || bfp_in)
        mode = MatmulMode::Bfp16;
    else if (mode_s == "bf16")
        mode = MatmulMode::Bf16;
    DType rdt;
    if (mode == MatmulMode::Natural) {
        rdt = promote_types(ta, tb);
        if (rdt == DType::BFloat16) {
            mode = MatmulMode::Bf16;
            rdt = DType::Float32;
        }
    } else {
        rdt = DType::Float32;
    }
    if (mode == MatmulMode::Bfp16 && k % 8 != 0)
        fail(ErrorKind::Message, "matmul(compute='bfp16'): K = " + std::to_string(k) +
                                     " is not a multiple of 8 (bfp16 blocks run along K)" + shapes);
    // Host data goes to the operation's placement (cx.placement).
    const Placement& pa = args[0].ref ? args[0].ref->placement() : cx.placement;
    const Placement& pb = args[1].ref ? args[1].ref->placement() : cx.placement;
    const bool on_npu = pa.npu_bindable() && pb.npu_bindable() && npu_type(ta) && npu_type(tb);
    const Lane lane = on_npu ? Lane::Npu : Lane::Compute;
    Dims rshape = shape;  // the user-visible result shape
    if (a1) rshape.erase(rshape.end() - 2);
    if (b1) rshape.erase(rshape.end() - 1);
    RuntimeCore& rt = *cx.rt;
    Placement place = cx.placement;
    if (on_npu && !place.npu_bindable()) place = pa;
    if (!on_npu && !place.gpu_bindable()) place = pa;
    Array user;
    if (!out_obj.is_none()) {
        user = array_of(out_obj);
        if (user.shape != rshape)
            fail(ErrorKind::Message, "matmul: output operand has shape " + shape_str(user.shape) + ", expected " +
                                         shape_str(rshape) + shapes);
        if (!can_cast(rdt, user.dtype, Casting::SameKind))
            throw nb::type_error(("Cannot cast ufunc 'matmul' output from " + np_dtype_str(rdt) + " to " +
                                  np_dtype_str(user.dtype) + " with casting rule 'same_kind'")
                                     .c_str());
        place = user.placement();
        check_writable(user, op);
        check_device_use(user, Access::Write, op);
    }
    // Everything the submissions would refuse, before anything is allocated.
    for (const Arg& x : args)
        if (x.ref) {
            check_lane_binding(*x.ref, lane, op);
            check_device_use(*x.ref, Access::Read, op);
        }
    check_lane_placement(place, "the result's placement " + place.repr(), lane, op);
    upload(std::span<Arg>(args, 2), cx, op);
    Array a = args[0].arr(), b = args[1].arr();
    if (a1) {
        a.shape.insert(a.shape.begin(), 1);
        a.strides.insert(a.strides.begin(), 0);
    }
    if (b1) {
        b.shape.push_back(1);
        b.strides.push_back(dtype_itemsize(b.dtype));
    }
    nb::object result;
    Array target;  // what the task writes (C-contiguous, dtype rdt, full 2-d shape)
    if (!out_obj.is_none()) {
        result = nb::borrow(out_obj);
        const bool direct = user.dtype == rdt && user.c_contiguous() && !may_overlap(user, a) && !may_overlap(user, b);
        if (direct) {
            target = user;
            target.shape = shape;
            target.strides = contiguous_strides(shape, rdt);
        } else {
            target = make_array(rt, user.placement(), shape, rdt, op);
        }
    } else {
        target = make_array(rt, place, shape, rdt, op);
        Array v = target;
        v.shape = rshape;
        v.strides = contiguous_strides(rshape, rdt);
        result = wrap(v);
    }
    TaskSpec t = matmul_task(a, b, target, lane, mode, round_s == "even", op);
    submit(rt, t);
    if (!out_obj.is_none() && target.base != user.base) {
        Array src = target;
        src.shape = rshape;
        src.strides = contiguous_strides(rshape, rdt);
        TaskSpec c = copy_task(user, Operand::of(src), op);
        submit(rt, c);
    }
    return result;
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

}  // namespace

void bind_ufuncs(nb::module_& m, nb::class_<PyArray>& cls) {
    nb::class_<PyUfunc>(m, "ufunc", nb::dynamic_attr(),
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
    for (int i = 0; i < kernels::kUfuncCount; ++i) {
        const Ufunc op = static_cast<Ufunc>(i);
        nb::object u = nb::cast(PyUfunc{op});
        // An instance attribute: __name__ on the type is the type's own name.
        u.attr("__name__") = kernels::ufunc_info(op).name;
        ufuncs[kernels::ufunc_info(op).name] = u;
    }
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
