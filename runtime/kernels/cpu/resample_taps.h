// Separable resampling along one dim at a time: each output position o of a dim reads `count(o)`
// (input index, weight) taps. F.interpolate's modes (upsample_ops.cc), the antialiased ones
// (upsample_aa_ops.cc) and area pooling all reduce to this: the forward sums the taps of each dim
// in turn, the backward scatters grad_output through the same taps (the transpose).
#pragma once

#include <algorithm>
#include <cmath>
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
  // Two taps summed as torch's linear interpolation is where it runs FMA code (linear_taps_fused).
  bool fused_pairs = false;
  int64_t count(int64_t o) const { return counts.empty() ? k : counts[o]; }
};

// torch's CPU kernels are compiled per instruction set with contraction on: on a CPU with AVX2 and
// FMA its linear interpolation's t0 * w0 + t1 * w1 is fma(t0, w0, t1 * w1). kiln follows it there
// (and rounds twice elsewhere, as torch's baseline kernels do).
inline bool linear_taps_fused() {
  static const bool fused = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return fused;
}

// One (in, inner) -> (out, inner) block of a dim with two taps per output: y = fma(x0, w0, x1 * w1),
// compiled with FMA instructions (only called where the CPU has them).
template <typename T>
__attribute__((target("avx2,fma"))) void fused_pairs_block(const T* xa, T* ya, int64_t inner, const Taps<T>& t) {
  for (int64_t o = 0; o < t.out; ++o) {
    const T w0 = t.weight[2 * o], w1 = t.weight[2 * o + 1];
    const T* x0 = xa + t.index[2 * o] * inner;
    const T* x1 = xa + t.index[2 * o + 1] * inner;
    T* yo = ya + o * inner;
#pragma omp simd
    for (int64_t b = 0; b < inner; ++b) yo[b] = std::fma(x0[b], w0, x1[b] * w1);
  }
}

