#include "runtime/autograd/saved_tensor_hooks.h"

#include <utility>
#include <vector>

#include "runtime/core/error.h"

namespace kiln {
namespace {
thread_local std::vector<std::shared_ptr<SavedTensorHooks>> tls_hooks;
}  // namespace

void push_saved_tensor_hooks(std::shared_ptr<SavedTensorHooks> hooks) { tls_hooks.push_back(std::move(hooks)); }

void pop_saved_tensor_hooks() {
  KILN_CHECK(!tls_hooks.empty(), "pop_saved_tensor_hooks: no saved tensor hooks are installed on this thread");
  tls_hooks.pop_back();
}

std::shared_ptr<SavedTensorHooks> current_saved_tensor_hooks() {
  return tls_hooks.empty() ? nullptr : tls_hooks.back();
}

}  // namespace kiln
