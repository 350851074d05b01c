// Inner loops for pointwise kernels: a contiguous fast path the compiler can
// vectorize, a scalar-broadcast path, and the general strided path.
//
// A kernel may hand unary_kernel and binary_kernel a vector loop (`vector`): the generated
// formula kernels pass theirs for float32 (Highway, dispatched at run time;
// runtime/kernels/cpu/vector_formula-inl.h). It then computes every element: a strided run is
// copied through buffers on the stack a chunk at a time, so a result never depends on the
// layout (an out= into a strided tensor gives the bits of the functional form), which a scalar
// functor for strided runs would not give where the two round differently.
//
// The contiguous paths ask for SIMD explicitly (`omp simd`): at -O2 GCC vectorizes no loop
// whose trip count it does not know (add ran at 3 ns per float), and leaves `x < 0 ? 0 : x`
// as a branch (on random signs relu ran 10x slower than add).
#pragma once

#include <cstdint>
#include <type_traits>

#include "runtime/core/half.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/parallel_loop.h"
#include "runtime/kernels/tensor_iterator.h"

namespace kiln {
namespace cpu {

// No vector loop: the kernel runs its scalar functor on every run.
struct NoVectorRun {};

// Runs `vector` (a generated formula kernel's float32 loop) on n elements whose inputs and output
// are strided: a chunk at a time through buffers on the stack, so an element's result never
// depends on the layout. `call(in buffers, out buffer, m)` runs the vector loop on one chunk.
template <int kInputs, typename out_t, typename in_t, typename Call>
void through_buffers(char** data, const int64_t* strides, int64_t n, Call call) {
  in_t in[kInputs][kConvertChunk];
  out_t out[kConvertChunk];
  for (int64_t start = 0; start < n; start += kConvertChunk) {
    const int64_t m = n - start < kConvertChunk ? n - start : kConvertChunk;
    for (int k = 0; k < kInputs; ++k) {
      const char* p = data[k + 1] + start * strides[k + 1];
      for (int64_t i = 0; i < m; ++i) in[k][i] = *reinterpret_cast<const in_t*>(p + i * strides[k + 1]);
    }
    call(in, out, m);
    char* o = data[0] + start * strides[0];
    for (int64_t i = 0; i < m; ++i) *reinterpret_cast<out_t*>(o + i * strides[0]) = out[i];
  }
}

// Every operand is stored as bfloat16 and computed in float32: a kernel with a bfloat16 vector loop
// (the generated formula kernels) then runs it on the stored runs, widening and rounding in
// registers to the bits the walk's float32 buffers would give, at about half the cost.
inline bool stores_bfloat16_computes_float(const TensorIterator& it) {
  if (it.output_rounds_through() != ScalarType::Undefined) return false;
  for (int k = 0; k < it.ntensors(); ++k)
    if (it.stored_dtype(k) != ScalarType::BFloat16 || it.loop_dtype(k) != ScalarType::Float32) return false;
  return true;
}

// A walk's loop running vector(in, out, n) on contiguous runs, strided ones through buffers.
template <typename out_t, typename in_t, typename V>
auto unary_vector_runs(const V& vector) {
  return [&vector](char** data, const int64_t* strides, int64_t n) {
    if (strides[0] == sizeof(out_t) && strides[1] == sizeof(in_t)) {
      vector(reinterpret_cast<const in_t*>(data[1]), reinterpret_cast<out_t*>(data[0]), n);
    } else {
      through_buffers<1, out_t, in_t>(data, strides, n,
                                      [&vector](in_t (*in)[kConvertChunk], out_t* out, int64_t m) { vector(in[0], out, m); });
    }
  };
}

// A walk's loop running vector(a, a_step, b, b_step, out, n) on runs where each input is
// contiguous or one broadcast value (steps 1 or 0), other runs through buffers.
template <typename out_t, typename in_t, typename V>
auto binary_vector_runs(const V& vector) {
  return [&vector](char** data, const int64_t* strides, int64_t n) {
    const auto run = [&](int k) { return strides[k] == sizeof(in_t) || strides[k] == 0; };
    if (strides[0] == sizeof(out_t) && run(1) && run(2)) {
      vector(reinterpret_cast<const in_t*>(data[1]), strides[1] == 0 ? 0 : 1, reinterpret_cast<const in_t*>(data[2]),
             strides[2] == 0 ? 0 : 1, reinterpret_cast<out_t*>(data[0]), n);
    } else {
      through_buffers<2, out_t, in_t>(data, strides, n, [&vector](in_t (*in)[kConvertChunk], out_t* out, int64_t m) {
        vector(in[0], 1, in[1], 1, out, m);
      });
    }
  };
}

// out = f(in) elementwise. `vector`, when given, computes every run (unary_vector_runs), and
// `vector16`, when given, every run of an all-bfloat16 iterator on its stored bfloat16.
template <typename out_t, typename in_t, typename F, typename V = NoVectorRun, typename V16 = NoVectorRun>
void unary_kernel(const TensorIterator& it, F f, V vector = {}, V16 vector16 = {}) {
  if constexpr (!std::is_same<V16, NoVectorRun>::value) {
    if (stores_bfloat16_computes_float(it)) return for_each_stored(it, unary_vector_runs<BFloat16, BFloat16>(vector16));
  }
  if constexpr (!std::is_same<V, NoVectorRun>::value) {
    return for_each(it, unary_vector_runs<out_t, in_t>(vector));
  }
  for_each(it, [&](char** data, const int64_t* strides, int64_t n) {  // f
    if (strides[0] == sizeof(out_t) && strides[1] == sizeof(in_t)) {
      out_t* __restrict__ o = reinterpret_cast<out_t*>(data[0]);
      const in_t* __restrict__ a = reinterpret_cast<const in_t*>(data[1]);
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) o[i] = f(a[i]);
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<out_t*>(data[0] + i * strides[0]) = f(*reinterpret_cast<const in_t*>(data[1] + i * strides[1]));
    }
  });
}

// out = f(a, b) elementwise. `vector` and `vector16`, when given, as for unary_kernel
// (binary_vector_runs).
template <typename out_t, typename in_t, typename F, typename V = NoVectorRun, typename V16 = NoVectorRun>
void binary_kernel(const TensorIterator& it, F f, V vector = {}, V16 vector16 = {}) {
  if constexpr (!std::is_same<V16, NoVectorRun>::value) {
    if (stores_bfloat16_computes_float(it)) return for_each_stored(it, binary_vector_runs<BFloat16, BFloat16>(vector16));
  }
  if constexpr (!std::is_same<V, NoVectorRun>::value) {
    return for_each(it, binary_vector_runs<out_t, in_t>(vector));
  }
  for_each(it, [&](char** data, const int64_t* strides, int64_t n) {  // f
    const bool out_contig = strides[0] == sizeof(out_t);
    out_t* __restrict__ o = reinterpret_cast<out_t*>(data[0]);
    const in_t* __restrict__ a = reinterpret_cast<const in_t*>(data[1]);
    const in_t* __restrict__ b = reinterpret_cast<const in_t*>(data[2]);
    if (out_contig && strides[1] == sizeof(in_t) && strides[2] == sizeof(in_t)) {
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
    } else if (out_contig && strides[1] == sizeof(in_t) && strides[2] == 0) {
      const in_t bv = *b;
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], bv);
    } else if (out_contig && strides[1] == 0 && strides[2] == sizeof(in_t)) {
      const in_t av = *a;
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) o[i] = f(av, b[i]);
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<out_t*>(data[0] + i * strides[0]) = f(*reinterpret_cast<const in_t*>(data[1] + i * strides[1]),
                                                                *reinterpret_cast<const in_t*>(data[2] + i * strides[2]));
    }
  });
}

