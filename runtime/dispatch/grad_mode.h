// Thread-local autograd switches: grad mode (no_grad / enable_grad), and "below autograd" (the
// Autograd key excluded from this thread's calls while an autograd wrapper redispatches).
#pragma once

#include "runtime/dispatch/dispatch_key_set.h"

namespace kiln {

struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// RAII: sets grad mode for a scope (kiln.set_grad_enabled / no_grad / enable_grad).
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : prev_(GradMode::is_enabled()) { GradMode::set_enabled(enabled); }
  ~AutoGradMode() { GradMode::set_enabled(prev_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_;
};

class NoGradGuard : public AutoGradMode {
 public:
  NoGradGuard() : AutoGradMode(false) {}
};

// While set, the dispatcher skips the Autograd key (the wrapper already recorded the node): this
// thread's excluded dispatch keys hold Autograd.
struct BelowAutograd {
  static bool is_set() { return local_dispatch_key_set().excluded.has(DispatchKey::Autograd); }
};

class BelowAutogradGuard {
 public:
  BelowAutogradGuard() : exclude_(DispatchKey::Autograd) {}

 private:
  ExcludeDispatchKeyGuard exclude_;
};

}  // namespace kiln
