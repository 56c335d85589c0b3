#include "runtime/scheduler.h"

#include <cstring>
#include <system_error>
#include <utility>

#if defined(__linux__)
#include <sched.h>
#include <sys/syscall.h>
#endif

#include <pthread.h>
#include <unistd.h>  // getpid

#include "poll.h"
#include "runtime/blocking.h"
#include "runtime/deadline.h"
#include "runtime/runtime.h"

namespace hrx {

// --- fork ------------------------------------------------------------------------

// Note [Fork]: fork() copies only the calling thread, so in a child every
// runtime of the parent has lost its lanes (and its callback thread) while
// its mutexes and pending submissions were copied in whatever state they had.
// CPython and PyTorch's CPU pool answer by building fresh state in the child;
// PyTorch's CUDA and JAX refuse. hrxarray does both: a runtime made before the
// fork refuses every new use in the child with UnsupportedError (before it
// touches a mutex a lane may have held), its teardown there touches nothing,
// and the layer above hands out a fresh default runtime. A child handler of
// pthread_atfork counts the forks; each scheduler remembers the count it was
// started under. The kernels' pool has its own handler (kernels/pool.cpp).
namespace {
std::atomic<uint64_t> g_fork_generation{0};

void count_fork_in_child() { g_fork_generation.fetch_add(1, std::memory_order_relaxed); }

// Registered by the first scheduler, before any lane exists.
void watch_forks() {
    static const bool registered = pthread_atfork(nullptr, nullptr, &count_fork_in_child) == 0;
    (void)registered;
}
}  // namespace

uint64_t fork_generation() noexcept { return g_fork_generation.load(std::memory_order_relaxed); }

void fail_forked(const std::string& op, const char* what, long creator) {
    fail(ErrorKind::Unsupported,
         op + ": " + what + " was created before fork() (in process " +
             (creator ? std::to_string(creator) : std::string("the parent")) +
             "); its lane threads do not exist in this child process (" + std::to_string(static_cast<long>(getpid())) +
             "). Use a runtime created in the child (hrxarray's default runtime is a new one there), or start "
             "worker processes with the 'spawn' or 'forkserver' method");
}

// --- lane threads ------------------------------------------------------------------

namespace {
// The region this lane thread is running: its scheduler, submission and lane.
thread_local Scheduler* t_scheduler = nullptr;
thread_local const Submission* t_running = nullptr;
thread_local Lane t_running_lane = Lane::Compute;
// The scheduler whose callback thread this is, if it is one.
thread_local const Scheduler* t_callbacks_of = nullptr;
}  // namespace

Scheduler* Scheduler::running_here() noexcept { return t_running ? t_scheduler : nullptr; }

std::vector<const Submission*> Scheduler::stuck_locked() const {
    // In submission order: a submission waits only for earlier ones (whole-
    // graph hazard order, producers) and for lanes, so one pass finds them.
    std::vector<const Submission*> stuck;
    const int lane = static_cast<int>(t_running_lane);
    for (const auto& sp : pending_) {
        const Submission* s = sp.get();
        bool is = s == t_running;
        if (!is && !s->failed && !s->completion->cancel_requested()) {
            is = s->waiting_on_lane[lane] > 0;
            for (size_t p = 0; !is && p < s->after.size(); ++p)
                for (const Submission* e : stuck) is = is || e->completion == s->after[p];
            if (!s->cleared)
                for (size_t e = 0; !is && e < stuck.size(); ++e)
                    is = summaries_conflict(stuck[e]->graph->summary, s->graph->summary);
        }
        if (is) stuck.push_back(s);
    }
    return stuck;
}

void Scheduler::fail_stuck(const std::string& op, const char* why) const {
    fail(ErrorKind::Busy, op + ": called from a host region (on the " + lane_name(t_running_lane) + " lane) for " +
                              why + ", which cannot happen before the host region returns (this wait would never "
                              "end); order such work after the host region's submission (submit_after) instead");
}

void Scheduler::refuse_stuck_wait(const std::string& op, const StorageState* storage,
                                  const CompletionState* completion) {
    std::lock_guard<std::mutex> lock(mu_);
    take_inbox_locked();  // Note [The submission inbox]: those are pending too
    if (completion && completion == t_running->completion.get())
        fail_stuck(op, "its own submission to finish");
    for (const auto& lease : t_running->leases)
        if (storage && lease.first == storage)
            fail_stuck(op, "an allocation its own submission uses on a device (use the array the host region is "
                           "given for it) to be released");
    for (const Submission* s : stuck_locked()) {
        if (completion && s->completion.get() == completion)
            fail_stuck(op, "a submission that needs this lane or is ordered after its own to finish");
        for (const auto& lease : s->leases)
            if (storage && lease.first == storage)
                fail_stuck(op, "an allocation in use by a submission that needs this lane or is ordered after its "
                               "own to be released");
    }
}

// --- CompletionState -----------------------------------------------------------

CompletionState::Outcome CompletionState::outcome() const {
    std::lock_guard<std::mutex> lock(mu_);
    return outcome_;
}

bool CompletionState::wait(std::optional<double> seconds) const {
    const Deadline deadline(seconds);
    if (done()) return true;
    if (generation_ != fork_generation()) fail_forked("wait", "this submission", 0);
    if (deadline.passed()) return done();  // a poll never blocks a lane
    if (Scheduler* here = Scheduler::running_here(); here && owner_.lock().get() == static_cast<void*>(here))
        here->refuse_stuck_wait("wait", nullptr, this);
    if (poll_done()) return true;
    std::unique_lock<std::mutex> lock(mu_);
    return deadline.wait(cv_, lock, [&] { return outcome_.status != Status::Pending; });
}

void wait_succeeded(const CompletionState& c) {
    if (!c.done()) {
        BlockingWait wait;
        c.wait(std::nullopt);
    }
    if (c.status() != CompletionState::Status::Succeeded) throw TaskFailure(c.outcome());
}

// Note [Waiters poll first]: most waits are for work that ends within tens
// of microseconds (an array operation, a small graph), and being woken from a
// blocked wait costs as much on a virtual machine. So a waiter polls the
// status for up to kWaitPoll, yielding between checks (the lanes doing the
// work may share its CPU), before it blocks.
namespace {
constexpr std::chrono::microseconds kWaitPoll{50};
}

bool CompletionState::poll_done() const noexcept {
    return poll_until(kWaitPoll, /*yield=*/true,
                      [this] { return status_.load(std::memory_order_acquire) != Status::Pending; });
}

void CompletionState::on_done(std::function<void()> fn) {
    if (!done() && generation_ != fork_generation()) fail_forked("add_done_callback", "this submission", 0);
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (outcome_.status == Status::Pending) {
            callbacks_.push_back(std::move(fn));
            return;
        }
    }
    fn();
}

