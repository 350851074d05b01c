// Library kernels that a generated formula kernel offers its call to first: a pointwise entry's
// `library:` in schema/native_functions.yaml (or a derivative's in schema/derivatives.yaml, for its
// fused backward op) names one. They exist where torch computes the op with a library instead of
// its own loop, so that kiln gives torch's bits there. Each takes the generated kernel's
// arguments and returns the result, or returns an undefined tensor, computing nothing, where torch
// would not call the library; the formula's loop then runs as usual (and checks the arguments).
#pragma once

#include <string>

#include "runtime/core/tensor_base.h"

namespace kiln {
namespace cpu {

// gelu(approximate='none') of a contiguous float32 tensor of two or more elements, and its backward:
// oneDNN's eltwise_gelu_erf, as torch 1.13's gelu_out_cpu / gelu_backward_out_cpu (use_mkldnn).
TensorBase onednn_gelu(const TensorBase& self, const std::string& approximate, const TensorBase& out);
TensorBase onednn_gelu_backward(const TensorBase& grad, const TensorBase& self, const std::string& approximate);

}  // namespace cpu
}  // namespace kiln
