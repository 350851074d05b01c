// diag, diag_embed, trace, cross (and linalg.cross), kron, tensordot, baddbmm and addbmm, written
// with views, elementwise ops, mm and bmm: their gradients come from those ops.
#include <numeric>
#include <string>

#include "generated/api/add.h"
#include "generated/api/bmm.h"
#include "generated/api/contiguous.h"
#include "generated/api/copy.h"
#include "generated/api/diagonal.h"
#include "generated/api/expand.h"
#include "generated/api/mm.h"
#include "generated/api/mul.h"
#include "generated/api/permute.h"
#include "generated/api/reshape.h"
#include "generated/api/select.h"
#include "generated/api/stack.h"
#include "generated/api/sub.h"
#include "generated/api/sum.h"
#include "generated/api/to.h"
#include "generated/api/zeros.h"
#include "generated/kernels/composite/addbmm.h"
#include "generated/kernels/composite/baddbmm.h"
#include "generated/kernels/composite/cross.h"
#include "generated/kernels/composite/diag.h"
#include "generated/kernels/composite/diag_embed.h"
#include "generated/kernels/composite/kron.h"
#include "generated/kernels/composite/linalg_cross.h"
#include "generated/kernels/composite/tensordot.h"
#include "generated/kernels/composite/trace.h"
#include "runtime/kernels/shape_rules.h"

