// Fused scaled dot-product attention on the CPU, forward and backward (schema:
// _scaled_dot_product_attention), FlashAttention-2's algorithm with BLAS products:
//
// forward, per batch entry and block of query rows: for each block of keys, the scores S = Q K^T *
// scale (plus the mask), an online softmax (the row max m and sum l rescaled as blocks arrive) and
// O += P V; at the end O / l and the row's logsumexp m + log l, kept for the backward pass. Memory
// is one block of scores, never the L x S matrix.
//
// backward, per block pair: P = exp(S - logsumexp) again, dV += P^T dO, dP = dO V^T, dS = P (dP -
// D) with D = rowsum(dO * O), dQ += dS K scale, dK += dS^T Q scale.
//
// A row whose every key is masked gives NaN (0 / 0), as softmax over only -inf does in torch's math
// path. float16 and bfloat16 compute in float32.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "generated/kernels/_scaled_dot_product_attention.h"
#include "generated/kernels/_scaled_dot_product_attention_backward.h"
#include "runtime/kernels/cpu/blas.h"
#include "runtime/kernels/cpu/cpu_tensors.h"

namespace kiln {
namespace cpu {
namespace {

constexpr int64_t kQueryBlock = 64;
constexpr int64_t kKeyBlock = 128;

// The shapes of a call: q (..., L, E), k (..., S, E), v (..., S, Ev) with one batch shape, flattened
// to `batch` entries; the mask broadcast against (..., L, S), read through its strides.
struct Attention {
  int64_t batch, L, S, E, Ev;
  double scale;
  bool causal;
  DimVector batch_shape;
  // The mask (undefined: none), in the compute dtype (bool stays bool), and its element strides
  // against (batch..., L, S): 0 along broadcast dims.
  TensorBase mask;
  bool mask_is_bool = false;
  DimVector mask_batch_strides;
  int64_t mask_row_stride = 0, mask_col_stride = 0;

