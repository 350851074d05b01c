// div with a rounding mode (and its in-place, out= and Scalar forms), round to decimals, clamp
// with tensor bounds, and clip: compositions of div/floor_divide/trunc/round and where.
#include <cmath>

#include "generated/api/add.h"
#include "generated/api/clamp.h"
#include "generated/api/div.h"
#include "generated/api/floor_divide.h"
#include "generated/api/gt.h"
#include "generated/api/isnan.h"
#include "generated/api/logical_and.h"
#include "generated/api/logical_or.h"
#include "generated/api/lt.h"
#include "generated/api/maximum.h"
#include "generated/api/minimum.h"
#include "generated/api/mul.h"
#include "generated/api/ne.h"
#include "generated/api/round.h"
#include "generated/api/trunc.h"
#include "generated/api/where.h"
#include "generated/kernels/composite/clamp.h"
#include "generated/kernels/composite/clip.h"
#include "generated/kernels/composite/div.h"
#include "generated/kernels/composite/round.h"
#include "runtime/api/write_out.h"
#include "runtime/kernels/out_checks.h"
#include "runtime/kernels/type_promotion.h"

namespace kiln {
namespace composite_implicit {

Tensor div_mode(const Tensor& self, const Tensor& other, const std::optional<std::string>& rounding_mode) {
  if (!rounding_mode) return kiln::div(self, other);
  if (*rounding_mode == "floor") return kiln::floor_divide(self, other);
  KILN_CHECK(*rounding_mode == "trunc",
             "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", *rounding_mode, "'");
  Tensor floored = kiln::floor_divide(self, other);  // integer division by zero raises here
  if (floored.is_floating_point()) return kiln::trunc(kiln::div(self, other));
  // Integers: floor and trunc differ by one where the quotient is negative and inexact.
  const Tensor inexact = kiln::ne(kiln::mul(floored, other), self);
  const Tensor fix = kiln::logical_and(kiln::lt(floored, 0), inexact);
  return kiln::where(fix, kiln::add(floored, 1), floored);
}

namespace {
// An in-place write of `result`: its dtype must cast safely, as torch's iterator checks.
void check_castable(const Tensor& result, const Tensor& target, const char* op) {
  KILN_CHECK(can_cast(result.dtype(), target.dtype()), op, "(): result type ", scalar_type_name(result.dtype()),
             " can't be cast to the desired output type ", scalar_type_name(target.dtype()));
}
}  // namespace

const Tensor& div__mode(const Tensor& self, const Tensor& other, const std::optional<std::string>& rounding_mode) {
  check_no_internal_overlap(self, "div_");
  // From clones: the division saves its inputs for the backward, and self is overwritten below. A
  // divisor sharing self's memory (x.div_(x), or a view of x) is cloned too: saved as it is, it
  // would hold self, whose new grad_fn leads back to the division: a reference cycle, leaked
  // (found by tools/fuzz.sh).
  const bool divisor_aliases_self = other.is_alias_of(self);
  const Tensor result = div_mode(self.clone(), divisor_aliases_self ? other.clone() : other, rounding_mode);
  check_castable(result, self, "div_");
  KILN_CHECK(result.sizes() == self.sizes(), "div_(): output with shape ", shape_str(self.sizes()),
             " doesn't match the broadcast shape ", shape_str(result.sizes()));
  self.copy_(result);
  return self;
}

const Tensor& div_out_mode(const Tensor& out, const Tensor& self, const Tensor& other,
                           const std::optional<std::string>& rounding_mode) {
  return write_out(out, div_mode(self, other, rounding_mode), "div");
}

Tensor div_scalar_mode(const Tensor& self, const Scalar& other, const std::optional<std::string>& rounding_mode) {
  return div_mode(self, Tensor(wrap_scalar(other)), rounding_mode);
}

const Tensor& div__scalar_mode(const Tensor& self, const Scalar& other,
                               const std::optional<std::string>& rounding_mode) {
  return div__mode(self, Tensor(wrap_scalar(other)), rounding_mode);
}

// torch's formula: round(x * 10^d) / 10^d, or round(x / 10^-d) * 10^-d for negative d, in the
// tensor's own dtype.
Tensor round_decimals(const Tensor& self, int64_t decimals) {
  KILN_CHECK(self.is_floating_point(), "round(): \"round_cpu\" with decimals is not implemented for '",
             scalar_type_name(self.dtype()), "'");
  if (is_reduced_floating_type(self.dtype()))  // in float32, rounded once
    return round_decimals(self.to(ScalarType::Float32), decimals).to(self.dtype());
  if (decimals == 0) return kiln::round(self);
  const double scale = std::pow(10.0, static_cast<double>(decimals < 0 ? -decimals : decimals));
  if (decimals < 0) return kiln::mul(kiln::round(kiln::div(self, scale)), scale);
  return kiln::div(kiln::round(kiln::mul(self, scale)), scale);
}

const Tensor& round__decimals(const Tensor& self, int64_t decimals) {
  check_no_internal_overlap(self, "round_");
  self.copy_(round_decimals(self, decimals));
  return self;
}

Tensor clamp_tensor(const Tensor& self, const Tensor& min, const Tensor& max) {
  KILN_CHECK(min.defined() || max.defined(), "torch.clamp: At least one of 'min' or 'max' must not be None");
  // Selections, not maximum/minimum: at a tie the gradient goes to self (torch), and a nan bound
  // propagates.
  Tensor out = self;
  auto nan_bound = [&](const Tensor& bound) {
    return kiln::logical_and(kiln::isnan(bound), kiln::isnan(out).logical_not());
  };
  if (min.defined()) out = kiln::where(kiln::logical_or(kiln::lt(out, min), nan_bound(min)), min, out);
  if (max.defined()) out = kiln::where(kiln::logical_or(kiln::gt(out, max), nan_bound(max)), max, out);
  // torch's two-bound kernel has no bool form (one bound is maximum/minimum, which has)
  KILN_CHECK(!(min.defined() && max.defined()) || out.scalar_type() != ScalarType::Bool,
             "\"clamp_cpu\" not implemented for 'Bool'");
  return out;
}

Tensor clip(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  return kiln::clamp(self, min, max);
}

}  // namespace composite_implicit
}  // namespace kiln
