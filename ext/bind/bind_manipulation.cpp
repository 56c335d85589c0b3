// Manipulation and creation primitives (array/manipulation.h): parse, call,
// wrap. The Python chapters (_manipulation.py, _creation.py) turn repeat,
// roll, tile, pad and tril/triu into these calls; views need none.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <string>
#include <vector>

#include "array/manipulation.h"
#include "array_bind.h"
#include "bindings.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace hrx::bind {
namespace {

using IndexTable = nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

nb::object gather(nb::handle x, nb::list tables, const std::string& op) {
    const Array in = element_operand(x, Access::Read, op, "x");
    std::vector<std::vector<int64_t>> index;
    index.reserve(tables.size());
    for (nb::handle h : tables) {
        if (h.is_none()) {
            index.emplace_back();
            continue;
        }
        const auto t = nb::cast<IndexTable>(h);
        index.emplace_back(t.data(), t.data() + t.shape(0));
    }
    return wrap(manipulation::gather(in, std::move(index), op));
}

nb::object triangle(nb::handle x, int64_t k, bool lower, const std::string& op) {
    return wrap(manipulation::triangle(element_operand(x, Access::Read, op, "x"), k, lower, op));
}

}  // namespace

void bind_manipulation(nb::module_& m) {
    m.def(
        "_broadcast_shapes",
        [](nb::sequence shapes, const std::string& op) {
            std::vector<Dims> dims;
            for (nb::handle h : shapes) dims.push_back(int_vector(h, op, "shape"));
            std::vector<const Dims*> ptrs;
            for (const auto& d : dims) ptrs.push_back(&d);
            const Dims out = broadcast_shapes(ptrs, op);
            nb::list l;
            for (int64_t n : out) l.append(n);
            return nb::tuple(l);
        },
        "shapes"_a, "op"_a,
        "The shape the given shapes broadcast to: the one broadcasting rule (array/ops.h), which every "
        "operation uses; ValueError naming `op` and the clash.");
    m.def("_gather", &gather, "x"_a, "tables"_a, "op"_a,
          "A new array picking, along each axis, the positions its int64 table lists (None keeps the axis); "
          "see Note [Outer gathers].");
    m.def("_triangle", &triangle, "x"_a, "k"_a, "lower"_a, "op"_a,
          "tril (lower=True) or triu of the last two axes with diagonal offset k, as a new array.");
}

}  // namespace hrx::bind