std::vector<std::function<void()>> CompletionState::finish(Outcome outcome) {
    std::vector<std::function<void()>> callbacks;
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (outcome_.status != Status::Pending) return callbacks;
        outcome_ = std::move(outcome);
        status_.store(outcome_.status, std::memory_order_release);
        callbacks.swap(callbacks_);
    }
    cv_.notify_all();
    return callbacks;
}

// --- Scheduler -------------------------------------------------------------------

Scheduler::Scheduler(RuntimeCore* runtime) : runtime_(runtime), creator_pid_(static_cast<long>(getpid())) {
    watch_forks();
}

Scheduler::~Scheduler() {
    // Normally both are empty here (their submissions hold the runtime, which
    // holds this scheduler); a fork child's teardown may leave some.
    Retired(inbox_.exchange(nullptr)).clear();
    Retired(retired_.exchange(nullptr)).clear();
}

// Note [Spreading lanes]: on Linux a woken thread is usually placed on the
// CPU it last ran on or on the waker's, and an idle CPU counts as busy when
// its virtual CPU is halted (the hypervisor reports it preempted), so it
// only pulls work at its next periodic balance, milliseconds later. When one
// submission wakes two idle lanes, both then land on one CPU and their
// regions of a few hundred microseconds run one after the other while the
// other CPU idles: not what two devices do. So a submission with regions on
// several lanes gives each idle lane it wakes a one-CPU affinity first, on
// distinct CPUs starting with the submitter's own (it is about to wait), and
// each lane thread puts its full mask back as soon as it takes a region; from
// there the OS moves it freely. Single-lane submissions (every array
// operation) are left alone, and lanes already busy are never moved.
void Scheduler::spread_lanes_locked(const bool (&lanes)[kLaneCount]) noexcept {
#if defined(__linux__)
    if (spread_cpus_.size() < 2) return;
    int woken = 0;
    for (int l = 0; l < kLaneCount; ++l) woken += lanes[l] && !lane_busy_[l];
    if (woken < 2) return;
    const int here = sched_getcpu();
    size_t next = 0;
    for (size_t i = 0; i < spread_cpus_.size(); ++i)
        if (spread_cpus_[i] == here) next = i;
    for (int l = 0; l < kLaneCount; ++l) {
        const pid_t tid = lane_tid_[l].load(std::memory_order_acquire);
        if (!lanes[l] || lane_busy_[l] || tid == 0) continue;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(spread_cpus_[next], &one);
        if (sched_setaffinity(tid, sizeof one, &one) == 0) lane_pinned_[l] = true;
        next = (next + 1) % spread_cpus_.size();
    }
#else
    (void)lanes;
#endif
}

// Called by a lane thread that has just taken a region, outside the mutex.
void Scheduler::unpin_self() noexcept {
#if defined(__linux__)
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int cpu : spread_cpus_) CPU_SET(cpu, &all);
    sched_setaffinity(0, sizeof all, &all);
#endif
}

void Scheduler::start() {
#if defined(__linux__)
    // The lanes inherit the creating thread's mask; a later change of the
    // process's affinity is not seen here.
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof mask, &mask) == 0)
        for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
            if (CPU_ISSET(cpu, &mask)) spread_cpus_.push_back(cpu);
#endif
    // Note [Lanes hand dispatches to queues]: one queue per lane, used only
    // by that lane's thread. The host lane's runs the array operations
    // between host-mapped memories that no device binds (NpuLocal copies).
    for (int i = 0; i < kLaneCount; ++i)
        queues_[i] = runtime_->provider().create_queue(lane_engine(static_cast<Lane>(i)), 0);
    auto self = shared_from_this();
    for (int i = 0; i < kLaneCount; ++i)
        threads_.emplace_back([self, i] { self->worker(static_cast<Lane>(i)); });
}

void Scheduler::shutdown() {
    // Note [Fork]: in a child the lanes are gone and a lane may have held mu_
    // at the fork; the threads' handles are left as they are (never joined).
    if (forked()) return;
    {
        std::lock_guard<std::mutex> lock(mu_);
        stopping_ = true;
    }
    callback_cv_.notify_all();
    wake_all_lanes();
    // The workers keep the scheduler alive and finish every accepted
    // submission before they exit; joining here could deadlock when the last
    // runtime handle is dropped on a worker thread or while the GIL is held.
    for (auto& t : threads_) t.detach();
    threads_.clear();
}

