// F.interpolate(antialias=True) for bilinear and bicubic: torch's _upsample_bilinear2d_aa and
// _upsample_bicubic2d_aa (aten/src/ATen/native/cpu/UpSampleKernel.cpp, PIL's resampling). Each
// output position o of a dim averages the inputs whose centres lie within `support` of its centre
// scale * (o + 0.5), weighted by the filter (triangle, or Keys cubic with a = -0.5) evaluated at
// the distance divided by the scale when downsampling (so the support widens with the scale), the
// weights normalized to sum to one. Upsampling keeps the filter's own support (1 or 2 inputs).
//
// As torch 1.13: the forward resamples the last dim, then the first, and the backward scatters
// back through the same taps. A dim of unchanged size is resampled too: with no scale_factor its
// taps are the identity, with one (5 * 1.1 -> 5) they are not (torch 2.x skips such a dim).
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "generated/kernels/_upsample_bicubic2d_aa.h"
#include "generated/kernels/_upsample_bicubic2d_aa_backward.h"
#include "generated/kernels/_upsample_bilinear2d_aa.h"
#include "generated/kernels/_upsample_bilinear2d_aa_backward.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/resample_taps.h"
#include "runtime/kernels/cpu/upsample_checks.h"
#include "runtime/kernels/tensor_memory.h"

namespace kiln {
namespace cpu {
namespace {

using Scales = std::vector<std::optional<double>>;

template <typename T>
T linear_filter(T x) {
  if (x < T(0)) x = -x;
  return x < T(1) ? T(1) - x : T(0);
}

// PIL's bicubic filter (Keys, a = -0.5; plain bicubic uses -0.75) as torch 1.13 writes it: the
// inner branch in double, the outer one in T, which float32 results follow to the bit.
template <typename T>
T cubic_filter(T x) {
  constexpr double a = -0.5;
  if (x < T(0)) x = -x;
  if (x < T(1)) return static_cast<T>(((a + 2.0) * x - (a + 3.0)) * x * x + 1);
  if (x < T(2)) return static_cast<T>((((x - 5) * x + 8) * x - 4) * a);
  return T(0);
}

// v truncated toward zero as an int64 in [lo, hi]; NaN -> lo (a huge scale_factor must not make
// the cast undefined).
inline int64_t trunc_within(double v, int64_t lo, int64_t hi) {
  if (!(v > static_cast<double>(lo))) return lo;
  if (v >= static_cast<double>(hi)) return hi;
  return std::clamp(static_cast<int64_t>(v), lo, hi);
}

// The mixed float/double arithmetic below is torch's, so float32 weights round as torch's do.
template <typename T>
Taps<T> aa_taps(bool cubic, int64_t in, int64_t out, bool align_corners, const std::optional<double>& scale_factor) {
  const int interp_size = cubic ? 4 : 2;
  const T scale = pixel_scale<T>(in, out, align_corners, scale_factor);
  const T support = static_cast<T>(scale >= 1.0 ? (interp_size * 0.5) * scale : interp_size * 0.5);
  const T invscale = static_cast<T>(scale >= 1.0 ? 1.0 / scale : 1.0);
  Taps<T> t;
  t.in = in;
  t.out = out;
  // at most `in` taps can be inside the input, whatever the support
  t.k = std::min(trunc_within(std::ceil(static_cast<float>(support)), 0, in) * 2 + 1, in);
  t.index.assign(out * t.k, 0);
  t.weight.assign(out * t.k, T(0));
  t.counts.assign(out, 0);
  for (int64_t o = 0; o < out; ++o) {
    const T center = static_cast<T>(scale * (o + 0.5));
    const int64_t xmin = trunc_within(center - support + 0.5, 0, in);
    const int64_t xsize = std::clamp(trunc_within(center + support + 0.5, 0, in) - xmin, int64_t{0}, t.k);
    T total = 0;
    for (int64_t j = 0; j < xsize; ++j) {
      const T x = static_cast<T>((static_cast<T>(j + xmin) - center + 0.5) * invscale);
      const T w = cubic ? cubic_filter(x) : linear_filter(x);
      t.index[o * t.k + j] = xmin + j;
      t.weight[o * t.k + j] = w;
      total += w;
    }
    if (total != T(0))
      for (int64_t j = 0; j < xsize; ++j) t.weight[o * t.k + j] /= total;
    t.counts[o] = xsize;
  }
  return t;
}

TensorBase aa_forward(const char* op, bool cubic, const TensorBase& self, IntArrayRef output_size, bool align_corners,
                      const Scales& scales) {
  upsample::check_input(op, 2, self, output_size);
  // float16 / bfloat16 (which torch 1.13's CPU kernel refuses) are computed in float32, as kiln's other upsample ops
  if (self.dtype() == ScalarType::Float16 || self.dtype() == ScalarType::BFloat16)
    return cast_to(aa_forward(op, cubic, cast_to(self, ScalarType::Float32), output_size, align_corners, scales),
                   self.dtype());
  DimVector shape(self.sizes().begin(), self.sizes().end());
  for (size_t i = 0; i < 2; ++i) shape[i + 2] = output_size[i];
  TensorBase result = empty_cpu(shape, self.dtype());
  if (result.numel() == 0) return result;
  const TensorBase x = contiguous_cpu(self);
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), op, [&] {
    const auto rows = aa_taps<scalar_t>(cubic, self.sizes()[2], output_size[0], align_corners, scales[0]);
    const auto cols = aa_taps<scalar_t>(cubic, self.sizes()[3], output_size[1], align_corners, scales[1]);
    resample_separable(static_cast<const scalar_t*>(x.data_ptr()), static_cast<scalar_t*>(result.data_ptr()),
                       std::vector<int64_t>(self.sizes().begin(), self.sizes().end()), {&rows, &cols});
  });
  return result;
}

TensorBase aa_backward(const char* op, bool cubic, const TensorBase& grad_output, IntArrayRef output_size,
                       IntArrayRef input_size, bool align_corners, const Scales& scales) {
  upsample::check_grad_output(op, 2, grad_output, output_size, input_size);
  if (grad_output.dtype() == ScalarType::Float16 || grad_output.dtype() == ScalarType::BFloat16)
    return cast_to(aa_backward(op, cubic, cast_to(grad_output, ScalarType::Float32), output_size, input_size,
                               align_corners, scales), grad_output.dtype());
  TensorBase result = zeros_cpu(input_size, grad_output.dtype());
  if (result.numel() == 0) return result;
  const TensorBase g = contiguous_cpu(grad_output);
  KILN_DISPATCH_FLOATING_TYPES(grad_output.dtype(), op, [&] {
    const auto rows = aa_taps<scalar_t>(cubic, input_size[2], output_size[0], align_corners, scales[0]);
    const auto cols = aa_taps<scalar_t>(cubic, input_size[3], output_size[1], align_corners, scales[1]);
    scatter_separable(static_cast<const scalar_t*>(g.data_ptr()), static_cast<scalar_t*>(result.data_ptr()),
                      std::vector<int64_t>(g.sizes().begin(), g.sizes().end()), {&rows, &cols});
  });
  return result;
}

}  // namespace

