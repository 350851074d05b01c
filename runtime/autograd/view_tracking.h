// Views remember their base (generated view ops call this): what in-place ops on
// views need for PyTorch's semantics (see view_nodes.h). A header of its own so the
// generated op files need not include the autograd graph headers.
#pragma once

#include "runtime/core/tensor_base.h"

namespace kiln {

// Records that `view` (an output of a view op) shares memory with `base`'s root.
// No-op in no-grad mode: such views never require grad, as in PyTorch.
void mark_view(const TensorBase& view, const TensorBase& base);

}  // namespace kiln
