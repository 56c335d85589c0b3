// _core.numerics: the host-side BF16/BFP16 kernels on C-contiguous NumPy
// arrays. These are deliberately raw (flat sizes, caller-allocated outputs);
// hrxarray/numerics.py owns shapes, dtypes, strides, `out=` and the error
// messages users see. Every kernel runs with the GIL released.
// portable=True forces the portable code path, so that tests can check that
// the vector paths give identical results.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <string>

#include "bindings.h"
#include "kernels/bf16.h"
#include "kernels/bfp16.h"

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
    nb::gil_scoped_release release;
    (portable ? kernels::portable::f32_to_bf16 : kernels::f32_to_bf16)(src.data(), dst.data(),
                                                                        src.size());
}

void bf16_to_f32(In<std::uint16_t> src, Out<float> dst, bool portable) {
    if (src.size() != dst.size()) throw nb::value_error("src and dst differ in size");
    check_disjoint(src, dst);
    nb::gil_scoped_release release;
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
    nb::gil_scoped_release release;
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
    nb::gil_scoped_release release;
    (portable ? kernels::portable::bfp16_decode : kernels::bfp16_decode)(src.data(), dst.data(),
                                                                          nblocks);
}

std::int64_t bfp16_first_nonfinite_block(In<float> src) {
    if (src.size() % kernels::kBfp16BlockValues != 0) {
        throw nb::value_error("src size is not a multiple of 8");
    }
    nb::gil_scoped_release release;
    return kernels::bfp16_first_nonfinite_block(src.data(),
                                                src.size() / kernels::kBfp16BlockValues);
}

nb::dict kernel_paths() {
    nb::dict d;
    d["bf16"] = kernels::bf16_kernel_path();
    d["bfp16"] = kernels::bfp16_kernel_path();
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
    m.def("kernel_paths", &kernel_paths,
          "The code path each kernel family takes in this process: {'bf16': 'avx512' |\n"
          "'avx2' | 'portable', 'bfp16': 'avx512' | 'portable'}. The raw kernels'\n"
          "portable=True forces the portable path (same results, for comparisons).");
}

}  // namespace hrx::bind
