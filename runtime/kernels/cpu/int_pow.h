// base ** exp for integer (and bool) tensors, by squaring; exp >= 0 is checked by the callers.
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
