// ctc_loss: torch's ctc_loss_impl (LossCTC.cpp) around _ctc_loss: an unbatched (T, C) input gets a
// batch dim of 1, the targets are cast to int64, zero_infinity zeroes infinite losses (their
// gradients are zeroed by _ctc_loss_backward), and 'mean' divides each loss by its target length
// (clamped to 1) before the mean over the batch. Lengths given as tensors are read as int lists.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>
#include <vector>

#include "generated/api/_ctc_loss.h"
#include "generated/api/contiguous.h"
#include "generated/api/div.h"
#include "generated/api/empty.h"
#include "generated/api/eq.h"
#include "generated/api/squeeze.h"
#include "generated/api/to.h"
#include "generated/api/unsqueeze.h"
#include "generated/api/where.h"
#include "generated/api/zeros_like.h"
#include "generated/kernels/composite/ctc_loss.h"
#include "runtime/kernels/composite/reduce_loss.h"

namespace kiln {
namespace composite_implicit {
namespace {

// A lengths tensor's values (any shape: torch reads its elements), which must be integers.
std::vector<int64_t> read_lengths(const Tensor& lengths, const char* name) {
  KILN_CHECK(is_integral_type(lengths.dtype(), false), "ctc_loss(): ", name, " must be integral, got a ",
             scalar_type_name(lengths.dtype()), " tensor");
  const Tensor values = kiln::contiguous(kiln::to(lengths, ScalarType::Int64));
  const int64_t* p = static_cast<const int64_t*>(values.data_ptr());
  return std::vector<int64_t>(p, p + values.numel());
}

}  // namespace

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths, IntArrayRef target_lengths,
                int64_t blank, int64_t reduction, bool zero_infinity) {
  check_loss_reduction(reduction, "ctc_loss");
  const bool batched = log_probs.dim() == 3;
  const Tensor lp = batched ? log_probs : kiln::unsqueeze(log_probs, 1);
  const Tensor tg = targets.dtype() == ScalarType::Int64 ? targets : kiln::to(targets, ScalarType::Int64);
  Tensor res = std::get<0>(kiln::_ctc_loss(lp, tg, input_lengths, target_lengths, blank, zero_infinity));
  if (zero_infinity) {
    res = kiln::where(kiln::eq(res, Scalar(std::numeric_limits<double>::infinity())), kiln::zeros_like(res), res);
  }
  if (reduction == 1) {
    // at::tensor(target_lengths, res.options()).clamp_min(1)
    Tensor divisors = kiln::empty({static_cast<int64_t>(target_lengths.size())}, ScalarType::Float64);
    double* d = static_cast<double*>(divisors.data_ptr());
    for (size_t i = 0; i < target_lengths.size(); ++i) d[i] = static_cast<double>(std::max<int64_t>(target_lengths[i], 1));
    return reduce_loss(kiln::div(res, kiln::to(divisors, res.dtype())), 1, "ctc_loss");
  }
  if (reduction == 2) return reduce_loss(res, 2, "ctc_loss");
  return batched ? res : kiln::squeeze(res, 0);
}

Tensor ctc_loss_tensor(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                       const Tensor& target_lengths, int64_t blank, int64_t reduction, bool zero_infinity) {
  const std::vector<int64_t> il = read_lengths(input_lengths, "input_lengths");
  const std::vector<int64_t> tl = read_lengths(target_lengths, "target_lengths");
  return ctc_loss(log_probs, targets, il, tl, blank, reduction, zero_infinity);
}

}  // namespace composite_implicit
}  // namespace kiln
