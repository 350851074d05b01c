// Takes the GIL back for Python code called from C++ that runs with it released (the engine's
// nodes, saved-tensor hooks inside an op).
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

}  // namespace python
}  // namespace kiln
