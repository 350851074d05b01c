// _blas_dot and _blas_mv: float32/float64 dot and mv through the BLAS calls torch's CPU kernels make
// (sdot/ddot, and sgemv/dgemv in column-major terms with the 'n' / 't' choice of torch's
// addmv_impl_cpu), so that torch.dot, torch.mv and matrix @ vector give torch's bits: OpenBLAS's
// dot and gemv kernels sum in other orders than its gemm, which kiln's mm-based dot/mv used.
#include <cblas.h>

#include <climits>

#include "generated/kernels/_blas_dot.h"
#include "generated/kernels/_blas_mv.h"
#include "runtime/kernels/cpu/cpu_tensors.h"

namespace kiln {
namespace cpu {
namespace {

void check_blas_dtype(const char* op, const TensorBase& a, const TensorBase& b) {
  KILN_CHECK(a.is_cpu() && b.is_cpu(), op, "(): expected CPU tensors");
  KILN_CHECK(a.dtype() == b.dtype(), op, "(): expected both inputs to have the same dtype, but found ",
             scalar_type_name(a.dtype()), " and ", scalar_type_name(b.dtype()));
  KILN_CHECK(a.dtype() == ScalarType::Float32 || a.dtype() == ScalarType::Float64, op, "(): \"", op,
             "\" not implemented for '", scalar_type_name(a.dtype()), "' (float32 or float64 expected)");
}

// A 1-D tensor BLAS can read with a positive increment (a copy otherwise).
TensorBase blas_vector(const TensorBase& v) {
  if (v.sizes()[0] <= 1 || (v.strides()[0] > 0 && v.strides()[0] <= INT_MAX)) return v;
  return contiguous_cpu(v);
}

int blas_inc(const TensorBase& v) { return v.sizes()[0] <= 1 ? 1 : static_cast<int>(v.strides()[0]); }

// torch's gemv<scalar_t>(trans, m, n, alpha = 1, a, lda, x, incx, beta = 0, y, incy = 1)
// (aten/src/ATen/native/BlasKernel.cpp): `if (n == 1) lda = m;` then the Fortran sgemv/dgemv.
void gemv(bool trans, int64_t m, int64_t n, const TensorBase& a, int64_t lda, const TensorBase& x, int incx,
          const TensorBase& y) {
  if (n == 1) lda = m;
  lda = std::max<int64_t>(lda, 1);
  const CBLAS_TRANSPOSE t = trans ? CblasTrans : CblasNoTrans;
  if (a.dtype() == ScalarType::Float32) {
    cblas_sgemv(CblasColMajor, t, static_cast<int>(m), static_cast<int>(n), 1.0f,
                static_cast<const float*>(a.data_ptr()), static_cast<int>(lda), static_cast<const float*>(x.data_ptr()),
                incx, 0.0f, static_cast<float*>(y.data_ptr()), 1);
  } else {
    cblas_dgemv(CblasColMajor, t, static_cast<int>(m), static_cast<int>(n), 1.0,
                static_cast<const double*>(a.data_ptr()), static_cast<int>(lda),
                static_cast<const double*>(x.data_ptr()), incx, 0.0, static_cast<double*>(y.data_ptr()), 1);
  }
}

}  // namespace

TensorBase blas_dot(const TensorBase& self, const TensorBase& tensor) {
  KILN_CHECK(self.dim() == 1 && tensor.dim() == 1, "_blas_dot(): 1D tensors expected, but got ", self.dim(),
             "D and ", tensor.dim(), "D tensors");
  KILN_CHECK(self.sizes()[0] == tensor.sizes()[0], "_blas_dot(): inconsistent tensor size, expected tensor [",
             self.sizes()[0], "] and src [", tensor.sizes()[0], "] to have the same number of elements");
  check_blas_dtype("_blas_dot", self, tensor);
  const int64_t n = self.sizes()[0];
  KILN_CHECK(n <= INT_MAX, "_blas_dot(): vectors too long for BLAS");
  TensorBase result = empty_cpu({}, self.dtype());
  const TensorBase x = blas_vector(self), y = blas_vector(tensor);
  if (self.dtype() == ScalarType::Float32) {
    *static_cast<float*>(result.data_ptr()) =
        n == 0 ? 0.0f
               : cblas_sdot(static_cast<int>(n), static_cast<const float*>(x.data_ptr()), blas_inc(x),
                            static_cast<const float*>(y.data_ptr()), blas_inc(y));
  } else {
    *static_cast<double*>(result.data_ptr()) =
        n == 0 ? 0.0
               : cblas_ddot(static_cast<int>(n), static_cast<const double*>(x.data_ptr()), blas_inc(x),
                            static_cast<const double*>(y.data_ptr()), blas_inc(y));
  }
  return result;
}

TensorBase blas_mv(const TensorBase& self, const TensorBase& vec) {
  KILN_CHECK(self.dim() == 2 && vec.dim() == 1, "_blas_mv(): vector + matrix @ vector expected, got ", self.dim(),
             "D and ", vec.dim(), "D tensors");
  KILN_CHECK(self.sizes()[1] == vec.sizes()[0], "_blas_mv(): size mismatch, got input (", self.sizes()[0], "x",
             self.sizes()[1], "), vec (", vec.sizes()[0], ")");
  check_blas_dtype("_blas_mv", self, vec);
  const int64_t rows = self.sizes()[0], cols = self.sizes()[1];
  KILN_CHECK(rows <= INT_MAX && cols <= INT_MAX, "_blas_mv(): matrix too large for BLAS");
  TensorBase result = empty_cpu({rows}, self.dtype());
  if (rows == 0) return result;
  if (cols == 0) return zeros_cpu({rows}, self.dtype());
  const TensorBase x = blas_vector(vec);
  // addmv_impl_cpu's choice: a column-major matrix as it is ('n'), a row-major one transposed ('t'),
  // anything else made contiguous first.
  auto lda_ok = [](int64_t m, int64_t n, int64_t lda) { return n == 1 || lda >= std::max<int64_t>(1, m); };
  const int64_t s0 = self.strides()[0], s1 = self.strides()[1];
  if (s0 == 1 && s1 <= INT_MAX && lda_ok(rows, cols, s1)) {
    gemv(false, rows, cols, self, s1, x, blas_inc(x), result);
  } else if (s1 == 1 && s0 <= INT_MAX && lda_ok(cols, rows, s0)) {
    gemv(true, cols, rows, self, s0, x, blas_inc(x), result);
  } else {
    const TensorBase c = contiguous_cpu(self);
    gemv(true, cols, rows, c, cols, x, blas_inc(x), result);
  }
  return result;
}

}  // namespace cpu
}  // namespace kiln
