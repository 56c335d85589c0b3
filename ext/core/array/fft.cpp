#include "array/fft.h"

#include <utility>

#include "array/sorting.h"

namespace hrx {

TaskSpec fft_task(const Array& in, const Array& out, std::function<void()> body, const std::string& name) {
    TaskSpec t = compute_task({&in}, {&out}, name, name);
    t.fn = std::move(body);
    return t;
}

}  // namespace hrx
