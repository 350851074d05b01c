// Normalization, dropout, padding and losses written with other ops, so their gradients
// (and second derivatives) come from those ops' formulas.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "generated/api/_adaptive_avg_pool2d.h"
#include "generated/api/_batch_norm_eval.h"
#include "generated/api/_batch_norm_train.h"
#include "generated/api/_fma.h"
#include "generated/api/abs.h"
#include "generated/api/add.h"
#include "generated/api/div.h"
#include "generated/api/empty.h"
#include "generated/api/eq.h"
#include "generated/api/full.h"
#include "generated/api/lt.h"
#include "generated/api/max_pool2d_with_indices.h"
#include "generated/api/mean.h"
#include "generated/api/mul.h"
#include "generated/api/narrow.h"
#include "generated/api/native_layer_norm.h"
#include "generated/api/neg.h"
#include "generated/api/reciprocal.h"
#include "generated/api/sqrt.h"
#include "generated/api/sub.h"
#include "generated/api/sum.h"
#include "generated/api/where.h"
#include "generated/api/zeros.h"
#include "generated/kernels/_batch_norm_eval.h"
#include "generated/kernels/composite/adaptive_avg_pool2d.h"
#include "generated/kernels/composite/batch_norm.h"
#include "generated/kernels/composite/constant_pad_nd.h"
#include "generated/kernels/composite/dropout.h"
#include "generated/kernels/composite/l1_loss.h"
#include "generated/kernels/composite/layer_norm.h"
#include "generated/kernels/composite/max_pool2d.h"
#include "runtime/core/convert.h"  // pm::torch_kernels_use_fma
#include "runtime/dispatch/grad_mode.h"
#include "runtime/kernels/composite/reduce_loss.h"

namespace kiln {
namespace composite_implicit {
namespace {

void check_floating(const Tensor& t, const char* op, const char* what) {
  KILN_CHECK(t.is_floating_point(), op, "(): expected a floating point ", what, ", got ",
             scalar_type_name(t.dtype()));
}

// A per-channel tensor (C,) reshaped to broadcast against (N, C, ...): (1, C, 1, ...).
Tensor per_channel(const Tensor& t, int64_t ndim) {
  std::vector<int64_t> shape(static_cast<size_t>(ndim), 1);
  shape[1] = t.numel();
  return t.reshape(shape);
}

void check_channel_vector(const Tensor& t, int64_t channels, const char* what) {
  KILN_CHECK(!t.defined() || (t.dim() == 1 && t.sizes()[0] == channels), "batch_norm(): expected ", what,
             " of shape [", channels, "], got ", t.defined() ? shape_str(t.sizes()) : std::string("None"));
}

}  // namespace

// torch's: output_size's checks, then a 1 x 1 output as the mean over the last two dims (what torch
// computes, so its bits and its gradient), other sizes by the bins of _adaptive_avg_pool2d.
Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size) {
  const char* op = "adaptive_avg_pool2d";
  KILN_CHECK(output_size.size() == 2, op, "(): output_size must be 2, got ", shape_str(output_size));
  KILN_CHECK(output_size[0] >= 0 && output_size[1] >= 0, op,
             "(): elements of output_size must be greater than or equal to 0 but received ", shape_str(output_size));
  if (output_size[0] == 1 && output_size[1] == 1) {
    const int64_t last_two[] = {-1, -2};
    return kiln::mean(self, IntArrayRef(last_two, 2), /*keepdim=*/true);
  }
  return kiln::_adaptive_avg_pool2d(self, output_size);
}

Tensor max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(kiln::max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode));
}

