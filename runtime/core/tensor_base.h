// TensorBase: the hand-written half of the tensor handle — metadata, data access
// and autograd state. The generated `kiln::Tensor` (generated/api/tensor.h) derives
// from it and adds one method per operator; runtime code uses TensorBase so that
// adding an operator does not recompile it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/core/error.h"
#include "runtime/core/scalar.h"
#include "runtime/core/tensor_impl.h"

namespace kiln {

class Node;

// Wraps a possibly negative dim into [0, ndim); IndexError naming the op otherwise.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op_name);
// The same for a dim that must exist (it indexes sizes()): a 0-dim tensor has none, so every
// dim is out of range there, as torch's size(0) / stride(0) / roll(s, 0) on a 0-dim tensor.
int64_t wrap_existing_dim(int64_t dim, int64_t ndim, const char* op_name);

class TensorBase {
 public:
  TensorBase() = default;
  explicit TensorBase(Ref<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_.get() != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const Ref<TensorImpl>& impl_ref() const { return impl_; }
  bool is_same(const TensorBase& o) const { return impl_ == o.impl_; }
  // Whether both view one storage (torch's is_alias_of): writing one may change the other.
  bool is_alias_of(const TensorBase& o) const { return impl_->storage().get() == o.impl_->storage().get(); }
  int64_t use_count() const { return impl_ ? impl_->use_count() : 0; }
  void reset() { impl_.reset(); }

  // --- metadata ---
  IntArrayRef sizes() const { return impl_->sizes(); }
  IntArrayRef strides() const { return impl_->strides(); }
  int64_t size(int64_t d) const { return impl_->sizes()[wrap_existing_dim(d, dim(), "size")]; }
  int64_t stride(int64_t d) const { return impl_->strides()[wrap_existing_dim(d, dim(), "stride")]; }
  int64_t dim() const { return impl_->dim(); }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { return impl_->numel(); }
  ScalarType scalar_type() const { return impl_->dtype(); }
  ScalarType dtype() const { return impl_->dtype(); }
  int64_t element_size() const { return kiln::element_size(impl_->dtype()); }
  Device device() const { return impl_->device(); }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_cuda() const { return device().is_cuda(); }
  int64_t storage_offset() const { return impl_->storage_offset(); }
  bool is_contiguous() const { return impl_->is_contiguous(); }
  bool is_floating_point() const { return is_floating_type(dtype()); }

  // --- data ---
  void* data_ptr() const { return impl_->data(); }
  template <typename T>
  T* data_ptr() const {
    KILN_CHECK_TYPE(CppTypeToScalarType<T>::value == dtype(), "data_ptr(): expected dtype ",
                    scalar_type_name(CppTypeToScalarType<T>::value), " but the tensor is ",
                    scalar_type_name(dtype()));
    return static_cast<T*>(impl_->data());
  }
  // The single element of a one-element tensor, as a Python-like number.
  Scalar item() const;
  template <typename T>
  T item() const {
    return item().to<T>();
  }

  // --- autograd ---
  bool requires_grad() const { return impl_->requires_grad(); }
  // Leaves only; floating dtypes only (RuntimeError as in PyTorch otherwise).
  TensorBase& set_requires_grad(bool requires_grad);
  TensorBase grad() const;
  void set_grad(const TensorBase& grad) const;
  const std::shared_ptr<Node>& grad_fn() const;
  bool is_leaf() const;
  uint32_t output_nr() const;
  bool retains_grad() const;
  uint32_t _version() const { return impl_->version(); }
  void bump_version() const { impl_->bump_version(); }

  // Human-readable metadata for messages: "float32[2, 3]".
  std::string type_str() const;

 protected:
  Ref<TensorImpl> impl_;
};

}  // namespace kiln
