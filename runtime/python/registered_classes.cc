#include "runtime/python/registered_classes.h"

#include "runtime/python/tensor_object.h"

namespace kiln {
namespace python {
namespace {
PyObject* size_class = nullptr;
PyObject* device_class = nullptr;
}  // namespace

PyObject* register_classes(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"tensor", "size", "device", nullptr};
  PyObject *tensor = nullptr, *size = nullptr, *device = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO", const_cast<char**>(names), &tensor, &size, &device))
    return nullptr;
  if (!PyType_Check(tensor) || !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(tensor), &TensorBaseType)) {
    PyErr_SetString(PyExc_TypeError, "tensor must be a subclass of TensorBase");
    return nullptr;
  }
  Py_INCREF(tensor);
  Py_INCREF(size);
  Py_INCREF(device);
  tensor_class = reinterpret_cast<PyTypeObject*>(tensor);
  size_class = size;
  device_class = device;
  Py_RETURN_NONE;
}

PyObject* make_size(IntArrayRef sizes) {
  PyObject* tup = PyTuple_New(static_cast<Py_ssize_t>(sizes.size()));
  if (!tup) return nullptr;
  for (size_t i = 0; i < sizes.size(); ++i) PyTuple_SET_ITEM(tup, i, PyLong_FromLongLong(sizes[i]));
  if (!size_class) return tup;
  PyObject* out = PyObject_CallFunctionObjArgs(size_class, tup, nullptr);
  Py_DECREF(tup);
  return out;
}

PyObject* make_device(Device d) {
  if (!device_class) return PyUnicode_FromString(d.str().c_str());
  return PyObject_CallFunction(device_class, "s", d.str().c_str());
}

}  // namespace python
}  // namespace kiln
