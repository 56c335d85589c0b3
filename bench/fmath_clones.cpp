// The float kernels of hrx::fmath (kernels/fmath.h) at the widths and
// instruction sets of the array forms' clones: for the kernels in float,
// float vectors of 4 lanes with the baseline (SSE2), 8 with AVX2, 16 with
// AVX-512; for those in double (sin, cos, tan), 2, 4 and 8 lanes; and the
// scalar functions (the Loom interpreter's); and the float kernels on
// double kernels (asin, acos, sinh, cosh, erf, tanh, atan; atan2 and pow of
// two inputs) at 2, 4 and 8 lanes. bench/math_accuracy.py builds this with the
// project's flags (-O3 -ffp-contract=off) and compares the four outputs bit
// for bit. Usage: fmath_clones NAME IN OUT (IN: n floats; OUT: 4 n floats,
// scalar then base, AVX2, AVX-512).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/fmath.h"
#include "kernels/fmath64.h"

using namespace hrx::fmath::detail::v;

// Float kernels (whole registers of floats) and double kernels (floats widened, 2, 4 or 8 lanes).
#define HRX_FF_LIST(X) X(exp) X(expm1) X(log) X(log2) X(log10) X(log1p)
#define HRX_FD_LIST(X) X(sin, hrx::fmath::detail::sin_big) X(cos, hrx::fmath::detail::cos_big) X(tan, hrx::fmath::tan_big)
// Float kernels on fmath64.h's double kernels (asin_f and so on: every lane, no fix-up), and
// the binary ones (IN holds a, then b).
#define HRX_FV_LIST(X) X(asin) X(acos) X(sinh) X(cosh) X(erf) X(tanh) X(atan)
#define HRX_FV2_LIST(X) X(atan2) X(pow)

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
// sin, cos, tan: the kernels cover |x| < 2^19; the rest (and inf/NaN) is the
// exact reduction, one scalar code path in every clone.
template <class T> [[gnu::always_inline]] inline T cover(float (*big)(float), T x, T r) {
    if constexpr (std::is_same_v<T, float>) {
        return !(std::fabs(x) < hrx::fmath::detail::kTrigFast) ? big(x) : r;
    } else {
        for (unsigned k = 0; k < sizeof(T) / 4; ++k)
            if (!(std::fabs(x[k]) < hrx::fmath::detail::kTrigFast)) r[k] = big(x[k]);
        return r;
    }
}
#pragma GCC diagnostic ignored "-Wpsabi"
#define HRX_SCALAR(name) \
    static void name##_scalar(const float* x, float* y, std::size_t n) { for (std::size_t i = 0; i < n; ++i) y[i] = hrx::fmath::name(x[i]); }
#define HRX_FF(name)                                                                                              \
    HRX_SCALAR(name)                                                                                              \
    [[gnu::flatten]] static void name##_base(const float* x, float* y, std::size_t n) {                           \
        map<f4>([](auto v) __attribute__((always_inline)) { return name##_ff(v); }, x, y, n);                                                    \
    }                                                                                                             \
    __attribute__((target("avx2"), flatten)) static void name##_avx2(const float* x, float* y, std::size_t n) {   \
        map<f8>([](auto v) __attribute__((always_inline)) { return name##_ff(v); }, x, y, n);                                                    \
    }                                                                                                             \
    __attribute__((target("avx512f,avx512dq"), flatten)) static void name##_avx512(const float* x, float* y,      \
                                                                                 std::size_t n) {                 \
        map<f16>([](auto v) __attribute__((always_inline)) { return name##_ff(v); }, x, y, n);                                                   \
    }
// The tail (a float) takes the scalar function.
#define HRX_FD_KERN(name, big, V)                                                   \
    [](auto v) __attribute__((always_inline)) {     \
        if constexpr (std::is_same_v<decltype(v), float>) return hrx::fmath::name(v); \
        else return cover(big, v, name##_fast<V>(v));                               \
    }
#define HRX_FD(name, big)                                                                                         \
    HRX_SCALAR(name)                                                                                              \
    [[gnu::flatten]] static void name##_base(const float* x, float* y, std::size_t n) {                           \
        map<f2>(HRX_FD_KERN(name, big, d2), x, y, n);                               \
    }                                                                                                             \
    __attribute__((target("avx2"), flatten)) static void name##_avx2(const float* x, float* y, std::size_t n) {   \
        map<f4>(HRX_FD_KERN(name, big, d4), x, y, n);                               \
    }                                                                                                             \
    __attribute__((target("avx512f,avx512dq"), flatten)) static void name##_avx512(const float* x, float* y,      \
                                                                                 std::size_t n) {                 \
        map<f8>(HRX_FD_KERN(name, big, d8), x, y, n);                               \
    }
#define HRX_FV_KERN(name, V)                                                        \
    [](auto v) __attribute__((always_inline)) {     \
        if constexpr (std::is_same_v<decltype(v), float>) return hrx::fmath::name(v); \
        else return name##_f<V>(v);                                                 \
    }
#define HRX_FV(name)                                                                                              \
    HRX_SCALAR(name)                                                                                              \
    [[gnu::flatten]] static void name##_base(const float* x, float* y, std::size_t n) {                           \
        map<f2>(HRX_FV_KERN(name, d2), x, y, n);                                                                  \
    }                                                                                                             \
    __attribute__((target("avx2"), flatten)) static void name##_avx2(const float* x, float* y, std::size_t n) {   \
        map<f4>(HRX_FV_KERN(name, d4), x, y, n);                                                                  \
    }                                                                                                             \
    __attribute__((target("avx512f,avx512dq"), flatten)) static void name##_avx512(const float* x, float* y,      \
                                                                                 std::size_t n) {                 \
        map<f8>(HRX_FV_KERN(name, d8), x, y, n);                                                                  \
    }
