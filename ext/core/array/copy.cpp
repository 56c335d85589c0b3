#include "array/copy.h"

#include "errors.h"

namespace hrx::copy {

DType value_dtype(DType dtype) { return dtype == DType::BFP16 ? DType::Float32 : dtype; }

void check(const Placement& place, const Dims& shape, DType dtype, RuntimeCore& rt, const Source& src,
           const std::string& op) {
    if (src.host) {
        check_copy_shapes(place, shape, dtype, host_visible(), src.host->shape, src.host->dtype, op);
        return;
    }
    if (!src.operand.scalar && &runtime_of(src.operand.arr()) != &rt)
        fail(ErrorKind::Message, op + ": the source " + src.operand.arr().describe() + " belongs to another runtime");
    check_copy(place, shape, dtype, src.operand, op);
}

void into(const Array& dst, Source src, bool even, const std::string& op) {
    check(dst.placement(), dst.shape, dst.dtype, runtime_of(dst), src, op);
    into_checked(dst, std::move(src), even, op);
}

void into_checked(const Array& dst, Source src, bool even, const std::string& op) {
    RuntimeCore& rt = runtime_of(dst);
    check_writable(dst, op);
    check_device_use(dst, Access::Write, op);
    if (src.host) {
        src.operand = Operand::of(host_transfer::upload(rt, host_visible(), *src.host, op));
    }
    // A source overlapping dst is read before anything is written: the
    // dispatch stages it (Note [Array operations are dispatches]).
    TaskSpec t = copy_task(dst, src.operand, op, even);
    submit(rt, t);
}

}  // namespace hrx::copy
