// The batched LU helpers shared by the LU kernels (linalg_lu.cc) and the *_ex kernels
// (linalg_ex.cc): getrf of every matrix of a batch, and getrs with a batch of right-hand sides.
#pragma once

#include "runtime/core/tensor_base.h"

namespace kiln {
namespace cpu {

struct LuFactors {
  TensorBase LU;      // (*, m, n), contiguous
  TensorBase pivots;  // (*, min(m, n)), int32, LAPACK's 1-based row swaps
  TensorBase info;    // (*), int32: getrf's info (the first zero pivot of U, 1-based; 0: none)
};

// getrf of each (*, m, n) matrix of A (checked by the caller: float32/float64, at least 2 dims).
LuFactors lu_factor_batched(const TensorBase& A);

// Solves op(A) X = B (left) or X op(A) = B, op(A) = A^T with adjoint, with A = P L U given by
// (LU, pivots) of square matrices; B is (*, n, k) (or (*, k, n) when !left), batch dims
// broadcast. A zero pivot gives infinities/NaNs (getrs divides by it), as torch. `op` names
// the caller in the broadcast error.
TensorBase lu_solve_batched(const TensorBase& LU, const TensorBase& pivots, const TensorBase& B, bool left, bool adjoint,
                            const char* op);

}  // namespace cpu
}  // namespace kiln
