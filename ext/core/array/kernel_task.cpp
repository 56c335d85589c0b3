// A loaded kernel (built-in or Loom) run over arrays as one array
// operation: what hx.loom.function submits (hx.loom.ufunc has its own task,
// array/loom_ufunc.h). It is a dispatch on the lane's provider queue, like a
// graph's kernel entry, not a closure of the array layer.
#include <memory>

#include "array/creation.h"
#include "array/kernel_call.h"
#include "array/ops.h"
#include "errors.h"
#include "runtime/kernel.h"

namespace hrx {

namespace {

// One owner of the array layer's refusals of an array bound to a kernel,
// shared by the submission (kernel_task, run_kernel) and run_function's
// checks before it allocates.
void check_runtime(const Array& a, const RuntimeCore& rt, const std::string& name) {
    if (&runtime_of(a) != &rt)
        fail(ErrorKind::Message, name + ": " + a.describe() + " belongs to another runtime than the kernel");
}

// `a`'s bytes as the view a binding of `access` on `lane` gets, after the
// lane, writability and device-use checks.
BufferView bound_view(const Array& a, Access access, Lane lane, const std::string& name) {
    check_lane_binding(a, lane, name);
    if (access_writes(access)) check_writable(a, name);
    check_device_use(a, access, name);
    const auto [first, end] = a.extent();
    return BufferView{a.buffer(), first, end - first};
}

Lane kernel_lane(const Kernel& k) { return k.engine == Engine::Npu ? Lane::Npu : Lane::Compute; }

}  // namespace

TaskSpec kernel_task(std::shared_ptr<Kernel> kernel, const std::vector<Array>& arrays, const std::string& name) {
    TaskSpec t;
    t.op = name;
    t.label = kernel->name;
    t.lane = kernel_lane(*kernel);
    if (arrays.size() != kernel->contract.bindings.size())
        fail(ErrorKind::Message, name + ": the kernel has " + std::to_string(kernel->contract.bindings.size()) +
                                     " bindings, " + std::to_string(arrays.size()) + " arrays were given");
    std::vector<BufferView> views;
    views.reserve(arrays.size());
    for (size_t i = 0; i < arrays.size(); ++i) {
        const Array& a = arrays[i];
        const Access access = kernel->contract.bindings[i].access;
        if (!a.c_contiguous())
            fail(ErrorKind::Message, name + ": binding " + std::to_string(i) + " needs a C-contiguous array, got " +
                                         a.describe());
        views.push_back(bound_view(a, access, t.lane, name));
        t.uses.push_back(Use{views.back(), access});
    }
    check_kernel_use(*kernel, views, name);
    t.kernel = std::move(kernel);
    return t;
}

void run_kernel(std::shared_ptr<Kernel> kernel, const std::vector<Array>& arrays, const std::string& name) {
    RuntimeCore& rt = *kernel->runtime;
    for (const Array& a : arrays) check_runtime(a, rt, name);
    std::vector<std::shared_ptr<ArrayBase>> written;
    for (size_t i = 0; i < arrays.size() && i < kernel->contract.bindings.size(); ++i)
        if (access_writes(kernel->contract.bindings[i].access)) written.push_back(arrays[i].base);
    TaskSpec task = kernel_task(std::move(kernel), arrays, name);
    auto c = submit(rt, task);
    for (const auto& b : written) b->add_writer(c);
}

std::vector<Array> run_function(std::shared_ptr<Kernel> kernel, std::vector<FunctionOperand>& operands,
                                const std::vector<DType>& dtypes, const std::vector<std::string>& names,
                                const Placement& placement, const std::string& name) {
    RuntimeCore& rt = *kernel->runtime;
    const auto& bindings = kernel->contract.bindings;
    const size_t n = bindings.size();
    if (operands.size() != n || dtypes.size() != n || names.size() != n)
        fail(ErrorKind::Message, name + ": the kernel has " + std::to_string(n) + " bindings, " +
                                     std::to_string(operands.size()) + " were given");
    const Lane lane = kernel_lane(*kernel);
    // Every check before anything is allocated, uploaded or copied (a refused call changes nothing).
    std::vector<BufferView> as_is(n);
    std::vector<const BufferView*> views(n, nullptr);
    std::vector<uint64_t> lengths(n, 0);
    bool allocates = false;
    for (size_t i = 0; i < n; ++i) {
        const Access access = bindings[i].access;
        const bool writes = access_writes(access);
        const std::string binding = (writes ? "output binding '" : "input binding '") + names[i] + "'";
        const FunctionOperand& o = operands[i];
        const uint64_t itemsize = static_cast<uint64_t>(dtype_itemsize(dtypes[i]));
        if (o.device) {
            const Array& a = *o.device;
            check_runtime(a, rt, name);
            if (a.c_contiguous()) {
                as_is[i] = bound_view(a, access, lane, name);
                views[i] = &as_is[i];
            } else {
                if (writes) fail(ErrorKind::Message, name + ": " + binding + " must be C-contiguous");
                check_device_use(a, Access::Read, name);  // read by the copy into a C-contiguous array
                lengths[i] = static_cast<uint64_t>(a.nbytes());
                allocates = true;
            }
        } else if (o.host) {
            if (writes) fail(ErrorKind::Type, name + ": " + binding + " must be a DeviceArray, got host data");
            uint64_t count = 1;
            for (int64_t d : o.host->shape) count *= static_cast<uint64_t>(d);
            lengths[i] = count * itemsize;
            allocates = true;
        } else {
            if (!writes) fail(ErrorKind::Type, name + ": " + binding + " is required");
            lengths[i] = (bindings[i].bytes + itemsize - 1) / itemsize * itemsize;
            allocates = true;
        }
    }
    if (allocates) check_lane_placement(placement, "the new arrays' placement " + placement.repr(), lane, name);
    check_planned_kernel_use(*kernel, views, lengths, placement, name);
    // Then the uploads, copies and allocations, in binding order.
    std::vector<Array> arrays;
    arrays.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        FunctionOperand& o = operands[i];
        if (o.device && views[i])
            arrays.push_back(*o.device);
        else if (o.device)
            arrays.push_back(creation::convert(*o.device, o.device->dtype, o.device->placement(), name));
        else if (o.host)
            arrays.push_back(host_transfer::upload(rt, placement, *o.host, name, dtypes[i]));
        else
            arrays.push_back(make_array(rt, placement,
                                        Dims{static_cast<int64_t>(lengths[i] / static_cast<uint64_t>(
                                                                              dtype_itemsize(dtypes[i])))},
                                        dtypes[i], name));
    }
    run_kernel(kernel, arrays, name);
    std::vector<Array> written;
    for (size_t i = 0; i < n; ++i)
        if (access_writes(bindings[i].access)) written.push_back(arrays[i]);
    return written;
}

}  // namespace hrx
