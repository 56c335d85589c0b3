// Loom program images on the emulated devices: a program the frontend
// planned (ProgramImage::planned), bound, for a GPU kernel, to the launch
// and constant block it was loaded with; invocations run the plan.
#include <memory>
#include <vector>

#include "loom/plan.h"
#include "provider/emulated/planned.h"

namespace hrx::provider::emulated {
namespace {

class LoomExecutable final : public Executable {
public:
    LoomExecutable(std::shared_ptr<const loom::Program> plan, loom::LaunchConfig launch, std::vector<uint8_t> constants,
                   bool checked)
        : plan_(std::move(plan)), launch_(launch), constants_(std::move(constants)), checked_(checked) {}

    void invoke(const Span* bindings, size_t count) const override {
        std::vector<loom::MemorySpan> spans(count);
        loom::ExecOptions options;
        options.checked = checked_;
        for (size_t i = 0; i < count; ++i)
            spans[i] = {bindings[i].data, bindings[i].length, reinterpret_cast<uint64_t>(bindings[i].data),
                        bindings[i].coherent};
        plan_->run(spans, constants_, launch_, options);
    }

private:
    std::shared_ptr<const loom::Program> plan_;
    loom::LaunchConfig launch_;
    std::vector<uint8_t> constants_;
    bool checked_;
};

}  // namespace

}  // namespace hrx::provider::emulated

namespace hrx::provider {

std::shared_ptr<const Executable> loom_executable(std::shared_ptr<const loom::Program> plan,
                                                  std::vector<uint8_t> constants, const loom::LaunchConfig& launch,
                                                  bool checked) {
    return std::make_shared<emulated::LoomExecutable>(std::move(plan), launch, std::move(constants), checked);
}

}  // namespace hrx::provider
