// conv2d and its two gradients (w.r.t. input and weight): float32 by oneDNN where torch uses it
// (onednn_conv.h), everything else by im2col + GEMM.
//
// A chunk of images of one group is unfolded into a column matrix cols (Cg*KH*KW rows,
// images*OH*OW columns; chunks keep it under kColsBudget elements), and each image's columns meet
// the group's weight (Og x Cg*KH*KW) in a GEMM of their own, as torch's native kernels (slow_conv2d)
// call theirs: OpenBLAS picks its kernel, and with it the rounding, by the matrices' sizes.
#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "generated/kernels/_conv2d_backward_weight_bias.h"
#include "generated/kernels/_conv2d_native.h"
#include "generated/kernels/conv2d.h"
#include "generated/kernels/conv2d_backward_input.h"
#include "generated/kernels/conv2d_backward_weight.h"
#include "generated/kernels/sum.h"
#include "runtime/kernels/cpu/blas.h"
#include "runtime/kernels/cpu/conv_geometry.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/onednn_conv.h"
#include "runtime/kernels/tensor_memory.h"

namespace kiln {
namespace cpu {
namespace {

constexpr int64_t kColsBudget = int64_t{1} << 22;  // 4M elements: 16 MB of float32

// A pair parameter given as one value ([3] means [3, 3]) or two.
std::pair<int64_t, int64_t> pair_param(IntArrayRef v, const char* what, const char* op) {
  KILN_CHECK(v.size() == 1 || v.size() == 2, op, "(): expected ", what,
             " to be a single integer value or a list of 2 values to match the convolution dimensions, but got ",
             what, "=", shape_str(v));
  return {v[0], v[v.size() - 1]};
}

ConvGeometry conv_geometry(IntArrayRef input, IntArrayRef weight, IntArrayRef stride, IntArrayRef padding,
                           IntArrayRef dilation, int64_t groups, const char* op) {
  KILN_CHECK(input.size() == 3 || input.size() == 4, op,
             "(): Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: ",
             shape_str(input));
  KILN_CHECK(weight.size() == 4, op, "(): Expected 4-dimensional weight for ", input.size(),
             "-dimensional input ", shape_str(input), ", but got weight of size ", shape_str(weight));
  ConvGeometry g{};
  g.batched = input.size() == 4;
  const size_t c = g.batched ? 1 : 0;
  g.batch = g.batched ? input[0] : 1;
  g.channels = input[c];
  g.height = input[c + 1];
  g.width = input[c + 2];
  g.out_channels = weight[0];
  g.kernel_h = weight[2];
  g.kernel_w = weight[3];
  g.groups = groups;
  std::tie(g.stride_h, g.stride_w) = pair_param(stride, "stride", op);
  std::tie(g.pad_h, g.pad_w) = pair_param(padding, "padding", op);
  std::tie(g.dil_h, g.dil_w) = pair_param(dilation, "dilation", op);
  KILN_CHECK(g.stride_h > 0 && g.stride_w > 0, op, "(): non-positive stride is not supported, got stride=",
             shape_str(stride));
  KILN_CHECK(g.pad_h >= 0 && g.pad_w >= 0, op, "(): negative padding is not supported, got padding=",
             shape_str(padding));
  KILN_CHECK(g.dil_h > 0 && g.dil_w > 0, op, "(): dilation should be greater than zero, got dilation=",
             shape_str(dilation));
  KILN_CHECK(groups > 0, op, "(): non-positive groups is not supported, got groups=", groups);
  KILN_CHECK(g.out_channels % groups == 0, op, "(): Given groups=", groups,
             ", expected weight to be divisible by ", groups, " at dimension 0, but got weight of size ",
             shape_str(weight), " instead");
  KILN_CHECK(g.channels == weight[1] * groups, op, "(): Given groups=", groups, ", weight of size ",
             shape_str(weight), ", expected input", shape_str(input), " to have ", weight[1] * groups,
             " channels, but got ", g.channels, " channels instead");
  const int64_t padded_h = g.height + 2 * g.pad_h, padded_w = g.width + 2 * g.pad_w;
  const int64_t eff_h = g.dil_h * (g.kernel_h - 1) + 1, eff_w = g.dil_w * (g.kernel_w - 1) + 1;
  KILN_CHECK(padded_h >= eff_h && padded_w >= eff_w, op, "(): Calculated padded input size per channel: (",
             padded_h, " x ", padded_w, "). Kernel size: (", eff_h, " x ", eff_w,
             "). Kernel size can't be greater than actual input size");
  g.out_h = (padded_h - eff_h) / g.stride_h + 1;
  g.out_w = (padded_w - eff_w) / g.stride_w + 1;
  return g;
}

void check_floating_same(const TensorBase& a, const char* a_name, const TensorBase& b, const char* b_name,
                         const char* op) {
  KILN_CHECK(a.is_floating_point(), op, "(): expected a floating point ", a_name, ", got ",
             scalar_type_name(a.dtype()));
  KILN_CHECK(a.dtype() == b.dtype(), op, "(): ", a_name, " type (", scalar_type_name(a.dtype()), ") and ", b_name,
             " type (", scalar_type_name(b.dtype()), ") should be the same");
}

// Calls f(first_image, images) for chunks of the batch whose cols fit the budget.
template <typename F>
void for_each_chunk(const ConvGeometry& g, F f) {
  const int64_t per_image = std::max<int64_t>(g.rows() * g.plane_out(), 1);
  const int64_t chunk = std::max<int64_t>(1, std::min(g.batch, kColsBudget / per_image));
  for (int64_t n0 = 0; n0 < g.batch; n0 += chunk) f(n0, std::min(chunk, g.batch - n0));
}

// Calls f(n0, nb, width, group, cols, m) for every chunk of images and every group, with
// scratch buffers for the chunk: cols (rows() x width) and m (group_out() x width), where
// width = nb * OH * OW.
// The buffers come from the caching allocator, not zeroed: every element is written before it is
// read (im2col / the GEMM with beta 0 / gather_group), and a fresh 16 MB std::vector cost a memset
// and page faults per call (a tenth of a small-image convolution's time).
template <typename T, typename F>
void for_each_group_chunk(const ConvGeometry& g, ScalarType dtype, F f) {
  for_each_chunk(g, [&](int64_t n0, int64_t nb) {
    const int64_t width = nb * g.plane_out();
    const TensorBase cols = empty_cpu({g.rows() * width}, dtype), m = empty_cpu({g.group_out() * width}, dtype);
    for (int64_t group = 0; group < g.groups; ++group)
      f(n0, nb, width, group, static_cast<T*>(cols.data_ptr()), static_cast<T*>(m.data_ptr()));
  });
}

// The output columns [lo, hi) of a row whose input column ow + shift lies inside [0, width): the
// run a stride-1 row copies (or accumulates) as a whole.
inline std::pair<int64_t, int64_t> inside_run(int64_t shift, int64_t width, int64_t out_w) {
  const int64_t lo = std::clamp<int64_t>(-shift, 0, out_w);
  return {lo, std::clamp<int64_t>(width - shift, lo, out_w)};
}

// Input position (ih, iw) that output (oh, ow) reads through kernel tap (kh, kw).
inline int64_t in_row(const ConvGeometry& g, int64_t oh, int64_t kh) { return oh * g.stride_h - g.pad_h + kh * g.dil_h; }
inline int64_t in_col(const ConvGeometry& g, int64_t ow, int64_t kw) { return ow * g.stride_w - g.pad_w + kw * g.dil_w; }

// cols[r][b * L + l] = x[n0 + b][group channel c][ih][iw] (0 in the padding); r = (c, kh, kw).
template <typename T>
void im2col(const ConvGeometry& g, const T* x, int64_t n0, int64_t nb, int64_t group, T* cols) {
  const int64_t L = g.plane_out(), K = g.kernel_h * g.kernel_w, width = nb * L;
#pragma omp parallel for if (g.rows() * width > 32768)
  for (int64_t r = 0; r < g.rows(); ++r) {
    const int64_t c = r / K, kh = (r / g.kernel_w) % g.kernel_h, kw = r % g.kernel_w;
    T* row = cols + r * width;
    for (int64_t b = 0; b < nb; ++b) {
      const T* plane = x + ((n0 + b) * g.channels + group * g.group_in() + c) * g.height * g.width;
      T* dst = row + b * L;
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        const int64_t ih = in_row(g, oh, kh);
        T* out = dst + oh * g.out_w;
        if (ih < 0 || ih >= g.height) {
          std::fill(out, out + g.out_w, T(0));
        } else if (g.stride_w == 1) {  // a run of the input row, zeros where the kernel hangs over the edge
          const int64_t shift = kw * g.dil_w - g.pad_w;
          const auto [lo, hi] = inside_run(shift, g.width, g.out_w);
          std::fill(out, out + lo, T(0));
          std::memcpy(out + lo, plane + ih * g.width + lo + shift, sizeof(T) * (hi - lo));
          std::fill(out + hi, out + g.out_w, T(0));
        } else {
          for (int64_t ow = 0; ow < g.out_w; ++ow) {
            const int64_t iw = in_col(g, ow, kw);
            out[ow] = iw >= 0 && iw < g.width ? plane[ih * g.width + iw] : T(0);
          }
        }
      }
    }
  }
}

// The adjoint of im2col: gx[n0 + b][c][ih][iw] += cols[r][b * L + l]. Each (image, channel)
// plane is written by one thread.
template <typename T>
void col2im(const ConvGeometry& g, const T* cols, int64_t n0, int64_t nb, int64_t group, T* gx) {
  const int64_t L = g.plane_out(), width = nb * L;
#pragma omp parallel for if (g.rows() * width > 32768)
  for (int64_t bc = 0; bc < nb * g.group_in(); ++bc) {
    const int64_t b = bc / g.group_in(), c = bc % g.group_in();
    T* plane = gx + ((n0 + b) * g.channels + group * g.group_in() + c) * g.height * g.width;
    for (int64_t kh = 0; kh < g.kernel_h; ++kh)
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        const T* src = cols + ((c * g.kernel_h + kh) * g.kernel_w + kw) * width + b * L;
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          const int64_t ih = in_row(g, oh, kh);
          if (ih < 0 || ih >= g.height) continue;
          if (g.stride_w == 1) {  // one run, added element by element in the same order
            const int64_t shift = kw * g.dil_w - g.pad_w;
            const auto [lo, hi] = inside_run(shift, g.width, g.out_w);
            T* __restrict to = plane + ih * g.width + lo + shift;
            const T* __restrict from = src + oh * g.out_w + lo;
#pragma omp simd
            for (int64_t j = 0; j < hi - lo; ++j) to[j] += from[j];
            continue;
          }
          for (int64_t ow = 0; ow < g.out_w; ++ow) {
            const int64_t iw = in_col(g, ow, kw);
            if (iw >= 0 && iw < g.width) plane[ih * g.width + iw] += src[oh * g.out_w + ow];
          }
        }
      }
  }
}

