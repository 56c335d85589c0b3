// _core.loom._run_program / _plan_info: test-only entries that parse,
// specialise, plan and run one Loom root on the calling thread, so that the
// executor (provider/emulated/loom_*) is tested before and independently of
// the hx.loom compile/load API.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "errors.h"
#include "gil.h"
#include "loom/catalogue.h"
#include "loom/codegen.h"
#include "loom/frontend.h"
#include "loom/plan.h"

namespace nb = nanobind;

namespace hrx::bind {

namespace {

using Bytes = nb::ndarray<uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

std::shared_ptr<const loom::Program> plan_source(const std::string& source, const std::string& symbol, const std::string& target,
                                                 const std::map<std::string, std::string>& config) {
    loom::ParsedModule parsed = loom::parse_module(source);
    loom::Specialization s;
    s.symbol = symbol;
    s.target = target;
    s.config = config;
    return loom::Program::plan(loom::specialize(parsed.module, s));
}

nb::dict launch_dict(const loom::LaunchConfig& c) {
    nb::dict d;
    auto t3 = [](const std::array<int64_t, 3>& a) { return nb::make_tuple(a[0], a[1], a[2]); };
    d["workgroups"] = t3(c.workgroups);
    d["workgroup_size"] = t3(c.workgroup_size);
    d["cluster_size"] = t3(c.cluster_size);
    d["subgroup_size"] = c.subgroup_size;
    d["workgroup_storage_bytes"] = c.workgroup_storage_bytes;
    return d;
}

nb::object run_program(const std::string& source, const std::string& symbol, const std::string& target,
                       const std::map<std::string, std::string>& config, std::vector<Bytes> bindings, nb::bytes constants,
                       std::optional<std::vector<uint64_t>> workload, bool checked, const std::vector<size_t>& coherent) {
    for (size_t i : coherent)
        if (i >= bindings.size())
            fail(ErrorKind::Message, "_run_program: coherent binding " + std::to_string(i) + " is out of range (" +
                                         std::to_string(bindings.size()) + " bindings)");
    auto program = plan_source(source, symbol, target, config);
    std::vector<loom::MemorySpan> spans;
    for (auto& b : bindings) spans.push_back(loom::MemorySpan{b.data(), b.size(), 0});
    for (size_t i : coherent) spans[i].coherent = true;
    std::vector<uint8_t> block(static_cast<const uint8_t*>(constants.data()),
                               static_cast<const uint8_t*>(constants.data()) + constants.size());
    loom::LaunchConfig lc;
    if (program->is_gpu()) lc = program->launch_config(workload.value_or(std::vector<uint64_t>{}));
    loom::ExecOptions opt;
    opt.checked = checked;
    {
        ReleaseGil nogil;
        program->run(spans, block, lc, opt);
    }
    if (!program->is_gpu()) return nb::none();
    return launch_dict(lc);
}

nb::dict plan_info(const std::string& source, const std::string& symbol, const std::string& target,
                   const std::map<std::string, std::string>& config, nb::bytes constants) {
    auto program = plan_source(source, symbol, target, config);
    nb::dict d;
    auto params = [](const std::vector<loom::Param>& ps) {
        nb::list l;
        for (const auto& p : ps)
            l.append(nb::make_tuple(p.name, p.is_buffer, p.is_buffer ? "buffer" : loom::scalar_name(p.type), p.byte_offset,
                                    p.byte_length, p.byte_alignment));
        return l;
    };
    d["gpu"] = program->is_gpu();
    d["workload_params"] = params(program->workload_params());
    d["device_params"] = params(program->device_params());
    d["constant_byte_length"] = program->constant_byte_length();
    std::vector<uint8_t> block(static_cast<const uint8_t*>(constants.data()),
                               static_cast<const uint8_t*>(constants.data()) + constants.size());
    nb::list fps;
    for (const auto& f : program->footprints(block))
        fps.append(nb::make_tuple(f.bytes, f.alignment, access_name(f.access), f.layout));
    d["footprints"] = fps;
    return d;
}

nb::list catalogue() {
    nb::list out;
    for (const loom::OpEntry& e : loom::op_catalogue()) {
        const bool run = loom::op_executed(std::string(e.name));
        nb::dict d;
        d["name"] = std::string(e.name);
        d["dialect"] = std::string(e.dialect);
        d["operands"] = e.operands < 0 ? nb::object(nb::none()) : nb::object(nb::int_(e.operands));
        d["results"] = e.results < 0 ? nb::object(nb::none()) : nb::object(nb::int_(e.results));
        d["executed"] = run;
        d["native"] = run && loom::native::op_native(e.name);
        d["code"] = run ? nb::object(nb::none()) : nb::object(nb::str(std::string(e.refusal).c_str()));
        // An op accepted and ignored (no refusal code) keeps its reason: what it is and why ignoring it is right.
        d["reason"] = run && !e.refusal.empty() ? std::string() : std::string(e.reason);
        out.append(d);
    }
    return out;
}

}  // namespace

void bind_loom_exec(nb::module_& m) {
    nb::module_ lm = nb::hasattr(m, "loom") ? nb::borrow<nb::module_>(m.attr("loom"))
                                           : m.def_submodule("loom", "The Loom language frontend and compiler.");
    lm.def("_run_program", &run_program, nb::arg("source"), nb::arg("symbol"), nb::arg("target"), nb::arg("config"),
           nb::arg("bindings"), nb::arg("constants"), nb::arg("workload") = nb::none(), nb::arg("checked") = false,
           nb::arg("coherent") = std::vector<size_t>{},
           "Test-only: parse, specialise, plan and run one Loom root on the calling thread (GIL released while it "
           "runs) over writable uint8 arrays, one per buffer binding; `constants` is the GPU constant block and "
           "`workload` the launch program's raw 64-bit slots; `coherent` lists the bindings (by position) on coherent "
           "backing (Note [The gfx1151 float atomic max caveat]). Returns the launch config as a dict (GPU) or None.");
    lm.def("_catalogue", &catalogue,
           "The op catalogue: one dict per op of Loom's dialect definitions (name, dialect, operands and results "
           "where fixed, whether the emulator executes it and whether GPU kernels using it can compile to native "
           "code, else the EMULATOR code and reason it is refused with at plan time).");
    lm.def("_plan_info", &plan_info, nb::arg("source"), nb::arg("symbol"), nb::arg("target"), nb::arg("config"),
           nb::arg("constants") = nb::bytes(""),
           "Test-only: the planned program's parameters, constant block length and binding footprints, as a dict.");
}

}  // namespace hrx::bind
