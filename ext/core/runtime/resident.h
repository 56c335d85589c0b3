// Resident GPU–NPU exchange (HRX §2.10): two long-running participants that
// exchange payloads through shared storage without host round trips, started
// and stopped by one host-published word (WAIT = 0, RUN = 1, ABORT = 2).
//
// Note [Resident participants]: on the emulated fabric each participant is a
// device thread. Both only read the startup word (acquire loads); only the
// host writes it, once. The GPU writes request slots, the NPU answers in
// response slots with response = request * 3 + generation (mod 2^32), and
// credits bound how far the GPU may run ahead. The GPU writes its terminal
// state to word 48 of a 256-byte control block: 0 pending, 1 complete,
// 2 aborted; words 49 and 50 count completed generations and mismatches.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "memory/storage.h"

namespace hrx {

class RuntimeCore;

constexpr uint32_t kResidentWait = 0;
constexpr uint32_t kResidentRun = 1;
constexpr uint32_t kResidentAbort = 2;
constexpr uint32_t kControlPending = 0;
constexpr uint32_t kControlComplete = 1;
constexpr uint32_t kControlAborted = 2;
constexpr size_t kControlStateWord = 48;
constexpr uint64_t kControlBytes = 256;

struct ResidentConfig {
    uint32_t generations = 1;
    uint32_t payload_words = 16;  // 1..1024
    uint32_t word_offset = 1;     // 1..16: payload start inside a slot (word 0 is the sequence)
    uint32_t credits = 1;         // 1..2 slots in flight
    uint32_t slot_stride = 256;   // bytes, multiple of 64 in 64..4160
    uint32_t seed = 1;
    // Bytes of exchange storage: `credits` request slots then `credits` response slots.
    uint64_t exchange_bytes() const { return uint64_t(slot_stride) * credits * 2; }
    void validate() const;  // ValueError naming the offending field
};

class ResidentStartup {
public:
    ResidentStartup(std::shared_ptr<RuntimeCore> runtime, int npu_index);
    const std::shared_ptr<Buffer>& word() const { return word_; }
    std::atomic<uint32_t>* decision() const;
    const std::shared_ptr<RuntimeCore>& runtime() const { return runtime_; }

private:
    std::shared_ptr<RuntimeCore> runtime_;
    std::shared_ptr<Buffer> word_;
};

class ResidentSession {
public:
    ResidentSession(std::shared_ptr<ResidentStartup> startup, ResidentConfig config, BufferView exchange,
                    BufferView control);
    ~ResidentSession();
    void submit_gpu();
    void submit_npu();
    void start();
    void abort();
    // Requires a decision; false on timeout (ownership kept). Throws
    // Execution when a participant failed.
    bool wait(std::optional<double> seconds);
    bool done() const;
    uint32_t decision() const;

private:
    void publish(uint32_t value, const char* op);
    void run_gpu();
    void run_npu();
    void participant_failed(const std::string& message);

    std::shared_ptr<ResidentStartup> startup_;
    ResidentConfig config_;
    BufferView exchange_;
    BufferView control_;
    mutable std::mutex mu_;
    bool gpu_submitted_ = false;
    bool npu_submitted_ = false;
    bool decided_ = false;
    std::thread gpu_thread_;
    std::thread npu_thread_;
    std::atomic<int> running_{0};
    std::optional<std::string> failure_;
};

}  // namespace hrx
