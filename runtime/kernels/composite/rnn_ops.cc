// Recurrent layers and cells (torch's _VF.lstm, gru, rnn_tanh, rnn_relu and their cells), written
// with other ops: the time loop runs here in C++, and autograd comes from the ops each step calls.
//
// As torch's CPU path (aten/src/ATen/native/RNN.cpp), a layer projects the whole input sequence in
// one matrix product first. An LSTM then runs its recurrence as one op (_lstm_layer:
// runtime/kernels/cpu/rnn_layer_ops.cc); a GRU or plain RNN steps with ops, each step one addmm (h @
// w_hh^T added to the step's projection) and one fused cell (_gru_cell_fused) or tanh/relu. A dense
// sequence walks like a packed one whose batch never shrinks, so both share one loop.
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "generated/api/_gru_cell_fused.h"
#include "generated/api/_lstm_cell_fused.h"
#include "generated/api/_lstm_layer.h"
#include "generated/api/add.h"
#include "generated/api/addmm.h"
#include "generated/api/cat.h"
#include "generated/api/contiguous.h"
#include "generated/api/dropout.h"
#include "generated/api/mm.h"
#include "generated/api/narrow.h"
#include "generated/api/relu.h"
#include "generated/api/reshape.h"
#include "generated/api/select.h"
#include "generated/api/split_with_sizes.h"
#include "generated/api/stack.h"
#include "generated/api/t.h"
#include "generated/api/tanh.h"
#include "generated/api/transpose.h"
#include "generated/kernels/composite/gru.h"
#include "generated/kernels/composite/gru_cell.h"
#include "generated/kernels/composite/lstm.h"
#include "generated/kernels/composite/lstm_cell.h"
#include "generated/kernels/composite/rnn_relu.h"
#include "generated/kernels/composite/rnn_relu_cell.h"
#include "generated/kernels/composite/rnn_tanh.h"
#include "generated/kernels/composite/rnn_tanh_cell.h"