  int64_t mask_offset(int64_t n) const {
    int64_t offset = 0;
    for (int64_t d = static_cast<int64_t>(batch_shape.size()) - 1; d >= 0; --d) {
      offset += (n % batch_shape[d]) * mask_batch_strides[d];
      n /= batch_shape[d];
    }
    return offset;
  }
};

Attention plan(const char* op, const TensorBase& q, const TensorBase& k, const TensorBase& v, const TensorBase& mask,
               bool is_causal, const std::optional<double>& scale, ScalarType compute) {
  KILN_CHECK(q.dim() >= 2 && k.dim() == q.dim() && v.dim() == q.dim(), op,
             "(): expected query, key and value of at least 2 dims and as many each, got ", shape_str(q.sizes()), ", ",
             shape_str(k.sizes()), " and ", shape_str(v.sizes()));
  KILN_CHECK(q.dtype() == k.dtype() && q.dtype() == v.dtype(), op,
             "(): Expected query, key, and value to have the same dtype, but got query.dtype: ",
             scalar_type_name(q.dtype()), " key.dtype: ", scalar_type_name(k.dtype()),
             " and value.dtype: ", scalar_type_name(v.dtype()), " instead.");
  KILN_CHECK(is_floating_type(q.dtype()), op, "(): expected floating point query, key and value, got ",
             scalar_type_name(q.dtype()));
  const int64_t nd = q.dim();
  Attention a{1, q.sizes()[nd - 2], k.sizes()[nd - 2], q.sizes()[nd - 1], v.sizes()[nd - 1], 0, is_causal, {}, {}};
  for (int64_t d = 0; d < nd - 2; ++d) {
    KILN_CHECK(k.sizes()[d] == q.sizes()[d] && v.sizes()[d] == q.sizes()[d], op,
               "(): expected query, key and value with the same batch dims, got ", shape_str(q.sizes()), ", ",
               shape_str(k.sizes()), " and ", shape_str(v.sizes()));
    a.batch_shape.push_back(q.sizes()[d]);
    a.batch *= q.sizes()[d];
  }
  KILN_CHECK(k.sizes()[nd - 1] == a.E, op, "(): expected key with the query's embedding size ", a.E, ", got ",
             k.sizes()[nd - 1]);
  KILN_CHECK(v.sizes()[nd - 2] == a.S, op, "(): expected value with the key's sequence length ", a.S, ", got ",
             v.sizes()[nd - 2]);
  KILN_CHECK(!(is_causal && mask.defined()), op,
             "(): Explicit attn_mask should not be set when is_causal=True");
  a.scale = scale.has_value() ? *scale : 1.0 / std::sqrt(static_cast<double>(a.E));
  if (mask.defined()) {
    a.mask_is_bool = mask.dtype() == ScalarType::Bool;
    KILN_CHECK(a.mask_is_bool || mask.dtype() == q.dtype(), op,
               "(): Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: ",
               scalar_type_name(mask.dtype()), " and  query.dtype: ", scalar_type_name(q.dtype()), " instead.");
    KILN_CHECK(mask.dim() <= nd, op, "(): attn_mask of shape ", shape_str(mask.sizes()),
               " does not broadcast to ", shape_str(q.sizes()));
    a.mask = a.mask_is_bool ? mask : cast_to(mask, compute);
    const int64_t md = mask.dim();
    const auto stride_of = [&](int64_t d_full, int64_t want) -> int64_t {  // d_full: dim of (batch..., L, S)
      const int64_t d = d_full - (nd - md);
      if (d < 0) return 0;
      const int64_t size = mask.sizes()[d];
      KILN_CHECK(size == want || size == 1, op, "(): attn_mask of shape ", shape_str(mask.sizes()),
                 " does not broadcast to (", shape_str(a.batch_shape), ", ", a.L, ", ", a.S, ")");
      return size == 1 ? 0 : a.mask.strides()[d];
    };
    for (int64_t d = 0; d < nd - 2; ++d) a.mask_batch_strides.push_back(stride_of(d, a.batch_shape[d]));
    a.mask_row_stride = stride_of(nd - 2, a.L);
    a.mask_col_stride = stride_of(nd - 1, a.S);
  }
  return a;
}

// Scores of one block: s (rows x cols, row stride ld) = q k^T * scale, masked. i0, j0: the block's
// first query and key.
template <typename T>
void block_scores(const Attention& a, int64_t n, const T* q, const T* k, int64_t i0, int64_t rows, int64_t j0,
                  int64_t cols, T* s, int64_t ld) {
  blas_gemm<T>(false, true, rows, cols, a.E, static_cast<T>(a.scale), q + i0 * a.E, a.E, k + j0 * a.E, a.E, T(0), s,
               ld);
  const T minus_inf = -std::numeric_limits<T>::infinity();
  if (a.causal) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = std::max<int64_t>(0, i0 + r + 1 - j0); c < cols; ++c) s[r * ld + c] = minus_inf;
  }
  if (!a.mask.defined()) return;
  const int64_t base = a.mask_offset(n);
  if (a.mask_is_bool) {
    const bool* m = static_cast<const bool*>(a.mask.data_ptr()) + base;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        if (!m[(i0 + r) * a.mask_row_stride + (j0 + c) * a.mask_col_stride]) s[r * ld + c] = minus_inf;
  } else {
    const T* m = static_cast<const T*>(a.mask.data_ptr()) + base;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) s[r * ld + c] += m[(i0 + r) * a.mask_row_stride + (j0 + c) * a.mask_col_stride];
  }
}

// A causal block wholly above the diagonal adds nothing.
bool skipped(const Attention& a, int64_t i0, int64_t rows, int64_t j0) { return a.causal && j0 > i0 + rows - 1; }

