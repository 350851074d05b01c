// kiln._C functions over the profiler's recorder (runtime/dispatch/profiler.h), for kiln.profiler:
//   _profiler_start(record_shapes)    starts recording (RuntimeError when already running)
//   _profiler_stop() -> [(name, start_ns, end_ns, parent, thread, shapes), ...]
//   _profiler_enabled() -> bool
//   _record_function_enter(name) -> handle;  _record_function_exit(handle)
#pragma once

#include <Python.h>

namespace kiln {
namespace python {

extern PyMethodDef profiler_functions[];

}  // namespace python
}  // namespace kiln
