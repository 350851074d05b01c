#include "runtime/autograd/formula_helpers.h"

#include <algorithm>
#include <functional>
#include <limits>

#include "generated/api/add.h"
#include "generated/api/amax.h"
#include "generated/api/arange.h"
#include "generated/api/cat.h"
#include "generated/api/clamp.h"
#include "generated/api/cumprod.h"
#include "generated/api/diagonal.h"
#include "generated/api/div.h"
#include "generated/api/empty.h"
#include "generated/api/eq.h"
#include "generated/api/flip.h"
#include "generated/api/full.h"
#include "generated/api/ge.h"
#include "generated/api/gt.h"
#include "generated/api/index.h"
#include "generated/api/index_put.h"
#include "generated/api/le.h"
#include "generated/api/logical_and.h"
#include "generated/api/logical_or.h"
#include "generated/api/max.h"
#include "generated/api/mm.h"
#include "generated/api/movedim.h"
#include "generated/api/mul.h"
#include "generated/api/narrow.h"
#include "generated/api/ne.h"
#include "generated/api/ones.h"
#include "generated/api/ones_like.h"
#include "generated/api/pow.h"
#include "generated/api/prod.h"
#include "generated/api/slice.h"
#include "generated/api/slice_backward.h"
#include "generated/api/stack.h"
#include "generated/api/sum.h"
#include "generated/api/transpose.h"
#include "generated/api/unsqueeze.h"
#include "generated/api/where.h"
#include "generated/api/zeros.h"
#include "generated/api/zeros_like.h"
#include "runtime/core/autograd_meta.h"

namespace kiln {

Tensor maybe_multiply(const Tensor& grad, const Scalar& alpha) {
  if (alpha.equal(1)) return grad;
  return kiln::mul(grad, alpha);
}

Tensor mm_mat2_backward(const Tensor& grad, const Tensor& mat1, IntArrayRef sizes, IntArrayRef strides) {
  if (sizes.size() == 2 && strides[0] == 1 && strides[1] == sizes[0])
    return kiln::transpose(kiln::mm(kiln::transpose(grad, 0, 1), mat1), 0, 1);
  return kiln::mm(kiln::transpose(mat1, 0, 1), grad);
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


Tensor unsqueeze_to(const Tensor& grad, int64_t dim, IntArrayRef sizes) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  if (nd == 0) return grad;
  int64_t d = wrap_dim(dim, nd, "squeeze");
  return sizes[d] == 1 ? kiln::unsqueeze(grad, d) : grad;
}

Tensor extremum_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dim,
                         bool keepdim, bool nan_selects) {
  const std::optional<std::vector<int64_t>> dims = dim.vec();
  Tensor expanded_result = sum_backward(result, self.sizes(), dims, keepdim);
  // The selected elements: equal to the result, or NaN where the result is NaN (NaN != NaN).
  Tensor mask = kiln::eq(self, expanded_result);
  if (nan_selects)
    mask = kiln::logical_or(mask, kiln::logical_and(kiln::ne(self, self), kiln::ne(expanded_result, expanded_result)));
  Tensor count = kiln::sum(mask, dim, /*keepdim=*/true);
  Tensor share = kiln::div(sum_backward(grad, self.sizes(), dims, keepdim), count);
  return kiln::mul(share, mask);
}

Tensor evenly_distribute_backward(const Tensor& grad, const Tensor& self, const Tensor& result) {
  return extremum_backward(grad, self, result, {}, /*keepdim=*/false);
}

Tensor value_selecting_reduction_backward(const Tensor& grad, int64_t dim, const Tensor& indices, IntArrayRef sizes,
                                          bool keepdim) {
  if (sizes.empty()) return grad;  // a 0-dim input: its one element was selected
  const int64_t d = wrap_dim(dim, static_cast<int64_t>(sizes.size()), "max");
  const Tensor g = keepdim ? grad : grad.unsqueeze(d);
  const Tensor idx = keepdim ? indices : indices.unsqueeze(d);
  // positions[..., k, ...] = k along dim d, so (positions == idx) marks the selected elements.
  std::vector<int64_t> shape(sizes.size(), 1);
  shape[d] = sizes[d];
  const Tensor positions = kiln::arange(sizes[d], ScalarType::Int64).view(shape);
  const Tensor selected = kiln::eq(positions, idx);
  return kiln::where(selected, g, kiln::zeros({}, grad.scalar_type()));
}

