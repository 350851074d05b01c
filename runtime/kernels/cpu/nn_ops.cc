// softmax, log_softmax (numerically stable: the line's max is subtracted first), their gradients
// (_softmax_backward_data, _log_softmax_backward_data: one pass per line) and nll_loss with its
// backward. float32 and the 16-bit floats run the vector loops of vector_softmax.h; float64 the
// scalar loops here.
#include <cmath>
#include <cstring>
#include <vector>

#include "generated/kernels/_log_softmax_backward_data.h"
#include "generated/kernels/_softmax_backward_data.h"
#include "generated/kernels/log_softmax.h"
#include "generated/kernels/nll_loss.h"
#include "generated/kernels/nll_loss_backward.h"
#include "generated/kernels/softmax.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/reduced_float_convert.h"
#include "runtime/kernels/cpu/reduction_loops.h"
#include "runtime/kernels/cpu/torch_vec_reduce.h"
#include "runtime/kernels/cpu/vector_softmax.h"
#include "runtime/kernels/tensor_memory.h"

namespace kiln {
namespace cpu {
namespace {

// `t` as a contiguous tensor of dtype `dt` (itself when it already is one).
TensorBase contiguous_as(const TensorBase& t, ScalarType dt) {
  if (t.dtype() == dt) return contiguous_cpu(t);
  TensorBase out = empty_cpu(t.sizes(), dt);
  copy_into(out, t, "contiguous");
  return out;
}

// A per-thread float32 buffer of at least n elements (the 16-bit floats' rows, widened).
float* row_buffer(int which, int64_t n) {
  thread_local std::vector<float> buffers[3];
  std::vector<float>& b = buffers[which];
  if (static_cast<int64_t>(b.size()) < n) b.resize(static_cast<size_t>(n));
  return b.data();
}

// softmax / log_softmax of the contiguous x (dtype float32, float16 or bfloat16) along the split's
// dim into out (contiguous, x's dtype), in float32 vector loops (runtime/kernels/cpu/vector_softmax.h):
// lines along a last dim (inner 1) one at a time, the 16-bit floats widened to a float32 row and
// rounded once; other dims as columns of float32 blocks.
// `last`: dim is the last dim. torch picks its kernel by that, not by the size of the dims after it, so a
// dim followed only by size-1 dims ((B, T, 1) over T) takes the columns' loop too.
TensorBase softmax_vector(const TensorBase& x, const DimSplit& split, bool log, bool last) {
  const ScalarType dt = x.dtype();
  const bool columns = split.inner != 1 || !last;
  if (columns && dt != ScalarType::Float32) {
    return cast_to(softmax_vector(contiguous_as(x, ScalarType::Float32), split, log, last), dt);
  }
  TensorBase out = empty_cpu(x.sizes(), dt);
  const int64_t n = split.n;
  if (columns) {
    const float* xp = static_cast<const float*>(x.data_ptr());
    float* yp = static_cast<float*>(out.data_ptr());
    const int64_t inner = split.inner;
    for_each_column_chunk(split, [&](int64_t o, int64_t c, int64_t width) {
      const int64_t at = o * n * inner + c;
      vec::softmax_columns(xp + at, yp + at, n, inner, width, log);
    });
    return out;
  }
  if (dt == ScalarType::Float32) {
    const float* xp = static_cast<const float*>(x.data_ptr());
    float* yp = static_cast<float*>(out.data_ptr());
    for_each_line(split, [=](int64_t, int64_t start) { vec::softmax_row(xp + start, yp + start, n, log); });
    return out;
  }
  KILN_DISPATCH_SWITCH(dt, "softmax", false, KILN_REDUCED_FLOATING_CASES([&] {
    const scalar_t* xp = static_cast<const scalar_t*>(x.data_ptr());
    scalar_t* yp = static_cast<scalar_t*>(out.data_ptr());
    for_each_line(split, [=](int64_t, int64_t start) {
      float* row = row_buffer(0, n);
      convert_run(xp + start, row, n);
      vec::softmax_row(row, row, n, log);
      convert_run(row, yp + start, n);
    });
  }));
  return out;
}

TensorBase softmax_impl(const TensorBase& self, int64_t dim, const std::optional<ScalarType>& dtype, bool log,
                        const char* name) {
  ScalarType dt = dtype.value_or(self.dtype());
  const DimSplit split = DimSplit::around(self.sizes(), dim, name);
  // As torch: an empty input is returned in any dtype; the dtype is checked by the kernel.
  if (self.numel() == 0) return empty_cpu(self.sizes(), dt);
  KILN_CHECK(is_floating_type(dt), name, "(): expected a floating point dtype, got ", scalar_type_name(dt));
  if (dt != ScalarType::Float64) {
    const bool last = self.dim() == 0 || (dim < 0 ? dim + self.dim() : dim) == self.dim() - 1;
    return softmax_vector(contiguous_as(self, dt), split, log, last);
  }
  // float64: scalar loops, in place on a copy.
  TensorBase out = empty_cpu(self.sizes(), dt);
  copy_into(out, self, name);
  KILN_DISPATCH_FLOATING_TYPES(dt, name, [&] {
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
        const scalar_t log_sum = static_cast<scalar_t>(std::log(sum));
        for (int64_t k = 0; k < n; ++k) x[k * stride] = (x[k * stride] - max) - log_sum;
      } else {
        for (int64_t k = 0; k < n; ++k)
          x[k * stride] = static_cast<scalar_t>(std::exp(static_cast<double>(x[k * stride] - max)) / sum);
      }
    });
  });
  return out;
}

