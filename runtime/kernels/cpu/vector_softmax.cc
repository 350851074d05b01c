// The entry points of runtime/kernels/cpu/vector_softmax.h: hwy/foreach_target.h compiles the loops
// below once per target (vector_targets.h), HWY_EXPORT tables them, and HWY_DYNAMIC_DISPATCH calls
// the best this CPU supports.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "runtime/kernels/cpu/vector_softmax.cc"
#include "runtime/kernels/cpu/vector_targets.h"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cmath>
#include <cstdint>

#include "runtime/kernels/cpu/vector_formula-inl.h"
#include "runtime/kernels/cpu/vector_reduce-inl.h"

HWY_BEFORE_NAMESPACE();
namespace kiln {
namespace cpu {
namespace HWY_NAMESPACE {

// Elements per chunk of a row's sum: four float vector accumulators within a chunk, chunk totals
// in double.
constexpr int64_t kSoftmaxChunk = 1024;
// Columns a softmax_columns call takes at most (for_each_column_chunk's kColumnChunk).
constexpr int64_t kColumnWidth = 1024;

// Scalar loops, exp in double: Highway's portable baseline (kv::Exp's float lanes are Sleef's, which
// it lacks) and, on every target, lines shorter than kShortLine (a padded vector's exp and the
// chunk machinery cost more than the scalar exps there).
constexpr int64_t kShortLine = 8;

template <bool kLog>
HWY_INLINE void ScalarSoftmaxRow(const float* x, float* y, int64_t n) {
  float max = x[0];
  for (int64_t k = 1; k < n; ++k) max = std::isnan(x[k]) || x[k] > max ? x[k] : max;
  double sum = 0;
  for (int64_t k = 0; k < n; ++k) sum += std::exp(static_cast<double>(x[k] - max));
  if (kLog) {
    const float log_sum = static_cast<float>(std::log(sum));
    for (int64_t k = 0; k < n; ++k) y[k] = (x[k] - max) - log_sum;
  } else {
    for (int64_t k = 0; k < n; ++k) y[k] = static_cast<float>(std::exp(static_cast<double>(x[k] - max)) / sum);
  }
}

template <bool kLog>
HWY_INLINE void ScalarSoftmaxColumns(const float* x, float* y, int64_t n, int64_t inner, int64_t width) {
  for (int64_t c = 0; c < width; ++c) {
    float max = x[c];
    for (int64_t k = 1; k < n; ++k) max = std::isnan(x[k * inner + c]) || x[k * inner + c] > max ? x[k * inner + c] : max;
    double sum = 0;
    for (int64_t k = 0; k < n; ++k) sum += std::exp(static_cast<double>(x[k * inner + c] - max));
    const float log_sum = static_cast<float>(std::log(sum));
    for (int64_t k = 0; k < n; ++k) {
      const float v = x[k * inner + c];
      y[k * inner + c] = kLog ? (v - max) - log_sum : static_cast<float>(std::exp(static_cast<double>(v - max)) / sum);
    }
  }
}

template <bool kLog>
HWY_INLINE void ScalarSoftmaxBackwardRow(const float* g, const float* o, float* gi, int64_t n) {
  double sum = 0;
  for (int64_t k = 0; k < n; ++k) sum += kLog ? static_cast<double>(g[k]) : static_cast<double>(g[k] * o[k]);
  const float s = static_cast<float>(sum);
  for (int64_t k = 0; k < n; ++k) gi[k] = kLog ? g[k] - std::exp(o[k]) * s : o[k] * (g[k] - s);
}

#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
template <bool kLog>
void SoftmaxRow(const float* x, float* y, int64_t n) {
  ScalarSoftmaxRow<kLog>(x, y, n);
}
template <bool kLog>
void SoftmaxColumns(const float* x, float* y, int64_t n, int64_t inner, int64_t width) {
  ScalarSoftmaxColumns<kLog>(x, y, n, inner, width);
}
template <bool kLog>
void SoftmaxBackwardRow(const float* g, const float* o, float* gi, int64_t n) {
  ScalarSoftmaxBackwardRow<kLog>(g, o, gi, n);
}
template <bool kLog>
void SoftmaxBackwardRowSum(const float* g, const float* o, float* gi, int64_t n, float s) {
  for (int64_t k = 0; k < n; ++k) gi[k] = kLog ? g[k] - std::exp(o[k]) * s : (g[k] - s) * o[k];
}

#else
namespace hn = hwy::HWY_NAMESPACE;

// The sum over i < n of term(d, i): the vector of terms [i, i + N), in four float accumulators per
// chunk, chunk totals added in double. tail(i, m) gives the last partial vector's m terms with the
// other lanes 0.
template <class D, class Term, class Tail>
HWY_INLINE double ChunkedRowSum(D d, int64_t n, Term term, Tail tail) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  double total = 0;
  for (int64_t c = 0; c < n; c += kSoftmaxChunk) {
    const int64_t end = HWY_MIN(n, c + kSoftmaxChunk);
    auto a0 = hn::Zero(d), a1 = a0, a2 = a0, a3 = a0;
    int64_t i = c;
    for (; i + 4 * N <= end; i += 4 * N) {
      a0 = hn::Add(a0, term(i));
      a1 = hn::Add(a1, term(i + N));
      a2 = hn::Add(a2, term(i + 2 * N));
      a3 = hn::Add(a3, term(i + 3 * N));
    }
    for (; i + N <= end; i += N) a0 = hn::Add(a0, term(i));
    if (i < end) a1 = hn::Add(a1, tail(i, end - i));
    total += static_cast<double>(FoldLanes(AddOp(), d, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3))));
  }
  return total;
}

