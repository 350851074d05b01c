#include "runtime/autograd/formula_helpers.h"

#include <algorithm>

#include "generated/api/kiln.h"
#include "runtime/autograd/autograd_meta.h"

namespace kiln {

Tensor maybe_multiply(const Tensor& grad, const Scalar& alpha) {
  if (alpha.equal(1)) return grad;
  return kiln::mul(grad, alpha);
}

Tensor sum_to(const Tensor& t, IntArrayRef shape) {
  if (t.sizes() == shape) return t;
  const int64_t lead = t.dim() - static_cast<int64_t>(shape.size());
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < lead; ++i) dims.push_back(i);
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 1 && t.sizes()[lead + i] != 1) dims.push_back(lead + static_cast<int64_t>(i));
  Tensor r = dims.empty() ? t : kiln::sum(t, IntArrayRef(dims), /*keepdim=*/true);
  return r.view(shape);
}

namespace {
// Reinserts the reduced dims (size 1) that keepdim=False removed.
Tensor unsqueeze_reduced(const Tensor& grad, IntArrayRef sizes, const std::optional<std::vector<int64_t>>& dim,
                         bool keepdim) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  if (keepdim || nd == 0) return grad;
  std::vector<bool> reduced(nd, !dim || dim->empty());
  if (dim)
    for (int64_t d : *dim) reduced[wrap_dim(d, nd, "sum")] = true;
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < nd; ++i) shape.push_back(reduced[i] ? 1 : sizes[i]);
  return grad.view(shape);
}
}  // namespace

Tensor sum_backward(const Tensor& grad, IntArrayRef sizes, const std::optional<std::vector<int64_t>>& dim,
                    bool keepdim) {
  return unsqueeze_reduced(grad, sizes, dim, keepdim).expand(sizes);
}

Tensor mean_backward(const Tensor& grad, IntArrayRef sizes, const std::optional<std::vector<int64_t>>& dim,
                     bool keepdim) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  int64_t count = 1;
  if (!dim || dim->empty()) {
    for (int64_t s : sizes) count *= s;
  } else {
    std::vector<bool> seen(std::max<int64_t>(nd, 1), false);
    for (int64_t d : *dim) {
      int64_t w = wrap_dim(d, nd, "mean");
      if (!seen[w] && nd > 0) count *= sizes[w];
      seen[w] = true;
    }
  }
  return kiln::div(sum_backward(grad, sizes, dim, keepdim), Scalar(count));
}

Tensor pow_backward(const Tensor& grad, const Tensor& self, const Scalar& exponent) {
  if (exponent.equal(0)) return kiln::zeros_like(self);
  Tensor d = kiln::mul(kiln::pow(self, exponent.is_floating_point() ? Scalar(exponent.to_double() - 1)
                                                                    : Scalar(exponent.to_long() - 1)),
                       exponent);
  return kiln::mul(grad, d);
}

Tensor unsqueeze_to(const Tensor& grad, int64_t dim, IntArrayRef sizes) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  if (nd == 0) return grad;
  int64_t d = wrap_dim(dim, nd, "squeeze");
  return sizes[d] == 1 ? kiln::unsqueeze(grad, d) : grad;
}

Tensor extremum_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dim,
                         bool keepdim) {
  const std::optional<std::vector<int64_t>> dims = dim.vec();
  Tensor expanded_result = sum_backward(result, self.sizes(), dims, keepdim);
  Tensor mask = kiln::eq(self, expanded_result);
  Tensor count = kiln::sum(mask, dim, /*keepdim=*/true);
  Tensor share = kiln::div(sum_backward(grad, self.sizes(), dims, keepdim), count);
  return kiln::mul(share, mask);
}

Tensor clamp_backward(const Tensor& grad, const Tensor& self, const std::optional<Scalar>& min,
                      const std::optional<Scalar>& max) {
  Tensor g = grad;
  if (min) g = kiln::mul(g, kiln::ge(self, *min));
  if (max) g = kiln::mul(g, kiln::le(self, *max));
  return g;
}

std::vector<int64_t> inverse_permutation(IntArrayRef dims) {
  const int64_t n = static_cast<int64_t>(dims.size());
  std::vector<int64_t> inv(n);
  for (int64_t i = 0; i < n; ++i) inv[wrap_dim(dims[i], n, "permute")] = i;
  return inv;
}

void resolve_slice(int64_t size, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step,
                   int64_t* out_start, int64_t* out_end) {
  int64_t s = start.value_or(0), e = end.value_or(size);
  if (s < 0) s += size;
  if (e < 0) e += size;
  s = std::clamp<int64_t>(s, 0, size);
  e = std::clamp<int64_t>(e, s, size);
  *out_start = s;
  *out_end = e;
}

Tensor slice_backward_wrapper(const Tensor& grad, IntArrayRef sizes, int64_t dim, std::optional<int64_t> start,
                              std::optional<int64_t> end, int64_t step) {
  int64_t d = wrap_dim(dim, static_cast<int64_t>(sizes.size()), "slice");
  int64_t s, e;
  resolve_slice(sizes[d], start, end, step, &s, &e);
  return kiln::slice_backward(grad, sizes, d, s, e, step);
}

}  // namespace kiln
