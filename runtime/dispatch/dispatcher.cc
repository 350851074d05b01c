#include "runtime/dispatch/dispatcher.h"

#include <cstdio>

#include "runtime/core/device_backend.h"

namespace kiln {

void missing_kernel(const char* name, DispatchKey key) {
  // A CUDA call in a build without a CUDA backend is torch's "not compiled with CUDA enabled".
  if (key == DispatchKey::CUDA && !has_device_backend(DeviceType::CUDA))
    throw DeviceUnavailableError(std::string(name) + "(): kiln not compiled with CUDA enabled");
  throw NotImplementedError(std::string("Could not run '") + name + "' with arguments from the '" +
                            dispatch_key_name(key) + "' backend: no kernel is registered for it.");
}

namespace {
thread_local bool tls_explain = false;
}

bool explain_enabled() { return tls_explain; }
void set_explain_enabled(bool on) { tls_explain = on; }
void explain_log(const char* step, const char* what, const char* detail) {
  std::fprintf(stderr, "[kiln explain] %-9s %s%s%s\n", step, what, detail[0] ? "  " : "", detail);
}

}  // namespace kiln
