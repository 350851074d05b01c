// cummax / cummin (running extremum with the position it came from) and logcumsumexp, along one
// dim, as torch's CPU kernels: ties and NaN move the position to the latest one, a NaN stays
// once seen, and logcumsumexp adds in double with torch's log-add-exp (infinities kept exact).
#include <cmath>
#include <limits>
#include <type_traits>

#include "generated/kernels/cummax.h"
#include "generated/kernels/cummin.h"
#include "generated/kernels/logcumsumexp.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/reduction_loops.h"
#include "runtime/kernels/out_checks.h"
#include "runtime/kernels/tensor_memory.h"

namespace kiln {
namespace cpu {
namespace {

template <typename T>
using compare_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

template <typename T>
void running_extremum(const T* in, T* vp, int64_t* ip, const DimSplit& split, bool maximum) {
  const int64_t n = split.n, inner = split.inner;
  for_each_line(split, [&](int64_t, int64_t base) {
    const bool take_max = maximum;
    compare_t<T> best = static_cast<compare_t<T>>(in[base]);
    int64_t at = 0;
    for (int64_t k = 0; k < n; ++k) {
      const compare_t<T> v = static_cast<compare_t<T>>(in[base + k * inner]);
      if (is_nan(v) || (!is_nan(best) && (take_max ? v >= best : v <= best))) {
        best = v;
        at = k;
      }
      vp[base + k * inner] = static_cast<T>(best);
      ip[base + k * inner] = at;
    }
  });
}

std::tuple<TensorBase, TensorBase> cum_extremum(const TensorBase& self, int64_t dim, bool maximum, const char* op) {
  TensorBase values = empty_cpu(self.sizes(), self.dtype());
  TensorBase indices = empty_cpu(self.sizes(), ScalarType::Int64);
  // torch wraps dim only for a non-empty tensor of at least one dim (any dim does for the rest)
  if (self.numel() == 0) return {values, indices};
  const DimSplit split = self.dim() == 0 ? DimSplit::around(self.sizes(), 0, op) : DimSplit::around(self.sizes(), dim, op);
  const TensorBase x = contiguous_cpu(self);
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(x.dtype(), op, [&] {
    running_extremum(static_cast<const scalar_t*>(x.data_ptr()), static_cast<scalar_t*>(values.data_ptr()),
                     static_cast<int64_t*>(indices.data_ptr()), split, maximum);
  });
  return {values, indices};
}

// log(exp(x) + exp(y)) as torch computes it: exact for equal infinities, NaN when either is.
double log_add_exp(double x, double y) {
  const double lo = std::isnan(y) ? y : std::min(x, y);
  const double hi = std::isnan(y) ? y : std::max(x, y);
  if (lo != hi || std::isfinite(lo)) return std::log1p(std::exp(lo - hi)) + hi;
  return x;
}

template <typename T>
void running_logsumexp(const T* in, T* out, const DimSplit& split) {
  const int64_t n = split.n, inner = split.inner;
  for_each_line(split, [&](int64_t, int64_t base) {
    double acc = -std::numeric_limits<double>::infinity();
    for (int64_t k = 0; k < n; ++k) {
      acc = log_add_exp(acc, static_cast<double>(static_cast<compare_t<T>>(in[base + k * inner])));
      out[base + k * inner] = static_cast<T>(static_cast<compare_t<T>>(acc));
    }
  });
}

}  // namespace

std::tuple<TensorBase, TensorBase> cummax(const TensorBase& self, int64_t dim) {
  return cum_extremum(self, dim, /*maximum=*/true, "cummax");
}

std::tuple<TensorBase, TensorBase> cummin(const TensorBase& self, int64_t dim) {
  return cum_extremum(self, dim, /*maximum=*/false, "cummin");
}

TensorBase logcumsumexp_out(const TensorBase& self, int64_t dim, const TensorBase& out) {
  const char* op = "logcumsumexp";
  // torch checks out='s dtype before dim
  KILN_CHECK(!out.defined() || out.dtype() == self.dtype(), op, "(): Expected out tensor to have dtype ",
             scalar_type_name(self.dtype()), ", but got ", scalar_type_name(out.dtype()), " instead");
  const DimSplit split = DimSplit::around(self.sizes(), dim, op);
  check_out_is_not_an_input(out, {&self}, op);
  TensorBase result = empty_cpu(self.sizes(), self.dtype());
  const TensorBase x = contiguous_cpu(self);
  KILN_DISPATCH_FLOATING_TYPES_AND_REDUCED(x.dtype(), op, [&] {
    if (self.numel() > 0) {
      running_logsumexp(static_cast<const scalar_t*>(x.data_ptr()), static_cast<scalar_t*>(result.data_ptr()), split);
    }
  });
  if (!out.defined()) return result;
  TensorBase dst = resized_out(out, self.sizes(), self.dtype(), op);
  copy_into(dst, result, op);
  return dst;
}

}  // namespace cpu
}  // namespace kiln
