// Zero-copy import of foreign host memory (DLPack producers) as registered
// host storage of a runtime.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>

#include "memory/storage.h"

namespace hrx {

class RuntimeCore;

// A HostVisible Buffer over [data, data + bytes), which another library owns.
// `release` (take) runs exactly once when the storage dies, and also when this
// call fails, so the caller hands ownership over unconditionally. The import
// counts as an allocation and an import in the runtime's statistics; its bytes
// are live while the storage is, but are not charged to the memory budget
// (the producer allocated them). `readonly` storage refuses every write
// (host write guards, writable leases, device bindings that write).
std::shared_ptr<Buffer> import_host_memory(RuntimeCore& runtime, uint8_t* data, uint64_t bytes,
                                           std::function<void()> release, bool readonly);

}  // namespace hrx
