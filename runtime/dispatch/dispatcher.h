// The dispatcher: one table of kernels per operator overload, indexed by dispatch key.
//
// A call computes its key from its tensor arguments and the thread-local state:
// Autograd when grad mode is on, the call is not already below autograd, and some
// input requires grad; otherwise the backend of the inputs' device. Tables are
// filled by generated code (generated/ops/*.cc) as constant-initialized arrays of
// function pointers: no registration at static-init time, nothing to call first.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "runtime/dispatch/dispatch_key_set.h"
#include "runtime/dispatch/grad_mode.h"
#include "runtime/core/small_vector.h"
#include "runtime/core/tensor_base.h"

namespace kiln {

[[noreturn]] void missing_kernel(const char* op_name, DispatchKey key);

// One operator overload: its name and a typed kernel per dispatch key
// (`Fn` is the C++ API signature, e.g. Tensor(const Tensor&, const Tensor&, const Scalar&)).
template <typename Fn>
struct Operator {
  const char* name;  // "add.Tensor"
  Fn* kernels[kNumDispatchKeys];

  // The kernel of the highest key in `keys` that has one: a key without a kernel (Autograd for
  // an op that is not differentiable) falls through to the next.
  Fn* lookup(DispatchKeySet keys) const {
    for (int k = kNumDispatchKeys - 1; k >= 0; --k)
      if (keys.has(static_cast<DispatchKey>(k)) && kernels[k] != nullptr) return kernels[k];
    missing_kernel(name, keys.empty() ? DispatchKey::CPU : keys.highest());
  }
};

// The tensors of a call with Tensor[] arguments, as one range of pointers:
// TensorRefs(self, tensors) covers `self` and every element of `tensors`.
class TensorRefs {
 public:
  template <typename... Args>
  explicit TensorRefs(const Args&... args) {
    (add(args), ...);
  }
  const TensorBase* const* begin() const { return refs_.begin(); }
  const TensorBase* const* end() const { return refs_.end(); }

 private:
  void add(const TensorBase& t) { refs_.push_back(&t); }
  template <typename T>
  void add(const std::vector<T>& ts) {
    for (const TensorBase& t : ts) refs_.push_back(&t);
  }
  SmallVector<const TensorBase*, 8> refs_;
};

// Backend of the given tensors (CUDA if any is on CUDA, else CPU).
template <typename Range>
DispatchKey backend_key_of(const Range& tensors) {
  for (const TensorBase* t : tensors)
    if (t->defined() && t->is_cuda()) return DispatchKey::CUDA;
  return DispatchKey::CPU;
}
inline DispatchKey backend_key(std::initializer_list<const TensorBase*> tensors) { return backend_key_of(tensors); }
inline DispatchKey backend_key(const TensorRefs& tensors) { return backend_key_of(tensors); }
inline DispatchKey backend_key(Device d) { return d.is_cuda() ? DispatchKey::CUDA : DispatchKey::CPU; }

// Whether a call must go through Autograd: grad mode on and an input requires grad (whether
// this thread is below autograd is its excluded key set's business, see dispatch_keys()).
template <typename Range>
bool records_autograd_of(const Range& tensors) {
  if (!GradMode::is_enabled()) return false;
  for (const TensorBase* t : tensors)
    if (t->defined() && t->requires_grad()) return true;
  return false;
}
inline bool records_autograd(std::initializer_list<const TensorBase*> tensors) { return records_autograd_of(tensors); }
inline bool records_autograd(const TensorRefs& tensors) { return records_autograd_of(tensors); }

// --- explain: prints every step of a call when switched on (kiln.explain()) ---
bool explain_enabled();
void set_explain_enabled(bool on);
void explain_log(const char* step, const char* what, const char* detail);

}  // namespace kiln
