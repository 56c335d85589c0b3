// The emulated fabric: one gfx1151 GPU and one Strix Halo NPU inside the
// process. Memory is host memory; device work runs on the CPU. Its visibility
// answers follow the Linux producer->consumer table of the libamdf CTS
// (reference/memory-fabric.md §2.5), so code that applies them here applies
// them correctly on the hardware. Its queues run dispatches (queue.cpp); the
// programs it loads are Loom images, compiled by the Loom frontend and run by
// the Loom executor (program_image.cpp).
#include <sys/mman.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include "errors.h"
#include "loom/plan.h"
#include "provider/emulated/emulated.h"
#include "provider/emulated/planned.h"

namespace hrx::provider {
namespace {

// Large buffers come from mmap: the kernel hands out zeroed pages lazily, so
// zero-filling a 1 GiB buffer costs nothing until it is touched.
constexpr uint64_t kMmapThreshold = 1 << 20;
// Buffers from this size on ask for transparent huge pages (2 MiB).
constexpr uint64_t kHugeThreshold = 4 << 20;
// Informational fixed costs of the emulated recipes (not measurements).
constexpr uint64_t kHostRangeCostNs = 250;
constexpr uint64_t kQueueGlobalCostNs = 2000;
// The emulator's largest allocation: Strix Halo has 128 GiB of system memory.
constexpr uint64_t kMaximumBytes = uint64_t(1) << 37;

class HostMemory final : public Memory {
public:
    HostMemory(const BackingDesc& desc, uint64_t bytes) : desc_(desc), size_(bytes) {
        if (bytes >= kMmapThreshold) {
            void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
            // A fresh result is written once, all of it: with 4 KiB pages its
            // first touch costs one fault per page (a 16 M float32 result
            // paid ~25 ms of faults for a 5 ms add). Advice only.
            if (bytes >= kHugeThreshold) madvise(p, bytes, MADV_HUGEPAGE);
#endif
            ptr_ = static_cast<uint8_t*>(p);
            mapped_ = true;
        } else {
            void* p = nullptr;
            if (posix_memalign(&p, 64, bytes) != 0) throw std::bad_alloc();
            std::memset(p, 0, bytes);
            ptr_ = static_cast<uint8_t*>(p);
        }
    }
    ~HostMemory() override {
        if (mapped_)
            munmap(ptr_, size_);
        else
            std::free(ptr_);
    }
    uint8_t* host_pointer() const override { return ptr_; }
    uint64_t size() const override { return size_; }
    const BackingDesc& backing() const override { return desc_; }
    void cache_control(HostCacheOp, uint64_t, uint64_t) override {
        // The emulated devices read the same coherent CPU caches, so a line
        // flush would change nothing observable; the fence keeps the ordering
        // guarantee the real recipe gives (MFENCE before and after).
        std::atomic_thread_fence(std::memory_order_seq_cst);
    }

private:
    BackingDesc desc_;
    uint64_t size_;
    uint8_t* ptr_ = nullptr;
    bool mapped_ = false;
};

// A dma-buf import: the same pages, admitted for more consumers. Host cache
// operations go through the source's mapping (the maintenance site).
class ImportedMemory final : public Memory {
public:
    ImportedMemory(const Memory& source, const BackingDesc& desc) : source_(source), desc_(desc) {}
    uint8_t* host_pointer() const override { return source_.host_pointer(); }
    uint64_t size() const override { return source_.size(); }
    const BackingDesc& backing() const override { return desc_; }
    void cache_control(HostCacheOp op, uint64_t offset, uint64_t length) override {
        const_cast<Memory&>(source_).cache_control(op, offset, length);
    }

private:
    const Memory& source_;
    BackingDesc desc_;
};

CacheTransition none() { return {}; }

CacheTransition host_range(bool release) {
    return {TransitionKind::Range, TransitionExecutor::HostDirect,
            release ? TransitionOperation::Flush : TransitionOperation::Invalidate, kHostCacheLine};
}

CacheTransition gpu_queue(bool release) {
    return {TransitionKind::Global, TransitionExecutor::Queue,
            release ? TransitionOperation::ReleaseToSystem : TransitionOperation::AcquireFromSystem, 0};
}

// One site's side of a pair: libamdf composes the answer from each site's own
// recipe; a host recipe collapses to None only toward a host peer or a
// host-coherent GPU attachment.
CacheTransition side(const BackingDesc& b, const Site& site, const Site& peer, bool release) {
    switch (site.engine) {
        case Engine::Host:
            if (peer.engine == Engine::Host) return none();
            if (peer.engine == Engine::Gpu && b.gpu_coherent) return none();
            return host_range(release);
        case Engine::Gpu: return gpu_queue(release);
        case Engine::Npu: return none();
    }
    return none();
}

uint64_t cost(const CacheTransition& t) {
    if (t.kind == TransitionKind::None) return 0;
    return t.executor == TransitionExecutor::Queue ? kQueueGlobalCostNs : kHostRangeCostNs;
}

AtomicScope atomic_reach(const BackingDesc& b, const Site& p, const Site& c) {
    auto is = [&](Engine a, Engine z) {
        return (p.engine == a && c.engine == z) || (p.engine == z && c.engine == a);
    };
    // Neither the NPU nor the host reports atomics of its own; host<->GPU is
    // mutually atomic only on the coherent attachment (STORE is qualified there).
    if (is(Engine::Gpu, Engine::Gpu)) return AtomicScope::Device;
    if (is(Engine::Host, Engine::Gpu)) return b.gpu_coherent ? AtomicScope::System : AtomicScope::None;
    return AtomicScope::None;
}

class EmulatedProvider final : public Provider {
public:
    std::string name() const override { return "emulated"; }

