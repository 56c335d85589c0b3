// _core.numerics: the host-side BF16/BFP16 kernels on C-contiguous NumPy
// arrays. These are deliberately raw (flat sizes, caller-allocated outputs);
// hrxarray/numerics.py owns shapes, dtypes, strides, `out=` and the error
// messages users see. Every kernel runs with the GIL released.
// portable=True forces the portable code path, so that tests can check that
// the vector paths give identical results.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <optional>
#include <string>

#include "bindings.h"
#include "checked.h"
#include "gil.h"
#include "kernels/bf16.h"
#include "kernels/bfp16.h"
#include "kernels/dtype.h"
#include "kernels/matmul.h"
#include "kernels/pool.h"

namespace nb = nanobind;

namespace hrx::bind {

namespace {

template <typename T>
using In = nb::ndarray<const T, nb::c_contig, nb::device::cpu>;
template <typename T>
using Out = nb::ndarray<T, nb::c_contig, nb::device::cpu>;

// The kernels assume disjoint source and destination.
template <typename A, typename B>
void check_disjoint(const A& src, const B& dst) {
    const auto* s = static_cast<const char*>(static_cast<const void*>(src.data()));
    const auto* d = static_cast<const char*>(static_cast<const void*>(dst.data()));
    if (s < d + dst.nbytes() && d < s + src.nbytes() && src.nbytes() && dst.nbytes()) {
        throw nb::value_error("src and dst overlap");
    }
}

kernels::BfpRounding parse_rounding(const std::string& r) {
    if (r == "floor") return kernels::BfpRounding::floor;
    if (r == "even") return kernels::BfpRounding::even;
    throw nb::value_error(("rounding must be 'floor' or 'even', not '" + r + "'").c_str());
}

void f32_to_bf16(In<float> src, Out<std::uint16_t> dst, bool portable) {
    if (src.size() != dst.size()) throw nb::value_error("src and dst differ in size");
    check_disjoint(src, dst);
    ReleaseGil release;
    (portable ? kernels::portable::f32_to_bf16 : kernels::f32_to_bf16)(src.data(), dst.data(),
                                                                        src.size());
}

void bf16_to_f32(In<std::uint16_t> src, Out<float> dst, bool portable) {
    if (src.size() != dst.size()) throw nb::value_error("src and dst differ in size");
    check_disjoint(src, dst);
    ReleaseGil release;
    (portable ? kernels::portable::bf16_to_f32 : kernels::bf16_to_f32)(src.data(), dst.data(),
                                                                        src.size());
}

std::int64_t bfp16_encode(In<float> src, Out<std::uint8_t> dst, const std::string& rounding,
                          bool portable) {
    const kernels::BfpRounding r = parse_rounding(rounding);
    if (src.size() % kernels::kBfp16BlockValues != 0) {
        throw nb::value_error("src size is not a multiple of 8");
    }
    const std::size_t nblocks = src.size() / kernels::kBfp16BlockValues;
    if (dst.size() != nblocks * kernels::kBfp16BlockBytes) {
        throw nb::value_error("dst must hold 9 bytes per 8 values of src");
    }
    check_disjoint(src, dst);
    ReleaseGil release;
    const std::ptrdiff_t bad = kernels::bfp16_first_nonfinite_block(src.data(), nblocks);
    if (bad >= 0) return bad;
    (portable ? kernels::portable::bfp16_encode : kernels::bfp16_encode)(src.data(), dst.data(),
                                                                          nblocks, r);
    return -1;
}

void bfp16_decode(In<std::uint8_t> src, Out<float> dst, bool portable) {
    if (src.size() % kernels::kBfp16BlockBytes != 0) {
        throw nb::value_error("src size is not a multiple of 9");
    }
    const std::size_t nblocks = src.size() / kernels::kBfp16BlockBytes;
    if (dst.size() != nblocks * kernels::kBfp16BlockValues) {
        throw nb::value_error("dst must hold 8 values per 9 bytes of src");
    }
    check_disjoint(src, dst);
    ReleaseGil release;
    (portable ? kernels::portable::bfp16_decode : kernels::bfp16_decode)(src.data(), dst.data(),
                                                                          nblocks);
}

std::int64_t bfp16_first_nonfinite_block(In<float> src) {
    if (src.size() % kernels::kBfp16BlockValues != 0) {
        throw nb::value_error("src size is not a multiple of 8");
    }
    ReleaseGil release;
    return kernels::bfp16_first_nonfinite_block(src.data(),
                                                src.size() / kernels::kBfp16BlockValues);
}

// Checks a batch index map: `batch` entries, each in [0, limit).
const std::int64_t* index_map(const std::optional<In<std::int64_t>>& idx, std::size_t batch,
                              std::size_t limit, const char* name) {
    if (!idx) {
        if (limit != batch) {
            throw nb::value_error((std::string(name) + " is required when the operand's batch "
                                                       "count differs from c's")
                                      .c_str());
        }
        return nullptr;
    }
    if (idx->size() != batch) {
        throw nb::value_error((std::string(name) + " must hold one entry per batch of c").c_str());
    }
    const std::int64_t* p = idx->data();
    for (std::size_t t = 0; t < batch; ++t) {
        if (p[t] < 0 || static_cast<std::uint64_t>(p[t]) >= limit) {
            throw nb::value_error((std::string(name) + " has an entry out of range").c_str());
        }
    }
    return p;
}

// The batches of a raw matmul call: c[t] = a[ia[t]] @ b[ib[t]] for t < batch.
struct MatmulBatches {
    std::size_t batch = 0;  // 0: nothing to compute (c is empty)
    const std::int64_t* ia = nullptr;
    const std::int64_t* ib = nullptr;
};

// Checks the flat element counts of a, b and c against m, k and n. The
// products are checked (Note [Checked arithmetic]): m * k wrapping around to
// a divisor of a's size would pass the size checks and let the kernel read
// far outside a (or divide by a wrapped zero).
MatmulBatches matmul_batches(const char* op, std::size_t na, std::size_t nb, std::size_t nc, std::size_t m,
                             std::size_t k, std::size_t n, const std::optional<In<std::int64_t>>& ia,
                             const std::optional<In<std::int64_t>>& ib) {
    const auto product = [&](std::size_t x, std::size_t y, const char* what) {
        const auto p = (Checked<std::size_t>(x) * y).get();
        if (!p)
            throw nb::value_error((std::string(op) + ": " + what + " overflows (m=" + std::to_string(m) +
                                   ", k=" + std::to_string(k) + ", n=" + std::to_string(n) + ")")
                                      .c_str());
        return *p;
    };
    const std::size_t mk = product(m, k, "m * k"), kn = product(k, n, "k * n"), mn = product(m, n, "m * n");
    if (mn == 0) {
        if (nc != 0) throw nb::value_error("c must be empty when m * n is 0");
        return {};
    }
    if (nc % mn != 0) throw nb::value_error("c size is not a multiple of m * n");
    MatmulBatches r;
    r.batch = nc / mn;
    if (mk == 0 ? na != 0 : na % mk != 0) throw nb::value_error("a size is not a multiple of m * k");
    if (kn == 0 ? nb != 0 : nb % kn != 0) throw nb::value_error("b size is not a multiple of k * n");
    r.ia = index_map(ia, r.batch, mk ? na / mk : r.batch, "ia");
    r.ib = index_map(ib, r.batch, kn ? nb / kn : r.batch, "ib");
    return r;
}

void matmul_bf16(In<std::uint16_t> a, In<std::uint16_t> b, Out<float> c, std::size_t m,
                 std::size_t k, std::size_t n, std::optional<In<std::int64_t>> ia,
                 std::optional<In<std::int64_t>> ib, const std::string& order, bool portable,
                 bool amx_model) {
    if (order != "pair" && order != "tile") {
        throw nb::value_error(("matmul_bf16: order must be 'pair' or 'tile', not '" + order + "'").c_str());
    }
    const bool tile = order == "tile";
    if (portable && amx_model) throw nb::value_error("portable and amx_model exclude each other");
    if (amx_model && !tile) throw nb::value_error("amx_model computes the tile order: pass order='tile'");
    const MatmulBatches mb = matmul_batches("matmul_bf16", a.size(), b.size(), c.size(), m, k, n, ia, ib);
    if (mb.batch == 0) return;
    check_disjoint(a, c);
    check_disjoint(b, c);
    ReleaseGil release;
    using Fn = void (*)(const std::uint16_t*, const std::uint16_t*, float*, std::size_t, std::size_t,
                        std::size_t, std::size_t, const std::int64_t*, const std::int64_t*) noexcept;
    const Fn fn = amx_model ? kernels::matmul_bf16_amx_model
                  : tile    ? (portable ? kernels::portable::matmul_bf16_tile : kernels::matmul_bf16_tile)
                            : (portable ? kernels::portable::matmul_bf16 : kernels::matmul_bf16);
    fn(a.data(), b.data(), c.data(), mb.batch, m, k, n, mb.ia, mb.ib);
}

void matmul_bf16_8x8_batched(In<std::uint16_t> a, In<std::uint16_t> b, Out<float> c,
                             bool portable) {
    if (a.size() % 64 != 0 || a.size() != b.size() || a.size() != c.size()) {
        throw nb::value_error("a, b and c must hold 64 values per matrix, the same count each");
    }
    check_disjoint(a, c);
    check_disjoint(b, c);
    ReleaseGil release;
    (portable ? kernels::portable::matmul_bf16_8x8_batched : kernels::matmul_bf16_8x8_batched)(
        a.data(), b.data(), c.data(), a.size() / 64);
}

DType parse_dtype(const std::string& name, const char* what) {
    DType t;
    if (!dtype_from_name(name, &t) || t == DType::BFP16) {
        throw nb::value_error((std::string(what) + ": unknown element type '" + name + "'").c_str());
    }
    return t;
}

// The array layer's generic matmul on raw bytes: a, b, c are uint8 views of
// dense row-major operands of the named element types.
void matmul_typed(In<std::uint8_t> a, In<std::uint8_t> b, Out<std::uint8_t> c,
                  const std::string& in_dtype, const std::string& out_dtype, std::size_t m,
                  std::size_t k, std::size_t n, std::optional<In<std::int64_t>> ia,
                  std::optional<In<std::int64_t>> ib, bool portable) {
    const DType in = parse_dtype(in_dtype, "in_dtype"), out = parse_dtype(out_dtype, "out_dtype");
    if (!kernels::matmul_typed_supported(in, out)) {
        throw nb::value_error(("matmul_typed does not implement " + in_dtype + " -> " + out_dtype).c_str());
    }
    const std::size_t si = static_cast<std::size_t>(dtype_itemsize(in));
    const std::size_t so = static_cast<std::size_t>(dtype_itemsize(out));
    if (a.size() % si || b.size() % si || c.size() % so) {
        throw nb::value_error("a, b and c must hold whole elements of their types");
    }
    const MatmulBatches mb =
        matmul_batches("_matmul_typed", a.size() / si, b.size() / si, c.size() / so, m, k, n, ia, ib);
    if (mb.batch == 0) return;
    check_disjoint(a, c);
    check_disjoint(b, c);
    ReleaseGil release;
    (portable ? kernels::portable::matmul_typed : kernels::matmul_typed)(
        in, out, a.data(), b.data(), c.data(), mb.batch, m, k, n, mb.ia, mb.ib);
}

nb::dict kernel_paths() {
    nb::dict d;
    d["bf16"] = kernels::bf16_kernel_path();
    d["bfp16"] = kernels::bfp16_kernel_path();
    d["matmul"] = kernels::matmul_kernel_path();
    d["matmul_tile"] = kernels::matmul_tile_kernel_path();
    return d;
}

}  // namespace

void bind_numerics(nb::module_& parent) {
    nb::module_ m = parent.def_submodule(
        "numerics",
        "Raw BF16/BFP16 kernels on C-contiguous arrays (private; use hrxarray.numerics).");
    m.def("f32_to_bf16", &f32_to_bf16, nb::arg("src").noconvert(), nb::arg("dst").noconvert(),
          nb::kw_only(), nb::arg("portable") = false,
          "Round float32 src to bf16 bit patterns in dst (uint16), to nearest even;\n"
          "NaN becomes the quiet NaN 0x7FC0 with its sign.");
    m.def("bf16_to_f32", &bf16_to_f32, nb::arg("src").noconvert(), nb::arg("dst").noconvert(),
          nb::kw_only(), nb::arg("portable") = false,
          "Widen bf16 bit patterns src (uint16) to float32 dst, exactly.");
    m.def("bfp16_encode", &bfp16_encode, nb::arg("src").noconvert(), nb::arg("dst").noconvert(),
          nb::arg("rounding"), nb::kw_only(), nb::arg("portable") = false,
          "Encode float32 src (8 values per block) into bfp16ebs8 blocks in dst\n"
          "(uint8, 9 bytes per block) with rounding 'floor' or 'even'. Returns -1,\n"
          "or the index of the first block holding NaN/Inf (dst then unspecified).");
    m.def("bfp16_decode", &bfp16_decode, nb::arg("src").noconvert(), nb::arg("dst").noconvert(),
          nb::kw_only(), nb::arg("portable") = false,
          "Decode bfp16ebs8 blocks src (uint8, 9 bytes each) into float32 dst.");
    m.def("bfp16_first_nonfinite_block", &bfp16_first_nonfinite_block,
          nb::arg("src").noconvert(),
          "Index of the first 8-value block of float32 src holding NaN or Inf, or -1.");
    m.def("matmul_bf16", &matmul_bf16, nb::arg("a").noconvert(), nb::arg("b").noconvert(),
          nb::arg("c").noconvert(), nb::arg("m"), nb::arg("k"), nb::arg("n"),
          nb::arg("ia").noconvert() = nb::none(), nb::arg("ib").noconvert() = nb::none(),
          nb::kw_only(), nb::arg("order") = "pair", nb::arg("portable") = false,
          nb::arg("amx_model") = false,
          "c[t] = a[ia[t]] @ b[ib[t]] on bf16 bit patterns (uint16) into float32 c:\n"
          "a holds (batches of) m x k row-major matrices, b k x n, c m x n. ia / ib\n"
          "(int64, one entry per batch of c) default to the identity. fp32 FMA\n"
          "accumulation from +0, no denormals; threads for large calls. order='pair'\n"
          "(the devices' order): k in pairs, odd index first (1, 0, 3, 2, ...; a 0*0\n"
          "step pads an odd K). order='tile': AMX TDPBF16PS's order (per 32 k, even\n"
          "and odd chains from +0, then acc + (even + odd)), on the AMX tiles where\n"
          "usable, else FMAs; the same bits on every host. portable=True: the\n"
          "portable kernels, one thread. amx_model=True (needs order='tile'): the AMX\n"
          "tile driver on a software model of the tile unit (slow; for tests).");
    m.def("matmul_bf16_8x8_batched", &matmul_bf16_8x8_batched, nb::arg("a").noconvert(),
          nb::arg("b").noconvert(), nb::arg("c").noconvert(), nb::kw_only(),
          nb::arg("portable") = false,
          "c[t] = a[t] @ b[t] for dense stacks of 8x8 bf16 matrices (uint16) into float32 c.");
    m.def("_matmul_typed", &matmul_typed, nb::arg("a").noconvert(), nb::arg("b").noconvert(),
          nb::arg("c").noconvert(), nb::arg("in_dtype"), nb::arg("out_dtype"), nb::arg("m"),
          nb::arg("k"), nb::arg("n"), nb::arg("ia").noconvert() = nb::none(),
          nb::arg("ib").noconvert() = nb::none(), nb::kw_only(), nb::arg("portable") = false,
          "Private: the GPU compute lane's matmul_typed on uint8 views of dense operands.\n"
          "c[t] = a[ia[t]] @ b[ib[t]] with in_dtype -> out_dtype one of bool -> bool,\n"
          "each integer type -> itself (wrapping), float16 -> float16, bfloat16 ->\n"
          "float32, float32 -> float32, float64 -> float64 (numerics in matmul.h).");
    m.def(
        "_pool_probe",
        [](std::size_t items, std::size_t item_us) {
            kernels::PoolProbe p;
            {
                ReleaseGil release;
                p = kernels::pool_probe(items, item_us);
            }
            return nb::make_tuple(p.each_once, p.all_finished_at_return, p.threads_used);
        },
        nb::arg("items"), nb::arg("item_us"),
        "Private (tests): runs `items` sleeping items of item_us microseconds through the kernels'\n"
        "pool and returns (each item ran once, all had finished at return, threads that ran items).");
    m.def("matmul_num_threads", &kernels::matmul_num_threads,
          "Threads a large matmul uses (caller included; HRXARRAY_NUM_THREADS caps it).");
    m.def("kernel_paths", &kernel_paths,
          "The code path each kernel family takes in this process: {'bf16': 'avx512' |\n"
          "'avx2' | 'portable', 'bfp16': 'avx512' | 'portable', 'matmul': 'avx512_bf16' |\n"
          "'avx512' | 'avx2' | 'portable', 'matmul_tile': 'amx_bf16' | 'amx_model' | 'avx512' |\n"
          "'avx2' | 'portable'} ('matmul_tile': large products of order='tile'). The raw kernels'\n"
          "portable=True forces the portable path (same results, for comparisons).");
}

}  // namespace hrx::bind
