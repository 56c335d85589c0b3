// Loom plans as loaded code: the one wrapper that turns a planned Loom
// program (loom/plan.h) bound to a launch and a constant block into a
// provider::Executable, so that Loom kernels run through the lanes' provider
// queues like every other dispatch. The emulated provider's own: the runtime
// loads a planned artifact through Provider::load_program
// (ProgramImage::planned), which calls it (provider/emulated/program_image.cpp).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "provider/provider.h"  // declares loom::Program and loom::LaunchConfig

namespace hrx::provider {

// Each invocation runs `plan` over its bindings (absolute addresses for the
// alignment checks; a binding flagged `coherent` is under Note [The gfx1151
// float atomic max caveat]) with `constants` and `launch`
// (GPU; ignored for pipelines), in loom.md §4.4's checked mode when `checked`.
std::shared_ptr<const Executable> loom_executable(std::shared_ptr<const loom::Program> plan,
                                                  std::vector<uint8_t> constants, const loom::LaunchConfig& launch,
                                                  bool checked);

}  // namespace hrx::provider
