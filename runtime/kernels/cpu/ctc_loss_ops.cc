// CTC loss (Graves et al. 2006, "Connectionist Temporal Classification"), as torch's CPU kernels
// (aten/src/ATen/native/LossCTC.cpp) compute it: _ctc_loss runs the forward recursion over the
// log-space variables alpha of the extended target l' (the labels with a blank before, between
// and after them: l'(s) is the blank for even s, label s / 2 for odd s) and gives each sample's
// negative log-likelihood; _ctc_loss_backward runs the backward recursion (beta), collects
// alpha * beta per label in log space and gives
//   grad[t, b, c] = (exp(lp[t, b, c]) - exp(log(sum_{s: l'(s) = c} alpha_t(s) beta_t(s)) + nll_b - lp[t, b, c]))
//                   * grad_out[b]
// for t < input_length (zero beyond, and for an infinite loss under zero_infinity). Every sum of
// exponentials subtracts its maximum first, in the input's dtype, in torch's order. The samples
// are independent: they run in parallel.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "generated/kernels/_ctc_loss.h"
#include "generated/kernels/_ctc_loss_backward.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/tensor_memory.h"

namespace kiln {
namespace cpu {
namespace {

// Where each sample's labels are, in the int64 copy of the targets.
struct CtcTargets {
  TensorBase labels;             // contiguous int64
  std::vector<int64_t> offsets;  // of sample b's first label
  int64_t max_target_length = 0;
};

// torch's ctc_loss_allocate_outputs checks, in its order (with the checks torch leaves out that keep
// the kernels in bounds: label values, and the lengths' signs as torch 2.x).
CtcTargets check_ctc(const char* op, const TensorBase& log_probs, const TensorBase& targets, IntArrayRef input_lengths,
                     IntArrayRef target_lengths, int64_t blank) {
  KILN_CHECK(targets.dtype() == ScalarType::Int64 || targets.dtype() == ScalarType::Int32, op,
             "(): expected targets of dtype int64 or int32, got ", scalar_type_name(targets.dtype()));
  KILN_CHECK(log_probs.dim() == 3, op, "(): expected log_probs to be a 3-D tensor (T, N, C), got ",
             log_probs.dim(), "-D tensor of shape ", shape_str(log_probs.sizes()));
  KILN_CHECK(targets.dim() == 1 || targets.dim() == 2, op,
             "(): expected targets to have 1 to 2 dimensions (concatenated or (N, S)), got ", targets.dim(),
             "-D tensor of shape ", shape_str(targets.sizes()));
  const int64_t T = log_probs.sizes()[0], N = log_probs.sizes()[1], C = log_probs.sizes()[2];
  KILN_CHECK(blank >= 0 && blank < C, op, "(): blank must be in label range: got blank ", blank, " for ", C,
             " classes");
  KILN_CHECK(static_cast<int64_t>(input_lengths.size()) == N, op,
             "(): input_lengths must be of size batch_size: got ", input_lengths.size(), " lengths for batch size ", N);
  KILN_CHECK(static_cast<int64_t>(target_lengths.size()) == N, op,
             "(): target_lengths must be of size batch_size: got ", target_lengths.size(), " lengths for batch size ",
             N);
  CtcTargets out;
  out.offsets.resize(static_cast<size_t>(N));
  int64_t pos = 0;
  for (int64_t b = 0; b < N; ++b) {
    KILN_CHECK(target_lengths[b] >= 0, op, "(): expected target_lengths to have value at least 0, but got value ",
               target_lengths[b], " (sample ", b, ")");
    out.offsets[b] = targets.dim() == 1 ? pos : b * targets.sizes()[1];
    pos += target_lengths[b];
    out.max_target_length = std::max(out.max_target_length, target_lengths[b]);
  }
  if (targets.dim() == 1) {
    KILN_CHECK(targets.sizes()[0] == pos, op, "(): expected concatenated targets of size sum(target_lengths) = ",
               pos, ", got size ", targets.sizes()[0]);
  } else {
    KILN_CHECK(targets.sizes()[0] == N, op, "(): expected padded targets of size ", N,
               " (the batch size) at dimension 0, got shape ", shape_str(targets.sizes()));
    KILN_CHECK(targets.sizes()[1] >= out.max_target_length, op,
               "(): expected padded targets to have size at least ", out.max_target_length,
               " (the longest target length) at dimension 1, got shape ", shape_str(targets.sizes()));
  }
  for (int64_t b = 0; b < N; ++b) {
    KILN_CHECK(input_lengths[b] >= 0, op, "(): expected input_lengths to have value at least 0, but got value ",
               input_lengths[b], " (sample ", b, ")");
    KILN_CHECK(input_lengths[b] <= T, op, "(): expected input_lengths to have value at most ", T,
               ", but got value ", input_lengths[b], " (sample ", b, "; log_probs has ", T, " time steps)");
  }
  out.labels = cast_to(contiguous_cpu(targets), ScalarType::Int64);
  const int64_t* lab = static_cast<const int64_t*>(out.labels.data_ptr());
  for (int64_t b = 0; b < N; ++b) {
    for (int64_t i = 0; i < target_lengths[b]; ++i) {
      const int64_t c = lab[out.offsets[b] + i];
      KILN_CHECK_INDEX(c >= 0 && c < C, op, "(): target label ", c, " (sample ", b, ", position ", i,
                       ") is out of range for ", C, " classes");
    }
  }
  return out;
}

// The extended target's label at s: the blank for even s.
inline int64_t label_at(const int64_t* labels, int64_t s, int64_t blank) { return s % 2 == 0 ? blank : labels[s / 2]; }

template <typename T>
T log_add3(T a, T b, T c) {
  // torch's: the maximum subtracted (0 when all are -inf: no -inf - -inf)
  constexpr T neginf = -std::numeric_limits<T>::infinity();
  T m = a;
  if (b > m) m = b;
  if (c > m) m = c;
  if (m == neginf) m = 0;
  return std::log(std::exp(a - m) + std::exp(b - m) + std::exp(c - m)) + m;
}

// Forward of one sample: alpha (rows t < input_length, columns s <= 2 target_length of a row of
// `width`), already -inf everywhere; lp(t, c) its log-probabilities. Returns the loss.
template <typename T, typename LP>
T ctc_alpha(const LP& lp, T* alpha, int64_t width, const int64_t* labels, int64_t input_length, int64_t target_length,
            int64_t blank) {
  constexpr T neginf = -std::numeric_limits<T>::infinity();
  if (input_length == 0) return target_length == 0 ? T(0) : -neginf;
  alpha[0] = lp(0, blank);
  if (target_length > 0) alpha[1] = lp(0, label_at(labels, 1, blank));
  const int64_t S = 2 * target_length + 1;
  for (int64_t t = 1; t < input_length; ++t) {
    const T* prev = alpha + (t - 1) * width;
    T* row = alpha + t * width;
    for (int64_t s = 0; s < S; ++s) {
      const int64_t l = label_at(labels, s, blank);
      const T a1 = prev[s];
      const T a2 = s > 0 ? prev[s - 1] : neginf;
      const T a3 = s > 1 && label_at(labels, s - 2, blank) != l ? prev[s - 2] : neginf;
      row[s] = log_add3(a1, a2, a3) + lp(t, l);
    }
  }
  const T* last = alpha + (input_length - 1) * width;
  // An empty target has no label state to end in: only the blank path.
  if (target_length == 0) return -last[0];
  const T l1 = last[2 * target_length], l2 = last[2 * target_length - 1];
  T m = std::max(l1, l2);
  if (m == neginf) m = 0;
  return -(std::log(std::exp(l1 - m) + std::exp(l2 - m)) + m);
}

// Backward of one sample into g (row t at g + t * g_row, label c at c), which holds -inf on entry
// for t < input_length; beta is scratch of input_length rows of `width`.
template <typename T, typename LP>
void ctc_beta_grad(const LP& lp, const T* alpha, int64_t width, T* beta, T* g, int64_t g_row, int64_t C,
                   const int64_t* labels, int64_t input_length, int64_t target_length, int64_t blank, T nll, T gr) {
  constexpr T neginf = -std::numeric_limits<T>::infinity();
  if (input_length == 0) return;
  const int64_t S = 2 * target_length + 1;
  const int64_t last = input_length - 1;
  std::fill(beta + last * width, beta + last * width + S, neginf);
  beta[last * width + 2 * target_length] = lp(last, blank);
  g[last * g_row + blank] = alpha[last * width + 2 * target_length] + beta[last * width + 2 * target_length];
  if (target_length > 0) {
    const int64_t l = label_at(labels, 2 * target_length - 1, blank);
    beta[last * width + 2 * target_length - 1] = lp(last, l);
    // a blank and a label: different states, so this is an assignment (as torch's)
    g[last * g_row + l] = alpha[last * width + 2 * target_length - 1] + beta[last * width + 2 * target_length - 1];
  }
  for (int64_t t = input_length - 2; t >= 0; --t) {
    const T* next = beta + (t + 1) * width;
    T* row = beta + t * width;
    const T* arow = alpha + t * width;
    T* grow = g + t * g_row;
    for (int64_t s = S - 1; s >= 0; --s) {
      const int64_t l = label_at(labels, s, blank);
      const T b1 = next[s];
      const T b2 = s < 2 * target_length ? next[s + 1] : neginf;
      const T b3 = s < 2 * target_length - 1 && label_at(labels, s + 2, blank) != l ? next[s + 2] : neginf;
      row[s] = log_add3(b1, b2, b3) + lp(t, l);
      // g[t, l] "log+=" alpha_t(s) + beta_t(s)
      const T ab = arow[s] + row[s];
      T& acc = grow[l];
      if (acc == neginf) {
        acc = ab;
      } else {
        const T m = std::max(acc, ab);
        acc = std::log(std::exp(acc - m) + std::exp(ab - m)) + m;
      }
    }
  }
  for (int64_t t = 0; t < input_length; ++t) {
    T* grow = g + t * g_row;
    for (int64_t c = 0; c < C; ++c) {
      const T v = lp(t, c);
      grow[c] = (std::exp(v) - std::exp(grow[c] + nll - v)) * gr;
    }
  }
}

// log_probs[t, b, c] of a contiguous (T, N, C) tensor.
template <typename T>
struct LogProbs {
  const T* data;
  int64_t row;  // N * C
  T operator()(int64_t t, int64_t c) const { return data[t * row + c]; }
};

// Enough work per sample to be worth a thread of its own.
bool ctc_parallel(int64_t N, int64_t T, int64_t S) { return N > 1 && N * T * (2 * S + 1) > 4096; }

template <typename T>
std::tuple<TensorBase, TensorBase> forward_impl(const TensorBase& log_probs, const CtcTargets& tg,
                                                IntArrayRef input_lengths, IntArrayRef target_lengths, int64_t blank) {
  const int64_t Tn = log_probs.sizes()[0], N = log_probs.sizes()[1], C = log_probs.sizes()[2];
  const int64_t width = 2 * tg.max_target_length + 1;
  const TensorBase lp = contiguous_cpu(log_probs);
  TensorBase nll = empty_cpu({N}, log_probs.dtype());
  TensorBase log_alpha = empty_cpu({N, Tn, width}, log_probs.dtype());
  T* alpha = static_cast<T*>(log_alpha.data_ptr());
  std::fill(alpha, alpha + log_alpha.numel(), -std::numeric_limits<T>::infinity());
  T* out = static_cast<T*>(nll.data_ptr());
  const T* lpp = static_cast<const T*>(lp.data_ptr());
  const int64_t* labels = static_cast<const int64_t*>(tg.labels.data_ptr());
#pragma omp parallel for schedule(dynamic, 1) if (ctc_parallel(N, Tn, tg.max_target_length))
  for (int64_t b = 0; b < N; ++b) {
    const LogProbs<T> lpb{lpp + b * C, N * C};
    out[b] = ctc_alpha<T>(lpb, alpha + b * Tn * width, width, labels + tg.offsets[b], input_lengths[b],
                          target_lengths[b], blank);
  }
  return std::make_tuple(nll, log_alpha);
}

template <typename T>
TensorBase backward_impl(const TensorBase& grad, const TensorBase& log_probs, const CtcTargets& tg,
                         IntArrayRef input_lengths, IntArrayRef target_lengths, const TensorBase& neg_log_likelihood,
                         const TensorBase& log_alpha, int64_t blank, bool zero_infinity) {
  const int64_t Tn = log_probs.sizes()[0], N = log_probs.sizes()[1], C = log_probs.sizes()[2];
  const ScalarType dt = log_probs.dtype();
  const TensorBase lp = contiguous_cpu(log_probs);
  const TensorBase la = cast_to(contiguous_cpu(log_alpha), dt);
  const TensorBase go = cast_to(contiguous_cpu(grad), dt);
  const TensorBase nl = cast_to(contiguous_cpu(neg_log_likelihood), dt);
  const int64_t width = log_alpha.sizes()[2];
  TensorBase grad_input = empty_cpu(log_probs.sizes(), dt);
  T* g = static_cast<T*>(grad_input.data_ptr());
  const T* lpp = static_cast<const T*>(lp.data_ptr());
  const T* alpha = static_cast<const T*>(la.data_ptr());
  const T* gop = static_cast<const T*>(go.data_ptr());
  const T* nllp = static_cast<const T*>(nl.data_ptr());
  const int64_t* labels = static_cast<const int64_t*>(tg.labels.data_ptr());
#pragma omp parallel for schedule(dynamic, 1) if (ctc_parallel(N, Tn, tg.max_target_length))
  for (int64_t b = 0; b < N; ++b) {
    const int64_t il = input_lengths[b];
    T* gb = g + b * C;  // row t at gb + t * N * C
    const T nll = nllp[b];
    const bool zeroed = zero_infinity && nll == std::numeric_limits<T>::infinity();
    for (int64_t t = 0; t < Tn; ++t) {
      std::fill(gb + t * N * C, gb + t * N * C + C, t < il && !zeroed ? -std::numeric_limits<T>::infinity() : T(0));
    }
    if (zeroed || il == 0) continue;
    thread_local std::vector<T> beta;
    if (static_cast<int64_t>(beta.size()) < il * width) beta.resize(static_cast<size_t>(il * width));
    const LogProbs<T> lpb{lpp + b * C, N * C};
    ctc_beta_grad<T>(lpb, alpha + b * Tn * width, width, beta.data(), gb, N * C, C, labels + tg.offsets[b], il,
                     target_lengths[b], blank, nll, gop[b]);
  }
  return grad_input;
}

}  // namespace

std::tuple<TensorBase, TensorBase> ctc_loss_forward(const TensorBase& log_probs, const TensorBase& targets,
                                                    IntArrayRef input_lengths, IntArrayRef target_lengths,
                                                    int64_t blank, bool zero_infinity) {
  (void)zero_infinity;  // the backward's (as torch's)
  std::tuple<TensorBase, TensorBase> result;
  KILN_DISPATCH_FLOATING_TYPES(log_probs.dtype(), "ctc_loss_cpu", [&] {
    const CtcTargets tg = check_ctc("_ctc_loss", log_probs, targets, input_lengths, target_lengths, blank);
    result = forward_impl<scalar_t>(log_probs, tg, input_lengths, target_lengths, blank);
  });
  return result;
}

TensorBase ctc_loss_backward(const TensorBase& grad, const TensorBase& log_probs, const TensorBase& targets,
                             IntArrayRef input_lengths, IntArrayRef target_lengths,
                             const TensorBase& neg_log_likelihood, const TensorBase& log_alpha, int64_t blank,
                             bool zero_infinity) {
  TensorBase result;
  KILN_DISPATCH_FLOATING_TYPES(log_probs.dtype(), "ctc_loss_backward_cpu", [&] {
    const char* op = "_ctc_loss_backward";
    const CtcTargets tg = check_ctc(op, log_probs, targets, input_lengths, target_lengths, blank);
    const int64_t Tn = log_probs.sizes()[0], N = log_probs.sizes()[1];
    KILN_CHECK(grad.dim() == 1 && grad.sizes()[0] == N, op, "(): expected grad of shape [", N, "], got ",
               shape_str(grad.sizes()));
    KILN_CHECK(neg_log_likelihood.dim() == 1 && neg_log_likelihood.sizes()[0] == N, op,
               "(): expected neg_log_likelihood of shape [", N, "], got ", shape_str(neg_log_likelihood.sizes()));
    KILN_CHECK(log_alpha.dim() == 3 && log_alpha.sizes()[0] == N && log_alpha.sizes()[1] == Tn &&
                   log_alpha.sizes()[2] >= 2 * tg.max_target_length + 1,
               op, "(): expected log_alpha of shape [", N, ", ", Tn, ", >= ", 2 * tg.max_target_length + 1,
               "] (from _ctc_loss), got ", shape_str(log_alpha.sizes()));
    result = backward_impl<scalar_t>(grad, log_probs, tg, input_lengths, target_lengths, neg_log_likelihood,
                                     log_alpha, blank, zero_infinity);
  });
  return result;
}

}  // namespace cpu
}  // namespace kiln
