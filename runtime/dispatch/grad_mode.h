// Thread-local autograd switches: grad mode (no_grad / enable_grad) and the
// "below autograd" flag set while an autograd wrapper redispatches to a backend.
#pragma once

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

// While set, the dispatcher skips the Autograd key (the wrapper already recorded the node).
struct BelowAutograd {
  static bool is_set();
};

class BelowAutogradGuard {
 public:
  BelowAutogradGuard();
  ~BelowAutogradGuard();
  BelowAutogradGuard(const BelowAutogradGuard&) = delete;
  BelowAutogradGuard& operator=(const BelowAutogradGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace kiln
