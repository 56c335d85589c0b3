// The native device code of the built-in GPU kernels `transform_i32`,
// `euler_bf16` and `add_f32` on the emulated GPU, with the exact numerics of
// Note [Built-in program semantics] (runtime/programs.h). Their Loom sources
// (src/hrxarray/programs/elementwise.loom) compute the same bits and replace
// these once the Loom executor runs them as fast (the NPU programs already
// run their Loom sources). The runtime validates configurations and contracts
// before it loads one of these; what arrives here is complete and in range.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdlib>
#include <string>

#include "errors.h"
#include "kernels/bf16.h"
#include "kernels/pool.h"
#include "provider/emulated/emulated.h"

namespace hrx::provider::emulated {
namespace {

// --- configuration (Loom spellings, defaults already applied) ---------------------

const std::string& spelling(const ProgramImage& image, const char* key) {
    auto it = image.config.find(key);
    if (it == image.config.end())
        fail(ErrorKind::Message, "built-in program '" + image.symbol + "': config key '" + key + "' has no value");
    return it->second;
}

int64_t int_config(const ProgramImage& image, const char* key) {
    const std::string& s = spelling(image, key);
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size())
        fail(ErrorKind::Message, "built-in program '" + image.symbol + "': config key '" + key + "' = '" + s +
                                     "' is not an integer");
    return v;
}

// Spelled with enough digits to round-trip a float32 (ProgramImage).
float f32_config(const ProgramImage& image, const char* key) {
    return std::strtof(spelling(image, key).c_str(), nullptr);
}

// --- numerics -----------------------------------------------------------------

inline float bf16_value(uint16_t h) { return std::bit_cast<float>(kernels::bf16_to_f32_bits(h)); }
inline uint16_t bf16_round(float f) { return kernels::f32_bits_to_bf16(std::bit_cast<uint32_t>(f)); }

// Runs body(lo, hi) over [0, n) in chunks, split over the kernels' pool when
// n is large. Every element is computed by the same expression whichever
// chunk it falls in, so the split never changes a result.
template <class Body>
void elementwise(uint64_t n, const Body& body) {
    constexpr uint64_t kChunk = 1u << 16;
    if (n < 4 * kChunk || kernels::pool_threads() < 2) {
        body(uint64_t{0}, n);
        return;
    }
    kernels::pool_run((n + kChunk - 1) / kChunk, [&](std::size_t it) {
        const uint64_t lo = it * kChunk;
        body(lo, std::min(n, lo + kChunk));
    });
}

// One built-in program: `Body` is called with the bindings of an invocation.
template <class Body>
class Builtin final : public Executable {
public:
    explicit Builtin(Body body) : body_(std::move(body)) {}
    void invoke(const Span* bindings, size_t) const override { body_(bindings); }

private:
    Body body_;
};

template <class Body>
std::shared_ptr<const Executable> builtin(Body body) {
    return std::make_shared<Builtin<Body>>(std::move(body));
}

// --- GPU kernels -------------------------------------------------------------------

std::shared_ptr<const Executable> gpu_transform_i32(const ProgramImage& image) {
    const auto n = static_cast<uint64_t>(int_config(image, "elements"));
    return builtin([n](const Span* v) {
        const auto* in = reinterpret_cast<const uint32_t*>(v[0].data);
        auto* out = reinterpret_cast<uint32_t*>(v[1].data);
        elementwise(n, [in, out](uint64_t lo, uint64_t hi) {
            for (uint64_t i = lo; i < hi; ++i) out[i] = in[i] * 3u + 7u;  // wraps modulo 2^32
        });
    });
}

std::shared_ptr<const Executable> gpu_euler_bf16(const ProgramImage& image) {
    const auto n = static_cast<uint64_t>(int_config(image, "elements"));
    const float dt = f32_config(image, "dt");
    return builtin([n, dt](const Span* v) {
        auto* x = reinterpret_cast<uint16_t*>(v[0].data);
        const auto* vel = reinterpret_cast<const uint16_t*>(v[1].data);
        elementwise(n, [x, vel, dt](uint64_t lo, uint64_t hi) {
            for (uint64_t i = lo; i < hi; ++i) {
                // Separate roundings of the product and the sum (CMakeLists.txt turns
                // FP contraction off), branch-free so that it vectorises.
                const float step = dt * bf16_value(vel[i]);
                const float sum = bf16_value(x[i]) + step;
                x[i] = bf16_round(sum);
            }
        });
    });
}

std::shared_ptr<const Executable> gpu_add_f32(const ProgramImage& image) {
    const auto n = static_cast<uint64_t>(int_config(image, "elements"));
    const float delta = f32_config(image, "delta");
    return builtin([n, delta](const Span* v) {
        auto* c = reinterpret_cast<float*>(v[0].data);
        elementwise(n, [c, delta](uint64_t lo, uint64_t hi) {
            for (uint64_t i = lo; i < hi; ++i) c[i] = c[i] + delta;
        });
    });
}

}  // namespace

std::shared_ptr<const Executable> load_builtin(const ProgramImage& image) {
    const std::string& s = image.symbol;
    if (image.engine == Engine::Gpu) {
        if (s == "transform_i32") return gpu_transform_i32(image);
        if (s == "euler_bf16") return gpu_euler_bf16(image);
        if (s == "add_f32") return gpu_add_f32(image);
    }
    fail(ErrorKind::Message, std::string("the emulated ") + engine_name(image.engine) + " has no built-in program '" +
                                 s + "'");
}

}  // namespace hrx::provider::emulated
