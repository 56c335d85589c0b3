// unique as array-layer tasks (kernels/sort.h unique_groups, unique_rows).
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

// The distinct sub-arrays of `in` along `axis` (NumPy's unique(axis=)), in
// lexicographic order (kernels/sort.h unique_rows): values has `in`'s shape
// with `axis` moved first (its first *count entries along that axis get the
// distinct sub-arrays, C-contiguous), index/counts (int64, in.shape[axis]
// entries) one per sub-array, inverse (int64, in.shape[axis]) the group of
// each. A sub-array holding a NaN is distinct from every other one.
TaskSpec unique_axis_task(const Array& in, int axis, const Array& values, const Array& index, const Array& inverse,
                          const Array& counts, std::shared_ptr<int64_t> count, const std::string& name);

}  // namespace hrx

namespace hrx::set {

// What unique finds: the distinct values, the index of each one's first
// occurrence, the group of every element, and how often each one occurs.
struct Unique {
    Array values, index, inverse, counts;
};

// unique_task's results cut to the distinct values found (values, index and
// counts 1-d; inverse in's shape); waits for the count (the results' shapes
// depend on the data).
Unique unique(const Array& in, bool equal_nan, const std::string& op);

// unique_axis_task's results along the normalised `axis` (values with axis
// moved first); waits for the count.
Unique unique_axis(const Array& in, int axis, const std::string& op);

}  // namespace hrx::set
