// Adaptive pooling beyond adaptive_avg_pool2d (pool_ops.cc): adaptive_avg_pool3d on (N, C, D, H, W)
// or (C, D, H, W) and adaptive_max_pool2d/3d on (N, C, *spatial) or (C, *spatial), each with its
// backward.
// Output bin o of a dim of input size `in` and output size `out` covers the inputs
// floor(o * in / out) .. ceil((o + 1) * in / out) - 1 (torch's), so bins may overlap. Every
// (n, c) plane is pooled independently.
#include <cmath>
#include <limits>

#include "generated/kernels/adaptive_avg_pool3d.h"
#include "generated/kernels/adaptive_avg_pool3d_backward.h"
#include "generated/kernels/adaptive_max_pool2d.h"
#include "generated/kernels/adaptive_max_pool2d_backward.h"
#include "generated/kernels/adaptive_max_pool3d.h"
#include "generated/kernels/adaptive_max_pool3d_backward.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/tensor_memory.h"

namespace kiln {
namespace cpu {
namespace {

inline int64_t bin_start(int64_t o, int64_t out, int64_t in) { return (o * in) / out; }
inline int64_t bin_end(int64_t o, int64_t out, int64_t in) { return ((o + 1) * in + out - 1) / out; }

// torch's checks, in its order: rank, non-empty non-batch dims, dtype. `spatial` is 2 or 3.
void check_adaptive_input(const TensorBase& self, int64_t spatial, const char* op) {
  KILN_CHECK(self.dim() == spatial + 1 || self.dim() == spatial + 2, op, "(): Expected ", spatial + 1, "D or ",
             spatial + 2, "D tensor, but got ", shape_str(self.sizes()));
  for (int64_t d = 1; d < self.dim(); ++d)
    KILN_CHECK(self.sizes()[d] > 0, op,
               "(): Expected input to have non-zero size for non-batch dimensions, but input has sizes ",
               shape_str(self.sizes()), " with dimension ", d, " being empty");
  KILN_CHECK(self.is_floating_point(), op, "(): \"", op, "\" not implemented for '", scalar_type_name(self.dtype()),
             "'");
}

void check_output_size(IntArrayRef output_size, size_t n, const char* op) {
  KILN_CHECK(output_size.size() == n, op, ": output_size must be ", n);
  for (int64_t s : output_size)
    KILN_CHECK(s >= 0, op, ": elements of output_size must be greater than or equal to 0 but received ",
               shape_str(output_size));
}

// The input's leading dims with the last `n` replaced by output_size.
DimVector with_spatial(IntArrayRef sizes, IntArrayRef output_size) {
  DimVector shape(sizes.begin(), sizes.end() - output_size.size());
  for (int64_t s : output_size) shape.push_back(s);
  return shape;
}

void check_grad_output(const TensorBase& grad_output, const TensorBase& self, IntArrayRef shape, const char* op) {
  KILN_CHECK(grad_output.sizes() == shape, op, "(): expected grad_output of shape ", shape_str(shape), ", got ",
             shape_str(grad_output.sizes()));
  KILN_CHECK(grad_output.dtype() == self.dtype(), op, "(): expected grad_output of dtype ",
             scalar_type_name(self.dtype()), ", got ", scalar_type_name(grad_output.dtype()));
}

template <typename F>
void for_each_plane(int64_t planes, int64_t work, F f) {
#pragma omp parallel for if (work > 32768)
  for (int64_t p = 0; p < planes; ++p) f(p);
}

// The bins of a (D, H, W) -> (oD, oH, oW) pooling, visited as f(output offset, d0, d1, h0, h1, w0, w1).
struct Bins3d {
  int64_t D, H, W, oD, oH, oW;
  template <typename F>
  void each(F f) const {
    for (int64_t od = 0; od < oD; ++od)
      for (int64_t oh = 0; oh < oH; ++oh)
        for (int64_t ow = 0; ow < oW; ++ow)
          f((od * oH + oh) * oW + ow, bin_start(od, oD, D), bin_end(od, oD, D), bin_start(oh, oH, H),
            bin_end(oh, oH, H), bin_start(ow, oW, W), bin_end(ow, oW, W));
  }
};

Bins3d bins3d(IntArrayRef in, IntArrayRef out) {
  const size_t n = in.size();
  const size_t m = out.size();
  return {in[n - 3], in[n - 2], in[n - 1], out[m - 3], out[m - 2], out[m - 1]};
}

}  // namespace

TensorBase adaptive_avg_pool3d(const TensorBase& self, IntArrayRef output_size) {
  const char* op = "adaptive_avg_pool3d";
  check_output_size(output_size, 3, op);
  check_adaptive_input(self, 3, op);
  if (is_reduced_floating_type(self.dtype()))
    return cast_to(adaptive_avg_pool3d(to_opmath(self), output_size), self.dtype());
  TensorBase out = empty_cpu(with_spatial(self.sizes(), output_size), self.dtype());
  if (out.numel() == 0) return out;
  const Bins3d b = bins3d(self.sizes(), output_size);
  const int64_t plane_in = b.D * b.H * b.W, plane_out = b.oD * b.oH * b.oW;
  const TensorBase x = contiguous_cpu(self);
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), op, [&] {
    const scalar_t* in = static_cast<const scalar_t*>(x.data_ptr());
    scalar_t* o = static_cast<scalar_t*>(out.data_ptr());
    for_each_plane(self.numel() / plane_in, self.numel(), [&](int64_t plane) {
      const scalar_t* src = in + plane * plane_in;
      b.each([&](int64_t at, int64_t d0, int64_t d1, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
        scalar_t sum = 0;  // torch's: in order, in the input's type, / kd / kh / kw
        for (int64_t d = d0; d < d1; ++d)
          for (int64_t h = h0; h < h1; ++h)
            for (int64_t w = w0; w < w1; ++w) sum += src[(d * b.H + h) * b.W + w];
        o[plane * plane_out + at] = sum / static_cast<scalar_t>(d1 - d0) / static_cast<scalar_t>(h1 - h0) /
                                    static_cast<scalar_t>(w1 - w0);
      });
    });
  });
  return out;
}

