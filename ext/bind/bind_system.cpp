// Host facts for `python -m hrxarray doctor` and for bug reports.
#include "bindings.h"

#include <nanobind/stl/string.h>

#include "kernels/cpu_features.h"

namespace nb = nanobind;

namespace hrx::bind {

namespace {

// A fresh dict on every call: callers may edit it (the doctor adds to it)
// without changing what the next caller sees.
nb::dict cpu_features_dict() {
    const kernels::CpuFeatures& f = kernels::cpu_features();
    nb::dict d;
    d["arch"] = f.arch;
    d["brand"] = f.brand;
    d["avx2"] = f.avx2;
    d["fma"] = f.fma;
    d["avx512f"] = f.avx512f;
    d["avx512bw"] = f.avx512bw;
    d["avx512vl"] = f.avx512vl;
    d["avx512_bf16"] = f.avx512_bf16;
    d["amx_tile"] = f.amx_tile;
    d["amx_bf16"] = f.amx_bf16;
    d["amx_permitted"] = f.amx_permitted;
    d["os_avx512"] = f.os_avx512;
    d["kernel_path"] = kernels::best_kernel_path();
    return d;
}

}  // namespace

void bind_system(nb::module_& m) {
    m.def("cpu_features", &cpu_features_dict,
          "The host CPU's features that the emulated devices' kernels can use,\n"
          "detected once per process.\n"
          "\n"
          "Keys: 'arch' and 'brand' (str); 'avx2', 'fma', 'avx512f', 'avx512bw',\n"
          "'avx512vl', 'avx512_bf16', 'amx_tile', 'amx_bf16' (bool, as cpuid\n"
          "reports them); 'os_avx512' (bool, the OS saves AVX-512 state);\n"
          "'amx_permitted' (bool, Linux granted this process AMX tile state);\n"
          "'kernel_path' (str): the path the kernels take here, one of\n"
          "'amx_bf16', 'avx512_bf16', 'avx512', 'avx2', 'portable'.");
}

}  // namespace hrx::bind