// (outer, in, inner) -> (outer, out, inner) through one dim's taps, summed in tap order from 0
// (0 + w0 x0 + w1 x1 ...). A dim before the last sums whole rows of `inner` elements at a time, a
// vector loop per tap; the (outer) blocks split across threads.
template <typename T>
void resample_dim(const T* x, T* y, int64_t outer, int64_t inner, const Taps<T>& t) {
#pragma omp parallel for schedule(static) if (outer > 1 && outer * t.out * inner > 32768)
  for (int64_t a = 0; a < outer; ++a) {
    const T* xa = x + a * t.in * inner;
    T* ya = y + a * t.out * inner;
    if (t.fused_pairs) {
      fused_pairs_block(xa, ya, inner, t);
      continue;
    }
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

// torch's backward of linear interpolation (cpu_upsample_linear_backward), not separable: for each
// (n, c) plane and each output position in order, grad_output times the product of the dims' weights
// (first dim first) is added to each of the 2^d input positions, the last dim's taps innermost; torch's
// FMA-compiled kernel fuses that product's last multiplication into the addition (`Fused`).
template <typename T, bool Fused>
__attribute__((always_inline)) inline void add_product(T& dst, T weight, T value) {
  dst = Fused ? std::fma(weight, value, dst) : dst + weight * value;
}

template <typename T, bool Fused, int Dims>
__attribute__((always_inline)) inline void linear_scatter_planes(const T* g, T* gx, int64_t planes,
                                                                 const std::vector<const Taps<T>*>& taps) {
  // 1 to 3 dims, as (D, H, W) with unit dims in front: the loops below are torch's 3-D ones.
  const Taps<T> unit{1, 1, 2, {0, 0}, {T(1), T(0)}};
  const Taps<T>& td = taps.size() == 3 ? *taps[0] : unit;
  const Taps<T>& th = taps.size() >= 2 ? *taps[taps.size() - 2] : unit;
  const Taps<T>& tw = *taps.back();
  const int64_t in_plane = td.in * th.in * tw.in, out_plane = td.out * th.out * tw.out;
  constexpr int dims = Dims;
#pragma omp parallel for schedule(static) if (planes > 1 && planes * out_plane > 32768)
  for (int64_t p = 0; p < planes; ++p) {
    const T* gp = g + p * out_plane;
    T* gxp = gx + p * in_plane;
    for (int64_t od = 0; od < td.out; ++od) {
      const int64_t d0 = td.index[2 * od] * th.in, d1 = td.index[2 * od + 1] * th.in;
      const T dw0 = td.weight[2 * od], dw1 = td.weight[2 * od + 1];
      for (int64_t oh = 0; oh < th.out; ++oh) {
        const int64_t h0 = th.index[2 * oh], h1 = th.index[2 * oh + 1];
        const T hw0 = th.weight[2 * oh], hw1 = th.weight[2 * oh + 1];
        // torch's weight products, first dim first: d * h (3-D), h (2-D), none (1-D)
        const T dh[4] = {dims == 3 ? dw0 * hw0 : hw0, dims == 3 ? dw0 * hw1 : hw1, dims == 3 ? dw1 * hw0 : hw0,
                         dims == 3 ? dw1 * hw1 : hw1};
        T* rows[4] = {gxp + (d0 + h0) * tw.in, gxp + (d0 + h1) * tw.in, gxp + (d1 + h0) * tw.in,
                      gxp + (d1 + h1) * tw.in};
        constexpr int row_count = dims == 3 ? 4 : dims == 2 ? 2 : 1;
        const T* go = gp + (od * th.out + oh) * tw.out;
        const int64_t* w_index = tw.index.data();  // raw pointers: a store into gx cannot move them
        const T* w_weight = tw.weight.data();
        const int64_t w_out = tw.out;
        for (int64_t ow = 0; ow < w_out; ++ow) {
          const int64_t w0 = w_index[2 * ow], w1 = w_index[2 * ow + 1];
          const T ww0 = w_weight[2 * ow], ww1 = w_weight[2 * ow + 1];
          const T value = go[ow];
          for (int r = 0; r < row_count; ++r) {
            if constexpr (dims == 1) {
              add_product<T, Fused>(rows[r][w0], ww0, value);
              add_product<T, Fused>(rows[r][w1], ww1, value);
            } else {
              add_product<T, Fused>(rows[r][w0], dh[r] * ww0, value);
              add_product<T, Fused>(rows[r][w1], dh[r] * ww1, value);
            }
          }
        }
      }
    }
  }
}

template <typename T, bool Fused>
__attribute__((always_inline)) inline void linear_scatter_dims(const T* g, T* gx, int64_t planes,
                                                               const std::vector<const Taps<T>*>& taps) {
  if (taps.size() == 1) linear_scatter_planes<T, Fused, 1>(g, gx, planes, taps);
  else if (taps.size() == 2) linear_scatter_planes<T, Fused, 2>(g, gx, planes, taps);
  else linear_scatter_planes<T, Fused, 3>(g, gx, planes, taps);
}

template <typename T>
__attribute__((target("avx2,fma"))) void linear_scatter_fused(const T* g, T* gx, int64_t planes,
                                                            const std::vector<const Taps<T>*>& taps) {
  linear_scatter_dims<T, true>(g, gx, planes, taps);
}

// `gx` zeroed by the caller; taps: 1 to 3 linear dims (two taps each).
template <typename T>
void linear_scatter_torch_order(const T* g, T* gx, int64_t planes, const std::vector<const Taps<T>*>& taps) {
  if (linear_taps_fused()) linear_scatter_fused(g, gx, planes, taps);
  else linear_scatter_dims<T, false>(g, gx, planes, taps);
}

// The nearest modes' backward as torch's cpu_upsample_nearest_backward: each plane's output positions
// in row-major order, each adding its gradient to the one input position it copied (a position
// copied to four gets ((0 + a) + b) + c) + d; separable passes would add (a + b) + (c + d)). Every
// dim has one tap per output position. gx holds zeros.
template <typename T>
void nearest_scatter_torch_order(const T* g, T* gx, int64_t planes, const std::vector<const Taps<T>*>& taps) {
  const size_t d = taps.size();
  int64_t out_plane = 1, in_plane = 1;
  for (const Taps<T>* t : taps) {
    out_plane *= t->out;
    in_plane *= t->in;
  }
  const Taps<T>& w = *taps[d - 1];
  const Taps<T>* h = d >= 2 ? taps[d - 2] : nullptr;
  const Taps<T>* z = d >= 3 ? taps[d - 3] : nullptr;
  const int64_t depth = z ? z->out : 1, height = h ? h->out : 1;
  for (int64_t p = 0; p < planes; ++p) {
    const T* gp = g + p * out_plane;
    T* xp = gx + p * in_plane;
    for (int64_t od = 0; od < depth; ++od) {
      const int64_t id = z ? z->index[od] : 0;
      for (int64_t oh = 0; oh < height; ++oh) {
        T* row = xp + (id * (h ? h->in : 1) + (h ? h->index[oh] : 0)) * w.in;
        const T* grow = gp + (od * height + oh) * w.out;
        for (int64_t ow = 0; ow < w.out; ++ow) row[w.index[ow]] += grow[ow];
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
