#include "kernels/scan.h"

#include <algorithm>
#include <string>

#include "errors.h"
#include "kernels/elementwise_impl.h"
#include "kernels/reduce_impl.h"
#include "kernels/pool.h"

namespace hrx::kernels {
namespace {

// The running value takes each element through the reductions' own
// accumulation ops (ew::RAdd/RMul: wrapping integer arithmetic without
// promotion to int, NumPy's complex multiply), one element at a time.
template <class Op, class T>
void scan_with(const T* x, T* y, std::int64_t n) {
    T s = Op::identity();
    for (std::int64_t i = 0; i < n; ++i) y[i] = s = Op::f(s, x[i]);
}

template <class T>
void scan_row(bool product, const T* x, T* y, std::int64_t n) {
    if (product) scan_with<ew::RMul<T>>(x, y, n);
    else scan_with<ew::RAdd<T>>(x, y, n);
}

// float16/bfloat16: the running value is the rounded 16-bit one.
template <float (*Load)(std::uint16_t) noexcept, std::uint16_t (*Store)(float) noexcept>
void scan_row16(bool product, const std::uint16_t* x, std::uint16_t* y, std::int64_t n) {
    float s = product ? 1.0f : 0.0f;
    for (std::int64_t i = 0; i < n; ++i) {
        const std::uint16_t r = Store(product ? s * Load(x[i]) : s + Load(x[i]));
        y[i] = r;
        s = Load(r);
    }
}

void scan_bool(bool product, const std::uint8_t* x, std::uint8_t* y, std::int64_t n) {
    bool s = product;
    for (std::int64_t i = 0; i < n; ++i) y[i] = s = product ? (s && x[i] != 0) : (s || x[i] != 0);
}

void scan_one(DType dt, bool product, const std::uint8_t* x, std::uint8_t* y, std::int64_t n) {
    switch (dt) {
        case DType::Bool: return scan_bool(product, x, y, n);
        case DType::Int8: return scan_row(product, reinterpret_cast<const std::int8_t*>(x), reinterpret_cast<std::int8_t*>(y), n);
        case DType::Int16: return scan_row(product, reinterpret_cast<const std::int16_t*>(x), reinterpret_cast<std::int16_t*>(y), n);
        case DType::Int32: return scan_row(product, reinterpret_cast<const std::int32_t*>(x), reinterpret_cast<std::int32_t*>(y), n);
        case DType::Int64: return scan_row(product, reinterpret_cast<const std::int64_t*>(x), reinterpret_cast<std::int64_t*>(y), n);
        case DType::UInt8: return scan_row(product, x, y, n);
        case DType::UInt16: return scan_row(product, reinterpret_cast<const std::uint16_t*>(x), reinterpret_cast<std::uint16_t*>(y), n);
        case DType::UInt32: return scan_row(product, reinterpret_cast<const std::uint32_t*>(x), reinterpret_cast<std::uint32_t*>(y), n);
        case DType::UInt64: return scan_row(product, reinterpret_cast<const std::uint64_t*>(x), reinterpret_cast<std::uint64_t*>(y), n);
        case DType::Float16:
            return scan_row16<ew::half_to_float, ew::float_to_half>(product, reinterpret_cast<const std::uint16_t*>(x),
                                                                   reinterpret_cast<std::uint16_t*>(y), n);
        case DType::BFloat16:
            return scan_row16<ew::bhalf_to_float, ew::float_to_bhalf>(product, reinterpret_cast<const std::uint16_t*>(x),
                                                                     reinterpret_cast<std::uint16_t*>(y), n);
        case DType::Float32: return scan_row(product, reinterpret_cast<const float*>(x), reinterpret_cast<float*>(y), n);
        case DType::Float64: return scan_row(product, reinterpret_cast<const double*>(x), reinterpret_cast<double*>(y), n);
        case DType::Complex64:
            return scan_row(product, reinterpret_cast<const std::complex<float>*>(x), reinterpret_cast<std::complex<float>*>(y), n);
        case DType::Complex128:
            return scan_row(product, reinterpret_cast<const std::complex<double>*>(x),
                            reinterpret_cast<std::complex<double>*>(y), n);
        default: fail(ErrorKind::Type, std::string("cumulative: unsupported dtype ") + dtype_name(dt));
    }
}

}  // namespace

void scan_rows(DType dt, bool product, const std::uint8_t* src, std::int64_t src_row, std::uint8_t* dst,
               std::int64_t dst_row, std::int64_t rows, std::int64_t n) {
    if (rows <= 0 || n <= 0) return;
    const std::size_t threads = rows > 1 && rows * n >= (std::int64_t{1} << 16) ? pool_threads() : 1;
    const std::size_t blocks = std::min<std::size_t>(threads, static_cast<std::size_t>(rows));
    const std::int64_t per = (rows + static_cast<std::int64_t>(blocks) - 1) / static_cast<std::int64_t>(blocks);
    auto block = [&](std::size_t b) {
        const std::int64_t end = std::min(rows, (static_cast<std::int64_t>(b) + 1) * per);
        for (std::int64_t r = static_cast<std::int64_t>(b) * per; r < end; ++r)
            scan_one(dt, product, src + r * src_row, dst + r * dst_row, n);
    };
    if (blocks <= 1) block(0);
    else pool_run(blocks, block);
}

}  // namespace hrx::kernels
