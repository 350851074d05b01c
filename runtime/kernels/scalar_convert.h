// Scalars converted to a tensor's element type, refusing values the type cannot
// hold (torch's "value cannot be converted to type int32 without overflow").
#pragma once

#include <cmath>
#include <initializer_list>
#include <limits>
#include <optional>
#include <functional>
#include <type_traits>

#include "runtime/core/error.h"
#include "runtime/core/scalar.h"

namespace kiln {

// `value` as T, refusing values T cannot hold (as torch.full / fill_ do).
template <typename T>
inline T checked_convert(const Scalar& value, const char* op_name) {
  if constexpr (std::is_same_v<T, bool>) {
    return value.to_bool();
  } else if constexpr (is_floating_v<T>) {
    const double v = value.to_double();
    KILN_CHECK(!std::isfinite(v) || std::fabs(v) <= largest_finite<T>(), op_name,
               "(): value cannot be converted to type ", scalar_type_name(CppTypeToScalarType<T>::value),
               " without overflow");
    return convert<T>(v);
  } else {
    bool ok;
    if (value.is_floating_point()) {
      const double v = value.to_double();
      ok = std::isfinite(v) && v >= static_cast<double>(std::numeric_limits<T>::min()) &&
           v <= static_cast<double>(std::numeric_limits<T>::max());
    } else {
      const int64_t v = value.to_long();
      // An unsigned type takes negative integers down to -max, wrapping (torch: uint8 fill_(-1) is
      // 255, so that a - b can be a + 255 * b).
      const int64_t lo = std::is_unsigned_v<T> ? -static_cast<int64_t>(std::numeric_limits<T>::max())
                                               : static_cast<int64_t>(std::numeric_limits<T>::min());
      ok = v >= lo && v <= static_cast<int64_t>(std::numeric_limits<T>::max());
    }
    KILN_CHECK(ok, op_name, "(): value cannot be converted to type ", scalar_type_name(CppTypeToScalarType<T>::value),
               " without overflow");
    return value.to<T>();
  }
}

// A Scalar? that is NaN while every other one of `others` is absent (torch's one-bound clamp loop
// ignores a NaN bound: clamp(x, min=nan) is x; with both bounds, a NaN gives NaN).
inline bool lone_nan(const std::optional<Scalar>& value,
                     std::initializer_list<std::reference_wrapper<const std::optional<Scalar>>> others) {
  if (!value || !value->is_floating_point() || !std::isnan(value->to_double())) return false;
  for (const std::optional<Scalar>& o : others)
    if (o) return false;
  return true;
}

// Throws unless `value` fits in `dtype`.
void check_scalar_fits(const Scalar& value, ScalarType dtype, const char* op_name);

}  // namespace kiln
