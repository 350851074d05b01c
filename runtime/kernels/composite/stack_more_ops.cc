// hstack, vstack (row_stack), dstack, column_stack: cat after raising each part to at least
// 1, 2 or 3 dims, as torch's atleast_1d/2d/3d do.
#include <string>
#include <vector>

#include "generated/api/cat.h"
#include "generated/api/reshape.h"
#include "generated/api/unsqueeze.h"
#include "generated/kernels/composite/column_stack.h"
#include "generated/kernels/composite/dstack.h"
#include "generated/kernels/composite/hstack.h"
#include "generated/kernels/composite/row_stack.h"
#include "generated/kernels/composite/vstack.h"
#include "runtime/kernels/shape_rules.h"

namespace kiln {
namespace composite_implicit {
namespace {

// torch.atleast_1d/2d/3d of one tensor: 0-D -> (1), (1, 1), (1, 1, 1); 1-D (n) -> (1, n), (1, n, 1);
// 2-D (m, n) -> (m, n, 1).
Tensor at_least(const Tensor& t, int64_t n) {
  const int64_t d = t.dim();
  if (d >= n) return t;
  if (d == 0) return kiln::reshape(t, std::vector<int64_t>(n, 1));
  if (n == 2) return kiln::unsqueeze(t, 0);                                         // 1-D
  if (d == 1) return kiln::unsqueeze(kiln::unsqueeze(t, 0), -1);                    // n == 3
  return kiln::unsqueeze(t, -1);                                                    // 2-D, n == 3
}

std::vector<Tensor> all_at_least(const std::vector<Tensor>& tensors, int64_t n, const char* op) {
  KILN_CHECK(!tensors.empty(), op, " expects a non-empty TensorList");
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(at_least(t, n));
  return out;
}

}  // namespace

Tensor hstack(const std::vector<Tensor>& tensors) {
  const std::vector<Tensor> parts = all_at_least(tensors, 1, "hstack");
  return kiln::cat(parts, parts[0].dim() == 1 ? 0 : 1);
}

Tensor vstack(const std::vector<Tensor>& tensors) { return kiln::cat(all_at_least(tensors, 2, "vstack"), 0); }

// torch.row_stack is vstack, messages included.
Tensor row_stack(const std::vector<Tensor>& tensors) {
  return kiln::cat(all_at_least(tensors, 2, "vstack"), 0);
}

Tensor dstack(const std::vector<Tensor>& tensors) { return kiln::cat(all_at_least(tensors, 3, "dstack"), 2); }

Tensor column_stack(const std::vector<Tensor>& tensors) {
  KILN_CHECK(!tensors.empty(), "column_stack expects a non-empty TensorList");
  std::vector<Tensor> parts;
  parts.reserve(tensors.size());
  for (const Tensor& t : tensors) parts.push_back(t.dim() <= 1 ? kiln::reshape(t, {t.numel(), 1}) : t);
  return kiln::cat(parts, 1);
}

}  // namespace composite_implicit
}  // namespace kiln
