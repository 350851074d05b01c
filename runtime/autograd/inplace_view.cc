#include "runtime/autograd/inplace_view.h"

#include "runtime/autograd/node.h"
#include "runtime/core/error.h"
#include "runtime/dispatch/grad_mode.h"

namespace kiln {

void adopt_view_geometry(const TensorBase& self, const TensorBase& view, const char* op_name) {
  check_inplace(self, op_name);
  KILN_CHECK(self.is_alias_of(view), op_name,
             "(): internal error: the view does not share self's storage");
  self.impl()->set_sizes_and_strides(view.sizes(), view.strides(), view.storage_offset());
  self.impl()->bump_version();
  AutogradMeta* view_meta = view.impl()->autograd_meta();
  if (!GradMode::is_enabled() || !view_meta || !view_meta->grad_fn) return;
  // The view op's node (its input edge is self's old history) is self's history now. A view keeps
  // its base (torch: v._base is unchanged), and its grad_fn is current at the new version, so it is
  // not rebuilt from the base on next use.
  AutogradMeta& meta = self.impl()->ensure_autograd_meta();
  meta.grad_fn = view_meta->grad_fn;
  meta.output_nr = view_meta->output_nr;
  meta.attr_version = self._version();
}

void resize_in_place(const TensorBase& self, IntArrayRef sizes) {
  KILN_CHECK(!self.requires_grad(), "cannot resize variables that require grad");
  for (int64_t n : sizes) KILN_CHECK(n >= 0, "resize_(): trying to resize to a negative size ", shape_str(sizes));
  if (self.sizes() == sizes) return;
  self.impl()->set_sizes_contiguous(sizes);
}

}  // namespace kiln
