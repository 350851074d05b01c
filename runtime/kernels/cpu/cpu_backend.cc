// The CPU in the device registry (runtime/core/device_backend.h): host memory from the caching
// allocator, bytes moved with memcpy, elements cast and filled by the CPU kernels. Registered
// when the library loads.
#include <cstring>

#include "generated/kernels/fill.h"
#include "runtime/core/device_backend.h"
#include "runtime/kernels/cpu/element_convert.h"
#include "runtime/kernels/cpu/parallel_loop.h"

namespace kiln {
namespace cpu {
namespace {

class CpuBackend final : public DeviceBackend {
 public:
  Allocator* allocator() override { return cpu_allocator(); }

  void copy_bytes(void* dst, const void* src, size_t nbytes, CopyDirection) override {
    if (nbytes) std::memcpy(dst, src, nbytes);
  }

  void zero_bytes(void* dst, size_t nbytes) override {
    if (nbytes) std::memset(dst, 0, nbytes);
  }

  void copy_elements(const TensorBase& dst, const TensorBase& src, const char* op_name) override {
    TensorIterator it(IteratorConfig::copy(op_name, dst, src));
    const ScalarType from = src.dtype(), to = dst.dtype();
    for_each(it, [from, to](char** data, const int64_t* strides, int64_t n) {
      convert_elements(from, data[1], strides[1], to, data[0], strides[0], n);
    });
  }

  void fill(const TensorBase& dst, const Scalar& value) override { fill_(dst, value); }
};

CpuBackend g_cpu_backend;

struct Registrar {
  Registrar() { register_device_backend(DeviceType::CPU, &g_cpu_backend); }
} g_registrar;

}  // namespace
}  // namespace cpu
}  // namespace kiln
