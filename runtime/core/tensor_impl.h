// TensorImpl: the metadata and storage behind a tensor handle.
//
// A tensor is a strided view into a Storage: element i of a 2-D tensor lives at
//   storage + storage_offset + i0 * strides[0] + i1 * strides[1]   (in elements).
// Views (transpose, select, expand, ...) are new TensorImpls on the same Storage,
// sharing one VersionCounter so that in-place writes through any of them are seen
// by autograd's saved-tensor checks.
#pragma once

#include <cstdint>
#include <memory>

#include "runtime/core/array_ref.h"
#include "runtime/core/device.h"
#include "runtime/core/dtype.h"
#include "runtime/core/intrusive_ptr.h"
#include "runtime/core/storage.h"

namespace kiln {

struct AutogradMeta;  // runtime/core/autograd_meta.h

// Bumped by every in-place write; shared by a tensor and its views.
struct VersionCounter : RefCounted {
  std::atomic<uint32_t> version{0};
};

// Product of sizes; throws ValueError on negative sizes or int64 overflow.
int64_t checked_numel(IntArrayRef sizes, const char* op_name);
// Row-major (C-contiguous) strides for `sizes`.
DimVector contiguous_strides(IntArrayRef sizes);

class TensorImpl : public RefCounted {
 public:
  // Number of TensorImpls alive in the process (for leak tests).
  static int64_t live_count();

  TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);
  // A view of `base` (same storage and version counter), in base's dtype unless `dtype` is given
  // (Tensor.view(dtype) reads the same bytes as another type).
  TensorImpl(const TensorImpl& base, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset,
             ScalarType dtype = ScalarType::Undefined);
  ~TensorImpl() override;

  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel() const { return numel_; }
  int64_t storage_offset() const { return storage_offset_; }
  ScalarType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  bool is_contiguous() const { return is_contiguous_; }
  const Storage& storage() const { return storage_; }

  // Address of element 0 (storage data + offset). An empty tensor has no element 0: its address
  // is the storage's, since a view of one may carry any offset (select_backward into [N, 0] with
  // a huge N: offset * element size overflowed, found by the fuzzer).
  void* data() const {
    if (numel_ == 0) return storage_->data();
    return static_cast<char*>(storage_->data()) + storage_offset_ * element_size(dtype_);
  }

  // Changes shape in place, growing the storage if needed (used for `out=` tensors).
  void set_sizes_contiguous(IntArrayRef sizes);
  void set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);

  // `x.data = y`: this tensor now shows y's storage, shape and dtype.
  void set_data_from(const TensorImpl& other);

  // A Python number wrapped into a 0-dim tensor participates in type promotion
  // with a lower priority than real tensors (PyTorch's "wrapped number").
  bool is_wrapped_number() const { return is_wrapped_number_; }
  void set_wrapped_number(bool v) { is_wrapped_number_ = v; }

  uint32_t version() const { return version_counter_->version.load(std::memory_order_relaxed); }
  void bump_version() { version_counter_->version.fetch_add(1, std::memory_order_relaxed); }
  const Ref<VersionCounter>& version_counter() const { return version_counter_; }
  void set_version_counter(Ref<VersionCounter> vc) { version_counter_ = std::move(vc); }

  // Autograd metadata is created lazily: plain tensors carry none.
  AutogradMeta* autograd_meta() const { return autograd_meta_.get(); }
  AutogradMeta& ensure_autograd_meta();
  bool requires_grad() const { return autograd_meta_ != nullptr && requires_grad_slow(); }

  // The Python object wrapping this tensor (borrowed), so `x.grad is x.grad` holds.
  void* pyobj() const { return pyobj_; }
  void set_pyobj(void* o) { pyobj_ = o; }

 private:
  bool requires_grad_slow() const;
  void refresh_contiguous();

  Storage storage_;
  DimVector sizes_;
  DimVector strides_;
  int64_t storage_offset_ = 0;
  int64_t numel_ = 1;
  ScalarType dtype_;
  bool is_contiguous_ = true;
  bool is_wrapped_number_ = false;
  Ref<VersionCounter> version_counter_;
  std::unique_ptr<AutogradMeta> autograd_meta_;
  void* pyobj_ = nullptr;
};

}  // namespace kiln
