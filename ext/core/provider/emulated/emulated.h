// The emulated provider's parts, shared by its translation units: the queue
// that runs dispatches (queue.cpp), the array operations it supplies
// (array_ops.cpp); Loom program images are loaded by program_image.cpp (planned.h). Nothing outside provider/emulated/ includes this;
// the runtime reaches these through the Provider interface.
#pragma once
#include <memory>

#include "provider/provider.h"

namespace hrx::provider::emulated {

// A queue of `engine` whose dispatches run on the submitting thread: the
// runtime's lane worker is the engine.
std::unique_ptr<Queue> make_queue(Engine engine);

// Runs an array operation's dispatch (Note [Array operations are
// dispatches]) over `bindings` with the kernels library.
void run_array_op(const ArrayOp& op, const Span* bindings, size_t count);

}  // namespace hrx::provider::emulated
