// Sorting, searching, set and cumulative functions (array/sorting.h,
// searching.h, set.h, statistical.h): parse, call, wrap. The Python chapters
// (_sorting.py, _searching.py, _set.py, _statistical.py) convert host data
// and pick dtypes; these primitives take DeviceArrays.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <memory>
#include <string>

#include "array/searching.h"
#include "array/set.h"
#include "array/sorting.h"
#include "array/statistical.h"
#include "array_bind.h"
#include "bindings.h"
#include "gil.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace hrx::bind {
namespace {

// The DeviceArray argument `what` of `op`, checked usable by a compute-lane read.
Array input(nb::handle x, const std::string& op, const char* what = "x") {
    if (is_array(x) && array_of(x).dtype == DType::BFP16)
        throw nb::type_error((op + ": bfp16 arrays cannot be compared; convert with astype(hx.float32)").c_str());
    return element_operand(x, Access::Read, op, what);
}

int axis_of(nb::handle axis, int ndim, const std::string& op) {
    int64_t v = 0;
    if (!int64_of(axis, &v, op, "axis")) fail_axis(nb::cast<std::string>(nb::str(axis)), ndim, op);
    return normalize_axis(v, ndim, op);
}

void same_runtime(const Array& a, const Array& b, const std::string& op) {
    if (&runtime_of(a) != &runtime_of(b))
        fail(ErrorKind::Message, op + ": " + a.describe() + " and " + b.describe() + " belong to different runtimes");
}

// Submits a task whose result shape depends on its data and waits for it
// (GIL released); a failure raises as a wait on `first` would.
void submit_and_wait(RuntimeCore& rt, TaskSpec& t, std::initializer_list<const Array*> also_written,
                     const Array& first) {
    auto c = submit(rt, t);
    for (const Array* a : also_written) a->base->add_writer(c);
    {
        ReleaseGil release;
        c->wait(std::nullopt);
    }
    wait_ready(first);
}

// The first k elements of the 1-d int64 row `row` of a 2-d array (or of a 1-d array for row 0).
Array head(const Array& a, int64_t row, int64_t k) {
    Array v = a;
    v.offset += row * a.strides[0] * (a.ndim() > 1 ? 1 : 0);
    v.shape = Dims{k};
    v.strides = Dims{a.strides.back()};
    return v;
}

nb::object sort(nb::handle x, nb::handle axis, bool descending, bool indices, const std::string& op) {
    const Array in = input(x, op);
    const int ax = axis_of(axis, in.ndim(), op);
    RuntimeCore& rt = runtime_of(in);
    Array out = make_array(rt, in.placement(), in.shape, indices ? DType::Int64 : in.dtype, op);
    TaskSpec t = sort_task(in, ax, descending, indices, out, op);
    submit(rt, t);
    return wrap(out);
}

nb::object cumulative(nb::handle x, nb::handle axis, bool product, nb::handle dtype, bool include_initial,
                      const std::string& op) {
    const Array in = input(x, op);
    const int ax = axis_of(axis, in.ndim(), op);
    const DType dt = dtype_from_py(dtype, op);
    if (dt == DType::BFP16) throw nb::type_error((op + ": dtype bfp16 has no arithmetic").c_str());
    Dims shape = in.shape;
    shape[static_cast<size_t>(ax)] += include_initial ? 1 : 0;
    RuntimeCore& rt = runtime_of(in);
    Array out = make_array(rt, in.placement(), shape, dt, op);
    TaskSpec t = cumulative_task(in, ax, product, include_initial, out, op);
    submit(rt, t);
    return wrap(out);
}

nb::object searchsorted(nb::handle x1_obj, nb::handle x2_obj, bool right, nb::handle sorter_obj,
                        const std::string& op) {
    const Array x1 = input(x1_obj, op, "x1");
    const Array x2 = input(x2_obj, op, "x2");
    if (x1.ndim() != 1)
        fail(ErrorKind::Message, op + ": x1 must be 1-dimensional, got shape " + shape_str(x1.shape));
    same_runtime(x1, x2, op);
    Array sorter;
    const bool has_sorter = !sorter_obj.is_none();
    if (has_sorter) {
        sorter = input(sorter_obj, op, "sorter");
        same_runtime(x1, sorter, op);
        if (!dtype_is_integer(sorter.dtype))
            throw nb::type_error((op + ": sorter must be an integer array, got " + dtype_name(sorter.dtype)).c_str());
        if (sorter.shape != x1.shape)
            fail(ErrorKind::Message, op + ": sorter must have x1's shape " + shape_str(x1.shape) + ", got " +
                                         shape_str(sorter.shape));
    }
    const DType common = promote_types(x1.dtype, x2.dtype);
    RuntimeCore& rt = runtime_of(x1);
    Array out = make_array(rt, x1.placement(), x2.shape, DType::Int64, op);
    TaskSpec t = searchsorted_task(x1, x2, has_sorter ? &sorter : nullptr, right, common, out, op);
    submit(rt, t);
    return wrap(out);
}

nb::tuple nonzero(nb::handle x, const std::string& op) {
    const Array in = input(x, op);
    if (in.ndim() == 0)
        fail(ErrorKind::Message, op + ": calling nonzero on 0-d arrays is not allowed (NumPy 2, the array API); "
                                      "use hx.reshape(x, (1,)) first");
    RuntimeCore& rt = runtime_of(in);
    Array out = make_array(rt, in.placement(), Dims{in.ndim(), in.size()}, DType::Int64, op);
    auto count = std::make_shared<int64_t>(0);
    TaskSpec t = nonzero_task(in, out, count, op);
    submit_and_wait(rt, t, {}, out);
    nb::list parts;
    for (int d = 0; d < in.ndim(); ++d) parts.append(wrap(head(out, d, *count)));
    return nb::tuple(parts);
}

nb::tuple unique(nb::handle x, bool equal_nan, const std::string& op) {
    const Array in = input(x, op);
    RuntimeCore& rt = runtime_of(in);
    const Dims flat{in.size()};
    Array values = make_array(rt, in.placement(), flat, in.dtype, op);
    Array index = make_array(rt, in.placement(), flat, DType::Int64, op);
    Array inverse = make_array(rt, in.placement(), in.shape, DType::Int64, op);
    Array counts = make_array(rt, in.placement(), flat, DType::Int64, op);
    auto count = std::make_shared<int64_t>(0);
    TaskSpec t = unique_task(in, equal_nan, values, index, inverse, counts, count, op);
    submit_and_wait(rt, t, {&index, &inverse, &counts}, values);
    const int64_t k = *count;
    return nb::make_tuple(wrap(head(values, 0, k)), wrap(head(index, 0, k)), wrap(inverse), wrap(head(counts, 0, k)));
}

nb::tuple unique_axis(nb::handle x, nb::handle axis, const std::string& op) {
    const Array in = input(x, op);
    if (in.ndim() == 0) fail_axis(nb::cast<std::string>(nb::str(axis)), 0, op);
    const int ax = axis_of(axis, in.ndim(), op);
    RuntimeCore& rt = runtime_of(in);
    Dims moved = in.shape;
    moved.erase(moved.begin() + ax);
    moved.insert(moved.begin(), in.shape[static_cast<size_t>(ax)]);
    const Dims rows{moved[0]};
    Array values = make_array(rt, in.placement(), moved, in.dtype, op);
    Array index = make_array(rt, in.placement(), rows, DType::Int64, op);
    Array inverse = make_array(rt, in.placement(), rows, DType::Int64, op);
    Array counts = make_array(rt, in.placement(), rows, DType::Int64, op);
    auto count = std::make_shared<int64_t>(0);
    TaskSpec t = unique_axis_task(in, ax, values, index, inverse, counts, count, op);
    submit_and_wait(rt, t, {&index, &inverse, &counts}, values);
    const int64_t k = *count;
    Array distinct = values;
    distinct.shape[0] = k;
    return nb::make_tuple(wrap(distinct), wrap(head(index, 0, k)), wrap(inverse), wrap(head(counts, 0, k)));
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