Tensor prod_backward(const Tensor& grad, const Tensor& self, const Tensor& result, int64_t dim, bool keepdim) {
  if (self.dim() == 0) return grad;
  const int64_t d = wrap_dim(dim, self.dim(), "prod");
  const Tensor g = keepdim ? grad : grad.unsqueeze(d);
  const Tensor r = keepdim ? result : result.unsqueeze(d);
  const int64_t n = self.sizes()[d];
  if (self.numel() == 0) return kiln::mul(g, kiln::zeros_like(self));
  // As torch's prod_backward: with no zero anywhere, d prod / d x_i = prod / x_i. Otherwise every
  // line takes prod_safe_zeros_backward: each element's gradient is the product of the others,
  // the exclusive products from the front and from the back multiplied (0 where the others hold a
  // zero; NaN from 0 * inf exactly where torch's is), with cumprod's second derivative.
  if (!kiln::eq(self, 0).any().item().to_bool()) return kiln::mul(g, kiln::div(r, self));
  const Tensor one = kiln::ones_like(kiln::narrow(self, d, 0, 1));
  const Tensor before = kiln::cumprod(kiln::cat({one, kiln::narrow(self, d, 0, n - 1)}, d), d);
  const Tensor reversed = kiln::flip(self, IntArrayRef(d));
  const Tensor after = kiln::flip(kiln::cumprod(kiln::cat({one, kiln::narrow(reversed, d, 0, n - 1)}, d), d),
                                  IntArrayRef(d));
  return kiln::mul(g, kiln::mul(before, after));
}

Tensor prod_full_backward(const Tensor& grad, const Tensor& self, const Tensor& result) {
  const Tensor g = grad.to(self.scalar_type()), r = result.to(self.scalar_type());
  if (self.dim() == 0) return g;
  const int64_t zeros = kiln::sum(kiln::eq(self, 0)).item().to<int64_t>();
  if (zeros == 0) return kiln::mul(g, kiln::div(r, self));
  if (zeros > 1) return kiln::zeros_like(self);
  return prod_backward(g, self.reshape({-1}), r, 0, false).reshape(self.sizes());
}

std::vector<Tensor> cat_tensors_backward(const Tensor& grad, const std::vector<std::vector<int64_t>>& sizes,
                                         int64_t dim) {
  std::vector<Tensor> grads;
  grads.reserve(sizes.size());
  int64_t d = -1, offset = 0;
  for (const auto& s : sizes) {
    if (s.size() == 1 && s[0] == 0) {  // a skipped legacy empty tensor
      grads.push_back(kiln::zeros({0}, grad.scalar_type()));
      continue;
    }
    if (d < 0) d = wrap_dim(dim, static_cast<int64_t>(s.size()), "cat");
    grads.push_back(kiln::slice(grad, d, offset, offset + s[d]));
    offset += s[d];
  }
  return grads;
}

namespace {
// grads[i], or zeros of `shape` in the dtype and device of a defined gradient (there is one: the
// node runs only then) where view i got no gradient.
std::vector<Tensor> grads_or_zeros(const std::vector<TensorBase>& grads,
                                   const std::function<std::vector<int64_t>(size_t)>& shape) {
  const TensorBase* like = nullptr;
  for (const TensorBase& g : grads)
    if (g.defined()) like = &g;
  std::vector<Tensor> filled;
  filled.reserve(grads.size());
  for (size_t i = 0; i < grads.size(); ++i)
    filled.push_back(grads[i].defined() ? Tensor(grads[i]) : kiln::zeros(shape(i), like->dtype(), like->device()));
  return filled;
}
}  // namespace

Tensor split_with_sizes_backward(const std::vector<TensorBase>& grads, IntArrayRef split_sizes, int64_t dim,
                                 IntArrayRef input_sizes) {
  const int64_t d = wrap_dim(dim, static_cast<int64_t>(input_sizes.size()), "split_with_sizes");
  return kiln::cat(grads_or_zeros(grads, [&](size_t i) {
                     std::vector<int64_t> shape = input_sizes.vec();
                     shape[d] = split_sizes[i];
                     return shape;
                   }),
                   d);
}

Tensor unbind_backward(const std::vector<TensorBase>& grads, int64_t dim, IntArrayRef input_sizes) {
  const int64_t d = wrap_dim(dim, static_cast<int64_t>(input_sizes.size()), "unbind");
  std::vector<int64_t> shape = input_sizes.vec();
  shape.erase(shape.begin() + d);
  return kiln::stack(grads_or_zeros(grads, [&](size_t) { return shape; }), d);
}

