#include "runtime/core/storage.h"

#include "runtime/core/device_backend.h"
#include "runtime/core/error.h"

namespace kiln {

StorageImpl::StorageImpl(size_t nbytes, Allocator* allocator, Device device)
    : nbytes_(nbytes), allocator_(allocator), device_(device) {
  data_ = allocator_->allocate(nbytes, &capacity_);
}

StorageImpl::StorageImpl(void* data, size_t nbytes, Device device, ReleaseFn release, void* context)
    : data_(data), nbytes_(nbytes), device_(device), release_(release), release_context_(context) {}

StorageImpl::~StorageImpl() {
  if (allocator_) {
    allocator_->deallocate(data_, capacity_);
  } else if (release_) {
    release_(release_context_);
  }
}

void StorageImpl::grow(size_t nbytes) {
  if (nbytes <= nbytes_) return;
  // The new bytes are zeroed: an out= tensor resized by an op that then fails must not
  // hold bytes that are not a valid value (a bool other than 0 or 1).
  DeviceBackend& backend = device_backend(device_.type, "resize_");
  if (nbytes <= capacity_ && allocator_) {
    backend.zero_bytes(static_cast<char*>(data_) + nbytes_, nbytes - nbytes_);
    nbytes_ = nbytes;
    return;
  }
  KILN_CHECK(allocator_ != nullptr, "Trying to resize storage that is not resizable (memory borrowed from elsewhere)");
  size_t new_capacity = 0;
  void* fresh = allocator_->allocate(nbytes, &new_capacity);
  if (nbytes_ > 0) backend.copy_bytes(fresh, data_, nbytes_, CopyDirection::WithinDevice);
  backend.zero_bytes(static_cast<char*>(fresh) + nbytes_, nbytes - nbytes_);
  allocator_->deallocate(data_, capacity_);
  data_ = fresh;
  capacity_ = new_capacity;
  nbytes_ = nbytes;
}

}  // namespace kiln
