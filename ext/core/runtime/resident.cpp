#include "runtime/resident.h"

#include <chrono>
#include <condition_variable>

#include "errors.h"
#include "runtime/deadline.h"
#include "runtime/runtime.h"

namespace hrx {

namespace {

// A participant that sees no peer progress for this long gives up: the
// emulated devices must never hang a test or a user's process.
constexpr auto kStallLimit = std::chrono::seconds(30);

std::atomic<uint32_t>* word_at(uint8_t* base, uint64_t byte_offset) {
    return reinterpret_cast<std::atomic<uint32_t>*>(base + byte_offset);
}

// Spin briefly, then yield: device polling without burning a host core.
template <typename Pred>
bool poll_until(Pred pred) {
    const auto deadline = std::chrono::steady_clock::now() + kStallLimit;
    for (int i = 0; !pred(); ++i) {
        if (i > 64) std::this_thread::sleep_for(std::chrono::microseconds(20));
        if ((i & 1023) == 0 && std::chrono::steady_clock::now() > deadline) return false;
    }
    return true;
}

uint32_t request_word(uint32_t seed, uint32_t slot, uint32_t generation, uint32_t i) {
    // The second slot is seeded with seed + 0x9e3779b9, as in the fixture.
    const uint32_t s = slot == 0 ? seed : seed + 0x9e3779b9u;
    return s * 2654435761u + generation * 40503u + i;
}

}  // namespace

void ResidentConfig::validate() const {
    auto bad = [](const std::string& what) { fail(ErrorKind::Message, "ResidentSession: " + what); };
    if (generations < 1) bad("generations must be at least 1");
    if (payload_words < 1 || payload_words > 1024) bad("payload_words must be in 1..=1024");
    if (word_offset < 1 || word_offset > 16) bad("word_offset must be in 1..=16");
    if (credits < 1 || credits > 2) bad("credits must be 1 or 2");
    if (slot_stride < 64 || slot_stride > 4160 || slot_stride % 64 != 0) bad("slot_stride must be a multiple of 64 in 64..=4160");
    if (uint64_t(word_offset + payload_words) * 4 > slot_stride)
        bad("word_offset + payload_words do not fit in slot_stride bytes");
}

ResidentStartup::ResidentStartup(std::shared_ptr<RuntimeCore> runtime, int npu_index) : runtime_(std::move(runtime)) {
    // HRX picks the first coherent-GPU profile admitting both devices.
    auto profiles = runtime_->allocation_profiles({{Engine::Gpu, 0}, {Engine::Npu, npu_index}}, true);
    if (profiles.empty()) fail(ErrorKind::Unsupported, "resident startup requires coherent GPU backing");
    word_ = runtime_->allocate_with_profile(profiles.front(), 64);
}

std::atomic<uint32_t>* ResidentStartup::decision() const { return word_at(word_->state()->data(), 0); }

ResidentSession::ResidentSession(std::shared_ptr<ResidentStartup> startup, ResidentConfig config, BufferView exchange,
                                 BufferView control)
    : startup_(std::move(startup)), config_(config), exchange_(std::move(exchange)), control_(std::move(control)) {
    config_.validate();
    const std::string op = "ResidentSession";
    for (const BufferView* v : {&exchange_, &control_}) {
        if (v->buffer->state()->owner() != startup_->runtime())
            fail(ErrorKind::Message, op + ": " + v->buffer->describe() + " belongs to another runtime");
        if (!v->buffer->placement().gpu_bindable() || !v->buffer->placement().npu_bindable())
            fail(ErrorKind::Unsupported, op + ": " + v->buffer->describe() + " must be Shared storage (both engines bind it)");
        if (v->offset % 64 != 0) fail(ErrorKind::Contract, op + ": views must start on a 64-byte boundary");
    }
    if (exchange_.length < config_.exchange_bytes())
        fail(ErrorKind::Contract, op + ": the exchange view needs " + std::to_string(config_.exchange_bytes()) + " bytes");
    if (control_.length < kControlBytes) fail(ErrorKind::Contract, op + ": the control view needs 256 bytes");
    if (exchange_.overlaps(control_)) fail(ErrorKind::Contract, op + ": exchange and control views overlap");
    if (startup_->decision()->load(std::memory_order_acquire) != kResidentWait)
        fail(ErrorKind::Busy, op + ": resident startup is already decided or failed");
}

ResidentSession::~ResidentSession() {
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (!decided_ && (gpu_submitted_ || npu_submitted_)) {
            decided_ = true;
            startup_->decision()->store(kResidentAbort, std::memory_order_release);
        }
    }
    // Participants observe ABORT or finish their generations, then exit.
    if (gpu_thread_.joinable()) gpu_thread_.join();
    if (npu_thread_.joinable()) npu_thread_.join();
}

