// mse_loss, smooth_l1_loss and huber_loss: the values as torch's kernels compute them, with their own
// derivatives (schema/derivatives.yaml: torch's backward kernels, whose order gives torch's gradient
// bits; autodiff through the pieces and the mean would round differently).
#include "generated/api/abs.h"
#include "generated/api/div.h"
#include "generated/api/l1_loss.h"
#include "generated/api/lt.h"
#include "generated/api/mul.h"
#include "generated/api/sub.h"
#include "generated/api/where.h"
#include "generated/kernels/huber_loss.h"
#include "generated/kernels/mse_loss.h"
#include "generated/kernels/smooth_l1_loss.h"
#include "runtime/kernels/composite/reduce_loss.h"

namespace kiln {
namespace composite_explicit {

TensorBase mse_loss(const TensorBase& self_, const TensorBase& target_, int64_t reduction) {
  const Tensor self(self_), target(target_);
  KILN_CHECK(self.is_floating_point(), "mse_loss(): expected a floating point input, got ",
             scalar_type_name(self.dtype()));
  const Tensor diff = kiln::sub(self, target);
  return reduce_loss(kiln::mul(diff, diff), reduction, "mse_loss");
}

// 0.5 z^2 / beta for z = |x - y| < beta, z - 0.5 beta beyond (NaN stays NaN); beta 0 is l1_loss, as torch.
TensorBase smooth_l1_loss(const TensorBase& self_, const TensorBase& target_, int64_t reduction, double beta) {
  const Tensor self(self_), target(target_);
  KILN_CHECK(self.is_floating_point(), "smooth_l1_loss(): expected a floating point input, got ",
             scalar_type_name(self.dtype()));
  KILN_CHECK(beta >= 0, "smooth_l1_loss(): smooth_l1_loss does not support negative values for beta, got ", beta);
  check_loss_reduction(reduction, "smooth_l1_loss");
  if (beta == 0) return kiln::l1_loss(self, target, reduction);
  const Tensor d = kiln::sub(self, target);
  const Tensor z = kiln::abs(d);
  const Tensor quad = kiln::div(kiln::mul(kiln::mul(d, 0.5), d), beta);
  return reduce_loss(kiln::where(kiln::lt(z, beta), quad, kiln::sub(z, 0.5 * beta)), reduction, "smooth_l1_loss");
}

// 0.5 z^2 for z = |x - y| < delta, delta (z - 0.5 delta) beyond.
TensorBase huber_loss(const TensorBase& self_, const TensorBase& target_, int64_t reduction, double delta) {
  const Tensor self(self_), target(target_);
  KILN_CHECK(self.is_floating_point(), "huber_loss(): expected a floating point input, got ",
             scalar_type_name(self.dtype()));
  KILN_CHECK(delta > 0, "huber_loss(): huber_loss does not support non-positive values for delta, got ", delta);
  const Tensor d = kiln::sub(self, target);
  const Tensor z = kiln::abs(d);
  const Tensor quad = kiln::mul(kiln::mul(d, 0.5), d);
  const Tensor lin = kiln::mul(kiln::sub(z, 0.5 * delta), delta);
  return reduce_loss(kiln::where(kiln::lt(z, delta), quad, lin), reduction, "huber_loss");
}

}  // namespace composite_explicit
}  // namespace kiln
