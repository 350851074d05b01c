// grid_sampler_2d and its backward (F.grid_sample on (N, C, H, W) inputs): each output point
// (n, h, w) reads input[n] at grid[n, h, w] = (x, y) in [-1, 1] (x along W). Modes: 0 bilinear,
// 1 nearest (round half to even), 2 bicubic (A = -0.75); padding modes: 0 zeros, 1 border,
// 2 reflection. Bilinear sampling follows torch's vectorised CPU kernel (bilinear_forward_torch_vec),
// nearest and bicubic the scalar arithmetic of aten/src/ATen/native/GridSampler.h; so does each
// backward: grad_input scattered through the same weights, grad_grid the derivative of the weights
// times the chain factor of unnormalize / clip / reflect.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "generated/kernels/grid_sampler_2d.h"
#include "generated/kernels/grid_sampler_2d_backward.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/grid_sample_coords.h"
#include "runtime/kernels/pointwise_math.h"
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


// Bilinear sampling as torch's vectorised CPU kernel computes it (GridSamplerKernel.cpp, which its
// grid_sampler_2d takes for float and double): the coordinate of each lane by ComputeLocation
// (unnormalize as (g + 1) * s - 0.5, reflection by trunc'd flips, clip by max / min, NaN to 0),
// distances w = x - floor(x), e = 1 - w, weights s * e, s * w, n * e, n * w, the four taps summed
// as ((nw v * nw + ne v * ne) + sw v * sw) + se v * se; each multiply-add fused where torch's AVX2
// build fuses it. The backward takes the grid in vectors of kLanes points, as torch's does: within
// one vector and channel, the nw taps' gradients are scattered for every lane, then ne, sw, se.
template <typename T>
struct VecLocation {
  int64_t size;
  bool align;
  int64_t padding;
  bool fused;

  T scale() const { return align ? static_cast<T>(size - 1) / 2 : static_cast<T>(size) / 2; }
  T unnormalize(T g) const {
    if (align) return (g + T(1)) * scale();
    return fused ? pm::fma(g + T(1), scale(), T(-0.5)) : (g + T(1)) * scale() - T(0.5);
  }
  // The padded coordinate; *mult: d coordinate / d g.
  T apply(T g, T* mult) const {
    T x = unnormalize(g), m = scale();
    if (padding == kZeros) {
      *mult = m;
      return x;
    }
    if (padding == kReflection) {
      if (align && size <= 1) {
        x = 0;
        m = 0;
      } else {
        const T twice_span = align ? static_cast<T>(size - 1) * 2 : static_cast<T>(size) * 2;
        const T low = align ? T(0) : T(-0.5);
        const T in = align ? x : x - low;
        const T abs_in = std::abs(in);
        const T flips = std::trunc(abs_in / twice_span);
        const T extra = fused ? pm::fma(-flips, twice_span, abs_in) : abs_in - flips * twice_span;
        const T reflected = twice_span - extra;
        const bool one_more = extra > reflected;
        x = one_more ? reflected : extra;
        if (!align) x = x + low;
        if (one_more != (in < 0)) m = -m;
      }
    }
    // clip_coordinates(_get_grad): NaN and x <= 0 give 0, x >= size - 1 gives size - 1; the edges
    // take no gradient
    const T max_val = static_cast<T>(size - 1);
    if (!(x > 0)) {
      x = 0;
      m = 0;
    } else if (!(x < max_val)) {
      x = max_val;
      m = 0;
    }
    *mult = m;
    return x;
  }
};

// floor(x) as the int32 lane torch converts it to (out of range or NaN: INT32_MIN, no tap).
template <typename T>
int64_t int_lane(T x) {
  if (!(x >= T(-2147483648.0) && x < T(2147483648.0))) return std::numeric_limits<int32_t>::min();
  return static_cast<int64_t>(x);
}

template <typename T>
struct BilinearTaps {
  T n, s, w, e, wt[4];
  int64_t at[4];  // plane offsets, -1: the tap reads 0
};

template <typename T>
BilinearTaps<T> bilinear_taps(T x, T y, int64_t H, int64_t W, bool must_in_bound) {
  BilinearTaps<T> t;
  const T x_w = std::floor(x), y_n = std::floor(y);
  t.w = x - x_w;
  t.e = T(1) - t.w;
  t.n = y - y_n;
  t.s = T(1) - t.n;
  t.wt[0] = t.s * t.e;
  t.wt[1] = t.s * t.w;
  t.wt[2] = t.n * t.e;
  t.wt[3] = t.n * t.w;
  const int64_t ix = int_lane(x_w), iy = int_lane(y_n);
  const bool w_in = must_in_bound || (ix > -1 && ix < W), n_in = must_in_bound || (iy > -1 && iy < H);
  const bool e_in = (must_in_bound || ix + 1 > -1) && ix + 1 < W, s_in = (must_in_bound || iy + 1 > -1) && iy + 1 < H;
  const bool in[4] = {w_in && n_in, e_in && n_in, w_in && s_in, e_in && s_in};
  const int64_t off[4] = {iy * W + ix, iy * W + ix + 1, (iy + 1) * W + ix, (iy + 1) * W + ix + 1};
  for (int k = 0; k < 4; ++k) t.at[k] = in[k] ? off[k] : -1;
  return t;
}

