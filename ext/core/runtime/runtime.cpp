#include "runtime/runtime.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <limits>
#include <new>

#include "errors.h"

namespace hrx {

namespace {

// "256.0 TiB": a byte count at a glance, beside the exact figure in messages.
std::string human_bytes(uint64_t n) {
    static const char* const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = static_cast<double>(n);
    size_t u = 0;
    while (v >= 1024 && u + 1 < std::size(units)) {
        v /= 1024;
        ++u;
    }
    char text[32];
    std::snprintf(text, sizeof text, "%.1f %s", v, units[u]);
    return text;
}

}  // namespace

// --- AllocationProfile ----------------------------------------------------------

Placement AllocationProfile::placement() const {
    Placement p;
    if (backing.npu) {
        p.kind = backing.gpu ? PlacementKind::Shared : PlacementKind::NpuLocal;
        p.runtime = runtime;
        p.npu_index = backing.npu_index;
    } else {
        p.kind = backing.gpu_coherent ? PlacementKind::HostVisible : PlacementKind::GpuLocal;
    }
    return p;
}

// --- RuntimeCore ---------------------------------------------------------------

RuntimeCore::RuntimeCore(const RuntimeOptions& options, std::shared_ptr<provider::Provider> provider)
    : options_(options),
      provider_(std::move(provider)),
      endpoints_(provider_->endpoints()),
      scheduler_(std::make_shared<Scheduler>(this)) {
    scheduler_->start();
}

// Every accepted submission holds the runtime, so nothing is pending here;
// the lane threads exit on their own.
RuntimeCore::~RuntimeCore() { scheduler_->shutdown(); }

std::shared_ptr<RuntimeCore> RuntimeCore::create(const RuntimeOptions& options,
                                                 std::shared_ptr<provider::Provider> provider) {
    if (options.max_submissions <= 0 || options.graph_slots <= 0 || options.gpu_index < 0)
        fail(ErrorKind::Message, "Runtime: runtime capacities must be nonzero and GPU index nonnegative (max_submissions=" +
                                     std::to_string(options.max_submissions) +
                                     ", graph_slots=" + std::to_string(options.graph_slots) +
                                     ", gpu_index=" + std::to_string(options.gpu_index) + ")");
    return std::shared_ptr<RuntimeCore>(new RuntimeCore(options, std::move(provider)));
}

const provider::EndpointInfo& RuntimeCore::endpoint(Engine engine, int index) const {
    for (const auto& e : endpoints_)
        if (e.engine == engine && e.ordinal == index) return e;
    fail(ErrorKind::Unsupported, std::string(engine_name(engine)) + " device " + std::to_string(index) +
                                     " is unavailable (the " + provider_->name() + " fabric has " +
                                     std::to_string(std::count_if(endpoints_.begin(), endpoints_.end(),
                                                                  [&](const auto& x) { return x.engine == engine; })) +
                                     ")");
}

int RuntimeCore::npu_count() const {
    return static_cast<int>(
        std::count_if(endpoints_.begin(), endpoints_.end(), [](const auto& e) { return e.engine == Engine::Npu; }));
}

GpuDevice RuntimeCore::gpu() {
    const int index = static_cast<int>(options_.gpu_index);
    endpoint(Engine::Gpu, index);
    return {shared_from_this(), index};
}

NpuDevice RuntimeCore::npu(int index) {
    if (index < 0) fail(ErrorKind::Message, "npu: device index must be nonnegative, got " + std::to_string(index));
    endpoint(Engine::Npu, index);
    return {shared_from_this(), index};
}

void RuntimeCore::check_placement_owner(const Placement& placement, const std::string& op) const {
    if (placement.names_npu() && placement.runtime.get() != this)
        fail(ErrorKind::Message, op + ": placement " + placement.repr() + " names an NPU of another runtime");
}

std::shared_ptr<Buffer> RuntimeCore::create_buffer(const BackingDesc& backing, const Placement& placement,
                                                   uint64_t bytes, const std::string& op) {
    // Reserve before allocating, and give the reservation back if the
    // allocation fails: a failed call changes nothing.
    if (options_.memory_budget) options_.memory_budget->reserve(bytes, op);
    std::unique_ptr<provider::Memory> memory;
    try {
        memory = provider_->create_memory(backing, bytes);
    } catch (const std::bad_alloc&) {
        if (options_.memory_budget) options_.memory_budget->release(bytes);
        fail(ErrorKind::OutOfMemory, op + ": out of memory: the " + provider_->name() + " backend could not allocate " +
                                         std::to_string(bytes) + " bytes (" + human_bytes(bytes) + ") of " +
                                         placement.repr() + " memory");
    } catch (...) {
        if (options_.memory_budget) options_.memory_budget->release(bytes);
        throw;
    }
    const Engine initial_writer = placement.kind == PlacementKind::GpuLocal ? Engine::Gpu : Engine::Host;
    auto state = std::make_shared<StorageState>(shared_from_this(), std::move(memory), initial_writer,
                                                next_id_.fetch_add(1), options_.memory_budget);
    count_allocation(bytes, placement.kind == PlacementKind::Shared);
    return std::make_shared<Buffer>(std::move(state), placement, backing);
}

std::shared_ptr<Buffer> RuntimeCore::allocate(uint64_t bytes, const Placement& placement) {
    const std::string op = "allocate(" + std::to_string(bytes) + ", " + placement.repr() + ")";
    scheduler_->check_not_forked(op);
    if (bytes == 0 || bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        fail(ErrorKind::Message, op + ": allocation size must be in 1..=isize::MAX");
    check_placement_owner(placement, op);
    if (placement.names_npu()) endpoint(Engine::Npu, placement.npu_index);
    return create_buffer(placement.backing(), placement, bytes, op);
}

std::shared_ptr<Buffer> RuntimeCore::adopt(const std::shared_ptr<Buffer>& source, const Placement& placement) {
    const std::string op = "adopt(" + source->describe() + ", " + placement.repr() + ")";
    scheduler_->check_not_forked(op);
    if (source->state()->owner().get() != this) fail(ErrorKind::Message, op + ": the buffer belongs to another runtime");
    check_placement_owner(placement, op);
    source->state()->throw_if_poisoned(op);
    const PlacementKind from = source->placement().kind;
    if (placement.kind == PlacementKind::GpuLocal && from == PlacementKind::GpuLocal)
        return std::make_shared<Buffer>(*source);
    if (placement.kind != PlacementKind::Shared)
        fail(ErrorKind::Unsupported, op + ": adoption requires GpuLocal or Shared placement");
    // Already reachable by every requested device: the source itself serves.
    if (source->placement() == placement) return std::make_shared<Buffer>(*source);
    if (from != PlacementKind::GpuLocal && from != PlacementKind::HostVisible)
        fail(ErrorKind::Unsupported, op + ": only GPU buffers (GpuLocal or HostVisible) can be shared with the NPU");
    endpoint(Engine::Npu, placement.npu_index);
    BackingDesc want = source->backing();
    want.npu = true;
    want.npu_index = placement.npu_index;
    const auto& state = source->state();
    state->add_import(provider_->import_memory(state->memory(), want));
    count_import();
    return std::make_shared<Buffer>(state, placement, want);
}

std::vector<AllocationProfile> RuntimeCore::allocation_profiles(const std::vector<Site>& devices, bool coherent_gpu) {
    if (devices.empty())
        fail(ErrorKind::Message, "allocation_profiles: the device list is empty; name the GPU and/or NPU consumers");
    BackingDesc want;
    for (size_t i = 0; i < devices.size(); ++i) {
        const Site& d = devices[i];
        for (size_t j = 0; j < i; ++j)
            if (devices[j] == d)
                fail(ErrorKind::Message, std::string("allocation_profiles: devices must be unique; ") +
                                             engine_name(d.engine) + ":" + std::to_string(d.index) + " is listed twice");
        endpoint(d.engine, d.index);
        if (d.engine == Engine::Gpu) want.gpu = true;
        if (d.engine == Engine::Npu) {
            if (want.npu)
                fail(ErrorKind::Unsupported, "allocation_profiles: one allocation cannot admit two NPUs");
            want.npu = true;
            want.npu_index = d.index;
        }
    }
    // coherent_gpu asks for coherent GPU attachments only; it never makes the NPU coherent.
    want.gpu_coherent = coherent_gpu && want.gpu;
    std::vector<AllocationProfile> out;
    for (const auto& info : provider_->query_profiles(want)) out.push_back({shared_from_this(), want, info});
    return out;
}

std::shared_ptr<Buffer> RuntimeCore::allocate_with_profile(const AllocationProfile& profile, uint64_t bytes) {
    const std::string op = "profile.allocate(" + std::to_string(bytes) + ")";
    scheduler_->check_not_forked(op);
    if (bytes == 0 || bytes > profile.info.maximum_bytes || bytes % profile.info.byte_granularity != 0)
        fail(ErrorKind::Message, op + ": allocation does not satisfy the selected profile's size limits (1.." +
                                     std::to_string(profile.info.maximum_bytes) + " bytes in multiples of " +
                                     std::to_string(profile.info.byte_granularity) + ")");
    return create_buffer(profile.backing, profile.placement(), bytes, op);
}

// --- submission ------------------------------------------------------------------

std::shared_ptr<CompletionState> RuntimeCore::submit(const std::shared_ptr<PreparedGraph>& graph,
                                                     const std::vector<std::shared_ptr<CompletionState>>& after,
                                                     std::shared_ptr<SlotToken>* slot) {
    const std::string op = "submit";
    scheduler_->check_accepting(op);
    if (graph->runtime.get() != this) fail(ErrorKind::Message, op + ": the graph belongs to another runtime");
    for (const auto& c : after)
        if (c->owner().lock() != std::static_pointer_cast<void>(scheduler_))
            fail(ErrorKind::Message, op + ": a producer completion belongs to another runtime");
    Retired retired;  // destroyed after submit_mu_ is released (Note [Freed where allocated])
    std::lock_guard<std::mutex> lock(submit_mu_);
    if (graph->quarantined())
        fail(ErrorKind::DeviceLost, op + ": the graph is quarantined after a failed region");
    for (const auto& [storage, writes] : graph->storages) storage->throw_if_poisoned(op);
    if (static_cast<int64_t>(scheduler_->pending()) >= options_.max_submissions)
        fail(ErrorKind::Busy, op + ": runtime submission capacity exhausted (" +
                                  std::to_string(options_.max_submissions) + " pending)");
    // No XDNA pending-invocation count here: Note [The XDNA pending-invocation limit].
    auto sub = std::make_shared<Submission>();
    // Device-use leases are taken now and dropped at retirement; a live host
    // mapping that conflicts refuses the whole submission, changing nothing.
    sub->take_leases(graph->storages, op);
    if (!graph->try_take_slot()) {
        sub->release_leases();
        fail(ErrorKind::Busy, op + ": prepared run slots are occupied; drop completed observers or reserve more slots");
    }
    auto token = std::make_shared<SlotToken>();
    token->graph = graph;
    sub->graph = graph;
    sub->slot = token;
    sub->after = after;
    sub->completion = scheduler_->make_completion();
    sub->regions.assign(graph->regions.size(), Submission::RegionState::Waiting);
    {
        std::lock_guard<std::mutex> stats_lock(stats_mu_);
        ++stats_.submissions;
    }
    auto completion = sub->completion;
    *slot = std::move(token);
    retired = scheduler_->enqueue(std::move(sub));
    return completion;
}

// --- statistics ------------------------------------------------------------------

Statistics RuntimeCore::statistics() const {
    scheduler_->check_not_forked("statistics");
    std::lock_guard<std::mutex> lock(stats_mu_);
    Statistics s = stats_;
    s.submissions += task_submissions_.load(std::memory_order_relaxed);
    s.completions += completions_.load(std::memory_order_relaxed);
    return s;
}

void RuntimeCore::count_allocation(uint64_t bytes, bool import) {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.allocations;
    if (import) ++stats_.imports;
    stats_.live_bytes += bytes;
    stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.live_bytes);
}

void RuntimeCore::count_import() {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.imports;
}

void RuntimeCore::count_free(uint64_t bytes) {
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_.live_bytes -= std::min(bytes, stats_.live_bytes);
}

void RuntimeCore::count_completion() { completions_.fetch_add(1, std::memory_order_relaxed); }

void RuntimeCore::count_copied(uint64_t bytes) {
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_.copied_bytes += bytes;
}

void RuntimeCore::count_maintenance(uint64_t bytes) {
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_.cache_maintenance_bytes += bytes;
}

}  // namespace hrx
