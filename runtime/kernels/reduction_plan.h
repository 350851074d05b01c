// The shape work every reduction and every along-one-dim op shares, worked out once:
// which dims are reduced (with torch's dim wrapping and errors), the result shape, how
// many elements meet in one output, how to lay the input out so each output reads one
// contiguous row, the [outer, n, inner] view of a contiguous tensor around one dim,
// the dtype sums and products accumulate in, and when their CPU loops go parallel.
//
// Device-neutral: it computes shapes and decisions, never touches data, so a backend's
// kernel (runtime/kernels/cpu/reduction_loops.h for the CPU) only walks what it says.
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "runtime/core/convert.h"
#include "runtime/core/tensor_base.h"

namespace kiln {

// A contiguous tensor seen as [outer, n, inner] around one dim: `outer * inner` lines of
// `n` elements, the elements of a line `inner` apart. One line is what a single-dim op
// (prod.dim, argmax, any.dim, cumsum, sort, softmax) reduces, scans or sorts.
struct DimSplit {
  int64_t outer = 1, n = 1, inner = 1;
  int64_t dim = 0;  // the wrapped dim split around (0 for a 0-dim tensor: one line of one element)

  // The split of `sizes` around `dim`, wrapped as torch does (IndexError naming op_name).
  static DimSplit around(IntArrayRef sizes, int64_t dim, const char* op_name);
  // `rows` contiguous lines of `n` elements: a flattened tensor (rows = 1) or a
  // ReductionPlan's permuted input.
  static DimSplit rows(int64_t rows, int64_t n) { return {rows, n, 1, 0}; }

  int64_t lines() const { return outer * inner; }
  int64_t numel() const { return outer * n * inner; }
  // Where line `line` (0 <= line < lines()) starts. Lines are numbered so that line l of a
  // reduction writes output element l of the [outer, inner] result.
  int64_t line_start(int64_t line) const { return (line / inner) * n * inner + line % inner; }

  // `sizes` without the split dim, or with it as 1 when keepdim: a reduction's result shape.
  DimVector reduced_shape(IntArrayRef sizes, bool keepdim) const;
  // `sizes` with the split dim resized to `size` (topk's k); a 0-dim shape stays 0-dim.
  DimVector resized_shape(IntArrayRef sizes, int64_t size) const;
};

// A reduction over a set of dims (sum, mean, amax, amin; argmax with dim=None).
struct ReductionPlan {
  std::vector<bool> reduced;  // per input dim
  DimVector out_shape;        // the result's shape (keepdim applied)
  DimVector keep_shape;       // the input's shape with reduced dims as 1 (out_shape with keepdim)
  DimVector permutation;      // kept dims, then reduced dims (each in order)
  int64_t count = 1;          // input elements per output
  int64_t n_out = 1;          // outputs
  // The reduced dims are the innermost ones (size-1 kept dims after them do not count), so
  // a contiguous input is already laid out as rows(): no permute needed.
  bool reduced_suffix = true;
  // The reduced dims are adjacent (size-1 dims aside): a contiguous input is then block(),
  // [outer, count, inner] with output o * inner + i reducing column i of block o, read in place.
  // reduced_suffix is the case inner == 1.
  bool reduced_block = true;
  int64_t outer = 1, inner = 1;  // kept elements before and after the reduced dims (when reduced_block)
  // The other way round: the kept dims are adjacent (size-1 dims aside), reduced ones before and
  // after them (an (N, C, H, W) tensor summed over all but C: a convolution's bias gradient). A
  // contiguous input is then [reduced_outer, n_out, reduced_inner]: output k adds the reduced_outer
  // contiguous lines of reduced_inner elements that start at (o * n_out + k) * reduced_inner.
  bool kept_block = true;
  int64_t reduced_outer = 1, reduced_inner = 1;

  // Reduces `dims` of a tensor of `sizes`; none or empty reduces every dim, as torch.
  // Errors (an out-of-range dim, a dim named twice) name op_name, as torch's.
  static ReductionPlan over_dims(IntArrayRef sizes, std::optional<IntArrayRef> dims, bool keepdim,
                                 const char* op_name);

  // The input permuted by `permutation` and made contiguous (or, when reduced_suffix, a
  // contiguous input as it is): output o reduces the contiguous row o.
  DimSplit rows() const { return DimSplit::rows(n_out, count); }
  DimSplit block() const { return {outer, count, inner, 0}; }
};

// The type sums, products and running totals accumulate in, as torch's CPU kernels: double
// for floating types, 16-bit ones included (float32 sums do not drift), int64 for integers
// and bool.
template <typename T>
using accumulate_t = std::conditional_t<is_floating_v<T>, double, int64_t>;

// How a CPU reduction loop spreads its lines over threads, decided here for all of them.
enum class LineParallelism {
  kSerial,      // too little work to pay for starting threads
  kOverLines,   // each thread takes whole lines (results do not depend on the thread count)
  kWithinLine,  // one long line summed in per-thread parts (only for kernels that can combine parts)
};

// Elements touched below which a loop over lines stays serial.
constexpr int64_t kLineGrainSize = 32768;
// Length from which a single line is split across threads. It changes the order of a float
// sum's additions, so it stays fixed: moving it would change sums' last bits.
constexpr int64_t kSplitLineGrainSize = 65536;

// The choice for `split` on `threads` threads; `can_split_line`: the kernel can combine
// partial results of one line (a sum can, a scan or a sort cannot).
LineParallelism choose_parallelism(const DimSplit& split, int threads, bool can_split_line = false);

}  // namespace kiln
