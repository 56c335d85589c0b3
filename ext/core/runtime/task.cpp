// One-operation submissions (RuntimeCore::submit_task): the array layer's
// path into the lanes. Each call builds a one-region PreparedGraph by hand
// (no region formation, no slots observers can hold) and enqueues it like a
// graph replay, so hazards, leases, visibility, poison and traces follow the
// same rules as graphs.
#include <algorithm>

#include "errors.h"
#include "runtime/runtime.h"

namespace hrx {


std::shared_ptr<CompletionState> RuntimeCore::submit_task(Lane lane, std::vector<Use>& uses,
                                                          std::function<void()>& fn, const std::string& op,
                                                          const std::string& label,
                                                          std::shared_ptr<Kernel> kernel) {
    scheduler_->check_accepting(op);
    for (const auto& u : uses)
        if (u.view.buffer->state()->owner().get() != this)
            fail(ErrorKind::Message, op + ": " + u.view.buffer->describe() + " belongs to another runtime");
    auto g = std::make_shared<PreparedGraph>();
    auto& storages = g->storages;
    storages.reserve(uses.size());
    for (const auto& u : uses) {
        const auto& st = u.view.buffer->state();
        auto it = std::find_if(storages.begin(), storages.end(), [&](const auto& p) { return p.first == st; });
        if (it == storages.end())
            storages.push_back({st, access_writes(u.access)});
        else
            it->second = it->second || access_writes(u.access);
    }

    // Poison (DeviceLost) is checked with each lease below, after capacity:
    // a full runtime makes the caller wait, then the refusal comes.
    Retired retired;  // destroyed after submit_mu_ is released (Note [Freed where allocated])
    std::lock_guard<std::mutex> lock(submit_mu_);
    if (static_cast<int64_t>(scheduler_->pending()) >= options_.max_submissions) return nullptr;
    auto sub = std::make_shared<Submission>();
    sub->take_leases(storages, op);
    g->runtime = shared_from_this();
    g->summary.reserve(uses.size());
    for (const auto& u : uses) g->summary.push_back(hazard_key(u));
    Op o;
    o.lane = lane;
    o.uses = std::move(uses);
    if (kernel) {
        o.kind = Op::Kind::Kernel;
        o.kernel = std::move(kernel);
    } else {
        o.kind = Op::Kind::Task;
        o.task = std::move(fn);
    }
    o.name = op;
    o.label = label;
    g->ops.push_back(std::move(o));
    g->regions.push_back(Region{lane, {0}, {}, 0});
    sub->graph = std::move(g);
    sub->completion = scheduler_->make_completion();
    sub->regions.assign(1, Submission::RegionState::Waiting);
    task_submissions_.fetch_add(1, std::memory_order_relaxed);
    auto completion = sub->completion;
    retired = scheduler_->enqueue(std::move(sub));
    return completion;
}

}  // namespace hrx
