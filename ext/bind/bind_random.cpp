// hx.random's primitives (hrxarray/random.py builds the Generator on them):
// each parses its arguments, allocates the result, submits the task of
// array/random.h and returns (result, block counters consumed).
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

// The result's runtime and placement, refused before anything is allocated
// when the compute lane cannot bind it.
std::pair<std::shared_ptr<RuntimeCore>, Placement> result_home(nb::handle placement, const Array* like,
                                                               const std::string& op) {
    auto home = new_array_home(placement, like, op);
    check_lane_placement(home.second, home.second.repr(), Lane::Compute, op);
    return home;
}

nb::object finish(RuntimeCore& rt, RandomTask& r, const Array& out) {
    submit(rt, r.task);
    return nb::make_tuple(wrap(out), r.blocks);
}

nb::object random_real(const std::string& dist, nb::handle shape, nb::handle dtype, uint64_t key, uint64_t counter,
                       double a, double b, nb::handle placement, nb::handle out_obj, const std::string& op) {
    const kernels::RandomDist d = dist == "normal" ? kernels::RandomDist::Normal : kernels::RandomDist::Uniform;
    if (!out_obj.is_none()) {
        if (!is_array(out_obj)) throw nb::type_error((op + ": out must be a DeviceArray").c_str());
        const Array& out = array_of(out_obj);
        RandomTask r = random_real_task(d, RandomStream{key, counter}, a, b, out, op);
        submit(runtime_of(out), r.task);
        return nb::make_tuple(out_obj, r.blocks);  // out itself, as NumPy returns it
    }
    const DType t = dtype_from_py(dtype, op);
    auto [rt, p] = result_home(placement, nullptr, op);
    const Array out = make_array(*rt, p, int_vector(shape, op, "size"), t, op);
    RandomTask r = random_real_task(d, RandomStream{key, counter}, a, b, out, op);
    return finish(*rt, r, out);
}

nb::object random_integers(nb::handle shape, nb::handle dtype, uint64_t key, uint64_t counter, uint64_t low,
                           uint64_t range, nb::handle placement, const std::string& op) {
    const DType t = dtype_from_py(dtype, op);
    auto [rt, p] = result_home(placement, nullptr, op);
    const Array out = make_array(*rt, p, int_vector(shape, op, "size"), t, op);
    RandomTask r = random_integers_task(RandomStream{key, counter}, low, range, out, op);
    return finish(*rt, r, out);
}

using Words = nb::ndarray<const uint64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

nb::object random_integers_each(nb::handle shape, nb::handle dtype, uint64_t key, uint64_t counter, Words low,
                                Words range, nb::handle placement, const std::string& op) {
    const DType t = dtype_from_py(dtype, op);
    auto [rt, p] = result_home(placement, nullptr, op);
    std::vector<uint64_t> lo(low.data(), low.data() + low.shape(0)), span(range.data(), range.data() + range.shape(0));
    const Array out = make_array(*rt, p, int_vector(shape, op, "size"), t, op);
    RandomTask r = random_integers_each_task(RandomStream{key, counter}, std::move(lo), std::move(span), out, op);
    return finish(*rt, r, out);
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
    Dims draw = int_vector(shape, op, "size");
    const int64_t count = checked_size(draw, DType::Int64, op);
    Dims out_shape = draw;
    if (s)
        for (int i = 1; i < s->ndim(); ++i) out_shape.push_back(s->shape[static_cast<size_t>(i)]);
    auto [rt, p] = result_home(placement, s, op);
    const Array out = make_array(*rt, p, out_shape, s ? s->dtype : DType::Int64, op);
    RandomTask r = random_choice_task(how, RandomStream{key, counter}, count, s, out, op);
    return finish(*rt, r, out);
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
