// Loom program images on the emulated devices: compiled by the frontend,
// planned once by the executor (loom/plan.h) and bound, for a GPU
// kernel, to the launch it was loaded for.
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "errors.h"
#include "loom/frontend.h"
#include "provider/emulated/emulated.h"
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

// The little-endian bytes of one device scalar, `value` spelled in Loom.
void pack_scalar(const loom::Param& p, const std::string& value, const std::string& who, uint8_t* out) {
    const auto bad = [&] {
        fail(ErrorKind::Message, who + ": device argument %" + p.name + " = '" + value + "' is not a " +
                                     loom::scalar_name(p.type) + " value");
    };
    uint64_t bits = 0;
    if (loom::scalar_is_float(p.type)) {
        char* end = nullptr;
        const double v = std::strtod(value.c_str(), &end);
        if (end != value.c_str() + value.size() || value.empty()) bad();
        if (p.type == loom::ScalarKind::F64) {
            std::memcpy(&bits, &v, 8);
        } else if (p.type == loom::ScalarKind::F32) {
            const float f = static_cast<float>(v);
            uint32_t b32 = 0;
            std::memcpy(&b32, &f, 4);
            bits = b32;
        } else {
            fail(ErrorKind::Message, who + ": device argument %" + p.name + " has type " +
                                         loom::scalar_name(p.type) + ", which load_program does not pack");
        }
    } else {
        int64_t v = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
        if (ec != std::errc() || end != value.data() + value.size()) bad();
        bits = static_cast<uint64_t>(v);
        // A carrier narrower than 64 bits takes its signed or its unsigned range.
        const uint64_t n = 8 * p.byte_length;
        if (n < 64 && (v < -(int64_t(1) << (n - 1)) || v > (int64_t(1) << n) - 1))
            fail(ErrorKind::Message, who + ": device argument %" + p.name + " = " + value + " does not fit its " +
                                         std::to_string(n) + "-bit carrier");
    }
    for (uint64_t i = 0; i < p.byte_length; ++i) out[i] = static_cast<uint8_t>(bits >> (8 * i));
}

}  // namespace

std::shared_ptr<const Executable> load_loom(const ProgramImage& image) {
    const std::string who = "load_program('" + image.symbol + "')";
    const loom::ParsedModule parsed = loom::parse_module(image.source);
    loom::Specialization spec;
    spec.symbol = image.symbol;
    spec.target = image.target;
    spec.config = image.config;
    auto plan = loom::Program::plan(loom::specialize(parsed.module, spec));
    loom::LaunchConfig launch;
    std::vector<uint8_t> constants;
    if (plan->is_gpu()) {
        launch = plan->launch_config(image.workload);
        constants.assign(plan->constant_byte_length(), 0);
        for (const auto& p : plan->device_params()) {
            if (p.is_buffer) continue;
            auto it = image.arguments.find(p.name);
            if (it == image.arguments.end())
                fail(ErrorKind::Message, who + ": no value for the device argument %" + p.name);
            pack_scalar(p, it->second, who, constants.data() + p.byte_offset);
        }
    }
    return std::make_shared<LoomExecutable>(std::move(plan), launch, std::move(constants), image.checked);
}

}  // namespace hrx::provider::emulated

namespace hrx::provider {

std::shared_ptr<const Executable> loom_executable(std::shared_ptr<const loom::Program> plan,
                                                  std::vector<uint8_t> constants, const loom::LaunchConfig& launch,
                                                  bool checked) {
    return std::make_shared<emulated::LoomExecutable>(std::move(plan), launch, std::move(constants), checked);
}

}  // namespace hrx::provider
