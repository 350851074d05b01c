#include "runtime/core/tensor_base.h"

#include "runtime/core/autograd_meta.h"

namespace kiln {

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op_name) {
  int64_t n = ndim > 0 ? ndim : 1;  // 0-dim tensors accept dims -1 and 0, as in PyTorch
  KILN_CHECK_INDEX(dim >= -n && dim < n, op_name, "(): Dimension out of range (expected to be in range of [", -n,
                   ", ", n - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

int64_t wrap_existing_dim(int64_t dim, int64_t ndim, const char* op_name) {
  KILN_CHECK_INDEX(ndim > 0, "Dimension specified as ", dim, " but tensor has no dimensions");
  return wrap_dim(dim, ndim, op_name);
}

Scalar TensorBase::item() const {
  KILN_CHECK_VALUE(defined(), "item(): the tensor is undefined");
  KILN_CHECK_VALUE(numel() == 1, "a Tensor with ", numel(), " elements cannot be converted to Scalar");
  KILN_CHECK(is_cpu(), "item(): only CPU tensors are supported for now");
  const void* p = impl_->data();
  switch (dtype()) {
    case ScalarType::Bool: return Scalar(*static_cast<const bool*>(p));
    case ScalarType::UInt8: return Scalar(int64_t(*static_cast<const uint8_t*>(p)));
    case ScalarType::Int8: return Scalar(int64_t(*static_cast<const int8_t*>(p)));
    case ScalarType::Int16: return Scalar(int64_t(*static_cast<const int16_t*>(p)));
    case ScalarType::Int32: return Scalar(int64_t(*static_cast<const int32_t*>(p)));
    case ScalarType::Int64: return Scalar(*static_cast<const int64_t*>(p));
    case ScalarType::Float16: return Scalar(double(float(*static_cast<const Half*>(p))));
    case ScalarType::BFloat16: return Scalar(double(float(*static_cast<const BFloat16*>(p))));
    case ScalarType::Float32: return Scalar(double(*static_cast<const float*>(p)));
    case ScalarType::Float64: return Scalar(*static_cast<const double*>(p));
    default: throw TypeError("item(): unsupported dtype");
  }
}

TensorBase& TensorBase::set_requires_grad(bool requires_grad) {
  KILN_CHECK(is_leaf() || requires_grad,
             "you can only change requires_grad flags of leaf variables. If you want to use a computed variable "
             "in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
  KILN_CHECK(!requires_grad || is_floating_point(),
             "only Tensors of floating point dtype can require gradients");  // torch's requires_grad_() text
  if (!requires_grad && !impl_->autograd_meta()) return *this;
  impl_->ensure_autograd_meta().requires_grad = requires_grad;
  return *this;
}

TensorBase TensorBase::grad() const {
  AutogradMeta* m = impl_->autograd_meta();
  return m ? m->grad : TensorBase();
}

void TensorBase::set_grad(const TensorBase& grad) const {
  if (grad.defined()) {
    KILN_CHECK(grad.dtype() == dtype() && grad.device() == device(),
               "assigned grad has data of a different type or device (", grad.type_str(), " vs ", type_str(), ")");
    KILN_CHECK(grad.sizes() == sizes(), "assigned grad has data of a different size: ", shape_str(grad.sizes()),
               " vs ", shape_str(sizes()));
  }
  impl_->ensure_autograd_meta().grad = grad;
}

const std::shared_ptr<Node>& TensorBase::grad_fn() const {
  static const std::shared_ptr<Node> none;
  AutogradMeta* m = impl_->autograd_meta();
  return m ? m->grad_fn : none;
}

bool TensorBase::is_leaf() const { return grad_fn() == nullptr; }

uint32_t TensorBase::output_nr() const {
  AutogradMeta* m = impl_->autograd_meta();
  return m ? m->output_nr : 0;
}

bool TensorBase::retains_grad() const {
  AutogradMeta* m = impl_->autograd_meta();
  return m && m->retains_grad;
}

std::string TensorBase::type_str() const {
  if (!defined()) return "undefined";
  return std::string(scalar_type_name(dtype())) + shape_str(sizes());
}

}  // namespace kiln
