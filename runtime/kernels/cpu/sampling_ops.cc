// multinomial (indices drawn from rows of weights) and randperm (a random permutation),
// with torch's argument checks and messages.
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

// Scaled by the largest weight, so sums stay finite whatever the weights' magnitude.
void scale_to_max(std::vector<double>& row) {
  const double top = *std::max_element(row.begin(), row.end());
  for (double& v : row) v /= top;
}

// With replacement: each sample inverts the cumulative weights at a uniform point; a
// zero-weight category covers an empty interval, so it is never drawn.
void sample_with_replacement(Mt19937& e, std::vector<double>& row, int64_t n, int64_t* out) {
  scale_to_max(row);
  std::partial_sum(row.begin(), row.end(), row.begin());
  const int64_t last = std::find(row.begin(), row.end(), row.back()) - row.begin();  // last positive weight
  for (int64_t k = 0; k < n; ++k) {
    const double target = unit(e) * row.back();
    const int64_t c = std::upper_bound(row.begin(), row.end(), target) - row.begin();
    out[k] = std::min(c, last);  // target rounded up to the total: the last positive category
  }
}

// Without replacement: category c arrives at time E_c / w_c (E_c ~ Exp(1)); the first n
// arrivals, in order, are a sequential draw without replacement (torch's p / q trick).
// Zero weights never arrive: they come last, by index, when n exceeds the positive ones.
void sample_without_replacement(Mt19937& e, std::vector<double>& row, int64_t n, int64_t* out) {
  scale_to_max(row);
  std::vector<double> key(row.size());
  for (size_t c = 0; c < row.size(); ++c) {
    const double arrival = -std::log(1.0 - unit(e));  // in [0, 37]: 1 - unit is in (0, 1]
    key[c] = row[c] > 0 ? row[c] / arrival : -1.0;   // w / 0 = inf: arrives first
  }
  std::vector<int64_t> order(row.size());
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + n, order.end(),
                    [&](int64_t a, int64_t b) { return key[a] > key[b] || (key[a] == key[b] && a < b); });
  std::copy(order.begin(), order.begin() + n, out);
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
  // torch draws one sample (or none with replacement) by the no-replacement path.
  const bool without = !replacement || num_samples == 1;
  check_weights(self, rows, !without);  // every row, before anything is drawn
  int64_t* result = static_cast<int64_t*>(out.data_ptr());
  std::vector<double> row(categories);
  generator_or_default(generator).draw([&](Mt19937& e) {
    for (int64_t r = 0; r < rows; ++r) {
      read_row(self, r, row);
      if (without) sample_without_replacement(e, row, num_samples, result + r * num_samples);
      else sample_with_replacement(e, row, num_samples, result + r * num_samples);
    }
  });
  return out;
}

TensorBase randperm(int64_t n, Generator* generator, const std::optional<ScalarType>& dtype,
                    const std::optional<Device>& device, bool /*requires_grad: applied by the generated API*/) {
  KILN_CHECK(!device || device->is_cpu(), "randperm(): device ", device ? device->str() : "", " is not available");
  KILN_CHECK(n >= 0, "randperm(): n must be non-negative, got ", n);
  const ScalarType t = dtype.value_or(ScalarType::Int64);  // torch: int64 whatever the default dtype
  // Every value up to n - 1 must be exact in the result's dtype.
  KILN_CHECK(t != ScalarType::Int32 || n - 1 <= std::numeric_limits<int32_t>::max(),
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
    // Fisher-Yates: position i takes a uniformly chosen element of those not yet placed.
    generator_or_default(generator).draw([&](Mt19937& e) {
      for (int64_t i = 0; i + 1 < n; ++i) std::swap(p[i], p[i + uniform_below(e, n - i)]);
    });
  });
  return out;
}

}  // namespace cpu
}  // namespace kiln
