#include "memory/visibility.h"

namespace hrx {

const char* to_string(TransitionKind v) {
    switch (v) {
        case TransitionKind::Unknown: return "unknown";
        case TransitionKind::None: return "none";
        case TransitionKind::Range: return "range";
        case TransitionKind::Global: return "global";
    }
    return "?";
}

const char* to_string(TransitionExecutor v) {
    switch (v) {
        case TransitionExecutor::None: return "none";
        case TransitionExecutor::Queue: return "queue";
        case TransitionExecutor::Program: return "program";
        case TransitionExecutor::HostDirect: return "host_direct";
        case TransitionExecutor::HostApi: return "host_api";
    }
    return "?";
}

const char* to_string(TransitionOperation v) {
    switch (v) {
        case TransitionOperation::None: return "none";
        case TransitionOperation::ReleaseToSystem: return "release_to_system";
        case TransitionOperation::AcquireFromSystem: return "acquire_from_system";
        case TransitionOperation::Flush: return "flush";
        case TransitionOperation::Invalidate: return "invalidate";
    }
    return "?";
}

const char* to_string(AtomicScope v) {
    switch (v) {
        case AtomicScope::None: return "none";
        case AtomicScope::Device: return "device";
        case AtomicScope::Fabric: return "fabric";
        case AtomicScope::System: return "system";
    }
    return "?";
}

}  // namespace hrx
