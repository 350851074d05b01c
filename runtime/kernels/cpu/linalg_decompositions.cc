// The factorization kernels: linalg_cholesky (potrf), linalg_eigh (syevd), linalg_svd (gesdd),
// linalg_qr (geqrf + orgqr), each on a column-major copy of every matrix of the batch.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "generated/kernels/linalg_cholesky.h"
#include "generated/kernels/linalg_eigh.h"
#include "generated/kernels/linalg_qr.h"
#include "generated/kernels/linalg_svd.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/linalg_lapack.h"

namespace kiln {
namespace cpu {
namespace {

DimVector with_matrix(IntArrayRef batch, int64_t rows, int64_t cols) {
  DimVector s(batch.begin(), batch.end());
  s.push_back(rows);
  s.push_back(cols);
  return s;
}

DimVector with_vector(IntArrayRef batch, int64_t n) {
  DimVector s(batch.begin(), batch.end());
  s.push_back(n);
  return s;
}

// An infinite entry and no NaN (gesdd reports a NaN itself, as an illegal argument).
template <typename T>
bool has_infinity(const std::vector<T>& a) {
  bool inf = false;
  for (T v : a) {
    if (std::isnan(v)) return false;
    inf = inf || std::isinf(v);
  }
  return inf;
}

const char* uplo_checked(const std::string& UPLO) {
  KILN_CHECK(UPLO == "L" || UPLO == "l" || UPLO == "U" || UPLO == "u",
             "Expected UPLO argument to be 'L' or 'U', but got ", UPLO);
  return (UPLO == "L" || UPLO == "l") ? "L" : "U";
}

}  // namespace

// The lower factor L (A = L L^T), or U = L^T with upper; only A's lower triangle is read.
TensorBase linalg_cholesky(const TensorBase& A_in, bool upper) {
  const char* op = "linalg.cholesky";
  check_square(A_in, op);
  const int64_t n = A_in.sizes()[A_in.dim() - 1];
  const DimVector batch = batch_shape(A_in);
  const int64_t nbatch = batch_numel(batch);
  const TensorBase A = batched_contiguous(A_in, batch, op);
  TensorBase out = empty_cpu(A.sizes(), A.dtype());
  KILN_DISPATCH_FLOATING_TYPES(A.dtype(), op, [&] {
    const scalar_t* pa = static_cast<const scalar_t*>(A.data_ptr());
    scalar_t* po = static_cast<scalar_t*>(out.data_ptr());
    std::vector<scalar_t> a(n * n);
    for (int64_t b = 0; b < nbatch && n > 0; ++b) {
      to_colmajor(pa + b * n * n, n, n, a.data());
      int info = 0;
      lapack::potrf('L', static_cast<int>(n), a.data(), &info);
      KILN_CHECK(info >= 0, "potrf: illegal argument ", -info);
      KILN_CHECK_LINALG(info == 0, op, ": ", batch_prefix(A_in, b),
                        "The factorization could not be completed because the input is not positive-definite "
                        "(the leading minor of order ",
                        info, " is not positive-definite).");
      scalar_t* o = po + b * n * n;
      for (int64_t i = 0; i < n; ++i)  // column-major L: L(i, j) at a[j * n + i]
        for (int64_t j = 0; j < n; ++j) {
          const scalar_t l = j <= i ? a[j * n + i] : scalar_t(0);
          (upper ? o[j * n + i] : o[i * n + j]) = l;
        }
    }
  });
  return out;
}

// Ascending eigenvalues and orthonormal eigenvectors (columns) of the symmetric matrix given by
// A's lower (UPLO 'L') or upper triangle.
std::tuple<TensorBase, TensorBase> linalg_eigh(const TensorBase& A_in, const std::string& UPLO) {
  const char* op = "linalg.eigh";
  const char* uplo = uplo_checked(UPLO);
  check_square(A_in, op);
  const int64_t n = A_in.sizes()[A_in.dim() - 1];
  const DimVector batch = batch_shape(A_in);
  const int64_t nbatch = batch_numel(batch);
  const TensorBase A = batched_contiguous(A_in, batch, op);
  TensorBase values = empty_cpu(with_vector(batch, n), A.dtype());
  TensorBase vectors = empty_cpu(A.sizes(), A.dtype());
  KILN_DISPATCH_FLOATING_TYPES(A.dtype(), op, [&] {
    const scalar_t* pa = static_cast<const scalar_t*>(A.data_ptr());
    scalar_t* pw = static_cast<scalar_t*>(values.data_ptr());
    scalar_t* pv = static_cast<scalar_t*>(vectors.data_ptr());
    std::vector<scalar_t> a(n * n);
    const int ni = static_cast<int>(n);
    for (int64_t b = 0; b < nbatch && n > 0; ++b) {
      to_colmajor(pa + b * n * n, n, n, a.data());
      int info = 0, iwork_size = 0;
      scalar_t work_size = 0;
      lapack::syevd('V', uplo[0], ni, a.data(), pw + b * n, &work_size, -1, &iwork_size, -1, &info);
      std::vector<scalar_t> work(std::max<int64_t>(static_cast<int64_t>(work_size), 1));
      std::vector<int> iwork(std::max(iwork_size, 1));
      lapack::syevd('V', uplo[0], ni, a.data(), pw + b * n, work.data(), static_cast<int>(work.size()), iwork.data(),
                    static_cast<int>(iwork.size()), &info);
      KILN_CHECK(info >= 0, "syevd: illegal argument ", -info);
      KILN_CHECK_LINALG(info == 0, op, ": ", batch_prefix(A_in, b),
                        "The algorithm failed to converge because the input matrix is ill-conditioned or has too "
                        "many repeated eigenvalues (error code: ",
                        info, ").");
      from_colmajor(a.data(), n, n, pv + b * n * n);
    }
  });
  return {values, vectors};
}

// A = U diag(S) Vh, S descending. full_matrices: U is m x m and Vh n x n; else m x k and k x n.
std::tuple<TensorBase, TensorBase, TensorBase> linalg_svd(const TensorBase& A_in, bool full_matrices,
                                                          const std::optional<std::string>& driver) {
  const char* op = "linalg.svd";
  check_linalg_input(A_in, op);
  KILN_CHECK(!driver.has_value(), "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs "
             "with cuSOLVER backend.");
  const int64_t m = A_in.sizes()[A_in.dim() - 2], n = A_in.sizes()[A_in.dim() - 1], k = std::min(m, n);
  const int64_t ucols = full_matrices ? m : k, vrows = full_matrices ? n : k;
  const DimVector batch = batch_shape(A_in);
  const int64_t nbatch = batch_numel(batch);
  const TensorBase A = batched_contiguous(A_in, batch, op);
  TensorBase U = zeros_cpu(with_matrix(batch, m, ucols), A.dtype());
  TensorBase S = empty_cpu(with_vector(batch, k), A.dtype());
  TensorBase Vh = zeros_cpu(with_matrix(batch, vrows, n), A.dtype());
  KILN_DISPATCH_FLOATING_TYPES(A.dtype(), op, [&] {
    const scalar_t* pa = static_cast<const scalar_t*>(A.data_ptr());
    scalar_t* pu = static_cast<scalar_t*>(U.data_ptr());
    scalar_t* ps = static_cast<scalar_t*>(S.data_ptr());
    scalar_t* pv = static_cast<scalar_t*>(Vh.data_ptr());
    if (k == 0) {  // no singular values: the full bases are identities (as torch)
      for (int64_t b = 0; b < nbatch; ++b) {
        for (int64_t i = 0; i < std::min(m, ucols); ++i) pu[b * m * ucols + i * ucols + i] = scalar_t(1);
        for (int64_t i = 0; i < std::min(n, vrows); ++i) pv[b * vrows * n + i * n + i] = scalar_t(1);
      }
      return;
    }
    std::vector<scalar_t> a(m * n), u(m * ucols), vt(vrows * n);
    std::vector<int> iwork(8 * k);
    const char jobz = full_matrices ? 'A' : 'S';
    const int mi = static_cast<int>(m), ni = static_cast<int>(n), ldu = mi, ldvt = static_cast<int>(vrows);
    for (int64_t b = 0; b < nbatch; ++b) {
      to_colmajor(pa + b * m * n, m, n, a.data());
      if (has_infinity(a)) {  // gesdd never returns on an infinite entry (torch's svd hangs): NaNs, as svdvals
        const scalar_t nan = std::numeric_limits<scalar_t>::quiet_NaN();
        std::fill(ps + b * k, ps + (b + 1) * k, nan);
        std::fill(pu + b * m * ucols, pu + (b + 1) * m * ucols, nan);
        std::fill(pv + b * vrows * n, pv + (b + 1) * vrows * n, nan);
        continue;
      }
      int info = 0;
      scalar_t work_size = 0;
      lapack::gesdd(jobz, mi, ni, a.data(), ps + b * k, u.data(), ldu, vt.data(), ldvt, &work_size, -1, iwork.data(),
                    &info);
      std::vector<scalar_t> work(std::max<int64_t>(static_cast<int64_t>(work_size), 1));
      lapack::gesdd(jobz, mi, ni, a.data(), ps + b * k, u.data(), ldu, vt.data(), ldvt, work.data(),
                    static_cast<int>(work.size()), iwork.data(), &info);
      // gesdd refuses a NaN entry as an illegal A (info -4); torch reports it as below.
      KILN_CHECK_LINALG(info != -4, op, ": ", batch_prefix(A_in, b),
                        "The algorithm failed to converge because the input matrix contained non-finite values.");
      KILN_CHECK(info >= 0, "gesdd: illegal argument ", -info);
      KILN_CHECK_LINALG(info == 0, op, ": ", batch_prefix(A_in, b),
                        "The algorithm failed to converge because the input matrix is ill-conditioned or has too "
                        "many repeated singular values (error code: ",
                        info, ").");
      from_colmajor(u.data(), m, ucols, pu + b * m * ucols);
      from_colmajor(vt.data(), vrows, n, pv + b * vrows * n);
    }
  });
  return {U, S, Vh};
}

// mode 'reduced': Q m x k, R k x n; 'complete': Q m x m, R m x n; 'r': R only (Q empty).
std::tuple<TensorBase, TensorBase> linalg_qr(const TensorBase& A_in, const std::string& mode) {
  const char* op = "linalg.qr";
  KILN_CHECK(mode == "reduced" || mode == "complete" || mode == "r", "qr received unrecognized mode '", mode,
             "' but expected one of 'reduced' (default), 'r', or 'complete'");
  check_linalg_input(A_in, op);
  const int64_t m = A_in.sizes()[A_in.dim() - 2], n = A_in.sizes()[A_in.dim() - 1], k = std::min(m, n);
  const bool complete = mode == "complete", compute_q = mode != "r";
  const int64_t qcols = complete ? m : k, rrows = complete ? m : k;
  const DimVector batch = batch_shape(A_in);
  const int64_t nbatch = batch_numel(batch);
  const TensorBase A = batched_contiguous(A_in, batch, op);
  TensorBase Q = compute_q ? zeros_cpu(with_matrix(batch, m, qcols), A.dtype()) : empty_cpu({0}, A.dtype());
  TensorBase R = zeros_cpu(with_matrix(batch, rrows, n), A.dtype());
  KILN_DISPATCH_FLOATING_TYPES(A.dtype(), op, [&] {
    const scalar_t* pa = static_cast<const scalar_t*>(A.data_ptr());
    scalar_t* pq = compute_q ? static_cast<scalar_t*>(Q.data_ptr()) : nullptr;
    scalar_t* pr = static_cast<scalar_t*>(R.data_ptr());
    // geqrf works in place on m x max(n, qcols) columns so orgqr can extend Q to m x m.
    const int64_t cols = std::max(n, qcols);
    std::vector<scalar_t> a(std::max<int64_t>(m * cols, 1)), tau(std::max<int64_t>(k, 1));
    const int mi = static_cast<int>(m);
    for (int64_t b = 0; b < nbatch; ++b) {
      if (m == 0) break;
      std::fill(a.begin(), a.end(), scalar_t(0));
      to_colmajor(pa + b * m * n, m, n, a.data());
      int info = 0;
      scalar_t work_size = 0;
      if (k > 0) {
        lapack::geqrf(mi, static_cast<int>(n), a.data(), tau.data(), &work_size, -1, &info);
        std::vector<scalar_t> work(std::max<int64_t>(static_cast<int64_t>(work_size), 1));
        lapack::geqrf(mi, static_cast<int>(n), a.data(), tau.data(), work.data(), static_cast<int>(work.size()), &info);
        KILN_CHECK(info == 0, "geqrf: illegal argument ", -info);
      }
      scalar_t* r = pr + b * rrows * n;  // R: the upper triangle of the first rrows rows
      for (int64_t i = 0; i < std::min(rrows, m); ++i)
        for (int64_t j = i; j < n; ++j) r[i * n + j] = a[j * m + i];
      if (!compute_q) continue;
      scalar_t* q = pq + b * m * qcols;
      if (k == 0) {  // no reflectors: Q is the identity's first columns
        for (int64_t i = 0; i < std::min(m, qcols); ++i) q[i * qcols + i] = scalar_t(1);
        continue;
      }
      const int qc = static_cast<int>(qcols), ki = static_cast<int>(k);
      lapack::orgqr(mi, qc, ki, a.data(), tau.data(), &work_size, -1, &info);
      std::vector<scalar_t> work(std::max<int64_t>(static_cast<int64_t>(work_size), 1));
      lapack::orgqr(mi, qc, ki, a.data(), tau.data(), work.data(), static_cast<int>(work.size()), &info);
      KILN_CHECK(info == 0, "orgqr: illegal argument ", -info);
      from_colmajor(a.data(), m, qcols, q);
    }
  });
  return {Q, R};
}

}  // namespace cpu
}  // namespace kiln
