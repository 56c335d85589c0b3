#include "array/stats.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "array/sorting.h"
#include "provider/array_ops.h"

namespace hrx {
namespace {

bool real_numeric(DType dt) {
    const DTypeKind k = dtype_info(dt).kind;
    return k != DTypeKind::Block && k != DTypeKind::Complex;
}

void check_real(const Array& a, const std::string& op, const char* what) {
    check_element_operand(a, Access::Read, op);
    if (!real_numeric(a.dtype))
        fail(ErrorKind::Type, op + ": " + what + " must be real, got " + dtype_name(a.dtype));
}

void check_compute(DType dt, const std::string& op, bool ints) {
    if (dt != DType::Float32 && dt != DType::Float64 && !(ints && dt == DType::Int64))
        fail(ErrorKind::Type, op + ": no device kernel computes in " + dtype_name(dt));
}

// One bincount pass (Note [Array operations are dispatches]) over x (and w).
std::shared_ptr<provider::BincountOp> bincount_op(const TaskSpec& t, provider::BincountOp::Pass pass, const Array& x,
                                                  const Array* w) {
    auto op = std::make_shared<provider::BincountOp>();
    op->pass = pass;
    op->x = tensor_of(t, x);
    op->weighted = w != nullptr;
    if (w) op->w = tensor_of(t, *w);
    return op;
}

}  // namespace
}  // namespace hrx

