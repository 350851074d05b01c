// bernoulli, bernoulli.p, bernoulli_.Tensor, bernoulli_.float, as PyTorch's CPU kernels (without
// MKL): element i is 1 when a uniform draw u_i in [0, 1) is below its probability p_i, else 0,
// one draw per element in torch's order. u_i is a 53-bit double (one 64-bit draw) for a
// scalar p or a float64 p tensor, and a 24-bit float (one 32-bit draw) compared with p_i as a
// float for any other p tensor.
#include <vector>

#include "generated/kernels/bernoulli.h"
#include "runtime/kernels/cpu/random_utils.h"

namespace kiln {
namespace cpu {

TensorBase bernoulli_float_(const TensorBase& self, double p, Generator* generator) {
  KILN_CHECK(p >= 0 && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  check_no_internal_overlap(self, "bernoulli_");
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(self.dtype(), "bernoulli_", [&] {
    generator_or_default(generator).draw([&](RandomEngine& e) {
      fill_serial<scalar_t>(self, [&] { return convert<scalar_t>(uniform_double(e) < p ? 1 : 0); });
    });
  });
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
  // A copy of the probabilities: self may be p itself (x.bernoulli_(x)), and
  // every value is checked before anything is drawn or written.
  TensorBase probs = empty_like_cpu(self, ScalarType::Float64);
  copy_into(probs, p, "bernoulli_");
  const double* q = static_cast<const double*>(probs.data_ptr());
  const int64_t n = probs.numel();
  for (int64_t i = 0; i < n; ++i)
    KILN_CHECK(q[i] >= 0 && q[i] <= 1, "bernoulli: Expected p_in >= 0 && p_in <= 1 to be true, but got p_in=", q[i]);
  const bool double_p = p.dtype() == ScalarType::Float64;
  // self's elements in torch's order, and the same elements of probs.
  const bool in_order = self.is_contiguous() && probs.is_contiguous();
  const std::vector<int64_t> dims = iteration_order(self);
  const std::vector<int64_t> offsets = in_order ? std::vector<int64_t>() : offsets_in_order(self, dims);
  const std::vector<int64_t> probs_offsets = in_order ? std::vector<int64_t>() : offsets_in_order(probs, dims);
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(self.dtype(), "bernoulli_", [&] {
    scalar_t* out = static_cast<scalar_t*>(self.data_ptr());
    generator_or_default(generator).draw([&](RandomEngine& e) {
      for (int64_t i = 0; i < n; ++i) {
        const double pi = q[offsets.empty() ? i : probs_offsets[i]];
        const bool one = double_p ? uniform_double(e) < pi : uniform_float(e) < static_cast<float>(pi);
        out[offsets.empty() ? i : offsets[i]] = convert<scalar_t>(one ? 1 : 0);
      }
    });
  });
  return self;
}

TensorBase bernoulli(const TensorBase& self, Generator* generator) {
  KILN_CHECK(self.is_floating_point(), "bernoulli(): expected a floating point tensor of probabilities, got ",
             scalar_type_name(self.dtype()));
  // A contiguous result whatever self's layout (torch's LEGACY_CONTIGUOUS_MEMORY_FORMAT).
  return bernoulli_tensor_(empty_cpu(self.sizes(), self.dtype()), self, generator);
}

TensorBase bernoulli_p(const TensorBase& self, double p, Generator* generator) {
  return bernoulli_float_(empty_cpu(self.sizes(), self.dtype()), p, generator);
}

}  // namespace cpu
}  // namespace kiln
