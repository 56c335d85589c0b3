#include "array/creation.h"

#include "errors.h"
#include "runtime/runtime.h"

namespace hrx::creation {

Placement default_placement(RuntimeCore& rt) {
    Placement p;
    p.kind = PlacementKind::Shared;
    p.runtime = rt.shared_from_this();
    p.npu_index = 0;
    return p;
}

std::shared_ptr<RuntimeCore> placement_runtime(const Placement& p, const std::shared_ptr<RuntimeCore>& fallback) {
    return p.names_npu() ? runtime_of(p.runtime) : fallback;
}

Home home(const std::optional<Placement>& requested, const Array* like, const std::shared_ptr<RuntimeCore>& default_rt,
          const std::string& op) {
    if (!like) {
        Placement p = requested ? *requested : default_placement(*default_rt);
        return {placement_runtime(p, default_rt), std::move(p)};
    }
    auto rt = runtime_of(*like).shared_from_this();
    if (!requested) return {rt, like->placement()};
    if (requested->names_npu() && requested->runtime != rt)
        fail(ErrorKind::Message, op + ": " + requested->repr() + " names an NPU of another runtime than the array's (" +
                                     like->describe() + "); arrays move only within their runtime");
    return {rt, *requested};
}

Array empty(const Home& home, const Dims& shape, DType dtype, const std::string& op) {
    return make_array(*home.rt, home.placement, shape, dtype, op);
}

Array full(const Home& home, const Dims& shape, DType dtype, copy::Source fill, const std::string& op) {
    checked_size(shape, dtype, op);
    copy::check(home.placement, shape, dtype, *home.rt, fill, op);
    Array dst = make_array(*home.rt, home.placement, shape, dtype, op);
    if (dst.size() > 0) copy::into_checked(dst, std::move(fill), false, op);
    return dst;
}

Array convert(const Array& x, DType dtype, const Placement& placement, const std::string& op) {
    home(placement, &x, nullptr, op);  // x's runtime only
    RuntimeCore& rt = runtime_of(x);
    checked_size(x.shape, dtype, op);
    const Operand src = Operand::of(x);
    check_copy(placement, x.shape, dtype, src, op);
    Array dst = make_array(rt, placement, x.shape, dtype, op);
    TaskSpec task = copy_task(dst, src, op);
    submit(rt, task);
    return dst;
}

}  // namespace hrx::creation
