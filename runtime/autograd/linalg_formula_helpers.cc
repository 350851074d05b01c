// Formula helpers of the linalg derivatives (torch's FunctionsManual.cpp formulas for real
// matrices), written with ops so that second derivatives work.
#include <limits>
#include <tuple>
#include <vector>

#include "generated/api/abs.h"
#include "generated/api/add.h"
#include "generated/api/any.h"
#include "generated/api/cat.h"
#include "generated/api/diag_embed.h"
#include "generated/api/div.h"
#include "generated/api/eq.h"
#include "generated/api/expand.h"
#include "generated/api/eye.h"
#include "generated/api/linalg_det.h"
#include "generated/api/linalg_inv.h"
#include "generated/api/linalg_lu_factor_ex.h"
#include "generated/api/linalg_lu_solve.h"
#include "generated/api/linalg_solve.h"
#include "generated/api/linalg_svd.h"
#include "generated/api/lt.h"
#include "generated/api/matmul.h"
#include "generated/api/mul.h"
#include "generated/api/narrow.h"
#include "generated/api/neg.h"
#include "generated/api/ones_like.h"
#include "generated/api/squeeze.h"
#include "generated/api/sub.h"
#include "generated/api/transpose.h"
#include "generated/api/tril.h"
#include "generated/api/triu.h"
#include "generated/api/unsqueeze.h"
#include "generated/api/where.h"
#include "generated/api/zeros.h"
#include "generated/api/zeros_like.h"
#include "runtime/autograd/formula_helpers.h"
#include "runtime/autograd/linalg_formula_helpers.h"

