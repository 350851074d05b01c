// Formula helpers of the linalg derivatives (schema/derivatives.yaml; codegen/loader.py,
// LINALG_HELPERS): torch's FunctionsManual.cpp formulas for real matrices, written with ops so
// second derivatives work. Only the autograd files that call one include this header.
#pragma once

#include <string>
#include <tuple>
#include <vector>

#include "generated/api/tensor.h"

namespace kiln {

// linalg_solve's (A, B) gradients: gB = solve(A^T, grad), gA = -gB X^T (left), summed over
// the batch dims that broadcasting added.
std::tuple<Tensor, Tensor> linalg_solve_backward(const Tensor& grad, const Tensor& A, const Tensor& B,
                                                 const Tensor& result, bool left);
// det: grad * det * A^{-T}; singular matrices as torch (0 in a plain backward pass, the adjugate
// through the SVD while a graph is built).
Tensor linalg_det_backward(const Tensor& grad, const Tensor& A, const Tensor& det);
// slogdet: grads = (sign, logabsdet); sign's is ignored (zero for real matrices), logabsdet's * A^{-T}.
Tensor linalg_slogdet_backward(const std::vector<TensorBase>& grads, const Tensor& A);
// cholesky: gA = L^{-T} Phi(L^T gL) L^{-1} (Phi: the lower triangle, diagonal halved, symmetrized).
Tensor linalg_cholesky_backward(const Tensor& grad, bool upper, const Tensor& result);
// eigh: grads = (eigenvalues, eigenvectors), either undefined.
Tensor linalg_eigh_backward(const std::vector<TensorBase>& grads, const Tensor& L, const Tensor& V);
// svd: grads = (U, S, Vh), any undefined.
Tensor linalg_svd_backward(const std::vector<TensorBase>& grads, const Tensor& U, const Tensor& S, const Tensor& Vh,
                           bool full_matrices);
// qr: grads = (Q, R); mode 'r' (no Q) raises, as torch.
Tensor linalg_qr_backward(const std::vector<TensorBase>& grads, const Tensor& Q, const Tensor& R,
                          const std::string& mode);

// lu_factor_ex: the packed LU's gradient through A = P L U (torch's linalg_lu_backward with
// gL = tril(grad, -1), gU = triu(grad)), square, wide and tall (linalg_lu_formula_helpers.cc).
Tensor linalg_lu_factor_ex_backward(const Tensor& grad, const Tensor& LU, const Tensor& pivots);
// lu_solve's LU gradient: op(A)'s gradient from X and B's gradient, then through A = P L U.
Tensor linalg_lu_solve_LU(const Tensor& grad, const Tensor& LU, const Tensor& pivots, const Tensor& X, bool left,
                          bool adjoint);

}  // namespace kiln
