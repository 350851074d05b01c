// softmax, log_softmax (numerically stable: the row max is subtracted first) and
// nll_loss with its backward.
#include <cmath>
#include <cstring>

#include "generated/kernels/log_softmax.h"
#include "generated/kernels/nll_loss.h"
#include "generated/kernels/nll_loss_backward.h"
#include "generated/kernels/softmax.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/reduction_loops.h"
#include "runtime/kernels/tensor_memory.h"

namespace kiln {
namespace cpu {
namespace {

TensorBase softmax_impl(const TensorBase& self, int64_t dim, const std::optional<ScalarType>& dtype, bool log,
                        const char* name) {
  ScalarType dt = dtype.value_or(self.dtype());
  const DimSplit split = DimSplit::around(self.sizes(), dim, name);
  // As torch: an empty input is returned in any dtype; the dtype is checked by the kernel.
  if (self.numel() == 0) return empty_cpu(self.sizes(), dt);
  KILN_CHECK(is_floating_type(dt), name, "(): expected a floating point dtype, got ", scalar_type_name(dt));
  const ScalarType compute = opmath_type(dt);  // float16/bfloat16: computed in float32, rounded once
  TensorBase out = empty_cpu(self.sizes(), compute);
  copy_into(out, self, name);
  if (out.numel() == 0) return cast_to(out, dt);
  KILN_DISPATCH_FLOATING_TYPES(compute, name, [&] {
    scalar_t* data = static_cast<scalar_t*>(out.data_ptr());
    const int64_t n = split.n, stride = split.inner;
    for_each_line(split, [&](int64_t, int64_t start) {
      const bool log_result = log;  // a local stays in a register (see for_each_line)
      scalar_t* x = data + start;
      scalar_t max = x[0];
      for (int64_t k = 1; k < n; ++k) max = std::isnan(x[k * stride]) || x[k * stride] > max ? x[k * stride] : max;
      // No special case for infinities: as torch, a row with +inf or only -inf gives NaN.
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) sum += std::exp(static_cast<double>(x[k * stride] - max));
      if (log_result) {
        const scalar_t shift = max + static_cast<scalar_t>(std::log(sum));
        for (int64_t k = 0; k < n; ++k) x[k * stride] -= shift;
      } else {
        for (int64_t k = 0; k < n; ++k)
          x[k * stride] = static_cast<scalar_t>(std::exp(static_cast<double>(x[k * stride] - max)) / sum);
      }
    });
  });
  return cast_to(out, dt);
}

struct NllShape {
  int64_t batch, classes;
  bool batched;
};

NllShape check_nll(const TensorBase& self, const TensorBase& target, const TensorBase& weight, int64_t reduction) {
  KILN_CHECK(self.dim() == 1 || self.dim() == 2, "nll_loss(): input tensor should be 1D or 2D, got ", self.dim(), "D");
  KILN_CHECK(target.dtype() == ScalarType::Int64 || target.dtype() == ScalarType::Int32,
             "nll_loss(): expected target of an integer dtype (int64), got ", scalar_type_name(target.dtype()));
  KILN_CHECK(reduction >= 0 && reduction <= 2, "nll_loss(): reduction must be 0 (none), 1 (mean) or 2 (sum), got ",
             reduction);
  NllShape s{self.dim() == 2 ? self.sizes()[0] : 1, self.sizes()[self.dim() - 1], self.dim() == 2};
  KILN_CHECK(target.dim() == (s.batched ? 1 : 0) && (!s.batched || target.sizes()[0] == s.batch),
             "nll_loss(): expected target of shape ", s.batched ? "[" + std::to_string(s.batch) + "]" : "[]",
             " for input of shape ", shape_str(self.sizes()), ", got ", shape_str(target.sizes()));
  KILN_CHECK(!weight.defined() || (weight.dim() == 1 && weight.sizes()[0] == s.classes),
             "nll_loss(): weight tensor should be defined either for all ", s.classes,
             " classes or no classes but got weight tensor of shape: ", shape_str(weight.sizes()));
  return s;
}

// Per-sample (target class, weight), validating class indices.
template <typename F>
void for_each_sample(const TensorBase& target, const TensorBase& weight, const NllShape& s, int64_t ignore_index,
                     F f) {
  TensorBase t = cast_to(contiguous_cpu(target), ScalarType::Int64);
  TensorBase w = weight.defined() ? cast_to(contiguous_cpu(weight), ScalarType::Float64) : TensorBase();
  const int64_t* tp = static_cast<const int64_t*>(t.data_ptr());
  const double* wp = w.defined() ? static_cast<const double*>(w.data_ptr()) : nullptr;
  for (int64_t i = 0; i < s.batch; ++i) {
    const int64_t c = tp[i];
    if (c == ignore_index) continue;
    KILN_CHECK_INDEX(c >= 0 && c < s.classes, "nll_loss(): target ", c, " is out of bounds (", s.classes,
                     " classes)");
    f(i, c, wp ? wp[c] : 1.0);
  }
}

}  // namespace

TensorBase softmax(const TensorBase& self, int64_t dim, const std::optional<ScalarType>& dtype) {
  return softmax_impl(self, dim, dtype, false, "softmax");
}

TensorBase log_softmax(const TensorBase& self, int64_t dim, const std::optional<ScalarType>& dtype) {
  return softmax_impl(self, dim, dtype, true, "log_softmax");
}

TensorBase nll_loss(const TensorBase& self, const TensorBase& target, const TensorBase& weight, int64_t reduction,
                    int64_t ignore_index) {
  NllShape s = check_nll(self, target, weight, reduction);
  KILN_CHECK(self.is_floating_point(), "nll_loss(): expected a floating point input, got ",
             scalar_type_name(self.dtype()));
  TensorBase x = cast_to(contiguous_cpu(self), ScalarType::Float64);
  const double* xp = static_cast<const double*>(x.data_ptr());
  TensorBase result;
  if (reduction == 0) {
    result = empty_cpu(s.batched ? DimVector{s.batch} : DimVector{}, ScalarType::Float64);
    double* rp = static_cast<double*>(result.data_ptr());
    for (int64_t i = 0; i < s.batch; ++i) rp[i] = 0;
    for_each_sample(target, weight, s, ignore_index,
                    [&](int64_t i, int64_t c, double w) { rp[i] = -w * xp[i * s.classes + c]; });
  } else {
    double total = 0, weight_sum = 0;
    for_each_sample(target, weight, s, ignore_index, [&](int64_t i, int64_t c, double w) {
      total -= w * xp[i * s.classes + c];
      weight_sum += w;
    });
    result = empty_cpu({}, ScalarType::Float64);
    // mean over no (non-ignored) samples is nan, as in PyTorch.
    *static_cast<double*>(result.data_ptr()) = reduction == 1 ? total / weight_sum : total;
  }
  return cast_to(result, self.dtype());
}

TensorBase nll_loss_backward(const TensorBase& grad_output, const TensorBase& self, const TensorBase& target,
                             const TensorBase& weight, int64_t reduction, int64_t ignore_index) {
  NllShape s = check_nll(self, target, weight, reduction);
  KILN_CHECK(self.is_floating_point(), "nll_loss_backward(): expected a floating point input, got ",
             scalar_type_name(self.dtype()));
  // grad_output has the loss's shape: one value per sample without reduction, else a scalar.
  const DimVector loss_shape = reduction == 0 && s.batched ? DimVector{s.batch} : DimVector{};
  KILN_CHECK(grad_output.sizes() == IntArrayRef(loss_shape), "nll_loss_backward(): expected grad_output of shape ",
             shape_str(loss_shape), ", got ", shape_str(grad_output.sizes()));
  TensorBase g = cast_to(contiguous_cpu(grad_output), ScalarType::Float64);
  const double* gp = static_cast<const double*>(g.data_ptr());
  TensorBase grad_input = empty_cpu(self.sizes(), ScalarType::Float64);
  double* out = static_cast<double*>(grad_input.data_ptr());
  std::memset(out, 0, static_cast<size_t>(grad_input.numel()) * sizeof(double));
  double weight_sum = 0;
  if (reduction == 1) for_each_sample(target, weight, s, ignore_index, [&](int64_t, int64_t, double w) { weight_sum += w; });
  for_each_sample(target, weight, s, ignore_index, [&](int64_t i, int64_t c, double w) {
    const double go = reduction == 0 ? gp[i] : gp[0];
    out[i * s.classes + c] = reduction == 1 ? -w * go / weight_sum : -w * go;
  });
  return cast_to(grad_input, self.dtype());
}

}  // namespace cpu
}  // namespace kiln
