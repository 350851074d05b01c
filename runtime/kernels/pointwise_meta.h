// The device-neutral half of the pointwise ops whose rules are more than a named iterator
// configuration: torch's argument errors (alpha, bool subtraction, bitwise on floats, negative
// integer powers, clamp bounds), checked here once, before any backend's loop runs — as
// PyTorch's meta functions. Each returns the iterator the backend walks.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>

#include "runtime/core/scalar.h"
#include "runtime/kernels/tensor_iterator.h"

namespace kiln {

// add / sub (`subtract`): bool operands refused for sub, alpha checked against the result dtype.
TensorIterator add_sub_meta(const char* op, const TensorBase& self, const TensorBase& other, const Scalar& alpha,
                            const TensorBase& out, bool subtract);
// add / sub with alpha, as add_sub_meta: the meta functions of their generated kernels.
TensorIterator add_meta(const TensorBase& self, const TensorBase& other, const Scalar& alpha, const TensorBase& out);
TensorIterator sub_meta(const TensorBase& self, const TensorBase& other, const Scalar& alpha, const TensorBase& out);
// bitwise_and / or / xor: bool and integer dtypes only.
TensorIterator bitwise_meta(const char* op, const TensorBase& self, const TensorBase& other, const TensorBase& out);
TensorIterator bitwise_not_meta(const TensorBase& self, const TensorBase& out);
// bitwise_left_shift / bitwise_right_shift: integer dtypes, not bool (torch's lshift/rshift kernels).
TensorIterator bitwise_left_shift_meta(const TensorBase& self, const TensorBase& other, const TensorBase& out);
TensorIterator bitwise_right_shift_meta(const TensorBase& self, const TensorBase& other, const TensorBase& out);
TensorIterator bitwise_and_meta(const TensorBase& self, const TensorBase& other, const TensorBase& out);
TensorIterator bitwise_or_meta(const TensorBase& self, const TensorBase& other, const TensorBase& out);
TensorIterator bitwise_xor_meta(const TensorBase& self, const TensorBase& other, const TensorBase& out);
// neg: bool refused (torch points to `~` / logical_not).
TensorIterator neg_meta(const TensorBase& self, const TensorBase& out);
// pow(Tensor, Scalar): a Python number exponent, integers refuse negative ones.
TensorIterator pow_scalar_meta(const TensorBase& self, const Scalar& exponent, const TensorBase& out);
// clamp(Tensor, Scalar? min, Scalar? max): one bound at least, each fitting the result dtype
// (clamp(int_tensor, 0.5) computes in float, as in PyTorch).
TensorIterator clamp_meta(const TensorBase& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max,
                          const TensorBase& out);

// floor_divide / remainder / fmod: an integer divisor holding a zero raises ZeroDivisionError on the
// CPU, before any element is written (torch divides nothing, and raises nothing, when the result
// is empty).
TensorIterator floor_divide_meta(const TensorBase& self, const TensorBase& other, const TensorBase& out);
TensorIterator remainder_meta(const TensorBase& self, const TensorBase& other, const TensorBase& out);
TensorIterator fmod_meta(const TensorBase& self, const TensorBase& other, const TensorBase& out);
// where: a bool condition (read as bool), self and other promoted together.
TensorIterator where_meta(const TensorBase& condition, const TensorBase& self, const TensorBase& other,
                          const TensorBase& out);
// lerp: floating tensors of one dtype (end and weight must have self's).
TensorIterator lerp_scalar_meta(const TensorBase& self, const TensorBase& end, const Scalar& weight,
                                const TensorBase& out);
TensorIterator lerp_tensor_meta(const TensorBase& self, const TensorBase& end, const TensorBase& weight,
                                const TensorBase& out);
// softshrink: a negative lambd refused.
TensorIterator softshrink_meta(const TensorBase& self, const Scalar& lambd, const TensorBase& out);
// The index of a str argument's value among `allowed` (a formula's `choices:`), or torch's error:
// "gelu(): approximate argument must be either none or tanh, got 'x'".
int choice_index(const char* op, const char* arg, const std::string& value, std::initializer_list<const char*> allowed);

// clamp with one Scalar bound: clamp_meta's dtype rule and checks.
TensorIterator clamp_min_meta(const TensorBase& self, const Scalar& min, const TensorBase& out);
// hardtanh: a uint8 input takes no negative limit (torch's rule; clamp would wrap it to 255).
TensorIterator threshold_meta(const TensorBase& self, const Scalar& threshold, const Scalar& value,
                              const TensorBase& out);
TensorIterator hardtanh_meta(const TensorBase& self, const Scalar& min_val, const Scalar& max_val,
                             const TensorBase& out);
TensorIterator clamp_max_meta(const TensorBase& self, const Scalar& max, const TensorBase& out);
// heaviside: self and values of one dtype (torch does not promote them).
TensorIterator heaviside_meta(const TensorBase& self, const TensorBase& values, const TensorBase& out);
// addcmul: the promoted dtype of the three tensors; addcdiv: the same, but tensor1 / tensor2 of
// integers is refused (torch's historic integer division).
TensorIterator addcmul_meta(const TensorBase& self, const TensorBase& tensor1, const TensorBase& tensor2,
                            const Scalar& value, const TensorBase& out);
TensorIterator addcdiv_meta(const TensorBase& self, const TensorBase& tensor1, const TensorBase& tensor2,
                            const Scalar& value, const TensorBase& out);

// gcd / lcm: integer dtypes, not bool (torch's gcd_cpu / lcm_cpu kernels).
TensorIterator gcd_meta(const TensorBase& self, const TensorBase& other, const TensorBase& out);
TensorIterator lcm_meta(const TensorBase& self, const TensorBase& other, const TensorBase& out);
// nextafter: float32 and float64 (float16/bfloat16 would compute in float32, whose neighbours are
// not theirs).
TensorIterator nextafter_meta(const TensorBase& self, const TensorBase& other, const TensorBase& out);
// ldexp: the dtype of torch's mul(self, pow(2.0, other)), pow's being other's, or the default
// float dtype for an integer other.
TensorIterator ldexp_meta(const TensorBase& self, const TensorBase& other, const TensorBase& out);
// float_power: float64 always; an out= (or the self of float_power_) of another dtype is refused.
TensorIterator float_power_meta(const TensorBase& self, const TensorBase& exponent, const TensorBase& out);
TensorIterator float_power_scalar_meta(const TensorBase& self, const Scalar& exponent, const TensorBase& out);

}  // namespace kiln
