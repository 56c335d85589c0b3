// DLPack export and import (array/dlpack.h): Note [DLPack ownership], Note
// [Read-only DLPack exports].
#include "array/dlpack.h"

#include <algorithm>
#include <climits>
#include <utility>

#include "array/host_transfer.h"
#include "array/ops.h"
#include "checked.h"
#include "errors.h"
#include "runtime/import.h"
#include "runtime/runtime.h"

namespace hrx {

using namespace dlpack;

namespace {

[[noreturn]] void buffer_error(const std::string& message) { fail(ErrorKind::Buffer, message); }

// --- dtypes -------------------------------------------------------------------

// A DLPack data type as the NumPy-style name hrxarray uses ("float32",
// "bfloat16", ...); BufferError for types hrxarray cannot import.
std::string import_dtype_name(const DLDataType& t) {
    const std::string what = "(code " + std::to_string(t.code) + ", bits " + std::to_string(t.bits) + ", lanes " +
                             std::to_string(t.lanes) + ")";
    if (t.lanes != 1) buffer_error("DLPack import: vector dtypes are not supported: " + what);
    const bool int_bits = t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
    switch (t.code) {
        case kDLBool:
            if (t.bits == 8) return "bool";
            break;
        case kDLInt:
            if (int_bits) return "int" + std::to_string(t.bits);
            break;
        case kDLUInt:
            if (int_bits) return "uint" + std::to_string(t.bits);
            break;
        case kDLFloat:
            if (t.bits == 16 || t.bits == 32 || t.bits == 64) return "float" + std::to_string(t.bits);
            break;
        case kDLBfloat:
            if (t.bits == 16) return "bfloat16";
            break;
        case kDLComplex:
            if (t.bits == 64 || t.bits == 128) return "complex" + std::to_string(t.bits);
            break;
        default: break;
    }
    buffer_error("DLPack import: unsupported dtype " + what);
}

// The DLPack data type of an export; BufferError for bfp16 blocks.
DLDataType export_dtype(DType t, const std::string& op) {
    const uint8_t bits = static_cast<uint8_t>(dtype_itemsize(t) * 8);
    switch (dtype_info(t).kind) {
        case DTypeKind::Bool: return {kDLBool, 8, 1};
        case DTypeKind::Signed: return {kDLInt, bits, 1};
        case DTypeKind::Unsigned: return {kDLUInt, bits, 1};
        case DTypeKind::Float: return {t == DType::BFloat16 ? kDLBfloat : kDLFloat, bits, 1};
        case DTypeKind::Complex: return {kDLComplex, bits, 1};
        case DTypeKind::Block: break;
    }
    buffer_error(op + ": bfp16 block arrays have no DLPack dtype; export x.astype(hx.float32) or the raw blocks "
                      "x.blocks()");
}

// --- export ------------------------------------------------------------------

// One allocation holds the managed tensor (either form), its shape and
// strides, and the lease it stands for.
struct ExportContext {
    DLManagedTensor legacy{};
    DLManagedTensorVersioned versioned{};
    Dims shape;
    Dims strides;
    std::shared_ptr<StorageState> state;  // keep: the storage outlives every export
    uint64_t lease = 0;

