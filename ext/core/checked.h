// Checked integer arithmetic for sizes, strides and offsets that come from
// outside: array shapes, DLPack capsules, raw kernel entries.
//
// Note [Checked arithmetic]: a product of user-controlled sizes that wraps
// around passes every later bounds check with a small, wrong value and turns
// into an out-of-bounds access (or a division by zero) far from the call that
// was wrong. Every validation that multiplies or adds such values therefore
// goes through Checked<T>: overflow is sticky, so a chain of operations needs
// one test at the end (ok() or get()), and the caller raises an error that
// names the operation and the offending argument. Arithmetic on values an
// earlier check already bounded (a validated array's extent) may use it too;
// it costs one flag test per step.
#pragma once
#include <concepts>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>

namespace hrx {

template <std::integral T>
class Checked {
public:
    constexpr Checked(T v) : v_(v) {}  // NOLINT: implicit, so plain operands mix in
    // `v` converted to T; invalid when T cannot represent it.
    template <std::integral U>
    static constexpr Checked from(U v) {
        Checked c(static_cast<T>(v));
        c.ok_ = std::in_range<T>(v);
        return c;
    }

    constexpr bool ok() const { return ok_; }
    constexpr std::optional<T> get() const { return ok_ ? std::optional<T>(v_) : std::nullopt; }

    friend constexpr Checked operator+(Checked a, Checked b) {
        a.ok_ = a.ok_ && b.ok_ && !__builtin_add_overflow(a.v_, b.v_, &a.v_);
        return a;
    }
    friend constexpr Checked operator-(Checked a, Checked b) {
        a.ok_ = a.ok_ && b.ok_ && !__builtin_sub_overflow(a.v_, b.v_, &a.v_);
        return a;
    }
    friend constexpr Checked operator*(Checked a, Checked b) {
        a.ok_ = a.ok_ && b.ok_ && !__builtin_mul_overflow(a.v_, b.v_, &a.v_);
        return a;
    }
    constexpr Checked& operator+=(Checked o) { return *this = *this + o; }
    constexpr Checked& operator-=(Checked o) { return *this = *this - o; }
    constexpr Checked& operator*=(Checked o) { return *this = *this * o; }

private:
    T v_;
    bool ok_ = true;
};

// The bytes a strided layout touches, relative to element [0, ...]: [lo, hi)
// with lo <= 0 < hi, or {0, 0} when the layout has no element.
struct ByteSpan {
    int64_t lo = 0;
    int64_t hi = 0;
};

// The span of `shape` (nonnegative; the caller checks) with byte `strides`
// (any sign) and elements of `itemsize` bytes; nullopt when it overflows int64.
inline std::optional<ByteSpan> strided_span(std::span<const int64_t> shape, std::span<const int64_t> strides,
                                            int64_t itemsize) {
    for (int64_t n : shape)
        if (n == 0) return ByteSpan{};
    Checked<int64_t> lo = 0, hi = itemsize;
    for (size_t i = 0; i < shape.size(); ++i) {
        const Checked<int64_t> reach = Checked<int64_t>(shape[i] - 1) * strides[i];
        if (strides[i] < 0)
            lo += reach;
        else
            hi += reach;
    }
    if (!lo.ok() || !hi.ok()) return std::nullopt;
    return ByteSpan{*lo.get(), *hi.get()};
}

}  // namespace hrx
