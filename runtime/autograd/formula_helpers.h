// Functions that derivative formulas (schema/derivatives.yaml) may call besides
// the ops themselves. The code generator knows this list (codegen/loader.py,
// FORMULA_HELPERS); keep the two in sync.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "generated/api/tensor.h"
#include "runtime/autograd/saved_variable.h"
#include "runtime/dispatch/grad_mode.h"

namespace kiln {

// grad * alpha, skipping the multiplication when alpha is 1.
Tensor maybe_multiply(const Tensor& grad, const Scalar& alpha);
// Gradient of mm/addmm's mat2 (sizes, strides: mat2's): mat1^T @ grad, or (grad^T @ mat1)^T when mat2
// is a transposed contiguous matrix (nn.Linear's weight.t()), as torch's mm_mat2_backward: the weight's
// gradient then comes out contiguous, with no transposing copy in AccumulateGrad.
Tensor mm_mat2_backward(const Tensor& grad, const Tensor& mat1, IntArrayRef sizes, IntArrayRef strides);
// Sums `t` over the dims that broadcasting expanded, giving it `shape`.
Tensor sum_to(const Tensor& t, IntArrayRef shape);
// Gradient of sum over `dim` (all dims when empty): grad expanded back to `sizes`.
Tensor sum_backward(const Tensor& grad, IntArrayRef sizes, const std::optional<std::vector<int64_t>>& dim,
                    bool keepdim);
Tensor mean_backward(const Tensor& grad, IntArrayRef sizes, const std::optional<std::vector<int64_t>>& dim,
                     bool keepdim);
// slice_backward with slice()'s optional start/end resolved.
Tensor slice_backward_wrapper(const Tensor& grad, IntArrayRef sizes, int64_t dim, std::optional<int64_t> start,
                              std::optional<int64_t> end, int64_t step);
// Gradient of squeeze(dim): grad with `dim` put back when the input had size 1 there.
Tensor unsqueeze_to(const Tensor& grad, int64_t dim, IntArrayRef sizes);
// Gradient of amax/amin: split evenly among the elements equal to the extremum.
// nan_selects: a NaN result selects the NaN elements (max()/min()); torch 1.13's amax/amin do not
// (their mask is result == self: a NaN row's gradient is grad / 0 * 0, NaN everywhere).
Tensor extremum_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dim, bool keepdim,
                         bool nan_selects = true);
// Gradient of median()/nanmedian() (torch's evenly_distribute_backward): split evenly among the
// elements equal to the result (the NaNs when it is NaN).
Tensor evenly_distribute_backward(const Tensor& grad, const Tensor& self, const Tensor& result);
// Gradient of max.dim/min.dim: grad placed at `indices` along `dim`, zeros elsewhere.
Tensor value_selecting_reduction_backward(const Tensor& grad, int64_t dim, const Tensor& indices, IntArrayRef sizes,
                                          bool keepdim);
// Gradient of prod over `dim`, exact when self holds zeros (no division by them).
Tensor prod_backward(const Tensor& grad, const Tensor& self, const Tensor& result, int64_t dim, bool keepdim);
// The whole tensor's product (torch's full prod_backward: two zeros or more give zeros).
Tensor prod_full_backward(const Tensor& grad, const Tensor& self, const Tensor& result);
// Gradient of cat: grad cut back into the inputs' pieces along `dim`.
std::vector<Tensor> cat_tensors_backward(const Tensor& grad, const std::vector<std::vector<int64_t>>& sizes,
                                         int64_t dim);
// Whether a fused backward op (codegen/loader.py, _fused_backward) computes this derivative: no
// graph is being built for the backward pass, and every tensor it reads is floating (with an
// integer or bool one, the derivative's ops apply their own promotion and errors, as torch's
// formulas do: pow's `exponent - 1` refuses a bool exponent).
inline bool fused_backward_applies(std::initializer_list<const TensorBase*> tensors) {
  if (GradMode::is_enabled()) return false;
  for (const TensorBase* t : tensors)
    if (!t->is_floating_point()) return false;
  return true;
}
// Gradient of split_with_sizes: the views' gradients concatenated along `dim` (zeros for views
// that got none); `grads` holds one per view.
Tensor split_with_sizes_backward(const std::vector<TensorBase>& grads, IntArrayRef split_sizes, int64_t dim,
                                 IntArrayRef input_sizes);
// Gradient of unbind: the views' gradients stacked along `dim` (zeros for views that got none).
Tensor unbind_backward(const std::vector<TensorBase>& grads, int64_t dim, IntArrayRef input_sizes);
// Gradient of as_strided: grad summed into the storage positions the view covers
// (overlapping views accumulate), then read back at the input's own positions, shared evenly
// where the input itself overlaps (an expanded input), as torch.
Tensor as_strided_backward(const Tensor& grad, IntArrayRef input_sizes, IntArrayRef input_strides,
                           int64_t input_offset, IntArrayRef size, IntArrayRef stride,
                           std::optional<int64_t> storage_offset);
