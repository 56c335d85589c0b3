#include "memory/guards.h"

#include "checked.h"
#include "errors.h"

namespace hrx {

namespace {

std::string map_op(const Buffer& b, bool write, bool wait) {
    return std::string(wait ? "" : "try_") + (write ? "map_write" : "map_read") + " on " + b.describe();
}

uint64_t checked_len(const std::string& op, uint64_t base_len, int64_t offset, std::optional<int64_t> length) {
    // base_len - offset may overflow for a hostile offset (Note [Checked arithmetic]).
    const auto rest = Checked<int64_t>::from(base_len) - offset;
    const int64_t len = length ? *length : rest.get().value_or(-1);
    if (offset < 0 || len < 0 || static_cast<uint64_t>(offset) > base_len ||
        static_cast<uint64_t>(len) > base_len - static_cast<uint64_t>(offset))
        fail(ErrorKind::Message, op + ": buffer view is out of bounds (offset " + std::to_string(offset) +
                                     ", length " + std::to_string(len) + " over " + std::to_string(base_len) +
                                     " bytes)");
    return static_cast<uint64_t>(len);
}

}  // namespace

std::unique_ptr<HostMapping> HostMapping::acquire(std::shared_ptr<Buffer> buffer, bool write, bool wait) {
    const std::string op = map_op(*buffer, write, wait);
    buffer->require_host_mapped(op);
    buffer->state()->acquire_host(write, wait, op);
    return std::unique_ptr<HostMapping>(new HostMapping(std::move(buffer), write));
}

uint8_t* HostMapping::data() const {
    if (!active_) fail(ErrorKind::Message, "host mapping of " + buffer_->describe() + " was already released");
    return buffer_->state()->data();
}

std::unique_ptr<DeviceLease> DeviceLease::acquire(const Buffer& buffer, Access access) {
    buffer.state()->acquire_device_use(access);
    return std::unique_ptr<DeviceLease>(new DeviceLease(buffer.state(), access));
}

BufferView view_of(const std::shared_ptr<Buffer>& buffer, int64_t offset, std::optional<int64_t> length) {
    const uint64_t len = checked_len("view on " + buffer->describe(), buffer->nbytes(), offset, length);
    return BufferView{buffer, static_cast<uint64_t>(offset), len};
}

BufferView slice_of(const BufferView& view, int64_t offset, std::optional<int64_t> length) {
    const uint64_t len = checked_len("slice on a view of " + view.buffer->describe(), view.length, offset, length);
    return BufferView{view.buffer, view.offset + static_cast<uint64_t>(offset), len};
}

}  // namespace hrx
