// index_add / index_copy / index_fill along one dim and masked_scatter, written with index_put
// (which checks every index against its dim: IndexError) after torch's argument checks.
#include <string>

#include "generated/api/_unique2.h"
#include "generated/api/amax.h"
#include "generated/api/amin.h"
#include "generated/api/contiguous.h"
#include "generated/api/copy.h"
#include "generated/api/expand.h"
#include "generated/api/index_put.h"
#include "generated/api/mul.h"
#include "generated/api/narrow.h"
#include "generated/api/reshape.h"
#include "generated/api/sum.h"
#include "generated/api/to.h"
#include "generated/kernels/composite/index_add.h"
#include "generated/kernels/composite/index_copy.h"
#include "generated/kernels/composite/index_fill.h"
#include "generated/kernels/composite/masked_scatter.h"
#include "runtime/kernels/scalar_convert.h"
#include "runtime/kernels/shape_rules.h"
#include "runtime/kernels/tensor_memory.h"
#include "runtime/kernels/type_promotion.h"

namespace kiln {
namespace composite_implicit {
namespace {
// The index_put arguments that select `index` along `dim` of `self` (a 0-dim self is read as 1-D).
struct AlongDim {
  Tensor self;                  // self, or its 1-D view
  std::vector<Tensor> indices;  // undefined (whole dims) up to dim, then the index
};

// Which op checks its arguments: torch 1.13 raises a different exception class per op and check.
enum class IndexOp { Add, Copy, Fill };

AlongDim along_dim(const Tensor& self, int64_t dim, const Tensor& index, const char* op, IndexOp kind) {
  const Tensor target = self.dim() ? self : kiln::reshape(self, {1});
  const int64_t d = wrap_dim(dim, self.dim(), op);
  switch (kind) {
    case IndexOp::Add:  // torch's index_add meta: the dim is an IndexError, the dtype a RuntimeError
      KILN_CHECK_INDEX(index.dim() <= 1, op, "(): Index is supposed to be a vector");
      KILN_CHECK(index.dtype() == ScalarType::Int64 || index.dtype() == ScalarType::Int32, op,
                 "(): Expected dtype int32/int64 for index but got: ", scalar_type_name(index.dtype()));
      break;
    case IndexOp::Copy:  // torch's index_copy meta: as index_add's, int64 only
      KILN_CHECK_INDEX(index.dim() <= 1, op, "(): Index should have dimension 1 or 0 (got ", index.dim(), ")");
      KILN_CHECK(index.dtype() == ScalarType::Int64, op, "(): Expected a long tensor for index, but got ",
                 scalar_type_name(index.dtype()));
      break;
    case IndexOp::Fill:  // torch's index_fill_: the dtype is an IndexError, the dim a RuntimeError
      KILN_CHECK_INDEX(index.dtype() == ScalarType::Int64, op, "(): Expected dtype int64 for index, but got ",
                       scalar_type_name(index.dtype()));
      KILN_CHECK(index.dim() <= 1, op, "(): Index has to be a vector/scalar");
      if (self.numel() == 0 && index.numel() > 0) {
        // torch restrides self to index.numel() along dim (stride 0) over its 0-byte storage: that
        // view is out of bounds unless another dim is empty too
        bool others_nonempty = true;
        for (int64_t i = 0; i < self.dim(); ++i) others_nonempty = others_nonempty && (i == d || self.size(i) > 0);
        KILN_CHECK(!others_nonempty, "setStorage: a view of ", index.numel(), " elements along dim ", d,
                   " of a tensor of shape ", shape_str(self.sizes()), " is out of bounds for storage of size 0");
      }
      break;
  }
  // torch's index_add and index_copy loops take no negative index (index_put would count it from
  // the end); index_add checks every index, index_copy only where its loop reads (a slice with elements).
  if (kind != IndexOp::Fill && index.numel() > 0) {
    const int64_t size = target.size(d);
    const int64_t slice_numel = size == 0 ? 0 : target.numel() / size;
    if (kind == IndexOp::Add || slice_numel > 0) {
      const Tensor idx = index.to(ScalarType::Int64);
      const int64_t lo = kiln::amin(idx).item<int64_t>(), hi = kiln::amax(idx).item<int64_t>();
      const int64_t bad = lo < 0 ? lo : hi;
      if (kind == IndexOp::Add) {
        KILN_CHECK_INDEX(lo >= 0 && hi < size, "index out of range in self");
      } else {
        KILN_CHECK_INDEX(lo >= 0 && hi < size, op, "(): index ", bad, " is out of bounds for dimension ", d,
                         " with size ", size);
      }
    }
  }
  std::vector<Tensor> indices(d);
  indices.push_back(kiln::reshape(index, {-1}));
  return {target, indices};
}

// source must be self's shape with index.numel() at dim; returned as the indexed region's shape.
// torch 1.13: index_add checks the count first (RuntimeError); index_copy the other dims first
// (RuntimeError), then the count (IndexError).
Tensor checked_source(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const char* op,
                      IndexOp kind) {
  KILN_CHECK(self.dtype() == source.dtype(), op, "(): self (", scalar_type_name(self.dtype()), ") and source (",
             scalar_type_name(source.dtype()), ") must have the same scalar type");
  const int64_t d = wrap_dim(dim, self.dim(), op);
  const Tensor src = source.dim() ? source : kiln::reshape(source, {1});
  const int64_t one = 1;  // a 0-dim self counts as shape [1] (the braced list would dangle)
  const IntArrayRef self_sizes = self.dim() ? self.sizes() : IntArrayRef(one);
  const bool count_ok = src.sizes()[d < src.dim() ? d : 0] == index.numel() || src.dim() <= d;
  bool slices_same = src.dim() == static_cast<int64_t>(self_sizes.size());
  for (int64_t i = 0; slices_same && i < src.dim(); ++i) slices_same = i == d || src.sizes()[i] == self_sizes[i];
  if (kind == IndexOp::Add) {
    // torch's message reads source.size(dim): for a 0-dim source that is an IndexError itself
    KILN_CHECK_INDEX(source.dim() > 0 || index.numel() == 1, "Dimension specified as ", dim,
                     " but tensor has no dimensions");
    KILN_CHECK(count_ok, op, "(): Number of indices (", index.numel(), ") should be equal to source.size(dim)");
  } else {
    KILN_CHECK(slices_same, op, "(): Source/destination tensor must have same slice shapes. Got self.shape = ",
               shape_str(self.sizes()), " source.shape = ", shape_str(source.sizes()));
    KILN_CHECK_INDEX(count_ok, op, "(): Number of indices (", index.numel(), ") should be equal to source.size(dim)");
  }
  const bool same = slices_same && src.sizes()[d] == index.numel();
  KILN_CHECK(same, op, "(): source tensor shape must match self tensor shape, excluding the specified dimension. "
             "Got self.shape = ", shape_str(self.sizes()), " source.shape = ", shape_str(source.sizes()),
             " and ", index.numel(), " indices");
  return src;
}

Tensor scaled_source(const Tensor& src, const Scalar& alpha) {
  if (alpha.equal(1)) return src;
  // torch adds source * bool(alpha) into a bool self (a logical or); an integer alpha would promote
  if (src.dtype() == ScalarType::Bool) return kiln::mul(src, Scalar(alpha.to_bool()));
  const bool integral = is_integral_type(src.dtype(), /*include_bool=*/true);
  return kiln::mul(src, integral ? Scalar(alpha.to_long()) : alpha);
}

Tensor fill_value(const Tensor& self, const Scalar& value) {
  check_scalar_fits(value, self.dtype(), "index_fill");
  return Tensor(cast_to(wrap_scalar(value), self.dtype()));
}

Tensor fill_value(const Tensor& self, const Tensor& value) {
  KILN_CHECK(value.dim() == 0, "index_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
             value.dim(), " dimension(s).");
  return value.to(self.dtype());
}

// As torch: an in-place write into a tensor whose elements share memory is refused.
void check_not_expanded(const Tensor& self, const char* op) {
  KILN_CHECK(!is_expanded(self), op, "(): unsupported operation: more than one element of the written-to tensor "
             "refers to a single memory location. Please clone() the tensor before performing the operation.");
}

Tensor back_to(const Tensor& result, const Tensor& self) {
  return self.dim() ? result : kiln::reshape(result, {});
}

// masked_scatter's source values: its first mask.sum() elements, in order.
Tensor scattered_values(const Tensor& self, const Tensor& mask, const Tensor& source) {
  KILN_CHECK(mask.dtype() == ScalarType::Bool, "masked_scatter_ only supports boolean masks, but got mask with dtype ",
             scalar_type_name(mask.dtype()));
  KILN_CHECK(self.dtype() == source.dtype(), "masked_scatter: expected self and source to have same dtypes but got ",
             scalar_type_name(self.dtype()), " and ", scalar_type_name(source.dtype()));
  const int64_t n = kiln::sum(mask).item<int64_t>();
  KILN_CHECK(source.numel() >= n, "masked_scatter: Number of elements of source < number of ones in mask");
  return kiln::narrow(kiln::reshape(source, {-1}), 0, 0, n);
}
}  // namespace

Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  AlongDim a = along_dim(self, dim, index, "index_add", IndexOp::Add);
  const Tensor src = checked_source(self, dim, index, source, "index_add", IndexOp::Add);
  return back_to(kiln::index_put(a.self, a.indices, scaled_source(src, alpha), /*accumulate=*/true), self);
}

const Tensor& index_add_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                         const Scalar& alpha) {
  wrap_dim(dim, self.dim(), "index_add_");  // a bad dim is an IndexError before the overlap, as torch's meta
  check_not_expanded(self, "index_add_");     // before the index values, as torch's kernel
  AlongDim a = along_dim(self, dim, index, "index_add_", IndexOp::Add);
  const Tensor src = checked_source(self, dim, index, source, "index_add_", IndexOp::Add);
  a.self.index_put_(a.indices, scaled_source(src, alpha), /*accumulate=*/true);
  return self;
}

Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  AlongDim a = along_dim(self, dim, index, "index_copy", IndexOp::Copy);
  const Tensor src = checked_source(self, dim, index, source, "index_copy", IndexOp::Copy);
  return back_to(kiln::index_put(a.self, a.indices, src), self);
}

