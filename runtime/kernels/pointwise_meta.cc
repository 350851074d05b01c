#include "runtime/kernels/pointwise_meta.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "runtime/core/error.h"
#include "runtime/kernels/scalar_convert.h"
#include "runtime/kernels/type_promotion.h"

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

// Throws when an integer divisor holds a zero that is used. Only on the CPU, as torch (a GPU
// kernel cannot raise).
void check_no_integer_zero(const TensorIterator& it, const TensorBase& other, const char* op) {
  if (!is_integral_type(it.compute_dtype(), true) || it.numel() == 0 || !other.device().is_cpu()) return;
  // Each stored divisor once: an expanded divisor (stride 0) is read through a view of size 1
  // there, so x // y.expand(10**9) copies no more than y (a hostile size would copy 8 GB).
  DimVector sizes(other.sizes().begin(), other.sizes().end());
  for (int64_t k = 0; k < other.dim(); ++k)
    if (other.strides()[k] == 0) sizes[k] = std::min<int64_t>(sizes[k], 1);
  const TensorBase stored(Ref<TensorImpl>(new TensorImpl(*other.impl(), sizes, other.strides(), other.storage_offset())));
  // Read in the compute dtype first: an int64 number wraps there as torch converts it (int32 // 2**32
  // divides by 0: ZeroDivisionError).
  const TensorBase d = contiguous_tensor(cast_to(cast_to(stored, it.compute_dtype()), ScalarType::Int64));
  const int64_t* p = static_cast<const int64_t*>(d.data_ptr());
  for (int64_t i = 0; i < d.numel(); ++i)
    KILN_CHECK(p[i] != 0, "ZeroDivisionError: ", op, "(): integer division by zero");
}

// A float16/bfloat16 result: torch's kernels read every input as a value of that dtype (a Python
// scalar 0.1 is 0.0999755859375 in f16 % 0.1, 2**31 is inf in 2**31 // f16), except that floor
// division keeps a one-element divisor in float32 (torch 2.x's original_scalar_value: f16 // 0.1
// divides by 0.1f). kiln's loop reads inputs converted to float32 straight from their own dtype,
// so such inputs are rounded here first. Not self when it is also out (in place).
TensorBase through_reduced_dtype(const TensorBase& t, ScalarType common, bool keep, const TensorBase& out) {
  if (keep || t.dtype() == common || (out.defined() && out.is_same(t))) return t;
  return cast_to(t, common);
}

TensorIterator integer_division_meta(const char* op, const TensorBase& self_in, const TensorBase& other_in,
                                     const TensorBase& out) {
  TensorBase self = self_in, other = other_in;
  const ScalarType common = result_type({self_in, other_in});
  if (common == ScalarType::Float16 || common == ScalarType::BFloat16) {
    const bool floor = std::string(op) == "floor_divide";
    self = through_reduced_dtype(self_in, common, false, out);
    other = through_reduced_dtype(other_in, common, floor && other_in.numel() == 1, out);
  }
  TensorIterator it(IteratorConfig::binary(op, self, other, out));
  check_no_integer_zero(it, other, op);
  return it;
}

void check_lerp_operand(const TensorBase& self, const TensorBase& t, const char* what) {
  KILN_CHECK(t.dtype() == self.dtype(), "lerp(): expected dtype ", scalar_type_name(self.dtype()), " for `", what,
             "` but got dtype ", scalar_type_name(t.dtype()));
}

void check_lerp_self(const TensorBase& self) {
  KILN_CHECK(is_floating_type(self.dtype()), "lerp(): \"lerp_kernel_scalar\" not implemented for '",
             scalar_type_name(self.dtype()), "'");
}

}  // namespace

TensorIterator floor_divide_meta(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  return integer_division_meta("floor_divide", self, other, out);
}

TensorIterator remainder_meta(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  return integer_division_meta("remainder", self, other, out);
}

TensorIterator fmod_meta(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  return integer_division_meta("fmod", self, other, out);
}

