// hx.random's primitives (hrxarray/random.py builds the Generator on them):
// each parses its arguments, makes one draw of array/random.h and returns
// (result, block counters consumed).
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <vector>

#include "array/random.h"
#include "array_bind.h"
#include "bindings.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace hrx::bind {

namespace {

using Doubles = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

nb::object drawn(random::Draw d) { return nb::make_tuple(wrap(std::move(d.array)), d.blocks); }

nb::object random_real(const std::string& dist, nb::handle shape, nb::handle dtype, uint64_t key, uint64_t counter,
                       double a, double b, nb::handle placement, nb::handle out_obj, const std::string& op) {
    const kernels::RandomDist d = dist == "normal" ? kernels::RandomDist::Normal : kernels::RandomDist::Uniform;
    if (!out_obj.is_none()) {
        if (!is_array(out_obj)) throw nb::type_error((op + ": out must be a DeviceArray").c_str());
        const uint64_t blocks = random::real_into(d, RandomStream{key, counter}, a, b, array_of(out_obj), op);
        return nb::make_tuple(out_obj, blocks);  // out itself, as NumPy returns it
    }
    const DType t = dtype_from_py(dtype, op);
    const creation::Home home = new_array_home(placement, nullptr, op);
    return drawn(random::real(home, int_vector(shape, op, "size"), t, d, RandomStream{key, counter}, a, b, op));
}

nb::object random_integers(nb::handle shape, nb::handle dtype, uint64_t key, uint64_t counter, uint64_t low,
                           uint64_t range, nb::handle placement, const std::string& op) {
    const DType t = dtype_from_py(dtype, op);
    const creation::Home home = new_array_home(placement, nullptr, op);
    return drawn(random::integers(home, int_vector(shape, op, "size"), t, RandomStream{key, counter}, low, range, op));
}

using Words = nb::ndarray<const uint64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

nb::object random_integers_each(nb::handle shape, nb::handle dtype, uint64_t key, uint64_t counter, Words low,
                                Words range, nb::handle placement, const std::string& op) {
    const DType t = dtype_from_py(dtype, op);
    const creation::Home home = new_array_home(placement, nullptr, op);
    std::vector<uint64_t> lo(low.data(), low.data() + low.shape(0)), span(range.data(), range.data() + range.shape(0));
    return drawn(random::integers_each(home, int_vector(shape, op, "size"), t, RandomStream{key, counter},
                                       std::move(lo), std::move(span), op));
}

nb::object random_choice(const std::string& kind, int64_t population, Doubles probs, bool sorted, nb::handle shape,
                         nb::handle src, uint64_t key, uint64_t counter, nb::handle placement, const std::string& op) {
    RandomIndices how;
    how.kind = kind == "cdf" ? RandomIndices::Kind::Cdf
               : kind == "sample" ? RandomIndices::Kind::Sample
                                  : RandomIndices::Kind::Uniform;
    how.population = population;
    how.probs.assign(probs.data(), probs.data() + probs.shape(0));
    how.sorted = sorted;
    const Array* s = src.is_none() ? nullptr : &array_of(src);
    const Dims draw = int_vector(shape, op, "size");
    const creation::Home home = new_array_home(placement, s, op);
    return drawn(random::choice(how, RandomStream{key, counter}, draw, s, home, op));
}

}  // namespace

void bind_random(nb::module_& m) {
    m.def("_random_real", &random_real, "dist"_a, "shape"_a, "dtype"_a, "key"_a, "counter"_a, "a"_a, "b"_a,
          "placement"_a.none(), "out"_a.none(), "op"_a,
          "(array, blocks): a + b * x for x uniform [0, 1) (dist 'uniform') or standard normal ('normal'), "
          "drawn from Philox block counters [counter, counter + blocks) of key, on the compute lane, into a new "
          "array or into out (shape and dtype already checked by the caller).");
    m.def("_random_integers", &random_integers, "shape"_a, "dtype"_a, "key"_a, "counter"_a, "low"_a, "range"_a,
          "placement"_a.none(), "op"_a,
          "(array, blocks): low + r (wrapped into dtype) for r uniform in [0, range), range 0 meaning 2**64.");
    m.def("_random_integers_each", &random_integers_each, "shape"_a, "dtype"_a, "key"_a, "counter"_a, "low"_a,
          "range"_a, "placement"_a.none(), "op"_a,
          "(array, blocks): as _random_integers with a low and a range per value (uint64 arrays of the result's "
          "size, C order).");
    m.def("_random_choice", &random_choice, "kind"_a, "population"_a, "probs"_a, "sorted"_a, "shape"_a,
          "src"_a.none(), "key"_a, "counter"_a, "placement"_a.none(), "op"_a,
          "(array, blocks): indices into a population ('uniform', 'cdf' with the normalised cumulative "
          "probabilities, 'sample' without replacement with optional weights), or src's rows at them.");
}

}  // namespace hrx::bind
