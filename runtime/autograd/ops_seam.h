// The seam through which the autograd engine and its hand-written nodes (engine, node,
// saved_variable, accumulate_grad, view_nodes, tensor_hooks) call generated operators: none of
// them includes a generated header, only ops_seam.cc does. (Formula helpers and composite
// kernels sit above the generated API and include it directly; docs/ARCHITECTURE.md, "Layers".)
#pragma once

#include "runtime/core/tensor_base.h"

namespace kiln {
namespace ops_seam {

TensorBase add(const TensorBase& a, const TensorBase& b);
void add_(const TensorBase& self, const TensorBase& other);
TensorBase clone(const TensorBase& t);
// A contiguous tensor of its own (copied even when `t` is already contiguous); differentiable.
TensorBase contiguous_copy(const TensorBase& t);
TensorBase detach(const TensorBase& t);
TensorBase ones_like(const TensorBase& t);
TensorBase to_dtype(const TensorBase& t, ScalarType dtype);
TensorBase zeros(IntArrayRef sizes, ScalarType dtype);
TensorBase as_strided(const TensorBase& t, IntArrayRef sizes, IntArrayRef strides, int64_t offset);
void copy_(const TensorBase& dst, const TensorBase& src);
// Sums `t` over broadcast dims so that it has `shape` (undoes expand/broadcast).
TensorBase sum_to(const TensorBase& t, IntArrayRef shape);

}  // namespace ops_seam
}  // namespace kiln
