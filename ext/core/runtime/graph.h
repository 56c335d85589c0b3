// Graphs: a builder of operations, prepared once into regions bound to lanes
// (HRX §2.2, §2.8). Bindings are immutable after prepare(); replays allocate
// nothing.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common.h"
#include "memory/storage.h"
#include "provider/provider.h"
#include "runtime/kernel.h"

namespace hrx {

class RuntimeCore;

// Lane 0 = upload, 1 = compute, 2 = download, 3 = NPU, 4 = host (HRX numbering).
enum class Lane : uint8_t { Upload = 0, Compute = 1, Download = 2, Npu = 3, Host = 4 };
constexpr int kLaneCount = 5;
const char* lane_name(Lane lane);
bool lane_from_name(const std::string& name, Lane* out);
// The engine whose caches a lane's work goes through.
Engine lane_engine(Lane lane);

// Host memory handed to a host region: one per declared access.
struct HostSpan {
    std::shared_ptr<StorageState> storage;  // keeps the bytes alive
    uint8_t* data = nullptr;
    uint64_t length = 0;
    bool writable = false;
};
using HostFn = std::function<void(const std::vector<HostSpan>&)>;

// One use of a byte range by an operation.
struct Use {
    BufferView view;
    Access access = Access::Read;
};

struct Op {
    // Array: an array operation the provider supplies (Note [Array
    // operations are dispatches] in provider/provider.h).
    enum class Kind : uint8_t { Fill, Copy, Host, Kernel, Array } kind = Kind::Fill;
    Lane lane = Lane::Compute;
    std::vector<Use> uses;  // Fill: [dst]; Copy: [dst, src]; Host: the accesses
    uint8_t byte = 0;
    HostFn host;
    std::shared_ptr<Kernel> kernel;  // Kernel: uses are its bindings, in order
    std::shared_ptr<const provider::ArrayOp> array;  // Array: uses are its bindings
    std::string name;                // Array: the operation, named in failure messages
    std::string label;               // Array: its short name in traces ("matmul", "exp", "astype")
};

struct Region {
    Lane lane = Lane::Compute;
    std::vector<size_t> ops;
    std::vector<size_t> deps;  // earlier regions of the same graph it must follow
    uint64_t copy_bytes = 0;
};

// What a trace calls an operation: "fill", "copy", "host", "gpu(transform_i32)",
// "npu(batched_gemm)", or a task's label.
std::string op_label(const Op& op);
// What a trace calls a region: its operations' labels in order, a run of one
// label written once with its count ("copy x3, gpu(add_f32)").
std::string region_label(const std::vector<Op>& ops, const Region& region);

// One interval of a graph's whole-graph use summary (allocation-wide for
// Shared storage, the view's range otherwise).
struct SummaryInterval {
    const StorageState* storage = nullptr;
    uint64_t start = 0;
    uint64_t end = 0;
    bool writes = false;
};
bool summaries_conflict(const std::vector<SummaryInterval>& a, const std::vector<SummaryInterval>& b);
// The hazard key of a use: allocation-wide for Shared storage (cross-engine
// maintenance is allocation-wide), the view's byte range otherwise.
SummaryInterval hazard_key(const Use& u);

class PreparedGraph {
public:
    std::shared_ptr<RuntimeCore> runtime;
    std::vector<Op> ops;
    std::vector<Region> regions;
    std::vector<SummaryInterval> summary;
    // Every storage the graph uses and whether the graph writes it.
    std::vector<std::pair<std::shared_ptr<StorageState>, bool>> storages;
    // The NPU programs it runs: a quarantine keeps their image charges.
    std::vector<std::shared_ptr<Kernel>> npu_kernels;

    // Completion slots (HRX graph_slots): a slot stays reserved while its run
    // is pending or a Completion observer for it is alive.
    bool try_take_slot();
    void release_slot();
    bool quarantined() const;
    // HRX leaks a quarantined graph's native resources until exit: its NPU
    // programs' image charges are never given back (hrx-runtime.md §2.6-2.7).
    void quarantine();

private:
    mutable std::mutex mu_;
    int64_t slots_in_use_ = 0;
    // Read by every reuse of a task submission (Note [Pooled task storage]):
    // a flag that is never lowered needs no lock.
    std::atomic<bool> quarantined_{false};
};

class GraphBuilder {
public:
    explicit GraphBuilder(std::shared_ptr<RuntimeCore> runtime) : runtime_(std::move(runtime)) {}
    void fill(const BufferView& view, uint8_t byte);
    void copy(const BufferView& dst, const BufferView& src);
    void copy_on(const BufferView& dst, const BufferView& src, Lane lane);
    void host(HostFn fn, const std::vector<Use>& accesses);
    void gpu(const std::shared_ptr<Kernel>& kernel, const std::vector<BufferView>& views);
    void npu(const std::shared_ptr<Kernel>& kernel, const std::vector<BufferView>& views);
    size_t size() const { return ops_.size(); }
    std::shared_ptr<PreparedGraph> prepare() const;

private:
    void check_owner(const BufferView& v, const std::string& op) const;
    void kernel(const std::shared_ptr<Kernel>& kernel, const std::vector<BufferView>& views, Engine engine);
    std::shared_ptr<RuntimeCore> runtime_;
    std::vector<Op> ops_;
};

}  // namespace hrx
