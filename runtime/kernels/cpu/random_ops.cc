// uniform_, normal_, random_: fill a tensor from the generator as PyTorch's CPU kernels do
// (aten/src/ATen/native/cpu/DistributionTemplates.h), so a seed gives torch's numbers:
// element by element in torch's order (iteration_offsets), except normal_ on a contiguous
// tensor of 16 or more elements, which draws all its uniforms first and then transforms
// them 16 at a time (torch's normal_fill).
#include <algorithm>
#include <cmath>
#include <limits>

#include "generated/kernels/normal.h"
#include "generated/kernels/random.h"
#include "generated/kernels/uniform.h"
#include "runtime/kernels/cpu/normal_fill.h"
#include "runtime/kernels/cpu/random_utils.h"

namespace kiln {
namespace cpu {

std::vector<int64_t> iteration_order(const TensorBase& t) {
  // Dimensions from the largest stride to the smallest (a stable sort, so equal strides keep
  // their order, as torch's reorder_dimensions); size-1 dimensions do not move anything.
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) != 1) dims.push_back(d);
  std::stable_sort(dims.begin(), dims.end(), [&](int64_t a, int64_t b) { return t.stride(a) > t.stride(b); });
  return dims;
}

std::vector<int64_t> offsets_in_order(const TensorBase& t, const std::vector<int64_t>& dims) {
  std::vector<int64_t> offsets(t.numel());
  std::vector<int64_t> index(dims.size(), 0);
  int64_t offset = 0;
  for (int64_t& out : offsets) {
    out = offset;
    for (int64_t k = static_cast<int64_t>(dims.size()) - 1; k >= 0; --k) {  // an odometer, dims.back() fastest
      const int64_t d = dims[k];
      if (++index[k] < t.size(d)) {
        offset += t.stride(d);
        break;
      }
      offset -= (t.size(d) - 1) * t.stride(d);
      index[k] = 0;
    }
  }
  return offsets;
}

std::vector<int64_t> iteration_offsets(const TensorBase& t) { return offsets_in_order(t, iteration_order(t)); }

namespace {

// The largest integer n such that every integer up to n is exact in `dtype` (random_'s bounds).
int64_t exact_int_limit(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::Float16: return int64_t{1} << 11;
    case ScalarType::BFloat16: return int64_t{1} << 8;
    case ScalarType::Float32: return int64_t{1} << 24;
    case ScalarType::Float64: return int64_t{1} << 53;
    default: return integer_type_max(dtype);  // bool and the integers
  }
}

// The smallest value random_(from, to) may start at: an integer type's minimum (0 for bool and
// uint8), the negated exact limit of a floating one.
int64_t lowest_random_value(ScalarType dtype) {
  return is_integral_type(dtype, /*include_bool=*/true) ? integer_type_min(dtype) : -exact_int_limit(dtype);
}

}  // namespace

TensorBase uniform_(const TensorBase& self, double from, double to, Generator* generator) {
  KILN_CHECK(self.is_floating_point(), "uniform_(): \"uniform_\" not implemented for '",
             scalar_type_name(self.dtype()), "' (expected a floating point tensor)");
  KILN_CHECK(std::isfinite(from) && std::isfinite(to) && from <= to,
             "uniform_(): expects to return a [from, to) range, but found from=", from, " to=", to);
  check_no_internal_overlap(self, "uniform_");
  KILN_DISPATCH_FLOATING_TYPES_AND_REDUCED(self.dtype(), "uniform_", [&] {
    const UniformReal<scalar_t> uniform(convert<scalar_t>(from), convert<scalar_t>(to));
    generator_or_default(generator).draw([&](RandomEngine& e) {
      fill_serial<scalar_t>(self, [&] { return convert<scalar_t>(uniform(e)); });
    });
  });
  return self;
}

TensorBase normal_(const TensorBase& self, double mean, double std, Generator* generator) {
  KILN_CHECK(self.is_floating_point(), "normal_(): \"normal_\" not implemented for '",
             scalar_type_name(self.dtype()), "' (expected a floating point tensor)");
  KILN_CHECK(std >= 0.0, "normal_(): expects std >= 0.0, but found std ", std);
  check_no_internal_overlap(self, "normal_");
  const int64_t n = self.numel();
  KILN_DISPATCH_FLOATING_TYPES_AND_REDUCED(self.dtype(), "normal_", [&] {
    generator_or_default(generator).draw([&](RandomEngine& e) {
      if (n >= 16 && self.is_contiguous()) {
        normal_fill<scalar_t>(static_cast<scalar_t*>(self.data_ptr()), n, mean, std, e);
      } else {
        // One Box-Muller value per element (the other half is kept for the next one).
        fill_serial<scalar_t>(self, [&] { return convert<scalar_t>(mul_add(standard_normal_double(e), std, mean)); });
      }
    });
  });
  return self;
}