// Note [Pooled completions]: every array operation makes a completion, and
// its last handle goes on the submitting thread (Note [Freed where
// allocated]), mostly in bursts: a batch of retired submissions at a time.
// Bursts of more frees than malloc's per-thread cache holds (7 per size)
// sent every completion through malloc's slow paths. So the blocks
// (control block and state, one size) are kept per thread, up to
// kCompletionBlocks, by the allocator of make_completion: a free goes to the
// freeing thread's blocks, the next allocation there takes one. The blocks
// live in trivially destructible thread storage, usable until the thread is
// gone; a release object frees them when the thread ends, and later frees
// on that thread go straight back to the heap.
namespace {
constexpr size_t kCompletionBlocks = 64;

struct CompletionBlocks {
    void* block[kCompletionBlocks];
    size_t count;
    size_t size;  // the one block size kept (0: none yet)
    bool closed;  // the thread is ending: no more blocks kept
};
thread_local CompletionBlocks t_completion_blocks{};

struct CompletionBlocksRelease {
    ~CompletionBlocksRelease() {
        CompletionBlocks& b = t_completion_blocks;
        b.closed = true;
        while (b.count > 0) ::operator delete(b.block[--b.count]);
    }
};
thread_local CompletionBlocksRelease t_completion_release;

template <class T>
struct CompletionAllocator {
    using value_type = T;
    CompletionAllocator() = default;
    template <class U>
    CompletionAllocator(const CompletionAllocator<U>&) noexcept {}
    T* allocate(size_t n) {
        CompletionBlocks& b = t_completion_blocks;
        const size_t bytes = n * sizeof(T);
        if (b.count > 0 && b.size == bytes) return static_cast<T*>(b.block[--b.count]);
        return static_cast<T*>(::operator new(bytes));
    }
    void deallocate(T* p, size_t n) noexcept {
        CompletionBlocks& b = t_completion_blocks;
        const size_t bytes = n * sizeof(T);
        if (!b.closed && b.count < kCompletionBlocks && (b.size == 0 || b.size == bytes)) {
            (void)&t_completion_release;  // this thread's blocks are freed when it ends
            b.size = bytes;
            b.block[b.count++] = p;
            return;
        }
        ::operator delete(p);
    }
    template <class U>
    bool operator==(const CompletionAllocator<U>&) const noexcept {
        return true;
    }
};
}  // namespace

std::shared_ptr<CompletionState> Scheduler::make_completion() {
    return std::allocate_shared<CompletionState>(CompletionAllocator<CompletionState>{},
                                                 std::weak_ptr<void>(weak_from_this()), next_id_.fetch_add(1));
}

void Scheduler::signal_lane(int lane) {
    lane_signal_[lane].fetch_add(1, std::memory_order_release);
    lane_cv_[lane].notify_one();
}

void Scheduler::wake_all_lanes() {
    for (int l = 0; l < kLaneCount; ++l) signal_lane(l);
}

// Note [Lanes poll before sleeping]: a lane that has just run a region polls
// its signal counter for a short while before it blocks. Work comes in
// bursts (a loop of array operations, a submit right after a wait), and
// waking a blocked thread costs a futex call and, on a virtual machine, an
// interrupt to a halted virtual CPU: tens of microseconds, against a few for
// a one-element operation. While the lane polls, a submission's notify finds
// no waiter and costs nothing. The poll yields the CPU between checks, so a
// thread with work on the same CPU is not held up, and it ends after
// kLanePoll; a lane that was woken without work blocks at once.
//
// Note [Lanes park after spinning]: the poll above is the spin half of a
// spin-then-park. A submission through the inbox (Note [The submission
// inbox]) takes no mutex, so it cannot rely on the lane holding mu_ to see
// its signal: instead a lane about to block sets lane_parked_ under mu_,
// then re-reads its signal counter against the value it saw when it last
// looked for work, and waits (still under mu_) only if it is unchanged; the
// submitter bumps the counter, then reads lane_parked_ (both sequentially
// consistent: one of the two sees the other's write) and only when it finds
// the lane parked takes mu_ (the lane holds it until its wait has begun) and
// notifies. So a busy or spinning lane costs its submitter one atomic add
// and one load, with no futex; only a parked lane (idle for kLanePoll) costs
// a wake-up, as any sleeping thread does. The spin is bounded and yields the
// CPU every 64 pauses, so with more lanes and submitters than CPUs (8-16 on
// 2 here) the spinners do not hold up the threads with work.
namespace {
constexpr std::chrono::microseconds kLanePoll{100};
}

// Note [Targeted wake-ups]: when a region ends, only the other lanes that
// still have Waiting regions somewhere in the pending list can have gained
// work (a dependency met, a conflicting submission retired, a producer
// finished). Waking the idle ones as well costs a futex wake and a context
// switch each, and on a 2-CPU machine the woken thread lands on the CPU of
// the lane still running a kernel and preempts it: parallel GPU/NPU regions
// were preempted several times per run that way. A lane that is busy
// re-checks the list when it finishes, so it needs no notification either.
void Scheduler::wake_waiting_lanes_locked(Lane self) {
    if (stopping_ && pending_.empty()) {
        wake_all_lanes();  // let every worker see that it may exit
        return;
    }
    for (int l = 0; l < kLaneCount; ++l)
        if (l != static_cast<int>(self) && lane_waiting_[l] > 0 && !lane_busy_[l]) signal_lane(l);
}

// Note [The submission inbox]: a loop of array operations submits a
// one-region task every microsecond or so, and the lane that runs it takes
// the scheduler mutex around every region. When the submitter took that
// mutex too, the two threads met on it at almost every operation; a
// contended std::mutex sleeps in the kernel (a futex wait, and a futex wake
// for the holder): a syscall pair per operation, and on a virtualised host a
// cross-CPU interrupt too, which made the per-operation cost depend on the
// host's syscall price (4-6 us on a 16-CPU VM, against about 1.4 here). So a
// submission with regions on one lane only and no producers (every array
// operation, and a one-lane graph) does not take the mutex: it is pushed on
// a lock-free stack (inbox_, one compare-and-swap) and its lane's signal
// counter is bumped; a lane moves the stack into pending_ (oldest first)
// when it next holds the mutex, before it looks for work. A submission that
// does take the mutex (several lanes, or producers) moves the inbox into
// pending_ first, and so does every reader of pending_ (drain, the stuck-wait
// check), so pending_ keeps the order of submission: the whole-graph hazard
// order across submissions (HRX §2.3) is unchanged, whichever lane's queue a
// submission is meant for. The lane's own wake-up costs nothing while it is
// running or spinning (Note [Lanes park after spinning]).
void Scheduler::take_inbox_locked() {
    Submission* head = inbox_.exchange(nullptr, std::memory_order_acquire);
    if (!head) return;
    Submission* oldest = nullptr;  // reverse: the stack is newest first
    while (head) {
        Submission* next = head->link;
        head->link = oldest;
        oldest = head;
        head = next;
    }
    while (oldest) {
        Submission* s = oldest;
        oldest = s->link;
        s->link = nullptr;
        pending_.push_back(std::move(s->keep));
        s->self = std::prev(pending_.end());
        for (int l = 0; l < kLaneCount; ++l) lane_waiting_[l] += s->waiting_on_lane[l];
    }
}

