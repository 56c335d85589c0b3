// Placements (HRX execution::MemoryPlacement): where a buffer's storage lives
// and which engines may bind it (reference/hrx-runtime.md §1.7).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "memory/owner.h"
#include "memory/visibility.h"

namespace hrx {

enum class PlacementKind : uint8_t { GpuLocal, HostVisible, NpuLocal, Shared };

struct Placement {
    PlacementKind kind = PlacementKind::HostVisible;
    // NPU placements name one NPU of one runtime (runtime_of() in
    // runtime/runtime.h gives the runtime); GPU placements name neither.
    std::shared_ptr<StorageOwner> runtime;
    int npu_index = 0;

    bool names_npu() const { return kind == PlacementKind::NpuLocal || kind == PlacementKind::Shared; }
    bool host_mapped() const { return kind != PlacementKind::GpuLocal; }
    bool gpu_bindable() const { return kind != PlacementKind::NpuLocal; }
    bool npu_bindable() const { return names_npu(); }

    // The backing a fresh allocation of this placement gets.
    BackingDesc backing() const {
        BackingDesc b;
        b.gpu = gpu_bindable();
        b.npu = npu_bindable();
        b.npu_index = names_npu() ? npu_index : 0;
        b.gpu_coherent = kind == PlacementKind::HostVisible;
        return b;
    }

    std::string repr() const {
        switch (kind) {
            case PlacementKind::GpuLocal: return "GpuLocal()";
            case PlacementKind::HostVisible: return "HostVisible()";
            case PlacementKind::NpuLocal: return "NpuLocal(npu:" + std::to_string(npu_index) + ")";
            case PlacementKind::Shared: return "Shared(npu:" + std::to_string(npu_index) + ")";
        }
        return "?";
    }

    bool operator==(const Placement& o) const {
        if (kind != o.kind) return false;
        if (!names_npu()) return true;
        return runtime == o.runtime && npu_index == o.npu_index;
    }

    size_t hash() const {
        size_t h = static_cast<size_t>(kind) * 0x9E3779B97F4A7C15ull;
        if (names_npu()) h ^= std::hash<const void*>()(runtime.get()) + static_cast<size_t>(npu_index) * 31u;
        return h;
    }
};

}  // namespace hrx
