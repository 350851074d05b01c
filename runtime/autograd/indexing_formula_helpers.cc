// Formula helpers of the indexing ops' derivatives (masked_select, take, scatter_reduce).
#include <string>

#include "generated/api/bitwise_and.h"
#include "generated/api/div.h"
#include "generated/api/eq.h"
#include "generated/api/gather.h"
#include "generated/api/index_put.h"
#include "generated/api/masked_fill.h"
#include "generated/api/mul.h"
#include "generated/api/ones_like.h"
#include "generated/api/scatter.h"
#include "generated/api/scatter_add.h"
#include "generated/api/scatter_reduce.h"
#include "generated/api/to.h"
#include "generated/api/where.h"
#include "generated/api/zeros_like.h"
#include "generated/api/max.h"
#include "generated/api/sum.h"
#include "generated/api/zeros.h"
#include "runtime/autograd/formula_helpers.h"

namespace kiln {

// masked_select picks the elements of self and mask broadcast together, in row-major order:
// the gradient puts grad back at the true positions of the broadcast shape, then sums it to self.
Tensor masked_select_backward(const Tensor& grad, IntArrayRef self_sizes, const Tensor& mask) {
  std::vector<int64_t> shape(std::max(self_sizes.size(), static_cast<size_t>(mask.dim())), 1);
  const int64_t nd = static_cast<int64_t>(shape.size());
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t a = i - (nd - static_cast<int64_t>(self_sizes.size()));
    const int64_t b = i - (nd - mask.dim());
    const int64_t sa = a >= 0 ? self_sizes[a] : 1, sb = b >= 0 ? mask.sizes()[b] : 1;
    shape[i] = sa == 1 ? sb : sa;
  }
  if (shape.empty()) return kiln::sum(grad);  // 0-dim: grad holds the one element, or nothing
  const Tensor full = kiln::index_put(kiln::zeros(shape, grad.scalar_type()), {mask.expand(shape)}, grad, true);
  return sum_to(full, self_sizes);
}

// take reads self flattened: the gradient adds grad into the flat positions (repeats accumulate).
Tensor take_backward(const Tensor& grad, IntArrayRef self_sizes, const Tensor& index) {
  int64_t n = 1;
  for (int64_t s : self_sizes) n *= s;
  const Tensor flat = kiln::index_put(kiln::zeros({n}, grad.scalar_type()), {index.reshape({-1})},
                                      grad.reshape({-1}), true);
  return flat.reshape(self_sizes);
}

// torch's scatter_reduce_backward (FunctionsManual.cpp), both gradients at once.
namespace {
struct ScatterReduceGrads {
  Tensor self, src;
};
ScatterReduceGrads scatter_reduce_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& index,
                                           const Tensor& src, const std::string& reduce, bool include_self,
                                           const Tensor& result) {
  ScatterReduceGrads g;
  if (reduce == "sum") {
    g.self = grad;
    g.src = kiln::gather(grad, dim, index);
  } else if (reduce == "prod") {
    // Zeros in self or src: the product of the others, not result / x.
    const Tensor masked_self = kiln::masked_fill(self, kiln::eq(self, 0), 1);
    const Tensor masked_self_result = kiln::scatter_reduce(masked_self, dim, index, src, reduce, include_self);
    g.self = kiln::div(kiln::mul(grad, masked_self_result), masked_self);
    const Tensor src_zero = kiln::eq(src, 0);
    const Tensor src_num_zeros = kiln::gather(
        kiln::scatter_add(kiln::zeros_like(self), dim, index, kiln::to(src_zero, self.scalar_type())), dim, index);
    const Tensor src_single_zero = kiln::bitwise_and(src_zero, kiln::eq(src_num_zeros, 1));
    const Tensor masked_src = kiln::masked_fill(src, src_single_zero, 1);
    const Tensor masked_src_result = kiln::scatter_reduce(self, dim, index, masked_src, reduce, include_self);
    g.src = kiln::where(src_single_zero, kiln::gather(kiln::mul(grad, masked_src_result), dim, index),
                        kiln::div(kiln::gather(kiln::mul(grad, result), dim, index),
                                  kiln::masked_fill(src, src_zero, 1)));
  } else if (reduce == "mean") {
    Tensor n = include_self ? kiln::ones_like(grad) : kiln::zeros_like(grad);
    n = kiln::scatter_add(n, dim, index, kiln::ones_like(src));
    n = kiln::masked_fill(n, kiln::eq(n, 0), 1);
    g.self = kiln::div(grad, n);
    g.src = kiln::div(kiln::gather(grad, dim, index), kiln::gather(n, dim, index));
  } else {  // amax, amin: the gradient is shared evenly among the elements equal to the result
    const Tensor value = kiln::gather(result, dim, index);
    const Tensor self_is_result = kiln::to(kiln::eq(self, result), self.scalar_type());
    const Tensor src_is_result = kiln::to(kiln::eq(src, value), self.scalar_type());
    const Tensor n = kiln::scatter_add(self_is_result, dim, index, src_is_result);
    const Tensor distributed = kiln::div(grad, n);
    g.self = kiln::mul(self_is_result, distributed);
    g.src = kiln::mul(src_is_result, kiln::gather(distributed, dim, index));
  }
  if (!include_self) g.self = kiln::scatter(g.self, dim, index, Scalar(0));
  return g;
}
}  // namespace

Tensor scatter_reduce_backward_self(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& index,
                                    const Tensor& src, const std::string& reduce, bool include_self,
                                    const Tensor& result) {
  return scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result).self;
}

Tensor scatter_reduce_backward_src(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& index,
                                   const Tensor& src, const std::string& reduce, bool include_self,
                                   const Tensor& result) {
  return scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result).src;
}

}  // namespace kiln
