// The reduction engine for bitwise_and/or/xor over the integers (each width
// as its unsigned type: the ops see only bits).
#include <cstdint>

#include "kernels/reduce_impl.h"

namespace hrx::kernels::ew {

namespace {
template <class T>
bool run(Ufunc op, const ReduceCtx& c) {
    switch (op) {
        case Ufunc::BitwiseAnd: reduce_engine<RBAnd<T>, T>(c); return true;
        case Ufunc::BitwiseOr: reduce_engine<RBOr<T>, T>(c); return true;
        case Ufunc::BitwiseXor: reduce_engine<RBXor<T>, T>(c); return true;
        default: return false;
    }
}
}  // namespace

bool reduce_bitwise_ints(Ufunc op, const ReduceCtx& c) {
    switch (c.ct) {
        case DType::Int8:
        case DType::UInt8: return run<std::uint8_t>(op, c);
        case DType::Int16:
        case DType::UInt16: return run<std::uint16_t>(op, c);
        case DType::Int32:
        case DType::UInt32: return run<std::uint32_t>(op, c);
        case DType::Int64:
        case DType::UInt64: return run<std::uint64_t>(op, c);
        default: return false;
    }
}

}  // namespace hrx::kernels::ew
