// Kernel contracts (HRX §2.9): validation of a contract on its own, and the
// checks every use of a kernel over concrete views must pass.
#include "runtime/kernel.h"

#include <cstdint>
#include <limits>
#include <utility>

#include "errors.h"
#include "runtime/blocking.h"
#include "runtime/runtime.h"

namespace hrx {

namespace {

constexpr uint64_t kIsizeMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

bool power_of_two(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

std::string binding_label(size_t i, const BindingContract& b) {
    std::string s = "binding " + std::to_string(i);
    if (!b.layout.empty()) s += " (" + b.layout + ")";
    return s;
}

std::string view_label(const BufferView& v) {
    return "the view at offset " + std::to_string(v.offset) + ", length " + std::to_string(v.length) + " of " +
           v.buffer->describe();
}

}  // namespace

void KernelContract::validate() const {
    for (const auto& b : bindings) {
        if (b.bytes == 0 || b.bytes > kIsizeMax || !power_of_two(b.alignment))
            fail(ErrorKind::Message, "invalid kernel binding extent or alignment: " +
                                         binding_label(static_cast<size_t>(&b - bindings.data()), b) + " has " +
                                         std::to_string(b.bytes) + " bytes, alignment " +
                                         std::to_string(b.alignment) +
                                         " (extent must be in 1..=isize::MAX, alignment a power of two)");
    }
}

// Note [Order of the per-use checks]: the binding count first (nothing else
// is meaningful without it), then each view in binding order (extent, view
// offset, absolute address), then overlaps between pairs. The first failure
// is reported; nothing is changed by a failed check.
void KernelContract::check_use(const std::vector<BufferView>& views, const std::string& op, Engine engine) const {
    std::vector<const BufferView*> given(views.size());
    for (size_t i = 0; i < views.size(); ++i) given[i] = &views[i];
    check_planned_use(given, {}, op, engine);
}

void KernelContract::check_planned_use(const std::vector<const BufferView*>& views,
                                       const std::vector<uint64_t>& new_lengths, const std::string& op,
                                       Engine engine) const {
    if (views.size() != bindings.size())
        fail(ErrorKind::Contract, op + ": kernel binding count mismatch: the contract has " +
                                      std::to_string(bindings.size()) + " bindings, " +
                                      std::to_string(views.size()) + " views were given");
    const char* alloc_kind = engine == Engine::Npu ? "NPU" : "GPU";
    for (size_t i = 0; i < views.size(); ++i) {
        const auto& b = bindings[i];
        if (!views[i]) {
            // A new allocation: offset 0, 64-byte aligned, overlapping nothing; only its length can fail.
            if (new_lengths.at(i) < b.bytes || 64 % b.alignment != 0)
                fail(ErrorKind::Contract, op + ": " + binding_label(i, b) + " needs a view of at least " +
                                              std::to_string(b.bytes) + " bytes aligned to " +
                                              std::to_string(b.alignment) + " bytes; got a new allocation of " +
                                              std::to_string(new_lengths.at(i)) + " bytes");
            continue;
        }
        const auto& v = *views[i];
        if (v.length < b.bytes || v.offset % b.alignment != 0)
            fail(ErrorKind::Contract,
                 op + ": " + binding_label(i, b) + " needs a view of at least " + std::to_string(b.bytes) +
                     " bytes at an offset aligned to " + std::to_string(b.alignment) + " bytes; got " + view_label(v));
        // View offsets alone do not prove base alignment: check the address.
        const auto address = reinterpret_cast<uintptr_t>(v.data());
        if (address % b.alignment != 0)
            fail(ErrorKind::Contract, op + ": " + alloc_kind + " allocation does not satisfy kernel alignment: " +
                                          binding_label(i, b) + " needs " + std::to_string(b.alignment) +
                                          "-byte alignment; " + view_label(v) + " starts at an address ≡ " +
                                          std::to_string(address % b.alignment) + " (mod " +
                                          std::to_string(b.alignment) + ")");
    }
    for (size_t i = 0; i < views.size(); ++i) {
        for (size_t j = i + 1; j < views.size(); ++j) {
            if (!views[i] || !views[j]) continue;
            if (!access_writes(bindings[i].access) && !access_writes(bindings[j].access)) continue;
            if (views[i]->overlaps(*views[j]))
                fail(ErrorKind::Contract, op + ": overlapping writable kernel arguments require an unsafe dispatch: " +
                                              binding_label(i, bindings[i]) + " and " +
                                              binding_label(j, bindings[j]) + " share bytes of " +
                                              views[i]->buffer->describe());
        }
    }
}

void check_kernel_use(const Kernel& kernel, const std::vector<BufferView>& views, const std::string& op) {
    std::vector<const BufferView*> given(views.size());
    for (size_t i = 0; i < views.size(); ++i) given[i] = &views[i];
    check_planned_kernel_use(kernel, given, {}, Placement{}, op);
}

void check_planned_kernel_use(const Kernel& kernel, const std::vector<const BufferView*>& views,
                              const std::vector<uint64_t>& new_lengths, const Placement& new_placement,
                              const std::string& op) {
    for (const BufferView* v : views) {
        const Placement& p = v ? v->buffer->placement() : new_placement;
        const std::string what = v ? v->buffer->describe() : "a new " + new_placement.repr() + " array";
        if (kernel.engine == Engine::Gpu && !p.gpu_bindable())
            fail(ErrorKind::Unsupported, op + ": NPU-local storage cannot bind to the GPU (" + what + ")");
        if (kernel.engine == Engine::Npu && (!p.npu_bindable() || p.npu_index != kernel.npu_index))
            fail(ErrorKind::Unsupported, op + ": " + what + " is not bindable by npu:" +
                                             std::to_string(kernel.npu_index) + " (use NpuLocal or Shared storage of it)");
    }
    kernel.contract.check_planned_use(views, new_lengths, op, kernel.engine);
}

void run_alone(const Kernel& kernel, const std::vector<BufferView>& views, const std::string& op) {
    BlockingWait wait;
    check_kernel_use(kernel, views, op);
    std::vector<provider::Span> spans;
    for (const auto& view : views) spans.push_back(span_of(view));
    auto queue = kernel.runtime->provider().create_queue(kernel.engine, kernel.npu_index);
    provider::Dispatch d;
    d.kind = provider::Dispatch::Kind::Invoke;
    d.program = kernel.program.get();
    d.bindings = spans.data();
    d.binding_count = spans.size();
    queue->submit(d);
    queue->synchronize();
}

provider::Span span_of(const BufferView& view) {
    // The handle's backing, not its placement kind: a Shared alias adopted
    // from a HostVisible buffer is still the coherent allocation for the GPU.
    return {view.data(), view.length, view.buffer->backing().gpu_coherent};
}

void FaultSlot::arm(const std::string& message, const std::string& target, std::string key) {
    std::lock_guard<std::mutex> lock(mu_);
    if (message_) fail(ErrorKind::Busy, "_inject_fault: a fault is already armed on " + target);
    message_ = message;
    key_ = std::move(key);
    armed_.store(true, std::memory_order_release);
}

std::optional<std::string> FaultSlot::take_slow(std::string_view key) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!message_ || (!key_.empty() && key_ != key)) return std::nullopt;
    armed_.store(false, std::memory_order_relaxed);
    return std::exchange(message_, std::nullopt);
}

}  // namespace hrx
