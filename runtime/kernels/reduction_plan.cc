#include "runtime/kernels/reduction_plan.h"

#include "runtime/kernels/shape_rules.h"

namespace kiln {

DimSplit DimSplit::around(IntArrayRef sizes, int64_t dim, const char* op_name) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  DimSplit s;
  s.dim = wrap_dim(dim, nd, op_name);  // a 0-dim tensor accepts 0 and -1, and is one line
  for (int64_t i = 0; i < nd; ++i) {
    if (i < s.dim) s.outer *= sizes[i];
    if (i == s.dim) s.n = sizes[i];
    if (i > s.dim) s.inner *= sizes[i];
  }
  return s;
}

DimVector DimSplit::reduced_shape(IntArrayRef sizes, bool keepdim) const {
  DimVector shape;
  for (int64_t i = 0; i < static_cast<int64_t>(sizes.size()); ++i)
    if (i != dim || keepdim) shape.push_back(i == dim ? 1 : sizes[i]);
  return shape;
}

DimVector DimSplit::resized_shape(IntArrayRef sizes, int64_t size) const {
  DimVector shape(sizes.begin(), sizes.end());
  if (!shape.empty()) shape[dim] = size;
  return shape;
}

ReductionPlan ReductionPlan::over_dims(IntArrayRef sizes, std::optional<IntArrayRef> dims, bool keepdim,
                                       const char* op_name) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  ReductionPlan p;
  p.reduced.assign(nd, !dims || dims->empty());
  if (dims) {
    check_unique_dims(*dims, nd, op_name);  // also the range check, with torch's message
    for (int64_t d : *dims) {
      const int64_t w = wrap_dim(d, nd, op_name);
      if (nd > 0) p.reduced[w] = true;  // a 0-dim tensor's dim 0 / -1 reduces its one element
    }
  }
  bool seen_reduced = false;
  // Where dim i is around the block of reduced dims, and around the block of kept dims.
  enum Part { kBefore, kIn, kAfter };
  Part reduced_part = kBefore, kept_part = kBefore;
  for (int64_t i = 0; i < nd; ++i) {
    if (sizes[i] != 1) {  // a size-1 dim changes no layout
      if (p.reduced[i]) {
        if (reduced_part == kAfter) p.reduced_block = false;
        reduced_part = kIn;
        if (kept_part == kBefore) {
          p.reduced_outer *= sizes[i];
        } else {
          kept_part = kAfter;
          p.reduced_inner *= sizes[i];
        }
      } else {
        if (kept_part == kAfter) p.kept_block = false;
        kept_part = kIn;
        if (reduced_part == kBefore) {
          p.outer *= sizes[i];
        } else {
          reduced_part = kAfter;
          p.inner *= sizes[i];
        }
      }
    }
    if (p.reduced[i]) {
      p.count *= sizes[i];
      p.keep_shape.push_back(1);
      if (keepdim) p.out_shape.push_back(1);
      if (sizes[i] != 1) seen_reduced = true;  // a reduced size-1 dim ((1, C, H, W) over 0, 2, 3) moves nothing
    } else {
      p.n_out *= sizes[i];
      p.keep_shape.push_back(sizes[i]);
      p.out_shape.push_back(sizes[i]);
      p.permutation.push_back(i);
      if (seen_reduced && sizes[i] != 1) p.reduced_suffix = false;
    }
  }
  for (int64_t i = 0; i < nd; ++i)
    if (p.reduced[i]) p.permutation.push_back(i);
  return p;
}

LineParallelism choose_parallelism(const DimSplit& split, int threads, bool can_split_line) {
  if (threads <= 1) return LineParallelism::kSerial;
  if (split.lines() == 1) {
    return can_split_line && split.n >= kSplitLineGrainSize ? LineParallelism::kWithinLine
                                                             : LineParallelism::kSerial;
  }
  return split.numel() >= kLineGrainSize ? LineParallelism::kOverLines : LineParallelism::kSerial;
}

}  // namespace kiln
