// hx.loom.function's call: a loaded kernel over bindings the caller gives as
// device arrays, host data or nothing (kernel_task.cpp).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "array/host_transfer.h"
#include "array/ops.h"

namespace hrx {

// One binding: a device array (copied to a C-contiguous one when it is a
// strided input), host data uploaded with the binding's dtype, or neither (a
// written binding the call allocates at the contract's size).
struct FunctionOperand {
    std::optional<Array> device;
    std::optional<host_transfer::HostBlock> host;
};

// Every check first (each input given, outputs on the device and
// C-contiguous, one runtime, the lane, writability, device use, and the
// contract's sizes, alignment and overlap for what is given), so a refused
// call changes nothing; then the uploads, copies and allocations, and one
// run_kernel. `dtypes` are the bindings' element types; new arrays go to
// `placement` on the kernel's runtime. Returns the written arrays, in
// binding order.
// `names` name the bindings in messages.
std::vector<Array> run_function(std::shared_ptr<Kernel> kernel, std::vector<FunctionOperand>& operands,
                                const std::vector<DType>& dtypes, const std::vector<std::string>& names,
                                const Placement& placement, const std::string& name);

}  // namespace hrx
