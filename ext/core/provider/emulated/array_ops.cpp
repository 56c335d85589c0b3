// The array operations the emulated provider supplies (Note [Array
// operations are dispatches] in provider/provider.h): each dispatch's
// description resolved against its bindings and run by the kernels library
// on the lane thread that submitted it.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "provider/emulated/emulated.h"

namespace hrx::provider::emulated {

namespace {

int64_t element_count(const Dims& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

// Where an operand's element [0, ...] is, and its strides: in its binding,
// in the dispatch's inline scalar, or (staged) in a contiguous copy in `temp`.
kernels::StridedArg resolve(const ArrayArg& a, const Span* bindings, size_t count, const Dims& shape,
                            std::vector<uint8_t>& temp, Dims& dense) {
    if (a.binding < 0) return {const_cast<uint8_t*>(a.value), a.dtype, a.strides.data()};
    if (static_cast<size_t>(a.binding) >= count)
        throw std::invalid_argument("elementwise dispatch: operand binding out of range");
    kernels::StridedArg s{bindings[a.binding].data + a.offset, a.dtype, a.strides.data()};
    if (!a.stage) return s;
    const int64_t item = dtype_itemsize(a.dtype);
    temp.resize(static_cast<size_t>(std::max<int64_t>(element_count(shape) * item, 1)));
    dense = Dims(shape.size());
    int64_t step = item;
    for (size_t i = shape.size(); i-- > 0;) {
        dense[i] = step;
        step *= std::max<int64_t>(shape[i], 1);
    }
    kernels::copy_cast(static_cast<int>(shape.size()), shape.data(), s, {temp.data(), a.dtype, dense.data()});
    return {temp.data(), a.dtype, dense.data()};
}

}  // namespace

void run_elementwise(const ElementwiseOp& e, const Span* bindings, size_t count) {
    // Staged operands (an input overlapping the output without being it) are
    // read through copies made before anything is written.
    std::vector<uint8_t> temps[4];
    Dims dense[4];
    kernels::StridedArg args[3];
    for (size_t i = 0; i < e.nin; ++i) args[i] = resolve(e.in[i], bindings, count, e.shape, temps[i], dense[i]);
    kernels::StridedArg where{};
    if (e.has_where) where = resolve(e.where, bindings, count, e.shape, temps[3], dense[3]);
    if (e.out.binding < 0 || static_cast<size_t>(e.out.binding) >= count)
        throw std::invalid_argument("elementwise dispatch: the output binding is out of range");
    const kernels::StridedArg o{bindings[e.out.binding].data + e.out.offset, e.out.dtype, e.out.strides.data()};
    kernels::ufunc_run(e.op, e.loop, static_cast<int>(e.shape.size()), e.shape.data(), args, o,
                       e.has_where ? &where : nullptr);
}

}  // namespace hrx::provider::emulated
