// _core.loom: the Loom frontend (parse + verify, specialise) and its error
// type. hrxarray.loom re-exports these; LoomError is the ValueError every
// loom::CompileError becomes, with the full diagnostic list attached.
#include <nanobind/stl/map.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "bindings.h"
#include "gil.h"
#include "loom/frontend.h"
#include "loom/internal.h"

namespace nb = nanobind;

namespace hrx::bind {
namespace {

PyObject* g_loom_error = nullptr;

const char* severity_name(loom::Diagnostic::Severity s) {
    switch (s) {
        case loom::Diagnostic::Severity::Note: return "note";
        case loom::Diagnostic::Severity::Warning: return "warning";
        case loom::Diagnostic::Severity::Error: return "error";
    }
    return "error";
}

// Messages quote source text; decode leniently so that a quoting mistake can
// never turn a diagnostic into a UnicodeDecodeError.
nb::str text(const std::string& s) {
    return nb::steal<nb::str>(PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace"));
}

nb::str diagnostic_repr(const loom::Diagnostic& d) {
    return text(std::string("Diagnostic(") + severity_name(d.severity) + " " + d.code + " at " +
                std::to_string(d.loc.line) + ":" + std::to_string(d.loc.column) + ": " + d.message + ")");
}

// A parsed, verified module as Python sees it.
struct PyModule {
    std::shared_ptr<const loom::Module> module;
    std::vector<loom::Diagnostic> warnings;
};

nb::dict symbols_of(const PyModule& m) {
    nb::dict out;
    for (const auto& [name, index] : m.module->symbols)
        out[nb::str(name.c_str())] = nb::str(loom::symbol_kind(m.module->ops[index].name));
    return out;
}

nb::dict specialize_py(const PyModule& m, const std::string& symbol, const std::string& target,
                       const std::map<std::string, std::string>& config) {
    loom::Specialization spec{symbol, target, config};
    loom::Specialized s = loom::specialize(m.module, spec);
    nb::dict out;
    out["symbol"] = s.symbol;
    out["root"] = s.root->name;
    out["target"] = s.facts.target;
    out["subgroup_size"] = s.facts.subgroup_size;
    out["index_bits"] = s.facts.index_bits;
    out["offset_bits"] = s.facts.offset_bits;
    nb::dict cfg;
    for (const auto& [key, c] : s.config) {
        if (loom::scalar_is_float(c.type)) cfg[nb::str(key.c_str())] = c.f;
        else cfg[nb::str(key.c_str())] = c.i;
    }
    out["config"] = cfg;
    out["canonical_config"] = s.canonical_config;
    nb::dict templates;
    for (const auto& [apply, chosen] : s.template_choice)
        templates[nb::str((std::to_string(apply->loc.line) + ":" + std::to_string(apply->loc.column)).c_str())] =
            chosen->symbol;
    out["templates"] = templates;
    return out;
}

// Note [Check cases] (parser.cpp): the module's check.case and
// check.benchmark ops as plain data for hrxarray.loom.check().
nb::object attr_py(const loom::Attr& a, const std::vector<loom::Op::ValueInfo>& values) {
    using K = loom::Attr::Kind;
    switch (a.kind) {
        case K::Unit: return nb::none();
        case K::Int: return nb::int_(a.i);
        case K::Float: return nb::float_(a.f);
        case K::String: case K::Ident: return text(a.s);
        case K::Symbol: return text("@" + a.s);
        case K::Value: {
            nb::dict v;
            v["value"] = a.value >= 0 && static_cast<size_t>(a.value) < values.size() ? text(values[static_cast<size_t>(a.value)].name) : text("?");
            return v;
        }
        case K::Type: return a.type ? nb::object(text(a.type->spelling)) : nb::none();
        case K::List: {
            nb::list l;
            if (a.list)
                for (const loom::Attr& e : *a.list) l.append(attr_py(e, values));
            return l;
        }
        case K::Dict: {
            nb::dict d;
            if (a.dict)
                for (const auto& [k, v] : *a.dict) d[text(k)] = attr_py(v, values);
            return d;
        }
    }
    return nb::none();
}

nb::dict type_py(const loom::Type& t, const std::vector<loom::Op::ValueInfo>& values) {
    nb::dict d;
    d["spelling"] = text(t.spelling);
    d["elem"] = loom::scalar_name(t.elem);
    const char* kinds[] = {"scalar", "buffer", "view", "vector", "tile", "tensor", "flow", "group", "encoding", "opaque"};
    d["kind"] = kinds[static_cast<int>(t.kind)];
    nb::list dims;
    for (const loom::Dim& dim : t.dims) {
        if (dim.is_dynamic()) dims.append(text(values[static_cast<size_t>(dim.value)].name));
        else dims.append(dim.extent);
    }
    d["dims"] = dims;
    return d;
}

nb::list checks_of(const PyModule& m) {
    nb::list out;
    for (const loom::Op& top : m.module->ops) {
        if (top.name != "check.case" && top.name != "check.benchmark") continue;
        const auto& values = *top.values;
        nb::dict c;
        c["kind"] = top.name == "check.case" ? "case" : "benchmark";
        c["name"] = text(top.symbol);
        c["line"] = top.loc.line;
        c["case"] = top.params.empty() ? nb::none() : nb::object(text(top.params[0]));
        nb::dict attrs;
        for (const auto& [k, v] : top.attrs) attrs[text(k)] = attr_py(v, values);
        c["attrs"] = attrs;
        nb::list ops;
        if (!top.regions.empty())
            for (const loom::Op& op : top.regions[0].ops) {
                nb::dict o;
                o["name"] = text(op.name);
                o["line"] = op.loc.line;
                o["callee"] = text(op.callee);
                nb::list params, operands, results, otypes, rtypes;
                for (const std::string& p : op.params) params.append(text(p));
                for (loom::ValueId v : op.operands) operands.append(text(values[static_cast<size_t>(v)].name));
                for (loom::ValueId v : op.results) results.append(text(values[static_cast<size_t>(v)].name));
                for (const loom::Type& t : op.operand_types) otypes.append(type_py(t, values));
                for (const loom::Type& t : op.result_types) rtypes.append(type_py(t, values));
                o["params"] = params;
                o["operands"] = operands;
                o["results"] = results;
                o["operand_types"] = otypes;
                o["result_types"] = rtypes;
                nb::dict oattrs;
                for (const auto& [k, v] : op.attrs) oattrs[text(k)] = attr_py(v, values);
                o["attrs"] = oattrs;
                nb::list indices;
                for (const loom::IndexEntry& e : op.indices)
                    indices.append(e.is_value() ? nb::object(text(values[static_cast<size_t>(e.value)].name)) : nb::object(nb::int_(e.constant)));
                o["indices"] = indices;
                o["has_regions"] = !op.regions.empty();
                ops.append(o);
            }
        c["ops"] = ops;
        out.append(c);
    }
    return out;
}

PyModule parse_py(std::string source) {
    loom::ParsedModule parsed;
    {
        ReleaseGil unlocked;
        parsed = loom::parse_module(source);
    }
    return PyModule{parsed.module, std::move(parsed.warnings)};
}

}  // namespace

void set_loom_error(const loom::CompileError& e) {
    nb::list diags;
    for (const loom::Diagnostic& d : e.diagnostics()) diags.append(nb::cast(d));
    nb::object exc = nb::steal(PyObject_CallOneArg(g_loom_error, text(e.what()).ptr()));
    if (!exc.is_valid()) return;  // the call set its own error
    if (PyObject_SetAttrString(exc.ptr(), "diagnostics", diags.ptr()) != 0) return;
    PyErr_SetObject(g_loom_error, exc.ptr());
}

void bind_loom_frontend(nb::module_& parent) {
    nb::module_ m = parent.def_submodule("loom", "The Loom frontend: parse and verify Loom modules (private; use hrxarray.loom).");

    nb::class_<loom::Diagnostic>(m, "Diagnostic",
                                 "One Loom diagnostic: its code ('PARSE/001'), message, 1-based line and\n"
                                 "column (code points; 0 = unknown) and severity ('error', 'warning', 'note').")
        .def_prop_ro("code", [](const loom::Diagnostic& d) { return d.code; }, "Domain and code, e.g. 'PARSE/001'.")
        .def_prop_ro("message", [](const loom::Diagnostic& d) { return text(d.message); }, "The message text.")
        .def_prop_ro("line", [](const loom::Diagnostic& d) { return d.loc.line; }, "1-based line; 0 when unknown.")
        .def_prop_ro("column", [](const loom::Diagnostic& d) { return d.loc.column; },
                     "1-based column in code points; 0 when unknown.")
        .def_prop_ro("severity", [](const loom::Diagnostic& d) { return severity_name(d.severity); },
                     "'error', 'warning' or 'note'.")
        .def("__repr__", &diagnostic_repr);

    nb::class_<PyModule>(m, "Module", "A parsed and verified Loom module.")
        .def_prop_ro("symbols", &symbols_of,
                     "dict of every top-level symbol (without '@') to its kind: 'kernel', 'pipeline',\n"
                     "'func', 'config', 'target', 'template', 'low' or 'check' (check.case/benchmark).")
        .def_prop_ro("digest", [](const PyModule& p) { return p.module->source_digest; },
                     "Hex SHA-256 of the UTF-8 source.")
        .def_prop_ro("warnings", [](const PyModule& p) { return p.warnings; }, "Warning diagnostics (a list).")
        .def_prop_ro("checks", &checks_of,
                     "The module's check.case and check.benchmark ops as plain data (a list of dicts:\n"
                     "kind, name, line, case (a benchmark's), attrs, ops (name, line, callee, params,\n"
                     "operands, results (value names), operand_types, result_types, attrs, indices));\n"
                     "hrxarray.loom.check() runs them.")
        .def("specialize", &specialize_py, nb::arg("symbol"), nb::arg("target") = std::string(loom::kGpuTarget),
             nb::arg("config") = std::map<std::string, std::string>{},
             "Bind root `symbol` for `target` ('gfx1151' or the NPU target) with `config`\n"
             "(key -> Loom spelling). Returns dict(symbol, root, target, subgroup_size,\n"
             "index_bits, offset_bits, config (reachable keys -> int/float), canonical_config,\n"
             "templates ('line:col' of each reachable template.apply -> chosen symbol)).\n"
             "Raises LoomError, or ValueError for an invalid symbol or key.");

    m.def("parse", [](std::string source) { return parse_py(std::move(source)); }, nb::arg("source"),
          "Tokenise, parse and verify Loom `source` (str). Returns a Module; raises\n"
          "LoomError (a ValueError) carrying every diagnostic when the source is invalid.");
    m.def("parse", [](nb::bytes source) { return parse_py(std::string(source.c_str(), source.size())); },
          nb::arg("source"), "The same for UTF-8 bytes (invalid UTF-8 is PARSE/019).");

    g_loom_error = PyErr_NewExceptionWithDoc(
        "hrxarray._core.loom.LoomError",
        "Invalid Loom source or specialisation (a ValueError). str() is the first error as\n"
        "'line:col: message' plus a count of the later ones; .diagnostics lists them all.",
        PyExc_ValueError, nullptr);
    if (!g_loom_error) throw nb::python_error();
    m.attr("LoomError") = nb::steal(g_loom_error);

    // Registered after bind_errors' translator, so it is tried first
    // (CompileError is an hrx::Error too).
    nb::register_exception_translator([](const std::exception_ptr& p, void*) {
        try {
            std::rethrow_exception(p);
        } catch (const loom::CompileError& e) {
            set_loom_error(e);
        }
    });
}

}  // namespace hrx::bind
