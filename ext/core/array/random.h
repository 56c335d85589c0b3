// hx.random's array semantics: which kernel fills a result, how many block
// counters a call consumes (the Generator advances by exactly that), the
// compute-lane task that runs it, and the draws that allocate and submit it. Note [Random streams] (kernels/random.h)
// says how values follow from (key, counter).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "array/creation.h"
#include "array/ops.h"
#include "kernels/random.h"

namespace hrx {

// A Generator's position: Philox key and the first unused block counter.
struct RandomStream {
    uint64_t key = 0;
    uint64_t counter = 0;
};

// A task and the block counters it consumes.
struct RandomTask {
    TaskSpec task;
    uint64_t blocks = 0;
};

// out = a + b * x, x uniform [0, 1) or standard normal; out float32/float64,
// C-contiguous (ValueError naming `op` otherwise).
RandomTask random_real_task(kernels::RandomDist dist, RandomStream s, double a, double b, const Array& out,
                            const std::string& op);

// out = low + r, r uniform in [0, range) (range 0: 2^64), wrapped into out's
// integer (or bool) dtype.
RandomTask random_integers_task(RandomStream s, uint64_t low, uint64_t range, const Array& out, const std::string& op);

// The same with a low and a range per value (out.size() of each, broadcast
// by the caller), as NumPy's integers with array bounds.
RandomTask random_integers_each_task(RandomStream s, std::vector<uint64_t> low, std::vector<uint64_t> range,
                                     const Array& out, const std::string& op);

// How choice draws its indices into a population.
struct RandomIndices {
    enum class Kind : uint8_t { Uniform, Cdf, Sample } kind = Kind::Uniform;
    int64_t population = 0;
    // Cdf: the normalised cumulative probabilities; Sample: the weights (empty: equal).
    std::vector<double> probs;
    bool sorted = false;  // Sample: indices in ascending order instead of draw order
};

// count indices drawn as `how` says, written to out (int64, shape of the
// draw) when src is null, else the rows src[index] along axis 0 (src
// C-contiguous; out's shape is the draw's followed by src's trailing axes).
RandomTask random_choice_task(const RandomIndices& how, RandomStream s, int64_t count, const Array* src,
                              const Array& out, const std::string& op);

}  // namespace hrx

// The draws behind hrxarray/random.py's Generator: each allocates its result
// at `home` (refused first, Unsupported naming `op`, when the compute lane
// cannot bind its placement), submits the task above and returns the result
// with the block counters it consumes. Errors name `op`.
namespace hrx::random {

struct Draw {
    Array array;
    uint64_t blocks = 0;
};

// random_real_task into `out` (the caller checked its shape and dtype); returns the blocks.
uint64_t real_into(kernels::RandomDist dist, RandomStream s, double a, double b, const Array& out,
                   const std::string& op);
Draw real(const creation::Home& home, const Dims& shape, DType dtype, kernels::RandomDist dist, RandomStream s,
          double a, double b, const std::string& op);
Draw integers(const creation::Home& home, const Dims& shape, DType dtype, RandomStream s, uint64_t low,
              uint64_t range, const std::string& op);
Draw integers_each(const creation::Home& home, const Dims& shape, DType dtype, RandomStream s,
                   std::vector<uint64_t> low, std::vector<uint64_t> range, const std::string& op);
// `count` = the size of `draw` indices; the result has draw's shape followed
// by src's trailing axes (src's dtype; int64 indices without src).
Draw choice(const RandomIndices& how, RandomStream s, const Dims& draw, const Array* src, const creation::Home& home,
            const std::string& op);

}  // namespace hrx::random
