// neg, exp, tanh, sigmoid: the shared out= kernels of each family.
#include <cmath>

#include "generated/kernels/exp.h"
#include "generated/kernels/neg.h"
#include "generated/kernels/sigmoid.h"
#include "generated/kernels/tanh.h"
#include "runtime/kernels/cpu/loops.h"

namespace kiln {
namespace cpu {
namespace {

TensorIterator unary_iterator(const char* name, const TensorBase& self, const TensorBase& out, bool int_to_float) {
  IteratorConfig c;
  c.op_name = name;
  c.out = out;
  c.inputs = {self};
  c.inplace = out.defined() && out.is_same(self);
  c.int_to_float = int_to_float;
  return TensorIterator(std::move(c));
}

// Floating-point ops: integer inputs compute in the default float dtype (exp(int64) -> float32).
template <typename F>
TensorBase float_unary(const char* name, const TensorBase& self, const TensorBase& out, F f) {
  TensorIterator it = unary_iterator(name, self, out, /*int_to_float=*/true);
  KILN_DISPATCH_FLOATING_TYPES(it.compute_dtype(), name, [&] { unary_kernel<scalar_t, scalar_t>(it, f); });
  it.finish();
  return it.output();
}

}  // namespace

TensorBase neg_out(const TensorBase& self, const TensorBase& out) {
  KILN_CHECK(self.dtype() != ScalarType::Bool,
             "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use "
             "the `~` or `logical_not()` operator instead.");
  TensorIterator it = unary_iterator("neg", self, out, false);
  KILN_DISPATCH_NUMERIC_TYPES(it.compute_dtype(), "neg", [&] {
    unary_kernel<scalar_t, scalar_t>(it, [](scalar_t x) { return -x; });
  });
  it.finish();
  return it.output();
}

TensorBase exp_out(const TensorBase& self, const TensorBase& out) {
  return float_unary("exp", self, out, [](auto x) { return std::exp(x); });
}

TensorBase tanh_out(const TensorBase& self, const TensorBase& out) {
  return float_unary("tanh", self, out, [](auto x) { return std::tanh(x); });
}

TensorBase sigmoid_out(const TensorBase& self, const TensorBase& out) {
  return float_unary("sigmoid", self, out, [](auto x) { return decltype(x)(1) / (decltype(x)(1) + std::exp(-x)); });
}

}  // namespace cpu
}  // namespace kiln
