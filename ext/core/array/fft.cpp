#include "array/fft.h"

#include <memory>
#include <utility>

#include "array/sorting.h"
#include "errors.h"
#include "provider/array_ops.h"

namespace hrx {

TaskSpec fft_task(const Array& in, const Array& out, std::function<void()> body, const std::string& name) {
    TaskSpec t = compute_task({&in}, {&out}, name, name);
    // One FFT dispatch (Note [Array operations are dispatches]): the queue
    // runs the body, a host function, in order (provider::FftOp).
    auto op = std::make_shared<provider::FftOp>();
    op->in = tensor_of(t, in);
    op->out = tensor_of(t, out, Access::Write);
    op->body = std::move(body);
    t.array = std::move(op);
    return t;
}

}  // namespace hrx

namespace hrx::fft {

void region(const Array& in, const Array& out, std::function<void()> body, const std::string& name) {
    if (&runtime_of(in) != &runtime_of(out)) fail(ErrorKind::Message, name + ": x and out belong to different runtimes");
    check_device_use(out, Access::Write, name);
    TaskSpec t = fft_task(in, out, std::move(body), name);
    submit(runtime_of(in), t);
}

}  // namespace hrx::fft
