// The reduction engine for integer add and multiply, and for every op on
// bool. Integer add and multiply wrap alike for signed and unsigned types of
// one width, so each width runs as its unsigned type; on bool every op is
// and, or or xor. (Bitwise ops are in reduce_bitwise.cpp, maximum/minimum in
// reduce_minmax.cpp: one file each keeps compile times short.)
#include <cstdint>

#include "kernels/reduce_impl.h"

namespace hrx::kernels::ew {

namespace {
template <class T>
bool run(Ufunc op, const ReduceCtx& c) {
    if (op == Ufunc::Add) reduce_engine<RAdd<T>, T>(c);
    else reduce_engine<RMul<T>, T>(c);
    return true;
}

bool run_bool(Ufunc op, const ReduceCtx& c) {
    switch (op) {
        case Ufunc::Add:
        case Ufunc::Maximum:
        case Ufunc::LogicalOr:
        case Ufunc::BitwiseOr: reduce_engine<RLOr<bool>, bool>(c); return true;
        case Ufunc::Multiply:
        case Ufunc::Minimum:
        case Ufunc::LogicalAnd:
        case Ufunc::BitwiseAnd: reduce_engine<RLAnd<bool>, bool>(c); return true;
        case Ufunc::LogicalXor:
        case Ufunc::BitwiseXor: reduce_engine<RLXor<bool>, bool>(c); return true;
        default: return false;
    }
}
}  // namespace

bool reduce_ints(Ufunc op, const ReduceCtx& c) {
    if (c.ct == DType::Bool) return run_bool(op, c);
    if (op == Ufunc::Maximum || op == Ufunc::Minimum) return reduce_minmax_ints(op, c);
    if (op != Ufunc::Add && op != Ufunc::Multiply) return reduce_bitwise_ints(op, c);
    return with_int_type<true>(c.ct, [&](auto tag) { return run<decltype(tag)>(op, c); });
}

}  // namespace hrx::kernels::ew
