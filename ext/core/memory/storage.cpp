#include "memory/storage.h"

#include <algorithm>

#include "errors.h"
#include "memory/budget.h"

namespace hrx {

namespace {

// How users end a host lease, for every Busy message that names one: the
// lease lives as long as the consumer's array does.
constexpr const char* kLeaseRemedy =
    "; to end it, drop every consumer array that shares the memory (the zero-copy NumPy view, or the array the "
    "DLPack consumer made: e.g. `del t`, then gc.collect() if it sits in a reference cycle); to avoid it, hand the "
    "consumer a copy instead (torch.from_dlpack(x.copy()), x.__dlpack__(copy=True), np.asarray(x))";

thread_local LaneWaits* t_lane_waits = nullptr;

}  // namespace

LaneWaits* lane_waits_here() noexcept { return t_lane_waits; }
void set_lane_waits_here(LaneWaits* waits) noexcept { t_lane_waits = waits; }

StorageState::StorageState(std::shared_ptr<StorageOwner> owner, std::unique_ptr<provider::Memory> memory,
                           Engine initial_writer, uint64_t id, std::shared_ptr<MemoryBudget> budget,
                           bool readonly)
    : owner_(std::move(owner)),
      memory_(std::move(memory)),
      id_(id),
      bytes_(memory_->size()),
      budget_(std::move(budget)),
      readonly_(readonly),
      needs_maintenance_(memory_->backing().needs_host_maintenance()),
      visibility_(initial_writer) {}

StorageState::~StorageState() {
    // Quarantined storage stays charged: the runtime can no longer prove that
    // no device still touches it (HRX keeps such owners leaked). In a fork
    // child the counters' mutexes may have been held by a parent's lane.
    if (quarantined_ || owner_->forked()) return;
    owner_->count_free(bytes_);
    if (budget_) budget_->release(bytes_);
}

void StorageState::check_writable(bool writes, const std::string& who) const {
    if (writes && readonly_)
        fail(ErrorKind::Message, who + ": storage #" + std::to_string(id_) +
                                     " is read-only (imported from a producer that does not allow writes; import a "
                                     "copy to write: hx.from_dlpack(obj, copy=True))");
}

// --- host guards -----------------------------------------------------------

bool StorageState::host_conflict_locked(bool write, std::string* why) const {
    if (external_) {
        *why = "an external GPU hand-off is in progress";
        return true;
    }
    if (host_writer_) {
        *why = "a write mapping is live";
        return true;
    }
    if (write && host_readers_ > 0) {
        *why = std::to_string(host_readers_) + " read mapping(s) are live";
        return true;
    }
    if (write && host_leases_ > 0) {
        *why = std::to_string(host_leases_) + " host lease(s) (DLPack export or zero-copy view) are live" +
               kLeaseRemedy;
        return true;
    }
    return false;
}

bool StorageState::device_conflict_locked(bool write) const {
    return write ? (device_readers_ + device_writers_ > 0) : device_writers_ > 0;
}

// Note [Lane threads never wait] (runtime/scheduler.h): on a lane thread the
// wait must be able to end without the running region; it is checked again
// now and then, as later submissions may take leases the wait then needs.
// Note [Device leases end without the lock]: the waiter announces itself in
// device_waiters_ and then looks at the lease counts once more (both
// sequentially consistent), so a release that it does not see sees it.
void StorageState::wait_for_device_use(std::unique_lock<std::mutex>& lock, bool write, const std::string& who) {
    LaneWaits* here = lane_waits_here();
    if (here) {
        lock.unlock();  // lock order: the scheduler mutex first
        here->refuse_stuck_wait(who, this);
        lock.lock();
    }
    device_waiters_.fetch_add(1, std::memory_order_seq_cst);
    if (device_conflict_locked(write)) {
        if (here)
            changed_.wait_for(lock, LaneWaits::kRecheck);
        else
            changed_.wait(lock);
    }
    device_waiters_.fetch_sub(1, std::memory_order_relaxed);
}

void StorageState::acquire_host(bool write, bool wait, const std::string& who) {
    owner_->check_not_forked(who);
    check_writable(write, who);
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
        if (poison_) fail(ErrorKind::DeviceLost, who + ": storage was poisoned by an earlier failure: " + *poison_);
        std::string why;
        if (host_conflict_locked(write, &why)) fail(ErrorKind::Busy, who + ": conflicting host mapping (" + why + ")");
        if (!device_conflict_locked(write)) break;
        if (!wait) fail(ErrorKind::Busy, who + ": allocation is in device use");
        wait_for_device_use(lock, write, who);
    }
    // Acquire for the host before the guard is handed out; nothing has been
    // changed yet if this throws.
    make_visible_locked(Engine::Host);
    if (write)
        host_writer_ = true;
    else
        ++host_readers_;
}

