#include "runtime/dispatch/dispatcher.h"

#include <cstdio>

namespace kiln {

void missing_kernel(const char* name, DispatchKey key) {
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
