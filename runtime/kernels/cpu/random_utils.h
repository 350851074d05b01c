// Helpers shared by the random kernels (random_ops.cc, sampling_ops.cc): the generator to
// draw from, uniform doubles and unbiased integers, and filling a tensor in row-major order
// (so a seed gives the same numbers whatever the tensor's strides).
#pragma once

#include <cstdint>

#include "runtime/core/generator.h"
#include "runtime/kernels/tensor_iterator.h"

namespace kiln {
namespace cpu {

// The generator an op was given, or the default one (generator=None).
inline Generator& generator_or_default(Generator* g) { return g ? *g : default_generator(); }

// A double in [0, 1) from 53 random bits.
inline double unit(Mt19937& e) { return static_cast<double>(e() >> 11) * (1.0 / 9007199254740992.0); }

// An integer in [0, bound), bound > 0, without modulo bias: draws in the top
// (2^64 mod bound) values are rejected, so every residue is equally likely.
inline uint64_t uniform_below(Mt19937& e, uint64_t bound) {
  const uint64_t rejected = (0 - bound) % bound;
  for (;;) {
    const uint64_t r = e();
    if (r >= rejected) return r % bound;
  }
}

// Fills `self` with next(engine, i) for its elements i = 0, 1, ... in row-major order,
// converted to its dtype, holding the generator's lock for the whole fill.
template <typename Next>
void fill_random(const TensorBase& self, Generator* generator, const char* name, Next next) {
  TensorBase dst = self.is_contiguous() ? self : empty_cpu(self.sizes(), self.dtype());
  Generator& g = generator_or_default(generator);
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(self.dtype(), name, [&] {
    scalar_t* p = static_cast<scalar_t*>(dst.data_ptr());
    const int64_t n = dst.numel();
    g.draw([&](Mt19937& engine) {
      for (int64_t i = 0; i < n; ++i) p[i] = convert<scalar_t>(next(engine, i));
    });
  });
  if (!dst.is_same(self)) copy_into(self, dst, name);
}

}  // namespace cpu
}  // namespace kiln
