// The iteration helper behind every pointwise kernel (and, with stride-0 outputs,
// reductions): broadcasting, PyTorch's type promotion, output allocation or
// checking, strided operands without copying them, dimension coalescing, and a
// parallel loop above a grain size.
//
// A kernel sees only `loop(char** data, const int64_t* strides, int64_t n)`: n
// elements of the innermost dimension, operand k at data[k] advancing by
// strides[k] bytes (operand 0 is the output).
#pragma once

#include <initializer_list>

#include <functional>
#include <vector>

#include "runtime/core/tensor_base.h"

namespace kiln {

// PyTorch's result_type: dims > 0 tensors beat 0-dim tensors, which beat wrapped
// Python numbers, unless the weaker one is of a higher category (bool < int < float).
ScalarType result_type(const std::vector<TensorBase>& inputs);

// A fresh contiguous tensor on the CPU (no zeroing).
TensorBase empty_cpu(IntArrayRef sizes, ScalarType dtype);
// A fresh contiguous tensor on the CPU filled with zeros (gradient accumulators).
TensorBase zeros_cpu(IntArrayRef sizes, ScalarType dtype);
// Whether t's elements exactly tile a block of memory (some permutation of row-major).
bool is_non_overlapping_and_dense(const TensorBase& t);
// A fresh CPU tensor shaped like `t`, keeping t's memory layout when t is dense and
// non-overlapping (a permuted/transposed tensor stays permuted), as PyTorch's
// preserve_format; contiguous otherwise.
TensorBase empty_like_cpu(const TensorBase& t, ScalarType dtype);
// A 0-dim tensor holding a Python number, marked as a wrapped number for promotion.
TensorBase wrap_scalar(const Scalar& s);
// The broadcast shape of two shapes, or a RuntimeError naming the op.
DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op_name);
// Throws when `in` and `out` share some memory but are not the same elements
// (x[1:] = x[:-1] would read values it already overwrote).
void check_no_partial_overlap(const TensorBase& out, const TensorBase& in, const char* op_name);
// Throws when a list of reduction dims names one dim twice (0 and -1 of a 0-dim tensor too).
void check_unique_dims(IntArrayRef dims, int64_t ndim, const char* op_name);
// Throws when several elements of a tensor to be written share memory (an expanded tensor).
void check_no_internal_overlap(const TensorBase& out, const char* op_name);
// torch's has_internal_overlap() == YES: a dim of stride 0 and size > 1 (an expanded tensor).
bool is_expanded(const TensorBase& t);
// The out= tensor of a kernel, resized to `shape` (it must already have `dtype`), or a new
// tensor when `out` is undefined.
TensorBase resized_out(const TensorBase& out, IntArrayRef shape, ScalarType dtype, const char* op_name);
// `result` (computed in full first, so out may alias an input) copied into the out= tensor of
// its dtype, resized to its shape; `result` itself when there is no out.
TensorBase result_into_out(const TensorBase& result, const TensorBase& out, const char* op_name);
// Throws when an out= tensor shares memory with an input of a kernel that resizes or
// writes `out` before it has read every input (reductions, mm).
void check_out_is_not_an_input(const TensorBase& out, std::initializer_list<const TensorBase*> inputs,
                               const char* op_name);

struct IteratorConfig {
  const char* op_name = "op";
  TensorBase out;                    // undefined: allocate
  std::vector<TensorBase> inputs;
  bool promote_inputs = true;        // compute in the common dtype of the inputs
  bool int_to_float = false;         // integer/bool common dtype computes in the default float dtype
  ScalarType out_dtype = ScalarType::Undefined;      // forced result dtype (e.g. Bool for comparisons)
  ScalarType compute_dtype = ScalarType::Undefined;  // forced compute dtype
  bool inplace = false;              // out is also inputs[0]: its shape must be the broadcast shape
  bool out_same_dtype = false;       // out= must have the result dtype itself, not one it casts to
                                     // (torch's unary ops that keep their dtype: neg, abs, floor...)
  bool reduction = false;            // out has stride 0 over reduced dims (accumulators)
  bool same_value_everywhere = false;  // every element gets one value (fill_): an expanded out is fine
  bool cast_inputs = true;           // false: the kernel reads each input in its own dtype
  bool reduced_float_as_float32 = true;  // float16/bfloat16 compute in float32, rounded once on
                                         // the write-back (false: the kernel moves raw elements)
};

class TensorIterator {
 public:
  using Loop = std::function<void(char** data, const int64_t* strides, int64_t n)>;

  explicit TensorIterator(IteratorConfig config);

  ScalarType compute_dtype() const { return compute_dtype_; }
  int64_t numel() const { return numel_; }
  int ntensors() const { return static_cast<int>(operands_.size()); }
  // The result (the caller's `out`, or the tensor allocated for it). The first call writes
  // the computed values into it when the kernel wrote a temporary: the caller's out= of
  // another dtype, or a float16/bfloat16 result computed in float32.
  const TensorBase& output() {
    finish();
    return result_;
  }

  // Runs `loop` over every element, in parallel above the grain size.
  void for_each(const Loop& loop, int64_t grain_size = 32768);

 private:
  void finish();  // output()'s write-back, once
  void build(IteratorConfig& config);
  void coalesce();
  void serial_for(const Loop& loop, int64_t begin, int64_t end);

  std::vector<TensorBase> operands_;  // [0] output (compute dtype), then inputs (compute dtype)
  TensorBase result_;                 // what the caller gets back
  TensorBase out_to_fill_;            // caller's out, when the kernel writes a temporary
  ScalarType round_to_ = ScalarType::Undefined;  // the result dtype the temporary rounds to first
  bool filled_ = false;               // finish() has run
  ScalarType compute_dtype_ = ScalarType::Undefined;
  DimVector shape_;                   // iteration shape (innermost last)
  std::vector<DimVector> strides_;    // byte strides per operand, aligned with shape_
  int64_t numel_ = 0;
};

// Copies (with casting and broadcasting) src into dst; the workhorse of copy_,
// contiguous, clone and dtype conversion.
void copy_into(const TensorBase& dst, const TensorBase& src, const char* op_name);
// `t` converted to `dtype` (itself when it already has it).
TensorBase cast_to(const TensorBase& t, ScalarType dtype);
// `t` in the dtype kernels compute in: float32 for float16/bfloat16 (undefined stays undefined).
TensorBase to_opmath(const TensorBase& t);
// `t` itself if contiguous, else a contiguous copy.
TensorBase contiguous_cpu(const TensorBase& t);

}  // namespace kiln