namespace hrx::stats {

Array bincount(const Array& x, const Array* w, int64_t minlength, const std::string& op) {
    check_element_operand(x, Access::Read, op);
    if (x.ndim() != 1)
        fail(ErrorKind::Message, op + ": object too deep for desired array (x must be 1-d, got " +
                                     std::to_string(x.ndim()) + " dimensions)");
    if (!dtype_is_integer(x.dtype) && x.dtype != DType::Bool)
        fail(ErrorKind::Type, op + ": cannot cast array data from dtype('" + dtype_name(x.dtype) +
                                  "') to dtype('int64') according to the rule 'safe'");
    if (minlength < 0) fail(ErrorKind::Message, op + ": 'minlength' must not be negative");
    if (w) {
        check_real(*w, op, "weights");
        if (w->shape != x.shape) fail(ErrorKind::Message, op + ": the weights and list don't have the same length");
        const Array* both[] = {&x, w};
        check_reads(both, op);
    }
    RuntimeCore& rt = runtime_of(x);
    const bool weighted = w != nullptr;
    if (x.size() == 0)  // NumPy's empty x gives int64 zeros even with weights
        return make_array(rt, x.placement(), Dims{minlength}, DType::Int64, op);
    // The result's length depends on x's largest value: the host waits for one
    // pass that counts into a vector it grows (up to a cap near x's size).
    auto grown = std::make_shared<kernels::GrownCounts>();
    const int64_t cap = std::max(minlength, x.size()) + (int64_t{1} << 16);
    TaskSpec g = w ? compute_task({&x, w}, {}, op, "bincount") : compute_task({&x}, {}, op, "bincount");
    auto gop = bincount_op(g, provider::BincountOp::Pass::Grown, x, w);
    gop->cap = cap;
    gop->grown = grown;
    g.array = std::move(gop);
    run_now(rt, g);
    if (grown->lo < 0 || (x.dtype == DType::UInt64 && !grown->fits))
        fail(ErrorKind::Message, op + ": 'list' argument must have no negative elements");
    if (grown->fits) {
        const int64_t found = static_cast<int64_t>(weighted ? grown->sums.size() : grown->counts.size());
        const int64_t nbins = std::max(found, minlength);
        const DType dt = weighted ? DType::Float64 : DType::Int64;
        Array out = make_array(rt, x.placement(), Dims{nbins}, dt, op);
        const void* from = weighted ? static_cast<const void*>(grown->sums.data()) : grown->counts.data();
        if (found == 0) return out;
        if (out.placement().host_mapped()) {
            // The counts are host data already: an upload, as hx.asarray's, without another lane hop.
            Array head = out;
            head.shape = Dims{found};
            write_from_host(head, static_cast<const uint8_t*>(from), Dims{8}, dt, op);
            return out;
        }
        TaskSpec t = compute_task({}, {&out}, op, "bincount");
        auto d = std::make_shared<provider::HostWriteOp>();
        d->out = tensor_of(t, out, Access::Write);
        d->from = from;
        d->keep = grown;
        d->bytes = found * 8;
        t.array = std::move(d);
        submit(rt, t);
        return out;
    }
    // A value beyond the cap: the range sizes the result, then a second pass counts into it.
    auto range = std::make_shared<std::pair<int64_t, int64_t>>();
    TaskSpec r = compute_task({&x}, {}, op, "bincount_range");
    auto rop = bincount_op(r, provider::BincountOp::Pass::Range, x, nullptr);
    rop->range = range;
    r.array = std::move(rop);
    run_now(rt, r);
    if (range->first < 0 || (x.dtype == DType::UInt64 && range->second < 0))
        fail(ErrorKind::Message, op + ": 'list' argument must have no negative elements");
    const int64_t nbins = std::max(minlength, range->second + 1);
    Array out = make_array(rt, x.placement(), Dims{nbins}, weighted ? DType::Float64 : DType::Int64, op);
    TaskSpec t = w ? compute_task({&x, w}, {&out}, op, "bincount") : compute_task({&x}, {&out}, op, "bincount");
    auto d = bincount_op(t, provider::BincountOp::Pass::Count, x, w);
    d->out = tensor_of(t, out, Access::Write);
    d->nbins = nbins;
    t.array = std::move(d);
    submit(rt, t);
    return out;
}

Array histogram(const Array& x, const Array& edges, const kernels::UniformBins* uniform, const Array* w, DType acc,
                const std::string& op) {
    check_real(x, op, "a");
    check_element_operand(edges, Access::Read, op);
    const DType ct = edges.dtype;
    check_compute(ct, op, false);
    if (edges.ndim() != 1 || edges.size() < 2)
        fail(ErrorKind::Message, op + ": bins must be 1-d with at least 2 edges, got shape " + shape_str(edges.shape));
    std::vector<const Array*> reads{&x, &edges};
    if (w) {
        check_real(*w, op, "weights");
        if (w->size() != x.size()) fail(ErrorKind::Message, op + ": weights should have the same shape as a.");
        if (acc != DType::Float32 && acc != DType::Float64 && acc != DType::Int64)
            fail(ErrorKind::Type, op + ": weights are summed in float32, float64 or int64, not " + dtype_name(acc));
        reads.push_back(w);
    }
    check_reads(reads, op);
    const int64_t nbins = edges.size() - 1;
    RuntimeCore& rt = runtime_of(x);
    Array out = make_array(rt, x.placement(), Dims{nbins}, w ? acc : DType::Int64, op);
    TaskSpec t = w ? compute_task({&x, &edges, w}, {&out}, op, "histogram")
                   : compute_task({&x, &edges}, {&out}, op, "histogram");
    auto d = std::make_shared<provider::HistogramOp>();
    d->x = tensor_of(t, x);
    d->edges = tensor_of(t, edges);
    d->weighted = w != nullptr;
    if (w) d->w = tensor_of(t, *w);
    d->out = tensor_of(t, out, Access::Write);
    d->uni = uniform != nullptr;
    if (uniform) d->u = *uniform;
    d->acc = acc;
    d->ct = ct;
    d->nbins = nbins;
    t.array = std::move(d);
    submit(rt, t);
    return out;
}

Array median(const Array& x, DType ct, DType dtype, bool skip_nan, const std::string& op) {
    check_real(x, op, "a");
    check_compute(ct, op, false);
    if (x.ndim() == 0 || x.shape.back() == 0)
        fail(ErrorKind::Message, op + ": cannot take the median of an empty reduction (shape " + shape_str(x.shape) +
                                     ")");
    if (!real_numeric(dtype)) fail(ErrorKind::Type, op + ": the median's dtype must be real, got " + dtype_name(dtype));
    Dims shape(x.shape.begin(), x.shape.end() - 1);
    RuntimeCore& rt = runtime_of(x);
    Array out = make_array(rt, x.placement(), shape, dtype, op);
    TaskSpec t = compute_task({&x}, {&out}, op, "median");
    if (out.size() == 0) {
        nothing_to_do(t);
        submit(rt, t);
        return out;
    }
    auto d = std::make_shared<provider::MedianOp>();
    d->x = tensor_of(t, x);
    d->out = tensor_of(t, out, Access::Write);
    d->ct = ct;
    d->skip_nan = skip_nan;
    t.array = std::move(d);
    submit(rt, t);
    return out;
}

Array correlate(const Array& a, const Array& v, int64_t left, int64_t len, DType dt, const std::string& op) {
    check_real(a, op, "a");
    check_real(v, op, "v");
    check_compute(dt, op, true);
    if (a.ndim() != 1 || v.ndim() != 1 || a.size() == 0 || v.size() == 0)
        fail(ErrorKind::Message, op + ": a and v must be non-empty 1-d arrays");
    if (len < 0) fail(ErrorKind::Message, op + ": negative output length");
    const Array* both[] = {&a, &v};
    check_reads(both, op);
    RuntimeCore& rt = runtime_of(a);
    Array out = make_array(rt, a.placement(), Dims{len}, dt, op);
    TaskSpec t = compute_task({&a, &v}, {&out}, op, "correlate");
    auto d = std::make_shared<provider::CorrelateOp>();
    d->a = tensor_of(t, a);
    d->v = tensor_of(t, v);
    d->out = tensor_of(t, out, Access::Write);
    d->left = left;
    d->len = len;
    d->dt = dt;
    t.array = std::move(d);
    submit(rt, t);
    return out;
}

}  // namespace hrx::stats

