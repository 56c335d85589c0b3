// The vectorised Loom interpreter behind Program (loom/plan.cpp): one
// interpretation of a region runs a whole batch of lanes at once (loom.md
// §4.1). A batch is a GPU workgroup (lockstep: barriers are epoch
// boundaries), a chunk of a folded grid (kernels without workgroup memory,
// barriers or subgroup operations), or a chunk of NPU stage firings (each
// firing's tile buffers are a lane's private memory). Every SSA value is
// either uniform (one copy) or varying (one copy per lane).
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "loom/plan.h"

namespace hrx::loom::interp {

enum class RK : uint8_t { None, Num, Buf, View, Payload, Frag, Enc, Group, Flow };

// One SSA value. Integers (iN, index, offset) live sign-extended in `i`,
// floats (in their declared type's precision) in `f`; `vlen` elements per
// lane, lane-major when varying.
struct Reg {
    RK kind = RK::None;
    ScalarKind elem = ScalarKind::None;
    int64_t vlen = 1;
    std::vector<int64_t> vshape;   // vector dims; empty for scalars
    bool uni = true;
    std::vector<int64_t> i;
    std::vector<double> f;
    int buf = -1;                  // Buf, View: index into Exec::bufs
    std::vector<int64_t> off;      // View: byte offset into the buffer (1 or lanes entries)
    std::vector<int64_t> dims;     // View: extents (uniform)
    // View: element strides per axis, empty = dense row-major; Enc with role
    // "layout": the layout's strides (Note [View layouts] in parser.cpp).
    std::vector<int64_t> strides;
    uint64_t align = 1;            // Buf: promised alignment
    bool even = false;             // Enc, Payload, Frag: bfp16 rounding half to even (else floor)
    std::string role;              // Frag
    int64_t rows = 0, cols = 0;    // Frag
    int flow = -1;                 // Flow: index into the pipeline's flows
    int64_t group = 0;             // Group: lanes
    // Varying integers: whether i[l] == a0 + a1 * l for every lane (-1 not
    // yet known), found once by the consumers that profit (comparisons,
    // addresses) and reset whenever the value is rewritten.
    int8_t aff = -1;
    int64_t a0 = 0, a1 = 0;
    // A varying index not yet written out: lane l holds
    // c0 + c1 * (l / lw) + c2 * (l % lw) for l < ll (coordinates and index
    // arithmetic on them). Consumers that need lane values materialise it.
    bool lazy = false;
    int64_t c0 = 0, c1 = 0, c2 = 0, lw = 1, ll = 0;
    // Varying f32 scalars of the elementwise fast path (contiguous loads,
    // f32 arithmetic, contiguous stores) live as floats in `g` instead of
    // `f`; other consumers materialise them like lazy indices.
    bool fs = false;
    std::vector<float> g;
};

struct Mask {
    bool all = true;
    std::vector<uint8_t> m;        // when !all: one byte per lane
    bool on(int64_t l) const { return all || m[static_cast<size_t>(l)] != 0; }
    bool any() const;
};

enum class BufKind : uint8_t { Binding, Workgroup, Private, Tile };

// A buffer seen by a batch. Per-lane buffers (private allocas, NPU tiles)
// give lane l the bytes at base + l * stride.
struct BufObj {
    uint8_t* base = nullptr;
    uint64_t size = 0;
    uint64_t stride = 0;
    uint64_t address = 0;
    BufKind kind = BufKind::Binding;
    bool coherent = false;  // a binding on coherent backing (Note [The gfx1151 float atomic max caveat])
    std::string name;
    // Checked-mode race shadow (workgroup memory): per byte, the lane that
    // wrote it and the lane that read it in the current barrier epoch (-1
    // none, -2 several).
    std::vector<int32_t> writer, reader;
    // Checked mode, memory that starts uninitialised (allocas, NPU output
    // tiles): per byte of every lane's copy (lane l's at l * stride), 1 once
    // written. Empty: every byte counts as written (bindings, input tiles).
    std::vector<uint8_t> init;
};

// Note [Uninitialised device memory]: device memory a program gets without
// contents (buffer.alloca<workgroup|private> scratch, and the output tiles
// of an NPU stage firing) holds no value the program may rely on: on the
// hardware it is whatever an earlier program left there. The emulator
// fills every such byte with kUninitByte (0xA5: as an i32 -1515870811, as
// an f32 about -2.9e-16, as a bf16 about -2.9e-16), the same on every host
// and every run, so results never depend on it by accident; an output
// tile byte the stage never wrote reaches its view with that value. In
// checked mode each such buffer also keeps BufObj::init, one flag per byte,
// and a load, vector load, masked load or atomic that reads a byte no
// store wrote fails with ExecutionError naming the op, the lane and the
// bytes. Only checked mode pays per byte; the fill is one memset per
// allocation.
inline constexpr uint8_t kUninitByte = 0xA5;

// Everything a run shares between its batches (read-only while running).
struct Shared {
    const Specialized* spec = nullptr;
    ExecOptions options;
    bool gpu = true;
    LaunchConfig launch;
    const std::vector<MemorySpan>* bindings = nullptr;
    const std::vector<uint8_t>* constants = nullptr;
    const std::vector<Param>* device_params = nullptr;
};

// Note [Handlers]
// ~~~~~~~~~~~~~~~
// An op runs through the handler its name selects in the interpreter's op
// table (Ops::table, interp.cpp). The parser stamps every op with its
// position in the op catalogue (Op::entry, loom/catalogue.h), and the
// interpreter turns the name table into one slot per catalogue entry once
// per process (handler_slots): running an op indexes that array, with no
// string or hash lookup per op. A slot without a handler fails the op when
// a launch reaches it ("valid Loom, not executed by the emulator"; the
// planner has refused such ops at plan time already, Note [Op catalogue]);
// a terminator's slot holds no function and ends its region.

class Exec {
public:
    Exec(const Shared& sh, int64_t lanes);

