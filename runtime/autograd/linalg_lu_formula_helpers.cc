// The LU derivatives (torch's FunctionsManual.cpp linalg_lu_backward and the adjoint of
// lu_solve, real case), written with ops so second derivatives work. Triangular solves are
// linalg_solve with the triangle (a full matrix whose other triangle is zero).
#include <algorithm>

#include "generated/api/_lu_pivots_to_permutation.h"
#include "generated/api/add.h"
#include "generated/api/cat.h"
#include "generated/api/eye.h"
#include "generated/api/linalg_lu_solve.h"
#include "generated/api/linalg_solve.h"
#include "generated/api/matmul.h"
#include "generated/api/narrow.h"
#include "generated/api/neg.h"
#include "generated/api/sub.h"
#include "generated/api/transpose.h"
#include "generated/api/tril.h"
#include "generated/api/triu.h"
#include "generated/api/zeros_like.h"
#include "runtime/autograd/formula_helpers.h"
#include "runtime/autograd/linalg_formula_helpers.h"

namespace kiln {
namespace {
Tensor mT(const Tensor& t) { return kiln::transpose(t, -2, -1); }

struct Unpacked {
  Tensor P, L, U;  // A = P L U; L (*, m, k) unit lower, U (*, k, n) upper
};

Unpacked unpack(const Tensor& LU, const Tensor& pivots) {
  const int64_t m = LU.sizes()[LU.dim() - 2], n = LU.sizes().back(), k = std::min(m, n);
  return {kiln::_lu_pivots_to_permutation(pivots, m, LU.scalar_type()),
          kiln::add(kiln::tril(kiln::narrow(LU, -1, 0, k), -1), kiln::eye(m, k, LU.scalar_type())),
          kiln::triu(kiln::narrow(LU, -2, 0, k))};
}
}  // namespace

// Square: gA = P L^{-T} (tril(L^T gL, -1) + triu(gU U^T)) U^{-T}. Wide (m < n) and tall (m > n)
// go through the leading k x k blocks, as torch's linalg_lu_backward.
Tensor linalg_lu_factor_ex_backward(const Tensor& grad, const Tensor& LU, const Tensor& pivots) {
  if (LU.numel() == 0) return kiln::zeros_like(LU);
  const int64_t m = LU.sizes()[LU.dim() - 2], n = LU.sizes().back(), k = std::min(m, n);
  const Unpacked f = unpack(LU, pivots);
  const Tensor gL = kiln::tril(kiln::narrow(grad, -1, 0, k), -1);
  const Tensor gU = kiln::triu(kiln::narrow(grad, -2, 0, k));
  Tensor gA;
  if (m == n) {
    gA = kiln::add(kiln::tril(kiln::matmul(mT(f.L), gL), -1), kiln::triu(kiln::matmul(gU, mT(f.U))));
    gA = kiln::linalg_solve(mT(f.U), gA, false);  // . U^{-T}
    gA = kiln::linalg_solve(mT(f.L), gA, true);   // L^{-T} .
  } else if (m < n) {
    const Tensor U1 = kiln::narrow(f.U, -1, 0, k);
    gA = kiln::sub(kiln::matmul(mT(f.L), gL), kiln::matmul(gU, mT(f.U)));
    gA = kiln::linalg_solve(mT(U1), kiln::tril(gA, -1), false);
    gA = kiln::cat({kiln::add(gA, kiln::narrow(gU, -1, 0, k)), kiln::narrow(gU, -1, k, n - k)}, -1);
    gA = kiln::linalg_solve(mT(f.L), gA, true);
  } else {
    const Tensor L1 = kiln::narrow(f.L, -2, 0, k);
    gA = kiln::sub(kiln::matmul(gU, mT(f.U)), kiln::matmul(mT(f.L), gL));
    gA = kiln::linalg_solve(mT(L1), kiln::triu(gA), true);
    gA = kiln::cat({kiln::add(gA, kiln::narrow(gL, -2, 0, k)), kiln::narrow(gL, -2, k, m - k)}, -2);
    gA = kiln::linalg_solve(mT(f.U), gA, false);
  }
  return kiln::matmul(f.P, gA);
}

// X solves op(A) X = B (left) or X op(A) = B; gB = lu_solve(grad) with the other op, and
// op(A)'s gradient is -gB X^T (left) or -X^T gB. A = P L U gives
// gLU = tril(P^T gA U^T, -1) + triu(L^T P^T gA), summed over the batch dims B broadcast.
Tensor linalg_lu_solve_LU(const Tensor& grad, const Tensor& LU, const Tensor& pivots, const Tensor& X, bool left,
                          bool adjoint) {
  const Tensor gB = kiln::linalg_lu_solve(LU, pivots, grad, left, !adjoint);
  Tensor gOpA = kiln::neg(left ? kiln::matmul(gB, mT(X)) : kiln::matmul(mT(X), gB));
  const Tensor gA = adjoint ? mT(gOpA) : gOpA;
  const Unpacked f = unpack(LU, pivots);
  const Tensor PtgA = kiln::matmul(mT(f.P), gA);
  const Tensor gLU = kiln::add(kiln::tril(kiln::matmul(PtgA, mT(f.U)), -1), kiln::triu(kiln::matmul(mT(f.L), PtgA)));
  return sum_to(gLU, LU.sizes());
}

}  // namespace kiln
