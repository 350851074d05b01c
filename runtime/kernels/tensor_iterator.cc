#include "runtime/kernels/tensor_iterator.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include "runtime/core/error.h"
#include "runtime/core/warning.h"
#include "runtime/kernels/tensor_memory.h"

namespace kiln {

// ---- named configurations ----

IteratorConfig IteratorConfig::unary(const char* op, const TensorBase& self, const TensorBase& out) {
  IteratorConfig c;
  c.op_name = op;
  c.out = out;
  c.inputs = {self};
  c.inplace = out.defined() && out.is_same(self);
  c.out_same_dtype = true;  // neg(int64, out=float32) is refused, as in torch
  return c;
}

IteratorConfig IteratorConfig::unary_float(const char* op, const TensorBase& self, const TensorBase& out) {
  IteratorConfig c = unary(op, self, out);
  c.int_to_float = true;
  c.out_same_dtype = false;  // exp(int64, out=float64) is fine
  return c;
}

IteratorConfig IteratorConfig::binary(const char* op, const TensorBase& self, const TensorBase& other,
                                      const TensorBase& out) {
  IteratorConfig c;
  c.op_name = op;
  c.out = out;
  c.inputs = {self, other};
  c.inplace = out.defined() && out.is_same(self);
  return c;
}

IteratorConfig IteratorConfig::binary_float(const char* op, const TensorBase& self, const TensorBase& other,
                                            const TensorBase& out) {
  IteratorConfig c = binary(op, self, other, out);
  c.int_to_float = true;
  return c;
}

IteratorConfig IteratorConfig::select(const char* op, const TensorBase& condition, const TensorBase& self,
                                      const TensorBase& other, const TensorBase& out) {
  IteratorConfig c;
  c.op_name = op;
  c.out = out;
  c.inputs = {condition, self, other};
  c.condition_first = true;
  return c;
}

IteratorConfig IteratorConfig::ternary(const char* op, const TensorBase& a, const TensorBase& b, const TensorBase& c3,
                                       const TensorBase& out) {
  IteratorConfig c;
  c.op_name = op;
  c.out = out;
  c.inputs = {a, b, c3};
  c.inplace = out.defined() && out.is_same(a);
  return c;
}

IteratorConfig IteratorConfig::ternary_float(const char* op, const TensorBase& a, const TensorBase& b,
                                             const TensorBase& c3, const TensorBase& out) {
  IteratorConfig c = ternary(op, a, b, c3, out);
  c.int_to_float = true;
  return c;
}

IteratorConfig IteratorConfig::comparison(const char* op, const TensorBase& self, const TensorBase& other,
                                          const TensorBase& out) {
  IteratorConfig c = binary(op, self, other, out);
  c.out_dtype = ScalarType::Bool;
  return c;
}

IteratorConfig IteratorConfig::predicate(const char* op, const TensorBase& self, const TensorBase& out) {
  IteratorConfig c = unary(op, self, out);
  c.out_same_dtype = false;  // bools cast into any out=
  c.out_dtype = ScalarType::Bool;
  return c;
}

IteratorConfig IteratorConfig::nullary(const char* op, const TensorBase& out) {
  IteratorConfig c;
  c.op_name = op;
  c.out = out;
  c.inplace = true;
  c.same_value_everywhere = true;  // an expanded tensor is filled, as in torch
  c.promote_inputs = false;
  c.reduced_float_as_float32 = false;  // the value is written already converted to out's dtype
  return c;
}

IteratorConfig IteratorConfig::reduction_into(const char* op, const TensorBase& accumulators, const TensorBase& input) {
  IteratorConfig c;
  c.op_name = op;
  c.out = accumulators;
  c.inputs = {input};
  c.promote_inputs = false;
  c.compute_dtype = input.dtype();
  c.out_dtype = accumulators.dtype();
  c.inplace = true;
  c.reduction = true;
  return c;
}

IteratorConfig IteratorConfig::copy(const char* op, const TensorBase& dst, const TensorBase& src) {
  IteratorConfig c;
  c.op_name = op;
  c.out = dst;
  c.inputs = {src};
  c.promote_inputs = false;
  c.compute_dtype = src.dtype();
  c.out_dtype = dst.dtype();
  c.inplace = true;
  c.reduced_float_as_float32 = false;
  return c;
}

// ---- building ----

TensorIterator::TensorIterator(IteratorConfig config) { build(config); }

namespace {

// The device every operand lives on: that of the first input that is not a Python number (a
// number may join tensors of any device), else out's. Mixed devices are refused, as in torch.
Device common_device(const IteratorConfig& c) {
  const TensorBase* first = nullptr;
  for (const TensorBase& t : c.inputs) {
    if (t.impl()->is_wrapped_number()) continue;
    if (!first) first = &t;
    KILN_CHECK(t.device() == first->device(), "Expected all tensors to be on the same device, but found at least two "
               "devices, ", first->device().str(), " and ", t.device().str(), "! (in ", c.op_name, ")");
  }
  if (first) return first->device();
  return c.out.defined() ? c.out.device() : Device(DeviceType::CPU);
}

}  // namespace

namespace {
// The ops whose torch 2.x kernels read a one-element second operand unrounded in float16/bfloat16.
bool keeps_scalar_operand(const char* op) {
  static const char* const kKeep[] = {"add", "sub", "mul", "div", "floor_divide"};
  for (const char* k : kKeep)
    if (std::strcmp(op, k) == 0) return true;
  return false;
}
}  // namespace

void TensorIterator::build(IteratorConfig& c) {
  op_name_ = c.op_name;
  // Shape.
  DimVector shape;
  bool first = true;
  for (const TensorBase& t : c.inputs) {
    KILN_CHECK(t.defined(), c.op_name, "(): expected a defined tensor");
    shape = first ? DimVector(t.sizes().begin(), t.sizes().end()) : broadcast_shapes(shape, t.sizes(), c.op_name);
    first = false;
  }
  if (c.inputs.empty() && c.out.defined()) shape.assign(c.out.sizes().begin(), c.out.sizes().end());
  device_ = common_device(c);

  // Dtypes.
  ScalarType common = !c.promote_inputs ? (c.inputs.empty() ? c.out.dtype() : c.inputs[0].dtype())
                      : c.condition_first ? result_type(std::vector<TensorBase>(c.inputs.begin() + 1, c.inputs.end()))
                                          : result_type(c.inputs);
  compute_dtype_ = c.compute_dtype != ScalarType::Undefined ? c.compute_dtype : common;
  if (c.int_to_float && !is_floating_type(compute_dtype_)) compute_dtype_ = default_dtype();
  const ScalarType result_dtype = c.out_dtype != ScalarType::Undefined ? c.out_dtype : compute_dtype_;
  const ScalarType stored_common = compute_dtype_;
  if (c.reduced_float_as_float32) compute_dtype_ = opmath_type(compute_dtype_);
  // What the kernel writes: the compute dtype unless forced (Bool for comparisons).
  const ScalarType kernel_out_dtype = c.out_dtype != ScalarType::Undefined ? c.out_dtype : compute_dtype_;

  // Output.
  if (c.out.defined()) {
    KILN_CHECK(c.out.device() == device_, c.op_name, "(): Expected out tensor to have device ", device_.str(),
               ", but got ", c.out.device().str());
    KILN_CHECK(can_cast(result_dtype, c.out.dtype()), c.op_name, "(): result type ", scalar_type_name(result_dtype),
               " can't be cast to the desired output type ", scalar_type_name(c.out.dtype()));
    KILN_CHECK(!c.out_same_dtype || c.out.dtype() == result_dtype, c.op_name, "(): Found dtype ",
               scalar_type_name(c.out.dtype()), " but expected ", scalar_type_name(result_dtype));
    if (!(c.out.sizes() == IntArrayRef(shape))) {
      KILN_CHECK(!c.inplace, c.op_name, "(): output with shape ", shape_str(c.out.sizes()),
                 " doesn't match the broadcast shape ", shape_str(shape));
      // Resizing an out that is also an input would change the input under the kernel.
      for (const TensorBase& t : c.inputs) check_out_is_not_an_input(c.out, {&t}, c.op_name);
      warn_if_out_resized(c.out.sizes(), shape);
      c.out.impl()->set_sizes_contiguous(shape);
    }
    if (!c.reduction && !c.same_value_everywhere && !(c.inplace && c.idempotent_inplace))
      check_no_internal_overlap(c.out, c.op_name);
    for (const TensorBase& t : c.inputs) check_no_partial_overlap(c.out, t, c.op_name);
    result_ = c.out;
  } else {
    result_ = empty_tensor(shape, result_dtype, device_);
  }
  // The output's dtype differences are casts made by the backend's loop on the way out; a 16-bit
  // result computed in float32 also rounds through its own dtype when out= is wider.
  if (c.reduced_float_as_float32 && c.out_dtype == ScalarType::Undefined && result_dtype != kernel_out_dtype &&
      result_.dtype() != result_dtype)
    round_to_ = result_dtype;
  const TensorBase& out = result_;
  // Accumulators are read as well as written, through stride 0: they can't be converted a chunk
  // at a time, so reductions pass accumulators of the dtype they add in.
  KILN_CHECK(!c.reduction || (out.dtype() == kernel_out_dtype && round_to_ == ScalarType::Undefined), c.op_name,
             "(): internal error: reduction accumulators of dtype ", scalar_type_name(out.dtype()), " for a kernel writing ",
             scalar_type_name(kernel_out_dtype));

  KILN_CHECK(c.inputs.size() < static_cast<size_t>(kMaxOperands), c.op_name, "(): internal error: ",
             c.inputs.size(), " inputs, more than an iterator takes");
  ntensors_ = static_cast<int>(c.inputs.size()) + 1;
  operands_[0] = out;
  loop_dtypes_[0] = kernel_out_dtype;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const TensorBase& t = c.inputs[i];
    const bool condition = c.condition_first && i == 0;
    loop_dtypes_[i + 1] = c.cast_inputs && !condition ? compute_dtype_ : t.dtype();
    // A float16/bfloat16 computation reads every input of another dtype as a value of that dtype, as
    // torch's CPU TensorIterator casts its inputs to the common dtype (f16 == 1.0001 is True, f16 + int64
    // tensor 70000 is inf), except a one-element second operand of add/sub/mul/div/floor_divide, which
    // torch 2.x keeps unrounded (original_scalar_value: -65504 + 70000 is 4496). CUDA's kernels read a
    // CPU scalar in opmath unrounded, so device runs keep their inputs as they are.
    const bool round_input = device_.is_cpu() && c.reduced_float_as_float32 && c.cast_inputs && !condition &&
                             !c.reduction && is_reduced_floating_type(stored_common) && t.dtype() != stored_common &&
                             !(i == 1 && t.numel() == 1 && keeps_scalar_operand(c.op_name));
    const TensorBase in = round_input ? cast_to(t, stored_common) : t;
    operands_[i + 1] = in;
    // A 0-dim host input of another dtype (a Python number: `x + 1`) is converted here once, not in
    // every run of the loop (a strided x's short rows each converted the 1 again).
    if (in.dim() == 0 && in.dtype() != loop_dtypes_[i + 1] && device_.is_cpu() && in.device().is_cpu())
      operands_[i + 1] = cast_to(in, loop_dtypes_[i + 1]);
  }
  for (int k = 0; k < ntensors_; ++k) {
    stored_dtypes_[k] = operands_[k].dtype();
    data_[k] = static_cast<char*>(operands_[k].data_ptr());
    converts_ = converts_ || stored_dtypes_[k] != loop_dtypes_[k];
  }
  converts_ = converts_ || round_to_ != ScalarType::Undefined;