// The m < N floats at p in a vector, the other lanes `pad`.
template <class D>
HWY_INLINE hn::Vec<D> LoadPartial(D d, const float* p, int64_t m, float pad) {
  HWY_ALIGN float buffer[hn::MaxLanes(d)];
  for (size_t k = 0; k < hn::MaxLanes(d); ++k) buffer[k] = pad;
  for (int64_t k = 0; k < m; ++k) buffer[k] = p[k];
  return hn::Load(d, buffer);
}

template <class D>
HWY_INLINE void StorePartial(D d, hn::Vec<D> v, float* p, int64_t m) {
  HWY_ALIGN float buffer[hn::MaxLanes(d)];
  hn::Store(v, d, buffer);
  for (int64_t k = 0; k < m; ++k) p[k] = buffer[k];
}

#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// Where kv::Exp and kv::Log are Sleef's float functions, a row is torch 1.13's float32 softmax /
// log_softmax over the last dim (_vec_softmax_lastdim, _vec_log_softmax_lastdim as AVX2 builds
// them), so that cross_entropy's log-probabilities, and the gradients they feed, are torch's bits:
// e = exp(x - max); their sum in 8 lanes (element i in lane i % 8, in order), the lanes folded as
// AVX2's shuffles fold them, ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)), or under 8
// elements added in order; then y = e * (1 / sum), or y = (x - max) - log(sum). x may be y.
template <bool kLog>
void SoftmaxRow(const float* x, float* y, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));  // 8 or 16
  const float max = ExtremeRun<true>(x, n);
  const auto vmax = hn::Set(d, max);
  HWY_ALIGN float e[hn::MaxLanes(d)];
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    const auto v = kv::Exp(d, hn::Sub(hn::LoadU(d, x + i), vmax));
    hn::Store(v, d, e);
    if (!kLog) hn::StoreU(v, d, y + i);
    for (int64_t g = 0; g < N; g += 8)
      for (int l = 0; l < 8; ++l) acc[l] += e[g + l];
  }
  if (i < n) {
    const int64_t m = n - i;
    hn::Store(kv::Exp(d, hn::Sub(LoadPartial(d, x + i, m, max), vmax)), d, e);
    for (int64_t k = 0; k < m; ++k) {
      acc[k % 8] += e[k];  // i is a multiple of 8
      if (!kLog) y[i + k] = e[k];
    }
  }
  float sum;
  if (n < 8) {
    sum = acc[0];
    for (int64_t k = 1; k < n; ++k) sum += acc[k];
  } else {
    sum = ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
  }
  i = 0;
  if (kLog) {
    const float log_sum = hn::GetLane(kv::Log(d, hn::Set(d, sum)));
    const auto vlog = hn::Set(d, log_sum);
    for (; i + N <= n; i += N) hn::StoreU(hn::Sub(hn::Sub(hn::LoadU(d, x + i), vmax), vlog), d, y + i);
    for (; i < n; ++i) y[i] = (x[i] - max) - log_sum;
  } else {
    const float scale = 1.0f / sum;
    const auto vscale = hn::Set(d, scale);
    for (; i + N <= n; i += N) hn::StoreU(hn::Mul(hn::LoadU(d, y + i), vscale), d, y + i);
    for (; i < n; ++i) y[i] *= scale;
  }
}
#else
// softmax: y = exp(x - max) (written during the sum), then y *= 1 / sum; log_softmax: y = (x - max)
// - log(sum). The max is NaN if the row holds one (ExtremeRun), so is everything after.
template <bool kLog>
void SoftmaxRow(const float* x, float* y, int64_t n) {
  if (n < kShortLine) return ScalarSoftmaxRow<kLog>(x, y, n);
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const float max = ExtremeRun<true>(x, n);
  const auto vmax = hn::Set(d, max);
  const double sum = ChunkedRowSum(
      d, n,
      [&](int64_t i) {
        const auto e = kv::Exp(d, hn::Sub(hn::LoadU(d, x + i), vmax));
        if (!kLog) hn::StoreU(e, d, y + i);
        return e;
      },
      [&](int64_t i, int64_t m) {
        const auto e = hn::IfThenElseZero(hn::FirstN(d, static_cast<size_t>(m)),
                                          kv::Exp(d, hn::Sub(LoadPartial(d, x + i, m, max), vmax)));
        if (!kLog) StorePartial(d, e, y + i, m);
        return e;
      });
  int64_t i = 0;
  if (kLog) {
    const float log_sum = static_cast<float>(std::log(sum));
    const auto vlog = hn::Set(d, log_sum);
    for (; i + N <= n; i += N) hn::StoreU(hn::Sub(hn::Sub(hn::LoadU(d, x + i), vmax), vlog), d, y + i);
    for (; i < n; ++i) y[i] = (x[i] - max) - log_sum;
  } else {
    const float scale = static_cast<float>(1.0 / sum);
    const auto vscale = hn::Set(d, scale);
    for (; i + N <= n; i += N) hn::StoreU(hn::Mul(hn::LoadU(d, y + i), vscale), d, y + i);
    for (; i < n; ++i) y[i] *= scale;
  }
}
#endif

