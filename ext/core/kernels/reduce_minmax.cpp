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
    return with_int_type<false>(c.ct, [&](auto tag) { return run<decltype(tag)>(op, c); });
}

}  // namespace hrx::kernels::ew
