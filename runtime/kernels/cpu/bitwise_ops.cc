// Bitwise ops (&, |, ^, ~ on bool and integer tensors; float inputs are refused, as in
// PyTorch) and logical ops (and/or/xor of "nonzero", bool results, any dtype).
#include "generated/kernels/bitwise_and.h"
#include "generated/kernels/bitwise_not.h"
#include "generated/kernels/bitwise_or.h"
#include "generated/kernels/bitwise_xor.h"
#include "generated/kernels/logical_and.h"
#include "generated/kernels/logical_or.h"
#include "generated/kernels/logical_xor.h"
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

template <typename F>
TensorBase logical(const char* name, const TensorBase& self, const TensorBase& other, const TensorBase& out, F f) {
  // A non-bool out (logical_and_ on a float tensor, out=float) gets the bools cast into it by
  // the iterator, resized and broadcast like any out=.
  TensorIterator it(IteratorConfig::comparison(name, self, other, out));
  KILN_DISPATCH_ALL_TYPES(it.compute_dtype(), name, [&] {
    binary_kernel<bool, scalar_t>(it, [f](scalar_t a, scalar_t b) {
      return f(static_cast<bool>(a), static_cast<bool>(b));
    });
  });
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

TensorBase logical_and_out(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  return logical("logical_and", self, other, out, [](bool a, bool b) { return a && b; });
}

TensorBase logical_or_out(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  return logical("logical_or", self, other, out, [](bool a, bool b) { return a || b; });
}

TensorBase logical_xor_out(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  return logical("logical_xor", self, other, out, [](bool a, bool b) { return a != b; });
}

}  // namespace cpu
}  // namespace kiln