// The same down the columns of a [n, inner] block, a whole row of lanes at a time; a column's sum
// in float, rows in order (torch's order).
template <bool kLog>
void SoftmaxColumns(const float* x, float* y, int64_t n, int64_t inner, int64_t width) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  HWY_ALIGN float max[kColumnWidth];
  HWY_ALIGN float sum[kColumnWidth];
  ExtremeColumns<true>(x, n, inner, width, max);
  for (int64_t c = 0; c < width; ++c) sum[c] = 0;
  const int64_t vector_width = width - width % N;
  for (int64_t k = 0; k < n; ++k) {
    const float* xr = x + k * inner;
    float* yr = y + k * inner;
    for (int64_t c = 0; c < vector_width; c += N) {
      const auto e = kv::Exp(d, hn::Sub(hn::LoadU(d, xr + c), hn::Load(d, max + c)));
      if (!kLog) hn::StoreU(e, d, yr + c);
      hn::Store(hn::Add(hn::Load(d, sum + c), e), d, sum + c);
    }
    // torch's AVX2 build takes the columns 8 at a time: where this target's vectors are wider
    // (AVX-512), a remaining group of 8 goes through the vector exp too, in the low lanes
    int64_t c = vector_width;
    for (; N > 8 && c + 8 <= width; c += 8) {
      const auto e = kv::Exp(d, hn::Sub(LoadPartial(d, xr + c, 8, 0.0f), LoadPartial(d, max + c, 8, 0.0f)));
      if (!kLog) StorePartial(d, e, yr + c, 8);
      StorePartial(d, hn::Add(LoadPartial(d, sum + c, 8, 0.0f), e), sum + c, 8);
    }
    for (; c < width; ++c) {
      const float e = std::exp(xr[c] - max[c]);
      if (!kLog) yr[c] = e;
      sum[c] += e;
    }
  }
  // log_softmax: sum becomes log(sum). softmax divides by the sum (torch 1.13's _vec_softmax for an
  // inner dim: exp / sum, not exp * (1 / sum)).
  if (kLog) {
    // as torch's vec::map of Vectorized::log over the sums (lane by lane: the grouping changes no bit),
    // a partial vector for the rest
    for (int64_t c = 0; c < width; c += N) {
      const int64_t m = HWY_MIN(N, width - c);
      StorePartial(d, kv::Log(d, LoadPartial(d, sum + c, m, 1.0f)), sum + c, m);
    }
  }
  for (int64_t k = 0; k < n; ++k) {
    const float* xr = x + k * inner;
    float* yr = y + k * inner;
    for (int64_t c = 0; c < vector_width; c += N) {
      const auto s = hn::Load(d, sum + c);
      if (kLog) {
        hn::StoreU(hn::Sub(hn::Sub(hn::LoadU(d, xr + c), hn::Load(d, max + c)), s), d, yr + c);
      } else {
        hn::StoreU(hn::Div(hn::LoadU(d, yr + c), s), d, yr + c);
      }
    }
    for (int64_t c = vector_width; c < width; ++c) yr[c] = kLog ? (xr[c] - max[c]) - sum[c] : yr[c] / sum[c];
  }
}

