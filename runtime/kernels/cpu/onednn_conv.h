// conv2d's float32 computations by oneDNN, the library torch 1.13's CPU convolutions call (through
// ideep) wherever torch's use_mkldnn picks it. The same primitives on the same layouts give torch's
// bits: the output and both gradients (tests/python/test_onednn_conv.py). conv_ops.cc calls these
// and keeps im2col + GEMM for every other case.
#pragma once

#include "runtime/core/dtype.h"
#include "runtime/kernels/cpu/conv_geometry.h"

namespace kiln {
namespace cpu {

// torch 1.13's ConvParams::use_mkldnn for a non-transposed 2-D convolution: whether torch computes it
// with oneDNN (float32 only, with torch.backends.mkldnn.enabled; on one thread it keeps 1x1 kernels
// and single small images native).
bool onednn_conv_applies(const ConvGeometry& g, ScalarType dtype);

// Each returns false, computing nothing, where oneDNN has no primitive for the shape; the caller
// then computes it itself. All pointers are to contiguous (N, C, H, W) / (O, C/groups, KH, KW) data.
bool onednn_conv2d_forward(const ConvGeometry& g, const float* x, const float* w, const float* bias_or_null,
                           float* y);
bool onednn_conv2d_backward_data(const ConvGeometry& g, const float* grad_y, const float* w, float* grad_x);
// grad_bias_or_null: the bias gradient too, from the same primitive (torch's bits need its order).
bool onednn_conv2d_backward_weights(const ConvGeometry& g, const float* grad_y, const float* x, float* grad_w,
                                    float* grad_bias_or_null);

}  // namespace cpu
}  // namespace kiln
