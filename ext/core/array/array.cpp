#include "array/array.h"

#include <algorithm>

#include "checked.h"
#include "errors.h"
#include "runtime/blocking.h"

namespace hrx {

// --- ArrayBase ------------------------------------------------------------------

void ArrayBase::add_writer(std::shared_ptr<CompletionState> c) {
    std::lock_guard<std::mutex> lock(mu_);
    writers_.erase(std::remove_if(writers_.begin(), writers_.end(),
                                  [](const auto& w) { return w->status() == CompletionState::Status::Succeeded; }),
                   writers_.end());
    writers_.push_back(std::move(c));
}

bool ArrayBase::settled_ok() const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& w : writers_)
        if (w->status() != CompletionState::Status::Succeeded) return false;
    return true;
}

std::vector<std::shared_ptr<CompletionState>> ArrayBase::writers() const {
    std::lock_guard<std::mutex> lock(mu_);
    return writers_;
}

bool ArrayBase::ready() const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& w : writers_)
        if (!w->done()) return false;
    return true;
}

std::optional<CompletionState::Outcome> ArrayBase::wait_writers() const {
    std::optional<CompletionState::Outcome> failure;
    for (const auto& w : writers()) {
        w->wait(std::nullopt);
        auto o = w->outcome();
        if (!failure && o.status != CompletionState::Status::Succeeded) failure = std::move(o);
    }
    return failure;
}

void wait_ready(const Array& a) {
    if (a.base->settled_ok()) return;  // the common case: one lock, no copies
    std::optional<CompletionState::Outcome> failure;
    if (a.base->ready()) {
        for (const auto& w : a.base->writers()) {
            auto o = w->outcome();
            if (o.status != CompletionState::Status::Succeeded) {
                failure = std::move(o);
                break;
            }
        }
    } else {
        BlockingWait wait;
        failure = a.base->wait_writers();
    }
    if (failure) throw TaskFailure(std::move(*failure));
}

// --- Array ----------------------------------------------------------------------

int64_t Array::size() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

int64_t Array::nbytes() const {
    if (dtype == DType::BFP16) return size() / 8 * 9;
    return size() * dtype_itemsize(dtype);
}

std::optional<std::pair<uint64_t, uint64_t>> Array::checked_extent() const {
    std::optional<ByteSpan> s;
    if (dtype == DType::BFP16 && !shape.empty()) {
        Dims blocks = shape, block_strides = strides;  // the last axis is dense blocks of 9 bytes
        blocks.back() /= 8;
        block_strides.back() = 9;
        s = strided_span(blocks, block_strides, 9);
    } else {
        s = strided_span(shape, strides, dtype_itemsize(dtype));
    }
    if (!s) return std::nullopt;
    const Checked<int64_t> first = Checked<int64_t>(offset) + s->lo, end = Checked<int64_t>(offset) + s->hi;
    if (!first.ok() || !end.ok() || *first.get() < 0) return std::nullopt;
    return std::pair{static_cast<uint64_t>(*first.get()), static_cast<uint64_t>(*end.get())};
}

std::pair<uint64_t, uint64_t> Array::extent() const {
    // Every array is validated when it is made (make_array, views, imports),
    // so its extent fits; the check guards against a path that forgot to.
    auto e = checked_extent();
    if (!e) fail(ErrorKind::Message, describe() + ": the layout's byte extent overflows");
    return *e;
}

bool Array::c_contiguous() const {
    if (size() == 0) return true;
    const auto want = contiguous_strides(shape, dtype);
    for (size_t i = 0; i < shape.size(); ++i)
        if (shape[i] != 1 && strides[i] != want[i]) return false;
    return true;
}

Use Array::use(Access access) const {
    auto [first, end] = extent();
    return Use{BufferView{base->buffer(), first, end - first}, access};
}

std::string Array::describe() const {
    return std::string(dtype_name(dtype)) + " array of shape " + shape_str(shape) + " on " + buffer()->describe();
}

Dims contiguous_strides(const Dims& shape, DType dtype) {
    Dims s(shape.size());
    int64_t step = dtype == DType::BFP16 ? 9 : dtype_itemsize(dtype);
    for (size_t i = shape.size(); i-- > 0;) {
        s[i] = step;
        if (dtype == DType::BFP16 && i + 1 == shape.size())
            step *= std::max<int64_t>(shape[i] / 8, 1);
        else
            step *= std::max<int64_t>(shape[i], 1);
    }
    return s;
}