// Gradient of diagonal: grad written onto the diagonal of zeros shaped like the input.
Tensor diagonal_backward(const Tensor& grad, IntArrayRef input_sizes, int64_t offset, int64_t dim1, int64_t dim2);
// Gradient of unfold: each window's grad added back at the input positions it covers.
Tensor unfold_backward(const Tensor& grad, IntArrayRef input_sizes, int64_t dim, int64_t size, int64_t step);
// grad where min <= self <= max (either bound may be absent), 0 elsewhere.
// An absent Scalar? bound of a formula op (clamp) in its derivative: -inf or inf.
Scalar value_or_lowest(const std::optional<Scalar>& bound);
Scalar value_or_highest(const std::optional<Scalar>& bound);
// The permutation that undoes `dims` (for permute's gradient).
std::vector<int64_t> inverse_permutation(IntArrayRef dims);
// Resolves slice() bounds like Python: clamps to [0, size], negatives count from the end.
void resolve_slice(int64_t size, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step,
                   int64_t* out_start, int64_t* out_end);

// nn (nn_formula_helpers.cc). conv2d's bias gradient: grad summed over all but the channel dim.
Tensor conv_bias_backward(const Tensor& grad);
// native_layer_norm's gradients (input, weight, bias; undefined where that input is None): the
// fused kernel (native_layer_norm_backward), or, while a graph of the gradient is built
// (create_graph), the same math with ops from the input alone, so second derivatives work.
std::vector<Tensor> layer_norm_backward(const Tensor& grad, const Tensor& input, IntArrayRef normalized_shape,
                                        const Tensor& mean, const Tensor& rstd, const Tensor& weight,
                                        const Tensor& bias, double eps);
// Gradient of max_pool2d_with_indices_backward w.r.t. grad_output: grad read at `indices`.
Tensor max_pool_double_backward(const Tensor& grad, const Tensor& indices);
// Gradient of adaptive_avg_pool2d_backward w.r.t. grad_output (whose sizes are given).
// The loss gradients of torch's binary cross entropy: finite at p = 0 or 1 (the denominator
// p (1 - p) is clamped at 1e-12) and at logits of +-inf. `reduction` 1 (mean) divides by numel.
Tensor binary_cross_entropy_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                                     const Tensor& weight, int64_t reduction);
Tensor binary_cross_entropy_target_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                                            const Tensor& weight, int64_t reduction);
Tensor binary_cross_entropy_with_logits_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                                                 const Tensor& weight, const Tensor& pos_weight, int64_t reduction);
Tensor binary_cross_entropy_with_logits_target_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                                                        const Tensor& weight, const Tensor& pos_weight,
                                                        int64_t reduction);
Tensor adaptive_avg_pool_double_backward(const Tensor& grad, IntArrayRef grad_output_sizes);
Tensor adaptive_avg_pool3d_double_backward(const Tensor& grad, IntArrayRef grad_output_sizes);
Tensor max_pool3d_double_backward(const Tensor& grad, const Tensor& indices);

// Gradient of cumsum along dim: the running sum of grad from the end (reduction_formula_helpers.cc).
Tensor cumsum_backward(const Tensor& grad, int64_t dim);
// Gradient of cumprod along dim, exact when self holds zeros.
Tensor cumprod_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& result);
// Gradient of cummax/cummin: grad scattered (added) to the positions in indices.
Tensor cummaxmin_backward(const Tensor& grad, const Tensor& self, const Tensor& indices, int64_t dim);
// Gradient of logcumsumexp along dim (torch's overflow-free formula).
Tensor logcumsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, int64_t dim);

// Indexing (indexing_formula_helpers.cc). Gradient of masked_select: grad put back at the mask's
// true positions of the broadcast shape, summed to self's sizes.
Tensor masked_select_backward(const Tensor& grad, IntArrayRef self_sizes, const Tensor& mask);
// Gradient of take: grad added into self's flat positions (repeated indices accumulate).
Tensor take_backward(const Tensor& grad, IntArrayRef self_sizes, const Tensor& index);
// Gradients of scatter_reduce (torch's formulas) for self and for src.
Tensor scatter_reduce_backward_self(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& index,
                                    const Tensor& src, const std::string& reduce, bool include_self,
                                    const Tensor& result);
Tensor scatter_reduce_backward_src(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& index,
                                   const Tensor& src, const std::string& reduce, bool include_self,
                                   const Tensor& result);

// Tensor[] inputs (cat's `tensors`): saved element-wise, and one gradient per element.
std::vector<Tensor> unpack_list(const std::vector<SavedVariable>& saved);
void assign_grads(std::vector<TensorBase>& grad_inputs, size_t first, const std::vector<Tensor>& grads);

// The K-th gradient of a formula computing several inputs' gradients at once (derivatives.yaml:
// `a, b: op(...)`), returned as a Tensor[] or a tuple.
template <size_t K>
Tensor pick_grad(const std::vector<Tensor>& grads) {
  return grads.at(K);
}
template <size_t K, class... Ts>
Tensor pick_grad(const std::tuple<Ts...>& grads) {
  return std::get<K>(grads);
}

}  // namespace kiln
