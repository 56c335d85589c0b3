// hx.random's tasks: one compute-lane region per call, writing a fresh result
// (and reading choice's population), run by kernels/random.cpp.
#include "array/random.h"

#include <memory>
#include <vector>

#include "errors.h"
#include "provider/array_ops.h"

namespace hrx {

namespace {

TaskSpec random_spec(const Array& out, const std::string& op, const char* label) {
    if (!out.c_contiguous()) fail(ErrorKind::Message, op + ": the result must be C-contiguous, got " + out.describe());
    check_device_use(out, Access::Write, op);
    return compute_task({}, {&out}, op, label);
}

// One random dispatch (Note [Array operations are dispatches]) of stream
// `s` into `out`, drawing n values.
std::shared_ptr<provider::RandomOp> random_op(const TaskSpec& t, provider::RandomOp::Kind kind, RandomStream s,
                                              int64_t n, const Array& out) {
    auto op = std::make_shared<provider::RandomOp>();
    op->kind = kind;
    op->key = s.key;
    op->counter = s.counter;
    op->n = n;
    op->out = tensor_of(t, out, Access::Write);
    return op;
}

void check_integer_result(const Array& out, const std::string& op) {
    if (!dtype_is_integer(out.dtype) && out.dtype != DType::Bool)
        fail(ErrorKind::Message, op + ": dtype must be an integer dtype or bool, got " + dtype_name(out.dtype));
}

}  // namespace

RandomTask random_real_task(kernels::RandomDist dist, RandomStream s, double a, double b, const Array& out,
                            const std::string& op) {
    if (out.dtype != DType::Float32 && out.dtype != DType::Float64)
        fail(ErrorKind::Message, op + ": dtype must be float32 or float64, got " + dtype_name(out.dtype));
    RandomTask r;
    r.task = random_spec(out, op, dist == kernels::RandomDist::Uniform ? "random.uniform" : "random.normal");
    const int64_t n = out.size();
    r.blocks = kernels::random_real_blocks(dist, out.dtype, n);
    auto d = random_op(r.task, provider::RandomOp::Kind::Real, s, n, out);
    d->dist = dist;
    d->a = a;
    d->b = b;
    r.task.array = std::move(d);
    return r;
}

RandomTask random_integers_task(RandomStream s, uint64_t low, uint64_t range, const Array& out, const std::string& op) {
    check_integer_result(out, op);
    RandomTask r;
    r.task = random_spec(out, op, "random.integers");
    const int64_t n = out.size();
    r.blocks = kernels::random_integer_blocks(kernels::random_integers_narrow(&range, 1), n);
    auto d = random_op(r.task, provider::RandomOp::Kind::Integers, s, n, out);
    d->low = low;
    d->range = range;
    r.task.array = std::move(d);
    return r;
}

RandomTask random_integers_each_task(RandomStream s, std::vector<uint64_t> low, std::vector<uint64_t> range,
                                     const Array& out, const std::string& op) {
    check_integer_result(out, op);
    const int64_t n = out.size();
    if (low.size() != static_cast<size_t>(n) || range.size() != static_cast<size_t>(n))
        fail(ErrorKind::Message, op + ": " + std::to_string(n) + " values need as many bounds, got " +
                                     std::to_string(low.size()) + " and " + std::to_string(range.size()));
    RandomTask r;
    r.task = random_spec(out, op, "random.integers");
    r.blocks = kernels::random_integer_blocks(kernels::random_integers_narrow(range.data(), n), n);
    auto d = random_op(r.task, provider::RandomOp::Kind::IntegersEach, s, n, out);
    d->lows = std::move(low);
    d->ranges = std::move(range);
    r.task.array = std::move(d);
    return r;
}

RandomTask random_choice_task(const RandomIndices& how, RandomStream s, int64_t count, const Array* src,
                              const Array& out, const std::string& op) {
    using Kind = RandomIndices::Kind;
    if (!src && out.dtype != DType::Int64)
        fail(ErrorKind::Message, op + ": indices are int64, got " + dtype_name(out.dtype));
    RandomTask r;
    r.task = random_spec(out, op, "random.choice");
    std::size_t row_bytes = 0;
    if (src) {
        if (!src->c_contiguous() || src->dtype == DType::BFP16)
            fail(ErrorKind::Message, op + ": the population must be C-contiguous and not bfp16, got " + src->describe());
        if (src->ndim() == 0 || src->shape[0] != how.population)
            fail(ErrorKind::Message, op + ": the population has the wrong length: " + src->describe());
        if (may_overlap(*src, out)) fail(ErrorKind::Message, op + ": the population overlaps the result");
        check_lane_binding(*src, r.task.lane, op);
        check_device_use(*src, Access::Read, op);
        r.task.uses.push_back(src->use(Access::Read));
        row_bytes = how.population > 0 ? static_cast<std::size_t>(src->nbytes() / how.population) : 0;
    }
    switch (how.kind) {
        case Kind::Uniform: {
            const uint64_t range = static_cast<uint64_t>(how.population);
            r.blocks = kernels::random_integer_blocks(kernels::random_integers_narrow(&range, 1), count);
            break;
        }
        case Kind::Cdf: r.blocks = kernels::random_real_blocks(kernels::RandomDist::Uniform, DType::Float64, count); break;
        case Kind::Sample: r.blocks = kernels::random_sample_blocks(how.population, count, !how.probs.empty()); break;
    }
    const auto kind = how.kind == Kind::Uniform ? provider::RandomOp::Kind::Uniform
                      : how.kind == Kind::Cdf   ? provider::RandomOp::Kind::Cdf
                                                : provider::RandomOp::Kind::Sample;
    auto d = random_op(r.task, kind, s, count, out);
    d->population = how.population;
    d->probs = how.probs;
    d->sorted = how.sorted;
    d->has_src = src != nullptr;
    if (src) d->src = tensor_of(r.task, *src);
    d->row_bytes = static_cast<int64_t>(row_bytes);
    d->name = op;
    r.task.array = std::move(d);
    return r;
}

}  // namespace hrx