void ResidentSession::participant_failed(const std::string& message) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failure_) failure_ = message;
    exchange_.buffer->state()->poison(message);
    control_.buffer->state()->poison(message);
}

void ResidentSession::submit_gpu() {
    std::lock_guard<std::mutex> lock(mu_);
    if (gpu_submitted_) fail(ErrorKind::Busy, "submit_gpu: the GPU participant was already accepted");
    exchange_.buffer->state()->acquire_device_use_checked(Access::ReadWrite, "submit_gpu");
    try {
        control_.buffer->state()->acquire_device_use_checked(Access::Write, "submit_gpu");
    } catch (...) {
        exchange_.buffer->state()->release_device_use(Access::ReadWrite);
        throw;
    }
    gpu_submitted_ = true;
    ++running_;
    gpu_thread_ = std::thread([this] { run_gpu(); });
}

void ResidentSession::submit_npu() {
    std::lock_guard<std::mutex> lock(mu_);
    if (npu_submitted_) fail(ErrorKind::Busy, "submit_npu: the NPU participant was already accepted");
    exchange_.buffer->state()->acquire_device_use_checked(Access::ReadWrite, "submit_npu");
    npu_submitted_ = true;
    ++running_;
    npu_thread_ = std::thread([this] { run_npu(); });
}

void ResidentSession::publish(uint32_t value, const char* op) {
    std::lock_guard<std::mutex> lock(mu_);
    if (decided_) fail(ErrorKind::Busy, std::string(op) + ": resident startup is already decided or failed");
    if (value == kResidentRun && !(gpu_submitted_ && npu_submitted_))
        fail(ErrorKind::Busy, std::string(op) + ": both participants must be accepted before start()");
    decided_ = true;
    // Release-store the decision, then the host release of the word (a fence
    // on coherent backing).
    startup_->decision()->store(value, std::memory_order_release);
    startup_->word()->state()->mark_written(Engine::Host);
}

void ResidentSession::start() { publish(kResidentRun, "start"); }
void ResidentSession::abort() { publish(kResidentAbort, "abort"); }

uint32_t ResidentSession::decision() const { return startup_->decision()->load(std::memory_order_acquire); }

bool ResidentSession::done() const { return running_.load() == 0; }

bool ResidentSession::wait(std::optional<double> seconds) {
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (!decided_) fail(ErrorKind::Busy, "wait: publish a decision (start() or abort()) first");
    }
    const Deadline deadline(seconds);  // Note [Timeouts]
    while (running_.load() != 0) {
        if (deadline.passed()) return false;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    // Joined under mu_: waiters on other threads (the binding releases the
    // GIL) would otherwise join the same thread twice, and the second join
    // never returns. No deadlock: a participant takes mu_ only before it
    // counts itself out of running_.
    std::lock_guard<std::mutex> lock(mu_);
    if (gpu_thread_.joinable()) gpu_thread_.join();
    if (npu_thread_.joinable()) npu_thread_.join();
    if (failure_) fail(ErrorKind::Execution, "resident exchange failed: " + *failure_);
    return true;
}

