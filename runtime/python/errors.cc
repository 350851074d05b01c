// C++ exceptions -> Python exceptions (the types PyTorch raises).
#include <errno.h>

#include <new>
#include <string>
#include <utility>

#include "runtime/core/os_error.h"
#include "runtime/core/warning.h"
#include "runtime/python/tensor_object.h"

namespace kiln {
namespace python {

PythonError::PythonError() { PyErr_Fetch(&type_, &value_, &traceback_); }

PythonError::PythonError(PythonError&& other) noexcept
    : type_(other.type_), value_(other.value_), traceback_(other.traceback_) {
  other.type_ = other.value_ = other.traceback_ = nullptr;
}

PythonError::~PythonError() {
  if (type_ || value_ || traceback_) {
    PyGILState_STATE s = PyGILState_Ensure();
    Py_XDECREF(type_);
    Py_XDECREF(value_);
    Py_XDECREF(traceback_);
    PyGILState_Release(s);
  }
}

void PythonError::restore() {
  PyErr_Restore(type_, value_, traceback_);
  type_ = value_ = traceback_ = nullptr;
}

namespace {
PyObject* linalg_error_type = nullptr;
}  // namespace

bool add_linalg_error(PyObject* m) {
  linalg_error_type = PyErr_NewExceptionWithDoc(
      "kiln._C._LinAlgError",
      "Error raised by kiln.linalg functions when the matrix is singular, not positive-definite or a "
      "factorization does not converge.",
      PyExc_RuntimeError, nullptr);
  if (linalg_error_type == nullptr) return false;
  Py_INCREF(linalg_error_type);  // the module's reference; this file keeps its own
  return PyModule_AddObject(m, "_LinAlgError", linalg_error_type) == 0;
}

namespace {
// kiln::warn from an op: a Python UserWarning, attributed to the calling Python frame. The op runs
// with the GIL released, so it is taken here; a filter that makes the warning an error throws it
// through the op as a PythonError (restored by set_python_error), as torch's warnings do.
void python_warning(const std::string& message) {
  PyGILState_STATE gil = PyGILState_Ensure();
  if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) < 0) {
    PythonError error;
    PyGILState_Release(gil);
    throw std::move(error);
  }
  PyGILState_Release(gil);
}
const bool warning_handler_installed = (set_warning_handler(python_warning), true);
}  // namespace

PyObject* set_python_error() {
  try {
    throw;
  } catch (PythonError& e) {
    e.restore();
  } catch (const OSError& e) {
    // OSError(errno, strerror, filename): Python picks FileNotFoundError, PermissionError, ...
    PyObject* filename = PyUnicode_DecodeFSDefaultAndSize(e.filename().data(), static_cast<Py_ssize_t>(e.filename().size()));
    if (filename) {
      errno = e.error_number();
      PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, filename);
      Py_DECREF(filename);
    }
  } catch (const IndexError& e) {
    PyErr_SetString(PyExc_IndexError, e.what());
  } catch (const ValueError& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const TypeError& e) {
    PyErr_SetString(PyExc_TypeError, e.what());
  } catch (const DeviceUnavailableError& e) {
    PyErr_SetString(PyExc_AssertionError, e.what());
  } catch (const LinAlgError& e) {
    PyErr_SetString(linalg_error_type ? linalg_error_type : PyExc_RuntimeError, e.what());
  } catch (const NotImplementedError& e) {
    PyErr_SetString(PyExc_NotImplementedError, e.what());
  } catch (const Error& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
  }
  return nullptr;
}

}  // namespace python
}  // namespace kiln
