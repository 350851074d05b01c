#include "runtime/dispatch/grad_mode.h"

namespace kiln {
namespace {
thread_local bool tls_grad_enabled = true;
}  // namespace

bool GradMode::is_enabled() { return tls_grad_enabled; }
void GradMode::set_enabled(bool enabled) { tls_grad_enabled = enabled; }

}  // namespace kiln
