// The reduction engine instantiated for float32, float64, complex64 and
// complex128 accumulation.
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
// Complex numbers have no order: only add and multiply reduce them.
template <class C>
bool run_complex(Ufunc op, const ReduceCtx& c) {
    switch (op) {
        case Ufunc::Add: reduce_engine<RAdd<C>, C>(c); return true;
        case Ufunc::Multiply: reduce_engine<RMul<C>, C>(c); return true;
        default: return false;
    }
}
}  // namespace

bool reduce_floats(Ufunc op, const ReduceCtx& c) {
    if (c.ct == DType::Float32) return run<float>(op, c);
    if (c.ct == DType::Float64) return run<double>(op, c);
    if (c.ct == DType::Complex64) return run_complex<std::complex<float>>(op, c);
    if (c.ct == DType::Complex128) return run_complex<std::complex<double>>(op, c);
    return false;
}

}  // namespace hrx::kernels::ew
