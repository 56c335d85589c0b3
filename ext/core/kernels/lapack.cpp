// Dense linear algebra over the host's LAPACK: the library the emulated
// provider runs hx.linalg's dispatches with (Note [LAPACK on the compute
// lane] in array/linalg.h, Note [LAPACK and fork] below).
#include "kernels/lapack.h"

#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <new>

#include "errors.h"

namespace hrx::kernels {

namespace {

using lint = int64_t;  // ILP64 LAPACK integers

// The routines of one precision, resolved from the library (Note [LAPACK on the compute lane]).
struct Routines {
    void* gesv = nullptr;
    void* getrf = nullptr;
    void* potrf = nullptr;
    void* syevd = nullptr;  // ?heevd for complex types
    void* geqrf = nullptr;
    void* orgqr = nullptr;  // ?ungqr for complex types
    void* gesdd = nullptr;
    void* geev = nullptr;
};

std::mutex g_load_mu;
void* g_handle = nullptr;
Routines g_routines[4];  // s, d, c, z

template <class T>
struct Traits;
template <>
struct Traits<float> {
    using R = float;
    static constexpr int index = 0;
    static constexpr bool complex = false;
};
template <>
struct Traits<double> {
    using R = double;
    static constexpr int index = 1;
    static constexpr bool complex = false;
};
template <>
struct Traits<std::complex<float>> {
    using R = float;
    static constexpr int index = 2;
    static constexpr bool complex = true;
};
template <>
struct Traits<std::complex<double>> {
    using R = double;
    static constexpr int index = 3;
    static constexpr bool complex = true;
};

template <class T>
const Routines& routines() {
    return g_routines[Traits<T>::index];
}

// The scheduler prefixes the operation's name.
[[noreturn]] void linalg_error(const std::string& what) {
    fail(ErrorKind::LinAlg, what);
}

// The byte offsets of the matrices of `x` (its last two dimensions), its
// batch in row-major order.
std::vector<int64_t> batch_offsets(const Matrices& x) {
    const int nb = x.ndim() - 2;
    int64_t count = 1;
    for (int d = 0; d < nb; ++d) count *= x.shape[static_cast<size_t>(d)];
    std::vector<int64_t> out(static_cast<size_t>(count), 0);
    std::vector<int64_t> idx(static_cast<size_t>(nb), 0);
    int64_t off = 0;
    for (int64_t i = 0; i < count; ++i) {
        out[static_cast<size_t>(i)] = off;
        for (int d = nb - 1; d >= 0; --d) {
            const auto u = static_cast<size_t>(d);
            if (++idx[u] < x.shape[u]) {
                off += x.strides[u];
                break;
            }
            off -= x.strides[u] * (idx[u] - 1);
            idx[u] = 0;
        }
    }
    return out;
}

// The matrix of `x` at byte offset `off` (rows x cols of the last two
// dimensions) into column-major `dst` with leading dimension ld.
template <class T>
void gather(const Matrices& x, int64_t off, int64_t rows, int64_t cols, T* dst, int64_t ld) {
    const uint8_t* base = x.data() + off;
    const int64_t rs = x.strides[static_cast<size_t>(x.ndim() - 2)];
    const int64_t cs = x.strides.back();
    for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < rows; ++i) std::memcpy(&dst[i + j * ld], base + i * rs + j * cs, sizeof(T));
}

// Column-major `src` (leading dimension ld) into the C-contiguous matrix of
// `out` at batch index b (rows x cols).
template <class T>
void scatter(const T* src, int64_t ld, int64_t rows, int64_t cols, const Matrices& out, int64_t b) {
    T* dst = reinterpret_cast<T*>(out.data()) + b * rows * cols;
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) dst[i * cols + j] = src[i + j * ld];
}

template <class T>
void identity(T* dst, int64_t n, int64_t ld) {
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < n; ++i) dst[i + j * ld] = T(i == j ? 1 : 0);
}

