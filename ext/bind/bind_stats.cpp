// Counting, binning, medians and correlations (array/stats.h): parse, call,
// wrap. The Python functions (_numpy_more.py's bincount, histogram,
// convolve/correlate; _nanfunctions.py's median) parse NumPy's arguments and
// pick dtypes, edges and modes; these primitives take DeviceArrays.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>
#include <utility>

#include "array/stats.h"
#include "array_bind.h"
#include "bindings.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace hrx::bind {
namespace {

const Array* optional_array(nb::handle h, const std::string& op, const char* what) {
    return h.is_none() ? nullptr : &device_array(h, op, what);
}

nb::object bincount(nb::handle x, nb::handle weights, int64_t minlength, const std::string& op) {
    const Array& in = device_array(x, op, "x");
    return wrap(stats::bincount(in, optional_array(weights, op, "weights"), minlength, op));
}

nb::object histogram(nb::handle x, nb::handle edges, nb::handle uniform, nb::handle weights, nb::handle acc,
                     const std::string& op) {
    const Array& in = device_array(x, op, "a");
    const Array& e = device_array(edges, op, "bins");
    kernels::UniformBins u;
    const bool uni = !uniform.is_none();
    if (uni) {
        nb::tuple t = nb::cast<nb::tuple>(uniform);
        if (t.size() != 4) fail(ErrorKind::Message, op + ": uniform must be (first, last, denom, wide)");
        u = kernels::UniformBins{nb::cast<double>(t[0]), nb::cast<double>(t[1]), nb::cast<double>(t[2]),
                                 nb::cast<bool>(t[3])};
    }
    const Array* w = optional_array(weights, op, "weights");
    const DType a = w ? dtype_from_py(acc, op) : DType::Int64;
    return wrap(stats::histogram(in, e, uni ? &u : nullptr, w, a, op));
}

nb::object median(nb::handle x, nb::handle ct, nb::handle dtype, bool skip_nan, const std::string& op) {
    const Array& in = device_array(x, op, "a");
    return wrap(stats::median(in, dtype_from_py(ct, op), dtype_from_py(dtype, op), skip_nan, op));
}

nb::object correlate(nb::handle a, nb::handle v, int64_t left, int64_t len, nb::handle dtype, const std::string& op) {
    const Array& x = device_array(a, op, "a");
    const Array& w = device_array(v, op, "v");
    return wrap(stats::correlate(x, w, left, len, dtype_from_py(dtype, op), op));
}

void ufunc_at(nb::handle a, nb::handle pos, nb::handle vals, const std::string& name, const std::string& op) {
    static const std::pair<const char*, kernels::AtOp> ops[] = {
        {"add", kernels::AtOp::Add}, {"subtract", kernels::AtOp::Subtract}, {"multiply", kernels::AtOp::Multiply},
        {"minimum", kernels::AtOp::Minimum}, {"maximum", kernels::AtOp::Maximum}};
    for (const auto& [n, at] : ops)
        if (name == n)
            return stats::ufunc_at(device_array(a, op, "a"), device_array(pos, op, "indices"),
                                   device_array(vals, op, "b"), at, op);
    fail(ErrorKind::Type, op + ": ufunc.at runs add, subtract, multiply, minimum and maximum, not " + name);
}

}  // namespace

void bind_stats(nb::module_& m) {
    m.def("_bincount", &bincount, "x"_a, "weights"_a.none(), "minlength"_a, "op"_a,
          "int64 counts (float64 weight sums) of each value of the 1-d integer x, of length max(max(x) + 1, "
          "minlength); waits for x's range (see hrxarray.bincount).");
    m.def("_histogram", &histogram, "x"_a, "edges"_a, "uniform"_a.none(), "weights"_a.none(), "acc"_a.none(), "op"_a,
          "NumPy's histogram counts (or weight sums in acc) of x over the ascending edges; uniform = (first, last, "
          "denom, wide) selects NumPy's equal-bin index computation (see hrxarray.histogram).");
    m.def("_median", &median, "x"_a, "ct"_a, "dtype"_a, "skip_nan"_a, "op"_a,
          "The median over x's last axis, selected in ct (float32/float64) and returned in dtype; skip_nan "
          "leaves each row's NaNs out (see hrxarray.median, hrxarray.nanmedian).");
    m.def("_correlate", &correlate, "a"_a, "v"_a, "left"_a, "len"_a, "dtype"_a, "op"_a,
          "len outputs of NumPy's correlate of 1-d a with 1-d v in dtype, output k the dot of v with a from "
          "k - left (see hrxarray.correlate).");
    m.def("_ufunc_at", &ufunc_at, "a"_a, "pos"_a, "vals"_a, "name"_a, "op"_a,
          "NumPy's ufunc.at in place on a: a.flat[pos[i]] = name(a.flat[pos[i]], vals[i]) in order, vals "
          "broadcast to pos's shape (see hrxarray.ufunc.at).");
}

}  // namespace hrx::bind
