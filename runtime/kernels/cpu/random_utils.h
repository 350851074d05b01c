// Helpers shared by the random kernels (random_ops.cc, bernoulli_ops.cc, sampling_ops.cc),
// written as PyTorch's CPU distributions (ATen/core/DistributionsHelper.h and
// TransformationHelper.h) so that a seed gives torch's numbers: the generator to draw from,
// torch's uniform transformations, and the order in which torch visits a tensor's elements.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "runtime/core/convert.h"
#include "runtime/core/generator.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/shape_rules.h"
#include "runtime/kernels/type_promotion.h"

namespace kiln {
namespace cpu {

// The generator an op was given, or the default one (generator=None).
inline Generator& generator_or_default(Generator* g) { return g ? *g : default_generator(); }

// Whether torch's CPU kernels fuse `a * b + c` here (pointwise_math.h); mul_add rounds where
// torch's random transformations round.
using pm::torch_kernels_use_fma;

template <typename T>
inline T mul_add(T a, T b, T c) {
  return torch_kernels_use_fma() ? std::fma(a, b, c) : a * b + c;
}

// Mantissa digits torch draws for a dtype's uniform numbers (std::numeric_limits<T>::digits).
template <typename T> constexpr int uniform_digits() {
  if constexpr (std::is_same_v<T, double>) return 53;
  else if constexpr (std::is_same_v<T, Half>) return 11;
  else if constexpr (std::is_same_v<T, BFloat16>) return 8;
  else return 24;
}

// torch's uniform_real_distribution<T>(from, to): double from 53 bits of random64(), the
// others from the low `digits` bits of one 32-bit draw, scaled and shifted in float (double
// for double), `x * (to - from) + from` fused as in torch's kernels. The result is in T's
// accumulate type (float for float16/bfloat16); `to - from` is computed in T, as torch.
template <typename T>
struct UniformReal {
  using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;
  acc_t from, range;
  UniformReal(T from_, T to_)
      : from(static_cast<acc_t>(from_)), range(static_cast<acc_t>(static_cast<T>(to_ - from_))) {}
  acc_t operator()(RandomEngine& e) const {
    constexpr int d = uniform_digits<T>();
    constexpr acc_t scale = acc_t(1) / static_cast<acc_t>(uint64_t{1} << d);
    const acc_t x = std::is_same_v<T, double>
                        ? static_cast<acc_t>(e.random64() & ((uint64_t{1} << d) - 1)) * scale
                        : static_cast<acc_t>(e.random() & ((uint32_t{1} << d) - 1)) * scale;
    if (range == acc_t(1) && from == acc_t(0)) return x;  // [0, 1): x * 1 + 0, fused or not
    return mul_add(x, range, from);
  }
};

// A double in [0, 1): torch's uniform_real_distribution<double>(0, 1).
inline double uniform_double(RandomEngine& e) {
  return static_cast<double>(e.random64() & ((uint64_t{1} << 53) - 1)) * (1.0 / 9007199254740992.0);
}
// A float in [0, 1): torch's uniform_real_distribution<float>(0, 1).
inline float uniform_float(RandomEngine& e) {
  return static_cast<float>(e.random() & ((uint32_t{1} << 24) - 1)) * (1.0f / 16777216.0f);
}

// torch's normal_distribution<double>: Box-Muller on two uniform doubles, the cos half
// returned and the sin half kept in the generator for the next call.
inline double standard_normal_double(RandomEngine& e) {
  if (e.next_double_normal) {
    const double v = *e.next_double_normal;
    e.next_double_normal.reset();
    return v;
  }
  const double u1 = uniform_double(e), u2 = uniform_double(e);
  const double r = std::sqrt(-2.0 * std::log(1.0 - u2));
  const double theta = 2.0 * 3.14159265358979323846 * u1;
  e.next_double_normal = r * std::sin(theta);
  return r * std::cos(theta);
}

// Element offsets of `t` (in elements, from its data pointer) in the order torch's
// TensorIterator visits a single output: dimensions sorted by decreasing stride (memory
// order for a permuted tensor), size-1 dimensions dropped, ties kept in order.
std::vector<int64_t> iteration_offsets(const TensorBase& t);
// The dimensions of `t` in that order (outermost first), and the offsets of another tensor of
// the same shape visited in a given order of dimensions.
std::vector<int64_t> iteration_order(const TensorBase& t);
std::vector<int64_t> offsets_in_order(const TensorBase& t, const std::vector<int64_t>& dims);

// Writes next(engine) into each element of `self` (dtype T) in torch's order; the caller
// holds the generator's lock.
template <typename T, typename Next>
void fill_serial(const TensorBase& self, Next next) {
  T* p = static_cast<T*>(self.data_ptr());
  if (self.is_contiguous()) {
    const int64_t n = self.numel();
    for (int64_t i = 0; i < n; ++i) p[i] = next();
  } else {
    for (int64_t offset : iteration_offsets(self)) p[offset] = next();
  }
}

}  // namespace cpu
}  // namespace kiln
