// Autograd for in-place ops on views (PyTorch's CopySlices).
//
// When `view.op_()` runs and the view's base is part of the graph, the base's
// history becomes a CopySlices node (the gradient of the base flows around the
// modified region, and through the op's own backward inside it), and the view's
// grad_fn becomes an AsStridedBackward0 of the base. Views whose base was modified
// through another view are refreshed the same way when next used (gradient_edge).
#pragma once

#include "runtime/autograd/node.h"

namespace kiln {

// Geometry of a view relative to its (contiguous) base.
struct ViewGeometry {
  DimVector sizes;
  DimVector strides;
  int64_t offset = 0;
};

class CopySlices : public Node {
 public:
  CopySlices(const TensorBase& base, ViewGeometry view, std::shared_ptr<Node> fn);
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "torch::autograd::CopySlices"; }  // torch's name()
  void release_variables() override { fn_->release_variables(); }

 private:
  ViewGeometry view_;
  std::shared_ptr<Node> fn_;
};

class AsStridedBackward : public Node {
 public:
  AsStridedBackward(const TensorBase& base, ViewGeometry view);
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "AsStridedBackward0"; }

 private:
  DimVector base_sizes_;
  ScalarType dtype_;
  ViewGeometry view_;
};

// The geometry of `view` inside `base`; throws NotImplementedError when the base is
// not contiguous (the gradient buffer could not mirror its layout).
ViewGeometry view_geometry(const TensorBase& view, const TensorBase& base, const char* op_name);

}  // namespace kiln
