// Counter-based random numbers for the emulated devices (hx.random).
//
// Note [Random streams]: every value is a pure function of (key, counter)
// through Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random
// numbers: as easy as 1, 2, 3", SC'11), so a call splits over the thread
// pool in any way and gives the same bits on every host and thread count.
// A call owns the 64-bit block counters [counter, counter + blocks): block j
// is Philox of the 128-bit counter (j, attempt) with attempt 0 first; methods
// that reject (integers, normals) draw their further candidates for the same
// slot from attempts 1, 2, ... so no other slot's blocks are touched.
//   - random (float64): two values per block, the top 53 bits of the 64-bit
//     words (w0<<32|w1) and (w2<<32|w3), times 2^-53; float32: four values
//     per block, each word's top 24 bits times 2^-24 (NumPy's recipe).
//   - normal: Marsaglia's polar method, one pair of values per slot (u, v
//     from the block's two 64-bit words, rejected while u²+v² is 0 or >= 1),
//     with a logarithm of our own (frexp and an atanh series) so that only
//     +, -, *, / and sqrt are used: IEEE-exact operations, no contraction
//     (-ffp-contract=off), hence the same bits everywhere.
//   - integers: Lemire's multiply-and-reject, unbiased for every range:
//     ranges up to 2^32 give four values a slot (value i takes word i % 4 of
//     its slot's attempts 0, 1, ... until one is accepted), wider ranges two
//     (the 64-bit halves).
//   - sampling without replacement: one 64-bit key per population element
//     (Efraimidis-Spirakis keys -log(u)/w when weighted); the k smallest by
//     (key, index), a total order, so the outcome does not depend on the
//     sort algorithm. Small unweighted samples (k <= n/16) use Floyd's
//     algorithm instead (k draws, then k keys for the order).
// tests/test_random.py holds a plain-Python model of all of this, bit-exact.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/dtype.h"

namespace hrx::kernels {

struct Philox4x32 {
    uint32_t v[4];
};
// One Philox4x32-10 block: counter words c[0..3], key words k0, k1.
Philox4x32 philox4x32_10(const uint32_t c[4], uint32_t k0, uint32_t k1) noexcept;

// out = a + b * x for n values x of uniform [0, 1) (Uniform) or standard
// normal (Normal); dtype Float32 or Float64 (`out` C-contiguous).
enum class RandomDist : uint8_t { Uniform, Normal };
void random_real(RandomDist dist, DType dtype, uint64_t key, uint64_t counter, int64_t n, double a, double b,
                 void* out) noexcept;
// The block counters random_real uses for n values.
uint64_t random_real_blocks(RandomDist dist, DType dtype, int64_t n) noexcept;

// n integers low + r with r uniform in [0, range) (range 0: all 2^64), wrapped
// into `dtype` (any integer dtype or Bool).
void random_integers(DType dtype, uint64_t key, uint64_t counter, int64_t n, uint64_t low, uint64_t range,
                     void* out) noexcept;
// As random_integers with a range (and low) per value; the values take four a
// block when every range is narrow (0 < range <= 2^32), else two.
void random_integers_each(DType dtype, uint64_t key, uint64_t counter, int64_t n, const uint64_t* low,
                          const uint64_t* range, void* out) noexcept;
// Whether every one of the n ranges is narrow (0 < range <= 2^32).
bool random_integers_narrow(const uint64_t* range, int64_t n) noexcept;
// The block counters of n values: four a block for narrow ranges, two for wide ones.
uint64_t random_integer_blocks(bool narrow, int64_t n) noexcept;

// n indices into a population of cdf_len items drawn with the normalised
// cumulative probabilities `cdf` (cdf[cdf_len - 1] == 1): the first i with
// cdf[i] > u (NumPy's searchsorted side="right"), u uniform float64 as
// random_real draws it (ceil(n/2) blocks).
void random_choice_cdf(uint64_t key, uint64_t counter, int64_t n, const double* cdf, int64_t cdf_len,
                       int64_t* out) noexcept;

// k distinct indices of a population of n, in random order (in index order
// when `sorted`). Without weights and with k <= n / 16: Floyd's algorithm (k
// draws, then a 64-bit key each for the order; 2k blocks); otherwise one key
// per element (n blocks) and the k smallest. weights (n entries, may be null)
// make it weighted sampling without replacement; zero weights are never
// drawn (the caller checks that k nonzero weights exist). Returns false when
// memory for the keys could not be had.
bool random_sample(uint64_t key, uint64_t counter, int64_t n, int64_t k, const double* weights, bool sorted,
                   int64_t* out) noexcept;
// The block counters random_sample uses.
uint64_t random_sample_blocks(int64_t n, int64_t k, bool weighted) noexcept;

// dst row r = src row idx[r] (rows of row_bytes bytes), r < k.
void gather_rows(const uint8_t* src, std::size_t row_bytes, const int64_t* idx, int64_t k, uint8_t* dst) noexcept;

// The natural logarithm the normal and weighted draws use, for x > 0 finite
// (exposed for tests; see Note [Random streams]).
double random_log(double x) noexcept;

}  // namespace hrx::kernels
