// mm and bmm through OpenBLAS (float32/float64); a plain loop for integer dtypes. _addmm_into:
// addmm's product accumulated into its broadcast self (BLAS beta = 1), as torch's addmm.
#include <cblas.h>

#include <type_traits>

#include "generated/kernels/_addmm_into.h"
#include "generated/kernels/bmm.h"
#include "generated/kernels/mm.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/out_checks.h"
#include "runtime/kernels/tensor_memory.h"

namespace kiln {
namespace cpu {
namespace {

// BLAS describes a matrix by (transposed?, leading dimension); other layouts are copied.
struct BlasMatrix {
  TensorBase t;
  bool trans;
  int64_t ld;
};

BlasMatrix as_blas(const TensorBase& m) {
  const int64_t rows = m.sizes()[0], cols = m.sizes()[1];
  const int64_t s0 = m.strides()[0], s1 = m.strides()[1];
  if ((s1 == 1 || cols == 1) && s0 >= std::max<int64_t>(cols, 1)) return {m, false, s0};
  if ((s0 == 1 || rows == 1) && s1 >= std::max<int64_t>(rows, 1)) return {m, true, s1};
  TensorBase c = contiguous_cpu(m);
  return {c, false, std::max<int64_t>(cols, 1)};
}

// dst (n x m, contiguous) = a (n x k) @ b (k x m), or dst += a @ b when accumulate (float32/float64
// only: BLAS's beta = 1).
void gemm(const TensorBase& a, const TensorBase& b, const TensorBase& dst, bool accumulate = false) {
  const int64_t n = a.sizes()[0], k = a.sizes()[1], m = b.sizes()[1];
  if (n * m == 0) return;
  const ScalarType dt = a.dtype();
  if (is_reduced_floating_type(dt)) {  // float16/bfloat16: a float32 product, rounded once
    TensorBase product = empty_cpu({n, m}, ScalarType::Float32);
    gemm(cast_to(a, ScalarType::Float32), cast_to(b, ScalarType::Float32), product);
    copy_into(dst, product, "mm");
    return;
  }
  if (k == 0) {
    if (accumulate) return;  // dst += an empty product
    KILN_DISPATCH_ALL_TYPES(dt, "mm", [&] {
      scalar_t* p = static_cast<scalar_t*>(dst.data_ptr());
      for (int64_t i = 0; i < n * m; ++i) p[i] = scalar_t(0);
    });
  } else if (dt == ScalarType::Float32 || dt == ScalarType::Float64) {
    BlasMatrix x = as_blas(a), y = as_blas(b);
    auto tx = x.trans ? CblasTrans : CblasNoTrans, ty = y.trans ? CblasTrans : CblasNoTrans;
    if (dt == ScalarType::Float32) {
      cblas_sgemm(CblasRowMajor, tx, ty, n, m, k, 1.0f, static_cast<const float*>(x.t.data_ptr()), x.ld,
                  static_cast<const float*>(y.t.data_ptr()), y.ld, accumulate ? 1.0f : 0.0f,
                  static_cast<float*>(dst.data_ptr()), std::max<int64_t>(m, 1));
    } else {
      cblas_dgemm(CblasRowMajor, tx, ty, n, m, k, 1.0, static_cast<const double*>(x.t.data_ptr()), x.ld,
                  static_cast<const double*>(y.t.data_ptr()), y.ld, accumulate ? 1.0 : 0.0,
                  static_cast<double*>(dst.data_ptr()), std::max<int64_t>(m, 1));
    }
  } else {
    KILN_DISPATCH_ALL_TYPES(dt, "mm", [&] {
      const scalar_t* A = static_cast<const scalar_t*>(a.data_ptr());
      const scalar_t* B = static_cast<const scalar_t*>(b.data_ptr());
      scalar_t* C = static_cast<scalar_t*>(dst.data_ptr());
      const int64_t as0 = a.strides()[0], as1 = a.strides()[1], bs0 = b.strides()[0], bs1 = b.strides()[1];
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j) {
          scalar_t acc = 0;
          for (int64_t p = 0; p < k; ++p) acc = acc + A[i * as0 + p * as1] * B[p * bs0 + j * bs1];
          C[i * m + j] = acc;
        }
    });
  }
}

// Matrix `i` of a batch of matrices (a view).
TensorBase matrix_at(const TensorBase& t, int64_t i) {
  return TensorBase(Ref<TensorImpl>::make(t.impl()->storage(), t.dtype(), t.sizes().slice(1), t.strides().slice(1),
                                          t.storage_offset() + i * t.strides()[0]));
}

void check_same_dtype(const char* name, const TensorBase& a, const TensorBase& b) {
  KILN_CHECK(a.dtype() == b.dtype(), name, "(): expected mat1 and mat2 to have the same dtype, but got: ",
             scalar_type_name(a.dtype()), " != ", scalar_type_name(b.dtype()));
  KILN_CHECK(a.is_cpu() && b.is_cpu(), name, "(): expected CPU tensors");
}

// torch's baddbmm_cpu_kernel (bmm of matrices with k * n * m < 400): each element summed over k
// in order in the tensors' dtype (a bfloat16 product and every partial sum rounded to bfloat16, as
// torch 1.13). dst contiguous.
void small_bmm(const TensorBase& self, const TensorBase& mat2, const TensorBase& dst) {
  const int64_t b = self.sizes()[0], n = self.sizes()[1], k = self.sizes()[2], m = mat2.sizes()[2];
  const int64_t a0 = self.strides()[0], a1 = self.strides()[1], a2 = self.strides()[2];
  const int64_t b0 = mat2.strides()[0], b1 = mat2.strides()[1], b2 = mat2.strides()[2];
  KILN_DISPATCH_FLOATING_TYPES_AND_REDUCED(self.dtype(), "bmm", [&] {
    using op_t = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
    const scalar_t* A = static_cast<const scalar_t*>(self.data_ptr());
    const scalar_t* B = static_cast<const scalar_t*>(mat2.data_ptr());
    scalar_t* C = static_cast<scalar_t*>(dst.data_ptr());
    for (int64_t bi = 0; bi < b; ++bi)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j) {
          scalar_t acc = scalar_t(0);
          for (int64_t p = 0; p < k; ++p) {
            const scalar_t prod = static_cast<scalar_t>(static_cast<op_t>(A[bi * a0 + i * a1 + p * a2]) *
                                                        static_cast<op_t>(B[bi * b0 + p * b1 + j * b2]));
            acc = static_cast<scalar_t>(static_cast<op_t>(acc) + static_cast<op_t>(prod));
          }
          C[(bi * n + i) * m + j] = acc;
        }
  });
}

}  // namespace