namespace {
// y = x * alpha + beta per channel, alpha = invstd * w and beta = b - mean * alpha, both multiply-adds
// fused where torch's AVX2 build fuses them (mean and invstd broadcast over dim 1).
Tensor normalize_per_channel(const Tensor& x, const Tensor& mean, const Tensor& invstd, const Tensor& weight,
                             const Tensor& bias) {
  const int64_t nd = x.dim();
  const ScalarType ct = x.scalar_type();
  const Tensor alpha = weight.defined() ? kiln::mul(invstd, per_channel(weight, nd).to(ct)) : invstd;
  const Tensor shift = bias.defined() ? per_channel(bias, nd).to(ct) : kiln::zeros({}, ct);
  const bool fused = pm::torch_kernels_use_fma();
  const Tensor beta = fused ? kiln::_fma(shift, kiln::neg(mean), alpha) : kiln::sub(shift, kiln::mul(mean, alpha));
  return fused ? kiln::_fma(beta, x, alpha) : kiln::add(kiln::mul(x, alpha), beta);
}

// The output, mean and var_sum of batch_norm's training pass written with ops (their values as the
// fused kernel's where torch's kernel sums alike), for inputs torch runs through its channels-last
// kernel.
std::tuple<Tensor, Tensor, Tensor> batch_norm_train_with_ops(const Tensor& x, const Tensor& weight, const Tensor& bias,
                                                             double eps, int64_t n) {
  const int64_t nd = x.dim();
  const ScalarType ct = x.scalar_type();
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < nd; ++d)
    if (d != 1) dims.push_back(d);
  const Tensor mean = kiln::div(kiln::sum(x, IntArrayRef(dims), /*keepdim=*/true, ScalarType::Float64), n).to(ct);
  const Tensor centered = kiln::sub(x, mean);
  const Tensor var_sum =
      kiln::sum(kiln::mul(centered, centered), IntArrayRef(dims), /*keepdim=*/true, ScalarType::Float64).to(ct);
  const Tensor var = kiln::div(var_sum, n);
  Tensor invstd = kiln::reciprocal(kiln::sqrt(kiln::add(var.to(ScalarType::Float64), eps))).to(ct);
  if (eps == 0) invstd = kiln::where(kiln::eq(var, 0), kiln::zeros({}, ct), invstd);  // torch's InvStd
  return {normalize_per_channel(x, mean, invstd, weight, bias), mean, var_sum};
}
}  // namespace

// Training: normalize with the batch's mean and biased variance over every dim but 1, and
// move the running stats toward the batch's (the running variance is the unbiased one).
// Evaluation: normalize with the running stats.
Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum, double eps, bool cudnn_enabled) {
  KILN_CHECK(input.dim() >= 2, "batch_norm(): expected an input of at least 2 dims (N, C, ...), got ",
             shape_str(input.sizes()));
  check_floating(input, "batch_norm", "input");
  const int64_t nd = input.dim(), channels = input.sizes()[1];
  check_channel_vector(weight, channels, "weight");
  check_channel_vector(bias, channels, "bias");
  check_channel_vector(running_mean, channels, "running_mean");
  check_channel_vector(running_var, channels, "running_var");
  KILN_CHECK(training || (running_mean.defined() && running_var.defined()),
             "batch_norm(): running_mean and running_var must be defined in evaluation mode");
  // torch's autograd refuses the running statistics requiring grad (native_batch_norm has no
  // derivative for them), training or not, whether or not the input does.
  for (const auto& [stat, name] : {std::pair<const Tensor*, const char*>{&running_mean, "running_mean"},
                                  {&running_var, "running_var"}})
    KILN_CHECK(!(GradMode::is_enabled() && stat->defined() && stat->requires_grad()),
               "The function 'native_batch_norm' is not differentiable with respect to argument '", name,
               "'. This input cannot have requires_grad True.");
  if (!training) return kiln::_batch_norm_eval(input, weight, bias, running_mean, running_var, eps);
  // torch 1.13's CPU kernel, rounding for rounding: when training, the batch's mean and sum of
  // squared deviations accumulated in double (_batch_norm_train, one kernel with its fused gradient),
  // invstd = 1 / sqrt(var + eps); then per channel alpha = invstd * w and beta = b - mean * alpha,
  // and y = x * alpha + beta, both multiply-adds fused where torch's AVX2 build fuses them. So a
  // constant channel gives torch's residue and an infinite weight torch's inf - inf. float16/bfloat16
  // compute in float32, rounded once.
  const ScalarType dt = input.scalar_type();
  const ScalarType ct = is_reduced_floating_type(dt) ? ScalarType::Float32 : dt;
  const Tensor x = input.to(ct);
  const int64_t n = channels == 0 ? 0 : input.numel() / channels;
  // torch's contiguous (N, C, *) kernels: fused, (N, C) inputs (one element per channel and
  // sample) included, whose sums the kernel adds in the order of torch's channels-last kernel.
  // Where torch takes its channels-last kernel otherwise (a channels-last input, a single channel),
  // the same math with ops.
  int64_t spatial = 1;
  for (int64_t d = 2; d < nd; ++d) spatial *= input.sizes()[d];
  const bool fused_kernel = x.is_contiguous() && x.is_cpu() && ((spatial > 1 && channels > 1) || spatial == 1);
  const auto pass = fused_kernel ? kiln::_batch_norm_train(x, weight.defined() ? weight.to(ct) : weight,
                                                           bias.defined() ? bias.to(ct) : bias, eps)
                                 : batch_norm_train_with_ops(x, weight, bias, eps, n);
  const Tensor& out = std::get<0>(pass);
  const Tensor& mean = std::get<1>(pass);
  const Tensor& var_sum = std::get<2>(pass);
  if (running_mean.defined() || running_var.defined()) {
    // As batch_norm_cpu_update_stats_template, whose momentum_ is in the parameters' dtype:
    // running_mean = momentum_ * mean + (1 - momentum_) * running_mean in that dtype, and
    // running_var = momentum_ * unbiased + (1 - momentum_) * running_var with the unbiased variance
    // (var_sum / (n - 1), in that dtype) held in double, so the first product and the sum are
    // double's and the second product the dtype's.
    NoGradGuard no_grad;
    const bool is_double = ct == ScalarType::Float64;
    const double m = is_double ? momentum : static_cast<double>(static_cast<float>(momentum));
    const double one_minus_m = is_double ? 1 - momentum : static_cast<double>(1.0f - static_cast<float>(momentum));
    if (running_mean.defined())
      running_mean.copy_(kiln::add(kiln::mul(mean.reshape({channels}), m), kiln::mul(running_mean.to(ct), one_minus_m)));
    if (running_var.defined() && n > 0) {  // n = 1: 0 / 0 = nan, as torch's var_sum / (n - 1)
      const ScalarType f64 = ScalarType::Float64;
      const Tensor unbiased = kiln::div(var_sum.reshape({channels}), n - 1);
      running_var.copy_(
          kiln::add(kiln::mul(unbiased.to(f64), m), kiln::mul(running_var.to(ct), one_minus_m).to(f64)));
    }
  }
  return out.to(dt);
}

