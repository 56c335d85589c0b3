// The array operations the emulated provider supplies (Note [Array
// operations are dispatches] in provider/provider.h): each dispatch's
// description resolved against its bindings and run by the kernels library
// on the lane thread that submitted it.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "kernels/bf16.h"
#include "kernels/bfp16.h"
#include "kernels/matmul.h"
#include "provider/emulated/emulated.h"

namespace hrx::provider::emulated {

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

namespace {

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

// For each output batch index (C order over `batch`), the index of the
// operand matrix (C order over the operand's own batch shape) that feeds it.
Dims batch_map(const Dims& op_batch, const Dims& batch) {
    const int64_t total = element_count(batch);
    Dims map(static_cast<size_t>(total));
    const size_t pad = batch.size() - op_batch.size();
    Dims idx(batch.size(), 0);
    for (int64_t t = 0; t < total; ++t) {
        int64_t s = 0;
        for (size_t i = 0; i < op_batch.size(); ++i) s = s * op_batch[i] + (op_batch[i] == 1 ? 0 : idx[pad + i]);
        map[static_cast<size_t>(t)] = s;
        for (size_t d = batch.size(); d-- > 0;) {
            if (++idx[d] < batch[d]) break;
            idx[d] = 0;
        }
    }
    return map;
}

// Quantises the dense float32 copy `m` of the matmul operand of `shape`
// (matrices of rows x cols, row-major) to bfp16ebs8 and back along the rows
// (`along_rows`) or the columns. A NaN or Inf fails the operation (a Data
// error naming the `operand`'s element).
void quantize_dense(float* m, const Dims& shape, bool along_rows, bool even, const char* operand) {
    const auto rounding = even ? kernels::BfpRounding::even : kernels::BfpRounding::floor;
    const int64_t rows = shape[shape.size() - 2], cols = shape.back();
    const int64_t count = rows * cols ? element_count(shape) / (rows * cols) : 0;
    const int64_t line = along_rows ? cols : rows;
    std::vector<float> buf(static_cast<size_t>(line));
    std::vector<uint8_t> blocks(static_cast<size_t>(line / 8 * 9));
    for (int64_t c = 0; c < count; ++c) {
        float* mat = m + c * rows * cols;
        const int64_t lines = along_rows ? rows : cols;
        for (int64_t l = 0; l < lines; ++l) {
            for (int64_t i = 0; i < line; ++i) buf[i] = along_rows ? mat[l * cols + i] : mat[i * cols + l];
            const std::ptrdiff_t bad = kernels::bfp16_first_nonfinite(buf.data(), static_cast<size_t>(line / 8));
            if (bad >= 0) {
                const int64_t at = c * rows * cols + (along_rows ? l * cols + bad : bad * cols + l);
                kernels::bfp16_unencodable(
                    "", kernels::element_name(static_cast<int>(shape.size()), shape.data(), at, operand), buf[bad]);
            }
            kernels::bfp16_encode(buf.data(), blocks.data(), static_cast<size_t>(line / 8), rounding);
            kernels::bfp16_decode(blocks.data(), buf.data(), static_cast<size_t>(line / 8));
            for (int64_t i = 0; i < line; ++i) (along_rows ? mat[l * cols + i] : mat[i * cols + l]) = buf[i];
        }
    }
}

// A bound matmul operand: where its element [0, ...] is, with its shape.
struct Matrix {
    kernels::StridedArg arg;
    const Dims& shape;
    std::vector<uint8_t> dense(DType dt) const {
        return kernels::dense_copy(static_cast<int>(shape.size()), shape.data(), arg, dt);
    }
};

// A matrix-vector product (A (m, k) @ B (k, 1), or A (1, k) @ B (k, n) as
// B^T @ A^T) of float32 / float64 computed in place from the matrix's
// strides, row-major or transposed (Note [Matrix-vector] in
// kernels/gemm.cpp: the GEMM's bits, without copying the matrix dense).
// False when the product is not one: the caller takes the general path.
bool matvec(const Matrix& A, const Matrix& B, DType cdt, uint8_t* cptr) {
    if ((cdt != DType::Float32 && cdt != DType::Float64) || A.arg.dtype != cdt || B.arg.dtype != cdt ||
        A.shape.size() != 2 || B.shape.size() != 2)
        return false;
    const int64_t m = A.shape[0], k = A.shape[1], n = B.shape[1];
    const bool column = n == 1;
    if (!column && m != 1) return false;
    const Matrix& mat = column ? A : B;
    const Matrix& vec = column ? B : A;
    const int64_t rows = column ? m : n;
    const int64_t item = dtype_itemsize(cdt);
    int64_t rs = column ? mat.arg.strides[0] : mat.arg.strides[1], cs = column ? mat.arg.strides[1] : mat.arg.strides[0];
    if (rs % item != 0 || cs % item != 0) return false;
    rs /= item;
    cs /= item;
    if (rows == 1) rs = 1;  // never stepped
    if (k == 1) cs = 1;
    if (rs < 0 || cs < 0 || (rs != 1 && cs != 1)) return false;
    const std::vector<uint8_t> x = vec.dense(cdt);
    return kernels::matvec_typed(cdt, mat.arg.data, static_cast<size_t>(rs), static_cast<size_t>(cs), x.data(), cptr,
                                 static_cast<size_t>(rows), static_cast<size_t>(k));
}

void run_matmul(const MatmulOp& op, const Span* bindings, size_t count) {
    const Matrix A{{bound(op.a, bindings, count), op.a.dtype, op.a.strides.data()}, op.a_shape};
    const Matrix B{{bound(op.b, bindings, count), op.b.dtype, op.b.strides.data()}, op.b_shape};
    const Dims& cs = op.out_shape;
    const size_t an = A.shape.size(), bn = B.shape.size();
    const int64_t m = A.shape[an - 2], k = A.shape[an - 1], n = B.shape[bn - 1];
    const Dims batch(cs.begin(), cs.end() - 2);
    const Dims ba(A.shape.begin(), A.shape.end() - 2), bb(B.shape.begin(), B.shape.end() - 2);
    const int64_t total = element_count(batch);
    Dims ia, ib;
    if (ba != batch) ia = batch_map(ba, batch);
    if (bb != batch) ib = batch_map(bb, batch);
    const DType cdt = op.out.dtype;
    const Dims dense = dense_strides(cs, dtype_itemsize(cdt));
    const bool direct = op.out.strides == dense;
    std::vector<uint8_t> cbuf;
    uint8_t* cptr = bound(op.out, bindings, count);
    if (!direct) {
        cbuf.resize(static_cast<size_t>(element_count(cs) * dtype_itemsize(cdt)));
        cptr = cbuf.data();
    }
    using Mode = MatmulOp::Mode;
    if (op.mode != Mode::Natural) {
        std::vector<uint8_t> abuf, bbuf;
        if (op.mode == Mode::Bfp16) {
            // Quantise along k in float32, then narrow: bfp16 values are bf16-exact.
            std::vector<uint8_t> af = A.dense(DType::Float32), bf = B.dense(DType::Float32);
            quantize_dense(reinterpret_cast<float*>(af.data()), A.shape, true, op.bfp16_even, "lhs");
            quantize_dense(reinterpret_cast<float*>(bf.data()), B.shape, false, op.bfp16_even, "rhs");
            abuf.resize(af.size() / 2);
            bbuf.resize(bf.size() / 2);
            kernels::f32_to_bf16(reinterpret_cast<float*>(af.data()), reinterpret_cast<uint16_t*>(abuf.data()),
                                 af.size() / 4);
            kernels::f32_to_bf16(reinterpret_cast<float*>(bf.data()), reinterpret_cast<uint16_t*>(bbuf.data()),
                                 bf.size() / 4);
        } else {
            abuf = A.dense(DType::BFloat16);
            bbuf = B.dense(DType::BFloat16);
        }
        kernels::matmul_bf16(reinterpret_cast<uint16_t*>(abuf.data()), reinterpret_cast<uint16_t*>(bbuf.data()),
                             reinterpret_cast<float*>(cptr), static_cast<size_t>(total), static_cast<size_t>(m),
                             static_cast<size_t>(k), static_cast<size_t>(n), ia.empty() ? nullptr : ia.data(),
                             ib.empty() ? nullptr : ib.data());
    } else if (!matvec(A, B, cdt, cptr)) {
        std::vector<uint8_t> abuf = A.dense(cdt), bbuf = B.dense(cdt);
        kernels::matmul_typed(cdt, cdt, abuf.data(), bbuf.data(), cptr, static_cast<size_t>(total),
                              static_cast<size_t>(m), static_cast<size_t>(k), static_cast<size_t>(n),
                              ia.empty() ? nullptr : ia.data(), ib.empty() ? nullptr : ib.data());
    }
    if (!direct)
        kernels::copy_cast(static_cast<int>(cs.size()), cs.data(), {cbuf.data(), cdt, dense.data()},
                           output(op.out, bindings, count));
}

}  // namespace

void run_array_op(const ArrayOp& op, const Span* bindings, size_t count) {
    switch (op.family) {
        case ArrayOp::Family::Elementwise:
            return run_elementwise(static_cast<const ElementwiseOp&>(op), bindings, count);
        case ArrayOp::Family::CopyCast: return run_copy_cast(static_cast<const CopyCastOp&>(op), bindings, count);
        case ArrayOp::Family::Reduce: return run_reduce(static_cast<const ReduceOp&>(op), bindings, count);
        case ArrayOp::Family::ArgReduce: return run_arg_reduce(static_cast<const ArgReduceOp&>(op), bindings, count);
        case ArrayOp::Family::Matmul: return run_matmul(static_cast<const MatmulOp&>(op), bindings, count);
        default: return run_more_array_op(op, bindings, count);
    }
}

}  // namespace hrx::provider::emulated
