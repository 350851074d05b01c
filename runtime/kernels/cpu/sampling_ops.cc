// multinomial (indices drawn from rows of weights) and randperm (a random permutation),
// with torch's argument checks and messages, drawing as PyTorch's CPU kernels do
// (native/Distributions.cpp, native/cpu/MultinomialKernel.cpp, native/TensorFactories.cpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "generated/kernels/multinomial.h"
#include "generated/kernels/randperm.h"
#include "runtime/kernels/cpu/random_utils.h"

namespace kiln {
namespace cpu {
namespace {

// Row r of a 1-D (one row) or 2-D weight tensor, as doubles, whatever its strides.
void read_row(const TensorBase& w, int64_t r, std::vector<double>& row) {
  const int64_t n = w.size(-1), step = w.stride(-1), start = w.dim() == 2 ? r * w.stride(0) : 0;
  KILN_DISPATCH_FLOATING_TYPES_AND_REDUCED(w.dtype(), "multinomial", [&] {
    const scalar_t* p = static_cast<const scalar_t*>(w.data_ptr()) + start;
    for (int64_t c = 0; c < n; ++c) row[c] = static_cast<double>(p[c * step]);
  });
}

// torch checks differently on its two paths; kiln keeps both messages.
void check_weights(const TensorBase& w, int64_t rows, bool per_entry) {
  std::vector<double> row(w.size(-1));
  for (int64_t r = 0; r < rows; ++r) {
    read_row(w, r, row);
    double sum = 0;
    for (double v : row) {
      if (per_entry) {
        KILN_CHECK(v >= 0, "invalid multinomial distribution (encountering probability entry < 0)");
        KILN_CHECK(std::isfinite(v),
                   "invalid multinomial distribution (encountering probability entry = infinity or NaN)");
      } else {
        KILN_CHECK(v >= 0 && std::isfinite(v), "probability tensor contains either `inf`, `nan` or element < 0");
      }
      sum += v;
    }
    KILN_CHECK(sum > 0, "invalid multinomial distribution (sum of probabilities <= 0)");
  }
}

// With replacement (torch's multinomial_with_replacement kernel): the row's cumulative sums in
// its dtype (float32 for float16/bfloat16), divided by the total, the last one set to 1; each
// sample is the first category whose cumulative value is not below a uniform double.
template <typename T>
void sample_with_replacement(RandomEngine& e, const T* w, int64_t step, int64_t categories, int64_t n, int64_t* out) {
  using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;
  std::vector<acc_t> cum(categories);
  acc_t sum = 0;
  for (int64_t c = 0; c < categories; ++c) {
    sum += static_cast<acc_t>(w[c * step]);
    cum[c] = sum;
  }
  for (acc_t& v : cum) v /= sum;
  cum[categories - 1] = 1;
  for (int64_t k = 0; k < n; ++k) {
    const double u = uniform_double(e);
    int64_t left = 0, right = categories;  // torch's binary search
    while (right > left) {
      const int64_t mid = left + (right - left) / 2;
      if (static_cast<double>(cum[mid]) < u) left = mid + 1;
      else right = mid;
    }
    out[k] = left;
  }
}

// Without replacement (torch's exponential trick): q ~ Exp(1) for every weight of every
// row (drawn first, in the weights' memory order: torch fills empty_like(self).exponential_()),
// then the n largest w / q of each row (in the weights' dtype), largest first (for one sample,
// the first largest).
template <typename T>
void sample_without_replacement(RandomEngine& e, const TensorBase& self, int64_t rows, int64_t n, int64_t* result) {
  const int64_t categories = self.size(-1);
  const int64_t row_stride = self.dim() == 2 ? self.stride(0) : 0, step = self.stride(-1);
  const T* w = static_cast<const T*>(self.data_ptr());
  // q laid out as self (empty_like keeps a dense layout, else it is contiguous).
  const TensorBase layout = empty_like_cpu(self, self.dtype());
  std::vector<T> q(self.numel());
  auto exponential = [&] { return static_cast<T>(-std::log(1.0 - uniform_double(e))); };
  if (layout.is_contiguous()) {
    for (T& v : q) v = exponential();
  } else {
    for (int64_t offset : iteration_offsets(layout)) q[offset] = exponential();
  }
  const int64_t q_row_stride = self.dim() == 2 ? layout.stride(0) : 0, q_step = layout.stride(-1);
  // torch's topk (topk_impl_loop): (key, index) pairs in index order, compared by key alone,
  // through the same libstdc++ algorithms, so that equal keys come out in torch's order too.
  using Entry = std::pair<double, int64_t>;
  auto larger = [](const Entry& a, const Entry& b) { return a.first > b.first; };
  std::vector<Entry> queue(categories);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < categories; ++c) {
      const T key = static_cast<T>(w[r * row_stride + c * step] / q[r * q_row_stride + c * q_step]);  // in T, as torch
      queue[c] = {static_cast<double>(key), c};
    }
    int64_t* out = result + r * n;
    if (n == 1) {  // argmax: the first largest
      *out = std::max_element(queue.begin(), queue.end(), [](const Entry& a, const Entry& b) {
               return a.first < b.first;
             })->second;
      continue;
    }
    if (n * 64 <= categories) {
      std::partial_sort(queue.begin(), queue.begin() + n, queue.end(), larger);
    } else {
      std::nth_element(queue.begin(), queue.begin() + n - 1, queue.end(), larger);
      std::sort(queue.begin(), queue.begin() + n - 1, larger);
    }
    for (int64_t k = 0; k < n; ++k) out[k] = queue[k].second;
  }
}

}  // namespace

