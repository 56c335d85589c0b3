// Inner loops of sqrt and the transcendental ufuncs. These call the C
// library's float and double functions (expf for float32, exp for float64,
// and expf for float16/bfloat16, computed in float32), so results can differ
// from NumPy's own SIMD implementations by a few units in the last place
// (tests/test_elementwise_kernels.py measures by how much); sqrt is correctly
// rounded everywhere and so bit-exact.
#include <cmath>

#include "kernels/elementwise_impl.h"

namespace hrx::kernels::ew {

namespace {

#define HRX_MATH_OP(Name, fn)                                  \
    template <class T> struct Name {                           \
        using A = T;                                           \
        using R = T;                                           \
        static T f(T a) noexcept { return std::fn(a); }        \
    };
HRX_MATH_OP(ExpOp, exp)
HRX_MATH_OP(LogOp, log)
HRX_MATH_OP(Log1pOp, log1p)
HRX_MATH_OP(Expm1Op, expm1)
HRX_MATH_OP(SqrtOp, sqrt)
HRX_MATH_OP(SinOp, sin)
HRX_MATH_OP(CosOp, cos)
HRX_MATH_OP(TanOp, tan)
HRX_MATH_OP(TanhOp, tanh)
#undef HRX_MATH_OP

}  // namespace

InnerLoop find_math_loop(Ufunc op, const UfuncLoop& loop) noexcept {
    const DType t = compute_dtype(loop.in[0]);
    switch (op) {
        case Ufunc::Exp: return pick1<ExpOp, kFloats>(t);
        case Ufunc::Log: return pick1<LogOp, kFloats>(t);
        case Ufunc::Log1p: return pick1<Log1pOp, kFloats>(t);
        case Ufunc::Expm1: return pick1<Expm1Op, kFloats>(t);
        case Ufunc::Sqrt: return pick1<SqrtOp, kFloats>(t);
        case Ufunc::Sin: return pick1<SinOp, kFloats>(t);
        case Ufunc::Cos: return pick1<CosOp, kFloats>(t);
        case Ufunc::Tan: return pick1<TanOp, kFloats>(t);
        case Ufunc::Tanh: return pick1<TanhOp, kFloats>(t);
        default: return nullptr;
    }
}

}  // namespace hrx::kernels::ew
