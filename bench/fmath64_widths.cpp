// Checks Note [fmath vector kernels]'s promise for fmath64.h's double kernels: the scalar
// instance (V = double) and the SSE2 (2 lanes), AVX2 (4) and AVX-512 (8) instances give the same
// bits over 2 M inputs (random bit patterns, uniform values, tiny values and the special values).
// sin/cos/tan's fast kernels are only used below 2^20 (fmath.cpp patches NaN and larger lanes with
// the exact reduction), so their NaN, inf and larger lanes may differ and are not counted. Needs an AVX-512 host.
// Run from the repository root:
//   g++ -std=c++20 -O3 -ffp-contract=off -fno-trapping-math -Wno-psabi -I ext/core \
//       bench/fmath64_widths.cpp -o /tmp/fmath64_widths && /tmp/fmath64_widths
#include "kernels/fmath64.h"
#include <cstdio>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>
using namespace hrx::fmath::detail::v;
#define KERNS(X) X(exp64) X(exp2_64) X(expm1_64) X(log64) X(log2_64) X(log10_64) X(log1p64) X(tanh64) X(atan64) X(sin64_fast) X(cos64_fast) X(tan64_fast) \
    X(asin64) X(acos64) X(sinh64) X(cosh64) X(erf64)
// Binary kernels: y[i] = k(x[i], x2[i]).
#define KERNS2(X) X(atan2_64) X(pow64)
#define DEF(k) \
 __attribute__((noinline)) void k##_2(const double* x, double* y, long n) { for (long i = 0; i < n; i += 2) { d2 v; memcpy(&v, x+i, 16); v = k(v); memcpy(y+i,&v,16);} } \
 __attribute__((noinline, target("avx2"))) void k##_4(const double* x, double* y, long n) { for (long i = 0; i < n; i += 4) { d4 v; memcpy(&v, x+i, 32); v = k(v); memcpy(y+i,&v,32);} } \
 __attribute__((noinline, target("avx512f,avx512dq"))) void k##_8(const double* x, double* y, long n) { for (long i = 0; i < n; i += 8) { d8 v; memcpy(&v, x+i, 64); v = k(v); memcpy(y+i,&v,64);} } \
 __attribute__((noinline)) void k##_1(const double* x, double* y, long n) { for (long i = 0; i < n; ++i) y[i] = k(x[i]); }
KERNS(DEF)
#define DEF2(k) \
 __attribute__((noinline)) void k##_2(const double* x, const double* z, double* y, long n) { for (long i = 0; i < n; i += 2) { d2 v, w; memcpy(&v, x+i, 16); memcpy(&w, z+i, 16); v = k(v, w); memcpy(y+i,&v,16);} } \
 __attribute__((noinline, target("avx2"))) void k##_4(const double* x, const double* z, double* y, long n) { for (long i = 0; i < n; i += 4) { d4 v, w; memcpy(&v, x+i, 32); memcpy(&w, z+i, 32); v = k(v, w); memcpy(y+i,&v,32);} } \
 __attribute__((noinline, target("avx512f,avx512dq"))) void k##_8(const double* x, const double* z, double* y, long n) { for (long i = 0; i < n; i += 8) { d8 v, w; memcpy(&v, x+i, 64); memcpy(&w, z+i, 64); v = k(v, w); memcpy(y+i,&v,64);} } \
 __attribute__((noinline)) void k##_1(const double* x, const double* z, double* y, long n) { for (long i = 0; i < n; ++i) y[i] = k(x[i], z[i]); }
KERNS2(DEF2)
int main() {
  long N = 1 << 21; std::vector<double> x(N), a(N), b(N), c(N), d(N);
  std::mt19937_64 g(5);
  for (long i = 0; i < N; ++i) { uint64_t u = g(); double v; memcpy(&v, &u, 8);
    if (i % 2) v = std::uniform_real_distribution<double>(-30, 30)(g);
    if (i % 7 == 3) v = std::uniform_real_distribution<double>(-1e6, 1e6)(g);
    if (i % 11 == 5) v = std::uniform_real_distribution<double>(-1e-8, 1e-8)(g);
    x[i] = v; }
  double sp[] = {0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY, NAN, 5e-324, -5e-324, 2.2250738585072014e-308, 709.782712893384, 709.7827128933841, -745.1332191019411, -745.1332191019412, -708.4, 1e308, -1e308};
  for (int i = 0; i < 17; ++i) x[i] = sp[i];
#define RUN(k) { k##_1(x.data(), a.data(), N); k##_2(x.data(), b.data(), N); k##_4(x.data(), c.data(), N); k##_8(x.data(), d.data(), N); \
   long m = 0; for (long i = 0; i < N; ++i) if ((memcmp(&a[i],&b[i],8) || memcmp(&a[i],&c[i],8) || memcmp(&a[i],&d[i],8)) && !(!(std::fabs(x[i]) < 0x1p20) && std::string(#k).find("_fast") != std::string::npos)) { if (m < 3) printf("  %s %a: %a %a %a %a\n", #k, x[i], a[i], b[i], c[i], d[i]); ++m; } \
   printf("%-12s %ld mismatches of %ld\n", #k, m, N); bad += m; }
  long bad = 0;
  KERNS(RUN)
  // The second operand: the first reversed (every pair of classes meets), integers for pow's signs.
  std::vector<double> x2(x.rbegin(), x.rend());
  for (long i = 0; i < N; i += 5) x2[i] = std::round(x2[i]);
#define RUN2(k) { k##_1(x.data(), x2.data(), a.data(), N); k##_2(x.data(), x2.data(), b.data(), N); k##_4(x.data(), x2.data(), c.data(), N); k##_8(x.data(), x2.data(), d.data(), N); \
   long m = 0; for (long i = 0; i < N; ++i) if (memcmp(&a[i],&b[i],8) || memcmp(&a[i],&c[i],8) || memcmp(&a[i],&d[i],8)) { if (m < 3) printf("  %s %a %a: %a %a %a %a\n", #k, x[i], x2[i], a[i], b[i], c[i], d[i]); ++m; } \
   printf("%-12s %ld mismatches of %ld\n", #k, m, N); bad += m; }
  KERNS2(RUN2)
  return bad != 0;
}