// Between the (N, O, L) layout of outputs and the (Og, nb * L) layout of one group's GEMM.
template <typename T>
void gather_group(const ConvGeometry& g, const T* y, int64_t n0, int64_t nb, int64_t group, T* m) {
  const int64_t L = g.plane_out(), Og = g.group_out();
  for (int64_t o = 0; o < Og; ++o)
    for (int64_t b = 0; b < nb; ++b)
      std::memcpy(m + (o * nb + b) * L, y + ((n0 + b) * g.out_channels + group * Og + o) * L, sizeof(T) * L);
}

template <typename T>
void add_to_row(T* row, T value, int64_t n) {
  for (int64_t l = 0; l < n; ++l) row[l] += value;
}

}  // namespace

namespace {
// conv2d, by oneDNN where `onednn` allows it and torch would use it (onednn_conv.h).
TensorBase conv2d_impl(const TensorBase& input, const TensorBase& weight, const TensorBase& bias, IntArrayRef stride,
                       IntArrayRef padding, IntArrayRef dilation, int64_t groups, bool onednn, const char* op) {
  const ConvGeometry g = conv_geometry(input.sizes(), weight.sizes(), stride, padding, dilation, groups, op);
  check_floating_same(input, "Input", weight, "weight", op);
  if (bias.defined()) {
    check_floating_same(input, "Input", bias, "bias", "conv2d");
    KILN_CHECK(bias.dim() == 1 && bias.sizes()[0] == g.out_channels, "conv2d(): Given weight of size ",
               shape_str(weight.sizes()), ", expected bias to be 1-dimensional with ", g.out_channels,
               " elements, but got bias of size ", shape_str(bias.sizes()), " instead");
  }
  if (is_reduced_floating_type(input.dtype()))  // float16/bfloat16: computed in float32, rounded once
    return cast_to(conv2d_impl(to_opmath(input), to_opmath(weight), to_opmath(bias), stride, padding, dilation, groups,
                               onednn, op),
                   input.dtype());
  TensorBase out = empty_cpu(g.output_shape(), input.dtype());  // every element is written once
  if (out.numel() == 0) return out;
  const TensorBase x = contiguous_cpu(input), w = contiguous_cpu(weight);
  const TensorBase b = bias.defined() ? contiguous_cpu(bias) : TensorBase();
  if (onednn && onednn_conv_applies(g, input.dtype()) &&
      onednn_conv2d_forward(g, static_cast<const float*>(x.data_ptr()), static_cast<const float*>(w.data_ptr()),
                            b.defined() ? static_cast<const float*>(b.data_ptr()) : nullptr,
                            static_cast<float*>(out.data_ptr())))
    return out;
  KILN_DISPATCH_FLOATING_TYPES(input.dtype(), op, [&] {
    const int64_t R = g.rows(), Og = g.group_out(), L = g.plane_out();
    const scalar_t* bias_data = b.defined() ? static_cast<const scalar_t*>(b.data_ptr()) : nullptr;
    scalar_t* y = static_cast<scalar_t*>(out.data_ptr());
    for_each_chunk(g, [&](int64_t n0, int64_t nb) {
      const TensorBase cols_buffer = empty_cpu({R * nb * L}, input.dtype());  // written whole by im2col
      scalar_t* cols = static_cast<scalar_t*>(cols_buffer.data_ptr());
      for (int64_t group = 0; group < g.groups; ++group) {
        im2col(g, static_cast<const scalar_t*>(x.data_ptr()), n0, nb, group, cols);
        for (int64_t i = 0; i < nb; ++i) {
          // y[n0 + i][group's channels] (Og, L) = w_group (Og, R) @ image i's columns of cols (R, L):
          // straight into the output, which has that layout
          scalar_t* y_group = y + ((n0 + i) * g.out_channels + group * Og) * L;
          blas_gemm<scalar_t>(false, false, Og, L, R, scalar_t(1),
                              static_cast<const scalar_t*>(w.data_ptr()) + group * Og * R, R, cols + i * L, nb * L,
                              scalar_t(0), y_group, L);
          if (bias_data)
            for (int64_t o = 0; o < Og; ++o) add_to_row(y_group + o * L, bias_data[group * Og + o], L);
        }
      }
    });
  });
  return out;
}
}  // namespace