TensorBase mm_out(const TensorBase& self, const TensorBase& mat2, const TensorBase& out) {
  KILN_CHECK(self.dim() == 2, "mm(): self must be a matrix, got a ", self.dim(), "-D tensor");
  KILN_CHECK(mat2.dim() == 2, "mm(): mat2 must be a matrix, got a ", mat2.dim(), "-D tensor");
  KILN_CHECK(self.sizes()[1] == mat2.sizes()[0], "mm(): mat1 and mat2 shapes cannot be multiplied (",
             self.sizes()[0], "x", self.sizes()[1], " and ", mat2.sizes()[0], "x", mat2.sizes()[1], ")");
  check_out_is_not_an_input(out, {&self, &mat2}, "mm");
  // As torch: an empty product returns before the dtype check (its result takes self's dtype).
  if (self.numel() != 0 && mat2.numel() != 0) check_same_dtype("mm", self, mat2);
  KILN_CHECK(self.dtype() != ScalarType::Bool || self.numel() == 0 || mat2.numel() == 0,  // as torch
             "mm(): \"addmm_impl_cpu_\" not implemented for 'bool'");
  const int64_t n = self.sizes()[0], m = mat2.sizes()[1];
  TensorBase result = resized_out(out, {n, m}, self.dtype(), "mm");
  TensorBase dst = result.is_contiguous() ? result : empty_cpu({n, m}, self.dtype());
  gemm(self, mat2, dst);
  if (!dst.is_same(result)) copy_into(result, dst, "mm");
  return result;
}

