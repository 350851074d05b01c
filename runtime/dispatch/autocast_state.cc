#include "runtime/dispatch/autocast_state.h"

namespace kiln {
namespace autocast {
namespace {
thread_local ScalarType tls_cpu_dtype = ScalarType::BFloat16;
}  // namespace

bool is_cpu_enabled() { return local_dispatch_key_set().included.has(DispatchKey::Autocast); }

void set_cpu_enabled(bool enabled) {
  DispatchKeySet& included = local_dispatch_key_set().included;
  included = enabled ? included.add(DispatchKey::Autocast) : included.remove(DispatchKey::Autocast);
}

ScalarType cpu_dtype() { return tls_cpu_dtype; }
void set_cpu_dtype(ScalarType dtype) { tls_cpu_dtype = dtype; }

}  // namespace autocast
}  // namespace kiln