namespace kiln {
namespace composite_implicit {
namespace {
void check_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
  KILN_CHECK(a.dtype() == b.dtype(), op, "(): expected both inputs to have the same dtype, but found ",
             scalar_type_name(a.dtype()), " and ", scalar_type_name(b.dtype()));
}

// The cross product along dim d of two tensors of one shape (size 3 at d).
Tensor cross_at(const Tensor& a, const Tensor& b, int64_t d) {
  auto at = [d](const Tensor& t, int64_t i) { return kiln::select(t, d, i); };
  const Tensor c0 = kiln::sub(kiln::mul(at(a, 1), at(b, 2)), kiln::mul(at(a, 2), at(b, 1)));
  const Tensor c1 = kiln::sub(kiln::mul(at(a, 2), at(b, 0)), kiln::mul(at(a, 0), at(b, 2)));
  const Tensor c2 = kiln::sub(kiln::mul(at(a, 0), at(b, 1)), kiln::mul(at(a, 1), at(b, 0)));
  return kiln::stack({c0, c1, c2}, d);
}

// Broadcasts self and other, checks torch's dtype rules; returns the common shape.
DimVector cross_shape(const Tensor& self, const Tensor& other) {
  KILN_CHECK(self.dtype() == other.dtype(), "linalg.cross: expected input and other to have the same dtype, but got ",
             scalar_type_name(self.dtype()), " and ", scalar_type_name(other.dtype()));
  KILN_CHECK(self.dtype() != ScalarType::Bool, "linalg.cross: \"cross\" not implemented for 'bool'");
  // torch 1.13 broadcasts every dim but the cross product's, and only between tensors of one rank.
  KILN_CHECK(self.dim() == other.dim(), "linalg.cross: inputs must have the same number of dimensions.");
  return broadcast_shapes(self.sizes(), other.sizes(), "linalg.cross");
}

Tensor cross_of(const Tensor& self, const Tensor& other, const DimVector& shape, int64_t d) {
  KILN_CHECK(self.sizes()[d] == 3 && other.sizes()[d] == 3, "linalg.cross: inputs dimension ", d,
             " must have length 3. Got ", self.sizes()[d], " and ", other.sizes()[d]);
  if (is_reduced_floating_type(self.dtype())) {
    // float16/bfloat16: in float32, rounded once (as addmm), not after every product.
    const ScalarType f32 = ScalarType::Float32;
    return cross_at(self.to(f32).expand(shape), other.to(f32).expand(shape), d).to(self.dtype());
  }
  return cross_at(self.expand(shape), other.expand(shape), d);
}

// beta * self + alpha * product, as addmm: integer factors for integer tensors, self ignored at beta 0.
Tensor scaled_sum(const Tensor& self, Tensor product, const Scalar& beta, const Scalar& alpha, const char* op) {
  const DimVector shape = broadcast_shapes(self.sizes(), product.sizes(), op);
  KILN_CHECK(IntArrayRef(shape) == product.sizes(), op, "(): self of shape ", shape_str(self.sizes()),
             " cannot be broadcast to the product's shape ", shape_str(product.sizes()));
  const bool integral = is_integral_type(product.dtype(), /*include_bool=*/true);
  const Scalar a = integral ? Scalar(alpha.to_long()) : alpha, b = integral ? Scalar(beta.to_long()) : beta;
  if (!a.equal(1)) product = kiln::mul(product, a);
  if (b.equal(0)) return product;
  return kiln::add(b.equal(1) ? self : kiln::mul(self, b), product);
}

Tensor batch_product(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const char* op) {
  KILN_CHECK(batch1.dim() == 3, op, "(): batch1 must be a 3D tensor, got ", batch1.dim(), "D");
  KILN_CHECK(batch2.dim() == 3, op, "(): batch2 must be a 3D tensor, got ", batch2.dim(), "D");
  check_same_dtype(self, batch1, op);
  KILN_CHECK(self.dtype() != ScalarType::Bool, op, "(): \"", op, "\" not implemented for 'bool'");
  return kiln::bmm(batch1, batch2);
}
}  // namespace

Tensor diag_embed(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t nd = self.dim() + 1;
  const int64_t d1 = wrap_dim(dim1, nd, "diag_embed"), d2 = wrap_dim(dim2, nd, "diag_embed");
  KILN_CHECK(d1 != d2, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  KILN_CHECK(self.dim() >= 1, "diag_embed(): expected at least a 1-dimensional input");
  // An offset beyond any tensor's size would overflow the size (and a view's storage offset).
  KILN_CHECK(offset > -(int64_t(1) << 62) && offset < (int64_t(1) << 62), "diag_embed(): offset ", offset,
             " is out of range");
  const int64_t n = self.sizes()[self.dim() - 1] + (offset < 0 ? -offset : offset);
  DimVector sizes;
  int64_t next = 0;
  for (int64_t i = 0; i < nd; ++i) sizes.push_back(i == d1 || i == d2 ? n : self.sizes()[next++]);
  Tensor result = kiln::zeros(sizes, self.dtype());
  // (a diagonal view of it could start past its storage) Still in self's graph (a 0-dim zero added),
  // as torch's result requires grad.
  if (result.numel() == 0) return self.requires_grad() ? kiln::add(result, kiln::sum(self, self.scalar_type())) : result;
  // diagonal() puts the diagonal last and keeps the other dims in order: self's layout.
  kiln::diagonal(result, offset, d1, d2).copy_(self);
  return result;
}

Tensor diag(const Tensor& self, int64_t diagonal) {
  KILN_CHECK(self.dim() == 1 || self.dim() == 2, "diag(): Supports 1D or 2D tensors. Got ", self.dim(), "D");
  if (self.dim() == 1) return diag_embed(self, diagonal, 0, 1);
  return kiln::contiguous(kiln::diagonal(self, diagonal, 0, 1)).clone();
}

Tensor trace(const Tensor& self) {
  KILN_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  KILN_CHECK(self.dtype() != ScalarType::Bool, "trace: \"trace\" not implemented for 'bool'");
  return kiln::sum(kiln::diagonal(self, 0, 0, 1));
}

Tensor cross(const Tensor& self, const Tensor& other, const std::optional<int64_t>& dim) {
  const DimVector shape = cross_shape(self, other);
  if (dim) return cross_of(self, other, shape, wrap_dim(*dim, static_cast<int64_t>(shape.size()), "cross"));
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 3) return cross_of(self, other, shape, static_cast<int64_t>(d));
  }
  KILN_CHECK(false, "no dimension of size 3 in input");
  return Tensor();
}

Tensor linalg_cross(const Tensor& self, const Tensor& other, int64_t dim) {
  const DimVector shape = cross_shape(self, other);
  return cross_of(self, other, shape, wrap_dim(dim, static_cast<int64_t>(shape.size()), "linalg.cross"));
}

