// The emulated provider's runs of provider/array_ops.h's families (Note
// [Array operations are dispatches] in provider/provider.h): each
// description resolved against its bindings and run by the kernels library
// on the lane thread that submitted it.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <vector>

#include "errors.h"
#include "kernels/manipulation.h"
#include "kernels/scan.h"
#include "kernels/set.h"
#include "kernels/sort.h"
#include "provider/array_ops.h"
#include "provider/emulated/emulated.h"

namespace hrx::provider::emulated {

namespace {

// A Tensor resolved against the dispatch's bindings: its element [0, ...],
// strides and shape (a staged operand: its dense copy, held here).
class View {
public:
    View() = default;
    View(const Tensor& t, const Span* bindings, size_t count) { bind(t, bindings, count); }
    View(const View&) = delete;
    View& operator=(const View&) = delete;

    void bind(const Tensor& t, const Span* bindings, size_t count) {
        dtype = t.at.dtype;
        shape = t.shape;
        Dims dense;
        const kernels::StridedArg s = resolve(t.at, bindings, count, shape, temp_, dense);
        ptr_ = s.data;
        strides = t.at.stage ? dense : t.at.strides;
    }
    uint8_t* data() const { return ptr_; }
    int ndim() const { return static_cast<int>(shape.size()); }
    int64_t size() const { return element_count(shape); }
    bool c_contiguous() const {
        if (size() == 0) return true;
        const Dims want = dense_strides(shape, dtype_itemsize(dtype));
        for (size_t i = 0; i < shape.size(); ++i)
            if (shape[i] != 1 && strides[i] != want[i]) return false;
        return true;
    }
    kernels::StridedArg arg() const { return {ptr_, dtype, strides.data()}; }
    std::vector<uint8_t> dense(DType dt) const { return kernels::dense_copy(ndim(), shape.data(), arg(), dt); }
    // The elements as a dense buffer of `dt`: in place when already one, else a converted copy in `keep`.
    const uint8_t* dense_in(DType dt, std::vector<uint8_t>& keep) const {
        if (dtype == dt && c_contiguous()) return ptr_;
        keep = dense(dt);
        return keep.data();
    }

