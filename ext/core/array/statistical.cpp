#include "array/statistical.h"

#include <cstring>

#include "array/sorting.h"
#include "kernels/elementwise.h"
#include "kernels/scan.h"

namespace hrx {

TaskSpec cumulative_task(const Array& in, int axis, bool product, bool include_initial, const Array& out,
                         const std::string& name) {
    TaskSpec t = compute_task({&in}, {&out}, name, product ? "cumulative_prod" : "cumulative_sum");
    if (out.size() == 0) {
        t.fn = [] {};
        return t;
    }
    const Array src = axis_last(in, axis);
    const Array dst = axis_last(out, axis);
    t.fn = [src, dst, product, include_initial] {
        const DType dt = dst.dtype;
        const int64_t item = dtype_itemsize(dt);
        const int64_t n = src.shape.back();
        const int64_t m = dst.shape.back();
        const int64_t rows = dst.size() / m;
        std::vector<uint8_t> inbuf, outbuf;
        const bool direct_in = src.dtype == dt && src.c_contiguous();
        if (!direct_in) inbuf = dense_copy(src, dt);
        const uint8_t* x = direct_in ? src.data() : inbuf.data();
        const bool direct_out = dst.c_contiguous();
        if (!direct_out) outbuf.resize(static_cast<size_t>(dst.size() * item));
        uint8_t* y = direct_out ? dst.data() : outbuf.data();
        if (include_initial) {
            alignas(16) uint8_t identity[16] = {};  // complex128 is the widest element
            const double one = product ? 1.0 : 0.0;
            kernels::copy_cast(0, nullptr, kernels::StridedArg{reinterpret_cast<uint8_t*>(const_cast<double*>(&one)), DType::Float64, nullptr},
                               kernels::StridedArg{identity, dt, nullptr});
            for (int64_t r = 0; r < rows; ++r) std::memcpy(y + r * m * item, identity, static_cast<size_t>(item));
        }
        kernels::scan_rows(dt, product, x, n * item, y + (include_initial ? item : 0), m * item, rows, n);
        if (!direct_out) {
            const Dims dense = contiguous_strides(dst.shape, dt);
            kernels::copy_cast(dst.ndim(), dst.shape.data(), kernels::StridedArg{outbuf.data(), dt, dense.data()},
                               kernels::StridedArg{dst.data(), dt, dst.strides.data()});
        }
    };
    return t;
}

}  // namespace hrx

namespace hrx::statistical {

Array cumulative(const Array& in, int axis, bool product, DType dtype, bool include_initial, const std::string& op) {
    if (dtype == DType::BFP16) fail(ErrorKind::Type, op + ": dtype bfp16 has no arithmetic");
    Dims shape = in.shape;
    shape[static_cast<size_t>(axis)] += include_initial ? 1 : 0;
    RuntimeCore& rt = runtime_of(in);
    Array out = make_array(rt, in.placement(), shape, dtype, op);
    TaskSpec t = cumulative_task(in, axis, product, include_initial, out, op);
    submit(rt, t);
    return out;
}

}  // namespace hrx::statistical
