#include "memory/ranges.h"

#include <algorithm>
#include <string>

#include "errors.h"

namespace hrx {

std::vector<ByteRange> merge_ranges(const std::vector<ByteRange>& ranges, uint64_t len) {
    for (const auto& r : ranges) {
        if (r.start > r.end || r.end > len) {
            fail(ErrorKind::Message, "visibility range out of bounds: " + std::to_string(r.start) + ".." +
                                         std::to_string(r.end) + " over a buffer of " + std::to_string(len) +
                                         " bytes");
        }
    }
    std::vector<ByteRange> sorted;
    sorted.reserve(ranges.size());
    for (const auto& r : ranges)
        if (r.start < r.end) sorted.push_back(r);
    std::sort(sorted.begin(), sorted.end(),
              [](const ByteRange& a, const ByteRange& b) { return a.start < b.start; });
    std::vector<ByteRange> merged;
    for (const auto& r : sorted) {
        if (!merged.empty() && merged.back().end >= r.start)
            merged.back().end = std::max(merged.back().end, r.end);
        else
            merged.push_back(r);
    }
    return merged;
}

}  // namespace hrx
