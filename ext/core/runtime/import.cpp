#include "runtime/import.h"

#include <utility>

#include "memory/foreign.h"
#include "runtime/runtime.h"

namespace hrx {

std::shared_ptr<Buffer> import_host_memory(RuntimeCore& runtime, uint8_t* data, uint64_t bytes,
                                           std::function<void()> release, bool readonly) {
    Placement placement;  // HostVisible: host-registered memory the GPU can bind
    placement.kind = PlacementKind::HostVisible;
    auto memory = std::make_unique<ForeignMemory>(data, bytes, placement.backing(), std::move(release));
    return runtime.import_foreign(std::move(memory), placement, readonly);
}

std::shared_ptr<Buffer> RuntimeCore::import_foreign(std::unique_ptr<provider::Memory> memory,
                                                    const Placement& placement, bool readonly) {
    const BackingDesc backing = memory->backing();
    const uint64_t bytes = memory->size();
    // No budget: the producer allocated these pages. The storage is written
    // by the host (the producer) as far as the runtime knows.
    auto state = std::make_shared<StorageState>(shared_from_this(), std::move(memory), Engine::Host,
                                                next_id_.fetch_add(1), nullptr, readonly);
    count_allocation(bytes, true);
    return std::make_shared<Buffer>(std::move(state), placement, backing);
}

}  // namespace hrx