template <typename T>
void bilinear_forward_torch_vec(const Dims& d, const T* x, const T* g, T* out, int64_t padding_mode,
                                bool align_corners) {
  const bool fused = pm::torch_kernels_use_fma();
  const VecLocation<T> lw{d.W, align_corners, padding_mode, fused}, lh{d.H, align_corners, padding_mode, fused};
  const int64_t plane = d.H * d.W, oplane = d.OH * d.OW;
  each_point<T>(d, g, [&](int64_t n, int64_t o, T gx, T gy) {
    T m;
    const BilinearTaps<T> t = bilinear_taps(lw.apply(gx, &m), lh.apply(gy, &m), d.H, d.W, padding_mode != kZeros);
    for (int64_t c = 0; c < d.C; ++c) {
      const T* xc = x + (n * d.C + c) * plane;
      T v[4];
      for (int k = 0; k < 4; ++k) v[k] = t.at[k] < 0 ? T(0) : xc[t.at[k]];
      out[(n * d.C + c) * oplane + o] =
          fused ? pm::fma(v[3], t.wt[3], pm::fma(v[2], t.wt[2], pm::fma(v[1], t.wt[1], v[0] * t.wt[0])))
                : ((v[0] * t.wt[0] + v[1] * t.wt[1]) + v[2] * t.wt[2]) + v[3] * t.wt[3];
    }
  });
}

template <typename T>
void bilinear_backward_torch_vec(const Dims& d, const T* x, const T* g, const T* go, T* gi, T* gg,
                                 int64_t padding_mode, bool align_corners) {
  constexpr int64_t kLanes = 32 / static_cast<int64_t>(sizeof(T));  // torch's AVX2 Vectorized<T>::size()
  const bool fused = pm::torch_kernels_use_fma();
  const VecLocation<T> lw{d.W, align_corners, padding_mode, fused}, lh{d.H, align_corners, padding_mode, fused};
  const int64_t plane = d.H * d.W, oplane = d.OH * d.OW;
  std::vector<BilinearTaps<T>> taps(static_cast<size_t>(kLanes));
  T mx[kLanes], my[kLanes], gx[kLanes], gy[kLanes];
  for (int64_t n = 0; n < d.N; ++n) {
    for (int64_t o0 = 0; o0 < oplane; o0 += kLanes) {
      const int64_t len = std::min(kLanes, oplane - o0);
      for (int64_t l = 0; l < len; ++l) {
        const T* p = g + (n * oplane + o0 + l) * 2;
        taps[static_cast<size_t>(l)] =
            bilinear_taps(lw.apply(p[0], &mx[l]), lh.apply(p[1], &my[l]), d.H, d.W, padding_mode != kZeros);
        gx[l] = gy[l] = 0;
      }
      for (int64_t c = 0; c < d.C; ++c) {
        const T* xc = x + (n * d.C + c) * plane;
        T* gc = gi + (n * d.C + c) * plane;
        const T* goc = go + (n * d.C + c) * oplane + o0;
        for (int k = 0; k < 4; ++k)
          for (int64_t l = 0; l < len; ++l) {
            const BilinearTaps<T>& t = taps[static_cast<size_t>(l)];
            if (t.at[k] >= 0) gc[t.at[k]] += t.wt[k] * goc[l];
          }
        for (int64_t l = 0; l < len; ++l) {
          const BilinearTaps<T>& t = taps[static_cast<size_t>(l)];
          T v[4];
          for (int k = 0; k < 4; ++k) v[k] = t.at[k] < 0 ? T(0) : xc[t.at[k]];
          const T out = goc[l];
          if (fused) {
            gx[l] = pm::fma(pm::fma(v[3] - v[2], t.n, (v[1] - v[0]) * t.s), out, gx[l]);
            gy[l] = pm::fma(pm::fma(v[3] - v[1], t.w, (v[2] - v[0]) * t.e), out, gy[l]);
          } else {
            gx[l] = gx[l] + ((v[1] - v[0]) * t.s + (v[3] - v[2]) * t.n) * out;
            gy[l] = gy[l] + ((v[2] - v[0]) * t.e + (v[3] - v[1]) * t.w) * out;
          }
        }
      }
      for (int64_t l = 0; l < len; ++l) {
        T* q = gg + (n * oplane + o0 + l) * 2;
        q[0] = gx[l] * mx[l];
        q[1] = gy[l] * my[l];
      }
    }
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
    if (interpolation_mode == kBilinear) {
      bilinear_forward_torch_vec<T>(d, x, static_cast<const T*>(gr.data_ptr()), out, padding_mode, align_corners);
      return;
    }
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
    if (interpolation_mode == kBilinear) {
      bilinear_backward_torch_vec<T>(d, x, static_cast<const T*>(gr.data_ptr()), g, gi, gg, padding_mode,
                                     align_corners);
      return;
    }
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
