// gelu, silu, leaky_relu, hardtanh, softplus and lerp, written with pointwise ops, so their
// gradients (and second derivatives) come from those ops' formulas.
#include <cmath>

#include "generated/api/add.h"
#include "generated/api/clamp.h"
#include "generated/api/div.h"
#include "generated/api/erf.h"
#include "generated/api/gt.h"
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
#include "runtime/kernels/tensor_iterator.h"

namespace kiln {
namespace composite_implicit {
namespace {
void check_floating(const Tensor& self, const char* name) {
  KILN_CHECK(self.is_floating_point(), name, "(): \"", name, "\" not implemented for '",
             scalar_type_name(self.dtype()), "' (expected a floating point tensor)");
}
}  // namespace

// x * Phi(x); "tanh": 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as torch.
Tensor gelu(const Tensor& self, const std::string& approximate) {
  check_floating(self, "gelu");
  if (approximate == "tanh") {
    const Tensor inner = kiln::mul(kiln::add(self, kiln::mul(kiln::mul(kiln::mul(self, self), self), 0.044715)),
                                   0.7978845608028654);
    return kiln::mul(kiln::mul(self, kiln::add(kiln::tanh(inner), 1)), 0.5);
  }
  KILN_CHECK(approximate == "none", "gelu(): approximate argument must be either none or tanh, got '", approximate,
             "'");
  return kiln::mul(kiln::mul(self, kiln::add(kiln::erf(kiln::mul(self, 0.7071067811865476)), 1)), 0.5);
}

Tensor silu(const Tensor& self) {
  check_floating(self, "silu");
  return kiln::mul(self, kiln::sigmoid(self));
}

Tensor leaky_relu(const Tensor& self, const Scalar& negative_slope) {
  check_floating(self, "leaky_relu");
  return kiln::where(kiln::gt(self, 0), self, kiln::mul(self, negative_slope));
}

Tensor hardtanh(const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  KILN_CHECK(self.dtype() != ScalarType::Bool, "hardtanh(): \"hardtanh\" not implemented for 'bool'");
  return kiln::clamp(self, min_val, max_val);
}

// beta x > threshold: x; else log(1 + exp(beta x)) / beta.
Tensor softplus(const Tensor& self, const Scalar& beta, const Scalar& threshold) {
  check_floating(self, "softplus");
  const Tensor z = kiln::mul(self, beta);
  return kiln::where(kiln::gt(z, threshold), self, kiln::div(softplus_exact(z), beta));
}

// self + weight * (end - self)
Tensor lerp_scalar(const Tensor& self, const Tensor& end, const Scalar& weight) {
  check_floating(self, "lerp");
  return kiln::add(self, kiln::mul(kiln::sub(end, self), weight));
}

Tensor lerp_tensor(const Tensor& self, const Tensor& end, const Tensor& weight) {
  check_floating(self, "lerp");
  return kiln::add(self, kiln::mul(kiln::sub(end, self), weight));
}

}  // namespace composite_implicit
}  // namespace kiln
