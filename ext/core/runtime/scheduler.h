// The scheduler: lane worker threads, submissions, completions and traces.
//
// Note [Lanes and locks]: one mutex guards every submission's region states,
// the lane-busy flags and the pending list; each lane has one worker thread
// that runs at most one region at a time. Region bodies, completion callbacks
// and the destruction of anything that may end a runtime happen outside that
// mutex: callbacks take the GIL, and a Python thread holding the GIL may be
// waiting for the mutex. Lock order: scheduler mutex, then a storage mutex.
// One-lane submissions reach pending_ through a lock-free inbox instead of
// taking the mutex (Note [The submission inbox] in scheduler.cpp).
//
// Note [Lane threads never wait]: a lane thread runs Python only inside a
// host region, and a host region that blocks on the runtime (a wait for a
// completion, a map of a buffer in device use, a wait for room, a drain) may
// wait for work that cannot finish while it blocks: its own submission (or
// that submission's device-use leases), work that needs its lane, work
// ordered after its submission (hazards, submit_after), and so on
// transitively. Such a wait raises BusyError instead of stopping the lane for
// good, whatever its timeout (a poll, timeout 0 or less, is fine); a wait for
// anything else proceeds. Device-use waits and waits for room re-check now
// and then, as later submissions may take leases or room they depend on.
// Completion callbacks do not run on lanes at all: each scheduler has a
// callback thread that runs them in the order their completions finished,
// so a callback may wait for anything.
//
// Note [Lanes hand dispatches to queues]: a lane thread is the runtime's
// side of one engine queue of the provider (provider.h). For each fill, copy
// and kernel invocation of a region it builds a provider::Dispatch, submits
// it to its lane's queue and waits for it (one region per lane at a time, so
// one dispatch in flight per queue); the provider runs it (the emulated
// queue on the lane thread itself). Hazards, visibility, poison and traces
// stay with the lane; array tasks and host regions are not device
// dispatches and run on the lane directly.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "errors.h"
#include "runtime/graph.h"

namespace hrx {

// Note [Fork] in scheduler.cpp: how many fork()s this process is removed from
// the process that loaded the library (0 there; each child counts one more).
uint64_t fork_generation() noexcept;
// Throws Unsupported: `op` uses `what` (a runtime, a submission) made before
// fork() in process `creator` (0 when unknown), whose lanes this child lacks.
[[noreturn]] void fail_forked(const std::string& op, const char* what, long creator);

// A submission refused because the scheduler is closed (interpreter exit):
// an HrxError for Python, told apart so that exit can wait for the threads it
// was thrown on to report it (Note [Refused threads report before exit] in
// ext/bind/bind_runtime.cpp).
class Refusal : public Error {
public:
    explicit Refusal(const std::string& message) : Error(ErrorKind::Generic, message) {}
};

// An error carrying an opaque payload from the layer above (the Python
// exception a host region raised), so a completion can chain to it.
class ForeignError : public Error {
public:
    ForeignError(const std::string& message, std::shared_ptr<void> payload)
        : Error(ErrorKind::Generic, message), payload_(std::move(payload)) {}
    const std::shared_ptr<void>& payload() const { return payload_; }

private:
    std::shared_ptr<void> payload_;
};

class CompletionState {
public:
    enum class Status : uint8_t { Pending, Succeeded, Failed, Cancelled };
    struct Outcome {
        Status status = Status::Pending;
        std::string message;
        ErrorKind cause_kind = ErrorKind::Generic;
        std::shared_ptr<void> cause_payload;
        // The failing operation's own error, without the region context that
        // `message` adds (HRX: Execution { source }); empty: `message`.
        std::string cause_message;
    };

