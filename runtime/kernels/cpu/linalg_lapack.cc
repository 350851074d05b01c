// The batch helpers of linalg_lapack.h, and the LU-based kernels: linalg_solve, linalg_inv,
// linalg_det, linalg_slogdet (LAPACK's gesv/getrf on column-major copies of each matrix).
#include "runtime/kernels/cpu/linalg_lapack.h"

#include <cmath>
#include <vector>

#include "generated/kernels/linalg_det.h"
#include "generated/kernels/linalg_inv.h"
#include "generated/kernels/linalg_slogdet.h"
#include "generated/kernels/linalg_solve.h"
#include "runtime/core/tensor_impl.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/shape_rules.h"

namespace kiln {
namespace cpu {

const char* torch_dtype_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "Bool";
    case ScalarType::UInt8: return "Byte";
    case ScalarType::Int8: return "Char";
    case ScalarType::Int16: return "Short";
    case ScalarType::Int32: return "Int";
    case ScalarType::Int64: return "Long";
    case ScalarType::Float16: return "Half";
    case ScalarType::BFloat16: return "BFloat16";
    case ScalarType::Float32: return "Float";
    case ScalarType::Float64: return "Double";
    default: return "Undefined";
  }
}

void check_linalg_input(const TensorBase& t, const char* op, const char* arg) {
  KILN_CHECK(t.dim() >= 2, op, ": The input tensor ", arg, " must have at least 2 dimensions.");
  KILN_CHECK(t.is_floating_point(), op, ": Expected a floating point or complex tensor as input. Got ",
             torch_dtype_name(t.dtype()));
  // torch's CPU LAPACK kernels have no half-precision versions either.
  KILN_CHECK(t.dtype() == ScalarType::Float32 || t.dtype() == ScalarType::Float64, op,
             ": Low precision dtypes not supported. Got ", torch_dtype_name(t.dtype()));
  KILN_CHECK(t.is_cpu(), op, ": expected a CPU tensor");
}

void check_square(const TensorBase& t, const char* op, const char* arg) {
  check_linalg_input(t, op, arg);
  KILN_CHECK(t.sizes()[t.dim() - 1] == t.sizes()[t.dim() - 2], op, ": ", arg,
             " must be batches of square matrices, but they are ", t.sizes()[t.dim() - 2], " by ",
             t.sizes()[t.dim() - 1], " matrices");
}

DimVector batch_shape(const TensorBase& t) {
  DimVector b;
  for (int64_t i = 0; i + 2 < t.dim(); ++i) b.push_back(t.sizes()[i]);
  return b;
}

int64_t batch_numel(IntArrayRef batch) {
  int64_t n = 1;
  for (int64_t s : batch) n *= s;
  return n;
}

TensorBase batched_contiguous(const TensorBase& t, IntArrayRef batch, const char* op) {
  DimVector shape(batch.begin(), batch.end());
  shape.push_back(t.sizes()[t.dim() - 2]);
  shape.push_back(t.sizes()[t.dim() - 1]);
  return contiguous_cpu(broadcast_for_read(t, shape, op));
}

TensorBase transpose_last(const TensorBase& t) {
  DimVector sizes(t.sizes().begin(), t.sizes().end()), strides(t.strides().begin(), t.strides().end());
  const int64_t d = t.dim();
  std::swap(sizes[d - 1], sizes[d - 2]);
  std::swap(strides[d - 1], strides[d - 2]);
  return TensorBase(Ref<TensorImpl>::make(t.impl()->storage(), t.dtype(), sizes, strides, t.storage_offset()));
}

TensorBase view_as_shape(const TensorBase& t, IntArrayRef sizes) {
  return TensorBase(
      Ref<TensorImpl>::make(t.impl()->storage(), t.dtype(), sizes, contiguous_strides(sizes), t.storage_offset()));
}

std::string batch_prefix(const TensorBase& input, int64_t b) {
  return input.dim() > 2 ? detail::str_cat("(Batch element ", b, "): ") : std::string();
}

