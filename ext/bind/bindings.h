// Declarations of the per-concept binding functions; module.cpp calls them in
// dependency order (errors first, so every later binding can raise them).
#pragma once
#include <nanobind/nanobind.h>

namespace hrx::bind {
void bind_errors(nanobind::module_& m);
void bind_system(nanobind::module_& m);
void bind_runtime(nanobind::module_& m);
void bind_memory(nanobind::module_& m);
void bind_numerics(nanobind::module_& m);
}  // namespace hrx::bind
