// Kernel contracts, NPU artifacts, loaded kernels and the built-in programs
// (submodule _core.kernels).
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <limits>

#include "array_bind.h"
#include "bindings.h"
#include "loom_bind.h"
#include "loom/plan.h"
#include "errors.h"
#include "py_types.h"
#include "runtime/builtin_sources.h"
#include "runtime/programs.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace hrx::bind {
namespace {

std::string repr_of(nb::handle h) { return nb::cast<std::string>(nb::repr(h)); }

constexpr uint64_t kIsizeMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

// A contract integer: TypeError for non-integers; values no BindingContract
// can hold (negative, beyond 64 bits) are invalid extents or alignments.
uint64_t contract_int(nb::handle h, const char* what) {
    int64_t v = 0;
    if (!int64_of(h, &v, "BindingContract", what) || v < 0)
        fail(ErrorKind::Message, "invalid kernel binding extent or alignment: BindingContract " + std::string(what) +
                                     " = " + repr_of(h) + " (extent must be in 1..=isize::MAX, alignment a power of two)");
    return static_cast<uint64_t>(v);
}

std::string contract_repr(const BindingContract& b) {
    std::string s = "BindingContract(bytes=" + std::to_string(b.bytes) + ", alignment=" + std::to_string(b.alignment) +
                    ", access=Access." + access_name(b.access);
    if (!b.layout.empty()) s += ", layout=" + repr_of(nb::str(b.layout.c_str()));
    return s + ")";
}

bool binding_eq(const BindingContract& a, const BindingContract& b) {
    return a.bytes == b.bytes && a.alignment == b.alignment && a.access == b.access && a.layout == b.layout;
}

nb::bytes constants_bytes(const KernelContract& c) {
    return nb::bytes(reinterpret_cast<const char*>(c.constants.data()), c.constants.size());
}

std::string kernel_contract_repr(const KernelContract& c) {
    std::string s = "KernelContract([";
    for (size_t i = 0; i < c.bindings.size(); ++i) s += (i ? ", " : "") + contract_repr(c.bindings[i]);
    s += "]";
    if (!c.constants.empty()) s += ", constants=" + repr_of(constants_bytes(c));
    return s + ")";
}

// Loom specialisation values: Python ints and floats (bool is refused).
KernelConfig config_from_kwargs(const nb::kwargs& kwargs, const std::string& who) {
    KernelConfig config;
    for (auto [k, v] : kwargs) {
        const std::string key = nb::cast<std::string>(k);
        if (PyBool_Check(v.ptr()) || !(PyLong_Check(v.ptr()) || PyFloat_Check(v.ptr())))
            throw nb::type_error((who + ": config key '" + key + "' must be an int or a float, got " + repr_of(v)).c_str());
        if (PyFloat_Check(v.ptr())) {
            config[key] = ConfigValue::real(PyFloat_AsDouble(v.ptr()));
            continue;
        }
        int overflow = 0;
        long long i = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
        if (overflow != 0) fail(ErrorKind::Message, who + ": config key '" + key + "' = " + repr_of(v) + " is out of range");
        config[key] = ConfigValue::integer(i);
    }
    return config;
}

nb::dict config_dict(const KernelConfig& config) {
    nb::dict d;
    for (const auto& [k, v] : config) {
        if (v.is_int)
            d[k.c_str()] = v.i;
        else
            d[k.c_str()] = v.f;
    }
    return d;
}

std::string kernel_op(const Kernel& k) { return std::string(engine_name(k.engine)) + "(" + k.name + ")"; }

}  // namespace

