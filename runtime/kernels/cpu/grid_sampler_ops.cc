// grid_sampler_2d and its backward (F.grid_sample on (N, C, H, W) inputs): each output point
// (n, h, w) reads input[n] at grid[n, h, w] = (x, y) in [-1, 1] (x along W). Modes: 0 bilinear,
// 1 nearest (round half to even), 2 bicubic (A = -0.75); padding modes: 0 zeros, 1 border,
// 2 reflection. Bilinear and bicubic sampling follow torch's vectorised CPU kernel
// (bilinear_forward_torch_vec, bicubic_forward_torch_vec), nearest the scalar arithmetic of
// aten/src/ATen/native/GridSampler.h (the same values); so does each backward: grad_input scattered through the same weights, grad_grid the derivative of the weights
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
    const T x = pad(unnormalize(g), mult);
    *mult *= scale();
    return x;
  }
  // An unnormalized coordinate padded (reflected, clipped); *mult: d padded / d x.
  T pad(T x, T* mult) const {
    T m = 1;
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

// torch's AVX2 Vectorized<T>::size(): the points one vector of its kernels holds.
template <typename T>
constexpr int64_t kLanes = 32 / static_cast<int64_t>(sizeof(T));

// The vectors of points torch's grid_sample_2d_grid_slice_iterator hands its kernel: runs of kLanes over
// the flattened output when the grid's (H, W) is contiguous (for its points or for each coordinate), over
// each output row otherwise. f(start, len) for each.
template <typename T, typename F>
void each_vector(const Dims& d, bool rows_apart, F f) {
  const int64_t oplane = d.OH * d.OW;
  const int64_t run = rows_apart ? d.OW : oplane;
  for (int64_t r0 = 0; r0 < oplane; r0 += run)
    for (int64_t o0 = r0; o0 < r0 + run; o0 += kLanes<T>) f(o0, std::min(kLanes<T>, r0 + run - o0));
}

// Whether torch walks `grid` row by row (its (H, W) not contiguous, as one or per coordinate).
bool grid_rows_apart(const TensorBase& grid) {
  const int64_t OH = grid.sizes()[1], OW = grid.sizes()[2];
  const int64_t sH = grid.strides()[1], sW = grid.strides()[2], sC = grid.strides()[3];
  const bool hw_contiguous = (OW == 1 || sW == 1) && (OH == 1 || sH == OW);
  const bool points_contiguous = (OW == 1 || sW == 2) && (OH == 1 || sH == 2 * OW) && sC == 1;
  return !points_contiguous && !hw_contiguous;
}

template <typename T>
void bilinear_backward_torch_vec(const Dims& d, const T* x, const T* g, const T* go, T* gi, T* gg,
                                 int64_t padding_mode, bool align_corners, bool rows_apart) {
  constexpr int64_t L = kLanes<T>;
  const bool fused = pm::torch_kernels_use_fma();
  const VecLocation<T> lw{d.W, align_corners, padding_mode, fused}, lh{d.H, align_corners, padding_mode, fused};
  const int64_t plane = d.H * d.W, oplane = d.OH * d.OW;
  std::vector<BilinearTaps<T>> taps(static_cast<size_t>(L));
  T mx[L], my[L], gx[L], gy[L];
  for (int64_t n = 0; n < d.N; ++n) {
    each_vector<T>(d, rows_apart, [&](int64_t o0, int64_t len) {
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
    });
  }
}

// Bicubic sampling (A = -0.75) as torch's vectorised kernel: the coefficients' polynomials and the taps'
// sums with its multiply-adds (fused where its AVX2 build fuses), each tap's coordinate padded as a
// whole number; the backward's input gradient scattered tap by tap over a vector of points.
template <typename T>
struct Cubic {
  bool fused;
  T madd(T a, T b, T c) const { return fused ? pm::fma(a, b, c) : a * b + c; }
  // ((A x - 5A) x + 8A) x - 4A for 1 < x < 2 and ((A + 2) x - (A + 3)) x x + 1 for x <= 1; torch's build
  // fuses the second's steps only
  static T outer(T x) { return ((T(-0.75) * x + T(3.75)) * x - T(6)) * x + T(3); }
  T inner(T x) const { return madd(madd(T(1.25), x, T(-2.25)) * x, x, T(1)); }
  void coefficients(T c[4], T t) const {
    c[0] = outer(t + T(1));
    c[1] = inner(t);
    c[2] = inner(T(1) - t);
    c[3] = outer(T(2) - t);
  }
  void gradients(T c[4], T t) const {
    T x = T(-1) - t;
    c[0] = (T(2.25) * x + T(7.5)) * x + T(6);
    x = T(0) - t;
    c[1] = (T(-3.75) * x - T(4.5)) * x;
    x = T(1) - t;
    c[2] = (T(3.75) * x - T(4.5)) * x;
    x = T(2) - t;
    c[3] = (T(-2.25) * x + T(7.5)) * x - T(6);
  }
  // the four taps of a row: ((c0 v0 + c1 v1) + c2 v2) + c3 v3, the first product fused into the first sum
  T row(const T c[4], const T v[4]) const { return (madd(c[0], v[0], c[1] * v[1]) + c[2] * v[2]) + c[3] * v[3]; }
  // the four rows: c0 r0 + c1 r1 + c2 r2 + c3 r3 with each later product fused into the running sum
  T column(const T c[4], const T r[4]) const { return madd(c[3], r[3], madd(c[2], r[2], madd(c[1], r[1], c[0] * r[0]))); }
};

// A bicubic tap's plane offset (-1: it reads 0): the coordinate padded (compute_coordinates), then
// truncated to int32 as torch's lanes are.
template <typename T>
int64_t cubic_tap(const VecLocation<T>& lw, const VecLocation<T>& lh, T xx, T yy, const Dims& d) {
  T m;
  const int64_t ix = int_lane(lw.pad(xx, &m)), iy = int_lane(lh.pad(yy, &m));
  if (lw.padding == kZeros && !(ix > -1 && ix < d.W && iy > -1 && iy < d.H)) return -1;
  return iy * d.W + ix;
}

template <typename T>
void bicubic_forward_torch_vec(const Dims& d, const T* x, const T* g, T* out, int64_t padding_mode,
                               bool align_corners) {
  const bool fused = pm::torch_kernels_use_fma();
  const VecLocation<T> lw{d.W, align_corners, padding_mode, fused}, lh{d.H, align_corners, padding_mode, fused};
  const Cubic<T> cubic{fused};
  const int64_t plane = d.H * d.W, oplane = d.OH * d.OW;
  each_point<T>(d, g, [&](int64_t n, int64_t o, T gx, T gy) {
    const T ux = lw.unnormalize(gx), uy = lh.unnormalize(gy);
    const T ix = std::floor(ux), iy = std::floor(uy);
    T cx[4], cy[4];
    cubic.coefficients(cx, ux - ix);
    cubic.coefficients(cy, uy - iy);
    int64_t at[4][4];  // [row j][column i]
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i) at[j][i] = cubic_tap(lw, lh, ix + T(-1 + i), iy + T(-1 + j), d);
    for (int64_t c = 0; c < d.C; ++c) {
      const T* xc = x + (n * d.C + c) * plane;
      T rows[4];
      for (int j = 0; j < 4; ++j) {
        T v[4];
        for (int i = 0; i < 4; ++i) v[i] = at[j][i] < 0 ? T(0) : xc[at[j][i]];
        rows[j] = cubic.row(cx, v);
      }
      out[(n * d.C + c) * oplane + o] = cubic.column(cy, rows);
    }
  });
}

