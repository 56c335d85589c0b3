// The Loom parts of Artifact's Python interface (bind_loom.cpp), for
// bind_kernels.cpp, which binds the one Artifact class.
#pragma once
#include <nanobind/nanobind.h>

#include "runtime/programs.h"

namespace hrx::loom {
struct LaunchConfig;
}

namespace hrx::bind {
// A Python bool/int/float (or NumPy scalar) as a device scalar or workload
// value; TypeError (or ValueError beyond 64 bits) naming `what` otherwise.
ScalarArg scalar_arg(nanobind::handle h, const std::string& what);
// The loom.artifact_manifest dict (loom.md §5.3) of a Loom artifact.
nanobind::dict artifact_manifest(const Artifact& a);
// The launch program evaluated for `workload` (GPU kernels).
loom::LaunchConfig artifact_launch_config(const Artifact& a, nanobind::args workload);
// The constant block for device scalars given by name.
nanobind::bytes artifact_pack_constants(const Artifact& a, nanobind::kwargs scalars);
// The contract under those device scalars (NPU pipelines: none).
KernelContract artifact_contract_for(const Artifact& a, nanobind::kwargs scalars);
// 'gpu' or 'npu'.
nanobind::object artifact_engine(const Artifact& a);
// The native executor (bind_loom_native.cpp, Note [Native Loom executor]).
std::string artifact_executor(const Artifact& a);
std::string artifact_executor_reason(const Artifact& a);
std::string artifact_native_ir(const Artifact& a);
void artifact_attach_native(const Artifact& a, uint64_t entry);
void artifact_refuse_native(const Artifact& a, const std::string& reason);
void bind_loom_native(nanobind::module_& m);
// _core.loom's compile/load bindings and Runtime.load_gpu_kernel.
void bind_loom(nanobind::module_& m);
}  // namespace hrx::bind