void StorageState::release_host(bool write) {
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (write) {
            host_writer_ = false;
            note_write();
            // The host now holds the authoritative bytes; device consumers get a flush.
            visibility_.mark_written(Engine::Host);
        } else {
            --host_readers_;
        }
    }
    changed_.notify_all();
}

uint64_t StorageState::acquire_host_lease(bool writable, std::string_view who_view, const char* label, bool wait) {
    if (owner_->forked()) owner_->check_not_forked(std::string(who_view));
    if (writable && readonly_) check_writable(true, std::string(who_view));
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
        auto who = [&] { return std::string(who_view); };  // messages only: the success path builds no string
        if (poison_) fail(ErrorKind::DeviceLost, who() + ": storage was poisoned by an earlier failure: " + *poison_);
        if (external_ || host_writer_)
            fail(ErrorKind::Busy, who() + ": conflicting host mapping (" +
                                      (external_ ? "an external GPU hand-off is in progress" : "a write mapping is live") +
                                      ")");
        if (!device_conflict_locked(writable)) break;
        if (!wait) fail(ErrorKind::Busy, who() + ": allocation is in device use");
        wait_for_device_use(lock, writable, who());
    }
    make_visible_locked(Engine::Host);
    ++host_leases_;
    if (writable) ++writable_host_leases_;
    const uint64_t id = next_lease_++;
    leases_.push_back({id, writable, label});
    return id;
}

void StorageState::release_host_lease(uint64_t id) {
    {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = std::find_if(leases_.begin(), leases_.end(), [&](const LeaseInfo& l) { return l.id == id; });
        if (it == leases_.end()) return;
        --host_leases_;
        if (it->writable) {
            --writable_host_leases_;
            note_write();
            visibility_.mark_written(Engine::Host);
        }
        leases_.erase(it);
    }
    changed_.notify_all();
}

bool StorageState::host_lease_would_wait(bool writable) const {
    std::lock_guard<std::mutex> lock(mu_);
    return device_conflict_locked(writable);
}

// --- device use ------------------------------------------------------------

void StorageState::acquire_device_use(Access access) {
    std::lock_guard<std::mutex> lock(mu_);
    if (access_writes(access)) {
        ++device_writers_;
        note_write();
    } else {
        ++device_readers_;
    }
}

// Note [Device leases end without the lock]: a lease is taken under mu_
// (it must be checked against the host guards and poison), but it ends on a
// lane at every retirement, where taking mu_ met the submitter taking the
// next operation's lease on the same storage: a contended mutex, a futex
// round trip, per operation. So the counts are atomics, raised under mu_ and
// lowered here without it. Whoever reads them under mu_ (a host guard, a
// lease check) sees a count that may only drop meanwhile, and the drop is a
// release that its sequentially consistent load acquires (the device's
// writes happen before a host mapping granted on it). A thread that waits
// for the drop counts itself in device_waiters_ before its last look
// (wait_for_device_use); the release reads that count after its drop, and
// only when someone waits does it take mu_ (the waiter holds it until its
// wait has begun) and notify.
void StorageState::release_device_use(Access access) {
    (access_writes(access) ? device_writers_ : device_readers_).fetch_sub(1, std::memory_order_seq_cst);
    if (device_waiters_.load(std::memory_order_seq_cst) == 0) return;
    { std::lock_guard<std::mutex> lock(mu_); }
    changed_.notify_all();
}

void StorageState::acquire_device_use_checked(Access access, const std::string& who) {
    owner_->check_not_forked(who);
    std::lock_guard<std::mutex> lock(mu_);
    if (poison_) fail(ErrorKind::DeviceLost, who + ": storage was poisoned by an earlier failure: " + *poison_);
    check_device_binding_locked(access, who);
    if (access_writes(access)) {
        ++device_writers_;
        note_write();
    } else {
        ++device_readers_;
    }
}

void StorageState::check_device_binding(Access access, const std::string& who) const {
    std::lock_guard<std::mutex> lock(mu_);
    check_device_binding_locked(access, who);
}

