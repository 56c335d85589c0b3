// The runtime: devices, allocation, adoption, profiles, budgets and
// statistics. Lanes, graphs and completions build on it.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "memory/budget.h"
#include "memory/placement.h"
#include "runtime/fault.h"
#include "runtime/graph.h"
#include "runtime/scheduler.h"
#include "memory/storage.h"
#include "provider/provider.h"

namespace hrx {

struct Statistics {
    uint64_t allocations = 0;
    uint64_t imports = 0;
    uint64_t submissions = 0;
    uint64_t completions = 0;
    uint64_t copied_bytes = 0;
    uint64_t cache_maintenance_bytes = 0;
    uint64_t live_bytes = 0;
    uint64_t peak_bytes = 0;
};

struct RuntimeOptions {
    int64_t max_submissions = 64;
    int64_t graph_slots = 2;
    int64_t gpu_index = 0;
    bool check_visibility = false;
    // Loom programs run in loom.md §4.4's checked mode (assumptions, overflow
    // promises, races, ... reported as ExecutionError).
    bool checked = false;
    std::shared_ptr<MemoryBudget> memory_budget;
};

class RuntimeCore;

struct GpuDevice {
    std::shared_ptr<RuntimeCore> runtime;
    int index = 0;
    bool operator==(const GpuDevice& o) const { return runtime == o.runtime && index == o.index; }
};

struct NpuDevice {
    std::shared_ptr<RuntimeCore> runtime;
    int index = 0;
    bool operator==(const NpuDevice& o) const { return runtime == o.runtime && index == o.index; }
};

// A memory profile for one device set, queried before allocating.
struct AllocationProfile {
    std::shared_ptr<RuntimeCore> runtime;
    BackingDesc backing;
    provider::ProfileInfo info;
    // The placement that buffers allocated under this profile report.
    Placement placement() const;
};

// The runtime owns every storage it allocates or imports (memory/owner.h).
class RuntimeCore : public StorageOwner, public std::enable_shared_from_this<RuntimeCore> {
public:
    static std::shared_ptr<RuntimeCore> create(const RuntimeOptions& options,
                                               std::shared_ptr<provider::Provider> provider);
    ~RuntimeCore();

    const RuntimeOptions& options() const { return options_; }
    provider::Provider& provider() const { return *provider_; }
    std::string backend() const { return provider_->name(); }

    GpuDevice gpu();
    NpuDevice npu(int index);
    const provider::EndpointInfo& endpoint(Engine engine, int index) const;
    int npu_count() const;

    std::shared_ptr<Buffer> allocate(uint64_t bytes, const Placement& placement);
    std::shared_ptr<Buffer> adopt(const std::shared_ptr<Buffer>& source, const Placement& placement);
    std::shared_ptr<Buffer> import_foreign(std::unique_ptr<provider::Memory> memory, const Placement& placement,
                                           bool readonly);  // runtime/import.cpp
    std::vector<AllocationProfile> allocation_profiles(const std::vector<Site>& devices, bool coherent_gpu);
    std::shared_ptr<Buffer> allocate_with_profile(const AllocationProfile& profile, uint64_t bytes);

    // Submit a prepared graph (HRX ExecutableGraph::submit_after). Never waits.
    std::shared_ptr<CompletionState> submit(const std::shared_ptr<PreparedGraph>& graph,
                                            const std::vector<std::shared_ptr<CompletionState>>& after,
                                            std::shared_ptr<SlotToken>* slot);
    Scheduler& scheduler() const { return *scheduler_; }
    // Fault injection for array operations (Note [Array operations are
    // dispatches]): keyed by the operation's trace label ("add", "astype",
    // "sum"), taken by the next such dispatch on any lane.
    FaultSlot& array_fault() { return array_fault_; }

    // One-operation submission for the array layer (runtime/task.cpp): one
    // dispatch through `lane`'s provider queue, of `kernel` over `uses` (its
    // bindings, in order) or of the `array` operation (Note [Array operations
    // are dispatches]); exactly one is given (Message otherwise). It runs once
    // every earlier submission whose uses conflict has finished, with the uses
    // made visible to the lane's engine and device leases held from now to
    // retirement, exactly as for a one-region graph. The refusals are
    // submit()'s (DeviceLost for poisoned storage, Busy for a conflicting host
    // mapping or lease) except capacity: when the runtime is full it returns
    // nullptr having changed nothing (uses are left as they were), and the
    // caller waits with scheduler().wait_for_room(max_submissions) (outside
    // the GIL) and retries, so array operations apply backpressure instead of
    // failing. On success uses is left empty, with the room of an earlier
    // operation's uses for the caller's next one (Note [Pooled task storage]
    // in runtime/task.cpp). `label` is the operation's short name in traces
    // ("matmul", "exp").
    std::shared_ptr<CompletionState> submit_task(Lane lane, std::vector<Use>& uses, const std::string& op,
                                                 const std::string& label, std::shared_ptr<Kernel> kernel,
                                                 std::shared_ptr<const provider::ArrayOp> array);

    // Statistics, updated by storages and by the lanes.
    Statistics statistics() const;
    void count_completion();
    void count_copied(uint64_t bytes);
    void count_allocation(uint64_t bytes, bool import);
    void count_import();
    void count_free(uint64_t bytes) override;
    void count_maintenance(uint64_t bytes) override;
    // StorageOwner: Note [Fork] (scheduler.cpp).
    bool forked() const noexcept override { return scheduler_->forked(); }
    void check_not_forked(const std::string& op) const override { scheduler_->check_not_forked(op); }

private:
    RuntimeCore(const RuntimeOptions& options, std::shared_ptr<provider::Provider> provider);
    void check_placement_owner(const Placement& placement, const std::string& op) const;
    std::shared_ptr<Buffer> create_buffer(const BackingDesc& backing, const Placement& placement,
                                          uint64_t bytes, const std::string& op);

    RuntimeOptions options_;
    std::shared_ptr<provider::Provider> provider_;
    std::vector<provider::EndpointInfo> endpoints_;
    std::atomic<uint64_t> next_id_{1};
    mutable std::mutex stats_mu_;
    Statistics stats_;
    std::atomic<uint64_t> task_submissions_{0};  // submit_task's share of stats_.submissions
    // stats_.completions, counted by a lane at every retirement without stats_mu_.
    std::atomic<uint64_t> completions_{0};
    std::mutex submit_mu_;
    std::shared_ptr<Scheduler> scheduler_;
    FaultSlot array_fault_;
};

// An ElementwiseOp record for the array layer's next elementwise dispatch:
// an emptied one of this thread's finished operations when there is one
// (Note [Pooled task storage] in runtime/task.cpp), else a new one.
std::shared_ptr<provider::ElementwiseOp> spare_elementwise_op();

// The runtime behind a storage owner or an NPU placement's owner (only
// RuntimeCore implements StorageOwner).
inline RuntimeCore& runtime_of(const StorageOwner& owner) {
    return static_cast<RuntimeCore&>(const_cast<StorageOwner&>(owner));
}
inline std::shared_ptr<RuntimeCore> runtime_of(const std::shared_ptr<StorageOwner>& owner) {
    return std::static_pointer_cast<RuntimeCore>(owner);
}

}  // namespace hrx
