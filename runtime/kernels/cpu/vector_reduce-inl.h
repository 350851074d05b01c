// The reductions' vector loops, once per Highway target (included by vector_reductions.cc through
// hwy/foreach_target.h, hence the toggling guard instead of #pragma once). Two shapes, as the
// reduction plan lays a contiguous input out (runtime/kernels/reduction_plan.h):
//
// * a run: one output from n contiguous elements (the last dim, or everything);
// * columns: a [n, inner] block, each of `width` outputs reducing a column (elements `inner`
//   apart), computed a whole row of lanes at a time, each column in the order k = 0, 1, ... n-1.
//
// Orders are fixed, so a result never depends on the target, alignment or thread count:
// * sum of a run: a fixed number of lanes (LanesReduce), whatever the vector width; float32 and the
//   16-bit floats in 1024-element chunks whose totals add in double (a 1024-element sum's rounding).
// * sum of columns: in double, row after row: the bits of the scalar loop.
// * amax/amin: an element replaces the best if it is greater (smaller) or the first NaN, so NaN
//   propagates; argmax/argmin find the extreme first, then the first index holding it (or the
//   first NaN), which is torch's answer.
#include <stddef.h>
#include <stdint.h>

#include <cmath>
#include <type_traits>

#include <hwy/highway.h>

#include "runtime/core/half.h"
#include "runtime/kernels/cpu/reduced_float_convert.h"

#if defined(KILN_CPU_VECTOR_REDUCE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef KILN_CPU_VECTOR_REDUCE_INL_H_
#undef KILN_CPU_VECTOR_REDUCE_INL_H_
#else
#define KILN_CPU_VECTOR_REDUCE_INL_H_
#endif