TensorBase conv2d(const TensorBase& input, const TensorBase& weight, const TensorBase& bias, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return conv2d_impl(input, weight, bias, stride, padding, dilation, groups, true, "conv2d");
}

TensorBase conv2d_native(const TensorBase& input, const TensorBase& weight, IntArrayRef stride, IntArrayRef padding,
                         IntArrayRef dilation, int64_t groups) {
  return conv2d_impl(input, weight, TensorBase(), stride, padding, dilation, groups, false, "_conv2d_native");
}

namespace {
void check_grad_output(const TensorBase& grad_output, const ConvGeometry& g, const char* op) {
  KILN_CHECK(grad_output.sizes() == IntArrayRef(g.output_shape()), op, "(): expected grad_output of shape ",
             shape_str(g.output_shape()), ", got ", shape_str(grad_output.sizes()));
}
}  // namespace

TensorBase conv2d_backward_input(const TensorBase& grad_output, IntArrayRef input_size, const TensorBase& weight,
                                 IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups,
                                 bool transposed) {
  const char* op = "conv2d_backward_input";
  for (int64_t s : input_size) KILN_CHECK(s >= 0, op, "(): input_size must be non-negative, got ", shape_str(input_size));
  const ConvGeometry g = conv_geometry(input_size, weight.sizes(), stride, padding, dilation, groups, op);
  check_floating_same(grad_output, "grad_output", weight, "weight", op);
  check_grad_output(grad_output, g, op);
  if (is_reduced_floating_type(weight.dtype()))
    return cast_to(conv2d_backward_input(to_opmath(grad_output), input_size, to_opmath(weight), stride, padding,
                                         dilation, groups, transposed),
                   weight.dtype());
  TensorBase gx = zeros_cpu(input_size, grad_output.dtype());
  if (gx.numel() == 0 || grad_output.numel() == 0) return gx;
  const TensorBase go = contiguous_cpu(grad_output), w = contiguous_cpu(weight);
  if (!transposed && onednn_conv_applies(g, weight.dtype()) &&
      onednn_conv2d_backward_data(g, static_cast<const float*>(go.data_ptr()), static_cast<const float*>(w.data_ptr()),
                                  static_cast<float*>(gx.data_ptr())))
    return gx;
  KILN_DISPATCH_FLOATING_TYPES(grad_output.dtype(), op, [&] {
    const int64_t R = g.rows(), Og = g.group_out();
    for_each_group_chunk<scalar_t>(g, grad_output.dtype(), [&](int64_t n0, int64_t nb, int64_t width,
                                                                int64_t group, scalar_t* cols, scalar_t* m) {
      gather_group(g, static_cast<const scalar_t*>(go.data_ptr()), n0, nb, group, m);
      // cols (R, L) = w_group^T (R, Og) @ m (Og, L), image by image as torch's native kernels call
      // their GEMM (OpenBLAS picks its kernel, and with it the rounding, by the matrices' sizes)
      const int64_t L = g.plane_out();
      for (int64_t i = 0; i < nb; ++i)
        blas_gemm<scalar_t>(true, false, R, L, Og, scalar_t(1),
                            static_cast<const scalar_t*>(w.data_ptr()) + group * Og * R, R, m + i * L, width,
                            scalar_t(0), cols + i * L, width);
      col2im(g, cols, n0, nb, group, static_cast<scalar_t*>(gx.data_ptr()));
    });
  });
  return gx;
}