Retired Scheduler::take_retired() {
    if (retired_.load(std::memory_order_relaxed) == nullptr) return Retired();
    return Retired(retired_.exchange(nullptr, std::memory_order_acquire));
}

void Scheduler::retire(std::shared_ptr<Submission> sub) {
    Submission* s = sub.get();
    s->keep = std::move(sub);
    Submission* head = retired_.load(std::memory_order_relaxed);
    do s->link = head;
    while (!retired_.compare_exchange_weak(head, s, std::memory_order_release, std::memory_order_relaxed));
}

Retired& Retired::operator=(Retired&& o) noexcept {
    if (this != &o) {
        clear();
        head_ = std::exchange(o.head_, nullptr);
    }
    return *this;
}

std::shared_ptr<Submission> Retired::pop() {
    if (!head_) return nullptr;
    Submission* s = head_;
    head_ = s->link;
    s->link = nullptr;
    return std::move(s->keep);
}

void Retired::clear() {
    while (head_) pop();  // each may drop the last handle on the runtime
}

Retired Scheduler::enqueue(std::shared_ptr<Submission> sub) {
    bool lanes[kLaneCount] = {};
    bool roots[kLaneCount] = {};  // lanes with a region that can start at once
    int lane_count = 0;
    for (const auto& r : sub->graph->regions) {
        ++sub->waiting_on_lane[static_cast<int>(r.lane)];
        lane_count += !lanes[static_cast<int>(r.lane)];
        lanes[static_cast<int>(r.lane)] = true;
        if (r.deps.empty()) roots[static_cast<int>(r.lane)] = true;
    }
    pending_count_.fetch_add(1, std::memory_order_relaxed);
    if (lane_count == 1 && sub->after.empty()) {
        // Note [The submission inbox].
        int lane = 0;
        while (!lanes[lane]) ++lane;
        Submission* s = sub.get();
        s->keep = std::move(sub);
        Submission* head = inbox_.load(std::memory_order_relaxed);
        do s->link = head;
        while (!inbox_.compare_exchange_weak(head, s, std::memory_order_release, std::memory_order_relaxed));
        // Note [Lanes park after spinning]: the bump and the parked check are
        // sequentially consistent against the lane's parked store and its
        // re-check of the counter: one of the two sees the other.
        lane_signal_[lane].fetch_add(1, std::memory_order_seq_cst);
        if (lane_parked_[lane].load(std::memory_order_seq_cst)) {
            // It holds mu_ from its parked store until its wait releases it.
            { std::lock_guard<std::mutex> lock(mu_); }
            lane_cv_[lane].notify_one();
        }
        return take_retired();
    }
    {
        std::lock_guard<std::mutex> lock(mu_);
        take_inbox_locked();  // every earlier submission goes first
        pending_.push_back(sub);
        sub->self = std::prev(pending_.end());
        if (!sub->after.empty()) settle_all_ = true;  // a producer may have failed already
        for (int l = 0; l < kLaneCount; ++l) lane_waiting_[l] += sub->waiting_on_lane[l];
        if (sub->after.empty()) spread_lanes_locked(roots);
        for (int l = 0; l < kLaneCount; ++l)
            if (lanes[l]) lane_signal_[l].fetch_add(1, std::memory_order_seq_cst);
    }
    for (int l = 0; l < kLaneCount; ++l)
        if (lanes[l]) lane_cv_[l].notify_one();
    return take_retired();
}

void Scheduler::poke() {
    {
        std::lock_guard<std::mutex> lock(mu_);
        settle_all_ = true;
    }
    wake_all_lanes();
}

size_t Scheduler::pending() const { return pending_count_.load(std::memory_order_relaxed); }

void Scheduler::drain() {
    check_not_forked("drain");
    const bool callback_thread = t_callbacks_of == this;
    std::unique_lock<std::mutex> lock(mu_);
    auto idle = [&] { return idle_submissions_locked() && (callback_thread || idle_locked()); };
    // On one of its own lanes, the running region's submission is pending.
    if (running_here() == this) fail_stuck("drain", "every pending submission, its own included, to finish");
    for (;;) {
        // What was submitted before drain() began is waited for: from the
        // inbox into pending_ (Note [The submission inbox]).
        take_inbox_locked();
        idle_cv_.wait(lock, [&] { return idle() || inbox_.load(std::memory_order_acquire) != nullptr; });
        if (!idle()) continue;
        if (retired_.load(std::memory_order_acquire) == nullptr) return;
        bury(lock);  // what they hold (storage, budget) is released when drain() returns
    }
}

