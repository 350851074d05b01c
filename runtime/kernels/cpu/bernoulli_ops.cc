// bernoulli, bernoulli.p, bernoulli_.Tensor, bernoulli_.float: element i is 1 when a
// uniform draw u_i in [0, 1) is below its probability, else 0 (so p = 0 never gives 1 and
// p = 1 always does). One draw per element, in row-major order.
#include <vector>

#include "generated/kernels/bernoulli.h"
#include "runtime/kernels/cpu/random_utils.h"

namespace kiln {
namespace cpu {

TensorBase bernoulli_float_(const TensorBase& self, double p, Generator* generator) {
  KILN_CHECK(p >= 0 && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  check_no_internal_overlap(self, "bernoulli_");
  fill_random(self, generator, "bernoulli_", [p](Mt19937& e, int64_t) { return unit(e) < p ? 1 : 0; });
  return self;
}

TensorBase bernoulli_tensor_(const TensorBase& self, const TensorBase& p, Generator* generator) {
  KILN_CHECK(p.is_floating_point(), "bernoulli_(): expected p to have a floating point dtype, got ",
             scalar_type_name(p.dtype()));
  check_no_internal_overlap(self, "bernoulli_");
  // p broadcasts to self's shape, never the other way (self is written in place).
  const DimVector shape = broadcast_shapes(self.sizes(), p.sizes(), "bernoulli_");
  KILN_CHECK(IntArrayRef(shape) == self.sizes(), "bernoulli_(): p of shape ", shape_str(p.sizes()),
             " cannot be broadcast to self's shape ", shape_str(self.sizes()));
  // A copy of the probabilities: self may be p itself (x.bernoulli_(x)), and every value is
  // checked before anything is drawn or written.
  TensorBase probs = empty_cpu(self.sizes(), ScalarType::Float64);
  copy_into(probs, p, "bernoulli_");
  const double* q = static_cast<const double*>(probs.data_ptr());
  for (int64_t i = 0; i < probs.numel(); ++i)
    KILN_CHECK(q[i] >= 0 && q[i] <= 1, "bernoulli: Expected p_in >= 0 && p_in <= 1 to be true, but got p_in=", q[i]);
  fill_random(self, generator, "bernoulli_", [q](Mt19937& e, int64_t i) { return unit(e) < q[i] ? 1 : 0; });
  return self;
}

TensorBase bernoulli(const TensorBase& self, Generator* generator) {
  KILN_CHECK(self.is_floating_point(), "bernoulli(): expected a floating point tensor of probabilities, got ",
             scalar_type_name(self.dtype()));
  return bernoulli_tensor_(empty_like_cpu(self, self.dtype()), self, generator);
}

TensorBase bernoulli_p(const TensorBase& self, double p, Generator* generator) {
  return bernoulli_float_(empty_like_cpu(self, self.dtype()), p, generator);
}

}  // namespace cpu
}  // namespace kiln