// Binary: x holds a then b (n each).
template <class T, class V, class K> [[gnu::always_inline]] inline void map2(K kern, const float* x, float* y, std::size_t n) {
    constexpr std::size_t L = sizeof(T) / 4;
    std::size_t i = 0;
    for (; i + L <= n; i += L) {
        T a, b;
        std::memcpy(&a, x + i, sizeof a);
        std::memcpy(&b, x + n + i, sizeof b);
        const T r = kern(a, b);
        std::memcpy(y + i, &r, sizeof r);
    }
    for (; i < n; ++i) y[i] = kern(x[i], x[n + i]);
}
#define HRX_FV2_KERN(name, V)                                                                \
    [](auto a, auto b) __attribute__((always_inline)) {     \
        if constexpr (std::is_same_v<decltype(a), float>) return hrx::fmath::name(a, b);       \
        else return name##_f<V>(a, b);                                                       \
    }
#define HRX_FV2(name)                                                                                             \
    static void name##_scalar(const float* x, float* y, std::size_t n) {                                          \
        for (std::size_t i = 0; i < n; ++i) y[i] = hrx::fmath::name(x[i], x[n + i]);                              \
    }                                                                                                             \
    [[gnu::flatten]] static void name##_base(const float* x, float* y, std::size_t n) {                           \
        map2<f2, d2>(HRX_FV2_KERN(name, d2), x, y, n);                                                            \
    }                                                                                                             \
    __attribute__((target("avx2"), flatten)) static void name##_avx2(const float* x, float* y, std::size_t n) {   \
        map2<f4, d4>(HRX_FV2_KERN(name, d4), x, y, n);                                                            \
    }                                                                                                             \
    __attribute__((target("avx512f,avx512dq"), flatten)) static void name##_avx512(const float* x, float* y,      \
                                                                                 std::size_t n) {                 \
        map2<f8, d8>(HRX_FV2_KERN(name, d8), x, y, n);                                                            \
    }
HRX_FF_LIST(HRX_FF)
HRX_FD_LIST(HRX_FD)
HRX_FV_LIST(HRX_FV)
HRX_FV2_LIST(HRX_FV2)

int main(int argc, char** argv) {
    if (argc != 4) return 2;
    const std::string name = argv[1];
    std::FILE* f = std::fopen(argv[2], "rb");
    if (!f) return 2;
    std::vector<float> x;
    float buf[4096];
    for (std::size_t got; (got = std::fread(buf, 4, 4096, f)) > 0;) x.insert(x.end(), buf, buf + got);
    std::fclose(f);
    bool binary = false;
#define HRX_IS2(nm) binary = binary || name == #nm;
    HRX_FV2_LIST(HRX_IS2)
    const std::size_t n = binary ? x.size() / 2 : x.size();
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
#define HRX_RUN2(nm, big) HRX_RUN(nm)
    HRX_FF_LIST(HRX_RUN) HRX_FD_LIST(HRX_RUN2) HRX_FV_LIST(HRX_RUN) HRX_FV2_LIST(HRX_RUN) return 3;  // a function the harness does not hold
    std::FILE* o = std::fopen(argv[3], "wb");
    if (!o) return 2;
    std::fwrite(y.data(), 4, y.size(), o);
    std::fclose(o);
    std::printf("%d %d\n", avx2 ? 1 : 0, avx512 ? 1 : 0);
    return 0;
}
