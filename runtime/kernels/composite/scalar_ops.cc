// Scalar overloads of the arithmetic ops: the Python number becomes a 0-dim
// "wrapped number" tensor (lower priority in type promotion), as in PyTorch.
#include "generated/api/add.h"
#include "generated/api/copysign.h"
#include "generated/api/div.h"
#include "generated/api/fmod.h"
#include "generated/api/mul.h"
#include "generated/api/pow.h"
#include "generated/api/sub.h"
#include "generated/kernels/composite/add.h"
#include "generated/kernels/composite/copysign.h"
#include "generated/kernels/composite/div.h"
#include "generated/kernels/composite/fmod.h"
#include "generated/kernels/composite/ldexp.h"
#include "generated/kernels/composite/mul.h"
#include "generated/kernels/composite/pow.h"
#include "generated/kernels/composite/sub.h"
#include "runtime/kernels/out_checks.h"
#include "runtime/kernels/type_promotion.h"

namespace kiln {
namespace composite_implicit {
namespace {
Tensor wrapped(const Scalar& s) { return Tensor(wrap_scalar(s)); }
}  // namespace

Tensor add_scalar(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return kiln::add(self, wrapped(other), alpha);
}
const Tensor& add__scalar(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return self.add_(wrapped(other), alpha);
}
Tensor sub_scalar(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return kiln::sub(self, wrapped(other), alpha);
}
const Tensor& sub__scalar(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return self.sub_(wrapped(other), alpha);
}
Tensor fmod_scalar(const Tensor& self, const Scalar& other) { return kiln::fmod(self, wrapped(other)); }
Tensor copysign_scalar(const Tensor& self, const Scalar& other) { return kiln::copysign(self, wrapped(other)); }
Tensor mul_scalar(const Tensor& self, const Scalar& other) { return kiln::mul(self, wrapped(other)); }
const Tensor& mul__scalar(const Tensor& self, const Scalar& other) { return self.mul_(wrapped(other)); }
Tensor div_scalar(const Tensor& self, const Scalar& other) { return kiln::div(self, wrapped(other)); }
const Tensor& div__scalar(const Tensor& self, const Scalar& other) { return self.div_(wrapped(other)); }

Tensor pow_scalar_base(const Scalar& self, const Tensor& exponent) { return kiln::pow(wrapped(self), exponent); }

// torch's ldexp: self * pow(2.0, other), the power in other's dtype (the default float dtype for an
// integral other) rounded before the product.
Tensor ldexp(const Tensor& self, const Tensor& other) { return kiln::mul(self, kiln::pow(Scalar(2.0), other)); }
const Tensor& ldexp_(const Tensor& self, const Tensor& other) {
  // mul_'s checks, under ldexp_'s name: no internal overlap, the product's dtype castable to self's
  check_no_internal_overlap(self, "ldexp_");
  const Tensor power = kiln::pow(Scalar(2.0), other);
  const ScalarType result = result_type({self, power});
  KILN_CHECK(can_cast(result, self.dtype()), "ldexp_(): result type ", scalar_type_name(result),
             " can't be cast to the desired output type ", scalar_type_name(self.dtype()));
  return self.mul_(power);
}
const Tensor& ldexp_out(const Tensor& out, const Tensor& self, const Tensor& other) {
  return kiln::mul_out(out, self, kiln::pow(Scalar(2.0), other));
}

}  // namespace composite_implicit
}  // namespace kiln