// Note [Freed where allocated]: a submission and everything in it (graph,
// ops, closures, list node) is allocated by the submitting thread. Freed on a
// lane thread, each block goes back to the submitter's malloc arena under
// that arena's lock, which the submitter holds for its next allocations: in
// a loop of small operations the two threads took turns on that lock, with a
// futex wake-up each time (a fifth of a one-element operation's time on two
// CPUs). So retired submissions wait in retired_ (a lock-free chain: the
// submitter takes it without the scheduler mutex) and the submitter destroys
// or reuses them after its next enqueue (once it holds no lock: what they
// hold may be Python objects whose release takes the GIL), where the memory
// goes back to its own cache; a lane destroys them itself only when it is
// about to block (the submitter has stopped), and drain() before it returns.
// The list node of pending_ is the lane's own (Note [The submission inbox]):
// lanes allocate and free it.
void Scheduler::bury(std::unique_lock<std::mutex>& lock) {
    Retired dead = take_retired();
    releasing_ += 1;  // drain() waits for these too
    lock.unlock();
    dead.clear();  // may drop the last handle on the runtime
    lock.lock();
    releasing_ -= 1;
    if (idle_submissions_locked()) idle_cv_.notify_all();
}

// Note [Room in batches]: a thread outside the lanes that finds the runtime
// full sleeps until three quarters of the pending submissions have retired,
// not just one. A loop of small array operations outruns the lanes; waking
// it at every retirement cost a futex wake and a context switch per
// operation (on two CPUs most of a one-element operation's time), while
// waking it once per 3*limit/4 retirements lets it refill the queue in one
// go (with limit/2 it slept once per 34 one-element additions, with limit/4
// once per 49; the quarter left keeps a lane on another CPU busy while the
// waiter wakes). A backlog that does not shrink (held up outside the
// runtime) costs at most kRoomBatchWait before the one-free-slot rule
// applies again.
//
// Note [Room notified outside the lock]: the retirement that makes room is
// found under mu_, but the waiters are notified only after the worker has
// released it (room_ready_ carries the news). A waiter woken under the lock
// found mu_ held, slept again on the mutex and needed a second wake-up: two
// futex round trips and context switches per batch instead of one. No
// wake-up is lost: the count that makes room changes under mu_, which a
// waiter holds from its check of the count until its wait begins.
namespace {
constexpr std::chrono::milliseconds kRoomBatchWait{2};
}

void Scheduler::wait_for_room(size_t limit) {
    check_not_forked("wait for room");
    std::unique_lock<std::mutex> lock(mu_);
    auto room = [&] { return pending_count_.load(std::memory_order_relaxed) < limit || stopping_ || closed_.load(); };
    if (running_here() != this) {
        if (room()) return;
        const size_t low = limit / 4;
        auto roomy = [&] { return pending_count_.load(std::memory_order_relaxed) <= low || stopping_ || closed_.load(); };
        ++room_waiters_;
        room_low_mark_ = std::max(room_low_mark_, low);
        // A backlog that cannot shrink that far (submissions held up by
        // something outside the runtime) must not hold the caller once one
        // slot is free: past each period the plain rule applies.
        while (!room_cv_.wait_for(lock, kRoomBatchWait, roomy))
            if (room()) break;
        if (--room_waiters_ == 0) room_low_mark_ = 0;
        return;
    }
    while (!room()) {
        take_inbox_locked();
        if (stuck_locked().size() >= limit)
            fail_stuck("runtime submission capacity exhausted (" + std::to_string(limit) + " pending)",
                       "room among pending submissions that need this lane or are ordered after its own");
        room_cv_.wait_for(lock, kStuckRecheck);  // new submissions may be stuck too
    }
}

void Scheduler::close(const std::string& reason) {
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (!closed_.load()) close_reason_ = reason;
        closed_.store(true);
    }
    room_cv_.notify_all();
}

void Scheduler::check_accepting(const std::string& op) const {
    check_not_forked(op);
    if (!closed_.load()) return;
    std::lock_guard<std::mutex> lock(mu_);
    throw Refusal(op + ": " + close_reason_);
}

void Scheduler::post_callbacks(std::vector<std::function<void()>> callbacks) {
    if (callbacks.empty()) return;
    std::unique_lock<std::mutex> lock(mu_);
    for (auto& cb : callbacks) callbacks_.push_back(std::move(cb));
    if (!callback_thread_) {
        try {
            auto self = shared_from_this();
            std::thread([self] { self->callback_worker(); }).detach();
            callback_thread_ = true;
        } catch (const std::system_error&) {
            // No thread to be had: this lane runs them, as a last resort.
            std::deque<std::function<void()>> here;
            here.swap(callbacks_);
            lock.unlock();
            for (auto& cb : here) cb();
            return;
        }
    }
    callback_cv_.notify_one();
}

// Runs completion callbacks one at a time, in the order they were posted.
// Note [Lane threads never wait]: they run here, so a callback may block.
void Scheduler::callback_worker() {
    t_callbacks_of = this;
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
        if (callbacks_.empty()) {
            if (stopping_ && idle_submissions_locked()) return;
            callback_cv_.wait(lock);
            continue;
        }
        auto fn = std::move(callbacks_.front());
        callbacks_.pop_front();
        ++callbacks_running_;
        lock.unlock();
        try {
            fn();
        } catch (...) {
            // The layer above reports its callbacks' errors; nothing escapes here.
        }
        fn = nullptr;  // what it captured goes outside the mutex too
        lock.lock();
        --callbacks_running_;
        if (idle_locked()) idle_cv_.notify_all();
    }
}

void Submission::take_leases(const std::vector<std::pair<std::shared_ptr<StorageState>, bool>>& storages,
                             const std::string& op) {
    leases.reserve(storages.size());
    for (const auto& [storage, writes] : storages) {
        const Access a = writes ? Access::Write : Access::Read;
        try {
            storage->acquire_device_use_checked(a, op);
        } catch (...) {
            release_leases();
            throw;
        }
        leases.push_back({storage.get(), a});
    }
}

void Submission::release_leases() {
    end_leases();
    leases.clear();
}

void Submission::end_leases() {
    for (auto& [storage, access] : leases) storage->release_device_use(access);
}

