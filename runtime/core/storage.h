// The bytes behind one or more tensors (a tensor and all its views share one Storage).
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/allocator.h"
#include "runtime/core/device.h"
#include "runtime/core/intrusive_ptr.h"

namespace kiln {

class StorageImpl : public RefCounted {
 public:
  // Owned memory from `allocator`.
  StorageImpl(size_t nbytes, Allocator* allocator, Device device);
  // Borrowed memory (e.g. a NumPy array); release(context) runs when the storage dies.
  using ReleaseFn = void (*)(void* context);
  StorageImpl(void* data, size_t nbytes, Device device, ReleaseFn release, void* context);
  ~StorageImpl() override;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  // Grows owned storage to at least `nbytes`, keeping its contents.
  void grow(size_t nbytes);

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  size_t capacity_ = 0;
  Allocator* allocator_ = nullptr;
  Device device_;
  ReleaseFn release_ = nullptr;
  void* release_context_ = nullptr;
};

using Storage = Ref<StorageImpl>;

}  // namespace kiln
