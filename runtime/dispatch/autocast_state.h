// kiln.autocast's thread-local state (as torch's): whether CPU autocast is on, which is whether
// this thread's calls include the Autocast dispatch key, and the dtype its lower-precision ops
// run in. The casts themselves are in runtime/api/autocast_casts.h (they call ops).
#pragma once

#include "runtime/core/dtype.h"
#include "runtime/dispatch/dispatch_key_set.h"

namespace kiln {
namespace autocast {

bool is_cpu_enabled();
void set_cpu_enabled(bool enabled);
ScalarType cpu_dtype();  // bfloat16 unless set
void set_cpu_dtype(ScalarType dtype);

// Whether a call made now goes through its Autocast kernel: enabled, and not inside one.
inline bool active() {
  const LocalDispatchKeySet& local = local_dispatch_key_set();
  return local.included.has(DispatchKey::Autocast) && !local.excluded.has(DispatchKey::Autocast);
}

}  // namespace autocast
}  // namespace kiln
