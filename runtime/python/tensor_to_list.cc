#include "runtime/python/tensor_to_list.h"

#include "runtime/python/tensor_object.h"

namespace kiln {
namespace python {
namespace {

// A Python number for one element, as torch's tolist: bool, int, or float (16-bit floats widened
// through float32, their arithmetic type).
template <typename T>
PyObject* element(const T* p) {
  if constexpr (std::is_same_v<T, bool>) {
    return PyBool_FromLong(*p);
  } else if constexpr (std::is_integral_v<T>) {
    return PyLong_FromLongLong(static_cast<long long>(*p));
  } else if constexpr (std::is_same_v<T, double>) {
    return PyFloat_FromDouble(*p);
  } else {
    return PyFloat_FromDouble(static_cast<double>(static_cast<float>(*p)));
  }
}

// The list for dims [d, dim) of the elements starting at p; null with a Python error set.
template <typename T>
PyObject* nested(const Tensor& t, const T* p, int64_t d) {
  if (d == t.dim()) return element(p);
  const int64_t n = t.sizes()[d], stride = t.strides()[d];
  PyObject* list = PyList_New(n);
  if (!list) return nullptr;
  for (int64_t i = 0; i < n; ++i) {
    PyObject* item = nested(t, p + i * stride, d + 1);
    if (!item) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, i, item);
  }
  return list;
}

}  // namespace

PyObject* m_tolist(PyObject* self, PyObject*) {
  KILN_PY_BEGIN
  const Tensor& t = unpack_tensor(self);
  KILN_CHECK(t.is_cpu(), "tolist(): a ", t.device().str(), " tensor must be copied to the CPU first");
  return KILN_DISPATCH_ALL_TYPES_AND_REDUCED(t.dtype(), "tolist", [&]() -> PyObject* {
    return nested(t, static_cast<const scalar_t*>(t.data_ptr()), 0);
  });
  KILN_PY_END
}

}  // namespace python
}  // namespace kiln
