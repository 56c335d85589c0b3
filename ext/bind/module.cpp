// The one NB_MODULE of hrxarray. Everything public is re-exported by
// hrxarray/__init__.py; this module is private.
#include "bindings.h"
#include "gil.h"
#include "loom_bind.h"

NB_MODULE(_core, m) {
    m.doc() = "hrxarray's compiled core: runtime, memory fabric and kernels (private; use hrxarray).";
#ifndef HRX_LEAK_WARNINGS
    // Objects still referenced by module globals at interpreter exit (the
    // default runtime, placements in user modules) are not leaks worth a
    // report; development builds turn the check back on.
    nanobind::set_leak_warnings(false);
#endif
    hrx::bind::install_blocking_hooks();
    hrx::bind::bind_errors(m);
    hrx::bind::bind_builders(m);
    hrx::bind::bind_system(m);
    hrx::bind::bind_numerics(m);
    hrx::bind::bind_runtime(m);
    hrx::bind::bind_kernels(m);
    hrx::bind::bind_elementwise(m);
    hrx::bind::bind_sorting(m);
    hrx::bind::bind_stats(m);
    hrx::bind::bind_indexing(m);
    hrx::bind::bind_random(m);
    hrx::bind::bind_manipulation(m);
    hrx::bind::bind_linalg(m);
    hrx::bind::bind_loom_frontend(m);
    hrx::bind::bind_loom_exec(m);
    hrx::bind::bind_loom(m);
    hrx::bind::bind_loom_native(m);
}