TensorBase conv2d_backward_weight(const TensorBase& grad_output, const TensorBase& input, IntArrayRef weight_size,
                                  IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups,
                                  bool transposed) {
  const char* op = "conv2d_backward_weight";
  for (int64_t s : weight_size) KILN_CHECK(s >= 0, op, "(): weight_size must be non-negative, got ", shape_str(weight_size));
  const ConvGeometry g = conv_geometry(input.sizes(), weight_size, stride, padding, dilation, groups, op);
  check_floating_same(grad_output, "grad_output", input, "input", op);
  check_grad_output(grad_output, g, op);
  if (is_reduced_floating_type(input.dtype()))
    return cast_to(conv2d_backward_weight(to_opmath(grad_output), to_opmath(input), weight_size, stride, padding,
                                          dilation, groups, transposed),
                   input.dtype());
  TensorBase gw = zeros_cpu(weight_size, grad_output.dtype());
  if (gw.numel() == 0 || grad_output.numel() == 0) return gw;
  const TensorBase go = contiguous_cpu(grad_output), x = contiguous_cpu(input);
  if (!transposed && onednn_conv_applies(g, input.dtype()) &&
      onednn_conv2d_backward_weights(g, static_cast<const float*>(go.data_ptr()),
                                     static_cast<const float*>(x.data_ptr()), static_cast<float*>(gw.data_ptr()),
                                     nullptr))
    return gw;
  KILN_DISPATCH_FLOATING_TYPES(grad_output.dtype(), op, [&] {
    const int64_t R = g.rows(), Og = g.group_out();
    for_each_group_chunk<scalar_t>(g, grad_output.dtype(), [&](int64_t n0, int64_t nb, int64_t width,
                                                                int64_t group, scalar_t* cols, scalar_t* m) {
      im2col(g, static_cast<const scalar_t*>(x.data_ptr()), n0, nb, group, cols);
      gather_group(g, static_cast<const scalar_t*>(go.data_ptr()), n0, nb, group, m);
      // gw_group (Og, R) += m (Og, L) @ cols^T (L, R), image by image as torch's native kernel adds
      // them (one GEMM over the chunk would sum the images in another order)
      const int64_t L = g.plane_out();
      for (int64_t i = 0; i < nb; ++i)
        blas_gemm<scalar_t>(false, true, Og, R, L, scalar_t(1), m + i * L, width, cols + i * L, width,
                            scalar_t(1), static_cast<scalar_t*>(gw.data_ptr()) + group * Og * R, R);
    });
  });
  return gw;
}

