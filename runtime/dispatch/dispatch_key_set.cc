#include "runtime/dispatch/dispatch_key_set.h"

namespace kiln {

const char* dispatch_key_name(DispatchKey k) {
  switch (k) {
    case DispatchKey::CPU: return "CPU";
    case DispatchKey::CUDA: return "CUDA";
    case DispatchKey::Autograd: return "Autograd";
    case DispatchKey::Autocast: return "Autocast";
    default: return "?";
  }
}

std::string DispatchKeySet::str() const {
  std::string out;
  for (int k = kNumDispatchKeys - 1; k >= 0; --k) {
    if (!has(static_cast<DispatchKey>(k))) continue;
    if (!out.empty()) out += ", ";
    out += dispatch_key_name(static_cast<DispatchKey>(k));
  }
  return out;
}

LocalDispatchKeySet& local_dispatch_key_set() {
  thread_local LocalDispatchKeySet sets;
  return sets;
}

}  // namespace kiln