const Tensor& index_copy_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  wrap_dim(dim, self.dim(), "index_copy_");  // a bad dim is an IndexError before the overlap, as torch's meta
  check_not_expanded(self, "index_copy_");     // before the index values, as torch's kernel
  AlongDim a = along_dim(self, dim, index, "index_copy_", IndexOp::Copy);
  const Tensor src = checked_source(self, dim, index, source, "index_copy_", IndexOp::Copy);
  a.self.index_put_(a.indices, src);
  return self;
}

Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  AlongDim a = along_dim(self, dim, index, "index_fill", IndexOp::Fill);
  return back_to(kiln::index_put(a.self, a.indices, fill_value(self, value)), self);
}

const Tensor& index_fill_(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  AlongDim a = along_dim(self, dim, index, "index_fill_", IndexOp::Fill);
  a.self.index_put_(a.indices, fill_value(self, value));
  return self;
}

// The index a tensor value is filled through: each position once when the value records a gradient
// (torch's derivative sums the gradient over _unique(index): a repeated index counts once).
Tensor fill_index(const Tensor& index, const Tensor& value) {
  return value.requires_grad() && index.numel() > 1 ? std::get<0>(kiln::_unique2(index)) : index;
}

Tensor index_fill_tensor(const Tensor& self, int64_t dim, const Tensor& index_arg, const Tensor& value) {
  const Tensor index = fill_index(index_arg, value);
  AlongDim a = along_dim(self, dim, index, "index_fill", IndexOp::Fill);
  return back_to(kiln::index_put(a.self, a.indices, fill_value(self, value)), self);
}

