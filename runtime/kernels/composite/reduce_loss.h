// The reduction of a loss's per-element values, as torch's Reduction enum: 0 none, 1 mean,
// 2 sum. Shared by the composite losses (nn_ops.cc, bce_ops.cc).
#pragma once

#include "generated/api/mean.h"
#include "generated/api/sum.h"
#include "runtime/core/error.h"

namespace kiln {

inline void check_loss_reduction(int64_t reduction, const char* op) {
  KILN_CHECK(reduction >= 0 && reduction <= 2, op, "(): reduction must be 0 (none), 1 (mean) or 2 (sum), got ",
             reduction);
}

inline Tensor reduce_loss(const Tensor& loss, int64_t reduction, const char* op) {
  check_loss_reduction(reduction, op);
  if (reduction == 0) return loss;
  return reduction == 1 ? kiln::mean(loss) : kiln::sum(loss);
}

}  // namespace kiln
