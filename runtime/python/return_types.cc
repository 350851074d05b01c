#include "runtime/python/return_types.h"

#include <string>

namespace kiln {
namespace python {

PyTypeObject* named_tuple_type(const char* op, std::initializer_list<const char*> fields) {
  // Descriptions must outlive the type, which lives as long as the process.
  auto* members = new PyStructSequence_Field[fields.size() + 1]();
  size_t i = 0;
  for (const char* f : fields) members[i++] = {f, nullptr};
  auto* name = new std::string(std::string("kiln.return_types.") + op);
  auto* desc = new PyStructSequence_Desc{name->c_str(), nullptr, members, static_cast<int>(fields.size())};
  PyTypeObject* type = PyStructSequence_NewType(desc);
  if (type == nullptr) throw PythonError();
  return type;
}

PyObject* wrap_tensors(PyTypeObject* type, const std::vector<Tensor>& tensors) {
  const Py_ssize_t n = static_cast<Py_ssize_t>(tensors.size());
  PyObject* out = type ? PyStructSequence_New(type) : PyTuple_New(n);
  if (out == nullptr) throw PythonError();
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = wrap(tensors[i]);
    if (item == nullptr) {
      Py_DECREF(out);
      throw PythonError();
    }
    if (type) PyStructSequence_SetItem(out, i, item);
    else PyTuple_SET_ITEM(out, i, item);
  }
  return out;
}

}  // namespace python
}  // namespace kiln