HWY_BEFORE_NAMESPACE();
namespace kiln {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ---------------------------------------------------------------------------------------- sums

// Elements per chunk of a float32 (or 16-bit float) sum; chunk totals add in double.
constexpr int64_t kSumChunk = 1024;

// The two associative operations the lanes fold with, and the value that pads a partial group.
struct AddOp {
  static constexpr double kIdentity = 0;
  template <class V>
  HWY_INLINE V operator()(V a, V b) const { return hn::Add(a, b); }
};
struct MulOp {
  static constexpr double kIdentity = 1;
  template <class V>
  HWY_INLINE V operator()(V a, V b) const { return hn::Mul(a, b); }
};

// Lane 0 after lane k = op(lane k, lane k + w) for w = N / 2, ..., 1, in registers (halves of the vector).
template <class Op, class D>
HWY_INLINE hn::TFromD<D> FoldLanes(Op op, D d, hn::Vec<D> v) {
#if HWY_TARGET == HWY_SCALAR  // one lane, and no UpperHalf
  return hn::GetLane(v);
#else
  if constexpr (hn::MaxLanes(d) == 1) {
    return hn::GetLane(v);
  } else {
    const hn::Half<D> dh;
    return FoldLanes(op, dh, op(hn::LowerHalf(dh, v), hn::UpperHalf(dh, v)));
  }
#endif
}

// The sum (product) of n values (T: float or double) in kLanes lanes: element i goes to lane
// i % kLanes (the last, partial group from a copy padded with 0 (1): a sum's lane starts at +0 and
// is never -0, so adding +0 changes nothing), then lane k = op(lane k, lane k + w) for w = kLanes
// / 2, ..., 2, 1. The lanes are kLanes / N whole vectors on every target, so the bits never depend
// on the target; and several vectors are independent chains, which a single vector's chain (one
// add's latency per vector) would not be. `load(d, i)` gives elements [i, i + N) as T, `fill(i,
// m, buffer)` writes elements [i, i + m) as T to buffer.
template <typename T, size_t kLanes, class Op = AddOp, class Load, class Fill>
HWY_INLINE T LanesReduce(int64_t n, Load load, Fill fill) {
  const Op op;
  const hn::CappedTag<T, kLanes> d;
  constexpr size_t N = hn::MaxLanes(d);
  constexpr size_t K = kLanes / N;  // vectors holding the lanes
  static_assert(K * N == kLanes, "the lanes fill whole vectors");
  // Every loop over the vectors unrolled, so that acc stays in registers.
  hn::Vec<decltype(d)> acc[K];
#pragma GCC unroll 64
  for (size_t j = 0; j < K; ++j) acc[j] = hn::Set(d, static_cast<T>(Op::kIdentity));
  int64_t i = 0;
  for (; i + static_cast<int64_t>(kLanes) <= n; i += kLanes) {
#pragma GCC unroll 64
    for (size_t j = 0; j < K; ++j) acc[j] = op(acc[j], load(d, i + static_cast<int64_t>(j * N)));
  }
  if (i < n) {
    HWY_ALIGN T rest[kLanes];
    for (size_t k = 0; k < kLanes; ++k) rest[k] = static_cast<T>(Op::kIdentity);
    fill(i, n - i, rest);
#pragma GCC unroll 64
    for (size_t j = 0; j < K; ++j) acc[j] = op(acc[j], hn::Load(d, rest + j * N));
  }
#pragma GCC unroll 8
  for (size_t k = K / 2; k > 0; k /= 2)  // the folds of whole vectors (w >= N)
#pragma GCC unroll 64
    for (size_t j = 0; j < k; ++j) acc[j] = op(acc[j], acc[j + k]);
  return FoldLanes(op, d, acc[0]);
}

// float32 chunks in 64 lanes (16 additions per lane), float64 runs in 16 (fewer registers).
constexpr size_t kFloatSumLanes = 64, kDoubleSumLanes = 16;

HWY_INLINE double SumRun(const double* x, int64_t n) {
  return LanesReduce<double, kDoubleSumLanes>(
      n, [x](auto d, int64_t i) { return hn::LoadU(d, x + i); },
      [x](int64_t i, int64_t m, double* to) { for (int64_t k = 0; k < m; ++k) to[k] = x[i + k]; });
}

// The chunk of m widened values at p (float, or 16-bit floats widened exactly in `widen`).
template <typename In, class Widen>
HWY_INLINE float ChunkSum(const In* p, int64_t m, Widen widen) {
  return LanesReduce<float, kFloatSumLanes>(
      m, [p, widen](auto d, int64_t i) { return widen(d, p + i); },
      [p](int64_t i, int64_t count, float* to) { for (int64_t k = 0; k < count; ++k) to[k] = static_cast<float>(p[i + k]); });
}

// A float32 or 16-bit float run in chunks, their totals added in double. Everything down to the
// loads is inlined: a call per chunk (and its vzeroupper) cost 15% of a 16M-element sum.
template <typename In, class Widen>
HWY_INLINE double ChunkedSum(const In* x, int64_t n, Widen widen) {
  double total = 0;
  for (int64_t c = 0; c < n; c += kSumChunk) total += ChunkSum(x + c, HWY_MIN(kSumChunk, n - c), widen);
  return total;
}

HWY_INLINE double SumRun(const float* x, int64_t n) {
  return ChunkedSum(x, n, [](auto d, const float* p) { return hn::LoadU(d, p); });
}

// bfloat16 widens exactly by a shift, in registers.
HWY_INLINE double SumRun(const BFloat16* x, int64_t n) {
  return ChunkedSum(x, n, [](auto d, const BFloat16* p) {
    return hn::PromoteTo(d, hn::LoadU(hn::Rebind<hwy::bfloat16_t, decltype(d)>(), reinterpret_cast<const hwy::bfloat16_t*>(p)));
  });
}

// float16 widens in registers with F16C (AVX2, AVX3); elsewhere through a stack chunk with
// convert_run (Highway 1.0.3's emulated conversion turns inf and NaN into finite numbers).
HWY_INLINE double SumRun(const Half* x, int64_t n) {
#if HWY_TARGET <= HWY_AVX2
  return ChunkedSum(x, n, [](auto d, const Half* p) {
    return hn::PromoteTo(d, hn::LoadU(hn::Rebind<hwy::float16_t, decltype(d)>(), reinterpret_cast<const hwy::float16_t*>(p)));
  });
#else
  double total = 0;
  HWY_ALIGN float widened[kSumChunk];
  for (int64_t c = 0; c < n; c += kSumChunk) {
    const int64_t m = HWY_MIN(kSumChunk, n - c);
    convert_run(x + c, widened, m);
    total += ChunkSum(widened, m, [](auto d, const float* p) { return hn::LoadU(d, p); });
  }
  return total;
#endif
}

// acc[c] = the sum (product) of column c (c < width) of the [n, inner] block at x, in double, rows
// in order: the bits of the scalar loop.
template <class Op = AddOp, typename T>
HWY_INLINE void ReduceColumns(const T* x, int64_t n, int64_t inner, int64_t width, double* acc) {
  const Op op;
  const hn::ScalableTag<double> d;
  const hn::Rebind<T, decltype(d)> dt;  // as many T (floats: half a vector)
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t c = 0; c < width; ++c) acc[c] = Op::kIdentity;
  for (int64_t k = 0; k < n; ++k) {
    const T* row = x + k * inner;
    int64_t c = 0;
    for (; c + N <= width; c += N) {
      hn::Vec<decltype(d)> v;
      if constexpr (std::is_same<T, double>::value) {
        v = hn::LoadU(d, row + c);
      } else {
        v = hn::PromoteTo(d, hn::LoadU(dt, row + c));
      }
      hn::StoreU(op(hn::LoadU(d, acc + c), v), d, acc + c);
    }
    for (; c < width; ++c) acc[c] = std::is_same<Op, AddOp>::value ? acc[c] + row[c] : acc[c] * row[c];
  }
}

