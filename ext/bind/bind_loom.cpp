// The Loom compile and load API (_core.loom: _compile, LaunchConfig,
// _run_kernel; Artifact's Loom properties; Runtime.load_gpu_kernel). The
// frontend's bindings (parse, Module, Diagnostic, LoomError) live in
// bind_loom_frontend.cpp; loom::CompileError reaches Python through the
// translator registered there.
#include <nanobind/stl/array.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <mutex>
#include <unordered_map>

#include "array/kernel_call.h"
#include "array_bind.h"
#include "bindings.h"
#include "errors.h"
#include "gil.h"
#include "loom/frontend.h"
#include "loom_bind.h"
#include "loom/plan.h"
#include "runtime/programs.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace hrx::bind {
namespace {

std::string repr_of(nb::handle h) { return nb::cast<std::string>(nb::repr(h)); }

}  // namespace

ScalarArg scalar_arg(nb::handle h, const std::string& what) {
    ScalarArg a;
    PyObject* p = h.ptr();
    if (PyFloat_Check(p) || (!PyLong_Check(p) && !PyIndex_Check(p) && PyObject_HasAttrString(p, "__float__") &&
                             is_numpy_scalar(h))) {
        a.is_float = true;
        a.f = PyFloat_AsDouble(p);
        if (PyErr_Occurred()) throw nb::python_error();
        return a;
    }
    const int r = PyIndex_Check(p) ? int64_index(h, &a.i) : -1;
    if (r < 0) throw nb::type_error((what + " must be an int or a float, got " + repr_of(h)).c_str());
    if (r > 0) return a;
    // Beyond int64: an unsigned 64-bit value still fits a device scalar.
    nb::object index = nb::steal(PyNumber_Index(p));
    const unsigned long long u = index ? PyLong_AsUnsignedLongLong(index.ptr()) : 0;
    if (index && !PyErr_Occurred()) {
        a.is_unsigned = true;
        a.u = u;
        return a;
    }
    PyErr_Clear();
    fail(ErrorKind::Message, what + " = " + repr_of(h) + " does not fit 64 bits");
}

namespace {

std::map<std::string, ScalarArg> scalar_map(const nb::kwargs& kwargs, const std::string& who) {
    std::map<std::string, ScalarArg> out;
    for (auto [k, v] : kwargs) {
        const std::string name = nb::cast<std::string>(k);
        out[name] = scalar_arg(v, who + ": device scalar '" + name + "'");
    }
    return out;
}

std::array<int64_t, 3> dims3(nb::handle h, const std::string& op, const char* what) {
    std::array<int64_t, 3> out{1, 1, 1};
    int64_t v = 0;
    if (PyIndex_Check(h.ptr())) {
        if (!int64_of(h, &v, op, what)) fail(ErrorKind::Message, op + ": " + what + " = " + repr_of(h) + " is out of range");
        out[0] = v;
        return out;
    }
    if (!PySequence_Check(h.ptr()) || PySequence_Size(h.ptr()) != 3)
        throw nb::type_error((op + ": " + what + " must be an int or a 3-tuple of ints, got " + repr_of(h)).c_str());
    for (int d = 0; d < 3; ++d) {
        nb::object e = nb::steal(PySequence_GetItem(h.ptr(), d));
        if (!int64_of(e, &v, op, what)) fail(ErrorKind::Message, op + ": " + what + " = " + repr_of(h) + " is out of range");
        out[d] = v;
    }
    return out;
}

nb::tuple tuple3(const std::array<int64_t, 3>& v) { return nb::make_tuple(v[0], v[1], v[2]); }

const char* dtype_of_scalar(loom::ScalarKind k) {
    using K = loom::ScalarKind;
    switch (k) {
        case K::I1: return "bool";
        case K::I8: return "int8";
        case K::I16: return "int16";
        case K::I32: return "int32";
        case K::I64: return "int64";
        case K::F16: return "float16";
        case K::BF16: return "bfloat16";
        case K::F32: return "float32";
        case K::F64: return "float64";
        default: return nullptr;
    }
}

// Parsed modules by source text (the same key as the source digest, without
// hashing): each source is parsed and verified once. Bounded: a program that
// generates sources does not grow it for ever.
std::mutex g_modules_mu;
std::unordered_map<std::string, std::shared_ptr<const loom::Module>> g_modules;
constexpr size_t kMaxModules = 256;

std::shared_ptr<const loom::Module> module_for(const std::string& source) {
    {
        std::lock_guard<std::mutex> lock(g_modules_mu);
        if (auto it = g_modules.find(source); it != g_modules.end()) return it->second;
    }
    auto parsed = loom::parse_module(source);
    std::lock_guard<std::mutex> lock(g_modules_mu);
    if (g_modules.size() >= kMaxModules) g_modules.clear();
    g_modules.emplace(source, parsed.module);
    return parsed.module;
}

const loom::Program& loom_program(const Artifact& a, const char* what) {
    if (!a.program)
        fail(ErrorKind::Message, "Artifact." + std::string(what) + ": '" + a.name +
                                     "' is a built-in program, not a Loom artifact");
    return *a.program;
}

}  // namespace

