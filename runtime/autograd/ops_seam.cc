// The only runtime file that calls generated operators (see ops_seam.h).
#include "runtime/autograd/ops_seam.h"

#include "generated/api/add.h"
#include "generated/api/as_strided.h"
#include "generated/api/clone.h"
#include "generated/api/copy.h"
#include "generated/api/detach.h"
#include "generated/api/ones_like.h"
#include "generated/api/zeros.h"
#include "runtime/autograd/engine.h"
#include "runtime/autograd/formula_helpers.h"

namespace kiln {
namespace ops_seam {

TensorBase add(const TensorBase& a, const TensorBase& b) { return kiln::add(Tensor(a), Tensor(b)); }
void add_(const TensorBase& self, const TensorBase& other) { Tensor(self).add_(Tensor(other)); }
TensorBase clone(const TensorBase& t) { return kiln::clone(Tensor(t)); }
TensorBase contiguous_copy(const TensorBase& t) {
  const Tensor x(t);
  return x.is_contiguous() ? kiln::clone(x) : x.contiguous();
}
TensorBase detach(const TensorBase& t) { return kiln::detach(Tensor(t)); }
TensorBase ones_like(const TensorBase& t) { return kiln::ones_like(Tensor(t)); }
TensorBase to_dtype(const TensorBase& t, ScalarType dtype) { return Tensor(t).to(dtype); }
TensorBase zeros(IntArrayRef sizes, ScalarType dtype) { return kiln::zeros(sizes, dtype); }
TensorBase as_strided(const TensorBase& t, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  return kiln::as_strided(Tensor(t), sizes, strides, offset);
}
void copy_(const TensorBase& dst, const TensorBase& src) { Tensor(dst).copy_(Tensor(src)); }
TensorBase sum_to(const TensorBase& t, IntArrayRef shape) { return kiln::sum_to(Tensor(t), shape); }

}  // namespace ops_seam

void Tensor::backward(const Tensor& gradient, bool retain_graph, bool create_graph) const {
  BackwardOptions options;
  options.retain_graph = retain_graph || create_graph;
  options.create_graph = create_graph;
  kiln::backward({*this}, {gradient}, options);
}

}  // namespace kiln
