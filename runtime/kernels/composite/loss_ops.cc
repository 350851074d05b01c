// The regression, margin and distribution losses torch writes as compositions (Loss.cpp), written
// the same way: their gradients, second ones included, come from the ops they call.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "generated/api/abs.h"
#include "generated/api/add.h"
#include "generated/api/clamp.h"
#include "generated/api/detach.h"
#include "generated/api/div.h"
#include "generated/api/eq.h"
#include "generated/api/exp.h"
#include "generated/api/isnan.h"
#include "generated/api/l1_loss.h"
#include "generated/api/le.h"
#include "generated/api/log.h"
#include "generated/api/log1p.h"
#include "generated/api/lt.h"
#include "generated/api/masked_fill.h"
#include "generated/api/minimum.h"
#include "generated/api/mul.h"
#include "generated/api/neg.h"
#include "generated/api/norm.h"
#include "generated/api/sqrt.h"
#include "generated/api/sub.h"
#include "generated/api/sum.h"
#include "generated/api/where.h"
#include "generated/api/zeros_like.h"
#include "generated/kernels/composite/cosine_embedding_loss.h"
#include "generated/kernels/composite/kl_div.h"
#include "generated/kernels/composite/margin_ranking_loss.h"
#include "generated/kernels/composite/poisson_nll_loss.h"
#include "generated/kernels/composite/soft_margin_loss.h"
#include "generated/kernels/composite/triplet_margin_loss.h"
#include "runtime/kernels/composite/reduce_loss.h"

namespace kiln {
namespace composite_implicit {
namespace {

void check_floating(const Tensor& t, const char* op, const char* what) {
  KILN_CHECK(t.is_floating_point(), op, "(): expected a floating point ", what, ", got ",
             scalar_type_name(t.dtype()));
}

Tensor clamp_min0(const Tensor& t) { return kiln::clamp(t, Scalar(0), std::nullopt); }

// at::pairwise_distance: the p-norm of x1 - x2 + eps over the last dim.
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps) {
  const int64_t last = std::max(x1.dim(), x2.dim()) - 1;
  return kiln::norm(kiln::add(kiln::sub(x1, x2), eps), Scalar(p), IntArrayRef(std::vector<int64_t>{last}), false);
}

}  // namespace

// target (log target - input), 0 where target is 0 (torch's xlogy); with log_target,
// exp(target) (target - input).
Tensor kl_div(const Tensor& self, const Tensor& target, int64_t reduction, bool log_target) {
  check_floating(self, "kl_div", "input");
  Tensor loss;
  if (log_target) {
    loss = kiln::mul(kiln::exp(target), kiln::sub(target, self));
  } else {
    // xlogy(t, t): log reads 1 where t is 0, so neither value nor gradient is 0 * -inf.
    // The xlogy term is +0 where t is 0 (also for t = -0.0), so -0.0 targets give torch's +0 loss.
    const Tensor zero = kiln::eq(target, 0);
    const Tensor safe = kiln::masked_fill(target, zero, Scalar(1));
    const Tensor xlogx = kiln::masked_fill(kiln::mul(target, kiln::log(safe)), zero, Scalar(0));
    loss = kiln::sub(xlogx, kiln::mul(target, self));
  }
  return reduce_loss(loss, reduction, "kl_div");
}

Tensor soft_margin_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  check_floating(self, "soft_margin_loss", "input");
  return reduce_loss(kiln::log1p(kiln::exp(kiln::mul(kiln::neg(self), target))), reduction, "soft_margin_loss");
}

// max(0, -target (input1 - input2) + margin).
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                           int64_t reduction) {
  check_floating(input1, "margin_ranking_loss", "input1");
  const Tensor v = kiln::add(kiln::mul(kiln::neg(target), kiln::sub(input1, input2)), margin);
  return reduce_loss(clamp_min0(v), reduction, "margin_ranking_loss");
}

