// oneDNN's elementwise primitives where torch 1.13 calls them (library_kernels.h): gelu's erf form,
// forward and backward, on contiguous float32 tensors. Each call builds its primitive descriptor
// as ideep does; oneDNN's own primitive cache keeps the JIT-compiled kernel between calls. The
// data is passed as one flat dimension: the elementwise kernels split work by element count
// alone, so the shape changes no bit (tests/python/test_onednn_gelu.py).
#include <oneapi/dnnl/dnnl.hpp>

#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/library_kernels.h"
#include "runtime/kernels/cpu/onednn_common.h"

namespace kiln {
namespace cpu {
namespace {

using dnnl::memory;

memory::desc flat(int64_t n) { return memory::desc({n}, memory::data_type::f32, memory::format_tag::x); }

memory flat_memory(const TensorBase& t) { return memory(flat(t.numel()), onednn_cpu_engine(), t.data_ptr()); }

// torch's use_mkldnn(self) in Activation.cpp (the flag, a dense float32 CPU tensor of more than one
// element), for the erf form of gelu.
bool gelu_uses_onednn(const TensorBase& self, const std::string& approximate) {
  return onednn_enabled() && approximate == "none" && self.is_cpu() && self.dtype() == ScalarType::Float32 &&
         self.numel() > 1 && self.is_contiguous();
}

// An out= tensor the result can go to: self itself (in place), or a float32 tensor sharing no memory
// with self (resized first when its shape differs, as torch's structured kernels do). Anything else
// takes the formula's loop, which converts and checks overlap as for every formula op.
bool writable(const TensorBase& out, const TensorBase& self) {
  if (!out.defined() || out.is_same(self)) return true;
  return out.is_cpu() && out.dtype() == ScalarType::Float32 && !out.is_alias_of(self);
}

}  // namespace

TensorBase onednn_gelu(const TensorBase& self, const std::string& approximate, const TensorBase& out) {
  if (!gelu_uses_onednn(self, approximate) || !writable(out, self)) return TensorBase();
  const TensorBase result = resized_out(out, self.sizes(), ScalarType::Float32, "gelu");
  // A strided out= gets the values through a contiguous buffer (torch's oneDNN call leaves it
  // unwritten).
  const TensorBase dense = result.is_contiguous() ? result : empty_like_cpu(self, ScalarType::Float32);
  const dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_training, dnnl::algorithm::eltwise_gelu_erf,
                                         flat(self.numel()), 0.f, 0.f);
  const dnnl::eltwise_forward::primitive_desc pd(desc, onednn_cpu_engine());
  dnnl::stream stream(onednn_cpu_engine());
  dnnl::eltwise_forward(pd).execute(stream, {{DNNL_ARG_SRC, flat_memory(self)}, {DNNL_ARG_DST, flat_memory(dense)}});
  stream.wait();
  if (!dense.is_same(result)) copy_into(result, dense, "gelu");
  return result;
}

TensorBase onednn_gelu_backward(const TensorBase& grad, const TensorBase& self, const std::string& approximate) {
  if (!gelu_uses_onednn(self, approximate) || !grad.is_cpu() || grad.dtype() != ScalarType::Float32 ||
      grad.sizes() != self.sizes())
    return TensorBase();
  const TensorBase grad_c = contiguous_cpu(grad);  // ideep reorders a strided gradient the same way
  TensorBase result = empty_like_cpu(self, ScalarType::Float32);
  const memory::desc data = flat(self.numel());
  const dnnl::eltwise_forward::primitive_desc hint(
      dnnl::eltwise_forward::desc(dnnl::prop_kind::forward, dnnl::algorithm::eltwise_gelu_erf, data, 0.f, 0.f),
      onednn_cpu_engine());
  const dnnl::eltwise_backward::primitive_desc pd(
      dnnl::eltwise_backward::desc(dnnl::algorithm::eltwise_gelu_erf, data, data, 0.f, 0.f), onednn_cpu_engine(), hint);
  dnnl::stream stream(onednn_cpu_engine());
  dnnl::eltwise_backward(pd).execute(stream, {{DNNL_ARG_SRC, flat_memory(self)},
                                              {DNNL_ARG_DIFF_DST, flat_memory(grad_c)},
                                              {DNNL_ARG_DIFF_SRC, flat_memory(result)}});
  stream.wait();
  return result;
}

}  // namespace cpu
}  // namespace kiln
