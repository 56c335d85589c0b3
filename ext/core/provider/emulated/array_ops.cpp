// The array operations the emulated provider supplies (Note [Array
// operations are dispatches] in provider/provider.h): each dispatch's
// description resolved against its bindings and run by the kernels library
// on the lane thread that submitted it.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "kernels/bfp16.h"
#include "provider/emulated/emulated.h"

namespace hrx::provider::emulated {

namespace {

int64_t element_count(const Dims& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

// C-order byte strides of `shape` for items of `item` bytes.
Dims dense_strides(const Dims& shape, int64_t item) {
    Dims dense(shape.size());
    int64_t step = item;
    for (size_t i = shape.size(); i-- > 0;) {
        dense[i] = step;
        step *= std::max<int64_t>(shape[i], 1);
    }
    return dense;
}

uint8_t* bound(const ArrayArg& a, const Span* bindings, size_t count) {
    if (a.binding < 0 || static_cast<size_t>(a.binding) >= count)
        throw std::invalid_argument("array dispatch: operand binding out of range");
    return bindings[a.binding].data + a.offset;
}

// Where an operand's element [0, ...] is, and its strides: in its binding,
// in the dispatch's inline scalar, or (staged) in a contiguous copy in `temp`.
// The one place an operand overlapping the output is staged, for every family.
kernels::StridedArg resolve(const ArrayArg& a, const Span* bindings, size_t count, const Dims& shape,
                            std::vector<uint8_t>& temp, Dims& dense) {
    if (a.binding < 0) return {const_cast<uint8_t*>(a.value), a.dtype, a.strides.data()};
    kernels::StridedArg s{bound(a, bindings, count), a.dtype, a.strides.data()};
    if (!a.stage) return s;
    const int64_t item = dtype_itemsize(a.dtype);
    temp.resize(static_cast<size_t>(std::max<int64_t>(element_count(shape) * item, 1)));
    dense = dense_strides(shape, item);
    kernels::copy_cast(static_cast<int>(shape.size()), shape.data(), s, {temp.data(), a.dtype, dense.data()});
    return {temp.data(), a.dtype, dense.data()};
}

kernels::StridedArg output(const ArrayArg& a, const Span* bindings, size_t count) {
    return {bound(a, bindings, count), a.dtype, a.strides.data()};
}

void run_elementwise(const ElementwiseOp& e, const Span* bindings, size_t count) {
    // Staged operands (an input overlapping the output without being it) are
    // read through copies made before anything is written.
    std::vector<uint8_t> temps[4];
    Dims dense[4];
    kernels::StridedArg args[3];
    for (size_t i = 0; i < e.nin; ++i) args[i] = resolve(e.in[i], bindings, count, e.shape, temps[i], dense[i]);
    kernels::StridedArg where{};
    if (e.has_where) where = resolve(e.where, bindings, count, e.shape, temps[3], dense[3]);
    const kernels::StridedArg o = output(e.out, bindings, count);
    kernels::ufunc_run(e.op, e.loop, static_cast<int>(e.shape.size()), e.shape.data(), args, o,
                       e.has_where ? &where : nullptr);
}

void run_copy_cast(const CopyCastOp& c, const Span* bindings, size_t count) {
    const int ndim = static_cast<int>(c.shape.size());
    std::vector<uint8_t> temp;
    Dims staged;
    const bool src_bfp = c.src.binding >= 0 && c.src.dtype == DType::BFP16;
    const bool dst_bfp = c.dst.dtype == DType::BFP16;
    if (!src_bfp && !dst_bfp) {
        const kernels::StridedArg s = resolve(c.src, bindings, count, c.shape, temp, staged);
        kernels::copy_cast(ndim, c.shape.data(), s, output(c.dst, bindings, count));
        return;
    }
    // A bfp16 side: through contiguous float32 rows of the shape (the array
    // layer made the shapes equal). Decoding reads everything before the
    // encoding writes, so overlap needs no staging here.
    std::vector<float> rows(static_cast<size_t>(element_count(c.shape)));
    const Dims dense = dense_strides(c.shape, sizeof(float));
    const kernels::StridedArg f32{reinterpret_cast<uint8_t*>(rows.data()), DType::Float32, dense.data()};
    if (src_bfp)
        kernels::bfp16_decode_rows(bound(c.src, bindings, count), ndim, c.shape.data(), c.src.strides.data(),
                                   rows.data());
    else
        kernels::copy_cast(ndim, c.shape.data(), resolve(c.src, bindings, count, c.shape, temp, staged), f32);
    if (dst_bfp)
        kernels::bfp16_encode_rows(rows.data(), ndim, c.shape.data(), c.dst.strides.data(), bound(c.dst, bindings, count),
                                   c.bfp16_even ? kernels::BfpRounding::even : kernels::BfpRounding::floor, "");
    else
        kernels::copy_cast(ndim, c.shape.data(), f32, output(c.dst, bindings, count));
}

void run_reduce(const ReduceOp& r, const Span* bindings, size_t count) {
    std::vector<uint8_t> temp;
    Dims staged;
    const kernels::StridedArg in = resolve(r.in, bindings, count, r.shape, temp, staged);
    bool flags[64] = {};
    for (size_t i = 0; i < r.shape.size(); ++i) flags[i] = (r.reduce >> i) & 1;
    kernels::reduce_run(r.op, r.acc, static_cast<int>(r.shape.size()), r.shape.data(), flags, in,
                        output(r.out, bindings, count), r.divisor);
}

void run_arg_reduce(const ArgReduceOp& r, const Span* bindings, size_t count) {
    std::vector<uint8_t> temp;
    Dims staged;
    const kernels::StridedArg in = resolve(r.in, bindings, count, r.shape, temp, staged);
    kernels::arg_reduce_run(r.max, static_cast<int>(r.shape.size()), r.shape.data(), r.axis, in,
                            output(r.out, bindings, count));
}

}  // namespace

void run_array_op(const ArrayOp& op, const Span* bindings, size_t count) {
    switch (op.family) {
        case ArrayOp::Family::Elementwise:
            return run_elementwise(static_cast<const ElementwiseOp&>(op), bindings, count);
        case ArrayOp::Family::CopyCast: return run_copy_cast(static_cast<const CopyCastOp&>(op), bindings, count);
        case ArrayOp::Family::Reduce: return run_reduce(static_cast<const ReduceOp&>(op), bindings, count);
        case ArrayOp::Family::ArgReduce: return run_arg_reduce(static_cast<const ArgReduceOp&>(op), bindings, count);
    }
    throw std::invalid_argument("array dispatch: unknown operation family");
}

}  // namespace hrx::provider::emulated
