#include "kernels/set.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/pool.h"

namespace hrx::kernels {
namespace {

constexpr std::int64_t kChunk = std::int64_t{1} << 16;

template <class T>
struct Cplx {
    T re, im;
};

template <class T>
bool is_nan(const T& v) {
    if constexpr (std::is_floating_point_v<T>)
        return std::isnan(v);
    else if constexpr (std::is_integral_v<T>)
        return false;
    else
        return std::isnan(v.re) || std::isnan(v.im);
}

// A strict weak order whose equivalence is ==, NaNs removed beforehand:
// numbers by value, complex numbers by (real, imaginary).
template <class T>
bool before(const T& a, const T& b) {
    if constexpr (std::is_arithmetic_v<T>)
        return a < b;
    else
        return a.re < b.re || (a.re == b.re && a.im < b.im);
}

template <class T>
void isin_t(const std::uint8_t* xb, std::int64_t n, const std::uint8_t* tb, std::int64_t m, bool invert,
            std::uint8_t* out) {
    std::vector<T> table;
    table.reserve(static_cast<std::size_t>(m));
    for (std::int64_t j = 0; j < m; ++j) {
        T v;
        std::memcpy(&v, tb + j * sizeof(T), sizeof(T));
        if (!is_nan(v)) table.push_back(v);
    }
    std::sort(table.begin(), table.end(), before<T>);
    const auto items = static_cast<std::size_t>((n + kChunk - 1) / kChunk);
    pool_run(items, [&](std::size_t it) {
        const std::int64_t i0 = static_cast<std::int64_t>(it) * kChunk, i1 = std::min(n, i0 + kChunk);
        for (std::int64_t i = i0; i < i1; ++i) {
            T v;
            std::memcpy(&v, xb + i * sizeof(T), sizeof(T));
            const bool found = !is_nan(v) && std::binary_search(table.begin(), table.end(), v, before<T>);
            out[i] = static_cast<std::uint8_t>(found != invert);
        }
    });
}

}  // namespace

void isin(DType dt, const std::uint8_t* x, std::int64_t n, const std::uint8_t* table, std::int64_t m, bool invert,
          std::uint8_t* out) {
    switch (dt) {
        case DType::Bool:
        case DType::UInt8: return isin_t<std::uint8_t>(x, n, table, m, invert, out);
        case DType::Int8: return isin_t<std::int8_t>(x, n, table, m, invert, out);
        case DType::Int16: return isin_t<std::int16_t>(x, n, table, m, invert, out);
        case DType::Int32: return isin_t<std::int32_t>(x, n, table, m, invert, out);
        case DType::Int64: return isin_t<std::int64_t>(x, n, table, m, invert, out);
        case DType::UInt16: return isin_t<std::uint16_t>(x, n, table, m, invert, out);
        case DType::UInt32: return isin_t<std::uint32_t>(x, n, table, m, invert, out);
        case DType::UInt64: return isin_t<std::uint64_t>(x, n, table, m, invert, out);
        case DType::Float32: return isin_t<float>(x, n, table, m, invert, out);
        case DType::Complex64: return isin_t<Cplx<float>>(x, n, table, m, invert, out);
        case DType::Complex128: return isin_t<Cplx<double>>(x, n, table, m, invert, out);
        default: return isin_t<double>(x, n, table, m, invert, out);
    }
}

}  // namespace hrx::kernels
