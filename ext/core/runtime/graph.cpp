#include "runtime/graph.h"

#include <algorithm>
#include <map>

#include "errors.h"
#include "runtime/runtime.h"

namespace hrx {

const char* lane_name(Lane lane) {
    static const char* names[] = {"upload", "compute", "download", "npu", "host"};
    return names[static_cast<int>(lane)];
}

bool lane_from_name(const std::string& name, Lane* out) {
    for (int i = 0; i < kLaneCount; ++i)
        if (name == lane_name(static_cast<Lane>(i))) {
            *out = static_cast<Lane>(i);
            return true;
        }
    return false;
}

Engine lane_engine(Lane lane) {
    switch (lane) {
        case Lane::Npu: return Engine::Npu;
        case Lane::Host: return Engine::Host;
        default: return Engine::Gpu;
    }
}

std::string op_label(const Op& op) {
    switch (op.kind) {
        case Op::Kind::Fill: return "fill";
        case Op::Kind::Copy: return "copy";
        case Op::Kind::Host: return "host";
        case Op::Kind::Kernel: return std::string(engine_name(op.kernel->engine)) + "(" + op.kernel->name + ")";
        case Op::Kind::Array: return op.label.empty() ? op.name : op.label;
    }
    return "?";
}

std::string region_label(const std::vector<Op>& ops, const Region& region) {
    std::string out;
    for (size_t i = 0; i < region.ops.size();) {
        const std::string label = op_label(ops[region.ops[i]]);
        size_t j = i + 1;
        while (j < region.ops.size() && op_label(ops[region.ops[j]]) == label) ++j;
        out += (out.empty() ? "" : ", ") + label + (j - i > 1 ? " x" + std::to_string(j - i) : "");
        i = j;
    }
    return out;
}

bool summaries_conflict(const std::vector<SummaryInterval>& a, const std::vector<SummaryInterval>& b) {
    for (const auto& x : a)
        for (const auto& y : b)
            if (x.storage == y.storage && (x.writes || y.writes) && x.start < y.end && y.start < x.end) return true;
    return false;
}

bool PreparedGraph::try_take_slot() {
    std::lock_guard<std::mutex> lock(mu_);
    if (slots_in_use_ >= runtime->options().graph_slots) return false;
    ++slots_in_use_;
    return true;
}

void PreparedGraph::release_slot() {
    std::lock_guard<std::mutex> lock(mu_);
    --slots_in_use_;
}

bool PreparedGraph::quarantined() const { return quarantined_.load(std::memory_order_acquire); }

void PreparedGraph::quarantine() {
    quarantined_.store(true, std::memory_order_release);
    for (const auto& k : npu_kernels)
        if (k->image_charge) k->image_charge->keep_forever();
}

// --- builder -------------------------------------------------------------------

void GraphBuilder::check_owner(const BufferView& v, const std::string& op) const {
    if (v.buffer->state()->owner() != runtime_)
        fail(ErrorKind::Message, op + ": " + v.buffer->describe() + " belongs to another runtime");
}

namespace {

void require_gpu_bindable(const BufferView& v, const std::string& op) {
    if (!v.buffer->placement().gpu_bindable())
        fail(ErrorKind::Unsupported, op + ": NPU-local storage cannot bind to the GPU (" + v.buffer->describe() + ")");
}

}  // namespace

void GraphBuilder::fill(const BufferView& view, uint8_t byte) {
    check_owner(view, "fill");
    require_gpu_bindable(view, "fill");
    Op op;
    op.kind = Op::Kind::Fill;
    op.lane = Lane::Compute;
    op.uses = {{view, Access::Write}};
    op.byte = byte;
    ops_.push_back(std::move(op));
}

void GraphBuilder::copy(const BufferView& dst, const BufferView& src) {
    const bool src_host = src.buffer->placement().host_mapped();
    const bool dst_host = dst.buffer->placement().host_mapped();
    Lane lane = Lane::Compute;
    if (src_host && !dst_host) lane = Lane::Upload;
    if (dst_host && !src_host) lane = Lane::Download;
    copy_on(dst, src, lane);
}

void GraphBuilder::copy_on(const BufferView& dst, const BufferView& src, Lane lane) {
    check_owner(dst, "copy");
    check_owner(src, "copy");
    if (lane == Lane::Npu || lane == Lane::Host)
        fail(ErrorKind::Message, std::string("copy: copies run on the upload, compute or download lane, not ") +
                                     lane_name(lane));
    if (dst.length != src.length || dst.overlaps(src))
        fail(ErrorKind::Message, "copy needs equal, nonoverlapping ranges (dst " + std::to_string(dst.length) +
                                     " bytes, src " + std::to_string(src.length) + " bytes)");
    require_gpu_bindable(dst, "copy");
    require_gpu_bindable(src, "copy");
    Op op;
    op.kind = Op::Kind::Copy;
    op.lane = lane;
    op.uses = {{dst, Access::Write}, {src, Access::Read}};
    ops_.push_back(std::move(op));
}

void GraphBuilder::host(HostFn fn, const std::vector<Use>& accesses) {
    for (const auto& u : accesses) {
        check_owner(u.view, "host");
        u.view.buffer->require_host_mapped("host region on " + u.view.buffer->describe());
    }
    Op op;
    op.kind = Op::Kind::Host;
    op.lane = Lane::Host;
    op.uses = accesses;
    op.host = std::move(fn);
    ops_.push_back(std::move(op));
}

void GraphBuilder::gpu(const std::shared_ptr<Kernel>& k, const std::vector<BufferView>& views) {
    kernel(k, views, Engine::Gpu);
}

void GraphBuilder::npu(const std::shared_ptr<Kernel>& k, const std::vector<BufferView>& views) {
    kernel(k, views, Engine::Npu);
}

void GraphBuilder::kernel(const std::shared_ptr<Kernel>& k, const std::vector<BufferView>& views, Engine engine) {
    const std::string op = std::string(engine == Engine::Gpu ? "gpu" : "npu") + "(" + k->name + ")";
    if (k->engine != engine)
        fail(ErrorKind::Message, op + ": a " + engine_name(k->engine) + " kernel cannot run on the " +
                                     engine_name(engine) + " lane");
    if (k->runtime != runtime_)
        fail(ErrorKind::Message, op + ": the kernel belongs to another runtime (load it on this runtime's " +
                                     (engine == Engine::Gpu ? std::string("GPU") : std::string("NPU")) + ")");
    for (const auto& v : views) check_owner(v, op);
    check_kernel_use(*k, views, op);
    Op o;
    o.kind = Op::Kind::Kernel;
    o.lane = engine == Engine::Gpu ? Lane::Compute : Lane::Npu;
    for (size_t i = 0; i < views.size(); ++i) o.uses.push_back({views[i], k->contract.bindings[i].access});
    o.kernel = k;
    ops_.push_back(std::move(o));
}

SummaryInterval hazard_key(const Use& u) {
    SummaryInterval s;
    s.storage = u.view.buffer->state().get();
    if (u.view.buffer->placement().kind == PlacementKind::Shared) {
        s.start = 0;
        s.end = u.view.buffer->nbytes();
    } else {
        s.start = u.view.offset;
        s.end = u.view.offset + u.view.length;
    }
    s.writes = access_writes(u.access);
    return s;
}

std::shared_ptr<PreparedGraph> GraphBuilder::prepare() const {
    if (ops_.empty()) fail(ErrorKind::Message, "cannot prepare an empty graph");
    for (const Op& op : ops_)
        for (const Use& u : op.uses)
            u.view.buffer->state()->check_writable(access_writes(u.access), "prepare: " + u.view.buffer->describe());
    auto g = std::make_shared<PreparedGraph>();
    g->runtime = runtime_;
    g->ops = ops_;
    // Regions: each NPU or host entry alone; otherwise a maximal run of
    // consecutive entries on the same GPU lane.
    for (size_t i = 0; i < g->ops.size(); ++i) {
        const Op& op = g->ops[i];
        const bool alone = op.lane == Lane::Npu || op.lane == Lane::Host;
        if (alone || g->regions.empty() || g->regions.back().lane != op.lane ||
            g->regions.back().lane == Lane::Npu || g->regions.back().lane == Lane::Host)
            g->regions.push_back(Region{op.lane, {}, {}, 0});
        g->regions.back().ops.push_back(i);
        if (op.kind == Op::Kind::Copy) g->regions.back().copy_bytes += op.uses[0].view.length;
    }
    // Dependencies between regions: every earlier region with an overlapping
    // use where either side writes (RAW, WAW, WAR; never RAR). This is the
    // transitive closure of HRX's interval frontier, so it orders the same.
    std::vector<std::vector<SummaryInterval>> keys(g->regions.size());
    for (size_t r = 0; r < g->regions.size(); ++r)
        for (size_t oi : g->regions[r].ops)
            for (const auto& u : g->ops[oi].uses) keys[r].push_back(hazard_key(u));
    for (size_t r = 0; r < g->regions.size(); ++r)
        for (size_t e = 0; e < r; ++e)
            if (summaries_conflict(keys[e], keys[r])) g->regions[r].deps.push_back(e);
    for (const auto& op : g->ops)
        if (op.kind == Op::Kind::Kernel && op.kernel->engine == Engine::Npu &&
            std::find(g->npu_kernels.begin(), g->npu_kernels.end(), op.kernel) == g->npu_kernels.end())
            g->npu_kernels.push_back(op.kernel);
    for (const auto& k : keys) g->summary.insert(g->summary.end(), k.begin(), k.end());
    std::map<const StorageState*, size_t> index;
    for (const auto& op : g->ops)
        for (const auto& u : op.uses) {
            const auto& st = u.view.buffer->state();
            auto [it, fresh] = index.emplace(st.get(), g->storages.size());
            if (fresh) g->storages.push_back({st, false});
            g->storages[it->second].second = g->storages[it->second].second || access_writes(u.access);
        }
    return g;
}

}  // namespace hrx