// softmax: gi = o * (g - sum(g * o)); log_softmax: gi = g - exp(o) * sum(g).
template <bool kLog>
void SoftmaxBackwardRow(const float* g, const float* o, float* gi, int64_t n) {
  if (n < kShortLine) return ScalarSoftmaxBackwardRow<kLog>(g, o, gi, n);
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto term = [&](auto vg, auto vo) { return kLog ? vg : hn::Mul(vg, vo); };
  const double sum = ChunkedRowSum(
      d, n, [&](int64_t i) { return term(hn::LoadU(d, g + i), hn::LoadU(d, o + i)); },
      [&](int64_t i, int64_t m) { return term(LoadPartial(d, g + i, m, 0.0f), LoadPartial(d, o + i, m, 0.0f)); });
  const float s = static_cast<float>(sum);
  const auto vs = hn::Set(d, s);
  const auto one = [&](auto vg, auto vo) {
    return kLog ? hn::Sub(vg, hn::Mul(kv::Exp(d, vo), vs)) : hn::Mul(vo, hn::Sub(vg, vs));
  };
  int64_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(one(hn::LoadU(d, g + i), hn::LoadU(d, o + i)), d, gi + i);
  if (i < n) StorePartial(d, one(LoadPartial(d, g + i, n - i, 0.0f), LoadPartial(d, o + i, n - i, 0.0f)), gi + i, n - i);
}

// The elementwise half of torch's _vec_host_softmax_backward_lastdim, given its sum s (computed in
// torch's order by the caller): softmax (g - s) * o; log_softmax g - exp(o) * s, one fused
// multiply-add as torch's AVX2 build (NegMulAdd), exp Sleef's.
template <bool kLog>
void SoftmaxBackwardRowSum(const float* g, const float* o, float* gi, int64_t n, float s) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto vs = hn::Set(d, s);
  const auto one = [&](auto vg, auto vo) {
    return kLog ? hn::NegMulAdd(kv::Exp(d, vo), vs, vg) : hn::Mul(hn::Sub(vg, vs), vo);
  };
  int64_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(one(hn::LoadU(d, g + i), hn::LoadU(d, o + i)), d, gi + i);
  if (i < n) StorePartial(d, one(LoadPartial(d, g + i, n - i, 0.0f), LoadPartial(d, o + i, n - i, 0.0f)), gi + i, n - i);
}
#endif

// Sleef's exp of the m floats at x into y (the C library's where the target has no Sleef lanes).
HWY_INLINE void ExpRun(const float* x, float* y, int64_t m) {
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
  for (int64_t i = 0; i < m; ++i) y[i] = std::exp(x[i]);
#else
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + N <= m; i += N) hn::StoreU(kv::Exp(d, hn::LoadU(d, x + i)), d, y + i);
  if (i < m) StorePartial(d, kv::Exp(d, LoadPartial(d, x + i, m - i, 0.0f)), y + i, m - i);
#endif
}

