// Entering and leaving Python on hrxarray's code paths.
//
// Note [Entering Python at exit]: at interpreter exit the atexit hook closes
// every runtime (no new work), waits without the GIL for the work already
// accepted (lane and callback threads take the GIL meanwhile to finish host
// regions and completion callbacks), then seals Python: from then on no
// thread but the hook's own enters Python through hrxarray. CPython before
// 3.14 ends any other thread that takes the GIL once finalisation has begun
// with pthread_exit, and that unwinding through C++ frames (a noexcept
// destructor re-taking the GIL, nanobind's catch-all) aborts the process
// ("terminate called without an active exception"). So after the seal a
// thread that would re-enter Python from a wait or a kernel parks for good
// (a daemon thread: the process is ending), and a lane or callback thread
// skips its Python work. The seal first waits for threads already between
// their check and the GIL, so none slips past it.
#pragma once
#include <Python.h>

namespace hrx::bind {

// Releases the GIL for its lifetime; use it instead of nb::gil_scoped_release
// (also as nb::call_guard<ReleaseGil>). Re-entering Python after the seal
// parks the thread instead, unless it is the thread that sealed.
class ReleaseGil {
public:
    ReleaseGil() noexcept;
    ~ReleaseGil();
    ReleaseGil(const ReleaseGil&) = delete;
    ReleaseGil& operator=(const ReleaseGil&) = delete;

private:
    PyThreadState* state_;
};

// Takes the GIL on a thread that may not hold it (lanes, the callback
// thread, DLPack deleters), for its lifetime. False, having taken nothing,
// once Python can no longer be entered (sealed or finalising).
class EnterPython {
public:
    EnterPython() noexcept;
    ~EnterPython();
    EnterPython(const EnterPython&) = delete;
    EnterPython& operator=(const EnterPython&) = delete;
    explicit operator bool() const { return entered_; }

private:
    bool entered_ = false;
    PyGILState_STATE state_{};
    PyThreadState* own_ = nullptr;  // made here (Note [Thread states and fork] in gil.cpp)
};

// Lets core code release the GIL around its blocking waits (Note [Blocking
// waits of core code] in runtime/blocking.h); module initialisation calls it.
void install_blocking_hooks();

// The atexit hook's last step (holding the GIL): no other thread enters
// Python through hrxarray afterwards.
void seal_python();

}  // namespace hrx::bind
