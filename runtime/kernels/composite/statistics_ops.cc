// var, std, logsumexp and norm written with reductions and pointwise ops. norm's gradient (and
// second derivative) comes from those ops' formulas; var, std and logsumexp compute through the
// private ops _var, _std and _logsumexp, whose gradients are torch's formulas (derivatives.yaml).
#include <algorithm>
#include <cmath>
#include <vector>

#include "generated/api/_logsumexp.h"
#include "generated/api/_norm2.h"
#include "generated/api/_norm2_lastdim.h"
#include "generated/api/_std.h"
#include "generated/api/_var.h"
#include "generated/api/add.h"
#include "generated/api/abs.h"
#include "generated/api/amax.h"
#include "generated/api/amin.h"
#include "generated/api/detach.h"
#include "generated/api/div.h"
#include "generated/api/eq.h"
#include "generated/api/exp.h"
#include "generated/api/isinf.h"
#include "generated/api/isnan.h"
#include "generated/api/log.h"
#include "generated/api/mean.h"
#include "generated/api/mul.h"
#include "generated/api/ne.h"
#include "generated/api/ones_like.h"
#include "generated/api/pow.h"
#include "generated/api/sign.h"
#include "generated/api/sqrt.h"
#include "generated/api/squeeze.h"
#include "generated/api/sub.h"
#include "generated/api/sum.h"
#include "generated/api/where.h"
#include "generated/api/zeros_like.h"
#include "generated/kernels/_logsumexp.h"
#include "generated/kernels/_std.h"
#include "generated/kernels/_var.h"
#include "generated/kernels/composite/logsumexp.h"
#include "generated/kernels/composite/norm.h"
#include "generated/kernels/composite/std.h"
#include "generated/kernels/composite/var.h"
#include "runtime/dispatch/grad_mode.h"
#include "runtime/kernels/shape_rules.h"

