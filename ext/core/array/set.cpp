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

}  // namespace hrx
