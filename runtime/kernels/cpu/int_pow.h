// base ** exp for integer (and bool) tensors, by squaring. A negative exp gives torch's answers
// (1 ** -n = 1, (-1) ** -n = +-1, otherwise 0); pow(Tensor, Scalar) refuses it before the loop.
// Overflow wraps (the kernels are compiled with -fwrapv), as in PyTorch.
#pragma once

#include <cstdint>
#include <type_traits>

namespace kiln {
namespace cpu {

template <typename T>
T int_pow(T base, int64_t exp) {
  if constexpr (std::is_same_v<T, bool>) {
    return exp == 0 || base;
  } else {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exp & 1) ? T(-1) : T(1);
      return 0;
    }
    T result = 1;
    while (exp > 0) {
      if (exp & 1) result *= base;
      base *= base;
      exp >>= 1;
    }
    return result;
  }
}

}  // namespace cpu
}  // namespace kiln
