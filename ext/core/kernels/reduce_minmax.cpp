// The reduction engine for maximum and minimum over the integers (their
// results depend on signedness, unlike the ops in reduce_int.cpp).
#include <cstdint>

#include "kernels/reduce_impl.h"

namespace hrx::kernels::ew {

namespace {
template <class T>
bool run(Ufunc op, const ReduceCtx& c) {
    if (op == Ufunc::Maximum) reduce_engine<RMax<T>, T>(c);
    else reduce_engine<RMin<T>, T>(c);
    return true;
}
}  // namespace

bool reduce_minmax_ints(Ufunc op, const ReduceCtx& c) {
    switch (c.ct) {
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
