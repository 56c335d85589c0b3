// DEV STUB (not committed): slow generic implementation of elementwise.h for
// testing the array layer until the real kernels land.
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "kernels/bf16.h"
#include "kernels/elementwise.h"

namespace hrx::kernels {
namespace {
using D = DType;
double load(const uint8_t* p, DType t) {
    switch (t) {
        case D::Bool: return *p != 0;
        case D::Int8: return *reinterpret_cast<const int8_t*>(p);
        case D::Int16: return *reinterpret_cast<const int16_t*>(p);
        case D::Int32: return *reinterpret_cast<const int32_t*>(p);
        case D::Int64: return static_cast<double>(*reinterpret_cast<const int64_t*>(p));
        case D::UInt8: return *p;
        case D::UInt16: return *reinterpret_cast<const uint16_t*>(p);
        case D::UInt32: return *reinterpret_cast<const uint32_t*>(p);
        case D::UInt64: return static_cast<double>(*reinterpret_cast<const uint64_t*>(p));
        case D::Float16: return static_cast<double>(*reinterpret_cast<const _Float16*>(p));
        case D::BFloat16: {
            uint32_t b = bf16_to_f32_bits(*reinterpret_cast<const uint16_t*>(p));
            float f;
            std::memcpy(&f, &b, 4);
            return f;
        }
        case D::Float32: return *reinterpret_cast<const float*>(p);
        case D::Float64: return *reinterpret_cast<const double*>(p);
        default: return 0;
    }
}
template <typename T>
void put(uint8_t* p, T v) { std::memcpy(p, &v, sizeof v); }
int64_t toi(double v) { return std::isfinite(v) ? static_cast<int64_t>(std::fmax(std::fmin(v, 9.2e18), -9.2e18)) : 0; }
void store(uint8_t* p, DType t, double v) {
    switch (t) {
        case D::Bool: *p = v != 0; break;
        case D::Int8: put<int8_t>(p, static_cast<int8_t>(toi(v))); break;
        case D::Int16: put<int16_t>(p, static_cast<int16_t>(toi(v))); break;
        case D::Int32: put<int32_t>(p, static_cast<int32_t>(toi(v))); break;
        case D::Int64: put<int64_t>(p, toi(v)); break;
        case D::UInt8: put<uint8_t>(p, static_cast<uint8_t>(toi(v))); break;
        case D::UInt16: put<uint16_t>(p, static_cast<uint16_t>(toi(v))); break;
        case D::UInt32: put<uint32_t>(p, static_cast<uint32_t>(toi(v))); break;
        case D::UInt64: put<uint64_t>(p, static_cast<uint64_t>(toi(v))); break;
        case D::Float16: put<_Float16>(p, static_cast<_Float16>(v)); break;
        case D::BFloat16: {
            float f = static_cast<float>(v);
            uint32_t b;
            std::memcpy(&b, &f, 4);
            put<uint16_t>(p, f32_bits_to_bf16(b));
            break;
        }
        case D::Float32: put<float>(p, static_cast<float>(v)); break;
        case D::Float64: put<double>(p, v); break;
        default: break;
    }
}
double apply(Ufunc op, double a, double b, double c) {
    switch (op) {
        case Ufunc::Add: return a + b;
        case Ufunc::Subtract: return a - b;
        case Ufunc::Multiply: return a * b;
        case Ufunc::Divide: return a / b;
        case Ufunc::FloorDivide: return b == 0 ? 0 : std::floor(a / b);
        case Ufunc::Remainder: return b == 0 ? 0 : a - std::floor(a / b) * b;
        case Ufunc::Power: if (b < 0 && a == std::floor(a)) throw std::domain_error("Integers to negative integer powers are not allowed."); return std::pow(a, b);
        case Ufunc::Maximum: return std::isnan(a) || std::isnan(b) ? NAN : std::fmax(a, b);
        case Ufunc::Minimum: return std::isnan(a) || std::isnan(b) ? NAN : std::fmin(a, b);
        case Ufunc::Equal: return a == b;
        case Ufunc::NotEqual: return a != b;
        case Ufunc::Less: return a < b;
        case Ufunc::LessEqual: return a <= b;
        case Ufunc::Greater: return a > b;
        case Ufunc::GreaterEqual: return a >= b;
        case Ufunc::LogicalAnd: return a != 0 && b != 0;
        case Ufunc::LogicalOr: return a != 0 || b != 0;
        case Ufunc::LogicalXor: return (a != 0) != (b != 0);
        case Ufunc::BitwiseAnd: return static_cast<double>(toi(a) & toi(b));
        case Ufunc::BitwiseOr: return static_cast<double>(toi(a) | toi(b));
        case Ufunc::BitwiseXor: return static_cast<double>(toi(a) ^ toi(b));
        case Ufunc::LeftShift: return static_cast<double>(toi(a) << toi(b));
        case Ufunc::RightShift: return static_cast<double>(toi(a) >> toi(b));
        case Ufunc::Negative: return -a;
        case Ufunc::Positive: return a;
        case Ufunc::Absolute: return std::fabs(a);
        case Ufunc::Sign: return a > 0 ? 1 : a < 0 ? -1 : a;
        case Ufunc::Exp: return std::exp(a);
        case Ufunc::Log: return std::log(a);
        case Ufunc::Log1p: return std::log1p(a);
        case Ufunc::Expm1: return std::expm1(a);
        case Ufunc::Sqrt: return std::sqrt(a);
        case Ufunc::Square: return a * a;
        case Ufunc::Sin: return std::sin(a);
        case Ufunc::Cos: return std::cos(a);
        case Ufunc::Tan: return std::tan(a);
        case Ufunc::Tanh: return std::tanh(a);
        case Ufunc::Floor: return std::floor(a);
        case Ufunc::Ceil: return std::ceil(a);
        case Ufunc::Trunc: return std::trunc(a);
        case Ufunc::Rint: return std::nearbyint(a);
        case Ufunc::LogicalNot: return a == 0;
        case Ufunc::Invert: return static_cast<double>(~toi(a));
        case Ufunc::Isnan: return std::isnan(a);
        case Ufunc::Isinf: return std::isinf(a);
        case Ufunc::Isfinite: return std::isfinite(a);
        case Ufunc::Where: return a != 0 ? b : c;
        default: return 0;
    }
}
const char* kNames[] = {"add","subtract","multiply","divide","floor_divide","remainder","power","maximum","minimum","equal","not_equal","less","less_equal","greater","greater_equal","logical_and","logical_or","logical_xor","bitwise_and","bitwise_or","bitwise_xor","left_shift","right_shift","negative","positive","absolute","sign","exp","log","log1p","expm1","sqrt","square","sin","cos","tan","tanh","floor","ceil","trunc","rint","logical_not","invert","isnan","isinf","isfinite","where"};
std::vector<UfuncLoop> g_loops[kUfuncCount];
UfuncInfo g_info[kUfuncCount];
bool g_init = [] {
    for (int i = 0; i < kUfuncCount; ++i) {
        Ufunc op = static_cast<Ufunc>(i);
        int nin = i <= static_cast<int>(Ufunc::RightShift) ? 2 : 1;
        if (op == Ufunc::Where) nin = 3;
        bool cmp = (op >= Ufunc::Equal && op <= Ufunc::LogicalXor) || op == Ufunc::LogicalNot || op >= Ufunc::Isnan;
        for (int d = 0; d < kNumericDTypeCount; ++d) {
            DType t = static_cast<DType>(d);
            if (nin == 3) { g_loops[i].push_back({{D::Bool, t, t}, t}); continue; }
            g_loops[i].push_back({{t, t, t}, cmp && op != Ufunc::Where ? D::Bool : t});
        }
        Identity id = Identity::None;
        if (op == Ufunc::Add || op == Ufunc::BitwiseOr || op == Ufunc::BitwiseXor) id = Identity::Zero;
        if (op == Ufunc::Multiply) id = Identity::One;
        if (op == Ufunc::LogicalAnd) id = Identity::True;
        if (op == Ufunc::LogicalOr || op == Ufunc::LogicalXor) id = Identity::False;
        if (op == Ufunc::BitwiseAnd) id = Identity::AllOnes;
        bool red = op == Ufunc::Add || op == Ufunc::Multiply || op == Ufunc::Maximum || op == Ufunc::Minimum || (op >= Ufunc::LogicalAnd && op <= Ufunc::BitwiseXor);
        g_info[i] = {kNames[i], static_cast<uint8_t>(nin), 1, id, red, g_loops[i].data(), static_cast<uint8_t>(g_loops[i].size())};
    }
    return true;
}();
template <typename F>
void walk(int ndim, const int64_t* shape, F&& f) {
    std::vector<int64_t> idx(ndim, 0);
    for (int i = 0; i < ndim; ++i) if (shape[i] == 0) return;
    for (;;) {
        f(idx);
        int d = ndim;
        while (d > 0) { --d; if (++idx[d] < shape[d]) break; idx[d] = 0; if (d == 0) return; }
        if (ndim == 0) return;
    }
}
uint8_t* at(const StridedArg& a, const std::vector<int64_t>& idx) {
    uint8_t* p = a.data;
    for (size_t i = 0; i < idx.size(); ++i) p += idx[i] * a.strides[i];
    return p;
}
}  // namespace
const UfuncInfo& ufunc_info(Ufunc op) noexcept { return g_info[static_cast<int>(op)]; }
bool ufunc_from_name(std::string_view name, Ufunc* out) noexcept {
    for (int i = 0; i < kUfuncCount; ++i) if (name == kNames[i]) { *out = static_cast<Ufunc>(i); return true; }
    return false;
}
const UfuncLoop* resolve_loop(Ufunc op, const DType* in) noexcept {
    const UfuncInfo& info = ufunc_info(op);
    DType p = info.nin == 3 ? promote_types(in[1], in[2]) : in[0];
    if (info.nin == 2) p = promote_types(in[0], in[1]);
    if (op == Ufunc::Divide && !dtype_is_float(p)) p = D::Float64;
    for (int i = 0; i < info.nloops; ++i) if (info.loops[i].in[info.nin == 3 ? 1 : 0] == p) return &info.loops[i];
    return nullptr;
}
void ufunc_run(Ufunc op, const UfuncLoop& loop, int ndim, const int64_t* shape, const StridedArg* in, const StridedArg& out, const StridedArg* where) {
    const int nin = ufunc_info(op).nin;
    walk(ndim, shape, [&](const std::vector<int64_t>& idx) {
        if (where && !*at(*where, idx)) return;
        double v[3] = {0, 0, 0};
        for (int i = 0; i < nin; ++i) { uint8_t tmp[8]; store(tmp, loop.in[i], load(at(in[i], idx), in[i].dtype)); v[i] = load(tmp, loop.in[i]); }
        uint8_t r[8];
        store(r, loop.out, apply(op, v[0], v[1], v[2]));
        store(at(out, idx), out.dtype, load(r, loop.out));
    });
}
void copy_cast(int ndim, const int64_t* shape, const StridedArg& src, const StridedArg& dst) {
    walk(ndim, shape, [&](const std::vector<int64_t>& idx) {
        if (src.dtype == dst.dtype) { std::memcpy(at(dst, idx), at(src, idx), dtype_itemsize(src.dtype)); return; }
        store(at(dst, idx), dst.dtype, load(at(src, idx), src.dtype));
    });
}
void reduce_run(Ufunc op, DType acc, int ndim, const int64_t* shape, const bool* reduce, const StridedArg& in, const StridedArg& out, double divisor) {
    std::vector<char> started;
    // first pass: init outputs
    std::vector<int64_t> oshape(shape, shape + ndim);
    for (int i = 0; i < ndim; ++i) if (reduce[i]) oshape[i] = 1;
    std::vector<double> accs; std::vector<char> seen;
    auto oidx = [&](const std::vector<int64_t>& idx) { int64_t k = 0; for (int i = 0; i < ndim; ++i) k = k * oshape[i] + (reduce[i] ? 0 : idx[i]); return k; };
    int64_t n = 1; for (auto s : oshape) n *= s;
    accs.assign(n, 0); seen.assign(n, 0);
    Identity id = ufunc_info(op).identity;
    double init = id == Identity::One || id == Identity::True ? 1 : id == Identity::AllOnes ? -1 : 0;
    walk(ndim, shape, [&](const std::vector<int64_t>& idx) {
        int64_t k = oidx(idx); double x = load(at(in, idx), in.dtype);
        if (!seen[k]) { seen[k] = 1; accs[k] = id == Identity::None ? x : apply(op, init, x, 0); return; }
        accs[k] = apply(op, accs[k], x, 0);
    });
    walk(ndim, oshape.data(), [&](const std::vector<int64_t>& idx) {
        int64_t k = oidx(idx); double v = seen[k] ? accs[k] : init;
        if (divisor != 0) v /= divisor;
        store(at(out, idx), out.dtype, v);
    });
    (void)acc;
}
void arg_reduce_run(bool max, int ndim, const int64_t* shape, int axis, const StridedArg& in, const StridedArg& out) {
    std::vector<int64_t> oshape(shape, shape + ndim);
    if (axis < 0) for (auto& s : oshape) s = 1; else oshape[axis] = 1;
    walk(ndim, oshape.data(), [&](const std::vector<int64_t>& o) {
        int64_t best = 0; double bv = 0; bool first = true; int64_t pos = 0;
        walk(ndim, shape, [&](const std::vector<int64_t>& idx) {
            for (int i = 0; i < ndim; ++i) if ((axis < 0 ? false : i != axis) && idx[i] != o[i]) return;
            double x = load(at(in, idx), in.dtype);
            int64_t lin = axis < 0 ? pos : idx[axis];
            ++pos;
            if (first || (!std::isnan(bv) && (std::isnan(x) || (max ? x > bv : x < bv)))) { best = lin; bv = x; first = false; }
        });
        put<int64_t>(at(out, o), best);
    });
}
}  // namespace hrx::kernels
namespace hrx::kernels {
void matmul_typed(hrx::DType in, hrx::DType out, const void* a, const void* b, void* c, std::size_t batch,
                  std::size_t m, std::size_t k, std::size_t n, const std::int64_t* ia, const std::int64_t* ib) noexcept {
    const int ia_ = dtype_itemsize(in), oa = dtype_itemsize(out);
    for (size_t t = 0; t < batch; ++t) {
        const uint8_t* A = static_cast<const uint8_t*>(a) + (ia ? ia[t] : t) * m * k * ia_;
        const uint8_t* B = static_cast<const uint8_t*>(b) + (ib ? ib[t] : t) * k * n * ia_;
        uint8_t* C = static_cast<uint8_t*>(c) + t * m * n * oa;
        for (size_t i = 0; i < m; ++i) for (size_t j = 0; j < n; ++j) {
            double s = 0;
            for (size_t q = 0; q < k; ++q) s += load(A + (i * k + q) * ia_, in) * load(B + (q * n + j) * ia_, in);
            store(C + (i * n + j) * oa, out, s);
        }
    }
}
}
