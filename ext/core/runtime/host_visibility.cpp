#include "runtime/host_visibility.h"

#include <atomic>

#include "errors.h"
#include "runtime/runtime.h"

namespace hrx {

HostVisibilityPlan prepare_host_visibility(const std::shared_ptr<Buffer>& b,
                                           const std::optional<std::vector<ByteRange>>& requested, bool release) {
    const std::string op = std::string(release ? "prepare_release_host" : "prepare_acquire_host") + " on " + b->describe();
    b->require_host_mapped(op);
    const auto& provider = runtime_of(*b->state()->owner()).provider();
    // Maintenance is a property of the storage, not of one handle: once an
    // adopted alias lets the NPU in, the source handle's host accesses need
    // the flush/invalidate too.
    BackingDesc effective = b->backing();
    if (b->state()->needs_host_maintenance()) effective.gpu_coherent = false;
    CacheTransition t = provider.host_recipe(effective, release);
    if (t.kind == TransitionKind::Unknown)
        fail(ErrorKind::Unsupported, op + ": unqualified host visibility relation");
    if (t.kind != TransitionKind::None && !t.is_host_action())
        fail(ErrorKind::Unsupported, op + ": transition is not a qualified host action");
    auto merged = merge_ranges(requested ? *requested : std::vector<ByteRange>{{0, b->nbytes()}}, b->nbytes());
    // A recipe without ranges (None: a fence; Global: the whole cache domain)
    // is one operation over the whole buffer.
    if (!merged.empty() && (t.kind == TransitionKind::None || t.kind == TransitionKind::Global))
        merged = {ByteRange{0, b->nbytes()}};
    return {b, t, release, std::move(merged)};
}

void execute_host_visibility(const HostVisibilityPlan& p) {
    auto& state = *p.buffer->state();
    state.throw_if_poisoned(std::string(p.release ? "release_host" : "acquire_host") + " on " + p.buffer->describe());
    const HostCacheOp op = p.release ? HostCacheOp::Flush : HostCacheOp::Invalidate;
    uint64_t maintained = 0;
    for (const auto& r : p.ranges) {
        if (p.transition.kind == TransitionKind::None) {
            std::atomic_thread_fence(std::memory_order_seq_cst);
            continue;
        }
        state.host_cache_control(op, r.start, r.length());
        maintained += r.length();
    }
    if (maintained) state.owner()->count_maintenance(maintained);
}

VisibilityFacts visibility_facts(const RuntimeCore& runtime, const BackingDesc& backing, const Site& producer,
                                 const Site& consumer) {
    return runtime.provider().pair_info(backing, producer, consumer);
}

}  // namespace hrx
