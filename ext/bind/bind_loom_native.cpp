// The native Loom executor's bindings (Note [Native Loom executor]): the IR
// text a planned program carries, the helper symbols its code calls, and
// attaching the compiled entry. hrxarray._loom_native drives them; C++ never
// imports the Python package.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "errors.h"
#include "gil.h"
#include "loom/codegen.h"
#include "loom_bind.h"
#include "loom/plan.h"

namespace nb = nanobind;

namespace hrx::bind {

namespace {

const loom::Program* gpu_program(const Artifact& a) {
    return a.program && a.program->is_gpu() ? a.program.get() : nullptr;
}

using Bytes = nb::ndarray<uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

nb::object run_artifact(const Artifact& a, std::vector<Bytes> bindings, nb::bytes constants, std::optional<std::vector<uint64_t>> workload,
                        bool checked, bool interpret) {
    if (!a.program) fail(ErrorKind::Message, "_run_artifact: '" + a.name + "' is not a Loom artifact");
    const loom::Program& p = *a.program;
    std::vector<loom::MemorySpan> spans;
    for (auto& b : bindings) spans.push_back(loom::MemorySpan{b.data(), b.size(), 0});
    std::vector<uint8_t> block(static_cast<const uint8_t*>(constants.data()),
                               static_cast<const uint8_t*>(constants.data()) + constants.size());
    loom::LaunchConfig lc;
    if (p.is_gpu()) lc = p.launch_config(workload.value_or(std::vector<uint64_t>{}));
    loom::ExecOptions opt;
    opt.checked = checked;
    opt.interpret = interpret;
    {
        ReleaseGil nogil;
        p.run(spans, block, lc, opt);
    }
    return nb::none();
}

// Which executor a fresh plan of (source, symbol, target, config) starts with.
std::string plan_executor(const std::string& source, const std::string& symbol, const std::string& target,
                          const std::map<std::string, std::string>& config) {
    loom::ParsedModule parsed = loom::parse_module(source);
    loom::Specialization s;
    s.symbol = symbol;
    s.target = target;
    s.config = config;
    auto program = loom::Program::plan(loom::specialize(parsed.module, s));
    return program->native_attached() ? "native" : "interpreter";
}

}  // namespace

std::string artifact_executor(const Artifact& a) {
    const loom::Program* p = gpu_program(a);
    return p && p->native_attached() ? "native" : "interpreter";
}

std::string artifact_executor_reason(const Artifact& a) {
    if (!a.program) return "a built-in program";
    if (a.program->native_attached()) return "";
    const std::string& r = a.program->native_reason();
    return r.empty() ? "not compiled yet" : r;
}

std::string artifact_native_ir(const Artifact& a) {
    const loom::Program* p = gpu_program(a);
    return p ? p->native_ir() : std::string();
}

void artifact_attach_native(const Artifact& a, uint64_t entry) {
    const loom::Program* p = gpu_program(a);
    if (!p) fail(ErrorKind::Message, "_attach_native: '" + a.symbol + "' is not a Loom GPU artifact");
    p->attach_native(entry);
}

void artifact_refuse_native(const Artifact& a, const std::string& reason) {
    if (const loom::Program* p = gpu_program(a)) p->refuse_native(reason);
}

void bind_loom_native(nb::module_& m) {
    nb::module_ lm = nb::hasattr(m, "loom") ? nb::borrow<nb::module_>(m.attr("loom"))
                                           : m.def_submodule("loom", "The Loom language frontend and compiler.");
    lm.def("_native_symbols", &loom::native::native_symbols,
           "The helper functions native Loom code calls: name -> address (for llvmlite.binding.add_symbol).");
    lm.attr("_native_lanes") = loom::native::kNativeLanes;
    lm.def("_plan_executor", &plan_executor, nb::arg("source"), nb::arg("symbol"), nb::arg("target"),
           nb::arg("config") = std::map<std::string, std::string>{},
           "Test-only: the executor a fresh plan starts with ('native' when its IR was compiled before in this process).");
    lm.def("_run_artifact", &run_artifact, nb::arg("artifact"), nb::arg("bindings"), nb::arg("constants"),
           nb::arg("workload") = nb::none(), nb::arg("checked") = false, nb::arg("interpret") = false,
           "Test-only: run a compiled Loom artifact's program on the calling thread (GIL released) over writable "
           "uint8 arrays, one per buffer binding; `interpret` forces the interpreter where native code is attached.");
}

}  // namespace hrx::bind
