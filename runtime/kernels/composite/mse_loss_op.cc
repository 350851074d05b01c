// mse_loss: (self - target)^2 reduced, as torch's kernel computes it, with its own derivative
// (schema/derivatives.yaml: torch's mse_loss_backward, whose order gives torch's gradient bits;
// autodiff through the square and the mean would round differently).
#include "generated/api/mul.h"
#include "generated/api/sub.h"
#include "generated/kernels/mse_loss.h"
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

}  // namespace composite_explicit
}  // namespace kiln