int64_t checked_size(const Dims& shape, DType dtype, const std::string& op) {
    if (shape.size() > static_cast<size_t>(kMaxDims))
        fail(ErrorKind::Message, op + ": at most " + std::to_string(kMaxDims) + " dimensions are supported, got " +
                                     std::to_string(shape.size()));
    // As NumPy: the product of the nonzero dimensions must fit, with a
    // headroom of 16 so that byte sizes and contiguous strides fit in int64 too.
    Checked<int64_t> n = 1, bound = 16;
    for (int64_t d : shape) {
        if (d < 0) fail(ErrorKind::Message, op + ": negative dimensions are not allowed (shape " + shape_str(shape) + ")");
        n *= d;
        bound *= std::max<int64_t>(d, 1);
    }
    if (!bound.ok()) fail(ErrorKind::Message, op + ": array is too big (shape " + shape_str(shape) + ")");
    if (dtype == DType::BFP16 && (shape.empty() || shape.back() % 8 != 0))
        fail(ErrorKind::Message, op + ": a bfp16 array's last axis must be a multiple of 8 (blocks of 8 values), "
                                      "got shape " + shape_str(shape));
    return *n.get();
}

int normalize_axis(int64_t axis, int ndim, const std::string& op) {
    if (axis < -static_cast<int64_t>(ndim) || axis >= ndim) fail_axis(std::to_string(axis), ndim, op);
    return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

void fail_axis(const std::string& axis, int ndim, const std::string& op) {
    fail(ErrorKind::Axis, op + ": axis " + axis + " is out of bounds for array of dimension " + std::to_string(ndim));
}

std::vector<bool> axes_mask(const std::vector<int64_t>& axes, int ndim, const std::string& op) {
    std::vector<bool> mask(static_cast<size_t>(ndim), false);
    for (int64_t a : axes) {
        const int i = normalize_axis(a, ndim, op);
        if (mask[static_cast<size_t>(i)]) fail(ErrorKind::Message, op + ": duplicate value in 'axis'");
        mask[static_cast<size_t>(i)] = true;
    }
    return mask;
}

std::string shape_str(const Dims& shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(shape[i]);
    }
    if (shape.size() == 1) s += ",";
    return s + ")";
}

bool may_overlap(const Array& a, const Array& b) {
    if (a.base->storage() != b.base->storage()) return false;
    auto [a0, a1] = a.extent();
    auto [b0, b1] = b.extent();
    return a0 < b1 && b0 < a1;
}

bool same_layout(const Array& a, const Array& b) {
    if (a.base->storage() != b.base->storage() || a.offset != b.offset || a.dtype != b.dtype ||
        a.shape != b.shape)
        return false;
    for (size_t i = 0; i < a.shape.size(); ++i)
        if (a.shape[i] != 1 && a.strides[i] != b.strides[i]) return false;
    return true;
}

Array view_of(const Array& src, int64_t offset, Dims shape, Dims strides, DType dtype, const std::string& op) {
    if (shape.size() != strides.size())
        fail(ErrorKind::Message, op + ": shape and strides differ in length");
    checked_size(shape, dtype, op);
    Array v;
    v.base = src.base;
    v.offset = offset;
    v.shape = std::move(shape);
    v.strides = std::move(strides);
    v.dtype = dtype;
    if (dtype != DType::BFP16) {
        const int64_t item = dtype_itemsize(dtype);
        for (int64_t s : v.strides)
            if (s % item != 0)
                fail(ErrorKind::Message, op + ": strides must be multiples of the item size (" + std::to_string(item) +
                                             " bytes for " + dtype_name(dtype) + ")");
    }
    if (offset < 0) fail(ErrorKind::Message, op + ": negative offset");
    const auto extent = v.checked_extent();
    if (!extent || (v.size() > 0 && extent->second > v.buffer()->nbytes()))
        fail(ErrorKind::Message, op + ": the view (offset " + std::to_string(offset) + ", shape " + shape_str(v.shape) +
                                     ", strides " + shape_str(v.strides) + ") reaches outside its buffer (" +
                                     v.buffer()->describe() + ")");
    return v;
}

Array contiguous_view(const Array& src, Dims shape, const std::string& op) {
    Dims strides = contiguous_strides(shape, src.dtype);
    return view_of(src, src.offset, std::move(shape), std::move(strides), src.dtype, op);
}

}  // namespace hrx
