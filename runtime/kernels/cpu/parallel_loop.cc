#include "runtime/kernels/cpu/parallel_loop.h"

#include <omp.h>

#include <algorithm>

#include "runtime/core/error.h"
#include "runtime/kernels/cpu/element_convert.h"

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
  const DimVector& shape = it.shape();
  const int64_t nd = static_cast<int64_t>(shape.size());
  const int64_t inner = shape[nd - 1];
  // Multi-index of `begin`.
  DimVector idx(nd, 0);
  int64_t rem = begin;
  for (int64_t d = nd - 1; d >= 0; --d) {
    idx[d] = rem % shape[d];
    rem /= shape[d];
  }
  // row[k]: operand k's address at the start of the current row (idx[nd - 1] = 0), moved by the
  // next-outer stride from one row to the next and recomputed from the index only when an outer
  // dim wraps: short rows (a padded image's interior, 28 elements a row) spent more time
  // recomputing every address from the index than copying.
  constexpr int kMax = TensorIterator::kMaxOperands;
  char* row[kMax];
  char* ptrs[kMax];
  int64_t inner_strides[kMax], row_strides[kMax];
  const auto locate_row = [&] {
    for (int k = 0; k < nt; ++k) {
      char* p = it.data(k);
      for (int64_t d = 0; d < nd - 1; ++d) p += idx[d] * it.strides(k)[d];
      row[k] = p;
    }
  };
  for (int k = 0; k < nt; ++k) {
    inner_strides[k] = it.strides(k)[nd - 1];
    row_strides[k] = nd >= 2 ? it.strides(k)[nd - 2] : 0;
  }
  locate_row();
  int64_t pos = begin;
  while (pos < end) {
    for (int k = 0; k < nt; ++k) ptrs[k] = row[k] + idx[nd - 1] * inner_strides[k];
    const int64_t n = std::min(inner - idx[nd - 1], end - pos);
    if (converts) {
      run_converting(it, loop, ptrs, inner_strides, n);
    } else {
      loop(ptrs, inner_strides, n);
    }
    pos += n;
    idx[nd - 1] += n;
    if (idx[nd - 1] < inner || pos >= end) continue;
    idx[nd - 1] = 0;
    if (nd >= 2 && ++idx[nd - 2] < shape[nd - 2]) {  // the next row of the same block
      for (int k = 0; k < nt; ++k) row[k] += row_strides[k];
      continue;
    }
    for (int64_t d = nd - 2; d > 0 && idx[d] >= shape[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
    }
    locate_row();
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
