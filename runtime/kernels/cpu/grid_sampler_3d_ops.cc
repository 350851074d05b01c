// grid_sampler_3d and its backward (F.grid_sample on (N, C, D, H, W) inputs): each output point
// (n, d, h, w) reads input[n] at grid[n, d, h, w] = (x, y, z) in [-1, 1] (x along W, z along D).
// Modes: 0 trilinear ('bilinear'), 1 nearest (round half away from zero, as torch 1.13's 3-D
// kernel); torch has no bicubic for 5-D.
// Padding modes and coordinates as grid_sampler_2d (grid_sample_coords.h). The backward scatters
// grad_output through the same 8 weights into grad_input; grad_grid is the derivative of the
// weights along each axis times the coordinate's chain factor (zero for nearest, as torch).
#include <cmath>
#include <vector>

#include "generated/kernels/grid_sampler_3d.h"
#include "generated/kernels/grid_sampler_3d_backward.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/grid_sample_coords.h"
#include "runtime/kernels/tensor_memory.h"

namespace kiln {
namespace cpu {
namespace {

struct Dims3 {
  int64_t N, C, D, H, W, OD, OH, OW;
  int64_t plane() const { return D * H * W; }
  int64_t oplane() const { return OD * OH * OW; }
  bool inside(int64_t z, int64_t y, int64_t x) const { return z >= 0 && z < D && y >= 0 && y < H && x >= 0 && x < W; }
};

Dims3 check(const char* op, const TensorBase& input, const TensorBase& grid, int64_t mode, int64_t padding_mode) {
  KILN_CHECK(input.dtype() == grid.dtype(), op, "(): expected input and grid to have same dtype, but input has ",
             scalar_type_name(input.dtype()), " and grid has ", scalar_type_name(grid.dtype()));
  KILN_CHECK(is_floating_type(input.dtype()), op, "(): \"", op, "\" not implemented for '",
             scalar_type_name(input.dtype()), "'");
  KILN_CHECK(input.dim() == 5 && grid.dim() == 5, op,
             "(): expected 5D input and grid with same number of dimensions, but got input with sizes ",
             shape_str(input.sizes()), " and grid with sizes ", shape_str(grid.sizes()));
  KILN_CHECK(input.sizes()[0] == grid.sizes()[0], op,
             "(): expected grid and input to have same batch size, but got input with sizes ", shape_str(input.sizes()),
             " and grid with sizes ", shape_str(grid.sizes()));
  KILN_CHECK(grid.sizes()[4] == 3, op, "(): expected grid to have size 3 in last dimension, but got grid with sizes ",
             shape_str(grid.sizes()));
  for (int64_t i = 2; i < 5; ++i)
    KILN_CHECK(input.sizes()[i] > 0, op, "(): expected input to have non-empty spatial dimensions, but input has sizes ",
               shape_str(input.sizes()), " with dimension ", i, " being empty");
  KILN_CHECK(mode != grid::kBicubic, op, "(): bicubic interpolation only supports 4D input");
  KILN_CHECK(mode == grid::kBilinear || mode == grid::kNearest, op,
             "(): interpolation_mode must be 0 (bilinear) or 1 (nearest), got ", mode);
  KILN_CHECK(padding_mode >= 0 && padding_mode <= 2, op,
             "(): padding_mode must be 0 (zeros), 1 (border) or 2 (reflection), got ", padding_mode);
  const IntArrayRef s = input.sizes(), g = grid.sizes();
  return {s[0], s[1], s[2], s[3], s[4], g[1], g[2], g[3]};
}

// One output point's source: its coordinates (and their chain factors), the 8 trilinear corners'
// in-plane offsets (-1 outside) and weights, corner k = (dz, dy, dx) = bits (2, 1, 0) of k, in
// torch's order (tnw, tne, tsw, tse, bnw, bne, bsw, bse).
template <typename T>
struct Corners {
  T ix, iy, iz, mx, my, mz;
  int64_t x0, y0, z0;
  int64_t at[8];
  T w[8];

  // the linear weight along one axis of corner bit `b`, and its derivative by the coordinate
  static T lin(T i, int64_t i0, int b) { return b ? i - static_cast<T>(i0) : static_cast<T>(i0 + 1) - i; }
  static T dlin(int b) { return b ? T(1) : T(-1); }

