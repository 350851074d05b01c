// torch's legacy names of the linalg ops (inverse, det, slogdet, logdet), written with them:
// their gradients come from the linalg ops' derivatives.
#include <limits>

#include "generated/api/linalg_det.h"
#include "generated/api/linalg_inv.h"
#include "generated/api/linalg_slogdet.h"
#include "generated/api/lt.h"
#include "generated/api/masked_fill.h"
#include "generated/kernels/composite/det.h"
#include "generated/kernels/composite/inverse.h"
#include "generated/kernels/composite/logdet.h"
#include "generated/kernels/composite/slogdet.h"

namespace kiln {
namespace composite_implicit {

Tensor inverse(const Tensor& self) { return kiln::linalg_inv(self); }

Tensor det(const Tensor& self) { return kiln::linalg_det(self); }

std::tuple<Tensor, Tensor> slogdet(const Tensor& self) { return kiln::linalg_slogdet(self); }

// log(det): nan where the determinant is negative; a singular matrix gives logabsdet's -inf.
Tensor logdet(const Tensor& self) {
  auto [sign, logabsdet] = kiln::linalg_slogdet(self);
  return kiln::masked_fill(logabsdet, kiln::lt(sign, 0), std::numeric_limits<double>::quiet_NaN());
}

}  // namespace composite_implicit
}  // namespace kiln