namespace {
// The storage position of every element of a (sizes, strides, offset) view, as an int64 tensor of shape `sizes`.
Tensor storage_positions(IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  Tensor pos = kiln::full({}, offset, ScalarType::Int64);
  const int64_t nd = static_cast<int64_t>(sizes.size());
  for (int64_t d = 0; d < nd; ++d) {
    std::vector<int64_t> shape(nd, 1);
    shape[d] = sizes[d];
    pos = kiln::add(pos, kiln::mul(kiln::arange(sizes[d], ScalarType::Int64).view(shape), strides[d]));
  }
  return pos.expand(sizes).reshape({-1});
}
}  // namespace

Tensor as_strided_backward(const Tensor& grad, IntArrayRef input_sizes, IntArrayRef input_strides,
                           int64_t input_offset, IntArrayRef size, IntArrayRef stride,
                           std::optional<int64_t> storage_offset) {
  const Tensor out_pos = storage_positions(size, stride, storage_offset.value_or(input_offset));
  const Tensor in_pos = storage_positions(input_sizes, input_strides, input_offset);
  int64_t extent = 0;
  if (out_pos.numel() > 0) extent = std::max(extent, kiln::amax(out_pos).item().to<int64_t>() + 1);
  if (in_pos.numel() > 0) extent = std::max(extent, kiln::amax(in_pos).item().to<int64_t>() + 1);
  Tensor storage = kiln::index_put(kiln::zeros({extent}, grad.scalar_type()), {out_pos}, grad.reshape({-1}),
                                   /*accumulate=*/true);
  const Tensor uses = kiln::index_put(kiln::zeros({extent}, grad.scalar_type()), {in_pos},
                                      kiln::ones({in_pos.numel()}, grad.scalar_type()), /*accumulate=*/true);
  if (kiln::gt(uses, 1).any().item().to_bool()) storage = kiln::div(storage, kiln::clamp(uses, Scalar(1.0)));
  return kiln::index(storage, {in_pos}).view(input_sizes);
}

Tensor diagonal_backward(const Tensor& grad, IntArrayRef input_sizes, int64_t offset, int64_t dim1, int64_t dim2) {
  Tensor result = kiln::zeros(input_sizes, grad.scalar_type());
  kiln::diagonal(result, offset, dim1, dim2).copy_(grad);
  return result;
}

Tensor unfold_backward(const Tensor& grad, IntArrayRef input_sizes, int64_t dim, int64_t size, int64_t step) {
  const int64_t nd = static_cast<int64_t>(input_sizes.size());
  if (nd == 0) return kiln::sum(grad).view(input_sizes);  // one window of size 0 or 1
  const int64_t d = wrap_dim(dim, nd, "unfold");
  // grad is [..., windows (at d), ..., size]: bring the window and in-window dims to the front,
  // flatten them, and add each row at input position window * step + offset.
  const int64_t windows = grad.sizes()[d];
  std::vector<int64_t> front(input_sizes.begin(), input_sizes.end());  // input_sizes with d moved first
  front.erase(front.begin() + d);
  front.insert(front.begin(), input_sizes[d]);
  std::vector<int64_t> rows_shape = front;
  rows_shape[0] = windows * size;
  const Tensor rows = kiln::movedim(kiln::movedim(grad, d, 0), nd, 1).reshape(rows_shape);
  const Tensor position = kiln::add(kiln::mul(kiln::arange(windows, ScalarType::Int64).view({windows, 1}), step),
                                    kiln::arange(size, ScalarType::Int64).view({1, size}));
  const Tensor added = kiln::index_put(kiln::zeros(front, grad.scalar_type()), {position.reshape({-1})}, rows,
                                       /*accumulate=*/true);
  return kiln::movedim(added, 0, d);
}

Scalar value_or_lowest(const std::optional<Scalar>& bound) {
  return bound ? *bound : Scalar(-std::numeric_limits<double>::infinity());
}

Scalar value_or_highest(const std::optional<Scalar>& bound) {
  return bound ? *bound : Scalar(std::numeric_limits<double>::infinity());
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

std::vector<Tensor> unpack_list(const std::vector<SavedVariable>& saved) {
  std::vector<Tensor> out;
  out.reserve(saved.size());
  for (const SavedVariable& v : saved) out.emplace_back(v.unpack());
  return out;
}

void assign_grads(std::vector<TensorBase>& grad_inputs, size_t first, const std::vector<Tensor>& grads) {
  for (size_t i = 0; i < grads.size(); ++i) grad_inputs[first + i] = grads[i];
}

}  // namespace kiln
