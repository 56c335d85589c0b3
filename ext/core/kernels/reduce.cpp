// reduce_run (setup; the engine is reduce_impl.h) and arg_reduce_run.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/elementwise.h"
#include "kernels/reduce_impl.h"

namespace hrx::kernels {

namespace ew {

void reduce_finish(const ReduceCtx& c, const char* vals, std::int64_t n, char* out, std::int64_t os) noexcept {
    constexpr std::int64_t kBatch = 256;
    alignas(64) char a[kBatch * 16], b[kBatch * 16];
    const std::int64_t szc = dtype_itemsize(c.ct), sza = dtype_itemsize(c.acc);
    for (std::int64_t k = 0; k < n; k += kBatch) {
        const std::int64_t cnt = std::min(kBatch, n - k);
        const char* cur = vals + k * szc;
        DType t = c.ct;
        if (c.acc != c.ct) {
            cast_fn(c.ct, c.acc)(cur, szc, a, sza, cnt);
            cur = a;
            t = c.acc;
        }
        if (c.divisor != 0 && dtype_is_complex(t)) {
            // NumPy's mean of complex numbers is true_divide by the count as a
            // complex number of the same dtype (Smith's division).
            const std::int64_t szt = dtype_itemsize(t);
            auto quotients = [&](auto z) {
                using C = decltype(z);
                using P = typename C::value_type;
                const C d(static_cast<P>(c.divisor), P(0));
                for (std::int64_t i = 0; i < cnt; ++i) {
                    C v;
                    std::memcpy(&v, cur + i * szt, sizeof v);
                    v = cdiv(v, d);
                    std::memcpy(a + i * szt, &v, sizeof v);
                }
            };
            if (t == DType::Complex64) quotients(std::complex<float>());
            else quotients(std::complex<double>());
            cur = a;
        } else if (c.divisor != 0) {
            // NumPy's mean divides the sum (held in the accumulation dtype)
            // in float64 and stores the quotient back in that dtype.
            cast_fn(t, DType::Float64)(cur, dtype_itemsize(t), b, 8, cnt);
            double* q = reinterpret_cast<double*>(b);
            for (std::int64_t i = 0; i < cnt; ++i) q[i] /= c.divisor;
            cast_fn(DType::Float64, c.acc)(b, 8, a, sza, cnt);
            cur = a;
            t = c.acc;
        }
        cast_fn(t, c.out_dtype)(cur, dtype_itemsize(t), out + k * os, os, cnt);
    }
}

}  // namespace ew

namespace {

bool numeric(DType t) noexcept { return static_cast<int>(t) < kNumericDTypeCount; }

bool is_bitwise(Ufunc op) noexcept {
    return op == Ufunc::BitwiseAnd || op == Ufunc::BitwiseOr || op == Ufunc::BitwiseXor;
}

// The input -> compute type conversion of Note [Compute types], as for a
// ufunc input. Bool inputs are read through uint8 -> bool, so that any
// nonzero byte counts as true.
void plan_input(ew::ReduceCtx& c, DType from) noexcept {
    c.c1 = c.c2 = nullptr;
    c.sz1 = dtype_itemsize(c.ct);
    c.direct = from == c.ct && c.acc == c.ct && c.ct != DType::Bool;
    if (c.direct) return;
    if (c.acc == c.ct || from == c.acc || can_cast(from, c.acc, Casting::Safe)) {
        c.c1 = ew::cast_fn(from == DType::Bool && c.ct == DType::Bool ? DType::UInt8 : from, c.ct);
    } else {
        c.c1 = ew::cast_fn(from, c.acc);
        c.sz1 = dtype_itemsize(c.acc);
        c.c2 = ew::cast_fn(c.acc, c.ct);
    }
}

// Appends dimension d to the reduced list, merging it into the previous one
// when the input walks them as one (C order is kept).
void add_reduced(ew::ReduceCtx& c, std::int64_t extent, std::int64_t stride) noexcept {
    if (c.nr > 0 && c.rstride[c.nr - 1] == stride * extent) {
        c.rshape[c.nr - 1] *= extent;
        c.rstride[c.nr - 1] = stride;
        return;
    }
    c.rshape[c.nr] = extent;
    c.rstride[c.nr] = stride;
    ++c.nr;
}

void kept_layout(ew::ReduceCtx& c, int ndim, const std::int64_t* shape, const bool* reduced, const StridedArg& in,
                 const StridedArg& out) noexcept {
    std::int64_t kshape[ew::kMaxDims], kin[ew::kMaxDims], kout[ew::kMaxDims];
    int nk = 0;
    for (int d = 0; d < ndim; ++d) {
        if (reduced != nullptr && reduced[d]) continue;
        kshape[nk] = shape[d];
        kin[nk] = in.strides[d];
        kout[nk] = out.strides[d];
        ++nk;
    }
    const std::int64_t* strides[2] = {kin, kout};
    ew::nd_layout(c.kept, nk, kshape, 2, strides, 0);
    c.base[0] = reinterpret_cast<char*>(in.data);
    c.base[1] = reinterpret_cast<char*>(out.data);
}

// The identity as one value of the compute type.
void identity_value(Ufunc op, DType ct, char* dst) {
    const Identity id = ufunc_info(op).identity;
    if (id == Identity::None) throw std::invalid_argument("reduce_run: zero-size reduction of an op without identity");
    if (id == Identity::AllOnes) {
        if (ct == DType::Bool) *dst = 1;
        else std::memset(dst, 0xFF, static_cast<std::size_t>(dtype_itemsize(ct)));
        return;
    }
    const std::uint8_t one = (id == Identity::One || id == Identity::True) ? 1 : 0;
    ew::cast_fn(DType::UInt8, ct)(reinterpret_cast<const char*>(&one), 0, dst, 0, 1);
}

}  // namespace

void reduce_run(Ufunc op, DType acc, int ndim, const std::int64_t* shape, const bool* reduce, const StridedArg& in,
                const StridedArg& out, double divisor) {
    if (!ufunc_info(op).has_reduce) throw std::invalid_argument("reduce_run: the op has no reduction");
    if (!numeric(acc) || !numeric(in.dtype) || !numeric(out.dtype))
        throw std::invalid_argument("reduce_run: only numeric dtypes can be reduced");
    if (ndim < 0 || ndim > ew::kMaxDims) throw std::invalid_argument("reduce_run: too many dimensions");
    ew::ReduceCtx c;
    // Logical reductions only see truth values: they run on bool whatever
    // the accumulator (which the input is still cast to first, as NumPy
    // does), and the bool result is cast back to it.
    const bool logical = op == Ufunc::LogicalAnd || op == Ufunc::LogicalOr || op == Ufunc::LogicalXor;
    c.ct = logical ? DType::Bool : ew::compute_dtype(acc);
    c.acc = acc;
    c.out_dtype = out.dtype;
    c.divisor = divisor;
    if (is_bitwise(op) && (dtype_is_float(c.ct) || dtype_is_complex(c.ct)))
        throw std::invalid_argument("reduce_run: bitwise reductions need a bool or integer accumulator");
    plan_input(c, in.dtype);
    c.m = 1;
    c.nout = 1;
    c.nr = 0;
    for (int d = 0; d < ndim; ++d) {
        if (reduce[d]) {
            c.m *= shape[d];
            if (shape[d] != 1) add_reduced(c, shape[d], in.strides[d]);
        } else {
            c.nout *= shape[d];
        }
    }
    if (c.nout == 0) return;
    if (c.m == 0) {
        // Every output is the identity.
        alignas(16) char v[16];
        identity_value(op, c.ct, v);
        kept_layout(c, ndim, shape, reduce, in, out);
        ew::nd_rows(c.kept, c.base, 0, c.nout, [&](char* const* p, const std::int64_t* s, std::int64_t n) {
            for (std::int64_t i = 0; i < n; ++i) ew::reduce_finish(c, v, 1, p[1] + i * s[1], 0);
        });
        return;
    }
    if (c.nr == 0) add_reduced(c, 1, 0);  // every reduced extent is 1
    kept_layout(c, ndim, shape, reduce, in, out);
    const ew::NdLayout& K = c.kept;
    const std::int64_t J = K.shape[K.ndim - 1];
    c.outer = c.nout >= 2 && J >= 4 && c.m >= 2 &&
              std::llabs(K.strides[0][K.ndim - 1]) < std::llabs(c.rstride[c.nr - 1]);
    if (!ew::reduce_floats(op, c) && !ew::reduce_ints(op, c))
        throw std::invalid_argument("reduce_run: no such reduction");
}

// ---------------------------------------------------------------------------

namespace {

// The running extreme of argmax/argmin: the first extreme wins, and the first
// NaN ends the search (NumPy counts NaN as the extreme).
template <class T>
struct ArgState {
    T best{};
    std::int64_t idx = -1;
    bool nan = false;
};

// One block: its extreme first, with the vectorised NaN-propagating
// max/min of the reductions, and a scan for its first position only when it
// is a NaN or beats the running extreme (rare after the first blocks).
template <class T, bool Max>
void arg_update(ArgState<T>& s, const T* x, std::int64_t n, std::int64_t at) noexcept {
    using Op = std::conditional_t<Max, ew::RMax<T>, ew::RMin<T>>;
    const T m = ew::block_value<Op, T>(x, n);
    if constexpr (std::is_floating_point_v<T>) {
        if (m != m) {
            for (std::int64_t i = 0; i < n; ++i)
                if (x[i] != x[i]) {
                    s.best = x[i];
                    s.idx = at + i;
                    s.nan = true;
                    return;
                }
        }
    }
    if (s.idx >= 0 && !(Max ? m > s.best : m < s.best)) return;
    for (std::int64_t i = 0; i < n; ++i)
        if (x[i] == m) {
            s.best = x[i];
            s.idx = at + i;
            return;
        }
}

// Elements [b, e) of the sequence starting at base.
template <class T, bool Max>
ArgState<T> arg_range(const ew::ReduceCtx& c, const char* base, std::int64_t b, std::int64_t e) noexcept {
    alignas(64) T buf[ew::kBlock];
    alignas(64) char tmp[ew::kBlock * 8];
    ew::Cursor cur{&c, nullptr, {}};
    cur.seek(base, b);
    ArgState<T> s;
    for (std::int64_t at = b; at < e && !s.nan; at += ew::kBlock) {
        const std::int64_t len = std::min(ew::kBlock, e - at);
        arg_update<T, Max>(s, cur.read<T>(len, buf, tmp), len, at);
    }
    return s;
}

template <class T, bool Max>
void arg_engine(const ew::ReduceCtx& c) {
    const std::size_t threads = pool_threads();
    const bool par = c.m * c.nout >= ew::kReduceParallelMin && threads > 1;
    if (par && c.nout == 1) {
        // One long sequence: pieces of whole blocks, combined in order so
        // that the earliest NaN and the earliest of equal extremes win.
        const std::int64_t nblocks = (c.m + ew::kBlock - 1) / ew::kBlock;
        const std::int64_t items = std::min<std::int64_t>(nblocks, static_cast<std::int64_t>(threads) * 4);
        std::vector<ArgState<T>> part(static_cast<std::size_t>(items));
        const char* in = c.base[0];
        pool_run(static_cast<std::size_t>(items), [&](std::size_t i) {
            const std::int64_t b = nblocks * static_cast<std::int64_t>(i) / items * ew::kBlock;
            const std::int64_t e = std::min(c.m, nblocks * static_cast<std::int64_t>(i + 1) / items * ew::kBlock);
            part[i] = arg_range<T, Max>(c, in, b, e);
        });
        ArgState<T> s = part[0];
        for (std::size_t i = 1; i < part.size() && !s.nan; ++i) {
            const ArgState<T>& q = part[i];
            if (q.idx < 0) continue;
            if (q.nan || (Max ? q.best > s.best : q.best < s.best)) s = q;
        }
        std::memcpy(c.base[1], &s.idx, sizeof s.idx);
        return;
    }
    auto outputs = [&](std::int64_t b, std::int64_t e) {
        ew::nd_rows(c.kept, c.base, b, e, [&](char* const* p, const std::int64_t* s, std::int64_t n) {
            for (std::int64_t k = 0; k < n; ++k) {
                const std::int64_t idx = arg_range<T, Max>(c, p[0] + k * s[0], 0, c.m).idx;
                std::memcpy(p[1] + k * s[1], &idx, sizeof idx);
            }
        });
    };
    if (!par || c.nout < 2) {
        outputs(0, c.nout);
        return;
    }
    const std::int64_t items = std::min<std::int64_t>(c.nout, static_cast<std::int64_t>(threads) * 4);
    pool_run(static_cast<std::size_t>(items), [&](std::size_t i) {
        outputs(c.nout * static_cast<std::int64_t>(i) / items, c.nout * static_cast<std::int64_t>(i + 1) / items);
    });
}

template <class T>
void arg_dispatch(bool max, const ew::ReduceCtx& c) {
    if (max) arg_engine<T, true>(c);
    else arg_engine<T, false>(c);
}

}  // namespace

void arg_reduce_run(bool max, int ndim, const std::int64_t* shape, int axis, const StridedArg& in,
                    const StridedArg& out) {
    if (!numeric(in.dtype) || dtype_is_complex(in.dtype))
        throw std::invalid_argument("arg_reduce_run: only real numeric dtypes (complex numbers are not ordered)");
    if (out.dtype != DType::Int64) throw std::invalid_argument("arg_reduce_run: out must be int64");
    if (ndim < 0 || ndim > ew::kMaxDims || axis < -1 || axis >= std::max(ndim, 1))
        throw std::invalid_argument("arg_reduce_run: bad axis or ndim");
    ew::ReduceCtx c{};
    // bool compares as 0 < 1; float16/bfloat16 as float32 (exact).
    c.ct = in.dtype == DType::Bool ? DType::UInt8 : ew::compute_dtype(in.dtype);
    c.acc = c.ct;
    c.out_dtype = DType::Int64;
    c.divisor = 0;
    c.direct = in.dtype == c.ct;
    c.c1 = c.direct ? nullptr : ew::cast_fn(in.dtype, c.ct);
    c.c2 = nullptr;
    c.sz1 = dtype_itemsize(c.ct);
    c.m = 1;
    c.nout = 1;
    c.nr = 0;
    bool reduced[ew::kMaxDims] = {};
    for (int d = 0; d < ndim; ++d) {
        reduced[d] = axis < 0 || d == axis;
        if (reduced[d]) {
            c.m *= shape[d];
            if (shape[d] != 1) add_reduced(c, shape[d], in.strides[d]);
        } else {
            c.nout *= shape[d];
        }
    }
    if (c.m == 0) throw std::invalid_argument("arg_reduce_run: the reduced extent is empty");
    if (c.nout == 0) return;
    if (c.nr == 0) add_reduced(c, 1, 0);
    kept_layout(c, ndim, shape, reduced, in, out);
    c.outer = false;
    switch (c.ct) {
        case DType::Int8: arg_dispatch<std::int8_t>(max, c); break;
        case DType::Int16: arg_dispatch<std::int16_t>(max, c); break;
        case DType::Int32: arg_dispatch<std::int32_t>(max, c); break;
        case DType::Int64: arg_dispatch<std::int64_t>(max, c); break;
        case DType::UInt8: arg_dispatch<std::uint8_t>(max, c); break;
        case DType::UInt16: arg_dispatch<std::uint16_t>(max, c); break;
        case DType::UInt32: arg_dispatch<std::uint32_t>(max, c); break;
        case DType::UInt64: arg_dispatch<std::uint64_t>(max, c); break;
        case DType::Float32: arg_dispatch<float>(max, c); break;
        default: arg_dispatch<double>(max, c); break;
    }
}

}  // namespace hrx::kernels
