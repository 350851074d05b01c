// oneDNN convolutions (see onednn_conv.h). As ideep does for torch: each primitive is created for
// layouts of oneDNN's choosing (format "any": blocked ones such as nChw8c on AVX2), the plain
// tensors are reordered into them and the result back. The primitive descriptors and primitives
// are cached per shape (creating one costs more than a small convolution), and scratch buffers come
// from kiln's caching allocator.
#include "runtime/kernels/cpu/onednn_conv.h"

#include <omp.h>

#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <oneapi/dnnl/dnnl.hpp>
#include <vector>

#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/onednn_common.h"

namespace kiln {
namespace cpu {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

memory::desc plain(const memory::dims& dims, Tag tag) { return memory::desc(dims, memory::data_type::f32, tag); }
memory::desc any(const memory::dims& dims) { return plain(dims, Tag::any); }

memory::dims src_dims(const ConvGeometry& g) { return {g.batch, g.channels, g.height, g.width}; }
memory::dims dst_dims(const ConvGeometry& g) { return {g.batch, g.out_channels, g.out_h, g.out_w}; }
// Grouped weights are 5-D for oneDNN: (groups, O/groups, C/groups, KH, KW), the same memory.
memory::dims weight_dims(const ConvGeometry& g) {
  if (g.groups > 1) return {g.groups, g.group_out(), g.group_in(), g.kernel_h, g.kernel_w};
  return {g.out_channels, g.group_in(), g.kernel_h, g.kernel_w};
}
Tag weight_tag(const ConvGeometry& g) { return g.groups > 1 ? Tag::goihw : Tag::oihw; }
memory::dims strides(const ConvGeometry& g) { return {g.stride_h, g.stride_w}; }
memory::dims dilates(const ConvGeometry& g) { return {g.dil_h - 1, g.dil_w - 1}; }  // oneDNN counts from 0
memory::dims padding(const ConvGeometry& g) { return {g.pad_h, g.pad_w}; }        // both sides, as torch

// The forward descriptor: the primitive itself, and the hint both backward primitives need.
dnnl::convolution_forward::primitive_desc forward_pd(const ConvGeometry& g, bool bias) {
  const memory::desc bias_desc = bias ? plain({g.out_channels}, Tag::x) : memory::desc();
  const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                             any(src_dims(g)), any(weight_dims(g)), bias_desc, any(dst_dims(g)),
                                             strides(g), dilates(g), padding(g), padding(g));
  return dnnl::convolution_forward::primitive_desc(desc, onednn_cpu_engine());
}

struct ForwardPlan {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward primitive;
};
struct BackwardDataPlan {
  dnnl::convolution_backward_data::primitive_desc pd;
  dnnl::convolution_backward_data primitive;
};
struct BackwardWeightsPlan {
  dnnl::convolution_backward_weights::primitive_desc pd;
  dnnl::convolution_backward_weights primitive;
};

std::shared_ptr<ForwardPlan> make_forward(const ConvGeometry& g, bool bias) {
  auto pd = forward_pd(g, bias);
  return std::make_shared<ForwardPlan>(ForwardPlan{pd, dnnl::convolution_forward(pd)});
}

std::shared_ptr<BackwardDataPlan> make_backward_data(const ConvGeometry& g, bool) {
  const dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, any(src_dims(g)),
                                                   any(weight_dims(g)), any(dst_dims(g)), strides(g), dilates(g),
                                                   padding(g), padding(g));
  dnnl::convolution_backward_data::primitive_desc pd(desc, onednn_cpu_engine(), forward_pd(g, false));
  return std::make_shared<BackwardDataPlan>(BackwardDataPlan{pd, dnnl::convolution_backward_data(pd)});
}