void bind_kernels(nb::module_& m) {
    nb::class_<BindingContract>(m, "BindingContract",
                                "One argument of a kernel contract (HRX BindingContract): the minimum accessible "
                                "extent in bytes (1..=isize::MAX: HRX has no zero-length binding), the required "
                                "byte alignment (a power of two), every access the code may make through it, and a "
                                "diagnostic layout label. An extent or alignment outside those raises ValueError "
                                "naming the field.")
        .def(
            "__init__",
            [](BindingContract* self, nb::handle bytes, nb::handle alignment, Access access, std::string layout) {
                const uint64_t extent = contract_int(bytes, "bytes"), align = contract_int(alignment, "alignment");
                // HRX validates a binding when its KernelContract is; a binding no
                // contract can hold is refused here, where the field is named.
                const char* bad = "invalid kernel binding extent or alignment: BindingContract ";
                if (extent == 0 || extent > kIsizeMax)
                    fail(ErrorKind::Message, std::string(bad) + "bytes = " + repr_of(bytes) +
                                                 (extent == 0 ? ": HRX refuses a zero-length binding" : "") +
                                                 " (bytes must be in 1..=isize::MAX)");
                if (align == 0 || (align & (align - 1)) != 0)
                    fail(ErrorKind::Message, std::string(bad) + "alignment = " + repr_of(alignment) +
                                                 " is not a power of two");
                new (self) BindingContract{extent, align, access, std::move(layout)};
            },
            "bytes"_a, "alignment"_a, "access"_a, "layout"_a = "")
        .def_ro("bytes", &BindingContract::bytes, "Minimum accessible extent, including every DMA or vector access.")
        .def_ro("alignment", &BindingContract::alignment, "Required byte alignment of the view (offset and address).")
        .def_ro("access", &BindingContract::access, "Every access the code may perform through the argument.")
        .def_ro("layout", &BindingContract::layout, "A diagnostic label; packing is the caller's job.")
        .def("__eq__", [](const BindingContract& a, nb::handle b) {
            return nb::isinstance<BindingContract>(b) && binding_eq(a, nb::cast<const BindingContract&>(b));
        })
        .def("__hash__", [](const BindingContract& b) {
            return std::hash<std::string>()(b.layout) ^ (b.bytes * 31u) ^ (b.alignment << 3) ^ uint64_t(b.access);
        })
        .def("__repr__", &contract_repr);

    nb::class_<KernelContract>(m, "KernelContract",
                               "The memory contract of a kernel (HRX KernelContract): its bindings in argument "
                               "order and its exact scalar constant bytes. Construction validates every binding "
                               "(ValueError); each use is checked against it (ContractError).")
        .def(
            "__init__",
            [](KernelContract* self, const std::vector<BindingContract>& bindings, nb::bytes constants) {
                KernelContract c;
                c.bindings = bindings;
                const auto* p = static_cast<const uint8_t*>(constants.data());
                c.constants.assign(p, p + constants.size());
                c.validate();
                new (self) KernelContract(std::move(c));
            },
            "bindings"_a, "constants"_a = nb::bytes("", 0))
        .def_ro("bindings", &KernelContract::bindings, "The BindingContracts, in argument order.")
        .def_prop_ro("constants", &constants_bytes, "The exact scalar argument bytes (b'' for buffer-only kernels).")
        .def("__eq__",
             [](const KernelContract& a, nb::handle h) {
                 if (!nb::isinstance<KernelContract>(h)) return false;
                 const auto& b = nb::cast<const KernelContract&>(h);
                 if (a.constants != b.constants || a.bindings.size() != b.bindings.size()) return false;
                 for (size_t i = 0; i < a.bindings.size(); ++i)
                     if (!binding_eq(a.bindings[i], b.bindings[i])) return false;
                 return true;
             })
        .def("__len__", [](const KernelContract& c) { return c.bindings.size(); })
        .def(
            "_check_use",
            [](const KernelContract& c, nb::handle views, const std::string& engine) {
                if (engine != "gpu" && engine != "npu")
                    fail(ErrorKind::Message, "_check_use: engine must be 'gpu' or 'npu', got '" + engine + "'");
                auto v = views_from_py(views, "_check_use");
                c.check_use(v, "_check_use", engine == "npu" ? Engine::Npu : Engine::Gpu);
            },
            "views"_a, "engine"_a = "gpu",
            "Testing hook: the per-use contract checks (ContractError) over views, as `engine` would bind them.")
        .def("__repr__", &kernel_contract_repr);

    nb::class_<Artifact>(m, "Artifact",
                         "A compiled program for one exact target (HRX loom::Artifact): a built-in NPU program "
                         "(hx.kernels.npu) or a Loom kernel.def / pipeline.def (hx.loom.compile). Load NPU "
                         "artifacts with npu.load_artifact(artifact, columns, contract), GPU ones with "
                         "runtime.load_gpu_kernel(artifact, grid, block, contract).")
        .def_ro("target", &Artifact::target, "The exact XDNA deployment target it was compiled for.")
        .def_ro("symbol", &Artifact::symbol, "The program's entry symbol.")
        .def_ro("bytes", &Artifact::bytes, "Image size in bytes, charged to the memory budget at load.")
        .def_ro("name", &Artifact::name, "The built-in program's name.")
        .def_prop_ro("config", [](const Artifact& a) { return config_dict(a.config); },
                     "Its specialisation (Loom keys such as 'copy.packets'), defaults filled in.")
        .def_prop_ro("contract", &artifact_contract,
                     "The contract the program's code needs: pass it (or a wider one) to load_artifact. Loom GPU "
                     "kernels whose extents depend on device scalars raise ValueError: use contract_for.")
        .def_prop_ro("engine", &artifact_engine, "'gpu' (a Loom kernel.def) or 'npu'.")
        .def_prop_ro("executor", &artifact_executor,
                     "Loom artifacts: 'native' (compiled with LLVM, Note [Native Loom executor]) or 'interpreter'. "
                     "Checked mode always interprets.")
        .def_prop_ro("executor_reason", &artifact_executor_reason,
                     "Loom artifacts: why the program is interpreted ('' when native).")
        .def_prop_ro("_native_ir", &artifact_native_ir, "Loom GPU artifacts: the generated LLVM IR text ('' when refused).")
        .def("_attach_native", &artifact_attach_native, "entry"_a,
             "Internal (hrxarray._loom_native): run dispatches through the compiled entry at address `entry`.")
        .def("_refuse_native", &artifact_refuse_native, "reason"_a,
             "Internal (hrxarray._loom_native): record why the IR was not compiled.")
        .def_prop_ro("is_loom", [](const Artifact& a) { return a.program != nullptr; },
                     "True for artifacts compiled from Loom source (hx.loom.compile).")
        .def_prop_ro("canonical_config", [](const Artifact& a) { return a.canonical_config; },
                     "Loom artifacts: the specialisation as canonical text 'key=value;...' (keys the program uses).")
        .def_prop_ro("manifest", &artifact_manifest,
                     "Loom artifacts: the loom.artifact_manifest dict (loom.md §5.3, details mode): kind, "
                     "schema_version, mode, artifact, targets, functions (interface, parameters, execution). "
                     "Facts the emulator does not know are omitted.")
        .def("launch_config", &artifact_launch_config,
             "Loom GPU kernels: evaluate the host launch program for the workload values (ints and floats, "
             "in workload-signature order) as a LaunchConfig. ValueError for a wrong count, values out of "
             "range for their type, or a violated predicate.")
        .def("pack_constants", &artifact_pack_constants,
             "Loom GPU kernels: the constant block (bytes) of the device scalars, each given by name "
             "(%alpha -> alpha=...), laid out in signature order as the device ABI packs them. ValueError "
             "for a missing or unknown name or a value out of range for its type.")
        .def("contract_for", &artifact_contract_for,
             "Loom artifacts: the KernelContract of the code under these device scalars (by name, as "
             "pack_constants): each binding's footprint, alignment and access, and the constant block.")
        .def("__repr__", [](const Artifact& a) {
            return "Artifact(name='" + a.name + "', symbol='" + a.symbol + "', target='" + a.target +
                   "', bytes=" + std::to_string(a.bytes) + ", config=" + repr_of(config_dict(a.config)) + ")";
        });

    nb::class_<Kernel>(m, "Kernel", "Base class of GpuKernel and NpuKernel: a loaded kernel with its contract.")
        .def_ro("name", &Kernel::name, "The kernel's name.")
        .def(
            "_inject_fault",
            [](std::shared_ptr<Kernel> k, const std::string& message) { k->fault.arm(message, k->name); },
            "message"_a,
            "Fault injection (tests and failure drills): the next execution of this kernel fails with message, "
            "as a device fault would.")
        .def_prop_ro("contract", [](const Kernel& k) { return k.contract; }, "Its KernelContract.")
        .def_prop_ro("engine", [](const Kernel& k) { return std::string(engine_name(k.engine)); },
                     "'gpu' or 'npu'.")
        .def_prop_ro("runtime", [](const Kernel& k) { return k.runtime; },
                     "The Runtime it was loaded on; only that runtime's graphs run it.")
        .def(
            "_check",
            [](const Kernel& k, nb::handle views) {
                const std::string op = kernel_op(k);
                auto v = views_from_py(views, op);
                check_kernel_use(k, v, op);
            },
            "views"_a, "Testing hook: the checks a graph makes before binding views to this kernel.")
        .def(
            "_run",
            [](const Kernel& k, nb::handle views) {
                const std::string op = kernel_op(k);
                run_alone(k, views_from_py(views, op), op);
            },
            "views"_a,
            "Testing hook: check, then run one invocation synchronously through a provider queue of its own on "
            "the calling thread (GIL released), outside any graph: no hazards, leases or visibility transitions.");

    nb::class_<GpuKernel, Kernel>(m, "GpuKernel",
                                  "A loaded GPU kernel; run it in a graph with g.gpu(kernel, views).")
        .def("__repr__", [](const GpuKernel& k) { return "GpuKernel('" + k.name + "', " + kernel_contract_repr(k.contract) + ")"; });

    nb::class_<NpuKernel, Kernel>(m, "NpuKernel",
                                  "An NPU program loaded on one NPU (HRX NpuKernel); run it in a graph with "
                                  "g.npu(kernel, views). Its image bytes stay charged to the memory budget "
                                  "until it is dropped.")
        .def_ro("columns", &NpuKernel::columns, "AIE columns it was loaded on (1..=8).")
        .def_ro("image_bytes", &NpuKernel::image_bytes, "Image bytes charged to the memory budget.")
        .def_ro("npu_index", &NpuKernel::npu_index, "The index of the NPU it was loaded for.")
        .def("__repr__", [](const NpuKernel& k) {
            return "NpuKernel('" + k.name + "', npu:" + std::to_string(k.npu_index) + ", columns=" +
                   std::to_string(k.columns) + ", image_bytes=" + std::to_string(k.image_bytes) + ")";
        });

    nb::module_ km = m.def_submodule("kernels", "The built-in programs of the emulated devices.");
    km.def(
        "npu",
        [](const std::string& name, const std::string& target, nb::kwargs config) {
            return make_npu_artifact(name, config_from_kwargs(config, "kernels.npu('" + name + "')"), target);
        },
        "name"_a, nb::kw_only(), "target"_a = std::string(kStrixHaloNpuTarget), "config"_a,
        "The built-in NPU program `name` ('copy', 'gemm', 'batched_gemm') specialised with Loom keys, as an "
        "Artifact for `target`.");
    km.def(
        "gpu",
        [](const std::string& name, std::shared_ptr<RuntimeCore> runtime, nb::kwargs config) {
            const std::string who = "kernels.gpu('" + name + "')";
            KernelConfig c = config_from_kwargs(config, who);
            if (!runtime) runtime = default_runtime();
            return make_gpu_kernel(runtime->gpu(), name, c);
        },
        "name"_a, nb::kw_only(), "runtime"_a.none() = nb::none(), "config"_a,
        "The built-in GPU kernel `name` ('transform_i32', 'euler_bf16', 'add_f32'), loaded on the GPU of "
        "`runtime` (the default runtime when None); graphs of other runtimes refuse it.");
    km.def(
        "_builtin_sources",
        [] {
            nb::dict out;
            for (const auto& [stem, text] : builtin_modules())
                out[nb::str(stem.data(), stem.size())] = nb::str(text.data(), text.size());
            return out;
        },
        "Testing hook: the built-in programs' Loom modules embedded in the library, file stem -> text "
        "(the package ships the same files as hrxarray/programs/<stem>.loom).");
    km.def(
        "_builtin_source",
        [](const std::string& name) {
            const BuiltinSource s = builtin_source(name);
            return nb::make_tuple(nb::str(s.module.data(), s.module.size()), nb::str(s.symbol.data(), s.symbol.size()));
        },
        "name"_a, "Testing hook: (module stem, root symbol) of built-in program `name`; ValueError for others.");
    km.def("load_npu_artifact", &load_npu_artifact, "npu"_a, "artifact"_a, "columns"_a, "contract"_a,
           "HRX NpuDevice.load_artifact: validate the contract, require the exact target, 1..=8 columns and no "
           "constants (UnsupportedError), and charge the image bytes to the memory budget.");

    // NpuDevice is bound before the kernel types exist; attach its loader here
    // so the signature names them.
    nb::handle npu_type = nb::type<NpuDevice>();
    npu_type.attr("load_artifact") = nb::cpp_function(
        [](const NpuDevice& npu, const Artifact& artifact, int64_t columns, const KernelContract& contract) {
            return load_npu_artifact(npu, artifact, columns, contract);
        },
        nb::is_method(), nb::scope(npu_type), nb::name("load_artifact"), "artifact"_a, "columns"_a, "contract"_a,
        "Load an NPU artifact on this device (HRX NpuDevice::load_artifact): validate the contract, require the "
        "exact target, 1..=8 columns and buffer-only bindings (UnsupportedError), and charge the image bytes to "
        "the memory budget until the last NpuKernel handle goes.");
}

}  // namespace hrx::bind
