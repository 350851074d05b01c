// kiln._C functions for torch.autograd.graph.saved_tensors_hooks over Python callables:
//   _push_saved_tensors_hooks(pack_hook, unpack_hook)   installs them on this thread
//   _pop_saved_tensors_hooks()                           removes the innermost
#pragma once

#include <Python.h>

namespace kiln {
namespace python {

extern PyMethodDef saved_tensor_hook_functions[];

}  // namespace python
}  // namespace kiln