// One kernel forward (native_layer_norm) and one backward; with create_graph, the backward is
// written with ops (layer_norm_backward in the formula helpers), so second derivatives work.
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps, bool cudnn_enable) {
  return std::get<0>(kiln::native_layer_norm(input, normalized_shape, weight, bias, eps));
}

// Zeroes each element with probability p and scales the rest by 1 / (1 - p), as torch's CPU
// dropout (native/Dropout.cpp): noise = empty_like(input).bernoulli_(1 - p) / (1 - p), then
// input * noise, so a seed drops the elements torch drops.
Tensor dropout(const Tensor& input, double p, bool train) {
  KILN_CHECK_VALUE(p >= 0 && p <= 1, "dropout(): dropout probability has to be between 0 and 1, but got ", p);
  if (!train || p == 0 || input.numel() == 0) return input;
  check_floating(input, "dropout", "input");
  if (p == 1) return kiln::mul(input, 0);
  Tensor noise = kiln::empty(input.sizes(), input.dtype(), input.device());  // contiguous, as torch's
  noise.bernoulli_(1 - p);
  return kiln::mul(input, kiln::div(noise, 1 - p));
}

// pad = (left, right) pairs from the last dim backwards; negative amounts crop.
Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad, const Scalar& value) {
  const int64_t n = static_cast<int64_t>(pad.size()), nd = self.dim();
  KILN_CHECK(n % 2 == 0, "constant_pad_nd(): Length of pad must be even but instead it equals ", n);
  KILN_CHECK(n / 2 <= nd, "constant_pad_nd(): Length of pad should be no more than twice the number of dimensions "
             "of the input. Pad length is ", n, " while the input has ", nd, " dimensions.");
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  // As torch: pure cropping may leave a dim empty, but once anything is padded every padded dim
  // must keep at least one element.
  const bool pads = std::any_of(pad.begin(), pad.end(), [](int64_t p) { return p > 0; });
  // Hostile pads (found by tools/fuzz.sh) must not overflow: -INT64_MIN, or a size past int64.
  for (int64_t p : pad) KILN_CHECK(p != INT64_MIN, "constant_pad_nd(): padding ", p, " overflows");
  // As torch: every negative pad narrows first (narrow's own errors: an IndexError for a start
  // past the dim), then the sizes are checked.
  Tensor cropped = self;
  for (int64_t k = 0; k < n / 2; ++k) {
    const int64_t d = nd - 1 - k, left = pad[2 * k], right = pad[2 * k + 1];
    if (left < 0) cropped = kiln::narrow(cropped, d, -left, cropped.sizes()[d] + left);
    if (right < 0) cropped = kiln::narrow(cropped, d, 0, cropped.sizes()[d] + right);
  }
  for (int64_t k = 0; k < n / 2; ++k) {
    const int64_t d = nd - 1 - k, left = pad[2 * k], right = pad[2 * k + 1];
    int64_t size = 0;
    KILN_CHECK(!__builtin_add_overflow(shape[d], left, &size) && !__builtin_add_overflow(size, right, &size),
               "constant_pad_nd(): padding (", left, ", ", right, ") of dimension ", d, " overflows its size");
    KILN_CHECK(size > 0 || (size == 0 && !pads), "constant_pad_nd(): The input size ", shape[d], ", plus negative padding ", left, " and ",
               right, " resulted in a negative output size, which is invalid. Check dimension ", d,
               " of your input.");
    shape[d] = size;
  }
  Tensor out = kiln::full(shape, value, self.dtype());
  // Nothing to copy into an empty result, whose padded dims may be huge (an empty input padded by
  // 2^62): narrowing it there would put a view's offset past int64 (found by tools/fuzz.sh).
  // Its graph still reaches self (an empty cropped part, summed to a 0-dim zero), as torch's
  // result requires grad and gives self a zero gradient.
  if (out.numel() == 0) return cropped.requires_grad() ? kiln::add(out, kiln::sum(cropped, self.dtype())) : out;
  Tensor inner = out;
  for (int64_t k = 0; k < n / 2; ++k) {
    const int64_t d = nd - 1 - k;
    inner = kiln::narrow(inner, d, std::max<int64_t>(pad[2 * k], 0), cropped.sizes()[d]);
  }
  inner.copy_(cropped);
  return out;
}