namespace kiln {
namespace {
Tensor mT(const Tensor& t) { return kiln::transpose(t, -2, -1); }
}  // namespace

// X = A^{-1} B: gB = A^{-T} gX and gA = -gB X^T; X A = B: gB = gX A^{-T} and gA = -X^T gB.
// A vector B (torch's rule, as the kernel) is a one-column matrix here.
std::tuple<Tensor, Tensor> linalg_solve_backward(const Tensor& grad, const Tensor& A, const Tensor& B,
                                                 const Tensor& result, bool left) {
  const bool vector_case =
      B.dim() == 1 || (B.dim() == A.dim() - 1 && IntArrayRef(A.sizes().data(), A.dim() - 1) == B.sizes());
  const Tensor gX = vector_case ? kiln::unsqueeze(grad, -1) : grad;
  const Tensor X = vector_case ? kiln::unsqueeze(result, -1) : result;
  const Tensor gB = kiln::linalg_solve(mT(A), gX, left);
  const Tensor gA = kiln::neg(left ? kiln::matmul(gB, mT(X)) : kiln::matmul(mT(X), gB));
  return {sum_to(gA, A.sizes()), sum_to(vector_case ? kiln::squeeze(gB, -1) : gB, B.sizes())};
}

// The gradient of prod(S) over the last dim without dividing by S (zeros allowed): the product
// of the entries before each one times the product of those after it (torch's
// prod_safe_zeros_backward), as running products of multiplications only, so that its own
// gradient stays exact at tiny singular values (cumprod's divides by them).
static Tensor prod_safe_zeros_backward(const Tensor& grad, const Tensor& S) {
  const int64_t k = S.sizes().back();
  if (k == 0) return kiln::zeros_like(S);
  auto entry = [&](int64_t i) { return kiln::narrow(S, -1, i, 1); };
  std::vector<Tensor> before(k), after(k), others(k);
  before[0] = kiln::ones_like(entry(0));
  for (int64_t i = 1; i < k; ++i) before[i] = kiln::mul(before[i - 1], entry(i - 1));
  after[k - 1] = kiln::ones_like(entry(0));
  for (int64_t i = k - 2; i >= 0; --i) after[i] = kiln::mul(after[i + 1], entry(i + 1));
  for (int64_t i = 0; i < k; ++i) others[i] = kiln::mul(before[i], after[i]);
  return kiln::mul(grad, kiln::cat(others, -1));
}

// As torch: grad * det * A^{-T} for an invertible A. An exactly singular A (a zero pivot, det 0)
// gets 0 in a plain backward pass (torch's lu_solve of d = grad * det = 0); while a graph is built
// (create_graph), matrices with |det| < 100 eps get the adjugate from the SVD instead,
// U diag(prod_{j != i} S_j) Vh * det(U) det(Vh) * grad, so second derivatives exist there too.
Tensor linalg_det_backward(const Tensor& grad, const Tensor& A, const Tensor& det) {
  if (A.numel() == 0) return Tensor();  // no gradient, as torch
  const int64_t n = A.sizes().back();
  const Tensor eye = kiln::eye(n, std::nullopt, A.scalar_type());
  const double eps = A.scalar_type() == ScalarType::Float32 ? double(std::numeric_limits<float>::epsilon())
                                                            : std::numeric_limits<double>::epsilon();
  const bool graph = GradMode::is_enabled();
  const Tensor singular = graph ? kiln::lt(kiln::abs(det), 100 * eps) : kiln::eq(det, 0);
  const Tensor singular_m = kiln::unsqueeze(kiln::unsqueeze(singular, -1), -1);
  const Tensor d = kiln::unsqueeze(kiln::unsqueeze(kiln::mul(grad, det), -1), -1);
  if (!kiln::any(singular).item().to_bool()) return kiln::mul(d, mT(kiln::linalg_inv(A)));
  // Invert the others only (identity in the singular places, whose result is replaced).
  const Tensor safe = kiln::where(singular_m, eye, A);
  const Tensor regular = kiln::mul(d, mT(kiln::linalg_inv(safe)));
  if (!graph) return kiln::where(singular_m, kiln::zeros_like(regular), regular);
  auto [U, S, Vh] = kiln::linalg_svd(A, false, std::nullopt);
  const Tensor alpha = kiln::mul(kiln::mul(kiln::linalg_det(U), kiln::linalg_det(Vh)), grad);
  const Tensor D = prod_safe_zeros_backward(kiln::unsqueeze(alpha, -1), S);
  const Tensor adjugate = kiln::matmul(kiln::mul(U, kiln::unsqueeze(D, -2)), Vh);
  return kiln::where(singular_m, adjugate, regular);
}

Tensor linalg_slogdet_backward(const std::vector<TensorBase>& grads, const Tensor& A) {
  const Tensor grad(grads.size() > 1 ? grads[1] : TensorBase());
  if (!grad.defined()) return Tensor();
  // g A^{-T} as torch computes it: lu_solve with the LU of A^T when A is contiguous (torch's
  // slogdet factors A^T then, det(A^T) = det(A)), of A with adjoint otherwise. At a singular A (a
  // zero pivot) getrs's division by it gives torch's infinities and NaNs instead of an error.
  const bool use_A_T = A.is_contiguous();
  auto [LU, pivots, info] = kiln::linalg_lu_factor_ex(use_A_T ? mT(A) : A, true, false);
  const Tensor d = kiln::diag_embed(kiln::expand(kiln::unsqueeze(grad, -1), pivots.sizes()));
  return kiln::linalg_lu_solve(LU, pivots, d, true, !use_A_T);
}

// L = chol(A) (torch's cholesky_backward, Murray 2016): Phi = tril(L^T gL) with its diagonal
// halved, symmetrized; gA = L^{-T} Phi L^{-1}. upper: L = U^T.
Tensor linalg_cholesky_backward(const Tensor& grad, bool upper, const Tensor& result) {
  const Tensor L = upper ? mT(result) : result;
  const Tensor gL = upper ? mT(grad) : grad;
  const Tensor phi = kiln::tril(kiln::matmul(mT(L), gL));
  const Tensor sym = kiln::mul(kiln::add(phi, mT(kiln::tril(phi, -1))), 0.5);
  // L^{-T} sym, then (.) L^{-1}: two solves with L's transpose and L.
  const Tensor left = kiln::linalg_solve(mT(L), sym, true);
  return kiln::linalg_solve(L, left, false);
}

// A = V diag(L) V^T (torch's linalg_eig_backward, hermitian case):
// gA = V (diag(gL) + skew(V^T gV) / 2 / E) V^T, E_ij = L_j - L_i (1 on the diagonal).
Tensor linalg_eigh_backward(const std::vector<TensorBase>& grads, const Tensor& L, const Tensor& V) {
  const Tensor gL(grads[0]), gV(grads.size() > 1 ? grads[1] : TensorBase());
  if (!gV.defined()) return kiln::matmul(kiln::mul(V, kiln::unsqueeze(gL, -2)), mT(V));
  const Tensor VhgV = kiln::matmul(mT(V), gV);
  const Tensor skew = kiln::mul(kiln::sub(VhgV, mT(VhgV)), 0.5);
  Tensor E = kiln::sub(kiln::unsqueeze(L, -2), kiln::unsqueeze(L, -1));
  const Tensor eye = kiln::eye(L.sizes().back(), std::nullopt, L.scalar_type());
  E = kiln::add(E, eye);  // 1 on the diagonal, where skew is 0 (and gL goes)
  Tensor inner = kiln::div(skew, E);
  if (gL.defined()) inner = kiln::add(inner, kiln::diag_embed(gL));
  return kiln::matmul(V, kiln::matmul(inner, mT(V)));
}

// A = U diag(S) Vh (torch's svd_backward, real case); with full_matrices only the first k = min(m, n)
// columns of U and rows of Vh are determined, so the rest are dropped, gradients included.
Tensor linalg_svd_backward(const std::vector<TensorBase>& grads, const Tensor& U_full, const Tensor& S,
                           const Tensor& Vh_full, bool full_matrices) {
  Tensor gU(grads[0]), gS(grads[1]), gVh(grads[2]);
  if (!gU.defined() && !gS.defined() && !gVh.defined()) return Tensor();
  const int64_t k = S.sizes().back();
  const Tensor U = full_matrices ? kiln::narrow(U_full, -1, 0, k) : U_full;
  const Tensor Vh = full_matrices ? kiln::narrow(Vh_full, -2, 0, k) : Vh_full;
  if (full_matrices && gU.defined()) gU = kiln::narrow(gU, -1, 0, k);
  if (full_matrices && gVh.defined()) gVh = kiln::narrow(gVh, -2, 0, k);
  const int64_t m = U.sizes()[U.dim() - 2], n = Vh.sizes().back();
  if (!gU.defined() && !gVh.defined())  // svdvals: U diag(gS) Vh
    return m >= n ? kiln::matmul(U, kiln::mul(kiln::unsqueeze(gS, -1), Vh))
                  : kiln::matmul(kiln::mul(U, kiln::unsqueeze(gS, -2)), Vh);
  auto skew = [](const Tensor& X) { return kiln::sub(X, mT(X)); };
  const Tensor S_row = kiln::unsqueeze(S, -2), S_col = kiln::unsqueeze(S, -1);
  const Tensor S2 = kiln::mul(S, S);
  const Tensor E = kiln::add(kiln::sub(kiln::unsqueeze(S2, -2), kiln::unsqueeze(S2, -1)),
                             kiln::eye(k, std::nullopt, S.scalar_type()));  // E_jk = S_k^2 - S_j^2, 1 on the diagonal
  Tensor gA;
  if (gU.defined() && gVh.defined()) {
    gA = kiln::div(kiln::add(kiln::mul(skew(kiln::matmul(mT(U), gU)), S_row),
                             kiln::mul(S_col, skew(kiln::matmul(Vh, mT(gVh))))), E);
  } else if (gU.defined()) {
    gA = kiln::mul(kiln::div(skew(kiln::matmul(mT(U), gU)), E), S_row);
  } else {
    gA = kiln::mul(S_col, kiln::div(skew(kiln::matmul(Vh, mT(gVh))), E));
  }
  if (gS.defined()) gA = kiln::add(gA, kiln::diag_embed(gS));
  if (m > n && gU.defined()) {  // + (I - U U^T) gU S^{-1}, then V^T
    gA = kiln::matmul(U, gA);
    const Tensor gUSinv = kiln::div(gU, S_row);
    gA = kiln::sub(kiln::add(gA, gUSinv), kiln::matmul(U, kiln::matmul(mT(U), gUSinv)));
    return kiln::matmul(gA, Vh);
  }
  if (m < n && gVh.defined()) {  // + S^{-1} gVh (I - V V^T), then U
    gA = kiln::matmul(gA, Vh);
    const Tensor SinvgVh = kiln::div(gVh, S_col);
    gA = kiln::sub(kiln::add(gA, SinvgVh), kiln::matmul(kiln::matmul(SinvgVh, mT(Vh)), Vh));
    return kiln::matmul(U, gA);
  }
  return m >= n ? kiln::matmul(U, kiln::matmul(gA, Vh)) : kiln::matmul(kiln::matmul(U, gA), Vh);
}

// A = Q R (torch's linalg_qr_backward, real case). m >= n: gA = (gQ + Q syminvadj(triu(M))) R^{-T}
// with M = gR R^T - Q^T gQ; m < n: through the leading m x m block of R.
Tensor linalg_qr_backward(const std::vector<TensorBase>& grads, const Tensor& Q, const Tensor& R,
                          const std::string& mode) {
  const Tensor gQ(grads[0]), gR(grads[1]);
  KILN_CHECK(mode != "r", "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
             "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.");
  const int64_t m = Q.sizes()[Q.dim() - 2], n = R.sizes().back();
  KILN_CHECK(mode == "reduced" || m <= n,
             "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.");
  if (!gQ.defined() && !gR.defined()) return Tensor();
  Tensor gA;
  if (gQ.defined()) {
    const Tensor QtgQ = kiln::matmul(mT(Q), gQ);
    gA = gR.defined() ? kiln::sub(kiln::matmul(gR, mT(R)), QtgQ) : kiln::neg(QtgQ);
  } else {
    gA = kiln::matmul(gR, mT(R));
  }
  if (m >= n) {
    const Tensor upper = kiln::triu(gA);
    gA = kiln::matmul(Q, kiln::add(upper, mT(kiln::triu(gA, 1))));
    if (gQ.defined()) gA = kiln::add(gA, gQ);
    return kiln::linalg_solve(mT(R), gA, false);  // gA R^{-T}
  }
  gA = kiln::matmul(Q, kiln::tril(kiln::sub(mT(gA), gA)));
  gA = kiln::linalg_solve(mT(kiln::narrow(R, -1, 0, m)), gA, false);
  std::vector<int64_t> pad(gA.sizes().begin(), gA.sizes().end());
  pad.back() = n - m;
  gA = kiln::cat({gA, kiln::zeros(pad, gA.scalar_type())}, -1);
  return gR.defined() ? kiln::add(gA, kiln::matmul(Q, gR)) : gA;
}

}  // namespace kiln