std::tuple<TensorBase, TensorBase> conv2d_backward_weight_bias(const TensorBase& grad_output, const TensorBase& input,
                                                               IntArrayRef weight_size, IntArrayRef stride,
                                                               IntArrayRef padding, IntArrayRef dilation,
                                                               int64_t groups) {
  const char* op = "_conv2d_backward_weight_bias";
  for (int64_t s : weight_size) KILN_CHECK(s >= 0, op, "(): weight_size must be non-negative, got ", shape_str(weight_size));
  const ConvGeometry g = conv_geometry(input.sizes(), weight_size, stride, padding, dilation, groups, op);
  check_floating_same(grad_output, "grad_output", input, "input", op);
  check_grad_output(grad_output, g, op);
  if (grad_output.numel() > 0 && onednn_conv_applies(g, input.dtype())) {
    TensorBase gw = empty_cpu(weight_size, ScalarType::Float32), gb = empty_cpu({g.out_channels}, ScalarType::Float32);
    const TensorBase go = contiguous_cpu(grad_output), x = contiguous_cpu(input);
    if (onednn_conv2d_backward_weights(g, static_cast<const float*>(go.data_ptr()),
                                       static_cast<const float*>(x.data_ptr()), static_cast<float*>(gw.data_ptr()),
                                       static_cast<float*>(gb.data_ptr())))
      return {gw, gb};
  }
  const DimVector dims = g.batched ? DimVector{0, 2, 3} : DimVector{1, 2};  // torch's sum elsewhere
  return {conv2d_backward_weight(grad_output, input, weight_size, stride, padding, dilation, groups, false),
          sum_out(grad_output, IntArrayRef(dims), false, std::nullopt, TensorBase())};
}

}  // namespace cpu
}  // namespace kiln
