#include "runtime/core/tensor_impl.h"


#include "runtime/core/autograd_meta.h"
#include "runtime/core/error.h"

namespace kiln {

std::string shape_str(IntArrayRef shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

namespace {
std::atomic<int64_t> g_live_tensors{0};
}  // namespace

int64_t TensorImpl::live_count() { return g_live_tensors.load(std::memory_order_relaxed); }

int64_t checked_numel(IntArrayRef sizes, const char* op_name) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    KILN_CHECK(s >= 0, op_name, "(): Trying to create tensor with negative dimension ", s, ": ",
                     shape_str(sizes));
  }
  for (int64_t s : sizes) {
    KILN_CHECK(!__builtin_mul_overflow(n, s, &n), op_name,
                     "(): the number of elements of shape ", shape_str(sizes), " overflows int64");
  }
  return n;
}

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector strides(sizes.size());
  int64_t s = 1;
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    strides[i] = s;
    s *= sizes[i] > 1 ? sizes[i] : 1;
  }
  return strides;
}

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides,
                       int64_t storage_offset)
    : storage_(std::move(storage)),
      sizes_(sizes.begin(), sizes.end()),
      strides_(strides.begin(), strides.end()),
      storage_offset_(storage_offset),
      dtype_(dtype),
      version_counter_(Ref<VersionCounter>::make()) {
  numel_ = checked_numel(sizes, "tensor");
  refresh_contiguous();
  g_live_tensors.fetch_add(1, std::memory_order_relaxed);
}

TensorImpl::TensorImpl(const TensorImpl& base, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset,
                       ScalarType dtype)
    : storage_(base.storage_),
      sizes_(sizes.begin(), sizes.end()),
      strides_(strides.begin(), strides.end()),
      storage_offset_(storage_offset),
      dtype_(dtype == ScalarType::Undefined ? base.dtype_ : dtype),
      version_counter_(base.version_counter_) {
  numel_ = checked_numel(sizes, "view");
  refresh_contiguous();
  g_live_tensors.fetch_add(1, std::memory_order_relaxed);
}

TensorImpl::~TensorImpl() { g_live_tensors.fetch_sub(1, std::memory_order_relaxed); }

AutogradMeta& TensorImpl::ensure_autograd_meta() {
  if (!autograd_meta_) autograd_meta_ = std::make_unique<AutogradMeta>();
  return *autograd_meta_;
}

bool TensorImpl::requires_grad_slow() const {
  const AutogradMeta& m = *autograd_meta_;
  return m.requires_grad || m.grad_fn != nullptr || (m.is_view && m.base.defined() && m.base.requires_grad());
}

void TensorImpl::refresh_contiguous() {
  is_contiguous_ = true;
  if (numel_ == 0) return;
  int64_t expected = 1;
  for (int64_t i = dim() - 1; i >= 0; --i) {
    if (sizes_[i] == 1) continue;
    if (strides_[i] != expected) {
      is_contiguous_ = false;
      return;
    }
    expected *= sizes_[i];
  }
}

void TensorImpl::set_data_from(const TensorImpl& other) {
  storage_ = other.storage_;
  sizes_ = other.sizes_;
  strides_ = other.strides_;
  storage_offset_ = other.storage_offset_;
  numel_ = other.numel_;
  dtype_ = other.dtype_;
  is_contiguous_ = other.is_contiguous_;
}

void TensorImpl::set_sizes_contiguous(IntArrayRef sizes) {
  set_sizes_and_strides(sizes, contiguous_strides(sizes), storage_offset_);
}

void TensorImpl::set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) {
  int64_t n = checked_numel(sizes, "resize_");
  int64_t max_offset = storage_offset;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) {
      max_offset = -1;
      break;
    }
    // Overflow-checked: a wrapped extent would leave the storage too small (found by the fuzzer).
    int64_t span = 0;
    KILN_CHECK(strides[i] >= 0 && !__builtin_mul_overflow(sizes[i] - 1, strides[i], &span) &&
                   !__builtin_add_overflow(max_offset, span, &max_offset),
               "resize_(): storage size overflows for shape ", shape_str(sizes), " and strides ",
               shape_str(strides));
  }
  if (max_offset >= 0) {
    int64_t needed = 0;
    KILN_CHECK(!__builtin_mul_overflow(max_offset + 1, element_size(dtype_), &needed),
                     "resize_(): storage size overflows for shape ", shape_str(sizes));
    storage_->grow(static_cast<size_t>(needed));
  }
  sizes_.assign(sizes.begin(), sizes.end());
  strides_.assign(strides.begin(), strides.end());
  storage_offset_ = storage_offset;
  numel_ = n;
  refresh_contiguous();
}

}  // namespace kiln
