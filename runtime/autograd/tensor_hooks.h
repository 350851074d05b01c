// Tensor.register_hook and Tensor.retain_grad.
#pragma once

#include "runtime/core/autograd_meta.h"

namespace kiln {

// Runs `hook` on the gradient of `t` during backward (it may return a replacement).
void register_hook(const TensorBase& t, GradHook hook);
// Keeps the gradient of a non-leaf in its .grad (leaves always keep theirs).
void retain_grad(const TensorBase& t);

}  // namespace kiln
