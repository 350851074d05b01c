#include "runtime/kernels/tensor_iterator.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "generated/kernels/expand.h"
#include "runtime/core/convert.h"
#include "runtime/core/error.h"
#include "runtime/kernels/reduced_float_convert.h"

namespace kiln {

ScalarType result_type(const std::vector<TensorBase>& inputs) {
  ScalarType dim_result = ScalarType::Undefined, zero_result = ScalarType::Undefined,
             wrapped_result = ScalarType::Undefined;
  for (const TensorBase& t : inputs) {
    if (!t.defined()) continue;
    if (t.impl()->is_wrapped_number()) {
      // A Python float counts as the default dtype, not as float64.
      ScalarType s = is_floating_type(t.dtype()) ? default_dtype() : t.dtype();
      wrapped_result = promote_types(wrapped_result, s);
    } else if (t.dim() == 0) {
      zero_result = promote_types(zero_result, t.dtype());
    } else {
      dim_result = promote_types(dim_result, t.dtype());
    }
  }
  // A weaker group only matters when it is of a higher category.
  auto combine = [](ScalarType higher, ScalarType lower) {
    if (is_floating_type(higher)) return higher;
    if (higher == ScalarType::Bool || is_floating_type(lower)) return promote_types(higher, lower);
    if (higher != ScalarType::Undefined) return higher;
    return lower;
  };
  return combine(dim_result, combine(zero_result, wrapped_result));
}

TensorBase empty_cpu(IntArrayRef sizes, ScalarType dtype) {
  int64_t n = checked_numel(sizes, "empty");
  int64_t nbytes = 0;
  KILN_CHECK(!__builtin_mul_overflow(n, element_size(dtype), &nbytes), "empty(): shape ", shape_str(sizes),
                   " needs more bytes than int64 can count");
  Storage storage = Storage::make(static_cast<size_t>(nbytes), cpu_allocator(), Device(DeviceType::CPU));
  // Uninitialized floats and ints are merely arbitrary; an arbitrary byte is not a valid bool.
  if (dtype == ScalarType::Bool) std::memset(storage->data(), 0, static_cast<size_t>(nbytes));
  return TensorBase(Ref<TensorImpl>::make(std::move(storage), dtype, sizes, contiguous_strides(sizes), 0));
}

void check_unique_dims(IntArrayRef dims, int64_t ndim, const char* op_name) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(ndim, 1)), false);
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, ndim, op_name);
    KILN_CHECK(!seen[w], op_name, "(): dim ", w, " appears multiple times in the list of dims");
    seen[w] = true;
  }
}

bool is_expanded(const TensorBase& t) {
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.strides()[d] == 0 && t.sizes()[d] > 1) return true;
  return false;
}

void check_no_internal_overlap(const TensorBase& out, const char* op_name) {
  KILN_CHECK(!is_expanded(out), op_name,
             "(): unsupported operation: more than one element of the written-to tensor refers to a single "
             "memory location. Please clone() the tensor before performing the operation.");
}

TensorBase zeros_cpu(IntArrayRef sizes, ScalarType dtype) {
  TensorBase t = empty_cpu(sizes, dtype);
  if (t.numel() > 0) std::memset(t.data_ptr(), 0, static_cast<size_t>(t.numel()) * element_size(dtype));
  return t;
}

bool is_non_overlapping_and_dense(const TensorBase& t) {
  const int64_t nd = t.dim();
  DimVector order(nd);
  for (int64_t i = 0; i < nd; ++i) order[i] = i;
  // Dims from innermost (smallest stride) outwards.
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return t.strides()[a] < t.strides()[b]; });
  int64_t expected = 1;
  for (int64_t d : order) {
    if (t.sizes()[d] == 1) continue;
    if (t.strides()[d] != expected) return false;
    expected *= t.sizes()[d];
  }
  return true;
}

TensorBase empty_like_cpu(const TensorBase& t, ScalarType dtype) {
  if (t.is_contiguous() || t.numel() == 0 || !is_non_overlapping_and_dense(t)) return empty_cpu(t.sizes(), dtype);
  TensorBase out = empty_cpu({t.numel()}, dtype);
  out.impl()->set_sizes_and_strides(t.sizes(), t.strides(), 0);
  return out;
}

TensorBase wrap_scalar(const Scalar& s) {
  TensorBase t = empty_cpu({}, s.type());
  switch (s.type()) {
    case ScalarType::Bool: *static_cast<bool*>(t.data_ptr()) = s.to_bool(); break;
    case ScalarType::Int64: *static_cast<int64_t*>(t.data_ptr()) = s.to_long(); break;
    default: *static_cast<double*>(t.data_ptr()) = s.to_double(); break;
  }
  t.impl()->set_wrapped_number(true);
  return t;
}

DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op_name) {
  size_t n = std::max(a.size(), b.size());
  DimVector out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    KILN_CHECK(da == db || da == 1 || db == 1, op_name, "(): The size of tensor a (", da,
               ") must match the size of tensor b (", db, ") at non-singleton dimension ", i);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

void check_no_partial_overlap(const TensorBase& out, const TensorBase& in, const char* op_name) {
  // PyTorch's rule: only dense tensors (each filling its memory range) are compared; sparser
  // ones may interleave without sharing elements (two columns), which is common and fine.
  if (out.numel() == 0 || in.numel() == 0) return;
  if (out.impl()->storage().get() != in.impl()->storage().get()) return;  // the cheap test first
  if (!is_non_overlapping_and_dense(out) || !is_non_overlapping_and_dense(in)) return;
  const char* a = static_cast<const char*>(out.data_ptr());
  const char* b = static_cast<const char*>(in.data_ptr());
  const char* a_end = a + out.numel() * out.element_size();
  const char* b_end = b + in.numel() * in.element_size();
  // x.add_(x): each element reads itself. (x += x.t() shares the range with other strides.)
  const bool same = a == b && out.sizes() == in.sizes() && out.strides() == in.strides();
  KILN_CHECK(same || a_end <= b || b_end <= a, op_name,
             "(): unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
             "single memory location. Please clone() the tensor before performing the operation.");
}

TensorBase resized_out(const TensorBase& out, IntArrayRef shape, ScalarType dtype, const char* op_name) {
  if (!out.defined()) return empty_cpu(shape, dtype);
  KILN_CHECK(out.dtype() == dtype, op_name, "(): Expected out tensor to have dtype ", scalar_type_name(dtype),
             ", but got ", scalar_type_name(out.dtype()), " instead");
  if (!(out.sizes() == shape)) out.impl()->set_sizes_contiguous(shape);
  return out;
}

TensorBase result_into_out(const TensorBase& result, const TensorBase& out, const char* op_name) {
  if (!out.defined()) return result;
  TensorBase dst = resized_out(out, result.sizes(), result.dtype(), op_name);
  copy_into(dst, result, op_name);
  return dst;
}

void check_out_is_not_an_input(const TensorBase& out, std::initializer_list<const TensorBase*> inputs,
                               const char* op_name) {
  if (!out.defined()) return;
  for (const TensorBase* in : inputs)
    KILN_CHECK(!in->defined() || in->impl()->storage().get() != out.impl()->storage().get(), op_name,
               "(): unsupported operation: the out= tensor shares memory with an input. Please clone() the input "
               "or use another out tensor.");
}

TensorIterator::TensorIterator(IteratorConfig config) { build(config); }

void TensorIterator::build(IteratorConfig& c) {
  // Shape.
  DimVector shape;
  bool first = true;
  for (const TensorBase& t : c.inputs) {
    KILN_CHECK(t.defined(), c.op_name, "(): expected a defined tensor");
    shape = first ? DimVector(t.sizes().begin(), t.sizes().end()) : broadcast_shapes(shape, t.sizes(), c.op_name);
    first = false;
  }
  if (c.inputs.empty() && c.out.defined()) shape.assign(c.out.sizes().begin(), c.out.sizes().end());
  // Devices: CPU kernels only see CPU tensors.
  for (const TensorBase& t : c.inputs) {
    KILN_CHECK(t.is_cpu() || (t.dim() == 0 && t.impl()->is_wrapped_number()),
               "Expected all tensors to be on the same device, but found at least two devices, ", t.device().str(),
               " and cpu! (in ", c.op_name, ")");
  }

  // Dtypes.
  ScalarType common = c.promote_inputs ? result_type(c.inputs) : c.inputs.empty() ? c.out.dtype() : c.inputs[0].dtype();
  compute_dtype_ = c.compute_dtype != ScalarType::Undefined ? c.compute_dtype : common;
  if (c.int_to_float && !is_floating_type(compute_dtype_)) compute_dtype_ = default_dtype();
  const ScalarType result_dtype = c.out_dtype != ScalarType::Undefined ? c.out_dtype : compute_dtype_;
  if (c.reduced_float_as_float32) compute_dtype_ = opmath_type(compute_dtype_);
  // What the kernel writes: the compute dtype unless forced (Bool for comparisons).
  const ScalarType kernel_out_dtype = c.out_dtype != ScalarType::Undefined ? c.out_dtype : compute_dtype_;

  // Output.
  TensorBase out;
  if (c.out.defined()) {
    KILN_CHECK(c.out.is_cpu(), c.op_name, "(): Expected out tensor to have device cpu, but got ", c.out.device().str());
    KILN_CHECK(can_cast(result_dtype, c.out.dtype()), c.op_name, "(): result type ", scalar_type_name(result_dtype),
               " can't be cast to the desired output type ", scalar_type_name(c.out.dtype()));
    KILN_CHECK(!c.out_same_dtype || c.out.dtype() == result_dtype, c.op_name, "(): Found dtype ",
               scalar_type_name(c.out.dtype()), " but expected ", scalar_type_name(result_dtype));
    if (!(c.out.sizes() == IntArrayRef(shape))) {
      KILN_CHECK(!c.inplace, c.op_name, "(): output with shape ", shape_str(c.out.sizes()),
                 " doesn't match the broadcast shape ", shape_str(shape));
      // Resizing an out that is also an input would change the input under the kernel.
      for (const TensorBase& t : c.inputs) check_out_is_not_an_input(c.out, {&t}, c.op_name);
      c.out.impl()->set_sizes_contiguous(shape);
    }
    if (!c.reduction && !c.same_value_everywhere) check_no_internal_overlap(c.out, c.op_name);
    for (const TensorBase& t : c.inputs) check_no_partial_overlap(c.out, t, c.op_name);
    result_ = c.out;
  } else {
    result_ = empty_cpu(shape, result_dtype);
  }
  // A 16-bit result computed in float32 is rounded to its dtype even when out= is wider, as
  // torch's (exp(bfloat16, out=float32) holds bfloat16 values).
  const bool rounds = c.reduced_float_as_float32 && c.out_dtype == ScalarType::Undefined &&
                      result_dtype != kernel_out_dtype && result_.dtype() != result_dtype;
  if (result_.dtype() == kernel_out_dtype && !rounds) {
    out = result_;
  } else {
    out = empty_cpu(shape, kernel_out_dtype);
    out_to_fill_ = result_;
    if (rounds) round_to_ = result_dtype;
  }

  operands_.push_back(out);
  for (const TensorBase& t : c.inputs)
    operands_.push_back(!c.cast_inputs || t.dtype() == compute_dtype_ ? t : cast_to(t, compute_dtype_));

  // Byte strides, broadcast dims get stride 0.
  shape_ = shape;
  numel_ = 1;
  for (int64_t s : shape_) numel_ *= s;
  const size_t nd = shape_.size();
  strides_.assign(operands_.size(), DimVector(nd, 0));
  for (size_t k = 0; k < operands_.size(); ++k) {
    const TensorBase& t = operands_[k];
    size_t offset = nd - t.dim();
    for (int64_t d = 0; d < t.dim(); ++d) {
      strides_[k][offset + d] = t.sizes()[d] == 1 ? 0 : t.strides()[d] * t.element_size();
    }
  }
  coalesce();
}

void TensorIterator::coalesce() {
  // Order dims by memory order (outermost = largest stride) so the inner loop is the
  // contiguous one: by the output's strides, or by the first input's when the output
  // broadcasts (reductions write accumulators with stride 0).
  const size_t nd = shape_.size();
  size_t ref = 0;
  for (size_t d = 0; d < nd; ++d)
    if (strides_[0][d] == 0 && shape_[d] > 1 && strides_.size() > 1) ref = 1;
  std::vector<size_t> perm(nd);
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](size_t a, size_t b) {
    int64_t sa = strides_[ref][a], sb = strides_[ref][b];
    if (sa == 0 || sb == 0) return false;
    return sa > sb;
  });
  DimVector shape;
  std::vector<DimVector> strides(strides_.size());
  for (size_t i : perm) {
    if (shape_[i] == 1) continue;
    shape.push_back(shape_[i]);
    for (size_t k = 0; k < strides_.size(); ++k) strides[k].push_back(strides_[k][i]);
  }
  // Merge an outer dim into the next inner one when every operand is contiguous across them.
  DimVector cshape;
  std::vector<DimVector> cstrides(strides.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    if (!cshape.empty()) {
      bool can_merge = true;
      for (size_t k = 0; k < strides.size() && can_merge; ++k)
        can_merge = cstrides[k].back() == strides[k][i] * shape[i];
      if (can_merge) {
        cshape.back() *= shape[i];
        for (size_t k = 0; k < strides.size(); ++k) cstrides[k].back() = strides[k][i];
        continue;
      }
    }
    cshape.push_back(shape[i]);
    for (size_t k = 0; k < strides.size(); ++k) cstrides[k].push_back(strides[k][i]);
  }
  if (cshape.empty()) {  // 0-dim: one element
    cshape.push_back(1);
    for (auto& s : cstrides) s.push_back(0);
  }
  shape_ = std::move(cshape);
  strides_ = std::move(cstrides);
}