void Scheduler::finalize_locked(std::list<std::shared_ptr<Submission>>::iterator it,
                                std::vector<std::shared_ptr<Submission>>* finished) {
    auto sub = std::move(*it);
    sub->end_leases();
    // The run gives its slot back before anyone can observe the completion,
    // so `submit().wait()` in a loop never finds the slot still held.
    sub->slot.reset();
    runtime_->count_completion();
    pending_.erase(it);  // the submission goes to retired_ once its completion is finished
    const size_t left = pending_count_.fetch_sub(1, std::memory_order_relaxed) - 1;
    // Note [Room in batches]. A lane thread waiting for room polls with a
    // timeout, so only the batch waiters need this; the worker notifies
    // once it has released mu_ (Note [Room notified outside the lock]).
    if (room_waiters_ > 0 && left <= room_low_mark_) room_ready_ = true;
    ++releasing_;
    finished->push_back(std::move(sub));
}

// Skip what cannot run any more (cancelled, failed, or a failed producer) and
// retire the submission when nothing of it is left to run. Returns the
// iterator after it.
std::list<std::shared_ptr<Submission>>::iterator Scheduler::settle_one(
    std::list<std::shared_ptr<Submission>>::iterator it, std::vector<std::shared_ptr<Submission>>* finished) {
    Submission& s = **it;
    if (!s.failed) {
        for (const auto& producer : s.after) {
            auto o = producer->outcome();
            if (o.status == CompletionState::Status::Failed || o.status == CompletionState::Status::Cancelled) {
                s.failed = true;
                s.failure = {CompletionState::Status::Failed,
                             "a producer submission " +
                                 std::string(o.status == CompletionState::Status::Failed ? "failed" : "was cancelled") +
                                 ": " + o.message,
                             ErrorKind::Cancelled, nullptr};
                break;
            }
        }
    }
    const bool stop = s.failed || s.completion->cancel_requested();
    bool all_final = true;
    for (size_t i = 0; i < s.regions.size(); ++i) {
        auto& r = s.regions[i];
        if (stop && r == Submission::RegionState::Waiting) {
            r = Submission::RegionState::Skipped;
            --s.waiting_on_lane[static_cast<int>(s.graph->regions[i].lane)];
            --lane_waiting_[static_cast<int>(s.graph->regions[i].lane)];
        }
        if (r == Submission::RegionState::Waiting || r == Submission::RegionState::Running) all_final = false;
    }
    auto next = std::next(it);
    if (all_final) finalize_locked(it, finished);
    return next;
}

// A full pass only when something outside the lanes may have changed a
// submission's fate (a cancellation, a new submission, a failed producer):
// per-region progress is settled where it happens, so bulk replays stay
// linear in the number of submissions.
void Scheduler::settle_locked(std::vector<std::shared_ptr<Submission>>* finished) {
    if (!settle_all_) return;
    settle_all_ = false;
    for (auto it = pending_.begin(); it != pending_.end();) it = settle_one(it, finished);
}

Submission* Scheduler::find_runnable(Lane lane, size_t* region) {
    if (lane_busy_[static_cast<int>(lane)]) return nullptr;
    for (auto it = pending_.begin(); it != pending_.end(); ++it) {
        Submission& s = **it;
        if (s.waiting_on_lane[static_cast<int>(lane)] == 0) continue;
        if (s.failed || s.completion->cancel_requested()) continue;
        bool ready = true;
        for (const auto& producer : s.after)
            if (!producer->done()) ready = false;
        // Whole-graph ordering across submissions (HRX): nothing of this one
        // starts while an earlier pending submission's summary conflicts.
        if (ready && !s.cleared) {
            for (auto e = pending_.begin(); ready && e != it; ++e)
                if (summaries_conflict((*e)->graph->summary, s.graph->summary)) ready = false;
            s.cleared = ready;
        }
        if (!ready) continue;
        for (size_t r = 0; r < s.regions.size(); ++r) {
            if (s.regions[r] != Submission::RegionState::Waiting || s.graph->regions[r].lane != lane) continue;
            bool deps_done = true;
            for (size_t d : s.graph->regions[r].deps)
                if (s.regions[d] != Submission::RegionState::Done) deps_done = false;
            if (deps_done) {
                *region = r;
                return &s;
            }
        }
    }
    return nullptr;
}

