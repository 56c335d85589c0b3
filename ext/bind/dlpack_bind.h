// DLPack plumbing (bind_dlpack.cpp) for DeviceArray (bind_array.cpp): the
// capsules __dlpack__ exports over leased storage, and zero-copy import.
#pragma once
#include <nanobind/nanobind.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "array/array.h"
#include "memory/dlpack_abi.h"
#include "memory/storage.h"

namespace hrx {
class RuntimeCore;
}

namespace hrx::bind {

// The capsule DeviceArray.__dlpack__ returns over array `a` (its element
// [0, ...], its strides in elements). It takes over (take) host lease `lease`
// of a's storage (0: none), which the managed tensor's pure-C++ deleter
// releases together with its reference on the storage (Note [DLPack
// ownership] in bind_dlpack.cpp).
nanobind::object dlpack_capsule(const Array& a, uint64_t lease, dlpack::DLDataType dtype, dlpack::DLDevice device,
                                bool readonly, bool copied, bool versioned);

// A zero-copy import of a capsule or DLPack producer as HostVisible storage of
// `runtime` (the capsule is marked used). Strides in elements.
struct DlpackImport {
    std::shared_ptr<Buffer> buffer;
    uint64_t offset = 0;
    std::vector<int64_t> shape;
    std::vector<int64_t> strides;
    std::string dtype;
    bool readonly = false;
};
DlpackImport dlpack_import_raw(nanobind::handle obj, const std::shared_ptr<RuntimeCore>& runtime);

}  // namespace hrx::bind