// The product of n float32 or float64 values, in 16 double lanes (floats widened exactly).
template <typename T>
HWY_INLINE double ProdRun(const T* x, int64_t n) {
  return LanesReduce<double, 16, MulOp>(
      n,
      [x](auto d, int64_t i) {
        if constexpr (std::is_same<T, double>::value) {
          return hn::LoadU(d, x + i);
        } else {
          return hn::PromoteTo(d, hn::LoadU(hn::Rebind<float, decltype(d)>(), x + i));
        }
      },
      [x](int64_t i, int64_t m, double* to) { for (int64_t k = 0; k < m; ++k) to[k] = x[i + k]; });
}

// ------------------------------------------------------------------------------- amax / amin

template <typename T>
HWY_INLINE bool IsNaNScalar(T v) {
  if constexpr (std::is_floating_point<T>::value) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// Whether v takes best's place: greater (smaller), or the first NaN (a NaN best stays).
template <bool kMax, typename T>
HWY_INLINE bool Replaces(T best, T v) {
  if constexpr (std::is_floating_point<T>::value) {
    if (std::isnan(best)) return false;
    if (std::isnan(v)) return true;
  }
  return kMax ? best < v : v < best;
}

template <bool kMax, class D, class V = hn::Vec<D>>
HWY_INLINE hn::Mask<D> ReplacesV(D d, V best, V v) {
  const auto better = kMax ? hn::Lt(best, v) : hn::Gt(best, v);
  if constexpr (std::is_floating_point<hn::TFromD<D>>::value) {
    return hn::Or(better, hn::AndNot(hn::IsNaN(best), hn::IsNaN(v)));
  } else {
    return better;
  }
}

template <bool kMax, class D, class V = hn::Vec<D>>
HWY_INLINE V Better(D d, V best, V v) {
  if constexpr (std::is_floating_point<hn::TFromD<D>>::value) {
    return hn::IfThenElse(ReplacesV<kMax>(d, best, v), v, best);
  } else {
    return kMax ? hn::Max(best, v) : hn::Min(best, v);  // one instruction
  }
}

// The largest (smallest) of n >= 1 contiguous values; NaN if there is one: an element replaces
// the best if it is greater (smaller) or the first NaN.
template <bool kMax, typename T>
HWY_INLINE T SelectExtremeRun(const T* x, int64_t n) {
  const hn::ScalableTag<T> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  // Four accumulators: a chain of dependent selects would wait on each other.
  auto b0 = hn::Set(d, x[0]), b1 = b0, b2 = b0, b3 = b0;
  int64_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    b0 = Better<kMax>(d, b0, hn::LoadU(d, x + i));
    b1 = Better<kMax>(d, b1, hn::LoadU(d, x + i + N));
    b2 = Better<kMax>(d, b2, hn::LoadU(d, x + i + 2 * N));
    b3 = Better<kMax>(d, b3, hn::LoadU(d, x + i + 3 * N));
  }
  for (; i + N <= n; i += N) b0 = Better<kMax>(d, b0, hn::LoadU(d, x + i));
  b0 = Better<kMax>(d, Better<kMax>(d, b0, b1), Better<kMax>(d, b2, b3));
  HWY_ALIGN T lanes[hn::MaxLanes(d)];
  hn::Store(b0, d, lanes);
  T best = lanes[0];
  for (int64_t k = 1; k < N; ++k)
    if (Replaces<kMax>(best, lanes[k])) best = lanes[k];
  for (; i < n; ++i)
    if (Replaces<kMax>(best, x[i])) best = x[i];
  return best;
}