void TensorIterator::serial_for(const Loop& loop, int64_t begin, int64_t end) {
  const int nt = ntensors();
  const int64_t nd = static_cast<int64_t>(shape_.size());
  const int64_t inner = shape_[nd - 1];
  // Multi-index of `begin`.
  DimVector idx(nd, 0);
  int64_t rem = begin;
  for (int64_t d = nd - 1; d >= 0; --d) {
    idx[d] = rem % shape_[d];
    rem /= shape_[d];
  }
  std::vector<char*> ptrs(nt);
  std::vector<int64_t> inner_strides(nt);
  for (int k = 0; k < nt; ++k) inner_strides[k] = strides_[k][nd - 1];
  int64_t pos = begin;
  while (pos < end) {
    for (int k = 0; k < nt; ++k) {
      char* p = static_cast<char*>(operands_[k].data_ptr());
      for (int64_t d = 0; d < nd; ++d) p += idx[d] * strides_[k][d];
      ptrs[k] = p;
    }
    int64_t n = std::min(inner - idx[nd - 1], end - pos);
    loop(ptrs.data(), inner_strides.data(), n);
    pos += n;
    idx[nd - 1] += n;
    for (int64_t d = nd - 1; d > 0 && idx[d] >= shape_[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}

void TensorIterator::for_each(const Loop& loop, int64_t grain_size) {
  if (numel_ == 0) return;
  int threads = omp_get_max_threads();
  if (numel_ < grain_size || threads <= 1 || omp_in_parallel()) {
    serial_for(loop, 0, numel_);
    return;
  }
  int64_t chunks = std::min<int64_t>(threads, (numel_ + grain_size - 1) / grain_size);
#pragma omp parallel for num_threads(chunks) schedule(static, 1)
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t begin = numel_ * c / chunks, end = numel_ * (c + 1) / chunks;
    serial_for(loop, begin, end);
  }
}

void TensorIterator::finish() {
  if (filled_) return;
  filled_ = true;
  if (!out_to_fill_.defined()) return;
  copy_into(out_to_fill_, round_to_ == ScalarType::Undefined ? operands_[0] : cast_to(operands_[0], round_to_), "copy_");
}

// ---- copies and casts ----

namespace {
template <typename To>
void cast_loop_from(ScalarType src_type, char** data, const int64_t* strides, int64_t n) {
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(src_type, "copy_", [&] {
    char* out = data[0];
    const char* in = data[1];
    if (strides[0] == sizeof(To) && strides[1] == sizeof(scalar_t)) {
      To* o = reinterpret_cast<To*>(out);
      const scalar_t* x = reinterpret_cast<const scalar_t*>(in);
      if constexpr (std::is_same_v<To, scalar_t>) {
        std::memcpy(o, x, n * sizeof(To));
      } else if constexpr ((std::is_same_v<To, float> && is_reduced_float_v<scalar_t>) ||
                           (is_reduced_float_v<To> && std::is_same_v<scalar_t, float>)) {
        convert_run(x, o, n);  // the 16-bit floats' way in and out of float32, vectorized
      } else {
        for (int64_t i = 0; i < n; ++i) o[i] = convert<To>(x[i]);
      }
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<To*>(out + i * strides[0]) = convert<To>(*reinterpret_cast<const scalar_t*>(in + i * strides[1]));
    }
  });
}
}  // namespace

void copy_into(const TensorBase& dst, const TensorBase& src_in, const char* op_name) {
  // The source broadcasts to the destination's shape (never the other way).
  const TensorBase src =
      src_in.sizes() == dst.sizes() ? src_in : composite_explicit::expand(src_in, dst.sizes(), false);
  IteratorConfig c;
  c.op_name = op_name;
  c.out = dst;
  c.inputs = {src};
  c.promote_inputs = false;
  c.compute_dtype = src.dtype();
  c.out_dtype = dst.dtype();
  c.inplace = true;
  c.reduced_float_as_float32 = false;
  TensorIterator it(std::move(c));
  ScalarType src_type = src.dtype();
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(dst.dtype(), op_name, [&] {
    it.for_each([src_type](char** data, const int64_t* strides, int64_t n) {
      cast_loop_from<scalar_t>(src_type, data, strides, n);
    });
  });
}

TensorBase cast_to(const TensorBase& t, ScalarType dtype) {
  if (t.dtype() == dtype) return t;
  TensorBase out = empty_like_cpu(t, dtype);
  copy_into(out, t, "to");
  if (t.impl()->is_wrapped_number()) out.impl()->set_wrapped_number(true);
  return out;
}

TensorBase to_opmath(const TensorBase& t) { return t.defined() ? cast_to(t, opmath_type(t.dtype())) : t; }

TensorBase contiguous_cpu(const TensorBase& t) {
  if (t.is_contiguous()) return t;
  TensorBase out = empty_cpu(t.sizes(), t.dtype());
  copy_into(out, t, "contiguous");
  return out;
}

}  // namespace kiln