Tensor l1_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  check_floating(self, "l1_loss", "input");
  return reduce_loss(kiln::abs(kiln::sub(self, target)), reduction, "l1_loss");
}

}  // namespace composite_implicit

namespace composite_explicit {

// batch_norm's evaluation pass: y = x * alpha + beta with the running statistics (its gradient is
// torch's, schema/derivatives.yaml). float16/bfloat16 compute in float32, rounded once.
TensorBase batch_norm_eval(const TensorBase& input_, const TensorBase& weight_, const TensorBase& bias_,
                           const TensorBase& running_mean_, const TensorBase& running_var_, double eps) {
  const Tensor input(input_), weight(weight_), bias(bias_), running_mean(running_mean_), running_var(running_var_);
  KILN_CHECK(input.is_floating_point(), "_batch_norm_eval(): expected a floating point input, got ",
             scalar_type_name(input.dtype()));
  KILN_CHECK(input.dim() >= 2, "_batch_norm_eval(): expected an input of at least 2 dims (N, C, ...), got ",
             shape_str(input.sizes()));
  const int64_t channels = input.sizes()[1];
  KILN_CHECK(running_mean.defined() && running_var.defined(),
             "_batch_norm_eval(): running_mean and running_var must be defined");
  for (const auto& [t, what] : {std::pair<const Tensor*, const char*>{&weight, "weight"}, {&bias, "bias"},
                                {&running_mean, "running_mean"}, {&running_var, "running_var"}})
    composite_implicit::check_channel_vector(*t, channels, what);
  const int64_t nd = input.dim();
  const ScalarType dt = input.scalar_type();
  const ScalarType ct = is_reduced_floating_type(dt) ? ScalarType::Float32 : dt;
  const Tensor mean = composite_implicit::per_channel(running_mean, nd).to(ct);
  const Tensor invstd =
      kiln::reciprocal(kiln::sqrt(kiln::add(composite_implicit::per_channel(running_var, nd).to(ct), eps)));
  return composite_implicit::normalize_per_channel(input.to(ct), mean, invstd, weight, bias).to(dt);
}

}  // namespace composite_explicit
}  // namespace kiln
