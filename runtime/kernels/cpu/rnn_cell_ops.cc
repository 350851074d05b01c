// The fused pointwise halves of LSTM and GRU steps and their gradients (rnn_cell_math-inl.h has the
// math), on rows of contiguous (batch, k * hidden) tensors. float32 and float64 run on Highway
// vectors (float32's exp and tanh are Sleef's, as torch's sigmoid and tanh), picked at run time
// like the formula kernels; float16 and bfloat16 compute in float32.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "runtime/kernels/cpu/rnn_cell_ops.cc"
#include "runtime/kernels/cpu/vector_targets.h"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "runtime/kernels/cpu/rnn_cell_math-inl.h"
#include "runtime/kernels/cpu/vector_formula-inl.h"

HWY_BEFORE_NAMESPACE();
namespace kiln {
namespace cpu {
namespace HWY_NAMESPACE {

// The math policy of rnn_cell_math-inl.h over a Highway vector.
template <class D>
struct VectorMath {
  D d;
  hn::Vec<D> one() const { return hn::Set(d, 1); }
  hn::Vec<D> sigmoid(hn::Vec<D> x) const { return one() / (one() + kv::Exp(d, hn::Neg(x))); }
  hn::Vec<D> tanh(hn::Vec<D> x) const { return kv::Tanh(d, x); }
};

// f(math, x, y) on columns [0, n) of kIn input and kOut output rows: whole vectors, then the last
// partial one from zero-padded copies (so a column's result never depends on the row length).
template <typename T, size_t kIn, size_t kOut, class F>
HWY_INLINE void run_columns(int64_t n, const T* const (&in)[kIn], T* const (&out)[kOut], F f) {
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
  const rnn_math::ScalarMath<T> m;
  T x[kIn], y[kOut];
  for (int64_t j = 0; j < n; ++j) {
    for (size_t k = 0; k < kIn; ++k) x[k] = in[k][j];
    f(m, x, y);
    for (size_t k = 0; k < kOut; ++k) out[k][j] = y[k];
  }
#else
  const hn::ScalableTag<T> d;
  const VectorMath<decltype(d)> m{d};
  using V = hn::Vec<decltype(d)>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  V x[kIn], y[kOut];
  int64_t j = 0;
  for (; j + lanes <= n; j += lanes) {
    for (size_t k = 0; k < kIn; ++k) x[k] = hn::LoadU(d, in[k] + j);
    f(m, x, y);
    for (size_t k = 0; k < kOut; ++k) hn::StoreU(y[k], d, out[k] + j);
  }
  if (j == n) return;
  HWY_ALIGN T buffer[hn::MaxLanes(d)];
  for (size_t k = 0; k < kIn; ++k) {
    for (int64_t i = 0; i < lanes; ++i) buffer[i] = j + i < n ? in[k][j + i] : T(0);
    x[k] = hn::Load(d, buffer);
  }
  f(m, x, y);
  for (size_t k = 0; k < kOut; ++k) {
    hn::Store(y[k], d, buffer);
    for (int64_t i = 0; j + i < n; ++i) out[k][j + i] = buffer[i];
  }
#endif
}

// LSTM steps on `rows` rows of hidden size h, each operand at its own row stride (ld_*): the
// pre-activation gates (4h per row: i, f, g, o) and cx give the activated gates (acts, which may
// be the gates themselves: each vector is read before it is written), hy and cy.
template <typename T>
void LstmRowsForward(const T* gates, int64_t ld_g, T* acts, int64_t ld_a, const T* cx, int64_t ld_cx, T* hy,
                     int64_t ld_h, T* cy, int64_t ld_c, int64_t rows, int64_t h) {
  for (int64_t b = 0; b < rows; ++b) {
    const T* g = gates + b * ld_g;
    T* a = acts + b * ld_a;
    run_columns<T, 5, 6>(h, {g, g + h, g + 2 * h, g + 3 * h, cx + b * ld_cx},
                         {a, a + h, a + 2 * h, a + 3 * h, hy + b * ld_h, cy + b * ld_c},
                         [](const auto& m, const auto* x, auto* y) {
                           rnn_math::lstm_forward(m, x[0], x[1], x[2], x[3], x[4], y[0], y[1], y[2], y[3], y[4], y[5]);
                         });
  }
}

// The gradients of an LSTM step from its activated gates, cx and cy, and the gradients dhy, dcy of
// its outputs: the pre-activation gates' (dgates, 4h per row) and cx's (dcx, which may be dcy).
template <typename T>
void LstmRowsBackward(const T* acts, int64_t ld_a, const T* cx, int64_t ld_cx, const T* cy, int64_t ld_c,
                      const T* dhy, int64_t ld_dh, const T* dcy, int64_t ld_dc, T* dgates, int64_t ld_dg, T* dcx,
                      int64_t ld_dcx, int64_t rows, int64_t h) {
  for (int64_t b = 0; b < rows; ++b) {
    const T* a = acts + b * ld_a;
    T* d = dgates + b * ld_dg;
    run_columns<T, 8, 5>(h, {dhy + b * ld_dh, dcy + b * ld_dc, a, a + h, a + 2 * h, a + 3 * h, cx + b * ld_cx, cy + b * ld_c},
                         {d, d + h, d + 2 * h, d + 3 * h, dcx + b * ld_dcx}, [](const auto& m, const auto* x, auto* y) {
                           rnn_math::lstm_backward(m, x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], y[0], y[1],
                                                   y[2], y[3], y[4]);
                         });
  }
}

// input_gates, hidden_gates (B, 3H), hx (B, H) -> hy (B, H).
template <typename T>
void GruForward(const T* ig, const T* hg, const T* hx, T* out, int64_t batch, int64_t h) {
  for (int64_t b = 0; b < batch; ++b) {
    const T* i = ig + b * 3 * h;
    const T* g = hg + b * 3 * h;
    run_columns<T, 7, 1>(h, {i, i + h, i + 2 * h, g, g + h, g + 2 * h, hx + b * h}, {out + b * h},
                         [](const auto& m, const auto* x, auto* y) {
                           y[0] = rnn_math::gru_forward(m, x[0], x[1], x[2], x[3], x[4], x[5], x[6]);
                         });
  }
}

// grad (B, H) -> the gradients of input_gates (dig, B x 3H), hidden_gates (dhg, B x 3H) and hx
// (dhx, B x H), in one pass.
template <typename T>
void GruBackward(const T* grad, const T* ig, const T* hg, const T* hx, T* dig, T* dhg, T* dhx, int64_t batch,
                 int64_t h) {
  for (int64_t b = 0; b < batch; ++b) {
    const T* i = ig + b * 3 * h;
    const T* g = hg + b * 3 * h;
    T* di = dig + b * 3 * h;
    T* dg = dhg + b * 3 * h;
    run_columns<T, 8, 7>(h, {grad + b * h, i, i + h, i + 2 * h, g, g + h, g + 2 * h, hx + b * h},
                         {di, di + h, di + 2 * h, dg, dg + h, dg + 2 * h, dhx + b * h},
                         [](const auto& m, const auto* x, auto* y) {
                           const auto r = rnn_math::gru_backward(m, x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]);
                           y[0] = y[3] = r.dr;
                           y[1] = y[4] = r.dz;
                           y[2] = r.dn;
                           y[5] = r.dn_hidden;
                           y[6] = r.dhx;
                         });
  }
}

// The entry points Highway's dispatch table names (one per dtype).
#define KILN_RNN_CELL_ENTRIES(T, suffix)                                                                             \
  void lstm_forward_##suffix(const T* g, int64_t lg, T* a, int64_t la, const T* c, int64_t lc, T* hy, int64_t lh,   \
                             T* cy, int64_t lcy, int64_t rows, int64_t h) {                                        \
    LstmRowsForward(g, lg, a, la, c, lc, hy, lh, cy, lcy, rows, h);                                                 \
  }                                                                                                                \
  void lstm_backward_##suffix(const T* a, int64_t la, const T* c, int64_t lc, const T* cy, int64_t lcy,            \
                              const T* dh, int64_t ldh, const T* dc, int64_t ldc, T* dg, int64_t ldg, T* dcx,      \
                              int64_t ldcx, int64_t rows, int64_t h) {                                             \
    LstmRowsBackward(a, la, c, lc, cy, lcy, dh, ldh, dc, ldc, dg, ldg, dcx, ldcx, rows, h);                         \
  }                                                                                                                \
  void gru_forward_##suffix(const T* i, const T* g, const T* x, T* o, int64_t b, int64_t h) {                        \
    GruForward(i, g, x, o, b, h);                                                                                  \
  }                                                                                                                \
  void gru_backward_##suffix(const T* d, const T* i, const T* g, const T* x, T* di, T* dg, T* dx, int64_t b,        \
                             int64_t h) {                                                                          \
    GruBackward(d, i, g, x, di, dg, dx, b, h);                                                                     \
  }
