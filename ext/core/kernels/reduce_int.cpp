// The reduction engine instantiated for bool and integer accumulation.
#include <cstdint>

#include "kernels/reduce_impl.h"

namespace hrx::kernels::ew {

namespace {
template <class T>
bool run(Ufunc op, const ReduceCtx& c) {
    switch (op) {
        case Ufunc::Add: reduce_engine<RAdd<T>, T>(c); return true;
        case Ufunc::Multiply: reduce_engine<RMul<T>, T>(c); return true;
        case Ufunc::Maximum: reduce_engine<RMax<T>, T>(c); return true;
        case Ufunc::Minimum: reduce_engine<RMin<T>, T>(c); return true;
        case Ufunc::LogicalAnd: reduce_engine<RLAnd<T>, T>(c); return true;
        case Ufunc::LogicalOr: reduce_engine<RLOr<T>, T>(c); return true;
        case Ufunc::LogicalXor: reduce_engine<RLXor<T>, T>(c); return true;
        case Ufunc::BitwiseAnd: reduce_engine<RBAnd<T>, T>(c); return true;
        case Ufunc::BitwiseOr: reduce_engine<RBOr<T>, T>(c); return true;
        case Ufunc::BitwiseXor: reduce_engine<RBXor<T>, T>(c); return true;
        default: return false;
    }
}
}  // namespace

bool reduce_ints(Ufunc op, const ReduceCtx& c) {
    switch (c.ct) {
        case DType::Bool: return run<bool>(op, c);
        case DType::Int8: return run<std::int8_t>(op, c);
        case DType::Int16: return run<std::int16_t>(op, c);
        case DType::Int32: return run<std::int32_t>(op, c);
        case DType::Int64: return run<std::int64_t>(op, c);
        case DType::UInt8: return run<std::uint8_t>(op, c);
        case DType::UInt16: return run<std::uint16_t>(op, c);
        case DType::UInt32: return run<std::uint32_t>(op, c);
        case DType::UInt64: return run<std::uint64_t>(op, c);
        default: return false;
    }
}

}  // namespace hrx::kernels::ew
