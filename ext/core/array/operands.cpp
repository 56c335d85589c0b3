#include "array/operands.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "errors.h"
#include "kernels/elementwise.h"

namespace hrx {

namespace {

// One element of `src_dtype` at `src` cast to `dt` into `out` (kernels' casts,
// so scalars convert exactly as arrays do).
void cast_one(const void* src, DType src_dtype, DType dt, uint8_t* out) {
    kernels::copy_cast(0, nullptr,
                       kernels::StridedArg{const_cast<uint8_t*>(static_cast<const uint8_t*>(src)), src_dtype, nullptr},
                       kernels::StridedArg{out, dt, nullptr});
}

Operand scalar_of(DType dt) {
    Operand o;
    o.scalar = true;
    o.dtype = dt;
    return o;
}

// Whether an integer (int64 `v`, or above int64 when `above`) fits `dt`.
bool int_fits(DType dt, int64_t v, bool above) {
    if (above) return dt == DType::UInt64;
    switch (dt) {
        case DType::Int8: return v >= -128 && v <= 127;
        case DType::Int16: return v >= -32768 && v <= 32767;
        case DType::Int32: return v >= INT32_MIN && v <= INT32_MAX;
        case DType::Int64: return true;
        case DType::UInt8: return v >= 0 && v <= 255;
        case DType::UInt16: return v >= 0 && v <= 65535;
        case DType::UInt32: return v >= 0 && v <= static_cast<int64_t>(UINT32_MAX);
        case DType::UInt64: return v >= 0;
        default: return true;
    }
}

std::string int_text(const Scalar& s) {
    switch (s.range) {
        case Scalar::IntRange::Int64: return std::to_string(s.i);
        case Scalar::IntRange::UInt64: return std::to_string(s.u);
        case Scalar::IntRange::Beyond: break;
    }
    return s.text;
}

// The exact decimal of an integral double beyond 64 bits (what Python's
// str(int(d)) prints): its 53-bit mantissa doubled exponent times, in base 1e9.
std::string exact_decimal(double d) {
    int e = 0;
    const double frac = std::frexp(std::fabs(d), &e);
    uint64_t m = static_cast<uint64_t>(std::ldexp(frac, 53));
    std::vector<uint32_t> limbs;  // little-endian, base 1e9
    while (m) {
        limbs.push_back(static_cast<uint32_t>(m % 1000000000u));
        m /= 1000000000u;
    }
    for (int k = 0; k < e - 53; ++k) {
        uint32_t carry = 0;
        for (uint32_t& l : limbs) {
            const uint64_t x = static_cast<uint64_t>(l) * 2 + carry;
            l = static_cast<uint32_t>(x % 1000000000u);
            carry = static_cast<uint32_t>(x / 1000000000u);
        }
        if (carry) limbs.push_back(carry);
    }
    std::string out = d < 0 ? "-" : "";
    out += std::to_string(limbs.back());
    for (size_t k = limbs.size() - 1; k-- > 0;) {
        const std::string part = std::to_string(limbs[k]);
        out += std::string(9 - part.size(), '0') + part;
    }
    return out;
}

// A Python int as an operand of `dt`: OverflowError when it does not fit an
// integer dtype (NumPy 2's message); floats round once from the exact value.
Operand int_operand(const Scalar& s, DType dt, const std::string& op) {
    Operand o = scalar_of(dt);
    const bool fits64 = s.range != Scalar::IntRange::Beyond;
    const bool above = s.range == Scalar::IntRange::UInt64;
    if (dtype_is_integer(dt) ? !fits64 || !int_fits(dt, s.i, above) : !fits64 && dt != DType::Bool) {
        if (dtype_is_integer(dt))
            fail(ErrorKind::Overflow, op + ": Python integer " + int_text(s) + " out of bounds for " + dtype_name(dt));
        if (s.d_overflows)
            fail(ErrorKind::Overflow,
                 op + ": Python integer " + s.text + " is too large to convert to " + dtype_name(dt));
        cast_one(&s.d, DType::Float64, dt, o.value);
        return o;
    }
    if (!fits64) {
        const uint8_t nonzero = 1;  // beyond 64 bits, so not zero
        cast_one(&nonzero, DType::Bool, dt, o.value);
    } else if (above) {
        cast_one(&s.u, DType::UInt64, dt, o.value);
    } else {
        cast_one(&s.i, DType::Int64, dt, o.value);
    }
    return o;
}

// A Python float as an operand of `dt`. Into an integer dtype it goes as NumPy
// assigns a Python float to an integer array: through int(value), so NaN is a
// ValueError, infinity and out-of-range values an OverflowError.
Operand float_operand(double d, DType dt, const std::string& op) {
    if (dtype_is_integer(dt)) {
        if (std::isnan(d)) fail(ErrorKind::Message, op + ": cannot convert float NaN to integer (" + dtype_name(dt) + ")");
        if (std::isinf(d))
            fail(ErrorKind::Overflow, op + ": cannot convert float infinity to integer (" + dtype_name(dt) + ")");
        Scalar s;
        const double t = std::trunc(d);
        if (t >= -0x1p63 && t < 0x1p63) {
            s.i = static_cast<int64_t>(t);
        } else if (t >= 0 && t < 0x1p64) {
            s.range = Scalar::IntRange::UInt64;
            s.u = static_cast<uint64_t>(t);
        } else {
            s.range = Scalar::IntRange::Beyond;
            s.text = exact_decimal(t);
            s.d = t;
        }
        return int_operand(s, dt, op);
    }
    Operand o = scalar_of(dt);
    cast_one(&d, DType::Float64, dt, o.value);
    return o;
}

}  // namespace

Operand scalar_operand(const Scalar& s, DType dt, const std::string& op) {
    if (!s.weak) {
        // Typed scalars are exact in their own dtype, then cast to dt as
        // arrays are (NumPy assigns them with an unsafe cast).
        Operand o = scalar_of(dt);
        cast_one(s.value, s.dtype, dt, o.value);
        return o;
    }
    switch (s.kind) {
        case Scalar::Kind::Bool: {
            Operand o = scalar_of(dt);
            const uint8_t b = s.b;
            cast_one(&b, DType::Bool, dt, o.value);
            return o;
        }
        case Scalar::Kind::Int: return int_operand(s, dt, op);
        case Scalar::Kind::Float: return float_operand(s.d, dt, op);
        case Scalar::Kind::Complex: break;
    }
    // NumPy refuses to store a complex number in a real array (float(1j) is
    // a TypeError), and so does this.
    if (!dtype_is_complex(dt))
        fail(ErrorKind::Type, op + ": cannot convert the complex number " + s.text + " to " + dtype_name(dt));
    const double parts[2] = {s.re, s.im};
    Operand o = scalar_of(dt);
    cast_one(parts, DType::Complex128, dt, o.value);
    return o;
}

const Dims& Input::shape() const {
    static const Dims none{};
    switch (kind) {
        case Kind::Device: return device->shape;
        case Kind::Host: return host.shape;
        case Kind::Scalar: break;
    }
    return none;
}

void note_array(Context& cx, const Array& a, const std::string& op) {
    RuntimeCore& r = runtime_of(a);
    if (!cx.have) {
        cx.rt = r.shared_from_this();
        cx.placement = a.placement();
        cx.have = true;
    } else if (cx.rt.get() != &r) {
        fail(ErrorKind::Message, op + ": operands belong to different runtimes");
    }
}

void finish_context(Context& cx, const CallEnv& env) {
    if (cx.have) return;
    auto [rt, placement] = env.defaults();
    cx.rt = std::move(rt);
    cx.placement = std::move(placement);
    cx.have = true;
}

void upload(std::span<Input> inputs, Context& cx, const CallEnv& env, const std::string& op) {
    for (Input& in : inputs)
        if (in.kind == Input::Kind::Host && !in.uploaded.base) {
            finish_context(cx, env);
            in.uploaded = host_transfer::upload(*cx.rt, cx.placement, in.host, op);
        }
}

void resolve_weak(std::span<Input> inputs, const bool* mask, bool comparison) {
    auto weak = [](const Input& in) { return in.kind == Input::Kind::Scalar && in.scalar.weak; };
    bool any = false;
    DType p = DType::Bool;
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (!mask[i] || weak(inputs[i]) || inputs[i].dtype == DType::BFP16) continue;
        p = any ? promote_types(p, inputs[i].dtype) : inputs[i].dtype;
        any = true;
    }
    for (Input& in : inputs) {
        if (!weak(in)) continue;
        const Scalar& s = in.scalar;
        in.dtype = weak_dtype(s.kind, any, p);
        // Comparisons with out-of-range integers are exact in NumPy 2:
        // compare in a dtype that holds the value.
        if (s.kind == Scalar::Kind::Int && comparison && dtype_is_integer(in.dtype) &&
            (s.range == Scalar::IntRange::Beyond || !int_fits(in.dtype, s.i, s.range == Scalar::IntRange::UInt64)))
            in.dtype = s.range == Scalar::IntRange::Beyond   ? DType::Float64
                       : s.range == Scalar::IntRange::UInt64 ? DType::UInt64
                                                             : DType::Int64;
    }
}

