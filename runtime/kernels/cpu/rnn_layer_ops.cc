// A whole LSTM layer in one direction as one op, forward and backward (schema: _lstm_layer). Each
// step is one BLAS product (h @ w_hh^T, into the step's copy of its input gates) and one pass of the
// vectorized cell (rnn_rows.h); the backward pass walks the steps in reverse with two products per
// step (the gradient of h, and of w_hh accumulated in place). One autograd node per layer and
// direction: stepping with separate ops made each step's slice of the input gates a gradient the
// size of all of them, summed step by step.
//
// The state lives in buffers of one row per sequence: at step t the first batch_sizes[t] rows run
// (sequences are sorted longest first); the others keep their last state (sequences that ended)
// or still hold their initial state (the reverse direction, where sequences start late).
#include <algorithm>
#include <cstring>
#include <vector>

#include "generated/kernels/_lstm_layer.h"
#include "generated/kernels/_lstm_layer_backward.h"
#include "runtime/kernels/cpu/blas.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/rnn_rows.h"

namespace kiln {
namespace cpu {
namespace {

// The shapes of a layer call, checked, and where each part sits in a row of the result.
struct LstmLayout {
  int64_t rows;     // N: packed step rows
  int64_t batch;    // B: sequences
  int64_t hidden;   // H
  int64_t out;      // Hout: H, or proj_size
  bool projected;
  std::vector<int64_t> offsets;  // first row of each step
  // Columns of a result row: [h (Hout) | c (H) | gates (4H) | h before the projection (H)].
  int64_t c_col() const { return out; }
  int64_t gates_col() const { return out + hidden; }
  int64_t pre_col() const { return out + 5 * hidden; }
  int64_t cols() const { return out + 6 * hidden; }
  // The step processed before step t (-1 for the first), in processing order.
  int64_t previous(int64_t t, bool reverse) const {
    const int64_t steps = static_cast<int64_t>(offsets.size()) - 1;
    return reverse ? (t + 1 < steps ? t + 1 : -1) : t - 1;
  }
  int64_t size(int64_t t) const { return offsets[t + 1] - offsets[t]; }
};

LstmLayout lstm_layout(const char* op, const TensorBase& gates, const TensorBase& h0, const TensorBase& c0,
                       const TensorBase& w_hh, const TensorBase& w_hr, IntArrayRef batch_sizes) {
  KILN_CHECK(gates.dim() == 2 && h0.dim() == 2 && c0.dim() == 2 && w_hh.dim() == 2, op,
             "(): expected 2-D input gates, states and weights");
  LstmLayout l{gates.sizes()[0], h0.sizes()[0], c0.sizes()[1], h0.sizes()[1], w_hr.defined(), {0}};
  KILN_CHECK(gates.sizes()[1] == 4 * l.hidden, op, "(): expected input gates of width ", 4 * l.hidden, ", got ",
             gates.sizes()[1]);
  KILN_CHECK(c0.sizes()[0] == l.batch, op, "(): h0 has ", l.batch, " rows but c0 has ", c0.sizes()[0]);
  KILN_CHECK(w_hh.sizes()[0] == 4 * l.hidden && w_hh.sizes()[1] == l.out, op, "(): expected w_hh of shape [",
             4 * l.hidden, ", ", l.out, "], got ", shape_str(w_hh.sizes()));
  KILN_CHECK(l.projected || l.out == l.hidden, op, "(): h0 is ", l.out, " wide but c0 is ", l.hidden,
             " wide and there is no projection");
  KILN_CHECK(!l.projected || (w_hr.dim() == 2 && w_hr.sizes()[0] == l.out && w_hr.sizes()[1] == l.hidden), op,
             "(): expected w_hr of shape [", l.out, ", ", l.hidden, "]");
  for (size_t t = 0; t < batch_sizes.size(); ++t) {
    KILN_CHECK(batch_sizes[t] > 0 && batch_sizes[t] <= l.batch && (t == 0 || batch_sizes[t] <= batch_sizes[t - 1]),
               op, "(): batch_sizes must be positive, non-increasing and at most the batch ", l.batch, ", got ",
               batch_sizes[t], " at step ", t);
    l.offsets.push_back(l.offsets.back() + batch_sizes[t]);
  }
  KILN_CHECK(l.offsets.back() == l.rows, op, "(): batch_sizes sum to ", l.offsets.back(), " but there are ", l.rows,
             " rows of input gates");
  const ScalarType dtype = gates.dtype();
  KILN_CHECK(is_floating_type(dtype), op, "(): expected floating point operands, got ", scalar_type_name(dtype));
  for (const TensorBase* t : {&h0, &c0, &w_hh, &w_hr})
    KILN_CHECK(!t->defined() || t->dtype() == dtype, op, "(): expected every operand in ", scalar_type_name(dtype),
               ", got ", scalar_type_name(t->dtype()));
  return l;
}

template <typename T>
const T* ptr(const TensorBase& t) {
  return t.defined() ? static_cast<const T*>(t.data_ptr()) : nullptr;
}

template <typename T>
void copy_rows(T* dst, int64_t ld_dst, const T* src, int64_t ld_src, int64_t rows, int64_t width) {
  for (int64_t r = 0; r < rows; ++r) std::memcpy(dst + r * ld_dst, src + r * ld_src, sizeof(T) * width);
}

template <typename T>
void lstm_forward(const LstmLayout& l, const TensorBase& gates_in, const TensorBase& h0, const TensorBase& c0,
                  const TensorBase& w_hh, const TensorBase& w_hr, bool reverse, T* result) {
  const int64_t H = l.hidden, Hout = l.out, ld = l.cols();
  std::vector<T> h(static_cast<size_t>(l.batch * Hout)), c(static_cast<size_t>(l.batch * H));
  copy_rows(h.data(), Hout, ptr<T>(h0), Hout, l.batch, Hout);
  copy_rows(c.data(), H, ptr<T>(c0), H, l.batch, H);
  const int64_t steps = static_cast<int64_t>(l.offsets.size()) - 1;
  for (int64_t k = 0; k < steps; ++k) {
    const int64_t t = reverse ? steps - 1 - k : k, b = l.size(t);
    T* row = result + l.offsets[t] * ld;
    T* gates = row + l.gates_col();
    copy_rows(gates, ld, ptr<T>(gates_in) + l.offsets[t] * 4 * H, 4 * H, b, 4 * H);
    blas_gemm<T>(false, true, b, 4 * H, Hout, T(1), h.data(), Hout, ptr<T>(w_hh), Hout, T(1), gates, ld);
    T* h_cell = l.projected ? row + l.pre_col() : row;  // o * tanh(c), before the projection
    lstm_rows_forward(gates, ld, gates, ld, c.data(), H, h_cell, ld, row + l.c_col(), ld, b, H);
    if (l.projected) blas_gemm<T>(false, true, b, Hout, H, T(1), h_cell, ld, ptr<T>(w_hr), H, T(0), row, ld);
    copy_rows(h.data(), Hout, row, ld, b, Hout);
    copy_rows(c.data(), H, row + l.c_col(), ld, b, H);
  }
  T* final_rows = result + l.rows * ld;
  copy_rows(final_rows, ld, h.data(), Hout, l.batch, Hout);
  copy_rows(final_rows + l.c_col(), ld, c.data(), H, l.batch, H);
}

// The state rows a step started from: the previous step's rows where that step ran them, the
// initial state elsewhere.
template <typename T>
void previous_state(const LstmLayout& l, const T* result, int64_t t, bool reverse, int64_t col, const T* initial,
                    int64_t width, T* out) {
  const int64_t b = l.size(t), ld = l.cols(), p = l.previous(t, reverse);
  const int64_t from_result = p < 0 ? 0 : std::min(b, l.size(p));
  if (from_result > 0) copy_rows(out, width, result + l.offsets[p] * ld + col, ld, from_result, width);
  copy_rows(out + from_result * width, width, initial + from_result * width, width, b - from_result, width);
}

// The activated gates are outputs too (the caller only narrows them away, so their gradient is
// zero there): their gradients, times the activations' derivatives, join the gates'.
template <typename T>
void add_activation_grads(const T* acts, const T* grad, int64_t ld, T* dgates, int64_t rows, int64_t h) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* a = acts + r * ld;
    const T* g = grad + r * ld;
    T* d = dgates + r * 4 * h;
    for (int64_t j = 0; j < 4 * h; ++j) {
      const bool cell_gate = j >= 2 * h && j < 3 * h;  // tanh; the others are sigmoids
      d[j] += g[j] * (cell_gate ? T(1) - a[j] * a[j] : a[j] * (T(1) - a[j]));
    }
  }
}

template <typename T>
std::vector<TensorBase> lstm_backward(const LstmLayout& l, const TensorBase& grad, const TensorBase& h0,
                                      const TensorBase& c0, const TensorBase& w_hh, const TensorBase& w_hr,
                                      bool reverse, const T* result, ScalarType dtype) {
  const int64_t H = l.hidden, Hout = l.out, ld = l.cols();
  TensorBase d_gates = empty_cpu({l.rows, 4 * H}, dtype);
  TensorBase d_h0 = empty_cpu({l.batch, Hout}, dtype), d_c0 = empty_cpu({l.batch, H}, dtype);
  TensorBase d_w_hh = zeros_cpu({4 * H, Hout}, dtype);
  TensorBase d_w_hr = l.projected ? zeros_cpu({Hout, H}, dtype) : TensorBase();
  T* dh = static_cast<T*>(d_h0.data_ptr());  // the state's gradients, one row per sequence;
  T* dc = static_cast<T*>(d_c0.data_ptr());  // after the walk, those of the initial state
  const T* g = ptr<T>(grad);
  copy_rows(dh, Hout, g + l.rows * ld, ld, l.batch, Hout);
  copy_rows(dc, H, g + l.rows * ld + l.c_col(), ld, l.batch, H);
  std::vector<T> h_prev(static_cast<size_t>(l.batch * Hout)), c_prev(static_cast<size_t>(l.batch * H));
  std::vector<T> dh_cell(l.projected ? static_cast<size_t>(l.batch * H) : 0);
  const int64_t steps = static_cast<int64_t>(l.offsets.size()) - 1;
  for (int64_t k = steps - 1; k >= 0; --k) {
    const int64_t t = reverse ? steps - 1 - k : k, b = l.size(t);
    const T* row = result + l.offsets[t] * ld;
    const T* g_row = g + l.offsets[t] * ld;
    for (int64_t r = 0; r < b; ++r) {  // the step's own outputs' gradients join the state's
      for (int64_t j = 0; j < Hout; ++j) dh[r * Hout + j] += g_row[r * ld + j];
      for (int64_t j = 0; j < H; ++j) dc[r * H + j] += g_row[r * ld + l.c_col() + j];
    }
    const T* d_cell = dh;
    if (l.projected) {  // h = h_cell @ w_hr^T; h_cell is an output of its own too
      copy_rows(dh_cell.data(), H, g_row + l.pre_col(), ld, b, H);
      blas_gemm<T>(false, false, b, H, Hout, T(1), dh, Hout, ptr<T>(w_hr), H, T(1), dh_cell.data(), H);
      blas_gemm<T>(true, false, Hout, H, b, T(1), dh, Hout, row + l.pre_col(), ld, T(1),
                   static_cast<T*>(d_w_hr.data_ptr()), H);
      d_cell = dh_cell.data();
    }
    previous_state(l, result, t, reverse, l.c_col(), ptr<T>(c0), H, c_prev.data());
    previous_state(l, result, t, reverse, 0, ptr<T>(h0), Hout, h_prev.data());
    T* dg = static_cast<T*>(d_gates.data_ptr()) + l.offsets[t] * 4 * H;
    lstm_rows_backward(row + l.gates_col(), ld, c_prev.data(), H, row + l.c_col(), ld, d_cell, l.projected ? H : Hout,
                       dc, H, dg, 4 * H, dc, H, b, H);
    add_activation_grads(row + l.gates_col(), g_row + l.gates_col(), ld, dg, b, H);
    blas_gemm<T>(false, false, b, Hout, 4 * H, T(1), dg, 4 * H, ptr<T>(w_hh), Hout, T(0), dh, Hout);
    blas_gemm<T>(true, false, 4 * H, Hout, b, T(1), dg, 4 * H, h_prev.data(), Hout, T(1),
                 static_cast<T*>(d_w_hh.data_ptr()), Hout);
  }
  return {d_gates, d_h0, d_c0, d_w_hh, d_w_hr};
}

}  // namespace