    DType dtype = DType::Float32;
    Dims shape, strides;

private:
    uint8_t* ptr_ = nullptr;
    std::vector<uint8_t> temp_;
};

int64_t* i64(const View& v) { return reinterpret_cast<int64_t*>(v.data()); }

// Copies the dense rows `from` (dtype dt) into `to`'s layout.
void scatter_dense(const uint8_t* from, DType dt, const View& to) {
    const Dims dense = dense_strides(to.shape, dtype_itemsize(dt));
    kernels::copy_cast(to.ndim(), to.shape.data(), {const_cast<uint8_t*>(from), dt, dense.data()}, to.arg());
}

// ---- indexing --------------------------------------------------------------

void run_index_range(const IndexRangeOp& o, const Span* b, size_t n) {
    const View idx(o.idx, b, n);
    std::vector<uint8_t> buf;
    if (!idx.c_contiguous()) buf = idx.dense(idx.dtype);
    kernels::index_range(idx.dtype, idx.c_contiguous() ? idx.data() : buf.data(), idx.size(), &o.range->first,
                         &o.range->second);
}

// Element strides of a dense array of `shape` broadcast to `to` (right-aligned).
Dims dense_broadcast_strides(const Dims& shape, const Dims& to) {
    Dims s(to.size(), 0);
    const size_t pad = to.size() - shape.size();
    int64_t step = 1;
    for (size_t i = shape.size(); i-- > 0;) {
        s[pad + i] = shape[i] == 1 ? 0 : step;
        step *= shape[i];
    }
    return s;
}

void run_advanced_index(const AdvancedIndexOp& o, const Span* b, size_t n) {
    const bool scatter = o.family == ArrayOp::Family::IndexScatter;
    const View v(o.v, b, n), dense(o.dense, b, n);
    // What gather and scatter share: the index arguments and the loop over B
    // and the sub-blocks, `other` being the strides of the dense side (the
    // result, or the values broadcast to it) over the result's dimensions.
    const Dims& other = dense.strides;
    std::vector<std::vector<uint8_t>> keep(o.indices.size());
    std::vector<Dims> istrides;
    std::vector<kernels::IndexArg> args;
    for (size_t j = 0; j < o.indices.size(); ++j) {
        const View idx(o.indices[j], b, n);
        istrides.push_back(dense_broadcast_strides(idx.shape, o.bshape));
        const auto* data = reinterpret_cast<const int64_t*>(idx.dense_in(DType::Int64, keep[j]));
        const auto ax = static_cast<size_t>(o.axes[j]);
        args.push_back(kernels::IndexArg{data, nullptr, v.shape[ax], v.strides[ax]});
    }
    for (size_t j = 0; j < args.size(); ++j) args[j].strides = istrides[j].data();
    Dims rows, sub_shape, sub_indexed, sub_dense;
    const size_t nb = o.bshape.size();
    for (size_t d = 0; d < nb; ++d) rows.push_back(other[static_cast<size_t>(o.insert_at) + d]);
    for (size_t r = 0; r < o.rest.size(); ++r) {
        const auto ax = static_cast<size_t>(o.rest[r]);
        sub_shape.push_back(v.shape[ax]);
        sub_indexed.push_back(v.strides[ax]);
        sub_dense.push_back(other[r < static_cast<size_t>(o.insert_at) ? r : r + nb]);
    }
    kernels::GatherPlan plan;
    plan.nb = static_cast<int>(nb);
    plan.bshape = o.bshape.data();
    plan.k = static_cast<int>(args.size());
    plan.idx = args.data();
    plan.row_strides = rows.data();
    plan.m = static_cast<int>(sub_shape.size());
    plan.sub_shape = sub_shape.data();
    plan.sub_src = scatter ? sub_dense.data() : sub_indexed.data();
    plan.sub_dst = scatter ? sub_indexed.data() : sub_dense.data();
    plan.itemsize = dtype_itemsize(v.dtype);
    plan.mode = o.mode;
    if (scatter)
        kernels::scatter(plan, dense.data(), v.data());
    else
        kernels::gather(plan, v.data(), dense.data());
}

void run_mask_count(const MaskCountOp& o, const Span* b, size_t n) {
    const View mask(o.mask, b, n);
    std::vector<uint8_t> buf;
    *o.count = kernels::mask_count(mask.dense_in(DType::Bool, buf), mask.size());
}

void run_compress(const CompressOp& o, const Span* b, size_t n) {
    const View v(o.v, b, n), mask(o.mask, b, n), out(o.out, b, n);
    std::vector<uint8_t> buf;
    const uint8_t* m = mask.dense_in(DType::Bool, buf);
    const int k = mask.ndim();
    Dims steps, sub_shape, sub_src, sub_dst;
    for (int d = 0; d < k; ++d) steps.push_back(v.strides[static_cast<size_t>(o.axis + d)]);
    size_t r = 0;
    for (int a = 0; a < v.ndim(); ++a) {
        if (a >= o.axis && a < o.axis + k) continue;
        sub_shape.push_back(v.shape[static_cast<size_t>(a)]);
        sub_src.push_back(v.strides[static_cast<size_t>(a)]);
        sub_dst.push_back(out.strides[r < static_cast<size_t>(o.insert_at) ? r : r + 1]);
        ++r;
    }
    const auto at = static_cast<size_t>(o.insert_at);
    kernels::compress(m, k, mask.shape.data(), steps.data(), out.shape[at], out.strides[at],
                      static_cast<int>(sub_shape.size()), sub_shape.data(), sub_src.data(), sub_dst.data(),
                      dtype_itemsize(v.dtype), v.data(), out.data());
}

void run_isin(const IsInOp& o, const Span* b, size_t n) {
    const View x1(o.x1, b, n), x2(o.x2, b, n), out(o.out, b, n);
    if (x1.size() == 0) return;
    const std::vector<uint8_t> a = x1.dense(o.cmp), t = x2.dense(o.cmp);
    kernels::isin(o.cmp, a.data(), x1.size(), t.data(), x2.size(), o.invert, out.data());
}

// ---- sorting, searching, sets, scans ---------------------------------------

void run_sort(const SortOp& o, const Span* b, size_t count) {
    const View src(o.src, b, count), dst(o.dst, b, count);
    const int64_t n = src.shape.back();
    const int64_t rows = src.size() / n;
    // Rows already in place (the sorted axis is last and dense) are sorted
    // where they are; anything else goes through a dense copy.
    const bool direct_out = dst.c_contiguous();
    std::vector<uint8_t> buf;
    if (o.indices) {
        const bool direct_in = src.c_contiguous();
        if (!direct_in) buf = src.dense(src.dtype);
        const uint8_t* keys = direct_in ? src.data() : buf.data();
        std::vector<uint8_t> obuf;
        if (!direct_out) obuf.resize(static_cast<size_t>(dst.size() * 8));
        auto* idx = reinterpret_cast<int64_t*>(direct_out ? dst.data() : obuf.data());
        kernels::argsort_rows(src.dtype, keys, idx, rows, n, o.descending);
        if (!direct_out) scatter_dense(obuf.data(), DType::Int64, dst);
        return;
    }
    if (direct_out) {
        // Dense rows are read where they are; others are gathered into dst first.
        const uint8_t* from = src.data();
        if (!src.c_contiguous()) {
            const Dims dense = dense_strides(dst.shape, dtype_itemsize(dst.dtype));
            kernels::copy_cast(src.ndim(), src.shape.data(), src.arg(), {dst.data(), dst.dtype, dense.data()});
            from = dst.data();
        }
        kernels::sort_rows(dst.dtype, from, dst.data(), rows, n, o.descending);
        return;
    }
    buf = src.dense(src.dtype);
    kernels::sort_rows(src.dtype, buf.data(), buf.data(), rows, n, o.descending);
    scatter_dense(buf.data(), dst.dtype, dst);
}

void run_search_sorted(const SearchSortedOp& o, const Span* b, size_t n) {
    const View x1(o.x1, b, n), x2(o.x2, b, n), out(o.out, b, n);
    const std::vector<uint8_t> a = x1.dense(o.common), t = x2.dense(o.common);
    std::vector<uint8_t> idx;
    if (o.has_sorter) idx = View(o.sorter, b, n).dense(DType::Int64);
    kernels::search_sorted(o.common, a.data(), x1.size(),
                           o.has_sorter ? reinterpret_cast<const int64_t*>(idx.data()) : nullptr, t.data(), x2.size(),
                           o.right, i64(out));
}

void run_nonzero(const NonzeroOp& o, const Span* b, size_t n) {
    const View in(o.in, b, n), out(o.out, b, n);
    std::vector<uint8_t> buf;
    if (!in.c_contiguous()) buf = in.dense(in.dtype);
    *o.count = kernels::nonzero_indices(in.dtype, in.c_contiguous() ? in.data() : buf.data(), in.ndim(),
                                        in.shape.data(), i64(out), out.shape.back());
}

void run_unique(const UniqueOp& o, const Span* b, size_t count) {
    const View in(o.in, b, count), values(o.values, b, count), index(o.index, b, count),
        inverse(o.inverse, b, count), counts(o.counts, b, count);
    std::vector<uint8_t> buf;
    if (!in.c_contiguous()) buf = in.dense(in.dtype);
    const uint8_t* data = in.c_contiguous() ? in.data() : buf.data();
    if (o.family == ArrayOp::Family::Unique) {
        *o.count = kernels::unique_groups(in.dtype, data, in.size(), o.equal_nan, values.data(), i64(index),
                                          i64(inverse), i64(counts));
        return;
    }
    // `in` has the axis first: its C order is the sub-arrays back to back.
    const int64_t n = in.shape[0];
    const int64_t m = n == 0 ? 0 : in.size() / n;
    *o.count = kernels::unique_rows(in.dtype, data, n, m, values.data(), i64(index), i64(inverse), i64(counts));
}

void run_cumulative(const CumulativeOp& o, const Span* b, size_t count) {
    const View src(o.src, b, count), dst(o.dst, b, count);
    const DType dt = dst.dtype;
    const int64_t item = dtype_itemsize(dt);
    const int64_t n = src.shape.back();
    const int64_t m = dst.shape.back();
    const int64_t rows = dst.size() / m;
    std::vector<uint8_t> inbuf, outbuf;
    const uint8_t* x = src.dense_in(dt, inbuf);
    const bool direct_out = dst.c_contiguous();
    if (!direct_out) outbuf.resize(static_cast<size_t>(dst.size() * item));
    uint8_t* y = direct_out ? dst.data() : outbuf.data();
    if (o.include_initial) {
        alignas(16) uint8_t identity[16] = {};  // complex128 is the widest element
        const double one = o.product ? 1.0 : 0.0;
        kernels::copy_cast(0, nullptr, {reinterpret_cast<uint8_t*>(const_cast<double*>(&one)), DType::Float64, nullptr},
                           {identity, dt, nullptr});
        for (int64_t r = 0; r < rows; ++r) std::memcpy(y + r * m * item, identity, static_cast<size_t>(item));
    }
    kernels::scan_rows(dt, o.product, x, n * item, y + (o.include_initial ? item : 0), m * item, rows, n);
    if (!direct_out) scatter_dense(outbuf.data(), dt, dst);
}

// ---- rearrangements --------------------------------------------------------

void run_outer_gather(const OuterGatherOp& o, const Span* b, size_t n) {
    const View in(o.in, b, n), out(o.out, b, n);
    std::vector<const int64_t*> offsets(o.index.size());
    for (size_t d = 0; d < o.index.size(); ++d) {
        const int64_t stride = in.strides[d];
        auto& table = o.index[d];
        if (table.empty()) {
            table.resize(static_cast<size_t>(out.shape[d]));
            for (size_t j = 0; j < table.size(); ++j) table[j] = static_cast<int64_t>(j);
        }
        for (int64_t& i : table) i *= stride;
        offsets[d] = table.data();
    }
    kernels::gather_outer(out.ndim(), out.shape.data(), offsets.data(), in.data(), out.data(),
                          dtype_itemsize(in.dtype));
}

void run_triangle(const TriangleOp& o, const Span* b, size_t count) {
    const View in(o.in, b, count), out(o.out, b, count);
    const size_t nd = in.shape.size();
    const int64_t m = in.shape[nd - 2];
    const int64_t n = in.shape[nd - 1];
    // The byte offset of each matrix of the batch (leading axes, C order).
    std::vector<int64_t> starts{0};
    for (size_t d = 0; d + 2 < nd; ++d) {
        std::vector<int64_t> next;
        next.reserve(starts.size() * static_cast<size_t>(in.shape[d]));
        for (const int64_t s : starts)
            for (int64_t i = 0; i < in.shape[d]; ++i) next.push_back(s + i * in.strides[d]);
        starts = std::move(next);
    }
    kernels::copy_triangle(in.data(), starts.data(), static_cast<int64_t>(starts.size()), m, n, in.strides[nd - 2],
                           in.strides[nd - 1], out.data(), dtype_itemsize(out.dtype), o.k, o.lower);
}

// ---- random draws ----------------------------------------------------------

void run_random(const RandomOp& o, const Span* b, size_t count) {
    using Kind = RandomOp::Kind;
    const View out(o.out, b, count);
    switch (o.kind) {
        case Kind::Real: return kernels::random_real(o.dist, out.dtype, o.key, o.counter, o.n, o.a, o.b, out.data());
        case Kind::Integers:
            return kernels::random_integers(out.dtype, o.key, o.counter, o.n, o.low, o.range, out.data());
        case Kind::IntegersEach:
            return kernels::random_integers_each(out.dtype, o.key, o.counter, o.n, o.lows.data(), o.ranges.data(),
                                                 out.data());
        default: break;
    }
    // choice: indices into the population, then (with a source) its rows at them.
    std::vector<int64_t> tmp;
    int64_t* idx = o.has_src ? nullptr : i64(out);
    if (!idx) {
        tmp.resize(static_cast<size_t>(o.n));
        idx = tmp.data();
    }
    switch (o.kind) {
        case Kind::Uniform:
            kernels::random_integers(DType::Int64, o.key, o.counter, o.n, 0, static_cast<uint64_t>(o.population), idx);
            break;
        case Kind::Cdf:
            kernels::random_choice_cdf(o.key, o.counter, o.n, o.probs.data(), static_cast<int64_t>(o.probs.size()),
                                       idx);
            break;
        default:
            if (!kernels::random_sample(o.key, o.counter, o.population, o.n, o.probs.empty() ? nullptr : o.probs.data(),
                                        o.sorted, idx))
                fail(ErrorKind::OutOfMemory, o.name + ": no memory for the sampling keys of " +
                                                 std::to_string(o.population) + " elements");
            break;
    }
    if (o.has_src)
        kernels::gather_rows(View(o.src, b, count).data(), static_cast<std::size_t>(o.row_bytes), idx, o.n,
                             out.data());
}

// ---- statistics ------------------------------------------------------------

void run_bincount(const BincountOp& o, const Span* b, size_t count) {
    const View x(o.x, b, count);
    std::vector<uint8_t> kx, kw;
    const auto* v = reinterpret_cast<const int64_t*>(x.dense_in(DType::Int64, kx));
    using Pass = BincountOp::Pass;
    if (o.pass == Pass::Range) return kernels::int_range(v, x.size(), &o.range->first, &o.range->second);
    View w;
    if (o.weighted) w.bind(o.w, b, count);
    const auto* wd = o.weighted ? reinterpret_cast<const double*>(w.dense_in(DType::Float64, kw)) : nullptr;
    if (o.pass == Pass::Grown) return kernels::bincount_grown(v, wd, x.size(), o.cap, *o.grown);
    const View out(o.out, b, count);
    if (o.weighted)
        kernels::bincount_weighted(v, wd, x.size(), o.nbins, reinterpret_cast<double*>(out.data()));
    else
        kernels::bincount(v, x.size(), o.nbins, i64(out));
}

void run_host_write(const HostWriteOp& o, const Span* b, size_t n) {
    const View out(o.out, b, n);
    std::memcpy(out.data(), o.from, static_cast<size_t>(o.bytes));
}

void run_histogram(const HistogramOp& o, const Span* b, size_t count) {
    const View x(o.x, b, count), edges(o.edges, b, count), out(o.out, b, count);
    const int64_t n = x.size();
    // x of any shape is read flat: a dense copy unless already dense in ct.
    std::vector<uint8_t> kx, ke, kw;
    const uint8_t* xd = x.dense_in(o.ct, kx);
    const uint8_t* ed = edges.dense_in(o.ct, ke);
    const kernels::UniformBins* up = o.uni ? &o.u : nullptr;
    if (!o.weighted) {
        kernels::histogram_counts(o.ct, xd, n, ed, o.nbins, up, i64(out));
        return;
    }
    const View w(o.w, b, count);
    std::vector<int64_t> bins(static_cast<size_t>(n));
    kernels::histogram_bins(o.ct, xd, n, ed, o.nbins, up, bins.data());
    kernels::histogram_weighted(bins.data(), reinterpret_cast<const double*>(w.dense_in(DType::Float64, kw)), n,
                                o.nbins, o.acc, out.data());
}

void run_median(const MedianOp& o, const Span* b, size_t count) {
    const View x(o.x, b, count), out(o.out, b, count);
    const int64_t n = x.shape.back();
    const int64_t rows = x.size() / n;
    std::vector<uint8_t> keep;
    const uint8_t* rows_in = x.dense_in(o.ct, keep);
    const bool direct = out.dtype == o.ct;
    std::vector<uint8_t> obuf(direct ? 0 : static_cast<size_t>(rows * dtype_itemsize(o.ct)));
    kernels::median_rows(o.ct, rows_in, rows, n, direct ? out.data() : obuf.data(), o.skip_nan);
    if (!direct) scatter_dense(obuf.data(), o.ct, out);
}

void run_correlate(const CorrelateOp& o, const Span* b, size_t count) {
    const View a(o.a, b, count), v(o.v, b, count), out(o.out, b, count);
    std::vector<uint8_t> ka, kv;
    kernels::correlate(o.dt, a.dense_in(o.dt, ka), a.size(), v.dense_in(o.dt, kv), v.size(), o.left, out.data(),
                       o.len);
}

void run_ufunc_at(const UfuncAtOp& o, const Span* b, size_t count) {
    // pos and vals are read as updates land: staged (dense copies) when they
    // share a's memory (np.add.at(x, x, 1)).
    const View a(o.a, b, count), pos(o.pos, b, count), vals(o.vals, b, count);
    std::vector<uint8_t> kp, kv;
    const auto* p = reinterpret_cast<const int64_t*>(pos.dense_in(DType::Int64, kp));
    const int64_t n = pos.size(), size = a.size();
    int64_t lo = 0, hi = 0;
    kernels::int_range(p, n, &lo, &hi);
    if (lo < -size || hi >= size) {
        *o.bad = lo < -size ? lo : hi;
        return;
    }
    kernels::ufunc_at(o.at, o.dt, o.ct, a.data(), a.ndim(), a.shape.data(), a.strides.data(), size, p,
                      vals.dense_in(o.ct, kv), n);
}

// ---- linear algebra ----------------------------------------------------------

kernels::Matrices matrices(const Tensor& t, const Span* b, size_t count) {
    const View v(t, b, count);
    return {v.data(), std::vector<int64_t>(v.shape.begin(), v.shape.end()),
            std::vector<int64_t>(v.strides.begin(), v.strides.end())};
}

void run_linalg(const LinalgDispatchOp& o, const Span* b, size_t count) {
    const kernels::Matrices a = matrices(o.a, b, count);
    kernels::Matrices rhs;
    if (o.has_b) rhs = matrices(o.b, b, count);
    std::vector<kernels::Matrices> outs;
    for (const Tensor& t : o.outs) outs.push_back(matrices(t, b, count));
    kernels::linalg_run(o.op, o.a.at.dtype, a, o.has_b ? &rhs : nullptr, outs);
}

// ---- staged invocations ----------------------------------------------------

struct FreeDeleter {
    void operator()(uint8_t* p) const { std::free(p); }
};

void run_staged_invoke(const StagedInvokeOp& o, const Span* b, size_t count) {
    const size_t n = o.bindings.size();
    std::vector<Span> spans(n);
    std::vector<std::unique_ptr<uint8_t, FreeDeleter>> temps(n);
    const int nd = static_cast<int>(o.shape.size());
    const size_t align = std::max<size_t>(64, o.alignment);
    const auto arg = [&](const ArrayArg& a) -> kernels::StridedArg {
        return {a.binding < 0 ? const_cast<uint8_t*>(a.value) : bound(a, b, count), a.dtype, a.strides.data()};
    };
    for (size_t i = 0; i < n; ++i) {
        const StagedInvokeOp::Binding& x = o.bindings[i];
        if (x.direct) {
            const Span& whole = b[x.at.binding];
            spans[i] = Span{whole.data + x.at.offset, whole.length - x.at.offset, whole.coherent};
            continue;
        }
        const size_t bytes = static_cast<size_t>(o.count) * static_cast<size_t>(dtype_itemsize(x.dtype));
        temps[i].reset(static_cast<uint8_t*>(std::aligned_alloc(align, (bytes + align - 1) / align * align)));
        if (!temps[i]) throw std::bad_alloc();
        spans[i] = Span{temps[i].get(), bytes, false};
        if (i < o.nin) {
            const Dims dense = dense_strides(o.shape, dtype_itemsize(x.dtype));
            kernels::copy_cast(nd, o.shape.data(), arg(x.at), {temps[i].get(), x.dtype, dense.data()});
        }
    }
    o.program->invoke(spans.data(), n);
    for (size_t i = o.nin; i < n; ++i) {
        const StagedInvokeOp::Binding& x = o.bindings[i];
        if (x.direct) continue;
        const Dims dense = dense_strides(o.shape, dtype_itemsize(x.dtype));
        kernels::copy_cast(nd, o.shape.data(), {temps[i].get(), x.dtype, dense.data()},
                           {bound(x.at, b, count), x.dtype, x.at.strides.data()});
    }
}

template <class Op>
const Op& as(const ArrayOp& op) {
    return static_cast<const Op&>(op);
}

}  // namespace

void run_more_array_op(const ArrayOp& op, const Span* b, size_t n) {
    using F = ArrayOp::Family;
    switch (op.family) {
        case F::IndexRange: return run_index_range(as<IndexRangeOp>(op), b, n);
        case F::IndexGather:
        case F::IndexScatter: return run_advanced_index(as<AdvancedIndexOp>(op), b, n);
        case F::MaskCount: return run_mask_count(as<MaskCountOp>(op), b, n);
        case F::Compress: return run_compress(as<CompressOp>(op), b, n);
        case F::IsIn: return run_isin(as<IsInOp>(op), b, n);
        case F::Sort: return run_sort(as<SortOp>(op), b, n);
        case F::SearchSorted: return run_search_sorted(as<SearchSortedOp>(op), b, n);
        case F::Nonzero: return run_nonzero(as<NonzeroOp>(op), b, n);
        case F::Unique:
        case F::UniqueRows: return run_unique(as<UniqueOp>(op), b, n);
        case F::Cumulative: return run_cumulative(as<CumulativeOp>(op), b, n);
        case F::OuterGather: return run_outer_gather(as<OuterGatherOp>(op), b, n);
        case F::Triangle: return run_triangle(as<TriangleOp>(op), b, n);
        case F::Random: return run_random(as<RandomOp>(op), b, n);
        case F::Bincount: return run_bincount(as<BincountOp>(op), b, n);
        case F::HostWrite: return run_host_write(as<HostWriteOp>(op), b, n);
        case F::Histogram: return run_histogram(as<HistogramOp>(op), b, n);
        case F::Median: return run_median(as<MedianOp>(op), b, n);
        case F::Correlate: return run_correlate(as<CorrelateOp>(op), b, n);
        case F::UfuncAt: return run_ufunc_at(as<UfuncAtOp>(op), b, n);
        case F::Fft: return as<FftOp>(op).body();
        case F::Linalg: return run_linalg(as<LinalgDispatchOp>(op), b, n);
        case F::StagedInvoke: return run_staged_invoke(as<StagedInvokeOp>(op), b, n);
        case F::Empty: return;
        default: break;
    }
    throw std::invalid_argument("array dispatch: unknown operation family");
}

}  // namespace hrx::provider::emulated