DType weak_dtype(Scalar::Kind kind, bool any, DType p) {
    switch (kind) {
        case Scalar::Kind::Bool: return DType::Bool;
        case Scalar::Kind::Int: return any && p != DType::Bool ? p : DType::Int64;
        case Scalar::Kind::Float: return any && (dtype_is_float(p) || dtype_is_complex(p)) ? p : DType::Float64;
        case Scalar::Kind::Complex:
            // NEP 50: the complex dtype of the typed operands' float kind
            // (float16, bfloat16, float32: complex64), complex128 otherwise.
            return !any || !(dtype_is_float(p) || dtype_is_complex(p)) ? DType::Complex128
                                                                      : promote_types(p, DType::Complex64);
    }
    return DType::Float64;
}

DType result_type(std::span<const DType> typed, std::span<const Scalar::Kind> weak) {
    if (typed.empty())
        fail(ErrorKind::Message, "result_type: at least one array or dtype is needed (Python scalars alone have no dtype)");
    DType p = typed[0];
    for (size_t i = 1; i < typed.size(); ++i) p = promote_types(p, typed[i]);
    DType out = p;
    for (Scalar::Kind k : weak) out = promote_types(out, weak_dtype(k, true, p));
    return out;
}

Operand to_operand(const Input& in, const std::string& op) {
    if (in.kind == Input::Kind::Scalar) return scalar_operand(in.scalar, in.dtype, op);
    return Operand::borrow(in.array());
}

std::string np_dtype_str(DType t) { return std::string("dtype('") + dtype_name(t) + "')"; }

void preflight_read(const Array& a, Lane lane, const std::string& op) {
    check_lane_binding(a, lane, op);
    check_device_use(a, Access::Read, op);
}

}  // namespace hrx
