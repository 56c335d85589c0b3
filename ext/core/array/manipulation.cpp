#include "array/manipulation.h"

#include <utility>

#include "array/sorting.h"
#include "errors.h"
#include "kernels/manipulation.h"

namespace hrx {

Dims gather_shape(const Array& in, const std::vector<std::vector<int64_t>>& index, const std::string& op) {
    if (static_cast<int>(index.size()) != in.ndim())
        fail(ErrorKind::Message, op + ": " + std::to_string(index.size()) + " index tables for " +
                                     std::to_string(in.ndim()) + " axes");
    Dims shape = in.shape;
    for (size_t d = 0; d < index.size(); ++d) {
        if (index[d].empty() && in.shape[d] != 0) continue;
        shape[d] = static_cast<int64_t>(index[d].size());
        for (const int64_t i : index[d])
            if (i < 0 || i >= in.shape[d])
                fail(ErrorKind::Message, op + ": index " + std::to_string(i) + " is out of bounds for axis " +
                                             std::to_string(d) + " with size " + std::to_string(in.shape[d]));
    }
    return shape;
}

TaskSpec gather_task(const Array& in, std::vector<std::vector<int64_t>> index, const Array& out,
                     const std::string& name) {
    TaskSpec t = compute_task({&in}, {&out}, name, "gather");
    if (out.size() == 0) {
        t.fn = [] {};
        return t;
    }
    // Index tables become byte offsets in place on the lane (a repeat of a
    // large array has a table as long as its result: no second copy of it,
    // and no work on the caller's thread). The task runs once.
    t.fn = [in, out, index = std::move(index)]() mutable {
        std::vector<const int64_t*> offsets(index.size());
        for (size_t d = 0; d < index.size(); ++d) {
            const int64_t stride = in.strides[d];
            auto& table = index[d];
            if (table.empty()) {
                table.resize(static_cast<size_t>(out.shape[d]));
                for (size_t j = 0; j < table.size(); ++j) table[j] = static_cast<int64_t>(j);
            }
            for (int64_t& i : table) i *= stride;
            offsets[d] = table.data();
        }
        kernels::gather_outer(out.ndim(), out.shape.data(), offsets.data(), in.data(), out.data(),
                              dtype_itemsize(in.dtype));
    };
    return t;
}

TaskSpec triangle_task(const Array& in, int64_t k, bool lower, const Array& out, const std::string& name) {
    TaskSpec t = compute_task({&in}, {&out}, name, lower ? "tril" : "triu");
    if (out.size() == 0) {
        t.fn = [] {};
        return t;
    }
    t.fn = [in, out, k, lower] {
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
                               in.strides[nd - 1], out.data(), dtype_itemsize(out.dtype), k, lower);
    };
    return t;
}

}  // namespace hrx

namespace hrx::manipulation {

Array gather(const Array& in, std::vector<std::vector<int64_t>> index, const std::string& op) {
    const Dims shape = gather_shape(in, index, op);
    RuntimeCore& rt = runtime_of(in);
    Array out = make_array(rt, in.placement(), shape, in.dtype, op);
    TaskSpec t = gather_task(in, std::move(index), out, op);
    submit(rt, t);
    return out;
}

Array triangle(const Array& in, int64_t k, bool lower, const std::string& op) {
    if (in.ndim() < 2)
        fail(ErrorKind::Message, op + ": x must have at least 2 dimensions, got shape " + shape_str(in.shape));
    RuntimeCore& rt = runtime_of(in);
    Array out = make_array(rt, in.placement(), in.shape, in.dtype, op);
    TaskSpec t = triangle_task(in, k, lower, out, op);
    submit(rt, t);
    return out;
}

}  // namespace hrx::manipulation
