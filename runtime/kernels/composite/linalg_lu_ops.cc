// The LU ops written with ops: linalg_lu_factor (lu_factor_ex, raising on a zero pivot),
// lu_unpack (P from the pivots, L and U the triangles of LU), linalg_lu and the legacy lu_solve.
// Their gradients come from linalg_lu_factor_ex's and linalg_lu_solve's derivatives.
#include <algorithm>
#include <vector>

#include "generated/api/_lu_pivots_to_permutation.h"
#include "generated/api/add.h"
#include "generated/api/any.h"
#include "generated/api/empty.h"
#include "generated/api/eye.h"
#include "generated/api/linalg_lu_factor_ex.h"
#include "generated/api/linalg_lu_solve.h"
#include "generated/api/lu_unpack.h"
#include "generated/api/narrow.h"
#include "generated/api/ne.h"
#include "generated/api/reshape.h"
#include "generated/api/select.h"
#include "generated/api/tril.h"
#include "generated/api/triu.h"
#include "generated/kernels/composite/linalg_lu.h"
#include "generated/kernels/composite/linalg_lu_factor.h"
#include "generated/kernels/composite/lu_solve.h"
#include "generated/kernels/composite/lu_unpack.h"

namespace kiln {
namespace composite_implicit {

// torch's message for a zero pivot is a RuntimeError (not LinAlgError), batch element included.
std::tuple<Tensor, Tensor> linalg_lu_factor(const Tensor& A, bool pivot) {
  auto [LU, pivots, info] = kiln::linalg_lu_factor_ex(A, pivot, false);
  if (info.numel() > 0 && kiln::any(kiln::ne(info, 0)).item().to_bool()) {
    const Tensor flat = kiln::reshape(info, {-1});
    for (int64_t b = 0; b < flat.numel(); ++b) {
      const int64_t i = kiln::select(flat, 0, b).item().to_long();
      KILN_CHECK(i == 0, "torch.linalg.lu_factor: ", A.dim() > 2 ? detail::str_cat("(Batch element ", b, "): ") : "",
                 "U[", i, ",", i, "] is zero and using it on lu_solve would result in a division by zero. If you "
                 "still want to perform the factorization, consider calling linalg.lu(A, pivot) or "
                 "linalg.lu_factor_ex(A, pivot)");
    }
  }
  return {LU, pivots};
}

std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& LU, const Tensor& pivots, bool unpack_data,
                                             bool unpack_pivots) {
  KILN_CHECK(LU.dim() >= 2, "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: ",
             shape_str(LU.sizes()), " instead");
  const int64_t m = LU.sizes()[LU.dim() - 2], n = LU.sizes().back(), k = std::min(m, n);
  Tensor P, L, U;
  if (unpack_pivots) {
    KILN_CHECK(pivots.scalar_type() == ScalarType::Int32,  // (torch also refuses non-contiguous pivots)
               "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
               "Note: this function is intended to be used with the output produced by torch.linalg.lu_factor");
    std::vector<int64_t> want(LU.sizes().begin(), LU.sizes().end() - 2);
    want.push_back(k);
    KILN_CHECK(pivots.sizes() == IntArrayRef(want), "torch.lu_unpack: expected pivots of shape ",
               "LU.shape[:-2] + [min(m, n)] = ", shape_str(want), ", got ", shape_str(pivots.sizes()));
    P = kiln::_lu_pivots_to_permutation(pivots, m, LU.scalar_type());
  } else {
    P = kiln::empty({0}, LU.scalar_type());
  }
  if (unpack_data) {
    // L: (*, m, k), unit diagonal; U: (*, k, n).
    L = kiln::add(kiln::tril(kiln::narrow(LU, -1, 0, k), -1), kiln::eye(m, k, LU.scalar_type()));
    U = kiln::triu(kiln::narrow(LU, -2, 0, k));
  } else {
    L = kiln::empty({0}, LU.scalar_type());
    U = kiln::empty({0}, LU.scalar_type());
  }
  return {P, L, U};
}

std::tuple<Tensor, Tensor, Tensor> linalg_lu(const Tensor& A, bool pivot) {
  KILN_CHECK(A.dim() >= 2, "linalg.lu: Expected tensor with 2 or more dimensions. Got size: ", shape_str(A.sizes()),
             " instead");
  auto [LU, pivots, info] = kiln::linalg_lu_factor_ex(A, pivot, false);
  return kiln::lu_unpack(LU, pivots, true, true);
}

Tensor lu_solve(const Tensor& self, const Tensor& LU_data, const Tensor& LU_pivots) {
  return kiln::linalg_lu_solve(LU_data, LU_pivots, self, true, false);
}

}  // namespace composite_implicit
}  // namespace kiln
