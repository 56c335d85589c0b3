// Sorting, searching, set and cumulative functions (array/sorting.h,
// searching.h, set.h, statistical.h): parse, call, wrap. The Python chapters
// (_sorting.py, _searching.py, _set.py, _statistical.py) convert host data
// and pick dtypes; these primitives take DeviceArrays.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>

#include "array/searching.h"
#include "array/set.h"
#include "array/sorting.h"
#include "array/statistical.h"
#include "array_bind.h"
#include "bindings.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace hrx::bind {
namespace {

// The DeviceArray argument `what` of `op`, after check_comparable's refusals.
const Array& input(nb::handle x, const std::string& op, const char* what = "x") {
    const Array& a = device_array(x, op, what);
    check_comparable(a, op);
    return a;
}

// An axis argument normalised for `ndim` dimensions (Note [Axes]).
int axis_of(nb::handle axis, int ndim, const std::string& op) {
    int64_t v = 0;
    if (!int64_of(axis, &v, op, "axis")) fail_axis(nb::cast<std::string>(nb::str(axis)), ndim, op);
    return normalize_axis(v, ndim, op);
}

nb::object sort(nb::handle x, nb::handle axis, bool descending, bool indices, const std::string& op) {
    const Array& in = input(x, op);
    return wrap(sorting::sort(in, axis_of(axis, in.ndim(), op), descending, indices, op));
}

nb::object cumulative(nb::handle x, nb::handle axis, bool product, nb::handle dtype, bool include_initial,
                      const std::string& op) {
    const Array& in = input(x, op);
    const int ax = axis_of(axis, in.ndim(), op);
    return wrap(statistical::cumulative(in, ax, product, dtype_from_py(dtype, op), include_initial, op));
}

nb::object searchsorted(nb::handle x1_obj, nb::handle x2_obj, bool right, nb::handle sorter_obj,
                        const std::string& op) {
    const Array& x1 = input(x1_obj, op, "x1");
    const Array& x2 = input(x2_obj, op, "x2");
    const Array* sorter = sorter_obj.is_none() ? nullptr : &device_array(sorter_obj, op, "sorter");
    return wrap(searching::searchsorted(x1, x2, sorter, right, op));
}

nb::tuple nonzero(nb::handle x, const std::string& op) {
    nb::list parts;
    for (Array& a : searching::nonzero(input(x, op), op)) parts.append(wrap(std::move(a)));
    return nb::tuple(parts);
}

nb::tuple wrap_unique(set::Unique u) {
    return nb::make_tuple(wrap(std::move(u.values)), wrap(std::move(u.index)), wrap(std::move(u.inverse)),
                          wrap(std::move(u.counts)));
}

nb::tuple unique(nb::handle x, bool equal_nan, const std::string& op) {
    return wrap_unique(set::unique(input(x, op), equal_nan, op));
}

nb::tuple unique_axis(nb::handle x, nb::handle axis, const std::string& op) {
    const Array& in = input(x, op);
    if (in.ndim() == 0) fail_axis(nb::cast<std::string>(nb::str(axis)), 0, op);
    return wrap_unique(set::unique_axis(in, axis_of(axis, in.ndim(), op), op));
}

}  // namespace

void bind_sorting(nb::module_& m) {
    m.def("_sort", &sort, "x"_a, "axis"_a, "descending"_a, "indices"_a, "op"_a,
          "The stable sort (indices=False) or argsort (int64) of a DeviceArray along axis (see hrxarray.sort).");
    m.def("_cumulative", &cumulative, "x"_a, "axis"_a, "product"_a, "dtype"_a, "include_initial"_a, "op"_a,
          "The cumulative sum or product along axis in dtype (see hrxarray.cumulative_sum).");
    m.def("_searchsorted", &searchsorted, "x1"_a, "x2"_a, "right"_a, "sorter"_a.none(), "op"_a,
          "Insertion points of x2 into the sorted 1-d x1 (see hrxarray.searchsorted).");
    m.def("_nonzero", &nonzero, "x"_a, "op"_a,
          "The indices of the nonzero elements, one int64 array per axis; waits for the input (data-dependent "
          "shape).");
    m.def("_unique", &unique, "x"_a, "equal_nan"_a, "op"_a,
          "(values, first indices, inverse (x's shape), counts) of the flattened x; waits for the input "
          "(data-dependent shape).");
    m.def("_unique_axis", &unique_axis, "x"_a, "axis"_a, "op"_a,
          "(values with axis moved first, first indices, inverse, counts) of the distinct sub-arrays of x along "
          "axis; waits for the input (data-dependent shape).");
}

}  // namespace hrx::bind
