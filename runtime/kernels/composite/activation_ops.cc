// Activations that are elu with other coefficients, or more than one formula (a weight to
// broadcast, a dim to halve), written with other ops, so their gradients come from those ops' formulas.
#include <cstdint>
#include <vector>

#include "generated/api/elu.h"
#include "generated/api/gt.h"
#include "generated/api/mul.h"
#include "generated/api/narrow.h"
#include "generated/api/sigmoid.h"
#include "generated/api/where.h"
#include "generated/kernels/composite/celu.h"
#include "generated/kernels/composite/prelu.h"
#include "generated/kernels/composite/selu.h"
#include "generated/kernels/glu.h"
#include "runtime/core/error.h"

namespace kiln {
namespace composite_implicit {
namespace {

// torch's SELU constants.
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

double celu_input_scale(const Scalar& alpha) {
  KILN_CHECK(alpha.to_double() != 0, "celu(): ZeroDivisionError: alpha cannot be 0 for CELU");
  return 1.0 / alpha.to_double();
}

}  // namespace

Tensor selu(const Tensor& self) { return kiln::elu(self, kSeluAlpha, kSeluScale); }

const Tensor& selu_(const Tensor& self) { return kiln::elu_(self, kSeluAlpha, kSeluScale); }

Tensor celu(const Tensor& self, const Scalar& alpha) {
  return kiln::elu(self, alpha, 1.0, celu_input_scale(alpha));
}

const Tensor& celu_(const Tensor& self, const Scalar& alpha) {
  return kiln::elu_(self, alpha, 1.0, celu_input_scale(alpha));
}

// torch's prelu: a weight of 1 element, or of C = self.size(1) elements viewed as (1, C, 1, ...).
Tensor prelu(const Tensor& self, const Tensor& weight) {
  KILN_CHECK(self.is_floating_point(), "prelu(): expected a floating point input, got ",
             scalar_type_name(self.dtype()));
  KILN_CHECK(self.dtype() == weight.dtype(), "prelu: Type promoting not supported. Got ",
             scalar_type_name(self.dtype()), " and ", scalar_type_name(weight.dtype()));
  KILN_CHECK(weight.dim() <= 1, "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = ",
             weight.dim());
  if (weight.numel() != 1) {
    KILN_CHECK(self.dim() > 0, "prelu: Not allow zero-dim input tensor.");
    const int64_t channels = self.dim() > 1 ? self.sizes()[1] : 1;
    KILN_CHECK(channels == weight.numel(), "prelu: Mismatch of parameter numbers and input channel size. Found "
               "parameter numbers = ", weight.numel(), " and channel size = ", channels, ".");
  }
  Tensor w = weight;
  if (self.dim() != weight.dim()) {
    std::vector<int64_t> shape(static_cast<size_t>(self.dim()), 1);
    if (self.dim() > 1) shape[1] = weight.numel();
    w = weight.reshape(shape);
  }
  // NaN is not > 0, so it takes weight * NaN: NaN, as torch's kernel.
  return kiln::where(kiln::gt(self, 0), self, kiln::mul(w, self));
}

}  // namespace composite_implicit

namespace composite_explicit {

// glu's gradient is its own (torch's glu_backward, schema/derivatives.yaml).
TensorBase glu(const TensorBase& self_, int64_t dim) {
  const Tensor self(self_);
  // torch's order: the dim, then its size, then the dtype.
  KILN_CHECK(self.dim() > 0, "glu does not support scalars because halving size must be even");
  const int64_t d = wrap_dim(dim, self.dim(), "glu");
  const int64_t n = self.sizes()[d];
  KILN_CHECK(n % 2 == 0, "glu(): Halving dimension must be even, but dimension ", d, " is size ", n);
  KILN_CHECK(self.is_floating_point(), "glu(): expected a floating point input, got ", scalar_type_name(self.dtype()));
  return kiln::mul(kiln::narrow(self, d, 0, n / 2), kiln::sigmoid(kiln::narrow(self, d, n / 2, n / 2)));
}

}  // namespace composite_explicit
}  // namespace kiln
