// The reduction engine instantiated for float32 and float64 accumulation.
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
        default: return false;  // logical ops run on bool; bitwise ops have no float loops
    }
}
}  // namespace

bool reduce_floats(Ufunc op, const ReduceCtx& c) {
    if (c.ct == DType::Float32) return run<float>(op, c);
    if (c.ct == DType::Float64) return run<double>(op, c);
    return false;
}

}  // namespace hrx::kernels::ew
