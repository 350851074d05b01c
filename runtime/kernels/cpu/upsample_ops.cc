// Resampling for F.interpolate: torch's upsample ops (nearest, nearest-exact, linear, bilinear,
// bicubic, trilinear) and their backward ops. Every mode is separable: an output point is a sum
// over per-dim taps (index, weight), so the forward resamples one spatial dim at a time (the
// last first) and the backward scatters grad_output through the same taps in the reverse order.
// The taps follow torch's CPU kernels (aten/src/ATen/native/UpSample.h): the scale of the
// coordinate map is the user's scale_factor when one is given (1 / scale), else input / output;
// align_corners maps the corner pixels' centres onto each other; bicubic uses A = -0.75 and
// clamps its four taps to the edge.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "generated/kernels/_upsample_nearest_exact1d.h"
#include "generated/kernels/_upsample_nearest_exact1d_backward.h"
#include "generated/kernels/_upsample_nearest_exact2d.h"
#include "generated/kernels/_upsample_nearest_exact2d_backward.h"
#include "generated/kernels/_upsample_nearest_exact3d.h"
#include "generated/kernels/_upsample_nearest_exact3d_backward.h"
#include "generated/kernels/upsample_bicubic2d.h"
#include "generated/kernels/upsample_bicubic2d_backward.h"
#include "generated/kernels/upsample_bilinear2d.h"
#include "generated/kernels/upsample_bilinear2d_backward.h"
#include "generated/kernels/upsample_linear1d.h"
#include "generated/kernels/upsample_linear1d_backward.h"
#include "generated/kernels/upsample_nearest1d.h"
#include "generated/kernels/upsample_nearest1d_backward.h"
#include "generated/kernels/upsample_nearest2d.h"
#include "generated/kernels/upsample_nearest2d_backward.h"
#include "generated/kernels/upsample_nearest3d.h"
#include "generated/kernels/upsample_nearest3d_backward.h"
#include "generated/kernels/upsample_trilinear3d.h"
#include "generated/kernels/upsample_trilinear3d_backward.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/resample_taps.h"
#include "runtime/kernels/cpu/upsample_checks.h"
#include "runtime/kernels/tensor_memory.h"

