// grid_sampler_2d and its backward (F.grid_sample on (N, C, H, W) inputs): each output point
// (n, h, w) reads input[n] at grid[n, h, w] = (x, y) in [-1, 1] (x along W). Modes: 0 bilinear,
// 1 nearest (round half to even), 2 bicubic (A = -0.75); padding modes: 0 zeros, 1 border,
// 2 reflection. The coordinate arithmetic is torch's (aten/src/ATen/native/GridSampler.h) and so
// is the backward: grad_input scattered through the same weights, grad_grid the derivative of
// the weights times the chain factor of unnormalize / clip / reflect.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "generated/kernels/grid_sampler_2d.h"
#include "generated/kernels/grid_sampler_2d_backward.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/grid_sample_coords.h"
#include "runtime/kernels/tensor_memory.h"

namespace kiln {
namespace cpu {
namespace {

using namespace grid;  // NOLINT: the coordinate helpers

bool inside(int64_t h, int64_t w, int64_t H, int64_t W) { return h >= 0 && h < H && w >= 0 && w < W; }

template <typename T>
void cubic_coefficients(T c[4], T t) {
  const T A = -0.75;
  T x1 = t;
  c[0] = ((A * (x1 + 1) - 5 * A) * (x1 + 1) + 8 * A) * (x1 + 1) - 4 * A;
  c[1] = ((A + 2) * x1 - (A + 3)) * x1 * x1 + 1;
  T x2 = 1 - t;
  c[2] = ((A + 2) * x2 - (A + 3)) * x2 * x2 + 1;
  c[3] = ((A * (x2 + 1) - 5 * A) * (x2 + 1) + 8 * A) * (x2 + 1) - 4 * A;
}

template <typename T>
void cubic_coefficients_grad(T c[4], T t) {
  const T A = -0.75;
  T x = -1 - t;
  c[0] = (-3 * A * x - 10 * A) * x - 8 * A;
  x = -t;
  c[1] = (-3 * (A + 2) * x - 2 * (A + 3)) * x;
  x = 1 - t;
  c[2] = (3 * (A + 2) * x - 2 * (A + 3)) * x;
  x = 2 - t;
  c[3] = (3 * A * x - 10 * A) * x + 8 * A;
}

// The bicubic tap at integer (x, y), padded: its position in the plane or -1 when it reads zero.
template <typename T>
int64_t bounded(T x, T y, int64_t H, int64_t W, int64_t padding_mode, bool align_corners) {
  const int64_t ix = static_cast<int64_t>(pad_coordinate(x, W, padding_mode, align_corners, static_cast<T*>(nullptr)));
  const int64_t iy = static_cast<int64_t>(pad_coordinate(y, H, padding_mode, align_corners, static_cast<T*>(nullptr)));
  return inside(iy, ix, H, W) ? iy * W + ix : -1;
}

struct Dims {
  int64_t N, C, H, W, OH, OW;
};

Dims check(const char* op, const TensorBase& input, const TensorBase& grid, int64_t mode, int64_t padding_mode) {
  KILN_CHECK(input.dtype() == grid.dtype(), op, "(): expected input and grid to have same dtype, but input has ",
             scalar_type_name(input.dtype()), " and grid has ", scalar_type_name(grid.dtype()));
  KILN_CHECK(is_floating_type(input.dtype()), op, "(): \"", op, "\" not implemented for '",
             scalar_type_name(input.dtype()), "'");
  KILN_CHECK(input.dim() == 4 && grid.dim() == 4, op,
             "(): expected 4D input and grid with same number of dimensions, but got input with sizes ",
             shape_str(input.sizes()), " and grid with sizes ", shape_str(grid.sizes()));
  KILN_CHECK(input.sizes()[0] == grid.sizes()[0], op,
             "(): expected grid and input to have same batch size, but got input with sizes ", shape_str(input.sizes()),
             " and grid with sizes ", shape_str(grid.sizes()));
  KILN_CHECK(grid.sizes()[3] == 2, op, "(): expected grid to have size 2 in last dimension, but got grid with sizes ",
             shape_str(grid.sizes()));
  for (int64_t i = 2; i < 4; ++i)
    KILN_CHECK(input.sizes()[i] > 0, op, "(): expected input to have non-empty spatial dimensions, but input has sizes ",
               shape_str(input.sizes()), " with dimension ", i, " being empty");
  KILN_CHECK(mode >= 0 && mode <= 2, op, "(): interpolation_mode must be 0 (bilinear), 1 (nearest) or 2 (bicubic), got ",
             mode);
  KILN_CHECK(padding_mode >= 0 && padding_mode <= 2, op,
             "(): padding_mode must be 0 (zeros), 1 (border) or 2 (reflection), got ", padding_mode);
  return {input.sizes()[0], input.sizes()[1], input.sizes()[2], input.sizes()[3], grid.sizes()[1], grid.sizes()[2]};
}

// One pass over every output point; `point` gets (n, input plane offset, output offset, x, y).
template <typename T, typename F>
void each_point(const Dims& d, const T* g, F point) {
  for (int64_t n = 0; n < d.N; ++n)
    for (int64_t h = 0; h < d.OH; ++h)
      for (int64_t w = 0; w < d.OW; ++w) {
        const T* p = g + ((n * d.OH + h) * d.OW + w) * 2;
        point(n, h * d.OW + w, p[0], p[1]);
      }
}

}  // namespace

TensorBase grid_sampler_2d(const TensorBase& input, const TensorBase& grid, int64_t interpolation_mode,
                           int64_t padding_mode, bool align_corners) {
  const Dims d = check("grid_sampler_2d", input, grid, interpolation_mode, padding_mode);
  if (input.dtype() == ScalarType::Float16 || input.dtype() == ScalarType::BFloat16)
    return cast_to(grid_sampler_2d(cast_to(input, ScalarType::Float32), cast_to(grid, ScalarType::Float32),
                                   interpolation_mode, padding_mode, align_corners), input.dtype());
  TensorBase result = zeros_cpu({d.N, d.C, d.OH, d.OW}, input.dtype());
  if (result.numel() == 0) return result;
  const TensorBase in = contiguous_cpu(input), gr = contiguous_cpu(grid);
  KILN_DISPATCH_FLOATING_TYPES(input.dtype(), "grid_sampler_2d", [&] {
    using T = scalar_t;
    const T* x = static_cast<const T*>(in.data_ptr());
    T* out = static_cast<T*>(result.data_ptr());
    const int64_t plane = d.H * d.W, oplane = d.OH * d.OW;
    each_point<T>(d, static_cast<const T*>(gr.data_ptr()), [&](int64_t n, int64_t o, T gx, T gy) {
      const T* xn = x + n * d.C * plane;
      T* on = out + n * d.C * oplane + o;
      if (interpolation_mode == kBicubic) {
        const T ix = unnormalize(gx, d.W, align_corners, static_cast<T*>(nullptr));
        const T iy = unnormalize(gy, d.H, align_corners, static_cast<T*>(nullptr));
        const T x0 = std::floor(ix), y0 = std::floor(iy);
        T cx[4], cy[4];
        cubic_coefficients(cx, ix - x0);
        cubic_coefficients(cy, iy - y0);
        int64_t at[4][4];
        for (int j = 0; j < 4; ++j)
          for (int i = 0; i < 4; ++i) at[j][i] = bounded<T>(x0 - 1 + i, y0 - 1 + j, d.H, d.W, padding_mode, align_corners);
        for (int64_t c = 0; c < d.C; ++c) {
          const T* xc = xn + c * plane;
          T acc = 0;
          for (int j = 0; j < 4; ++j) {
            T row = 0;
            for (int i = 0; i < 4; ++i) row += (at[j][i] < 0 ? T(0) : xc[at[j][i]]) * cx[i];
            acc += row * cy[j];
          }
          on[c * oplane] = acc;
        }
        return;
      }
      const T ix = source_index(gx, d.W, padding_mode, align_corners, static_cast<T*>(nullptr));
      const T iy = source_index(gy, d.H, padding_mode, align_corners, static_cast<T*>(nullptr));
      if (interpolation_mode == kNearest) {
        const int64_t xi = static_cast<int64_t>(std::nearbyint(ix)), yi = static_cast<int64_t>(std::nearbyint(iy));
        if (!inside(yi, xi, d.H, d.W)) return;
        for (int64_t c = 0; c < d.C; ++c) on[c * oplane] = xn[c * plane + yi * d.W + xi];
        return;
      }
      const int64_t x0 = static_cast<int64_t>(std::floor(ix)), y0 = static_cast<int64_t>(std::floor(iy));
      const T x1 = static_cast<T>(x0 + 1), y1 = static_cast<T>(y0 + 1);
      const T wnw = (x1 - ix) * (y1 - iy), wne = (ix - x0) * (y1 - iy), wsw = (x1 - ix) * (iy - y0),
              wse = (ix - x0) * (iy - y0);
      for (int64_t c = 0; c < d.C; ++c) {
        const T* xc = xn + c * plane;
        T acc = 0;
        if (inside(y0, x0, d.H, d.W)) acc += xc[y0 * d.W + x0] * wnw;
        if (inside(y0, x0 + 1, d.H, d.W)) acc += xc[y0 * d.W + x0 + 1] * wne;
        if (inside(y0 + 1, x0, d.H, d.W)) acc += xc[(y0 + 1) * d.W + x0] * wsw;
        if (inside(y0 + 1, x0 + 1, d.H, d.W)) acc += xc[(y0 + 1) * d.W + x0 + 1] * wse;
        on[c * oplane] = acc;
      }
    });
  });
  return result;
}

std::vector<TensorBase> grid_sampler_2d_backward(const TensorBase& grad_output, const TensorBase& input,
                                                 const TensorBase& grid, int64_t interpolation_mode,
                                                 int64_t padding_mode, bool align_corners) {
  const Dims d = check("grid_sampler_2d_backward", input, grid, interpolation_mode, padding_mode);
  const DimVector want{d.N, d.C, d.OH, d.OW};
  KILN_CHECK(grad_output.sizes() == IntArrayRef(want), "grid_sampler_2d_backward(): expected grad_output of shape ",
             shape_str(want), ", got ", shape_str(grad_output.sizes()));
  KILN_CHECK(grad_output.dtype() == input.dtype(), "grid_sampler_2d_backward(): expected grad_output of dtype ",
             scalar_type_name(input.dtype()), ", got ", scalar_type_name(grad_output.dtype()));
  if (input.dtype() == ScalarType::Float16 || input.dtype() == ScalarType::BFloat16) {
    const ScalarType f = ScalarType::Float32;
    std::vector<TensorBase> r = grid_sampler_2d_backward(cast_to(grad_output, f), cast_to(input, f), cast_to(grid, f),
                                                         interpolation_mode, padding_mode, align_corners);
    return {cast_to(r[0], input.dtype()), cast_to(r[1], input.dtype())};
  }
  TensorBase grad_input = zeros_cpu(input.sizes(), input.dtype());
  TensorBase grad_grid = zeros_cpu(grid.sizes(), grid.dtype());
  if (grad_output.numel() == 0) return {grad_input, grad_grid};
  const TensorBase in = contiguous_cpu(input), gr = contiguous_cpu(grid), go = contiguous_cpu(grad_output);
  KILN_DISPATCH_FLOATING_TYPES(input.dtype(), "grid_sampler_2d_backward", [&] {
    using T = scalar_t;
    const T* x = static_cast<const T*>(in.data_ptr());
    const T* g = static_cast<const T*>(go.data_ptr());
    T* gi = static_cast<T*>(grad_input.data_ptr());
    T* gg = static_cast<T*>(grad_grid.data_ptr());
    const int64_t plane = d.H * d.W, oplane = d.OH * d.OW;
    each_point<T>(d, static_cast<const T*>(gr.data_ptr()), [&](int64_t n, int64_t o, T gx, T gy) {
      const T* xn = x + n * d.C * plane;
      T* gin = gi + n * d.C * plane;
      const T* gon = g + n * d.C * oplane + o;
      T* ggp = gg + (n * oplane + o) * 2;
      if (interpolation_mode == kBicubic) {
        T mx, my;
        const T ix = unnormalize(gx, d.W, align_corners, &mx);
        const T iy = unnormalize(gy, d.H, align_corners, &my);
        const T x0 = std::floor(ix), y0 = std::floor(iy);
        T cx[4], cy[4], dx[4], dy[4];
        cubic_coefficients(cx, ix - x0);
        cubic_coefficients(cy, iy - y0);
        cubic_coefficients_grad(dx, ix - x0);
        cubic_coefficients_grad(dy, iy - y0);
        int64_t at[4][4];
        for (int j = 0; j < 4; ++j)
          for (int i = 0; i < 4; ++i) at[j][i] = bounded<T>(x0 - 1 + i, y0 - 1 + j, d.H, d.W, padding_mode, align_corners);
        T gix = 0, giy = 0;
        for (int64_t c = 0; c < d.C; ++c) {
          const T gout = gon[c * oplane];
          const T* xc = xn + c * plane;
          T* gc = gin + c * plane;
          for (int j = 0; j < 4; ++j)
            for (int i = 0; i < 4; ++i) {
              if (at[j][i] < 0) continue;
              gc[at[j][i]] += gout * cx[i] * cy[j];
              const T v = xc[at[j][i]];
              gix -= v * dx[i] * cy[j] * gout;
              giy -= v * dy[j] * cx[i] * gout;
            }
        }
        ggp[0] = mx * gix;
        ggp[1] = my * giy;
        return;
      }
      T mx, my;
      const T ix = source_index(gx, d.W, padding_mode, align_corners, &mx);
      const T iy = source_index(gy, d.H, padding_mode, align_corners, &my);
      if (interpolation_mode == kNearest) {
        const int64_t xi = static_cast<int64_t>(std::nearbyint(ix)), yi = static_cast<int64_t>(std::nearbyint(iy));
        if (inside(yi, xi, d.H, d.W))
          for (int64_t c = 0; c < d.C; ++c) gin[c * plane + yi * d.W + xi] += gon[c * oplane];
        return;  // grad_grid stays zero
      }
      const int64_t x0 = static_cast<int64_t>(std::floor(ix)), y0 = static_cast<int64_t>(std::floor(iy));
      const T x1 = static_cast<T>(x0 + 1), y1 = static_cast<T>(y0 + 1);
      const T wnw = (x1 - ix) * (y1 - iy), wne = (ix - x0) * (y1 - iy), wsw = (x1 - ix) * (iy - y0),
              wse = (ix - x0) * (iy - y0);
      T gix = 0, giy = 0;
      for (int64_t c = 0; c < d.C; ++c) {
        const T gout = gon[c * oplane];
        const T* xc = xn + c * plane;
        T* gc = gin + c * plane;
        if (inside(y0, x0, d.H, d.W)) {
          const int64_t at = y0 * d.W + x0;
          gc[at] += wnw * gout;
          gix -= xc[at] * (y1 - iy) * gout;
          giy -= xc[at] * (x1 - ix) * gout;
        }
        if (inside(y0, x0 + 1, d.H, d.W)) {
          const int64_t at = y0 * d.W + x0 + 1;
          gc[at] += wne * gout;
          gix += xc[at] * (y1 - iy) * gout;
          giy -= xc[at] * (ix - x0) * gout;
        }
        if (inside(y0 + 1, x0, d.H, d.W)) {
          const int64_t at = (y0 + 1) * d.W + x0;
          gc[at] += wsw * gout;
          gix -= xc[at] * (iy - y0) * gout;
          giy += xc[at] * (x1 - ix) * gout;
        }
        if (inside(y0 + 1, x0 + 1, d.H, d.W)) {
          const int64_t at = (y0 + 1) * d.W + x0 + 1;
          gc[at] += wse * gout;
          gix += xc[at] * (iy - y0) * gout;
          giy += xc[at] * (ix - x0) * gout;
        }
      }
      ggp[0] = mx * gix;
      ggp[1] = my * giy;
    });
  });
  return {grad_input, grad_grid};
}

}  // namespace cpu
}  // namespace kiln
