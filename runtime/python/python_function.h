// Custom autograd Functions written in Python (kiln.autograd.Function, python/kiln/autograd/function.py).
//
// A Function's ctx is an instance of kiln._C._FunctionBase. Function.apply runs the Python
// forward without recording, then ctx._wrap_outputs(inputs, outputs) creates one PyFunctionNode
// (which owns the ctx and calls its Python backward with the GIL held) and makes it the grad_fn
// of the outputs. The ctx is also what `output.grad_fn` returns, as in PyTorch.
#pragma once

#include <Python.h>

#include "runtime/autograd/node.h"

namespace kiln {
namespace python {

// The ctx of a node created by a Python Function (a borrowed reference), or null for other nodes.
PyObject* function_ctx(const Node* node);
// Adds _FunctionBase to the module.
bool add_function_type(PyObject* module);

}  // namespace python
}  // namespace kiln
