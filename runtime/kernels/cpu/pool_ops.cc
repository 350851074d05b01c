// 2-D pooling: max_pool2d (with the argmax indices its gradient needs), avg_pool2d and
// adaptive_avg_pool2d, each with its backward. Inputs are (N, C, H, W) or (C, H, W); every
// (n, c) plane is pooled independently, one plane per thread.
#include <algorithm>
#include <cmath>
#include <limits>

#include "generated/kernels/_adaptive_avg_pool2d.h"
#include "generated/kernels/adaptive_avg_pool2d_backward.h"
#include "generated/kernels/avg_pool2d.h"
#include "generated/kernels/avg_pool2d_backward.h"
#include "generated/kernels/max_pool2d_with_indices.h"
#include "generated/kernels/max_pool2d_with_indices_backward.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/tensor_memory.h"

namespace kiln {
namespace cpu {
namespace {

struct Pool2d {
  int64_t planes, height, width, out_h, out_w;
  int64_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w;
  DimVector out_shape;
};

std::pair<int64_t, int64_t> pair_arg(IntArrayRef v, const char* what, const char* op) {
  KILN_CHECK(v.size() == 1 || v.size() == 2, op, "(): ", what,
             " must either be a single int, or a tuple of two ints, got ", shape_str(v));
  return {v[0], v[v.size() - 1]};
}

// torch's pooling_output_shape: floor (or ceil) of the window count, where with ceil_mode the
// last window must start inside the input or its left padding.
int64_t pooled_size(int64_t in, int64_t kernel, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode) {
  const int64_t num = in + 2 * pad - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// `nonempty_dims`: the trailing dims that must not be empty (torch's adaptive_avg_pool2d allows no channels).
void check_pool_input(const TensorBase& self, const char* op, int64_t nonempty_dims = 3) {
  KILN_CHECK(self.dim() == 3 || self.dim() == 4, op,
             "(): non-empty 3D or 4D (batch mode) tensor expected for input, got a ", self.dim(),
             "-D tensor of size ", shape_str(self.sizes()));
  for (int64_t d = self.dim() - nonempty_dims; d < self.dim(); ++d)
    KILN_CHECK(self.sizes()[d] > 0, op, "(): Expected input to have non-zero size for non-batch dimensions, but input has sizes ",
               shape_str(self.sizes()), " with dimension ", d, " being empty");
  KILN_CHECK(self.is_floating_point(), op, "(): \"", op, "\" not implemented for '", scalar_type_name(self.dtype()),
             "' (expected a floating point tensor)");
}

// Output shape: the input's leading dims, then (out_h, out_w).
DimVector pooled_shape(const TensorBase& self, int64_t out_h, int64_t out_w) {
  DimVector shape(self.sizes().begin(), self.sizes().end() - 2);
  shape.push_back(out_h);
  shape.push_back(out_w);
  return shape;
}

Pool2d pool_geometry(const TensorBase& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                     IntArrayRef dilation, bool ceil_mode, const char* op) {
  check_pool_input(self, op);
  Pool2d p{};
  std::tie(p.kernel_h, p.kernel_w) = pair_arg(kernel_size, "kernel_size", op);
  std::tie(p.stride_h, p.stride_w) = stride.empty() ? std::make_pair(p.kernel_h, p.kernel_w)
                                                    : pair_arg(stride, "stride", op);
  std::tie(p.pad_h, p.pad_w) = pair_arg(padding, "padding", op);
  std::tie(p.dil_h, p.dil_w) = pair_arg(dilation, "dilation", op);
  KILN_CHECK(p.kernel_h > 0 && p.kernel_w > 0, op, "(): kernel size should be greater than zero, but got kH: ",
             p.kernel_h, " kW: ", p.kernel_w);
  KILN_CHECK(p.stride_h > 0 && p.stride_w > 0, op, "(): stride should be greater than zero, but got dH: ",
             p.stride_h, " dW: ", p.stride_w);
  KILN_CHECK(p.dil_h > 0 && p.dil_w > 0, op, "(): dilation should be greater than zero, but got dilationH: ",
             p.dil_h, " dilationW: ", p.dil_w);
  KILN_CHECK(p.pad_h >= 0 && p.pad_w >= 0 && p.pad_h <= ((p.kernel_h - 1) * p.dil_h + 1) / 2 &&
                 p.pad_w <= ((p.kernel_w - 1) * p.dil_w + 1) / 2,
             op, "(): pad should be at most half of effective kernel size, but got pad=", shape_str(padding),
             ", kernel_size=", shape_str(kernel_size), " and dilation=", shape_str(dilation));
  p.height = self.sizes()[self.dim() - 2];
  p.width = self.sizes()[self.dim() - 1];
  p.out_h = pooled_size(p.height, p.kernel_h, p.pad_h, p.stride_h, p.dil_h, ceil_mode);
  p.out_w = pooled_size(p.width, p.kernel_w, p.pad_w, p.stride_w, p.dil_w, ceil_mode);
  KILN_CHECK(p.out_h > 0 && p.out_w > 0, op, "(): Given input size: ", shape_str(self.sizes()),
             ". Calculated output size: (", p.out_h, "x", p.out_w, "). Output size is too small");
  p.planes = self.numel() / (p.height * p.width);
  p.out_shape = pooled_shape(self, p.out_h, p.out_w);
  return p;
}

void check_grad(const TensorBase& grad_output, const TensorBase& self, IntArrayRef shape, const char* op) {
  KILN_CHECK(grad_output.sizes() == shape, op, "(): expected grad_output of shape ", shape_str(shape), ", got ",
             shape_str(grad_output.sizes()));
  KILN_CHECK(grad_output.dtype() == self.dtype(), op, "(): expected grad_output of dtype ",
             scalar_type_name(self.dtype()), ", got ", scalar_type_name(grad_output.dtype()));
}

template <typename F>
void for_each_plane(int64_t planes, int64_t work, F f) {
#pragma omp parallel for if (work > 32768)
  for (int64_t p = 0; p < planes; ++p) f(p);
}

// avg_pool2d's window of output (oh, ow): its clipped bounds and its divisor (torch's rules).
struct AvgWindow {
  int64_t h0, h1, w0, w1, divisor;
};

AvgWindow avg_window(const Pool2d& p, int64_t oh, int64_t ow, bool count_include_pad,
                     const std::optional<int64_t>& divisor_override) {
  int64_t h0 = oh * p.stride_h - p.pad_h, w0 = ow * p.stride_w - p.pad_w;
  int64_t h1 = std::min(h0 + p.kernel_h, p.height + p.pad_h), w1 = std::min(w0 + p.kernel_w, p.width + p.pad_w);
  const int64_t padded_count = (h1 - h0) * (w1 - w0);
  h0 = std::max<int64_t>(h0, 0);
  w0 = std::max<int64_t>(w0, 0);
  h1 = std::min(h1, p.height);
  w1 = std::min(w1, p.width);
  const int64_t divisor = divisor_override ? *divisor_override
                                           : count_include_pad ? padded_count : (h1 - h0) * (w1 - w0);
  return {h0, h1, w0, w1, divisor};
}

Pool2d avg_geometry(const TensorBase& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                    bool ceil_mode, const std::optional<int64_t>& divisor_override, const char* op) {
  KILN_CHECK(!divisor_override || *divisor_override != 0, op, "(): divisor must be not zero");
  const int64_t one[] = {1};
  check_pool_input(self, op);
  const auto [kh, kw] = pair_arg(kernel_size, "kernel_size", op);
  const auto [ph, pw] = pair_arg(padding, "padding", op);
  KILN_CHECK(ph <= kh / 2 && pw <= kw / 2, op,
             "(): pad should be smaller than or equal to half of kernel size, but got padW = ", pw, ", padH = ", ph,
             ", kW = ", kw, ", kH = ", kh);
  return pool_geometry(self, kernel_size, stride, padding, IntArrayRef(one, 1), ceil_mode, op);
}

// Adaptive windows: output o of `out` covers input [floor(o * in / out), ceil((o + 1) * in / out)).
inline int64_t adaptive_start(int64_t o, int64_t out, int64_t in) { return (o * in) / out; }
inline int64_t adaptive_end(int64_t o, int64_t out, int64_t in) { return ((o + 1) * in + out - 1) / out; }

}  // namespace

std::tuple<TensorBase, TensorBase> max_pool2d_with_indices(const TensorBase& self, IntArrayRef kernel_size,
                                                           IntArrayRef stride, IntArrayRef padding,
                                                           IntArrayRef dilation, bool ceil_mode) {
  const Pool2d p = pool_geometry(self, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d");
  if (is_reduced_floating_type(self.dtype())) {  // float16/bfloat16: computed in float32
    auto [values, indices] = max_pool2d_with_indices(to_opmath(self), kernel_size, stride, padding, dilation, ceil_mode);
    return {cast_to(values, self.dtype()), indices};
  }
  TensorBase out = empty_cpu(p.out_shape, self.dtype());
  TensorBase indices = empty_cpu(p.out_shape, ScalarType::Int64);
  const TensorBase x = contiguous_cpu(self);
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "max_pool2d", [&] {
    const scalar_t* in = static_cast<const scalar_t*>(x.data_ptr());
    scalar_t* o = static_cast<scalar_t*>(out.data_ptr());
    int64_t* idx = static_cast<int64_t*>(indices.data_ptr());
    // Every window inside the input (no padding, no window cut by ceil_mode): no bounds checks, and
    // each tap is taken across a whole output row with a select instead of a data-dependent branch.
    const bool interior = p.pad_h == 0 && p.pad_w == 0 &&
                          (p.out_h - 1) * p.stride_h + (p.kernel_h - 1) * p.dil_h < p.height &&
                          (p.out_w - 1) * p.stride_w + (p.kernel_w - 1) * p.dil_w < p.width;
    if (interior) {
      for_each_plane(p.planes, out.numel() * p.kernel_h * p.kernel_w, [&](int64_t plane) {
        const scalar_t* src = in + plane * p.height * p.width;
        for (int64_t oh = 0; oh < p.out_h; ++oh) {
          scalar_t* best = o + (plane * p.out_h + oh) * p.out_w;
          int64_t* best_at = idx + (plane * p.out_h + oh) * p.out_w;
          for (int64_t kh = 0; kh < p.kernel_h; ++kh) {
            const int64_t ih = oh * p.stride_h + kh * p.dil_h;
            for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
              const scalar_t* row = src + ih * p.width + kw * p.dil_w;
              const int64_t at0 = ih * p.width + kw * p.dil_w;
              if (kh == 0 && kw == 0) {
                for (int64_t ow = 0; ow < p.out_w; ++ow) {
                  best[ow] = row[ow * p.stride_w];
                  best_at[ow] = at0 + ow * p.stride_w;
                }
                continue;
              }
              // As below: greater or NaN; bitwise, without branches (v != v: NaN).
              _Pragma("omp simd")  // (a #pragma cannot stand inside the dispatch macro's argument)
              for (int64_t ow = 0; ow < p.out_w; ++ow) {
                const scalar_t v = row[ow * p.stride_w], b = best[ow];
                const bool take = (v > b) | (v != v);
                best[ow] = take ? v : b;
                best_at[ow] = take ? at0 + ow * p.stride_w : best_at[ow];
              }
            }
          }
        }
      });
      return;
    }
    for_each_plane(p.planes, out.numel() * p.kernel_h * p.kernel_w, [&](int64_t plane) {
      const scalar_t* src = in + plane * p.height * p.width;
      for (int64_t oh = 0; oh < p.out_h; ++oh)
        for (int64_t ow = 0; ow < p.out_w; ++ow) {
          // A tap replaces the best when it is greater or NaN, so the last NaN wins (torch's
          // cpu_max_pool); a window entirely in the padding gives -inf at index 0. Selects, not an
          // `if`: the data-dependent branch mispredicted about every other tap.
          scalar_t best = -std::numeric_limits<scalar_t>::infinity();
          int64_t best_at = -1;
          for (int64_t kh = 0; kh < p.kernel_h; ++kh) {
            const int64_t ih = oh * p.stride_h - p.pad_h + kh * p.dil_h;
            if (ih < 0 || ih >= p.height) continue;
            for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
              const int64_t iw = ow * p.stride_w - p.pad_w + kw * p.dil_w;
              if (iw < 0 || iw >= p.width) continue;
              const scalar_t v = src[ih * p.width + iw];
              const bool take = best_at < 0 || v > best || std::isnan(v);
              best = take ? v : best;
              best_at = take ? ih * p.width + iw : best_at;
            }
          }
          const int64_t at = (plane * p.out_h + oh) * p.out_w + ow;
          o[at] = best;
          idx[at] = std::max<int64_t>(best_at, 0);
        }
    });
  });
  return {out, indices};
}

TensorBase max_pool2d_with_indices_backward(const TensorBase& grad_output, const TensorBase& self,
                                            IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                                            IntArrayRef dilation, bool ceil_mode, const TensorBase& indices) {
  const char* op = "max_pool2d_with_indices_backward";
  const Pool2d p = pool_geometry(self, kernel_size, stride, padding, dilation, ceil_mode, op);
  check_grad(grad_output, self, p.out_shape, op);
  KILN_CHECK(indices.sizes() == IntArrayRef(p.out_shape) && indices.dtype() == ScalarType::Int64, op,
             "(): expected int64 indices of shape ", shape_str(p.out_shape), ", got ",
             scalar_type_name(indices.dtype()), " of shape ", shape_str(indices.sizes()));
  if (is_reduced_floating_type(self.dtype()))
    return cast_to(max_pool2d_with_indices_backward(to_opmath(grad_output), to_opmath(self), kernel_size, stride,
                                                    padding, dilation, ceil_mode, indices),
                   self.dtype());
  TensorBase grad_input = zeros_cpu(self.sizes(), self.dtype());
  const TensorBase g = contiguous_cpu(grad_output), ix = contiguous_cpu(indices);
  const int64_t plane_in = p.height * p.width, plane_out = p.out_h * p.out_w;
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), op, [&] {
    const scalar_t* go = static_cast<const scalar_t*>(g.data_ptr());
    const int64_t* at = static_cast<const int64_t*>(ix.data_ptr());
    scalar_t* gi = static_cast<scalar_t*>(grad_input.data_ptr());
    // Validate first, so a bad index raises without a half-written result.
    for (int64_t i = 0; i < ix.numel(); ++i)
      KILN_CHECK_INDEX(at[i] >= 0 && at[i] < plane_in, op, "(): index ", at[i], " is out of bounds for a plane of ",
                       plane_in, " elements");
    for_each_plane(p.planes, ix.numel(), [&](int64_t plane) {
      for (int64_t k = 0; k < plane_out; ++k)
        gi[plane * plane_in + at[plane * plane_out + k]] += go[plane * plane_out + k];
    });
  });
  return grad_input;
}

