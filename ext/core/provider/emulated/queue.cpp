// The emulated queue: runs each dispatch (a fill, a copy, a program
// invocation, an array operation) on the thread that submits it, so a dispatch has finished, or
// thrown, when submit returns.
#include <atomic>
#include <cstring>

#include "provider/emulated/emulated.h"

namespace hrx::provider::emulated {
namespace {

class InlineQueue final : public Queue {
public:
    explicit InlineQueue(Engine e) : engine_(e) {}
    Engine engine() const override { return engine_; }

    void submit(const Dispatch& d) override {
        switch (d.kind) {
            case Dispatch::Kind::Fill: std::memset(d.dst.data, d.byte, d.dst.length); break;
            case Dispatch::Kind::Copy: std::memcpy(d.dst.data, d.src.data, d.dst.length); break;
            case Dispatch::Kind::Invoke: d.program->invoke(d.bindings, d.binding_count); break;
            case Dispatch::Kind::Array: run_array_op(*d.array, d.bindings, d.binding_count); break;
        }
    }

    // Work ran inside submit; the fence gives the ordering a queue's
    // completion signal gives on hardware.
    void synchronize() override { std::atomic_thread_fence(std::memory_order_seq_cst); }

private:
    Engine engine_;
};

}  // namespace

std::unique_ptr<Queue> make_queue(Engine engine) { return std::make_unique<InlineQueue>(engine); }

}  // namespace hrx::provider::emulated