void Scheduler::worker(Lane lane) {
#if defined(__linux__)
    lane_tid_[static_cast<int>(lane)].store(static_cast<pid_t>(syscall(SYS_gettid)), std::memory_order_release);
#endif
    std::unique_lock<std::mutex> lock(mu_);
    bool worked = false;  // ran a region since it last blocked
    const auto& signal = lane_signal_[static_cast<int>(lane)];
    auto& parked = lane_parked_[static_cast<int>(lane)];
    std::vector<std::shared_ptr<Submission>> finished;
    for (;;) {
        // Every signal before this load is seen by the look for work below
        // (Note [The submission inbox]); a later one ends the spin or the park.
        const uint64_t seen = signal.load(std::memory_order_seq_cst);
        take_inbox_locked();
        settle_locked(&finished);
        size_t r = 0;
        Submission* sub = find_runnable(lane, &r);
        if (sub) {
            sub->regions[r] = Submission::RegionState::Running;
            --sub->waiting_on_lane[static_cast<int>(lane)];
            --lane_waiting_[static_cast<int>(lane)];
            ++sub->running;
            lane_busy_[static_cast<int>(lane)] = true;
            const bool pinned = std::exchange(lane_pinned_[static_cast<int>(lane)], false);
            // `sub` stays valid: a submission with a running region is never retired.
            lock.unlock();
            if (pinned) unpin_self();
            t_scheduler = this;
            t_running = sub;
            t_running_lane = lane;
            set_lane_waits_here(this);
            const bool ok = run_region(*sub, r, lane);
            set_lane_waits_here(nullptr);
            t_running = nullptr;
            worked = true;
            lock.lock();
            // The region becomes final only here, under the mutex: until then
            // no other lane can retire (and free) this submission.
            sub->regions[r] = ok ? Submission::RegionState::Done : Submission::RegionState::Skipped;
            lane_busy_[static_cast<int>(lane)] = false;
            --sub->running;
            settle_one(sub->self, &finished);
        }
        const bool idle = pending_.empty() && releasing_ == 0;
        if (!finished.empty() || sub) wake_waiting_lanes_locked(lane);
        if (idle) idle_cv_.notify_all();
        if (!finished.empty()) {
            bool any_unsuccessful = false;
            for (auto& f : finished) any_unsuccessful = any_unsuccessful || f->failed || f->completion->cancel_requested();
            const bool room = std::exchange(room_ready_, false);
            lock.unlock();
            if (room) room_cv_.notify_all();
            std::vector<std::function<void()>> callbacks;
            for (auto& f : finished) {
                auto cbs = f->completion->finish(f->failed ? f->failure
                                                 : f->completion->cancel_requested()
                                                     ? CompletionState::Outcome{CompletionState::Status::Cancelled, "the submission was cancelled", ErrorKind::Cancelled, nullptr}
                                                     : CompletionState::Outcome{CompletionState::Status::Succeeded, "", ErrorKind::Generic, nullptr});
                for (auto& cb : cbs) callbacks.push_back(std::move(cb));
            }
            // Queued before `releasing_` drops, so drain() never sees a gap.
            post_callbacks(std::move(callbacks));
            // To the submitters (Note [Freed where allocated]); this thread
            // touches them no more.
            const size_t released = finished.size();
            for (auto& f : finished) retire(std::move(f));
            finished.clear();
            lock.lock();
            releasing_ -= released;
            if (any_unsuccessful) settle_all_ = true;  // consumers of a failed producer must not run
            if (pending_.empty() && releasing_ == 0) {
                idle_cv_.notify_all();
                if (stopping_) callback_cv_.notify_all();  // it may exit now
            }
            // Consumers ordered after these completions (submit_after) may run
            // now; notifying under the mutex means no worker misses it.
            wake_waiting_lanes_locked(lane);
            continue;
        }
        if (sub) continue;
        if (std::exchange(lane_pinned_[static_cast<int>(lane)], false)) {
            // Pinned for a region it did not get (cancelled, failed, or
            // waiting on another lane): an idle lane keeps no pin.
            lock.unlock();
            unpin_self();
            lock.lock();
            continue;
        }
        if (stopping_ && pending_.empty() && inbox_.load(std::memory_order_acquire) == nullptr) {
            if (retired_.load(std::memory_order_acquire) != nullptr) {
                bury(lock);
                continue;
            }
            return;
        }
        if (std::exchange(worked, false) && !stopping_) {
            // Note [Lanes poll before sleeping].
            lock.unlock();
            poll_until(kLanePoll, /*yield=*/true, [&] { return signal.load(std::memory_order_acquire) != seen; });
            lock.lock();
            continue;  // looks again (a signal may have come before the poll began)
        }
        if (retired_.load(std::memory_order_acquire) != nullptr) {
            bury(lock);
            continue;
        }
        // Note [Lanes park after spinning]: a submission that comes after the
        // parked store sees it and notifies under mu_ (held from here to the
        // wait); one that came before it bumped the signal, seen here.
        parked.store(true, std::memory_order_seq_cst);
        if (signal.load(std::memory_order_seq_cst) == seen && !settle_all_) lane_cv_[static_cast<int>(lane)].wait(lock);
        parked.store(false, std::memory_order_relaxed);
    }
}

// The device work of an operation goes through the lane's provider queue
// (Note [Lanes hand dispatches to queues] in scheduler.h): the lane builds
// the dispatch, submits it and waits for it to finish.
void Scheduler::dispatch(Lane lane, const Op& op) {
    provider::Dispatch d;
    const auto span = [](const BufferView& v) { return span_of(v); };
    // Kernels bind a few views; the array covers every contract in practice,
    // with the heap as a fallback.
    constexpr size_t kInlineBindings = 16;
    provider::Span inline_spans[kInlineBindings];
    std::vector<provider::Span> heap_spans;
    switch (op.kind) {
        case Op::Kind::Fill:
            d.kind = provider::Dispatch::Kind::Fill;
            d.dst = span(op.uses[0].view);
            d.byte = op.byte;
            break;
        case Op::Kind::Copy:
            d.kind = provider::Dispatch::Kind::Copy;
            d.dst = span(op.uses[0].view);
            d.src = span(op.uses[1].view);
            break;
        default: {
            if (auto fault = op.kind == Op::Kind::Kernel ? op.kernel->fault.take()
                                                         : runtime_->array_fault().take(op.label))
                fail(ErrorKind::Generic,
                     "injected fault in " + (op.kind == Op::Kind::Kernel ? op.kernel->name : op.label) + ": " + *fault);
            provider::Span* spans = inline_spans;
            if (op.uses.size() > kInlineBindings) {
                heap_spans.resize(op.uses.size());
                spans = heap_spans.data();
            }
            for (size_t i = 0; i < op.uses.size(); ++i) spans[i] = span(op.uses[i].view);
            if (op.kind == Op::Kind::Array) {
                d.kind = provider::Dispatch::Kind::Array;
                d.array = op.array.get();
            } else {
                d.kind = provider::Dispatch::Kind::Invoke;
                d.program = op.kernel->program.get();
            }
            d.bindings = spans;
            d.binding_count = op.uses.size();
            break;
        }
    }
    provider::Queue& queue = *queues_[static_cast<int>(lane)];
    queue.submit(d);
    queue.synchronize();
}