template <class R>
R real_of(R v) {
    return v;
}
template <class R>
R real_of(std::complex<R> v) {
    return v.real();
}

// Workspace sizes from a query's first element (LAPACK returns them as T).
template <class T>
lint work_size(T w) {
    return std::max<lint>(1, static_cast<lint>(real_of(w)));
}

template <class T>
void run_solve(const Matrices& a, const Matrices* b, const std::vector<Matrices>& outs, bool inverse) {
    using Gesv = void (*)(lint*, lint*, T*, lint*, lint*, T*, lint*, lint*);
    auto gesv = reinterpret_cast<Gesv>(routines<T>().gesv);
    lint n = a.shape.back();
    lint k = inverse ? n : b->shape.back();
    if (n == 0 || k == 0) return;
    lint ld = n;
    std::vector<T> abuf(static_cast<size_t>(n * n)), bbuf(static_cast<size_t>(n * k));
    std::vector<lint> ipiv(static_cast<size_t>(n));
    const auto aoff = batch_offsets(a);
    const auto boff = inverse ? aoff : batch_offsets(*b);
    for (size_t i = 0; i < aoff.size(); ++i) {
        gather(a, aoff[i], n, n, abuf.data(), ld);
        if (inverse)
            identity(bbuf.data(), n, ld);
        else
            gather(*b, boff[i], n, k, bbuf.data(), ld);
        lint info = 0, ldb = ld;
        gesv(&n, &k, abuf.data(), &ld, ipiv.data(), bbuf.data(), &ldb, &info);
        if (info > 0) linalg_error("Singular matrix");
        scatter(bbuf.data(), ld, n, k, outs[0], static_cast<int64_t>(i));
    }
}

template <class T>
void run_cholesky(const Matrices& a, const std::vector<Matrices>& outs, bool upper) {
    using Potrf = void (*)(char*, lint*, T*, lint*, lint*, size_t);
    auto potrf = reinterpret_cast<Potrf>(routines<T>().potrf);
    lint n = a.shape.back();
    if (n == 0) return;
    lint ld = n;
    std::vector<T> buf(static_cast<size_t>(n * n));
    const auto off = batch_offsets(a);
    for (size_t i = 0; i < off.size(); ++i) {
        gather(a, off[i], n, n, buf.data(), ld);
        char uplo = upper ? 'U' : 'L';
        lint info = 0;
        potrf(&uplo, &n, buf.data(), &ld, &info, 1);
        if (info > 0) linalg_error("Matrix is not positive definite");
        // potrf leaves the other triangle as it was: the result has zeros there.
        for (lint c = 0; c < n; ++c)
            for (lint r = 0; r < n; ++r)
                if (upper ? r > c : r < c) buf[static_cast<size_t>(r + c * ld)] = T(0);
        scatter(buf.data(), ld, n, n, outs[0], static_cast<int64_t>(i));
    }
}

template <class T>
void run_det(const Matrices& a, const std::vector<Matrices>& outs, bool logarithmic) {
    using R = typename Traits<T>::R;
    using Getrf = void (*)(lint*, lint*, T*, lint*, lint*, lint*);
    auto getrf = reinterpret_cast<Getrf>(routines<T>().getrf);
    lint n = a.shape.back();
    lint ld = std::max<lint>(1, n);
    std::vector<T> buf(static_cast<size_t>(ld * n));
    std::vector<lint> ipiv(static_cast<size_t>(std::max<lint>(1, n)));
    const auto off = batch_offsets(a);
    T* sign_out = reinterpret_cast<T*>(outs[0].data());
    R* log_out = logarithmic ? reinterpret_cast<R*>(outs[1].data()) : nullptr;
    for (size_t i = 0; i < off.size(); ++i) {
        gather(a, off[i], n, n, buf.data(), ld);
        lint info = 0;
        if (n > 0) getrf(&n, &n, buf.data(), &ld, ipiv.data(), &info);
        T sign(1);
        R logabs(0);
        T product(1);
        for (lint d = 0; d < n; ++d) {
            const T v = buf[static_cast<size_t>(d + d * ld)];
            if (ipiv[static_cast<size_t>(d)] != d + 1) {
                sign = -sign;
                product = -product;
            }
            product *= v;
            const R m = std::abs(v);
            sign *= (m == R(0)) ? T(0) : v / m;
            logabs += std::log(m);
        }
        // A zero pivot (info > 0) is a singular matrix: det 0, sign 0, log|det| -inf.
        if (info > 0) {
            sign = T(0);
            logabs = -std::numeric_limits<R>::infinity();
            product = T(0);
        }
        if (logarithmic) {
            sign_out[i] = sign;
            log_out[i] = logabs;
        } else {
            sign_out[i] = product;
        }
    }
}

