#include "runtime/python/dtype_object.h"

#include <string>

namespace kiln {
namespace python {
namespace {

struct DtypeObject {
  PyObject_HEAD
  ScalarType scalar_type;
};

PyObject* dtype_repr(PyObject* self) {
  return PyUnicode_FromFormat("kiln.%s", scalar_type_name(reinterpret_cast<DtypeObject*>(self)->scalar_type));
}

PyObject* dtype_is_floating_point(PyObject* self, void*) {
  return PyBool_FromLong(is_floating_type(reinterpret_cast<DtypeObject*>(self)->scalar_type));
}

// torch's dtype.is_signed: the signed integer and floating types (not bool, not uint8)
PyObject* dtype_is_signed(PyObject* self, void*) {
  const ScalarType t = reinterpret_cast<DtypeObject*>(self)->scalar_type;
  return PyBool_FromLong(t != ScalarType::Bool && t != ScalarType::UInt8);
}

PyObject* dtype_is_complex(PyObject*, void*) { Py_RETURN_FALSE; }  // kiln has no complex dtypes

PyObject* dtype_itemsize(PyObject* self, void*) {
  return PyLong_FromLongLong(element_size(reinterpret_cast<DtypeObject*>(self)->scalar_type));
}

PyObject* dtype_reduce(PyObject* self, PyObject*) {
  return PyUnicode_FromString(scalar_type_name(reinterpret_cast<DtypeObject*>(self)->scalar_type));
}

PyGetSetDef dtype_getset[] = {
    {"is_floating_point", dtype_is_floating_point, nullptr, nullptr, nullptr},
    {"itemsize", dtype_itemsize, nullptr, nullptr, nullptr},
    {"is_signed", dtype_is_signed, nullptr, nullptr, nullptr},
    {"is_complex", dtype_is_complex, nullptr, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyMethodDef dtype_methods[] = {
    {"__reduce__", dtype_reduce, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

PyTypeObject DtypeType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "kiln.dtype";
  t.tp_basicsize = sizeof(DtypeObject);
  t.tp_flags = Py_TPFLAGS_DEFAULT;
  t.tp_repr = dtype_repr;
  t.tp_getset = dtype_getset;
  t.tp_methods = dtype_methods;
  return t;
}();

PyObject* objects[kNumScalarTypes] = {};

}  // namespace

bool is_dtype(PyObject* obj) { return Py_TYPE(obj) == &DtypeType; }
ScalarType dtype_value(PyObject* obj) { return reinterpret_cast<DtypeObject*>(obj)->scalar_type; }
PyObject* dtype_object(ScalarType t) { return objects[static_cast<int>(t)]; }

bool add_dtypes(PyObject* module) {
  if (PyType_Ready(&DtypeType) < 0) return false;
  Py_INCREF(&DtypeType);
  if (PyModule_AddObject(module, "dtype", reinterpret_cast<PyObject*>(&DtypeType)) < 0) return false;
  struct Alias {
    const char* name;
    ScalarType type;
  } names[] = {{"bool", ScalarType::Bool},       {"uint8", ScalarType::UInt8},     {"int8", ScalarType::Int8},
               {"int16", ScalarType::Int16},     {"short", ScalarType::Int16},
               {"int32", ScalarType::Int32},     {"int", ScalarType::Int32},
               {"int64", ScalarType::Int64},     {"long", ScalarType::Int64},      {"float32", ScalarType::Float32},
               {"float", ScalarType::Float32},   {"float64", ScalarType::Float64}, {"double", ScalarType::Float64},
               {"float16", ScalarType::Float16}, {"half", ScalarType::Float16},    {"bfloat16", ScalarType::BFloat16}};
  for (int i = 0; i < kNumScalarTypes; ++i) {
    DtypeObject* o = PyObject_New(DtypeObject, &DtypeType);
    if (!o) return false;
    o->scalar_type = static_cast<ScalarType>(i);
    objects[i] = reinterpret_cast<PyObject*>(o);
  }
  for (const Alias& a : names) {
    PyObject* o = objects[static_cast<int>(a.type)];
    Py_INCREF(o);
    if (PyModule_AddObject(module, a.name, o) < 0) return false;
  }
  return true;
}

}  // namespace python
}  // namespace kiln
