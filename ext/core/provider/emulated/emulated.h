// The emulated provider's parts, shared by its translation units: the queue
// that runs dispatches (queue.cpp), the array operations it supplies
// (array_ops.cpp); Loom program images are loaded by program_image.cpp (planned.h). Nothing outside provider/emulated/ includes this;
// the runtime reaches these through the Provider interface.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "provider/provider.h"

namespace hrx::provider::emulated {

// A queue of `engine` whose dispatches run on the submitting thread: the
// runtime's lane worker is the engine.
std::unique_ptr<Queue> make_queue(Engine engine);

// Runs an array operation's dispatch (Note [Array operations are
// dispatches]) over `bindings` with the kernels library.
void run_array_op(const ArrayOp& op, const Span* bindings, size_t count);
// The families of provider/array_ops.h (more_ops.cpp); Message for an unknown family.
void run_more_array_op(const ArrayOp& op, const Span* bindings, size_t count);

// What the families share (array_ops.cpp).
int64_t element_count(const Dims& shape);
// C-order byte strides of `shape` for items of `item` bytes.
Dims dense_strides(const Dims& shape, int64_t item);
// The address of an operand's element [0, ...] in its binding.
uint8_t* bound(const ArrayArg& a, const Span* bindings, size_t count);
// Where an operand's element [0, ...] is, and its strides: in its binding,
// in the dispatch's inline scalar, or (staged) in a contiguous copy in `temp`
// with strides `dense`: the one place an operand overlapping the output is
// staged, for every family.
kernels::StridedArg resolve(const ArrayArg& a, const Span* bindings, size_t count, const Dims& shape,
                            std::vector<uint8_t>& temp, Dims& dense);

}  // namespace hrx::provider::emulated