// float16 and bfloat16 operands compute in float32; the result is rounded once.
TensorBase lstm_layer(const TensorBase& input_gates, const TensorBase& h0, const TensorBase& c0,
                      const TensorBase& w_hh, const TensorBase& w_hr, IntArrayRef batch_sizes, bool reverse) {
  const LstmLayout l = lstm_layout("_lstm_layer", input_gates, h0, c0, w_hh, w_hr, batch_sizes);
  const ScalarType compute = opmath_type(input_gates.dtype());
  const auto in = [&](const TensorBase& t) { return t.defined() ? contiguous_cpu(cast_to(t, compute)) : t; };
  TensorBase result = zeros_cpu({l.rows + l.batch, l.cols()}, compute);
  KILN_DISPATCH_FLOATING_TYPES(compute, "_lstm_layer", [&] {
    lstm_forward<scalar_t>(l, in(input_gates), in(h0), in(c0), in(w_hh), in(w_hr), reverse,
                           static_cast<scalar_t*>(result.data_ptr()));
  });
  return cast_to(result, input_gates.dtype());
}

std::vector<TensorBase> lstm_layer_backward(const TensorBase& grad, const TensorBase& input_gates,
                                            const TensorBase& h0, const TensorBase& c0, const TensorBase& w_hh,
                                            const TensorBase& w_hr, IntArrayRef batch_sizes, bool reverse,
                                            const TensorBase& output) {
  const LstmLayout l = lstm_layout("_lstm_layer_backward", input_gates, h0, c0, w_hh, w_hr, batch_sizes);
  const std::vector<int64_t> shape{l.rows + l.batch, l.cols()};
  for (const TensorBase* t : {&grad, &output})
    KILN_CHECK(t->sizes() == IntArrayRef(shape) && t->dtype() == input_gates.dtype(),
               "_lstm_layer_backward(): expected grad and output of shape ", shape_str(shape), " in ",
               scalar_type_name(input_gates.dtype()), ", got ", shape_str(t->sizes()), " ",
               scalar_type_name(t->dtype()));
  const ScalarType compute = opmath_type(input_gates.dtype());
  const auto in = [&](const TensorBase& t) { return t.defined() ? contiguous_cpu(cast_to(t, compute)) : t; };
  std::vector<TensorBase> grads;
  KILN_DISPATCH_FLOATING_TYPES(compute, "_lstm_layer_backward", [&] {
    const TensorBase r = in(output);
    grads = lstm_backward<scalar_t>(l, in(grad), in(h0), in(c0), in(w_hh), in(w_hr), reverse,
                                    static_cast<const scalar_t*>(r.data_ptr()), compute);
  });
  for (TensorBase& g : grads)
    if (g.defined()) g = cast_to(g, input_gates.dtype());
  return grads;
}

}  // namespace cpu
}  // namespace kiln
