// Shared pieces of the DeviceArray bindings (bind_array.cpp: the array type,
// creation, host access, DLPack; bind_ufunc.cpp: ufuncs, reductions, matmul).
#pragma once
#include <nanobind/nanobind.h>

#include <memory>
#include <string>

#include "array/array.h"
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

// The process-wide default runtime (hrxarray.default_runtime()).
std::shared_ptr<RuntimeCore> default_runtime();
RuntimeCore& runtime_of(const Array& a);
// The runtime a placement belongs to: its NPU's for NPU placements, else `fallback`.
std::shared_ptr<RuntimeCore> placement_runtime(const Placement& p, const std::shared_ptr<RuntimeCore>& fallback);
// Placement from a Python placement object or None (-> Shared(default NPU) of rt).
Placement placement_from_py(nanobind::handle h, RuntimeCore& rt, const std::string& op);
// The placement (None: Shared of the default NPU) and the runtime it belongs to.
std::pair<std::shared_ptr<RuntimeCore>, Placement> runtime_and_placement(nanobind::handle h, const std::string& op);

// Submits a task, waiting (GIL released) while the runtime is full, and
// records the completion as a writer of every written base.
std::shared_ptr<CompletionState> submit(RuntimeCore& rt, TaskSpec& task);
// Waits (GIL released when needed) for the array's writers; raises the
// first failure (ExecutionError chained to its cause).
void wait_ready(const Array& a);

// A host NumPy array (or anything numpy.asarray takes) as a new array in
// `placement` of `rt`, converted to `dtype` (the source dtype when absent).
Array array_from_host(nanobind::handle obj, const DType* dtype, const Placement& placement, RuntimeCore& rt,
                      const std::string& op);

void bind_ufuncs(nanobind::module_& m, nanobind::class_<PyArray>& cls);

}  // namespace hrx::bind

namespace hrx::bind {
// A Python bool/int/float (or NumPy scalar) converted to `dt` as a scalar
// operand; OverflowError (NumPy 2's message) when an integer does not fit an
// integer dtype, TypeError for other objects.
Operand scalar_operand(nanobind::handle value, DType dt, const std::string& op);
// Whether `h` is a Python bool, int or float (the weakly typed scalars of NEP 50).
bool is_python_scalar(nanobind::handle h);
}  // namespace hrx::bind
