// Kernels and their binding contracts (HRX §2.9): the GPU kernels and NPU
// programs the emulated devices run, each with the memory contract that every
// use is checked against.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common.h"
#include "memory/storage.h"
#include "runtime/fault.h"

namespace hrx {

struct BindingContract {
    uint64_t bytes = 0;      // minimum accessible extent
    uint64_t alignment = 1;  // required byte alignment (power of two)
    Access access = Access::Read;
    std::string layout;      // diagnostic label only
};

struct KernelContract {
    std::vector<BindingContract> bindings;
    std::vector<uint8_t> constants;
    // Every binding needs 0 < bytes <= isize::MAX and a power-of-two alignment,
    // else Message "invalid kernel binding extent or alignment".
    void validate() const;
    // Per-use checks (ContractError): binding count, each view long enough and
    // aligned (view offset and absolute address), no overlapping views where
    // either side writes. `engine_name` names the allocation kind in messages.
    void check_use(const std::vector<BufferView>& views, const std::string& op, Engine engine) const;
    // check_use for a call that allocates some bindings afterwards: a null
    // view is binding i's new allocation of new_lengths[i] bytes (offset 0,
    // 64-byte aligned, overlapping nothing), checked by its length.
    void check_planned_use(const std::vector<const BufferView*>& views, const std::vector<uint64_t>& new_lengths,
                           const std::string& op, Engine engine) const;
};

class RuntimeCore;
class MemoryReservation;

// A loaded GPU kernel or NPU program: its contract and the provider's
// loaded code, which lanes dispatch through their provider queue (Note
// [Lanes hand dispatches to queues] in scheduler.h) over the bound views,
// already checked.
//
// Note [The XDNA pending-invocation limit]: HRX's XdnaProgram accepts at most
// 128 invocations in flight (dispatched, not yet retired), and each NPU entry
// of a prepared graph is its own XdnaProgram (hrx-runtime.md §2.9); queued
// submissions are bounded by max_submissions instead. The runtime dispatches
// an NPU region and waits for it to retire, one region per lane at a time, so
// an entry never has more than one invocation in flight and the limit cannot
// bind here: the runtime keeps no per-kernel count (one that counted pending
// submissions refused a graph using a kernel twice after 64 of them).
struct Kernel {
    Engine engine = Engine::Gpu;
    std::string name;
    KernelContract contract;
    // The runtime it was loaded on; graphs of another runtime refuse it.
    std::shared_ptr<RuntimeCore> runtime;
    int npu_index = 0;          // NPU programs: the device they were loaded for
    uint64_t image_bytes = 0;   // NPU programs: charged to the budget at load
    // NPU programs under a memory budget: the image's charge, given back when
    // the last handle goes unless a quarantined graph keeps it for ever.
    std::shared_ptr<MemoryReservation> image_charge;
    std::shared_ptr<const provider::Executable> program;
    // Fault injection (runtime/fault.h): the next run throws the armed message.
    FaultSlot fault;
};

// The provider's view of a bound view (provider::Span).
provider::Span span_of(const BufferView& view);

// The checks a graph makes before binding `views` to `kernel`: each view's
// storage bindable by the kernel's engine (its own NPU for NPU programs),
// Unsupported otherwise, then contract.check_use.
void check_kernel_use(const Kernel& kernel, const std::vector<BufferView>& views, const std::string& op);
// check_kernel_use for a call that allocates some bindings afterwards in
// `new_placement` (KernelContract::check_planned_use's null views).
void check_planned_kernel_use(const Kernel& kernel, const std::vector<const BufferView*>& views,
                              const std::vector<uint64_t>& new_lengths, const Placement& new_placement,
                              const std::string& op);

// A testing hook: check_kernel_use, then one invocation run synchronously on
// the calling thread (inside a BlockingWait) through a provider queue of its
// own, as the lanes' queues belong to their threads; outside any graph: no
// hazards, leases or visibility transitions.
void run_alone(const Kernel& kernel, const std::vector<BufferView>& views, const std::string& op);

}  // namespace hrx
