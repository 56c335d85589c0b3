#include "array/set.h"

#include "array/sorting.h"
#include "kernels/sort.h"

namespace hrx {

TaskSpec unique_task(const Array& in, bool equal_nan, const Array& values, const Array& index,
                     const Array& inverse, const Array& counts, std::shared_ptr<int64_t> count,
                     const std::string& name) {
    check_sortable(in.dtype, name);
    TaskSpec t = compute_task({&in}, {&values, &index, &inverse, &counts}, name, "unique");
    t.fn = [in, equal_nan, values, index, inverse, counts, count = std::move(count)] {
        std::vector<uint8_t> buf;
        if (!in.c_contiguous()) buf = dense_copy(in, in.dtype);
        auto i64 = [](const Array& a) { return reinterpret_cast<int64_t*>(a.data()); };
        *count = kernels::unique_groups(in.dtype, in.c_contiguous() ? in.data() : buf.data(), in.size(), equal_nan,
                                        values.data(), i64(index), i64(inverse), i64(counts));
    };
    return t;
}

TaskSpec unique_axis_task(const Array& in, int axis, const Array& values, const Array& index, const Array& inverse,
                          const Array& counts, std::shared_ptr<int64_t> count, const std::string& name) {
    check_sortable(in.dtype, name);
    TaskSpec t = compute_task({&in}, {&values, &index, &inverse, &counts}, name, "unique");
    // `in` with `axis` first (no copy): its C order is the sub-arrays back to back.
    Array rows = in;
    const auto ax = static_cast<size_t>(axis);
    rows.shape.erase(rows.shape.begin() + axis);
    rows.strides.erase(rows.strides.begin() + axis);
    rows.shape.insert(rows.shape.begin(), in.shape[ax]);
    rows.strides.insert(rows.strides.begin(), in.strides[ax]);
    t.fn = [rows, values, index, inverse, counts, count = std::move(count)] {
        std::vector<uint8_t> buf;
        if (!rows.c_contiguous()) buf = dense_copy(rows, rows.dtype);
        const int64_t n = rows.shape[0];
        const int64_t m = n == 0 ? 0 : rows.size() / n;
        auto i64 = [](const Array& a) { return reinterpret_cast<int64_t*>(a.data()); };
        *count = kernels::unique_rows(rows.dtype, rows.c_contiguous() ? rows.data() : buf.data(), n, m, values.data(),
                                      i64(index), i64(inverse), i64(counts));
    };
    return t;
}

}  // namespace hrx
