// Views remember their base (generated view ops call this): what in-place ops on
// views need for PyTorch's semantics (see view_nodes.h). A header of its own so the
// generated op files need not include the autograd graph headers.
#pragma once

#include "runtime/core/tensor_base.h"

namespace kiln {

// Records that `view` (an output of a view op) shares memory with `base`'s root; `multi_output`
// for the outputs of an op that returns several views. In no-grad mode only views of a tensor that
// requires grad are recorded: the only ones where it changes anything (they require grad, as in
// PyTorch, and may not be written in place once grad mode is back).
void mark_view(const TensorBase& view, const TensorBase& base, bool multi_output = false);

}  // namespace kiln
