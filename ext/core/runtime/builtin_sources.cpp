#include "runtime/builtin_sources.h"

#include <utility>

#include "errors.h"

namespace hrx {
namespace {

struct Module {
    std::string_view stem;
    std::string_view text;
};

constexpr Module kModules[] = {
#include "builtin_loom_sources.inc"
};

// Each built-in program: (name, module stem); the root symbol is the name.
constexpr std::pair<std::string_view, std::string_view> kPrograms[] = {
    {"copy", "copy"},           {"gemm", "gemm"},
    {"batched_gemm", "gemm"},   {"transform_i32", "elementwise"},
    {"euler_bf16", "elementwise"}, {"add_f32", "elementwise"},
};

}  // namespace

BuiltinSource builtin_source(const std::string& name) {
    for (const auto& [program, stem] : kPrograms) {
        if (program != name) continue;
        for (const auto& m : kModules)
            if (m.stem == stem) return {m.stem, program, m.text};
        fail(ErrorKind::Message, "builtin_source: the Loom module '" + std::string(stem) + "' of '" + name +
                                     "' was not embedded in this build");
    }
    fail(ErrorKind::Message, "builtin_source: '" + name +
                                 "' is not a built-in program (copy, gemm, batched_gemm, transform_i32, "
                                 "euler_bf16, add_f32)");
}

std::vector<std::pair<std::string_view, std::string_view>> builtin_modules() {
    std::vector<std::pair<std::string_view, std::string_view>> out;
    for (const auto& m : kModules) out.emplace_back(m.stem, m.text);
    return out;
}

}  // namespace hrx