TensorBase upsample_bilinear2d_aa(const TensorBase& self, IntArrayRef output_size, bool align_corners,
                                  const std::optional<double>& scales_h, const std::optional<double>& scales_w) {
  return aa_forward("_upsample_bilinear2d_aa", false, self, output_size, align_corners, {scales_h, scales_w});
}

TensorBase upsample_bilinear2d_aa_backward(const TensorBase& grad_output, IntArrayRef output_size,
                                           IntArrayRef input_size, bool align_corners,
                                           const std::optional<double>& scales_h,
                                           const std::optional<double>& scales_w) {
  return aa_backward("_upsample_bilinear2d_aa_backward", false, grad_output, output_size, input_size, align_corners,
                     {scales_h, scales_w});
}

TensorBase upsample_bicubic2d_aa(const TensorBase& self, IntArrayRef output_size, bool align_corners,
                                 const std::optional<double>& scales_h, const std::optional<double>& scales_w) {
  return aa_forward("_upsample_bicubic2d_aa", true, self, output_size, align_corners, {scales_h, scales_w});
}

TensorBase upsample_bicubic2d_aa_backward(const TensorBase& grad_output, IntArrayRef output_size,
                                          IntArrayRef input_size, bool align_corners,
                                          const std::optional<double>& scales_h,
                                          const std::optional<double>& scales_w) {
  return aa_backward("_upsample_bicubic2d_aa_backward", true, grad_output, output_size, input_size, align_corners,
                     {scales_h, scales_w});
}

}  // namespace cpu
}  // namespace kiln
