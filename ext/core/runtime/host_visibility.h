// Host cache maintenance of a buffer's ranges, prepared once with HRX's range
// rules and the provider's host recipe, then executed (Buffer.prepare_release_host
// / prepare_acquire_host); and a backing's pair visibility facts.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "memory/ranges.h"
#include "memory/storage.h"
#include "memory/visibility.h"

namespace hrx {

class RuntimeCore;

struct HostVisibilityPlan {
    std::shared_ptr<Buffer> buffer;
    CacheTransition transition;
    bool release = true;
    std::vector<ByteRange> ranges;  // sorted, merged; the whole buffer for a fence or a global recipe
};

// `requested`: (start, end) byte ranges (empty optional: the whole buffer).
// Unsupported for an unmapped placement, an unqualified relation or a recipe
// that is not a host action; Message for ranges out of bounds.
HostVisibilityPlan prepare_host_visibility(const std::shared_ptr<Buffer>& buffer,
                                           const std::optional<std::vector<ByteRange>>& requested, bool release);
// One host cache transition per range (a fence for a 'none' recipe); the
// maintained bytes are counted in the runtime's statistics. DeviceLost when
// the storage was poisoned.
void execute_host_visibility(const HostVisibilityPlan& plan);

// The provider's facts between two sites of `backing` on `runtime`.
VisibilityFacts visibility_facts(const RuntimeCore& runtime, const BackingDesc& backing, const Site& producer,
                                 const Site& consumer);

}  // namespace hrx
