#include "runtime/python/numpy_interop.h"

#include <cstring>
#include <memory>

#include "runtime/python/tensor_object.h"

namespace kiln {
namespace python {
namespace {

// The buffer stays acquired (the array cannot be resized) while the storage lives.
struct HeldBuffer {
  Py_buffer view;
  ~HeldBuffer() {
    PyGILState_STATE s = PyGILState_Ensure();
    PyBuffer_Release(&view);
    PyGILState_Release(s);
  }
};

ScalarType dtype_from_format(const char* format, Py_ssize_t itemsize, PyObject* array) {
  std::string f = format ? format : "B";
  if (!f.empty() && (f[0] == '>' || f[0] == '!') && itemsize > 1) {  // kiln runs on little-endian CPUs only
    throw ValueError(
        "given numpy array has byte order different from the native byte order. Conversion between byte orders is "
        "currently not supported.");
  }
  if (!f.empty() && (f[0] == '<' || f[0] == '=' || f[0] == '@' || f[0] == '>' || f[0] == '!')) f = f.substr(1);
  if (f == "?") return ScalarType::Bool;
  if (f == "e" && itemsize == 2) return ScalarType::Float16;
  if (f == "f" && itemsize == 4) return ScalarType::Float32;
  if (f == "d" && itemsize == 8) return ScalarType::Float64;
  if (f == "B" && itemsize == 1) return ScalarType::UInt8;
  if (f == "b" && itemsize == 1) return ScalarType::Int8;
  if (f == "h" && itemsize == 2) return ScalarType::Int16;
  if ((f == "i" || f == "l" || f == "q") && itemsize == 4) return ScalarType::Int32;
  if ((f == "l" || f == "q") && itemsize == 8) return ScalarType::Int64;
  PyObject* dt = PyObject_GetAttrString(array, "dtype");
  std::string name = "unknown";
  if (dt) {
    PyObject* s = PyObject_Str(dt);
    if (s) name = PyUnicode_AsUTF8(s);
    Py_XDECREF(s);
    Py_DECREF(dt);
  }
  PyErr_Clear();
  throw TypeError("can't convert np.ndarray of type numpy." + name +
                  ". The only supported types are: float64, float32, float16, int64, int32, int16, int8, uint8, and bool.");
}

// Whether `obj` is a numpy.ndarray (or a subclass), by the names of its type's bases: asking for
// its __array_interface__ instead builds a dict, a microsecond per call.
bool is_ndarray(PyObject* obj) {
  PyObject* mro = Py_TYPE(obj)->tp_mro;
  if (!mro || !PyTuple_Check(mro)) return false;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); ++i) {
    if (std::strcmp(reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i))->tp_name, "numpy.ndarray") == 0) {
      return true;
    }
  }
  return false;
}

}  // namespace

Tensor tensor_from_numpy(PyObject* array) {
  KILN_CHECK_TYPE(PyObject_CheckBuffer(array) && is_ndarray(array),
                  "from_numpy(): expected np.ndarray (got ", Py_TYPE(array)->tp_name, ")");
  std::unique_ptr<HeldBuffer> held(new HeldBuffer());
  if (PyObject_GetBuffer(array, &held->view, PyBUF_RECORDS) < 0) {
    PyErr_Clear();  // read-only arrays are shared too (writes through the tensor are the user's choice)
    if (PyObject_GetBuffer(array, &held->view, PyBUF_RECORDS_RO) < 0) throw PythonError();
  }
  Py_buffer& v = held->view;
  ScalarType dtype;
  try {
    dtype = dtype_from_format(v.format, v.itemsize, array);
  } catch (...) {
    PyBuffer_Release(&v);
    held->view.obj = nullptr;
    throw;
  }
  DimVector sizes(v.shape, v.shape + v.ndim), strides(v.ndim);
  int64_t extent = 1;  // elements spanned from the first one
  bool empty = false;
  for (int d = 0; d < v.ndim; ++d) {
    KILN_CHECK_VALUE(v.strides[d] >= 0,
                     "At least one stride in the given numpy array is negative, and tensors with negative strides are "
                     "not currently supported. (You can probably work around this by making a copy of your array "
                     "with array.copy().)");
    KILN_CHECK_VALUE(v.strides[d] % v.itemsize == 0,
                     "given numpy array strides not a multiple of the element byte size. Copy the numpy array to "
                     "reallocate the memory.");
    strides[d] = v.strides[d] / v.itemsize;
    if (v.shape[d] == 0) empty = true;
    extent += (v.shape[d] - 1) * strides[d];
  }
  size_t nbytes = empty ? 0 : static_cast<size_t>(extent * v.itemsize);
  void* data = v.buf;
  Storage storage = Storage::make(data, nbytes, Device(DeviceType::CPU),
                                  [](void* ctx) { delete static_cast<HeldBuffer*>(ctx); }, held.release());
  return Tensor(Ref<TensorImpl>::make(std::move(storage), dtype, sizes, strides, 0));
}

}  // namespace python
}  // namespace kiln
