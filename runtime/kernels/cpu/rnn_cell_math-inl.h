// The pointwise math of one LSTM or GRU step and of its gradients, written once over a math policy
// `m` (m.one(), m.sigmoid(x), m.tanh(x)) and a value type V with + - *: rnn_cell_ops.cc runs it on
// Highway vectors of float and on scalar doubles. The order of operations is torch's CPU cells'
// (aten/src/ATen/native/RNN.cpp), so the float32 results round as torch's do. Included once per
// Highway target, inside its target region (the vector operators inline only there), hence no
// #pragma once.
#include <cmath>

#include <hwy/highway.h>

#if defined(KILN_CPU_RNN_CELL_MATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef KILN_CPU_RNN_CELL_MATH_INL_H_
#undef KILN_CPU_RNN_CELL_MATH_INL_H_
#else
#define KILN_CPU_RNN_CELL_MATH_INL_H_
#endif

HWY_BEFORE_NAMESPACE();
namespace kiln {
namespace cpu {
namespace HWY_NAMESPACE {
namespace rnn_math {

// Scalars with the C library's functions (float64, and the baseline target's float32).
template <typename T>
struct ScalarMath {
  T one() const { return T(1); }
  T sigmoid(T x) const { return T(1) / (T(1) + std::exp(-x)); }
  T tanh(T x) const { return std::tanh(x); }
};

// LSTM: gates i, f, g, o (pre-activation) and the cell state cx give the activated gates, hy and cy.
template <class M, class V>
inline void lstm_forward(const M& m, V gi, V gf, V gg, V go, V cx, V& i, V& f, V& g, V& o, V& hy, V& cy) {
  i = m.sigmoid(gi);
  f = m.sigmoid(gf);
  g = m.tanh(gg);
  o = m.sigmoid(go);
  cy = f * cx + i * g;
  hy = o * m.tanh(cy);
}

// The gradients of the pre-activation gates and of cx, from the activated gates, cx and cy and the
// gradients dhy, dcy reaching the step's outputs.
template <class M, class V>
inline void lstm_backward(const M& m, V dhy, V dcy, V i, V f, V g, V o, V cx, V cy, V& di, V& df, V& dg, V& dout,
                          V& dcx) {
  const V tc = m.tanh(cy);
  const V dc = dcy + dhy * o * (m.one() - tc * tc);
  di = dc * g * i * (m.one() - i);
  df = dc * cx * f * (m.one() - f);
  dg = dc * i * (m.one() - g * g);
  dout = dhy * tc * o * (m.one() - o);
  dcx = dc * f;
}

// GRU: r = sigmoid(ir + hr), z = sigmoid(iz + hz), n = tanh(in + r * hn), hy = (hx - n) * z + n.
template <class M, class V>
inline V gru_forward(const M& m, V ir, V iz, V in, V hr, V hz, V hn, V hx) {
  const V r = m.sigmoid(ir + hr), z = m.sigmoid(iz + hz);
  const V n = m.tanh(in + r * hn);
  return (hx - n) * z + n;
}

// The gradients of the GRU step's pre-activations (reset, update, new) and of hx. The hidden
// gates' new part is the input gates' times r (it was multiplied by r before the tanh).
template <class M, class V>
struct GruGrads {
  V dr, dz, dn, dn_hidden, dhx;
};

template <class M, class V>
inline GruGrads<M, V> gru_backward(const M& m, V grad, V ir, V iz, V in, V hr, V hz, V hn, V hx) {
  const V r = m.sigmoid(ir + hr), z = m.sigmoid(iz + hz);
  const V n = m.tanh(in + r * hn);
  const V dn = grad * (m.one() - z) * (m.one() - n * n);
  const V dz = grad * (hx - n) * z * (m.one() - z);
  const V dr = dn * hn * r * (m.one() - r);
  return {dr, dz, dn, dn * r, grad * z};
}

}  // namespace rnn_math
}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace kiln
HWY_AFTER_NAMESPACE();

#endif  // KILN_CPU_RNN_CELL_MATH_INL_H_
