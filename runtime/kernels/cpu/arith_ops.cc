// pow(Tensor, Tensor), clamp, floor_divide, remainder, fmod. Integer division by zero raises
// before any element is written. (maximum, minimum, reciprocal, atan2 and logical_not are schema
// formulas: generated/cpu/.)
#include <cmath>
#include <limits>

#include "generated/kernels/clamp.h"
#include "generated/kernels/floor_divide.h"
#include "generated/kernels/fmod.h"
#include "generated/kernels/pow.h"
#include "generated/kernels/remainder.h"
#include "runtime/kernels/cpu/int_pow.h"
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/pointwise_meta.h"
#include "runtime/kernels/scalar_convert.h"

namespace kiln {
namespace cpu {
namespace {

// Throws (outside any parallel loop) when an integer divisor holds a zero that is used (torch
// divides nothing, and raises nothing, when the result is empty).
void check_no_integer_zero(const TensorIterator& it, const TensorBase& other, const char* name) {
  if (!is_integral_type(it.compute_dtype(), true) || it.numel() == 0) return;
  TensorBase d = contiguous_cpu(cast_to(other, ScalarType::Int64));
  const int64_t* p = static_cast<const int64_t*>(d.data_ptr());
  for (int64_t i = 0; i < d.numel(); ++i)
    KILN_CHECK(p[i] != 0, "ZeroDivisionError: ", name, "(): integer division by zero");
}

template <typename T>
T floor_div(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    // torch's div_floor: (a - fmod(a, b)) / b, corrected toward floor, so infinite operands give
    // torch's answers (-1 // inf is -1, inf // 1 is nan).
    if (b == 0) return a / b;
    const T mod = std::fmod(a, b);
    T div = (a - mod) / b;
    if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
    if (div == 0) return std::copysign(T(0), a / b);
    T floored = std::floor(div);
    if (div - floored > T(0.5)) floored += 1;
    return floored;
  } else if constexpr (std::is_same_v<T, bool>) {
    return a;
  } else {
    if (b == -1) return static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(a));  // INT_MIN / -1 wraps
    // Zero divisors were refused before the loop; one can still appear when the op writes into
    // a tensor that overlaps its divisor, and must not be undefined behaviour.
    if (b == 0) return 0;
    T q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  }
}

template <typename T>
T python_mod(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    T r = std::fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  } else if constexpr (std::is_same_v<T, bool>) {
    return false;
  } else {
    if (b == -1 || b == 0) return 0;  // b == 0: see floor_div
    T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
}

template <typename T>
T c_fmod(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::fmod(a, b);
  } else {
    return b == -1 || b == 0 ? 0 : a % b;  // b == 0: see floor_div; INT_MIN % -1 is 0
  }
}

}  // namespace

TensorBase pow_tensor_out(const TensorBase& self, const TensorBase& exponent, const TensorBase& out) {
  TensorIterator it(IteratorConfig::binary("pow", self, exponent, out));
  const ScalarType dt = it.compute_dtype();
  // Negative integer exponents are fine here (torch refuses them only for a Scalar exponent).
  KILN_DISPATCH_NUMERIC_TYPES(dt, "pow", [&] {
    binary_kernel<scalar_t, scalar_t>(it, [](scalar_t a, scalar_t b) {
      if constexpr (std::is_floating_point_v<scalar_t>) return std::pow(a, b);
      else return int_pow<scalar_t>(a, static_cast<int64_t>(b));
    });
  });
  return it.output();
}

TensorBase clamp_out(const TensorBase& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max,
                     const TensorBase& out) {
  TensorIterator it = clamp_meta(self, min, max, out);
  KILN_DISPATCH_NUMERIC_TYPES(it.compute_dtype(), "clamp", [&] {
    const bool has_lo = min.has_value(), has_hi = max.has_value();
    const scalar_t lo = has_lo ? min->to<scalar_t>() : scalar_t(0), hi = has_hi ? max->to<scalar_t>() : scalar_t(0);
    unary_kernel<scalar_t, scalar_t>(it, [=](scalar_t x) {
      // A NaN x stays NaN (it compares false); a NaN bound makes every result NaN (torch 2.x).
      if (has_lo && (x < lo || lo != lo)) x = lo;
      if (has_hi && (x > hi || hi != hi)) x = hi;
      return x;
    });
  });
  return it.output();
}

TensorBase floor_divide_out(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  TensorIterator it(IteratorConfig::binary("floor_divide", self, other, out));
  check_no_integer_zero(it, other, "floor_divide");
  KILN_DISPATCH_NUMERIC_TYPES(it.compute_dtype(), "floor_divide", [&] {
    binary_kernel<scalar_t, scalar_t>(it, [](scalar_t a, scalar_t b) { return floor_div(a, b); });
  });
  return it.output();
}

TensorBase remainder_out(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  TensorIterator it(IteratorConfig::binary("remainder", self, other, out));
  check_no_integer_zero(it, other, "remainder");
  KILN_DISPATCH_NUMERIC_TYPES(it.compute_dtype(), "remainder", [&] {
    binary_kernel<scalar_t, scalar_t>(it, [](scalar_t a, scalar_t b) { return python_mod(a, b); });
  });
  return it.output();
}

// fmod: C's remainder, with the sign of the dividend (remainder takes the divisor's).
TensorBase fmod_out(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  TensorIterator it(IteratorConfig::binary("fmod", self, other, out));
  check_no_integer_zero(it, other, "fmod");
  KILN_DISPATCH_NUMERIC_TYPES(it.compute_dtype(), "fmod", [&] {
    binary_kernel<scalar_t, scalar_t>(it, [](scalar_t a, scalar_t b) { return c_fmod(a, b); });
  });
  return it.output();
}

}  // namespace cpu
}  // namespace kiln