// 1 - cos(x1, x2) where target is 1, max(0, cos - margin) where it is -1, 0 elsewhere.
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                             int64_t reduction) {
  check_floating(input1, "cosine_embedding_loss", "input1");
  const int64_t td = target.dim();
  KILN_CHECK(td == 0 || td == 1, "cosine_embedding_loss(): 0D or 1D target tensor expected, multi-target not supported");
  if (td == 1) {
    KILN_CHECK(input1.dim() == 2 && input2.dim() == 2, "cosine_embedding_loss(): 1D target tensor expects 2D input "
               "tensors, but found inputs with sizes ", shape_str(input1.sizes()), " and ", shape_str(input2.sizes()), ".");
  } else {
    KILN_CHECK(input1.dim() == 1 && input2.dim() == 1, "cosine_embedding_loss(): 0D target tensor expects 1D input "
               "tensors, but found inputs with sizes ", shape_str(input1.sizes()), " and ", shape_str(input2.sizes()), ".");
  }
  const std::vector<int64_t> dims{td};
  const IntArrayRef dim(dims);
  const double kEps = 1e-12;  // torch's EPSILON
  const Tensor prod = kiln::sum(kiln::mul(input1, input2), dim);
  const Tensor mag1 = kiln::add(kiln::sum(kiln::mul(input1, input1), dim), kEps);
  const Tensor mag2 = kiln::add(kiln::sum(kiln::mul(input2, input2), dim), kEps);
  const Tensor cos = kiln::div(prod, kiln::sqrt(kiln::mul(mag1, mag2)));
  const Tensor zeros = kiln::zeros_like(cos);
  const Tensor pos = kiln::where(kiln::eq(target, 1), kiln::sub(kiln::neg(cos), -1.0), zeros);
  const Tensor neg = kiln::where(kiln::eq(target, -1), clamp_min0(kiln::sub(cos, margin)), zeros);
  return reduce_loss(kiln::add(pos, neg), reduction, "cosine_embedding_loss");
}

// max(0, margin + d(a, p) - d(a, n)), d the pairwise p-distance; swap takes d(p, n) when smaller.
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin,
                           double p, double eps, bool swap, int64_t reduction) {
  check_floating(anchor, "triplet_margin_loss", "anchor");
  KILN_CHECK(anchor.dim() == positive.dim() && positive.dim() == negative.dim(),
             "triplet_margin_loss(): The anchor, positive, and negative tensors are expected to have the same number "
             "of dimensions, but got: anchor ", anchor.dim(), "D, positive ", positive.dim(), "D, and negative ",
             negative.dim(), "D inputs");
  const Tensor dist_pos = pairwise_distance(anchor, positive, p, eps);
  Tensor dist_neg = pairwise_distance(anchor, negative, p, eps);
  if (swap) dist_neg = kiln::minimum(dist_neg, pairwise_distance(positive, negative, p, eps));
  return reduce_loss(clamp_min0(kiln::sub(kiln::add(dist_pos, margin), dist_neg)), reduction, "triplet_margin_loss");
}

// exp(input) - target input (log_input), or input - target log(input + eps); full adds
// Stirling's approximation of log(target!) where target > 1.
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full, double eps,
                        int64_t reduction) {
  check_floating(input, "poisson_nll_loss", "input");
  Tensor loss = log_input ? kiln::sub(kiln::exp(input), kiln::mul(target, input))
                          : kiln::sub(input, kiln::mul(target, kiln::log(kiln::add(input, eps))));
  if (full) {
    const Tensor stirling = kiln::add(kiln::sub(kiln::mul(target, kiln::log(target)), target),
                                      kiln::mul(kiln::log(kiln::mul(target, 2 * M_PI)), 0.5));
    loss = kiln::add(loss, kiln::masked_fill(stirling, kiln::le(target, 1), Scalar(0)));
  }
  return reduce_loss(loss, reduction, "poisson_nll_loss");
}

}  // namespace composite_implicit
}  // namespace kiln
