#include "runtime/kernels/cpu/parallel_loop.h"

#include <omp.h>

#include <algorithm>

#include "runtime/core/error.h"
#include "runtime/kernels/cpu/element_convert.h"
#include "runtime/kernels/cpu/row_walk.h"

namespace kiln {
namespace cpu {
namespace {

constexpr int kMaxConvertedOperands = 6;

// One run of n elements whose operands may need converting: in chunks, each input converted into
// a stack buffer (a broadcast input once), the loop run on the buffers, the output converted back.
void run_converting(const TensorIterator& it, const LoopRef& loop, char** data, const int64_t* strides, int64_t n) {
  const int nt = it.ntensors();
  KILN_CHECK(nt <= kMaxConvertedOperands, it.op_name(), "(): internal error: too many operands to convert");
  alignas(64) char buffers[kMaxConvertedOperands][kConvertChunk * 8];
  char* ptrs[kMaxConvertedOperands];
  int64_t run_strides[kMaxConvertedOperands];
  const ScalarType rounds_through = it.output_rounds_through();
  const bool out_converts = it.stored_dtype(0) != it.loop_dtype(0) || rounds_through != ScalarType::Undefined;
  alignas(64) char rounded[kConvertChunk * 8];
  for (int64_t start = 0; start < n; start += kConvertChunk) {
    const int64_t m = std::min(kConvertChunk, n - start);
    for (int k = 0; k < nt; ++k) {
      char* p = data[k] + start * strides[k];
      if (k == 0 ? !out_converts : it.stored_dtype(k) == it.loop_dtype(k)) {
        ptrs[k] = p;
        run_strides[k] = strides[k];
        continue;
      }
      ptrs[k] = buffers[k];
      const int64_t size = element_size(it.loop_dtype(k));
      run_strides[k] = strides[k] == 0 && k > 0 ? 0 : size;
      if (k > 0) convert_elements(it.stored_dtype(k), p, strides[k], it.loop_dtype(k), buffers[k], size,
                                  strides[k] == 0 ? 1 : m);
    }
    loop(ptrs, run_strides, m);
    if (!out_converts) continue;
    const char* result = buffers[0];
    ScalarType result_dtype = it.loop_dtype(0);
    if (rounds_through != ScalarType::Undefined) {  // float32 -> bfloat16 -> a wider out=
      convert_elements(result_dtype, result, element_size(result_dtype), rounds_through, rounded,
                       element_size(rounds_through), m);
      result = rounded;
      result_dtype = rounds_through;
    }
    convert_elements(result_dtype, result, element_size(result_dtype), it.stored_dtype(0),
                     data[0] + start * strides[0], strides[0], m);
  }
}

// Elements [begin, end) of the iteration space, in runs along the innermost dim; `converts`: each
// operand converted to its loop dtype on the way (else handed over as stored).
void serial_range(const TensorIterator& it, const LoopRef& loop, int64_t begin, int64_t end, bool converts) {
  const int nt = it.ntensors();
  const int64_t inner = it.shape().back();
  RowCursor cursor(it, begin / inner);
  int64_t offset = begin % inner;  // within the cursor's row
  char* ptrs[TensorIterator::kMaxOperands];
  for (int64_t pos = begin; pos < end;) {
    for (int k = 0; k < nt; ++k) ptrs[k] = cursor.row()[k] + offset * cursor.inner_strides()[k];
    const int64_t n = std::min(inner - offset, end - pos);
    if (converts) {
      run_converting(it, loop, ptrs, cursor.inner_strides(), n);
    } else {
      loop(ptrs, cursor.inner_strides(), n);
    }
    pos += n;
    offset += n;
    if (offset == inner && pos < end) {
      offset = 0;
      cursor.next();
    }
  }
}

void parallel_range(const TensorIterator& it, const LoopRef& loop, int64_t grain_size, bool converts) {
  const int64_t numel = it.numel();
  if (numel == 0) return;
  const int threads = omp_get_max_threads();
  if (numel < grain_size || threads <= 1 || omp_in_parallel()) {
    serial_range(it, loop, 0, numel, converts);
    return;
  }
  const int64_t chunks = std::min<int64_t>(threads, (numel + grain_size - 1) / grain_size);
#pragma omp parallel for num_threads(chunks) schedule(static, 1)
  for (int64_t c = 0; c < chunks; ++c)
    serial_range(it, loop, numel * c / chunks, numel * (c + 1) / chunks, converts);
}

}  // namespace

void for_each_serial(const TensorIterator& it, LoopRef loop) {
  if (it.numel() > 0) serial_range(it, loop, 0, it.numel(), it.converts());
}

void for_each(const TensorIterator& it, LoopRef loop, int64_t grain_size) {
  parallel_range(it, loop, grain_size, it.converts());
}

void for_each_stored(const TensorIterator& it, LoopRef loop, int64_t grain_size) {
  parallel_range(it, loop, grain_size, false);
}

}  // namespace cpu
}  // namespace kiln
