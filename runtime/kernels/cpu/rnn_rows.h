// The vectorized row kernels of LSTM steps (rnn_cell_ops.cc, Highway, picked at run time) for the
// CPU's recurrent kernels: rows of a batch, each operand at its own row stride, in float or double.
#pragma once

#include <cstdint>

namespace kiln {
namespace cpu {

// lstm_rows_forward: gates (4h pre-activations per row: i, f, g, o) and cx -> the activated gates
// (acts, which may be gates itself), hy = o * tanh(cy) and cy = f * cx + i * g.
// lstm_rows_backward: the activated gates, cx, cy and the gradients dhy, dcy of the step's outputs
// -> the gradients of the pre-activation gates and of cx (dcx may be dcy: each vector is read
// before it is written).
#define KILN_LSTM_ROWS(T)                                                                                           \
  void lstm_rows_forward(const T* gates, int64_t ld_gates, T* acts, int64_t ld_acts, const T* cx, int64_t ld_cx,   \
                         T* hy, int64_t ld_hy, T* cy, int64_t ld_cy, int64_t rows, int64_t h);                       \
  void lstm_rows_backward(const T* acts, int64_t ld_acts, const T* cx, int64_t ld_cx, const T* cy, int64_t ld_cy,  \
                          const T* dhy, int64_t ld_dhy, const T* dcy, int64_t ld_dcy, T* dgates, int64_t ld_dgates, \
                          T* dcx, int64_t ld_dcx, int64_t rows, int64_t h);
KILN_LSTM_ROWS(float)
KILN_LSTM_ROWS(double)
#undef KILN_LSTM_ROWS

}  // namespace cpu
}  // namespace kiln
