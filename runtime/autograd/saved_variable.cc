#include "runtime/autograd/saved_variable.h"

#include "runtime/autograd/node.h"
#include "runtime/core/error.h"

namespace kiln {

SavedVariable::SavedVariable(const TensorBase& t, bool is_output) {
  if (!t.defined()) return;
  saved_version_ = t._version();
  is_output_ = is_output;
  requires_grad_ = t.requires_grad();
  output_nr_ = t.output_nr();
  if (t.grad_fn()) producer_name_ = t.grad_fn()->name();
  if (is_output) {
    // Same storage and version counter, no autograd meta: no cycle through grad_fn.
    const TensorImpl& impl = *t.impl();
    data_ = TensorBase(Ref<TensorImpl>(new TensorImpl(impl, impl.sizes(), impl.strides(), impl.storage_offset())));
  } else {
    data_ = t;
  }
}

void SavedVariable::reset_data() {
  if (data_.defined() || released_) released_ = true;
  data_.reset();
}

TensorBase SavedVariable::unpack(const std::shared_ptr<Node>& saved_for) const {
  KILN_CHECK(!released_,
             "Trying to backward through the graph a second time (or directly access saved tensors after they have "
             "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
             "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
             "if you need to access saved tensors after calling backward.");
  if (!data_.defined()) return TensorBase();
  uint32_t now = data_._version();
  KILN_CHECK(now == saved_version_,
             "one of the variables needed for gradient computation has been modified by an inplace operation: [",
             data_.type_str(), "]",
             producer_name_.empty() ? std::string() : ", which is output " + std::to_string(output_nr_) + " of " + producer_name_,
             ", is at version ", now, "; expected version ", saved_version_,
             " instead. Hint: the backtrace further above shows the operation that failed to compute its gradient. "
             "The variable in question was changed in there or anywhere later. Good luck!");
  if (!is_output_ || !requires_grad_ || !saved_for) return data_;
  const TensorImpl& impl = *data_.impl();
  TensorBase out(Ref<TensorImpl>(new TensorImpl(impl, impl.sizes(), impl.strides(), impl.storage_offset())));
  AutogradMeta& meta = out.impl()->ensure_autograd_meta();
  meta.grad_fn = saved_for;
  meta.output_nr = output_nr_;
  return out;
}

}  // namespace kiln
