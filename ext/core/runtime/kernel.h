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
};

// A loaded GPU kernel or NPU program. `run` executes one invocation on the
// calling lane thread over the bound views (already checked).
struct Kernel {
    Engine engine = Engine::Gpu;
    std::string name;
    KernelContract contract;
    int npu_index = 0;          // NPU programs: the device they were loaded for
    uint64_t image_bytes = 0;   // NPU programs: charged to the budget at load
    std::function<void(const std::vector<BufferView>&)> run;
    // NPU: at most 128 pending invocations per program (Busy beyond).
    std::atomic<int> pending{0};
    // Fault injection (tests and failure drills): the next run throws the
    // armed message. Arming (a Python thread) and taking (a lane) may race,
    // so the message is only touched under fault_mu_.
    void arm_fault(const std::string& message);  // Busy when one is armed already
    std::optional<std::string> take_fault();     // the armed message, disarming it

private:
    std::atomic<bool> fault_armed_{false};  // lets take_fault skip the mutex
    std::mutex fault_mu_;
    std::optional<std::string> fault_;
};

constexpr int kMaxPendingNpuInvocations = 128;

// The checks a graph makes before binding `views` to `kernel`: each view's
// storage bindable by the kernel's engine (its own NPU for NPU programs),
// Unsupported otherwise, then contract.check_use.
void check_kernel_use(const Kernel& kernel, const std::vector<BufferView>& views, const std::string& op);

}  // namespace hrx