TensorBase avg_pool2d(const TensorBase& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                      bool ceil_mode, bool count_include_pad, const std::optional<int64_t>& divisor_override) {
  const Pool2d p = avg_geometry(self, kernel_size, stride, padding, ceil_mode, divisor_override, "avg_pool2d");
  if (is_reduced_floating_type(self.dtype()))
    return cast_to(avg_pool2d(to_opmath(self), kernel_size, stride, padding, ceil_mode, count_include_pad,
                              divisor_override),
                   self.dtype());
  TensorBase out = empty_cpu(p.out_shape, self.dtype());
  const TensorBase x = contiguous_cpu(self);
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "avg_pool2d", [&] {
    const scalar_t* in = static_cast<const scalar_t*>(x.data_ptr());
    scalar_t* o = static_cast<scalar_t*>(out.data_ptr());
    for_each_plane(p.planes, out.numel() * p.kernel_h * p.kernel_w, [&](int64_t plane) {
      const scalar_t* src = in + plane * p.height * p.width;
      for (int64_t oh = 0; oh < p.out_h; ++oh)
        for (int64_t ow = 0; ow < p.out_w; ++ow) {
          const AvgWindow w = avg_window(p, oh, ow, count_include_pad, divisor_override);
          scalar_t sum = 0;  // torch's cpu_avg_pool: the window in order, in the input's type
          for (int64_t ih = w.h0; ih < w.h1; ++ih)
            for (int64_t iw = w.w0; iw < w.w1; ++iw) sum += src[ih * p.width + iw];
          const bool empty = w.h0 >= w.h1 || w.w0 >= w.w1;
          o[(plane * p.out_h + oh) * p.out_w + ow] = empty ? scalar_t(0) : sum / static_cast<scalar_t>(w.divisor);
        }
    });
  });
  return out;
}