// The manifest the core writes (loom_manifest_json), as Python objects.
nb::dict artifact_manifest(const Artifact& a) {
    const std::string text = loom_manifest_json(a);
    return nb::cast<nb::dict>(nb::module_::import_("json").attr("loads")(nb::str(text.c_str(), text.size())));
}

loom::LaunchConfig artifact_launch_config(const Artifact& a, nb::args workload) {
    const loom::Program& p = loom_program(a, "launch_config");
    std::vector<ScalarArg> args;
    for (size_t i = 0; i < workload.size(); ++i)
        args.push_back(scalar_arg(workload[i], "launch_config: workload argument " + std::to_string(i)));
    if (!p.is_gpu()) fail(ErrorKind::Message, "launch_config: @" + a.symbol + " is an NPU pipeline; it has no launch program");
    return p.launch_config(loom_workload_bits(a, args, "launch_config"));
}

nb::bytes artifact_pack_constants(const Artifact& a, nb::kwargs scalars) {
    loom_program(a, "pack_constants");
    const auto block = loom_pack_constants(a, scalar_map(scalars, "pack_constants"), "pack_constants");
    return nb::bytes(reinterpret_cast<const char*>(block.data()), block.size());
}

KernelContract artifact_contract_for(const Artifact& a, nb::kwargs scalars) {
    const loom::Program& p = loom_program(a, "contract_for");
    std::vector<uint8_t> block;
    if (p.is_gpu()) block = loom_pack_constants(a, scalar_map(scalars, "contract_for"), "contract_for");
    else if (scalars.size() != 0)
        fail(ErrorKind::Message, "contract_for: @" + a.symbol + " is an NPU pipeline; it takes no device scalars");
    return loom_contract_for(a, block);
}

nb::object artifact_engine(const Artifact& a) {
    if (!a.program) return nb::str("npu");
    return nb::str(a.program->is_gpu() ? "gpu" : "npu");
}

