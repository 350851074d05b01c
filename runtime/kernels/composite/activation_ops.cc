// gelu, silu, leaky_relu, hardtanh, softplus and lerp, written with pointwise ops, so their
// gradients (and second derivatives) come from those ops' formulas.
#include <cmath>

#include "generated/api/abs.h"
#include "generated/api/add.h"
#include "generated/api/clamp.h"
#include "generated/api/div.h"
#include "generated/api/erf.h"
#include "generated/api/detach.h"
#include "generated/api/ge.h"
#include "generated/api/gt.h"
#include "generated/api/le.h"
#include "generated/api/logical_not.h"
#include "generated/api/logical_or.h"
#include "generated/api/lt.h"
#include "generated/api/mul.h"
#include "generated/api/neg.h"
#include "generated/api/sigmoid.h"
#include "generated/api/sub.h"
#include "generated/api/tanh.h"
#include "generated/api/where.h"
#include "generated/kernels/composite/gelu.h"
#include "generated/kernels/composite/hardtanh.h"
#include "generated/kernels/composite/leaky_relu.h"
#include "generated/kernels/composite/lerp.h"
#include "generated/kernels/composite/silu.h"
#include "generated/kernels/composite/softplus.h"
#include "runtime/kernels/composite/softplus_exact.h"

namespace kiln {
namespace composite_implicit {
namespace {
void check_floating(const Tensor& self, const char* name) {
  KILN_CHECK(self.is_floating_point(), name, "(): \"", name, "\" not implemented for '",
             scalar_type_name(self.dtype()), "' (expected a floating point tensor)");
}

// float16/bfloat16 through float32, rounded once at the end, as torch's kernels (each op of a
// composite would otherwise round its own result). The casts carry the gradients.
template <typename F>
Tensor via_float32(const Tensor& self, F f) {
  if (!is_reduced_floating_type(self.dtype())) return f(self);
  return f(self.to(ScalarType::Float32)).to(self.dtype());
}
}  // namespace

// x * Phi(x); "tanh": 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as torch.
Tensor gelu(const Tensor& self, const std::string& approximate) {
  check_floating(self, "gelu");
  if (is_reduced_floating_type(self.dtype()))
    return via_float32(self, [&](const Tensor& x) { return gelu(x, approximate); });
  if (approximate == "tanh") {
    const Tensor inner = kiln::mul(kiln::add(self, kiln::mul(kiln::mul(kiln::mul(self, self), self), 0.044715)),
                                   0.7978845608028654);
    return kiln::mul(kiln::mul(self, 0.5), kiln::add(kiln::tanh(inner), 1));
  }
  KILN_CHECK(approximate == "none", "gelu(): approximate argument must be either none or tanh, got '", approximate,
             "'");
  // (0.5 x) (1 + erf(x / sqrt 2)): halving first keeps huge finite x finite.
  return kiln::mul(kiln::mul(self, 0.5), kiln::add(kiln::erf(kiln::mul(self, 0.7071067811865476)), 1));
}

Tensor silu(const Tensor& self) {
  check_floating(self, "silu");
  return via_float32(self, [](const Tensor& x) { return kiln::mul(x, kiln::sigmoid(x)); });
}

Tensor leaky_relu(const Tensor& self, const Scalar& negative_slope) {
  check_floating(self, "leaky_relu");
  return kiln::where(kiln::gt(self, 0), self, kiln::mul(self, negative_slope));
}

Tensor hardtanh(const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  KILN_CHECK(self.dtype() != ScalarType::Bool, "hardtanh(): \"hardtanh\" not implemented for 'bool'");
  // torch's hardtanh_backward: no gradient where x <= min or x >= max (clamp's passes it at the
  // bounds); nan is neither, so it passes there.
  const Tensor inside = kiln::logical_not(kiln::logical_or(kiln::le(self, min_val), kiln::ge(self, max_val)));
  const Tensor result = kiln::where(inside, self, kiln::clamp(self.detach(), min_val, max_val));
  return result.dtype() == self.dtype() ? result : result.to(self.dtype());  // hardtanh(int64) is int64 (torch)
}

// beta x > threshold: x; else log(1 + exp(beta x)) / beta.
Tensor softplus(const Tensor& self, const Scalar& beta, const Scalar& threshold) {
  check_floating(self, "softplus");
  return via_float32(self, [&](const Tensor& x) {
    const Tensor z = kiln::mul(x, beta);
    return kiln::where(kiln::gt(z, threshold), x, kiln::div(softplus_exact(z), beta));
  });
}

// torch's formula: self + weight * (end - self) for |weight| < 0.5, else end - (end - self) * (1 - weight)
// (exact at weight 1); float16/bfloat16 in float32, rounded once.
static void check_lerp_dtype(const Tensor& self, const Tensor& t, const char* what) {
  KILN_CHECK(t.dtype() == self.dtype(), "lerp(): expected dtype ", scalar_type_name(self.dtype()), " for `", what,
             "` but got dtype ", scalar_type_name(t.dtype()));
}

Tensor lerp_scalar(const Tensor& self, const Tensor& end, const Scalar& weight) {
  check_floating(self, "lerp");
  check_lerp_dtype(self, end, "end");
  if (is_reduced_floating_type(self.dtype()))
    return lerp_scalar(self.to(ScalarType::Float32), end.to(ScalarType::Float32), weight).to(self.dtype());
  const double w = weight.to_double();
  const Tensor diff = kiln::sub(end, self);
  if (std::abs(w) < 0.5) return kiln::add(self, kiln::mul(diff, weight));
  return kiln::sub(end, kiln::mul(diff, 1.0 - w));
}

Tensor lerp_tensor(const Tensor& self, const Tensor& end, const Tensor& weight) {
  check_floating(self, "lerp");
  check_lerp_dtype(self, end, "end");
  check_lerp_dtype(self, weight, "weight");
  if (is_reduced_floating_type(self.dtype())) {
    const ScalarType f32 = ScalarType::Float32;
    return lerp_tensor(self.to(f32), end.to(f32), weight.to(f32)).to(self.dtype());
  }
  const Tensor diff = kiln::sub(end, self);
  const Tensor small = kiln::lt(kiln::abs(weight), 0.5);
  return kiln::where(small, kiln::add(self, kiln::mul(diff, weight)),
                     kiln::sub(end, kiln::mul(diff, kiln::add(kiln::neg(weight), 1))));
}

}  // namespace composite_implicit
}  // namespace kiln
