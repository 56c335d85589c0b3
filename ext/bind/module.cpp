// The one NB_MODULE of hrxarray. Everything public is re-exported by
// hrxarray/__init__.py; this module is private.
#include "bindings.h"

NB_MODULE(_core, m) {
    m.doc() = "hrxarray's compiled core: runtime, memory fabric and kernels (private; use hrxarray).";
    hrx::bind::bind_errors(m);
    hrx::bind::bind_system(m);
    hrx::bind::bind_runtime(m);
}