void StorageState::check_device_binding_locked(Access access, const std::string& who) const {
    const bool writes = access_writes(access);
    check_writable(writes, who);
    const bool conflict = external_ || host_writer_ || (writes && (host_readers_ > 0 || host_leases_ > 0)) ||
                          writable_host_leases_ > 0;
    if (!conflict) return;
    // Name what blocks the binding: users must find the export or view to drop.
    std::string why;
    if (external_)
        why = "an external GPU hand-off is in progress";
    else if (host_writer_)
        why = "a write mapping is live";
    else if (writes && host_readers_ > 0)
        why = std::to_string(host_readers_) + " read mapping(s) are live";
    else
        for (const auto& l : leases_)
            if (l.writable || writes) {
                why = std::string(l.label) + " of storage #" + std::to_string(id_) + " is live" +
                      (leases_.size() > 1 ? " (and " + std::to_string(leases_.size() - 1) + " other host lease(s))" : "");
                // DESIGN: a writable export blocks device reads too, because
                // the consumer may write while the device reads.
                if (!writes) why += ": its consumer may write the memory while device work reads it";
                why += kLeaseRemedy;
                break;
            }
    fail(ErrorKind::Busy, who + ": device binding conflicts with a live host mapping (" + why + ")");
}

// --- poison ----------------------------------------------------------------

void StorageState::poison(const std::string& message) {
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (!poison_) poison_ = message;  // the first failure is the one users need
        poisoned_.store(true, std::memory_order_release);
    }
    changed_.notify_all();
}

std::optional<std::string> StorageState::poison_message() const {
    std::lock_guard<std::mutex> lock(mu_);
    return poison_;
}

void StorageState::throw_if_poisoned(const std::string& who) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (poison_) fail(ErrorKind::DeviceLost, who + ": storage was poisoned by an earlier failure: " + *poison_);
}

void StorageState::quarantine() {
    std::lock_guard<std::mutex> lock(mu_);
    quarantined_ = true;
}

// --- visibility --------------------------------------------------------------

uint64_t StorageState::make_visible_locked(Engine engine) {
    auto op = visibility_.transition_for(engine);
    if (!op) return 0;
    uint64_t maintained = 0;
    if (needs_maintenance_) {
        memory_->cache_control(*op, 0, bytes_);
        maintained = bytes_;
        owner_->count_maintenance(bytes_);
    }
    visibility_.mark_visible(engine);
    return maintained;
}

uint64_t StorageState::make_visible(Engine engine) {
    if (visibility_.visible_to(engine)) return 0;  // Note [Visibility read without the lock]
    std::lock_guard<std::mutex> lock(mu_);
    return make_visible_locked(engine);
}

void StorageState::mark_written(Engine engine) {
    if (visibility_.written_by_only(engine)) return;  // Note [Visibility read without the lock]
    std::lock_guard<std::mutex> lock(mu_);
    visibility_.mark_written(engine);
}

void StorageState::check_engine_access(Engine engine, Access access, const std::string& who) const {
    if (!access_reads(access) || visibility_.visible_to(engine)) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (visibility_.visible_to(engine)) return;
    fail(ErrorKind::Generic, who + ": visibility violation: " + engine_name(engine) +
                                 " would read bytes last written by " + engine_name(visibility_.last_writer()) +
                                 " that were never made visible to it (a cache transition was skipped)");
}

Engine StorageState::last_writer() const {
    std::lock_guard<std::mutex> lock(mu_);
    return visibility_.last_writer();
}

uint8_t StorageState::visible_mask() const {
    std::lock_guard<std::mutex> lock(mu_);
    return visibility_.visible_mask();
}

bool StorageState::needs_host_maintenance() const {
    std::lock_guard<std::mutex> lock(mu_);
    return needs_maintenance_;
}

const provider::Memory& StorageState::add_import(std::unique_ptr<provider::Memory> alias) {
    std::lock_guard<std::mutex> lock(mu_);
    // Once any handle admits the NPU, host maintenance is needed for every handle.
    needs_maintenance_ = needs_maintenance_ || alias->backing().needs_host_maintenance();
    imports_.push_back(std::move(alias));
    return *imports_.back();
}

GuardSnapshot StorageState::guards() const {
    std::lock_guard<std::mutex> lock(mu_);
    return {host_readers_, host_writer_, host_leases_, writable_host_leases_, device_readers_.load(),
            device_writers_.load(), external_};
}

void StorageState::host_cache_control(HostCacheOp op, uint64_t offset, uint64_t length) {
    memory_->cache_control(op, offset, length);
}

// --- Buffer -----------------------------------------------------------------

std::string Buffer::describe() const {
    return "Buffer#" + std::to_string(state_->id()) + " (" + placement_.repr() + ", " +
           std::to_string(state_->bytes()) + " bytes)";
}

void Buffer::require_host_mapped(const std::string& op) const {
    if (!placement_.host_mapped())
        fail(ErrorKind::Unsupported, op +
                                         ": GPU-local memory is not host mapped; use an explicit graph copy to "
                                         "shared storage");
}

}  // namespace hrx
