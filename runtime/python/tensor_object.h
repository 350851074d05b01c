// The Python tensor object (kiln._C.TensorBase) and the helpers every binding
// uses: wrapping/unwrapping tensors, releasing the GIL, and turning kiln's C++
// exceptions into the Python exceptions PyTorch raises.
#pragma once

#include <Python.h>

#include <utility>

#include "generated/api/tensor.h"
#include "runtime/core/error.h"

namespace kiln {
namespace python {

struct TensorObject {
  PyObject_HEAD
  Tensor cdata;
  // The Python hooks of this tensor (a list; null until the first register_hook).
  // Kept here, not only in C++, so the garbage collector can see cycles through them.
  PyObject* hooks;
};

extern PyTypeObject TensorBaseType;
// kiln.Tensor (a Python subclass of TensorBase), used for tensors created in C++.
extern PyTypeObject* tensor_class;

inline bool is_tensor(PyObject* obj) { return PyObject_TypeCheck(obj, &TensorBaseType); }
inline const Tensor& unpack_tensor(PyObject* obj) { return reinterpret_cast<TensorObject*>(obj)->cdata; }

// A new reference to the Python object of `t` (the existing one when there is one,
// so `x.grad is x.grad`); None for an undefined tensor.
PyObject* wrap(Tensor t);
PyObject* wrap(const TensorBase& t);
PyObject* wrap_as(PyTypeObject* type, Tensor t);
inline PyObject* new_reference(PyObject* o) {
  Py_INCREF(o);
  return o;
}

// Runs f with the GIL released (kernels never touch Python objects).
template <typename F>
auto without_gil(F&& f) -> decltype(f()) {
  struct Reacquire {
    PyThreadState* state;
    ~Reacquire() { PyEval_RestoreThread(state); }
  } reacquire{PyEval_SaveThread()};
  return f();
}

// A Python exception raised inside a callback (a hook) that must cross C++ code.
class PythonError : public std::exception {
 public:
  PythonError();  // fetches the current Python error (GIL held)
  ~PythonError() override;
  // Owns references: moving transfers them, copying would release them twice.
  PythonError(PythonError&& other) noexcept;
  PythonError(const PythonError&) = delete;
  PythonError& operator=(const PythonError&) = delete;
  void restore();  // puts it back (GIL held)
  const char* what() const noexcept override { return "Python error"; }

 private:
  PyObject* type_ = nullptr;
  PyObject* value_ = nullptr;
  PyObject* traceback_ = nullptr;
};

// Sets the Python exception for the active C++ exception; always returns nullptr.
PyObject* set_python_error();
// Creates kiln._C._LinAlgError (a RuntimeError subclass, torch._C._LinAlgError's counterpart) in `m`;
// set_python_error raises it for a kiln::LinAlgError.
bool add_linalg_error(PyObject* m);
// Adds TensorBase to the module.
bool add_tensor_type(PyObject* module);

}  // namespace python
}  // namespace kiln

#define KILN_PY_BEGIN try {
#define KILN_PY_END                           \
  }                                           \
  catch (...) {                               \
    return ::kiln::python::set_python_error(); \
  }
