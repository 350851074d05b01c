#include <algorithm>
#include "runtime/python/generator_object.h"

#include <cctype>
#include <cstring>
#include <string>
#include <new>

#include "runtime/kernels/tensor_memory.h"
#include "runtime/python/arg_parser.h"
#include "runtime/python/registered_classes.h"
#include "runtime/python/tensor_object.h"

namespace kiln {
namespace python {
namespace {

struct GeneratorObject {
  PyObject_HEAD
  Ref<Generator> gen;
};

Generator& gen_of(PyObject* self) { return *reinterpret_cast<GeneratorObject*>(self)->gen; }

PyObject* make_generator_object(PyTypeObject* type, Ref<Generator> gen) {
  PyObject* obj = type->tp_alloc(type, 0);
  if (!obj) return nullptr;
  new (&reinterpret_cast<GeneratorObject*>(obj)->gen) Ref<Generator>(std::move(gen));
  return obj;
}

// The device's type in capitals ("XLA" for 'xla:1'), for torch's Generator() message.
std::string device_type_upper(PyObject* device) {
  PyObject* text = PyObject_Str(device);
  if (!text) throw PythonError();
  std::string spec(PyUnicode_AsUTF8(text));
  Py_DECREF(text);
  spec = spec.substr(0, spec.find(':'));
  for (char& c : spec) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return spec;
}

// kiln.Generator(device='cpu')
PyObject* generator_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  KILN_PY_BEGIN
  static const char* names[] = {"device", nullptr};
  PyObject* device = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:Generator", const_cast<char**>(names), &device))
    return nullptr;
  if (device != Py_None) {
    KILN_CHECK_TYPE(is_device_like(device), "Generator(): device must be a str, int or kiln.device, got ",
                    Py_TYPE(device)->tp_name);
    Device d;
    try {
      d = to_device(device);
    } catch (const NotImplementedError&) {  // a device type torch knows that kiln has no backend for
      throw Error("Device type " + device_type_upper(device) + " is not supported for kiln.Generator() api.");
    }
    KILN_CHECK(d.is_cpu(), "Device type CUDA is not supported for kiln.Generator() api.");
  }
  return make_generator_object(type, Ref<Generator>::make());
  KILN_PY_END
}

void generator_dealloc(PyObject* self) {
  reinterpret_cast<GeneratorObject*>(self)->gen.~Ref<Generator>();
  Py_TYPE(self)->tp_free(self);
}

// torch's rule: any int in [-2^63, 2^64); a negative seed is taken as its 64-bit pattern.
// A seed that is not an int (a float, a bool, a tensor) is torch's RuntimeError, not a TypeError.
uint64_t seed_from(PyObject* arg) {
  KILN_CHECK(is_int_like(arg) && !is_tensor(arg) && !PyBool_Check(arg), "manual_seed expected a long, but got ",
             Py_TYPE(arg)->tp_name);
  PyObject* index = PyNumber_Index(arg);
  if (!index) throw PythonError();
  unsigned long long seed = PyLong_AsUnsignedLongLong(index);
  if (PyErr_Occurred()) {  // negative, or too large
    PyErr_Clear();
    seed = static_cast<unsigned long long>(PyLong_AsLongLong(index));
    if (PyErr_Occurred()) {
      PyErr_Clear();
      Py_DECREF(index);
      throw Error("Overflow when unpacking long");
    }
  }
  Py_DECREF(index);
  return seed;
}

PyObject* generator_manual_seed(PyObject* self, PyObject* arg) {
  KILN_PY_BEGIN
  gen_of(self).manual_seed(seed_from(arg));
  return new_reference(self);
  KILN_PY_END
}

PyObject* generator_seed(PyObject* self, PyObject*) {
  KILN_PY_BEGIN
  return PyLong_FromUnsignedLongLong(gen_of(self).seed());
  KILN_PY_END
}

PyObject* generator_initial_seed(PyObject* self, PyObject*) {
  return PyLong_FromUnsignedLongLong(gen_of(self).initial_seed());
}

// The state as torch's: a 1-D uint8 tensor of the state's bytes (Generator::get_state).
PyObject* generator_get_state(PyObject* self, PyObject*) {
  KILN_PY_BEGIN
  const std::vector<int64_t> state = gen_of(self).get_state();
  TensorBase t = empty_tensor({static_cast<int64_t>(state.size())}, ScalarType::UInt8, Device(DeviceType::CPU));
  std::copy(state.begin(), state.end(), static_cast<uint8_t*>(t.data_ptr()));  // a host tensor, made above
  return wrap(t);
  KILN_PY_END
}

// Restores a state: torch's uint8 bytes, or the int64 tensor of the same byte values that kiln's
// get_state() returned before kiln had uint8 (so saved states keep working). Read by its bytes in
// order, whatever its shape, as torch.
PyObject* generator_set_state(PyObject* self, PyObject* arg) {
  KILN_PY_BEGIN
  KILN_CHECK_TYPE(is_tensor(arg), "expected a kiln.ByteTensor, but got ", Py_TYPE(arg)->tp_name);
  const Tensor& t = unpack_tensor(arg);
  KILN_CHECK_TYPE(t.dtype() == ScalarType::UInt8 || t.dtype() == ScalarType::Int64,
                  "RNG state must be a kiln.ByteTensor (got ", scalar_type_name(t.dtype()), ")");
  KILN_CHECK(t.is_contiguous(), "RNG state must be contiguous");  // torch checks this before the size
  const TensorBase state = cast_to(contiguous_tensor(t), ScalarType::Int64);
  gen_of(self).set_state(static_cast<const int64_t*>(state.data_ptr()), state.numel());
  return new_reference(self);
  KILN_PY_END
}

PyObject* generator_device(PyObject*, void*) { return make_device(Device()); }

PyMethodDef generator_methods[] = {
    {"manual_seed", generator_manual_seed, METH_O, "Seeds the generator and returns it."},
    {"seed", generator_seed, METH_NOARGS, "Seeds with a non-deterministic random number and returns it."},
    {"initial_seed", generator_initial_seed, METH_NOARGS, "The seed the generator was last seeded with."},
    {"get_state", generator_get_state, METH_NOARGS, "The state as torch's uint8 tensor of 5056 bytes (for set_state)."},
    {"set_state", generator_set_state, METH_O, "Restores a state from get_state() and returns the generator."},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef generator_getset[] = {
    {"device", generator_device, nullptr, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

}  // namespace

PyTypeObject GeneratorType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "kiln._C.Generator";
  t.tp_basicsize = sizeof(GeneratorObject);
  t.tp_dealloc = generator_dealloc;
  t.tp_flags = Py_TPFLAGS_DEFAULT;
  t.tp_doc = "Generator(device='cpu'): a random number generator, passed to random ops as generator=.";
  t.tp_methods = generator_methods;
  t.tp_getset = generator_getset;
  t.tp_new = generator_new;
  return t;
}();

Generator* unpack_generator(PyObject* obj) { return reinterpret_cast<GeneratorObject*>(obj)->gen.get(); }

bool add_generator_type(PyObject* module) {
  if (PyType_Ready(&GeneratorType) < 0) return false;
  Py_INCREF(&GeneratorType);
  if (PyModule_AddObject(module, "Generator", reinterpret_cast<PyObject*>(&GeneratorType)) < 0) return false;
  PyObject* default_gen = make_generator_object(&GeneratorType, default_generator_ref());
  return default_gen && PyModule_AddObject(module, "default_generator", default_gen) == 0;
}

}  // namespace python
}  // namespace kiln