// The same value, faster for floats: the CPU's max (min) instruction, which drops NaN, and a
// running sum of the elements, which a NaN makes NaN (as do +inf and -inf together): only then
// does the run go through SelectExtremeRun. Two instructions per vector instead of five.
template <bool kMax, typename T>
HWY_INLINE T ExtremeRun(const T* x, int64_t n) {
  if constexpr (!std::is_floating_point<T>::value) {
    return SelectExtremeRun<kMax>(x, n);  // already Max / Min
  } else {
    const hn::ScalableTag<T> d;
    const int64_t N = static_cast<int64_t>(hn::Lanes(d));
    const auto better = [](auto b, auto v) { return kMax ? hn::Max(b, v) : hn::Min(b, v); };
    auto b0 = hn::Set(d, x[0]), b1 = b0, b2 = b0, b3 = b0;
    auto s0 = hn::Zero(d), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 4 * N <= n; i += 4 * N) {
      const auto v0 = hn::LoadU(d, x + i), v1 = hn::LoadU(d, x + i + N);
      const auto v2 = hn::LoadU(d, x + i + 2 * N), v3 = hn::LoadU(d, x + i + 3 * N);
      b0 = better(b0, v0);
      b1 = better(b1, v1);
      b2 = better(b2, v2);
      b3 = better(b3, v3);
      s0 = hn::Add(s0, v0);
      s1 = hn::Add(s1, v1);
      s2 = hn::Add(s2, v2);
      s3 = hn::Add(s3, v3);
    }
    for (; i + N <= n; i += N) {
      const auto v = hn::LoadU(d, x + i);
      b0 = better(b0, v);
      s0 = hn::Add(s0, v);
    }
    b0 = better(better(b0, b1), better(b2, b3));
    s0 = hn::Add(hn::Add(s0, s1), hn::Add(s2, s3));
    if (HWY_UNLIKELY(!hn::AllFalse(d, hn::IsNaN(s0)))) return SelectExtremeRun<kMax>(x, n);
    HWY_ALIGN T lanes[hn::MaxLanes(d)];
    hn::Store(b0, d, lanes);
    T best = lanes[0];
    for (int64_t k = 1; k < N; ++k)
      if (Replaces<kMax>(best, lanes[k])) best = lanes[k];
    for (; i < n; ++i) {
      if (std::isnan(x[i])) return x[i];  // the vectors held no NaN: this is the first
      if (Replaces<kMax>(best, x[i])) best = x[i];
    }
    return best;
  }
}

// out[c] = the extreme of column c (c < width) of the [n, inner] block at x (n >= 1).
template <bool kMax, typename T>
HWY_INLINE void ExtremeColumns(const T* x, int64_t n, int64_t inner, int64_t width, T* out) {
  const hn::ScalableTag<T> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t c = 0; c < width; ++c) out[c] = x[c];
  for (int64_t k = 1; k < n; ++k) {
    const T* row = x + k * inner;
    int64_t c = 0;
    for (; c + N <= width; c += N)
      hn::StoreU(Better<kMax>(d, hn::LoadU(d, out + c), hn::LoadU(d, row + c)), d, out + c);
    for (; c < width; ++c)
      if (Replaces<kMax>(out[c], row[c])) out[c] = row[c];
  }
}

// ---------------------------------------------------------------------------- argmax / argmin

