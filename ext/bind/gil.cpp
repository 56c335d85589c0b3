// Note [Entering Python at exit] in gil.h.
#include "gil.h"

#include <atomic>
#include <chrono>
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

// A fork child has only the forking thread: nobody is entering there.
void reset_in_child() { g_entering.store(0); }
const bool g_watching_forks = pthread_atfork(nullptr, nullptr, &reset_in_child) == 0;

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
        state_ = PyGILState_Ensure();
        entered_ = true;
    }
    g_entering.fetch_sub(1);
}

EnterPython::~EnterPython() {
    if (entered_) PyGILState_Release(state_);
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