template <class T>
void run_eigh(const Matrices& a, const std::vector<Matrices>& outs, bool vectors) {
    using R = typename Traits<T>::R;
    lint n = a.shape.back();
    if (n == 0) return;
    lint ld = n;
    std::vector<T> buf(static_cast<size_t>(n * n));
    std::vector<R> w(static_cast<size_t>(n));
    char jobz = vectors ? 'V' : 'N', uplo = 'L';
    lint lwork = -1, lrwork = -1, liwork = -1, info = 0;
    T wq(0);
    R rq(0);
    lint iq = 0;
    std::vector<T> work;
    std::vector<R> rwork;
    std::vector<lint> iwork;
    auto call = [&](T* wk, R* rwk, lint* iwk) {
        if constexpr (Traits<T>::complex) {
            using Heevd = void (*)(char*, char*, lint*, T*, lint*, R*, T*, lint*, R*, lint*, lint*, lint*, lint*,
                                   size_t, size_t);
            reinterpret_cast<Heevd>(routines<T>().syevd)(&jobz, &uplo, &n, buf.data(), &ld, w.data(), wk, &lwork,
                                                          rwk, &lrwork, iwk, &liwork, &info, 1, 1);
        } else {
            (void)rwk;
            using Syevd = void (*)(char*, char*, lint*, T*, lint*, R*, T*, lint*, lint*, lint*, lint*, size_t, size_t);
            reinterpret_cast<Syevd>(routines<T>().syevd)(&jobz, &uplo, &n, buf.data(), &ld, w.data(), wk, &lwork, iwk,
                                                          &liwork, &info, 1, 1);
        }
    };
    call(&wq, &rq, &iq);  // workspace query
    lwork = work_size(wq);
    lrwork = work_size(rq);
    liwork = std::max<lint>(1, iq);
    work.resize(static_cast<size_t>(lwork));
    rwork.resize(static_cast<size_t>(lrwork));
    iwork.resize(static_cast<size_t>(liwork));
    const auto off = batch_offsets(a);
    R* values = reinterpret_cast<R*>(outs[0].data());
    for (size_t i = 0; i < off.size(); ++i) {
        gather(a, off[i], n, n, buf.data(), ld);
        info = 0;
        call(work.data(), rwork.data(), iwork.data());
        if (info > 0) linalg_error("Eigenvalues did not converge");
        std::copy(w.begin(), w.end(), values + static_cast<int64_t>(i) * n);
        if (vectors) scatter(buf.data(), ld, n, n, outs[1], static_cast<int64_t>(i));
    }
}