std::shared_ptr<BackwardWeightsPlan> make_backward_weights(const ConvGeometry& g, bool bias) {
  const memory::desc bias_desc = bias ? plain({g.out_channels}, Tag::x) : memory::desc();
  const dnnl::convolution_backward_weights::desc desc(dnnl::algorithm::convolution_direct, any(src_dims(g)),
                                                      any(weight_dims(g)), bias_desc, any(dst_dims(g)), strides(g),
                                                      dilates(g), padding(g), padding(g));
  dnnl::convolution_backward_weights::primitive_desc pd(desc, onednn_cpu_engine(), forward_pd(g, bias));
  return std::make_shared<BackwardWeightsPlan>(BackwardWeightsPlan{pd, dnnl::convolution_backward_weights(pd)});
}

// The plan for a shape, built once (or nullptr where oneDNN has no primitive for it). The thread
// count is part of the key: oneDNN may split work by it when the primitive is created. Shared
// pointers, so that a plan in use survives the cache being emptied by another thread.
template <class Plan, class Make>
std::shared_ptr<const Plan> cached_plan(const ConvGeometry& g, bool bias, Make make) {
  static std::mutex mutex;
  static std::map<std::vector<int64_t>, std::shared_ptr<const Plan>> plans;
  const std::vector<int64_t> key = {g.batch,    g.channels, g.height,   g.width, g.out_channels, g.kernel_h,
                                    g.kernel_w, g.groups,   g.stride_h, g.stride_w, g.pad_h,     g.pad_w,
                                    g.dil_h,    g.dil_w,    bias,       omp_get_max_threads()};
  std::lock_guard<std::mutex> lock(mutex);
  auto found = plans.find(key);
  if (found != plans.end()) return found->second;
  if (plans.size() >= 512) plans.clear();  // a bound for programs that see ever new shapes
  std::shared_ptr<const Plan> plan;
  try {
    plan = make(g, bias);
  } catch (const dnnl::error&) {
    plan = nullptr;  // no primitive: the caller computes it itself
  }
  return plans.emplace(key, plan).first->second;
}

// A plain tensor seen as the layout a primitive wants: the tensor itself when they agree, else a
// buffer from kiln's allocator (holding the reordered values if `read`).
struct Operand {
  memory mem;
  TensorBase buffer;  // keeps the reordered copy alive
};

Operand as_layout(const memory::desc& want, const memory& user, bool read, dnnl::stream& stream) {
  if (want == user.get_desc()) return {user, TensorBase()};
  const int64_t floats = static_cast<int64_t>((want.get_size() + sizeof(float) - 1) / sizeof(float));
  TensorBase buffer = empty_cpu({floats}, ScalarType::Float32);
  memory mem(want, onednn_cpu_engine(), buffer.data_ptr());
  if (read) dnnl::reorder(user, mem).execute(stream, const_cast<memory&>(user), mem);
  return {mem, buffer};
}

// Copies the primitive's result back into the plain tensor when it wrote another layout.
void write_back(const Operand& result, memory& user, dnnl::stream& stream) {
  if (result.buffer.defined()) dnnl::reorder(result.mem, user).execute(stream, const_cast<memory&>(result.mem), user);
}

memory user_memory(const memory::dims& dims, Tag tag, const float* data) {
  return memory(plain(dims, tag), onednn_cpu_engine(), const_cast<float*>(data));
}

}  // namespace

bool onednn_conv_applies(const ConvGeometry& g, ScalarType dtype) {
  if (!onednn_enabled() || dtype != ScalarType::Float32) return false;
  if (g.batch <= 0 || g.channels <= 0 || g.out_channels <= 0 || g.out_h <= 0 || g.out_w <= 0) return false;
  const bool strided = g.stride_h != 1 || g.stride_w != 1, dilated = g.dil_h != 1 || g.dil_w != 1;
  const bool one_by_one = g.kernel_h == 1 && g.kernel_w == 1;
  const bool not_single_threaded_1x1 =
      strided || dilated || g.batch >= 16 || !one_by_one || omp_get_max_threads() > 1;
  const bool not_small = g.groups > 1 || (g.kernel_h > 3 && g.kernel_w > 3) || g.batch > 1 ||
                         g.batch * g.channels * g.height * g.width > 20480;
  return not_single_threaded_1x1 && not_small;
}

