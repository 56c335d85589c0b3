// Advanced indexing and isin (array/indexing.h): parse, call, wrap. The
// Python chapter (_indexing.py) splits a key into its basic part (a view)
// and its index arrays, and converts host data; these primitives take
// DeviceArrays, and the core checks them.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "array/indexing.h"
#include "array_bind.h"
#include "bindings.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace hrx::bind {
namespace {

std::vector<Array> index_arrays(const std::vector<nb::handle>& objs, const std::string& op) {
    std::vector<Array> out;
    out.reserve(objs.size());
    for (nb::handle h : objs) out.push_back(device_array(h, op, "an index"));
    return out;
}

nb::object index_get(nb::handle x, const std::vector<int>& axes, const std::vector<nb::handle>& index_objs,
                     const std::vector<int>& key_axes, bool adjacent, int first, const std::string& mode,
                     const std::string& op) {
    const Array& v = device_array(x, op, "x");
    return wrap(indexing::get(v, axes, index_arrays(index_objs, op), key_axes, adjacent, first, mode, op));
}

void index_set(nb::handle x, const std::vector<int>& axes, const std::vector<nb::handle>& index_objs,
               const std::vector<int>& key_axes, bool adjacent, int first, nb::handle values_obj,
               const std::string& op) {
    const Array& v = device_array(x, op, "x");
    const std::vector<Array> indices = index_arrays(index_objs, op);
    indexing::set(v, axes, indices, key_axes, adjacent, first, device_array(values_obj, op, "the values"), op);
}

nb::object mask_get(nb::handle x, int axis, nb::handle mask_obj, int key_axis, bool adjacent, int first,
                    const std::string& op) {
    const Array& v = device_array(x, op, "x");
    return wrap(indexing::mask_get(v, axis, device_array(mask_obj, op, "the mask"), key_axis, adjacent, first, op));
}

nb::object isin(nb::handle x1_obj, nb::handle x2_obj, bool invert, const std::string& op) {
    const Array& x1 = device_array(x1_obj, op, "x1");
    return wrap(indexing::isin(x1, device_array(x2_obj, op, "x2"), invert, op));
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
