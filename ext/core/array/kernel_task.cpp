// A loaded kernel (built-in or Loom) run over arrays as one array
// operation: what hx.loom.function submits (hx.loom.ufunc has its own task,
// array/loom_ufunc.h). It is a dispatch on the lane's provider queue, like a
// graph's kernel entry, not a closure of the array layer.
#include <memory>

#include "array/ops.h"
#include "errors.h"
#include "runtime/kernel.h"

namespace hrx {

TaskSpec kernel_task(std::shared_ptr<Kernel> kernel, const std::vector<Array>& arrays, const std::string& name) {
    TaskSpec t;
    t.op = name;
    t.label = kernel->name;
    t.lane = kernel->engine == Engine::Npu ? Lane::Npu : Lane::Compute;
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
        check_lane_binding(a, t.lane, name);
        if (access_writes(access)) check_writable(a, name);
        check_device_use(a, access, name);
        const auto [first, end] = a.extent();
        views.push_back(BufferView{a.buffer(), first, end - first});
        t.uses.push_back(Use{views.back(), access});
    }
    check_kernel_use(*kernel, views, name);
    t.kernel = std::move(kernel);
    return t;
}

void run_kernel(std::shared_ptr<Kernel> kernel, const std::vector<Array>& arrays, const std::string& name) {
    RuntimeCore& rt = *kernel->runtime;
    for (const Array& a : arrays)
        if (&runtime_of(a) != &rt)
            fail(ErrorKind::Message, name + ": " + a.describe() + " belongs to another runtime than the kernel");
    std::vector<std::shared_ptr<ArrayBase>> written;
    for (size_t i = 0; i < arrays.size() && i < kernel->contract.bindings.size(); ++i)
        if (access_writes(kernel->contract.bindings[i].access)) written.push_back(arrays[i].base);
    TaskSpec task = kernel_task(std::move(kernel), arrays, name);
    auto c = submit(rt, task);
    for (const auto& b : written) b->add_writer(c);
}

}  // namespace hrx
