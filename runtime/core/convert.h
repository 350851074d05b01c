// Element conversion with a defined result for every input: the formulas' `cast`
// (pm::cast, runtime/kernels/pointwise_math.h: float -> integer out of range gives the integer
// type's minimum, as x86 and so torch's CPU kernels; to bool tests != 0), and float16 and
// bfloat16 through float.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "runtime/core/half.h"
#include "runtime/kernels/pointwise_math.h"

namespace kiln {

template <typename T>
inline constexpr bool is_reduced_float_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// Floating in the wide sense: float, double, Half, BFloat16.
template <typename T>
inline constexpr bool is_floating_v = std::is_floating_point_v<T> || is_reduced_float_v<T>;

// The largest finite value of a floating type, as a double (overflow checks of scalars).
template <typename T>
inline constexpr double largest_finite() {
  if constexpr (std::is_same_v<T, Half>) {
    return 65504.0;  // (2 - 2^-10) * 2^15
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return 3.3895313892515355e38;  // (2 - 2^-7) * 2^127
  } else {
    return static_cast<double>(std::numeric_limits<T>::max());
  }
}

template <typename T>
inline bool is_nan(T v) {
  if constexpr (is_floating_v<T>) return std::isnan(static_cast<std::conditional_t<is_reduced_float_v<T>, float, T>>(v));
  return false;
}

template <typename To, typename From>
inline To convert(From v) {
  if constexpr (is_reduced_float_v<From>) {
    return convert<To>(static_cast<float>(v));  // exact, then the float rules
  } else if constexpr (is_reduced_float_v<To>) {
    return To(static_cast<float>(v));  // through float, as torch (one rounding from float)
  } else {
    return pm::cast<To>(v);  // the formulas' cast: one definition of the rules
  }
}

}  // namespace kiln
