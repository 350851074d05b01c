// pixel_shuffle / pixel_unshuffle (reshapes around a permute, torch's checks and messages) and
// affine_grid_generator (torch's: a base grid of normalized output coordinates for each of the N
// matrices, bmm by theta^T, so autograd gives theta's gradient through bmm, with torch's bits).
#include "generated/api/bmm.h"
#include "generated/api/clone.h"
#include "generated/api/contiguous.h"
#include "generated/api/div.h"
#include "generated/api/expand.h"
#include "generated/api/linspace.h"
#include "generated/api/mul.h"
#include "generated/api/ones.h"
#include "generated/api/permute.h"
#include "generated/api/reshape.h"
#include "generated/api/stack.h"
#include "generated/api/transpose.h"
#include "generated/api/zeros.h"
#include "generated/kernels/composite/affine_grid_generator.h"
#include "generated/kernels/composite/pixel_shuffle.h"
#include "generated/kernels/composite/pixel_unshuffle.h"

namespace kiln {
namespace composite_implicit {
namespace {

DimVector batch_dims(const Tensor& self) {
  return DimVector(self.sizes().begin(), self.sizes().end() - 3);
}

DimVector permutation(int64_t batch, std::initializer_list<int64_t> tail) {
  DimVector p;
  for (int64_t i = 0; i < batch; ++i) p.push_back(i);
  for (int64_t t : tail) p.push_back(batch + t);
  return p;
}

Tensor linspace_from_neg_one(const Tensor& theta, int64_t steps, bool align_corners) {
  if (steps <= 1) return kiln::zeros({1}, theta.scalar_type());
  Tensor range = kiln::linspace(-1, 1, steps, theta.scalar_type());
  // as torch: range * (steps - 1) / steps, two roundings
  if (!align_corners) range = kiln::div(kiln::mul(range, steps - 1), steps);
  return range;
}

// torch's pixel_shuffle always returns a new tensor: a reshape that stayed a view is copied
Tensor fresh(const Tensor& y, const Tensor& self) {
  return y.numel() > 0 && y.data_ptr() == self.data_ptr() ? kiln::clone(y) : y;
}

}  // namespace

Tensor pixel_shuffle(const Tensor& self, int64_t upscale_factor) {
  KILN_CHECK(self.dim() >= 3, "pixel_shuffle expects input to have at least 3 dimensions, but got input with ",
             self.dim(), " dimension(s)");
  KILN_CHECK(upscale_factor > 0, "pixel_shuffle expects a positive upscale_factor, but got ", upscale_factor);
  const int64_t r = upscale_factor, c = self.sizes()[self.dim() - 3], h = self.sizes()[self.dim() - 2],
                w = self.sizes()[self.dim() - 1];
  KILN_CHECK(r <= (int64_t{1} << 31), "pixel_shuffle: invalid upscale_factor (too large): ", r);
  KILN_CHECK(c % (r * r) == 0, "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
             "of upscale_factor, but input.size(-3)=", c, " is not divisible by ", r * r);
  DimVector split = batch_dims(self), out = batch_dims(self);
  const int64_t b = static_cast<int64_t>(split.size());
  for (int64_t v : {c / (r * r), r, r, h, w}) split.push_back(v);
  for (int64_t v : {c / (r * r), h * r, w * r}) out.push_back(v);
  Tensor y = kiln::reshape(kiln::permute(kiln::reshape(self, split), permutation(b, {0, 3, 1, 4, 2})), out);
  return fresh(y, self);
}

Tensor pixel_unshuffle(const Tensor& self, int64_t downscale_factor) {
  KILN_CHECK(self.dim() >= 3, "pixel_unshuffle expects input to have at least 3 dimensions, but got input with ",
             self.dim(), " dimension(s)");
  KILN_CHECK(downscale_factor > 0, "pixel_unshuffle expects a positive downscale_factor, but got ", downscale_factor);
  const int64_t r = downscale_factor, c = self.sizes()[self.dim() - 3], h = self.sizes()[self.dim() - 2],
                w = self.sizes()[self.dim() - 1];
  KILN_CHECK(r <= (int64_t{1} << 31), "pixel_unshuffle: invalid downscale_factor (too large): ", r);
  KILN_CHECK(h % r == 0, "pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=", h,
             " is not divisible by ", r);
  KILN_CHECK(w % r == 0, "pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)=", w,
             " is not divisible by ", r);
  DimVector split = batch_dims(self), out = batch_dims(self);
  const int64_t b = static_cast<int64_t>(split.size());
  for (int64_t v : {c, h / r, r, w / r, r}) split.push_back(v);
  for (int64_t v : {c * r * r, h / r, w / r}) out.push_back(v);
  Tensor y = kiln::reshape(kiln::permute(kiln::reshape(self, split), permutation(b, {0, 2, 4, 1, 3})), out);
  return fresh(y, self);
}

Tensor affine_grid_generator(const Tensor& theta, IntArrayRef size, bool align_corners) {
  KILN_CHECK(size.size() == 4 || size.size() == 5,
             "affine_grid_generator: invalid size: AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs, got size ",
             shape_str(size));
  const bool two_d = size.size() == 4;
  const int64_t rows = two_d ? 2 : 3;
  KILN_CHECK(theta.dim() == 3 && theta.sizes()[0] == size[0] && theta.sizes()[1] == rows &&
                 theta.sizes()[2] == rows + 1,
             "affine_grid_generator: expected theta of shape [", size[0], ", ", rows, ", ", rows + 1, "] for size ",
             shape_str(size), ", got ", shape_str(theta.sizes()));
  KILN_CHECK(is_floating_type(theta.scalar_type()), "affine_grid_generator: expected a floating-point theta, got ",
             scalar_type_name(theta.scalar_type()));
  DimVector spatial(size.begin() + 2, size.end());  // (H, W) or (D, H, W)
  for (int64_t s : spatial) KILN_CHECK(s >= 0, "affine_grid_generator: negative size ", shape_str(size));
  const int64_t nd = static_cast<int64_t>(spatial.size());
  // coordinate k of the base grid (x along the last dim, then y, then z) broadcast to `spatial`
  std::vector<Tensor> coords;
  for (int64_t k = 0; k < nd; ++k) {
    const int64_t dim = nd - 1 - k;
    DimVector shape(nd, 1);
    shape[dim] = spatial[dim] <= 1 ? 1 : spatial[dim];
    coords.push_back(kiln::expand(kiln::reshape(linspace_from_neg_one(theta, spatial[dim], align_corners), shape),
                                  spatial));
  }
  coords.push_back(kiln::ones(spatial, theta.scalar_type()));
  int64_t points = 1;
  for (int64_t s : spatial) points *= s;
  // torch's make_base_grid: one (spatial..., nd + 1) grid for each matrix, then a bmm
  DimVector batched{size[0]};
  for (int64_t s : spatial) batched.push_back(s);
  batched.push_back(nd + 1);
  const Tensor base = kiln::reshape(kiln::contiguous(kiln::expand(kiln::stack(coords, -1), batched)),
                                    {size[0], points, nd + 1});
  const Tensor grid = kiln::bmm(base, kiln::transpose(theta, 1, 2));  // (N, points, nd)
  DimVector out{size[0]};
  for (int64_t s : spatial) out.push_back(s);
  out.push_back(nd);
  return kiln::reshape(grid, out);
}

}  // namespace composite_implicit
}  // namespace kiln
