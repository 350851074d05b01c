#include "runtime/autograd/saved_variable.h"

#include "runtime/autograd/node.h"
#include "runtime/autograd/saved_tensor_hooks.h"
#include "runtime/dispatch/grad_mode.h"
#include "runtime/core/error.h"

namespace kiln {

SavedVariable::SavedVariable(const TensorBase& t, bool is_output) {
  if (!t.defined()) return;
  saved_version_ = t._version();
  is_output_ = is_output;
  requires_grad_ = t.requires_grad();
  output_nr_ = t.output_nr();
  if (t.grad_fn()) producer_name_ = t.grad_fn()->name();
  if (std::shared_ptr<SavedTensorHooks> hooks = current_saved_tensor_hooks()) {
    pack_with(*hooks, t);
    return;
  }
  if (is_output) {
    // Same storage and version counter, no autograd meta: no cycle through grad_fn.
    const TensorImpl& impl = *t.impl();
    data_ = TensorBase(Ref<TensorImpl>(new TensorImpl(impl, impl.sizes(), impl.strides(), impl.storage_offset())));
  } else {
    data_ = t;
  }
}

namespace {

// The same storage, sizes and strides, no autograd meta.
TensorBase plain_alias(const TensorBase& t) {
  const TensorImpl& impl = *t.impl();
  return TensorBase(Ref<TensorImpl>(new TensorImpl(impl, impl.sizes(), impl.strides(), impl.storage_offset())));
}

}  // namespace

void SavedVariable::pack_with(SavedTensorHooks& hooks, const TensorBase& t) {
  if (!is_output_ && requires_grad_) {
    const Edge e = gradient_edge(t);
    grad_node_ = e.function;
    grad_input_nr_ = e.input_nr;
  }
  // As torch: the hook runs without grad and must not modify its input, which is the saved tensor
  // itself; a saved output goes without its history, so that a hook keeping it (`lambda t: t`)
  // makes no reference cycle through the node that saves it.
  AutoGradMode no_grad(false);
  packed_ = hooks.pack(is_output_ ? plain_alias(t) : t);
  KILN_CHECK(t._version() == saved_version_,
             "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook can "
             "not be modified by in-place operations as this can lead to unexpected side-effects. Please open an "
             "issue if you need to perform in-place operations on the input to a pack hook.");
}

void SavedVariable::reset_data() {
  if (data_.defined() || packed_ || released_) released_ = true;
  data_.reset();
  packed_.reset();
  grad_node_.reset();
}

TensorBase SavedVariable::unpack(const std::shared_ptr<Node>& saved_for) const {
  KILN_CHECK(!released_,
             "Trying to backward through the graph a second time (or directly access saved tensors after they have "
             "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
             "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
             "if you need to access saved tensors after calling backward.");
  if (packed_) return unpack_packed(saved_for);
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
  return with_grad_fn(data_, saved_for, output_nr_);
}

TensorBase SavedVariable::with_grad_fn(const TensorBase& data, const std::shared_ptr<Node>& fn, uint32_t nr) {
  TensorBase out = plain_alias(data);
  AutogradMeta& meta = out.impl()->ensure_autograd_meta();
  meta.grad_fn = fn;
  meta.output_nr = nr;
  return out;
}

// torch's unpack with hooks: the hook's tensor, given back its place in the graph when it requires grad.
TensorBase SavedVariable::unpack_packed(const std::shared_ptr<Node>& saved_for) const {
  TensorBase data = packed_->unpack();
  if (!requires_grad_ || !data.defined()) return data;
  if (is_output_) return saved_for ? with_grad_fn(data, saved_for, output_nr_) : data;
  return grad_node_ ? with_grad_fn(data, grad_node_, grad_input_nr_) : data;
}

}  // namespace kiln
