// The casts of torch's CPU autocast policies, used by the generated `<op>_autocast` kernels
// (schema key `autocast:`): only floating tensors other than float64 are cast, as in torch.
//   lower_precision: to the autocast dtype (bfloat16)     mm, addmm, bmm, matmul, conv2d
//   fp32:            to float32                            prod, losses
//   promote:         all to the widest of their dtypes     cat, stack
#pragma once

#include <vector>

#include "generated/api/tensor.h"

namespace kiln {
namespace autocast {

Tensor to_lower_precision(const Tensor& t);
std::vector<Tensor> to_lower_precision(const std::vector<Tensor>& ts);
Tensor to_fp32(const Tensor& t);
std::vector<Tensor> to_fp32(const std::vector<Tensor>& ts);
// promote: the widest dtype of the eligible tensors (starting from the autocast dtype), then each cast.
ScalarType promote_type(const std::vector<const Tensor*>& tensors);
ScalarType promote_type(const std::vector<Tensor>& tensors);
Tensor to_type(const Tensor& t, ScalarType dtype);
std::vector<Tensor> to_type(const std::vector<Tensor>& ts, ScalarType dtype);

}  // namespace autocast
}  // namespace kiln