TensorBase adaptive_avg_pool3d_backward(const TensorBase& grad_output, const TensorBase& self) {
  const char* op = "adaptive_avg_pool3d_backward";
  check_adaptive_input(self, 3, op);
  KILN_CHECK(grad_output.dim() == self.dim(), op, "(): expected grad_output of ", self.dim(), " dims, got ",
             shape_str(grad_output.sizes()));
  const IntArrayRef out_size(grad_output.sizes().data() + self.dim() - 3, 3);
  check_grad_output(grad_output, self, with_spatial(self.sizes(), out_size), op);
  if (is_reduced_floating_type(self.dtype()))
    return cast_to(adaptive_avg_pool3d_backward(to_opmath(grad_output), to_opmath(self)), self.dtype());
  TensorBase grad_input = zeros_cpu(self.sizes(), self.dtype());
  if (grad_output.numel() == 0) return grad_input;
  const Bins3d b = bins3d(self.sizes(), out_size);
  const int64_t plane_in = b.D * b.H * b.W, plane_out = b.oD * b.oH * b.oW;
  const TensorBase g = contiguous_cpu(grad_output);
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), op, [&] {
    const scalar_t* go = static_cast<const scalar_t*>(g.data_ptr());
    scalar_t* gi = static_cast<scalar_t*>(grad_input.data_ptr());
    for_each_plane(self.numel() / plane_in, self.numel(), [&](int64_t plane) {
      scalar_t* dst = gi + plane * plane_in;
      b.each([&](int64_t at, int64_t d0, int64_t d1, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
        const scalar_t share = go[plane * plane_out + at] / static_cast<scalar_t>(d1 - d0) /
                               static_cast<scalar_t>(h1 - h0) / static_cast<scalar_t>(w1 - w0);
        for (int64_t d = d0; d < d1; ++d)
          for (int64_t h = h0; h < h1; ++h)
            for (int64_t w = w0; w < w1; ++w) dst[(d * b.H + h) * b.W + w] += share;
      });
    });
  });
  return grad_input;
}

namespace {

// The last `spatial` (2 or 3) dims as a volume: 2-D pooling is 3-D pooling of depth 1.
Bins3d spatial_bins(IntArrayRef in, IntArrayRef out, int64_t spatial) {
  const int64_t n = static_cast<int64_t>(in.size());
  return {spatial == 3 ? in[n - 3] : 1, in[n - 2], in[n - 1], spatial == 3 ? out[0] : 1, out[spatial - 2],
          out[spatial - 1]};
}

std::tuple<TensorBase, TensorBase> adaptive_max(const char* op, const TensorBase& self, IntArrayRef output_size,
                                                int64_t spatial) {
  KILN_CHECK(static_cast<int64_t>(output_size.size()) == spatial, op, "(): internal error: output_size.size() must be ",
             spatial);
  check_adaptive_input(self, spatial, op);
  for (int64_t s : output_size)
    KILN_CHECK(s >= 0, op, "(): elements of output_size must be greater than or equal to 0 but received ",
               shape_str(output_size));
  if (is_reduced_floating_type(self.dtype())) {
    auto [values, indices] = adaptive_max(op, to_opmath(self), output_size, spatial);
    return {cast_to(values, self.dtype()), indices};
  }
  const DimVector shape = with_spatial(self.sizes(), output_size);
  TensorBase out = empty_cpu(shape, self.dtype());
  TensorBase idx = empty_cpu(shape, ScalarType::Int64);
  if (out.numel() == 0) return {out, idx};
  const Bins3d b = spatial_bins(self.sizes(), output_size, spatial);
  const int64_t plane_in = b.D * b.H * b.W, plane_out = b.oD * b.oH * b.oW;
  const TensorBase x = contiguous_cpu(self);
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), op, [&] {
    const scalar_t* in = static_cast<const scalar_t*>(x.data_ptr());
    scalar_t* o = static_cast<scalar_t*>(out.data_ptr());
    int64_t* ix = static_cast<int64_t*>(idx.data_ptr());
    for_each_plane(self.numel() / plane_in, self.numel(), [&](int64_t plane) {
      const scalar_t* src = in + plane * plane_in;
      b.each([&](int64_t at, int64_t d0, int64_t d1, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
        // torch's scan: the first maximum wins, and every NaN beats what came before (the last NaN wins)
        int64_t best = (d0 * b.H + h0) * b.W + w0;
        scalar_t best_value = -std::numeric_limits<scalar_t>::infinity();
        for (int64_t d = d0; d < d1; ++d)
          for (int64_t h = h0; h < h1; ++h)
            for (int64_t w = w0; w < w1; ++w) {
              const scalar_t v = src[(d * b.H + h) * b.W + w];
              if (v > best_value || std::isnan(v)) {
                best_value = v;
                best = (d * b.H + h) * b.W + w;
              }
            }
        o[plane * plane_out + at] = best_value;
        ix[plane * plane_out + at] = best;
      });
    });
  });
  return {out, idx};
}