  // Byte strides, broadcast dims get stride 0.
  shape_ = shape;
  numel_ = 1;
  for (int64_t s : shape_) numel_ *= s;
  const size_t nd = shape_.size();
  for (int k = 0; k < ntensors_; ++k) strides_[k].assign(nd, 0);
  for (int k = 0; k < ntensors_; ++k) {
    const TensorBase& t = operands_[k];
    size_t offset = nd - t.dim();
    for (int64_t d = 0; d < t.dim(); ++d) {
      strides_[k][offset + d] = t.sizes()[d] == 1 ? 0 : t.strides()[d] * t.element_size();
    }
  }
  coalesce();
}

void TensorIterator::coalesce() {
  // Order dims by memory order (outermost = largest stride) so the inner loop is the
  // contiguous one: by the output's strides, or by the first input's when the output
  // broadcasts (reductions write accumulators with stride 0).
  const size_t nd = shape_.size();
  const size_t nt = static_cast<size_t>(ntensors_);
  size_t ref = 0;
  for (size_t d = 0; d < nd; ++d)
    if (strides_[0][d] == 0 && shape_[d] > 1 && nt > 1) ref = 1;
  // A stable insertion sort (dims are few; std::stable_sort would allocate a buffer).
  DimVector perm(nd);
  std::iota(perm.begin(), perm.end(), 0);
  auto before = [&](int64_t a, int64_t b) {
    int64_t sa = strides_[ref][a], sb = strides_[ref][b];
    return sa != 0 && sb != 0 && sa > sb;
  };
  for (size_t i = 1; i < nd; ++i)
    for (size_t j = i; j > 0 && before(perm[j], perm[j - 1]); --j) std::swap(perm[j], perm[j - 1]);
  DimVector shape;
  std::array<DimVector, kMaxOperands> strides;
  for (int64_t i : perm) {
    if (shape_[i] == 1) continue;
    shape.push_back(shape_[i]);
    for (size_t k = 0; k < nt; ++k) strides[k].push_back(strides_[k][i]);
  }
  // Merge an outer dim into the next inner one when every operand is contiguous across them.
  DimVector cshape;
  std::array<DimVector, kMaxOperands> cstrides;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (!cshape.empty()) {
      bool can_merge = true;
      for (size_t k = 0; k < nt && can_merge; ++k) can_merge = cstrides[k].back() == strides[k][i] * shape[i];
      if (can_merge) {
        cshape.back() *= shape[i];
        for (size_t k = 0; k < nt; ++k) cstrides[k].back() = strides[k][i];
        continue;
      }
    }
    cshape.push_back(shape[i]);
    for (size_t k = 0; k < nt; ++k) cstrides[k].push_back(strides[k][i]);
  }
  if (cshape.empty()) {  // 0-dim: one element
    cshape.push_back(1);
    for (size_t k = 0; k < nt; ++k) cstrides[k].push_back(0);
  }
  shape_ = std::move(cshape);
  for (size_t k = 0; k < nt; ++k) strides_[k] = std::move(cstrides[k]);
}

