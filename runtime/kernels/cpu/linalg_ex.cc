// The *_ex kernels: linalg_inv_ex, linalg_solve_ex (getrf + getrs, as torch's: a singular matrix
// gives infinities/NaNs and info > 0; a contiguous A is factored as A^T and solved with the
// adjoint, as torch does, so those NaNs and info are torch's too) and linalg_cholesky_ex (potrf); info is int32 of the batch
// shape, and check_errors=True raises as the plain ops do.
#include <vector>

#include "generated/kernels/linalg_cholesky_ex.h"
#include "generated/kernels/linalg_inv_ex.h"
#include "generated/kernels/linalg_solve_ex.h"
#include "runtime/core/tensor_impl.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/linalg_lapack.h"
#include "runtime/kernels/cpu/linalg_lu.h"

namespace kiln {
namespace cpu {
namespace {

// info's first nonzero entry raises `message(b, info)`.
template <typename Message>
void raise_on_info(const TensorBase& info, Message message) {
  const int32_t* p = static_cast<const int32_t*>(info.data_ptr());
  for (int64_t b = 0; b < info.numel(); ++b)
    if (p[b] != 0) throw LinAlgError(message(b, p[b]));
}

TensorBase identity_like(const TensorBase& A) {
  const int64_t n = A.sizes()[A.dim() - 1];
  TensorBase eye = zeros_cpu({n, n}, A.dtype());
  KILN_DISPATCH_FLOATING_TYPES(A.dtype(), "linalg.inv", [&] {
    scalar_t* e = static_cast<scalar_t*>(eye.data_ptr());
    for (int64_t i = 0; i < n; ++i) e[i * n + i] = scalar_t(1);
  });
  return eye;
}

}  // namespace

std::tuple<TensorBase, TensorBase> linalg_inv_ex(const TensorBase& A, bool check_errors) {
  check_square(A, "linalg.inv");
  const bool use_A_T = A.is_contiguous();
  LuFactors f = lu_factor_batched(use_A_T ? transpose_last(A) : A);
  if (check_errors)
    raise_on_info(f.info, [&](int64_t b, int info) {
      return detail::str_cat("linalg.inv_ex: ", batch_prefix(A, b), "The diagonal element ", info,
                             " is zero, the inversion could not be completed because the input matrix is singular.");
    });
  TensorBase inverse = lu_solve_batched(f.LU, f.pivots, identity_like(A), true, use_A_T, "linalg.inv");
  return {inverse, f.info};
}

// B is a vector (batch) when it is 1-D or has A's shape without its last dim (torch's rule).
std::tuple<TensorBase, TensorBase> linalg_solve_ex(const TensorBase& A, const TensorBase& B_in, bool left,
                                                   bool check_errors) {
  const char* op = "linalg.solve";
  check_square(A, op);
  KILN_CHECK(B_in.dtype() == A.dtype(), op, ": Expected A and B to have the same dtype, but found A of type ",
             torch_dtype_name(A.dtype()), " and B of type ", torch_dtype_name(B_in.dtype()), " instead");
  const IntArrayRef a_sizes = A.sizes();
  const bool vector_case = B_in.dim() == 1 ||
                           (B_in.dim() == A.dim() - 1 && IntArrayRef(a_sizes.data(), a_sizes.size() - 1) == B_in.sizes());
  TensorBase B = B_in;
  if (vector_case) {  // a column, so left=False refuses it (as torch and linalg_solve)
    DimVector s(B_in.sizes().begin(), B_in.sizes().end());
    s.push_back(1);
    B = view_as_shape(contiguous_cpu(B_in), s);
  }
  KILN_CHECK(B.dim() >= 2, op, ": The input tensor B must have at least 2 dimensions.");
  const int64_t n = A.sizes()[A.dim() - 1];
  const int64_t brows = B.sizes()[B.dim() - 2], bcols = B.sizes()[B.dim() - 1];
  KILN_CHECK((left ? brows : bcols) == n, op, ": Incompatible shapes of A and B for the equation ",
             left ? "AX = B" : "XA = B", " (", n, "x", n, " and ", brows, "x", bcols, ")");
  const bool use_A_T = A.is_contiguous();
  LuFactors f = lu_factor_batched(use_A_T ? transpose_last(A) : A);
  if (check_errors)
    raise_on_info(f.info, [&](int64_t b, int) {
      return detail::str_cat("torch.linalg.solve_ex: ", batch_prefix(A, b),
                             "The solver failed because the input matrix is singular.");
    });
  TensorBase X = lu_solve_batched(f.LU, f.pivots, B, left, use_A_T, op);
  if (vector_case) {
    X = view_as_shape(X, IntArrayRef(X.sizes().data(), X.dim() - 1));
  }
  return {X, f.info};
}

// The lower factor as potrf leaves it (partial where info > 0, as torch), or its transpose.
std::tuple<TensorBase, TensorBase> linalg_cholesky_ex(const TensorBase& A_in, bool upper, bool check_errors) {
  const char* op = "linalg.cholesky";
  check_square(A_in, op);
  const int64_t n = A_in.sizes()[A_in.dim() - 1];
  const DimVector batch = batch_shape(A_in);
  const int64_t nbatch = batch_numel(batch);
  const TensorBase A = batched_contiguous(A_in, batch, op);
  TensorBase out = empty_cpu(A.sizes(), A.dtype());
  TensorBase info = zeros_cpu(batch, ScalarType::Int32);
  int32_t* pi = static_cast<int32_t*>(info.data_ptr());
  KILN_DISPATCH_FLOATING_TYPES(A.dtype(), op, [&] {
    const scalar_t* pa = static_cast<const scalar_t*>(A.data_ptr());
    scalar_t* po = static_cast<scalar_t*>(out.data_ptr());
    std::vector<scalar_t> a(n * n);
    for (int64_t b = 0; b < nbatch && n > 0; ++b) {
      to_colmajor(pa + b * n * n, n, n, a.data());
      int inf = 0;
      lapack::potrf('L', static_cast<int>(n), a.data(), &inf);
      KILN_CHECK(inf >= 0, "potrf: illegal argument ", -inf);
      pi[b] = inf;
      scalar_t* o = po + b * n * n;
      for (int64_t i = 0; i < n; ++i)  // column-major L: L(i, j) at a[j * n + i]
        for (int64_t j = 0; j < n; ++j) {
          const scalar_t l = j <= i ? a[j * n + i] : scalar_t(0);
          (upper ? o[j * n + i] : o[i * n + j]) = l;
        }
    }
  });
  if (check_errors)
    raise_on_info(info, [&](int64_t b, int i) {
      return detail::str_cat("linalg.cholesky_ex: ", batch_prefix(A_in, b),
                             "The factorization could not be completed because the input is not positive-definite "
                             "(the leading minor of order ",
                             i, " is not positive-definite).");
    });
  return {out, info};
}

}  // namespace cpu
}  // namespace kiln
