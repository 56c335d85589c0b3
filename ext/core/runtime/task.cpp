// One-operation submissions (RuntimeCore::submit_task): the array layer's
// path into the lanes. Each call builds a one-region PreparedGraph by hand
// (no region formation, no slots observers can hold) and enqueues it like a
// graph replay, so hazards, leases, visibility, poison and traces follow the
// same rules as graphs.
#include <algorithm>

#include "errors.h"
#include "runtime/runtime.h"

namespace hrx {


// Note [Pooled task storage]: a one-operation submission is a Submission,
// its own PreparedGraph, and the vectors inside them (storages, leases,
// summary, the op, the region and its op list, the region states): a dozen
// allocations per array operation, each freed again a microsecond later. The
// submitting thread gets its finished submissions back anyway (Note [Freed
// where allocated] in scheduler.cpp), so it empties them of everything they
// held (the closure, the uses, the leases, the completion, the runtime),
// keeps up to kSpares of them per thread, and fills one for its next
// operation, with its vectors keeping their capacity. Only task submissions
// whose graph nobody else holds and which was not quarantined are reused;
// the rest are destroyed as before. Two more pieces of an operation go back
// to the thread for its next one: the uses vector (submit_task swaps the new
// uses with the emptied op's, so the caller gets a vector with room for its
// next operation's uses) and an elementwise dispatch's ElementwiseOp record
// that nothing else holds (spare_elementwise_op), which the array layer
// fills again instead of allocating one.
namespace {

// Emptied ElementwiseOp records of this thread's finished operations.
constexpr size_t kSpareOps = 64;
thread_local std::vector<std::shared_ptr<provider::ElementwiseOp>> t_spare_ops;

// Keeps `op` for spare_elementwise_op when it is an elementwise record that
// nothing else holds; drops it otherwise.
void keep_array_op(std::shared_ptr<const provider::ArrayOp>& op) {
    if (op && op.use_count() == 1 && op->family == provider::ArrayOp::Family::Elementwise &&
        t_spare_ops.size() < kSpareOps) {
        // Made non-const by the array layer (ufunc_task), and held by no one else.
        auto e = std::static_pointer_cast<provider::ElementwiseOp>(std::const_pointer_cast<provider::ArrayOp>(op));
        op.reset();
        t_spare_ops.push_back(std::move(e));
        return;
    }
    op.reset();
}

std::shared_ptr<Submission> reusable(Retired& retired) {
    while (auto sub = retired.pop()) {
        if (!sub->task || sub.use_count() != 1 || !sub->graph || sub->graph.use_count() != 1 ||
            sub->graph->quarantined())
            continue;  // destroyed here, outside submit_mu_
        PreparedGraph& g = *sub->graph;
        g.runtime.reset();
        g.storages.clear();
        g.summary.clear();
        g.npu_kernels.clear();
        if (g.ops.size() == 1) {
            Op& o = g.ops[0];
            o.uses.clear();
            o.kernel.reset();
            keep_array_op(o.array);
            o.host = nullptr;
        } else {
            g.ops.clear();
        }
        sub->completion.reset();
        sub->slot.reset();
        sub->after.clear();
        sub->leases.clear();
        std::fill(std::begin(sub->waiting_on_lane), std::end(sub->waiting_on_lane), 0);
        sub->cleared = false;
        sub->self = {};
        sub->running = 0;
        sub->failed = false;
        sub->failure = CompletionState::Outcome{};
        return sub;
    }
    return nullptr;
}

// Note [Task storages do not own]: a graph's storage list holds the handles
// that keep its storages alive, but a one-operation submission's own graph
// has its op's uses for that (each use's Buffer holds its storage), cleared
// together with the list when the submission is reused. So the list of a
// task submission holds non-owning handles (shared_ptr's aliasing
// constructor with no owner): copying and dropping them touches no
// reference count. Those counts sit beside storage state that the lanes read
// and write for every operation, and an atomic add on such a line was the
// most expensive instruction of submit_task.

// Emptied submissions kept by the thread that submits: what enqueue hands
// back arrives after this call's submission is made, so it serves the next.
// They hold nothing (no runtime), so one runtime's may serve another's.
constexpr size_t kSpares = 64;  // a full runtime (max_submissions 64) retires up to half of it at once
thread_local std::vector<std::shared_ptr<Submission>> t_spares;

// Keeps what can be reused of `retired` among the spares and destroys the
// rest, when it goes out of scope (after submit_mu_ is released).
struct Stash {
    Retired retired;
    ~Stash() {
        while (auto sub = reusable(retired))
            if (t_spares.size() < kSpares) t_spares.push_back(std::move(sub));
    }
};

}  // namespace

std::shared_ptr<provider::ElementwiseOp> spare_elementwise_op() {
    if (t_spare_ops.empty()) return std::make_shared<provider::ElementwiseOp>();
    auto e = std::move(t_spare_ops.back());
    t_spare_ops.pop_back();
    // Back to a fresh record's state; the caller sets what it uses.
    e->op = kernels::Ufunc::Add;
    e->loop = kernels::UfuncLoop{};
    e->shape.clear();
    for (auto& a : e->in) a = provider::ArrayArg{};
    e->nin = 0;
    e->out = provider::ArrayArg{};
    e->has_where = false;
    e->where = provider::ArrayArg{};
    return e;
}

std::shared_ptr<CompletionState> RuntimeCore::submit_task(Lane lane, std::vector<Use>& uses, const std::string& op,
                                                          const std::string& label, std::shared_ptr<Kernel> kernel,
                                                          std::shared_ptr<const provider::ArrayOp> array) {
    if (!kernel == !array) fail(ErrorKind::Message, op + ": a submission is one kernel or one array dispatch");
    scheduler_->check_accepting(op);
    for (const auto& u : uses)
        if (u.view.buffer->state()->owner().get() != this)
            fail(ErrorKind::Message, op + ": " + u.view.buffer->describe() + " belongs to another runtime");
    // Destroyed or kept (Stash) after submit_mu_ is released (Note [Freed where allocated]).
    Stash retired{scheduler_->take_retired()};
    std::shared_ptr<Submission> sub;
    if (!t_spares.empty()) {
        sub = std::move(t_spares.back());
        t_spares.pop_back();
    } else {
        sub = reusable(retired.retired);
    }
    if (!sub) {
        sub = std::make_shared<Submission>();
        sub->task = true;
        sub->graph = std::make_shared<PreparedGraph>();
    }
    PreparedGraph& g = *sub->graph;
    auto& storages = g.storages;
    storages.reserve(uses.size());
    for (const auto& u : uses) {
        const auto& st = u.view.buffer->state();
        auto it = std::find_if(storages.begin(), storages.end(), [&](const auto& p) { return p.first == st; });
        // Note [Task storages do not own]: a handle without a control block.
        if (it == storages.end())
            storages.push_back({std::shared_ptr<StorageState>(std::shared_ptr<void>(), st.get()), access_writes(u.access)});
        else
            it->second = it->second || access_writes(u.access);
    }

    // Poison (DeviceLost) is checked with each lease below, after capacity:
    // a full runtime makes the caller wait, then the refusal comes.
    Stash more;  // what enqueue hands back, after submit_mu_ too
    std::lock_guard<std::mutex> lock(submit_mu_);
    if (static_cast<int64_t>(scheduler_->pending()) >= options_.max_submissions) return nullptr;
    sub->take_leases(storages, op);
    g.runtime = shared_from_this();
    g.summary.reserve(uses.size());
    for (const auto& u : uses) g.summary.push_back(hazard_key(u));
    if (g.ops.empty()) g.ops.emplace_back();
    Op& o = g.ops[0];
    o.lane = lane;
    o.uses.swap(uses);  // the caller gets the emptied uses' room (Note [Pooled task storage])
    if (kernel) {
        o.kind = Op::Kind::Kernel;
        o.kernel = std::move(kernel);
    } else {
        o.kind = Op::Kind::Array;
        o.array = std::move(array);
    }
    o.name = op;
    o.label = label;
    if (g.regions.size() != 1) g.regions.assign(1, Region{lane, {0}, {}, 0});
    g.regions[0].lane = lane;
    sub->completion = scheduler_->make_completion();
    sub->regions.assign(1, Submission::RegionState::Waiting);
    task_submissions_.fetch_add(1, std::memory_order_relaxed);
    auto completion = sub->completion;
    more.retired = scheduler_->enqueue(std::move(sub));
    return completion;
}

}  // namespace hrx