KILN_RNN_CELL_ENTRIES(float, f32)
KILN_RNN_CELL_ENTRIES(double, f64)
#undef KILN_RNN_CELL_ENTRIES

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace kiln
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "generated/kernels/_gru_cell_fused.h"
#include "generated/kernels/_gru_cell_fused_backward.h"
#include "generated/kernels/_lstm_cell_fused.h"
#include "generated/kernels/_lstm_cell_fused_backward.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/rnn_rows.h"

namespace kiln {
namespace cpu {

HWY_EXPORT(lstm_forward_f32);
HWY_EXPORT(lstm_forward_f64);
HWY_EXPORT(lstm_backward_f32);
HWY_EXPORT(lstm_backward_f64);
HWY_EXPORT(gru_forward_f32);
HWY_EXPORT(gru_forward_f64);
HWY_EXPORT(gru_backward_f32);
HWY_EXPORT(gru_backward_f64);

void lstm_rows_forward(const float* g, int64_t lg, float* a, int64_t la, const float* c, int64_t lc, float* hy,
                              int64_t lh, float* cy, int64_t lcy, int64_t rows, int64_t h) {
  HWY_DYNAMIC_DISPATCH(lstm_forward_f32)(g, lg, a, la, c, lc, hy, lh, cy, lcy, rows, h);
}
void lstm_rows_forward(const double* g, int64_t lg, double* a, int64_t la, const double* c, int64_t lc,
                               double* hy, int64_t lh, double* cy, int64_t lcy, int64_t rows, int64_t h) {
  HWY_DYNAMIC_DISPATCH(lstm_forward_f64)(g, lg, a, la, c, lc, hy, lh, cy, lcy, rows, h);
}
void lstm_rows_backward(const float* a, int64_t la, const float* c, int64_t lc, const float* cy, int64_t lcy,
                               const float* dh, int64_t ldh, const float* dc, int64_t ldc, float* dg, int64_t ldg,
                               float* dcx, int64_t ldcx, int64_t rows, int64_t h) {
  HWY_DYNAMIC_DISPATCH(lstm_backward_f32)(a, la, c, lc, cy, lcy, dh, ldh, dc, ldc, dg, ldg, dcx, ldcx, rows, h);
}
void lstm_rows_backward(const double* a, int64_t la, const double* c, int64_t lc, const double* cy,
                                int64_t lcy, const double* dh, int64_t ldh, const double* dc, int64_t ldc, double* dg,
                                int64_t ldg, double* dcx, int64_t ldcx, int64_t rows, int64_t h) {
  HWY_DYNAMIC_DISPATCH(lstm_backward_f64)(a, la, c, lc, cy, lcy, dh, ldh, dc, ldc, dg, ldg, dcx, ldcx, rows, h);
}

namespace {

// The operands of a fused cell: 2-D, one floating dtype, batch rows alike, the given widths (in
// multiples of the hidden size h, read from the last operand); made contiguous in the dtype the
// math runs in.
struct CellOperands {
  std::vector<TensorBase> tensors;
  ScalarType dtype, compute;
  int64_t batch, h;
};

CellOperands cell_operands(const char* op, std::initializer_list<std::pair<const TensorBase*, int64_t>> operands) {
  const TensorBase& last = *(operands.end() - 1)->first;
  KILN_CHECK(last.dim() == 2, op, "(): expected 2-D operands, got ", shape_str(last.sizes()));
  CellOperands c{{}, last.dtype(), opmath_type(last.dtype()), last.sizes()[0], last.sizes()[1]};
  KILN_CHECK(is_floating_type(c.dtype), op, "(): expected floating point operands, got ", scalar_type_name(c.dtype));
  for (const auto& [t, width] : operands) {
    KILN_CHECK(t->dim() == 2 && t->sizes()[0] == c.batch && t->sizes()[1] == width * c.h, op,
               "(): expected an operand of shape [", c.batch, ", ", width * c.h, "], got ", shape_str(t->sizes()));
    KILN_CHECK(t->dtype() == c.dtype, op, "(): expected operands of one dtype, got ", scalar_type_name(t->dtype()),
               " and ", scalar_type_name(c.dtype));
    c.tensors.push_back(contiguous_cpu(cast_to(*t, c.compute)));
  }
  return c;
}

template <typename T>
T* data(const CellOperands& c, size_t k) {
  return static_cast<T*>(c.tensors[k].data_ptr());
}

// The activated gates of one LSTM step, with its [hy | cy] in out (B, 2H).
template <typename T>
TensorBase lstm_step(const CellOperands& c, size_t gates, size_t cx, const TensorBase& out) {
  TensorBase acts = empty_cpu({c.batch, 4 * c.h}, c.compute);
  T* o = static_cast<T*>(out.data_ptr());
  lstm_rows_forward(data<T>(c, gates), 4 * c.h, static_cast<T*>(acts.data_ptr()), 4 * c.h, data<T>(c, cx), c.h, o,
                       2 * c.h, o + c.h, 2 * c.h, c.batch, c.h);
  return acts;
}

}  // namespace

TensorBase lstm_cell_fused(const TensorBase& gates, const TensorBase& cx) {
  const CellOperands c = cell_operands("_lstm_cell_fused", {{&gates, 4}, {&cx, 1}});
  TensorBase out = empty_cpu({c.batch, 2 * c.h}, c.compute);
  KILN_DISPATCH_FLOATING_TYPES(c.compute, "_lstm_cell_fused", [&] { lstm_step<scalar_t>(c, 0, 1, out); });
  return cast_to(out, c.dtype);
}

std::vector<TensorBase> lstm_cell_fused_backward(const TensorBase& grad, const TensorBase& gates, const TensorBase& cx,
                                                 const TensorBase& state) {
  const CellOperands c =
      cell_operands("_lstm_cell_fused_backward", {{&grad, 2}, {&gates, 4}, {&state, 2}, {&cx, 1}});
  TensorBase dgates = empty_cpu({c.batch, 4 * c.h}, c.compute);
  TensorBase dcx = empty_cpu({c.batch, c.h}, c.compute);
  KILN_DISPATCH_FLOATING_TYPES(c.compute, "_lstm_cell_fused_backward", [&] {
    // The activations again (cheaper to recompute than to keep a second output).
    TensorBase scratch = empty_cpu({c.batch, 2 * c.h}, c.compute);
    const TensorBase acts = lstm_step<scalar_t>(c, 1, 3, scratch);
    const scalar_t* dy = data<scalar_t>(c, 0);
    lstm_rows_backward(static_cast<const scalar_t*>(acts.data_ptr()), 4 * c.h, data<scalar_t>(c, 3), c.h,
                       data<scalar_t>(c, 2) + c.h, 2 * c.h, dy, 2 * c.h, dy + c.h, 2 * c.h,
                       static_cast<scalar_t*>(dgates.data_ptr()), 4 * c.h, static_cast<scalar_t*>(dcx.data_ptr()),
                       c.h, c.batch, c.h);
  });
  return {cast_to(dgates, c.dtype), cast_to(dcx, c.dtype)};
}

TensorBase gru_cell_fused(const TensorBase& input_gates, const TensorBase& hidden_gates, const TensorBase& hx) {
  const CellOperands c = cell_operands("_gru_cell_fused", {{&input_gates, 3}, {&hidden_gates, 3}, {&hx, 1}});
  TensorBase out = empty_cpu({c.batch, c.h}, c.compute);
  if (c.compute == ScalarType::Float32) {
    HWY_DYNAMIC_DISPATCH(gru_forward_f32)(data<float>(c, 0), data<float>(c, 1), data<float>(c, 2),
                                          static_cast<float*>(out.data_ptr()), c.batch, c.h);
  } else {
    HWY_DYNAMIC_DISPATCH(gru_forward_f64)(data<double>(c, 0), data<double>(c, 1), data<double>(c, 2),
                                          static_cast<double*>(out.data_ptr()), c.batch, c.h);
  }
  return cast_to(out, c.dtype);
}

std::vector<TensorBase> gru_cell_fused_backward(const TensorBase& grad, const TensorBase& input_gates,
                                                const TensorBase& hidden_gates, const TensorBase& hx) {
  const CellOperands c = cell_operands("_gru_cell_fused_backward",
                                       {{&grad, 1}, {&input_gates, 3}, {&hidden_gates, 3}, {&hx, 1}});
  TensorBase dig = empty_cpu({c.batch, 3 * c.h}, c.compute), dhg = empty_cpu({c.batch, 3 * c.h}, c.compute);
  TensorBase dhx = empty_cpu({c.batch, c.h}, c.compute);
  if (c.compute == ScalarType::Float32) {
    HWY_DYNAMIC_DISPATCH(gru_backward_f32)(data<float>(c, 0), data<float>(c, 1), data<float>(c, 2),
                                           data<float>(c, 3), static_cast<float*>(dig.data_ptr()),
                                           static_cast<float*>(dhg.data_ptr()), static_cast<float*>(dhx.data_ptr()),
                                           c.batch, c.h);
  } else {
    HWY_DYNAMIC_DISPATCH(gru_backward_f64)(data<double>(c, 0), data<double>(c, 1), data<double>(c, 2),
                                           data<double>(c, 3), static_cast<double*>(dig.data_ptr()),
                                           static_cast<double*>(dhg.data_ptr()), static_cast<double*>(dhx.data_ptr()),
                                           c.batch, c.h);
  }
  return {cast_to(dig, c.dtype), cast_to(dhg, c.dtype), cast_to(dhx, c.dtype)};
}

}  // namespace cpu
}  // namespace kiln
#endif  // HWY_ONCE
