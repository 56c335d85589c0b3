// _core._elementwise: the elementwise, cast and reduction kernels on raw host
// memory, for tests only (the array layer calls the kernels directly). An
// operand is (address, byte strides, dtype name) and every operand of a call
// shares one shape; the caller keeps the memory alive and sized. Kernels run
// with the GIL released.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bindings.h"
#include "gil.h"
#include "kernels/dtype.h"
#include "kernels/elementwise.h"

namespace nb = nanobind;

namespace hrx::bind {

namespace {

using Operand = std::tuple<std::uintptr_t, std::vector<std::int64_t>, std::string>;
using Shape = std::vector<std::int64_t>;

DType parse_dtype(const std::string& name) {
    DType t;
    if (!dtype_from_name(name, &t)) throw nb::value_error(("unknown dtype '" + name + "'").c_str());
    return t;
}

kernels::Ufunc parse_ufunc(const std::string& name) {
    kernels::Ufunc op;
    if (!kernels::ufunc_from_name(name, &op)) throw nb::value_error(("unknown ufunc '" + name + "'").c_str());
    return op;
}

// An operand as a StridedArg; its strides stay in `keep`.
kernels::StridedArg arg_of(const Operand& o, const Shape& shape, std::vector<std::int64_t>& keep) {
    keep = std::get<1>(o);
    if (keep.size() != shape.size()) throw nb::value_error("an operand's strides do not match the shape");
    return {reinterpret_cast<std::uint8_t*>(std::get<0>(o)), parse_dtype(std::get<2>(o)), keep.data()};
}

std::string loop_types(const kernels::UfuncLoop& l, int nin) {
    std::string s;
    for (int i = 0; i < nin; ++i) s += dtype_info(l.in[i]).code;
    s += "->";
    s += dtype_info(l.out).code;
    return s;
}

const kernels::UfuncLoop* resolve_names(kernels::Ufunc op, const std::vector<std::string>& dtypes) {
    const kernels::UfuncInfo& info = kernels::ufunc_info(op);
    if (dtypes.size() != info.nin) throw nb::value_error("wrong number of input dtypes");
    DType in[3];
    for (std::size_t i = 0; i < dtypes.size(); ++i) in[i] = parse_dtype(dtypes[i]);
    return kernels::resolve_loop(op, in);
}

nb::object identity_object(kernels::Identity id) {
    switch (id) {
        case kernels::Identity::Zero: return nb::int_(0);
        case kernels::Identity::One: return nb::int_(1);
        case kernels::Identity::AllOnes: return nb::int_(-1);
        case kernels::Identity::False: return nb::bool_(false);
        case kernels::Identity::True: return nb::bool_(true);
        default: return nb::none();
    }
}

nb::dict info(const std::string& name) {
    const kernels::UfuncInfo& i = kernels::ufunc_info(parse_ufunc(name));
    nb::list types;
    for (int k = 0; k < i.nloops; ++k) types.append(loop_types(i.loops[k], i.nin));
    nb::dict d;
    d["name"] = i.name;
    d["nin"] = i.nin;
    d["nout"] = i.nout;
    d["identity"] = identity_object(i.identity);
    d["has_reduce"] = i.has_reduce;
    d["types"] = types;
    return d;
}

std::vector<std::string> ufunc_names() {
    std::vector<std::string> r;
    for (int k = 0; k < kernels::kUfuncCount; ++k) r.emplace_back(kernels::ufunc_info(static_cast<kernels::Ufunc>(k)).name);
    return r;
}

std::optional<std::string> resolve(const std::string& name, const std::vector<std::string>& dtypes) {
    const kernels::UfuncLoop* l = resolve_names(parse_ufunc(name), dtypes);
    if (!l) return std::nullopt;
    return std::string(dtype_name(l->out));
}

std::optional<std::string> resolve_types(const std::string& name, const std::vector<std::string>& dtypes) {
    const kernels::Ufunc op = parse_ufunc(name);
    const kernels::UfuncLoop* l = resolve_names(op, dtypes);
    if (!l) return std::nullopt;
    return loop_types(*l, kernels::ufunc_info(op).nin);
}

Casting parse_casting(const std::string& c) {
    if (c == "no") return Casting::No;
    if (c == "equiv") return Casting::Equiv;
    if (c == "safe") return Casting::Safe;
    if (c == "same_kind") return Casting::SameKind;
    if (c == "unsafe") return Casting::Unsafe;
    throw nb::value_error(("unknown casting '" + c + "'").c_str());
}

void ufunc(const std::string& name, const Shape& shape, const std::vector<Operand>& inputs, const Operand& out,
           const std::optional<Operand>& where, const std::optional<std::string>& loop) {
    const kernels::Ufunc op = parse_ufunc(name);
    const kernels::UfuncInfo& info = kernels::ufunc_info(op);
    if (inputs.size() != info.nin) throw nb::value_error("wrong number of inputs");
    std::vector<std::int64_t> keep[5];
    kernels::StridedArg in[3];
    DType dt[3];
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        in[i] = arg_of(inputs[i], shape, keep[i]);
        dt[i] = in[i].dtype;
    }
    const kernels::StridedArg o = arg_of(out, shape, keep[3]);
    kernels::StridedArg w{};
    if (where) w = arg_of(*where, shape, keep[4]);
    const kernels::UfuncLoop* l = nullptr;
    if (loop) {
        for (int k = 0; k < info.nloops && !l; ++k)
            if (loop_types(info.loops[k], info.nin) == *loop) l = &info.loops[k];
        if (!l) throw nb::value_error(("no loop '" + *loop + "' for " + name).c_str());
    } else {
        l = kernels::resolve_loop(op, dt);
        if (!l) throw nb::type_error(("no loop of " + name + " for these dtypes").c_str());
    }
    ReleaseGil release;
    kernels::ufunc_run(op, *l, static_cast<int>(shape.size()), shape.data(), in, o, where ? &w : nullptr);
}

void copy_cast(const Shape& shape, const Operand& src, const Operand& dst) {
    std::vector<std::int64_t> ks, kd;
    const kernels::StridedArg s = arg_of(src, shape, ks), d = arg_of(dst, shape, kd);
    ReleaseGil release;
    kernels::copy_cast(static_cast<int>(shape.size()), shape.data(), s, d);
}

void reduce(const std::string& name, const std::string& acc, const Shape& shape, const std::vector<bool>& axes,
            const Operand& src, const Operand& dst, double divisor) {
    if (axes.size() != shape.size()) throw nb::value_error("reduce needs one flag per dimension");
    const kernels::Ufunc op = parse_ufunc(name);
    const DType a = parse_dtype(acc);
    std::vector<std::int64_t> ks, kd;
    const kernels::StridedArg s = arg_of(src, shape, ks), d = arg_of(dst, shape, kd);
    bool flags[64] = {};
    if (shape.size() > 64) throw nb::value_error("too many dimensions");
    for (std::size_t i = 0; i < axes.size(); ++i) flags[i] = axes[i];
    ReleaseGil release;
    kernels::reduce_run(op, a, static_cast<int>(shape.size()), shape.data(), flags, s, d, divisor);
}

void arg_reduce(bool is_max, const Shape& shape, int axis, const Operand& src, const Operand& dst) {
    std::vector<std::int64_t> ks, kd;
    const kernels::StridedArg s = arg_of(src, shape, ks), d = arg_of(dst, shape, kd);
    ReleaseGil release;
    kernels::arg_reduce_run(is_max, static_cast<int>(shape.size()), shape.data(), axis, s, d);
}

}  // namespace