TensorBase adaptive_max_backward(const char* op, const TensorBase& grad_output, const TensorBase& self,
                                 const TensorBase& indices, int64_t spatial) {
  check_adaptive_input(self, spatial, op);
  KILN_CHECK(indices.dtype() == ScalarType::Int64, op, "(): expected indices of dtype int64, got ",
             scalar_type_name(indices.dtype()));
  KILN_CHECK(grad_output.dim() == self.dim(), op, "(): expected grad_output of ", self.dim(), " dims, got ",
             shape_str(grad_output.sizes()));
  const IntArrayRef out_size(grad_output.sizes().data() + self.dim() - spatial, spatial);
  const DimVector shape = with_spatial(self.sizes(), out_size);
  check_grad_output(grad_output, self, shape, op);
  KILN_CHECK(indices.sizes() == IntArrayRef(shape), op, "(): expected indices of shape ", shape_str(shape), ", got ",
             shape_str(indices.sizes()));
  if (spatial == 2)  // torch's 2-D backward refuses the gradient of an empty output (its 3-D one does not)
    for (int64_t d = 1; d < grad_output.dim(); ++d)
      KILN_CHECK(grad_output.sizes()[d] > 0, op,
                 "(): Expected grad_output to have non-zero size for non-batch dimensions, but grad_output has sizes ",
                 shape_str(grad_output.sizes()), " with dimension ", d, " being empty");
  if (is_reduced_floating_type(self.dtype()))
    return cast_to(adaptive_max_backward(op, to_opmath(grad_output), to_opmath(self), indices, spatial),
                   self.dtype());
  TensorBase grad_input = zeros_cpu(self.sizes(), self.dtype());
  if (grad_output.numel() == 0) return grad_input;
  const Bins3d b = spatial_bins(self.sizes(), out_size, spatial);
  const int64_t plane_in = b.D * b.H * b.W, plane_out = b.oD * b.oH * b.oW;
  const TensorBase g = contiguous_cpu(grad_output), ix = contiguous_cpu(indices);
  const int64_t* id = static_cast<const int64_t*>(ix.data_ptr());
  for (int64_t i = 0; i < ix.numel(); ++i)  // checked before the parallel loop, which must not throw
    KILN_CHECK(id[i] >= 0 && id[i] < plane_in, op, "(): index ", id[i], " is out of the input plane of ", plane_in);
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), op, [&] {
    const scalar_t* go = static_cast<const scalar_t*>(g.data_ptr());
    scalar_t* gi = static_cast<scalar_t*>(grad_input.data_ptr());
    for_each_plane(self.numel() / plane_in, grad_output.numel(), [&](int64_t plane) {
      for (int64_t i = 0; i < plane_out; ++i) gi[plane * plane_in + id[plane * plane_out + i]] += go[plane * plane_out + i];
    });
  });
  return grad_input;
}

}  // namespace

std::tuple<TensorBase, TensorBase> adaptive_max_pool2d(const TensorBase& self, IntArrayRef output_size) {
  return adaptive_max("adaptive_max_pool2d", self, output_size, 2);
}

TensorBase adaptive_max_pool2d_backward(const TensorBase& grad_output, const TensorBase& self,
                                        const TensorBase& indices) {
  return adaptive_max_backward("adaptive_max_pool2d_backward", grad_output, self, indices, 2);
}

std::tuple<TensorBase, TensorBase> adaptive_max_pool3d(const TensorBase& self, IntArrayRef output_size) {
  return adaptive_max("adaptive_max_pool3d", self, output_size, 3);
}

TensorBase adaptive_max_pool3d_backward(const TensorBase& grad_output, const TensorBase& self,
                                        const TensorBase& indices) {
  return adaptive_max_backward("adaptive_max_pool3d_backward", grad_output, self, indices, 3);
}

}  // namespace cpu
}  // namespace kiln
