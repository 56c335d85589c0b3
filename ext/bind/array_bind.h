// Shared pieces of the DeviceArray bindings (bind_array.cpp: the array type,
// creation, host access, DLPack; bind_ufunc.cpp: ufuncs, reductions, matmul).
#pragma once
#include <nanobind/nanobind.h>

#include <memory>
#include <string>
#include <vector>

#include "array/array.h"
#include "array/creation.h"
#include "array/operands.h"
#include "array/ops.h"
#include "runtime/runtime.h"

namespace hrx::bind {

// The Python DeviceArray: one Array (a view on a shared ArrayBase).
struct PyArray {
    Array a;
};

nanobind::object wrap(Array a);
bool is_array(nanobind::handle h);
const Array& array_of(nanobind::handle h);

// The dtype object Python sees for `t`: a numpy.dtype (bfloat16 is
// ml_dtypes'), or hrxarray.bfp16.
nanobind::object dtype_object(DType t);
// Any dtype spelling NumPy accepts (plus "bfloat16", "bfp16", hx.bfp16);
// TypeError naming `op` for dtypes hrxarray does not support.
DType dtype_from_py(nanobind::handle h, const std::string& op);

// A Python integer (anything with __index__) as int64: 1 when it fits, 0 when
// it does not, -1 when `h` is not an integer (no Python error left set).
int int64_index(nanobind::handle h, int64_t* out);
// As int64_index, false when it does not fit (the caller reports the argument
// by name); TypeError naming `op` and `what` for anything that is not an
// integer. `op` is anything that converts to std::string, and is converted
// only for that message: hot paths pass a lazy description (__dlpack__ did
// format its array's description on every export, doubling its cost).
template <class Op>
bool int64_of(nanobind::handle h, int64_t* out, const Op& op, const char* what) {
    const int r = int64_index(h, out);
    if (r < 0)
        throw nanobind::type_error((std::string(op) + ": " + what + " must be an integer, got " +
                                    nanobind::cast<std::string>(nanobind::repr(h)))
                                       .c_str());
    return r > 0;
}
// A shape or strides argument (an integer or a sequence of them) as int64s;
// TypeError for non-integers, ValueError naming `op` and `what` for entries
// beyond int64.
std::vector<int64_t> int_vector(nanobind::handle h, const std::string& op, const char* what);
// The axes of an `axis=` argument (an integer or a tuple/list of them) as
// int64, not yet normalised; an integer beyond int64 is an AxisError (Note [Axes]).
std::vector<int64_t> axes_from_py(nanobind::handle axis, int ndim, const std::string& op);

// The process-wide default runtime (Note [The default runtime] in
// bind_runtime.cpp; hrxarray.default_runtime() returns its Python object).
std::shared_ptr<RuntimeCore> default_runtime();
nanobind::object default_runtime_object();
// Placement from a Python placement object or None (-> creation::default_placement(rt)).
Placement placement_from_py(nanobind::handle h, RuntimeCore& rt, const std::string& op);
// The runtime and placement of a new array (creation::home) from a placement
// argument (None or a placement; TypeError naming `op` otherwise) and an
// optional `like` array; the default runtime when there is no `like`.
creation::Home new_array_home(nanobind::handle placement, const Array* like, const std::string& op);
// The DeviceArray argument `what` of `op`; TypeError naming its type otherwise.
const Array& device_array(nanobind::handle x, const std::string& op, const char* what);
// device_array for an array that a compute-lane task reads or writes element
// by element, after check_element_operand's refusals.
const Array& element_operand(nanobind::handle x, Access access, const std::string& op, const char* what);

// Host data as a NumPy array of booleans, integers or floats: a NumPy array
// as it is, anything else through numpy.asarray, with `dtype` when given (so
// Python integers convert exactly or raise NumPy's OverflowError). NumPy's
// refusals and TypeError for other dtypes name `op`.
nanobind::object host_array(nanobind::handle obj, const DType* dtype, const std::string& op);
// The memory of a NumPy array (which the caller keeps alive while the block is used).
host_transfer::HostBlock host_block(nanobind::handle arr, const std::string& op);

void bind_ufuncs(nanobind::module_& m, nanobind::class_<PyArray>& cls);
// _core.loom.LoomUfunc, the hx.ufunc subclass whose loop is a Loom GPU
// kernel (bind_ufunc.cpp; bind_loom calls it with the _core.loom module).
void bind_loom_ufunc(nanobind::module_& lm);

}  // namespace hrx::bind

namespace hrx::bind {
// The one scalar conversion: a Python bool/int/float (or a NumPy scalar or
// 0-d host array) converted to `dt` as a scalar operand, as NumPy assigns it
// to an array of `dt`: Python ints exactly or OverflowError (NumPy 2's
// message), Python floats into integer dtypes through int() (ValueError for
// NaN, OverflowError for infinity and out-of-range values), NumPy scalars by
// a cast from their own dtype. TypeError for other objects; messages name `op`.
Operand scalar_operand(nanobind::handle value, DType dt, const std::string& op);
// Whether `h` is a Python bool, int or float (the weakly typed scalars of
// NEP 50), not a NumPy scalar (numpy.float64 is a float subclass).
bool is_python_scalar(nanobind::handle h);
// Whether `h` is a NumPy scalar (numpy.generic).
bool is_numpy_scalar(nanobind::handle h);
}  // namespace hrx::bind
