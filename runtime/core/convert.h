// Element conversion with a defined result for every input. C++ leaves float -> integer
// undefined for NaN, infinities and out-of-range values; here they give the integer type's
// minimum, which is what x86 (and so PyTorch on CPU) produces. Conversions to bool test != 0.
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

namespace kiln {

template <typename To, typename From>
inline To convert(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
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
