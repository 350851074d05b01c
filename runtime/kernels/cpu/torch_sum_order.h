// float32/float64 sums in torch 1.13's order, so that a loss's mean (and a bias gradient's sum)
// rounds as torch's does: training scripts compared step by step with torch (and ones that stop
// when the loss first drops below a threshold, as pytorch/examples regression/main.py) then follow
// torch's trajectory instead of drifting one rounding at a time.
//
// The order is that of aten/src/ATen/native/cpu/SumKernel.cpp (cascade_sum): accumulation in the
// input's own type, Vectorized<T> of 8 floats / 4 doubles (the AVX2 and default builds' width),
// 4 interleaved accumulators (row_sum), and a 4-level cascade that adds a level into the next every
// 2^level_power rows (multi_row_sum). The names below are torch's; each mirrors its function.
// tests/python/test_vector_reductions.py checks the bits against torch.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace kiln {
namespace cpu {
namespace torch_order {

// Vectorized<T>::size() where torch's kernels are built for AVX2 or the default capability.
template <typename T>
constexpr int kLanes = sizeof(T) == 4 ? 8 : 4;

// One Vectorized<T>: L lanes added lane by lane, held as vector types of kBytes: 16 (SSE registers
// on the baseline x86-64 build, where one 32-byte vector type would be spilled to the stack) or 32
// (one AVX2 register, as torch's AVX2 kernels hold it: code compiled for AVX2). The lanes and their
// order are the same either way, so are the bits.
template <typename T, int L, int kBytes = 16>
struct Lanes {
  typedef T Raw __attribute__((vector_size(kBytes)));
  static constexpr int kPer = kBytes / sizeof(T), kParts = L / kPer;
  Raw part[kParts];
  static Lanes zero() {
    Lanes r;
    for (int p = 0; p < kParts; ++p) r.part[p] = Raw{};
    return r;
  }
  static Lanes load(const T* x) {
    Lanes r;
    for (int p = 0; p < kParts; ++p) __builtin_memcpy(&r.part[p], x + p * kPer, kBytes);
    return r;
  }
  T lane(int l) const { return part[l / kPer][l % kPer]; }
  Lanes& operator+=(const Lanes& o) {
    for (int p = 0; p < kParts; ++p) part[p] += o.part[p];
    return *this;
  }
};

template <typename Acc>
Acc zero_of() {
  if constexpr (std::is_arithmetic_v<Acc>) {
    return Acc(0);
  } else {
    return Acc::zero();
  }
}

// c10::utils::CeilLog2 (1 for x <= 2).
inline int64_t ceil_log2(int64_t x) {
  if (x <= 2) return 1;
  uint64_t v = static_cast<uint64_t>(x) - 1;
  int64_t bits = 0;
  while (v) {
    ++bits;
    v >>= 1;
  }
  return bits;
}

// multi_row_sum: nrows accumulators over `size` rows; load(i, k) is row i's element k.
// torch's loop adds level 0 into level 1 after every whole block of level_step rows, and level j - 1
// into level j (j >= 2) when the block also ends a run of 2^((j - 1) level_power) rows; level 0 is
// zero again after each block. Written here with level 0 a fresh local per block and every loop over
// levels and rows unrolled, so that all levels stay in registers: GCC kept torch's form (a 2-D array
// indexed by the loop's level) on the stack and zeroed it with `rep stos` every 16 rows, which cost a
// third of a 16M-element sum read from memory. The additions and their order are torch's.
template <typename Acc, int64_t nrows, typename Load>
std::array<Acc, nrows> multi_row_sum(int64_t size, Load&& load) {
  constexpr int64_t num_levels = 4;
  const int64_t level_power = std::max<int64_t>(4, ceil_log2(size) / num_levels);
  const int64_t level_step = int64_t(1) << level_power;
  const int64_t level_mask = level_step - 1;
  Acc acc[num_levels][nrows];
#pragma GCC unroll 4
  for (int64_t j = 0; j < num_levels; ++j)
#pragma GCC unroll 4
    for (int64_t k = 0; k < nrows; ++k) acc[j][k] = zero_of<Acc>();
  int64_t i = 0;
  for (; i + level_step <= size;) {
    Acc a[nrows];
#pragma GCC unroll 4
    for (int64_t k = 0; k < nrows; ++k) a[k] = zero_of<Acc>();
    for (int64_t j = 0; j < level_step; ++j, ++i) {
#pragma GCC unroll 4
      for (int64_t k = 0; k < nrows; ++k) a[k] += load(i, k);
    }
#pragma GCC unroll 4
    for (int64_t k = 0; k < nrows; ++k) acc[1][k] += a[k];
#pragma GCC unroll 4
    for (int64_t j = 2; j < num_levels; ++j) {
      if ((i & (level_mask << ((j - 1) * level_power))) != 0) break;
#pragma GCC unroll 4
      for (int64_t k = 0; k < nrows; ++k) {
        acc[j][k] += acc[j - 1][k];
        acc[j - 1][k] = zero_of<Acc>();
      }
    }
  }
  for (; i < size; ++i)
    for (int64_t k = 0; k < nrows; ++k) acc[0][k] += load(i, k);
  for (int64_t j = 1; j < num_levels; ++j)
    for (int64_t k = 0; k < nrows; ++k) acc[0][k] += acc[j][k];
  std::array<Acc, nrows> ret;
  for (int64_t k = 0; k < nrows; ++k) ret[k] = acc[0][k];
  return ret;
}

// row_sum: `size` elements (load(i)) on 4 interleaved accumulators, then the tail, then combined.
template <typename Acc, typename Load>
Acc row_sum(int64_t size, Load&& load) {
  constexpr int64_t ilp_factor = 4;
  const int64_t size_ilp = size / ilp_factor;
  auto partial_sums = multi_row_sum<Acc, ilp_factor>(
      size_ilp, [&](int64_t i, int64_t k) { return load(i * ilp_factor + k); });
  for (int64_t i = size_ilp * ilp_factor; i < size; ++i) partial_sums[0] += load(i);
  for (int64_t k = 1; k < ilp_factor; ++k) partial_sums[0] += partial_sums[k];
  return partial_sums[0];
}

// One contiguous line: vectorized_inner_sum (n >= lanes) or scalar_inner_sum, stored as
// `0 + sum` (the output is zero-filled, then accumulated into). kBytes: see Lanes.
template <typename T, int kBytes = 16>
T inner_sum(const T* x, int64_t n) {
  constexpr int L = kLanes<T>;
  using V = Lanes<T, L, kBytes>;
  if (n >= L) {
    const int64_t vec_size = n / L;
    const V vec_acc = row_sum<V>(vec_size, [&](int64_t i) { return V::load(x + i * L); });
    T final_acc = 0;
    for (int64_t k = vec_size * L; k < n; ++k) final_acc += x[k];
    for (int l = 0; l < L; ++l) final_acc += vec_acc.lane(l);
    return T(0) + final_acc;
  }
  return T(0) + row_sum<T>(n, [&](int64_t i) { return x[i]; });
}

// A whole tensor's sum on `threads` threads: serial below torch's GRAIN_SIZE (32768), else
// TensorIterator's two_pass_reduction: at::parallel_for's chunks (one per thread, of
// divup(n, threads used) elements), each thread's total in a buffer of max_threads zeros, and
// the buffer summed as a line.
// `line(x, n)` is inner_sum (or a build of it for the CPU at hand).
template <typename T, typename ParallelFor, typename Line>
T full_sum(const T* x, int64_t n, int threads, ParallelFor&& parallel_for, Line&& line) {
  constexpr int64_t kGrainSize = 32768;
  if (n < kGrainSize || threads <= 1) return line(x, n);
  const int64_t used = std::min<int64_t>(threads, (n + kGrainSize - 1) / kGrainSize);
  const int64_t chunk = (n + used - 1) / used;
  std::vector<T> buffer(threads, T(0));
  parallel_for(used, [&](int64_t t) {
    const int64_t begin = t * chunk, end = std::min(n, begin + chunk);
    if (begin < end) buffer[t] = T(0) + line(x + begin, end - begin);
  });
  return line(buffer.data(), static_cast<int64_t>(buffer.size()));
}

// Columns [j0, j1) of an [n, inner] block (row stride `inner`), each summed down its n rows into
// out[j - j0]: vectorized_outer_sum (inner >= lanes: 4 vectors of columns at a time, then single
// vectors, then single columns) or scalar_outer_sum (4 columns at a time, then single ones).
// j0 must be a multiple of 4 * lanes (or 0) and j1 either one too or `inner`, so that the groups
// are those of the whole block's serial loop.
template <typename T>
void outer_sum(const T* x, int64_t n, int64_t inner, int64_t j0, int64_t j1, T* out) {
  constexpr int L = kLanes<T>;
  using V = Lanes<T, L>;
  int64_t j = j0;
  if (inner >= L) {
    for (; j + 4 * L <= j1; j += 4 * L) {
      const auto sums = multi_row_sum<V, 4>(n, [&](int64_t i, int64_t k) { return V::load(x + i * inner + j + k * L); });
      for (int k = 0; k < 4; ++k)
        for (int l = 0; l < L; ++l) out[j - j0 + k * L + l] = T(0) + sums[k].lane(l);
    }
    for (; j + L <= j1; j += L) {
      const V sums = row_sum<V>(n, [&](int64_t i) { return V::load(x + i * inner + j); });
      for (int l = 0; l < L; ++l) out[j - j0 + l] = T(0) + sums.lane(l);
    }
  } else {
    for (; j + 3 < j1; j += 4) {
      const auto sums = multi_row_sum<T, 4>(n, [&](int64_t i, int64_t k) { return x[i * inner + j + k]; });
      for (int k = 0; k < 4; ++k) out[j - j0 + k] = T(0) + sums[k];
    }
  }
  for (; j < j1; ++j) out[j - j0] = T(0) + row_sum<T>(n, [&](int64_t i) { return x[i * inner + j]; });
}

}  // namespace torch_order
}  // namespace cpu
}  // namespace kiln
