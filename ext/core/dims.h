// Dims: the shape or strides of an array, a small vector of int64 that keeps
// up to kInline entries without touching the heap. Array operations copy
// shapes and strides several times per call, and the per-operation budget
// (about 2 µs from Python) has no room for a malloc per copy.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <type_traits>
#include <vector>

namespace hrx {

class Dims {
public:
    static constexpr uint32_t kInline = 6;
    using value_type = int64_t;
    using iterator = int64_t*;
    using const_iterator = const int64_t*;

    Dims() = default;
    explicit Dims(size_t n, int64_t v = 0) { assign(n, v); }
    Dims(std::initializer_list<int64_t> l) { assign_range(l.begin(), l.end()); }
    template <typename It>
        requires(!std::is_integral_v<It>)
    Dims(It first, It last) {
        reserve(static_cast<size_t>(std::distance(first, last)));
        for (; first != last; ++first) push_back(static_cast<int64_t>(*first));
    }
    Dims(const std::vector<int64_t>& v) { assign_range(v.data(), v.data() + v.size()); }  // NOLINT: implicit by design
    Dims(const Dims& o) { assign_range(o.begin(), o.end()); }
    Dims(Dims&& o) noexcept { steal(o); }
    Dims& operator=(const Dims& o) {
        if (this != &o) assign_range(o.begin(), o.end());
        return *this;
    }
    Dims& operator=(Dims&& o) noexcept {
        if (this != &o) {
            release();
            steal(o);
        }
        return *this;
    }
    ~Dims() { release(); }

    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    int64_t* data() { return ptr(); }
    const int64_t* data() const { return ptr(); }
    int64_t& operator[](size_t i) { return ptr()[i]; }
    int64_t operator[](size_t i) const { return ptr()[i]; }
    iterator begin() { return ptr(); }
    iterator end() { return ptr() + size_; }
    const_iterator begin() const { return ptr(); }
    const_iterator end() const { return ptr() + size_; }
    int64_t& back() { return ptr()[size_ - 1]; }
    int64_t back() const { return ptr()[size_ - 1]; }

    void clear() { size_ = 0; }
    void reserve(size_t n) {
        if (n <= cap_) return;
        auto* fresh = new int64_t[n];
        if (size_) std::memcpy(fresh, ptr(), size_ * sizeof(int64_t));
        release();
        heap_ = fresh;
        cap_ = static_cast<uint32_t>(n);
    }
    void resize(size_t n, int64_t v = 0) {
        reserve(n);
        for (size_t i = size_; i < n; ++i) ptr()[i] = v;
        size_ = static_cast<uint32_t>(n);
    }
    void assign(size_t n, int64_t v) {
        size_ = 0;
        resize(n, v);
    }
    void push_back(int64_t v) {
        if (size_ == cap_) reserve(std::max<size_t>(2 * cap_, 8));
        ptr()[size_++] = v;
    }
    iterator insert(const_iterator pos, int64_t v) {
        const size_t at = static_cast<size_t>(pos - begin());
        push_back(0);
        std::memmove(ptr() + at + 1, ptr() + at, (size_ - 1 - at) * sizeof(int64_t));
        ptr()[at] = v;
        return begin() + at;
    }
    iterator erase(const_iterator pos) {
        const size_t at = static_cast<size_t>(pos - begin());
        std::memmove(ptr() + at, ptr() + at + 1, (size_ - 1 - at) * sizeof(int64_t));
        --size_;
        return begin() + at;
    }
    std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }

    friend bool operator==(const Dims& a, const Dims& b) {
        return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
    }
    friend bool operator!=(const Dims& a, const Dims& b) { return !(a == b); }

private:
    int64_t* ptr() { return heap_ ? heap_ : inline_; }
    const int64_t* ptr() const { return heap_ ? heap_ : inline_; }
    template <typename It>
    void assign_range(It first, It last) {
        size_ = 0;
        reserve(static_cast<size_t>(last - first));
        for (; first != last; ++first) ptr()[size_++] = *first;
    }
    void release() {
        delete[] heap_;
        heap_ = nullptr;
        cap_ = kInline;
    }
    void steal(Dims& o) {
        size_ = o.size_;
        if (o.heap_) {
            heap_ = o.heap_;
            cap_ = o.cap_;
            o.heap_ = nullptr;
            o.cap_ = kInline;
        } else {
            heap_ = nullptr;
            cap_ = kInline;
            std::memcpy(inline_, o.inline_, size_ * sizeof(int64_t));
        }
        o.size_ = 0;
    }

    int64_t* heap_ = nullptr;
    uint32_t size_ = 0;
    uint32_t cap_ = kInline;
    int64_t inline_[kInline];
};

}  // namespace hrx
