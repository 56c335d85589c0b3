// Error model of the core. Every failure is an hrx::Error with a kind; the
// binding layer maps kinds onto the Python exception classes (HrxError and its
// subclasses, ValueError for Message and Data, IndexError, ContractError,
// TypeError, OverflowError). A
// function that throws must leave every object as it found it ("a failed call
// changes nothing"), so checks run before any mutation.
//
// Note [Data checks are not device faults]: a kernel that refuses its own
// input (a value bfp16ebs8 cannot encode, an integer raised to a negative
// power) throws kind Data. The device did nothing wrong and the operation's
// operands are intact, so the scheduler fails only that operation: it poisons
// what the operation writes and leaves what it only read usable. Every other
// failure of a running region is a device fault and poisons as HRX does
// (every storage of the graph, graph quarantined; hrx-runtime.md §2.6).
#pragma once
#include <stdexcept>
#include <string>

namespace hrx {

enum class ErrorKind {
    Message,      // bad argument (Python ValueError), HRX's Error::Message
    Index,        // out-of-range index (Python IndexError)
    Axis,         // out-of-range axis (numpy.exceptions.AxisError, a ValueError and an IndexError)
    Contract,     // kernel contract violation (hx.ContractError, a ValueError)
    Busy,         // capacity or conflict; never a wait
    Unsupported,  // the placement/engine cannot do this
    DeviceLost,   // storage poisoned by an earlier failure
    Execution,    // a region failed
    Data,         // a kernel's own data check refused an input value (Python ValueError)
    Cancelled,    // a submission was cancelled
    OutOfMemory,  // an allocation failed (Python MemoryError); the message names bytes and placement
    Generic,      // other runtime failures (hx.HrxError)
    LinAlg,       // a LAPACK routine refused its matrix (hx.LinAlgError); an operation failure like Data
    Type,         // an argument of the wrong type or dtype (Python TypeError)
    Overflow,     // a value out of range for its dtype (Python OverflowError)
    Buffer,       // a buffer-protocol refusal: DLPack devices, dtypes, layouts (Python BufferError)
};

class Error : public std::runtime_error {
public:
    Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
    ErrorKind kind() const noexcept { return kind_; }

private:
    ErrorKind kind_;
};

[[noreturn]] inline void fail(ErrorKind kind, const std::string& message) { throw Error(kind, message); }

}  // namespace hrx
