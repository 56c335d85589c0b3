// Visibility facts (HRX fabric::MemoryVisibility / libamdf pair info): what a
// producer site must do after writing and a consumer site before reading so
// that the consumer sees the bytes. Facts describe visibility only; ordering
// is the runtime's job.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "common.h"

namespace hrx {

enum class TransitionKind : uint8_t { Unknown, None, Range, Global };
enum class TransitionExecutor : uint8_t { None, Queue, Program, HostDirect, HostApi };
enum class TransitionOperation : uint8_t { None, ReleaseToSystem, AcquireFromSystem, Flush, Invalidate };
enum class AtomicScope : uint8_t { None, Device, Fabric, System };

const char* to_string(TransitionKind v);
const char* to_string(TransitionExecutor v);
const char* to_string(TransitionOperation v);
const char* to_string(AtomicScope v);

struct CacheTransition {
    TransitionKind kind = TransitionKind::None;
    TransitionExecutor executor = TransitionExecutor::None;
    TransitionOperation operation = TransitionOperation::None;
    uint64_t range_granularity = 0;  // bytes; cache-line size for host recipes, 0 for None/Global
    bool operator==(const CacheTransition&) const = default;
    bool is_host_action() const {
        return executor == TransitionExecutor::HostDirect || executor == TransitionExecutor::HostApi;
    }
};

struct VisibilityFacts {
    bool shared_backing_reachable = false;
    CacheTransition release;  // producer side, after its writes
    CacheTransition acquire;  // consumer side, before its reads
    AtomicScope atomic_scope_32 = AtomicScope::None;
    AtomicScope atomic_scope_64 = AtomicScope::None;
    std::optional<uint64_t> estimated_fixed_cost_ns;
};

// One point of access: the host mapping, or a device engine with its index.
struct Site {
    Engine engine = Engine::Host;
    int index = 0;
    bool operator==(const Site&) const = default;
};

// What a backing is: which engines were admitted when it was created (or
// imported) and whether the GPU attachment was requested host-coherent.
// Every fabric backing has a host mapping; whether the *execution* layer lets
// the host map it is a placement rule (GpuLocal refuses), not a backing fact.
struct BackingDesc {
    bool gpu = false;
    bool npu = false;
    int npu_index = 0;
    bool gpu_coherent = false;

    // HRX: host cache maintenance is skipped only for coherent, GPU-only backing.
    bool needs_host_maintenance() const { return !(gpu_coherent && gpu && !npu); }
    bool admits(const Site& s) const {
        if (s.engine == Engine::Host) return true;
        if (s.engine == Engine::Gpu) return gpu && s.index == 0;
        return npu && s.index == npu_index;
    }
    bool operator==(const BackingDesc&) const = default;
};

// A whole-storage or ranged host cache operation.
enum class HostCacheOp : uint8_t { Flush, Invalidate };

// The host's cache line: the granularity of host RANGE recipes.
constexpr uint64_t kHostCacheLine = 64;

}  // namespace hrx
