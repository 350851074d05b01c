// Takes the GIL back for Python code called from C++ that runs with it released (the engine's
// nodes, saved-tensor hooks inside an op), and holds Python objects C++ may drop on any thread.
#pragma once

#include <Python.h>

namespace kiln {
namespace python {

class GilGuard {
 public:
  GilGuard() : state_(PyGILState_Ensure()) {}
  ~GilGuard() { PyGILState_Release(state_); }
  GilGuard(const GilGuard&) = delete;
  GilGuard& operator=(const GilGuard&) = delete;

 private:
  PyGILState_STATE state_;
};

// A strong reference that may be dropped on any thread, GIL held or not (a node can die anywhere).
class PyRef {
 public:
  explicit PyRef(PyObject* borrowed) : obj_(borrowed) { Py_INCREF(obj_); }
  ~PyRef() {
    if (!Py_IsInitialized()) return;  // after interpreter exit: leak rather than crash
    GilGuard gil;
    Py_DECREF(obj_);
  }
  PyRef(const PyRef&) = delete;
  PyRef& operator=(const PyRef&) = delete;
  PyObject* get() const { return obj_; }

 private:
  PyObject* obj_;
};

}  // namespace python
}  // namespace kiln
