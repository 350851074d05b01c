// The thin C layer under kiln.save_file / load_file / save / load: Python values to C++ and
// back, the GIL released around the file work. Type checks with friendly messages live in
// python/kiln/serialization.py; these re-check what C++ relies on.
#include "runtime/python/serialization.h"

#include "runtime/python/tensor_object.h"
#include "runtime/serialization/safetensors.h"

namespace kiln {
namespace python {
namespace {

std::string utf8(PyObject* s, const char* what) {
  KILN_CHECK_TYPE(PyUnicode_Check(s), what, " must be a str, got ", Py_TYPE(s)->tp_name);
  Py_ssize_t n;
  const char* p = PyUnicode_AsUTF8AndSize(s, &n);  // fails on lone surrogates
  if (!p) throw PythonError();
  return std::string(p, static_cast<size_t>(n));
}

PyObject* new_str(const std::string& s) {
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "strict");
  if (!o) throw PythonError();
  return o;
}

// A list of (str, Tensor) pairs.
NamedTensors named_tensors(PyObject* list) {
  KILN_CHECK_TYPE(PyList_Check(list), "expected a list of (name, tensor) pairs");
  NamedTensors out;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); ++i) {
    PyObject* item = PyList_GET_ITEM(list, i);
    KILN_CHECK_TYPE(PyTuple_Check(item) && PyTuple_GET_SIZE(item) == 2, "expected a list of (name, tensor) pairs");
    PyObject* value = PyTuple_GET_ITEM(item, 1);
    KILN_CHECK_TYPE(is_tensor(value), "expected a Tensor, got ", Py_TYPE(value)->tp_name);
    out.emplace_back(utf8(PyTuple_GET_ITEM(item, 0), "a tensor name"), unpack_tensor(value));
  }
  return out;
}

SafetensorsMetadata metadata_of(PyObject* dict) {
  SafetensorsMetadata out;
  if (dict == Py_None) return out;
  KILN_CHECK_TYPE(PyDict_Check(dict), "metadata must be a dict of str to str, got ", Py_TYPE(dict)->tp_name);
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(dict, &pos, &key, &value)) out[utf8(key, "a metadata key")] = utf8(value, "a metadata value");
  return out;
}

// ([(name, tensor), ...], {metadata}) for Python.
PyObject* to_python(const SafetensorsFile& file) {
  PyObject* list = PyList_New(0);
  PyObject* meta = PyDict_New();
  PyObject* result = list && meta ? PyTuple_Pack(2, list, meta) : nullptr;
  Py_XDECREF(list);
  Py_XDECREF(meta);
  if (!result) throw PythonError();
  for (const auto& [name, t] : file.tensors) {
    PyObject* pair = Py_BuildValue("(NN)", new_str(name), wrap(t));
    if (!pair || PyList_Append(list, pair) != 0) {
      Py_XDECREF(pair);
      Py_DECREF(result);
      throw PythonError();
    }
    Py_DECREF(pair);
  }
  for (const auto& [key, value] : file.metadata) {
    PyObject* k = new_str(key);
    PyObject* v = PyUnicode_DecodeUTF8(value.data(), static_cast<Py_ssize_t>(value.size()), "strict");
    const int rc = v ? PyDict_SetItem(meta, k, v) : -1;
    Py_DECREF(k);
    Py_XDECREF(v);
    if (rc != 0) {
      Py_DECREF(result);
      throw PythonError();
    }
  }
  return result;
}

// Owns the bytes object PyUnicode_FSConverter makes of a str / bytes / os.PathLike.
struct FsPath {
  PyObject* bytes = nullptr;
  ~FsPath() { Py_XDECREF(bytes); }
  std::string str() const { return std::string(PyBytes_AS_STRING(bytes), static_cast<size_t>(PyBytes_GET_SIZE(bytes))); }
};

// _save_safetensors(tensors, metadata, path_or_None, context): writes the file, or returns bytes.
PyObject* py_save(PyObject*, PyObject* args) {
  KILN_PY_BEGIN
  PyObject *list, *meta, *path_obj;
  const char* context;
  if (!PyArg_ParseTuple(args, "OOOs", &list, &meta, &path_obj, &context)) return nullptr;
  NamedTensors tensors = named_tensors(list);
  SafetensorsMetadata metadata = metadata_of(meta);
  if (path_obj == Py_None) {
    std::string bytes = without_gil([&] { return save_bytes(tensors, metadata, context); });
    return PyBytes_FromStringAndSize(bytes.data(), static_cast<Py_ssize_t>(bytes.size()));
  }
  FsPath path;
  if (!PyUnicode_FSConverter(path_obj, &path.bytes)) return nullptr;
  without_gil([&] { save_file(tensors, path.str(), metadata, context); });
  Py_RETURN_NONE;
  KILN_PY_END
}

// _load_safetensors_file(path, context) -> ([(name, tensor), ...], metadata)
PyObject* py_load_file(PyObject*, PyObject* args) {
  KILN_PY_BEGIN
  FsPath path;
  const char* context;
  if (!PyArg_ParseTuple(args, "O&s", PyUnicode_FSConverter, &path.bytes, &context)) return nullptr;
  SafetensorsFile file = without_gil([&] { return load_file(path.str(), context); });
  return to_python(file);
  KILN_PY_END
}

// _load_safetensors_bytes(data, name, context): data is any bytes-like object.
PyObject* py_load_bytes(PyObject*, PyObject* args) {
  KILN_PY_BEGIN
  Py_buffer view;
  const char *name, *context;
  if (!PyArg_ParseTuple(args, "y*ss", &view, &name, &context)) return nullptr;
  struct Release {
    Py_buffer* v;
    ~Release() { PyBuffer_Release(v); }
  } release{&view};
  std::string_view data(static_cast<const char*>(view.buf), static_cast<size_t>(view.len));
  SafetensorsFile file = without_gil([&] { return load_bytes(data, name, context); });
  return to_python(file);
  KILN_PY_END
}

}  // namespace

#define KILN_FN(name, fn) {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(fn)), METH_VARARGS, nullptr}

PyMethodDef serialization_functions[] = {
    KILN_FN("_save_safetensors", py_save),
    KILN_FN("_load_safetensors_file", py_load_file),
    KILN_FN("_load_safetensors_bytes", py_load_bytes),
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace python
}  // namespace kiln