    CompletionState(std::weak_ptr<void> owner, uint64_t id)
        : owner_(std::move(owner)), id_(id), generation_(fork_generation()) {}
    uint64_t id() const { return id_; }
    const std::weak_ptr<void>& owner() const { return owner_; }
    // Lock-free: array operations poll their writers on every submission.
    bool done() const { return status_.load(std::memory_order_acquire) != Status::Pending; }
    Status status() const { return status_.load(std::memory_order_acquire); }
    Outcome outcome() const;
    // Waits without a timeout when `seconds` is empty; false on timeout.
    // Note [Timeouts] in deadline.h. Note [Lane threads never wait]: Busy
    // when a lane thread would block for work that cannot finish meanwhile
    // (a timeout of 0 or less only polls). Unsupported in a fork child for a
    // pending submission of the parent.
    bool wait(std::optional<double> seconds) const;
    // Note [Waiters poll first] in scheduler.cpp: true once finished.
    bool poll_done() const noexcept;
    // Runs `fn` once when done: at once on this thread if already done,
    // otherwise on the scheduler's callback thread (never on a lane).
    // Unsupported in a fork child while pending (it would never finish).
    void on_done(std::function<void()> fn);
    // Records the outcome, wakes waiters and returns the callbacks to run.
    std::vector<std::function<void()>> finish(Outcome outcome);
    void request_cancel() { cancel_requested_.store(true); }
    bool cancel_requested() const { return cancel_requested_.load(); }

private:
    std::weak_ptr<void> owner_;  // the scheduler, to reject another runtime's completions
    uint64_t id_;
    uint64_t generation_;  // fork_generation() at creation
    mutable std::mutex mu_;
    mutable std::condition_variable cv_;
    Outcome outcome_;
    std::atomic<Status> status_{Status::Pending};  // mirrors outcome_.status, set last under mu_
    std::vector<std::function<void()>> callbacks_;
    std::atomic<bool> cancel_requested_{false};
};

// Note [Failed outcomes reach the caller]: a failed or cancelled submission
// that core code waited for on the caller's behalf (an array's writers, a
// data-dependent count) is thrown as a TaskFailure carrying the completion's
// outcome. The binding turns it into the same exception Completion.result()
// raises (ExecutionError chained to the region's own error, LinAlgError, or
// CancelledError), so every wait reports a failure one way.
class TaskFailure : public Error {
public:
    explicit TaskFailure(CompletionState::Outcome outcome)
        : Error(kind_of(outcome), outcome.message), outcome_(std::move(outcome)) {}
    const CompletionState::Outcome& outcome() const { return outcome_; }

private:
    static ErrorKind kind_of(const CompletionState::Outcome& o) {
        if (o.status == CompletionState::Status::Cancelled) return ErrorKind::Cancelled;
        return o.cause_kind == ErrorKind::LinAlg ? ErrorKind::LinAlg : ErrorKind::Execution;
    }
    CompletionState::Outcome outcome_;
};

// Waits for `c` (a BlockingWait when it is pending; Note [Blocking waits of
// core code]) and throws TaskFailure when it failed or was cancelled.
void wait_succeeded(const CompletionState& c);

// Holds one of a prepared graph's completion slots until every holder (the
// run and each Completion observer) is gone.
struct SlotToken {
    std::shared_ptr<PreparedGraph> graph;
    ~SlotToken() {
        if (graph) graph->release_slot();
    }
};

struct TraceEvent {
    Lane lane = Lane::Compute;
    std::string op;      // region_label: what ran ("matmul", "copy x2, gpu(add_f32)")
    std::string detail;  // an array operation's full description, when it says more than `op`
    double start_us = 0;
    double duration_us = 0;
    uint64_t bytes = 0;
    bool failed = false;
    uint64_t submission = 0;
    size_t region = 0;
};

struct Submission;

// Finished submissions handed back to a submitting thread (Note [Freed where
// allocated] in scheduler.cpp): a chain it owns, destroyed with it. A
// submitting thread may take one out to reuse its storage (Note [Pooled task
// storage] in runtime/task.cpp).
class Retired {
public:
    Retired() = default;
    explicit Retired(Submission* chain) : head_(chain) {}
    Retired(Retired&& o) noexcept : head_(std::exchange(o.head_, nullptr)) {}
    Retired& operator=(Retired&& o) noexcept;
    Retired(const Retired&) = delete;
    Retired& operator=(const Retired&) = delete;
    ~Retired() { clear(); }
    bool empty() const { return head_ == nullptr; }
    // Takes the first one out of the chain (null when empty).
    std::shared_ptr<Submission> pop();
    void clear();

private:
    Submission* head_ = nullptr;
};

class Scheduler : public std::enable_shared_from_this<Scheduler>, public LaneWaits {
public:
    explicit Scheduler(RuntimeCore* runtime);
    ~Scheduler();
    void start();
    // Accept a submission (all checks done by the caller). Never waits.
    // Returns the retired submissions for the caller to destroy once it holds
    // no lock (Note [Freed where allocated] in scheduler.cpp).
    [[nodiscard]] Retired enqueue(std::shared_ptr<Submission> sub);
    size_t pending() const;
    // Finished submissions not yet destroyed, for the caller to destroy or
    // reuse once it holds no lock. Lock-free.
    [[nodiscard]] Retired take_retired();
    // Wake the workers to re-check cancellations and producers.
    void poke();
    // Wait until no submission is pending and every completion callback has
    // run (GIL must not be held). On the callback thread itself it waits for
    // the submissions only.
    void drain();
    // Wait until fewer than `limit` submissions are pending or the scheduler
    // is closed (GIL must not be held).
    void wait_for_room(size_t limit);
    // Stop accepting; workers exit once everything accepted has run.
    void shutdown();
    // Refuse new submissions from now on (check_accepting throws `reason`);
    // what was accepted still runs. Used at interpreter exit.
    void close(const std::string& reason);
    // Throws when a new submission must be refused: closed (Refusal, with the
    // close reason) or made before a fork (Unsupported). `op` names the call.
    void check_accepting(const std::string& op) const;
    // Note [Fork]: true in a fork child of the process that started it (its
    // lane threads do not exist here).
    bool forked() const noexcept { return generation_ != fork_generation(); }
    void check_not_forked(const std::string& op) const {
        if (forked()) fail_forked(op, "this runtime", creator_pid_);
    }
    // Note [Lane threads never wait]: the scheduler whose region this thread
    // is running, or null anywhere else.
    static Scheduler* running_here() noexcept;
    // How often a wait on a lane thread that may come to depend on later
    // submissions (device use, room) checks again that it can end.
    static constexpr std::chrono::milliseconds kStuckRecheck = LaneWaits::kRecheck;
    // Called on a lane thread of this scheduler (running_here() == this),
    // without mu_ or a storage mutex: throws Busy naming `op` when the
    // submission of `completion`, or a device use of `storage`, cannot end
    // while the running region waits; returns otherwise.
    void refuse_stuck_wait(const std::string& op, const StorageState* storage, const CompletionState* completion);
    // LaneWaits (memory/owner.h), installed on a lane thread while it runs a region.
    void refuse_stuck_wait(const std::string& op, const StorageState* storage) override {
        refuse_stuck_wait(op, storage, nullptr);
    }
    // Queue completion callbacks for the callback thread (started on first use).
    void post_callbacks(std::vector<std::function<void()>> callbacks);