namespace hrx::random {

namespace {

// A new result at `home`, its placement refused before anything is
// allocated when the compute lane cannot bind it.
Array result(const creation::Home& home, const Dims& shape, DType dtype, const std::string& op) {
    check_lane_placement(home.placement, home.placement.repr(), Lane::Compute, op);
    return make_array(*home.rt, home.placement, shape, dtype, op);
}

Draw submitted(RandomTask& r, const Array& out) {
    submit(runtime_of(out), r.task);
    return {out, r.blocks};
}

}  // namespace

uint64_t real_into(kernels::RandomDist dist, RandomStream s, double a, double b, const Array& out,
                   const std::string& op) {
    RandomTask r = random_real_task(dist, s, a, b, out, op);
    return submitted(r, out).blocks;
}

Draw real(const creation::Home& home, const Dims& shape, DType dtype, kernels::RandomDist dist, RandomStream s,
          double a, double b, const std::string& op) {
    const Array out = result(home, shape, dtype, op);
    RandomTask r = random_real_task(dist, s, a, b, out, op);
    return submitted(r, out);
}

Draw integers(const creation::Home& home, const Dims& shape, DType dtype, RandomStream s, uint64_t low,
              uint64_t range, const std::string& op) {
    const Array out = result(home, shape, dtype, op);
    RandomTask r = random_integers_task(s, low, range, out, op);
    return submitted(r, out);
}

Draw integers_each(const creation::Home& home, const Dims& shape, DType dtype, RandomStream s,
                   std::vector<uint64_t> low, std::vector<uint64_t> range, const std::string& op) {
    const Array out = result(home, shape, dtype, op);
    RandomTask r = random_integers_each_task(s, std::move(low), std::move(range), out, op);
    return submitted(r, out);
}

Draw choice(const RandomIndices& how, RandomStream s, const Dims& draw, const Array* src, const creation::Home& home,
            const std::string& op) {
    const int64_t count = checked_size(draw, DType::Int64, op);
    Dims out_shape = draw;
    if (src)
        for (int i = 1; i < src->ndim(); ++i) out_shape.push_back(src->shape[static_cast<size_t>(i)]);
    const Array out = result(home, out_shape, src ? src->dtype : DType::Int64, op);
    RandomTask r = random_choice_task(how, s, count, src, out, op);
    return submitted(r, out);
}

}  // namespace hrx::random