  Corners(const Dims3& d, const T* p, int64_t padding_mode, bool align_corners) {
    ix = grid::source_index(p[0], d.W, padding_mode, align_corners, &mx);
    iy = grid::source_index(p[1], d.H, padding_mode, align_corners, &my);
    iz = grid::source_index(p[2], d.D, padding_mode, align_corners, &mz);
    x0 = static_cast<int64_t>(std::floor(ix));
    y0 = static_cast<int64_t>(std::floor(iy));
    z0 = static_cast<int64_t>(std::floor(iz));
    for (int k = 0; k < 8; ++k) {
      const int bx = k & 1, by = (k >> 1) & 1, bz = (k >> 2) & 1;
      const int64_t x = x0 + bx, y = y0 + by, z = z0 + bz;
      at[k] = d.inside(z, y, x) ? (z * d.H + y) * d.W + x : -1;
      w[k] = lin(ix, x0, bx) * lin(iy, y0, by) * lin(iz, z0, bz);
    }
  }
};

template <typename T>
int64_t nearest_offset(const Dims3& d, const T* p, int64_t padding_mode, bool align_corners) {
  const T ix = grid::source_index(p[0], d.W, padding_mode, align_corners, static_cast<T*>(nullptr));
  const T iy = grid::source_index(p[1], d.H, padding_mode, align_corners, static_cast<T*>(nullptr));
  const T iz = grid::source_index(p[2], d.D, padding_mode, align_corners, static_cast<T*>(nullptr));
  // torch 1.13's 3-D kernel rounds half away from zero (std::round), its 2-D one half to even
  const int64_t x = static_cast<int64_t>(std::round(ix)), y = static_cast<int64_t>(std::round(iy)),
                z = static_cast<int64_t>(std::round(iz));
  return d.inside(z, y, x) ? (z * d.H + y) * d.W + x : -1;
}

}  // namespace

TensorBase grid_sampler_3d(const TensorBase& input, const TensorBase& grid, int64_t interpolation_mode,
                           int64_t padding_mode, bool align_corners) {
  const Dims3 d = check("grid_sampler_3d", input, grid, interpolation_mode, padding_mode);
  if (input.dtype() == ScalarType::Float16 || input.dtype() == ScalarType::BFloat16)
    return cast_to(grid_sampler_3d(cast_to(input, ScalarType::Float32), cast_to(grid, ScalarType::Float32),
                                   interpolation_mode, padding_mode, align_corners), input.dtype());
  TensorBase result = zeros_cpu({d.N, d.C, d.OD, d.OH, d.OW}, input.dtype());
  if (result.numel() == 0) return result;
  const TensorBase in = contiguous_cpu(input), gr = contiguous_cpu(grid);
  KILN_DISPATCH_FLOATING_TYPES(input.dtype(), "grid_sampler_3d", [&] {
    using T = scalar_t;
    const T* x = static_cast<const T*>(in.data_ptr());
    const T* g = static_cast<const T*>(gr.data_ptr());
    T* out = static_cast<T*>(result.data_ptr());
    const int64_t plane = d.plane(), oplane = d.oplane();
    for (int64_t n = 0; n < d.N; ++n)
      for (int64_t o = 0; o < oplane; ++o) {
        const T* p = g + (n * oplane + o) * 3;
        const T* xn = x + n * d.C * plane;
        T* on = out + n * d.C * oplane + o;
        if (interpolation_mode == grid::kNearest) {
          const int64_t at = nearest_offset(d, p, padding_mode, align_corners);
          if (at >= 0)
            for (int64_t c = 0; c < d.C; ++c) on[c * oplane] = xn[c * plane + at];
          continue;
        }
        const Corners<T> k(d, p, padding_mode, align_corners);
        for (int64_t c = 0; c < d.C; ++c) {
          const T* xc = xn + c * plane;
          T acc = 0;
          for (int j = 0; j < 8; ++j)
            if (k.at[j] >= 0) acc += xc[k.at[j]] * k.w[j];
          on[c * oplane] = acc;
        }
      }
  });
  return result;
}

std::vector<TensorBase> grid_sampler_3d_backward(const TensorBase& grad_output, const TensorBase& input,
                                                 const TensorBase& grid, int64_t interpolation_mode,
                                                 int64_t padding_mode, bool align_corners) {
  const Dims3 d = check("grid_sampler_3d_backward", input, grid, interpolation_mode, padding_mode);
  const DimVector want{d.N, d.C, d.OD, d.OH, d.OW};
  KILN_CHECK(grad_output.sizes() == IntArrayRef(want), "grid_sampler_3d_backward(): expected grad_output of shape ",
             shape_str(want), ", got ", shape_str(grad_output.sizes()));
  KILN_CHECK(grad_output.dtype() == input.dtype(), "grid_sampler_3d_backward(): expected grad_output of dtype ",
             scalar_type_name(input.dtype()), ", got ", scalar_type_name(grad_output.dtype()));
  if (input.dtype() == ScalarType::Float16 || input.dtype() == ScalarType::BFloat16) {
    const ScalarType f = ScalarType::Float32;
    std::vector<TensorBase> r = grid_sampler_3d_backward(cast_to(grad_output, f), cast_to(input, f), cast_to(grid, f),
                                                         interpolation_mode, padding_mode, align_corners);
    return {cast_to(r[0], input.dtype()), cast_to(r[1], input.dtype())};
  }
  TensorBase grad_input = zeros_cpu(input.sizes(), input.dtype());
  TensorBase grad_grid = zeros_cpu(grid.sizes(), grid.dtype());
  if (grad_output.numel() == 0) return {grad_input, grad_grid};
  const TensorBase in = contiguous_cpu(input), gr = contiguous_cpu(grid), go = contiguous_cpu(grad_output);
  KILN_DISPATCH_FLOATING_TYPES(input.dtype(), "grid_sampler_3d_backward", [&] {
    using T = scalar_t;
    const T* x = static_cast<const T*>(in.data_ptr());
    const T* g = static_cast<const T*>(gr.data_ptr());
    const T* gout = static_cast<const T*>(go.data_ptr());
    T* gi = static_cast<T*>(grad_input.data_ptr());
    T* gg = static_cast<T*>(grad_grid.data_ptr());
    const int64_t plane = d.plane(), oplane = d.oplane();
    for (int64_t n = 0; n < d.N; ++n)
      for (int64_t o = 0; o < oplane; ++o) {
        const T* p = g + (n * oplane + o) * 3;
        const T* xn = x + n * d.C * plane;
        T* gin = gi + n * d.C * plane;
        const T* gon = gout + n * d.C * oplane + o;
        if (interpolation_mode == grid::kNearest) {
          const int64_t at = nearest_offset(d, p, padding_mode, align_corners);
          if (at >= 0)
            for (int64_t c = 0; c < d.C; ++c) gin[c * plane + at] += gon[c * oplane];
          continue;  // grad_grid stays zero
        }
        const Corners<T> k(d, p, padding_mode, align_corners);
        T gix = 0, giy = 0, giz = 0;
        for (int64_t c = 0; c < d.C; ++c) {
          const T gv = gon[c * oplane];
          const T* xc = xn + c * plane;
          T* gc = gin + c * plane;
          for (int j = 0; j < 8; ++j) {
            if (k.at[j] < 0) continue;
            const int bx = j & 1, by = (j >> 1) & 1, bz = (j >> 2) & 1;
            const T v = xc[k.at[j]] * gv;
            const T lx = Corners<T>::lin(k.ix, k.x0, bx), ly = Corners<T>::lin(k.iy, k.y0, by),
                    lz = Corners<T>::lin(k.iz, k.z0, bz);
            gc[k.at[j]] += k.w[j] * gv;
            gix += Corners<T>::dlin(bx) * v * ly * lz;
            giy += Corners<T>::dlin(by) * v * lx * lz;
            giz += Corners<T>::dlin(bz) * v * lx * ly;
          }
        }
        T* ggp = gg + (n * oplane + o) * 3;
        ggp[0] = k.mx * gix;
        ggp[1] = k.my * giy;
        ggp[2] = k.mz * giz;
      }
  });
  return {grad_input, grad_grid};
}

}  // namespace cpu
}  // namespace kiln