namespace kiln {
namespace cpu {
namespace {

using upsample::check_input;

// kNearestBackward is kNearest as torch 1.13's backward computes it (nearest_idx): an output as
// large as the input, or twice as large, maps o -> o and o -> o / 2 whatever the scale_factor,
// where the forward's generic kernel always maps o -> floor(o * scale). The forward's channels-last
// kernel uses nearest_idx too, and torch takes it for every 4-D / 5-D input whose strides are also
// channels-last contiguous: one channel, for instance.
enum class Mode { kNearest, kNearestBackward, kNearestExact, kLinear, kCubic };

using Scales = std::vector<std::optional<double>>;


template <typename T>
T source_index(T scale, int64_t dst, bool align_corners, bool cubic) {
  if (align_corners) return scale * static_cast<T>(dst);
  const T src = scale * (static_cast<T>(dst) + T(0.5)) - T(0.5);
  return (!cubic && src < 0) ? T(0) : src;
}

template <typename T>
void guard_index_and_lambda(T real, int64_t in, int64_t& index, T& lambda) {
  const T f = std::floor(real);
  // a NaN or out-of-range coordinate (from a huge or tiny scale) is clamped, not cast (undefined)
  index = !(f >= T(-2)) ? -2 : f >= static_cast<T>(in) ? in - 1 : std::min(static_cast<int64_t>(f), in - 1);
  lambda = std::min(std::max(real - static_cast<T>(index), T(0)), T(1));
}

template <typename T>
T cubic1(T x, T a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }
template <typename T>
T cubic2(T x, T a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }

// floor(o * scale) as an index of the input: min(., in - 1), NaN / negative -> 0
inline int64_t bounded_index(float f, int64_t in) {
  if (!(f >= 0.0f)) return 0;
  if (f >= static_cast<float>(in)) return in - 1;
  return std::min(static_cast<int64_t>(f), in - 1);
}

template <typename T>
Taps<T> make_taps(Mode mode, int64_t in, int64_t out, bool align_corners, const std::optional<double>& scale) {
  Taps<T> t;
  t.in = in;
  t.out = out;
  t.k = mode == Mode::kLinear ? 2 : mode == Mode::kCubic ? 4 : 1;
  t.fused_pairs = mode == Mode::kLinear && linear_taps_fused();
  t.index.resize(out * t.k);
  t.weight.resize(out * t.k);
  if (mode == Mode::kNearest || mode == Mode::kNearestBackward || mode == Mode::kNearestExact) {
    // torch computes the nearest scale in float whatever the dtype
    const float s = scale.has_value() && *scale > 0 ? static_cast<float>(1.0 / *scale)
                                                     : static_cast<float>(in) / static_cast<float>(out);
    for (int64_t o = 0; o < out; ++o) {
      int64_t i;
      if (mode == Mode::kNearest) {
        i = bounded_index(std::floor(static_cast<float>(o) * s), in);
      } else if (mode == Mode::kNearestBackward) {
        if (out == in) i = o;
        else if (out == 2 * in) i = o >> 1;
        else i = bounded_index(std::floor(static_cast<float>(o) * s), in);
      } else {
        i = bounded_index(std::floor((static_cast<float>(o) + 0.5f) * s), in);
      }
      t.index[o] = std::max<int64_t>(i, 0);  // a NaN / inf coordinate (a huge or tiny scale) stays in the input
      t.weight[o] = T(1);
    }
    return t;
  }
  const T s = pixel_scale<T>(in, out, align_corners, scale);
  for (int64_t o = 0; o < out; ++o) {
    if (mode == Mode::kLinear) {
      int64_t i0, i1;
      T l0, l1;
      if (out == in) {
        i0 = i1 = o;
        l0 = 1;
        l1 = 0;
      } else {
        // torch's linear taps: the source position (scale * o, or scale * (o + 0.5) - 0.5) in double
        // from the T scale, whose error it keeps; lambda rounded once to T from it (measured against
        // torch 1.13's weights)
        double l1_exact;
        const double src = align_corners ? static_cast<double>(s) * static_cast<double>(o)
                                         : std::max(static_cast<double>(s) * (static_cast<double>(o) + 0.5) - 0.5, 0.0);
        guard_index_and_lambda<double>(src, in, i0, l1_exact);
        l1 = static_cast<T>(l1_exact);
        i0 = std::max<int64_t>(i0, 0);
        i1 = i0 + (i0 < in - 1 ? 1 : 0);
        l0 = T(1) - l1;
      }
      t.index[2 * o] = i0;
      t.index[2 * o + 1] = i1;
      t.weight[2 * o] = l0;
      t.weight[2 * o + 1] = l1;
    } else {
      int64_t i;
      T x;
      guard_index_and_lambda(source_index<T>(s, o, align_corners, true), in, i, x);
      i = std::max<int64_t>(i, -1);
      const T a = T(-0.75);
      const T c[4] = {cubic2<T>(x + 1, a), cubic1<T>(x, a), cubic1<T>(1 - x, a), cubic2<T>(2 - x, a)};
      for (int j = 0; j < 4; ++j) {
        t.index[4 * o + j] = std::max<int64_t>(std::min<int64_t>(i - 1 + j, in - 1), 0);
        t.weight[4 * o + j] = c[j];
      }
    }
  }
  return t;
}

template <typename T>
std::vector<Taps<T>> all_taps(Mode mode, IntArrayRef in, IntArrayRef out, bool align_corners, const Scales& scales) {
  std::vector<Taps<T>> taps;
  for (size_t i = 0; i < out.size(); ++i) taps.push_back(make_taps<T>(mode, in[i + 2], out[i], align_corners, scales[i]));
  return taps;
}

// torch 1.13's bicubic backward copies grad_output when every spatial size is unchanged, even
// where a scale_factor made the forward's taps something else (5 * 1.1 -> 5).
bool bicubic_backward_copies(Mode mode, IntArrayRef in, IntArrayRef out) {
  if (mode != Mode::kCubic) return false;
  for (size_t i = 0; i < out.size(); ++i)
    if (in[i + 2] != out[i]) return false;
  return true;
}

// Nearest modes pick one input per output: each output element copied from its source in one pass
// over every spatial dim (the separable passes multiplied by 1 and added to 0 into intermediate
// buffers, 6x torch's time, and turned -0.0 into +0.0). Planes (n, c) split across threads.
template <typename T>
void nearest_gather(const T* x, T* y, IntArrayRef in_shape, const std::vector<Taps<T>>& taps) {
  const size_t d = taps.size();  // 1, 2 or 3 spatial dims, padded to 3 with size-1 dims in front
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  const std::vector<int64_t> zero{0};
  const std::vector<int64_t>* index[3] = {&zero, &zero, &zero};
  for (size_t i = 0; i < d; ++i) {
    in[3 - d + i] = taps[i].in;
    out[3 - d + i] = taps[i].out;
    index[3 - d + i] = &taps[i].index;
  }
  const int64_t planes = in_shape[0] * in_shape[1], in_plane = in[0] * in[1] * in[2], out_plane = out[0] * out[1] * out[2];
  const std::vector<int64_t>& i0 = *index[0];
  const std::vector<int64_t>& i1 = *index[1];
  const std::vector<int64_t>& i2 = *index[2];
#pragma omp parallel for if (planes * out_plane > 32768) schedule(static)
  for (int64_t p = 0; p < planes; ++p) {
    const T* src = x + p * in_plane;
    T* dst = y + p * out_plane;
    for (int64_t a = 0; a < out[0]; ++a)
      for (int64_t b = 0; b < out[1]; ++b) {
        const T* row = src + (i0[a] * in[1] + i1[b]) * in[2];
        T* o = dst + (a * out[1] + b) * out[2];
        for (int64_t c = 0; c < out[2]; ++c) o[c] = row[i2[c]];
      }
  }
}

template <typename T>
void resample_all(Mode mode, const TensorBase& x, TensorBase& result, IntArrayRef output_size, bool align_corners,
                  const Scales& scales) {
  std::vector<Taps<T>> taps;
  if constexpr (std::is_same_v<T, uint8_t>) {  // nearest on uint8: the float taps' indices, weight 1
    for (const auto& f : all_taps<float>(mode, x.sizes(), output_size, align_corners, scales))
      taps.push_back(Taps<T>{f.in, f.out, f.k, f.index, std::vector<T>(f.weight.size(), T(1)), {}});
  } else {
    taps = all_taps<T>(mode, x.sizes(), output_size, align_corners, scales);
  }
  if (mode == Mode::kNearest || mode == Mode::kNearestBackward || mode == Mode::kNearestExact) {
    nearest_gather(static_cast<const T*>(x.data_ptr()), static_cast<T*>(result.data_ptr()), x.sizes(), taps);
    return;
  }
  std::vector<const Taps<T>*> dims;
  for (const auto& t : taps) dims.push_back(&t);
  resample_separable(static_cast<const T*>(x.data_ptr()), static_cast<T*>(result.data_ptr()),
                     std::vector<int64_t>(x.sizes().begin(), x.sizes().end()), dims);
}

// torch's is_contiguous(ChannelsLast / ChannelsLast3d): C innermost, then W, H (D), N, ignoring
// dims of size 1.
bool channels_last_contiguous(const TensorBase& t) {
  if (t.dim() != 4 && t.dim() != 5) return false;
  const std::vector<int64_t> order = t.dim() == 4 ? std::vector<int64_t>{1, 3, 2, 0}
                                                  : std::vector<int64_t>{1, 4, 3, 2, 0};
  int64_t expected = 1;
  for (int64_t d : order) {
    if (t.sizes()[d] == 1) continue;
    if (t.strides()[d] != expected) return false;
    expected *= t.sizes()[d];
  }
  return true;
}

TensorBase upsample_forward(const char* op, Mode mode, const TensorBase& self, IntArrayRef output_size,
                            bool align_corners, const Scales& scales) {
  const size_t d = scales.size();
  if (mode == Mode::kNearest && channels_last_contiguous(self)) mode = Mode::kNearestBackward;
  // nearest copies values, so (as torch) it also takes uint8 images
  const bool nearest = mode == Mode::kNearest || mode == Mode::kNearestBackward || mode == Mode::kNearestExact;
  check_input(op, d, self, output_size, nearest);
  if (self.dtype() == ScalarType::Float16 || self.dtype() == ScalarType::BFloat16)
    return cast_to(upsample_forward(op, mode, cast_to(self, ScalarType::Float32), output_size, align_corners, scales),
                   self.dtype());
  DimVector shape(self.sizes().begin(), self.sizes().end());
  for (size_t i = 0; i < d; ++i) shape[i + 2] = output_size[i];
  TensorBase result = empty_cpu(shape, self.dtype());
  if (result.numel() == 0) return result;
  const TensorBase x = contiguous_cpu(self);
  if (self.dtype() == ScalarType::UInt8) {
    resample_all<uint8_t>(mode, x, result, output_size, align_corners, scales);
  } else {
    KILN_DISPATCH_FLOATING_TYPES(self.dtype(), op, [&] {
      resample_all<scalar_t>(mode, x, result, output_size, align_corners, scales);
    });
  }
  return result;
}

TensorBase upsample_backward(const char* op, Mode mode, const TensorBase& grad_output, IntArrayRef output_size,
                             IntArrayRef input_size, bool align_corners, const Scales& scales) {
  const size_t d = scales.size();
  upsample::check_grad_output(op, d, grad_output, output_size, input_size);
  if (grad_output.dtype() == ScalarType::Float16 || grad_output.dtype() == ScalarType::BFloat16)
    return cast_to(upsample_backward(op, mode, cast_to(grad_output, ScalarType::Float32), output_size, input_size,
                                     align_corners, scales), grad_output.dtype());
  TensorBase result = zeros_cpu(input_size, grad_output.dtype());
  if (result.numel() == 0) return result;
  const TensorBase g = contiguous_cpu(grad_output);
  KILN_DISPATCH_FLOATING_TYPES(grad_output.dtype(), op, [&] {
    const Mode taps_mode = bicubic_backward_copies(mode, input_size, output_size) ? Mode::kNearestBackward : mode;
    const auto taps = all_taps<scalar_t>(taps_mode, input_size, output_size, align_corners, scales);
    std::vector<const Taps<scalar_t>*> dims;
    for (const auto& t : taps) dims.push_back(&t);
    if (taps_mode == Mode::kLinear) {  // torch's order, for its bits
      linear_scatter_torch_order(static_cast<const scalar_t*>(g.data_ptr()), static_cast<scalar_t*>(result.data_ptr()),
                                 g.sizes()[0] * g.sizes()[1], dims);
      return;
    }
    if (taps_mode == Mode::kNearest || taps_mode == Mode::kNearestBackward || taps_mode == Mode::kNearestExact) {
      nearest_scatter_torch_order(static_cast<const scalar_t*>(g.data_ptr()),
                                  static_cast<scalar_t*>(result.data_ptr()), g.sizes()[0] * g.sizes()[1], dims);
      return;
    }
    scatter_separable(static_cast<const scalar_t*>(g.data_ptr()), static_cast<scalar_t*>(result.data_ptr()),
                      std::vector<int64_t>(g.sizes().begin(), g.sizes().end()), dims);
  });
  return result;
}

}  // namespace

#define KILN_NEAREST_OPS(NAME, MODE, BACKWARD_MODE)                                                                                 \
  TensorBase NAME##1d(const TensorBase& self, IntArrayRef output_size, const std::optional<double>& scales) {          \
    return upsample_forward(#NAME "1d", MODE, self, output_size, false, {scales});                                    \
  }                                                                                                                   \
  TensorBase NAME##1d_backward(const TensorBase& grad_output, IntArrayRef output_size, IntArrayRef input_size,       \
                               const std::optional<double>& scales) {                                                 \
    return upsample_backward(#NAME "1d_backward", BACKWARD_MODE, grad_output, output_size, input_size, false, {scales});      \
  }                                                                                                                   \
  TensorBase NAME##2d(const TensorBase& self, IntArrayRef output_size, const std::optional<double>& scales_h,         \
                      const std::optional<double>& scales_w) {                                                        \
    return upsample_forward(#NAME "2d", MODE, self, output_size, false, {scales_h, scales_w});                        \
  }                                                                                                                   \
  TensorBase NAME##2d_backward(const TensorBase& grad_output, IntArrayRef output_size, IntArrayRef input_size,       \
                               const std::optional<double>& scales_h, const std::optional<double>& scales_w) {        \
    return upsample_backward(#NAME "2d_backward", BACKWARD_MODE, grad_output, output_size, input_size, false,                  \
                             {scales_h, scales_w});                                                                   \
  }                                                                                                                   \
  TensorBase NAME##3d(const TensorBase& self, IntArrayRef output_size, const std::optional<double>& scales_d,         \
                      const std::optional<double>& scales_h, const std::optional<double>& scales_w) {                 \
    return upsample_forward(#NAME "3d", MODE, self, output_size, false, {scales_d, scales_h, scales_w});              \
  }                                                                                                                   \
  TensorBase NAME##3d_backward(const TensorBase& grad_output, IntArrayRef output_size, IntArrayRef input_size,       \
                               const std::optional<double>& scales_d, const std::optional<double>& scales_h,         \
                               const std::optional<double>& scales_w) {                                               \
    return upsample_backward(#NAME "3d_backward", BACKWARD_MODE, grad_output, output_size, input_size, false,                  \
                             {scales_d, scales_h, scales_w});                                                         \
  }

