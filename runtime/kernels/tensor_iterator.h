// The device-neutral half of every pointwise kernel (and, with stride-0 outputs, of reductions):
// the broadcast shape, PyTorch's type promotion, out= checks and resizing, overlap checks, the
// output allocated on the operands' device (through the device registry), and the iteration
// space coalesced into as few dims as memory order allows. No loop runs here: each backend
// walks the result (the CPU's loop and its parallel-for: runtime/kernels/cpu/parallel_loop.h).
//
// Operand 0 is the output, then the inputs. Each operand has the dtype it is stored in and the
// dtype the kernel's loop sees; they differ when the op computes in another dtype (float16 in
// float32, int + float in float): the backend converts a chunk at a time on the way in and out,
// so no full-size temporary is made.
#pragma once

#include <array>
#include <functional>
#include <vector>

#include "runtime/core/tensor_base.h"
#include "runtime/kernels/out_checks.h"
#include "runtime/kernels/shape_rules.h"
#include "runtime/kernels/tensor_memory.h"
#include "runtime/kernels/type_promotion.h"

namespace kiln {

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
  bool idempotent_inplace = false;   // in-place f with f(f(x)) == f(x): an expanded self gets the same
                                     // values in any order, and torch writes it (threshold_, tril_)
  bool cast_inputs = true;           // false: the kernel reads each input in its own dtype
  bool reduced_float_as_float32 = true;  // float16/bfloat16 compute in float32, rounded once on
                                         // the write-back (false: the kernel moves raw elements)
  bool condition_first = false;      // inputs[0] is a bool condition: left out of the promotion
                                     // and read as bool (where)

  // The usual configurations, by name (adjust fields afterwards for the rest). An `out` that is
  // `self` makes the op in-place: the result may not broadcast beyond self's shape.
  // Keeps the input's dtype, and out= must have it: neg, abs, floor, bitwise_not.
  static IteratorConfig unary(const char* op, const TensorBase& self, const TensorBase& out);
  // Integers compute in the default float dtype, out= may be any dtype it casts to: exp, sin.
  static IteratorConfig unary_float(const char* op, const TensorBase& self, const TensorBase& out);
  // The promoted dtype of both: add, mul, maximum, bitwise_and.
  static IteratorConfig binary(const char* op, const TensorBase& self, const TensorBase& other, const TensorBase& out);
  // The promoted dtype, integers as the default float dtype: div, atan2.
  static IteratorConfig binary_float(const char* op, const TensorBase& self, const TensorBase& other,
                                     const TensorBase& out);
  // Computes in the promoted dtype, writes bool: eq, lt, logical_and.
  static IteratorConfig comparison(const char* op, const TensorBase& self, const TensorBase& other,
                                   const TensorBase& out);
  // The promoted dtype of self and other, chosen by a bool condition read as bool: where.
  static IteratorConfig select(const char* op, const TensorBase& condition, const TensorBase& self,
                               const TensorBase& other, const TensorBase& out);
  // The promoted dtype of three inputs: the fused backward ops (loader._fused_backward).
  static IteratorConfig ternary(const char* op, const TensorBase& a, const TensorBase& b, const TensorBase& c,
                                const TensorBase& out);
  // The promoted dtype of three inputs, integers as the default float dtype: lerp.
  static IteratorConfig ternary_float(const char* op, const TensorBase& a, const TensorBase& b, const TensorBase& c,
                                      const TensorBase& out);
  // Computes in the input's dtype, writes bool; out= may be any dtype: logical_not.
  static IteratorConfig predicate(const char* op, const TensorBase& self, const TensorBase& out);
  // No inputs; one value written to every element of `out`, even an expanded one: fill_.
  static IteratorConfig nullary(const char* op, const TensorBase& out);
  // `input` added (or otherwise folded) into `accumulators`, a view of `input`'s shape with
  // stride 0 over the reduced dims, in the accumulators' own dtype.
  static IteratorConfig reduction_into(const char* op, const TensorBase& accumulators, const TensorBase& input);
  // Raw elements of `src` cast into `dst` of the same shape: copy_, to(dtype).
  static IteratorConfig copy(const char* op, const TensorBase& dst, const TensorBase& src);
};

class TensorIterator {
 public:
  // The most operands (the output and the inputs) an iterator takes: its arrays live inline, so
  // building one allocates nothing but the result (a small op's cost is mostly such overhead).
  static constexpr int kMaxOperands = 8;

  explicit TensorIterator(IteratorConfig config);

  const char* op_name() const { return op_name_; }
  Device device() const { return device_; }
  ScalarType compute_dtype() const { return compute_dtype_; }
  int64_t numel() const { return numel_; }
  int ntensors() const { return ntensors_; }
  // The iteration space after coalescing: innermost dim last, strides in bytes per operand.
  const DimVector& shape() const { return shape_; }
  const DimVector& strides(int k) const { return strides_[k]; }
  char* data(int k) const { return data_[k]; }
  // The dtype operand k is stored in, and the one the kernel's loop reads or writes it as.
  ScalarType stored_dtype(int k) const { return stored_dtypes_[k]; }
  ScalarType loop_dtype(int k) const { return loop_dtypes_[k]; }
  // A 16-bit result computed in float32 is rounded to its dtype even when out= is wider, as
  // torch's (exp(bfloat16, out=float32) holds bfloat16 values): the dtype the output passes
  // through on its way from the loop to memory, or Undefined.
  ScalarType output_rounds_through() const { return round_to_; }
  bool converts() const { return converts_; }  // some operand is converted on its way in or out
  // The result: the caller's `out`, or the tensor allocated for it.
  const TensorBase& output() const { return result_; }

  // Whether every operand's byte offsets (and the element count) fit in int32, as GPU kernels
  // index; otherwise for_each_32bit_piece splits the space.
  bool can_use_32bit_indexing() const;
  // Calls `fn` on pieces that together cover the space, each passing can_use_32bit_indexing():
  // the largest dim halved until they do (this iterator itself when it already does).
  void for_each_32bit_piece(const std::function<void(const TensorIterator&)>& fn) const;

 private:
  void build(IteratorConfig& config);
  void coalesce();

  const char* op_name_ = "op";
  Device device_;
  int ntensors_ = 0;
  std::array<TensorBase, kMaxOperands> operands_;  // keeps the memory behind data_ alive
  std::array<char*, kMaxOperands> data_{};         // per operand: the first element of this (piece of the) space
  std::array<ScalarType, kMaxOperands> stored_dtypes_{}, loop_dtypes_{};
  bool converts_ = false;
  TensorBase result_;                 // what the caller gets back
  ScalarType round_to_ = ScalarType::Undefined;  // see output_rounds_through()
  ScalarType compute_dtype_ = ScalarType::Undefined;
  DimVector shape_;                   // iteration shape (innermost last)
  std::array<DimVector, kMaxOperands> strides_;  // byte strides per operand, aligned with shape_
  int64_t numel_ = 0;
};

}  // namespace kiln
