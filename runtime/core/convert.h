// Element conversion with a defined result for every input. C++ leaves float -> integer
// undefined for NaN, infinities and out-of-range values; here they give the integer type's
// minimum, which is what x86 (and so PyTorch on CPU) produces; the types narrower than int32 take
// the low bits of that int32 (of that int64 for uint8). Conversions to bool test != 0.
// float16 and bfloat16 convert through float.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "runtime/core/half.h"

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
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_integral_v<To> && sizeof(To) < 4 && std::is_floating_point_v<From>) {
    // uint8, int8, int16: x86 has no narrower conversion, so torch's CPU kernels (as GCC compiles
    // them) convert to int32 and keep the low bits (-1.0 -> 255, 300.0 -> 44 as uint8; 1e10 ->
    // int32's minimum -> 0), except to uint8, which goes through int64 (2^40 + 5.0 -> 5; for float
    // inputs the two ways agree, their low 8 bits beyond int32's range being 0).
    using Wide = std::conditional_t<std::is_unsigned_v<To>, int64_t, int32_t>;
    return static_cast<To>(convert<Wide>(v));
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    // The bounds as From: 2^63 is exact in double; the upper end is exclusive.
    constexpr From lo = static_cast<From>(std::numeric_limits<To>::min());
    constexpr From hi = -static_cast<From>(std::numeric_limits<To>::min());
    if (!(v >= lo && v < hi)) return std::numeric_limits<To>::min();  // NaN fails both tests
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace kiln
