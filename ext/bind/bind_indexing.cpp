// Advanced indexing and isin (array/indexing.h): parse, call, wrap. The
// Python chapter (_indexing.py) splits a key into its basic part (a view)
// and its index arrays, and converts host data; these primitives take
// DeviceArrays.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <vector>

#include "array/indexing.h"
#include "array_bind.h"
#include "bindings.h"
#include "gil.h"
#include "py_types.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace hrx::bind {
namespace {

// Integer index arrays on v's runtime (IndexError for other dtypes, as NumPy).
std::vector<Array> index_arrays(const std::vector<nb::handle>& objs, const Array& v, const std::string& op) {
    std::vector<Array> out;
    for (nb::handle h : objs) {
        const Array& a = element_operand(h, Access::Read, op, "an index");
        if (!dtype_is_integer(a.dtype))
            fail(ErrorKind::Index, op + ": arrays used as indices must be of integer (or boolean) type, got " +
                                       std::string(dtype_name(a.dtype)));
        if (&runtime_of(a) != &runtime_of(v))
            fail(ErrorKind::Message, op + ": the index " + a.describe() + " belongs to another runtime");
        out.push_back(a);
    }
    return out;
}

// Submits t and waits for it (GIL released): for the checks whose answer the
// host needs before it submits the operation itself. Its failure raises.
void run_now(RuntimeCore& rt, TaskSpec& t) { wait_succeeded(*submit(rt, t)); }

// Bounds of every index array, on the compute lane, waited for: an index
// out of range is an IndexError before the gather or scatter is submitted.
void check_bounds(const Array& v, const std::vector<int>& axes, const std::vector<Array>& indices,
                  const std::vector<int>& key_axes, const std::string& op) {
    RuntimeCore& rt = runtime_of(v);
    for (size_t j = 0; j < indices.size(); ++j) {
        if (indices[j].size() == 0) continue;
        auto range = std::make_shared<std::pair<int64_t, int64_t>>(0, 0);
        TaskSpec t = index_range_task(indices[j], range, op);
        run_now(rt, t);
        check_index_bounds(*range, v.shape[static_cast<size_t>(axes[j])], key_axes[j], op);
    }
}

kernels::IndexMode mode_of(const std::string& mode, const std::string& op) {
    if (mode == "raise") return kernels::IndexMode::Raise;
    if (mode == "wrap") return kernels::IndexMode::Wrap;
    if (mode == "clip") return kernels::IndexMode::Clip;
    fail(ErrorKind::Message, op + ": mode must be 'raise', 'wrap' or 'clip', got '" + mode + "'");
}

IndexLayout layout_of(const Array& v, const std::vector<int>& axes, const std::vector<Array>& indices,
                      bool adjacent, int first, const std::string& op) {
    if (axes.size() != indices.size() || axes.empty())
        fail(ErrorKind::Message, op + ": one axis per index array is needed");
    for (size_t j = 0; j < axes.size(); ++j)
        if (axes[j] < 0 || axes[j] >= v.ndim() || (j && axes[j] <= axes[j - 1]))
            fail(ErrorKind::Message, op + ": index axes must be distinct axes of the array, in order");
    std::vector<Dims> shapes;
    for (const Array& a : indices) shapes.push_back(a.shape);
    IndexLayout l = index_layout(v.shape, axes, shapes, adjacent, first, op);
    if (static_cast<int>(l.result.size()) > kMaxDims)
        fail(ErrorKind::Index, op + ": the result would have " + std::to_string(l.result.size()) +
                                   " dimensions, more than the " + std::to_string(kMaxDims) + " allowed");
    checked_size(l.result, v.dtype, op);
    return l;
}

nb::object index_get(nb::handle x, const std::vector<int>& axes, const std::vector<nb::handle>& index_objs,
                     const std::vector<int>& key_axes, bool adjacent, int first, const std::string& mode_name,
                     const std::string& op) {
    const Array v = element_operand(x, Access::Read, op, "x");
    const std::vector<Array> indices = index_arrays(index_objs, v, op);
    const kernels::IndexMode mode = mode_of(mode_name, op);
    const IndexLayout l = layout_of(v, axes, indices, adjacent, first, op);
    int64_t positions = 1;
    for (int64_t b : l.bshape) positions *= b;
    for (size_t j = 0; j < axes.size(); ++j)
        if (mode != kernels::IndexMode::Raise && positions && v.shape[static_cast<size_t>(axes[j])] == 0)
            fail(ErrorKind::Index, op + ": cannot do a non-empty take from an empty axis (axis " +
                                       std::to_string(key_axes.at(j)) + ")");
    if (mode == kernels::IndexMode::Raise) check_bounds(v, axes, indices, key_axes, op);
    RuntimeCore& rt = runtime_of(v);
    Array out = make_array(rt, v.placement(), l.result, v.dtype, op);
    TaskSpec t = gather_task(v, axes, indices, l, mode, out, op);
    submit(rt, t);
    return wrap(out);
}

// A copy of `a` that no later write of `v` can touch (a itself when it cannot).
Array detached(const Array& a, const Array& v, const std::string& op) {
    if (!may_overlap(a, v)) return a;
    RuntimeCore& rt = runtime_of(v);
    Array tmp = make_array(rt, a.placement(), a.shape, a.dtype, op);
    TaskSpec t = copy_task(tmp, Operand::of(a), op);
    submit(rt, t);
    return tmp;
}

void index_set(nb::handle x, const std::vector<int>& axes, const std::vector<nb::handle>& index_objs,
               const std::vector<int>& key_axes, bool adjacent, int first, nb::handle values_obj,
               const std::string& op) {
    const Array v = element_operand(x, Access::Write, op, "x");
    std::vector<Array> indices = index_arrays(index_objs, v, op);
    const IndexLayout l = layout_of(v, axes, indices, adjacent, first, op);
    const Array& values = element_operand(values_obj, Access::Read, op, "the values");
    if (values.dtype != v.dtype || &runtime_of(values) != &runtime_of(v))
        fail(ErrorKind::Message, op + ": the values must be a DeviceArray of the target's dtype and runtime");
    check_assignable(values.shape, l.result, op);
    check_bounds(v, axes, indices, key_axes, op);
    // NumPy reads the values and indices before it writes: x[x] = x[::-1].
    const Array vals = detached(values, v, op);
    for (Array& a : indices) a = detached(a, v, op);
    RuntimeCore& rt = runtime_of(v);
    TaskSpec t = scatter_task(v, axes, indices, l, vals, op);
    submit(rt, t);
}

nb::object mask_get(nb::handle x, int axis, nb::handle mask_obj, int key_axis, bool adjacent, int first,
                    const std::string& op) {
    const Array v = element_operand(x, Access::Read, op, "x");
    const Array mask = element_operand(mask_obj, Access::Read, op, "the mask");
    if (mask.dtype != DType::Bool) fail(ErrorKind::Index, op + ": a mask must be a bool array");
    if (axis < 0 || mask.ndim() == 0 || axis + mask.ndim() > v.ndim())
        fail(ErrorKind::Index, op + ": too many indices for array: array is " + std::to_string(v.ndim()) +
                                   "-dimensional, but " + std::to_string(axis + mask.ndim()) + " were indexed");
    for (int d = 0; d < mask.ndim(); ++d) {
        const int64_t have = v.shape[static_cast<size_t>(axis + d)], want = mask.shape[static_cast<size_t>(d)];
        if (have != want && want != 0)  // an empty mask dimension selects nothing (NumPy)
            fail(ErrorKind::Index, op + ": boolean index did not match indexed array along axis " +
                                       std::to_string(key_axis + d) + "; size of axis is " + std::to_string(have) +
                                       " but size of corresponding boolean axis is " + std::to_string(want));
    }
    if (&runtime_of(mask) != &runtime_of(v))
        fail(ErrorKind::Message, op + ": the mask " + mask.describe() + " belongs to another runtime");
    RuntimeCore& rt = runtime_of(v);
    auto count = std::make_shared<int64_t>(0);
    TaskSpec tc = mask_count_task(mask, count, op);
    run_now(rt, tc);
    std::vector<int> axes;
    for (int d = 0; d < mask.ndim(); ++d) axes.push_back(axis + d);
    const IndexLayout l = index_layout(v.shape, axes, {Dims{*count}}, adjacent, first, op);
    Array out = make_array(rt, v.placement(), l.result, v.dtype, op);
    TaskSpec t = compress_task(v, axis, mask, l.insert_at, out, op);
    submit(rt, t);
    return wrap(out);
}

nb::object isin(nb::handle x1_obj, nb::handle x2_obj, bool invert, const std::string& op) {
    const Array x1 = element_operand(x1_obj, Access::Read, op, "x1");
    const Array x2 = element_operand(x2_obj, Access::Read, op, "x2");
    if (&runtime_of(x1) != &runtime_of(x2))
        fail(ErrorKind::Message, op + ": x1 and x2 belong to different runtimes");
    RuntimeCore& rt = runtime_of(x1);
    Array out = make_array(rt, x1.placement(), x1.shape, DType::Bool, op);
    TaskSpec t = isin_task(x1, x2, promote_types(x1.dtype, x2.dtype), invert, out, op);
    submit(rt, t);
    return wrap(out);
}

}  // namespace