namespace hrx::stats {

void ufunc_at(const Array& a, const Array& pos, const Array& vals, kernels::AtOp at, const std::string& op) {
    check_element_operand(a, Access::Write, op);
    check_element_operand(pos, Access::Read, op);
    check_element_operand(vals, Access::Read, op);
    const DType dt = a.dtype, ct = vals.dtype;
    auto at_type = [](DType d) {
        return d == DType::Bool || d == DType::Float16 || d == DType::Float32 || d == DType::Float64 ||
               dtype_is_integer(d);
    };
    if (!at_type(dt))
        fail(ErrorKind::Type, op + ": supported for bool, integer, float16, float32 and float64 arrays, not " +
                                  dtype_name(dt));
    if (!dtype_is_integer(pos.dtype))
        fail(ErrorKind::Index, op + ": arrays used as indices must be of integer type, not " + dtype_name(pos.dtype));
    // vals arrive in the loop's type (the caller casts them: Note [ufunc.at in a wider type]).
    if (!at_type(ct))
        fail(ErrorKind::Type, op + ": values must be bool, integer, float16, float32 or float64, not " +
                                  dtype_name(ct));
    if (at == kernels::AtOp::Subtract && ct == DType::Bool)
        fail(ErrorKind::Type, op + ": numpy boolean subtract, the `-` operator, is not supported");
    const Dims* shapes[] = {&vals.shape, &pos.shape};
    if (broadcast_shapes(shapes, op) != pos.shape)
        fail(ErrorKind::Message, op + ": shape mismatch: value array of shape " + shape_str(vals.shape) +
                                     " could not be broadcast to indexing result of shape " + shape_str(pos.shape));
    const Array* reads[] = {&a, &pos, &vals};
    check_reads(reads, op);
    RuntimeCore& rt = runtime_of(a);
    const int64_t size = a.size();
    if (pos.size() == 0) return;
    Array vb = vals;  // vals broadcast to pos's shape (a view)
    vb.strides = broadcast_strides(vals, pos.shape);
    vb.shape = pos.shape;
    // One task checks every position, then (all in bounds) applies the updates;
    // the host waits for it, so an out-of-bounds index raises with a unchanged.
    auto bad = std::make_shared<std::optional<int64_t>>();
    TaskSpec t = compute_task({&pos, &vals}, {&a}, op, "ufunc_at");
    // pos and vals are read as updates land: staged when they share a's memory (np.add.at(x, x, 1)).
    auto d = std::make_shared<provider::UfuncAtOp>();
    d->a = tensor_of(t, a, Access::Write);
    d->pos = tensor_of(t, pos);
    d->pos.at.stage = pos.base == a.base;
    d->vals = tensor_of(t, vals);
    d->vals.shape = vb.shape;
    d->vals.at.strides = vb.strides;
    d->vals.at.stage = vals.base == a.base;
    d->at = at;
    d->dt = dt;
    d->ct = ct;
    d->bad = bad;
    t.array = std::move(d);
    run_now(rt, t);
    if (*bad)
        fail(ErrorKind::Index, op + ": index " + std::to_string(**bad) + " is out of bounds for size " +
                                   std::to_string(size));
}

}  // namespace hrx::stats
