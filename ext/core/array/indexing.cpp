#include "array/indexing.h"

#include <algorithm>

#include "array/creation.h"
#include "array/sorting.h"
#include "errors.h"
#include "provider/array_ops.h"

namespace hrx {

namespace {

// Adds compute-lane reads of `arrays` to t.
void add_reads(TaskSpec& t, const std::vector<Array>& arrays) {
    for (const Array& a : arrays) {
        check_lane_binding(a, t.lane, t.op);
        t.uses.push_back(a.use(Access::Read));
    }
}

// One advanced-index dispatch (gather or scatter) of v at `axes` by `indices`
// (Note [Array operations are dispatches]), its dense side to be set.
std::shared_ptr<provider::AdvancedIndexOp> index_op(const TaskSpec& t, bool scatter, const Array& v,
                                                    const std::vector<int>& axes, const std::vector<Array>& indices,
                                                    const IndexLayout& layout) {
    auto op = std::make_shared<provider::AdvancedIndexOp>(scatter);
    op->v = tensor_of(t, v, scatter ? Access::Write : Access::Read);
    op->axes = axes;
    for (const Array& i : indices) op->indices.push_back(tensor_of(t, i));
    op->bshape = layout.bshape;
    op->rest = layout.rest;
    op->insert_at = layout.insert_at;
    return op;
}

}  // namespace

IndexLayout index_layout(const Dims& vshape, const std::vector<int>& axes, const std::vector<Dims>& index_shapes,
                         bool adjacent, int first, const std::string& op) {
    IndexLayout l;
    size_t nb = 0;
    for (const Dims& s : index_shapes) nb = std::max(nb, s.size());
    l.bshape = Dims(nb, 1);
    for (const Dims& s : index_shapes) {
        const size_t pad = nb - s.size();
        for (size_t i = 0; i < s.size(); ++i) {
            int64_t& b = l.bshape[pad + i];
            if (s[i] == b || s[i] == 1) continue;
            if (b != 1) {
                std::string shapes;
                for (const Dims& t : index_shapes) shapes += " " + shape_str(t);
                fail(ErrorKind::Index, op + ": shape mismatch: indexing arrays could not be broadcast together "
                                            "with shapes" + shapes);
            }
            b = s[i];
        }
    }
    for (int a = 0; a < static_cast<int>(vshape.size()); ++a)
        if (std::find(axes.begin(), axes.end(), a) == axes.end()) l.rest.push_back(a);
    l.insert_at = adjacent ? std::min(first, static_cast<int>(l.rest.size())) : 0;
    for (int r = 0; r < l.insert_at; ++r) l.result.push_back(vshape[static_cast<size_t>(l.rest[static_cast<size_t>(r)])]);
    for (int64_t b : l.bshape) l.result.push_back(b);
    for (size_t r = static_cast<size_t>(l.insert_at); r < l.rest.size(); ++r)
        l.result.push_back(vshape[static_cast<size_t>(l.rest[r])]);
    return l;
}

TaskSpec index_range_task(const Array& idx, std::shared_ptr<std::pair<int64_t, int64_t>> range,
                          const std::string& name) {
    TaskSpec t = compute_task({&idx}, {}, name, "index bounds");
    auto op = std::make_shared<provider::IndexRangeOp>();
    op->idx = tensor_of(t, idx);
    op->range = std::move(range);
    t.array = std::move(op);
    return t;
}

void check_index_bounds(std::pair<int64_t, int64_t> range, int64_t extent, int axis, const std::string& op) {
    const int64_t bad = range.second >= extent ? range.second : (range.first < -extent ? range.first : 0);
    if (range.second >= extent || range.first < -extent)
        fail(ErrorKind::Index, op + ": index " + std::to_string(bad) + " is out of bounds for axis " +
                                   std::to_string(axis) + " with size " + std::to_string(extent));
}

TaskSpec gather_task(const Array& v, const std::vector<int>& axes, const std::vector<Array>& indices,
                     const IndexLayout& layout, kernels::IndexMode mode, const Array& out, const std::string& name) {
    TaskSpec t = compute_task({&v}, {&out}, name, "gather");
    add_reads(t, indices);
    if (out.size() == 0) {
        nothing_to_do(t);
        return t;
    }
    auto op = index_op(t, false, v, axes, indices, layout);
    op->mode = mode;
    op->dense = tensor_of(t, out, Access::Write);
    t.array = std::move(op);
    return t;
}

TaskSpec scatter_task(const Array& v, const std::vector<int>& axes, const std::vector<Array>& indices,
                      const IndexLayout& layout, const Array& values, const std::string& name) {
    TaskSpec t = compute_task({&values}, {&v}, name, "scatter");
    add_reads(t, indices);
    int64_t positions = 1;
    for (int64_t d : layout.result) positions *= d;
    if (positions == 0) {
        nothing_to_do(t);
        return t;
    }
    // Leading length-1 axes beyond the result's (NumPy's assignment rule) go.
    Array vals = values;
    while (vals.ndim() > static_cast<int>(layout.result.size())) {
        vals.shape.erase(vals.shape.begin());
        vals.strides.erase(vals.strides.begin());
    }
    auto op = index_op(t, true, v, axes, indices, layout);
    op->dense = tensor_of(t, vals);
    op->dense.shape = layout.result;
    op->dense.at.strides = broadcast_strides(vals, layout.result);
    t.array = std::move(op);
    return t;
}

TaskSpec mask_count_task(const Array& mask, std::shared_ptr<int64_t> count, const std::string& name) {
    TaskSpec t = compute_task({&mask}, {}, name, "mask count");
    auto op = std::make_shared<provider::MaskCountOp>();
    op->mask = tensor_of(t, mask);
    op->count = std::move(count);
    t.array = std::move(op);
    return t;
}

TaskSpec compress_task(const Array& v, int axis, const Array& mask, int insert_at, const Array& out,
                       const std::string& name) {
    TaskSpec t = compute_task({&v, &mask}, {&out}, name, "compress");
    if (out.size() == 0) {
        nothing_to_do(t);
        return t;
    }
    auto op = std::make_shared<provider::CompressOp>();
    op->v = tensor_of(t, v);
    op->mask = tensor_of(t, mask);
    op->out = tensor_of(t, out, Access::Write);
    op->axis = axis;
    op->insert_at = insert_at;
    t.array = std::move(op);
    return t;
}

TaskSpec isin_task(const Array& x1, const Array& x2, DType common, bool invert, const Array& out,
                   const std::string& name) {
    TaskSpec t = compute_task({&x1, &x2}, {&out}, name, "isin");
    // float16 and bfloat16 compare as float32, which holds them exactly.
    const DType cmp = common == DType::Float16 || common == DType::BFloat16 ? DType::Float32 : common;
    auto op = std::make_shared<provider::IsInOp>();
    op->x1 = tensor_of(t, x1);
    op->x2 = tensor_of(t, x2);
    op->out = tensor_of(t, out, Access::Write);
    op->cmp = cmp;
    op->invert = invert;
    t.array = std::move(op);
    return t;
}

}  // namespace hrx

