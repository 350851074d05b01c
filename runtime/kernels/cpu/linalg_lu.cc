// The LU kernels: linalg_lu_factor_ex (getrf), linalg_lu_solve (getrs) and the permutation
// matrices of lu_unpack, on column-major copies of each matrix as the other LAPACK kernels.
#include "runtime/kernels/cpu/linalg_lu.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "generated/kernels/_lu_pivots_to_permutation.h"
#include "generated/kernels/linalg_lu_factor_ex.h"
#include "generated/kernels/linalg_lu_solve.h"
#include "runtime/core/tensor_impl.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/linalg_lapack.h"
#include "runtime/kernels/shape_rules.h"

namespace kiln {
namespace cpu {
namespace {

DimVector with_last(IntArrayRef batch, std::initializer_list<int64_t> last) {
  DimVector s(batch.begin(), batch.end());
  for (int64_t v : last) s.push_back(v);
  return s;
}

// torch's checks of lu_factor's input ("lu_cpu" names its CPU kernel's dtype dispatch; torch's
// dtype message has no op name, kiln's starts with it).
void check_lu_input(const TensorBase& A, const char* op) {
  KILN_CHECK(A.dim() >= 2, op, ": Expected tensor with 2 or more dimensions. Got size: ", shape_str(A.sizes()),
             " instead");
  KILN_CHECK(A.dtype() == ScalarType::Float32 || A.dtype() == ScalarType::Float64, op,
             ": \"lu_cpu\" not implemented for '", torch_dtype_name(A.dtype()), "'");
  KILN_CHECK(A.is_cpu(), op, ": expected a CPU tensor");
}

}  // namespace

LuFactors lu_factor_batched(const TensorBase& A_in) {
  const int64_t m = A_in.sizes()[A_in.dim() - 2], n = A_in.sizes()[A_in.dim() - 1], k = std::min(m, n);
  const DimVector batch = batch_shape(A_in);
  const int64_t nbatch = batch_numel(batch);
  const TensorBase A = batched_contiguous(A_in, batch, "linalg.lu_factor");
  LuFactors f{empty_cpu(A.sizes(), A.dtype()), empty_cpu(with_last(batch, {k}), ScalarType::Int32),
              zeros_cpu(batch, ScalarType::Int32)};
  int32_t* piv = static_cast<int32_t*>(f.pivots.data_ptr());
  int32_t* info = static_cast<int32_t*>(f.info.data_ptr());
  KILN_DISPATCH_FLOATING_TYPES(A.dtype(), "linalg.lu_factor", [&] {
    const scalar_t* pa = static_cast<const scalar_t*>(A.data_ptr());
    scalar_t* po = static_cast<scalar_t*>(f.LU.data_ptr());
    std::vector<scalar_t> a(std::max<int64_t>(m * n, 1));
    for (int64_t b = 0; b < nbatch && k > 0; ++b) {
      to_colmajor(pa + b * m * n, m, n, a.data());
      int inf = 0;
      lapack::getrf(static_cast<int>(m), static_cast<int>(n), a.data(), piv + b * k, &inf);
      KILN_CHECK(inf >= 0, "getrf: illegal argument ", -inf);
      info[b] = inf;
      from_colmajor(a.data(), m, n, po + b * m * n);
    }
  });
  return f;
}

TensorBase lu_solve_batched(const TensorBase& LU_in, const TensorBase& piv_in, const TensorBase& B_in, bool left,
                            bool adjoint, const char* op) {
  const int64_t n = LU_in.sizes()[LU_in.dim() - 1];
  // X op(A) = B is op(A)^T X^T = B^T: solve with B^T and the other transpose.
  const TensorBase B = left ? B_in : transpose_last(B_in);
  const char trans = (left != adjoint) ? 'N' : 'T';
  const int64_t k = B.sizes()[B.dim() - 1];
  const DimVector batch = broadcast_shapes(batch_shape(LU_in), batch_shape(B), op);
  const int64_t nbatch = batch_numel(batch);
  const TensorBase LU = batched_contiguous(LU_in, batch, op), Bc = batched_contiguous(B, batch, op);
  const TensorBase piv = contiguous_cpu(broadcast_for_read(piv_in, with_last(batch, {n}), op));
  TensorBase out = empty_cpu(with_last(batch, {n, k}), LU.dtype());
  KILN_DISPATCH_FLOATING_TYPES(LU.dtype(), op, [&] {
    const scalar_t* pl = static_cast<const scalar_t*>(LU.data_ptr());
    const scalar_t* pb = static_cast<const scalar_t*>(Bc.data_ptr());
    const int32_t* pp = static_cast<const int32_t*>(piv.data_ptr());
    scalar_t* po = static_cast<scalar_t*>(out.data_ptr());
    std::vector<scalar_t> a(n * n), b(n * k);
    for (int64_t i = 0; i < nbatch && n > 0 && k > 0; ++i) {
      to_colmajor(pl + i * n * n, n, n, a.data());
      to_colmajor(pb + i * n * k, n, k, b.data());
      int info = 0;
      lapack::getrs(trans, static_cast<int>(n), static_cast<int>(k), a.data(), pp + i * n, b.data(), &info);
      KILN_CHECK(info >= 0, "getrs: illegal argument ", -info);
      from_colmajor(b.data(), n, k, po + i * n * k);
    }
  });
  return left ? out : contiguous_cpu(transpose_last(out));
}

std::tuple<TensorBase, TensorBase, TensorBase> linalg_lu_factor_ex(const TensorBase& A, bool pivot, bool check_errors) {
  check_lu_input(A, "torch.lu_factor");
  KILN_CHECK(pivot, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
  LuFactors f = lu_factor_batched(A);
  if (check_errors) {
    const int32_t* info = static_cast<const int32_t*>(f.info.data_ptr());
    for (int64_t b = 0; b < f.info.numel(); ++b)
      KILN_CHECK(info[b] == 0, "torch.linalg.lu_factor_ex: ", batch_prefix(A, b), "U[", info[b], ",", info[b],
                 "] is zero and using it on lu_solve would result in a division by zero. If you still want to "
                 "perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)");
  }
  return {f.LU, f.pivots, f.info};
}

// torch's checks, in torch's order.
TensorBase linalg_lu_solve(const TensorBase& LU, const TensorBase& pivots, const TensorBase& B, bool left,
                           bool adjoint) {
  const char* op = "linalg.lu_solve";
  KILN_CHECK(LU.is_floating_point(), "torch.linalg.lu_solve: Expected a floating point or complex tensor as input. Got ",
             torch_dtype_name(LU.dtype()));
  KILN_CHECK(LU.dtype() == B.dtype(), op, ": Expected LU and B to have the same dtype, but found LU of type ",
             torch_dtype_name(LU.dtype()), " and B of type ", torch_dtype_name(B.dtype()), " instead");
  KILN_CHECK(pivots.dtype() == ScalarType::Int32, op, ": pivots should be a Tensor of scalar type torch.int32");
  check_square(LU, "torch.linalg.lu_solve");
  KILN_CHECK(B.dim() >= 2, op, ": The input tensor B must have at least 2 dimensions.");
  const int64_t n = LU.sizes()[LU.dim() - 1];
  const int64_t brows = B.sizes()[B.dim() - 2], bcols = B.sizes()[B.dim() - 1];
  KILN_CHECK((left ? brows : bcols) == n, op, ": Incompatible shapes of A and B for the equation ",
             left ? "AX = B" : "XA = B", " (", n, "x", n, " and ", brows, "x", bcols, ")");
  KILN_CHECK(pivots.dim() >= 1 && pivots.sizes()[pivots.dim() - 1] == n, op,
             ": Number of pivots per batch should be same as the dimension of the matrix");
  KILN_CHECK(pivots.sizes() == IntArrayRef(LU.sizes().data(), LU.dim() - 1), op,
             ": Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots with shape ",
             shape_str(pivots.sizes()), " instead");
  const TensorBase pc = contiguous_cpu(pivots);
  const int32_t* pp = static_cast<const int32_t*>(pc.data_ptr());
  for (int64_t i = 0; i < pc.numel(); ++i)  // getrs would read out of bounds
    KILN_CHECK(pp[i] >= 1 && pp[i] <= n, op, ": pivots must be between 1 and LU.size(-2) inclusive (got ", pp[i],
               "). Did you properly pass the result of lu_factor?");
  return lu_solve_batched(LU, pc, B, left, adjoint, op);
}

// A = P L U: P[perm[j], j] = 1, perm the rows of A in the order LAPACK's swaps leave them.
TensorBase lu_pivots_to_permutation(const TensorBase& pivots_in, int64_t m, ScalarType dtype) {
  KILN_CHECK(pivots_in.dtype() == ScalarType::Int32 && pivots_in.dim() >= 1,
             "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
             "Note: this function is intended to be used with the output produced by torch.linalg.lu_factor");
  KILN_CHECK(m >= 0, "torch.lu_unpack: expected a non-negative LU.size(-2), got ", m);
  const TensorBase pivots = contiguous_cpu(pivots_in);
  const int64_t k = pivots.sizes()[pivots.dim() - 1];
  KILN_CHECK(k <= m, "torch.lu_unpack: expected at most LU.size(-2) = ", m, " pivots per matrix, got ", k);
  const DimVector batch(pivots.sizes().begin(), pivots.sizes().end() - 1);
  TensorBase P = zeros_cpu(with_last(batch, {m, m}), dtype);
  if (P.numel() == 0) return P;  // (m itself may be absurd when the batch is empty)
  const int32_t* pp = static_cast<const int32_t*>(pivots.data_ptr());
  std::vector<int64_t> perm(m);
  KILN_DISPATCH_FLOATING_TYPES_AND_REDUCED(dtype, "lu_unpack", [&] {
    scalar_t* po = static_cast<scalar_t*>(P.data_ptr());
    for (int64_t b = 0; b < batch_numel(batch); ++b) {
      std::iota(perm.begin(), perm.end(), 0);
      for (int64_t i = 0; i < k; ++i) {
        const int32_t p = pp[b * k + i];
        KILN_CHECK(p >= 1 && p <= m,
                   "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive.Did you properly pass the "
                   "result of lu_factor?");
        std::swap(perm[i], perm[p - 1]);
      }
      for (int64_t j = 0; j < m; ++j) po[b * m * m + perm[j] * m + j] = scalar_t(1);
    }
  });
  return P;
}

}  // namespace cpu
}  // namespace kiln
