// DLPack plumbing (bind_dlpack.cpp) for DeviceArray (bind_array.cpp): the
// capsules __dlpack__ hands out and the capsules hx.from_dlpack reads. The
// policy (negotiation, validation, leases, managed tensors) is the core's
// (array/dlpack.h).
#pragma once
#include <nanobind/nanobind.h>

#include <memory>

#include "array/dlpack.h"

namespace hrx {
class RuntimeCore;
}

namespace hrx::bind {

// The capsule that carries `managed` (named for its form, Note [DLPack
// ownership] in array/dlpack.h); it owns the managed tensor from here.
nanobind::object dlpack_capsule(DlpackExport managed);

// A zero-copy import of a capsule or DLPack producer as HostVisible storage of
// `runtime` (the capsule is marked used). Strides in elements.
DlpackImport dlpack_import_raw(nanobind::handle obj, const std::shared_ptr<RuntimeCore>& runtime);

}  // namespace hrx::bind