namespace kiln {
namespace composite_implicit {
// (shared with the composite_explicit kernels below)
namespace stats {

// torch's CPU std/var of float32 accumulate in double and round to float32 only at the end (after
// the square root for std): reduced to one element (std_var_all_cpu), the float32 mean and then
// sum((x - mean)^2) in double; per dim, Welford's updates in double. Both are exact to ~1e-16 before
// that rounding, so kiln's two passes in double (about the float32 mean) round to torch's float32
// bits: `(x - x.mean()) / (x.std() + eps)` (normalised returns) is torch's. float64 stays in float64.
// float16/bfloat16 likewise: torch's Welford runs in double from the unrounded values, so kiln's
// mean too is taken in double for them (a bfloat16 mean of 3e38s rounds, and its squares overflow).
bool in_double(const Tensor& self) {
  return self.dtype() == ScalarType::Float32 || self.dtype() == ScalarType::Float16 ||
         self.dtype() == ScalarType::BFloat16;
}
bool reduced(const Tensor& self) {
  return self.dtype() == ScalarType::Float16 || self.dtype() == ScalarType::BFloat16;
}

// sum((x - mean)^2) / max(N - correction, 0) over `dim` (every dim when absent or empty); in double
// for float32 (in_double: the caller rounds it to the input's dtype).
void check_floating(const Tensor& self, const char* op) {
  KILN_CHECK(self.is_floating_point(), op, "(): std and var only support floating point and complex dtypes, got ",
             scalar_type_name(self.dtype()));
}

Tensor variance(const Tensor& self, const std::optional<IntArrayRef>& dim, double correction, bool keepdim,
                const char* op) {
  check_floating(self, op);
  std::vector<int64_t> dims;
  if (dim && !dim->empty()) {
    dims.assign(dim->begin(), dim->end());
  } else {
    for (int64_t d = 0; d < self.dim(); ++d) dims.push_back(d);
  }
  check_unique_dims(dims, self.dim(), op);
  int64_t n = 1;
  if (self.dim() > 0)  // a 0-dim tensor is one element whatever the dims
    for (int64_t d : dims) n *= self.sizes()[wrap_dim(d, self.dim(), op)];
  // torch reduces to one element (float32/float64) with std_var_all_cpu, a sum-based mean; every other
  // reduction runs Welford's updates in double, where a slice of one repeated value has exactly that
  // value as its mean (variance 0: 19 copies of 88.7 or of 3.4e38, whose float32 sum overflows).
  const bool welford = reduced(self) || (n > 0 && self.numel() / n != 1);
  const Tensor src = reduced(self) || (welford && in_double(self)) ? self.to(ScalarType::Float64) : self;
  Tensor mean = kiln::mean(src, IntArrayRef(dims), /*keepdim=*/true);
  if (welford && self.numel() > 0) {
    const Tensor lo = kiln::amin(src, IntArrayRef(dims), /*keepdim=*/true);
    mean = kiln::where(kiln::eq(lo, kiln::amax(src, IntArrayRef(dims), /*keepdim=*/true)), lo, mean);
  }
  const Tensor centered = in_double(self) ? kiln::sub(src.to(ScalarType::Float64), mean.to(ScalarType::Float64))
                                    : kiln::sub(self, mean);
  const Tensor squares = kiln::sum(kiln::mul(centered, centered), IntArrayRef(dims), keepdim);
  return kiln::div(squares, std::max(static_cast<double>(n) - correction, 0.0));
}

// sqrt with a zero gradient where the variance is 0 (torch's std backward masks it there; the
// plain root would give 0 * inf = nan for a constant input).
Tensor std_of(const Tensor& variance) {
  const Tensor zero = kiln::eq(variance, 0);
  const Tensor safe = kiln::where(zero, kiln::add(kiln::zeros_like(variance), 1), variance);
  return kiln::where(zero, variance, kiln::sqrt(safe));
}

double correction_of(const std::optional<Scalar>& correction) {
  return correction ? correction->to_double() : 1.0;
}

}  // namespace stats

Tensor var(const Tensor& self, bool unbiased) {
  stats::check_floating(self, "var");
  return kiln::_var(self, std::nullopt, unbiased ? 1 : 0, false);
}

Tensor var_dim(const Tensor& self, const std::optional<IntArrayRef>& dim, bool unbiased, bool keepdim) {
  stats::check_floating(self, "var");
  return kiln::_var(self, dim, unbiased ? 1 : 0, keepdim);
}

Tensor var_correction(const Tensor& self, const std::optional<IntArrayRef>& dim,
                      const std::optional<Scalar>& correction, bool keepdim) {
  stats::check_floating(self, "var");
  return kiln::_var(self, dim, stats::correction_of(correction), keepdim);
}

Tensor std(const Tensor& self, bool unbiased) {
  stats::check_floating(self, "std");
  return kiln::_std(self, std::nullopt, unbiased ? 1 : 0, false);
}

Tensor std_dim(const Tensor& self, const std::optional<IntArrayRef>& dim, bool unbiased, bool keepdim) {
  stats::check_floating(self, "std");
  return kiln::_std(self, dim, unbiased ? 1 : 0, keepdim);
}

Tensor std_correction(const Tensor& self, const std::optional<IntArrayRef>& dim,
                      const std::optional<Scalar>& correction, bool keepdim) {
  stats::check_floating(self, "std");
  return kiln::_std(self, dim, stats::correction_of(correction), keepdim);
}

Tensor logsumexp(const Tensor& self, IntArrayRef dim, bool keepdim) {
  check_unique_dims(dim, self.dim(), "logsumexp");  // (and in range: errors name logsumexp, not amax)
  return kiln::_logsumexp(self.is_floating_point() ? self : self.to(ScalarType::Float32), dim, keepdim);
}

namespace {
// The p-th root of a sum of |x|^p, with a zero gradient where the sum is 0 (as torch's
// norm backward; the plain root would give 0 / 0 there). `safe` keeps the unused branch finite.
Tensor root_of_sum(const Tensor& sum, double p) {
  const Tensor zero = kiln::eq(sum, 0);
  const Tensor safe = kiln::where(zero, kiln::add(kiln::zeros_like(sum), 1), sum);
  const Tensor root = p == 2 ? kiln::sqrt(safe) : kiln::pow(safe, 1.0 / p);
  return kiln::where(zero, kiln::zeros_like(sum), root);
}

Tensor p_norm(const Tensor& self, double p, IntArrayRef dim, bool keepdim) {
  KILN_CHECK(self.is_floating_point(), "norm(): input dtype should be a floating point dtype, got ",
             scalar_type_name(self.dtype()));
  check_unique_dims(dim, self.dim(), "norm");
  const std::optional<IntArrayRef> dims = dim;
  // the 2-norm first: over the last dim of a contiguous float32 tensor, torch's own kernel (its bits);
  // else squares, which need no |x| and no test for zeros (two passes over x saved)
  if (p == 2 && self.scalar_type() == ScalarType::Float32 && self.is_contiguous() && dim.size() == 1 &&
      self.dim() > 0 && wrap_dim(dim[0], self.dim(), "norm") == self.dim() - 1)
    return kiln::_norm2_lastdim(self, keepdim);
  if (p == 2) return root_of_sum(kiln::sum(kiln::mul(self, self), dims, keepdim), p);
  const Tensor a = kiln::abs(self);
  if (std::isinf(p)) {
    // torch 1.13's norm of an empty tensor is 0 for p = +-inf too (over any dims; linalg.vector_norm
    // raises instead, in Python): a sum of the empty |x| gives those zeros, in the result's shape.
    if (self.numel() == 0) return kiln::sum(a, std::optional<IntArrayRef>(dim), keepdim);
    return p > 0 ? kiln::amax(a, dim, keepdim) : kiln::amin(a, dim, keepdim);
  }
  // p = 0: the count of non-zeros (NaN counts), differentiable with a zero gradient as torch's: sign's
  // derivative is 0 (a bool count would leave the result without a gradient)
  if (p == 0)
    return kiln::sum(kiln::where(kiln::isnan(self), kiln::ones_like(self), kiln::sign(a)), dims, keepdim);
  if (p == 1) return kiln::sum(a, dims, keepdim);
  // |x|^p with a zero gradient at x = 0 (as torch's norm backward): for p < 1 the plain power's
  // derivative is infinite there, and 0 * inf = nan. The detached power keeps the value at 0.
  const Tensor zero = kiln::eq(a, 0);
  const Tensor powered = kiln::where(zero, kiln::detach(kiln::pow(a, p)),
                                     kiln::pow(kiln::where(zero, kiln::add(kiln::zeros_like(a), 1), a), p));
  return root_of_sum(kiln::sum(powered, dims, keepdim), p);
}
}  // namespace

Tensor norm(const Tensor& self, const Scalar& p) {
  // torch's own 2-norm of a whole contiguous float32 tensor (and its norm_backward)
  if (p.to_double() == 2.0 && self.scalar_type() == ScalarType::Float32 && self.is_contiguous())
    return kiln::_norm2(self);
  return p_norm(self, p.to_double(), {}, false);
}

Tensor norm_dim(const Tensor& self, const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim) {
  return p_norm(self, p ? p->to_double() : 2.0, dim, keepdim);
}

}  // namespace composite_implicit

// The private ops behind var, std and logsumexp: the values as above (ops run below autograd: the
// gradient is the op's own, schema/derivatives.yaml).
namespace composite_explicit {

TensorBase var_op(const TensorBase& self, const std::optional<IntArrayRef>& dim, double correction, bool keepdim) {
  const Tensor x(self);
  return composite_implicit::stats::variance(x, dim, correction, keepdim, "_var").to(x.dtype());
}

TensorBase std_op(const TensorBase& self, const std::optional<IntArrayRef>& dim, double correction, bool keepdim) {
  const Tensor x(self);
  return composite_implicit::stats::std_of(composite_implicit::stats::variance(x, dim, correction, keepdim, "_std"))
      .to(x.dtype());
}

// max + log(sum(exp(x - max))), the max replaced by 0 where infinite, so rows of -inf give -inf and
// rows with +inf give +inf.
TensorBase logsumexp_op(const TensorBase& self, IntArrayRef dim, bool keepdim) {
  const Tensor x(self);
  KILN_CHECK(x.is_floating_point(), "_logsumexp(): expected a floating point input, got ", scalar_type_name(x.dtype()));
  if (x.numel() == 0) return kiln::log(kiln::sum(kiln::exp(x), dim, keepdim));
  const Tensor max = kiln::amax(x, dim, /*keepdim=*/true);
  const Tensor shift = kiln::where(kiln::isinf(max), kiln::zeros_like(max), max);
  const Tensor result = kiln::add(kiln::log(kiln::sum(kiln::exp(kiln::sub(x, shift)), dim, /*keepdim=*/true)), shift);
  if (keepdim) return result;
  std::vector<int64_t> dims(dim.begin(), dim.end());
  if (dims.empty())
    for (int64_t d = 0; d < x.dim(); ++d) dims.push_back(d);
  return kiln::sum(result, IntArrayRef(dims), /*keepdim=*/false);  // drops the size-1 dims
}

}  // namespace composite_explicit
}  // namespace kiln
