#include "runtime/autograd/view_nodes.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "runtime/autograd/ops_seam.h"

namespace kiln {

namespace {

// The view's geometry inside a row-major copy of a dense, non-overlapping base that is laid out in
// another order (a transposed or channels_last base): the gradient buffers mirror the base row-major,
// so each view dim must step by fixed amounts along base dims (a slice, select, transpose, diagonal,
// unfold of the base). Empty when it cannot (an as_strided that wraps across a base dim's end).
std::optional<ViewGeometry> geometry_in_row_major(const TensorBase& view, const TensorBase& base) {
  const int64_t nd = base.dim();
  std::vector<int64_t> order;  // base dims of size >= 2, largest stride first
  for (int64_t d = 0; d < nd; ++d)
    if (base.sizes()[d] >= 2) order.push_back(d);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return base.strides()[a] > base.strides()[b]; });
  int64_t expected = 1;  // dense and non-overlapping: the sorted strides are the running products
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (base.strides()[*it] != expected) return std::nullopt;
    expected *= base.sizes()[*it];
  }
  std::vector<int64_t> row_major(nd, 1);
  for (int64_t d = nd - 2; d >= 0; --d) row_major[d] = row_major[d + 1] * base.sizes()[d + 1];
  // The base index of the view's first element.
  int64_t rest = view.storage_offset() - base.storage_offset();
  std::vector<int64_t> reach(nd, 0);  // the largest index the view reaches along each base dim
  ViewGeometry g;
  for (int64_t d : order) {
    reach[d] = rest / base.strides()[d];
    rest %= base.strides()[d];
    g.offset += reach[d] * row_major[d];
  }
  if (rest != 0) return std::nullopt;
  g.sizes.assign(view.sizes().begin(), view.sizes().end());
  for (int64_t k = 0; k < view.dim(); ++k) {
    const int64_t vs = view.strides()[k], n = view.sizes()[k];
    if (n < 2) {
      g.strides.push_back(1);
      continue;
    }
    // The step along each base dim (the stride in the base's mixed radix: a diagonal steps along
    // two); valid when no index passes its dim's size (checked below), so nothing carries over.
    if (vs < 0) return std::nullopt;
    int64_t left = vs, stride = 0;
    for (int64_t d : order) {
      const int64_t step = left / base.strides()[d];
      left %= base.strides()[d];
      reach[d] += step * (n - 1);
      stride += step * row_major[d];
    }
    if (left != 0) return std::nullopt;
    g.strides.push_back(stride);
  }
  for (int64_t d = 0; d < nd; ++d)
    if (reach[d] >= std::max<int64_t>(base.sizes()[d], 1)) return std::nullopt;  // it would wrap
  return g;
}

}  // namespace

ViewGeometry view_geometry(const TensorBase& view, const TensorBase& base, const char* op_name) {
  if (!base.is_contiguous()) {
    std::optional<ViewGeometry> g = geometry_in_row_major(view, base);
    if (view.numel() == 0) {  // nothing to place: any geometry inside the buffer
      g = ViewGeometry();
      g->sizes.assign(view.sizes().begin(), view.sizes().end());
      g->strides.assign(view.dim(), 1);
    }
    KILN_CHECK_NOT_IMPLEMENTED(g.has_value(), op_name,
                               "(): in-place modification of this view of a non-contiguous tensor that requires grad "
                               "is not supported; clone() the base first.");
    return *g;
  }
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