    void start_trace(size_t capacity);
    std::vector<TraceEvent> finish_trace(uint64_t* dropped);
    std::shared_ptr<CompletionState> make_completion();

private:
    void worker(Lane lane);
    void callback_worker();
    // Note [Lane threads never wait]: the pending submissions that cannot
    // retire while this thread's running region does not return. Under mu_.
    std::vector<const Submission*> stuck_locked() const;
    [[noreturn]] void fail_stuck(const std::string& op, const char* why) const;
    bool idle_locked() const { return idle_submissions_locked() && callbacks_.empty() && callbacks_running_ == 0; }
    Submission* find_runnable(Lane lane, size_t* region);
    void settle_locked(std::vector<std::shared_ptr<Submission>>* finished);
    // Note [The submission inbox]: moves what was pushed there into pending_,
    // in submission order. Under mu_.
    void take_inbox_locked();
    bool idle_submissions_locked() const {
        return pending_.empty() && releasing_ == 0 && inbox_.load(std::memory_order_acquire) == nullptr;
    }
    std::list<std::shared_ptr<Submission>>::iterator settle_one(std::list<std::shared_ptr<Submission>>::iterator it,
                                                               std::vector<std::shared_ptr<Submission>>* finished);
    void finalize_locked(std::list<std::shared_ptr<Submission>>::iterator it,
                         std::vector<std::shared_ptr<Submission>>* finished);
    // Destroys the retired submissions outside mu_ (held on entry and on return).
    void bury(std::unique_lock<std::mutex>& lock);
    // Note [Freed where allocated]: pushes a finished submission on retired_.
    void retire(std::shared_ptr<Submission> sub);
    // Runs one region outside the mutex; true on success. The caller marks it final.
    bool run_region(Submission& sub, size_t region, Lane lane);
    // Note [Lanes hand dispatches to queues]: a fill, copy or kernel op.
    void dispatch(Lane lane, const Op& op);
    // Note [Spreading lanes] in scheduler.cpp. The first runs under mu_.
    void spread_lanes_locked(const bool (&lanes)[kLaneCount]) noexcept;
    void unpin_self() noexcept;
    // Bumps the lane's signal counter, then notifies its condition variable.
    void signal_lane(int lane);
    void wake_all_lanes();
    // Note [Targeted wake-ups] in scheduler.cpp. Runs under mu_.
    void wake_waiting_lanes_locked(Lane self);