void ResidentSession::run_gpu() {
    uint8_t* ex = exchange_.data();
    uint8_t* ctl = control_.data();
    auto* state = word_at(ctl, kControlStateWord * 4);
    auto* completed = word_at(ctl, (kControlStateWord + 1) * 4);
    auto* mismatches = word_at(ctl, (kControlStateWord + 2) * 4);
    auto* decision = startup_->decision();
    const auto& c = config_;
    if (!poll_until([&] { return decision->load(std::memory_order_acquire) != kResidentWait; })) {
        participant_failed("GPU participant: no decision was published");
    } else if (decision->load(std::memory_order_acquire) == kResidentAbort) {
        state->store(kControlAborted, std::memory_order_release);
    } else {
        bool ok = true;
        for (uint32_t gen = 1; ok && gen <= c.generations; ++gen) {
            const uint32_t slot = (gen - 1) % c.credits;
            uint8_t* req = ex + uint64_t(slot) * c.slot_stride;
            uint8_t* rsp = ex + uint64_t(c.credits + slot) * c.slot_stride;
            // Credit: the slot is free once the NPU answered its previous generation.
            if (gen > c.credits &&
                !poll_until([&] { return word_at(rsp, 0)->load(std::memory_order_acquire) == gen - c.credits; })) {
                participant_failed("GPU participant: the NPU stopped answering at generation " + std::to_string(gen));
                ok = false;
                break;
            }
            auto* payload = reinterpret_cast<uint32_t*>(req) + c.word_offset;
            for (uint32_t i = 0; i < c.payload_words; ++i) payload[i] = request_word(c.seed, slot, gen, i);
            word_at(req, 0)->store(gen, std::memory_order_release);
            if (!poll_until([&] { return word_at(rsp, 0)->load(std::memory_order_acquire) == gen; })) {
                participant_failed("GPU participant: no response for generation " + std::to_string(gen));
                ok = false;
                break;
            }
            const auto* answer = reinterpret_cast<const uint32_t*>(rsp) + c.word_offset;
            for (uint32_t i = 0; i < c.payload_words; ++i)
                if (answer[i] != request_word(c.seed, slot, gen, i) * 3u + gen)
                    mismatches->fetch_add(1, std::memory_order_relaxed);
            completed->store(gen, std::memory_order_relaxed);
        }
        if (ok) state->store(kControlComplete, std::memory_order_release);
    }
    exchange_.buffer->state()->mark_written(Engine::Gpu);
    control_.buffer->state()->mark_written(Engine::Gpu);
    exchange_.buffer->state()->release_device_use(Access::ReadWrite);
    control_.buffer->state()->release_device_use(Access::Write);
    --running_;
}

void ResidentSession::run_npu() {
    uint8_t* ex = exchange_.data();
    auto* decision = startup_->decision();
    const auto& c = config_;
    if (!poll_until([&] { return decision->load(std::memory_order_acquire) != kResidentWait; })) {
        participant_failed("NPU participant: no decision was published");
    } else if (decision->load(std::memory_order_acquire) == kResidentRun) {
        for (uint32_t gen = 1; gen <= c.generations; ++gen) {
            const uint32_t slot = (gen - 1) % c.credits;
            uint8_t* req = ex + uint64_t(slot) * c.slot_stride;
            uint8_t* rsp = ex + uint64_t(c.credits + slot) * c.slot_stride;
            if (!poll_until([&] { return word_at(req, 0)->load(std::memory_order_acquire) == gen; })) {
                participant_failed("NPU participant: no request for generation " + std::to_string(gen));
                break;
            }
            const auto* in = reinterpret_cast<const uint32_t*>(req) + c.word_offset;
            auto* out = reinterpret_cast<uint32_t*>(rsp) + c.word_offset;
            for (uint32_t i = 0; i < c.payload_words; ++i) out[i] = in[i] * 3u + gen;
            word_at(rsp, 0)->store(gen, std::memory_order_release);
        }
    }
    exchange_.buffer->state()->mark_written(Engine::Npu);
    exchange_.buffer->state()->release_device_use(Access::ReadWrite);
    --running_;
}

}  // namespace hrx
