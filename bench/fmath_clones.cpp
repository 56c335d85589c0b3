// The float kernels of hrx::fmath (kernels/fmath.h) at the widths and
// instruction sets of the array forms' clones: float vectors of 4 lanes with
// the baseline (SSE2), 8 with AVX2, 16 with AVX-512, and the scalar instance
// (the Loom interpreter's). bench/math_accuracy.py builds this with the
// project's flags (-O3 -ffp-contract=off) and compares the four outputs bit
// for bit. Usage: fmath_clones NAME IN OUT (IN: n floats; OUT: 4 n floats,
// scalar then base, AVX2, AVX-512).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/fmath.h"

using namespace hrx::fmath::detail::v;

#define HRX_LIST(X) X(exp) X(expm1) X(log) X(log2) X(log10) X(log1p) X(sin) X(cos) X(tanh)

// sin, cos: the kernels cover |x| < 2^19; the rest (and inf/NaN) is the
// exact reduction, one scalar code path in every clone.
template <class T> static T cover(float (*big)(float), T x, T r) {
    if constexpr (std::is_same_v<T, float>) {
        return (big && !(std::fabs(x) < hrx::fmath::detail::kTrigFast)) ? big(x) : r;
    } else {
        for (unsigned k = 0; k < sizeof(T) / 4; ++k)
            if (big && !(std::fabs(x[k]) < hrx::fmath::detail::kTrigFast)) r[k] = big(x[k]);
        return r;
    }
}
#define HRX_BIG_exp nullptr
#define HRX_BIG_expm1 nullptr
#define HRX_BIG_log nullptr
#define HRX_BIG_log2 nullptr
#define HRX_BIG_log10 nullptr
#define HRX_BIG_log1p nullptr
#define HRX_BIG_tanh nullptr
#define HRX_BIG_sin hrx::fmath::detail::sin_big
#define HRX_BIG_cos hrx::fmath::detail::cos_big

template <class T, class K> [[gnu::always_inline]] inline void map(K kern, const float* x, float* y, std::size_t n) {
    constexpr std::size_t L = sizeof(T) / 4;
    std::size_t i = 0;
    for (; i + L <= n; i += L) {
        T v;
        std::memcpy(&v, x + i, sizeof v);
        const T r = kern(v);
        std::memcpy(y + i, &r, sizeof r);
    }
    for (; i < n; ++i) y[i] = kern(x[i]);
}
#define HRX_CLONES(name)                                                                                         \
    static void name##_scalar(const float* x, float* y, std::size_t n) {                                         \
        for (std::size_t i = 0; i < n; ++i) y[i] = hrx::fmath::name(x[i]);                                       \
    }                                                                                                            \
    [[gnu::flatten]] static void name##_base(const float* x, float* y, std::size_t n) {                          \
        map<f4>([](auto v) { return cover(HRX_BIG_##name, v, name##_ff(v)); }, x, y, n);                         \
    }                                                                                                            \
    __attribute__((target("avx2"), flatten)) static void name##_avx2(const float* x, float* y, std::size_t n) {  \
        map<f8>([](auto v) { return cover(HRX_BIG_##name, v, name##_ff(v)); }, x, y, n);                         \
    }                                                                                                            \
    __attribute__((target("avx512f,avx512dq"), flatten)) static void name##_avx512(const float* x, float* y,     \
                                                                                 std::size_t n) {                \
        map<f16>([](auto v) { return cover(HRX_BIG_##name, v, name##_ff(v)); }, x, y, n);                        \
    }
#pragma GCC diagnostic ignored "-Wpsabi"
HRX_LIST(HRX_CLONES)

int main(int argc, char** argv) {
    if (argc != 4) return 2;
    const std::string name = argv[1];
    std::FILE* f = std::fopen(argv[2], "rb");
    if (!f) return 2;
    std::vector<float> x;
    float buf[4096];
    for (std::size_t got; (got = std::fread(buf, 4, 4096, f)) > 0;) x.insert(x.end(), buf, buf + got);
    std::fclose(f);
    const std::size_t n = x.size();
    std::vector<float> y(4 * n);
    bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
    bool avx2 = __builtin_cpu_supports("avx2");
#define HRX_RUN(nm)                                                   \
    if (name == #nm) {                                                \
        nm##_scalar(x.data(), y.data(), n);                           \
        nm##_base(x.data(), y.data() + n, n);                         \
        if (avx2) nm##_avx2(x.data(), y.data() + 2 * n, n);           \
        else std::memcpy(y.data() + 2 * n, y.data() + n, 4 * n);      \
        if (avx512) nm##_avx512(x.data(), y.data() + 3 * n, n);       \
        else std::memcpy(y.data() + 3 * n, y.data() + n, 4 * n);      \
    } else
    HRX_LIST(HRX_RUN) return 3;  // not a float kernel (tan and the rest compute in double)
    std::FILE* o = std::fopen(argv[3], "wb");
    if (!o) return 2;
    std::fwrite(y.data(), 4, y.size(), o);
    std::fclose(o);
    std::printf("%d %d\n", avx2 ? 1 : 0, avx512 ? 1 : 0);
    return 0;
}
