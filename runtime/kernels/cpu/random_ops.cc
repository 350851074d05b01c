// uniform_, normal_, random_: fill a tensor from the generator, element by element in
// row-major order (fill_random in random_utils.h).
#include <algorithm>
#include <cmath>
#include <limits>

#include "generated/kernels/normal.h"
#include "generated/kernels/random.h"
#include "generated/kernels/uniform.h"
#include "runtime/kernels/cpu/random_utils.h"

namespace kiln {
namespace cpu {
namespace {

// The largest integer n such that every integer up to n is exact in `dtype` (random_'s bounds).
int64_t exact_int_limit(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::Bool: return 1;
    case ScalarType::Int32: return std::numeric_limits<int32_t>::max();
    case ScalarType::Float16: return int64_t{1} << 11;
    case ScalarType::BFloat16: return int64_t{1} << 8;
    case ScalarType::Float32: return int64_t{1} << 24;
    case ScalarType::Float64: return int64_t{1} << 53;
    default: return std::numeric_limits<int64_t>::max();
  }
}

// The largest value of `dtype` below `to` (uniform_ clamps to it, so that rounding a draw
// to the dtype never reaches `to`).
template <typename T>
double largest_below(double to) {
  T v = convert<T>(to);
  while (static_cast<double>(static_cast<float>(v)) >= to) {
    // One step towards -inf on the 16-bit pattern: magnitude down when positive, up when negative.
    const uint16_t b = v.x;
    v = T::from_bits(b == 0 ? 0x8001 : (b & 0x8000) ? b + 1 : b - 1);
  }
  return static_cast<float>(v);
}

double largest_below(double to, ScalarType dtype) {
  switch (dtype) {
    case ScalarType::Float16: return largest_below<Half>(to);
    case ScalarType::BFloat16: return largest_below<BFloat16>(to);
    case ScalarType::Float32: return static_cast<double>(std::nextafter(static_cast<float>(to), -INFINITY));
    default: return std::nextafter(to, -INFINITY);
  }
}

}  // namespace

TensorBase uniform_(const TensorBase& self, double from, double to, Generator* generator) {
  KILN_CHECK(self.is_floating_point(), "uniform_(): \"uniform_\" not implemented for '",
             scalar_type_name(self.dtype()), "' (expected a floating point tensor)");
  KILN_CHECK(std::isfinite(from) && std::isfinite(to) && from <= to,
             "uniform_(): expects to return a [from, to) range, but found from=", from, " to=", to);
  const double below_to = largest_below(to, self.dtype());
  fill_random(self, generator, "uniform_", [from, to, below_to](Mt19937& e, int64_t) {
    const double v = from + (to - from) * unit(e);
    return from < to ? std::min(v, below_to) : v;
  });
  return self;
}

TensorBase normal_(const TensorBase& self, double mean, double std, Generator* generator) {
  KILN_CHECK(self.is_floating_point(), "normal_(): \"normal_\" not implemented for '",
             scalar_type_name(self.dtype()), "' (expected a floating point tensor)");
  KILN_CHECK(std >= 0.0, "normal_(): expects std >= 0.0, but found std ", std);
  fill_random(self, generator, "normal_", [mean, std](Mt19937& e, int64_t) {
    // Box-Muller; 1 - unit() is in (0, 1], so the log is finite.
    const double u1 = 1.0 - unit(e), u2 = unit(e);
    return mean + std * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  });
  return self;
}

TensorBase random_from(const TensorBase& self, int64_t from, int64_t to, Generator* generator) {
  KILN_CHECK(from < to, "random_(): expects 'from' to be less than 'to', but got from=", from, " >= to=", to);
  // As torch: both ends of [from, to - 1] must fit the dtype, never wrap.
  const int64_t limit = exact_int_limit(self.dtype());
  const int64_t lowest = self.dtype() == ScalarType::Bool ? 0 : self.dtype() == ScalarType::Int32
                             ? std::numeric_limits<int32_t>::min() : -limit;
  KILN_CHECK(to - 1 <= limit, "random_(): to - 1 is out of bounds for ", scalar_type_name(self.dtype()),
             " (got to=", to, ")");
  KILN_CHECK(from >= lowest, "random_(): from is out of bounds for ", scalar_type_name(self.dtype()),
             " (got from=", from, ")");
  const uint64_t range = static_cast<uint64_t>(to) - static_cast<uint64_t>(from);
  fill_random(self, generator, "random_", [from, range](Mt19937& e, int64_t) {
    return static_cast<int64_t>(static_cast<uint64_t>(from) + e() % range);
  });
  return self;
}

}  // namespace cpu
}  // namespace kiln
