#include "runtime/dispatch/grad_mode.h"

namespace kiln {
namespace {
thread_local bool tls_grad_enabled = true;
thread_local bool tls_below_autograd = false;
}  // namespace

bool GradMode::is_enabled() { return tls_grad_enabled; }
void GradMode::set_enabled(bool enabled) { tls_grad_enabled = enabled; }

bool BelowAutograd::is_set() { return tls_below_autograd; }
BelowAutogradGuard::BelowAutogradGuard() : prev_(tls_below_autograd) { tls_below_autograd = true; }
BelowAutogradGuard::~BelowAutogradGuard() { tls_below_autograd = prev_; }

}  // namespace kiln
