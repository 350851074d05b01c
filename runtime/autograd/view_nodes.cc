#include "runtime/autograd/view_nodes.h"

#include "runtime/autograd/ops_seam.h"

namespace kiln {

ViewGeometry view_geometry(const TensorBase& view, const TensorBase& base, const char* op_name) {
  KILN_CHECK_NOT_IMPLEMENTED(base.is_contiguous(), op_name,
                             "(): in-place modification of a view of a non-contiguous tensor that requires grad is "
                             "not supported; clone() the base first.");
  ViewGeometry g;
  g.sizes.assign(view.sizes().begin(), view.sizes().end());
  g.strides.assign(view.strides().begin(), view.strides().end());
  g.offset = view.storage_offset() - base.storage_offset();
  return g;
}

CopySlices::CopySlices(const TensorBase& base, ViewGeometry view, std::shared_ptr<Node> fn)
    : view_(std::move(view)), fn_(std::move(fn)) {
  add_next_edge(gradient_edge(base));
  for (size_t i = 1; i < fn_->next_edges().size(); ++i) add_next_edge(fn_->next_edges()[i]);
}

variable_list CopySlices::apply(variable_list&& grads) {
  variable_list out(num_outputs());
  const TensorBase& grad = grads[0];
  if (!grad.defined()) return out;
  // The base's gradient, with the modified region replaced by what flows back
  // through the in-place op. The view's geometry is the contiguous base's (view_geometry requires it),
  // so the copy is contiguous whatever layout grad has: a clone would keep the strides of a transposed
  // grad (`F.pad(x).t()`'s), and the slice below would then pick the wrong elements.
  TensorBase result = ops_seam::contiguous_copy(grad);
  TensorBase slice = ops_seam::as_strided(result, view_.sizes, view_.strides, view_.offset);
  variable_list fn_grads = fn_->apply({ops_seam::clone(slice)});
  if (fn_grads.size() > 0 && fn_grads[0].defined()) {
    ops_seam::copy_(slice, fn_grads[0]);
  } else {
    ops_seam::copy_(slice, ops_seam::zeros(view_.sizes, grad.dtype()));
  }
  out[0] = result;
  for (size_t i = 1; i < fn_grads.size() && i < out.size(); ++i) out[i] = fn_grads[i];
  return out;
}

AsStridedBackward::AsStridedBackward(const TensorBase& base, ViewGeometry view)
    : base_sizes_(base.sizes().begin(), base.sizes().end()), dtype_(base.dtype()), view_(std::move(view)) {
  add_next_edge(gradient_edge(base));
}

variable_list AsStridedBackward::apply(variable_list&& grads) {
  if (!grads[0].defined()) return {TensorBase()};
  TensorBase result = ops_seam::zeros(base_sizes_, dtype_);
  ops_seam::copy_(ops_seam::as_strided(result, view_.sizes, view_.strides, view_.offset), grads[0]);
  return {result};
}

}  // namespace kiln
