// Copies into arrays: dst[...] = src with NumPy's assignment rules
// (broadcasting, conversion to dst's dtype, reading everything before
// writing), for every source the binding can describe: a DeviceArray, a
// scalar already converted to the destination's values, or host data NumPy
// converted to them (staged into HostVisible memory by host_transfer::upload).
// Every check runs before anything is allocated or submitted.
#pragma once
#include <optional>
#include <string>

#include "array/host_transfer.h"
#include "array/ops.h"

namespace hrx::copy {

// The source of a copy as the binding parsed it: `operand` (an array, or a
// scalar of value_dtype), or `host` data of any dtype (its owner kept alive
// by the caller until the call returns) when set.
struct Source {
    Operand operand;
    std::optional<host_transfer::HostBlock> host;
};

// The dtype scalar and host sources are converted to for a destination of
// `dtype`: its own, float32 for bfp16 (whose arrays encode float32 values).
DType value_dtype(DType dtype);

// Checks `src` against a destination of `place`, `shape` and `dtype` on
// `rt`, which may not exist yet: the same runtime, shapes (check_assignable;
// bfp16 conversions keep the shape), the copy's lane, src's storage.
void check(const Placement& place, const Dims& shape, DType dtype, RuntimeCore& rt, const Source& src,
           const std::string& op);

// dst[...] = src, asynchronously: check(), then into_checked().
void into(const Array& dst, Source src, bool even, const std::string& op);
// into() for a source check() accepted: dst's refusals (read-only, device
// use), then the staging of host data, a temporary for a source that overlaps
// dst other than identically (NumPy's rule), then the copy. bfp16
// destinations encode with floor rounding, or half-to-even with `even`.
void into_checked(const Array& dst, Source src, bool even, const std::string& op);

}  // namespace hrx::copy
