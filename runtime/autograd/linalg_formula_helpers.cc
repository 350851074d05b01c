// Formula helpers of the linalg derivatives (torch's FunctionsManual.cpp formulas for real
// matrices), written with ops so that second derivatives work.
#include <tuple>

#include "generated/api/linalg_inv.h"
#include "generated/api/linalg_solve.h"
#include "generated/api/matmul.h"
#include "generated/api/mul.h"
#include "generated/api/neg.h"
#include "generated/api/squeeze.h"
#include "generated/api/transpose.h"
#include "generated/api/unsqueeze.h"
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

Tensor linalg_det_backward(const Tensor& grad, const Tensor& A, const Tensor& det) {
  const Tensor d = kiln::unsqueeze(kiln::unsqueeze(kiln::mul(grad, det), -1), -1);
  return kiln::mul(d, mT(kiln::linalg_inv(A)));
}

Tensor linalg_slogdet_backward(const Tensor& grad, const Tensor& A) {
  return kiln::mul(kiln::unsqueeze(kiln::unsqueeze(grad, -1), -1), mT(kiln::linalg_inv(A)));
}

}  // namespace kiln