bool onednn_conv2d_forward(const ConvGeometry& g, const float* x, const float* w, const float* bias_or_null,
                           float* y) {
  const std::shared_ptr<const ForwardPlan> plan = cached_plan<ForwardPlan>(g, bias_or_null != nullptr, make_forward);
  if (plan == nullptr) return false;
  dnnl::stream stream(onednn_cpu_engine());
  memory x_user = user_memory(src_dims(g), Tag::nchw, x), w_user = user_memory(weight_dims(g), weight_tag(g), w);
  memory y_user = user_memory(dst_dims(g), Tag::nchw, y);
  const Operand xs = as_layout(plan->pd.src_desc(), x_user, true, stream);
  const Operand ws = as_layout(plan->pd.weights_desc(), w_user, true, stream);
  const Operand ys = as_layout(plan->pd.dst_desc(), y_user, false, stream);
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, xs.mem}, {DNNL_ARG_WEIGHTS, ws.mem}, {DNNL_ARG_DST, ys.mem}};
  if (bias_or_null != nullptr) args.emplace(DNNL_ARG_BIAS, user_memory({g.out_channels}, Tag::x, bias_or_null));
  plan->primitive.execute(stream, args);
  write_back(ys, y_user, stream);
  stream.wait();
  return true;
}

bool onednn_conv2d_backward_data(const ConvGeometry& g, const float* grad_y, const float* w, float* grad_x) {
  const std::shared_ptr<const BackwardDataPlan> plan = cached_plan<BackwardDataPlan>(g, false, make_backward_data);
  if (plan == nullptr) return false;
  dnnl::stream stream(onednn_cpu_engine());
  memory gy_user = user_memory(dst_dims(g), Tag::nchw, grad_y), w_user = user_memory(weight_dims(g), weight_tag(g), w);
  memory gx_user = user_memory(src_dims(g), Tag::nchw, grad_x);
  const Operand gys = as_layout(plan->pd.diff_dst_desc(), gy_user, true, stream);
  const Operand ws = as_layout(plan->pd.weights_desc(), w_user, true, stream);
  const Operand gxs = as_layout(plan->pd.diff_src_desc(), gx_user, false, stream);
  plan->primitive.execute(stream, {{DNNL_ARG_DIFF_DST, gys.mem}, {DNNL_ARG_WEIGHTS, ws.mem}, {DNNL_ARG_DIFF_SRC, gxs.mem}});
  write_back(gxs, gx_user, stream);
  stream.wait();
  return true;
}

bool onednn_conv2d_backward_weights(const ConvGeometry& g, const float* grad_y, const float* x, float* grad_w,
                                    float* grad_bias_or_null) {
  const std::shared_ptr<const BackwardWeightsPlan> plan =
      cached_plan<BackwardWeightsPlan>(g, grad_bias_or_null != nullptr, make_backward_weights);
  if (plan == nullptr) return false;
  dnnl::stream stream(onednn_cpu_engine());
  memory gy_user = user_memory(dst_dims(g), Tag::nchw, grad_y), x_user = user_memory(src_dims(g), Tag::nchw, x);
  memory gw_user = user_memory(weight_dims(g), weight_tag(g), grad_w);
  const Operand gys = as_layout(plan->pd.diff_dst_desc(), gy_user, true, stream);
  const Operand xs = as_layout(plan->pd.src_desc(), x_user, true, stream);
  const Operand gws = as_layout(plan->pd.diff_weights_desc(), gw_user, false, stream);
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_DIFF_DST, gys.mem}, {DNNL_ARG_SRC, xs.mem}, {DNNL_ARG_DIFF_WEIGHTS, gws.mem}};
  if (grad_bias_or_null != nullptr)
    args.emplace(DNNL_ARG_DIFF_BIAS, user_memory({g.out_channels}, Tag::x, grad_bias_or_null));
  plan->primitive.execute(stream, args);
  write_back(gws, gw_user, stream);
  stream.wait();
  return true;
}

}  // namespace cpu
}  // namespace kiln