// softmax's (log: log_softmax's) gradient from grad_output and the forward's output, along dim, in
// their dtype. As torch's CPU kernels, the result has output's dtype whatever input_dtype says (the
// autograd engine casts it to the input's).
TensorBase softmax_backward_impl(const TensorBase& grad_output, const TensorBase& output, int64_t dim,
                                 ScalarType input_dtype, bool log, const char* name) {
  KILN_CHECK(grad_output.sizes() == output.sizes(), name, "(): grad_output of shape ", shape_str(grad_output.sizes()),
             " does not match output of shape ", shape_str(output.sizes()));
  const ScalarType dt = output.dtype();
  KILN_CHECK(grad_output.dtype() == dt, name, "(): expected grad_output of output's dtype ", scalar_type_name(dt),
             ", got ", scalar_type_name(grad_output.dtype()));
  KILN_CHECK(is_floating_type(dt) && is_floating_type(input_dtype), name,
             "(): expected floating point dtypes, got output ", scalar_type_name(dt), " and input_dtype ",
             scalar_type_name(input_dtype));
  const DimSplit split = DimSplit::around(output.sizes(), dim, name);
  if (output.numel() == 0) return empty_cpu(output.sizes(), dt);
  const bool last = output.dim() == 0 || (dim < 0 ? dim + output.dim() : dim) == output.dim() - 1;
  if (dt == ScalarType::Float32 && !last) {
    // torch's kernel for a dim that is not the last (also one followed only by size-1 dims)
    const TensorBase g = contiguous_cpu(grad_output), o = contiguous_cpu(output);
    TensorBase out = empty_cpu(output.sizes(), dt);
    const float* gp = static_cast<const float*>(g.data_ptr());
    const float* op = static_cast<const float*>(o.data_ptr());
    float* ip = static_cast<float*>(out.data_ptr());
    const int64_t n = split.n, inner = split.inner;
    for_each_column_chunk(split, [&](int64_t outer, int64_t c, int64_t width) {
      const int64_t at = outer * n * inner + c;
      vec::softmax_backward_columns(gp + at, op + at, ip + at, n, inner, width, log);
    });
    return out;
  }
  if (dt != ScalarType::Float64 && split.inner == 1) {
    const TensorBase g = contiguous_cpu(grad_output), o = contiguous_cpu(output);
    TensorBase out = empty_cpu(output.sizes(), dt);
    const int64_t n = split.n;
    KILN_DISPATCH_SWITCH(dt, name, false, KILN_DTYPE_CASE(Float32, float, [&] {
      const float* gp = static_cast<const float*>(g.data_ptr());
      const float* op = static_cast<const float*>(o.data_ptr());
      float* ip = static_cast<float*>(out.data_ptr());
      for_each_line(split, [=](int64_t, int64_t start) {
        // torch's _vec_host_softmax_backward_lastdim: sum(g * o) by map2_reduce_all (log: sum(g) by
        // reduce_all), then (g - sum) * o (log: g - exp(o) * sum)
        const float* gl = gp + start;
        const float* ol = op + start;
        const float s = log ? torch_vec::product_sum(gl, static_cast<const float*>(nullptr),
                                                     static_cast<const float*>(nullptr), n)
                            : torch_vec::product_sum(gl, ol, static_cast<const float*>(nullptr), n);
        vec::softmax_backward_row_given_sum(gl, ol, ip + start, n, log, s);
      });
    }) KILN_REDUCED_FLOATING_CASES([&] {
      const scalar_t* gp = static_cast<const scalar_t*>(g.data_ptr());
      const scalar_t* op = static_cast<const scalar_t*>(o.data_ptr());
      scalar_t* ip = static_cast<scalar_t*>(out.data_ptr());
      for_each_line(split, [=](int64_t, int64_t start) {
        float* gr = row_buffer(0, n);
        float* orow = row_buffer(1, n);
        convert_run(gp + start, gr, n);
        convert_run(op + start, orow, n);
        vec::softmax_backward_row(gr, orow, gr, n, log);
        convert_run(gr, ip + start, n);
      });
    }));
    return out;
  }
  // Other dims, and float64: scalar loops in the compute dtype, sums in double.
  const ScalarType compute = opmath_type(dt);
  const TensorBase g = contiguous_as(grad_output, compute), o = contiguous_as(output, compute);
  TensorBase out = empty_cpu(output.sizes(), compute);
  KILN_DISPATCH_FLOATING_TYPES(compute, name, [&] {
    const scalar_t* gp = static_cast<const scalar_t*>(g.data_ptr());
    const scalar_t* op = static_cast<const scalar_t*>(o.data_ptr());
    scalar_t* ip = static_cast<scalar_t*>(out.data_ptr());
    const int64_t n = split.n, stride = split.inner;
    for_each_line(split, [=](int64_t, int64_t start) {
      const scalar_t* gl = gp + start;
      const scalar_t* ol = op + start;
      scalar_t* il = ip + start;
      double sum = 0;
      for (int64_t k = 0; k < n; ++k)
        sum += log ? static_cast<double>(gl[k * stride]) : static_cast<double>(gl[k * stride] * ol[k * stride]);
      const scalar_t s = static_cast<scalar_t>(sum);
      for (int64_t k = 0; k < n; ++k) {
        const scalar_t gv = gl[k * stride], ov = ol[k * stride];
        il[k * stride] = log ? gv - std::exp(ov) * s : ov * (gv - s);
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

// The mean or sum of a float32/float64 nll_loss as torch 1.13's nll_loss_out_frame computes it, so
// a cross-entropy loss prints as torch's: in the input's type, -x (or -x * w) added into 8 partial
// sums that cascade every 2^level_power samples (level_power = max(4, ceil(log2 batch) / 8)), the
// partials then added in order; the mean divides by the weight sum (or the count of samples not
// ignored). 0 / 0 (every sample ignored) is NaN, as torch's.
template <typename T>
T nll_reduce_in_torch_order(const T* xp, int64_t row_stride, int64_t class_stride, const TensorBase& target,
                            const TensorBase& weight, const NllShape& s, int64_t reduction, int64_t ignore_index,
                            T* total_weight_out = nullptr) {
  constexpr int64_t kLevels = 8;
  int64_t ceil_log2 = 1;  // c10::utils::CeilLog2: 1 up to 2
  if (s.batch > 2) {
    ceil_log2 = 0;
    for (uint64_t v = static_cast<uint64_t>(s.batch) - 1; v; v >>= 1) ++ceil_log2;
  }
  const int64_t level_power = std::max<int64_t>(4, ceil_log2 / kLevels);
  const int64_t level_mask = (int64_t(1) << level_power) - 1;
  TensorBase w = weight.defined() ? cast_to(contiguous_cpu(weight), CppTypeToScalarType<T>::value) : TensorBase();
  const T* wp = w.defined() ? static_cast<const T*>(w.data_ptr()) : nullptr;
  T loss_sums[kLevels] = {}, weight_sums[kLevels] = {};
  int64_t ignored = 0;
  TensorBase t = cast_to(contiguous_cpu(target), ScalarType::Int64);
  const int64_t* tp = static_cast<const int64_t*>(t.data_ptr());
  for (int64_t b = 0; b < s.batch; ++b) {
    const int64_t c = tp[b];
    if (c == ignore_index) {
      ++ignored;
      continue;
    }
    KILN_CHECK_INDEX(c >= 0 && c < s.classes, "nll_loss(): target ", c, " is out of bounds (", s.classes,
                     " classes)");
    const T data = xp[b * row_stride + c * class_stride];
    if (wp) {
      loss_sums[0] -= data * wp[c];
      weight_sums[0] += wp[c];
    } else {
      loss_sums[0] -= data;
    }
    for (int64_t j = 0; j + 1 < kLevels; ++j) {
      if ((b & (level_mask << (j * level_power))) != 0) break;
      weight_sums[j + 1] += weight_sums[j];
      loss_sums[j + 1] += loss_sums[j];
      weight_sums[j] = 0;
      loss_sums[j] = 0;
    }
  }
  T total_weight = 0, total = 0;
  if (wp) {
    for (T v : weight_sums) total_weight += v;
  } else {
    total_weight = static_cast<T>(s.batch - ignored);
  }
  for (T v : loss_sums) total += v;
  if (total_weight_out) *total_weight_out = total_weight;
  return reduction == 1 ? total / total_weight : total;
}

}  // namespace

TensorBase softmax(const TensorBase& self, int64_t dim, const std::optional<ScalarType>& dtype) {
  return softmax_impl(self, dim, dtype, false, "softmax");
}

TensorBase log_softmax(const TensorBase& self, int64_t dim, const std::optional<ScalarType>& dtype) {
  return softmax_impl(self, dim, dtype, true, "log_softmax");
}

TensorBase softmax_backward_data(const TensorBase& grad_output, const TensorBase& output, int64_t dim,
                                 ScalarType input_dtype) {
  return softmax_backward_impl(grad_output, output, dim, input_dtype, false, "_softmax_backward_data");
}

TensorBase log_softmax_backward_data(const TensorBase& grad_output, const TensorBase& output, int64_t dim,
                                     ScalarType input_dtype) {
  return softmax_backward_impl(grad_output, output, dim, input_dtype, true, "_log_softmax_backward_data");
}

// The input is read where it lies, in its own dtype (element (i, c) at i * strides[0] + c *
// strides[-1]); float32/float64 reduce in torch's order and type (nll_reduce_in_torch_order), the
// 16-bit floats accumulate in double, rounded once to the input's dtype.
TensorBase nll_loss(const TensorBase& self, const TensorBase& target, const TensorBase& weight, int64_t reduction,
                    int64_t ignore_index) {
  NllShape s = check_nll(self, target, weight, reduction);
  KILN_CHECK(self.is_floating_point(), "nll_loss(): expected a floating point input, got ",
             scalar_type_name(self.dtype()));
  const int64_t row_stride = s.batched ? self.strides()[0] : 0, class_stride = self.strides()[self.dim() - 1];
  TensorBase result;
  KILN_DISPATCH_FLOATING_TYPES_AND_REDUCED(self.dtype(), "nll_loss", [&] {
    const scalar_t* xp = static_cast<const scalar_t*>(self.data_ptr());
    const auto x = [&](int64_t i, int64_t c) { return static_cast<double>(xp[i * row_stride + c * class_stride]); };
    if (reduction == 0) {
      result = empty_cpu(s.batched ? DimVector{s.batch} : DimVector{}, self.dtype());
      scalar_t* rp = static_cast<scalar_t*>(result.data_ptr());
      for (int64_t i = 0; i < s.batch; ++i) rp[i] = scalar_t(0);
      for_each_sample(target, weight, s, ignore_index,
                      [&](int64_t i, int64_t c, double w) { rp[i] = static_cast<scalar_t>(-w * x(i, c)); });
    } else if constexpr (std::is_same_v<scalar_t, float> || std::is_same_v<scalar_t, double>) {
      result = empty_cpu({}, self.dtype());
      *static_cast<scalar_t*>(result.data_ptr()) =
          nll_reduce_in_torch_order<scalar_t>(xp, row_stride, class_stride, target, weight, s, reduction, ignore_index);
    } else {
      double total = 0, weight_sum = 0;
      for_each_sample(target, weight, s, ignore_index, [&](int64_t i, int64_t c, double w) {
        total -= w * x(i, c);
        weight_sum += w;
      });
      result = empty_cpu({}, self.dtype());
      // mean over no (non-ignored) samples is nan, as in PyTorch.
      *static_cast<scalar_t*>(result.data_ptr()) = static_cast<scalar_t>(reduction == 1 ? total / weight_sum : total);
    }
  });
  return result;
}

// grad_input in the input's dtype: zeros, and -w * grad_output (/ the weight sum for a mean) at
// each sample's target class.
TensorBase nll_loss_backward(const TensorBase& grad_output, const TensorBase& self, const TensorBase& target,
                             const TensorBase& weight, int64_t reduction, int64_t ignore_index) {
  NllShape s = check_nll(self, target, weight, reduction);
  KILN_CHECK(self.is_floating_point(), "nll_loss_backward(): expected a floating point input, got ",
             scalar_type_name(self.dtype()));
  // grad_output has the loss's shape: one value per sample without reduction, else a scalar.
  const DimVector loss_shape = reduction == 0 && s.batched ? DimVector{s.batch} : DimVector{};
  KILN_CHECK(grad_output.sizes() == IntArrayRef(loss_shape), "nll_loss_backward(): expected grad_output of shape ",
             shape_str(loss_shape), ", got ", shape_str(grad_output.sizes()));
  // One value per sample at most: small.
  TensorBase g = cast_to(contiguous_cpu(grad_output), ScalarType::Float64);
  const double* gp = static_cast<const double*>(g.data_ptr());
  TensorBase grad_input = empty_cpu(self.sizes(), self.dtype());
  // +0 is all zero bits in every floating dtype.
  std::memset(grad_input.data_ptr(), 0, static_cast<size_t>(grad_input.numel()) * element_size(self.dtype()));
  double weight_sum = 0;
  if (reduction == 1) for_each_sample(target, weight, s, ignore_index, [&](int64_t, int64_t, double w) { weight_sum += w; });
  KILN_DISPATCH_FLOATING_TYPES_AND_REDUCED(self.dtype(), "nll_loss_backward", [&] {
    scalar_t* out = static_cast<scalar_t*>(grad_input.data_ptr());
    if constexpr (std::is_same_v<scalar_t, float> || std::is_same_v<scalar_t, double>) {
      if (reduction == 1) {
        // torch's nll_loss_backward_out_frame: grad = -(grad_output / total_weight) in the input's type,
        // the total weight summed as its forward sums it, then w * grad at each sample's target
        const scalar_t* xp = static_cast<const scalar_t*>(self.data_ptr());
        const int64_t row_stride = s.batched ? self.strides()[0] : 0, class_stride = self.strides()[self.dim() - 1];
        scalar_t total_weight = 0;
        nll_reduce_in_torch_order<scalar_t>(xp, row_stride, class_stride, target, weight, s, reduction, ignore_index,
                                            &total_weight);
        const scalar_t grad = -(static_cast<scalar_t>(gp[0]) / total_weight);
        for_each_sample(target, weight, s, ignore_index, [&](int64_t i, int64_t c, double w) {
          out[i * s.classes + c] = weight.defined() ? static_cast<scalar_t>(static_cast<scalar_t>(w) * grad) : grad;
        });
        return;
      }
    }
    for_each_sample(target, weight, s, ignore_index, [&](int64_t i, int64_t c, double w) {
      const double go = reduction == 0 ? gp[i] : gp[0];
      out[i * s.classes + c] = static_cast<scalar_t>(reduction == 1 ? -w * go / weight_sum : -w * go);
    });
  });
  return grad_input;
}

}  // namespace cpu
}  // namespace kiln