TensorIterator where_meta(const TensorBase& condition, const TensorBase& self, const TensorBase& other,
                          const TensorBase& out) {
  KILN_CHECK(condition.dtype() == ScalarType::Bool, "where(): expected condition to be a bool tensor, got ",
             scalar_type_name(condition.dtype()));
  return TensorIterator(IteratorConfig::select("where", condition, self, other, out));
}

TensorIterator lerp_scalar_meta(const TensorBase& self, const TensorBase& end, const Scalar& weight,
                                const TensorBase& out) {
  check_lerp_self(self);
  check_lerp_operand(self, end, "end");
  (void)weight;
  return TensorIterator(IteratorConfig::binary("lerp", self, end, out));
}

TensorIterator lerp_tensor_meta(const TensorBase& self, const TensorBase& end, const TensorBase& weight,
                                const TensorBase& out) {
  check_lerp_self(self);
  check_lerp_operand(self, end, "end");
  check_lerp_operand(self, weight, "weight");
  return TensorIterator(IteratorConfig::ternary_float("lerp", self, end, weight, out));
}

int choice_index(const char* op, const char* arg, const std::string& value, std::initializer_list<const char*> allowed) {
  int i = 0;
  for (const char* a : allowed) {
    if (value == a) return i;
    ++i;
  }
  std::string list;
  i = 0;
  for (const char* a : allowed) {
    list += i == 0 ? "" : (i + 1 == static_cast<int>(allowed.size()) ? " or " : ", ");
    list += a;
    ++i;
  }
  KILN_CHECK(false, op, "(): ", arg, " argument must be either ", list, ", got '", value, "'");
  return -1;
}

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

// torch names its shift kernels lshift / rshift, and has none for bool.
TensorIterator shift_meta(const char* op, const char* kernel, const TensorBase& self, const TensorBase& other,
                          const TensorBase& out) {
  TensorIterator it(IteratorConfig::binary(op, self, other, out));
  check_integral(kernel, it.compute_dtype());
  KILN_CHECK(it.compute_dtype() != ScalarType::Bool, "\"", kernel, "_cpu\" not implemented for 'bool'");
  return it;
}

TensorIterator bitwise_left_shift_meta(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  return shift_meta("bitwise_left_shift", "lshift", self, other, out);
}

