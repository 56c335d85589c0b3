// Where new arrays live, and the creation functions that fill them by a copy
// (full, and convert: astype, copy, to). The binding resolves Python's
// placement and `like` arguments into these descriptions.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "array/copy.h"

namespace hrx::creation {

// The placement arrays get when none is named: Shared memory of rt's NPU 0.
Placement default_placement(RuntimeCore& rt);
// The runtime a placement belongs to: its NPU's for NPU placements, else `fallback`.
std::shared_ptr<RuntimeCore> placement_runtime(const Placement& p, const std::shared_ptr<RuntimeCore>& fallback);

struct Home {
    std::shared_ptr<RuntimeCore> rt;
    Placement placement;
};
// The runtime and placement of a new array. With `like`: like's runtime, in
// `requested` (nullopt: like's own placement), ValueError naming `op` when it
// names an NPU of another runtime. Without: `requested` (nullopt:
// default_placement of default_rt) on its runtime (default_rt for GPU placements).
Home home(const std::optional<Placement>& requested, const Array* like, const std::shared_ptr<RuntimeCore>& default_rt,
          const std::string& op);

// A new zero-filled C-contiguous array of `shape` and `dtype` at `home`.
Array empty(const Home& home, const Dims& shape, DType dtype, const std::string& op);
// A new array of `shape` and `dtype` at `home`, filled with `fill` (a copy
// source, broadcast as NumPy assigns), which is checked before the array is
// allocated.
Array full(const Home& home, const Dims& shape, DType dtype, copy::Source fill, const std::string& op);
// A new array holding `x` converted to `dtype` in `placement` (which must be
// of x's runtime, as home() checks), on x's runtime.
Array convert(const Array& x, DType dtype, const Placement& placement, const std::string& op);

}  // namespace hrx::creation