// kron: self's dims interleaved with other's ((a0, 1, a1, 1) * (1, b0, 1, b1)), then merged pairwise.
Tensor kron(const Tensor& self, const Tensor& other) {
  const int64_t nd = std::max(self.dim(), other.dim());
  DimVector a_shape, b_shape, result_shape;
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t ai = i - (nd - self.dim()), bi = i - (nd - other.dim());
    const int64_t a = ai >= 0 ? self.sizes()[ai] : 1, b = bi >= 0 ? other.sizes()[bi] : 1;
    a_shape.push_back(a), a_shape.push_back(1);
    b_shape.push_back(1), b_shape.push_back(b);
    result_shape.push_back(a * b);
  }
  return kiln::reshape(kiln::mul(kiln::reshape(self, a_shape), kiln::reshape(other, b_shape)), result_shape);
}

Tensor tensordot(const Tensor& self, const Tensor& other, IntArrayRef dims_self, IntArrayRef dims_other) {
  KILN_CHECK(dims_self.size() == dims_other.size(), "both dimension lists should have same length");
  check_same_dtype(self, other, "tensordot");
  std::vector<bool> contracted_a(self.dim(), false), contracted_b(other.dim(), false);
  DimVector perm_a, perm_b, free_sizes;
  int64_t k = 1;
  for (size_t i = 0; i < dims_self.size(); ++i) {
    const int64_t da = wrap_existing_dim(dims_self[i], self.dim(), "tensordot");
    const int64_t db = wrap_existing_dim(dims_other[i], other.dim(), "tensordot");
    KILN_CHECK(self.sizes()[da] == other.sizes()[db], "contracted dimensions need to match, but first has size ",
               self.sizes()[da], " in dim ", da, " and second has size ", other.sizes()[db], " in dim ", db);
    KILN_CHECK(!contracted_a[da] && !contracted_b[db], "tensordot(): a dim appears twice in dims");
    contracted_a[da] = contracted_b[db] = true;
    k *= self.sizes()[da];
  }
  int64_t m = 1, n = 1;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!contracted_a[d]) perm_a.push_back(d), free_sizes.push_back(self.sizes()[d]), m *= self.sizes()[d];
  }
  for (int64_t d : dims_self) perm_a.push_back(wrap_existing_dim(d, self.dim(), "tensordot"));
  for (int64_t d : dims_other) perm_b.push_back(wrap_existing_dim(d, other.dim(), "tensordot"));
  for (int64_t d = 0; d < other.dim(); ++d) {
    if (!contracted_b[d]) perm_b.push_back(d), free_sizes.push_back(other.sizes()[d]), n *= other.sizes()[d];
  }
  const Tensor a = kiln::reshape(kiln::permute(self, perm_a), {m, k});
  const Tensor b = kiln::reshape(kiln::permute(other, perm_b), {k, n});
  return kiln::reshape(kiln::mm(a, b), free_sizes);
}

Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
               const Scalar& alpha) {
  return scaled_sum(self, batch_product(self, batch1, batch2, "baddbmm"), beta, alpha, "baddbmm");
}

const Tensor& baddbmm_(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
                       const Scalar& alpha) {
  const Tensor result = baddbmm(self, batch1, batch2, beta, alpha);
  KILN_CHECK(!is_expanded(self), "baddbmm_(): unsupported operation: more than one element of the written-to tensor "
             "refers to a single memory location. Please clone() the tensor before performing the operation.");
  KILN_CHECK(result.sizes() == self.sizes(), "baddbmm_(): the result's shape ", shape_str(result.sizes()),
             " does not match self's ", shape_str(self.sizes()));
  return self.copy_(result);
}

Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
              const Scalar& alpha) {
  const Tensor product = batch_product(self, batch1, batch2, "addbmm");
  return scaled_sum(self, kiln::sum(product, IntArrayRef({0}), false, product.dtype()), beta, alpha, "addbmm");
}

const Tensor& addbmm_(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
                      const Scalar& alpha) {
  const Tensor result = addbmm(self, batch1, batch2, beta, alpha);
  KILN_CHECK(!is_expanded(self), "addbmm_(): unsupported operation: more than one element of the written-to tensor "
             "refers to a single memory location. Please clone() the tensor before performing the operation.");
  KILN_CHECK(result.sizes() == self.sizes(), "addbmm_(): the result's shape ", shape_str(result.sizes()),
             " does not match self's ", shape_str(self.sizes()));
  return self.copy_(result);
}

}  // namespace composite_implicit
}  // namespace kiln