// General eigenproblem (geev, right eigenvectors). Real routines return
// conjugate pairs as (re, im) columns j, j+1: they become v_j = re + i im and
// v_{j+1} = re - i im, as NumPy's eig assembles them.
template <class T>
void run_eig(const Matrices& a, const std::vector<Matrices>& outs, bool vectors) {
    using R = typename Traits<T>::R;
    using C = std::complex<R>;
    lint n = a.shape.back();
    if (n == 0) return;
    lint ld = n, ldvl = 1, ldvr = vectors ? n : 1, lwork = -1, info = 0;
    char jobvl = 'N', jobvr = vectors ? 'V' : 'N';
    std::vector<T> buf(static_cast<size_t>(n * n)), vr(static_cast<size_t>(vectors ? n * n : 1)), vl(1);
    std::vector<C> w(static_cast<size_t>(n));
    std::vector<R> wr(static_cast<size_t>(n)), wi(static_cast<size_t>(n)), rwork(static_cast<size_t>(2 * n));
    auto call = [&](T* wk) {
        if constexpr (Traits<T>::complex) {
            using Geev = void (*)(char*, char*, lint*, T*, lint*, T*, T*, lint*, T*, lint*, T*, lint*, R*, lint*,
                                  size_t, size_t);
            reinterpret_cast<Geev>(routines<T>().geev)(&jobvl, &jobvr, &n, buf.data(), &ld, w.data(), vl.data(), &ldvl,
                                                        vr.data(), &ldvr, wk, &lwork, rwork.data(), &info, 1, 1);
        } else {
            using Geev = void (*)(char*, char*, lint*, T*, lint*, R*, R*, T*, lint*, T*, lint*, T*, lint*, lint*, size_t,
                                  size_t);
            reinterpret_cast<Geev>(routines<T>().geev)(&jobvl, &jobvr, &n, buf.data(), &ld, wr.data(), wi.data(),
                                                        vl.data(), &ldvl, vr.data(), &ldvr, wk, &lwork, &info, 1, 1);
        }
    };
    T wq(0);
    call(&wq);
    lwork = work_size(wq);
    // The real routines want at least 4n (vectors) or 3n; some builds answer the query with less.
    lwork = std::max<lint>(lwork, 4 * n);
    std::vector<T> work(static_cast<size_t>(lwork));
    std::vector<C> vc(static_cast<size_t>(vectors ? n * n : 0));
    const auto off = batch_offsets(a);
    C* values = reinterpret_cast<C*>(outs[0].data());
    for (size_t i = 0; i < off.size(); ++i) {
        gather(a, off[i], n, n, buf.data(), ld);
        info = 0;
        call(work.data());
        if (info > 0) linalg_error("Eigenvalues did not converge");
        if constexpr (!Traits<T>::complex)
            for (lint j = 0; j < n; ++j) w[static_cast<size_t>(j)] = C(wr[static_cast<size_t>(j)], wi[static_cast<size_t>(j)]);
        std::copy(w.begin(), w.end(), values + static_cast<int64_t>(i) * n);
        if (!vectors) continue;
        if constexpr (Traits<T>::complex) {
            scatter(vr.data(), n, n, n, outs[1], static_cast<int64_t>(i));
        } else {
            for (lint j = 0; j < n; ++j) {
                const bool pair = wi[static_cast<size_t>(j)] != R(0) && j + 1 < n;
                for (lint r = 0; r < n; ++r) {
                    const R re = vr[static_cast<size_t>(r + j * n)];
                    const R im = pair ? vr[static_cast<size_t>(r + (j + 1) * n)] : R(0);
                    vc[static_cast<size_t>(r + j * n)] = C(re, im);
                    if (pair) vc[static_cast<size_t>(r + (j + 1) * n)] = C(re, -im);
                }
                if (pair) ++j;
            }
            scatter(vc.data(), n, n, n, outs[1], static_cast<int64_t>(i));
        }
    }
}

