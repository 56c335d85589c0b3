#include "array/searching.h"

#include "array/sorting.h"
#include "kernels/sort.h"

namespace hrx {

TaskSpec searchsorted_task(const Array& x1, const Array& x2, const Array* sorter, bool right, DType common,
                           const Array& out, const std::string& name) {
    check_sortable(common, name);
    TaskSpec t = sorter ? compute_task({&x1, &x2, sorter}, {&out}, name, "searchsorted")
                        : compute_task({&x1, &x2}, {&out}, name, "searchsorted");
    if (out.size() == 0) {
        t.fn = [] {};
        return t;
    }
    const bool has_sorter = sorter != nullptr;
    const Array s = has_sorter ? *sorter : Array{};
    t.fn = [x1, x2, s, has_sorter, right, common, out] {
        const std::vector<uint8_t> a = dense_copy(x1, common), b = dense_copy(x2, common);
        std::vector<uint8_t> idx;
        if (has_sorter) idx = dense_copy(s, DType::Int64);
        kernels::search_sorted(common, a.data(), x1.size(), has_sorter ? reinterpret_cast<const int64_t*>(idx.data()) : nullptr,
                               b.data(), x2.size(), right, reinterpret_cast<int64_t*>(out.data()));
    };
    return t;
}

TaskSpec nonzero_task(const Array& in, const Array& out, std::shared_ptr<int64_t> count, const std::string& name) {
    TaskSpec t = compute_task({&in}, {&out}, name, "nonzero");
    t.fn = [in, out, count = std::move(count)] {
        std::vector<uint8_t> buf;
        if (!in.c_contiguous()) buf = dense_copy(in, in.dtype);
        *count = kernels::nonzero_indices(in.dtype, in.c_contiguous() ? in.data() : buf.data(), in.ndim(),
                                          in.shape.data(), reinterpret_cast<int64_t*>(out.data()), out.shape.back());
    };
    return t;
}

}  // namespace hrx
