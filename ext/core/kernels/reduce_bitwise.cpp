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
    return with_int_type<true>(c.ct, [&](auto tag) { return run<decltype(tag)>(op, c); });
}

}  // namespace hrx::kernels::ew