template <class T>
void run_qr(const Matrices& a, const std::vector<Matrices>& outs, bool complete) {
    using Geqrf = void (*)(lint*, lint*, T*, lint*, T*, T*, lint*, lint*);
    using Orgqr = void (*)(lint*, lint*, lint*, T*, lint*, T*, T*, lint*, lint*);
    auto geqrf = reinterpret_cast<Geqrf>(routines<T>().geqrf);
    auto orgqr = reinterpret_cast<Orgqr>(routines<T>().orgqr);
    lint m = a.shape[static_cast<size_t>(a.ndim() - 2)], n = a.shape.back();
    lint k = std::min(m, n);
    lint qcols = complete ? m : k, rrows = complete ? m : k;
    lint ld = std::max<lint>(1, m);
    // Reduced mode never needs more than the m x n input's columns: Q's k columns
    // are formed in place over the reflectors (issue 28: m x m for a tall matrix
    // was 1.6 GB at 20,000 x 20).
    std::vector<T> buf(static_cast<size_t>(ld * std::max<lint>(1, std::max(qcols, n))));
    std::vector<T> tau(static_cast<size_t>(std::max<lint>(1, k)));
    std::vector<T> rbuf(static_cast<size_t>(std::max<lint>(1, rrows * n)));
    lint lwork = -1, info = 0;
    T q1(0), q2(0);
    if (m > 0 && n > 0) geqrf(&m, &n, buf.data(), &ld, tau.data(), &q1, &lwork, &info);
    if (m > 0 && qcols > 0) orgqr(&m, &qcols, &k, buf.data(), &ld, tau.data(), &q2, &lwork, &info);
    lwork = std::max(work_size(q1), work_size(q2));
    std::vector<T> work(static_cast<size_t>(lwork));
    const auto off = batch_offsets(a);
    for (size_t i = 0; i < off.size(); ++i) {
        gather(a, off[i], m, n, buf.data(), ld);
        if (m > 0 && n > 0) geqrf(&m, &n, buf.data(), &ld, tau.data(), work.data(), &lwork, &info);
        // R (upper triangle) before the reflectors become Q in the same buffer.
        const lint rld = std::max<lint>(1, rrows);
        for (lint c = 0; c < n; ++c)
            for (lint r = 0; r < rrows; ++r)
                rbuf[static_cast<size_t>(r + c * rld)] = (r <= c && r < m) ? buf[static_cast<size_t>(r + c * ld)] : T(0);
        scatter(rbuf.data(), rld, rrows, n, outs[1], static_cast<int64_t>(i));
        if (m > 0 && qcols > 0) {
            orgqr(&m, &qcols, &k, buf.data(), &ld, tau.data(), work.data(), &lwork, &info);
            scatter(buf.data(), ld, m, qcols, outs[0], static_cast<int64_t>(i));
        }
    }
}