TensorBase multinomial(const TensorBase& self, int64_t num_samples, bool replacement, Generator* generator) {
  KILN_CHECK(self.dim() == 1 || self.dim() == 2, "prob_dist must be 1 or 2 dim");
  KILN_CHECK(self.is_floating_point(), "multinomial only supports floating-point dtypes for input, got: ",
             scalar_type_name(self.dtype()));
  KILN_CHECK(num_samples > 0, "cannot sample n_sample <= 0 samples");
  const int64_t categories = self.size(-1), rows = self.dim() == 2 ? self.size(0) : 1;
  KILN_CHECK(replacement || num_samples <= categories,
             "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  KILN_CHECK(categories <= (int64_t{1} << 24), "number of categories cannot exceed 2^24");
  TensorBase out = self.dim() == 1 ? empty_cpu({num_samples}, ScalarType::Int64)
                                   : empty_cpu({rows, num_samples}, ScalarType::Int64);
  if (out.numel() == 0) return out;
  // torch 1.13 samples without replacement by its exponential trick, with replacement
  // (even one sample) by inverting the cumulative weights.
  const bool without = !replacement;
  check_weights(self, rows, !without);  // every row, before anything is drawn
  int64_t* result = static_cast<int64_t*>(out.data_ptr());
  KILN_DISPATCH_FLOATING_TYPES_AND_REDUCED(self.dtype(), "multinomial", [&] {
    generator_or_default(generator).draw([&](RandomEngine& e) {
      if (without) {
        sample_without_replacement<scalar_t>(e, self, rows, num_samples, result);
        return;
      }
      const scalar_t* w = static_cast<const scalar_t*>(self.data_ptr());
      const int64_t row_stride = self.dim() == 2 ? self.stride(0) : 0;
      for (int64_t r = 0; r < rows; ++r)
        sample_with_replacement<scalar_t>(e, w + r * row_stride, self.stride(-1), categories, num_samples,
                                          result + r * num_samples);
    });
  });
  return out;
}

TensorBase randperm(int64_t n, Generator* generator, const std::optional<ScalarType>& dtype,
                    const std::optional<Device>& device, bool /*requires_grad: applied by the generated API*/) {
  KILN_CHECK(!device || device->is_cpu(), "randperm(): device ", device ? device->str() : "", " is not available");
  KILN_CHECK(n >= 0, "randperm(): n must be non-negative, got ", n);
  const ScalarType t = dtype.value_or(ScalarType::Int64);  // torch: int64 whatever the default dtype
  // Every value up to n - 1 must be exact in the result's dtype.
  KILN_CHECK(!is_integral_type(t, /*include_bool=*/false) || n - 1 <= integer_type_max(t),
             "randperm(): n is too large for result tensor type: '", scalar_type_name(t), "'");
  KILN_CHECK(t != ScalarType::Float32 || n <= (int64_t{1} << 24) + 1,
             "randperm(): n cannot be greater than 2^24+1 for Float type.");
  KILN_CHECK(t != ScalarType::Float64 || n <= (int64_t{1} << 53) + 1,
             "randperm(): n cannot be greater than 2^53+1 for Double type.");
  TensorBase out;
  KILN_DISPATCH_NUMERIC_TYPES(t, "randperm", [&] {
    out = empty_cpu({n}, t);
    scalar_t* p = static_cast<scalar_t*>(out.data_ptr());
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<scalar_t>(i);
    // Fisher-Yates as torch: position i swaps with i + (a 32-bit draw mod n - i).
    generator_or_default(generator).draw([&](RandomEngine& e) {
      for (int64_t i = 0; i + 1 < n; ++i) std::swap(p[i], p[i + static_cast<int64_t>(e.random() % (n - i))]);
    });
  });
  return out;
}

}  // namespace cpu
}  // namespace kiln