bool Scheduler::run_region(Submission& sub, size_t index, Lane lane) {
    const Region& region = sub.graph->regions[index];
    const Engine engine = lane_engine(lane);
    const bool checked = runtime_->options().check_visibility;
    // Note [Untraced regions read no clock]: a region that starts while no
    // trace runs is not recorded, so it reads no clock and takes no trace
    // lock (two clock reads and a mutex per array operation otherwise).
    const bool traced = tracing_.load(std::memory_order_acquire);
    const auto t0 = traced ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    bool failed = false;
    // The operation a failure belongs to, when it is not a device fault: one
    // whose input was lost to poison before anything ran, or whose kernel
    // refused its data (Note [Data checks are not device faults]).
    const Op* failing = nullptr;
    bool operation_failure = false;
    try {
        // Make every used storage visible to the engine first (HRX §2.4).
        for (size_t oi : region.ops)
            for (const auto& u : sub.graph->ops[oi].uses) {
                const auto& st = *u.view.buffer->state();
                if (st.poisoned()) {
                    failing = &sub.graph->ops[oi];
                    operation_failure = true;
                    st.throw_if_poisoned(std::string("region on the ") + lane_name(lane) + " lane");
                }
                u.view.buffer->state()->make_visible(engine);
                if (checked) st.check_engine_access(engine, u.access, u.view.buffer->describe());
            }
        for (size_t oi : region.ops) {
            const Op& op = sub.graph->ops[oi];
            failing = &op;
            switch (op.kind) {
                case Op::Kind::Fill:
                case Op::Kind::Copy:
                case Op::Kind::Kernel:
                case Op::Kind::Array: dispatch(lane, op); break;
                case Op::Kind::Host: {
                    std::vector<HostSpan> spans;
                    for (const auto& u : op.uses)
                        spans.push_back({u.view.buffer->state(), u.view.data(), u.view.length, access_writes(u.access)});
                    op.host(spans);
                    break;
                }
            }
        }
        for (size_t oi : region.ops)
            for (const auto& u : sub.graph->ops[oi].uses)
                if (access_writes(u.access)) u.view.buffer->state()->mark_written(engine);
        if (region.copy_bytes) runtime_->count_copied(region.copy_bytes);
    } catch (const std::exception& e) {
        failed = true;
        std::string what = e.what();
        // Array operations are one-task regions: name the operation too.
        const Op& first = sub.graph->ops[region.ops.front()];
        if (!first.name.empty()) what = first.name + ": " + what;
        const std::string message = "executing graph region " + std::to_string(index) + " (" + lane_name(lane) +
                                    " lane): " + what;
        CompletionState::Outcome o{CompletionState::Status::Failed, message, ErrorKind::Generic, nullptr, what};
        if (auto* err = dynamic_cast<const Error*>(&e)) o.cause_kind = err->kind();
        if (auto* foreign = dynamic_cast<const ForeignError*>(&e)) o.cause_payload = foreign->payload();
        if (o.cause_kind == ErrorKind::Data || o.cause_kind == ErrorKind::LinAlg) operation_failure = true;
        if (operation_failure && failing) {
            // The device is fine and the inputs intact: only what the
            // operation writes is lost. Nothing is quarantined.
            for (const auto& u : failing->uses)
                if (access_writes(u.access)) u.view.buffer->state()->poison(message);
        } else {
            // A device fault (HRX §2.6): every storage of the whole graph (and
            // so every alias) is poisoned, the graph is quarantined with its
            // NPU programs, and all of them keep their budget charge for ever.
            for (auto& [storage, writes] : sub.graph->storages) {
                storage->poison(message);
                storage->quarantine();
            }
            sub.graph->quarantine();
        }
        std::lock_guard<std::mutex> lock(mu_);
        if (!sub.failed) {
            sub.failed = true;
            sub.failure = std::move(o);
        }
    }
    if (!traced) return !failed;
    const auto t1 = std::chrono::steady_clock::now();
    // The trace event is recorded before the region counts as done, so a
    // caller that waited for the completion finds it in the trace.
    TraceEvent ev;
    ev.lane = lane;
    ev.bytes = region.copy_bytes;
    ev.failed = failed;
    ev.region = index;
    ev.submission = sub.completion->id();
    {
        std::lock_guard<std::mutex> lock(trace_mu_);
        if (tracing_.load(std::memory_order_relaxed)) {
            ev.op = region_label(sub.graph->ops, region);
            const Op& first = sub.graph->ops[region.ops.front()];
            if (!first.name.empty() && first.name != ev.op) ev.detail = first.name;
            ev.start_us = std::chrono::duration<double, std::micro>(t0 - trace_origin_).count();
            ev.duration_us = std::chrono::duration<double, std::micro>(t1 - t0).count();
            trace_.push_back(ev);
            while (trace_.size() > trace_capacity_) {
                trace_.pop_front();
                ++trace_dropped_;
            }
        }
    }
    return !failed;
}

void Scheduler::start_trace(size_t capacity) {
    if (capacity == 0) fail(ErrorKind::Message, "start_trace: capacity must be at least 1");
    std::lock_guard<std::mutex> lock(trace_mu_);
    if (tracing_.load(std::memory_order_relaxed)) fail(ErrorKind::Busy, "start_trace: a trace is already running");
    trace_capacity_ = capacity;
    trace_dropped_ = 0;
    trace_.clear();
    trace_origin_ = std::chrono::steady_clock::now();
    tracing_.store(true, std::memory_order_release);
}

std::vector<TraceEvent> Scheduler::finish_trace(uint64_t* dropped) {
    std::lock_guard<std::mutex> lock(trace_mu_);
    if (!tracing_.load(std::memory_order_relaxed))
        fail(ErrorKind::Message, "finish_trace: no trace is running; call start_trace first");
    tracing_.store(false, std::memory_order_relaxed);
    *dropped = trace_dropped_;
    std::vector<TraceEvent> out(trace_.begin(), trace_.end());
    trace_.clear();
    return out;
}

}  // namespace hrx