TensorBase avg_pool2d_backward(const TensorBase& grad_output, const TensorBase& self, IntArrayRef kernel_size,
                               IntArrayRef stride, IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                               const std::optional<int64_t>& divisor_override) {
  const char* op = "avg_pool2d_backward";
  const Pool2d p = avg_geometry(self, kernel_size, stride, padding, ceil_mode, divisor_override, op);
  check_grad(grad_output, self, p.out_shape, op);
  if (is_reduced_floating_type(self.dtype()))
    return cast_to(avg_pool2d_backward(to_opmath(grad_output), to_opmath(self), kernel_size, stride, padding,
                                       ceil_mode, count_include_pad, divisor_override),
                   self.dtype());
  TensorBase grad_input = zeros_cpu(self.sizes(), self.dtype());
  const TensorBase g = contiguous_cpu(grad_output);
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), op, [&] {
    const scalar_t* go = static_cast<const scalar_t*>(g.data_ptr());
    scalar_t* gi = static_cast<scalar_t*>(grad_input.data_ptr());
    for_each_plane(p.planes, g.numel() * p.kernel_h * p.kernel_w, [&](int64_t plane) {
      scalar_t* dst = gi + plane * p.height * p.width;
      for (int64_t oh = 0; oh < p.out_h; ++oh)
        for (int64_t ow = 0; ow < p.out_w; ++ow) {
          const AvgWindow w = avg_window(p, oh, ow, count_include_pad, divisor_override);
          const scalar_t share = go[(plane * p.out_h + oh) * p.out_w + ow] / static_cast<scalar_t>(w.divisor);
          for (int64_t ih = w.h0; ih < w.h1; ++ih)
            for (int64_t iw = w.w0; iw < w.w1; ++iw) dst[ih * p.width + iw] += share;
        }
    });
  });
  return grad_input;
}

