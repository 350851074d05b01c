// The shape of one 2-D convolution, as conv2d and its gradients see it (conv_ops.cc computes and
// checks it; onednn_conv.cc hands it to oneDNN).
#pragma once

#include <cstdint>

#include "runtime/core/array_ref.h"

namespace kiln {
namespace cpu {

struct ConvGeometry {
  bool batched;
  int64_t batch, channels, height, width;             // input
  int64_t out_channels, kernel_h, kernel_w, groups;   // weight (O, C/groups, KH, KW)
  int64_t stride_h, stride_w, pad_h, pad_w, dil_h, dil_w;
  int64_t out_h, out_w;

  int64_t group_in() const { return channels / groups; }
  int64_t group_out() const { return out_channels / groups; }
  int64_t rows() const { return group_in() * kernel_h * kernel_w; }  // rows of cols
  int64_t plane_out() const { return out_h * out_w; }
  DimVector output_shape() const {
    if (batched) return {batch, out_channels, out_h, out_w};
    return {out_channels, out_h, out_w};
  }
};

}  // namespace cpu
}  // namespace kiln
