#include "array/linalg.h"

#include <algorithm>
#include <memory>

#include "array/sorting.h"
#include "provider/array_ops.h"

namespace hrx {

namespace {

bool square(LinalgOp op) {
    return op != LinalgOp::QrReduced && op != LinalgOp::QrComplete && op != LinalgOp::SvdReduced &&
           op != LinalgOp::SvdFull && op != LinalgOp::Svdvals;
}

}  // namespace

LinalgResults linalg_results(LinalgOp op, const Array& a, const Array* b, const std::string& name) {
    const DType t = a.dtype;
    if (t != DType::Float32 && t != DType::Float64 && t != DType::Complex64 && t != DType::Complex128)
        fail(ErrorKind::Message, name + ": LAPACK computes in float32, float64, complex64 or complex128, got " +
                                     std::string(dtype_name(t)));
    if (a.ndim() < 2)
        fail(ErrorKind::Message, name + ": x must have at least 2 dimensions (a stack of matrices), got shape " +
                                     shape_str(a.shape));
    const int64_t m = a.shape[static_cast<size_t>(a.ndim() - 2)], n = a.shape.back();
    if (square(op) && m != n)
        fail(ErrorKind::Message, name + ": the last two dimensions must be square, got shape " + shape_str(a.shape));
    const Dims batch(a.shape.begin(), a.shape.end() - 2);
    auto with = [&](std::initializer_list<int64_t> tail) {
        Dims d = batch;
        for (int64_t v : tail) d.push_back(v);
        return d;
    };
    const DType real = dtype_is_complex(t) ? complex_part(t) : t;
    const DType cplx = t == DType::Float32 ? DType::Complex64 : t == DType::Float64 ? DType::Complex128 : t;
    const int64_t k = std::min(m, n);
    switch (op) {
        case LinalgOp::Solve:
            if (!b || b->dtype != t || b->ndim() != a.ndim() || !std::equal(batch.begin(), batch.end(), b->shape.begin()) ||
                b->shape[static_cast<size_t>(b->ndim() - 2)] != m)
                fail(ErrorKind::Message, name + ": x2 of shape " + (b ? shape_str(b->shape) : "()") +
                                             " does not match x1 of shape " + shape_str(a.shape));
            return {{b->shape}, {t}};
        case LinalgOp::Inv:
        case LinalgOp::Cholesky:
        case LinalgOp::CholeskyUpper: return {{a.shape}, {t}};
        case LinalgOp::Det: return {{batch}, {t}};
        case LinalgOp::Slogdet: return {{batch, batch}, {t, real}};
        case LinalgOp::Eigh: return {{with({m}), a.shape}, {real, t}};
        case LinalgOp::Eigvalsh: return {{with({m})}, {real}};
        case LinalgOp::Eig: return {{with({m}), a.shape}, {cplx, cplx}};
        case LinalgOp::Eigvals: return {{with({m})}, {cplx}};
        case LinalgOp::QrReduced: return {{with({m, k}), with({k, n})}, {t, t}};
        case LinalgOp::QrComplete: return {{with({m, m}), a.shape}, {t, t}};
        case LinalgOp::SvdReduced: return {{with({m, k}), with({k}), with({k, n})}, {t, real, t}};
        case LinalgOp::SvdFull: return {{with({m, m}), with({k}), with({n, n})}, {t, real, t}};
        case LinalgOp::Svdvals: return {{with({k})}, {real}};
    }
    return {};
}

TaskSpec linalg_task(LinalgOp kind, const Array& a, const Array* b, const std::vector<Array>& outs,
                     const std::string& name) {
    if (!lapack_loaded()) fail(ErrorKind::Unsupported, name + ": LAPACK is not loaded");
    TaskSpec t = compute_task(b ? std::initializer_list<const Array*>{&a, b} : std::initializer_list<const Array*>{&a},
                              {}, name, name);
    for (const Array& o : outs) {
        check_writable(o, name);
        check_lane_binding(o, t.lane, name);
        t.uses.push_back(o.use(Access::Write));
        if (!t.written) t.written = o.base;
    }
    // One linalg dispatch (Note [Array operations are dispatches]): the
    // emulated provider runs it with the host's LAPACK (kernels/lapack.h).
    auto op = std::make_shared<provider::LinalgDispatchOp>();
    op->op = kind;
    op->a = tensor_of(t, a);
    op->has_b = b != nullptr;
    if (b) op->b = tensor_of(t, *b);
    for (const Array& o : outs) op->outs.push_back(tensor_of(t, o, Access::Write));
    t.array = std::move(op);
    return t;
}

}  // namespace hrx

namespace hrx::linalg {

std::vector<Array> run(LinalgOp op, const Array& a, const Array* b, const std::string& name) {
    if (b && &runtime_of(a) != &runtime_of(*b))
        fail(ErrorKind::Message, name + ": x1 and x2 belong to different runtimes");
    const LinalgResults r = linalg_results(op, a, b, name);
    RuntimeCore& rt = runtime_of(a);
    std::vector<Array> outs;
    for (size_t i = 0; i < r.shapes.size(); ++i) outs.push_back(make_array(rt, a.placement(), r.shapes[i], r.dtypes[i], name));
    TaskSpec t = linalg_task(op, a, b, outs, name);
    submit(rt, t);
    return outs;
}

}  // namespace hrx::linalg
