// dot, mv, outer and addmm: shape checks as torch's, then mm / mul (BLAS for floats), so
// their gradients come from those ops' formulas; float32/float64 dot and mv on the CPU go to
// _blas_dot / _blas_mv, BLAS's dot and gemv as torch calls them.
#include "generated/api/_addmm_into.h"
#include "generated/api/_blas_dot.h"
#include "generated/api/_blas_mv.h"
#include "generated/api/add.h"
#include "generated/api/mm.h"
#include "generated/api/mul.h"
#include "generated/api/to.h"
#include "generated/kernels/composite/addmm.h"
#include "generated/kernels/composite/dot.h"
#include "generated/kernels/composite/mv.h"
#include "generated/kernels/composite/outer.h"
#include "runtime/kernels/shape_rules.h"

namespace kiln {
namespace composite_implicit {
namespace {
void check_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
  KILN_CHECK(a.dtype() == b.dtype(), op, "(): expected both inputs to have the same dtype, but found ",
             scalar_type_name(a.dtype()), " and ", scalar_type_name(b.dtype()));
}

// float32/float64 CPU operands: torch's dot and mv are BLAS's dot and gemv (not gemm).
bool uses_blas_vector_ops(const Tensor& a, const Tensor& b) {
  const ScalarType dt = a.dtype();
  return (dt == ScalarType::Float32 || dt == ScalarType::Float64) && b.dtype() == dt && a.is_cpu() && b.is_cpu();
}
}  // namespace

Tensor dot(const Tensor& self, const Tensor& tensor) {
  KILN_CHECK(self.dim() == 1 && tensor.dim() == 1, "dot(): 1D tensors expected, but got ", self.dim(), "D and ",
             tensor.dim(), "D tensors");
  KILN_CHECK(self.sizes()[0] == tensor.sizes()[0], "dot(): inconsistent tensor size, expected tensor [",
             self.sizes()[0], "] and src [", tensor.sizes()[0],
             "] to have the same number of elements, but got ", self.sizes()[0], " and ", tensor.sizes()[0],
             " elements respectively");
  check_same_dtype(self, tensor, "dot");
  KILN_CHECK(self.dtype() != ScalarType::Bool, "dot(): \"dot\" not implemented for 'bool'");
  if (uses_blas_vector_ops(self, tensor)) return kiln::_blas_dot(self, tensor);
  return kiln::mm(self.unsqueeze(0), tensor.unsqueeze(1)).view(IntArrayRef{});  // (view({}) would pick view(dtype))
}

Tensor mv(const Tensor& self, const Tensor& vec) {
  KILN_CHECK(self.dim() == 2 && vec.dim() == 1, "mv(): vector + matrix @ vector expected, got ", self.dim(), "D and ",
             vec.dim(), "D tensors");
  KILN_CHECK(self.sizes()[1] == vec.sizes()[0], "mv(): size mismatch, got input (", self.sizes()[0], "x",
             self.sizes()[1], "), vec (", vec.sizes()[0], ")");
  check_same_dtype(self, vec, "mv");
  KILN_CHECK(self.dtype() != ScalarType::Bool || self.numel() == 0 || vec.numel() == 0,  // as torch
             "mv(): \"mv\" not implemented for 'bool'");
  if (uses_blas_vector_ops(self, vec)) return kiln::_blas_mv(self, vec);
  return kiln::mm(self, vec.unsqueeze(1)).squeeze(1);
}

Tensor outer(const Tensor& self, const Tensor& vec2) {
  KILN_CHECK(self.dim() == 1 && vec2.dim() == 1, "outer(): expected 1D tensors, but got ", self.dim(), "D and ",
             vec2.dim(), "D tensors");
  return kiln::mul(self.unsqueeze(1), vec2);
}

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) {
  KILN_CHECK(mat1.dim() == 2 && mat2.dim() == 2, "addmm(): expected 2D matrices, got ", mat1.dim(), "D and ",
             mat2.dim(), "D tensors");
  check_same_dtype(mat1, self, "addmm");
  check_same_dtype(mat1, mat2, "addmm");  // even for an empty product, as torch (mm alone skips it)
  // As torch: bool only where the product is empty.
  KILN_CHECK(self.dtype() != ScalarType::Bool || mat1.numel() == 0 || mat2.numel() == 0,
             "addmm(): \"addmm\" not implemented for 'bool'");
  if (is_reduced_floating_type(mat1.dtype())) {
    // float16/bfloat16: the whole beta*self + alpha*(mat1 @ mat2) in float32, rounded once (as
    // torch's fused addmm); the casts carry the gradients.
    const ScalarType f32 = ScalarType::Float32;
    return addmm(self.to(f32), mat1.to(f32), mat2.to(f32), beta, alpha).to(mat1.dtype());
  }
  // float32/float64 with beta = alpha = 1 (nn.Linear): the product accumulated into self by BLAS,
  // as torch's addmm rounds it (self before the product's K-blocks).
  const ScalarType dt = mat1.dtype();
  if ((dt == ScalarType::Float32 || dt == ScalarType::Float64) && mat2.dtype() == dt && beta.equal(1) &&
      alpha.equal(1) && mat1.sizes()[1] == mat2.sizes()[0] && self.dim() <= 2) {
    const int64_t rows = mat1.sizes()[0], cols = mat2.sizes()[1];
    const int64_t pad = 2 - self.dim();
    bool broadcasts = true;
    for (int64_t d = 0; d < self.dim(); ++d) {
      const int64_t size = self.sizes()[d], want = pad + d == 0 ? rows : cols;
      broadcasts = broadcasts && (size == want || size == 1);
    }
    if (broadcasts) return kiln::_addmm_into(self, mat1, mat2);
  }
  Tensor product = kiln::mm(mat1, mat2);
  // self must broadcast to the product's shape (not the other way round).
  const DimVector shape = broadcast_shapes(self.sizes(), product.sizes(), "addmm");
  KILN_CHECK(self.dim() <= 2 && IntArrayRef(shape) == product.sizes(), "addmm(): self of shape ",
             shape_str(self.sizes()), " cannot be broadcast to the product's shape ", shape_str(product.sizes()));
  // torch's empty-inner-dim path scales self by beta in int64, which cannot be cast back to bool.
  if (product.dtype() == ScalarType::Bool) {
    KILN_CHECK(product.numel() == 0, "addmm(): result type int64 can't be cast to the desired output type bool");
    return product;
  }
  // Integer matrices take integer factors (torch casts beta and alpha to the dtype: 0.5 -> 0).
  const bool integral = is_integral_type(product.dtype(), /*include_bool=*/true);
  const Scalar a = integral ? Scalar(alpha.to_long()) : alpha, b = integral ? Scalar(beta.to_long()) : beta;
  if (!a.equal(1)) product = kiln::mul(product, a);
  if (b.equal(0)) return product;
  return kiln::add(b.equal(1) ? self : kiln::mul(self, b), product);
}

}  // namespace composite_implicit
}  // namespace kiln