TensorBase _adaptive_avg_pool2d(const TensorBase& self, IntArrayRef output_size) {
  const char* op = "adaptive_avg_pool2d";
  // an int is expanded by the binding; a list must have two entries (torch's check)
  KILN_CHECK(output_size.size() == 2, op, "(): output_size must be 2, got ", shape_str(output_size));
  const int64_t out_h = output_size[0], out_w = output_size[1];
  KILN_CHECK(out_h >= 0 && out_w >= 0, op, "(): elements of output_size must be greater than or equal to 0 but received ",
             shape_str(output_size));
  check_pool_input(self, op, 2);
  if (is_reduced_floating_type(self.dtype()))
    return cast_to(_adaptive_avg_pool2d(to_opmath(self), output_size), self.dtype());
  const int64_t H = self.sizes()[self.dim() - 2], W = self.sizes()[self.dim() - 1];
  TensorBase out = empty_cpu(pooled_shape(self, out_h, out_w), self.dtype());
  if (out.numel() == 0) return out;
  const int64_t planes = self.numel() / (H * W);
  const TensorBase x = contiguous_cpu(self);
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), op, [&] {
    const scalar_t* in = static_cast<const scalar_t*>(x.data_ptr());
    scalar_t* o = static_cast<scalar_t*>(out.data_ptr());
    for_each_plane(planes, self.numel(), [&](int64_t plane) {
      const scalar_t* src = in + plane * H * W;
      for (int64_t oh = 0; oh < out_h; ++oh) {
        const int64_t h0 = adaptive_start(oh, out_h, H), h1 = adaptive_end(oh, out_h, H);
        for (int64_t ow = 0; ow < out_w; ++ow) {
          const int64_t w0 = adaptive_start(ow, out_w, W), w1 = adaptive_end(ow, out_w, W);
          scalar_t sum = 0;  // torch's cpu_adaptive_avg_pool: in order, in the input's type, / kh / kw
          for (int64_t ih = h0; ih < h1; ++ih)
            for (int64_t iw = w0; iw < w1; ++iw) sum += src[ih * W + iw];
          o[(plane * out_h + oh) * out_w + ow] = sum / static_cast<scalar_t>(h1 - h0) / static_cast<scalar_t>(w1 - w0);
        }
      }
    });
  });
  return out;
}

