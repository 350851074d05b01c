// Formula helpers of the running-reduction derivatives.
#include "generated/api/kiln.h"
#include "runtime/autograd/formula_helpers.h"

namespace kiln {

// d(cumsum x)_k / dx_i = [i <= k], so grad_i = sum_{k >= i} grad_k = total - cumsum(grad)_i + grad_i.
Tensor cumsum_backward(const Tensor& grad, int64_t dim) {
  if (grad.dim() == 0 || grad.numel() == 0) return grad;
  return kiln::add(kiln::sub(kiln::sum(grad, IntArrayRef({dim}), /*keepdim=*/true), kiln::cumsum(grad, dim)), grad);
}

}  // namespace kiln
