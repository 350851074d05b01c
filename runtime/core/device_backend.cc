#include "runtime/core/device_backend.h"

#include "runtime/core/error.h"

namespace kiln {
namespace {
constexpr int kDeviceTypes = 2;  // DeviceType::CPU, DeviceType::CUDA
DeviceBackend* g_backends[kDeviceTypes] = {};  // zero-initialised before any static constructor runs

int slot(DeviceType type) { return static_cast<int>(type); }
}  // namespace

void register_device_backend(DeviceType type, DeviceBackend* backend) { g_backends[slot(type)] = backend; }

bool has_device_backend(DeviceType type) { return g_backends[slot(type)] != nullptr; }

DeviceBackend& device_backend(DeviceType type, const char* op_name) {
  DeviceBackend* b = g_backends[slot(type)];
  // torch's CPU-only builds raise AssertionError("Torch not compiled with CUDA enabled").
  KILN_CHECK_TYPED(DeviceUnavailableError, b != nullptr, op_name, "(): kiln not compiled with ",
                   type == DeviceType::CUDA ? "CUDA" : Device(type).str().c_str(), " enabled");
  return *b;
}

}  // namespace kiln