    // GPU batch coordinates: lane l is work-item item_lin[l] of workgroup
    // wg_lin[l] (linear ids); uniform_wg when the batch is one workgroup.
    void set_gpu_batch(int64_t first_global, bool one_workgroup);
    // NPU stage batch: lane l is firing first + l.
    void set_npu_batch(int64_t first_firing) {
        first_ = first_firing;
        exit_epoch_ = 0;
        exited_.clear();
    }

    struct Frame {
        const Op* fn = nullptr;
        std::vector<Reg> regs;
    };
    Frame frame_for(const Op& fn);
    // Runs `r` under `mask`; returns its terminator (or nullptr).
    const Op* run_region(const Region& r, Frame& fr, const Mask& mask);
    // Runs a function-like op's body with `args` bound; returns the
    // terminator's operand values.
    std::vector<Reg> call(const Op& fn, const Region& body, std::vector<Reg> args, const Mask& mask);

    int add_buffer(BufObj b) {
        bufs.push_back(std::move(b));
        return static_cast<int>(bufs.size() - 1);
    }

    void exec_op(const Op& op, Frame& fr, const Mask& mask);
    // Op's handler (nullptr: a terminator); fails the op when it has none.
    void* resolve(const Op& op) const;
    [[noreturn]] void fail_at(const Op& op, int64_t lane, const std::string& msg) const;

    const Shared& sh;
    int64_t L;
    std::vector<BufObj> bufs;
    std::vector<std::unique_ptr<uint8_t[]>> owned;
    uint64_t workgroup_bytes = 0;   // bytes of workgroup allocas so far
    uint64_t private_bytes = 0;     // bytes of private allocas so far, per lane
    // Frees the batch's allocas before the Exec runs its next batch.
    void release_scratch() {
        owned.clear();
        workgroup_bytes = private_bytes = 0;
    }
    std::vector<uint16_t> mma_a, mma_b;  // vector.mma operand storage (bf16)
    std::vector<float> mma_c;            // vector.mma products

    // "workgroup (x, y, z), work-item (x, y, z)" or "record r" of a lane.
    std::string where(int64_t lane) const;

private:
    friend struct Ops;

    void ensure_coords() const;
    void ensure_coords_if(bool need) const {
        if (need) ensure_coords();
    }

    // kernel.exit: the lanes that left (empty until one does) and a count of
    // exits so far, which run_region watches to narrow its mask.
    Mask without_exited(const Mask& m) const;
    std::vector<uint8_t> exited_;
    uint64_t exit_epoch_ = 0;

    int64_t first_ = 0;
    bool uniform_wg_ = true;
    bool coords_ready_ = false;
    std::vector<int64_t> wg_lin_, item_lin_;
};

// Helpers shared with the planner.
int elem_bytes(ScalarKind k, int index_bits);
// The width in bits of integer kind k (1 for i1).
inline int bits_of(ScalarKind k) { return k == ScalarKind::I1 ? 1 : scalar_bits(k); }
// The unsigned reading of a sign-extended N-bit payload.
inline uint64_t uval(ScalarKind k, int64_t v) {
    const int b = bits_of(k);
    return b >= 64 ? static_cast<uint64_t>(v) : static_cast<uint64_t>(v) & ((uint64_t{1} << b) - 1);
}
// An int64 wrapped to kind k's width, sign-extended (iN values live so).
inline int64_t wrap_int(ScalarKind k, int64_t v) {
    switch (k) {
        case ScalarKind::I1: return v & 1;
        case ScalarKind::I8: return static_cast<int8_t>(v);
        case ScalarKind::I16: return static_cast<int16_t>(v);
        case ScalarKind::I32: return static_cast<int32_t>(v);
        default: return v;
    }
}
// A constant op's `value` attribute read both ways (index/scalar/vector
// .constant): the float and the integer it spells. `true` is 1, inf/-inf/nan
// floats; a float literal out of int64's range (1e30) leaves the integer 0,
// as only an integer-typed constant reads it and converting would be UB.
struct ConstantValue {
    double f = 0;
    int64_t i = 0;
};
ConstantValue constant_value(const Attr* a);
bool op_supported(const std::string& name);
// The ops that end a region (scf.yield, kernel.return, ...): no handler.
bool is_terminator(const std::string& name);
// Checks `op`'s predicates as authored contracts (launch programs): a false
// one is a Message error naming it.
void check_authored(Exec& x, const Op& op, Exec::Frame& fr);

}  // namespace hrx::loom::interp