template <typename T>
void forward_one(const Attention& a, int64_t n, const T* q, const T* k, const T* v, T* o, T* lse) {
  if (a.S == 0) {  // no keys: zeros, as softmax over nothing times an empty value in torch's math path
    std::fill(o, o + a.L * a.Ev, T(0));
    std::fill(lse, lse + a.L, -std::numeric_limits<T>::infinity());
    return;
  }
  std::vector<T> s(static_cast<size_t>(kQueryBlock * kKeyBlock)), m(kQueryBlock), l(kQueryBlock);
  const T minus_inf = -std::numeric_limits<T>::infinity();
  for (int64_t i0 = 0; i0 < a.L; i0 += kQueryBlock) {
    const int64_t rows = std::min(kQueryBlock, a.L - i0);
    T* out = o + i0 * a.Ev;
    std::fill(out, out + rows * a.Ev, T(0));
    std::fill(m.begin(), m.end(), minus_inf);
    std::fill(l.begin(), l.end(), T(0));
    for (int64_t j0 = 0; j0 < a.S; j0 += kKeyBlock) {
      if (skipped(a, i0, rows, j0)) break;
      const int64_t cols = std::min(kKeyBlock, a.S - j0);
      block_scores(a, n, q, k, i0, rows, j0, cols, s.data(), cols);
      for (int64_t r = 0; r < rows; ++r) {
        T* row = s.data() + r * cols;
        T block_max = minus_inf;
        for (int64_t c = 0; c < cols; ++c) block_max = std::isnan(row[c]) || row[c] > block_max ? row[c] : block_max;
        const T m_new = std::isnan(block_max) || block_max > m[r] ? block_max : m[r];
        // Rows with nothing to attend to yet keep m = -inf and contribute zeros.
        const T alpha = m[r] == minus_inf ? T(0) : std::exp(m[r] - m_new);
        T sum = 0;
        for (int64_t c = 0; c < cols; ++c) {
          row[c] = m_new == minus_inf ? T(0) : std::exp(row[c] - m_new);
          sum += row[c];
        }
        l[r] = l[r] * alpha + sum;
        m[r] = m_new;
        if (alpha != T(1))
          for (int64_t e = 0; e < a.Ev; ++e) out[r * a.Ev + e] *= alpha;
      }
      blas_gemm<T>(false, false, rows, a.Ev, cols, T(1), s.data(), cols, v + j0 * a.Ev, a.Ev, T(1), out, a.Ev);
    }
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t e = 0; e < a.Ev; ++e) out[r * a.Ev + e] /= l[r];
      lse[i0 + r] = m[r] + std::log(l[r]);
    }
  }
}

template <typename T>
void backward_one(const Attention& a, int64_t n, const T* q, const T* k, const T* v, const T* o, const T* lse,
                  const T* go, T* gq, T* gk, T* gv) {
  std::vector<T> p(static_cast<size_t>(kQueryBlock * kKeyBlock)), dp(p.size()), d(static_cast<size_t>(a.L));
  for (int64_t i = 0; i < a.L; ++i) {
    T sum = 0;
    for (int64_t e = 0; e < a.Ev; ++e) sum += go[i * a.Ev + e] * o[i * a.Ev + e];
    d[i] = sum;
  }
  std::fill(gq, gq + a.L * a.E, T(0));
  std::fill(gk, gk + a.S * a.E, T(0));
  std::fill(gv, gv + a.S * a.Ev, T(0));
  const T scale = static_cast<T>(a.scale);
  for (int64_t i0 = 0; i0 < a.L; i0 += kQueryBlock) {
    const int64_t rows = std::min(kQueryBlock, a.L - i0);
    for (int64_t j0 = 0; j0 < a.S; j0 += kKeyBlock) {
      if (skipped(a, i0, rows, j0)) break;
      const int64_t cols = std::min(kKeyBlock, a.S - j0);
      block_scores(a, n, q, k, i0, rows, j0, cols, p.data(), cols);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) p[r * cols + c] = std::exp(p[r * cols + c] - lse[i0 + r]);
      // dV += P^T dO;  dP = dO V^T;  dS = P (dP - D)
      blas_gemm<T>(true, false, cols, a.Ev, rows, T(1), p.data(), cols, go + i0 * a.Ev, a.Ev, T(1), gv + j0 * a.Ev,
                   a.Ev);
      blas_gemm<T>(false, true, rows, cols, a.Ev, T(1), go + i0 * a.Ev, a.Ev, v + j0 * a.Ev, a.Ev, T(0), dp.data(),
                   cols);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) dp[r * cols + c] = p[r * cols + c] * (dp[r * cols + c] - d[i0 + r]);
      // dQ += dS K scale;  dK += dS^T Q scale
      blas_gemm<T>(false, false, rows, a.E, cols, scale, dp.data(), cols, k + j0 * a.E, a.E, T(1), gq + i0 * a.E, a.E);
      blas_gemm<T>(true, false, cols, a.E, rows, scale, dp.data(), cols, q + i0 * a.E, a.E, T(1), gk + j0 * a.E, a.E);
    }
  }
}

// Runs f(n) for every batch entry, in parallel when there is enough work.
template <typename F>
void for_each_entry(const Attention& a, F f) {
  const bool parallel = a.batch > 1 && a.batch * a.L * a.S > 65536 && omp_get_max_threads() > 1 && !omp_in_parallel();
#pragma omp parallel for if (parallel) schedule(static)
  for (int64_t n = 0; n < a.batch; ++n) f(n);
}