    RuntimeCore* runtime_;  // the owner; outlives every accepted submission (they hold it)
    mutable std::mutex mu_;
    // One condition variable per lane: a new submission wakes only the lanes
    // it has regions on (on 2 cores, waking all five threads per submit costs).
    std::condition_variable lane_cv_[kLaneCount];
    std::condition_variable idle_cv_;
    std::condition_variable room_cv_;  // enough submissions retired (wait_for_room)
    size_t room_waiters_ = 0;          // threads outside the lanes in wait_for_room, under mu_
    size_t room_low_mark_ = 0;         // they wake when pending_ is this small (Note [Room in batches])
    bool room_ready_ = false;          // under mu_: notify room_cv_ once mu_ is released (Note [Room notified outside the lock])
    std::list<std::shared_ptr<Submission>> pending_;
    // Retired submissions not yet destroyed (Note [Freed where allocated]), a
    // lock-free chain through Submission::link: the next submission, drain()
    // or a lane about to block takes them.
    std::atomic<Submission*> retired_{nullptr};
    // Note [The submission inbox]: one-lane submissions not yet in pending_,
    // newest first, chained through Submission::link.
    std::atomic<Submission*> inbox_{nullptr};
    // Accepted and not yet retired (pending_ and the inbox), readable without
    // mu_: raised by enqueue, lowered under mu_ at retirement.
    std::atomic<size_t> pending_count_{0};
    // Note [Lanes park after spinning]: set under mu_ by a lane about to block.
    std::atomic<bool> lane_parked_[kLaneCount] = {};
    bool lane_busy_[kLaneCount] = {};
    int lane_waiting_[kLaneCount] = {};  // Waiting regions per lane over all pending submissions
    // Note [Lanes poll before sleeping]: bumped (under mu_, or by wake_all_lanes)
    // before every notification of the lane's condition variable.
    std::atomic<uint64_t> lane_signal_[kLaneCount] = {};
    bool stopping_ = false;
    std::atomic<bool> closed_{false};
    std::string close_reason_;  // set under mu_ before closed_
    const uint64_t generation_ = fork_generation();
    const long creator_pid_;
    // Completion callbacks waiting for the callback thread, and how many it
    // is running (0 or 1); the thread starts with the first callback.
    std::deque<std::function<void()>> callbacks_;
    int callbacks_running_ = 0;
    bool callback_thread_ = false;
    std::condition_variable callback_cv_;
    // Retired submissions whose last references (host callables among them)
    // a worker is still dropping; drain() waits for these too.
    size_t releasing_ = 0;
    bool settle_all_ = false;
    // Note [Spreading lanes]: the CPUs the lanes may use, each lane thread's
    // kernel thread id (0 until it runs) and whether a submission pinned it.
    std::vector<int> spread_cpus_;
    std::atomic<int> lane_tid_[kLaneCount] = {};
    bool lane_pinned_[kLaneCount] = {};
    std::vector<std::thread> threads_;
    // The provider queue of each device lane (null for the host lane); made
    // before the lanes start, then touched only by the lane's own thread.
    std::unique_ptr<provider::Queue> queues_[kLaneCount];
    std::atomic<uint64_t> next_id_{1};

    std::mutex trace_mu_;
    std::atomic<bool> tracing_{false};  // set under trace_mu_; read without it first (Note [Untraced regions read no clock])
    size_t trace_capacity_ = 0;
    uint64_t trace_dropped_ = 0;
    std::list<TraceEvent> trace_;
    std::chrono::steady_clock::time_point trace_origin_;
};

struct Submission {
    enum class RegionState : uint8_t { Waiting, Running, Done, Skipped };
    std::shared_ptr<PreparedGraph> graph;
    std::shared_ptr<CompletionState> completion;
    std::shared_ptr<SlotToken> slot;
    std::vector<std::shared_ptr<CompletionState>> after;
    std::vector<RegionState> regions;
    int waiting_on_lane[kLaneCount] = {};  // Waiting regions per lane: lets a lane skip at once
    bool cleared = false;
    std::list<std::shared_ptr<Submission>>::iterator self;  // its place in the pending list  // no earlier pending submission conflicts (stays true: earlier ones only retire)
    // The storages' handles are the graph's (`graph->storages`, held as long
    // as the submission): a lease adds no reference count of its own.
    std::vector<std::pair<StorageState*, Access>> leases;
    int running = 0;
    bool failed = false;
    CompletionState::Outcome failure;
    // A one-operation submission of RuntimeCore::submit_task, whose graph is
    // its own: Note [Pooled task storage] in runtime/task.cpp.
    bool task = false;
    // Note [The submission inbox] and Note [Freed where allocated]: while the
    // submission sits in the scheduler's inbox or retired chain, `link` is the
    // next one there and `keep` holds it.
    Submission* link = nullptr;
    std::shared_ptr<Submission> keep;

    // The device-use leases of the storages the run touches (true: it writes
    // them), all or none: a conflicting host mapping refuses the submission
    // and gives back the leases already taken. Held until retirement.
    void take_leases(const std::vector<std::pair<std::shared_ptr<StorageState>, bool>>& storages,
                     const std::string& op);
    // Gives every lease back when a submission is refused after take_leases.
    void release_leases();
    // Gives every lease back at retirement, on a lane; the graph keeps the
    // storage handles, dropped where the submission is reused or destroyed,
    // on its submitting thread (Note [Freed where allocated] in
    // scheduler.cpp), so the lane never touches the storages' reference
    // counts, which the submitter changes for every operation.
    void end_leases();
};

}  // namespace hrx
