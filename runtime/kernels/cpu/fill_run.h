// n copies of v from p on. GCC's -O2 left a std::fill_n of unknown length a scalar loop (a 1 MB
// ones() took 4x torch's time): here the stores are vectors, 32-byte ones where the CPU has AVX2
// (the baseline build's are 16 bytes, half torch's speed), and a long run is split across threads
// as torch's fill is (at::parallel_for, 32768 elements a grain).
#pragma once

#include <algorithm>
#include <cstdint>

#include <omp.h>

namespace kiln {
namespace cpu {

template <typename T>
void fill_simd(T* p, int64_t n, T v) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) p[i] = v;
}

// The same loop compiled for AVX2 (flatten: fill_simd inlined into this target).
template <typename T>
[[gnu::flatten]] __attribute__((target("avx2"))) void fill_simd_avx2(T* p, int64_t n, T v) {
  fill_simd(p, n, v);
}

// One thread's run (for callers already on the threads of a loop).
template <typename T>
void fill_serial(T* p, int64_t n, T v) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) {
    fill_simd_avx2(p, n, v);
  } else {
    fill_simd(p, n, v);
  }
}

template <typename T>
void fill_run(T* p, int64_t n, T v) {
  constexpr int64_t kGrain = 32768;
  const int64_t parts = omp_in_parallel() ? 1 : std::min<int64_t>(omp_get_max_threads(), (n + kGrain - 1) / kGrain);
#pragma omp parallel for num_threads(static_cast<int>(parts)) if (parts > 1) schedule(static, 1)
  for (int64_t t = 0; t < parts; ++t) fill_serial(p + n * t / parts, n * (t + 1) / parts - n * t / parts, v);
}

}  // namespace cpu
}  // namespace kiln
