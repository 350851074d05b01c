#include "runtime/python/profiler_functions.h"

#include "runtime/dispatch/profiler.h"
#include "runtime/python/tensor_object.h"

namespace kiln {
namespace python {
namespace {

PyObject* py_profiler_start(PyObject*, PyObject* record_shapes) {
  KILN_PY_BEGIN
  const int shapes = PyObject_IsTrue(record_shapes);
  if (shapes < 0) return nullptr;
  profiler::start(shapes == 1);
  Py_RETURN_NONE;
  KILN_PY_END
}

PyObject* shapes_to_list(const profiler::Shapes& shapes) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(shapes.size()));
  if (!list) return nullptr;
  for (size_t i = 0; i < shapes.size(); ++i) {
    PyObject* dims = PyList_New(static_cast<Py_ssize_t>(shapes[i].size()));
    if (!dims) {
      Py_DECREF(list);
      return nullptr;
    }
    for (size_t d = 0; d < shapes[i].size(); ++d)
      PyList_SET_ITEM(dims, static_cast<Py_ssize_t>(d), PyLong_FromLongLong(shapes[i][d]));
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), dims);
  }
  return list;
}

PyObject* py_profiler_stop(PyObject*, PyObject*) {
  KILN_PY_BEGIN
  const std::vector<profiler::Event> events = profiler::stop();
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(events.size()));
  if (!list) return nullptr;
  for (size_t i = 0; i < events.size(); ++i) {
    const profiler::Event& e = events[i];
    PyObject* shapes = shapes_to_list(e.shapes);
    PyObject* item = shapes ? Py_BuildValue("(sLLLLN)", e.name.c_str(), static_cast<long long>(e.start_ns),
                                            static_cast<long long>(e.end_ns), static_cast<long long>(e.parent),
                                            static_cast<long long>(e.thread), shapes)
                            : nullptr;
    if (!item) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), item);
  }
  return list;
  KILN_PY_END
}

PyObject* py_profiler_enabled(PyObject*, PyObject*) { return PyBool_FromLong(profiler::enabled()); }

PyObject* py_record_function_enter(PyObject*, PyObject* name) {
  KILN_PY_BEGIN
  if (!PyUnicode_Check(name)) {
    PyErr_SetString(PyExc_TypeError, "record_function(): name must be a str");
    return nullptr;
  }
  const char* text = PyUnicode_AsUTF8(name);
  if (!text) return nullptr;
  const profiler::Handle h = profiler::begin(text);
  return Py_BuildValue("(LL)", static_cast<long long>(h.generation), static_cast<long long>(h.index));
  KILN_PY_END
}

PyObject* py_record_function_exit(PyObject*, PyObject* handle) {
  KILN_PY_BEGIN
  long long generation = -1, index = -1;
  if (!PyArg_ParseTuple(handle, "LL", &generation, &index)) return nullptr;
  if (index >= 0) profiler::end({generation, index});
  Py_RETURN_NONE;
  KILN_PY_END
}

}  // namespace

#define KILN_FN(name, fn, flags) {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(fn)), flags, nullptr}

PyMethodDef profiler_functions[] = {
    KILN_FN("_profiler_start", py_profiler_start, METH_O),
    KILN_FN("_profiler_stop", py_profiler_stop, METH_NOARGS),
    KILN_FN("_profiler_enabled", py_profiler_enabled, METH_NOARGS),
    KILN_FN("_record_function_enter", py_record_function_enter, METH_O),
    KILN_FN("_record_function_exit", py_record_function_exit, METH_O),
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace python
}  // namespace kiln
