// Separable resampling along one dim at a time: each output position o of a dim reads `count(o)`
// (input index, weight) taps. F.interpolate's modes (upsample_ops.cc), the antialiased ones
// (upsample_aa_ops.cc) and area pooling all reduce to this: the forward sums the taps of each dim
// in turn, the backward scatters grad_output through the same taps (the transpose).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace kiln {
namespace cpu {

// torch's area_pixel_compute_scale: the input step per output step, (in - 1) / (out - 1) with
// align_corners, else 1 / scale_factor when one is given, else in / out.
template <typename T>
T pixel_scale(int64_t in, int64_t out, bool align_corners, const std::optional<double>& scale) {
  if (align_corners) return out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0);
  return scale.has_value() && *scale > 0 ? static_cast<T>(1.0 / *scale) : static_cast<T>(in) / static_cast<T>(out);
}

// The taps of one spatial dim: for output position o, taps o * k .. o * k + count(o) - 1.
template <typename T>
struct Taps {
  int64_t in = 0, out = 0, k = 1;
  std::vector<int64_t> index;
  std::vector<T> weight;
  std::vector<int64_t> counts;  // empty: every position has k taps (antialias varies it)
  int64_t count(int64_t o) const { return counts.empty() ? k : counts[o]; }
};

// (outer, in, inner) -> (outer, out, inner) through one dim's taps, summed in tap order from 0
// (0 + w0 x0 + w1 x1 ...). A dim before the last sums whole rows of `inner` elements at a time, a
// vector loop per tap; the (outer) blocks split across threads.
template <typename T>
void resample_dim(const T* x, T* y, int64_t outer, int64_t inner, const Taps<T>& t) {
#pragma omp parallel for schedule(static) if (outer > 1 && outer * t.out * inner > 32768)
  for (int64_t a = 0; a < outer; ++a) {
    const T* xa = x + a * t.in * inner;
    T* ya = y + a * t.out * inner;
    for (int64_t o = 0; o < t.out; ++o) {
      T* yo = ya + o * inner;
      const int64_t n = t.count(o);
      const int64_t* index = t.index.data() + o * t.k;
      const T* weight = t.weight.data() + o * t.k;
      if (inner == 1) {
        T acc = 0;
        for (int64_t j = 0; j < n; ++j) acc += weight[j] * xa[index[j]];
        yo[0] = acc;
        continue;
      }
      if (n == 0) {
        std::fill(yo, yo + inner, T(0));
        continue;
      }
      const T w0 = weight[0];
      const T* x0 = xa + index[0] * inner;
#pragma omp simd
      for (int64_t b = 0; b < inner; ++b) yo[b] = T(0) + w0 * x0[b];
      for (int64_t j = 1; j < n; ++j) {
        const T w = weight[j];
        const T* xj = xa + index[j] * inner;
#pragma omp simd
        for (int64_t b = 0; b < inner; ++b) yo[b] += w * xj[b];
      }
    }
  }
}

// The transpose: (outer, out, inner) -> (outer, in, inner), scattered through the taps.
template <typename T>
void scatter_dim(const T* g, T* gx, int64_t outer, int64_t inner, const Taps<T>& t) {
  std::fill(gx, gx + outer * t.in * inner, T(0));
#pragma omp parallel for schedule(static) if (outer > 1 && outer * t.out * inner > 32768)
  for (int64_t a = 0; a < outer; ++a) {
    const T* ga = g + a * t.out * inner;
    T* gxa = gx + a * t.in * inner;
    for (int64_t o = 0; o < t.out; ++o) {
      const T* go = ga + o * inner;
      const int64_t n = t.count(o);
      for (int64_t j = 0; j < n; ++j) {
        const T w = t.weight[o * t.k + j];
        T* dst = gxa + t.index[o * t.k + j] * inner;
#pragma omp simd
        for (int64_t b = 0; b < inner; ++b) dst[b] += w * go[b];
      }
    }
  }
}

// Spatial dim j (0-based, after N and C) of a contiguous (N, C, *spatial) tensor of `shape` as
// (outer, size, inner).
inline void split_at_dim(const std::vector<int64_t>& shape, size_t j, int64_t& outer, int64_t& inner) {
  outer = 1;
  inner = 1;
  for (size_t q = 0; q < j + 2; ++q) outer *= shape[q];
  for (size_t q = j + 3; q < shape.size(); ++q) inner *= shape[q];
}

// Resamples contiguous `x` (N, C, *spatial) of `shape` through taps[j] per spatial dim, the last
// dim first (torch's order, which float32 rounding follows), into `y` (sized by the caller).
template <typename T>
void resample_separable(const T* x, T* y, std::vector<int64_t> shape, const std::vector<const Taps<T>*>& taps) {
  std::unique_ptr<T[]> buffers[2];  // every element written by resample_dim: no zeroing
  const T* cur = x;
  for (size_t j = taps.size(); j-- > 0;) {
    int64_t outer, inner;
    split_at_dim(shape, j, outer, inner);
    shape[j + 2] = taps[j]->out;
    T* dst = y;
    if (j > 0) {  // not the last pass: into an intermediate buffer
      buffers[j % 2].reset(new T[static_cast<size_t>(outer * taps[j]->out * inner)]);
      dst = buffers[j % 2].get();
    }
    resample_dim(cur, dst, outer, inner, *taps[j]);
    cur = dst;
  }
}

// The transpose of resample_separable: contiguous `g` of the output's `shape` scattered back through
// taps[j], the first spatial dim first, into `gx` (sized by the caller to the input's shape).
template <typename T>
void scatter_separable(const T* g, T* gx, std::vector<int64_t> shape, const std::vector<const Taps<T>*>& taps) {
  std::unique_ptr<T[]> buffers[2];  // zeroed by scatter_dim
  const T* cur = g;
  for (size_t j = 0; j < taps.size(); ++j) {
    int64_t outer, inner;
    split_at_dim(shape, j, outer, inner);
    shape[j + 2] = taps[j]->in;
    T* dst = gx;
    if (j + 1 < taps.size()) {
      buffers[j % 2].reset(new T[static_cast<size_t>(outer * taps[j]->in * inner)]);
      dst = buffers[j % 2].get();
    }
    scatter_dim(cur, dst, outer, inner, *taps[j]);
    cur = dst;
  }
}

}  // namespace cpu
}  // namespace kiln