template <class T>
void run_svd(const Matrices& a, const std::vector<Matrices>& outs, char jobz) {
    using R = typename Traits<T>::R;
    lint m = a.shape[static_cast<size_t>(a.ndim() - 2)], n = a.shape.back();
    lint k = std::min(m, n);
    const bool vectors = jobz != 'N';
    const bool full = jobz == 'A';
    lint ucols = full ? m : k, vrows = full ? n : k;
    const Matrices& s_out = vectors ? outs[1] : outs[0];
    const auto off = batch_offsets(a);
    if (k == 0) {
        // No singular values; full bases of an empty matrix are identities.
        if (full)
            for (size_t i = 0; i < off.size(); ++i) {
                std::vector<T> eye(static_cast<size_t>(std::max<lint>(1, std::max(m * m, n * n))));
                identity(eye.data(), m, m);
                scatter(eye.data(), m, m, m, outs[0], static_cast<int64_t>(i));
                identity(eye.data(), n, n);
                scatter(eye.data(), n, n, n, outs[2], static_cast<int64_t>(i));
            }
        return;
    }
    lint ld = m, ldu = m, ldvt = std::max<lint>(1, vrows);
    std::vector<T> buf(static_cast<size_t>(m * n));
    std::vector<R> s(static_cast<size_t>(k));
    std::vector<T> u(static_cast<size_t>(vectors ? m * ucols : 1)), vt(static_cast<size_t>(vectors ? ldvt * n : 1));
    std::vector<lint> iwork(static_cast<size_t>(8 * k));
    std::vector<R> rwork(Traits<T>::complex
                             ? static_cast<size_t>(k * std::max(5 * k + 7, 2 * std::max(m, n) + 2 * k + 1))
                             : 1);
    lint lwork = -1, info = 0;
    lint ldu_call = vectors ? ldu : 1, ldvt_call = vectors ? ldvt : 1;
    auto call = [&](T* wk) {
        if constexpr (Traits<T>::complex) {
            using Gesdd = void (*)(char*, lint*, lint*, T*, lint*, R*, T*, lint*, T*, lint*, T*, lint*, R*, lint*,
                                   lint*, size_t);
            reinterpret_cast<Gesdd>(routines<T>().gesdd)(&jobz, &m, &n, buf.data(), &ld, s.data(), u.data(), &ldu_call,
                                                          vt.data(), &ldvt_call, wk, &lwork, rwork.data(), iwork.data(),
                                                          &info, 1);
        } else {
            using Gesdd = void (*)(char*, lint*, lint*, T*, lint*, R*, T*, lint*, T*, lint*, T*, lint*, lint*, lint*,
                                   size_t);
            reinterpret_cast<Gesdd>(routines<T>().gesdd)(&jobz, &m, &n, buf.data(), &ld, s.data(), u.data(), &ldu_call,
                                                          vt.data(), &ldvt_call, wk, &lwork, iwork.data(), &info, 1);
        }
    };
    T wq(0);
    call(&wq);
    lwork = work_size(wq);
    std::vector<T> work(static_cast<size_t>(lwork));
    R* s_dst = reinterpret_cast<R*>(s_out.data());
    for (size_t i = 0; i < off.size(); ++i) {
        gather(a, off[i], m, n, buf.data(), ld);
        info = 0;
        call(work.data());
        if (info > 0) linalg_error("SVD did not converge");
        std::copy(s.begin(), s.end(), s_dst + static_cast<int64_t>(i) * k);
        if (vectors) {
            scatter(u.data(), ldu, m, ucols, outs[0], static_cast<int64_t>(i));
            scatter(vt.data(), ldvt, vrows, n, outs[2], static_cast<int64_t>(i));
        }
    }
}

template <class T>
void run(LinalgOp op, const Matrices& a, const Matrices* b, const std::vector<Matrices>& outs) {
    switch (op) {
        case LinalgOp::Solve: return run_solve<T>(a, b, outs, false);
        case LinalgOp::Inv: return run_solve<T>(a, b, outs, true);
        case LinalgOp::Cholesky: return run_cholesky<T>(a, outs, false);
        case LinalgOp::CholeskyUpper: return run_cholesky<T>(a, outs, true);
        case LinalgOp::Det: return run_det<T>(a, outs, false);
        case LinalgOp::Slogdet: return run_det<T>(a, outs, true);
        case LinalgOp::Eigh: return run_eigh<T>(a, outs, true);
        case LinalgOp::Eigvalsh: return run_eigh<T>(a, outs, false);
        case LinalgOp::Eig: return run_eig<T>(a, outs, true);
        case LinalgOp::Eigvals: return run_eig<T>(a, outs, false);
        case LinalgOp::QrReduced: return run_qr<T>(a, outs, false);
        case LinalgOp::QrComplete: return run_qr<T>(a, outs, true);
        case LinalgOp::SvdReduced: return run_svd<T>(a, outs, 'S');
        case LinalgOp::SvdFull: return run_svd<T>(a, outs, 'A');
        case LinalgOp::Svdvals: return run_svd<T>(a, outs, 'N');
    }
}

// Note [LAPACK and fork]: OpenBLAS stops its thread pool in a fork-prepare
// handler (registered when it loads, with NumPy). A fork while one of its
// calls is in flight leaves that call waiting for workers that are gone: the
// task never ends, nor does anything that waits on it (issue 29). hrxarray
// makes every LAPACK call, as a region of a lane task, so it keeps forks out
// of them: each region enters a gate, and our prepare handler (registered
// after NumPy's OpenBLAS, so run before its handler: prepare handlers run in
// reverse order) closes the gate to new regions and waits for the regions in
// flight to leave, at most kForkWait; after the fork, in the parent and in
// the child, the gate opens again. The lane threads of a blocked region
// wait for the fork, not the other way round, so the forking thread never
// waits on the GIL. Past kForkWait (a call that long is not a fork-time
// accident) the fork proceeds as before. FFTs need no gate: NumPy's
// pocketfft starts no threads of its own. The other kernels run on our own
// pool, whose handlers (kernels/pool.cpp) already survive a fork.
struct ForkGate {
    std::mutex mu;
    std::condition_variable cv;
    int inside = 0;        // regions in flight
    bool forking = false;  // a fork is being prepared: no region may start
};

