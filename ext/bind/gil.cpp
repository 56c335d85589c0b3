// Note [Entering Python at exit] in gil.h.
#include "gil.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <new>
#include <thread>

#include <pthread.h>

#include "runtime/blocking.h"

namespace hrx::bind {

namespace {

std::atomic<bool> g_sealed{false};
std::atomic<std::thread::id> g_sealer{};
// Threads between their look at g_sealed and holding the GIL. Both sides use
// sequentially consistent operations: the sealer stores g_sealed then reads
// this; an entering thread bumps this then reads g_sealed, so at least one of
// them sees the other.
std::atomic<int> g_entering{0};

// Note [Thread states and fork]: a lane thread entering Python has no
// thread state of its own, and creating one takes CPython's runtime lock
// (HEAD_LOCK) without the GIL. Before 3.12, a fork child re-takes that lock
// (deleting the other threads' states) before re-creating it, so a fork while
// a lane thread was inside PyThreadState_New left the child blocked for good
// in os.fork (seen with lanes entering Python often while another thread
// forked). So lane threads create their state under g_birth, and the fork's
// prepare handler holds g_birth across the fork: no state is half-made at the
// moment of fork. Creation never needs the GIL, so the forking thread (which
// holds it) waits a few microseconds at most; the wait is bounded all the same.
// Deleting a state happens holding the GIL, which the forking thread holds.
std::mutex g_birth;
bool g_birth_held_by_fork = false;  // touched only by the forking thread

void before_fork() {
#if PY_VERSION_HEX >= 0x030D0000
    // From 3.13 os.fork holds HEAD_LOCK across the fork itself (and the child
    // re-creates it first), so the gate is not needed, and waiting here for a
    // lane blocked on HEAD_LOCK would only stall the fork.
    return;
#endif
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (!g_birth.try_lock()) {
        if (std::chrono::steady_clock::now() > deadline) return;
        std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    g_birth_held_by_fork = true;
}

void after_fork_in_parent() {
    if (g_birth_held_by_fork) {
        g_birth_held_by_fork = false;
        g_birth.unlock();
    }
}

// A fork child has only the forking thread: nobody is entering there, and
// nobody else can hold g_birth.
void reset_in_child() {
    g_entering.store(0);
    if (g_birth_held_by_fork) {
        g_birth_held_by_fork = false;
        g_birth.unlock();
    } else {
        new (&g_birth) std::mutex;
    }
}
const bool g_watching_forks = pthread_atfork(&before_fork, &after_fork_in_parent, &reset_in_child) == 0;

bool may_enter() {
    return !g_sealed.load() || g_sealer.load() == std::this_thread::get_id();
}

[[noreturn]] void park_for_good() {
    for (;;) std::this_thread::sleep_for(std::chrono::hours(24));
}

bool finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
    return !Py_IsInitialized() || Py_IsFinalizing();
#else
    return !Py_IsInitialized() || _Py_IsFinalizing();
#endif
}

void restore_thread(PyThreadState* state) {
    (void)g_watching_forks;
    g_entering.fetch_add(1);
    if (!may_enter()) {
        g_entering.fetch_sub(1);
        park_for_good();
    }
    PyEval_RestoreThread(state);
    g_entering.fetch_sub(1);
}

}  // namespace

ReleaseGil::ReleaseGil() noexcept : state_(PyEval_SaveThread()) {}

ReleaseGil::~ReleaseGil() { restore_thread(state_); }

void install_blocking_hooks() {
    BlockingHooks h;
    // Only a thread holding the GIL has one to release (lane threads call core code too).
    h.enter = []() -> void* { return PyGILState_Check() ? PyEval_SaveThread() : nullptr; };
    h.leave = [](void* token) { restore_thread(static_cast<PyThreadState*>(token)); };
    set_blocking_hooks(h);
}

EnterPython::EnterPython() noexcept {
    g_entering.fetch_add(1);
    if (may_enter() && !finalizing()) {
        if (PyGILState_GetThisThreadState() != nullptr) {
            state_ = PyGILState_Ensure();
        } else {
            // Note [Thread states and fork].
            {
                std::lock_guard<std::mutex> lock(g_birth);
                own_ = PyThreadState_New(PyInterpreterState_Main());
            }
            PyEval_RestoreThread(own_);
        }
        entered_ = true;
    }
    g_entering.fetch_sub(1);
}

EnterPython::~EnterPython() {
    if (!entered_) return;
    if (own_ == nullptr) {
        PyGILState_Release(state_);
    } else {
        PyThreadState_Clear(own_);
        PyThreadState_DeleteCurrent();
    }
}

void seal_python() {
    g_sealer.store(std::this_thread::get_id());
    g_sealed.store(true);
    // Threads caught between their check and the GIL get it now, while this
    // one waits without it; everyone after them sees the seal.
    Py_BEGIN_ALLOW_THREADS
    while (g_entering.load() != 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    Py_END_ALLOW_THREADS
}

}  // namespace hrx::bind