// torch's random_(from, to): (draw % range) + from, one 32-bit draw per element, or a
// 64-bit one when the range needs it (int64, float32/float64 and bfloat16 only, as torch).
// Without `to`: up to the dtype's largest value (2^mantissa for floating dtypes), all 2^64
// values when from is the lowest int64.
TensorBase random_from(const TensorBase& self, int64_t from, const std::optional<int64_t>& to_opt,
                       Generator* generator) {
  check_no_internal_overlap(self, "random_");
  const ScalarType dtype = self.dtype();
  if (!to_opt && from == std::numeric_limits<int64_t>::min()) {
    KILN_CHECK(dtype == ScalarType::Int64 || dtype == ScalarType::Float64 || dtype == ScalarType::Float32 ||
                   dtype == ScalarType::BFloat16,
               "random_(): the full 64-bit range is supported for int64, float64, float32 and bfloat16 only, got ",
               scalar_type_name(dtype));
    KILN_DISPATCH_ALL_TYPES_AND_REDUCED(dtype, "random_", [&] {
      generator_or_default(generator).draw([&](RandomEngine& e) {
        fill_serial<scalar_t>(self, [&] { return convert<scalar_t>(static_cast<int64_t>(e.random64())); });
      });
    });
    return self;
  }
  // The inclusive upper end, as torch: the largest value whose neighbours are all exact.
  const int64_t last = to_opt ? *to_opt - 1 : exact_int_limit(dtype);
  KILN_CHECK(!to_opt || from < *to_opt, "random_(): expects 'from' to be less than 'to', but got from=", from,
             " >= to=", *to_opt);
  KILN_CHECK(from <= last, "random_(): expects 'from' to be at most ", last, " for ", scalar_type_name(dtype),
             ", but got from=", from);
  // As torch: both ends of [from, last] must fit the dtype, never wrap.
  const int64_t lowest = lowest_random_value(dtype);
  KILN_CHECK(last <= exact_int_limit(dtype), "random_(): to - 1 is out of bounds for ", scalar_type_name(dtype),
             " (got to=", last + 1, ")");
  KILN_CHECK(from >= lowest, "random_(): from is out of bounds for ", scalar_type_name(dtype), " (got from=", from,
             ")");
  const uint64_t range = static_cast<uint64_t>(last) - static_cast<uint64_t>(from) + 1;
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(dtype, "random_", [&] {
    constexpr bool wide = std::is_same_v<scalar_t, int64_t> || std::is_same_v<scalar_t, double> ||
                          std::is_same_v<scalar_t, float> || std::is_same_v<scalar_t, BFloat16>;
    const bool use64 = wide && range >= (uint64_t{1} << 32);
    generator_or_default(generator).draw([&](RandomEngine& e) {
      fill_serial<scalar_t>(self, [&] {
        const uint64_t draw = use64 ? e.random64() : e.random();
        return convert<scalar_t>(static_cast<int64_t>(draw % range + static_cast<uint64_t>(from)));
      });
    });
  });
  return self;
}

TensorBase random_to(const TensorBase& self, int64_t to, Generator* generator) {
  return random_from(self, 0, to, generator);
}

// torch's random_() without bounds: [0, 2^63 - 1] for int64, [0, 2^mantissa] for floating
// dtypes, [0, max] for other integers, 0 or 1 for bool; 64-bit draws for int64 and float64.
TensorBase random_(const TensorBase& self, Generator* generator) {
  check_no_internal_overlap(self, "random_");
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(self.dtype(), "random_", [&] {
    uint64_t modulus = 0;  // 0: keep every bit of the draw modulo 2 (bool)
    if constexpr (std::is_same_v<scalar_t, bool>) modulus = 2;
    else if constexpr (is_floating_v<scalar_t>) modulus = (uint64_t{1} << uniform_digits<scalar_t>()) + 1;
    else modulus = static_cast<uint64_t>(std::numeric_limits<scalar_t>::max()) + 1;
    constexpr bool use64 = std::is_same_v<scalar_t, int64_t> || std::is_same_v<scalar_t, double>;
    generator_or_default(generator).draw([&](RandomEngine& e) {
      fill_serial<scalar_t>(self, [&] {
        const uint64_t draw = use64 ? e.random64() : e.random();
        return convert<scalar_t>(static_cast<int64_t>(draw % modulus));
      });
    });
  });
  return self;
}

}  // namespace cpu
}  // namespace kiln
