// unique as an array-layer task (kernels/sort.h unique_groups).
#pragma once
#include <memory>
#include <string>

#include "array/ops.h"

namespace hrx {

// The distinct values of the flattened `in`, in sort order: values (in's
// dtype), index (first occurrences), counts (int64) get the first *count
// entries (of in.size() allocated), inverse (int64, in's size) the group of
// every element. *count is set when the task has run (the caller waits: the
// result's shape depends on the data). NaNs are one value when equal_nan.
TaskSpec unique_task(const Array& in, bool equal_nan, const Array& values, const Array& index,
                     const Array& inverse, const Array& counts, std::shared_ptr<int64_t> count,
                     const std::string& name);

}  // namespace hrx
