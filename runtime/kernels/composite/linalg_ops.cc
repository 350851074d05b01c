// torch's legacy names of the linalg ops (inverse, det, slogdet, logdet, cholesky, svd, qr) and
// the ops written with them (cholesky_solve, eigvalsh, svdvals): their gradients come from the
// linalg ops' derivatives.
#include <limits>
#include <vector>

#include "generated/api/detach.h"
#include "generated/api/linalg_cholesky.h"
#include "generated/api/linalg_det.h"
#include "generated/api/linalg_eigh.h"
#include "generated/api/linalg_inv.h"
#include "generated/api/linalg_qr.h"
#include "generated/api/linalg_slogdet.h"
#include "generated/api/linalg_solve.h"
#include "generated/api/linalg_svd.h"
#include "generated/api/linalg_svdvals.h"
#include "generated/api/lt.h"
#include "generated/api/masked_fill.h"
#include "generated/api/sub.h"
#include "generated/api/transpose.h"
#include "generated/api/tril.h"
#include "generated/api/triu.h"
#include "generated/api/zeros.h"
#include "generated/kernels/composite/cholesky.h"
#include "generated/kernels/composite/cholesky_solve.h"
#include "generated/kernels/composite/det.h"
#include "generated/kernels/composite/inverse.h"
#include "generated/kernels/composite/linalg_eigvalsh.h"
#include "generated/kernels/composite/linalg_svdvals.h"
#include "generated/kernels/composite/logdet.h"
#include "generated/kernels/composite/qr.h"
#include "generated/kernels/composite/slogdet.h"
#include "generated/kernels/composite/svd.h"

namespace kiln {
namespace composite_implicit {

Tensor inverse(const Tensor& self) { return kiln::linalg_inv(self); }

Tensor det(const Tensor& self) { return kiln::linalg_det(self); }

std::tuple<Tensor, Tensor> slogdet(const Tensor& self) { return kiln::linalg_slogdet(self); }

// log(det): nan where the determinant is negative; a singular matrix gives logabsdet's -inf.
Tensor logdet(const Tensor& self) {
  auto [sign, logabsdet] = kiln::linalg_slogdet(self);
  return kiln::masked_fill(logabsdet, kiln::lt(sign, 0), std::numeric_limits<double>::quiet_NaN());
}

Tensor cholesky(const Tensor& self, bool upper) { return kiln::linalg_cholesky(self, upper); }

// A = L L^T (or U^T U): X = L^{-T} (L^{-1} B), two solves with the factor (B is self, as torch).
Tensor cholesky_solve(const Tensor& self, const Tensor& input2, bool upper) {
  KILN_CHECK(self.dim() >= 2, "b should have at least 2 dimensions, but has ", self.dim(), " dimensions instead");
  KILN_CHECK(input2.dim() >= 2, "u should have at least 2 dimensions, but has ", input2.dim(),
             " dimensions instead");
  // The value reads the factor's triangle only (torch's potrs); the gradient is torch's formula,
  // which treats the factor as a full matrix (the same thing for a triangular factor): the other
  // triangle enters detached.
  const Tensor other = upper ? kiln::tril(input2, -1) : kiln::triu(input2, 1);
  const Tensor factor = kiln::sub(input2, kiln::detach(other));
  const Tensor lower = upper ? kiln::transpose(factor, -2, -1) : factor;
  const Tensor y = kiln::linalg_solve(lower, self, true);
  return kiln::linalg_solve(kiln::transpose(lower, -2, -1), y, true);
}

Tensor linalg_eigvalsh(const Tensor& A, const std::string& UPLO) { return std::get<0>(kiln::linalg_eigh(A, UPLO)); }

Tensor linalg_svdvals(const Tensor& A, const std::optional<std::string>& driver) {
  return std::get<1>(kiln::linalg_svd(A, false, driver));
}

// torch.svd: V = Vh^T; without compute_uv, U and V are zeros of the full bases' shapes (as torch).
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& self, bool some, bool compute_uv) {
  if (compute_uv) {
    auto [U, S, Vh] = kiln::linalg_svd(self, !some, std::nullopt);
    return {U, S, kiln::transpose(Vh, -2, -1)};
  }
  const Tensor S = kiln::linalg_svdvals(self, std::nullopt);
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  const int64_t m = shape[shape.size() - 2], n = shape.back();
  shape.back() = m;
  const Tensor U = kiln::zeros(shape, self.scalar_type());
  shape[shape.size() - 2] = n;
  shape.back() = n;
  return {U, S, kiln::zeros(shape, self.scalar_type())};
}

std::tuple<Tensor, Tensor> qr(const Tensor& self, bool some) {
  return kiln::linalg_qr(self, some ? "reduced" : "complete");
}

}  // namespace composite_implicit
}  // namespace kiln
