// Per-thread packing buffers and small index arithmetic shared by the GEMM
// drivers (gemm.cpp, amx.cpp); internal to the kernels library.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace hrx::kernels::detail {

inline std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// A 64-byte aligned scratch area that grows as needed and stays with the
// thread (so repeated calls touch no new pages), unless it grew past
// kKeepBytes (twice the drivers' 8 MiB B chunk), in which case
// release_if_large() gives it back.
template <class T>
class Scratch {
public:
    T* get(std::size_t count) {
        const std::size_t need = count + 64 / sizeof(T);
        if (buf_.size() < need) buf_.resize(need);
        T* p = buf_.data();
        const std::size_t mis = (reinterpret_cast<std::uintptr_t>(p) % 64) / sizeof(T);
        return mis ? p + (64 / sizeof(T) - mis) : p;
    }
    void release_if_large() {
        if (buf_.size() * sizeof(T) > kKeepBytes) std::vector<T>().swap(buf_);
    }

private:
    static constexpr std::size_t kKeepBytes = 16u << 20;
    std::vector<T> buf_;
};

}  // namespace hrx::kernels::detail