TensorIterator bitwise_right_shift_meta(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  return shift_meta("bitwise_right_shift", "rshift", self, other, out);
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

TensorIterator softshrink_meta(const TensorBase& self, const Scalar& lambd, const TensorBase& out) {
  KILN_CHECK(lambd.to_double() >= 0, "softshrink(): lambda must be greater or equal to 0, but found to be ",
             lambd.to_double(), ".");
  return TensorIterator(IteratorConfig::unary("softshrink", self, out));
}

TensorIterator pow_scalar_meta(const TensorBase& self, const Scalar& exponent, const TensorBase& out) {
  // One input, computed in the dtype it promotes to with the exponent (int ** 2.5 is float): the
  // exponent is the functor's, not an operand the loop would convert a chunk at a time.
  // out= takes exactly that dtype, as torch's pow.Tensor_Scalar_out (int64 ** 2 into float32 raises;
  // the Tensor-Tensor forms cast).
  IteratorConfig c = IteratorConfig::unary("pow", self, out);
  const ScalarType common = result_type({self, wrap_scalar(exponent)});
  c.compute_dtype = common;
  KILN_CHECK(common != ScalarType::Bool, "\"pow\" not implemented for 'Bool'");  // bool ** True, as torch
  TensorIterator it(std::move(c));
  KILN_CHECK(!is_integral_type(it.compute_dtype(), /*include_bool=*/true) || exponent.to_long() >= 0,
             "pow(): Integers to negative integer powers are not allowed.");
  // The kernel takes the exponent in the compute dtype, as torch, which refuses one that overflows
  // it (int32 ** 2**31; float16 ** 70000: the common dtype, not the float32 the loop computes in);
  // float32/float64 kernels take a double exponent (float32 ** 1e300 is inf, no error).
  if (common != ScalarType::Float32 && common != ScalarType::Float64) check_scalar_fits(exponent, common, "pow");
  return it;
}

namespace {
// clamp, clamp_min and clamp_max: self and the Scalar bounds promote together.
TensorIterator clamp_bounds_meta(const char* op, const TensorBase& self, const std::optional<Scalar>& min,
                                 const std::optional<Scalar>& max, const TensorBase& out) {
  std::vector<TensorBase> operands = {self};
  if (min) operands.push_back(wrap_scalar(*min));
  if (max) operands.push_back(wrap_scalar(*max));
  const ScalarType compute = result_type(operands);
  // Two bounds, one NaN: the result is NaN (torch fills it before converting either bound), so
  // neither is checked: clamp(int8 tensor, min=nan, max=1e39) is NaN in float32, as in torch.
  auto is_nan = [](const std::optional<Scalar>& s) {
    return s && s->is_floating_point() && std::isnan(s->to_double());
  };
  const bool nan_fill = min && max && (is_nan(min) || is_nan(max));
  if (min && !nan_fill) check_scalar_fits(*min, compute, op);
  if (max && !nan_fill) check_scalar_fits(*max, compute, op);
  IteratorConfig c = IteratorConfig::unary(op, self, out);
  c.compute_dtype = compute;
  return TensorIterator(std::move(c));
}
}  // namespace

TensorIterator clamp_meta(const TensorBase& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max,
                          const TensorBase& out) {
  KILN_CHECK(min || max, "clamp(): At least one of 'min' or 'max' must not be None");
  return clamp_bounds_meta("clamp", self, min, max, out);
}

TensorIterator clamp_min_meta(const TensorBase& self, const Scalar& min, const TensorBase& out) {
  return clamp_bounds_meta("clamp_min", self, min, std::nullopt, out);
}

TensorIterator threshold_meta(const TensorBase& self, const Scalar& threshold, const Scalar& value,
                              const TensorBase& out) {
  (void)threshold, (void)value;
  IteratorConfig c = IteratorConfig::unary("threshold", self, out);
  c.idempotent_inplace = true;  // torch's threshold skips the overlap check (threshold_ of an expanded x)
  return TensorIterator(std::move(c));
}

TensorIterator hardtanh_meta(const TensorBase& self, const Scalar& min_val, const Scalar& max_val,
                             const TensorBase& out) {
  TensorIterator it(IteratorConfig::unary("hardtanh", self, out));
  KILN_CHECK(it.compute_dtype() != ScalarType::UInt8 || (min_val.to_double() >= 0 && max_val.to_double() >= 0),
             "cannot do hardtanh on an unsigned type with negative limits");
  return it;
}

TensorIterator clamp_max_meta(const TensorBase& self, const Scalar& max, const TensorBase& out) {
  return clamp_bounds_meta("clamp_max", self, std::nullopt, max, out);
}

TensorIterator heaviside_meta(const TensorBase& self, const TensorBase& values, const TensorBase& out) {
  KILN_CHECK(self.dtype() == values.dtype() && (!out.defined() || out.dtype() == self.dtype()),
             "heaviside is not yet implemented for tensors with different dtypes.");  // out= too, as torch
  return TensorIterator(IteratorConfig::binary("heaviside", self, values, out));
}

namespace {
IteratorConfig ternary(const char* op, const TensorBase& a, const TensorBase& b, const TensorBase& c,
                       const TensorBase& out) {
  IteratorConfig config = IteratorConfig::ternary_float(op, a, b, c, out);
  config.int_to_float = false;  // integers stay integers (value is converted to them)
  return config;
}
}  // namespace

TensorIterator addcmul_meta(const TensorBase& self, const TensorBase& tensor1, const TensorBase& tensor2,
                            const Scalar& value, const TensorBase& out) {
  (void)value;
  return TensorIterator(ternary("addcmul", self, tensor1, tensor2, out));
}

TensorIterator addcdiv_meta(const TensorBase& self, const TensorBase& tensor1, const TensorBase& tensor2,
                            const Scalar& value, const TensorBase& out) {
  (void)value;
  KILN_CHECK(!is_integral_type(tensor1.dtype(), /*include_bool=*/true) ||
                 !is_integral_type(tensor2.dtype(), /*include_bool=*/true),
             "Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform "
             "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
             "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
             "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter "
             "implementation: (input + value * tensor1 / tensor2), for all dtypes.");
  return TensorIterator(ternary("addcdiv", self, tensor1, tensor2, out));
}

namespace {
// torch's names of the dtypes, as its "..._cpu" not implemented for 'Float' messages give them.
const char* torch_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "Bool";
    case ScalarType::UInt8: return "Byte";
    case ScalarType::Int8: return "Char";
    case ScalarType::Int16: return "Short";
    case ScalarType::Int32: return "Int";
    case ScalarType::Int64: return "Long";
    case ScalarType::Float16: return "Half";
    case ScalarType::BFloat16: return "BFloat16";
    case ScalarType::Float32: return "Float";
    case ScalarType::Float64: return "Double";
    default: return "Undefined";
  }
}

