#include "runtime/api/autocast_casts.h"

#include "runtime/dispatch/autocast_state.h"

namespace kiln {
namespace autocast {
namespace {
bool eligible(const Tensor& t) { return t.defined() && t.is_floating_point() && t.dtype() != ScalarType::Float64; }

template <typename F>
std::vector<Tensor> each(const std::vector<Tensor>& ts, F f) {
  std::vector<Tensor> out;
  out.reserve(ts.size());
  for (const Tensor& t : ts) out.push_back(f(t));
  return out;
}
}  // namespace

Tensor to_type(const Tensor& t, ScalarType dtype) { return eligible(t) && t.dtype() != dtype ? t.to(dtype) : t; }
std::vector<Tensor> to_type(const std::vector<Tensor>& ts, ScalarType dtype) {
  return each(ts, [dtype](const Tensor& t) { return to_type(t, dtype); });
}

Tensor to_lower_precision(const Tensor& t) { return to_type(t, cpu_dtype()); }
std::vector<Tensor> to_lower_precision(const std::vector<Tensor>& ts) { return to_type(ts, cpu_dtype()); }
Tensor to_fp32(const Tensor& t) { return to_type(t, ScalarType::Float32); }
std::vector<Tensor> to_fp32(const std::vector<Tensor>& ts) { return to_type(ts, ScalarType::Float32); }

ScalarType promote_type(const std::vector<const Tensor*>& tensors) {
  ScalarType widest = cpu_dtype();
  for (const Tensor* t : tensors)
    if (eligible(*t)) widest = promote_types(widest, t->dtype());
  return widest;
}

ScalarType promote_type(const std::vector<Tensor>& tensors) {
  std::vector<const Tensor*> refs;
  for (const Tensor& t : tensors) refs.push_back(&t);
  return promote_type(refs);
}

}  // namespace autocast
}  // namespace kiln
