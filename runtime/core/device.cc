#include "runtime/core/device.h"

#include <cctype>

#include "runtime/core/error.h"

namespace kiln {
namespace {

// torch 1.13's device type names (c10::DeviceType); kiln has backends for cpu and cuda's slot only.
const char* const kTorchDeviceTypes[] = {"cpu",  "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl",
                                         "ideep", "hip", "ve",  "fpga", "ort", "xla", "lazy",
                                         "vulkan", "mps", "meta", "hpu", "privateuseone"};

bool is_torch_device_type(const std::string& kind) {
  for (const char* name : kTorchDeviceTypes)
    if (kind == name) return true;
  return false;
}

}  // namespace

// torch's grammar, TYPE[:INDEX]: TYPE letters and underscores, INDEX "0" or digits without a
// leading zero. A malformed string, an unknown type and an unparsable index are RuntimeErrors, as
// torch; a device type torch knows but kiln has no backend for is NotImplementedError (torch's
// "Could not run ... with arguments from the 'XLA' backend" when a factory makes a tensor there).
Device::Device(const std::string& spec) {
  KILN_CHECK(!spec.empty(), "Device string must not be empty");
  const size_t colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  bool well_formed = !kind.empty();
  for (char c : kind) well_formed = well_formed && (std::isalpha(static_cast<unsigned char>(c)) || c == '_');
  std::string idx;
  if (colon != std::string::npos) {
    idx = spec.substr(colon + 1);
    well_formed = well_formed && !idx.empty() && (idx == "0" || idx[0] != '0');
    for (char c : idx) well_formed = well_formed && std::isdigit(static_cast<unsigned char>(c));
  }
  KILN_CHECK(well_formed, "Invalid device string: '", spec, "'");
  KILN_CHECK(is_torch_device_type(kind),
             "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, ort, xla, lazy, "
             "vulkan, mps, meta, hpu, privateuseone device type at start of device string: ",
             spec);
  if (!idx.empty()) {
    KILN_CHECK(idx.size() <= 9, "Could not parse device index '", idx, "' in device string '", spec, "'");
    // torch 1.13 wraps an index past 127 into int8 (cpu:300 is cpu:44); kiln refuses it instead.
    const int value = std::stoi(idx);
    KILN_CHECK(value <= 127, "Device index ", value, " in device string '", spec,
               "' is out of range (device indices go up to 127)");
    index = static_cast<int8_t>(value);
  }
  if (kind == "cpu") {
    type = DeviceType::CPU;
  } else if (kind == "cuda") {
    type = DeviceType::CUDA;
  } else {
    throw NotImplementedError("kiln has no " + kind + " backend: it cannot make tensors on device '" + spec +
                              "' (kiln computes on the cpu)");
  }
}

std::string Device::str() const {
  std::string s = is_cpu() ? "cpu" : "cuda";
  if (index >= 0) s += ":" + std::to_string(index);
  return s;
}

}  // namespace kiln
