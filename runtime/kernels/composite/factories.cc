// Factory functions built on `empty` + `fill_` (CompositeImplicit).
#include "generated/api/arange.h"
#include "generated/api/empty.h"
#include "generated/api/empty_strided.h"
#include "generated/api/fill.h"
#include "generated/kernels/composite/arange.h"
#include "generated/kernels/composite/empty_like.h"
#include "generated/kernels/composite/full.h"
#include "generated/kernels/composite/full_like.h"
#include "generated/kernels/composite/ones.h"
#include "generated/kernels/composite/ones_like.h"
#include "generated/kernels/composite/zeros.h"
#include "generated/kernels/composite/zero.h"
#include "generated/kernels/composite/zeros_like.h"
#include "runtime/kernels/memory_format_strides.h"

namespace kiln {
namespace composite_implicit {
namespace {
// The dtype torch.full infers from its fill value.
ScalarType dtype_of(const Scalar& v) {
  if (v.is_boolean()) return ScalarType::Bool;
  if (v.is_integral(false)) return ScalarType::Int64;
  return default_dtype();
}
// `t` as a tensor that has never been modified (version 0, as torch's factories give):
// the same storage under a fresh TensorImpl, since filling it bumped the version.
Tensor fresh(const Tensor& t) {
  const TensorImpl& impl = *t.impl();
  return Tensor(TensorBase(Ref<TensorImpl>::make(impl.storage(), impl.dtype(), impl.sizes(), impl.strides(),
                                                 impl.storage_offset())));
}
}  // namespace

Tensor full(IntArrayRef size, const Scalar& fill_value, const std::optional<ScalarType>& dtype,
            const std::optional<Device>& device, bool /*requires_grad*/) {
  Tensor t = kiln::empty(size, dtype.value_or(dtype_of(fill_value)), device);
  kiln::fill_(t, fill_value);
  return fresh(t);
}

Tensor zeros(IntArrayRef size, const std::optional<ScalarType>& dtype, const std::optional<Device>& device,
             bool /*requires_grad*/) {
  return full(size, 0, dtype.value_or(default_dtype()), device, false);
}

Tensor ones(IntArrayRef size, const std::optional<ScalarType>& dtype, const std::optional<Device>& device,
            bool /*requires_grad*/) {
  return full(size, 1, dtype.value_or(default_dtype()), device, false);
}

// torch's preserve_format: the layout of a dense permuted input, else dense strides in the input's
// order of strides (shape_rules.h: preserve_format_strides).
Tensor empty_like(const Tensor& self, const std::optional<ScalarType>& dtype, const std::optional<Device>& device,
                  bool /*requires_grad*/) {
  const ScalarType dt = dtype.value_or(self.dtype());
  const Device dev = device.value_or(self.device());
  const DimVector strides = preserve_format_strides(self);
  if (IntArrayRef(strides) == IntArrayRef(contiguous_strides(self.sizes()))) return kiln::empty(self.sizes(), dt, dev);
  return kiln::empty_strided(self.sizes(), strides, dt, dev);
}

Tensor full_like(const Tensor& self, const Scalar& fill_value, const std::optional<ScalarType>& dtype,
                 const std::optional<Device>& device, bool /*requires_grad*/) {
  Tensor t = empty_like(self, dtype, device, false);
  kiln::fill_(t, fill_value);
  return fresh(t);
}

Tensor zeros_like(const Tensor& self, const std::optional<ScalarType>& dtype, const std::optional<Device>& device,
                  bool /*requires_grad*/) {
  return full_like(self, 0, dtype, device, false);
}

Tensor ones_like(const Tensor& self, const std::optional<ScalarType>& dtype, const std::optional<Device>& device,
                 bool /*requires_grad*/) {
  return full_like(self, 1, dtype, device, false);
}

Tensor arange_start_step(const Scalar& start, const Scalar& end, const Scalar& step,
                         const std::optional<ScalarType>& dtype, const std::optional<Device>& device,
                         bool /*requires_grad*/) {
  // Integer bounds give int64, any float gives the default dtype (as torch.arange).
  bool all_int = start.is_integral(true) && end.is_integral(true) && step.is_integral(true);
  Tensor out = kiln::empty({0}, dtype.value_or(all_int ? ScalarType::Int64 : default_dtype()), device);
  kiln::arange_out(out, start, end, step);
  return fresh(out);
}

Tensor arange(const Scalar& end, const std::optional<ScalarType>& dtype, const std::optional<Device>& device,
              bool requires_grad) {
  return arange_start_step(0, end, 1, dtype, device, requires_grad);
}

const Tensor& zero_(const Tensor& self) {
  return kiln::fill_(self, 0);
}

}  // namespace composite_implicit
}  // namespace kiln
