// FFTs (hx.fft) as compute-lane dispatches (provider::FftOp) whose body is NumPy's pocketfft.
//
// Note [FFTs through NumPy's pocketfft]: FFTs are not written by hand.
// NumPy 2 compiles pocketfft into numpy.fft (_pocketfft_umath) and exports
// no C ABI for it, so the task's body (supplied by the binding) enters Python
// on the lane thread and calls numpy.fft's function on NumPy views of the
// arrays' host mappings with out= (the emulated GPU's memory is host
// memory); pocketfft's loop runs without the GIL. The cost over NumPy's own
// call is one GIL acquisition and the view construction per task, a few
// microseconds. The task declares its read and write like every array task,
// so hazards order it; at interpreter exit the body fails the task cleanly
// instead of entering Python (Note [Entering Python at exit]). The bits are
// those of np.fft with the same NumPy wheel (same code, same build flags):
// whether they can differ between hosts is a property of NumPy's build, not
// of hrxarray; tests compare with tolerances.
#pragma once
#include <functional>
#include <string>

#include "array/ops.h"

namespace hrx {

// A compute-lane task reading `in` and writing `out` (fresh, C-contiguous)
// by `body`, which must not keep pointers into either after it returns.
TaskSpec fft_task(const Array& in, const Array& out, std::function<void()> body, const std::string& name);

}  // namespace hrx

namespace hrx::fft {

// out = body's FFT of `in`, submitted as fft_task: `out` (a fresh,
// C-contiguous array, of in's runtime: ValueError naming `name` otherwise)
// must be free for a device write (check_device_use) first.
void region(const Array& in, const Array& out, std::function<void()> body, const std::string& name);

}  // namespace hrx::fft
