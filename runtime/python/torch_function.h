// The __torch_function__ protocol's C++ side (torch.overrides): a thin wrapper that kiln puts around
// its public functions (kiln.add, kiln.nn.functional.relu, ...), the thread-local "disabled" flags
// and the depth of the TorchFunctionMode stack. The protocol itself (which override runs, the
// default Tensor.__torch_function__) is Python: python/kiln/_torch_function.py.
//
//   _wrap_torch_function(impl, module, qualname) -> a callable that calls impl, unless an argument
//       (or an element of a list/tuple argument) overrides __torch_function__ or a mode is active:
//       then the handler set by _set_torch_function_handler runs, given (wrapper, impl, args, kwargs).
//   _set_torch_function_handler(handler, disabled_impl): the Python side, and the function whose
//       presence as a type's __torch_function__ means "no override" (torch._C._disabled_torch_function_impl).
//   _torch_function_state() -> (subclass_disabled, all_disabled, mode_depth) of this thread;
//   _set_torch_function_state(subclass_disabled, all_disabled, mode_depth).
#pragma once

#include <Python.h>

namespace kiln {
namespace python {

extern PyMethodDef torch_function_functions[];
// Adds the wrapper type to the module.
bool add_torch_function_type(PyObject* module);

}  // namespace python
}  // namespace kiln
