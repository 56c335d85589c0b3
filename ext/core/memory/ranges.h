// Byte ranges and HRX's host-visibility range normalisation.
#pragma once
#include <cstdint>
#include <vector>

namespace hrx {

// Half-open byte range [start, end).
struct ByteRange {
    uint64_t start = 0;
    uint64_t end = 0;
    uint64_t length() const { return end - start; }
    bool operator==(const ByteRange&) const = default;
};

// HRX's rule for prepare_release_host / prepare_acquire_host: every range must
// satisfy start <= end <= len (else Message "visibility range out of bounds",
// checked for all ranges before anything else); empty ranges are dropped; the
// rest are sorted by start and merged when they overlap or touch
// (previous.end >= next.start), so holes survive.
std::vector<ByteRange> merge_ranges(const std::vector<ByteRange>& ranges, uint64_t len);

}  // namespace hrx
