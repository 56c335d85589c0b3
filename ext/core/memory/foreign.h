// Foreign host memory: pages another library owns (a DLPack producer such as
// NumPy or torch), borrowed zero-copy as registered host storage.
//
// Note [Foreign memory ownership]: a ForeignMemory never frees the pages. It
// keeps (take) one release action, supplied by the importer, and runs it
// exactly once when the memory object dies, i.e. when the last Buffer handle
// on the storage goes away. The action is opaque to the core: the binding
// layer's action calls the producer's DLPack deleter with the GIL held, and
// skips it after interpreter shutdown. The core stays free of Python headers.
#pragma once
#include <cstdint>
#include <functional>

#include "memory/placement.h"
#include "provider/provider.h"

namespace hrx {

class ForeignMemory final : public provider::Memory {
public:
    // Borrows [data, data + bytes); `release` runs once, from the destructor.
    // `data` may be null only when `bytes` is 0 (an empty tensor).
    ForeignMemory(uint8_t* data, uint64_t bytes, BackingDesc backing, std::function<void()> release);
    ~ForeignMemory() override;
    ForeignMemory(const ForeignMemory&) = delete;
    ForeignMemory& operator=(const ForeignMemory&) = delete;

    uint8_t* host_pointer() const override { return data_; }
    uint64_t size() const override { return bytes_; }
    const BackingDesc& backing() const override { return backing_; }
    // The emulated devices share the CPU's coherent caches: a fence keeps the
    // ordering guarantee the real recipe gives (as the emulated HostMemory).
    void cache_control(HostCacheOp op, uint64_t offset, uint64_t length) override;

    // Forget the release action without running it (ownership went back to
    // the producer, e.g. when marking the capsule used failed).
    void disarm() { release_ = nullptr; }

private:
    uint8_t* data_;
    uint64_t bytes_;
    BackingDesc backing_;
    std::function<void()> release_;
};

}  // namespace hrx