void bind_loom(nb::module_& m) {
    nb::module_ lm = nb::hasattr(m, "loom") ? nb::borrow<nb::module_>(m.attr("loom"))
                                           : m.def_submodule("loom", "The Loom language frontend and compiler.");

    bind_loom_ufunc(lm);

    nb::class_<loom::LaunchConfig>(lm, "LaunchConfig",
                                   "The result of a GPU kernel's host launch program (loom.md §5.2) for one "
                                   "workload: the grid in workgroups, the workgroup size in work-items, the cluster "
                                   "size ((1, 1, 1) without clustering), the subgroup size (0 when the target has "
                                   "no fixed size) and the workgroup storage bytes.")
        .def_prop_ro("workgroups", [](const loom::LaunchConfig& c) { return tuple3(c.workgroups); },
                     "Workgroup count (x, y, z): the grid to pass to load_gpu_kernel.")
        .def_prop_ro("workgroup_size", [](const loom::LaunchConfig& c) { return tuple3(c.workgroup_size); },
                     "Work-items per workgroup (x, y, z): the block to pass to load_gpu_kernel.")
        .def_prop_ro("cluster_size", [](const loom::LaunchConfig& c) { return tuple3(c.cluster_size); },
                     "Workgroups per cluster (x, y, z).")
        .def_prop_ro("subgroup_size", [](const loom::LaunchConfig& c) { return c.subgroup_size; },
                     "Work-items per subgroup (0: not fixed by the target).")
        .def_prop_ro("workgroup_storage_bytes", [](const loom::LaunchConfig& c) { return c.workgroup_storage_bytes; },
                     "Workgroup (LDS) bytes each workgroup allocates.")
        .def("__eq__",
             [](const loom::LaunchConfig& a, nb::handle h) {
                 if (!nb::isinstance<loom::LaunchConfig>(h)) return false;
                 const auto& b = nb::cast<const loom::LaunchConfig&>(h);
                 return a.workgroups == b.workgroups && a.workgroup_size == b.workgroup_size &&
                        a.cluster_size == b.cluster_size && a.subgroup_size == b.subgroup_size &&
                        a.workgroup_storage_bytes == b.workgroup_storage_bytes;
             })
        .def("__repr__", [](const loom::LaunchConfig& c) {
            const auto t = [](const std::array<int64_t, 3>& v) { return repr_of(tuple3(v)); };
            return "LaunchConfig(workgroups=" + t(c.workgroups) + ", workgroup_size=" + t(c.workgroup_size) +
                   ", cluster_size=" + t(c.cluster_size) + ", subgroup_size=" + std::to_string(c.subgroup_size) +
                   ", workgroup_storage_bytes=" + std::to_string(c.workgroup_storage_bytes) + ")";
        });

    lm.def(
        "_compile",
        [](const std::string& source, const std::string& symbol, const std::string& target,
           const std::map<std::string, std::string>& config) {
            ReleaseGil release;
            return compile_loom_artifact(module_for(source), symbol, target, config);
        },
        "source"_a, "symbol"_a, "target"_a, "config"_a,
        "Parse (once per source), specialise and plan `symbol` for the exact `target` with `config` (key → Loom "
        "spelling): a new Artifact. hrxarray.loom.compile caches these.");

    lm.def(
        "_binding_dtypes",
        [](const Artifact& a) {
            nb::list out;
            for (loom::ScalarKind k : loom_binding_elements(a)) {
                const char* name = dtype_of_scalar(k);
                out.append(name ? nb::object(nb::str(name)) : nb::none());
            }
            return out;
        },
        "artifact"_a,
        "The element type name of each buffer binding (its first buffer.view), None when never viewed.");

    lm.def(
        "_run_kernel",
        [](std::shared_ptr<Kernel> kernel, nb::sequence given, nb::sequence dtypes, std::vector<std::string> names,
           nb::handle placement, const std::string& name) {
            std::vector<DType> dts;
            for (nb::handle d : dtypes) dts.push_back(dtype_from_py(d, name));
            std::vector<FunctionOperand> operands;
            std::vector<nb::object> keep;  // host arrays, alive until the call has copied them
            size_t i = 0;
            for (nb::handle h : given) {
                FunctionOperand o;
                if (is_array(h)) {
                    o.device = array_of(h);
                } else if (!h.is_none()) {
                    const DType* want = i < dts.size() ? &dts[i] : nullptr;
                    keep.push_back(host_array(h, want, name));
                    o.host = host_block(keep.back(), name);
                }
                operands.push_back(std::move(o));
                ++i;
            }
            RuntimeCore& rt = *kernel->runtime;
            const Placement home = placement_from_py(placement, rt, name);
            nb::list out;
            for (Array& a : run_function(std::move(kernel), operands, dts, names, home, name)) out.append(wrap(std::move(a)));
            return out;
        },
        "kernel"_a, "given"_a, "dtypes"_a, "names"_a, "placement"_a, "name"_a,
        "One invocation of `kernel` as an array operation on the kernel's engine lane: `given` has one entry per "
        "binding (a DeviceArray, host data uploaded with the binding's dtype, or None for an output the call "
        "allocates in `placement`); every check runs before anything is allocated (array/kernel_call.h). "
        "Returns the written arrays, in binding order.");

    nb::handle rt_type = nb::type<RuntimeCore>();
    rt_type.attr("load_gpu_kernel") = nb::cpp_function(
        [](const std::shared_ptr<RuntimeCore>& rt, const Artifact& artifact, nb::handle grid, nb::handle block,
           const KernelContract& contract, nb::handle workload) {
            const std::string op = "load_gpu_kernel('" + artifact.name + "')";
            std::optional<std::vector<ScalarArg>> w;
            if (!workload.is_none()) {
                w.emplace();
                const auto seq = nb::borrow<nb::sequence>(workload);
                for (size_t i = 0; i < nb::len(seq); ++i)
                    w->push_back(scalar_arg(seq[i], op + ": workload argument " + std::to_string(i)));
            }
            return load_gpu_kernel(rt->gpu(), artifact, dims3(grid, op, "grid"), dims3(block, op, "block"), contract, w);
        },
        nb::is_method(), nb::scope(rt_type), nb::name("load_gpu_kernel"), "artifact"_a, "grid"_a, "block"_a,
        "contract"_a, nb::kw_only(), "workload"_a.none() = nb::none(),
        "Load a Loom GPU artifact on this runtime's GPU (HRX Runtime::load_gpu_kernel). `grid` is in workgroups, "
        "`block` in work-items (ints or 3-tuples). The artifact must target this GPU (UnsupportedError); the "
        "contract's binding count and constant length must be the kernel's, and block (and grid, when the "
        "workload is known) the launch program's (ValueError 'GPU metadata does not match contract'); the "
        "workload is `workload` or, when every workload argument has a device scalar of the same name and "
        "type, read from the contract's constants. The contract must cover the code's footprints "
        "(ContractError). Only this runtime's graphs run the returned GpuKernel.");
}

}  // namespace hrx::bind