TensorIterator integer_only_meta(const char* op, const TensorBase& self, const TensorBase& other,
                                 const TensorBase& out) {
  TensorIterator it(IteratorConfig::binary(op, self, other, out));
  KILN_CHECK(is_integral_type(it.compute_dtype(), /*include_bool=*/false), "\"", op, "_cpu\" not implemented for '",
             torch_name(it.compute_dtype()), "'");
  return it;
}

// The output dtype float_power requires: float64, also of an out= or of float_power_'s self.
void check_float_power_out(const TensorBase& self, const TensorBase& out) {
  if (!out.defined()) return;
  KILN_CHECK(out.dtype() == ScalarType::Float64, "the ", out.is_same(self) ? "base given to float_power_" :
             "output given to float_power", " has dtype ", torch_name(out.dtype()),
             " but the operation's result requires dtype Double");
}
}  // namespace

TensorIterator gcd_meta(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  return integer_only_meta("gcd", self, other, out);
}

TensorIterator lcm_meta(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  return integer_only_meta("lcm", self, other, out);
}

TensorIterator nextafter_meta(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  const ScalarType dtype = result_type({self, other});
  KILN_CHECK(dtype == ScalarType::Float32 || dtype == ScalarType::Float64, "\"nextafter_cpu\" not implemented for '",
             torch_name(dtype), "'");
  return TensorIterator(IteratorConfig::binary("nextafter", self, other, out));
}

TensorIterator ldexp_meta(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  // pow(2.0, other) has other's dims and dtype (the default float dtype for an integer other); mul
  // then promotes as result_type does: dims > 0 beat 0-dim unless the weaker is of a higher category.
  const ScalarType p = is_floating_type(other.dtype()) ? other.dtype() : default_dtype();
  ScalarType dtype = promote_types(self.dtype(), p);
  if ((self.dim() == 0) != (other.dim() == 0)) {
    const ScalarType strong = self.dim() == 0 ? p : self.dtype(), weak = self.dim() == 0 ? self.dtype() : p;
    dtype = is_floating_type(strong) || !is_floating_type(weak) ? strong : promote_types(strong, weak);
  }
  IteratorConfig config = IteratorConfig::binary("ldexp", self, other, out);
  config.compute_dtype = dtype;
  return TensorIterator(config);
}

TensorIterator float_power_meta(const TensorBase& self, const TensorBase& exponent, const TensorBase& out) {
  check_float_power_out(self, out);
  IteratorConfig config = IteratorConfig::binary("float_power", self, exponent, out);
  config.compute_dtype = ScalarType::Float64;
  return TensorIterator(config);
}

TensorIterator float_power_scalar_meta(const TensorBase& self, const Scalar& exponent, const TensorBase& out) {
  (void)exponent;
  check_float_power_out(self, out);
  IteratorConfig config = IteratorConfig::unary("float_power", self, out);
  config.compute_dtype = ScalarType::Float64;
  return TensorIterator(config);
}

}  // namespace kiln