constexpr auto kForkWait = std::chrono::seconds(30);

ForkGate* g_gate = new ForkGate;  // never destroyed: fork handlers and lane threads may outlive static destructors

void gate_prepare() {
    std::unique_lock<std::mutex> lock(g_gate->mu);
    g_gate->forking = true;
    g_gate->cv.wait_for(lock, kForkWait, [] { return g_gate->inside == 0; });
}

void gate_parent() {
    {
        std::lock_guard<std::mutex> lock(g_gate->mu);
        g_gate->forking = false;
    }
    g_gate->cv.notify_all();
}

void gate_child() {
    // The child has only the forking thread: whatever the other threads held
    // (the mutex, regions of threads that do not exist here) is void.
    g_gate = new (std::nothrow) ForkGate;
}

// One LAPACK region of a task (Note [LAPACK and fork]).
class LapackRegion {
public:
    LapackRegion() {
        std::unique_lock<std::mutex> lock(g_gate->mu);
        g_gate->cv.wait(lock, [] { return !g_gate->forking; });
        ++g_gate->inside;
    }
    ~LapackRegion() {
        {
            std::lock_guard<std::mutex> lock(g_gate->mu);
            --g_gate->inside;
        }
        g_gate->cv.notify_all();
    }
    LapackRegion(const LapackRegion&) = delete;
    LapackRegion& operator=(const LapackRegion&) = delete;
};

}  // namespace

void load_lapack(const std::string& path) {
    std::lock_guard<std::mutex> lock(g_load_mu);
    if (g_handle) return;
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) fail(ErrorKind::Unsupported, "linalg: cannot load LAPACK from " + path + ": " + dlerror());
    const char prefixes[4] = {'s', 'd', 'c', 'z'};
    Routines found[4];
    for (int t = 0; t < 4; ++t) {
        const bool cplx = t >= 2;
        auto sym = [&](const char* stem) {
            const std::string name = std::string("scipy_") + prefixes[t] + stem + "_64_";
            void* p = dlsym(h, name.c_str());
            if (!p) {
                dlclose(h);
                fail(ErrorKind::Unsupported, "linalg: " + path + " has no LAPACK routine " + name);
            }
            return p;
        };
        found[t] = Routines{sym("gesv"), sym("getrf"), sym("potrf"), sym(cplx ? "heevd" : "syevd"),
                            sym("geqrf"), sym(cplx ? "ungqr" : "orgqr"), sym("gesdd"), sym("geev")};
    }
    std::copy(found, found + 4, g_routines);
    // After the library's own handlers, so that ours run first (Note [LAPACK and fork]).
    static const bool gated = pthread_atfork(&gate_prepare, &gate_parent, &gate_child) == 0;
    (void)gated;
    g_handle = h;  // kept for the process: tasks may run until exit
}

bool lapack_loaded() {
    std::lock_guard<std::mutex> lock(g_load_mu);
    return g_handle != nullptr;
}

void linalg_run(LinalgOp op, DType dt, const Matrices& a, const Matrices* b, const std::vector<Matrices>& outs) {
    const LapackRegion region;
    switch (dt) {
        case DType::Float32: return run<float>(op, a, b, outs);
        case DType::Float64: return run<double>(op, a, b, outs);
        case DType::Complex64: return run<std::complex<float>>(op, a, b, outs);
        default: return run<std::complex<double>>(op, a, b, outs);
    }
}

}  // namespace hrx::kernels