    std::vector<EndpointInfo> endpoints() const override {
        return {{Engine::Gpu, 0, "emulated gfx1151 (Radeon 8060S)", "gfx1151", 0},
                {Engine::Npu, 0, "emulated XDNA2 NPU5 (17f0 rev 0x11)", "amd.xdna.strix_halo.17f0_11", 8}};
    }

    std::vector<ProfileInfo> query_profiles(const BackingDesc& want) const override {
        if (!want.gpu && !want.npu) return {};
        std::string name = want.npu ? (want.gpu ? "system: gpu+npu (dma-buf shareable)" : "system: npu buffer object")
                                    : (want.gpu_coherent ? "system: gpu coherent (GTT)" : "system: gpu cacheable");
        return {{0, name, kMaximumBytes, 1}};
    }

    std::unique_ptr<Memory> create_memory(const BackingDesc& want, uint64_t bytes) override {
        return std::make_unique<HostMemory>(want, bytes);
    }

    std::unique_ptr<Memory> import_memory(const Memory& source, const BackingDesc& want) override {
        return std::make_unique<ImportedMemory>(source, want);
    }

    VisibilityFacts pair_info(const BackingDesc& b, const Site& producer, const Site& consumer) const override {
        for (const Site* s : {&producer, &consumer}) {
            if (!b.admits(*s))
                fail(ErrorKind::Message, std::string("visibility device has no access to backing: ") +
                                             engine_name(s->engine) + ":" + std::to_string(s->index) +
                                             " was not admitted to this allocation");
        }
        VisibilityFacts f;
        f.shared_backing_reachable = true;
        f.release = side(b, producer, consumer, true);
        f.acquire = side(b, consumer, producer, false);
        f.atomic_scope_32 = f.atomic_scope_64 = atomic_reach(b, producer, consumer);
        f.estimated_fixed_cost_ns = cost(f.release) + cost(f.acquire);
        return f;
    }

    CacheTransition host_recipe(const BackingDesc& b, bool release) const override {
        return b.needs_host_maintenance() ? host_range(release) : none();
    }

    std::unique_ptr<Queue> create_queue(Engine engine, int) override { return emulated::make_queue(engine); }

    std::shared_ptr<const Executable> load_program(const ProgramImage& image) override {
        if (!image.planned) fail(ErrorKind::Message, "load_program: the emulated provider loads planned Loom programs; this image has none");
        return loom_executable(image.planned, image.constants, image.launch ? *image.launch : loom::LaunchConfig{},
                               image.checked);
    }
};

}  // namespace

std::shared_ptr<Provider> make_emulated_provider() { return std::make_shared<EmulatedProvider>(); }

}  // namespace hrx::provider
