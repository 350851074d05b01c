// The CPU's walk over a TensorIterator: the innermost dim in runs handed to a kernel's loop,
// in parallel (OpenMP) above a grain size.
//
// A kernel sees only `loop(char** data, const int64_t* strides, int64_t n)`: n elements, operand
// k at data[k] advancing by strides[k] bytes (operand 0 is the output), each in its loop dtype
// (TensorIterator::loop_dtype). Where an operand is stored in another dtype (float16 computed
// in float32, an int input of a float op, an out= of a wider dtype) the walk converts runs of
// up to kConvertChunk elements through buffers on the stack, never through a full-size copy.
#pragma once

#include <cstdint>

#include "runtime/kernels/tensor_iterator.h"

namespace kiln {
namespace cpu {

constexpr int64_t kDefaultGrainSize = 32768;  // elements below which a loop runs on one thread
constexpr int64_t kConvertChunk = 1024;  // elements converted at a time (4 KB per float32 operand: stays in L1)

// A non-owning reference to a loop callable (no allocation, one indirect call per run).
class LoopRef {
 public:
  template <typename F>
  LoopRef(const F& f)  // NOLINT: implicit from any loop
      : context_(&f), call_([](const void* c, char** data, const int64_t* strides, int64_t n) {
          (*static_cast<const F*>(c))(data, strides, n);
        }) {}
  void operator()(char** data, const int64_t* strides, int64_t n) const { call_(context_, data, strides, n); }

 private:
  const void* context_;
  void (*call_)(const void*, char**, const int64_t*, int64_t);
};

// Runs `loop` over every element of `it`, in parallel when it has at least `grain_size`.
void for_each(const TensorIterator& it, LoopRef loop, int64_t grain_size = kDefaultGrainSize);
// The same walk handing every operand in its stored dtype, unconverted: for loops that convert in
// registers themselves (the formula kernels' bfloat16 vector loops, loops.h).
void for_each_stored(const TensorIterator& it, LoopRef loop, int64_t grain_size = kDefaultGrainSize);
// for_each on one thread, always (loops that add several elements into one accumulator).
void for_each_serial(const TensorIterator& it, LoopRef loop);

}  // namespace cpu
}  // namespace kiln
