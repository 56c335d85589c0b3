// The DLPack C ABI (dlpack.h v1.x), declared here from the specification
// rather than vendored: only the structs, codes and flags hrxarray uses.
//
// Note [DLPack layout]: these structs cross library boundaries by pointer, so
// field order, widths and the enum underlying types must match the spec
// exactly. They are plain standard-layout structs; the static_asserts below
// pin the sizes an LP64 platform gives the C header's definitions.
//
// Capsule protocol (spec, "Python specification for DLPack"): a producer hands
// out a PyCapsule named kCapsuleName (legacy DLManagedTensor) or
// kVersionedCapsuleName (DLManagedTensorVersioned). A consumer that takes
// ownership renames it to the matching "used_" name and later calls the
// managed tensor's deleter exactly once. The producer's capsule destructor
// calls the deleter only when the capsule was never consumed.
#pragma once
#include <cstdint>

namespace hrx::dlpack {

// The ABI version hrxarray produces (the struct layout is stable across 1.x).
constexpr uint32_t kMajorVersion = 1;
constexpr uint32_t kMinorVersion = 1;

// Capsule names. They must be static strings: CPython keeps the pointer.
inline constexpr const char* kCapsuleName = "dltensor";
inline constexpr const char* kUsedCapsuleName = "used_dltensor";
inline constexpr const char* kVersionedCapsuleName = "dltensor_versioned";
inline constexpr const char* kUsedVersionedCapsuleName = "used_dltensor_versioned";

// DLManagedTensorVersioned::flags bits.
constexpr uint64_t kFlagReadOnly = uint64_t(1) << 0;   // consumers must not write
constexpr uint64_t kFlagIsCopied = uint64_t(1) << 1;   // the producer made a private copy
constexpr uint64_t kFlagSubbytePadded = uint64_t(1) << 2;

struct DLPackVersion {
    uint32_t major;
    uint32_t minor;
};

// DLDeviceType (an int32 enum in C). Only the codes hrxarray names.
enum DLDeviceType : int32_t {
    kDLCPU = 1,
    kDLCUDA = 2,
    kDLCUDAHost = 3,
    kDLROCM = 10,
    kDLROCMHost = 11,
    kDLExtDev = 12,
    kDLCUDAManaged = 13,
};

struct DLDevice {
    int32_t device_type;  // a DLDeviceType
    int32_t device_id;
};

// DLDataTypeCode (stored in a uint8 field). Only the codes hrxarray maps.
enum DLDataTypeCode : uint8_t {
    kDLInt = 0,
    kDLUInt = 1,
    kDLFloat = 2,
    kDLOpaqueHandle = 3,
    kDLBfloat = 4,
    kDLComplex = 5,
    kDLBool = 6,
};

struct DLDataType {
    uint8_t code;    // a DLDataTypeCode
    uint8_t bits;    // bits per lane
    uint16_t lanes;  // 1 for scalar element types
};

struct DLTensor {
    void* data;              // element [0, ..., 0] is at data + byte_offset
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t* shape;          // ndim entries (may be NULL when ndim == 0)
    int64_t* strides;        // in elements; NULL means compact row-major (pre-1.2 producers)
    uint64_t byte_offset;
};

struct DLManagedTensor {
    DLTensor dl_tensor;
    void* manager_ctx;
    void (*deleter)(DLManagedTensor* self);  // may be NULL
};

struct DLManagedTensorVersioned {
    DLPackVersion version;
    void* manager_ctx;
    void (*deleter)(DLManagedTensorVersioned* self);  // may be NULL
    uint64_t flags;
    DLTensor dl_tensor;
};

static_assert(sizeof(DLDevice) == 8);
static_assert(sizeof(DLDataType) == 4);
static_assert(sizeof(void*) != 8 || sizeof(DLTensor) == 48);
static_assert(sizeof(void*) != 8 || sizeof(DLManagedTensor) == 64);
static_assert(sizeof(void*) != 8 || sizeof(DLManagedTensorVersioned) == 80);

}  // namespace hrx::dlpack