TensorBase addmm_into(const TensorBase& self, const TensorBase& mat1, const TensorBase& mat2) {
  KILN_CHECK(mat1.dim() == 2 && mat2.dim() == 2, "_addmm_into(): expected 2D matrices, got ", mat1.dim(), "D and ",
             mat2.dim(), "D tensors");
  KILN_CHECK(mat1.sizes()[1] == mat2.sizes()[0], "_addmm_into(): mat1 and mat2 shapes cannot be multiplied (",
             mat1.sizes()[0], "x", mat1.sizes()[1], " and ", mat2.sizes()[0], "x", mat2.sizes()[1], ")");
  check_same_dtype("_addmm_into", mat1, mat2);
  check_same_dtype("_addmm_into", self, mat1);
  if (is_reduced_floating_type(mat1.dtype())) {  // float16/bfloat16: in float32, rounded once
    const ScalarType f32 = ScalarType::Float32;
    return cast_to(addmm_into(cast_to(self, f32), cast_to(mat1, f32), cast_to(mat2, f32)), mat1.dtype());
  }
  KILN_CHECK(mat1.dtype() == ScalarType::Float32 || mat1.dtype() == ScalarType::Float64,
             "_addmm_into(): \"addmm_impl_cpu_\" not implemented for '", scalar_type_name(mat1.dtype()), "'");
  const int64_t n = mat1.sizes()[0], m = mat2.sizes()[1];
  // self broadcast to [n, m] (a view with zero strides), as torch's expand.
  KILN_CHECK(self.dim() <= 2, "_addmm_into(): self must have at most 2 dims, got ", self.dim());
  DimVector strides{0, 0};
  const int64_t pad = 2 - self.dim();
  const int64_t out_sizes[2] = {n, m};
  for (int64_t d = 0; d < self.dim(); ++d) {
    const int64_t size = self.sizes()[d];
    KILN_CHECK(size == out_sizes[pad + d] || size == 1, "_addmm_into(): self of shape ", shape_str(self.sizes()),
               " cannot be broadcast to the product's shape [", n, ", ", m, "]");
    strides[pad + d] = size == 1 ? 0 : self.strides()[d];
  }
  const TensorBase expanded(
      Ref<TensorImpl>::make(self.impl()->storage(), self.dtype(), IntArrayRef{n, m}, strides, self.storage_offset()));
  TensorBase result = empty_cpu({n, m}, self.dtype());
  copy_into(result, expanded, "_addmm_into");
  gemm(mat1, mat2, result, /*accumulate=*/true);
  return result;
}

TensorBase bmm_out(const TensorBase& self, const TensorBase& mat2, const TensorBase& out) {
  KILN_CHECK(self.dtype() != ScalarType::Bool || self.numel() == 0 || mat2.numel() == 0,  // as torch
             "bmm(): \"bmm\" not implemented for 'bool'");
  KILN_CHECK(self.dim() == 3, "bmm(): batch1 must be a 3D tensor, got a ", self.dim(), "-D tensor");
  KILN_CHECK(mat2.dim() == 3, "bmm(): batch2 must be a 3D tensor, got a ", mat2.dim(), "-D tensor");
  const int64_t b = self.sizes()[0], n = self.sizes()[1], k = self.sizes()[2], m = mat2.sizes()[2];
  KILN_CHECK(mat2.sizes()[0] == b && mat2.sizes()[1] == k,
             "bmm(): Expected size for first two dimensions of batch2 tensor to be: [", b, ", ", k, "] but got: [",
             mat2.sizes()[0], ", ", mat2.sizes()[1], "].");
  check_out_is_not_an_input(out, {&self, &mat2}, "bmm");
  check_same_dtype("bmm", self, mat2);
  TensorBase result = resized_out(out, {b, n, m}, self.dtype(), "bmm");
  TensorBase dst = result.is_contiguous() ? result : empty_cpu({b, n, m}, self.dtype());
  if (k * n * m < 400 && is_floating_type(self.dtype())) {
    small_bmm(self, mat2, dst);  // torch's own loop below 400 multiply-adds per matrix, not BLAS
  } else {
    for (int64_t i = 0; i < b; ++i) gemm(matrix_at(self, i), matrix_at(mat2, i), matrix_at(dst, i));
  }
  if (!dst.is_same(result)) copy_into(result, dst, "bmm");
  return result;
}

}  // namespace cpu
}  // namespace kiln
