// Small shared vocabulary of the core: engines and access modes.
#pragma once
#include <cstdint>
#include <string>

namespace hrx {

// The three sites that read and write memory. Host is the CPU through a host
// mapping; Gpu and Npu are the two accelerator engines of the fabric.
enum class Engine : uint8_t { Host = 0, Gpu = 1, Npu = 2 };
constexpr int kEngineCount = 3;

inline const char* engine_name(Engine e) {
    switch (e) {
        case Engine::Host: return "host";
        case Engine::Gpu: return "gpu";
        case Engine::Npu: return "npu";
    }
    return "?";
}

enum class Access : uint8_t { Read = 1, Write = 2, ReadWrite = 3 };

inline bool access_reads(Access a) { return (static_cast<uint8_t>(a) & 1) != 0; }
inline bool access_writes(Access a) { return (static_cast<uint8_t>(a) & 2) != 0; }

inline const char* access_name(Access a) {
    switch (a) {
        case Access::Read: return "READ";
        case Access::Write: return "WRITE";
        case Access::ReadWrite: return "READ_WRITE";
    }
    return "?";
}

}  // namespace hrx