namespace hrx::indexing {

namespace {

// The checks of integer index arrays, in order: check_element_operand, an
// integer dtype (IndexError, as NumPy), x's runtime.
void check_indices(const std::vector<Array>& indices, const Array& x, const std::string& op) {
    for (const Array& a : indices) {
        check_element_operand(a, Access::Read, op);
        if (!dtype_is_integer(a.dtype))
            fail(ErrorKind::Index, op + ": arrays used as indices must be of integer (or boolean) type, got " +
                                       std::string(dtype_name(a.dtype)));
        if (&runtime_of(a) != &runtime_of(x))
            fail(ErrorKind::Message, op + ": the index " + a.describe() + " belongs to another runtime");
    }
}

// Bounds of every index array, on the compute lane, waited for: an index
// out of range is an IndexError before the gather or scatter is submitted.
void check_bounds(const Array& v, const std::vector<int>& axes, const std::vector<Array>& indices,
                  const std::vector<int>& key_axes, const std::string& op) {
    RuntimeCore& rt = runtime_of(v);
    for (size_t j = 0; j < indices.size(); ++j) {
        if (indices[j].size() == 0) continue;
        auto range = std::make_shared<std::pair<int64_t, int64_t>>(0, 0);
        TaskSpec t = index_range_task(indices[j], range, op);
        run_now(rt, t);
        check_index_bounds(*range, v.shape[static_cast<size_t>(axes[j])], key_axes[j], op);
    }
}

kernels::IndexMode mode_of(const std::string& mode, const std::string& op) {
    if (mode == "raise") return kernels::IndexMode::Raise;
    if (mode == "wrap") return kernels::IndexMode::Wrap;
    if (mode == "clip") return kernels::IndexMode::Clip;
    fail(ErrorKind::Message, op + ": mode must be 'raise', 'wrap' or 'clip', got '" + mode + "'");
}

IndexLayout layout_of(const Array& v, const std::vector<int>& axes, const std::vector<Array>& indices,
                      bool adjacent, int first, const std::string& op) {
    if (axes.size() != indices.size() || axes.empty())
        fail(ErrorKind::Message, op + ": one axis per index array is needed");
    for (size_t j = 0; j < axes.size(); ++j)
        if (axes[j] < 0 || axes[j] >= v.ndim() || (j && axes[j] <= axes[j - 1]))
            fail(ErrorKind::Message, op + ": index axes must be distinct axes of the array, in order");
    std::vector<Dims> shapes;
    for (const Array& a : indices) shapes.push_back(a.shape);
    IndexLayout l = index_layout(v.shape, axes, shapes, adjacent, first, op);
    if (static_cast<int>(l.result.size()) > kMaxDims)
        fail(ErrorKind::Index, op + ": the result would have " + std::to_string(l.result.size()) +
                                   " dimensions, more than the " + std::to_string(kMaxDims) + " allowed");
    checked_size(l.result, v.dtype, op);
    return l;
}

// A copy of `a` that no later write of `v` can touch (a itself when it cannot).
Array detached(const Array& a, const Array& v, const std::string& op) {
    if (!may_overlap(a, v)) return a;
    return creation::convert(a, a.dtype, a.placement(), op);
}

}  // namespace

Array get(const Array& x, const std::vector<int>& axes, const std::vector<Array>& indices,
          const std::vector<int>& key_axes, bool adjacent, int first, const std::string& mode_name,
          const std::string& op) {
    check_element_operand(x, Access::Read, op);
    check_indices(indices, x, op);
    const kernels::IndexMode mode = mode_of(mode_name, op);
    const IndexLayout l = layout_of(x, axes, indices, adjacent, first, op);
    int64_t positions = 1;
    for (int64_t b : l.bshape) positions *= b;
    for (size_t j = 0; j < axes.size(); ++j)
        if (mode != kernels::IndexMode::Raise && positions && x.shape[static_cast<size_t>(axes[j])] == 0)
            fail(ErrorKind::Index, op + ": cannot do a non-empty take from an empty axis (axis " +
                                       std::to_string(key_axes.at(j)) + ")");
    if (mode == kernels::IndexMode::Raise) check_bounds(x, axes, indices, key_axes, op);
    RuntimeCore& rt = runtime_of(x);
    Array out = make_array(rt, x.placement(), l.result, x.dtype, op);
    TaskSpec t = gather_task(x, axes, indices, l, mode, out, op);
    submit(rt, t);
    return out;
}

void set(const Array& x, const std::vector<int>& axes, const std::vector<Array>& indices_in,
         const std::vector<int>& key_axes, bool adjacent, int first, const Array& values, const std::string& op) {
    check_element_operand(x, Access::Write, op);
    check_indices(indices_in, x, op);
    const IndexLayout l = layout_of(x, axes, indices_in, adjacent, first, op);
    check_element_operand(values, Access::Read, op);
    if (values.dtype != x.dtype || &runtime_of(values) != &runtime_of(x))
        fail(ErrorKind::Message, op + ": the values must be a DeviceArray of the target's dtype and runtime");
    check_assignable(values.shape, l.result, op);
    check_bounds(x, axes, indices_in, key_axes, op);
    // NumPy reads the values and indices before it writes: x[x] = x[::-1].
    const Array vals = detached(values, x, op);
    std::vector<Array> indices = indices_in;
    for (Array& a : indices) a = detached(a, x, op);
    RuntimeCore& rt = runtime_of(x);
    TaskSpec t = scatter_task(x, axes, indices, l, vals, op);
    submit(rt, t);
}

Array mask_get(const Array& x, int axis, const Array& mask, int key_axis, bool adjacent, int first,
               const std::string& op) {
    check_element_operand(x, Access::Read, op);
    check_element_operand(mask, Access::Read, op);
    if (mask.dtype != DType::Bool) fail(ErrorKind::Index, op + ": a mask must be a bool array");
    if (axis < 0 || mask.ndim() == 0 || axis + mask.ndim() > x.ndim())
        fail(ErrorKind::Index, op + ": too many indices for array: array is " + std::to_string(x.ndim()) +
                                   "-dimensional, but " + std::to_string(axis + mask.ndim()) + " were indexed");
    for (int d = 0; d < mask.ndim(); ++d) {
        const int64_t have = x.shape[static_cast<size_t>(axis + d)], want = mask.shape[static_cast<size_t>(d)];
        if (have != want && want != 0)  // an empty mask dimension selects nothing (NumPy)
            fail(ErrorKind::Index, op + ": boolean index did not match indexed array along axis " +
                                       std::to_string(key_axis + d) + "; size of axis is " + std::to_string(have) +
                                       " but size of corresponding boolean axis is " + std::to_string(want));
    }
    if (&runtime_of(mask) != &runtime_of(x))
        fail(ErrorKind::Message, op + ": the mask " + mask.describe() + " belongs to another runtime");
    RuntimeCore& rt = runtime_of(x);
    auto count = std::make_shared<int64_t>(0);
    TaskSpec tc = mask_count_task(mask, count, op);
    run_now(rt, tc);
    std::vector<int> axes;
    for (int d = 0; d < mask.ndim(); ++d) axes.push_back(axis + d);
    const IndexLayout l = index_layout(x.shape, axes, {Dims{*count}}, adjacent, first, op);
    Array out = make_array(rt, x.placement(), l.result, x.dtype, op);
    TaskSpec t = compress_task(x, axis, mask, l.insert_at, out, op);
    submit(rt, t);
    return out;
}

Array isin(const Array& x1, const Array& x2, bool invert, const std::string& op) {
    check_element_operand(x1, Access::Read, op);
    check_element_operand(x2, Access::Read, op);
    if (&runtime_of(x1) != &runtime_of(x2)) fail(ErrorKind::Message, op + ": x1 and x2 belong to different runtimes");
    RuntimeCore& rt = runtime_of(x1);
    Array out = make_array(rt, x1.placement(), x1.shape, DType::Bool, op);
    TaskSpec t = isin_task(x1, x2, promote_types(x1.dtype, x2.dtype), invert, out, op);
    submit(rt, t);
    return out;
}

}  // namespace hrx::indexing