namespace kiln {
namespace composite_implicit {
namespace {

enum class Mode { kLstm, kGru, kTanh, kRelu };

const char* mode_name(Mode mode) {
  switch (mode) {
    case Mode::kLstm: return "lstm";
    case Mode::kGru: return "gru";
    case Mode::kTanh: return "rnn_tanh";
    case Mode::kRelu: return "rnn_relu";
  }
  return "rnn";
}

int64_t gate_count(Mode mode) { return mode == Mode::kLstm ? 4 : mode == Mode::kGru ? 3 : 1; }

// One layer and direction's weights; b_ih, b_hh and w_hr (an LSTM's projection) may be undefined.
struct Weights {
  Tensor w_ih, w_hh, b_ih, b_hh, w_hr;
};

// A direction's state: h (rows, Hout), and an LSTM's cell state c (rows, H).
struct State {
  Tensor h, c;
};

struct Config {
  Mode mode;
  int64_t layers, directions, hidden, out_size;  // out_size: proj_size for a projected LSTM, else hidden
  bool has_biases, projected;
};

void check_weight(const Tensor& w, std::vector<int64_t> shape, const char* what, const Config& cfg, int64_t layer) {
  KILN_CHECK(w.dim() == static_cast<int64_t>(shape.size()) && w.sizes() == IntArrayRef(shape), mode_name(cfg.mode),
             "(): expected ", what, " of layer ", layer, " of shape ", shape_str(shape), ", got ",
             shape_str(w.sizes()));
}

// torch's flat weight list (per layer, per direction: w_ih, w_hh[, b_ih, b_hh][, w_hr]) checked
// against the layer sizes and split.
std::vector<Weights> unflatten(const std::vector<Tensor>& params, const Config& cfg, int64_t input_size) {
  const int64_t per = 2 + (cfg.has_biases ? 2 : 0) + (cfg.projected ? 1 : 0);
  KILN_CHECK(static_cast<int64_t>(params.size()) == per * cfg.layers * cfg.directions, mode_name(cfg.mode),
             "(): expected ", per * cfg.layers * cfg.directions, " weight tensors for ", cfg.layers, " layer(s)",
             cfg.directions == 2 ? " in both directions" : "", ", got ", params.size());
  const int64_t gates = gate_count(cfg.mode) * cfg.hidden;
  std::vector<Weights> out;
  for (int64_t l = 0; l < cfg.layers; ++l) {
    for (int64_t d = 0; d < cfg.directions; ++d) {
      const Tensor* p = &params[static_cast<size_t>((l * cfg.directions + d) * per)];
      Weights w;
      w.w_ih = p[0];
      w.w_hh = p[1];
      if (cfg.has_biases) {
        w.b_ih = p[2];
        w.b_hh = p[3];
      }
      if (cfg.projected) w.w_hr = p[per - 1];
      check_weight(w.w_ih, {gates, l == 0 ? input_size : cfg.out_size * cfg.directions}, "weight_ih", cfg, l);
      check_weight(w.w_hh, {gates, cfg.out_size}, "weight_hh", cfg, l);
      if (cfg.has_biases) {
        check_weight(w.b_ih, {gates}, "bias_ih", cfg, l);
        check_weight(w.b_hh, {gates}, "bias_hh", cfg, l);
      }
      if (cfg.projected) check_weight(w.w_hr, {cfg.out_size, cfg.hidden}, "weight_hr", cfg, l);
      out.push_back(w);
    }
  }
  return out;
}

// x (N, I) @ w_ih^T plus the biases that can be added before the recurrence: both for an LSTM and
// a plain RNN (the step adds h @ w_hh^T), only b_ih for a GRU (b_hh is added inside the reset gate).
Tensor project_input(const Config& cfg, const Tensor& x, const Weights& w) {
  if (!w.b_ih.defined()) return kiln::mm(x, kiln::t(w.w_ih));
  const Tensor bias = cfg.mode == Mode::kGru ? w.b_ih : kiln::add(w.b_ih, w.b_hh);
  return kiln::addmm(bias, x, kiln::t(w.w_ih));
}

// One time step of a GRU or plain RNN: xp the step's rows of the projected input, s the state of
// those rows.
State step(const Config& cfg, const Tensor& xp, const State& s, const Weights& w) {
  switch (cfg.mode) {
    case Mode::kGru: {
      const Tensor hidden_gates =
          w.b_hh.defined() ? kiln::addmm(w.b_hh, s.h, kiln::t(w.w_hh)) : kiln::mm(s.h, kiln::t(w.w_hh));
      return {kiln::_gru_cell_fused(xp, hidden_gates, s.h), Tensor()};
    }
    case Mode::kTanh: return {kiln::tanh(kiln::addmm(xp, s.h, kiln::t(w.w_hh))), Tensor()};
    case Mode::kRelu: return {kiln::relu(kiln::addmm(xp, s.h, kiln::t(w.w_hh))), Tensor()};
    case Mode::kLstm: break;  // run_direction runs an LSTM as one op
  }
  return s;
}

State rows(const State& s, int64_t start, int64_t count) {
  return {kiln::narrow(s.h, 0, start, count), s.c.defined() ? kiln::narrow(s.c, 0, start, count) : Tensor()};
}

State join(const std::vector<State>& parts) {
  std::vector<Tensor> h, c;
  for (const State& p : parts) {
    h.push_back(p.h);
    if (p.c.defined()) c.push_back(p.c);
  }
  return {kiln::cat(h, 0), c.empty() ? Tensor() : kiln::cat(c, 0)};
}

// One direction over a sequence in packed layout: x (N, I) holds the steps' rows one after the
// other, batch_sizes[t] of them at step t (non-increasing); h0 holds one row per sequence. Returns
// the outputs in the same layout and the final state of every sequence, as torch: a sequence that
// ends early keeps the state of its last step.
std::pair<Tensor, State> run_direction(const Config& cfg, const Tensor& x, const std::vector<int64_t>& batch_sizes,
                                       const State& h0, const Weights& w, bool reverse) {
  const Tensor xp = project_input(cfg, x, w);
  if (cfg.mode == Mode::kLstm) {
    // The whole recurrence as one op; its result holds the outputs, then the final states.
    const int64_t rows = x.sizes()[0], batch = h0.h.sizes()[0];
    const Tensor all = kiln::_lstm_layer(xp, h0.h, h0.c, w.w_hh, w.w_hr, batch_sizes, reverse);
    const Tensor last = kiln::narrow(all, 0, rows, batch);
    return {kiln::narrow(kiln::narrow(all, 0, 0, rows), 1, 0, cfg.out_size),
            {kiln::narrow(last, 1, 0, cfg.out_size), kiln::narrow(last, 1, cfg.out_size, cfg.hidden)}};
  }
  const int64_t steps = static_cast<int64_t>(batch_sizes.size());
  std::vector<Tensor> outputs(static_cast<size_t>(steps));
  // Each step's rows of the projection: one split (one backward node concatenating the steps'
  // gradients), not a narrow per step whose gradient would be all of xp.
  const std::vector<Tensor> step_inputs = kiln::split_with_sizes(xp, batch_sizes, 0);
  if (!reverse) {
    State s = h0;
    int64_t live = batch_sizes.empty() ? 0 : batch_sizes[0];
    std::vector<State> finished;  // rows of sequences that ended, highest rows first
    for (int64_t t = 0; t < steps; ++t) {
      const int64_t b = batch_sizes[t];
      if (b < live) {
        finished.push_back(rows(s, b, live - b));
        s = rows(s, 0, b);
        live = b;
      }
      s = step(cfg, step_inputs[t], s, w);
      outputs[t] = s.h;
    }
    std::vector<State> parts{s};
    parts.insert(parts.end(), finished.rbegin(), finished.rend());
    return {kiln::cat(outputs, 0), parts.size() == 1 ? s : join(parts)};
  }
  // Backward in time the batch grows: sequences join with their initial state when they start.
  int64_t live = steps == 0 ? 0 : batch_sizes[steps - 1];
  State s = rows(h0, 0, live);
  for (int64_t t = steps - 1; t >= 0; --t) {
    const int64_t b = batch_sizes[t];
    if (b > live) {
      s = join({s, rows(h0, live, b - live)});
      live = b;
    }
    s = step(cfg, step_inputs[t], s, w);
    outputs[t] = s.h;
  }
  return {kiln::cat(outputs, 0), s};
}

std::vector<int64_t> read_batch_sizes(const Tensor& batch_sizes, const char* op, int64_t rows) {
  KILN_CHECK(batch_sizes.dim() == 1 && batch_sizes.dtype() == ScalarType::Int64, op,
             "(): batch_sizes must be a 1-D int64 tensor, got ", shape_str(batch_sizes.sizes()), " ",
             scalar_type_name(batch_sizes.dtype()));
  const Tensor contiguous = kiln::contiguous(batch_sizes);
  const int64_t* p = static_cast<const int64_t*>(contiguous.data_ptr());
  std::vector<int64_t> sizes(p, p + contiguous.numel());
  int64_t total = 0;
  for (size_t t = 0; t < sizes.size(); ++t) {
    KILN_CHECK(sizes[t] > 0 && (t == 0 || sizes[t] <= sizes[t - 1]), op,
               "(): batch_sizes must be positive and non-increasing, got ", sizes[t], " at step ", t);
    total += sizes[t];
  }
  KILN_CHECK(!sizes.empty(), "Expected sequence length to be larger than 0 in RNN");
  KILN_CHECK(total == rows, op, "(): batch_sizes sum to ", total, " but the packed data has ", rows, " rows");
  return sizes;
}

// The stacked initial states (layers * directions, batch, size) checked and split per layer.
void check_state(const Tensor& t, const Config& cfg, int64_t batch, int64_t size, const char* what) {
  const std::vector<int64_t> want{cfg.layers * cfg.directions, batch, size};
  KILN_CHECK(t.dim() == 3 && t.sizes() == IntArrayRef(want), mode_name(cfg.mode), "(): Expected ", what, " size ",
             shape_str(want), ", got ", shape_str(t.sizes()));
}

// The whole stack of layers over packed rows x (N, I); hx[0] is h0, hx[1] an LSTM's c0.
std::tuple<Tensor, Tensor, Tensor> run_layers(const Config& cfg, const Tensor& x, const std::vector<int64_t>& sizes,
                                              int64_t batch, const std::vector<Tensor>& hx,
                                              const std::vector<Tensor>& params, double dropout, bool train) {
  const char* op = mode_name(cfg.mode);
  KILN_CHECK(x.is_floating_point(), op, "(): expected a floating point input, got ", scalar_type_name(x.dtype()));
  KILN_CHECK(dropout >= 0 && dropout <= 1, op, "(): dropout should be a number in range [0, 1], got ", dropout);
  for (const Tensor& p : params)
    KILN_CHECK(p.dtype() == x.dtype(), op, "(): expected the weights in the input's dtype ",
               scalar_type_name(x.dtype()), ", got ", scalar_type_name(p.dtype()));
  check_state(hx[0], cfg, batch, cfg.out_size, "hidden");
  if (cfg.mode == Mode::kLstm) check_state(hx[1], cfg, batch, cfg.hidden, "cell state");
  const std::vector<Weights> weights = unflatten(params, cfg, x.sizes()[1]);
  Tensor layer_input = x;
  std::vector<Tensor> h_n, c_n;
  for (int64_t l = 0; l < cfg.layers; ++l) {
    std::vector<Tensor> outputs;
    for (int64_t d = 0; d < cfg.directions; ++d) {
      const int64_t k = l * cfg.directions + d;
      const State h0{kiln::select(hx[0], 0, k), cfg.mode == Mode::kLstm ? kiln::select(hx[1], 0, k) : Tensor()};
      auto [out, last] = run_direction(cfg, layer_input, sizes, h0, weights[static_cast<size_t>(k)], d == 1);
      outputs.push_back(out);
      h_n.push_back(last.h);
      if (last.c.defined()) c_n.push_back(last.c);
    }
    layer_input = outputs.size() == 1 ? outputs[0] : kiln::cat(outputs, 1);
    if (dropout > 0 && train && l + 1 < cfg.layers) layer_input = kiln::dropout(layer_input, dropout, train);
  }
  return {layer_input, kiln::stack(h_n, 0), c_n.empty() ? Tensor() : kiln::stack(c_n, 0)};
}

Config config(Mode mode, const std::vector<Tensor>& hx, bool has_biases, int64_t num_layers, bool bidirectional) {
  const char* op = mode_name(mode);
  KILN_CHECK(num_layers >= 1, op, "(): num_layers must be at least 1, got ", num_layers);
  KILN_CHECK(hx.size() == (mode == Mode::kLstm ? 2u : 1u), op, "(): expected ", mode == Mode::kLstm ? 2 : 1,
             " initial state tensor(s), got ", hx.size());
  for (const Tensor& h : hx) KILN_CHECK(h.dim() == 3, op, "(): expected 3-D initial states, got ", shape_str(h.sizes()));
  Config cfg{mode, num_layers, bidirectional ? 2 : 1, 0, 0, has_biases, false};
  cfg.out_size = hx[0].sizes()[2];
  cfg.hidden = mode == Mode::kLstm ? hx[1].sizes()[2] : cfg.out_size;
  cfg.projected = cfg.out_size != cfg.hidden;  // as torch: h smaller than c means proj_size
  return cfg;
}

// A batch-first or time-first (T, B, I) input as packed rows (T * B, I).
std::tuple<Tensor, Tensor, Tensor> run_dense(Mode mode, const Tensor& input, const std::vector<Tensor>& hx,
                                             const std::vector<Tensor>& params, bool has_biases, int64_t num_layers,
                                             double dropout, bool train, bool bidirectional, bool batch_first) {
  const char* op = mode_name(mode);
  KILN_CHECK(input.dim() == 3, op, "(): input must have 3 dimensions, got ", input.dim());
  const Tensor seq = batch_first ? kiln::transpose(input, 0, 1) : input;
  const int64_t steps = seq.sizes()[0], batch = seq.sizes()[1];
  KILN_CHECK(steps > 0, "Expected sequence length to be larger than 0 in RNN");
  const Config cfg = config(mode, hx, has_biases, num_layers, bidirectional);
  const std::vector<int64_t> sizes(static_cast<size_t>(steps), batch);
  auto [out, h, c] = run_layers(cfg, kiln::reshape(seq, {steps * batch, seq.sizes()[2]}), sizes, batch, hx, params,
                                dropout, train);
  out = kiln::reshape(out, {steps, batch, out.sizes()[1]});
  return {batch_first ? kiln::transpose(out, 0, 1) : out, h, c};
}

std::tuple<Tensor, Tensor, Tensor> run_packed(Mode mode, const Tensor& data, const Tensor& batch_sizes,
                                              const std::vector<Tensor>& hx, const std::vector<Tensor>& params,
                                              bool has_biases, int64_t num_layers, double dropout, bool train,
                                              bool bidirectional) {
  const char* op = mode_name(mode);
  KILN_CHECK(data.dim() == 2, op, "(): packed data must have 2 dimensions, got ", data.dim());
  const std::vector<int64_t> sizes = read_batch_sizes(batch_sizes, op, data.sizes()[0]);
  return run_layers(config(mode, hx, has_biases, num_layers, bidirectional), data, sizes, sizes.empty() ? 0 : sizes[0],
                    hx, params, dropout, train);
}

// A cell's (B, I) input and (B, H) state against its weights.
void check_cell(const char* op, const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                int64_t gates) {
  KILN_CHECK(input.is_floating_point(), op, "(): expected a floating point input, got ",
             scalar_type_name(input.dtype()));
  KILN_CHECK(input.dim() == 2 && hx.dim() == 2, op, "(): expected a 2-D input and state, got ",
             shape_str(input.sizes()), " and ", shape_str(hx.sizes()));
  // torch's checks first, against the weights' sizes: the input's features, then the state's batch and
  // features (torch labels the state "hidden0")
  KILN_CHECK(w_ih.dim() == 2 && w_hh.dim() == 2, op, "(): expected 2-D weights, got weight_ih ",
             shape_str(w_ih.sizes()), " and weight_hh ", shape_str(w_hh.sizes()));
  KILN_CHECK(input.sizes()[1] == w_ih.sizes()[1], op, "(): input has inconsistent input_size: got ",
             input.sizes()[1], " expected ", w_ih.sizes()[1]);
  KILN_CHECK(input.sizes()[0] == hx.sizes()[0], op, "(): Input batch size ", input.sizes()[0],
             " doesn't match hidden0 batch size ", hx.sizes()[0]);
  KILN_CHECK(hx.sizes()[1] == w_hh.sizes()[1], op, "(): hidden0 has inconsistent hidden_size: got ", hx.sizes()[1],
             ", expected ", w_hh.sizes()[1]);
  const int64_t h = hx.sizes()[1];
  KILN_CHECK(w_ih.dim() == 2 && w_ih.sizes()[0] == gates * h && w_ih.sizes()[1] == input.sizes()[1], op,
             "(): expected weight_ih of shape [", gates * h, ", ", input.sizes()[1], "], got ", shape_str(w_ih.sizes()));
  KILN_CHECK(w_hh.dim() == 2 && w_hh.sizes()[0] == gates * h && w_hh.sizes()[1] == h, op,
             "(): expected weight_hh of shape [", gates * h, ", ", h, "], got ", shape_str(w_hh.sizes()));
}

Tensor linear_part(const Tensor& x, const Tensor& w, const Tensor& b) {
  return b.defined() ? kiln::addmm(b, x, kiln::t(w)) : kiln::mm(x, kiln::t(w));
}

Tensor simple_cell(Mode mode, const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                   const Tensor& b_ih, const Tensor& b_hh) {
  check_cell(mode == Mode::kTanh ? "rnn_tanh_cell" : "rnn_relu_cell", input, hx, w_ih, w_hh, 1);
  const Tensor pre = kiln::add(linear_part(input, w_ih, b_ih), linear_part(hx, w_hh, b_hh));
  return mode == Mode::kTanh ? kiln::tanh(pre) : kiln::relu(pre);
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input, const std::vector<Tensor>& hx,
                                        const std::vector<Tensor>& params, bool has_biases, int64_t num_layers,
                                        double dropout, bool train, bool bidirectional, bool batch_first) {
  return run_dense(Mode::kLstm, input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first);
}

std::tuple<Tensor, Tensor, Tensor> lstm_packed(const Tensor& data, const Tensor& batch_sizes,
                                               const std::vector<Tensor>& hx, const std::vector<Tensor>& params,
                                               bool has_biases, int64_t num_layers, double dropout, bool train,
                                               bool bidirectional) {
  return run_packed(Mode::kLstm, data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional);
}

// The single-state layers return (output, h_n).
#define KILN_SINGLE_STATE_RNN(name, mode)                                                                           \
  std::tuple<Tensor, Tensor> name(const Tensor& input, const Tensor& hx, const std::vector<Tensor>& params,       \
                                  bool has_biases, int64_t num_layers, double dropout, bool train, bool bidirectional, \
                                  bool batch_first) {                                                               \
    auto [out, h, c] =                                                                                              \
        run_dense(mode, input, {hx}, params, has_biases, num_layers, dropout, train, bidirectional, batch_first);  \
    return {out, h};                                                                                                \
  }                                                                                                                 \
  std::tuple<Tensor, Tensor> name##_packed(const Tensor& data, const Tensor& batch_sizes, const Tensor& hx,        \
                                           const std::vector<Tensor>& params, bool has_biases, int64_t num_layers, \
                                           double dropout, bool train, bool bidirectional) {                        \
    auto [out, h, c] =                                                                                              \
        run_packed(mode, data, batch_sizes, {hx}, params, has_biases, num_layers, dropout, train, bidirectional);  \
    return {out, h};                                                                                                \
  }
KILN_SINGLE_STATE_RNN(gru, Mode::kGru)
KILN_SINGLE_STATE_RNN(rnn_tanh, Mode::kTanh)
KILN_SINGLE_STATE_RNN(rnn_relu, Mode::kRelu)
#undef KILN_SINGLE_STATE_RNN

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const std::vector<Tensor>& hx, const Tensor& w_ih,
                                     const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  KILN_CHECK(hx.size() == 2, "lstm_cell expects two hidden states, got ", hx.size());
  check_cell("lstm_cell", input, hx[0], w_ih, w_hh, 4);
  KILN_CHECK(hx[1].sizes() == hx[0].sizes(), "lstm_cell(): expected c of shape ", shape_str(hx[0].sizes()), ", got ",
             shape_str(hx[1].sizes()));
  const int64_t h = hx[0].sizes()[1];
  const Tensor gates = kiln::add(linear_part(input, w_ih, b_ih), linear_part(hx[0], w_hh, b_hh));
  const Tensor both = kiln::_lstm_cell_fused(gates, hx[1]);
  return {kiln::narrow(both, 1, 0, h), kiln::narrow(both, 1, h, h)};
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                const Tensor& b_hh) {
  check_cell("gru_cell", input, hx, w_ih, w_hh, 3);
  return kiln::_gru_cell_fused(linear_part(input, w_ih, b_ih), linear_part(hx, w_hh, b_hh), hx);
}

Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  return simple_cell(Mode::kTanh, input, hx, w_ih, w_hh, b_ih, b_hh);
}

Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  return simple_cell(Mode::kRelu, input, hx, w_ih, w_hh, b_ih, b_hh);
}

}  // namespace composite_implicit
}  // namespace kiln
