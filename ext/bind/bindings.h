// Declarations of the per-concept binding functions; module.cpp calls them in
// dependency order (errors first, so every later binding can raise them).
#pragma once
#include <nanobind/nanobind.h>

#include "errors.h"

namespace hrx {
class RuntimeCore;
}
namespace hrx::loom {
class CompileError;
}

namespace hrx::bind {
void bind_errors(nanobind::module_& m);
void bind_system(nanobind::module_& m);
void bind_runtime(nanobind::module_& m);
void bind_kernels(nanobind::module_& m);
void bind_memory(nanobind::module_& m);
void bind_graph(nanobind::module_& m, nanobind::class_<RuntimeCore>& runtime);
void bind_resident(nanobind::module_& m);
// Called by the exception translator (GIL held) when a submission of the
// calling thread was refused at interpreter exit (Note [Refused threads report
// before exit] in bind_runtime.cpp).
void note_refused_thread();
// The Python exception class for an error kind (borrowed reference).
PyObject* exception_type(ErrorKind kind);
void bind_numerics(nanobind::module_& m);
// DLPack export/import primitives; called at the end of bind_runtime.
void bind_dlpack(nanobind::module_& m);
// DeviceArray, ufuncs and array primitives (bind_array.cpp, bind_ufunc.cpp).
void bind_array(nanobind::module_& m);
// Sorting, searching, set and cumulative primitives (bind_sorting.cpp).
void bind_sorting(nanobind::module_& m);
// Counting, binning, medians and correlations (bind_stats.cpp).
void bind_stats(nanobind::module_& m);
// Advanced indexing and isin primitives (bind_indexing.cpp).
void bind_indexing(nanobind::module_& m);
// _core._elementwise: the elementwise/cast/reduction kernels, for tests.
void bind_elementwise(nanobind::module_& m);
// _core._random_*: hx.random's generator primitives (bind_random.cpp).
void bind_random(nanobind::module_& m);
// _core._gather / _triangle: manipulation and creation primitives (bind_manipulation.cpp).
void bind_manipulation(nanobind::module_& m);
// _core._linalg / _fft_region: hx.linalg's and hx.fft's primitives (bind_linalg.cpp).
void bind_linalg(nanobind::module_& m);
// _core.loom: Loom parse/verify/specialise and LoomError (bind_loom_frontend.cpp).
void bind_loom_frontend(nanobind::module_& m);
// Sets the pending Python exception to a LoomError carrying `e`'s
// diagnostics, for bindings that catch a CompileError themselves (throwing it
// through nanobind is translated the same way).
void set_loom_error(const loom::CompileError& e);
// _core.loom._run_program / _plan_info: the Loom executor, for tests.
void bind_loom_exec(nanobind::module_& m);
// The Python builders of awaitables, host views and traces (builders.cpp, Note [Python builders]).
enum class Builder { AwaitCompletion = 0, HostView = 1, Trace = 2 };
nanobind::handle python_builder(Builder b);
void bind_builders(nanobind::module_& m);
}  // namespace hrx::bind
