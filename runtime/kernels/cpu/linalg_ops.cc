// mm through OpenBLAS (float32/float64); a plain loop for integer dtypes.
#include <cblas.h>

#include "generated/kernels/mm.h"
#include "runtime/kernels/tensor_iterator.h"

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

}  // namespace

TensorBase mm_out(const TensorBase& self, const TensorBase& mat2, const TensorBase& out) {
  KILN_CHECK(self.dim() == 2, "mm(): self must be a matrix, got a ", self.dim(), "-D tensor");
  KILN_CHECK(mat2.dim() == 2, "mm(): mat2 must be a matrix, got a ", mat2.dim(), "-D tensor");
  KILN_CHECK(self.sizes()[1] == mat2.sizes()[0], "mm(): mat1 and mat2 shapes cannot be multiplied (",
             self.sizes()[0], "x", self.sizes()[1], " and ", mat2.sizes()[0], "x", mat2.sizes()[1], ")");
  KILN_CHECK(self.dtype() == mat2.dtype(), "mm(): expected mat1 and mat2 to have the same dtype, but got: ",
             scalar_type_name(self.dtype()), " != ", scalar_type_name(mat2.dtype()));
  KILN_CHECK(self.is_cpu() && mat2.is_cpu(), "mm(): expected CPU tensors");
  const int64_t n = self.sizes()[0], k = self.sizes()[1], m = mat2.sizes()[1];
  TensorBase result = out;
  if (result.defined()) {
    KILN_CHECK(result.dtype() == self.dtype(), "mm(): Expected out tensor to have dtype ",
               scalar_type_name(self.dtype()), ", but got ", scalar_type_name(result.dtype()), " instead");
    if (!(result.sizes() == IntArrayRef({n, m}))) result.impl()->set_sizes_contiguous({n, m});
  } else {
    result = empty_cpu({n, m}, self.dtype());
  }
  TensorBase dst = result.is_contiguous() ? result : empty_cpu({n, m}, self.dtype());
  if (n * m > 0) {
    const ScalarType dt = self.dtype();
    if (k == 0) {
      KILN_DISPATCH_ALL_TYPES(dt, "mm", [&] {
        scalar_t* p = static_cast<scalar_t*>(dst.data_ptr());
        for (int64_t i = 0; i < n * m; ++i) p[i] = scalar_t(0);
      });
    } else if (dt == ScalarType::Float32 || dt == ScalarType::Float64) {
      BlasMatrix a = as_blas(self), b = as_blas(mat2);
      auto ta = a.trans ? CblasTrans : CblasNoTrans, tb = b.trans ? CblasTrans : CblasNoTrans;
      if (dt == ScalarType::Float32) {
        cblas_sgemm(CblasRowMajor, ta, tb, n, m, k, 1.0f, static_cast<const float*>(a.t.data_ptr()), a.ld,
                    static_cast<const float*>(b.t.data_ptr()), b.ld, 0.0f, static_cast<float*>(dst.data_ptr()),
                    std::max<int64_t>(m, 1));
      } else {
        cblas_dgemm(CblasRowMajor, ta, tb, n, m, k, 1.0, static_cast<const double*>(a.t.data_ptr()), a.ld,
                    static_cast<const double*>(b.t.data_ptr()), b.ld, 0.0, static_cast<double*>(dst.data_ptr()),
                    std::max<int64_t>(m, 1));
      }
    } else {
      KILN_DISPATCH_ALL_TYPES(dt, "mm", [&] {
        const scalar_t* A = static_cast<const scalar_t*>(self.data_ptr());
        const scalar_t* B = static_cast<const scalar_t*>(mat2.data_ptr());
        scalar_t* C = static_cast<scalar_t*>(dst.data_ptr());
        const int64_t as0 = self.strides()[0], as1 = self.strides()[1], bs0 = mat2.strides()[0], bs1 = mat2.strides()[1];
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < m; ++j) {
            scalar_t acc = 0;
            for (int64_t p = 0; p < k; ++p) acc = acc + A[i * as0 + p * as1] * B[p * bs0 + j * bs1];
            C[i * m + j] = acc;
          }
      });
    }
  }
  if (!dst.is_same(result)) copy_into(result, dst, "mm");
  return result;
}

}  // namespace cpu
}  // namespace kiln
