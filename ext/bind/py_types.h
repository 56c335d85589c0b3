// Binding-side value types shared by several bind_*.cpp files.
#pragma once
#include <nanobind/nanobind.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "memory/placement.h"
#include "memory/visibility.h"
#include "runtime/kernel.h"
#include "runtime/runtime.h"

namespace hrx::bind {

// Python placement objects: one base class and four value subclasses.
struct PyPlacement {
    Placement value;
};
struct PyGpuLocal : PyPlacement {};
struct PyHostVisible : PyPlacement {};
struct PyNpuLocal : PyPlacement {};
struct PyShared : PyPlacement {};

// The Python object (of the right subclass) for a placement.
nanobind::object placement_to_py(const Placement& p);

// "host", a GpuDevice or an NpuDevice of `runtime`; TypeError/ValueError otherwise.
Site site_from_py(nanobind::handle h, const RuntimeCore* runtime, const std::string& op);

// A byte count from any Python integer (anything with __index__): TypeError
// for non-integers, ValueError naming `op` when it is outside 1..=isize::MAX.
uint64_t byte_count(nanobind::handle h, const std::string& op);

// A Buffer (whole) or BufferView as a view; TypeError naming `op` otherwise.
BufferView view_from_py(nanobind::handle h, const std::string& op);
// Every element of an iterable through view_from_py.
std::vector<BufferView> views_from_py(nanobind::handle views, const std::string& op);

// A wait's timeout argument (Note [Timeouts] in runtime/deadline.h): NaN →
// ValueError naming `op`; anything else is passed on.
std::optional<double> timeout_arg(std::optional<double> timeout, const char* op);

// The exception (ExecutionError chained to its cause, or CancelledError) a
// finished completion reports; None for success or while pending.
nanobind::object outcome_exception(const CompletionState::Outcome& o);

// The Kernel behind a Python GpuKernel or NpuKernel; TypeError otherwise.
std::shared_ptr<Kernel> kernel_from_py(nanobind::handle h, const char* op);

}  // namespace hrx::bind