// ---- 32-bit pieces ----

bool TensorIterator::can_use_32bit_indexing() const {
  if (numel_ > INT32_MAX) return false;
  for (int k = 0; k < ntensors_; ++k) {
    const DimVector& st = strides_[k];
    int64_t furthest = 0;  // the largest byte offset an element of this operand has
    for (size_t d = 0; d < shape_.size(); ++d) furthest += (shape_[d] - 1) * std::abs(st[d]);
    if (furthest > INT32_MAX) return false;
  }
  return true;
}

void TensorIterator::for_each_32bit_piece(const std::function<void(const TensorIterator&)>& fn) const {
  if (numel_ == 0 || can_use_32bit_indexing()) {
    fn(*this);
    return;
  }
  // Halve the dim that spans the most bytes in some operand (the element count when none has).
  size_t split = 0;
  int64_t widest = -1;
  for (size_t d = 0; d < shape_.size(); ++d) {
    if (shape_[d] < 2) continue;
    int64_t span = shape_[d];
    for (int k = 0; k < ntensors_; ++k) span = std::max(span, shape_[d] * std::abs(strides_[k][d]));
    if (span > widest) {
      widest = span;
      split = d;
    }
  }
  const int64_t half = shape_[split] / 2;
  TensorIterator low = *this, high = *this;
  low.shape_[split] = half;
  high.shape_[split] = shape_[split] - half;
  for (int k = 0; k < ntensors_; ++k) high.data_[k] += half * strides_[k][split];
  low.numel_ = numel_ / shape_[split] * half;
  high.numel_ = numel_ - low.numel_;
  low.for_each_32bit_piece(fn);
  high.for_each_32bit_piece(fn);
}

}  // namespace kiln
