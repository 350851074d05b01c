// grid_sample's coordinate arithmetic, shared by grid_sampler_2d and grid_sampler_3d: a grid value
// in [-1, 1] unnormalized to a pixel coordinate and padded (border clips, reflection mirrors), each
// step with its derivative when asked (the chain factor of grad_grid). The arithmetic is torch's
// (aten/src/ATen/native/GridSampler.h), so float32 coordinates round as torch's do.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace kiln {
namespace cpu {
namespace grid {

enum { kBilinear = 0, kNearest = 1, kBicubic = 2 };
enum { kZeros = 0, kBorder = 1, kReflection = 2 };

template <typename T>
inline T unnormalize(T coord, int64_t size, bool align_corners, T* grad) {
  if (align_corners) {
    if (grad) *grad = static_cast<T>(size - 1) / 2;
    return ((coord + 1) / 2) * (size - 1);
  }
  if (grad) *grad = static_cast<T>(size) / 2;
  return ((coord + 1) * size - 1) / 2;
}

template <typename T>
inline T clip(T in, int64_t limit, T* grad) {
  if (!grad) return std::min(static_cast<T>(limit - 1), std::max(in, static_cast<T>(0)));  // torch's: NaN -> limit - 1
  if (in <= static_cast<T>(0)) {
    if (grad) *grad = 0;
    return 0;
  }
  const T max = static_cast<T>(limit - 1);
  if (in >= max) {
    if (grad) *grad = 0;
    return max;
  }
  if (grad) *grad = 1;
  return in;
}

template <typename T>
inline T reflect(T in, int64_t twice_low, int64_t twice_high, T* grad) {
  if (twice_low == twice_high) {
    if (grad) *grad = 0;
    return 0;
  }
  const T min = static_cast<T>(twice_low) / 2;
  const T span = static_cast<T>(twice_high - twice_low) / 2;
  in = in - min;
  T mult = 1;
  if (in < 0) {
    mult = -1;
    in = -in;
  }
  const T extra = std::fmod(in, span);
  const int64_t flips = static_cast<int64_t>(std::floor(in / span));
  if (flips % 2 == 0) {
    if (grad) *grad = mult;
    return extra + min;
  }
  if (grad) *grad = -mult;
  return span - extra + min;
}

template <typename T>
inline T safe_downgrade(T x) {
  if (!std::isfinite(static_cast<double>(x)) || x > static_cast<T>(std::numeric_limits<int>::max()) ||
      x < static_cast<T>(std::numeric_limits<int>::min()))
    return static_cast<T>(-100.0);
  return x;
}

// Padding applied to an unnormalized coordinate; *grad gets its derivative when asked.
template <typename T>
inline T pad_coordinate(T coord, int64_t size, int64_t padding_mode, bool align_corners, T* grad) {
  T g = 1;
  if (padding_mode == kBorder) {
    coord = clip(coord, size, grad ? &g : nullptr);
  } else if (padding_mode == kReflection) {
    T gr = 1, gc = 1;
    coord = align_corners ? reflect(coord, 0, 2 * (size - 1), &gr) : reflect(coord, -1, 2 * size - 1, &gr);
    coord = clip(coord, size, grad ? &gc : nullptr);
    g = gr * gc;
  }
  if (grad) *grad = g;
  return safe_downgrade(coord);
}

template <typename T>
inline T source_index(T coord, int64_t size, int64_t padding_mode, bool align_corners, T* grad) {
  T gu;
  coord = unnormalize(coord, size, align_corners, &gu);
  T gp = 1;
  coord = pad_coordinate(coord, size, padding_mode, align_corners, grad ? &gp : nullptr);
  if (grad) *grad = gu * gp;
  return coord;
}

}  // namespace grid
}  // namespace cpu
}  // namespace kiln