const Tensor& index_fill__tensor(const Tensor& self, int64_t dim, const Tensor& index_arg, const Tensor& value) {
  const Tensor index = fill_index(index_arg, value);
  AlongDim a = along_dim(self, dim, index, "index_fill_", IndexOp::Fill);
  a.self.index_put_(a.indices, fill_value(self, value));
  return self;
}

Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source) {
  const DimVector shape = broadcast_shapes(self.sizes(), mask.sizes(), "masked_scatter");
  if (shape.empty()) {  // index_put takes no 0-dim mask: the 1-element view instead
    return kiln::reshape(masked_scatter(kiln::reshape(self, {1}), kiln::reshape(mask, {1}), source), {});
  }
  const Tensor values = scattered_values(self, mask.expand(shape), source);
  // A broadcast self is materialized first: index_put's copy of it must not share elements.
  const Tensor base = IntArrayRef(shape) == self.sizes() ? self : kiln::contiguous(self.expand(shape));
  return kiln::index_put(base, {mask.expand(shape)}, values);
}

const Tensor& masked_scatter_(const Tensor& self, const Tensor& mask, const Tensor& source) {
  const DimVector shape = broadcast_shapes(self.sizes(), mask.sizes(), "masked_scatter_");
  KILN_CHECK(IntArrayRef(shape) == self.sizes(), "masked_scatter_: mask of shape ", shape_str(mask.sizes()),
             " cannot be broadcast to self's shape ", shape_str(self.sizes()));
  if (shape.empty()) {
    masked_scatter_(kiln::reshape(self, {1}), kiln::reshape(mask, {1}), source);
    return self;
  }
  check_not_expanded(self, "masked_scatter_");
  return self.index_put_({mask.expand(shape)}, scattered_values(self, mask.expand(shape), source));
}

}  // namespace composite_implicit
}  // namespace kiln
