// Formula helpers of the nn ops' derivatives (convolution and pooling).
#include <vector>

#include "generated/api/kiln.h"
#include "runtime/autograd/formula_helpers.h"

namespace kiln {

Tensor conv_bias_backward(const Tensor& grad) {
  // (N, C, H, W) or unbatched (C, H, W): keep the channel dim.
  const std::vector<int64_t> dims = grad.dim() == 4 ? std::vector<int64_t>{0, 2, 3} : std::vector<int64_t>{1, 2};
  return kiln::sum(grad, IntArrayRef(dims));
}

Tensor max_pool_double_backward(const Tensor& grad, const Tensor& indices) {
  // grad has the input's shape, indices the output's; both end in one plane per (n, c).
  const int64_t nd = indices.dim();
  const int64_t plane_in = grad.sizes()[nd - 2] * grad.sizes()[nd - 1];
  const int64_t plane_out = indices.sizes()[nd - 2] * indices.sizes()[nd - 1];
  const int64_t planes = plane_out == 0 ? 0 : indices.numel() / plane_out;
  // Flat position of each index in grad: plane * (H * W) + index.
  const Tensor offsets = kiln::mul(kiln::arange(planes, ScalarType::Int64), plane_in).view({planes, 1});
  const Tensor flat = kiln::add(indices.reshape({planes, plane_out}), offsets).reshape({-1});
  return kiln::index_select(grad.reshape({-1}), 0, flat).view(indices.sizes());
}

Tensor adaptive_avg_pool_double_backward(const Tensor& grad, IntArrayRef grad_output_sizes) {
  const size_t nd = grad_output_sizes.size();
  return kiln::adaptive_avg_pool2d(grad, {grad_output_sizes[nd - 2], grad_output_sizes[nd - 1]});
}

}  // namespace kiln