void bind_indexing(nb::module_& m) {
    m.def("_index_get", &index_get, "x"_a, "axes"_a, "indices"_a, "key_axes"_a, "adjacent"_a, "first"_a, "mode"_a,
          "op"_a,
          "x indexed at `axes` by integer DeviceArrays (broadcast together; NumPy's layout rule from `adjacent` "
          "and `first`); mode 'raise' waits for the indices' bounds (see hrxarray._indexing).");
    m.def("_index_set", &index_set, "x"_a, "axes"_a, "indices"_a, "key_axes"_a, "adjacent"_a, "first"_a,
          "values"_a, "op"_a,
          "x indexed at `axes` by integer DeviceArrays = values (x's dtype, broadcast); last write wins.");
    m.def("_mask_get", &mask_get, "x"_a, "axis"_a, "mask"_a, "key_axis"_a, "adjacent"_a, "first"_a, "op"_a,
          "The elements of x where the bool DeviceArray mask (over x's axes from `axis`) is true; waits for the "
          "mask's count (data-dependent shape).");
    m.def("_isin", &isin, "x1"_a, "x2"_a, "invert"_a, "op"_a,
          "Whether each element of x1 is in x2 (bool, x1's shape; see hrxarray.isin).");
}

}  // namespace hrx::bind