// Three inputs, each read in its own loop type (where's condition is bool, the values scalar_t).
// `vector`, when given, computes runs where each input is contiguous or one broadcast value
// (vector(a, a_step, b, b_step, c, c_step, out, n)); the generated kernels pass one only for
// formulas of exact operations, whose scalar functor gives the same bits on the other runs.
template <typename out_t, typename a_t, typename b_t, typename c_t, typename F, typename V = NoVectorRun>
void ternary_kernel(const TensorIterator& it, F f, V vector = {}) {
  constexpr bool has_vector = !std::is_same<V, NoVectorRun>::value;
  for_each(it, [&](char** data, const int64_t* strides, int64_t n) {  // f, and vector when given
    if constexpr (has_vector) {
      const auto run = [&](int k, size_t size) { return strides[k] == static_cast<int64_t>(size) || strides[k] == 0; };
      if (strides[0] == sizeof(out_t) && run(1, sizeof(a_t)) && run(2, sizeof(b_t)) && run(3, sizeof(c_t))) {
        vector(reinterpret_cast<const a_t*>(data[1]), strides[1] == 0 ? 0 : 1, reinterpret_cast<const b_t*>(data[2]),
               strides[2] == 0 ? 0 : 1, reinterpret_cast<const c_t*>(data[3]), strides[3] == 0 ? 0 : 1,
               reinterpret_cast<out_t*>(data[0]), n);
        return;
      }
    }
    if (strides[0] == sizeof(out_t) && strides[1] == sizeof(a_t) && strides[2] == sizeof(b_t) &&
        strides[3] == sizeof(c_t)) {
      out_t* __restrict__ o = reinterpret_cast<out_t*>(data[0]);
      const a_t* __restrict__ a = reinterpret_cast<const a_t*>(data[1]);
      const b_t* __restrict__ b = reinterpret_cast<const b_t*>(data[2]);
      const c_t* __restrict__ c = reinterpret_cast<const c_t*>(data[3]);
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i], c[i]);
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<out_t*>(data[0] + i * strides[0]) = f(*reinterpret_cast<const a_t*>(data[1] + i * strides[1]),
                                                                *reinterpret_cast<const b_t*>(data[2] + i * strides[2]),
                                                                *reinterpret_cast<const c_t*>(data[3] + i * strides[3]));
    }
  });
}

template <typename out_t, typename F>
void nullary_kernel(const TensorIterator& it, F f) {
  for_each(it, [&f](char** data, const int64_t* strides, int64_t n) {
    for (int64_t i = 0; i < n; ++i) *reinterpret_cast<out_t*>(data[0] + i * strides[0]) = f();
  });
}

}  // namespace cpu
}  // namespace kiln
