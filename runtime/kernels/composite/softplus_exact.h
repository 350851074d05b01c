// log(1 + exp(z)) as -log_softmax over (0, z)[0]: stable for any z, with the exact gradient
// sigmoid(z) everywhere (a relu(z) + log1p(exp(-|z|)) form has the right values, but both of
// its kinks give a zero gradient at z = 0).
#pragma once

#include "generated/api/log_softmax.h"
#include "generated/api/neg.h"
#include "generated/api/select.h"
#include "generated/api/stack.h"
#include "generated/api/zeros_like.h"

namespace kiln {
namespace composite_implicit {

inline Tensor softplus_exact(const Tensor& z) {
  return kiln::neg(kiln::select(kiln::log_softmax(kiln::stack({kiln::zeros_like(z), z}, -1), -1), -1, 0));
}

}  // namespace composite_implicit
}  // namespace kiln
