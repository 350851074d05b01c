#include "runtime/kernels/pointwise_meta.h"

#include "runtime/core/error.h"
#include "runtime/kernels/scalar_convert.h"

namespace kiln {
namespace {

void check_alpha(const char* op, ScalarType dtype, const Scalar& alpha) {
  KILN_CHECK(!(alpha.is_floating_point() && is_integral_type(dtype, true)), op,
             "(): For integral input tensors, argument alpha must not be a floating point number.");
  KILN_CHECK(!(alpha.is_boolean() && dtype != ScalarType::Bool), op,
             "(): Boolean alpha only supported for Boolean results.");
}

void check_integral(const char* op, ScalarType dtype) {
  KILN_CHECK(is_integral_type(dtype, /*include_bool=*/true), "\"", op, "_cpu\" not implemented for '",
             scalar_type_name(dtype), "'");
}

}  // namespace

TensorIterator add_sub_meta(const char* op, const TensorBase& self, const TensorBase& other, const Scalar& alpha,
                            const TensorBase& out, bool subtract) {
  if (subtract) {  // as torch: any bool operand, not only a bool result
    const bool self_bool = self.dtype() == ScalarType::Bool, other_bool = other.dtype() == ScalarType::Bool;
    KILN_CHECK(!(self_bool && other_bool), "Subtraction, the `-` operator, with two bool tensors is not supported. "
               "Use the `^` or `logical_xor()` operator instead.");
    KILN_CHECK(!(self_bool || other_bool), "Subtraction, the `-` operator, with a bool tensor is not supported. "
               "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  }
  TensorIterator it(IteratorConfig::binary(op, self, other, out));
  check_alpha(op, it.compute_dtype(), alpha);
  return it;
}

TensorIterator add_meta(const TensorBase& self, const TensorBase& other, const Scalar& alpha, const TensorBase& out) {
  return add_sub_meta("add", self, other, alpha, out, false);
}

TensorIterator sub_meta(const TensorBase& self, const TensorBase& other, const Scalar& alpha, const TensorBase& out) {
  return add_sub_meta("sub", self, other, alpha, out, true);
}

TensorIterator bitwise_meta(const char* op, const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  TensorIterator it(IteratorConfig::binary(op, self, other, out));
  check_integral(op, it.compute_dtype());
  return it;
}

TensorIterator bitwise_and_meta(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  return bitwise_meta("bitwise_and", self, other, out);
}

TensorIterator bitwise_or_meta(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  return bitwise_meta("bitwise_or", self, other, out);
}

TensorIterator bitwise_xor_meta(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  return bitwise_meta("bitwise_xor", self, other, out);
}

TensorIterator bitwise_not_meta(const TensorBase& self, const TensorBase& out) {
  TensorIterator it(IteratorConfig::unary("bitwise_not", self, out));
  check_integral("bitwise_not", it.compute_dtype());
  return it;
}

TensorIterator neg_meta(const TensorBase& self, const TensorBase& out) {
  KILN_CHECK(self.dtype() != ScalarType::Bool,
             "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use "
             "the `~` or `logical_not()` operator instead.");
  return TensorIterator(IteratorConfig::unary("neg", self, out));
}

TensorIterator isclose_meta(const TensorBase& self, const TensorBase& other, double rtol, double atol, bool equal_nan) {
  KILN_CHECK(self.dtype() == other.dtype(), "isclose(): expected both inputs to have the same dtype, but got ",
             scalar_type_name(self.dtype()), " and ", scalar_type_name(other.dtype()));
  KILN_CHECK(rtol >= 0 && atol >= 0, "isclose(): rtol and atol must be non-negative, got rtol=", rtol,
             " atol=", atol);
  if (equal_nan && is_floating_type(self.dtype())) {
    // torch computes self.isnan().__iand__(other.isnan()): in place, into self's shape
    const DimVector shape = broadcast_shapes(self.sizes(), other.sizes(), "isclose");
    KILN_CHECK(IntArrayRef(shape) == self.sizes(), "output with shape ", shape_str(self.sizes()),
               " doesn't match the broadcast shape ", shape_str(shape));
  }
  return TensorIterator(IteratorConfig::comparison("isclose", self, other, TensorBase()));
}

TensorIterator pow_scalar_meta(const TensorBase& self, const Scalar& exponent, const TensorBase& out) {
  TensorIterator it(IteratorConfig::binary("pow", self, wrap_scalar(exponent), out));
  KILN_CHECK(!is_integral_type(it.compute_dtype(), /*include_bool=*/true) || exponent.to_long() >= 0,
             "pow(): Integers to negative integer powers are not allowed.");
  return it;
}

TensorIterator clamp_meta(const TensorBase& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max,
                          const TensorBase& out) {
  KILN_CHECK(min || max, "clamp(): At least one of 'min' or 'max' must not be None");
  std::vector<TensorBase> operands = {self};
  if (min) operands.push_back(wrap_scalar(*min));
  if (max) operands.push_back(wrap_scalar(*max));
  const ScalarType compute = result_type(operands);
  if (min) check_scalar_fits(*min, compute, "clamp");
  if (max) check_scalar_fits(*max, compute, "clamp");
  IteratorConfig c = IteratorConfig::unary("clamp", self, out);
  c.compute_dtype = compute;
  return TensorIterator(std::move(c));
}

}  // namespace kiln
