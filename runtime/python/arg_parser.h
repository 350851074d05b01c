// Parses Python call arguments against the schema-derived signatures of a
// binding, trying overloads in the order given (the generator orders them:
// Tensor before Scalar, int before int[]). No match -> TypeError listing them.
#pragma once

#include <Python.h>

#include <optional>
#include <string>
#include <vector>

#include "generated/api/tensor.h"
#include "runtime/core/device.h"

namespace kiln {
namespace python {

enum class ParamType { Tensor, TensorList, Scalar, Int, IntList, Float, Bool, String, ScalarType, Device, Generator };

struct Param {
  ParamType type;
  bool optional = false;
  int list_size = 0;  // int[2]: a single int is accepted and repeated
  bool elem_optional = false;  // Tensor?[]: None elements allowed (undefined tensors)
  bool kwarg_only = false;
  bool has_default = false;
  bool default_none = false;
  std::string default_text;
  std::string name;
  PyObject* py_name = nullptr;  // interned
  std::string type_name;        // as shown in error messages
};

struct Signature {
  std::string name;
  std::vector<Param> params;
  int num_positional = 0;
  std::string text;  // "(Tensor input, Tensor other, *, Scalar alpha=1)"
};

class ParsedArgs {
 public:
  int index = -1;
  PyObject* values[16] = {};
  const Signature* signature = nullptr;

  bool is_none(int i) const { return values[i] == nullptr || values[i] == Py_None; }
  PyObject* object(int i) const { return values[i]; }
  Tensor tensor(int i) const;
  std::vector<Tensor> tensorlist(int i) const;
  Scalar scalar(int i) const;
  std::optional<Scalar> optional_scalar(int i) const;
  int64_t int64(int i) const;
  std::optional<int64_t> optional_int64(int i) const;
  std::vector<int64_t> intlist(int i) const;
  std::optional<std::vector<int64_t>> optional_intlist(int i) const;
  double to_double(int i) const;
  std::optional<double> optional_to_double(int i) const;
  bool to_bool(int i) const;
  std::optional<bool> optional_to_bool(int i) const;
  std::string string(int i) const;
  std::optional<std::string> optional_string(int i) const;
  ScalarType scalartype(int i) const;
  std::optional<ScalarType> optional_scalartype(int i) const;
  std::optional<Device> optional_device(int i) const;
  Device device(int i) const;
  Generator* generator(int i) const;  // nullptr for None: the default generator

 private:
  const Param& param(int i) const { return signature->params[i]; }
};

class PythonArgParser {
 public:
  PythonArgParser(std::vector<std::string> signatures, bool is_method);
  ParsedArgs parse(PyObject* args, PyObject* kwargs) const;

 private:
  bool try_match(const Signature& sig, PyObject* args, PyObject* kwargs, bool varargs, bool lenient,
                 ParsedArgs* out) const;
  [[noreturn]] void raise_no_match(PyObject* args, PyObject* kwargs) const;

  std::vector<Signature> signatures_;
  bool is_method_;
  bool numbers_as_tensors_ = false;  // a Python number may stand for a Tensor (torch's allowlist)
};

// Conversions shared with the hand-written bindings.
bool is_scalar_like(PyObject* obj);
bool is_ndarray(PyObject* obj);
Scalar to_scalar(PyObject* obj);
bool is_int_like(PyObject* obj);
std::optional<ScalarType> as_scalar_type(PyObject* obj);  // kiln.float32, float, int, bool
PyObject* scalar_type_object(ScalarType t);                 // borrowed kiln.<dtype>
bool is_device_like(PyObject* obj);
Device to_device(PyObject* obj);

}  // namespace python
}  // namespace kiln
