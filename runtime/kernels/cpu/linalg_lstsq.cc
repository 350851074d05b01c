// linalg_lstsq: least squares through LAPACK's gels, gelsy (the CPU default), gelsd or gelss, on
// column-major copies of each (broadcast) pair of matrices. Which outputs are empty follows torch:
// rank for every driver but gels, singular values for gelsd/gelss, residuals when m > n, the
// driver is not gelsy and (for gelsd/gelss) every matrix has full rank n.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "generated/kernels/_linalg_lstsq.h"
#include "runtime/core/tensor_impl.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/linalg_lapack.h"
#include "runtime/kernels/shape_rules.h"

namespace kiln {
namespace cpu {
namespace {

DimVector with_last(IntArrayRef batch, std::initializer_list<int64_t> last) {
  DimVector s(batch.begin(), batch.end());
  for (int64_t v : last) s.push_back(v);
  return s;
}

// One matrix: a (m x n, column-major), b (ldb x k, column-major, B in its first m rows).
// Returns LAPACK's rank (n for gels); s receives the singular values (gelsd/gelss).
template <typename T>
int solve_one(const std::string& driver, int m, int n, int k, T* a, T* b, int ldb, T* s, T rcond, int64_t batch,
              const TensorBase& input) {
  int info = 0, rank = n;
  T query = 0;
  std::vector<T> work;
  if (driver == "gels") {
    lapack::gels(m, n, k, a, b, ldb, &query, -1, &info);
    work.resize(std::max<int64_t>(1, static_cast<int64_t>(query)));
    lapack::gels(m, n, k, a, b, ldb, work.data(), static_cast<int>(work.size()), &info);
    KILN_CHECK_LINALG(info <= 0, "torch.linalg.lstsq: ", batch_prefix(input, batch),
                      "The least squares solution could not be computed because the input matrix does not have full "
                      "rank (error code: ",
                      info, ").");
  } else if (driver == "gelsy") {
    std::vector<int> jpvt(std::max(n, 1), 0);
    lapack::gelsy(m, n, k, a, b, ldb, jpvt.data(), rcond, &rank, &query, -1, &info);
    work.resize(std::max<int64_t>(1, static_cast<int64_t>(query)));
    lapack::gelsy(m, n, k, a, b, ldb, jpvt.data(), rcond, &rank, work.data(), static_cast<int>(work.size()), &info);
  } else if (driver == "gelsd") {
    int iquery = 0;
    lapack::gelsd(m, n, k, a, b, ldb, s, rcond, &rank, &query, -1, &iquery, &info);
    work.resize(std::max<int64_t>(1, static_cast<int64_t>(query)));
    std::vector<int> iwork(std::max(iquery, 1));
    lapack::gelsd(m, n, k, a, b, ldb, s, rcond, &rank, work.data(), static_cast<int>(work.size()), iwork.data(), &info);
  } else {
    lapack::gelss(m, n, k, a, b, ldb, s, rcond, &rank, &query, -1, &info);
    work.resize(std::max<int64_t>(1, static_cast<int64_t>(query)));
    lapack::gelss(m, n, k, a, b, ldb, s, rcond, &rank, work.data(), static_cast<int>(work.size()), &info);
  }
  KILN_CHECK(info >= 0, driver, ": illegal argument ", -info);
  KILN_CHECK_LINALG(info == 0, "torch.linalg.lstsq: ", batch_prefix(input, batch),
                    "The algorithm failed to converge because the input matrix is ill-conditioned or has too many "
                    "repeated singular values (error code: ",
                    info, ").");
  return rank;
}

// `full` (the broadcast batch, then `tail` dims) seen over A's own batch, as torch returns rank
// and singular values (the broadcast copies of a matrix give the same ones).
TensorBase to_input_batch(const TensorBase& full, IntArrayRef batch, IntArrayRef a_batch, int64_t tail) {
  DimVector a_shape(a_batch.begin(), a_batch.end());
  if (tail >= 0) a_shape.push_back(tail);
  if (IntArrayRef(a_batch) == batch) return full;
  if (full.numel() == 0) return zeros_cpu(a_shape, full.dtype());
  DimVector sizes;
  for (size_t i = a_batch.size(); i < batch.size(); ++i) sizes.push_back(1);
  for (int64_t v : a_batch) sizes.push_back(v);
  if (tail >= 0) sizes.push_back(tail);
  const TensorBase view(Ref<TensorImpl>::make(full.impl()->storage(), full.dtype(), sizes, full.strides(),
                                              full.storage_offset()));
  return view_as_shape(contiguous_cpu(view), a_shape);
}

}  // namespace

std::vector<TensorBase> linalg_lstsq(const TensorBase& A_in, const TensorBase& B_in, const std::optional<double>& rcond_in,
                                     const std::optional<std::string>& driver_in) {
  const char* op = "torch.linalg.lstsq";
  KILN_CHECK(A_in.dim() >= 2, op, ": input must have at least 2 dimensions.");
  KILN_CHECK(B_in.dim() >= 1, op, ": other must have at least 1 dimension.");
  KILN_CHECK(A_in.dtype() == B_in.dtype(), op, ": Expected input and other to have the same dtype, but got input's dtype ",
             torch_dtype_name(A_in.dtype()), " and other's dtype ", torch_dtype_name(B_in.dtype()));
  const int64_t dim_diff = A_in.dim() - B_in.dim();
  KILN_CHECK(dim_diff >= 0 && dim_diff <= 1, op,
             ": input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1");
  const bool vector_case = dim_diff == 1;
  TensorBase B = B_in;
  if (vector_case) {
    DimVector s(B_in.sizes().begin(), B_in.sizes().end());
    s.push_back(1);
    B = view_as_shape(contiguous_cpu(B_in), s);
  }
  KILN_CHECK(A_in.sizes()[A_in.dim() - 2] == B.sizes()[B.dim() - 2], op,
             vector_case ? ": input.size(-2) should match other.size(-1)" : ": input.size(-2) should match other.size(-2)");
  KILN_CHECK(A_in.dtype() == ScalarType::Float32 || A_in.dtype() == ScalarType::Float64,
             op, ": This function doesn't handle types other than float and double");  // torch's, op named
  KILN_CHECK(A_in.is_cpu() && B_in.is_cpu(), op, ": expected CPU tensors");
  const std::string driver = driver_in.value_or("gelsy");
  KILN_CHECK(driver == "gels" || driver == "gelsy" || driver == "gelsd" || driver == "gelss", op,
             ": parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
  const int64_t m = A_in.sizes()[A_in.dim() - 2], n = A_in.sizes()[A_in.dim() - 1], k = B.sizes()[B.dim() - 1];
  const int64_t ldb = std::max<int64_t>({m, n, 1}), mn = std::min(m, n);
  const DimVector batch = broadcast_shapes(batch_shape(A_in), batch_shape(B), op);
  const int64_t nbatch = batch_numel(batch);
  const TensorBase A = batched_contiguous(A_in, batch, op), Bc = batched_contiguous(B, batch, op);
  const bool has_rank = driver != "gels", has_sv = driver == "gelsd" || driver == "gelss";
  const ScalarType dt = A.dtype();
  TensorBase solution = zeros_cpu(with_last(batch, {n, k}), dt);
  TensorBase rank = has_rank ? zeros_cpu(batch, ScalarType::Int64) : empty_cpu({0}, ScalarType::Int64);
  TensorBase sv = has_sv ? zeros_cpu(with_last(batch, {mn}), dt) : empty_cpu({0}, dt);
  TensorBase residuals = zeros_cpu(with_last(batch, {k}), dt);
  bool full_rank = true;
  KILN_DISPATCH_FLOATING_TYPES(dt, op, [&] {
    const scalar_t rcond = rcond_in.has_value() ? static_cast<scalar_t>(*rcond_in)
                                                : std::numeric_limits<scalar_t>::epsilon() * std::max(m, n);
    const scalar_t* pa = static_cast<const scalar_t*>(A.data_ptr());
    const scalar_t* pb = static_cast<const scalar_t*>(Bc.data_ptr());
    scalar_t* px = static_cast<scalar_t*>(solution.data_ptr());
    scalar_t* pr = static_cast<scalar_t*>(residuals.data_ptr());
    scalar_t* ps = has_sv ? static_cast<scalar_t*>(sv.data_ptr()) : nullptr;
    int64_t* prank = has_rank ? static_cast<int64_t*>(rank.data_ptr()) : nullptr;
    std::vector<scalar_t> a(std::max<int64_t>(m * n, 1)), b(ldb * std::max<int64_t>(k, 1)), s(std::max<int64_t>(mn, 1));
    std::fill(s.begin(), s.end(), scalar_t(0));
    for (int64_t i = 0; i < nbatch; ++i) {
      std::fill(b.begin(), b.end(), scalar_t(0));
      for (int64_t r = 0; r < m; ++r)
        for (int64_t c = 0; c < k; ++c) b[c * ldb + r] = pb[i * m * k + r * k + c];
      int r = 0;
      if (mn > 0 && k > 0) {
        to_colmajor(pa + i * m * n, m, n, a.data());
        r = solve_one<scalar_t>(driver, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), a.data(),
                                b.data(), static_cast<int>(ldb), s.data(), rcond, i, A_in);
      }  // an empty problem (no right-hand side included) calls no LAPACK: rank 0, as torch
      if (has_rank) prank[i] = r;
      full_rank = full_rank && r == n;
      if (has_sv)
        for (int64_t j = 0; j < mn; ++j) ps[i * mn + j] = s[j];
      for (int64_t row = 0; row < n; ++row)
        for (int64_t c = 0; c < k; ++c) px[(i * n + row) * k + c] = b[c * ldb + row];
      for (int64_t c = 0; c < k; ++c) {  // LAPACK leaves A X - B's rows n..m-1 (in Q's basis) below X
        scalar_t acc = 0;
        for (int64_t row = n; row < m; ++row) acc += b[c * ldb + row] * b[c * ldb + row];
        pr[i * k + c] = acc;
      }
    }
  });
  const bool residuals_defined = m > n && driver != "gelsy" && (driver == "gels" || full_rank);
  if (!residuals_defined) residuals = empty_cpu({0}, dt);
  if (vector_case) solution = view_as_shape(solution, with_last(batch, {n}));
  const DimVector a_batch = batch_shape(A_in);
  if (has_rank) rank = to_input_batch(rank, batch, a_batch, -1);
  if (has_sv) sv = to_input_batch(sv, batch, a_batch, mn);
  return {solution, residuals, rank, sv};
}

}  // namespace cpu
}  // namespace kiln