TensorBase adaptive_avg_pool2d_backward(const TensorBase& grad_output, const TensorBase& self) {
  const char* op = "adaptive_avg_pool2d_backward";
  check_pool_input(self, op, 2);
  KILN_CHECK(grad_output.dim() == self.dim(), op, "(): expected grad_output of ", self.dim(), " dims, got ",
             shape_str(grad_output.sizes()));
  const int64_t nd = self.dim();
  const int64_t out_h = grad_output.sizes()[nd - 2], out_w = grad_output.sizes()[nd - 1];
  check_grad(grad_output, self, pooled_shape(self, out_h, out_w), op);
  // torch refuses the gradient of an empty output (the forward allows it)
  for (int64_t d = 1; d < nd; ++d)
    KILN_CHECK(grad_output.sizes()[d] > 0, op,
               "(): Expected grad_output to have non-zero size for non-batch dimensions, but grad_output has sizes ",
               shape_str(grad_output.sizes()), " with dimension ", d, " being empty");
  if (is_reduced_floating_type(self.dtype()))
    return cast_to(adaptive_avg_pool2d_backward(to_opmath(grad_output), to_opmath(self)), self.dtype());
  TensorBase grad_input = zeros_cpu(self.sizes(), self.dtype());
  if (grad_output.numel() == 0) return grad_input;
  const int64_t H = self.sizes()[nd - 2], W = self.sizes()[nd - 1], planes = self.numel() / (H * W);
  const TensorBase g = contiguous_cpu(grad_output);
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), op, [&] {
    const scalar_t* go = static_cast<const scalar_t*>(g.data_ptr());
    scalar_t* gi = static_cast<scalar_t*>(grad_input.data_ptr());
    for_each_plane(planes, self.numel(), [&](int64_t plane) {
      scalar_t* dst = gi + plane * H * W;
      for (int64_t oh = 0; oh < out_h; ++oh) {
        const int64_t h0 = adaptive_start(oh, out_h, H), h1 = adaptive_end(oh, out_h, H);
        for (int64_t ow = 0; ow < out_w; ++ow) {
          const int64_t w0 = adaptive_start(ow, out_w, W), w1 = adaptive_end(ow, out_w, W);
          const scalar_t share =
              go[(plane * out_h + oh) * out_w + ow] / static_cast<scalar_t>(h1 - h0) / static_cast<scalar_t>(w1 - w0);
          for (int64_t ih = h0; ih < h1; ++ih)
            for (int64_t iw = w0; iw < w1; ++iw) dst[ih * W + iw] += share;
        }
      }
    });
  });
  return grad_input;
}

}  // namespace cpu
}  // namespace kiln