namespace {

// Solves A X = B for each matrix of a batch (A: batch x n x n, B: batch x n x k, contiguous),
// into out (batch x n x k). info > 0 (a zero pivot) calls singular(b, info).
template <typename T, typename OnSingular>
void solve_batch(const TensorBase& A, const TensorBase& B, const TensorBase& out, int64_t nbatch, int64_t n,
                 int64_t k, OnSingular singular) {
  if (nbatch == 0 || n == 0 || k == 0) return;
  std::vector<T> a(n * n), b(n * k);
  std::vector<int> ipiv(n);
  const T* pa = static_cast<const T*>(A.data_ptr());
  const T* pb = static_cast<const T*>(B.data_ptr());
  T* po = static_cast<T*>(out.data_ptr());
  for (int64_t i = 0; i < nbatch; ++i) {
    to_colmajor(pa + i * n * n, n, n, a.data());
    to_colmajor(pb + i * n * k, n, k, b.data());
    int info = 0;
    lapack::gesv(static_cast<int>(n), static_cast<int>(k), a.data(), ipiv.data(), b.data(), &info);
    KILN_CHECK(info >= 0, "gesv: illegal argument ", -info);
    if (info > 0) singular(i, info);
    from_colmajor(b.data(), n, k, po + i * n * k);
  }
}

// LU of each matrix: calls f(b, diagonal of U (column-major LU), number of row swaps).
template <typename T, typename F>
void lu_batch(const TensorBase& A, int64_t nbatch, int64_t n, F f) {
  std::vector<T> a(std::max<int64_t>(n * n, 1));
  std::vector<int> ipiv(std::max<int64_t>(n, 1));
  const T* pa = static_cast<const T*>(A.data_ptr());
  for (int64_t i = 0; i < nbatch; ++i) {
    int info = 0;
    int swaps = 0;
    if (n > 0) {
      to_colmajor(pa + i * n * n, n, n, a.data());
      lapack::getrf(static_cast<int>(n), a.data(), ipiv.data(), &info);
      KILN_CHECK(info >= 0, "getrf: illegal argument ", -info);
      for (int64_t j = 0; j < n; ++j) swaps += ipiv[j] != j + 1;
    }
    f(i, a.data(), swaps);
  }
}

}  // namespace

// B is a vector (batch) when it is 1-D or has A's shape without its last dim (torch's rule).
TensorBase linalg_solve(const TensorBase& A_in, const TensorBase& B_in, bool left) {
  const char* op = "linalg.solve";
  check_square(A_in, op);
  KILN_CHECK(B_in.dtype() == A_in.dtype(), op, ": Expected A and B to have the same dtype, but found A of type ",
             torch_dtype_name(A_in.dtype()), " and B of type ", torch_dtype_name(B_in.dtype()), " instead");
  const IntArrayRef a_sizes = A_in.sizes();
  const bool vector_case =
      B_in.dim() == 1 || (B_in.dim() == A_in.dim() - 1 && IntArrayRef(a_sizes.data(), a_sizes.size() - 1) == B_in.sizes());
  TensorBase B = B_in;
  if (vector_case) {
    DimVector s(B_in.sizes().begin(), B_in.sizes().end());
    s.push_back(1);
    B = view_as_shape(contiguous_cpu(B_in), s);
  }
  KILN_CHECK(B.dim() >= 2, op, ": The input tensor B must have at least 2 dimensions.");
  const int64_t n = A_in.sizes()[A_in.dim() - 1];
  const int64_t brows = B.sizes()[B.dim() - 2], bcols = B.sizes()[B.dim() - 1];
  KILN_CHECK((left ? brows : bcols) == n, op, ": Incompatible shapes of A and B for the equation ",
             left ? "AX = B" : "XA = B", " (", n, "x", n, " and ", brows, "x", bcols, ")");
  // X A = B is A^T X^T = B^T.
  const TensorBase A = left ? A_in : transpose_last(A_in);
  if (!left) B = transpose_last(B);
  const int64_t k = B.sizes()[B.dim() - 1];
  const DimVector batch = broadcast_shapes(batch_shape(A), batch_shape(B), op);
  const int64_t nbatch = batch_numel(batch);
  const TensorBase Ac = batched_contiguous(A, batch, op), Bc = batched_contiguous(B, batch, op);
  DimVector out_shape = batch;
  out_shape.push_back(n);
  out_shape.push_back(k);
  TensorBase out = empty_cpu(out_shape, A.dtype());
  KILN_DISPATCH_FLOATING_TYPES(A.dtype(), op, [&] {
    solve_batch<scalar_t>(Ac, Bc, out, nbatch, n, k, [&](int64_t b, int) {
      throw LinAlgError(detail::str_cat("torch.linalg.solve: ", batch_prefix(A_in, b),
                                        "The solver failed because the input matrix is singular."));
    });
  });
  if (!left) out = contiguous_cpu(transpose_last(out));
  if (vector_case) out = view_as_shape(out, IntArrayRef(out.sizes().data(), out.dim() - 1));
  return out;
}

