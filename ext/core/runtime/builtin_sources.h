// The built-in programs as Loom sources (src/hrxarray/programs/*.loom,
// embedded at build time): which module holds each built-in program and
// under which symbol, so that a factory can compile it.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace hrx {

struct BuiltinSource {
    std::string_view module;  // file stem: "copy", "gemm", "elementwise"
    std::string_view symbol;  // root symbol in it, without '@'
    std::string_view text;    // the whole module
};

// The source of built-in program `name` ("copy", "gemm", "batched_gemm",
// "transform_i32", "euler_bf16", "add_f32"); Message for any other name.
BuiltinSource builtin_source(const std::string& name);

// Every embedded module as (file stem, text), sorted by stem.
std::vector<std::pair<std::string_view, std::string_view>> builtin_modules();

}  // namespace hrx
