// In-place view methods (Tensor.t_(), transpose_(), unsqueeze_(), squeeze_(), as_strided_()) and
// resize_(): they change a tensor's own sizes and strides, on the same storage.
//
// An in-place view op is the out-of-place view op (recorded by autograd as usual: a
// TransposeBackward0 of self's history) whose result's geometry and history `self` then takes
// over. This is torch's rule, which rebases self's history on the view op's node rather than
// going through CopySlices as an in-place write does: no element changes, only the geometry, so
// the gradient reaching self flows back through the view op's backward.
#pragma once

#include "runtime/core/tensor_base.h"

namespace kiln {

// `self` takes `view`'s sizes, strides and offset (view must be a view of self's storage, made by
// the out-of-place op) and, when autograd recorded the view, its grad_fn. Raises as torch for a
// leaf that requires grad, or a view of one, in grad mode. Bumps self's version, as torch.
void adopt_view_geometry(const TensorBase& self, const TensorBase& view, const char* op_name);

// Tensor.resize_(sizes): contiguous strides at the same offset, growing the storage if needed;
// unchanged when the sizes are already these (torch keeps the strides then). Refuses a tensor
// that requires grad, as torch ("cannot resize variables that require grad").
void resize_in_place(const TensorBase& self, IntArrayRef sizes);

}  // namespace kiln