// torch 1.13's softmax_backward_kernel down the columns of a [n, inner] block (a dim that is not the
// last), as its AVX2 build computes it: per column the sum in float in row order (softmax: g * o fused
// into it, the compiler contracting the multiply-add), then softmax o * (g - sum), log_softmax
// g - exp(o) * sum fused, exp Sleef's on the columns it takes 8 at a time and the C library's on the
// rest (a chunk's columns past its last multiple of 8: chunks start at multiples of 8).
template <bool kLog>
void SoftmaxBackwardColumns(const float* g, const float* o, float* gi, int64_t n, int64_t inner, int64_t width) {
  HWY_ALIGN float sum[kColumnWidth];
  for (int64_t c = 0; c < width; ++c) sum[c] = 0;
  for (int64_t k = 0; k < n; ++k) {
    const float* gr = g + k * inner;
    const float* orow = o + k * inner;
    for (int64_t c = 0; c < width; ++c) sum[c] = kLog ? sum[c] + gr[c] : std::fma(gr[c], orow[c], sum[c]);
  }
  const int64_t vector_columns = width - width % 8;
  for (int64_t k = 0; k < n; ++k) {
    const float* gr = g + k * inner;
    const float* orow = o + k * inner;
    float* ir = gi + k * inner;
    if (kLog) {
      ExpRun(orow, ir, vector_columns);
      for (int64_t c = 0; c < vector_columns; ++c) ir[c] = std::fma(-ir[c], sum[c], gr[c]);
      for (int64_t c = vector_columns; c < width; ++c) ir[c] = std::fma(-std::exp(orow[c]), sum[c], gr[c]);
    } else {
      for (int64_t c = 0; c < width; ++c) ir[c] = orow[c] * (gr[c] - sum[c]);
    }
  }
}

void SoftmaxBackwardColumnsF32(const float* g, const float* o, float* gi, int64_t n, int64_t inner, int64_t width,
                               bool log) {
  log ? SoftmaxBackwardColumns<true>(g, o, gi, n, inner, width) : SoftmaxBackwardColumns<false>(g, o, gi, n, inner, width);
}

void SoftmaxRowF32(const float* x, float* y, int64_t n, bool log) {
  log ? SoftmaxRow<true>(x, y, n) : SoftmaxRow<false>(x, y, n);
}
void SoftmaxColumnsF32(const float* x, float* y, int64_t n, int64_t inner, int64_t width, bool log) {
  log ? SoftmaxColumns<true>(x, y, n, inner, width) : SoftmaxColumns<false>(x, y, n, inner, width);
}
void SoftmaxBackwardRowF32(const float* g, const float* o, float* gi, int64_t n, bool log) {
  log ? SoftmaxBackwardRow<true>(g, o, gi, n) : SoftmaxBackwardRow<false>(g, o, gi, n);
}
void SoftmaxBackwardRowSumF32(const float* g, const float* o, float* gi, int64_t n, bool log, float s) {
  log ? SoftmaxBackwardRowSum<true>(g, o, gi, n, s) : SoftmaxBackwardRowSum<false>(g, o, gi, n, s);
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace kiln
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "runtime/kernels/cpu/vector_softmax.h"

namespace kiln {
namespace cpu {

HWY_EXPORT(SoftmaxRowF32);
HWY_EXPORT(SoftmaxColumnsF32);
HWY_EXPORT(SoftmaxBackwardRowF32);
HWY_EXPORT(SoftmaxBackwardRowSumF32);
HWY_EXPORT(SoftmaxBackwardColumnsF32);

namespace vec {

void softmax_row(const float* x, float* y, int64_t n, bool log) { HWY_DYNAMIC_DISPATCH(SoftmaxRowF32)(x, y, n, log); }
void softmax_columns(const float* x, float* y, int64_t n, int64_t inner, int64_t width, bool log) {
  HWY_DYNAMIC_DISPATCH(SoftmaxColumnsF32)(x, y, n, inner, width, log);
}
void softmax_backward_row(const float* g, const float* o, float* gi, int64_t n, bool log) {
  HWY_DYNAMIC_DISPATCH(SoftmaxBackwardRowF32)(g, o, gi, n, log);
}
void softmax_backward_row_given_sum(const float* g, const float* o, float* gi, int64_t n, bool log, float sum) {
  HWY_DYNAMIC_DISPATCH(SoftmaxBackwardRowSumF32)(g, o, gi, n, log, sum);
}
void softmax_backward_columns(const float* g, const float* o, float* gi, int64_t n, int64_t inner, int64_t width,
                              bool log) {
  HWY_DYNAMIC_DISPATCH(SoftmaxBackwardColumnsF32)(g, o, gi, n, inner, width, log);
}

}  // namespace vec
}  // namespace cpu
}  // namespace kiln
#endif  // HWY_ONCE