void bind_elementwise(nb::module_& parent) {
    nb::module_ m = parent.def_submodule(
        "_elementwise", "The elementwise, cast and reduction kernels on raw host memory, and the promotion and casting "
        "tables (private: the tests and the data-type functions of hrxarray._data_types).");
    m.def("ufunc_names", &ufunc_names, "Every ufunc's NumPy name, in table order.");
    m.def("info", &info, nb::arg("name"),
          "dict(name, nin, nout, identity, has_reduce, types) of a ufunc; types as NumPy\n"
          "writes them ('ff->f'), bfloat16 as 'E'.");
    m.def("resolve", &resolve, nb::arg("name"), nb::arg("dtypes"),
          "The result dtype name of the loop chosen for these input dtypes, or None.");
    m.def("resolve_types", &resolve_types, nb::arg("name"), nb::arg("dtypes"),
          "The types string of the loop chosen for these input dtypes, or None.");
    m.def(
        "promote_types",
        [](const std::string& a, const std::string& b) {
            return std::string(dtype_name(promote_types(parse_dtype(a), parse_dtype(b))));
        },
        nb::arg("a"), nb::arg("b"), "np.result_type of two dtypes (with ml_dtypes' bfloat16).");
    m.def(
        "can_cast",
        [](const std::string& a, const std::string& b, const std::string& casting) {
            return can_cast(parse_dtype(a), parse_dtype(b), parse_casting(casting));
        },
        nb::arg("from_"), nb::arg("to"), nb::arg("casting"), "np.can_cast(from_, to, casting).");
    m.def("ufunc", &ufunc, nb::arg("name"), nb::arg("shape"), nb::arg("inputs"), nb::arg("out"),
          nb::arg("where") = nb::none(), nb::arg("loop") = nb::none(),
          "out = name(*inputs) over shape; operands are (address, strides, dtype). loop\n"
          "('ff->f') picks the loop instead of resolving it from the input dtypes.");
    m.def("copy_cast", &copy_cast, nb::arg("shape"), nb::arg("src"), nb::arg("dst"), "dst = src cast to dst's dtype.");
    m.def("reduce", &reduce, nb::arg("name"), nb::arg("acc"), nb::arg("shape"), nb::arg("axes"), nb::arg("src"),
          nb::arg("dst"), nb::arg("divisor") = 0.0,
          "Reduce src over the dimensions flagged in axes into dst (keepdims layout:\n"
          "stride 0 on reduced dimensions), accumulating in dtype acc.");
    m.def("arg_reduce", &arg_reduce, nb::arg("is_max"), nb::arg("shape"), nb::arg("axis"), nb::arg("src"),
          nb::arg("dst"), "argmax/argmin of src along axis (-1: all, C order) into int64 dst.");
    m.def("half_cast_path", &kernels::half_cast_path, "'f16c' or 'portable'.");
    m.def("force_portable_half_casts", &kernels::force_portable_half_casts, nb::arg("on"),
          "Force (or stop forcing) the portable float16/bfloat16 conversions.");
}

}  // namespace hrx::bind