// The first index of n contiguous values holding `target` (a NaN target: the first NaN); there is one.
template <typename T>
HWY_INLINE int64_t FirstIndexOf(const T* x, int64_t n, T target) {
  const hn::ScalableTag<T> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const bool nan = IsNaNScalar(target);
  const auto t = hn::Set(d, target);
  const auto hit = [&](int64_t i) {
    const auto v = hn::LoadU(d, x + i);
    if constexpr (std::is_floating_point<T>::value) {
      if (nan) return hn::IsNaN(v);
    }
    return hn::Eq(v, t);
  };
  int64_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    // Four vectors tested at once; the one that hit is found after.
    if (hn::AllFalse(d, hn::Or(hn::Or(hit(i), hit(i + N)), hn::Or(hit(i + 2 * N), hit(i + 3 * N))))) continue;
    break;
  }
  for (; i + N <= n; i += N) {
    const intptr_t lane = hn::FindFirstTrue(d, hit(i));
    if (lane >= 0) return i + lane;
  }
  for (; i < n; ++i)
    if (nan ? IsNaNScalar(x[i]) : x[i] == target) return i;
  return n - 1;  // not reached
}

// The index of the first element of n contiguous values that is zero (kZero) or nonzero (NaN is
// nonzero, -0.0 zero), n if there is none: all() and any(), stopping where the answer is known.
template <bool kZero, typename T>
HWY_INLINE int64_t FirstZeroOrNot(const T* x, int64_t n) {
  const hn::ScalableTag<T> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto zero = hn::Zero(d);
  const auto hit = [&](int64_t i) {
    const auto v = hn::LoadU(d, x + i);
    return kZero ? hn::Eq(v, zero) : hn::Not(hn::Eq(v, zero));  // Ne is false for NaN on AVX3
  };
  int64_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N)
    if (!hn::AllFalse(d, hn::Or(hn::Or(hit(i), hit(i + N)), hn::Or(hit(i + 2 * N), hit(i + 3 * N))))) break;
  for (; i + N <= n; i += N) {
    const intptr_t lane = hn::FindFirstTrue(d, hit(i));
    if (lane >= 0) return i + lane;
  }
  for (; i < n; ++i)
    if ((x[i] == T(0)) == kZero) return i;
  return n;
}

template <bool kMax, typename T>
HWY_INLINE int64_t ArgExtremeRun(const T* x, int64_t n) {
  return FirstIndexOf(x, n, ExtremeRun<kMax>(x, n));
}

// out[c] = the index k of column c's extreme in the [n, inner] block at x (c < width, n >= 1, n
// fits I, the signed integer as wide as T: the index's lanes then line up with the values').
template <bool kMax, typename T>
HWY_INLINE void ArgExtremeColumns(const T* x, int64_t n, int64_t inner, int64_t width, int64_t* out) {
  using I = hwy::MakeSigned<T>;
  const hn::ScalableTag<T> d;
  const hn::RebindToSigned<decltype(d)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  constexpr int64_t kTile = 256;  // columns per pass: their best values and indices stay in L1
  HWY_ALIGN T best[kTile];
  HWY_ALIGN I index[kTile];
  for (int64_t c0 = 0; c0 < width; c0 += kTile) {
    const int64_t w = HWY_MIN(kTile, width - c0);
    for (int64_t c = 0; c < w; ++c) {
      best[c] = x[c0 + c];
      index[c] = 0;
    }
    for (int64_t k = 1; k < n; ++k) {
      const T* row = x + k * inner + c0;
      const auto kv = hn::Set(di, static_cast<I>(k));
      int64_t c = 0;
      for (; c + N <= w; c += N) {
        const auto b = hn::LoadU(d, best + c), v = hn::LoadU(d, row + c);
        const auto replace = ReplacesV<kMax>(d, b, v);
        hn::StoreU(hn::IfThenElse(replace, v, b), d, best + c);
        hn::StoreU(hn::IfThenElse(hn::RebindMask(di, replace), kv, hn::LoadU(di, index + c)), di, index + c);
      }
      for (; c < w; ++c) {
        if (Replaces<kMax>(best[c], row[c])) {
          best[c] = row[c];
          index[c] = static_cast<I>(k);
        }
      }
    }
    for (int64_t c = 0; c < w; ++c) out[c0 + c] = index[c];
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace kiln
HWY_AFTER_NAMESPACE();

#endif  // KILN_CPU_VECTOR_REDUCE_INL_H_
