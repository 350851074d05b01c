// torch's backward functions, op for op, for ops whose gradient autodiff through kiln's composition
// would round differently: var/std/logsumexp (torch's var_backward, std_backward,
// logsumexp_backward), the regression losses, glu and batch_norm in evaluation mode. Written with
// differentiable ops, so second derivatives work. Included by the generated autograd files whose
// formulas call one (codegen/loader.py, TORCH_BACKWARD_HELPERS).
#pragma once

#include <optional>
#include <vector>

#include "generated/api/tensor.h"

namespace kiln {

// self of _var / _std / _logsumexp: torch's var_backward, std_backward and logsumexp_backward, op for
// op (their bits): (2 / (N - correction)) * grad * (self - mean), with grad / (2 std) masked to 0
// where std is 0 first for std, and grad * exp(self - result).
Tensor var_backward(const Tensor& grad, const Tensor& self, const std::optional<std::vector<int64_t>>& dim,
                    double correction, bool keepdim);
Tensor std_backward(const Tensor& result, const Tensor& grad, const Tensor& self,
                    const std::optional<std::vector<int64_t>>& dim, double correction, bool keepdim);
Tensor logsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dim, bool keepdim);
// self (and, with the two swapped, target) of mse_loss: torch's mse_loss_backward,
// (norm * (self - target)) * grad with norm = 2 / N for the mean (N the broadcast size) or 2, summed
// back to self's shape where target broadcast it.
Tensor mse_loss_backward(const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction);
// Likewise torch's smooth_l1_loss_backward and huber_loss_backward: (norm * deriv) * grad, deriv the
// slope of the loss at d = self - target (+-1 where |d| >= beta, else d / beta; +-delta where
// |d| >= delta, else d; the sign is -1 at 0), norm 1 / N for the mean or 1.
Tensor smooth_l1_loss_backward(const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction,
                               double beta);
Tensor huber_loss_backward(const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction,
                           double delta);
// self of glu: torch's glu_backward, [sigmoid(b) * grad, (((1 - sigmoid(b)) * sigmoid(b)) * a) * grad]
// for the halves a, b of self along dim.
Tensor glu_backward(const Tensor& grad, const Tensor& self, int64_t dim);
// [input, weight, bias] of _batch_norm_eval, as torch's batch_norm backward in evaluation mode:
// (dy * invstd) * w with invstd = 1 / sqrt(running_var + eps) in double (rounded to the parameters'
// dtype); the weight's sum((x - mean) dy) * invstd and the bias's sum(dy) per channel.
std::vector<Tensor> batch_norm_eval_backward(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                             const Tensor& running_mean, const Tensor& running_var, double eps);
}  // namespace kiln
