// Bitwise ops: &, |, ^, ~ on bool and integer tensors; float inputs are refused, as in PyTorch.
// (logical_and / or / xor are schema formulas: generated/cpu/.)
#include "generated/kernels/bitwise_and.h"
#include "generated/kernels/bitwise_not.h"
#include "generated/kernels/bitwise_or.h"
#include "generated/kernels/bitwise_xor.h"
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/pointwise_meta.h"

namespace kiln {
namespace cpu {
namespace {

// Only instantiated for bool and integer types (dispatch with `if constexpr` outside a
// template would still compile the float cases).
template <typename T, typename F>
void integral_binary(const TensorIterator& it, F f) {
  if constexpr (std::is_integral_v<T>) binary_kernel<T, T>(it, f);
}

template <typename T>
void invert(const TensorIterator& it) {
  if constexpr (std::is_same_v<T, bool>) {
    unary_kernel<bool, bool>(it, [](bool x) { return !x; });
  } else if constexpr (std::is_integral_v<T>) {
    unary_kernel<T, T>(it, [](T x) { return T(~x); });
  }
}

template <typename F>
TensorBase bitwise(const char* name, const TensorBase& self, const TensorBase& other, const TensorBase& out, F f) {
  TensorIterator it = bitwise_meta(name, self, other, out);
  KILN_DISPATCH_ALL_TYPES(it.compute_dtype(), name, [&] { integral_binary<scalar_t>(it, f); });
  return it.output();
}

}  // namespace

TensorBase bitwise_and_out(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  return bitwise("bitwise_and", self, other, out, [](auto a, auto b) { return decltype(a)(a & b); });
}

TensorBase bitwise_or_out(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  return bitwise("bitwise_or", self, other, out, [](auto a, auto b) { return decltype(a)(a | b); });
}

TensorBase bitwise_xor_out(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  return bitwise("bitwise_xor", self, other, out, [](auto a, auto b) { return decltype(a)(a ^ b); });
}

TensorBase bitwise_not_out(const TensorBase& self, const TensorBase& out) {
  TensorIterator it = bitwise_not_meta(self, out);
  KILN_DISPATCH_ALL_TYPES(it.compute_dtype(), "bitwise_not", [&] { invert<scalar_t>(it); });
  return it.output();
}

}  // namespace cpu
}  // namespace kiln
