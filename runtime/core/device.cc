#include "runtime/core/device.h"

#include <cstdlib>

#include "runtime/core/error.h"

namespace kiln {

Device::Device(const std::string& spec) {
  std::string kind = spec;
  auto colon = spec.find(':');
  if (colon != std::string::npos) {
    kind = spec.substr(0, colon);
    std::string idx = spec.substr(colon + 1);
    char* end = nullptr;
    long v = idx.empty() ? -1 : std::strtol(idx.c_str(), &end, 10);
    KILN_CHECK(!idx.empty() && *end == '\0' && v >= 0 && v < 127,
                     "Invalid device string: '", spec, "'");
    index = static_cast<int8_t>(v);
  }
  if (kind == "cpu") {
    type = DeviceType::CPU;
  } else if (kind == "cuda") {
    type = DeviceType::CUDA;
  } else {
    throw ValueError("Expected one of cpu, cuda device type at start of device string: " + spec);
  }
}

std::string Device::str() const {
  std::string s = is_cpu() ? "cpu" : "cuda";
  if (index >= 0) s += ":" + std::to_string(index);
  return s;
}

}  // namespace kiln
