// The ufunc table (names, identities, loops in NumPy's search order), loop
// resolution, and the strided driver of ufunc_run. The typed inner loops live
// in elementwise_{arith,compare,logic,unary,math}.cpp, the casts in casts.cpp.
#include "kernels/elementwise.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "errors.h"
#include "kernels/cpu_features.h"
#include "kernels/elementwise_impl.h"
#include "kernels/nditer.h"
#include "kernels/pool.h"

namespace hrx::kernels {

namespace {

// ---------------------------------------------------------------------------
// The table. Loops are written as NumPy writes ufunc.types ("ff->f", here
// "ff:f" since "??-" would be a trigraph), with 'E' for bfloat16 (ml_dtypes registers its loops for every op here but the bitwise
// ones and invert) and 'l'/'L' for int64/uint64; each list is the op's NumPy
// list restricted to these dtypes, in NumPy's order, with 'E' after 'e'.
// tests/test_elementwise_kernels.py checks resolution against NumPy.

constexpr int kMaxLoops = 20;

struct LoopList {
    UfuncLoop loops[kMaxLoops]{};
    std::uint8_t n = 0;
};

constexpr DType dtype_of_code(char c) {
    switch (c) {
        case '?': return DType::Bool;
        case 'b': return DType::Int8;
        case 'B': return DType::UInt8;
        case 'h': return DType::Int16;
        case 'H': return DType::UInt16;
        case 'i': return DType::Int32;
        case 'I': return DType::UInt32;
        case 'l': return DType::Int64;
        case 'L': return DType::UInt64;
        case 'e': return DType::Float16;
        case 'E': return DType::BFloat16;
        case 'f': return DType::Float32;
        case 'd': return DType::Float64;
        case 'F': return DType::Complex64;
        case 'D': return DType::Complex128;
        default: throw "bad loop type code";  // a compile error in a constant expression
    }
}

// "ff:f dd:d" -> loops.
constexpr LoopList parse(std::string_view spec) {
    LoopList r;
    std::size_t i = 0;
    while (i < spec.size()) {
        if (spec[i] == ' ') {
            ++i;
            continue;
        }
        UfuncLoop l{};
        int k = 0;
        while (spec[i] != ':') l.in[k++] = dtype_of_code(spec[i++]);
        ++i;
        l.out = dtype_of_code(spec[i++]);
        r.loops[r.n++] = l;
    }
    return r;
}

constexpr std::string_view kIntsFloats = "bb:b BB:B hh:h HH:H ii:i II:I ll:l LL:L ee:e EE:E ff:f dd:d";
constexpr std::string_view kArith = "bb:b BB:B hh:h HH:H ii:i II:I ll:l LL:L ee:e EE:E ff:f dd:d FF:F DD:D";
constexpr std::string_view kAllSame = "??:? bb:b BB:B hh:h HH:H ii:i II:I ll:l LL:L ee:e EE:E ff:f dd:d";
constexpr std::string_view kAllSameC =
    "??:? bb:b BB:B hh:h HH:H ii:i II:I ll:l LL:L ee:e EE:E ff:f dd:d FF:F DD:D";
constexpr std::string_view kCompare =
    "??:? bb:? BB:? hh:? HH:? ii:? II:? ll:? LL:? lL:? Ll:? ee:? EE:? ff:? dd:?";
constexpr std::string_view kEquality =
    "??:? bb:? BB:? hh:? HH:? ii:? II:? ll:? LL:? lL:? Ll:? ee:? EE:? ff:? dd:? FF:? DD:?";
constexpr std::string_view kLogical = "??:? bb:? BB:? hh:? HH:? ii:? II:? ll:? LL:? ee:? EE:? ff:? dd:? FF:? DD:?";
constexpr std::string_view kBitwise = "??:? bb:b BB:B hh:h HH:H ii:i II:I ll:l LL:L";
constexpr std::string_view kIntLoops = "bb:b BB:B hh:h HH:H ii:i II:I ll:l LL:L";
constexpr std::string_view kShift = kIntLoops;
constexpr std::string_view kUnaryNum = "b:b B:B h:h H:H i:i I:I l:l L:L e:e E:E f:f d:d F:F D:D";
constexpr std::string_view kUnaryAll = "?:? b:b B:B h:h H:H i:i I:I l:l L:L e:e E:E f:f d:d";
constexpr std::string_view kAbsolute = "?:? b:b B:B h:h H:H i:i I:I l:l L:L e:e E:E f:f d:d F:f D:d";
constexpr std::string_view kBinaryFloat = "ee:e EE:E ff:f dd:d";
constexpr std::string_view kUnaryFloat = "e:e E:E f:f d:d";
constexpr std::string_view kUnaryFloatC = "e:e E:E f:f d:d F:F D:D";
constexpr std::string_view kUnaryToBool = "?:? b:? B:? h:? H:? i:? I:? l:? L:? e:? E:? f:? d:? F:? D:?";
constexpr std::string_view kInvert = "?:? b:b B:B h:h H:H i:i I:I l:l L:L";
constexpr std::string_view kWhere =
    "???:? ?bb:b ?BB:B ?hh:h ?HH:H ?ii:i ?II:I ?ll:l ?LL:L ?ee:e ?EE:E ?ff:f ?dd:d ?FF:F ?DD:D";

struct Entry {
    const char* name;
    std::uint8_t nin;
    Identity identity;
    bool has_reduce;
    std::string_view loops;
};

// In Ufunc order.
constexpr Entry kEntries[kUfuncCount] = {
    {"add", 2, Identity::Zero, true, kAllSameC},
    {"subtract", 2, Identity::None, false, kArith},
    {"multiply", 2, Identity::One, true, kAllSameC},
    {"divide", 2, Identity::None, false, "ee:e EE:E ff:f dd:d FF:F DD:D"},
    {"floor_divide", 2, Identity::None, false, kIntsFloats},
    {"remainder", 2, Identity::None, false, kIntsFloats},
    {"power", 2, Identity::None, false, kArith},
    {"maximum", 2, Identity::None, true, kAllSame},
    {"minimum", 2, Identity::None, true, kAllSame},
    {"equal", 2, Identity::None, false, kEquality},
    {"not_equal", 2, Identity::None, false, kEquality},
    {"less", 2, Identity::None, false, kCompare},
    {"less_equal", 2, Identity::None, false, kCompare},
    {"greater", 2, Identity::None, false, kCompare},
    {"greater_equal", 2, Identity::None, false, kCompare},
    {"logical_and", 2, Identity::True, true, kLogical},
    {"logical_or", 2, Identity::False, true, kLogical},
    {"logical_xor", 2, Identity::False, true, kLogical},
    {"bitwise_and", 2, Identity::AllOnes, true, kBitwise},
    {"bitwise_or", 2, Identity::Zero, true, kBitwise},
    {"bitwise_xor", 2, Identity::Zero, true, kBitwise},
    {"left_shift", 2, Identity::None, false, kShift},
    {"right_shift", 2, Identity::None, false, kShift},
    {"negative", 1, Identity::None, false, kUnaryNum},
    {"positive", 1, Identity::None, false, kUnaryNum},
    {"absolute", 1, Identity::None, false, kAbsolute},
    {"sign", 1, Identity::None, false, kUnaryNum},
    {"exp", 1, Identity::None, false, kUnaryFloatC},
    {"log", 1, Identity::None, false, kUnaryFloatC},
    {"log1p", 1, Identity::None, false, kUnaryFloatC},
    {"expm1", 1, Identity::None, false, kUnaryFloatC},
    {"sqrt", 1, Identity::None, false, kUnaryFloatC},
    {"square", 1, Identity::None, false, kUnaryNum},
    {"sin", 1, Identity::None, false, kUnaryFloatC},
    {"cos", 1, Identity::None, false, kUnaryFloatC},
    {"tan", 1, Identity::None, false, kUnaryFloatC},
    {"tanh", 1, Identity::None, false, kUnaryFloatC},
    {"floor", 1, Identity::None, false, kUnaryAll},
    {"ceil", 1, Identity::None, false, kUnaryAll},
    {"trunc", 1, Identity::None, false, kUnaryAll},
    {"rint", 1, Identity::None, false, kUnaryFloatC},
    {"logical_not", 1, Identity::None, false, kUnaryToBool},
    {"invert", 1, Identity::None, false, kInvert},
    {"isnan", 1, Identity::None, false, kUnaryToBool},
    {"isinf", 1, Identity::None, false, kUnaryToBool},
    {"isfinite", 1, Identity::None, false, kUnaryToBool},
    {"conjugate", 1, Identity::None, false, kUnaryNum},
    {"sinh", 1, Identity::None, false, kUnaryFloatC},
    {"cosh", 1, Identity::None, false, kUnaryFloatC},
    {"arcsin", 1, Identity::None, false, kUnaryFloatC},
    {"arccos", 1, Identity::None, false, kUnaryFloatC},
    {"arctan", 1, Identity::None, false, kUnaryFloatC},
    {"arcsinh", 1, Identity::None, false, kUnaryFloatC},
    {"arccosh", 1, Identity::None, false, kUnaryFloatC},
    {"arctanh", 1, Identity::None, false, kUnaryFloatC},
    {"reciprocal", 1, Identity::None, false, kUnaryNum},
    {"arctan2", 2, Identity::None, false, kBinaryFloat},
    {"copysign", 2, Identity::None, false, kBinaryFloat},
    {"hypot", 2, Identity::None, false, kBinaryFloat},
    {"log2", 1, Identity::None, false, kUnaryFloatC},
    {"log10", 1, Identity::None, false, kUnaryFloatC},
    {"logaddexp", 2, Identity::None, false, kBinaryFloat},
    {"nextafter", 2, Identity::None, false, kBinaryFloat},
    {"signbit", 1, Identity::None, false, "e:? E:? f:? d:?"},
    {"cbrt", 1, Identity::None, false, kUnaryFloat},
    {"exp2", 1, Identity::None, false, kUnaryFloat},
    {"fmax", 2, Identity::None, false, kAllSame},
    {"fmin", 2, Identity::None, false, kAllSame},
    {"fmod", 2, Identity::None, false, kIntsFloats},
    {"heaviside", 2, Identity::None, false, kBinaryFloat},
    {"logaddexp2", 2, Identity::None, false, kBinaryFloat},
    {"gcd", 2, Identity::None, false, kIntLoops},
    {"lcm", 2, Identity::None, false, kIntLoops},
    {"where", 3, Identity::None, false, kWhere},
};

struct Tables {
    LoopList lists[kUfuncCount];
};

constexpr Tables make_tables() {
    Tables t{};
    for (int i = 0; i < kUfuncCount; ++i) t.lists[i] = parse(kEntries[i].loops);
    return t;
}
constexpr Tables kTablesLists = make_tables();

// UfuncInfo points into kTablesLists, which a constexpr initialiser cannot
// refer to from inside itself; so the infos are a second constant.
struct Infos {
    UfuncInfo v[kUfuncCount];
};
constexpr Infos make_infos() {
    Infos r{};
    for (int i = 0; i < kUfuncCount; ++i) {
        r.v[i] = UfuncInfo{kEntries[i].name,           kEntries[i].nin,
                           1,                          kEntries[i].identity,
                           kEntries[i].has_reduce,     kTablesLists.lists[i].loops,
                           kTablesLists.lists[i].n};
    }
    return r;
}
constexpr Infos kInfos = make_infos();

bool is_signed_int(DType t) noexcept { return dtype_info(t).kind == DTypeKind::Signed; }

bool is_comparison(Ufunc op) noexcept { return op >= Ufunc::Equal && op <= Ufunc::GreaterEqual; }

}  // namespace

const UfuncInfo& ufunc_info(Ufunc op) noexcept { return kInfos.v[static_cast<int>(op)]; }

bool ufunc_from_name(std::string_view name, Ufunc* out) noexcept {
    for (int i = 0; i < kUfuncCount; ++i)
        if (name == kEntries[i].name) {
            *out = static_cast<Ufunc>(i);
            return true;
        }
    return false;
}

namespace {

// NumPy's choice, worked out from the loop lists (resolve_loop caches it).
const UfuncLoop* search_loop(Ufunc op, const DType* inputs) noexcept {
    const UfuncInfo& info = ufunc_info(op);
    auto first_safe = [&](DType t, int slot) -> const UfuncLoop* {
        for (int k = 0; k < info.nloops; ++k)
            if (can_cast(t, info.loops[k].in[slot], Casting::Safe)) return &info.loops[k];
        return nullptr;
    };
    if (info.nin == 1) {
        // NumPy refuses these on bool instead of taking the int8 loop.
        if (inputs[0] == DType::Bool && (op == Ufunc::Negative || op == Ufunc::Positive || op == Ufunc::Sign))
            return nullptr;
        return first_safe(inputs[0], 0);
    }
    if (op == Ufunc::Where) return first_safe(promote_types(inputs[1], inputs[2]), 1);
    const DType a = inputs[0], b = inputs[1];
    if (op == Ufunc::Subtract && a == DType::Bool && b == DType::Bool) return nullptr;
    // NumPy refuses gcd and lcm of two bools (they have no bool loop).
    if ((op == Ufunc::Gcd || op == Ufunc::Lcm) && a == DType::Bool && b == DType::Bool) return nullptr;
    if (is_comparison(op)) {
        // NumPy's mixed loops compare int64 with uint64 exactly, where the
        // promoted float64 loop would round.
        for (int k = 0; k < info.nloops; ++k) {
            const UfuncLoop& l = info.loops[k];
            if (l.in[0] == l.in[1]) continue;
            const bool fits = l.in[0] == DType::Int64 ? (is_signed_int(a) && b == DType::UInt64)
                                                      : (a == DType::UInt64 && is_signed_int(b));
            if (fits) return &l;
        }
    }
    if (dtype_is_float(info.loops[0].in[0]) && op != Ufunc::Divide) {
        // Float-only ops (arctan2, copysign, hypot, ...): NumPy's linear
        // search casts each input to the loop on its own, so int8 with uint8
        // takes the float16 loop where their promotion (int16) would not.
        for (int k = 0; k < info.nloops; ++k) {
            const UfuncLoop& l = info.loops[k];
            if (can_cast(a, l.in[0], Casting::Safe) && can_cast(b, l.in[1], Casting::Safe)) return &l;
        }
        return nullptr;
    }
    DType p = promote_types(a, b);
    if (op == Ufunc::Divide && !dtype_is_float(p) && !dtype_is_complex(p)) p = DType::Float64;
    for (int k = 0; k < info.nloops; ++k) {
        const UfuncLoop& l = info.loops[k];
        if (can_cast(p, l.in[0], Casting::Safe) && can_cast(p, l.in[1], Casting::Safe)) return &l;
    }
    return nullptr;
}

// The loop index search_loop gives for every op and pair of dtypes (unary
// ops use the first, where its two branches; the condition does not matter).
constexpr std::uint8_t kNoLoop = 0xFF;
struct Choice {
    std::uint8_t k[kUfuncCount][kNumericDTypeCount][kNumericDTypeCount];
};

const Choice& choices() noexcept {
    static const Choice c = [] {
        Choice r{};
        for (int o = 0; o < kUfuncCount; ++o) {
            const auto op = static_cast<Ufunc>(o);
            const UfuncInfo& info = ufunc_info(op);
            for (int a = 0; a < kNumericDTypeCount; ++a)
                for (int b = 0; b < kNumericDTypeCount; ++b) {
                    DType in[3] = {static_cast<DType>(a), static_cast<DType>(b), static_cast<DType>(b)};
                    if (op == Ufunc::Where) in[0] = DType::Bool, in[1] = static_cast<DType>(a);
                    const UfuncLoop* l = (info.nin == 1 && b > 0) ? nullptr : search_loop(op, in);
                    r.k[o][a][b] = l ? static_cast<std::uint8_t>(l - info.loops) : kNoLoop;
                }
        }
        return r;
    }();
    return c;
}

}  // namespace

const UfuncLoop* resolve_loop(Ufunc op, const DType* inputs) noexcept {
    const UfuncInfo& info = ufunc_info(op);
    for (int i = 0; i < info.nin; ++i)
        if (static_cast<int>(inputs[i]) >= kNumericDTypeCount) return nullptr;
    const int a = static_cast<int>(op == Ufunc::Where ? inputs[1] : inputs[0]);
    const int b = info.nin == 1 ? 0 : static_cast<int>(op == Ufunc::Where ? inputs[2] : inputs[1]);
    const std::uint8_t k = choices().k[static_cast<int>(op)][a][b];
    return k == kNoLoop ? nullptr : &info.loops[k];
}

// ---------------------------------------------------------------------------
// The driver.

namespace ew {
bool avx2_loops() noexcept {
    static const bool yes = std::string_view(best_kernel_path()) != "portable";
    return yes;
}
}  // namespace ew

namespace {

using ew::CastFn;
using ew::InnerLoop;

// Elements per step of the buffered path: the scratch of one row call is
// kSlots of these on the stack (20 KiB), which stays in L1 with the operands.
constexpr std::int64_t kChunk = 256;
// Bytes of one scratch slot: kChunk elements of 8 bytes; complex128 rows take
// half as many elements per step.
constexpr std::int64_t kSlotBytes = kChunk * 8;
constexpr int kSlots = 10;
// A call is split over the pool when its elements times op_cost reach this:
// waking the pool's workers costs tens of microseconds (measured: the median
// 2-thread add only beats one thread from about 1M float32 elements).
constexpr std::int64_t kParallelWork = std::int64_t{1} << 20;

// Rough cost of an element relative to an add, for the split decision only.
std::int64_t op_cost(Ufunc op, const UfuncLoop& loop) noexcept {
    if (dtype_is_complex(loop.in[0]) && op != Ufunc::Add && op != Ufunc::Subtract && op != Ufunc::Where) return 16;
    switch (op) {
        case Ufunc::Exp: case Ufunc::Log: case Ufunc::Log1p: case Ufunc::Expm1:
        case Ufunc::Sin: case Ufunc::Cos: case Ufunc::Tan: case Ufunc::Tanh: case Ufunc::Sinh: case Ufunc::Cosh:
        case Ufunc::Arcsin: case Ufunc::Arccos: case Ufunc::Arctan: case Ufunc::Arcsinh: case Ufunc::Arccosh:
        case Ufunc::Arctanh: case Ufunc::Arctan2: case Ufunc::Hypot: case Ufunc::Log2: case Ufunc::Log10:
        case Ufunc::Logaddexp: case Ufunc::Cbrt: case Ufunc::Exp2: case Ufunc::Logaddexp2: return 16;
        case Ufunc::Power: return dtype_is_float(loop.out) ? 16 : 4;
        case Ufunc::FloorDivide: case Ufunc::Remainder: case Ufunc::Fmod: case Ufunc::Gcd: case Ufunc::Lcm: return 4;
        default: return 1;
    }
}

struct Impl {
    InnerLoop fn = nullptr;
    DType cin[3]{};
    DType cout{};
};

struct ImplTable {
    Impl e[kUfuncCount][kMaxLoops];
};

const ImplTable& impls() noexcept {
    static const ImplTable t = [] {
        ImplTable r{};
        for (int o = 0; o < kUfuncCount; ++o) {
            const auto op = static_cast<Ufunc>(o);
            const UfuncInfo& info = ufunc_info(op);
            for (int k = 0; k < info.nloops; ++k) {
                const UfuncLoop& l = info.loops[k];
                Impl& e = r.e[o][k];
                const bool raw16 = op == Ufunc::Where;  // Note [Compute types]
                for (int i = 0; i < info.nin; ++i) e.cin[i] = raw16 ? l.in[i] : ew::compute_dtype(l.in[i]);
                e.cout = raw16 ? l.out : ew::compute_dtype(l.out);
                e.fn = ew::find_complex_loop(op, l);
                if (!e.fn) e.fn = ew::find_arith_loop(op, l);
                if (!e.fn) e.fn = ew::find_compare_loop(op, l);
                if (!e.fn) e.fn = ew::find_logic_loop(op, l);
                if (!e.fn) e.fn = ew::find_unary_loop(op, l);
                if (!e.fn) e.fn = ew::find_math_loop(op, l);
            }
        }
        return r;
    }();
    return t;
}

const Impl* impl_for(Ufunc op, const UfuncLoop& loop) noexcept {
    const UfuncInfo& info = ufunc_info(op);
    const auto at = reinterpret_cast<std::uintptr_t>(&loop);
    const auto first = reinterpret_cast<std::uintptr_t>(info.loops);
    std::ptrdiff_t k = -1;
    if (at >= first && at < first + info.nloops * sizeof(UfuncLoop)) {
        k = static_cast<std::ptrdiff_t>((at - first) / sizeof(UfuncLoop));
    } else {
        for (int j = 0; j < info.nloops && k < 0; ++j) {
            const UfuncLoop& l = info.loops[j];
            bool same = l.out == loop.out;
            for (int i = 0; i < info.nin; ++i) same = same && l.in[i] == loop.in[i];
            if (same) k = j;
        }
    }
    if (k < 0) return nullptr;
    const Impl* e = &impls().e[static_cast<int>(op)][k];
    return e->fn ? e : nullptr;
}

// How one operand reaches its compute type (or the output leaves it).
struct Conv {
    CastFn c1 = nullptr, c2 = nullptr;
    std::int64_t sz1 = 0;  // item size after c1
    std::int64_t szc = 0;  // item size of the compute type
};

struct Plan {
    const Impl* impl;
    int nin;
    Conv in[3];
    bool in_direct[3];
    Conv out;               // compute -> [loop out ->] out dtype
    bool out_direct;
    std::int64_t out_size;  // item size of out.dtype
    bool where;
    CastFn where_cast;  // where's dtype -> bool, or nullptr when already bool
    bool all_direct;
    std::int64_t chunk;  // elements per buffered step: kSlotBytes / the widest item
};

std::int64_t isz(DType t) noexcept { return dtype_itemsize(t); }

// Note [Compute types]: a float16/bfloat16 loop input is rounded to the loop
// dtype first unless the cast there is exact (safe), and the result is
// rounded to the loop dtype before any cast to a different out dtype.
void plan_input(Plan& P, int i, DType from, DType loop, DType compute) noexcept {
    Conv& c = P.in[i];
    c.szc = isz(compute);
    P.in_direct[i] = from == compute && loop == compute;
    if (P.in_direct[i]) return;
    if (loop == compute || from == loop || can_cast(from, loop, Casting::Safe)) {
        c.c1 = ew::cast_fn(from, compute);
        c.sz1 = c.szc;
    } else {
        c.c1 = ew::cast_fn(from, loop);
        c.sz1 = isz(loop);
        c.c2 = ew::cast_fn(loop, compute);
    }
}

void plan_output(Plan& P, DType compute, DType loop, DType to) noexcept {
    Conv& c = P.out;
    c.szc = isz(compute);
    P.out_size = isz(to);
    if (loop == compute) {
        if (to != compute) {
            c.c1 = ew::cast_fn(compute, to);
            c.sz1 = P.out_size;
        }
    } else {
        c.c1 = ew::cast_fn(compute, loop);
        c.sz1 = isz(loop);
        if (to != loop) c.c2 = ew::cast_fn(loop, to);
    }
    P.out_direct = c.c1 == nullptr && !P.where;
}

void masked_copy(const char* src, std::int64_t size, char* dst, std::int64_t ds, const char* mask, std::int64_t ms,
                 std::int64_t n) noexcept {
    for (std::int64_t i = 0; i < n; ++i, src += size, dst += ds, mask += ms)
        if (*mask) std::memcpy(dst, src, static_cast<std::size_t>(size));
}

// One run of the innermost dimension: p/s hold the nin inputs, the output and
// (if any) the where mask.
void run_row(const Plan& P, char* const* p, const std::int64_t* s, std::int64_t n) {
    if (P.all_direct) {
        P.impl->fn(p, s, n);
        return;
    }
    alignas(64) char buf[kSlots][kSlotBytes];
    char* args[4];
    std::int64_t steps[4];
    const int nin = P.nin;
    for (std::int64_t off = 0; off < n; off += P.chunk) {
        const std::int64_t m = std::min(P.chunk, n - off);
        for (int i = 0; i < nin; ++i) {
            char* src = p[i] + off * s[i];
            if (P.in_direct[i]) {
                args[i] = src;
                steps[i] = s[i];
                continue;
            }
            const Conv& c = P.in[i];
            c.c1(src, s[i], buf[2 * i], c.sz1, m);
            if (c.c2) c.c2(buf[2 * i], c.sz1, buf[2 * i + 1], c.szc, m);
            args[i] = buf[2 * i + (c.c2 ? 1 : 0)];
            steps[i] = c.szc;
        }
        char* o = p[nin] + off * s[nin];
        if (P.out_direct) {
            args[nin] = o;
            steps[nin] = s[nin];
            P.impl->fn(args, steps, m);
            continue;
        }
        const Conv& c = P.out;
        args[nin] = buf[6];
        steps[nin] = c.szc;
        P.impl->fn(args, steps, m);
        if (!P.where) {
            if (c.c2) {
                c.c1(buf[6], c.szc, buf[7], c.sz1, m);
                c.c2(buf[7], c.sz1, o, s[nin], m);
            } else {
                c.c1(buf[6], c.szc, o, s[nin], m);
            }
            continue;
        }
        const char* res = buf[6];
        if (c.c1) {
            c.c1(buf[6], c.szc, buf[7], c.sz1, m);
            res = buf[7];
            if (c.c2) {
                c.c2(buf[7], c.sz1, buf[8], P.out_size, m);
                res = buf[8];
            }
        }
        const char* mask = p[nin + 1] + off * s[nin + 1];
        std::int64_t ms = s[nin + 1];
        if (P.where_cast) {
            P.where_cast(mask, ms, buf[9], 1, m);
            mask = buf[9];
            ms = 1;
        }
        masked_copy(res, P.out_size, o, s[nin], mask, ms, m);
    }
}

template <class T>
bool any_negative(const char* p, std::int64_t n, const char* mask, std::int64_t ms) noexcept {
    bool neg = false;
    for (std::int64_t i = 0; i < n; ++i) neg |= (mask == nullptr || mask[i * ms] != 0) && ew::load<T>(p + i * sizeof(T)) < 0;
    return neg;
}

bool any_negative(DType t, const char* p, std::int64_t n, const char* mask, std::int64_t ms) noexcept {
    switch (t) {
        case DType::Int8: return any_negative<std::int8_t>(p, n, mask, ms);
        case DType::Int16: return any_negative<std::int16_t>(p, n, mask, ms);
        case DType::Int32: return any_negative<std::int32_t>(p, n, mask, ms);
        default: return any_negative<std::int64_t>(p, n, mask, ms);
    }
}

// NumPy refuses integer powers with a negative exponent; checking every
// exponent the call will use (as cast to the loop's dtype, and only where the
// mask is true) before writing anything leaves out untouched on that error.
void check_exponents(int ndim, const std::int64_t* shape, const StridedArg& e, DType loop_dtype,
                     const StridedArg* where) {
    const CastFn c = ew::cast_fn(e.dtype, loop_dtype);
    const CastFn wc = where && where->dtype != DType::Bool ? ew::cast_fn(where->dtype, DType::Bool) : nullptr;
    const std::int64_t esize = isz(loop_dtype);
    bool neg = false;
    auto row = [&](char* const* p, const std::int64_t* s, std::int64_t n) {
        alignas(64) char buf[2][kChunk * 8];
        for (std::int64_t off = 0; off < n && !neg; off += kChunk) {
            const std::int64_t m = std::min(kChunk, n - off);
            c(p[0] + off * s[0], s[0], buf[0], esize, m);
            const char* mask = nullptr;
            std::int64_t ms = 0;
            if (where) {
                mask = p[1] + off * s[1];
                ms = s[1];
                if (wc) {
                    wc(mask, ms, buf[1], 1, m);
                    mask = buf[1];
                    ms = 1;
                }
            }
            neg = any_negative(loop_dtype, buf[0], m, mask, ms);
        }
    };
    char* base[2] = {reinterpret_cast<char*>(e.data), where ? reinterpret_cast<char*>(where->data) : nullptr};
    const std::int64_t* strides[2] = {e.strides, where ? where->strides : e.strides};
    ew::NdLayout L;
    ew::nd_layout(L, ndim, shape, where ? 2 : 1, strides, 0);
    ew::nd_rows(L, base, 0, L.size, row);
    if (neg) fail(ErrorKind::Data, "Integers to negative integer powers are not allowed.");
}

}  // namespace

void ufunc_run(Ufunc op, const UfuncLoop& loop, int ndim, const std::int64_t* shape, const StridedArg* inputs,
               const StridedArg& out, const StridedArg* where) {
    const Impl* impl = impl_for(op, loop);
    if (impl == nullptr) throw std::invalid_argument("ufunc_run: the loop is not one of the op's loops");
    if (ndim < 0 || ndim > ew::kMaxDims) throw std::invalid_argument("ufunc_run: too many dimensions");
    std::int64_t size = 1;
    for (int d = 0; d < ndim; ++d) size *= shape[d];
    if (size == 0) return;
    const int nin = ufunc_info(op).nin;
    Plan P;
    P.impl = impl;
    P.nin = nin;
    P.where = where != nullptr;
    P.where_cast = where && where->dtype != DType::Bool ? ew::cast_fn(where->dtype, DType::Bool) : nullptr;
    bool direct = true;
    for (int i = 0; i < nin; ++i) {
        plan_input(P, i, inputs[i].dtype, loop.in[i], impl->cin[i]);
        direct = direct && P.in_direct[i];
    }
    plan_output(P, impl->cout, loop.out, out.dtype);
    P.all_direct = direct && P.out_direct;
    std::int64_t widest = std::max<std::int64_t>(isz(loop.out), isz(out.dtype));
    for (int i = 0; i < nin; ++i) widest = std::max({widest, isz(inputs[i].dtype), isz(loop.in[i])});
    P.chunk = kSlotBytes / std::max<std::int64_t>(widest, 8);
    if (op == Ufunc::Power && is_signed_int(loop.in[1])) check_exponents(ndim, shape, inputs[1], loop.in[1], where);

    char* base[ew::kMaxOps];
    const std::int64_t* strides[ew::kMaxOps];
    for (int i = 0; i < nin; ++i) {
        base[i] = reinterpret_cast<char*>(inputs[i].data);
        strides[i] = inputs[i].strides;
    }
    base[nin] = reinterpret_cast<char*>(out.data);
    strides[nin] = out.strides;
    int nops = nin + 1;
    if (where) {
        base[nops] = reinterpret_cast<char*>(where->data);
        strides[nops] = where->strides;
        ++nops;
    }
    if (size == 1) {
        // The per-op path of tiny arrays: no layout, no pool.
        const std::int64_t zero[ew::kMaxOps] = {};
        run_row(P, base, zero, 1);
        return;
    }
    ew::NdLayout L;
    ew::nd_layout(L, ndim, shape, nops, strides, nin);
    auto row = [&P](char* const* p, const std::int64_t* s, std::int64_t n) { run_row(P, p, s, n); };
    const std::size_t threads = pool_threads();
    const std::int64_t work = size * op_cost(op, loop) * (P.all_direct ? 1 : 2);
    if (work < kParallelWork || threads < 2) {
        ew::nd_rows(L, base, 0, size, row);
        return;
    }
    // Elementwise results do not depend on the split; several pieces per
    // thread keep a thread slowed by other work from holding up the rest.
    const std::int64_t items = std::min<std::int64_t>(static_cast<std::int64_t>(threads) * 4, std::max<std::int64_t>(2, size / 4096));
    pool_run(static_cast<std::size_t>(items), [&](std::size_t i) {
        const std::int64_t b = size * static_cast<std::int64_t>(i) / items;
        const std::int64_t e = size * static_cast<std::int64_t>(i + 1) / items;
        ew::nd_rows(L, base, b, e, row);
    });
}

}  // namespace hrx::kernels
