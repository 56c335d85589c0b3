#include "array/sorting.h"

#include <cstring>
#include <utility>

#include "kernels/elementwise.h"
#include "kernels/sort.h"

namespace hrx {

Array axis_last(const Array& a, int axis) {
    Array v = a;
    const auto ax = static_cast<size_t>(axis);
    v.shape.erase(v.shape.begin() + ax);
    v.strides.erase(v.strides.begin() + ax);
    v.shape.push_back(a.shape[ax]);
    v.strides.push_back(a.strides[ax]);
    return v;
}

void check_sortable(DType dt, const std::string& name) {
    if (dtype_info(dt).kind == DTypeKind::Block)
        fail(ErrorKind::Unsupported, name + ": " + dtype_name(dt) +
                                         " cannot be sorted (blocks share exponents; convert to float32 first)");
}

void check_comparable(const Array& a, const std::string& op) {
    if (a.dtype == DType::BFP16)
        fail(ErrorKind::Type, op + ": bfp16 arrays cannot be compared; convert with astype(hx.float32)");
    check_element_operand(a, Access::Read, op);
}

Array head(const Array& a, int64_t row, int64_t k) {
    Array v = a;
    v.offset += row * a.strides[0] * (a.ndim() > 1 ? 1 : 0);
    v.shape = Dims{k};
    v.strides = Dims{a.strides.back()};
    return v;
}

TaskSpec sort_task(const Array& in, int axis, bool descending, bool indices, const Array& out,
                   const std::string& name) {
    check_sortable(in.dtype, name);
    TaskSpec t = compute_task({&in}, {&out}, name, indices ? "argsort" : "sort");
    if (out.size() == 0) {
        t.fn = [] {};
        return t;
    }
    const Array src = axis_last(in, axis);
    const Array dst = axis_last(out, axis);
    t.fn = [src, dst, descending, indices] {
        const int64_t n = src.shape.back();
        const int64_t rows = src.size() / n;
        // Rows already in place (the sorted axis is last and dense) are
        // sorted where they are; anything else goes through a dense copy.
        const bool direct_out = dst.c_contiguous();
        std::vector<uint8_t> buf;
        if (indices) {
            const bool direct_in = src.c_contiguous();
            if (!direct_in) buf = dense_copy(src, src.dtype);
            const uint8_t* keys = direct_in ? src.data() : buf.data();
            std::vector<uint8_t> obuf;
            if (!direct_out) obuf.resize(static_cast<size_t>(dst.size() * 8));
            auto* idx = reinterpret_cast<int64_t*>(direct_out ? dst.data() : obuf.data());
            kernels::argsort_rows(src.dtype, keys, idx, rows, n, descending);
            if (!direct_out) {
                const Dims dense = contiguous_strides(dst.shape, DType::Int64);
                kernels::copy_cast(dst.ndim(), dst.shape.data(),
                                   kernels::StridedArg{obuf.data(), DType::Int64, dense.data()},
                                   kernels::StridedArg{dst.data(), DType::Int64, dst.strides.data()});
            }
            return;
        }
        if (direct_out) {
            // Dense rows are read where they are; others are gathered into dst first.
            const uint8_t* from = src.data();
            if (!src.c_contiguous()) {
                const Dims dense = contiguous_strides(dst.shape, dst.dtype);
                kernels::copy_cast(src.ndim(), src.shape.data(),
                                   kernels::StridedArg{src.data(), src.dtype, src.strides.data()},
                                   kernels::StridedArg{dst.data(), dst.dtype, dense.data()});
                from = dst.data();
            }
            kernels::sort_rows(dst.dtype, from, dst.data(), rows, n, descending);
            return;
        }
        buf = dense_copy(src, src.dtype);
        kernels::sort_rows(src.dtype, buf.data(), buf.data(), rows, n, descending);
        const Dims dense = contiguous_strides(dst.shape, dst.dtype);
        kernels::copy_cast(dst.ndim(), dst.shape.data(), kernels::StridedArg{buf.data(), dst.dtype, dense.data()},
                           kernels::StridedArg{dst.data(), dst.dtype, dst.strides.data()});
    };
    return t;
}

}  // namespace hrx

namespace hrx::sorting {

Array sort(const Array& in, int axis, bool descending, bool indices, const std::string& op) {
    RuntimeCore& rt = runtime_of(in);
    Array out = make_array(rt, in.placement(), in.shape, indices ? DType::Int64 : in.dtype, op);
    TaskSpec t = sort_task(in, axis, descending, indices, out, op);
    submit(rt, t);
    return out;
}

}  // namespace hrx::sorting