TensorBase linalg_inv(const TensorBase& A_in) {
  const char* op = "linalg.inv";
  check_square(A_in, op);
  const int64_t n = A_in.sizes()[A_in.dim() - 1];
  const DimVector batch = batch_shape(A_in);
  const int64_t nbatch = batch_numel(batch);
  const TensorBase A = batched_contiguous(A_in, batch, op);
  TensorBase eye = zeros_cpu(A.sizes(), A.dtype());
  TensorBase out = empty_cpu(A.sizes(), A.dtype());
  KILN_DISPATCH_FLOATING_TYPES(A.dtype(), op, [&] {
    scalar_t* e = static_cast<scalar_t*>(eye.data_ptr());
    for (int64_t b = 0; b < nbatch; ++b)
      for (int64_t i = 0; i < n; ++i) e[b * n * n + i * n + i] = scalar_t(1);
    solve_batch<scalar_t>(A, eye, out, nbatch, n, n, [&](int64_t b, int info) {
      throw LinAlgError(detail::str_cat(op, ": ", batch_prefix(A_in, b), "The diagonal element ", info,
                                        " is zero, the inversion could not be completed because the input matrix "
                                        "is singular."));
    });
  });
  return out;
}

TensorBase linalg_det(const TensorBase& A_in) {
  const char* op = "linalg.det";
  check_square(A_in, op);
  const int64_t n = A_in.sizes()[A_in.dim() - 1];
  const DimVector batch = batch_shape(A_in);
  const TensorBase A = batched_contiguous(A_in, batch, op);
  TensorBase out = empty_cpu(batch, A.dtype());
  KILN_DISPATCH_FLOATING_TYPES(A.dtype(), op, [&] {
    scalar_t* o = static_cast<scalar_t*>(out.data_ptr());
    lu_batch<scalar_t>(A, batch_numel(batch), n, [&](int64_t b, const scalar_t* lu, int swaps) {
      scalar_t d = swaps % 2 ? scalar_t(-1) : scalar_t(1);
      for (int64_t i = 0; i < n; ++i) d *= lu[i * n + i];
      o[b] = d;
    });
  });
  return out;
}

// A zero pivot gives sign 0 and logabsdet -inf, as torch.
std::tuple<TensorBase, TensorBase> linalg_slogdet(const TensorBase& A_in) {
  const char* op = "linalg.slogdet";
  check_square(A_in, op);
  const int64_t n = A_in.sizes()[A_in.dim() - 1];
  const DimVector batch = batch_shape(A_in);
  const TensorBase A = batched_contiguous(A_in, batch, op);
  TensorBase sign = empty_cpu(batch, A.dtype()), logabs = empty_cpu(batch, A.dtype());
  KILN_DISPATCH_FLOATING_TYPES(A.dtype(), op, [&] {
    scalar_t* s = static_cast<scalar_t*>(sign.data_ptr());
    scalar_t* l = static_cast<scalar_t*>(logabs.data_ptr());
    lu_batch<scalar_t>(A, batch_numel(batch), n, [&](int64_t b, const scalar_t* lu, int swaps) {
      scalar_t sg = swaps % 2 ? scalar_t(-1) : scalar_t(1), acc = 0;
      for (int64_t i = 0; i < n; ++i) {
        const scalar_t u = lu[i * n + i];
        sg = u < 0 ? -sg : (u > 0 ? sg : scalar_t(0));  // a zero or NaN pivot: sign 0, as torch
        acc += std::log(std::abs(u));                    // -inf for a zero pivot, NaN for a NaN one
      }
      s[b] = sg;
      l[b] = acc;
    });
  });
  return {sign, logabs};
}

}  // namespace cpu
}  // namespace kiln