DimVector with_last(IntArrayRef sizes, int64_t last) {
  DimVector out(sizes.begin(), sizes.end());
  out.back() = last;
  return out;
}

}  // namespace

std::tuple<TensorBase, TensorBase> scaled_dot_product_attention_fused(const TensorBase& query, const TensorBase& key,
                                                                      const TensorBase& value,
                                                                      const TensorBase& attn_mask, bool is_causal,
                                                                      const std::optional<double>& scale) {
  const ScalarType compute = opmath_type(query.dtype());
  const Attention a = plan("_scaled_dot_product_attention", query, key, value, attn_mask, is_causal, scale, compute);
  const auto in = [&](const TensorBase& t) { return contiguous_cpu(cast_to(t, compute)); };
  const TensorBase q = in(query), k = in(key), v = in(value);
  TensorBase out = empty_cpu(with_last(query.sizes(), a.Ev), compute);
  TensorBase lse = empty_cpu(DimVector(query.sizes().begin(), query.sizes().end() - 1), compute);
  KILN_DISPATCH_FLOATING_TYPES(compute, "scaled_dot_product_attention", [&] {
    const scalar_t *qp = static_cast<const scalar_t*>(q.data_ptr()), *kp = static_cast<const scalar_t*>(k.data_ptr()),
                   *vp = static_cast<const scalar_t*>(v.data_ptr());
    scalar_t* op = static_cast<scalar_t*>(out.data_ptr());
    scalar_t* lp = static_cast<scalar_t*>(lse.data_ptr());
    for_each_entry(a, [&](int64_t n) {
      forward_one(a, n, qp + n * a.L * a.E, kp + n * a.S * a.E, vp + n * a.S * a.Ev, op + n * a.L * a.Ev, lp + n * a.L);
    });
  });
  return {cast_to(out, query.dtype()), lse};
}

std::vector<TensorBase> scaled_dot_product_attention_fused_backward(
    const TensorBase& grad, const TensorBase& query, const TensorBase& key, const TensorBase& value,
    const TensorBase& attn_mask, bool is_causal, const std::optional<double>& scale, const TensorBase& output,
    const TensorBase& logsumexp) {
  const ScalarType compute = opmath_type(query.dtype());
  const Attention a = plan("_scaled_dot_product_attention_backward", query, key, value, attn_mask, is_causal, scale,
                           compute);
  const DimVector out_shape = with_last(query.sizes(), a.Ev);
  KILN_CHECK(grad.sizes() == IntArrayRef(out_shape) && output.sizes() == IntArrayRef(out_shape) &&
                 logsumexp.numel() == a.batch * a.L,
             "_scaled_dot_product_attention_backward(): expected grad and output of shape ", shape_str(out_shape),
             " and a logsumexp per query row");
  const auto in = [&](const TensorBase& t) { return contiguous_cpu(cast_to(t, compute)); };
  const TensorBase q = in(query), k = in(key), v = in(value), o = in(output), l = in(logsumexp), g = in(grad);
  TensorBase gq = empty_cpu(query.sizes(), compute), gk = empty_cpu(key.sizes(), compute),
             gv = empty_cpu(value.sizes(), compute);
  KILN_DISPATCH_FLOATING_TYPES(compute, "scaled_dot_product_attention_backward", [&] {
    const auto c = [](const TensorBase& t) { return static_cast<const scalar_t*>(t.data_ptr()); };
    const auto w = [](const TensorBase& t) { return static_cast<scalar_t*>(t.data_ptr()); };
    for_each_entry(a, [&](int64_t n) {
      const int64_t qe = n * a.L * a.E, ke = n * a.S * a.E, ve = n * a.S * a.Ev, oe = n * a.L * a.Ev;
      backward_one(a, n, c(q) + qe, c(k) + ke, c(v) + ve, c(o) + oe, c(l) + n * a.L, c(g) + oe, w(gq) + qe,
                   w(gk) + ke, w(gv) + ve);
    });
  });
  return {cast_to(gq, query.dtype()), cast_to(gk, key.dtype()), cast_to(gv, value.dtype())};
}

}  // namespace cpu
}  // namespace kiln