template <typename T>
void bicubic_backward_torch_vec(const Dims& d, const T* x, const T* g, const T* go, T* gi, T* gg,
                                int64_t padding_mode, bool align_corners, bool rows_apart) {
  constexpr int64_t L = kLanes<T>;
  const bool fused = pm::torch_kernels_use_fma();
  const VecLocation<T> lw{d.W, align_corners, padding_mode, fused}, lh{d.H, align_corners, padding_mode, fused};
  const Cubic<T> cubic{fused};
  const int64_t plane = d.H * d.W, oplane = d.OH * d.OW;
  struct Point {
    T cx[4], cy[4], dx[4], dy[4];
    int64_t at[4][4];  // [column i][row j], the order torch walks them
  };
  std::vector<Point> pts(static_cast<size_t>(L));
  T gx[L], gy[L];
  for (int64_t n = 0; n < d.N; ++n) {
    each_vector<T>(d, rows_apart, [&](int64_t o0, int64_t len) {
      for (int64_t l = 0; l < len; ++l) {
        const T* p = g + (n * oplane + o0 + l) * 2;
        Point& q = pts[static_cast<size_t>(l)];
        const T ux = lw.unnormalize(p[0]), uy = lh.unnormalize(p[1]);
        const T ix = std::floor(ux), iy = std::floor(uy);
        cubic.coefficients(q.cx, ux - ix);
        cubic.coefficients(q.cy, uy - iy);
        cubic.gradients(q.dx, ux - ix);
        cubic.gradients(q.dy, uy - iy);
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j) q.at[i][j] = cubic_tap(lw, lh, ix + T(-1 + i), iy + T(-1 + j), d);
        gx[l] = gy[l] = 0;
      }
      for (int64_t c = 0; c < d.C; ++c) {
        const T* xc = x + (n * d.C + c) * plane;
        T* gc = gi + (n * d.C + c) * plane;
        const T* goc = go + (n * d.C + c) * oplane + o0;
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j) {
            for (int64_t l = 0; l < len; ++l) {
              const Point& q = pts[static_cast<size_t>(l)];
              if (q.at[i][j] >= 0) gc[q.at[i][j]] += goc[l] * q.cx[i] * q.cy[j];
            }
            for (int64_t l = 0; l < len; ++l) {
              const Point& q = pts[static_cast<size_t>(l)];
              const T val = q.at[i][j] < 0 ? T(0) : xc[q.at[i][j]];
              gx[l] = cubic.madd(-(val * goc[l] * q.dx[i]), q.cy[j], gx[l]);
              gy[l] = cubic.madd(-(val * goc[l] * q.dy[j]), q.cx[i], gy[l]);
            }
          }
      }
      for (int64_t l = 0; l < len; ++l) {
        T* q = gg + (n * oplane + o0 + l) * 2;
        q[0] = gx[l] * lw.scale();
        q[1] = gy[l] * lh.scale();
      }
    });
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
    if (interpolation_mode == kBicubic) {
      bicubic_forward_torch_vec<T>(d, x, static_cast<const T*>(gr.data_ptr()), out, padding_mode, align_corners);
      return;
    }
    // nearest: the tap at the rounded coordinate (round half to even), as torch's kernels
    const int64_t plane = d.H * d.W, oplane = d.OH * d.OW;
    each_point<T>(d, static_cast<const T*>(gr.data_ptr()), [&](int64_t n, int64_t o, T gx, T gy) {
      const T* xn = x + n * d.C * plane;
      T* on = out + n * d.C * oplane + o;
      const T ix = source_index(gx, d.W, padding_mode, align_corners, static_cast<T*>(nullptr));
      const T iy = source_index(gy, d.H, padding_mode, align_corners, static_cast<T*>(nullptr));
      const int64_t xi = static_cast<int64_t>(std::nearbyint(ix)), yi = static_cast<int64_t>(std::nearbyint(iy));
      if (!inside(yi, xi, d.H, d.W)) return;
      for (int64_t c = 0; c < d.C; ++c) on[c * oplane] = xn[c * plane + yi * d.W + xi];
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
  const bool rows_apart = grid_rows_apart(grid);  // before the copy: torch walks the grid as it lies
  const TensorBase in = contiguous_cpu(input), gr = contiguous_cpu(grid), go = contiguous_cpu(grad_output);
  KILN_DISPATCH_FLOATING_TYPES(input.dtype(), "grid_sampler_2d_backward", [&] {
    using T = scalar_t;
    const T* x = static_cast<const T*>(in.data_ptr());
    const T* g = static_cast<const T*>(go.data_ptr());
    T* gi = static_cast<T*>(grad_input.data_ptr());
    T* gg = static_cast<T*>(grad_grid.data_ptr());
    if (interpolation_mode == kBilinear) {
      bilinear_backward_torch_vec<T>(d, x, static_cast<const T*>(gr.data_ptr()), g, gi, gg, padding_mode,
                                     align_corners, rows_apart);
      return;
    }
    if (interpolation_mode == kBicubic) {
      bicubic_backward_torch_vec<T>(d, x, static_cast<const T*>(gr.data_ptr()), g, gi, gg, padding_mode,
                                    align_corners, rows_apart);
      return;
    }
    // nearest: each point's gradient added to its tap, point after point (torch's order too); none to the grid
    const int64_t plane = d.H * d.W, oplane = d.OH * d.OW;
    each_point<T>(d, static_cast<const T*>(gr.data_ptr()), [&](int64_t n, int64_t o, T gx, T gy) {
      T* gin = gi + n * d.C * plane;
      const T* gon = g + n * d.C * oplane + o;
      const T ix = source_index(gx, d.W, padding_mode, align_corners, static_cast<T*>(nullptr));
      const T iy = source_index(gy, d.H, padding_mode, align_corners, static_cast<T*>(nullptr));
      const int64_t xi = static_cast<int64_t>(std::nearbyint(ix)), yi = static_cast<int64_t>(std::nearbyint(iy));
      if (inside(yi, xi, d.H, d.W))
        for (int64_t c = 0; c < d.C; ++c) gin[c * plane + yi * d.W + xi] += gon[c * oplane];
    });
  });
  return {grad_input, grad_grid};
}

}  // namespace cpu
}  // namespace kiln