KILN_NEAREST_OPS(upsample_nearest, Mode::kNearest, Mode::kNearestBackward)
KILN_NEAREST_OPS(upsample_nearest_exact, Mode::kNearestExact, Mode::kNearestExact)
#undef KILN_NEAREST_OPS

TensorBase upsample_linear1d(const TensorBase& self, IntArrayRef output_size, bool align_corners,
                             const std::optional<double>& scales) {
  return upsample_forward("upsample_linear1d", Mode::kLinear, self, output_size, align_corners, {scales});
}
TensorBase upsample_linear1d_backward(const TensorBase& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                      bool align_corners, const std::optional<double>& scales) {
  return upsample_backward("upsample_linear1d_backward", Mode::kLinear, grad_output, output_size, input_size,
                           align_corners, {scales});
}
TensorBase upsample_bilinear2d(const TensorBase& self, IntArrayRef output_size, bool align_corners,
                               const std::optional<double>& scales_h, const std::optional<double>& scales_w) {
  return upsample_forward("upsample_bilinear2d", Mode::kLinear, self, output_size, align_corners, {scales_h, scales_w});
}
TensorBase upsample_bilinear2d_backward(const TensorBase& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                        bool align_corners, const std::optional<double>& scales_h,
                                        const std::optional<double>& scales_w) {
  return upsample_backward("upsample_bilinear2d_backward", Mode::kLinear, grad_output, output_size, input_size,
                           align_corners, {scales_h, scales_w});
}
TensorBase upsample_bicubic2d(const TensorBase& self, IntArrayRef output_size, bool align_corners,
                              const std::optional<double>& scales_h, const std::optional<double>& scales_w) {
  return upsample_forward("upsample_bicubic2d", Mode::kCubic, self, output_size, align_corners, {scales_h, scales_w});
}
TensorBase upsample_bicubic2d_backward(const TensorBase& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                       bool align_corners, const std::optional<double>& scales_h,
                                       const std::optional<double>& scales_w) {
  return upsample_backward("upsample_bicubic2d_backward", Mode::kCubic, grad_output, output_size, input_size,
                           align_corners, {scales_h, scales_w});
}
TensorBase upsample_trilinear3d(const TensorBase& self, IntArrayRef output_size, bool align_corners,
                                const std::optional<double>& scales_d, const std::optional<double>& scales_h,
                                const std::optional<double>& scales_w) {
  return upsample_forward("upsample_trilinear3d", Mode::kLinear, self, output_size, align_corners,
                          {scales_d, scales_h, scales_w});
}
TensorBase upsample_trilinear3d_backward(const TensorBase& grad_output, IntArrayRef output_size,
                                         IntArrayRef input_size, bool align_corners,
                                         const std::optional<double>& scales_d, const std::optional<double>& scales_h,
                                         const std::optional<double>& scales_w) {
  return upsample_backward("upsample_trilinear3d_backward", Mode::kLinear, grad_output, output_size, input_size,
                           align_corners, {scales_d, scales_h, scales_w});
}

}  // namespace cpu
}  // namespace kiln
