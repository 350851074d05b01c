// The device registry: what kiln asks of each kind of device — memory, and moving and casting
// elements — so code above the backends never assumes host memory.
//
// A backend registers itself when its library loads (runtime/kernels/cpu/cpu_backend.cc for the
// CPU, the one device today); a CUDA backend joins the same way without touching this file.
// The table is constant-initialised, so a registration made during static initialisation is
// never lost to initialisation order.
#pragma once

#include <cstddef>

#include "runtime/core/allocator.h"
#include "runtime/core/device.h"
#include "runtime/core/scalar.h"

namespace kiln {

class TensorBase;

// Which side of a byte copy is this device's memory.
enum class CopyDirection { WithinDevice, HostToDevice, DeviceToHost };

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual Allocator* allocator() = 0;
  // Moves `nbytes` between two buffers of this device, or between one of them and host memory.
  virtual void copy_bytes(void* dst, const void* src, size_t nbytes, CopyDirection direction) = 0;
  virtual void zero_bytes(void* dst, size_t nbytes) = 0;
  // dst = src cast to dst's dtype, element by element through both tensors' strides: the same
  // shape, both on this device (the kernel behind copy_, to(dtype) and contiguous).
  virtual void copy_elements(const TensorBase& dst, const TensorBase& src, const char* op_name) = 0;
  // Every element of `dst` (on this device) set to `value`, already checked to fit its dtype.
  virtual void fill(const TensorBase& dst, const Scalar& value) = 0;
};

// Called once per device type by the backend's library; a second registration replaces the first.
void register_device_backend(DeviceType type, DeviceBackend* backend);
// The backend of `type`; a DeviceUnavailableError (Python: AssertionError, as torch's CPU-only
// builds raise) naming the op when this build has none for it.
DeviceBackend& device_backend(DeviceType type, const char* op_name);
bool has_device_backend(DeviceType type);

}  // namespace kiln
