// hx.linalg's and hx.fft's primitives (array/linalg.h, array/fft.h): parse,
// call, wrap. The Python modules (linalg.py, fft.py) convert dtypes,
// broadcast batches and compose the rest from hx operations.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>
#include <vector>

#include "array/fft.h"
#include "array/linalg.h"
#include "array_bind.h"
#include "bindings.h"
#include "py_region.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace hrx::bind {
namespace {

// The DeviceArray argument `what` of `op`, checked usable by a compute-lane read.
Array operand(nb::handle x, const std::string& op, const char* what) {
    return element_operand(x, Access::Read, op, what);
}

LinalgOp op_from_name(const std::string& kind) {
    static const std::pair<const char*, LinalgOp> names[] = {
        {"solve", LinalgOp::Solve},         {"inv", LinalgOp::Inv},
        {"cholesky", LinalgOp::Cholesky},   {"cholesky_upper", LinalgOp::CholeskyUpper},
        {"det", LinalgOp::Det},             {"slogdet", LinalgOp::Slogdet},
        {"eigh", LinalgOp::Eigh},           {"eigvalsh", LinalgOp::Eigvalsh},
        {"eig", LinalgOp::Eig},             {"eigvals", LinalgOp::Eigvals},
        {"qr_reduced", LinalgOp::QrReduced}, {"qr_complete", LinalgOp::QrComplete},
        {"svd_reduced", LinalgOp::SvdReduced}, {"svd_full", LinalgOp::SvdFull},
        {"svdvals", LinalgOp::Svdvals},
    };
    for (const auto& [n, op] : names)
        if (kind == n) return op;
    fail(ErrorKind::Message, "linalg: unknown operation '" + kind + "'");
}

nb::tuple linalg(const std::string& kind, nb::handle x1, nb::handle x2, const std::string& name) {
    const LinalgOp op = op_from_name(kind);
    const Array a = operand(x1, name, "x1");
    Array b;
    const bool has_b = !x2.is_none();
    if (has_b) b = operand(x2, name, "x2");
    nb::list results;
    for (Array& o : linalg::run(op, a, has_b ? &b : nullptr, name)) results.append(wrap(std::move(o)));
    return nb::tuple(results);
}

// A NumPy array viewing `a`'s host mapping (valid while the task runs).
nb::object numpy_view(const Array& a, bool writable) {
    const auto [first, end] = a.extent();
    const int flags = writable ? PyBUF_WRITE : PyBUF_READ;
    nb::object mv = nb::steal(PyMemoryView_FromMemory(reinterpret_cast<char*>(a.base->storage()->data() + first),
                                                      static_cast<Py_ssize_t>(end - first), flags));
    if (!mv.is_valid()) throw nb::python_error();
    nb::list shape, strides;
    for (int64_t d : a.shape) shape.append(d);
    for (int64_t s : a.strides) strides.append(s);
    return nb::module_::import_("numpy").attr("ndarray")(nb::tuple(shape), dtype_object(a.dtype), mv,
                                                         static_cast<int64_t>(a.offset - static_cast<int64_t>(first)),
                                                         nb::tuple(strides));
}

// out = fn(in) on the compute lane: fn(in_view, out_view) is numpy.fft's call with out=.
void fft_region(nb::handle fn, nb::handle x, nb::handle out_obj, const std::string& name) {
    const Array in = operand(x, name, "x");
    if (!is_array(out_obj)) throw nb::type_error((name + ": out must be a DeviceArray").c_str());
    const Array out = array_of(out_obj);
    auto ref = std::make_shared<PyRef>(fn);
    fft::region(in, out, [ref, in, out] {
        run_python("fft region", [&] { ref->get()(numpy_view(in, false), numpy_view(out, true)); });
    }, name);
}

}  // namespace

void bind_linalg(nb::module_& m) {
    m.def("_lapack_load", &load_lapack, "path"_a, "dlopen NumPy's OpenBLAS/LAPACK once (hx.linalg).");
    m.def("_lapack_loaded", &lapack_loaded);
    m.def("_linalg", &linalg, "kind"_a, "x1"_a, "x2"_a.none(), "name"_a,
          "One LAPACK-backed hx.linalg operation; returns its results (DeviceArrays) as a tuple.");
    m.def("_fft_region", &fft_region, "fn"_a, "x"_a, "out"_a, "name"_a,
          "Submit fn(x_view, out_view) (numpy.fft with out=) as a compute-lane region writing out.");
}

}  // namespace hrx::bind