    ~ExportContext() {
        if (state) state->release_host_lease(lease);
    }
};

// The managed tensors' deleters: pure C++ (Note [DLPack ownership]).
void delete_legacy(DLManagedTensor* self) noexcept { delete static_cast<ExportContext*>(self->manager_ctx); }
void delete_versioned(DLManagedTensorVersioned* self) noexcept {
    delete static_cast<ExportContext*>(self->manager_ctx);
}

// The managed tensor over `a` (its element [0, ...], strides in elements),
// taking over host lease `lease` of a's storage.
DlpackExport make_managed(const Array& a, uint64_t lease, DLDataType dl, DLDevice device, bool readonly, bool copied,
                          bool versioned) {
    auto ctx = std::make_unique<ExportContext>();
    // From here the context's destructor gives the lease back on any error.
    ctx->lease = lease;
    ctx->state = a.base->storage();
    ctx->shape = a.shape;
    const int64_t item = dtype_itemsize(a.dtype);
    ctx->strides.resize(a.strides.size());
    for (size_t i = 0; i < a.strides.size(); ++i) ctx->strides[i] = a.strides[i] / item;

    DLTensor t{};
    t.data = a.data();
    t.device = device;
    t.ndim = static_cast<int32_t>(a.shape.size());
    t.dtype = dl;
    // ndim 0: NULL shape and strides, as the spec allows; otherwise strides
    // are always given (v1.2 forbids NULL strides for ndim > 0).
    t.shape = a.shape.empty() ? nullptr : ctx->shape.data();
    t.strides = a.shape.empty() ? nullptr : ctx->strides.data();
    t.byte_offset = 0;  // consumers that ignore byte_offset still see the right data

    ExportContext* raw = ctx.release();
    if (versioned) {
        auto& m = raw->versioned;
        m.version = {kMajorVersion, kMinorVersion};
        m.manager_ctx = raw;
        m.deleter = &delete_versioned;
        m.flags = (readonly ? kFlagReadOnly : 0) | (copied ? kFlagIsCopied : 0);
        m.dl_tensor = t;
        return DlpackExport(&m, true);
    }
    // The legacy struct has no flags: READ_ONLY and IS_COPIED are lost
    // (callers that must signal read-only ask for a versioned capsule).
    auto& m = raw->legacy;
    m.dl_tensor = t;
    m.manager_ctx = raw;
    m.deleter = &delete_legacy;
    return DlpackExport(&m, false);
}

// --- import ------------------------------------------------------------------

// The byte span of a tensor whose strides count elements (DLPack's unit), or
// nullopt when a byte stride or the span overflows int64 (Note [Checked
// arithmetic]). The shape must be nonnegative.
std::optional<ByteSpan> element_span(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                                     int64_t itemsize) {
    Dims byte_strides(strides.size());
    for (size_t i = 0; i < strides.size(); ++i) {
        const auto s = (Checked<int64_t>(strides[i]) * itemsize).get();
        if (!s) return std::nullopt;
        byte_strides[i] = *s;
    }
    return strided_span(shape, byte_strides, itemsize);
}

}  // namespace

DlpackExport::~DlpackExport() {
    if (!managed_) return;
    if (versioned_) {
        auto* m = static_cast<DLManagedTensorVersioned*>(managed_);
        m->deleter(m);
    } else {
        auto* m = static_cast<DLManagedTensor*>(managed_);
        m->deleter(m);
    }
}

DLDevice dlpack_device(const Array& a) {
    if (a.placement().host_mapped()) return {kDLCPU, 0};
    return {kDLROCM, static_cast<int32_t>(runtime_of(a).options().gpu_index)};
}

DlpackExport dlpack_export(const Array& a, const DlpackExportRequest& r) {
    // Built only for messages: the export path itself formats no strings.
    const auto op = [&a] { return "__dlpack__ of " + a.describe(); };
    const DLDevice own = dlpack_device(a);
    const DLDevice target = r.device.value_or(own);
    const bool to_cpu_copy = target.device_type == kDLCPU && own.device_type == kDLROCM;
    if (!(target.device_type == own.device_type && target.device_id == own.device_id) && !to_cpu_copy)
        buffer_error(op() + ": cannot export to device (" + std::to_string(target.device_type) + ", " +
                     std::to_string(target.device_id) + "); the array lives on (" + std::to_string(own.device_type) +
                     ", " + std::to_string(own.device_id) + ") and only a copy to the CPU (1, 0) is offered");
    if (to_cpu_copy && r.copy == 0)
        buffer_error(op() + ": a kDLCPU export of GpuLocal memory needs a copy, and copy=False forbids it");
    // Streams: kDLCPU exports take None or -1; ROCm ones the ROCm conventions
    // (None: legacy default, 0: default stream, > 2: a stream handle; 1 and 2
    // are CUDA-only; -1: no synchronisation).
    if (r.stream) {
        const int64_t s = *r.stream;
        if (target.device_type == kDLCPU && s != -1)
            fail(ErrorKind::Message, op() + ": stream must be None or -1 for a kDLCPU export, got " + std::to_string(s));
        if (target.device_type == kDLROCM && (s == 1 || s == 2 || s < -1))
            fail(ErrorKind::Message, op() + ": stream " + std::to_string(s) +
                                         " is not a ROCm stream (use None, 0, -1 or a stream handle > 2)");
    }
    const DLDataType dl = export_dtype(a.dtype, a.dtype == DType::BFP16 ? op() : std::string());
    // Note [Read-only DLPack exports].
    const bool readonly = a.base->readonly() || r.readonly_requested || r.never_writes;
    if (readonly && !r.versioned && !r.never_writes)
        buffer_error(op() + (a.base->readonly() ? ": a read-only array" : ": a read-only export") +
                     " cannot be exported through a legacy DLPack capsule, which cannot signal read-only; ask for "
                     "max_version=(1, 0) or newer");
    // Host consumers have no stream to order against: every export waits for
    // the pending writers (stream -1 included, which only asks the producer
    // not to synchronise a device stream).
    wait_ready(a);
    if (r.copy == 1 || to_cpu_copy) {
        // IS_COPIED: a private, writable, C-contiguous host copy the consumer owns.
        const host_transfer::LeasedCopy c = host_transfer::leased_copy(a, op(), "__dlpack__", "DLPack export (copied)");
        return make_managed(c.array, c.lease, dl, DLDevice{kDLCPU, 0}, false, true, r.versioned);
    }
    const char* label = r.never_writes && !a.base->readonly() && !r.readonly_requested
                            ? "DLPack export (read-only, to JAX)"
                        : readonly ? "DLPack export (read-only)"
                                   : "DLPack export (writable)";
    const uint64_t lease = host_transfer::take_lease(a, !readonly, "__dlpack__", label);
    return make_managed(a, lease, dl, target, readonly, false, r.versioned);
}

DlpackImportPlan dlpack_plan_import(const DLTensor& t, bool versioned, uint64_t flags) {
    const std::string op = "DLPack import";
    if (t.device.device_type != kDLCPU)
        buffer_error(op + ": only CPU (kDLCPU) tensors can be imported zero-copy; got device type " +
                     std::to_string(t.device.device_type));
    DlpackImportPlan p;
    p.dtype = import_dtype_name(t.dtype);
    const int64_t itemsize = t.dtype.bits / 8;
    if (t.ndim < 0 || t.ndim > kMaxDims) fail(ErrorKind::Message, op + ": unsupported ndim " + std::to_string(t.ndim));
    if (t.ndim > 0 && !t.shape) fail(ErrorKind::Message, op + ": the tensor has ndim > 0 but no shape");
    p.shape.assign(t.shape, t.shape + t.ndim);
    DType element_type;
    dtype_from_name(p.dtype, &element_type);
    checked_size(p.shape, element_type, op);  // the element count fits (and no entry is negative)
    p.strides.resize(static_cast<size_t>(t.ndim));
    if (t.strides) {
        std::copy(t.strides, t.strides + t.ndim, p.strides.begin());
    } else {  // NULL strides (producers before v1.2): compact row-major; checked_size bounds the products
        int64_t s = 1;
        for (int32_t i = t.ndim - 1; i >= 0; --i) {
            p.strides[static_cast<size_t>(i)] = s;
            s *= std::max<int64_t>(p.shape[static_cast<size_t>(i)], 1);
        }
    }
    // Strides and byte_offset with checked arithmetic (Note [Checked arithmetic]).
    for (size_t i = 0; i < p.shape.size(); ++i)
        if (p.strides[i] < 0)
            buffer_error(op + ": negative strides are not supported (dimension " + std::to_string(i) + " has stride " +
                         std::to_string(p.strides[i]) + ")");
    const auto where = [&] {
        return " (shape " + shape_str(p.shape) + ", strides " + shape_str(p.strides) + " in " +
               std::to_string(itemsize) + "-byte elements, byte_offset " + std::to_string(t.byte_offset) + ")";
    };
    const auto span = element_span(p.shape, p.strides, itemsize);
    if (!span) fail(ErrorKind::Message, op + ": the tensor's byte extent overflows" + where());
    p.data = static_cast<uint8_t*>(t.data);
    if (span->hi != 0) {
        // Offsets into the storage are int64, and the range must not wrap around
        // the address space (a byte_offset that does would address memory before
        // the producer's data).
        const auto end = Checked<int64_t>::from(t.byte_offset) + span->hi;
        const bool fits = end.ok() && (Checked<uintptr_t>(reinterpret_cast<uintptr_t>(t.data)) +
                                       static_cast<uintptr_t>(*end.get()))
                                          .ok();
        if (!fits) fail(ErrorKind::Message, op + ": byte_offset plus the tensor's extent overflows" + where());
        p.offset = t.byte_offset;
        p.bytes = static_cast<uint64_t>(span->hi);
    }
    if (!p.data && p.bytes != 0) fail(ErrorKind::Message, op + ": the tensor has elements but a NULL data pointer");
    // A legacy capsule cannot say read-only, so it may come from a producer
    // whose data must not change (a JAX array): import it read-only, as NumPy
    // does; only a versioned capsule's flags can grant writes.
    p.readonly = !versioned || (flags & kFlagReadOnly) != 0;
    return p;
}

DlpackImport dlpack_import(RuntimeCore& runtime, DlpackImportPlan plan, std::function<void()> release) {
    std::shared_ptr<Buffer> buffer =
        import_host_memory(runtime, plan.data, plan.offset + plan.bytes, std::move(release), plan.readonly);
    return DlpackImport{std::move(buffer), plan.offset, std::move(plan.shape), std::move(plan.strides),
                        std::move(plan.dtype), plan.readonly};
}

}  // namespace hrx
